"""The scalar-output Fourier network: balanced rank-one dynamics (our reconstruction, Chapter 6).

A two-layer linear network with ONE output, F = x^T U v, trained from small weights on Fourier
inputs (s_k = k^-theta) and a target with coefficients b_k = k^-beta, does not have independent
modes: its data matrices do not commute and M stays (nearly) rank one. After one escape along
c = S b, the end-to-end weights w = U v follow preconditioned regression, which this module
integrates; :func:`nqf_mini.exponents.rank_one_exponent` is the exponent it predicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ._validate import (
    largest,
    require_memory,
    require_positive,
    require_positive_int,
    require_steps,
)


@dataclass(frozen=True)
class RankOneCurve:
    r"""What :func:`rank_one_curve` returns (Chapter 6).

    Attributes:
        t: times (T,).
        loss: :math:`E(t) = \tfrac12 \|Sw - b\|^2` (T,).
        fraction: learnt fractions :math:`s_k w_k / b_k`, (T, K).
        tau: the preconditioned time :math:`\tau(t) = \int \|w\|\,dt` (T,).
    """

    t: np.ndarray
    loss: np.ndarray
    fraction: np.ndarray
    tau: np.ndarray


def rank_one_curve(
    K: int,
    theta: float,
    beta: float,
    *,
    w0_norm: float = 1e-4,
    n_steps: int = 1500,
    tau_max: float | None = None,
) -> RankOneCurve:
    r"""Balanced rank-one dynamics of the scalar-output two-layer linear network (our
    reconstruction, Chapter 6).

    For :math:`F = x^\top U v` on Fourier inputs (:math:`s_k = k^{-\theta}`, target
    :math:`b_k = k^{-\beta}`) the loss is :math:`\tfrac12|Sw - b|^2` with w = U v. A small
    initialisation escapes along c = S b and stays (nearly) rank one and balanced; then w obeys

    .. math:: \dot w = -(|w| I + ww^\top/|w|)(S^2 w - c),

    preconditioned regression whose speed :math:`|w|` grows as modes are learnt. Integrated in
    :math:`\tau = \int |w|\,dt` (where it reads :math:`dw/d\tau = -(I + qq^\top)(S^2 w - c)`,
    :math:`q = w / |w|`) by implicit Euler on a log-spaced grid from
    :math:`\min(10^{-4}, |w_0| / (100 |c|))` (before w has doubled) to ``tau_max``
    (default :math:`10 K^{2\theta}`), with :math:`t = \int d\tau/|w|` by the trapezoidal rule.
    Each step is O(K) (Sherman-Morrison), so K = 4096 costs well under a second.

    Args:
        K: the number of modes.
        theta: exponent of the input scales, > 0.
        beta: exponent of the target coefficients, > 0.
        w0_norm: :math:`|w(0)|`, > 0.
        n_steps: steps of the tau grid (10 to 10**7).
        tau_max: the end of the tau grid (None: 10 K^(2 theta)).

    Returns:
        :class:`RankOneCurve` (t, loss, fraction (T, K), tau).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    K = require_positive_int("K", K)
    theta, beta = require_positive("theta", theta), require_positive("beta", beta)
    w0_norm = require_positive("w0_norm", w0_norm)
    n_steps = require_steps("n_steps", n_steps, minimum=10)
    require_memory(
        largest(K=K, n_steps=n_steps),
        float(K) * n_steps,
        what="the recorded fractions (n_steps x K)",
    )
    tau_max = 10.0 * K ** (2 * theta) if tau_max is None else require_positive("tau_max", tau_max)
    k = torch.arange(1, K + 1, dtype=torch.float64)
    s, b = k**-theta, k**-beta
    c, s2 = s * b, s * s
    w = w0_norm * c / c.norm()
    # start well before w has doubled (w ~ w0 q + 2 c tau at first), so that the time
    # t = int dtau / |w| spent near w0 is resolved for any w0
    tau_min = min(1e-4, 1e-2 * w0_norm / float(c.norm()))
    taus = np.logspace(math.log10(tau_min), math.log10(tau_max), n_steps)
    t_now, tau_prev = 0.0, 0.0
    T, E, F = [], [], []
    for tau in taus:
        h = float(tau - tau_prev)
        tau_prev = float(tau)
        q = w / w.norm()
        rhs = w + h * (c + q * (q @ c))  # w + h P c, P = I + q q^T
        d_inv = 1.0 / (1.0 + h * s2)
        x, y, a = d_inv * rhs, d_inv * q, s2 * q  # (D + h q a^T)^-1 rhs, D = I + h S^2
        w_new = x - y * (h * (a @ x)) / (1.0 + h * (a @ y))
        t_now += float(2.0 * h / (w.norm() + w_new.norm()))
        w = w_new
        T.append(t_now)
        E.append(float(0.5 * (s * w - b).square().sum()))
        F.append(s * w / b)
    return RankOneCurve(
        t=np.asarray(T), loss=np.asarray(E), fraction=torch.stack(F).numpy(), tau=np.asarray(taus)
    )
