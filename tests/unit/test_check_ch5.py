"""The Chapter 5 self-checks accept a right answer and explain each recognised wrong one."""

import math

import torch

import nqf_mini as nqf
from nqf_mini.course.check import CHECKS, exercise

from ..conftest import assert_feedback


def right_half_time(z0, zstar, zeta):
    return torch.log(zstar / z0 - 1) / zeta


WRONG_HALF_TIME = {
    "small-eps law": lambda z0, zstar, zeta: torch.log(1 / z0) / zeta,
    "misses the -1": lambda z0, zstar, zeta: torch.log(zstar / z0) / zeta,
    "divides by 4 zeta": lambda z0, zstar, zeta: torch.log(zstar / z0 - 1) / (4 * zeta),
    "uses log10": lambda z0, zstar, zeta: torch.log10(zstar / z0 - 1) / zeta,
    "wrong sign": lambda z0, zstar, zeta: -torch.log(zstar / z0 - 1) / zeta,
    "multiplies by zeta": lambda z0, zstar, zeta: torch.log(zstar / z0 - 1) * zeta,
    "expected a scalar": lambda z0, zstar, zeta: torch.ones(2),
    "should be a tensor": lambda z0, zstar, zeta: "soon",
    "solve": lambda z0, zstar, zeta: right_half_time(z0, zstar, zeta) + 0.1,
}


def test_ch5_checks_registered():
    assert {"ch5.half_time", "ch5.competition_slope"} <= set(CHECKS)


def test_ch5_half_time():
    assert_feedback("ch5.half_time", right_half_time, WRONG_HALF_TIME)
    package = lambda z0, zstar, zeta: nqf.logistic_ignition_time(z0, zstar, zeta)
    result = exercise("ch5.half_time", package, quiet=True)
    assert not result.ok and "logistic_ignition_time" in result.message
    assert "expected a function" in exercise("ch5.half_time", 1.0, quiet=True).message


def _measured_competition_slope():
    """An independent route: integrate the Lotka-Volterra flow and fit t*_2 against ln(1/eps)."""
    b = torch.tensor([1.0, 0.6], dtype=torch.float64)
    C = torch.tensor([[1.0, 0.3], [0.3, 1.0]], dtype=torch.float64)
    eps = torch.logspace(-8, -16, 3, dtype=torch.float64)
    t = torch.arange(0.0, 25.0, 0.02, dtype=torch.float64)
    z = nqf.lotka_volterra(b, C, eps[:, None].expand(3, 2), t)
    t_star = nqf.ignition_times(z, t, nqf.nnls_end_state(b, C), strict=True)
    return nqf.ignition_slope(eps, t_star).slope[1].item()


def test_ch5_competition_slope():
    measured = _measured_competition_slope()
    assert abs(measured - 0.25 - 0.4 / 1.2) < 0.01  # the oracle agrees with the flow
    assert_feedback(
        "ch5.competition_slope",
        measured,
        {
            "ignores the competition": 1 / 2.4,
            "for the whole climb": 1 / 1.2,
            "mode 2": 0.25,
            "two phases": 0.5,
            "phases": 0.7,
            "expected a number": "fast",
        },
    )
    assert exercise("ch5.competition_slope", torch.tensor(7 / 12), quiet=True).ok
    assert not math.isnan(measured)
