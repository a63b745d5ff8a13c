"""The agreement window (Chapters 7-9): one definition, checked against the gaps it
is built of (:func:`nqf_mini.loss_gap`, :func:`nqf_mini.relative_gap`,
:func:`nqf_mini.first_exceeding`).
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest

import nqf_mini as nqf
from nqf_mini.course.style import mark_onset

matplotlib.use("Agg")
STEPS = np.arange(0.0, 200.0, 10.0)
T = STEPS / STEPS[-1]
BASE = np.random.default_rng(0).standard_normal((1, 8))


def _runs(f_rate=0.0, loss_rate=0.0, nqf_decay=0.0):
    f_net = (1 + T)[:, None] * BASE
    f_nqf = f_net * (1 + f_rate * T)[:, None]
    l_nqf = 0.5 * np.exp(-nqf_decay * T)
    return STEPS, l_nqf * (1 + loss_rate * T), l_nqf, f_net, f_nqf


def test_onsets_are_the_first_steps_above_ten_percent():
    steps, ln, lq, fn, fq = _runs(f_rate=0.25, loss_rate=0.15)
    w = nqf.agreement_window(steps, ln, lq, fn, fq)
    assert w.function_onset == nqf.first_exceeding(steps, nqf.relative_gap(fq, fn), 0.1)
    assert w.loss_onset == nqf.first_exceeding(steps, nqf.loss_gap(ln, lq), 0.1)
    assert w.function_onset == 80.0 and w.loss_onset == 130.0 and w.onset == 80.0
    assert w.describe() == "step 80" and w.horizon == 190 and w.threshold == 0.1


def test_never_is_inf_and_said_against_the_horizon():
    w = nqf.agreement_window(*_runs(f_rate=0.05, loss_rate=0.05))
    assert math.isinf(w.onset) and w.describe() == "> 190"
    w = nqf.agreement_window(*_runs(f_rate=0.05, loss_rate=0.05), threshold=0.01)
    assert w.onset == 40.0


def test_the_loss_gap_is_ignored_below_the_floor():
    steps, _, lq, fn, fq = _runs(f_rate=0.05, nqf_decay=20.0)  # the NQF's loss -> 2e-9 L0
    ln = np.maximum(lq, 1e-4)  # the network's stays at 1e-4
    assert math.isinf(nqf.agreement_window(steps, ln, lq, fn, fq).onset)
    counted = nqf.agreement_window(steps, ln, lq, fn, fq, loss_floor=0.0)
    assert counted.loss_onset == nqf.first_exceeding(steps, nqf.loss_gap(ln, lq), 0.1)


def test_function_scale_measures_the_gap_on_a_fixed_scale():
    steps, ln, lq, fn, fq = _runs(f_rate=0.25)
    scale = 3.0
    gap = np.sqrt(np.mean((fq - fn) ** 2, axis=1)) / scale  # by hand
    w = nqf.agreement_window(steps, ln, lq, fn, fq, function_scale=scale)
    assert w.function_onset == nqf.first_exceeding(steps, gap, 0.1)
    # a network output ten times smaller than the target: a 50% gap relative to the
    # network's own output is 5% on the target's scale
    small_f = 0.1 * fn
    w_net = nqf.agreement_window(steps, ln, lq, small_f, 1.5 * small_f)
    rms_target = float(np.sqrt(np.mean(fn[0] ** 2)))
    w_tgt = nqf.agreement_window(
        steps, ln, lq, small_f, 1.5 * small_f, function_scale=10 * rms_target
    )
    assert w_net.function_onset == 0.0 and math.isinf(w_tgt.function_onset)


def test_bad_arguments_are_named():
    steps, ln, lq, fn, fq = _runs()
    with pytest.raises(ValueError, match="`loss_floor`"):
        nqf.agreement_window(steps, ln, lq, fn, fq, loss_floor=1.0)
    with pytest.raises(ValueError, match="`function_scale`"):
        nqf.agreement_window(steps, ln, lq, fn, fq, function_scale=0.0)
    with pytest.raises(ValueError, match="`threshold`"):
        nqf.agreement_window(steps, ln, lq, fn, fq, threshold=0.0)
    with pytest.raises(ValueError, match="`loss_nqf`"):
        nqf.agreement_window(steps, ln, lq[:-1], fn, fq)
    with pytest.raises(ValueError, match="`f_net`"):
        nqf.agreement_window(steps, ln, lq, fn[:-1], fq[:-1])
    with pytest.raises(ValueError, match="`f_nqf`"):
        nqf.agreement_window(steps, ln, lq, fn, fq[:, :3])


def test_mark_onset_draws_at_the_onset_only():
    import matplotlib.pyplot as plt

    steps, ln, lq, fn, fq = _runs(f_rate=0.25)
    fig, ax = plt.subplots()
    mark_onset(ax, nqf.agreement_window(steps, ln, lq, fn, fq), steps, ln, "C0")
    (marker,) = ax.lines[-1:]
    assert marker.get_xdata()[0] == 80.0 and marker.get_ydata()[0] == ln[8]
    n_lines = len(ax.lines)
    mark_onset(ax, math.inf, steps, ln, "C0")
    mark_onset(ax, None, steps, ln, "C0")
    assert len(ax.lines) == n_lines
    plt.close(fig)
