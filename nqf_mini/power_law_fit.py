"""Fitting a power law loss ~ prefactor * t^-exponent over a window (Chapter 6)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import as_tensor, require_same_shape, to_numpy


@dataclass(frozen=True)
class PowerLawFit:
    """A least-squares fit loss ~ prefactor * t^-exponent over a window (Chapter 6).

    Attributes:
        exponent: minus the slope of ln(loss) against ln(t).
        stderr: standard error of the slope from the regression residuals.
        prefactor: exp(intercept).
        window: the (t_min, t_max) used.
        n_points: number of data points inside the window.
    """

    exponent: float
    stderr: float
    prefactor: float
    window: tuple[float, float]
    n_points: int


def fit_power_law(t: Any, loss: Any, window: tuple[float, float]) -> PowerLawFit:
    r"""Fit :math:`\ln E = \ln c - \mathrm{exponent}\,\ln t` by least squares over
    :math:`t_{min} \le t \le t_{max}` (Chapter 6).

    The standard error is the usual one of a regression slope,
    :math:`\sqrt{\sum r^2 / (m - 2) / \sum(\ln t - \overline{\ln t})^2}`; on a log-spaced grid it
    measures curvature of the curve inside the window, not noise.

    Args:
        t: times, > 0, (T,).
        loss: the loss at those times, > 0, (T,).
        window: (t_min, t_max) inside the data, with at least 3 points in it.

    Returns:
        :class:`PowerLawFit` (exponent, stderr, prefactor, window, n_points).

    Raises:
        ValueError, TypeError: if t or loss are not positive and finite, have different lengths, the
            window is not inside the data, or fewer than 3 points fall in it (naming the argument).
    """
    t_arr = to_numpy(as_tensor("t", t, ndim=1))
    y_arr = to_numpy(as_tensor("loss", loss, ndim=1))
    require_same_shape("`t`, `loss`", t_arr, y_arr)
    for name, arr in (("t", t_arr), ("loss", y_arr)):
        if not (arr > 0).all():
            raise ValueError(
                f"argument `{name}`: expected values > 0 (a log-log fit), got "
                f"minimum {arr.min():.3g}"
            )
    w = as_tensor("window", window, ndim=1)
    if w.shape[0] != 2:
        raise ValueError(f"argument `window`: expected a pair (t_min, t_max), got {window!r}")
    t_min, t_max = float(w[0]), float(w[1])
    if not 0 < t_min < t_max:
        raise ValueError(
            f"argument `window`: expected 0 < t_min < t_max, got ({t_min:.4g}, {t_max:.4g})"
        )
    if t_min < t_arr.min() * (1 - 1e-6) or t_max > t_arr.max() * (1 + 1e-6):
        raise ValueError(
            f"argument `window`: expected a window inside the data range "
            f"[{t_arr.min():.4g}, {t_arr.max():.4g}], got ({t_min:.4g}, {t_max:.4g})"
        )
    inside = (t_arr >= t_min * (1 - 1e-6)) & (t_arr <= t_max * (1 + 1e-6))  # float32 grids
    m = int(inside.sum())
    if m < 3:
        raise ValueError(f"argument `window`: expected at least 3 points inside, got {m}")
    x, y = np.log(t_arr[inside]), np.log(y_arr[inside])
    xc = x - x.mean()
    slope = float((xc * (y - y.mean())).sum() / (xc * xc).sum())
    intercept = float(y.mean() - slope * x.mean())
    resid = y - (intercept + slope * x)
    stderr = float(math.sqrt((resid * resid).sum() / max(m - 2, 1) / (xc * xc).sum()))
    return PowerLawFit(
        exponent=-slope,
        stderr=stderr,
        prefactor=math.exp(intercept),
        window=(t_min, t_max),
        n_points=m,
    )
