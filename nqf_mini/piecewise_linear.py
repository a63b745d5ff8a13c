r"""The :math:`\varepsilon \to 0` limit of the Lotka-Volterra flow: piecewise-linear
log-strengths (Chapters 4-5).

Start every mode at :math:`z_k(0) = \varepsilon` and write
:math:`\ell_k = \ln z_k / \ln(1/\varepsilon)`, :math:`\hat t = t / \ln(1/\varepsilon)`. As
:math:`\varepsilon \to 0` the flow :math:`\dot z = 4z(b - Cz)` becomes piecewise linear in these
variables (regime 4 of Chapter 4, our reconstruction): between events, with S the modes that have
reached :math:`\ell = 0` and :math:`z_S` the non-negative least-squares point of S
(:func:`nqf_mini.nnls_end_state` on S), every mode below 0 moves with velocity
:math:`4(b_k - (Cz_S)_k)`, the modes of S stay at 0 (those the NNLS on S sets to zero leave with
negative velocity), and an event happens when a rising mode reaches 0; :math:`\hat t_k` is the
event at which mode k arrives.

:func:`limit_events` runs that event loop once; :func:`piecewise_linear_limit` evaluates it on a
grid of :math:`\hat t` (Chapter 4) and :func:`limit_ignition_slopes` reads off the arrivals
:math:`\hat t_k`, the :math:`\varepsilon \to 0` slope of each ignition time against
:math:`\ln(1/\varepsilon)` (Chapter 5). Exact up to round-off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ._validate import as_tensor, require_shape, require_time_grid
from .lotka_volterra import nnls_end_state

_SNAP = 1e-12  # a rising mode this close to 0 has arrived


@dataclass(frozen=True)
class Segment:
    r"""One linear piece of the limit: :math:`\ell(\hat t) = \ell_{\rm start} +
    v\,(\hat t - \hat t_{\rm start})` for start <= :math:`\hat t` <= end."""

    start: float
    end: float
    ell: torch.Tensor  # (K,) at t_hat = start
    velocity: torch.Tensor  # (K,)


def limit_events(b: Any, C: Any) -> list[Segment]:
    r"""The pieces of the :math:`\varepsilon \to 0` limit from :math:`\hat t = 0` until no mode
    rises any more (the last piece has ``end = inf``).

    Args:
        b: growth vector (K,); C: positive-definite interaction matrix (K, K).
    """
    b = as_tensor("b", b, ndim=1, dtype=torch.float64)
    C = as_tensor("C", C, ndim=2, dtype=torch.float64, device=b.device)
    K = b.shape[0]
    require_shape("C", C, (K, K), like="b")
    ell = torch.full((K,), -1.0, dtype=torch.float64, device=b.device)
    segments, t_now = [], 0.0
    for _ in range(4 * K + 4):  # each event activates at least one mode
        active = [k for k in range(K) if ell[k].item() == 0.0]
        z_S = torch.zeros_like(b)
        if active:
            z_S[active] = nnls_end_state(b[active], C[active][:, active])
        v = 4.0 * (b - C @ z_S)  # velocity of every ell_k
        v[(ell == 0.0) & ((z_S > 0) | (v > 0))] = 0.0  # active modes stay at 0
        rising = [(-ell[k] / v[k]).item() for k in range(K) if ell[k] < 0 and v[k] > 0]
        dt = min(rising, default=math.inf)
        segments.append(Segment(t_now, t_now + dt, ell, v))
        if dt == math.inf:
            break
        new = ell + v * dt
        ell = torch.where(new >= -_SNAP, torch.zeros_like(new), new)  # snap arrivals to 0
        t_now += dt
    else:
        raise ValueError(
            "argument `C`: the limit did not settle after 4 K + 4 events; expected a "
            "positive-definite interaction matrix"
        )
    return segments


def piecewise_linear_limit(b: Any, C: Any, t_hat: Any) -> tuple[torch.Tensor, list[float]]:
    r"""The :math:`\varepsilon \to 0` limit of :math:`\ell_k = \ln z_k / \ln(1/\varepsilon)` against
    :math:`\hat t = t / \ln(1/\varepsilon)`, from :math:`z_k(0) = \varepsilon` (Chapter 4).

    Piecewise linear: between events every mode below 0 moves with velocity
    :math:`4(b_k - (C z_S)_k)`, :math:`z_S` the NNLS point of the modes that have arrived (the
    module docstring).

    Args:
        b: growth vector (K,).
        C: positive-definite interaction matrix (K, K).
        t_hat: increasing rescaled times :math:`\hat t = t/\ln(1/\varepsilon) \ge 0`, shape
            (S,).

    Returns:
        (:math:`\ell` at ``t_hat``, shape (S, K), float64; the events :math:`\hat t` at which a
        mode arrives, in order).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    segments = limit_events(b, C)
    t_hat = require_time_grid("t_hat", t_hat, dtype=torch.float64, device=segments[0].ell.device)
    out, i = [], 0
    for seg in segments:
        while i < len(t_hat) and t_hat[i] <= seg.end:
            out.append(seg.ell + seg.velocity * (t_hat[i] - seg.start))
            i += 1
    return torch.stack(out), [seg.end for seg in segments if seg.end < math.inf]


def limit_ignition_slopes(b: Any, C: Any) -> torch.Tensor:
    r"""The :math:`\varepsilon \to 0` limit of :math:`t_k^\ast / \ln(1/\varepsilon)` for
    :math:`\dot z = 4z(b - Cz)`, :math:`z_k(0) = \varepsilon` (Chapter 5).

    The event :math:`\hat t_k` at which mode k first reaches :math:`\ell_k = 0` (the module
    docstring). For diagonal C this is :math:`1/(4b_k) = 1/\zeta_k`, the slope of Theorem 8; for
    coupled modes it is the slope to compare :func:`ignition_slope` with.

    Args:
        b: growth vector (K,).
        C: positive-definite interaction matrix (K, K).

    Returns:
        The arrivals :math:`\hat t_k`, shape (K,); ``math.inf`` for modes that never ignite.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    segments = limit_events(b, C)
    arrival = torch.full_like(segments[0].ell, math.inf)
    for seg in segments[1:]:  # a segment starts where a mode has arrived
        reached = (seg.ell == 0.0) & torch.isinf(arrival)
        arrival[reached] = seg.start
    return arrival
