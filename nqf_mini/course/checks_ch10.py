"""Self-checks of Chapter 10's exercises, registered in
:data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

import math

import torch

from .answers import Answer
from .feedback import (
    CheckResult,
    as_float_tensor,
    check_predictions,
    close,
    compare,
    hidden_generator,
    integer,
    known_mistake,
    looks_float32,
    float32_hint,
    not_a_function,
    uniform,
)
from .registry import register_check

# --- ZCA whitening -------------------------------------------------------------------


def _correlated(gen: torch.Generator, n: int, p: int) -> torch.Tensor:
    """n samples of p correlated, unequally scaled features (not centred)."""
    mix = torch.randn(p, p, generator=gen, dtype=torch.float64)
    scales = torch.logspace(0.0, -1.5, p, dtype=torch.float64)
    return torch.randn(n, p, generator=gen, dtype=torch.float64) @ mix * scales + 0.3


def _whiten_cases(hidden: int | None) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(10)
    cases = [_correlated(gen, 200, 4), _correlated(gen, 60, 6)]
    if hidden is not None:
        gen = hidden_generator("ch10.whiten", hidden)
        for _ in range(2):
            p = integer(gen, 2, 7)
            cases.append(_correlated(gen, integer(gen, 3 * p, 80), p))
    return cases


def _power(S: torch.Tensor, power: float) -> torch.Tensor:
    e, Q = torch.linalg.eigh(S)
    return (Q * e**power) @ Q.T


@register_check("ch10.whiten")
def _ch10_whiten(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(X) -> X S^{-1/2}, S = X^T X / n (ZCA whitening)."""
    if (verdict := not_a_function(answer, "whiten(X)")) is not None:
        return verdict
    cases = _whiten_cases(hidden)
    for X in cases:
        n, p = X.shape
        what = f"whiten(X) for X of shape ({n}, {p})"
        raw = answer(X.clone())
        given = as_float_tensor(raw, what)
        if isinstance(given, CheckResult):
            return given
        if tuple(given.shape) != (n, p):
            return CheckResult(
                False,
                f"{what} has shape {tuple(given.shape)}, expected "
                f"({n}, {p}): one whitened row per sample",
            )
        S = X.T @ X / n
        truth = X @ _power(S, -0.5)
        problem = compare(raw if isinstance(raw, torch.Tensor) else given, truth, what, 1e-8)
        if problem is None:
            continue
        if problem.message:
            return problem
        cov = given.T @ given / n
        centred = X - X.mean(0)
        candidates = [
            (
                centred / centred.std(0, unbiased=False),
                "divides each column by its standard deviation: that equalises the scales "
                "but keeps the correlations between columns; whitening makes X^T X / n the "
                "identity, off-diagonal entries included",
            ),
            (
                X / X.square().mean(0).sqrt(),
                "divides each column by its root mean square: the diagonal of X^T X / n "
                "becomes 1 but the correlations stay",
            ),
            (
                X @ _power(S, -1.0),
                "multiplies by S^{-1}: one power too many; the second moment of X S^{-a} "
                "is S^{1 - 2a}, so a = 1/2",
            ),
            (X @ _power(S, 0.5), "multiplies by S^{+1/2}: the power has the wrong sign"),
            (
                X @ _power(X.T @ X, -0.5),
                "uses (X^T X)^{-1/2} without the 1/n: the result has X^T X / n = I / n",
            ),
            (
                centred @ _power(centred.T @ centred / n, -0.5),
                "centres the columns first; the course whitens the second moment X^T X / n "
                "of the data as given (the digits are already centred)",
            ),
        ]
        if (hint := known_mistake(given, candidates, 1e-6)) is not None:
            return CheckResult(False, f"{what} {hint}")
        if close(cov, torch.eye(p, dtype=torch.float64), 1e-6):
            return CheckResult(
                False,
                f"{what} has X^T X / n = I but is rotated: it is PCA whitening "
                f"(X Q Lambda^{{-1/2}}, the eigenbasis of S), not ZCA. Multiply back by "
                f"Q^T so that each whitened column stays attached to its pixel: "
                f"X S^{{-1/2}} = X Q Lambda^{{-1/2}} Q^T",
            )
        return CheckResult(
            False,
            f"{what}: X^T X / n of your result is not the identity; "
            f"whitening multiplies X by S^{{-1/2}}, S = X^T X / n",
        )
    return CheckResult(
        True,
        f"X S^(-1/2) on {len(cases)} data sets: the second moment becomes I and the map "
        f"is symmetric (ZCA), so each whitened pixel stays in place",
    )


# --- the predicted ignition step -----------------------------------------------------

# (sigma, lambda, z0, lr): the strongest raw mode, the weakest, a flow-like step, a big z0
_STEP_CASES = [
    (0.241, 0.690, 3.1e-7, 0.5),
    (0.057, 0.102, 8.9e-7, 0.25),
    (0.30, 1.0, 1e-3, 0.05),
    (0.20, 1.0, 0.08, 0.5),
]


def ignition_step_truth(sigma: float, lam: float, z0: float, lr: float) -> float:
    """ln(z* / z0 - 1) / (2 ln(1 + lr sigma)), z* = 2 sigma / lambda (phi'(0) = 1)."""
    return math.log(2.0 * sigma / (lam * z0) - 1.0) / (2.0 * math.log1p(lr * sigma))


def _step_cases(hidden: int | None) -> list[tuple[float, float, float, float]]:
    cases = list(_STEP_CASES)
    if hidden is not None:
        gen = hidden_generator("ch10.ignition_step", hidden)
        for _ in range(3):
            sigma, lam = uniform(gen, 0.03, 0.4), uniform(gen, 0.05, 1.0)
            zstar = 2 * sigma / lam
            cases.append(
                (sigma, lam, zstar * 10 ** uniform(gen, -8.0, -1.0), uniform(gen, 0.05, 0.8))
            )
    return cases


@register_check("ch10.ignition_step")
def _ch10_ignition_step(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(sigma, lam, z0, lr) -> the GD step at which q_k = 1/2 (tanh network)."""
    signature = "ignition_step(sigma, lam, z0, lr)"
    if (verdict := not_a_function(answer, signature)) is not None:
        return verdict
    cases = _step_cases(hidden)
    for sigma, lam, z0, lr in cases:
        what = f"ignition_step({sigma:.3g}, {lam:.3g}, {z0:.3g}, {lr:.3g})"
        raw = answer(*(torch.tensor(v, dtype=torch.float64) for v in (sigma, lam, z0, lr)))
        given = as_float_tensor(raw, what)
        if isinstance(given, CheckResult):
            return given
        if given.numel() != 1:
            return CheckResult(False, f"{what} has shape {tuple(given.shape)}, expected a scalar")
        value = given.reshape(())
        truth = ignition_step_truth(sigma, lam, z0, lr)
        if close(value, truth, 1e-9):
            continue
        if looks_float32(raw) and close(value, truth, 1e-5):
            return float32_hint(what)
        zstar, rate = 2 * sigma / lam, 2 * math.log1p(lr * sigma)
        candidates = [
            (
                math.log(zstar / z0 - 1) / (2 * lr * sigma),
                "uses the flow's rate 2 sigma per unit of time (2 lr sigma per step): one "
                "gradient step multiplies z_k by (1 + lr sigma)^2 on the plateau, so ln z_k "
                "grows by 2 ln(1 + lr sigma) per step",
            ),
            (
                math.log(sigma / (lam * z0) - 1) / rate,
                "uses the capacity sigma / lambda of p_k = r_k^T P o_k; the strength "
                "z_k = |U^T r_k + V o_k|^2 / 2 has capacity 2 sigma / lambda, since "
                "p_k = (z_k^+ - z_k^-) / 2",
            ),
            (
                math.log(zstar / z0) / rate,
                "misses the -1: the logistic reaches z*/2 when (z*/z0 - 1) e^{-rate s} = 1",
            ),
            (
                math.log(2 * sigma / z0 - 1) / rate,
                "leaves out lambda_k: the capacity is 2 sigma_k / lambda_k",
            ),
            (
                math.log(zstar / z0 - 1) / math.log1p(lr * sigma),
                "misses the factor 2 of the rate: z_k is a square, |a_k|^2, and a_k grows "
                "by (1 + lr sigma) per step",
            ),
            (lr * truth, "returns the time t = lr x step; the question asks for the step"),
        ]
        if (hint := known_mistake(value, candidates, 1e-6)) is not None:
            return CheckResult(False, f"{what} = {value.item():.4g} {hint}")
        return CheckResult(
            False,
            f"{what} = {value.item():.4g} is not the step at which the logistic mode "
            f"reaches half its capacity: write z_k(s) as a logistic in the step s with "
            f"the growth per step of the plateau, and solve z_k(s) = z*_k / 2",
        )
    return CheckResult(
        True,
        f"s_k = ln(2 sigma / (lambda z0) - 1) / (2 ln(1 + lr sigma)) on {len(cases)} cases, "
        f"including lr sigma = 0.12, where the flow's rate 2 lr sigma is 6% too fast",
    )


# --- which assumptions survive natural data ------------------------------------------

_ASSUMPTIONS = {
    "assumption_1_raw": False,
    "assumption_1_whitened": False,
    "covariance_condition_raw": False,
    "covariance_condition_whitened": True,
    "strong_modes_within_3_percent_raw": True,
    "weakest_mode_within_3_percent_raw": False,
    "decoupled_loss_levels_raw": False,
    "theorem_exponent_on_digits": False,
}


@register_check("ch10.assumptions")
def _ch10_assumptions(answer: Answer, hidden: int | None) -> CheckResult:
    """answer: dict of True/False predictions about Chapter 10's digits."""
    return check_predictions(
        answer,
        _ASSUMPTIONS,
        "{'assumption_1_raw': False, ...}",
        "Per-sample matrices commute only for collinear images; the covariance-level "
        "condition is a statement about S_xx and S_xy, which whitening sets to I and "
        "leaves alone; and ignition times, loss levels and exponents are three "
        "different things, each with its own figure in the chapter",
        "all eight right: real data break Assumption 1 everywhere, the covariance-level "
        "condition only on raw pixels, and with it the loss levels and the weak modes, "
        "while the theorem's exponent needs an infinite power law the digits do not "
        "have",
    )
