"""simulate_M_stacked (R problems in one block-diagonal NQF) against simulate_M, problem by
problem."""

import numpy as np
import pytest
import torch

import nqf_mini as nqf

torch.set_num_threads(1)


def _problems(R=3, n=5, p=3):
    gen = nqf.generator(11)
    S = torch.randn(R, n, p, p, generator=gen, dtype=torch.float64)
    A = (S + S.transpose(-1, -2)) / 2
    y = torch.randn(R, n, generator=gen, dtype=torch.float64)
    G = torch.randn(R, p, p, generator=gen, dtype=torch.float64)
    return A, y, 1e-2 * G @ G.transpose(-1, -2)


@pytest.mark.parametrize("method", ["gd", "flow"])
def test_each_problem_is_simulate_M_alone(method):
    A, y, M0 = _problems()
    stacked = nqf.simulate_M_stacked(A, y, M0, 0.05, 60, method=method, record_every=4)
    for r in range(A.shape[0]):
        alone = nqf.simulate_M(A[r], y[r], M0[r], 0.05, 60, method=method, record_every=4)
        assert np.array_equal(stacked.steps, alone.steps)
        assert np.allclose(stacked.times, alone.times, rtol=1e-15, atol=0)
        assert np.allclose(stacked.loss[r], alone.loss[alone.steps], rtol=1e-11, atol=0)
        assert torch.allclose(stacked.M_traj[:, r], alone.M_traj, rtol=0, atol=1e-12)


def test_bad_shapes_are_named():
    A, y, M0 = _problems()
    with pytest.raises(ValueError, match="argument `y`"):
        nqf.simulate_M_stacked(A, y[:2], M0, 0.05, 3)
    with pytest.raises(ValueError, match="argument `M0`"):
        nqf.simulate_M_stacked(A, y, M0[:, :2], 0.05, 3)
