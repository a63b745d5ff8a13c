"""Self-checks of Chapter 6's exercises, registered in
:data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

import math
from collections.abc import Callable

from .answers import Answer
from .feedback import (
    CheckResult,
    as_number,
    close,
    compare,
    hidden_generator,
    integer,
    not_a_function,
    uniform,
)
from .registry import register_check

_EXPONENT_CASES = [(2.0, 0.8), (1.5, 1.0), (3.0, 1.5), (2.5, 0.5)]


# --- the feature-wise exponent --------------------------------------------------------

_EXPONENT_SLIPS: list[tuple[Callable[[float, float], float], str]] = [
    (
        lambda a1, a2: a1 / a2,
        "forgets the -1: the loss still to learn at time t is the TAIL sum_{k > k*} "
        "k^-alpha1, not one term k*^-alpha1",
    ),
    (
        lambda a1, a2: (a1 - 1) * a2,
        "multiplies by alpha2: the front moves as k* ~ t^(1/alpha2) (t_k ~ k^alpha2), "
        "so alpha2 divides",
    ),
    (
        lambda a1, a2: a2 / (a1 - 1),
        "is upside down: E ~ k*^(1 - alpha1) and k* ~ t^(1/alpha2)",
    ),
    (
        lambda a1, a2: (2 * a1 - 1) / a2,
        "is the sample-wise formula (2 gamma1 - 1)/gamma2: there the TARGET decays as "
        "mu^-gamma1 and the loss as its square; here V_k ~ k^-alpha1 is already a loss",
    ),
    (
        lambda a1, a2: -(a1 - 1) / a2,
        "has the wrong sign: E ~ t^-exponent falls, so the exponent is positive",
    ),
    (lambda a1, a2: a1 - 1, "forgets alpha2: the front k*(t) ~ t^(1/alpha2), not t"),
    (
        lambda a1, a2: (a1 - 1) / (2 * a2),
        "has a spurious factor 1/2 (V_k is the loss of mode k, not its amplitude)",
    ),
]


def _exponent_cases(hidden: int | None) -> list[tuple[float, float]]:
    cases = list(_EXPONENT_CASES)
    if hidden is not None:
        gen = hidden_generator("ch6.exponent", hidden)
        cases += [
            (round(uniform(gen, 1.2, 4.0), 3), round(uniform(gen, 0.3, 2.0), 3)) for _ in range(3)
        ]
    return cases


@register_check("ch6.exponent")
def _ch6_exponent(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(alpha1, alpha2) -> the predicted feature-wise exponent (alpha1 -
    1)/alpha2."""
    if (verdict := not_a_function(answer, "exponent(alpha1, alpha2)")) is not None:
        return verdict
    cases = _exponent_cases(hidden)
    values = []
    for a1, a2 in cases:
        given = as_number(answer(a1, a2), f"exponent({a1:g}, {a2:g})")
        if isinstance(given, CheckResult):
            return given
        values.append(given)
    if all(close(v, (a1 - 1) / a2, 1e-6) for v, (a1, a2) in zip(values, cases)):
        return CheckResult(
            True,
            f"(alpha1 - 1)/alpha2 on {len(cases)} pairs, e.g. 1.25 for the paper's Fig. "
            f"3 (alpha1 = 2, alpha2 = 0.8)",
        )
    for wrong, hint in _EXPONENT_SLIPS:  # a slip must explain every case
        if all(close(v, wrong(a1, a2), 1e-6) for v, (a1, a2) in zip(values, cases)):
            a1, a2 = cases[1]
            return CheckResult(False, f"exponent({a1:g}, {a2:g}) = {values[1]:.4g} {hint}")
    for v, (a1, a2) in zip(values, cases):
        problem = compare(v, (a1 - 1) / a2, f"exponent({a1:g}, {a2:g})", 1e-6)
        if problem is not None:
            return (
                problem
                if problem.message
                else CheckResult(
                    False,
                    f"exponent({a1:g}, {a2:g}) = {v:.4g} does not follow from the "
                    f"ignition-front argument: the loss at time t is carried by the "
                    f"modes ahead of the front k*(t), and t_k ~ k^alpha2 says how fast "
                    f"the front moves",
                )
            )
    raise AssertionError("unreachable")  # pragma: no cover


# --- the fit window from the ignition front -------------------------------------------

_WINDOW_CASES = [(0.8, 1e-5, 10_000), (1.5, 1e-3, 2_000), (1.0, 1e-8, 500)]


def _window(
    alpha2: float,
    eps: float,
    K: int,
    k_lo: float,
    k_hi: float,
    log: Callable[[float], float] = lambda e: math.log(1 / e - 1),
    power: Callable[[float, float], float] = lambda k, a: k**a,
) -> tuple[float, float]:
    return log(eps) * power(k_lo, alpha2), log(eps) * power(k_hi, alpha2)


def _window_cases(hidden: int | None) -> list[tuple[float, float, int]]:
    cases = list(_WINDOW_CASES)
    if hidden is not None:
        gen = hidden_generator("ch6.fit_window", hidden)
        cases += [
            (
                round(uniform(gen, 0.5, 2.0), 3),
                10 ** round(uniform(gen, -8.0, -2.0), 2),
                integer(gen, 200, 20_000),
            )
            for _ in range(2)
        ]
    return cases


@register_check("ch6.fit_window")
def _ch6_fit_window(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(alpha2, eps, K) -> (t_min, t_max) with t_k = ln(1/eps - 1) k^alpha2, k
    = 10 and K // 10."""
    if (verdict := not_a_function(answer, "fit_window(alpha2, eps, K)")) is not None:
        return verdict
    cases = _window_cases(hidden)
    for a2, eps, K in cases:
        what = f"fit_window({a2:g}, {eps:g}, {K})"
        given = answer(a2, eps, K)
        pair = [as_number(x, what) for x in given] if isinstance(given, tuple) else []
        if len(pair) != 2 or any(isinstance(x, CheckResult) for x in pair):
            return CheckResult(
                False,
                f"{what} should return a pair of numbers (t_min, t_max), got "
                f"{type(given).__name__}",
            )
        lo, hi = pair
        truth = _window(a2, eps, K, 10, K // 10)  # after the answer returned
        if close(lo, truth[0], 1e-3) and close(hi, truth[1], 1e-3):
            continue
        slips = [
            (
                _window(a2, eps, K, 10, K // 10, power=lambda k, a: k ** (1 / a)),
                "inverts the power: t_k = ln(1/u0 - 1)/zeta_k with zeta_k = k^-alpha2, "
                "so t_k grows as k^alpha2 (the FRONT k*(t) is the one with the power "
                "1/alpha2)",
            ),
            (
                _window(a2, eps, K, 10, K // 10, log=lambda e: 1.0),
                "forgets the plateau factor: a mode needs ln(1/u0 - 1)/zeta_k to reach "
                "half capacity, not 1/zeta_k",
            ),
            (
                _window(a2, eps, K, 10, K // 10, power=lambda k, a: k**-a),
                "multiplies by the rate instead of dividing: t_k = ln(1/u0 - 1) / zeta_k",
            ),
            (
                _window(a2, eps, K, 10, K),
                "runs to k = K: the last modes feel the missing tail k > K, so the "
                "window stops at k = K/10",
            ),
            (
                _window(a2, eps, K, 9, K // 10 - 1),
                "uses 0-based mode numbers: mode k = 1 is the first (zeta_1 = 1), so "
                "the window is (t_10, t_{K/10})",
            ),
            (
                _window(a2, eps, K, 10, K // 10, log=lambda e: math.log10(1 / e)),
                "uses log10: the plateau length is the natural log ln(1/eps)/zeta_k",
            ),
            (
                _window(a2, eps, K, 1, K // 10),
                "starts at k = 1: the first modes are not yet on the power law (the "
                "window starts at k* = 10)",
            ),
        ]
        for (w_lo, w_hi), hint in slips:
            if close(lo, w_lo, 1e-3) and close(hi, w_hi, 1e-3):
                return CheckResult(False, f"{what} {hint}")
        return CheckResult(
            False,
            f"{what} = ({lo:.4g}, {hi:.4g}) is not the window: t_k is the time at "
            f"which mode k, started at the fraction eps of its capacity, reaches half "
            f"of it",
        )
    return CheckResult(
        True,
        "the window (t_10, t_{K/10}) with t_k = ln(1/eps - 1) "
        f"k^alpha2 agrees on {len(cases)} problems",
    )
