"""An NQF whose data matrices share one random eigenbasis, trained in weight space (Chapter 6).

Orthogonal features (Chapter 4, regime 2) as data: n samples with structure matrices

    A_mu = E diag(a_mu) E^T,        E a random orthogonal K x K matrix (columns e_k),

and targets y_mu, built so that C = (1/n) sum_mu a_mu a_mu^T is diagonal. The NQF
f_mu(W) = Tr[W^T A_mu W] = sum_k a_mu,k z_k with z_k = |W^T e_k|^2 is trained by gradient
descent on W (p = K rows, d units as columns) with the loss L = (1/2n) sum_mu (f_mu - y_mu)^2,
knowing nothing of the modes: dL/dW = 2 E diag(g) E^T W with g = (1/n) a^T (f - y). Theory says
(Theorem 2 and the Lotka-Volterra reduction, Chapter 4) that each z_k is then an independent
logistic with rate zeta_k = 4 b_k and capacity z*_k = b_k / C_kk, b = (1/n) a^T y; under GD with
step lr its early growth factor per step is (1 + lr zeta_k / 2)^2, i.e. the rate
zeta_k^GD = (2 / lr) ln(1 + lr zeta_k / 2). One step costs O(K^2 d + n K), without forming the
n matrices A_mu.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ._validate import (
    as_tensor, describe, require_bool, require_memory, require_positive, require_positive_entries,
    require_positive_int, require_shape, require_steps,
)
from .seeds import generator
from .training import State, make_optimizer, record_points, train


@dataclass(frozen=True)
class CommutingData:
    """Data of an NQF with commuting structure matrices A_mu = E diag(a_mu) E^T (Chapter 6).

    Attributes:
        E: the shared eigenbasis, (K, K) orthogonal, column k is e_k.
        a: the eigenvalues a_mu,k, (n, K).
        y: targets, (n,).
        C: the diagonal of (1/n) a^T a, (K,); b: (1/n) a^T y, (K,).
        zstar: capacities z*_k = b_k / C_k, (K,).
    """

    E: torch.Tensor
    a: torch.Tensor
    y: torch.Tensor
    C: torch.Tensor
    b: torch.Tensor
    zstar: torch.Tensor


def _random_orthogonal(gen: torch.Generator, rows: int, cols: int) -> torch.Tensor:
    Q, R = torch.linalg.qr(torch.randn(rows, cols, generator=gen, dtype=torch.float64))
    return Q * torch.sign(torch.diagonal(R))                            # a Haar-distributed Q


def commuting_data(zstar: Any, C: Any, n: int | None = None, seed: int = 0) -> CommutingData:
    """n >= K samples whose structure matrices share a random eigenbasis (Chapter 6).

    Builds a = sqrt(n) Q diag(sqrt(C)) with Q a random n x K matrix with orthonormal columns, so
    that (1/n) a^T a = diag(C) exactly while every sample carries every mode, and targets
    y = a z*, so that b = C z* and the capacities are the given ``zstar``. Each mode k then
    carries the loss V_k = C_k z*_k^2 / 2 and grows at zeta_k = 4 b_k = 4 C_k z*_k.

    Args:
        zstar: capacities z*_k > 0, (K,).
        C: the diagonal of C, > 0, (K,).
        n: number of samples (default K).
        seed: seed of E and Q (:func:`nqf_mini.generator`).

    Returns:
        :class:`CommutingData` (E, a, y, C, b, zstar).

    Raises:
        ValueError, TypeError: on a bad argument (naming it), e.g. n < K.
    """
    zstar = as_tensor("zstar", zstar, ndim=1, dtype=torch.float64)
    C = as_tensor("C", C, ndim=1, dtype=torch.float64)
    require_positive_entries("zstar", zstar)
    require_positive_entries("C", C)
    K = zstar.shape[0]
    require_shape("C", C, (K,), like="zstar")
    n = K if n is None else require_positive_int("n", n)
    require_memory("n", 2.0 * n * K, what="the eigenvalues a (n x K)")
    if n < K:
        raise ValueError(f"argument `n`: expected at least K = {K} samples (a^T a / n must be "
                         f"diagonal with K positive entries), got {n}")
    gen = generator(seed)
    E = _random_orthogonal(gen, K, K)
    a = math.sqrt(n) * _random_orthogonal(gen, n, K) * C.sqrt()
    return CommutingData(E=E, a=a, y=a @ zstar, C=C, b=C * zstar, zstar=zstar)


class _Commuting:
    """f_mu = sum_k a_mu,k |W^T e_k|^2: dL/dW = 2 E diag(g) E^T W, g = a^T (f - y) / n."""

    def __init__(self, data: CommutingData, record_z: bool):
        self.E, self.a, self.y, self.record_z = data.E, data.a, data.y, record_z

    def _parts(self, W: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        G = self.E.T @ W                                                   # (K, d): e_k^T W
        z = G.square().sum(1)                                              # z_k = (E^T M E)_kk
        return G, z, self.a @ z - self.y                                   # residuals (n,)

    def gradient(self, state: State, batch: None) -> tuple[None, State]:
        G, _, r = self._parts(state[0])
        g = self.a.T @ r / self.a.shape[0]
        return None, (2.0 * (self.E @ (g[:, None] * G)),)

    def measure(self, state: State, prediction: None,
                record: bool) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        _, z, r = self._parts(state[0])
        return 0.5 * r.square().mean(), ({"z": z} if record and self.record_z else {})


@dataclass(frozen=True)
class CommutingRun:
    """What :func:`train_commuting_nqf` returns.

    Attributes:
        steps: recorded steps (NumPy int, (T,)); loss: L at those steps (NumPy, (T,));
        z: the mode strengths z_k = e_k^T M e_k at those steps, (T, K), or None; W: final weights.
    """

    steps: np.ndarray
    loss: np.ndarray
    z: torch.Tensor | None
    W: torch.Tensor


def train_commuting_nqf(data: CommutingData, W0: Any, lr: float, steps: int, *,
                        record_steps: Sequence[int] | None = None,
                        record_z: bool = False) -> CommutingRun:
    """Gradient descent on W for the NQF f_mu = Tr[W^T E diag(a_mu) E^T W] (Chapter 6).

    The iteration of :func:`nqf_mini.simulate_W` for these data, W <- W - lr dL/dW with
    L = (1/2n) sum_mu (f_mu - y_mu)^2, written without forming the n matrices A_mu (module
    docstring). Time is t = lr * step.

    Args:
        data: from :func:`commuting_data`.
        W0: initial weights (K, d), units as columns.
        lr: learning rate.
        steps: number of steps.
        record_steps: the steps at which to record the loss (default: every step).
        record_z: also record the mode strengths z_k.

    Returns:
        :class:`CommutingRun` (steps, loss, z, W).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
        DivergenceError: if the loss becomes non-finite or exceeds 1e6 times its initial value.
    """
    if not isinstance(data, CommutingData):
        raise TypeError(f"argument `data`: expected CommutingData (from commuting_data), got "
                        f"{describe(data)}")
    W = as_tensor("W0", W0, ndim=2, dtype=torch.float64).detach().clone()
    record_z = require_bool("record_z", record_z)
    require_shape("W0", W, (data.E.shape[0], None))
    lr, steps = require_positive("lr", lr), require_steps("steps", steps)
    record = record_points(steps, 1 if record_steps is None else None, record_steps)
    trace = train(_Commuting(data, record_z), (W,), make_optimizer("gd", "sgd", lr), steps,
                  record=record, every_step=False)
    keep = np.isin(trace.loss_steps, trace.steps)
    return CommutingRun(steps=trace.steps, loss=trace.loss[keep], z=trace.records.get("z"),
                        W=trace.state[0])
