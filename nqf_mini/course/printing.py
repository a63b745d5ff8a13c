"""Numbers printed by the chapters, rounded so that stored outputs are reproducible.

Chapters are checked by re-running them and comparing every printed line with the stored one, so a
printed number must not depend on round-off. Quantities that are zero up to round-off are printed
as a bound ("< 1e-12") rather than as their last digits.
"""

from __future__ import annotations

import numpy as np


def small(value: float, floor: float = 1e-12) -> str:
    """``'< 1e-12'`` when |value| < floor, else the value in 2-digit scientific notation."""
    value = float(value)
    return f"< {floor:.0e}" if abs(value) < floor else f"{value:.1e}"


def rounded(values: object, decimals: int = 4) -> np.ndarray:
    """``np.round(values, decimals)`` with negative zeros turned into zeros."""
    return np.round(np.asarray(values, dtype=float), decimals) + 0.0


def mean_sd(values: object, decimals: int = 0, axis: int = 0) -> str:
    """``'[350 ± 9, 696 ± 18]'``: mean and standard deviation (ddof = 1) of an ensemble along
    ``axis`` (the draws), each rounded to ``decimals``: a page prints an ensemble's spread beside
    its mean."""
    arr = np.asarray(values, dtype=float)
    mean, sd = arr.mean(axis=axis), arr.std(axis=axis, ddof=1)
    fmt = f"{{:.{decimals}f}} ± {{:.{decimals}f}}"
    pairs = [
        fmt.format(m + 0.0, s + 0.0)
        for m, s in zip(
            np.atleast_1d(np.round(mean, decimals)), np.atleast_1d(np.round(sd, decimals))
        )
    ]
    return "[" + ", ".join(pairs) + "]" if np.ndim(mean) else pairs[0]


def median_range(
    values: object, decimals: int = 0, never: str = "never", fmt: str | None = None
) -> str:
    """``'650 (575–875)'``: the median of an ensemble and its range (min–max), rounded to
    ``decimals`` (or written with the format ``fmt``, e.g. ``".1e"``); infinite entries (e.g.
    an onset that never comes within the horizon) are printed as ``never``, and an ensemble
    that is ``never`` in every draw as ``never`` alone (Chapters 8 and 9)."""
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0:
        raise ValueError("argument `values`: expected at least one value, got none")
    if np.isposinf(arr).all():
        return never

    def text(v: float) -> str:
        if np.isinf(v):
            return never
        return format(v, fmt) if fmt else f"{np.round(v, decimals) + 0.0:.{decimals}f}"

    low, high = text(float(arr.min())), text(float(arr.max()))
    return f"{text(float(np.median(arr)))} ({low}\u2013{high})"
