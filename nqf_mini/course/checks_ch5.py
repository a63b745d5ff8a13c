"""Self-checks of Chapter 5's exercises, registered in
:data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

import math

import torch

from .answers import Answer
from .feedback import (
    CheckResult,
    as_float_tensor,
    compare,
    hidden_generator,
    known_mistake,
    not_a_function,
    number_answer,
    uniform,
)
from .registry import register_check

# --- the exact half-capacity time of a logistic mode ----------------------------------

# (z0, zstar, zeta): one with z0 not small, where the approximations fail
_HALF_CASES = [
    (0.2, 1.5, 2.0),
    (1e-3, 0.5, 0.8),
    (1e-6, 2.0, 4.0),
    (0.05, 0.3, 1.5),
]


def _half_cases(hidden: int | None) -> list[tuple[float, float, float]]:
    cases = list(_HALF_CASES)
    if hidden is not None:
        gen = hidden_generator("ch5.half_time", hidden)
        for _ in range(3):
            zstar = uniform(gen, 0.2, 3.0)
            z0 = zstar * 10 ** uniform(gen, -8.0, math.log10(0.45))
            cases.append((z0, zstar, uniform(gen, 0.3, 5.0)))
    return cases


@register_check("ch5.half_time")
def _ch5_half_time(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(z0, zstar, zeta) -> the time at which z*/(1 + (z*/z0 - 1) e^{-zeta t})
    = z*/2."""
    if (verdict := not_a_function(answer, "half_time(z0, zstar, zeta)")) is not None:
        return verdict
    cases = _half_cases(hidden)
    for z0, zstar, zeta in cases:
        what = f"half_time({z0:.3g}, {zstar:.3g}, {zeta:.3g})"
        raw = answer(*(torch.tensor(v, dtype=torch.float64) for v in (z0, zstar, zeta)))
        given = as_float_tensor(raw, what)
        if isinstance(given, CheckResult):
            return given
        if given.numel() != 1:
            return CheckResult(False, f"{what} has shape {tuple(given.shape)}, expected a scalar")
        value = given.reshape(())
        truth = math.log(zstar / z0 - 1.0) / zeta  # after the answer returned
        shown = raw.reshape(()) if isinstance(raw, torch.Tensor) else raw
        problem = compare(shown, truth, what, 1e-9)
        if problem is None:
            continue
        if problem.message:
            return problem
        candidates = [
            (
                math.log(1.0 / z0) / zeta,
                "is the small-eps law (1/zeta) ln(1/z0): it drops the O(1) term ln(z* "
                "- z0), which matters here because z0 is not small against z*",
            ),
            (
                math.log(zstar / z0) / zeta,
                "misses the -1: z(t) = z*/2 when (z*/z0 - 1) e^{-zeta t} = 1",
            ),
            (
                truth / 4,
                "divides by 4 zeta: zeta is already the growth rate (zeta = 4 b for "
                "the NQF), the logistic is dz/dt = zeta z (1 - z/z*)",
            ),
            (
                math.log10(zstar / z0 - 1.0) / zeta,
                "uses log10: the logistic's exponential is e^{-zeta t}, so the natural logarithm",
            ),
            (
                -truth,
                "has the wrong sign: a mode that starts below z*/2 reaches it later, t > 0",
            ),
            (truth * zeta**2, "multiplies by zeta: a faster mode ignites EARLIER"),
        ]
        if (hint := known_mistake(value, candidates, 1e-6)) is not None:
            return CheckResult(False, f"{what} = {value.item():.4g} {hint}")
        return CheckResult(
            False,
            f"{what} = {value.item():.4g} is not the time at which the logistic "
            f"reaches z*/2: set z(t) = z*/2 and solve for t",
        )
    return CheckResult(
        True,
        f"t_1/2 = ln(z*/z0 - 1) / zeta on {len(cases)} cases, including z0 = 0.2 z* "
        f"where ln(1/z0)/zeta is off",
    )


# --- the ignition slope of a mode under competition -----------------------------------

_B_COMP = (1.0, 0.6)
_C_COMP = 0.3


def competition_slope_truth() -> float:
    """Mode 2's eps -> 0 slope for b = (1, 0.6), C = [[1, 0.3], [0.3, 1]], z(0) =
    (eps, eps)."""
    b1, b2, c = _B_COMP[0], _B_COMP[1], _C_COMP
    s1 = 1.0 / (4 * b1)  # mode 1 arrives at l = 0, z_1 -> b_1
    ell = -1.0 + 4 * b2 * s1  # mode 2's level then
    return s1 + (-ell) / (4 * (b2 - c * b1))


@register_check("ch5.competition_slope")
def _ch5_competition_slope(answer: Answer, hidden: int | None) -> CheckResult:
    """answer: slope of t*_2 against ln(1/eps) as eps -> 0 for b = (1, 0.6), C = [[1,
    .3], [.3, 1]]."""
    value = number_answer(answer, "the slope of t*_2 against ln(1/eps)")
    if isinstance(value, CheckResult):
        return value
    truth = competition_slope_truth()  # 0.25 + 0.4 / 1.2 = 0.5833
    b1, b2, c = _B_COMP[0], _B_COMP[1], _C_COMP
    if abs(value - truth) <= 0.015 * truth:
        return CheckResult(
            True,
            f"slope {truth:.4f} = 1/(4 b_1) + (1 - b_2/b_1) / (4 (b_2 - c b_1)): mode "
            f"2 grows at 4 b_2 until mode 1 ignites, then at 4 (b_2 - c b_1)",
        )
    candidates = [
        (
            1 / (4 * b2),
            "is 1/zeta_2 = 1/(4 b_2): that ignores the competition; once mode 1 "
            "saturates, mode 2 no longer grows at its own rate",
        ),
        (
            1 / (4 * (b2 - c * b1)),
            "uses one slowed rate for the whole climb; before mode 1 ignites, mode 2 "
            "does not yet feel it",
        ),
        (1 / (4 * b1), "is mode 1's slope 1/(4 b_1); the question asks for mode 2"),
    ]
    if (hint := known_mistake(value, candidates, 0.01)) is not None:
        return CheckResult(False, f"{value:.4g} {hint}")
    return CheckResult(
        False,
        f"{value:.4g} is not the eps -> 0 slope of mode 2. Follow its level ln z_2 / "
        f"ln(1/eps) in the piecewise-linear limit through two phases, before and after "
        f"mode 1 ignites, with mode 2's growth rate in each (a finite-eps fit over eps "
        f"= 1e-2 ... 1e-8 is within a few percent)",
    )
