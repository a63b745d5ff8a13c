"""Self-checks of Chapter 5's exercises, registered in :data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

import math
from typing import Any

import torch

from .feedback import CheckResult, as_float_tensor, known_mistake, not_a_function
from .registry import register_check

# --- the exact half-capacity time of a logistic mode ----------------------------------------------

_HALF_CASES = [  # (z0, zstar, zeta): one with z0 not small, where the approximations fail
    (0.2, 1.5, 2.0),
    (1e-3, 0.5, 0.8),
    (1e-6, 2.0, 4.0),
    (0.05, 0.3, 1.5),
]


@register_check("ch5.half_time")
def _ch5_half_time(answer: Any) -> CheckResult:
    """answer(z0, zstar, zeta) -> the time at which z*/(1 + (z*/z0 - 1) e^{-zeta t}) = z*/2."""
    if (verdict := not_a_function(answer, "half_time(z0, zstar, zeta)")) is not None:
        return verdict
    for z0, zstar, zeta in _HALF_CASES:
        truth = math.log(zstar / z0 - 1.0) / zeta
        what = f"half_time({z0:g}, {zstar:g}, {zeta:g})"
        given = as_float_tensor(answer(torch.tensor(z0, dtype=torch.float64),
                                       torch.tensor(zstar, dtype=torch.float64),
                                       torch.tensor(zeta, dtype=torch.float64)), what)
        if isinstance(given, CheckResult):
            return given
        if given.numel() != 1:
            return CheckResult(False, f"{what} has shape {tuple(given.shape)}, expected a scalar")
        value = given.item()
        if abs(value - truth) <= 1e-9 * max(1.0, abs(truth)):
            continue
        candidates = [
            (math.log(1.0 / z0) / zeta, "is the small-eps law (1/zeta) ln(1/z0): it drops the "
             "O(1) term ln(z* - z0), which matters here because z0 is not small against z*"),
            (math.log(zstar / z0) / zeta, "misses the -1: z(t) = z*/2 when (z*/z0 - 1) e^{-zeta t} "
             "= 1, so t = ln(z*/z0 - 1) / zeta"),
            (math.log(zstar / z0 - 1.0) / (4 * zeta), "divides by 4 zeta: zeta is already the "
             "growth rate (zeta = 4 b for the NQF), the logistic is dz/dt = zeta z (1 - z/z*)"),
            (math.log10(zstar / z0 - 1.0) / zeta, "uses log10: the logistic's exponential is "
             "e^{-zeta t}, so the natural logarithm"),
            (-truth, "has the wrong sign: a mode that starts below z*/2 reaches it later, t > 0"),
            (math.log(zstar / z0 - 1.0) * zeta, "multiplies by zeta: a faster mode ignites "
             "EARLIER, t = ln(z*/z0 - 1) / zeta"),
        ]
        if (hint := known_mistake(value, candidates)) is not None:
            return CheckResult(False, f"{what} = {value:.4g} {hint}")
        return CheckResult(False, f"{what} = {value:.4g}, expected {truth:.4g}: solve "
                                  "z(t) = z*/2 for the logistic of Chapter 4")
    return CheckResult(True, "t_1/2 = ln(z*/z0 - 1) / zeta on 4 cases, including z0 = 0.2 z* "
                             "where ln(1/z0)/zeta is off")


# --- the ignition slope of a mode under competition ------------------------------------------------

_B_COMP = (1.0, 0.6)
_C_COMP = 0.3


def competition_slope_truth() -> float:
    """Mode 2's eps -> 0 slope for b = (1, 0.6), C = [[1, 0.3], [0.3, 1]], z(0) = (eps, eps)."""
    b1, b2, c = _B_COMP[0], _B_COMP[1], _C_COMP
    s1 = 1.0 / (4 * b1)                       # mode 1 arrives at l = 0, z_1 -> b_1
    ell = -1.0 + 4 * b2 * s1                  # mode 2's level then
    return s1 + (-ell) / (4 * (b2 - c * b1))


@register_check("ch5.competition_slope")
def _ch5_competition_slope(answer: Any) -> CheckResult:
    """answer: slope of t*_2 against ln(1/eps) as eps -> 0 for b = (1, 0.6), C = [[1, .3], [.3, 1]]."""
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return CheckResult(False, "expected a number (the slope of t*_2 against ln(1/eps)), got "
                                  f"{type(answer).__name__}")
    truth = competition_slope_truth()                          # 0.25 + 0.4 / 1.2 = 0.5833
    b1, b2, c = _B_COMP[0], _B_COMP[1], _C_COMP
    if abs(value - truth) <= 0.015 * truth:
        return CheckResult(True, f"slope {truth:.4f} = 1/(4 b_1) + (1 - b_2/b_1) / (4 (b_2 - c b_1)): "
                                 "mode 2 grows at 4 b_2 until mode 1 ignites, then at "
                                 "4 (b_2 - c b_1)")
    candidates = [
        (1 / (4 * b2), "is 1/zeta_2 = 1/(4 b_2): that ignores the competition; once mode 1 "
         "saturates at z_1 = b_1, mode 2 grows only at 4 (b_2 - c z_1)"),
        (1 / (4 * (b2 - c * b1)), "uses the slowed rate 4 (b_2 - c b_1) for the whole climb; "
         "before mode 1 ignites (s < 1/(4 b_1)) mode 2 grows at the full rate 4 b_2"),
        (1 / (4 * b1), "is mode 1's slope 1/(4 b_1); the question asks for mode 2"),
    ]
    if (hint := known_mistake(value, candidates, rtol=0.01)) is not None:
        return CheckResult(False, f"{value:.4g} {hint}")
    if value < truth:
        return CheckResult(False, f"{value:.4g} is too small: mode 2 ignites later than that (a "
                                  "finite-eps fit over eps = 1e-2 ... 1e-8 is within a few percent)")
    return CheckResult(False, f"{value:.4g} is too large: mode 2 ignites earlier than that")
