"""One figure style for the whole course.

Call :func:`apply_style` once at the top of a chapter (it sets matplotlib's rcParams, the one piece
of global state the package touches, and only when asked). Figures get an opaque white background
so that they stay readable when the book is shown in dark mode.
"""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np

#: Colours used consistently: simulation of the original network, its NQF, and theory.
COLORS = {
    "network": "#1f4e9c",
    "nqf": "#111111",
    "theory": "#d1495b",
    "accent": "#edae49",
    "muted": "#7a7a7a",
}

# dict[Any, Any]: matplotlib types the keys of rcParams as a Literal of every setting's name.
STYLE: dict[Any, Any] = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.facecolor": "white",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "image.cmap": "RdBu_r",
    "svg.hashsalt": "nqf",
}


def apply_style() -> None:
    """Set the course's matplotlib style (call once per notebook)."""
    mpl.rcParams.update(STYLE)


def symmetric_limits(values: np.ndarray) -> tuple[float, float]:
    """(-m, m) with m = max |values|, for diverging colour maps centred at zero."""
    m = float(np.max(np.abs(values))) or 1.0
    return -m, m


def reference_slope(
    ax: Any, x: np.ndarray, slope: float, anchor: tuple[float, float], label: str, **kwargs: Any
) -> None:
    """Draw the line y = anchor_y (x / anchor_x)^slope on log-log axes (a theory guide)."""
    x = np.asarray(x, dtype=float)
    x0, y0 = anchor
    style = dict(color=COLORS["muted"], linestyle="--", linewidth=1.0)
    style.update(kwargs)
    ax.plot(x, y0 * (x / x0) ** slope, label=label, **style)


def mark_onset(
    ax: Any,
    onset: Any,
    steps: Any,
    values: Any,
    color: str,
    label: str | None = None,
    markersize: float = 9.0,
) -> None:
    """Mark where a network and its NQF part (Chapters 7-9, referee's minor point 3).

    Draws a downward triangle on the curve ``values`` (recorded at ``steps``) at the
    step ``onset`` and a thin dotted vertical line through it. ``onset`` is a step, an
    :class:`nqf_mini.agreement.AgreementWindow` (its ``onset``), or None / inf when the
    two never part within the horizon (then nothing is drawn).
    """
    onset = getattr(onset, "onset", onset)
    if onset is None or not np.isfinite(onset):
        return
    steps = np.asarray(steps, dtype=float)
    values = np.asarray(values, dtype=float)
    k = int(np.clip(np.searchsorted(steps, onset), 0, len(steps) - 1))
    ax.axvline(steps[k], color=color, linestyle=":", linewidth=0.9, alpha=0.8)
    ax.plot(
        [steps[k]],
        [values[k]],
        marker="v",
        color=color,
        markersize=markersize,
        linestyle="none",
        label=label,
    )


def median_band(
    ax: Any,
    x: Any,
    curves: Any,
    color: str,
    label: str | None = None,
    linestyle: str = "-",
    alpha: float = 0.18,
) -> np.ndarray:
    """Draw an ensemble of curves as its median (a line) and its range (a shaded band)
    (Chapters 8 and 9: claims about trained networks are made on ensembles of draws).

    ``curves`` is (draws, T), recorded at ``x`` (T,); returns the median (T,).
    """
    curves = np.asarray(curves, dtype=float)
    x = np.asarray(x, dtype=float)
    if curves.ndim != 2 or curves.shape[1] != x.shape[0]:
        raise ValueError(
            f"argument `curves`: expected (draws, T) with T = {x.shape[0]} "
            f"points like `x`, got shape {curves.shape}"
        )
    median = np.median(curves, axis=0)
    ax.fill_between(x, curves.min(0), curves.max(0), color=color, alpha=alpha, linewidth=0)
    ax.plot(x, median, color=color, linestyle=linestyle, label=label)
    return median
