"""The course's ensemble helpers (Chapters 8-9): ``printing.median_range`` and
``style.median_band``, against numpy's median and range and against what matplotlib drew."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from nqf_mini.course.printing import median_range
from nqf_mini.course.style import median_band


def test_median_range_is_numpys_median_and_range():
    values = np.array([575.0, 650.0, 875.0, 610.0])
    assert median_range(values) == f"{np.median(values):.0f} (575\u2013875)"
    assert median_range([0.1234, 0.5, 0.2], 2) == "0.20 (0.12\u20130.50)"
    assert median_range([1e-3, 2e-4, 5e-3], fmt=".0e") == "1e-03 (2e-04\u20135e-03)"


def test_median_range_writes_never_for_infinite_onsets():
    assert median_range([math.inf, math.inf]) == "never"
    # the median of (470, inf, inf) is inf: the median draw never parts
    assert median_range([470.0, math.inf, math.inf]) == "never (470\u2013never)"
    assert median_range([100.0, 120.0, math.inf]) == "120 (100\u2013never)"


def test_median_range_rejects_an_empty_ensemble():
    with pytest.raises(ValueError, match="values"):
        median_range([])


def test_median_band_draws_the_median_and_the_range():
    rng = np.random.default_rng(0)
    x = np.arange(5.0)
    curves = rng.random((7, 5))
    fig, ax = plt.subplots()
    median = median_band(ax, x, curves, "#000000", label="runs")
    np.testing.assert_allclose(median, np.median(curves, axis=0))
    np.testing.assert_allclose(ax.lines[-1].get_ydata(), np.median(curves, axis=0))
    band = ax.collections[-1].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(curves.min()) and band[:, 1].max() == (
        pytest.approx(curves.max())
    )
    with pytest.raises(ValueError, match="curves"):
        median_band(ax, x, curves[:, :3], "#000000")
    plt.close(fig)
