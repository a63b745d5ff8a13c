"""The two-layer remainder along a trajectory and under weight scaling (Chapter 7)."""

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini.remainder import scaled_remainder, trajectory_remainder


def _data(p=6, n=64, seed=0):
    return torch.randn(n, p, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("activation, order", [("tanh", 4), ("softplus0", 3), ("silu", 3)])
def test_scaled_remainder_orders(activation, order):
    U, V = nqf.two_layer_init(6, 10, 1, 1.0, seed=1)
    fit = scaled_remainder(U, V, _data(), np.geomspace(1e-3, 1e-2, 5), activation)
    assert abs(fit.slope - order) < 0.05
    assert abs(fit.relative_slope - (order - 2)) < 0.05
    assert np.all(np.diff(fit.relative) > 0)


def test_scaled_remainder_is_zero_for_a_linear_network():
    U, V = nqf.two_layer_init(6, 10, 1, 1.0, seed=1)
    with pytest.raises(ValueError, match="vanishes"):
        scaled_remainder(U, V, _data(), [0.1, 0.2], "linear")


def test_trajectory_remainder_matches_direct_evaluation():
    X = _data()
    U0, V0 = nqf.two_layer_init(6, 10, 1, 0.3, seed=2)
    y = torch.tanh(X[:, 0])
    run = nqf.train_two_layer(X, y, U0, V0, lr=0.1, steps=40, record_every=20, record_weights=True)
    rel = trajectory_remainder(run.U_traj, run.V_traj, X)
    assert rel.shape == (3,)
    U, V = run.U_traj[1], run.V_traj[1]
    F, Q = torch.tanh(X @ U) @ V, X @ U @ V
    assert abs(rel[1] - float((F - Q).norm() / F.norm())) < 1e-12
    with pytest.raises(ValueError, match="`V_traj`"):
        trajectory_remainder(run.U_traj, run.V_traj[:2], X)


def test_scaled_remainder_validates_scales():
    U, V = nqf.two_layer_init(6, 10, 1, 1.0)
    with pytest.raises(ValueError, match="`scales`"):
        scaled_remainder(U, V, _data(), [0.1])
