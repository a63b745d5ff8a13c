"""How fast the neural quadratic form becomes exact as the weights shrink (Chapter 1).

Scale a fixed weight matrix W by s and compare the module with its second-order form:

    R(s) = | f(sW, x) - f0 - s g.mu - s^2 (mu^T B mu + Tr[M A]) |,

(g = B = 0 under ZGZ). Theorem 1 promises R(s) = O(s^3). The log-log slope of R against s is the
remainder order: 3 when a cubic term survives (phi''(0) != 0), 4 when it vanishes by symmetry
(tanh), 2 for ReLU (homogeneous of degree 2, so its "A" from autograd is meaningless), 1 when a
linear term exists and is left out, and no slope at all for exactly quadratic models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from collections.abc import Sequence

import numpy as np
import torch

from ._modules import Module, evaluate, prepare_call
from ._validate import (
    as_tensor,
    require_bool,
    require_positive,
    require_positive_int,
    require_shape,
    to_numpy,
)
from .agreement import relative_gap
from .networks import two_layer_output
from .quadratic_form import QuadraticExpansion, quadratic_expansion

DEFAULT_SCALES = tuple(np.geomspace(1e-3, 3e-2, 9))


@dataclass(frozen=True)
class RemainderFit:
    """Remainder R(s) on a grid of scales and its fitted log-log slope.

    Attributes:
        scales, remainder: the grid s and R(s) (numpy arrays).
        relative: R(s) / max(|f(sW) - f0|, tiny): the remainder as a fraction of the signal.
        slope: least-squares slope of log R against log s (NaN when ``exact``).
        exact: True when R(s) is at round-off level everywhere (an exactly quadratic model).
    """

    scales: np.ndarray
    remainder: np.ndarray
    relative: np.ndarray
    slope: float
    exact: bool

    @property
    def order(self) -> int | None:
        """The slope rounded to an integer, or None for an exact model."""
        return None if self.exact else int(round(self.slope))


def _positive_scales(scales: Sequence[float]) -> np.ndarray:
    s = to_numpy(as_tensor("scales", scales, ndim=1))
    if s.size < 2 or not np.all(s > 0):
        raise ValueError(f"argument `scales`: expected at least two positive numbers, got {s!r}")
    return s


def remainder_curve(
    f: Module,
    x: Any,
    W: torch.Tensor,
    scales: Sequence[float] = DEFAULT_SCALES,
    expansion: QuadraticExpansion | None = None,
    *,
    drop_linear: bool = False,
    d: int = 2,
) -> tuple[np.ndarray, np.ndarray]:
    """R(s) and |f(sW) - f0| for each s, in float64. Returns two numpy arrays of len(scales).

    ``expansion`` defaults to :func:`quadratic_expansion` of ``f`` at ``x`` (evaluated with ``d``
    units); ``drop_linear=True`` leaves the linear term g.mu out of the prediction.
    """
    W = as_tensor("W", W, ndim=2, dtype=torch.float64)
    s = _positive_scales(scales)
    drop_linear = require_bool("drop_linear", drop_linear)
    xs, _ = prepare_call(f, x, torch.float64, W.device)
    if expansion is None:
        expansion = quadratic_expansion(
            f, xs, W.shape[0], require_positive_int("d", d, minimum=2), device=W.device
        )
    elif not isinstance(expansion, QuadraticExpansion):
        raise TypeError(
            f"argument `expansion`: expected a QuadraticExpansion (from "
            f"nqf_mini.quadratic_expansion or arch.expansion), got "
            f"{type(expansion).__name__}"
        )
    exp = expansion
    require_shape("W", W, (exp.A.shape[0], None), like="expansion")
    rem, sig = [], []
    with torch.no_grad():
        for si in s:
            value = evaluate(f, si * W, xs)
            rem.append((value - exp.predict(si * W, drop_linear=drop_linear)).abs().item())
            sig.append((value - exp.f0).abs().item())
    return np.array(rem), np.array(sig)


def remainder_order(
    f: Module,
    x: Any,
    W: torch.Tensor,
    scales: Sequence[float] = DEFAULT_SCALES,
    expansion: QuadraticExpansion | None = None,
    *,
    drop_linear: bool = False,
    d: int = 2,
    exact_tol: float = 1e-12,
) -> RemainderFit:
    r"""The order of Theorem 1's remainder: the log-log slope of :math:`R(s)` (Chapter 1).

    :math:`R(s) = |f(sW, x) - f_0 - s\,g^\top m - s^2 (m^\top B m + \mathrm{Tr}[MA])|`
    on a grid of scales s (:func:`remainder_curve`); Theorem 1 promises a slope >= 3 (4 for
    tanh, 2 for ReLU, where the theorem does not apply).

    Args:
        f: the module ``f(W, x)``.
        x: the input.
        W: a fixed weight matrix (p, d), scaled by s.
        scales: at least two positive scales s (default: 9 from 1e-3 to 3e-2).
        expansion: the general form (f0, g, A, B) to compare with (default: by autograd).
        drop_linear: leave the linear term g.m out of the prediction.
        d: number of units for the autograd expansion (>= 2).
        exact_tol: relative remainder below which the model counts as exactly quadratic.

    Returns:
        :class:`RemainderFit` (scales, remainder, relative, slope, exact; ``order`` rounds the
        slope).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    rem, sig = remainder_curve(f, x, W, scales, expansion, drop_linear=drop_linear, d=d)
    s = _positive_scales(scales)
    exact_tol = require_positive("exact_tol", exact_tol)
    relative = rem / np.maximum(sig, 1e-300)
    if np.all(relative <= exact_tol):
        return RemainderFit(s, rem, relative, math.nan, True)
    if np.any(rem <= 0):
        raise ValueError(
            "the remainder vanishes at some scales but not at others; choose scales "
            "where it is above round-off (e.g. larger s)"
        )
    slope = float(np.polyfit(np.log(s), np.log(rem), 1)[0])
    return RemainderFit(s, rem, relative, slope, False)


# --- the remainder of a two-layer network along its own training trajectory (Chapter 7) ----------


def _two_layer_pair(
    U: torch.Tensor, V: torch.Tensor, X: torch.Tensor, activation: str
) -> tuple[torch.Tensor, torch.Tensor]:
    return (
        two_layer_output(U, V, X, activation, "network"),
        two_layer_output(U, V, X, activation, "nqf"),
    )


def trajectory_remainder(U_traj: Any, V_traj: Any, X: Any, activation: str = "tanh") -> np.ndarray:
    r""":math:`\mathrm{rms}_x|F(W_t) - F_{NQF}(W_t)| / \mathrm{rms}_x|F(W_t)|` at each recorded
    :math:`W_t` (Chapter 7).

    Both the network :math:`F = \phi(XU)V` and its quadratic form :math:`F_{NQF} = \phi'(0)XUV`
    are evaluated at the SAME weights, those of the network's own trajectory
    (``TwoLayerRun.U_traj``, ``V_traj``), so this is Theorem 1's remainder measured where training
    actually goes, relative to the size of the function.

    Args:
        U_traj: input weights (T, p, d).
        V_traj: output weights (T, d, K).
        X: inputs (n, p).
        activation: the network's activation (phi(0) = 0).

    Returns:
        The relative remainder at each of the T recorded steps (NumPy, (T,)).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    U_traj = as_tensor("U_traj", U_traj, ndim=3)
    V_traj = as_tensor("V_traj", V_traj, ndim=3, dtype=U_traj.dtype, device=U_traj.device)
    require_shape("V_traj", V_traj, (U_traj.shape[0], U_traj.shape[2], None), like="U_traj")
    X = as_tensor("X", X, ndim=2, dtype=U_traj.dtype, device=U_traj.device)
    require_shape("X", X, (None, U_traj.shape[1]), like="U_traj")
    _two_layer_pair(U_traj[0], V_traj[0], X, activation)  # checks `activation`
    with torch.no_grad():
        F, Q = zip(*(_two_layer_pair(U, V, X, activation) for U, V in zip(U_traj, V_traj)))
    return relative_gap(torch.stack(Q), torch.stack(F))  # rms |F - Q| / rms |F| per step


@dataclass(frozen=True)
class ScaledRemainder:
    """The two-layer remainder at scaled weights (lambda U, lambda V) (Chapter 7).

    Attributes:
        scales: the grid s (NumPy).
        remainder: rms_x |F(s W) - F_NQF(s W)| (absolute).
        relative: remainder / rms_x |F(s W)|.
        slope: log-log slope of the absolute remainder (4 for tanh, 3 for phi''(0) != 0).
        relative_slope: log-log slope of the relative remainder (slope - 2, as F ~ s^2).
    """

    scales: np.ndarray
    remainder: np.ndarray
    relative: np.ndarray
    slope: float
    relative_slope: float


def scaled_remainder(
    U: Any, V: Any, X: Any, scales: Sequence[float], activation: str = "tanh"
) -> ScaledRemainder:
    r"""Scale both layers by :math:`s` and fit how the remainder :math:`F - F_{NQF}` shrinks
    (Chapter 7).

    :math:`F(s W) = s^2\phi'(0)x^\top UV + s^3(\phi''(0)/2)\sum_i v_i(u_i\cdot
    x)^2 + O(s^4)`: the absolute remainder is :math:`O(s^3)`, or :math:`O(s^4)`
    when :math:`\phi''(0) = 0` (tanh); divided by :math:`|F| \sim s^2` the relative remainder
    is :math:`O(s)` or :math:`O(s^2)`.

    Args:
        U: input weights (p, d).
        V: output weights (d, K) or (d,).
        X: inputs (n, p).
        scales: at least two positive values of :math:`\lambda` (small enough for the Taylor
            regime).
        activation: a name with phi(0) = 0.

    Returns:
        :class:`ScaledRemainder` (scales, remainder, relative, slope, relative_slope).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    U = as_tensor("U", U, ndim=2, dtype=torch.float64)
    V = as_tensor("V", V, dtype=torch.float64, device=U.device)
    X = as_tensor("X", X, ndim=2, dtype=torch.float64, device=U.device)
    V = V[:, None] if V.ndim == 1 else V
    require_shape("V", V, (U.shape[1], None), like="U")
    require_shape("X", X, (None, U.shape[0]), like="U")
    s = _positive_scales(scales)
    rems, rels = [], []
    with torch.no_grad():
        for lam in s:
            F, Q = _two_layer_pair(lam * U, lam * V, X, activation)
            r = (F - Q).square().mean().sqrt().item()
            rems.append(r)
            rels.append(r / max(F.square().mean().sqrt().item(), 1e-300))
    rem, rel = np.array(rems), np.array(rels)
    if np.any(rem <= 0):
        raise ValueError("the remainder vanishes at some scales (round-off); choose larger scales")
    slope = float(np.polyfit(np.log(s), np.log(rem), 1)[0])
    rel_slope = float(np.polyfit(np.log(s), np.log(rel), 1)[0])
    return ScaledRemainder(s, rem, rel, slope, rel_slope)


# --- the scales at which a remainder order can be measured (Chapter 2) ---------------------------


def asymptotic_scales(
    f: Module,
    x: Any,
    W: torch.Tensor,
    expansion: QuadraticExpansion | None = None,
    *,
    drop_linear: bool = False,
    d: int = 2,
    margin: float = 1e4,
    decades: float = 1.5,
    points: int = 9,
) -> np.ndarray:
    """The smallest window of scales on which R(s) stands ``margin`` times above round-off.

    The fitted slope of :func:`remainder_order` approaches the order k of the remainder
    R(s) = c_k s^k + c_{k+1} s^{k+1} + ... only as s -> 0: the next term bends the fit by about
    (c_{k+1}/c_k) s, and a draw of W whose leading coefficient c_k happens to be small bends it
    a lot (Chapters 1 and 2). Going to small s is limited by round-off: eps times the size of
    the terms that R(s) subtracts from one another, |f0| + s |g||mu| + s^2 (|A|:|M| + |mu|^T
    |B| |mu|) + |f(sW) - f0| (absolute values entrywise), which depends on the module (a
    constant f0, a linear term g.mu). This function scans s from 1e-8 to 1e-1 and returns
    ``points`` scales spanning ``decades`` decades from the smallest s above which R(s) stands
    ``margin`` times above that round-off everywhere; for an exactly quadratic model (no such
    s) it returns :data:`DEFAULT_SCALES`.

    Args:
        f, x, W, expansion, drop_linear, d: as in :func:`remainder_curve`.
        margin: how far above round-off (eps = 2.2e-16 times the size of f) R must stand.
        decades: width of the window, in decades of s.
        points: number of scales returned.

    Returns:
        A numpy array of ``points`` increasing scales.
    """
    margin = require_positive("margin", margin)
    decades = require_positive("decades", decades)
    points = require_positive_int("points", points, minimum=2)
    grid = np.geomspace(1e-8, 1e-1, 57)
    W = as_tensor("W", W, ndim=2, dtype=torch.float64)
    xs, _ = prepare_call(f, x, torch.float64, W.device)
    if expansion is None:
        expansion = quadratic_expansion(
            f, xs, W.shape[0], require_positive_int("d", d, minimum=2), device=W.device
        )
    rem, sig = remainder_curve(f, xs, W, grid.tolist(), expansion, drop_linear=drop_linear, d=d)
    m, M, exp = W.sum(dim=1).abs(), (W @ W.T).abs(), expansion
    linear = (exp.g.abs() @ m).item()  # sizes of the predicted terms
    quadratic = ((exp.A.abs() * M).sum() + m @ exp.B.abs() @ m).item()
    size = abs(float(exp.f0)) + grid * linear + grid**2 * quadratic + sig
    round_off = np.finfo(np.float64).eps * size
    above = rem > margin * round_off
    valid = np.flatnonzero(np.logical_and.accumulate(above[::-1])[::-1])  # above from here on
    top = grid[-1] / 10**decades
    if valid.size == 0 or grid[valid[0]] > top:
        return np.array(DEFAULT_SCALES)
    start = grid[valid[0]]
    return np.geomspace(start, start * 10**decades, points)
