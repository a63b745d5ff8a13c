"""The commuting-data NQF of Chapter 6 (nqf_mini.commuting_nqf) against simulate_W and the
logistic map."""

import math

import numpy as np
import pytest
import torch

import nqf_mini as nqf

torch.set_num_threads(1)


def _data(K=5, n=8, seed=4):
    k = torch.arange(1, K + 1, dtype=torch.float64)
    return nqf.commuting_data(2.0 * k ** -1.0, 0.5 * k ** -0.5, n=n, seed=seed)


def test_the_data_have_the_prescribed_modes():
    data = _data()
    n, K = data.a.shape
    assert torch.allclose(data.E.T @ data.E, torch.eye(K, dtype=torch.float64), atol=1e-14)
    assert torch.allclose(data.a.T @ data.a / n, torch.diag(data.C), atol=1e-14)
    assert torch.allclose(data.a.T @ data.y / n, data.b, atol=1e-14)
    A = torch.einsum("ik,nk,jk->nij", data.E, data.a, data.E)
    assert nqf.max_commutator(A) < 1e-13                           # commuting, yet not diagonal
    assert (A - torch.diag_embed(torch.diagonal(A, dim1=1, dim2=2))).abs().max() > 0.1


def test_gradient_descent_is_simulate_W_on_the_dense_matrices():
    data = _data()
    A = torch.einsum("ik,nk,jk->nij", data.E, data.a, data.E)     # A_mu = E diag(a_mu) E^T
    W0 = 0.05 * torch.randn(5, 3, generator=nqf.generator(1), dtype=torch.float64)
    run = nqf.train_commuting_nqf(data, W0, lr=0.3, steps=40, record_z=True)
    dense = nqf.simulate_W(A, data.y, W0, 0.3, 40, record_every=1)
    assert np.allclose(run.loss, dense.loss, rtol=1e-11, atol=0)
    assert torch.allclose(run.W, dense.W, atol=1e-12)
    z = torch.einsum("ik,tij,jk->tk", data.E, dense.M_traj, data.E)   # diag of E^T M E
    assert torch.allclose(run.z, z, atol=1e-12)


def test_each_mode_is_the_discrete_logistic_map():
    """z_k <- z_k (1 + 2 lr (b_k - C_k z_k))^2, mode by mode: the modes decouple exactly."""
    data = _data()
    W0 = 0.01 * torch.randn(5, 2, generator=nqf.generator(2), dtype=torch.float64)
    run = nqf.train_commuting_nqf(data, W0, lr=0.2, steps=60, record_z=True)
    z = run.z[0].clone()
    for t in range(1, 61):
        z = z * (1 + 2 * 0.2 * (data.b - data.C * z)) ** 2
        assert torch.allclose(run.z[t], z, rtol=1e-10, atol=0)
    assert math.isclose(run.loss[-1], 0.5 * float((data.a @ z - data.y).square().mean()),
                        rel_tol=1e-10)


def test_bad_arguments_are_named():
    k = torch.arange(1, 4, dtype=torch.float64)
    with pytest.raises(ValueError, match="argument `n`"):
        nqf.commuting_data(k, k, n=2)
    with pytest.raises(ValueError, match="argument `C`"):
        nqf.commuting_data(k, -k)
    with pytest.raises(TypeError, match="argument `data`"):
        nqf.train_commuting_nqf(None, torch.zeros(3, 1), 0.1, 2)
    with pytest.raises(ValueError, match="argument `W0`"):
        nqf.train_commuting_nqf(nqf.commuting_data(k, k), torch.zeros(4, 1), 0.1, 2)
