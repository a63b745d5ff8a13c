"""Ignition (switch-on) times of modes: measured from trajectories and predicted (Theorem 8, Chapter
5).

A mode that starts small, z_k(0) = Theta(eps), and grows logistically,

    dz_k/dt = zeta_k z_k (1 - z_k / z*_k),

spends almost all of its growth at invisible sizes and then switches on abruptly. This module
measures *when* that happens and predicts it.

Definition used throughout the course. The ignition time t*_k of mode k is the first time at which
z_k(t) reaches half its capacity, z_k(t*_k) = z*_k / 2, linearly interpolated between the two
recorded times that bracket the crossing. (For a trajectory recorded as a learned *fraction* q_k in
[0, 1], e.g. the share of a target a network has fitted, the same definition reads q_k = 1/2; use
:func:`crossing_times` with ``level=0.5``.) A mode that never reaches the level within the recorded
trajectory gets ``math.inf``, or a ValueError when ``strict=True``. A mode already at or above the
level at the first recorded time gets that time.

Predictions: the exact logistic value t*_k = [ln(z*_k / z_k(0) - 1) - ln(1/f - 1)] / zeta_k for the
fraction f (f = 1/2: ln(z*/z0 - 1) / zeta_k), and its small-eps form (1/zeta_k) ln(1/eps). For
coupled modes (general C), the eps -> 0 limit of t*_k / ln(1/eps) is the time at which mode k
reaches ln z_k / ln(1/eps) = 0 in the piecewise-linear limit of Chapter 4
(:func:`nqf_mini.piecewise_linear.limit_ignition_slopes`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ._validate import (
    as_tensor,
    require_bool,
    require_choice,
    require_fraction,
    require_positive_entries,
    require_shape,
    require_time_grid,
    warn_subnormal,
)

DIRECTIONS = ("up", "down")


def crossing_times(
    values: Any,
    times: Any,
    level: Any,
    *,
    direction: str = "up",
    strict: bool = False,
) -> torch.Tensor:
    """First time each column of a trajectory crosses ``level``, linearly interpolated (Chapter 5).

    For ``direction="up"`` the first recorded index j with values[j] >= level is found and, if
    j > 0, t = t_{j-1} + (level - x_{j-1}) (t_j - t_{j-1}) / (x_j - x_{j-1}); for ``"down"`` the
    same with values[j] <= level (e.g. the time a loss first falls below a threshold).

    Args:
        values: trajectory, shape (T,) or (..., T, K) (time is the second-to-last dimension for
            2-D and larger inputs).
        times: recorded times (or steps), shape (T,), strictly increasing.
        level: the level, a scalar or shape broadcastable to (..., K).
        direction: "up" (first reach >= level) or "down" (first fall <= level).
        strict: if True, raise ValueError when some column never crosses; if False (default), such
            columns get ``math.inf``.

    Returns:
        Crossing times, shape () for 1-D values, else (..., K).

    Raises:
        ValueError: on malformed input (naming the argument), or a missing crossing when strict.
    """
    require_choice("direction", direction, DIRECTIONS)
    strict = require_bool("strict", strict)
    x = as_tensor("values", values)
    if x.ndim == 0:
        raise ValueError(
            "argument `values`: expected a trajectory of shape (T,) or (..., T, K), got a scalar"
        )
    vector = x.ndim == 1
    x = x[:, None] if vector else x
    t = require_time_grid("times", times, dtype=x.dtype, device=x.device, nonnegative=False)
    require_shape("times", t, (x.shape[-2],), like="values")
    lev = as_tensor("level", level, dtype=x.dtype, device=x.device)
    try:
        lev = torch.broadcast_to(lev, x.shape[:-2] + x.shape[-1:]).unsqueeze(-2)  # (..., 1, K)
    except RuntimeError as exc:
        raise ValueError(
            f"argument `level`: expected a scalar or a shape broadcastable to "
            f"{tuple(x.shape[:-2] + x.shape[-1:])}, got {tuple(lev.shape)}"
        ) from exc
    sign = 1.0 if direction == "up" else -1.0
    reached = sign * (x - lev) >= 0  # (..., T, K)
    hit = reached.any(dim=-2)  # (..., K)
    j = reached.to(torch.int64).argmax(dim=-2)  # first True
    if strict and not hit.all().item():
        missing = (~hit).nonzero().tolist()
        raise ValueError(
            f"argument `values`: expected every column to cross level(s) "
            f"{lev.squeeze(-2).tolist()} ({direction}) within the trajectory, but "
            f"column(s) {missing} never do (last time {t[-1].item():g})"
        )
    jm = (j - 1).clamp_min(0)
    gather = lambda a, idx: torch.gather(a, -2, idx.unsqueeze(-2)).squeeze(-2)
    x1, x0 = gather(x, j), gather(x, jm)
    t1, t0 = t[j], t[jm]
    lev = lev.squeeze(-2)
    gap = x1 - x0
    frac = torch.where(gap != 0, (lev - x0) / torch.where(gap != 0, gap, 1.0), 1.0)
    out = torch.where(j > 0, t0 + frac.clamp(0.0, 1.0) * (t1 - t0), t1)
    out = torch.where(hit, out, torch.full_like(out, math.inf))
    return out[..., 0] if vector else out


def ignition_times(
    z: Any,
    times: Any,
    zstar: Any,
    *,
    fraction: float = 0.5,
    strict: bool = False,
) -> torch.Tensor:
    """Ignition times t*_k: first time z_k(t) = fraction * z*_k (default half capacity) (Chapter 5).

    The definition of the module docstring, implemented by :func:`crossing_times` with
    ``level = fraction * zstar``.

    Args:
        z: mode strengths, shape (T, K) or (..., T, K).
        times: recorded times (or steps), shape (T,), strictly increasing.
        zstar: capacities (or end values), > 0, scalar or shape (K,) / (..., K).
        fraction: the level as a fraction of the capacity, 0 < fraction < 1.
        strict: raise ValueError if a mode never ignites; otherwise it gets ``math.inf``.

    Returns:
        t*, shape (..., K); ``math.inf`` for modes that do not reach the level.
    """
    fraction = require_fraction("fraction", fraction)
    strict = require_bool("strict", strict)
    z = as_tensor("z", z)
    if z.ndim < 2:
        raise ValueError(
            f"argument `z`: expected shape (T, K) or (..., T, K), got {tuple(z.shape)}"
        )
    zstar = as_tensor("zstar", zstar, dtype=z.dtype, device=z.device)
    require_positive_entries("zstar", zstar)
    target = z.shape[:-2] + z.shape[-1:]
    try:
        ok = torch.broadcast_shapes(zstar.shape, target) == target
    except RuntimeError:
        ok = False
    if not ok:
        raise ValueError(
            f"argument `zstar`: expected a scalar or a shape broadcastable to "
            f"{tuple(target)} to match `z`, got {tuple(zstar.shape)}"
        )
    try:
        return crossing_times(z, times, fraction * zstar, strict=strict)
    except ValueError as exc:  # the names of this function's arguments
        raise ValueError(str(exc).replace("`values`", "`z`")) from None


def logistic_ignition_time(z0: Any, zstar: Any, zeta: Any, fraction: float = 0.5) -> torch.Tensor:
    """Exact time at which a logistic reaches fraction * z* (Chapter 5).

    For z(t) = z* / (1 + (z*/z0 - 1) e^{-zeta t}) (Chapter 4),

        t_f = [ln(z*/z0 - 1) - ln(1/f - 1)] / zeta,      t_{1/2} = ln(z*/z0 - 1) / zeta.

    Args:
        z0: initial values, 0 < z0 < fraction * zstar; z0, zstar, zeta broadcast together.
        zstar: capacities, > 0.
        zeta: growth rates, > 0.
        fraction: 0 < fraction < 1 (default 1/2).

    Returns:
        :math:`t_f`, the broadcast shape, in the dtype of ``z0`` (computed in float64, so
        that a float32 z0 far below z* stays finite).
    """
    fraction = require_fraction("fraction", fraction)
    z0 = as_tensor("z0", z0)
    warn_subnormal("z0", z0)
    dtype = z0.dtype
    z0 = z0.double()
    zstar = as_tensor("zstar", zstar, dtype=z0.dtype, device=z0.device)
    zeta = as_tensor("zeta", zeta, dtype=z0.dtype, device=z0.device)
    for name, v in (("z0", z0), ("zstar", zstar), ("zeta", zeta)):
        require_positive_entries(name, v)
    try:
        torch.broadcast_shapes(z0.shape, zstar.shape, zeta.shape)
    except RuntimeError as exc:
        raise ValueError(
            f"arguments `z0`, `zstar`, `zeta`: shapes {tuple(z0.shape)}, "
            f"{tuple(zstar.shape)}, {tuple(zeta.shape)} do not broadcast"
        ) from exc
    if not (z0 < fraction * zstar).all().item():
        raise ValueError(
            f"argument `z0`: expected z0 < fraction * zstar (a mode that still has to "
            f"ignite), got max z0 / zstar = {(z0 / zstar).max().item():.3g}"
        )
    return ((torch.log(zstar / z0 - 1.0) - math.log(1.0 / fraction - 1.0)) / zeta).to(dtype)


def predicted_ignition_time(zeta: Any, eps: Any) -> torch.Tensor:
    r"""The small-initialisation law :math:`t_k^\ast = \ln(1/\varepsilon)/\zeta_k` (Theorem 8,
    Chapter 5).

    It drops the O(1) terms :math:`\ln z_k^\ast` and the log of the prefactor of
    :math:`z_k(0) = \Theta(\varepsilon)`; differences and slopes against
    :math:`\ln(1/\varepsilon)` are what it predicts exactly. For coupled modes (a C that is not
    diagonal) the slopes are :func:`nqf_mini.limit_ignition_slopes`, and the exact logistic time
    is :func:`logistic_ignition_time`.

    Args:
        zeta: growth rates :math:`\zeta_k`, > 0, any shape.
        eps: initialisation scale(s), 0 < eps < 1; broadcasts with zeta.

    Returns:
        :math:`t_k^\ast`, the broadcast shape.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    zeta = as_tensor("zeta", zeta)
    eps = _eps(eps, zeta)
    require_positive_entries("zeta", zeta)
    try:
        return torch.log(1.0 / eps) / zeta
    except RuntimeError as exc:
        raise ValueError(
            f"arguments `zeta`, `eps`: shapes {tuple(zeta.shape)} and "
            f"{tuple(eps.shape)} do not broadcast"
        ) from exc


def _eps(eps: Any, like: torch.Tensor | None = None, ndim: int | None = None) -> torch.Tensor:
    """Initialisation scales 0 < eps < 1, as a tensor (like ``like``)."""
    eps = as_tensor(
        "eps",
        eps,
        ndim=ndim,
        dtype=None if like is None else like.dtype,
        device=None if like is None else like.device,
    )
    if not ((eps > 0) & (eps < 1)).all().item():
        raise ValueError(f"argument `eps`: expected values in (0, 1), got {eps.tolist()}")
    return eps


@dataclass(frozen=True)
class IgnitionFit:
    """Least-squares fit t*_k = slope_k ln(1/eps) + intercept_k (:func:`ignition_slope`)."""

    slope: torch.Tensor
    intercept: torch.Tensor


def ignition_slope(eps: Any, t_star: Any) -> IgnitionFit:
    """Fit t* against ln(1/eps) by least squares, one line per mode (Chapter 5).

    Theorem 8 predicts slope 1/zeta_k for independent (logistic) modes; for coupled modes the slope
    of the eps -> 0 limit is :func:`nqf_mini.piecewise_linear.limit_ignition_slopes`.

    Args:
        eps: initialisation scales, shape (E,), 0 < eps < 1, at least two distinct values.
        t_star: ignition times, shape (E,) or (E, K), finite.

    Returns:
        :class:`IgnitionFit` with slope and intercept of shape () or (K,).
    """
    eps = _eps(eps, ndim=1)
    if torch.unique(eps).numel() < 2:
        raise ValueError(
            f"argument `eps`: expected at least two distinct values, got {eps.tolist()}"
        )
    try:
        t_star = as_tensor("t_star", t_star, dtype=eps.dtype, device=eps.device)
    except ValueError as exc:
        raise ValueError(
            f"{exc} (a mode that never ignited within the trajectory has t* = inf: run longer)"
        ) from exc
    if t_star.ndim not in (1, 2) or t_star.shape[0] != eps.shape[0]:
        raise ValueError(
            f"argument `t_star`: expected shape ({eps.shape[0]},) or "
            f"({eps.shape[0]}, K) to match `eps`, got {tuple(t_star.shape)}"
        )
    x = torch.log(1.0 / eps)
    xc = x - x.mean()
    tt = t_star if t_star.ndim == 2 else t_star[:, None]
    slope = (xc[:, None] * (tt - tt.mean(0))).sum(0) / (xc * xc).sum()
    intercept = tt.mean(0) - slope * x.mean()
    if t_star.ndim == 1:
        slope, intercept = slope[0], intercept[0]
    return IgnitionFit(slope=slope, intercept=intercept)


def mode_fractions(outputs: Any, X: Any, Y: Any) -> torch.Tensor:
    r"""Fraction of each mode's target a network has fitted,
    :math:`q_k = \langle X_{:k}, F_{:k}\rangle / \langle X_{:k}, Y_{:k}\rangle` (Chapter 5).

    For data built so that output channel k depends on input feature k only
    (:math:`Y_{:k} = y_k X_{:k}/s_k` with orthogonal columns :math:`X_{:k}`, as in Chapter 5),
    :math:`q_k = s_k P_{kk}/y_k` for the linear map P of the NQF, which is
    :math:`(z_k^+ - z_k^-)/z_k^\ast` in mode strengths: 0 at the start, 1 when mode k is learned.
    Ignition is ``crossing_times(q, steps, 0.5)``.

    Args:
        outputs: network outputs F, shape (n, K) or (..., n, K), e.g. a trajectory (T, n, K) or
            an ensemble of trajectories (R, T, n, K).
        X: inputs (n, p) with p >= K.
        Y: targets (n, K).

    Returns:
        q, shape (K,) or (..., K).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    F = as_tensor("outputs", outputs)
    X = as_tensor("X", X, ndim=2, dtype=F.dtype, device=F.device)
    Y = as_tensor("Y", Y, ndim=2, dtype=F.dtype, device=F.device)
    n, K = Y.shape
    if X.shape[0] != n or X.shape[1] < K:
        raise ValueError(
            f"argument `X`: expected shape ({n}, p) with p >= {K} to match `Y`, "
            f"got {tuple(X.shape)}"
        )
    if F.ndim < 2 or tuple(F.shape[-2:]) != (n, K):
        raise ValueError(
            f"argument `outputs`: expected shape ({n}, {K}) or (..., {n}, {K}) to "
            f"match `Y`, got {tuple(F.shape)}"
        )
    denom = (X[:, :K] * Y).sum(0)
    if not (denom.abs() > 0).all().item():
        raise ValueError(
            "argument `Y`: expected every channel k to correlate with input column k "
            "(<X_:k, Y_:k> != 0)"
        )
    return (X[:, :K] * F).sum(-2) / denom
