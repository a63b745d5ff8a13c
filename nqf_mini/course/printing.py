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
