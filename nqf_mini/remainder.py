"""How fast the neural quadratic form becomes exact as the weights shrink (Chapter 1).

Scale a fixed weight matrix W by s and compare the module with its second-order form:

    R(s) = | f(sW, x) - f0 - s g.mu - s^2 (mu^T B mu + Tr[M A]) |,

(g = B = 0 under ZGZ). Theorem 1 promises R(s) = O(s^3). The log-log slope of R against s is the
remainder order: 3 when a cubic term survives (phi''(0) != 0), 4 when it vanishes by symmetry (tanh),
2 for ReLU (homogeneous of degree 2, so its "A" from autograd is meaningless), 1 when a linear term
exists and is left out, and no slope at all for exactly quadratic models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from ._validate import as_tensor
from .quadratic_form import Module, QuadraticExpansion, _cast, _check_output, quadratic_expansion

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


def remainder_curve(
    f: Module, x: Any, W: torch.Tensor, scales: Sequence[float] = DEFAULT_SCALES,
    expansion: QuadraticExpansion | None = None, *, drop_linear: bool = False,
    d: int = 2,
) -> tuple[np.ndarray, np.ndarray]:
    """R(s) and |f(sW) - f0| for each s, in float64. Returns two numpy arrays of len(scales).

    ``expansion`` defaults to :func:`quadratic_expansion` of ``f`` at ``x`` (evaluated with ``d``
    units); ``drop_linear=True`` leaves the linear term g.mu out of the prediction.
    """
    W = as_tensor("W", W, ndim=2, dtype=torch.float64)
    s = np.asarray(scales, dtype=float)
    if s.ndim != 1 or s.size < 2 or not np.all(s > 0):
        raise ValueError(f"argument `scales`: expected at least two positive numbers, got {s!r}")
    exp = expansion or quadratic_expansion(f, x, W.shape[0], d, device=W.device)
    xs = _cast(x, torch.float64, W.device)
    rem, sig = [], []
    with torch.no_grad():
        for si in s:
            value = _check_output(f(si * W, xs))
            rem.append((value - exp.predict(si * W, drop_linear=drop_linear)).abs().item())
            sig.append((value - exp.f0).abs().item())
    return np.array(rem), np.array(sig)


def remainder_order(
    f: Module, x: Any, W: torch.Tensor, scales: Sequence[float] = DEFAULT_SCALES,
    expansion: QuadraticExpansion | None = None, *, drop_linear: bool = False,
    d: int = 2, exact_tol: float = 1e-12,
) -> RemainderFit:
    """Fit the log-log slope of R(s) (see :func:`remainder_curve`); Theorem 1 predicts >= 3."""
    rem, sig = remainder_curve(f, x, W, scales, expansion, drop_linear=drop_linear, d=d)
    s = np.asarray(scales, dtype=float)
    relative = rem / np.maximum(sig, 1e-300)
    if np.all(relative <= exact_tol):
        return RemainderFit(s, rem, relative, math.nan, True)
    if np.any(rem <= 0):
        raise ValueError("the remainder vanishes at some scales but not at others; choose scales "
                         "where it is above round-off (e.g. larger s)")
    slope = float(np.polyfit(np.log(s), np.log(rem), 1)[0])
    return RemainderFit(s, rem, relative, slope, False)
