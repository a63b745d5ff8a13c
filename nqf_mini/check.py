"""Self-checks for the exercises: ``check.exercise(label, answer)`` says what is right or wrong.

Each check compares a student's answer with an independent oracle (usually autograd through
:func:`~nqf_mini.structure_matrix`) and, when it disagrees, names the specific mistake it recognises
(wrong shape, off by a factor of 2, wrong sign, a missing block) instead of a bare "incorrect".
Labels are ``"ch<N>.<name>"``; :data:`CHECKS` lists them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from .architectures import make_architecture
from .quadratic_form import structure_matrix


@dataclass(frozen=True)
class CheckResult:
    """Outcome of a self-check: ``ok`` and a message meant for the student."""

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return ("PASS: " if self.ok else "NOT YET: ") + self.message


Check = Callable[[Any], CheckResult]
CHECKS: dict[str, Check] = {}


def register_check(label: str) -> Callable[[Check], Check]:
    """Decorator registering a check function under ``label``."""
    def wrap(fn: Check) -> Check:
        if label in CHECKS:
            raise ValueError(f"check label {label!r} is already registered")
        CHECKS[label] = fn
        return fn
    return wrap


def exercise(label: str, answer: Any, *, quiet: bool = False) -> CheckResult:
    """Run the self-check ``label`` on ``answer``, print the verdict and return it."""
    if label not in CHECKS:
        raise ValueError(f"argument `label`: expected one of {sorted(CHECKS)}, got {label!r}")
    if answer is NotImplemented or answer is None:
        result = CheckResult(False, "no answer yet: replace the `raise NotImplementedError` "
                                    "(or the None) with your solution")
    else:
        try:
            result = CHECKS[label](answer)
        except NotImplementedError:
            result = CheckResult(False, "your function still raises NotImplementedError")
    if not quiet:
        print(repr(result))
    return result


# --- matrix comparisons with specific feedback -------------------------------------------------

def _close(a: torch.Tensor, b: torch.Tensor, tol: float = 1e-8) -> bool:
    return bool((a - b).abs().max() <= tol * max(1.0, b.abs().max().item()))


def diagnose_matrix(given: Any, expected: torch.Tensor, what: str) -> CheckResult | None:
    """Compare a proposed matrix with the right one; None when they agree, else the likely mistake."""
    if not isinstance(given, torch.Tensor):
        try:
            given = torch.as_tensor(given, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            return CheckResult(False, f"{what} should be a tensor, got {type(given).__name__}")
    given = given.to(torch.float64)
    if tuple(given.shape) != tuple(expected.shape):
        return CheckResult(False, f"{what} has shape {tuple(given.shape)}, expected "
                                  f"{tuple(expected.shape)} (one row and column per unit parameter)")
    if _close(given, expected):
        return None
    if not _close(given, given.T):
        return CheckResult(False, f"{what} is not symmetric; a structure matrix always is "
                                  "(it is half a Hessian)")
    for factor, hint in [(2.0, "too large by a factor of 2: A is HALF the per-unit Hessian"),
                         (0.5, "too small by a factor of 2: A is half the Hessian, not a quarter"),
                         (-1.0, "has the wrong sign"),
                         (4.0, "too large by a factor of 4")]:
        if _close(given, factor * expected):
            return CheckResult(False, f"{what} is {hint}")
    rows = (given - expected).abs().sum(dim=1) > 1e-8 * max(1.0, expected.abs().max().item())
    bad = [int(i) for i in torch.nonzero(rows).flatten()]
    return CheckResult(False, f"{what} differs from the right answer in rows/columns {bad} "
                              "(0-based, in the order of the unit's parameters)")


def _random_inputs(n_in: int, count: int = 3, seed: int = 7) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(n_in, generator=gen, dtype=torch.float64) for _ in range(count)]


# --- Chapter 1 ----------------------------------------------------------------------------------

@register_check("ch1.mlp_bias_A")
def _ch1_mlp_bias_A(answer: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """answer(x, phi1) -> A(x) for f = sum_i v_i phi(u_i^T x + b_i) with w_i = [u_i; b_i; v_i]."""
    if not callable(answer):
        return CheckResult(False, "expected a function A_bias(x, phi1), got "
                                  f"{type(answer).__name__}")
    for phi, n_in in [("tanh", 3), ("silu", 2), ("gelu", 4)]:
        arch = make_architecture("mlp", n_in=n_in, phi=phi, bias="trainable")
        for x in _random_inputs(n_in):
            truth = structure_matrix(arch.f, x, arch.p)
            problem = diagnose_matrix(answer(x.clone(), arch.act.phi1), truth,
                                      f"A(x) for n_in = {n_in}, phi = {phi}")
            if problem is not None:
                if phi != "tanh" and diagnose_matrix(answer(x.clone(), 1.0), truth / arch.act.phi1,
                                                     "") is None:
                    return CheckResult(False, "right for phi'(0) = 1 but it does not scale with "
                                              "`phi1`: A is proportional to phi'(0)")
                return problem
    return CheckResult(True, "A(x) = phi'(0) O([x; 1]) agrees with autograd on 9 random inputs "
                             "(tanh, SiLU, GELU)")


@register_check("ch1.remainder_orders")
def _ch1_remainder_orders(answer: dict[str, int]) -> CheckResult:
    """answer maps activation names to the remainder order of the two-layer MLP (None: exact)."""
    truth = {"sin": 4, "gelu": 3, "softplus0": 3, "linear": None}
    why = {"sin": "sin is odd, so phi''(0) = 0 and the cubic term vanishes",
           "gelu": "GELU has phi''(0) = 2/sqrt(2 pi) != 0, so the cubic term survives",
           "softplus0": "softplus - ln 2 has phi''(0) = 1/4 != 0",
           "linear": "a linear 'activation' makes v u^T x exactly quadratic: no remainder (None)"}
    if not isinstance(answer, dict):
        return CheckResult(False, f"expected a dict such as {{'sin': 4, ...}}, got "
                                  f"{type(answer).__name__}")
    missing = sorted(set(truth) - set(answer))
    if missing:
        return CheckResult(False, f"missing predictions for {missing}")
    wrong = [k for k in truth if answer[k] != truth[k]]
    if wrong:
        return CheckResult(False, "; ".join(f"{k}: you said {answer[k]}, but {why[k]}"
                                            for k in wrong))
    return CheckResult(True, "all four orders right: the cubic term is (phi''(0)/2) v (u.x)^2")
