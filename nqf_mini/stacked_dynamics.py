"""R independent NQFs trained in M space at once: an ensemble of problems (Chapter 7).

R problems (A_r, y_r) with the same n and p are one problem with block-diagonal structure
matrices: sample (r, mu) has A_r,mu in diagonal block r of an Rp x Rp matrix. Started from a
block-diagonal M, the M-space updates of Theorem 2 keep M block-diagonal, and block r moves only
with the residuals of problem r; the big problem's loss is the mean over its Rn samples, so its
gradient on block r is 1/R of problem r's own, which a step (or time step) R times larger
compensates exactly. :func:`simulate_M_stacked` runs :func:`nqf_mini.simulate_M` on that
embedding and cuts the result back into the R runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ._validate import as_tensor, require_positive, require_positive_int, require_shape
from .dynamics import simulate_M


@dataclass(frozen=True)
class StackedMRun:
    """What :func:`simulate_M_stacked` returns.

    Attributes:
        steps: recorded steps (NumPy int, (T,)); times: lr * steps (NumPy, (T,)).
        loss: each problem's loss (1/2n) sum_mu (f_mu - y_mu)^2 at those steps (NumPy, (R, T)).
        f: predictions at those steps, (T, R, n); M_traj: M of each problem, (T, R, p, p).
    """

    steps: np.ndarray
    times: np.ndarray
    loss: np.ndarray
    f: torch.Tensor
    M_traj: torch.Tensor


def simulate_M_stacked(A: Any, y: Any, M0: Any, lr: float, steps: int, *, method: str = "gd",
                       record_every: int = 1) -> StackedMRun:
    """Train R NQFs f_r,mu = Tr[M_r A_r,mu] in M space at once (Theorem 2; Chapter 7).

    Problem r is exactly :func:`nqf_mini.simulate_M` ``(A[r], y[r], M0[r], lr, steps,
    method=method)`` (full batch: GD, or RK4 gradient flow with ``method="flow"``), computed
    on the block-diagonal embedding of the module docstring, whose cost per step is
    O(R^3 n p^2 + R^3 p^3): meant for a few dozen small problems.

    Args:
        A: structure matrices, (R, n, p, p), symmetric.
        y: targets, (R, n).
        M0: initial M of each problem, (R, p, p), positive semi-definite.
        lr: learning rate (GD) or time step (flow).
        steps: number of steps.
        method: ``"gd"`` or ``"flow"``.
        record_every: record every k steps and at the last step.

    Returns:
        :class:`StackedMRun` (steps, times, loss (R, T), f (T, R, n), M_traj (T, R, p, p)).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
        DivergenceError: if the summed loss becomes non-finite or exceeds 1e6 times its
            initial value.
    """
    A = as_tensor("A", A, ndim=4, dtype=torch.float64).detach()
    R, n, p = A.shape[0], A.shape[1], A.shape[2]
    require_shape("A", A, (R, n, p, p))
    y = as_tensor("y", y, ndim=2, dtype=torch.float64, device=A.device).detach()
    require_shape("y", y, (R, n))
    M0 = as_tensor("M0", M0, ndim=3, dtype=torch.float64, device=A.device).detach()
    require_shape("M0", M0, (R, p, p))
    lr = require_positive("lr", lr)
    record_every = require_positive_int("record_every", record_every)
    big = torch.zeros(R, n, R * p, R * p, dtype=A.dtype, device=A.device)
    for r in range(R):
        big[r, :, r * p:(r + 1) * p, r * p:(r + 1) * p] = A[r]
    res = simulate_M(big.reshape(R * n, R * p, R * p), y.reshape(R * n), torch.block_diag(*M0),
                     R * lr, steps, method=method, record_every=record_every)
    assert res.f is not None and res.M_traj is not None and res.steps is not None  # recorded
    f = res.f.reshape(-1, R, n)
    blocks = torch.stack([res.M_traj[:, r * p:(r + 1) * p, r * p:(r + 1) * p] for r in range(R)],
                         dim=1)
    loss = 0.5 * (f - y).square().mean(-1)
    return StackedMRun(steps=res.steps, times=lr * res.steps, loss=loss.T.cpu().numpy(), f=f,
                       M_traj=blocks)
