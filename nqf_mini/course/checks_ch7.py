"""Self-checks of Chapter 7's exercises, registered in :data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

from typing import Any

import torch

from .feedback import CheckResult, known_mistake, not_a_function
from .registry import register_check


# --- the best linear loss: what the NQF of a two-layer network can reach -------------------------

def _ch7_linear_problem(seed: int, n: int, p: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs X (n, p) and a nonlinear target with a non-zero mean (so an intercept would help)."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, p, generator=gen, dtype=torch.float64)
    w = torch.randn(p, generator=gen, dtype=torch.float64)
    y = torch.tanh(2 * X @ w / p ** 0.5) + 0.3 * (X[:, 0] ** 2) + 0.2
    return X, y


def _residual_sq(X: torch.Tensor, y: torch.Tensor) -> float:
    beta = torch.linalg.lstsq(X, y[:, None]).solution[:, 0]
    return float((X @ beta - y).square().sum())


@register_check("ch7.best_linear_loss")
def _ch7_best_linear_loss(answer: Any) -> CheckResult:
    """answer(X, y) -> min over beta of (1/2n) sum (x_mu . beta - y_mu)^2 (no intercept), a float."""
    if (verdict := not_a_function(answer, "best_linear_loss(X, y)")) is not None:
        return verdict
    for seed, (n, p) in enumerate([(200, 5), (64, 8), (500, 3)]):
        X, y = _ch7_linear_problem(70 + seed, n, p)
        truth = _residual_sq(X, y) / (2 * n)
        try:
            given = float(answer(X.clone(), y.clone()))
        except (TypeError, ValueError) as exc:
            return CheckResult(False, f"best_linear_loss(X, y) should return a number: {exc}")
        what = f"for n = {n}, p = {p}"
        if abs(given - truth) <= 1e-8 * max(1.0, truth):
            continue
        X1 = torch.cat([X, torch.ones(n, 1, dtype=torch.float64)], dim=1)
        candidates = [
            (_residual_sq(X, y) / n, "is twice too large: the course's loss is (1/2n) sum (f - y)^2, "
             "not (1/n) sum"),
            (_residual_sq(X1, y) / (2 * n), "includes an intercept: the NQF phi'(0) x^T U V of a "
             "two-layer network without biases has none (f(0) = 0), so fit through the origin"),
            (0.5 * float(y.square().mean()), "is the loss of f = 0, not of the best linear fit"),
            (_residual_sq(X, y) / (2 * (n - p)), "divides by n - p: this is the loss on the data, "
             "(1/2n) times the residual sum of squares, not an unbiased variance estimate"),
        ]
        if (hint := known_mistake(given, candidates, rtol=1e-8)) is not None:
            return CheckResult(False, f"the loss {what} {hint}")
        return CheckResult(False, f"the loss {what} is {given:.6g}, expected {truth:.6g} (least "
                                  "squares through the origin, loss (1/2n) sum r^2)")
    return CheckResult(True, "the best linear loss agrees on 3 data sets: no NQF of a bias-free "
                             "two-layer network can go below it")


# --- remainder exponents -------------------------------------------------------------------------

_REMAINDER_RELATIVE = {
    "tanh": (2, "tanh is odd, tanh''(0) = 0: the remainder is lambda^4, |F| ~ lambda^2"),
    "sin": (2, "sin is odd, sin''(0) = 0: the remainder is lambda^4, |F| ~ lambda^2"),
    "softplus0": (1, "softplus''(0) = 1/4 != 0: the remainder is lambda^3, |F| ~ lambda^2"),
    "silu": (1, "silu''(0) = 1/2 != 0: the remainder is lambda^3, |F| ~ lambda^2"),
    "relu": (0, "a ReLU network is homogeneous of degree 2: F(lambda W) = lambda^2 F(W), while its "
             "'NQF' (phi'(0) = 0 in autograd) is zero, so the relative remainder does not shrink"),
}
_REMAINDER_ABSOLUTE = {"tanh": 4, "sin": 4, "softplus0": 3, "silu": 3, "relu": 2}


@register_check("ch7.remainder_exponent")
def _ch7_remainder_exponent(answer: Any) -> CheckResult:
    """answer maps an activation to the exponent e of rms|F - F_NQF| / rms|F| ~ lambda^e."""
    if not isinstance(answer, dict):
        return CheckResult(False, "expected a dict such as {'tanh': ..., 'sin': ..., 'softplus0': ..., "
                                  f"'silu': ..., 'relu': ...}}, got {type(answer).__name__}")
    missing = [k for k in _REMAINDER_RELATIVE if k not in answer]
    if missing:
        return CheckResult(False, f"missing exponents for {missing}")
    try:
        given = {k: float(answer[k]) for k in _REMAINDER_RELATIVE}
    except (TypeError, ValueError):
        return CheckResult(False, "every exponent should be a number")
    if all(given[k] == _REMAINDER_ABSOLUTE[k] for k in given):
        return CheckResult(False, "these are the exponents of the ABSOLUTE remainder "
                                  "rms|F - F_NQF|; the question asks for the relative one, divided by "
                                  "rms|F| ~ lambda^2")
    wrong = [k for k, (right, _) in _REMAINDER_RELATIVE.items() if given[k] != right]
    if wrong:
        return CheckResult(False, "; ".join(f"{k}: you said {answer[k]}, but "
                                            f"{_REMAINDER_RELATIVE[k][1]}" for k in wrong))
    return CheckResult(True, "all five right: the relative remainder is lambda^2 for odd "
                             "activations, lambda for phi''(0) != 0, and constant for ReLU")


# --- lazy or feature learning --------------------------------------------------------------------

def _fragment_regime(a: float, b: float) -> str:
    """Lazy exactly when the drift bound O(d^(1 - alpha_B) + d^(-alpha_A)) vanishes as d grows,
    i.e. its exponent max(1 - alpha_B, -alpha_A) is negative (for alpha_A >= 0, alpha_B >= 1/2).
    Written from the bound, independently of :func:`nqf_mini.ntk_regime`."""
    return "lazy" if max(1.0 - b, -a) < 0 else "feature"


_REGIME_CASES = [(1.0, 2.0), (0.5, 1.5), (0.0, 2.0), (1.0, 1.0), (1.0, 0.75), (0.0, 0.5),
                 (0.25, 1.25), (2.0, 0.5), (0.0, 1.0), (1.0, 1.01)]


@register_check("ch7.ntk_regime")
def _ch7_ntk_regime(answer: Any) -> CheckResult:
    """answer(alpha_A, alpha_B) -> "lazy" or "feature", for alpha_A >= 0 and alpha_B >= 1/2."""
    if (verdict := not_a_function(answer, "regime(alpha_A, alpha_B) returning 'lazy' or 'feature'")) is not None:
        return verdict
    for a, b in _REGIME_CASES:
        truth = _fragment_regime(a, b)
        given = answer(a, b)
        if given not in ("lazy", "feature"):
            return CheckResult(False, f"regime({a}, {b}) returned {given!r}; expected the string "
                                      "'lazy' or 'feature'")
        if given == truth:
            continue
        exponent = max(1 - b, -a)
        if truth == "feature" and b == 1.0:
            hint = ("at alpha_B = 1 the B term d^(1 - alpha_B) is d^0 = O(1): the NTK moves by O(1), "
                    "so this is feature learning (lazy needs alpha_B > 1 strictly)")
        elif truth == "feature" and a == 0:
            hint = ("with alpha_A = 0 the A term d^(-alpha_A) is O(1) whatever alpha_B is: feature "
                    "learning")
        elif truth == "feature":
            hint = (f"the drift bound d^(1 - alpha_B) + d^(-alpha_A) grows like d^{exponent:g}: "
                    "the NTK does not stay fixed")
        else:
            hint = (f"both terms vanish, the drift is O(d^{exponent:g}) -> 0: lazy (you need "
                    "alpha_A > 0 AND alpha_B > 1)")
        return CheckResult(False, f"regime({a}, {b}): you said {given!r}, but {hint}")
    return CheckResult(True, f"all {len(_REGIME_CASES)} cases right: lazy exactly when both terms "
                             "of O(d^(1 - alpha_B) + d^(-alpha_A)) vanish")
