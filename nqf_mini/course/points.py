"""Points per self-checked exercise: the one place where a teacher sets them (``make
grade``).

The defaults follow the difficulty: 3 points for a two-star coding exercise, 2 for a
one-star one (or a number to derive), 1 for a prediction checked with the chapter's
explorer. Which name holds each answer is read from the instructor chapters' own
self-check calls (:func:`nqf_mini.course.grade_notebook.chapter_keys`); derivations are
graded by hand with the rubrics of the instructor page
(:mod:`nqf_mini.course.rubrics`). A new chapter's checks need one line here each.
"""

from __future__ import annotations

POINTS: dict[str, int] = {
    "ch1.mlp_bias_A": 3,
    "ch1.remainder_orders": 1,
    "ch2.biased_attention_A": 3,
    "ch2.gcn": 3,
    "ch2.commuting": 1,
    "ch3.m_step": 3,
    "ch3.equivariance": 1,
    "ch4.lv_rhs": 2,
    "ch4.nnls_end_state": 3,
    "ch4.extinction_threshold": 2,
    "ch5.half_time": 2,
    "ch5.competition_slope": 3,
    "ch6.exponent": 2,
    "ch6.fit_window": 3,
    "ch7.best_linear_loss": 2,
    "ch7.remainder_exponent": 2,
    "ch7.ntk_regime": 2,
    "ch8.agreement_window": 3,
    "ch8.qk_nqf": 3,
    "ch9.layerwise_nqf": 2,
    "ch9.order_parameters": 3,
    "ch10.whiten": 2,
    "ch10.ignition_step": 3,
    "ch10.assumptions": 1,
}
