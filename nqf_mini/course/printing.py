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
    pairs = [fmt.format(m + 0.0, s + 0.0) for m, s in zip(np.atleast_1d(np.round(mean, decimals)),
                                                          np.atleast_1d(np.round(sd, decimals)))]
    return "[" + ", ".join(pairs) + "]" if np.ndim(mean) else pairs[0]
