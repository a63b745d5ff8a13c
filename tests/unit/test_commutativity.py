"""Relative commutators and common eigenbases (Chapter 2, Assumption 1), against exact answers."""

import math

import pytest
import torch

import nqf_mini as nqf
from nqf_mini.commutativity import (
    common_eigenbasis,
    commutator_norm,
    max_commutator,
    pairwise_commutators,
)

DTYPES = [pytest.param(torch.float64, id="float64"), pytest.param(torch.float32, id="float32")]


def gaussian(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mlp_commutator_is_sin_theta_over_sqrt2(dtype):
    """c(A(x), A(x')) = sin(theta)/sqrt(2) for A(x) = phi'(0) O(x) (Chapter 2, Prop. commutator)."""
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    mlp = nqf.make_architecture("mlp", n_in=5, phi="silu")
    for seed in range(4):
        x, x2 = gaussian(5, seed=seed, dtype=dtype), gaussian(5, seed=seed + 10, dtype=dtype)
        cos = (x @ x2 / (x.norm() * x2.norm())).item()
        got = commutator_norm(mlp.A(x), mlp.A(x2))
        assert abs(got - math.sqrt(1 - cos**2) / math.sqrt(2)) < tol
    assert commutator_norm(mlp.A(x), mlp.A(-3 * x)) < tol  # collinear inputs commute


def test_commutator_norm_is_scale_free_and_bounded():
    A1, A2 = gaussian(4, 4, seed=1), gaussian(4, 4, seed=2)
    A1, A2 = A1 + A1.T, A2 + A2.T
    assert math.isclose(commutator_norm(A1, A2), commutator_norm(5 * A1, -0.1 * A2), rel_tol=1e-12)
    pauli_z = torch.tensor([[1.0, 0.0], [0.0, -1.0]], dtype=torch.float64)
    pauli_x = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)
    assert math.isclose(commutator_norm(pauli_z, pauli_x), math.sqrt(2), rel_tol=1e-14)  # the bound
    assert commutator_norm(A1, torch.zeros(4, 4, dtype=torch.float64)) == 0.0
    assert commutator_norm(A1, A1 @ A1) < 1e-14


def test_pairwise_commutators_agree_with_the_pairwise_function():
    As = gaussian(5, 3, 3, seed=3)
    As = As + As.transpose(1, 2)
    As[2] = 0.0  # a zero matrix commutes with all
    C = pairwise_commutators(As)
    assert C.shape == (5, 5)
    for a in range(5):
        for b in range(5):
            assert abs(C[a, b].item() - commutator_norm(As[a], As[b])) < 1e-14
    assert torch.all(C[2] == 0) and torch.allclose(C, C.T, atol=1e-15)
    assert max_commutator(As) == pytest.approx(C.max().item())


def test_common_eigenbasis_recovers_a_shared_basis():
    E = torch.linalg.qr(gaussian(6, 6, seed=4))[0]
    a = gaussian(8, 6, seed=5)
    As = E @ torch.diag_embed(a) @ E.T  # commuting by construction
    found = common_eigenbasis(As)
    assert found.residual < 1e-12 and max_commutator(As) < 1e-13
    assert torch.allclose(found.E.T @ found.E, torch.eye(6, dtype=torch.float64), atol=1e-12)
    rebuilt = found.E @ torch.diag_embed(found.a) @ found.E.T
    assert torch.allclose(rebuilt, As, atol=1e-12)


def test_common_eigenbasis_with_degenerate_spectra_and_failure():
    ph = nqf.make_architecture("phase_retrieval", n_in=5)
    Q = torch.linalg.qr(gaussian(5, 5, seed=6))[0]
    As = torch.stack([ph.A((k + 1) * Q[:, k]) for k in range(3)])  # rank one, orthogonal, p > n
    assert common_eigenbasis(As).residual < 1e-12
    mlp = nqf.make_architecture("mlp", n_in=4)
    As = torch.stack([mlp.A(gaussian(4, seed=s)) for s in range(6)])
    assert common_eigenbasis(As).residual > 0.1 and max_commutator(As) > 0.1


@pytest.mark.parametrize(
    "bad, match",
    [
        ((torch.zeros(2, 3), torch.zeros(2, 3)), "square"),
        ((torch.zeros(2, 2), torch.zeros(3, 3)), "same shape"),
    ],
)
def test_bad_shapes_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        commutator_norm(*bad)
    with pytest.raises(ValueError, match="argument `As`"):
        pairwise_commutators(torch.zeros(2, 2, 3))
    with pytest.raises(ValueError, match="argument `As`"):
        common_eigenbasis(torch.zeros(2, 2, 3))


def test_pairwise_commutators_of_non_symmetric_matrices():
    """The stacked computation against commutator_norm pair by pair (its own formula), on
    matrices that are not symmetric, where (A_a A_b)^T != A_b A_a."""
    As = gaussian(5, 3, 3, seed=9)
    C = pairwise_commutators(As)
    for a in range(5):
        for b in range(5):
            assert abs(C[a, b].item() - commutator_norm(As[a], As[b])) < 1e-14
    assert abs(max_commutator(As) - C.max().item()) == 0.0
    assert C[0, 1].item() > 0.1
