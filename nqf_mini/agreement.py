"""How long a network and its NQF agree: gaps between two runs and the step at which they part.

Chapters 5, 7, 8 and 9 train a network and its neural quadratic form from the same
initialisation and ask when their losses, or their functions, first differ by more
than a threshold (10% in the course); :func:`agreement_window` is that definition,
used for every figure that marks the onset.
These are measurements of runs, so they take and return NumPy arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import (
    as_tensor,
    require_nonnegative,
    require_positive,
    require_positive_int,
    require_same_shape,
    to_numpy,
)


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (an int or a tuple of ints) checked against ``ndim`` dimensions."""
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for item in items:
        item = (
            require_positive_int("axis", item, minimum=-ndim)
            if not (isinstance(item, int) and not isinstance(item, bool) and item >= 0)
            else item
        )
        if not -ndim <= item < ndim:
            raise ValueError(
                f"argument `axis`: expected axes in [{-ndim}, {ndim}) for arrays "
                f"of {ndim} dimensions, got {axis!r}"
            )
        out.append(item)
    return tuple(out)


def relative_gap(a: Any, b: Any, axis: int | tuple[int, ...] | None = None) -> np.ndarray:
    r""":math:`\mathrm{rms}(a - b)/\mathrm{rms}(b)` over ``axis``: the gap of a from b
    (Chapters 5-9).

    For recorded outputs of shape (T, n, K) this is the function gap at each recorded step; for two
    loss curves of shape (T,) use :func:`loss_gap`.

    Args:
        a: an array of any shape.
        b: the reference, the same shape.
        axis: the axes to average over (None: all axes but the first).

    Returns:
        NumPy float64 array over the remaining axes.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    a, b = to_numpy(as_tensor("a", a)), to_numpy(as_tensor("b", b))
    require_same_shape("`a`, `b`", a, b)
    axes = tuple(range(1, a.ndim)) if axis is None else _axes(axis, a.ndim)
    num = np.sqrt(np.mean((a - b) ** 2, axis=axes))
    den = np.sqrt(np.mean(b**2, axis=axes))
    return num / np.maximum(den, 1e-300)


def loss_gap(loss_a: Any, loss_b: Any) -> np.ndarray:
    """:math:`|L_a - L_b| / L_b` at each recorded step: how far a network's loss is from its NQF's
    (Chapters 7-9).

    Args:
        loss_a: a loss curve (T,), e.g. the network's.
        loss_b: the reference loss curve (T,), e.g. the NQF's.

    Returns:
        NumPy float64 array (T,).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    a = to_numpy(as_tensor("loss_a", loss_a))
    b = to_numpy(as_tensor("loss_b", loss_b))
    require_same_shape("`loss_a`, `loss_b`", a, b)
    return np.abs(a - b) / np.maximum(np.abs(b), 1e-300)


def first_exceeding(steps: Any, gap: Any, threshold: float = 0.1) -> int | None:
    """The first recorded step at which ``gap`` exceeds ``threshold`` (Chapters 5-9).

    Args:
        steps: the recorded steps (T,).
        gap: the gap at those steps (T,), e.g. from :func:`loss_gap`.
        threshold: the gap that counts as "differ", > 0 (0.1 in the course).

    Returns:
        The step (an int), or None if the gap never exceeds the threshold.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    steps = to_numpy(as_tensor("steps", steps, ndim=1))
    gap = to_numpy(as_tensor("gap", gap, ndim=1))
    require_same_shape("`steps`, `gap`", steps, gap)
    threshold = require_positive("threshold", threshold)
    above = np.nonzero(gap > threshold)[0]
    return None if above.size == 0 else int(steps[above[0]])


@dataclass(frozen=True)
class AgreementWindow:
    """How long a network and its NQF agree (Chapters 7-9; :func:`agreement_window`).

    Attributes:
        loss_onset: the first recorded step at which the losses differ by more than
            ``threshold`` (relative to the NQF's loss), ``math.inf`` if they never do.
        function_onset: the first recorded step at which the functions differ by more
            than ``threshold`` (rms of the difference over rms of the network's
            function), ``math.inf`` if they never do.
        threshold: the relative gap that counts as "differ" (0.1 in the course).
        horizon: the last recorded step: "never" means "not before this step".
    """

    loss_onset: float
    function_onset: float
    threshold: float
    horizon: int

    @property
    def onset(self) -> float:
        """The end of the window: the first step at which loss or function differ."""
        return min(self.loss_onset, self.function_onset)

    def describe(self) -> str:
        """The onset as text: ``'step 450'``, or ``'> 2000'`` (none in the horizon)."""
        if math.isinf(self.onset):
            return f"> {self.horizon}"
        return f"step {int(self.onset)}"


def agreement_window(
    steps: Any,
    loss_net: Any,
    loss_nqf: Any,
    f_net: Any,
    f_nqf: Any,
    threshold: float = 0.1,
    loss_floor: float = 0.01,
    function_scale: float | None = None,
) -> AgreementWindow:
    r"""The window in which a network and its NQF agree within ``threshold`` (Ch. 7-9).

    Two runs from the same initialisation on the same batches, recorded at the same
    ``steps``: the window ends at the first recorded step at which either gap exceeds
    ``threshold`` (Chapter 8, definition "agreement window"),

    * the loss gap :math:`|L_{net} - L_{NQF}| / L_{NQF}` (:func:`loss_gap`),
    * the function gap :math:`\mathrm{rms}_x(f_{NQF} - f_{net}) / \mathrm{rms}_x(f_{net})`
      (:func:`relative_gap`), or, with ``function_scale`` (e.g. the target's rms,
      Chapters 8-9), :math:`\mathrm{rms}_x(f_{NQF} - f_{net})` / ``function_scale``: the
      gap on the scale of the task, which a network whose output is still tiny next to
      the target does not inflate.

    The loss gap is counted only while L_NQF >= ``loss_floor`` * L_NQF(0): on a target
    the NQF fits exactly, its loss goes to zero and any residual of the network is an
    unbounded relative gap; below the floor the function gap alone decides.

    Args:
        steps: recorded steps (T,).
        loss_net, loss_nqf: losses at those steps (T,).
        f_net, f_nqf: outputs at those steps (T, n) (or (T, n, K)).
        threshold: the relative gap that counts as "differ" (> 0).
        loss_floor: fraction of the NQF's initial loss below which the loss gap is
            ignored (in [0, 1); 0 counts it always).
        function_scale: None (the function gap relative to the network's own output at
            each step), or a positive number that divides rms(f_NQF - f_net) instead.

    Returns:
        An :class:`AgreementWindow` (``math.inf`` for "never within the horizon").
    """
    steps = to_numpy(as_tensor("steps", steps, ndim=1))
    threshold = require_positive("threshold", threshold)
    loss_floor = require_nonnegative("loss_floor", loss_floor)
    scale = None if function_scale is None else require_positive("function_scale", function_scale)
    if loss_floor >= 1:
        raise ValueError(f"argument `loss_floor`: expected a fraction in [0, 1), got {loss_floor}")
    l_net = to_numpy(as_tensor("loss_net", loss_net, ndim=1))
    l_nqf = to_numpy(as_tensor("loss_nqf", loss_nqf, ndim=1))
    require_same_shape("`steps`, `loss_net`", steps, l_net)
    require_same_shape("`loss_net`, `loss_nqf`", l_net, l_nqf)
    a = as_tensor("f_net", f_net)
    b = as_tensor("f_nqf", f_nqf)
    if a.ndim < 2 or a.shape[0] != steps.shape[0]:
        raise ValueError(
            f"argument `f_net`: expected outputs (T, n) with T = "
            f"{steps.shape[0]} recorded steps, got shape {tuple(a.shape)}"
        )
    require_same_shape("`f_net`, `f_nqf`", a, b)
    if scale is None:
        f_gap = relative_gap(b, a)
    else:
        diff = to_numpy(b) - to_numpy(a)
        f_gap = np.sqrt(np.mean(diff**2, axis=tuple(range(1, diff.ndim)))) / scale
    counted = l_nqf >= loss_floor * l_nqf[0]
    l_gap = np.where(counted, loss_gap(l_net, l_nqf), 0.0)

    def first(gap: np.ndarray) -> float:
        above = np.nonzero(gap > threshold)[0]
        return math.inf if above.size == 0 else float(steps[above[0]])

    return AgreementWindow(
        loss_onset=first(l_gap),
        function_onset=first(f_gap),
        threshold=threshold,
        horizon=int(steps[-1]),
    )
