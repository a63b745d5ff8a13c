"""Self-checks of Chapter 7's exercises, registered in
:data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

import torch

from .answers import Answer
from .feedback import (
    CheckResult,
    as_number,
    compare,
    hidden_generator,
    integer,
    known_mistake,
    not_a_function,
    uniform,
)
from .registry import register_check


# --- the best linear loss: what the NQF of a two-layer network can reach --------------


def _ch7_linear_problem(gen: torch.Generator, n: int, p: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs X (n, p) and a nonlinear target with a non-zero mean (so an intercept
    would help)."""
    X = torch.randn(n, p, generator=gen, dtype=torch.float64)
    w = torch.randn(p, generator=gen, dtype=torch.float64)
    y = torch.tanh(2 * X @ w / p**0.5) + 0.3 * (X[:, 0] ** 2) + 0.2
    return X, y


def _residual_sq(X: torch.Tensor, y: torch.Tensor) -> float:
    beta = torch.linalg.lstsq(X, y[:, None]).solution[:, 0]
    return float((X @ beta - y).square().sum())


def _linear_cases(hidden: int | None) -> list[tuple[torch.Tensor, torch.Tensor]]:
    cases = [
        _ch7_linear_problem(torch.Generator().manual_seed(70 + seed), n, p)
        for seed, (n, p) in enumerate([(200, 5), (64, 8), (500, 3)])
    ]
    if hidden is not None:
        gen = hidden_generator("ch7.best_linear_loss", hidden)
        cases += [
            _ch7_linear_problem(gen, integer(gen, 30, 300), integer(gen, 2, 8)) for _ in range(2)
        ]
    return cases


@register_check("ch7.best_linear_loss")
def _ch7_best_linear_loss(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(X, y) -> min over beta of (1/2n) sum (x_mu . beta - y_mu)^2 (no
    intercept), a float."""
    if (verdict := not_a_function(answer, "best_linear_loss(X, y)")) is not None:
        return verdict
    cases = _linear_cases(hidden)
    for X, y in cases:
        n, p = X.shape
        raw = answer(X.clone(), y.clone())
        given = as_number(raw, "best_linear_loss(X, y)")
        if isinstance(given, CheckResult):
            return given
        what = f"for n = {n}, p = {p}"
        truth = _residual_sq(X, y) / (2 * n)  # after the answer returned
        shown = raw.reshape(()) if isinstance(raw, torch.Tensor) else raw
        problem = compare(shown, truth, f"the loss {what}", 1e-8)
        if problem is None:
            continue
        if problem.message:
            return problem
        X1 = torch.cat([X, torch.ones(n, 1, dtype=torch.float64)], dim=1)
        candidates = [
            (
                _residual_sq(X, y) / n,
                "is twice too large: the course's loss is (1/2n) sum (f - y)^2, not (1/n) sum",
            ),
            (
                _residual_sq(X1, y) / (2 * n),
                "includes an intercept: the NQF phi'(0) x^T U V of a two-layer network "
                "without biases has none (f(0) = 0), so fit through the origin",
            ),
            (
                0.5 * float(y.square().mean()),
                "is the loss of f = 0, not of the best linear fit",
            ),
            (
                _residual_sq(X, y) / (2 * (n - p)),
                "divides by n - p: this is the loss on the data, (1/2n) times the "
                "residual sum of squares, not an unbiased variance estimate",
            ),
        ]
        if (hint := known_mistake(given, candidates, 1e-8)) is not None:
            return CheckResult(False, f"the loss {what} {hint}")
        return CheckResult(
            False,
            f"the loss {what} is {given:.6g}, which is not the lowest loss (1/2n) sum "
            f"(x . beta - y)^2 over beta: least squares through the origin",
        )
    return CheckResult(
        True,
        f"the best linear loss agrees on {len(cases)} data sets: no NQF of a bias-free "
        f"two-layer network can go below it",
    )


# --- remainder exponents --------------------------------------------------------------

_REMAINDER_RELATIVE = {"tanh": 2, "sin": 2, "softplus0": 1, "silu": 1, "relu": 0}
_REMAINDER_IDEAS = {
    "tanh": "tanh is odd: which term of the expansion of F is the first that the NQF "
    "misses, and how does it compare with rms|F|?",
    "sin": "sin is odd: which term of the expansion of F is the first that the NQF "
    "misses, and how does it compare with rms|F|?",
    "softplus0": "what is phi''(0) for softplus - ln 2, and so which power of the "
    "weight scale s does the remainder start with?",
    "silu": "what is phi''(0) for SiLU, and so which power of the weight scale s "
    "does the remainder start with?",
    "relu": "careful: ReLU is not smooth at 0. What does autograd give for phi'(0), "
    "what is the NQF then, and how does a ReLU network scale with s?",
}


@register_check("ch7.remainder_exponent")
def _ch7_remainder_exponent(answer: Answer, hidden: int | None) -> CheckResult:
    """answer maps an activation to the exponent e of rms|F - F_NQF| / rms|F| ~ s^e
    (weights scaled by s)."""
    given = answer.value if answer.kind == "value" else None
    if not isinstance(given, dict):
        return CheckResult(
            False,
            "expected a dict such as {'tanh': ..., 'sin': ..., "
            "'softplus0': ..., 'silu': ..., 'relu': ...}, got "
            f"{answer.type_name}",
        )
    missing = [k for k in _REMAINDER_RELATIVE if k not in given]
    if missing:
        return CheckResult(False, f"missing exponents for {missing}")
    values = {k: as_number(given[k], f"the exponent of {k!r}") for k in _REMAINDER_RELATIVE}
    bad = next((v for v in values.values() if isinstance(v, CheckResult)), None)
    if bad is not None:
        return CheckResult(False, f"every exponent should be a number: {bad.message}")
    if all(values[k] == right + 2 for k, right in _REMAINDER_RELATIVE.items()):
        return CheckResult(
            False,
            "these look like the exponents of the ABSOLUTE remainder rms|F - F_NQF|; "
            "the question divides it by rms|F|: how does rms|F| itself scale with "
            "the weight scale s?",
        )
    wrong = [k for k, right in _REMAINDER_RELATIVE.items() if values[k] != right]
    if wrong:
        return CheckResult(
            False,
            f"{len(wrong)} of the 5 exponents {'is' if len(wrong) == 1 else 'are'} not "
            f"right "
            "yet. " + "; ".join(f"{k}: {_REMAINDER_IDEAS[k]}" for k in wrong),
        )
    return CheckResult(
        True,
        "all five right: the relative remainder is s^2 for odd activations, "
        "s for phi''(0) != 0, and constant for ReLU",
    )


# --- lazy or feature learning ---------------------------------------------------------


def _fragment_regime(a: float, b: float) -> str:
    """Lazy exactly when the drift bound O(d^(1 - alpha_B) + d^(-alpha_A)) vanishes as d
    grows, i.e. its exponent max(1 - alpha_B, -alpha_A) is negative (for alpha_A >= 0,
    alpha_B >= 1/2).
    Written from the bound, independently of :func:`nqf_mini.ntk_regime`."""
    return "lazy" if max(1.0 - b, -a) < 0 else "feature"


_REGIME_CASES = [
    (1.0, 2.0),
    (0.5, 1.5),
    (0.0, 2.0),
    (1.0, 1.0),
    (1.0, 0.75),
    (0.0, 0.5),
    (0.25, 1.25),
    (2.0, 0.5),
    (0.0, 1.0),
    (1.0, 1.01),
]


def _regime_cases(hidden: int | None) -> list[tuple[float, float]]:
    cases = list(_REGIME_CASES)
    if hidden is not None:
        gen = hidden_generator("ch7.ntk_regime", hidden)
        cases += [
            (round(uniform(gen, 0.0, 2.0), 3), round(uniform(gen, 0.5, 2.5), 3)) for _ in range(4)
        ]
        cases += [
            (0.0, round(uniform(gen, 1.0, 3.0), 3)),
            (round(uniform(gen, 0.1, 2), 3), 1.0),
        ]
    return cases


@register_check("ch7.ntk_regime")
def _ch7_ntk_regime(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(alpha_A, alpha_B) -> "lazy" or "feature", for alpha_A >= 0 and alpha_B
    >= 1/2."""
    signature = "regime(alpha_A, alpha_B) returning 'lazy' or 'feature'"
    if (verdict := not_a_function(answer, signature)) is not None:
        return verdict
    cases = _regime_cases(hidden)
    for a, b in cases:
        given = answer(a, b)
        if given not in ("lazy", "feature"):
            return CheckResult(
                False,
                f"regime({a}, {b}) returned {given!r}; expected the string 'lazy' or 'feature'",
            )
        truth = _fragment_regime(a, b)  # after the answer returned
        if given == truth:
            continue
        exponent = max(1 - b, -a)
        if truth == "feature" and b == 1.0:
            hint = (
                "at alpha_B = 1 the B term d^(1 - alpha_B) is d^0 = O(1): the NTK "
                "moves by O(1), so this is feature learning (lazy needs alpha_B > 1 "
                "strictly)"
            )
        elif truth == "feature" and a == 0:
            hint = (
                "with alpha_A = 0 the A term d^(-alpha_A) is O(1) whatever alpha_B is: "
                "feature learning"
            )
        elif truth == "feature":
            hint = (
                f"the drift bound d^(1 - alpha_B) + d^(-alpha_A) grows like "
                f"d^{exponent:g}: the NTK does not stay fixed"
            )
        else:
            hint = (
                f"both terms vanish, the drift is O(d^{exponent:g}) -> 0: lazy (you "
                f"need alpha_A > 0 AND alpha_B > 1)"
            )
        return CheckResult(False, f"regime({a}, {b}): you said {given!r}, but {hint}")
    return CheckResult(
        True,
        f"all {len(cases)} cases right: lazy exactly when both terms of O(d^(1 - "
        f"alpha_B) + d^(-alpha_A)) vanish",
    )
