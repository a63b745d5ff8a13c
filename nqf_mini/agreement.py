"""How long a network and its NQF agree: gaps between two runs and the step at which they part.

Chapters 5 and 7 train a network and its neural quadratic form from the same initialisation and ask
when their losses, or their functions, first differ by more than a threshold (10% in the course).
These are measurements of runs, so they take and return NumPy arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validate import as_tensor, require_positive, require_same_shape, to_numpy


def relative_gap(a: Any, b: Any, axis: int | tuple[int, ...] | None = None) -> np.ndarray:
    """rms(a - b) / rms(b) over ``axis`` (all axes but the first when None): the gap of a from b.

    For recorded outputs of shape (T, n, K) this is the function gap at each recorded step; for two
    loss curves of shape (T,) use :func:`loss_gap`.
    """
    a, b = to_numpy(as_tensor("a", a)), to_numpy(as_tensor("b", b))
    require_same_shape("`a`, `b`", a, b)
    axes = tuple(range(1, a.ndim)) if axis is None else axis
    num = np.sqrt(np.mean((a - b) ** 2, axis=axes))
    den = np.sqrt(np.mean(b ** 2, axis=axes))
    return num / np.maximum(den, 1e-300)


def loss_gap(loss_a: Any, loss_b: Any) -> np.ndarray:
    """|L_a - L_b| / L_b at each recorded step: how far a network's loss is from its NQF's."""
    a = to_numpy(as_tensor("loss_a", loss_a))
    b = to_numpy(as_tensor("loss_b", loss_b))
    require_same_shape("`loss_a`, `loss_b`", a, b)
    return np.abs(a - b) / np.maximum(np.abs(b), 1e-300)


def first_exceeding(steps: Any, gap: Any, threshold: float = 0.1) -> int | None:
    """The first recorded step at which ``gap`` exceeds ``threshold`` (None if it never does)."""
    steps = to_numpy(as_tensor("steps", steps, ndim=1))
    gap = to_numpy(as_tensor("gap", gap, ndim=1))
    require_same_shape("`steps`, `gap`", steps, gap)
    threshold = require_positive("threshold", threshold)
    above = np.nonzero(gap > threshold)[0]
    return None if above.size == 0 else int(steps[above[0]])
