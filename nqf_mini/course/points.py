"""Points per self-checked exercise: the one place where a teacher sets them (``make
grade``).

``GRADED`` maps each self-check label to its points and to the expression that names the
answer in the chapter (what the exercise asks the student to define and what the
self-check call passes, e.g. ``A_bias`` or ``(f_gcn, A_gcn)``). The grader evaluates
that expression in the student's kernel, or the expression the student's own
``check.exercise(label, ...)`` call passes when the notebook has one. The defaults
follow the difficulty: 3 points for a two-star coding exercise, 2 for a one-star one (or
a number to derive), 1 for a prediction made with a widget. Derivations without a
self-check are graded by hand with the rubric of the instructor page.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Graded:
    """How one self-checked exercise is graded: its points and the answer's
    expression."""

    points: int
    answer: str


GRADED: dict[str, Graded] = {
    "ch1.mlp_bias_A": Graded(3, "A_bias"),
    "ch1.remainder_orders": Graded(1, "predictions"),
    "ch2.biased_attention_A": Graded(3, "A_biased"),
    "ch2.gcn": Graded(3, "(f_gcn, A_gcn)"),
    "ch2.commuting": Graded(1, "predictions"),
    "ch3.m_step": Graded(3, "m_step"),
    "ch3.equivariance": Graded(1, "predictions"),
    "ch4.lv_rhs": Graded(2, "lv_rhs"),
    "ch4.nnls_end_state": Graded(3, "end_state"),
    "ch4.extinction_threshold": Graded(2, "c_star"),
    "ch5.half_time": Graded(2, "half_time"),
    "ch5.competition_slope": Graded(3, "slope"),
    "ch6.exponent": Graded(2, "exponent"),
    "ch6.fit_window": Graded(3, "fit_window"),
    "ch7.best_linear_loss": Graded(2, "best_linear_loss"),
    "ch7.remainder_exponent": Graded(2, "exponents"),
    "ch7.ntk_regime": Graded(2, "regime"),
    "ch8.agreement_window": Graded(3, "first_onset"),
    "ch8.qk_nqf": Graded(3, "qk_nqf"),
    "ch9.layerwise_nqf": Graded(2, "layerwise_nqf"),
    "ch9.order_parameters": Graded(3, "order_parameters"),
    "ch10.whiten": Graded(2, "whiten"),
    "ch10.ignition_step": Graded(3, "ignition_step"),
    "ch10.assumptions": Graded(1, "predictions"),
}


def labels_of_chapter(chapter: int) -> list[str]:
    """The graded labels of ``chapter``, in the order of the table."""
    return [label for label in GRADED if label.startswith(f"ch{chapter}.")]
