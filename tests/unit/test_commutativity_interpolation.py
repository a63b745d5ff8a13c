"""From commuting to generic structure matrices (Chapter 7): perturbation and nearest
commuting stack."""

import pytest
import torch

import nqf_mini as nqf
from nqf_mini.commutativity import common_eigenbasis
from nqf_mini.commutativity import joint_diagonalizer, nearest_commuting, perturb_commuting


def _base(p=4, n=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    E, _ = torch.linalg.qr(torch.randn(p, p, generator=gen, dtype=torch.float64))
    return E, torch.randn(n, p, generator=gen, dtype=torch.float64)


def test_perturbation_is_zero_at_t0_and_grows_the_commutator():
    E, a = _base()
    A0 = perturb_commuting(E, a, 0.0)
    assert torch.allclose(A0, E @ torch.diag_embed(a) @ E.T)
    assert nqf.max_commutator(A0) < 1e-12
    comms = [nqf.max_commutator(perturb_commuting(E, a, t)) for t in (0.01, 0.1, 1.0)]
    assert comms[0] < comms[1] < comms[2]
    A = perturb_commuting(E, a, 0.3)
    assert torch.allclose(A, A.transpose(1, 2))
    rel = (A - A0).flatten(1).norm(dim=1) / a.norm(dim=1)
    assert torch.allclose(rel, torch.full_like(rel, 0.3))


def test_nearest_commuting_recovers_commuting_data_and_reduces_the_residual():
    E, a = _base()
    Ac, res = nearest_commuting(perturb_commuting(E, a, 0.0))
    assert res < 1e-10 and torch.allclose(Ac, E @ torch.diag_embed(a) @ E.T, atol=1e-10)
    A = perturb_commuting(E, a, 0.1)
    Ac, res = nearest_commuting(A)
    assert nqf.max_commutator(Ac) < 1e-10
    naive = common_eigenbasis(A).residual
    assert res <= naive + 1e-12
    E2 = joint_diagonalizer(A)
    assert torch.allclose(E2.T @ E2, torch.eye(4, dtype=torch.float64), atol=1e-10)
    nqf.reduce_commuting(Ac, torch.ones(10))  # accepted as commuting


def test_perturbation_validation():
    E, a = _base()
    with pytest.raises(ValueError, match="`t`"):
        perturb_commuting(E, a, -1.0)
    with pytest.raises(ValueError, match="`E`, `a`"):
        perturb_commuting(E, a[:, :3], 0.1)
