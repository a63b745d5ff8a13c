"""Theorem 3: a width-1000 NQF and its compressed twin train identically."""

import numpy as np
import pytest
import torch

from nqf_mini.compression import compress_data_subspace, compress_rank, lift_weights, psd_factor
from nqf_mini.dynamics import simulate_W

torch.set_num_threads(1)


def _data(n=12, p=6, r=None, seed=0):
    gen = torch.Generator().manual_seed(seed)
    if r is None:
        X = torch.randn(n, p, p, generator=gen, dtype=torch.float64)
        A = (X + X.transpose(1, 2)) / (2 * p)
    else:  # joint range of dimension r < p
        V0, _ = torch.linalg.qr(torch.randn(p, r, generator=gen, dtype=torch.float64))
        X = torch.randn(n, r, r, generator=gen, dtype=torch.float64)
        A = V0 @ ((X + X.transpose(1, 2)) / (2 * r)) @ V0.T
    y = torch.randn(n, generator=gen, dtype=torch.float64)
    W0 = torch.randn(p, 1000, generator=gen, dtype=torch.float64) / 40  # width 1000
    return A, y, W0


@pytest.mark.parametrize("batch_size", [None, 4], ids=["gd", "sgd"])
def test_rank_compression_trains_identically(batch_size):
    A, y, W0 = _data()
    Wc, R = compress_rank(W0)
    assert Wc.shape == (6, 6) and R.shape == (1000, 6)
    assert torch.allclose(Wc @ Wc.T, W0 @ W0.T, atol=1e-13)
    wide = simulate_W(A, y, W0, 0.1, 100, batch_size=batch_size, seed=3, device="cpu")
    twin = simulate_W(A, y, Wc, 0.1, 100, batch_size=batch_size, seed=3, device="cpu")
    assert np.max(np.abs(wide.loss - twin.loss)) <= 1e-10
    assert (lift_weights(twin.W, R) - wide.W).abs().max().item() <= 1e-10  # W(t) = W'(t) R^T


def test_rank_compression_of_a_low_rank_init():
    gen = torch.Generator().manual_seed(1)
    W0 = torch.randn(6, 2, generator=gen, dtype=torch.float64) @ torch.randn(
        2, 50, generator=gen, dtype=torch.float64
    )
    Wc, R = compress_rank(W0)
    assert Wc.shape == (6, 2) and torch.allclose(lift_weights(Wc, R), W0, atol=1e-12)
    assert torch.allclose(R.T @ R, torch.eye(2, dtype=torch.float64), atol=1e-12)


@pytest.mark.parametrize("batch_size", [None, 4], ids=["gd", "sgd"])
def test_data_subspace_compression_trains_identically(batch_size):
    A, y, W0 = _data(r=3)
    V, A_red, M0_red = compress_data_subspace(A, W0 @ W0.T)
    assert V.shape == (6, 3) and A_red.shape == (12, 3, 3) and M0_red.shape == (3, 3)
    W_red = psd_factor(M0_red)  # 3 units instead of 1000
    assert W_red.shape[1] <= 3
    wide = simulate_W(A, y, W0, 0.1, 100, batch_size=batch_size, seed=3, device="cpu")
    twin = simulate_W(A_red, y, W_red, 0.1, 100, batch_size=batch_size, seed=3, device="cpu")
    assert np.max(np.abs(wide.loss - twin.loss)) <= 1e-10
    assert (V.T @ wide.M @ V - twin.M).abs().max().item() <= 1e-10


def test_validation():
    with pytest.raises(ValueError, match="`W0`"):
        compress_rank(torch.ones(3))
    with pytest.raises(ValueError, match="`rtol`"):
        compress_rank(torch.ones(3, 3), rtol=0.0)
    with pytest.raises(ValueError, match="`M0`.*positive semi-definite"):
        compress_data_subspace(torch.eye(3)[None], -torch.eye(3))
    with pytest.raises(ValueError, match=r"`M0`.*\(3, 3\)"):
        compress_data_subspace(torch.eye(3)[None], torch.eye(2))
    with pytest.raises(ValueError, match="`A`.*symmetric"):
        compress_data_subspace(torch.triu(torch.ones(3, 3))[None], torch.eye(3))


def test_compress_rank_keeps_real_directions_of_tiny_weights():
    """The tolerance is relative: weights of size 1e-13 keep their rank (3, not 1)."""
    gen = torch.Generator().manual_seed(4)
    W0 = 1e-13 * (
        torch.randn(6, 3, generator=gen, dtype=torch.float64)
        @ torch.randn(3, 10, generator=gen, dtype=torch.float64)
    )
    Wc, R = compress_rank(W0)
    assert Wc.shape == (6, 3) and R.shape == (10, 3)
    M0 = W0 @ W0.T
    assert (Wc @ Wc.T - M0).abs().max() <= 1e-12 * M0.abs().max()
