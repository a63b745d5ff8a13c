"""Comparisons with specific feedback, shared by the self-checks of every chapter.

A wrong answer gets a message that names the likely mistake (wrong shape, a factor of 2, a sign, a
missing block) instead of a bare "incorrect".
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .registry import CheckResult


def not_a_function(answer: Any, signature: str) -> CheckResult | None:
    """The verdict for an answer that should be a function ``signature`` but is not; else None."""
    if callable(answer):
        return None
    return CheckResult(False, f"expected a function {signature}, got {type(answer).__name__}")


def known_mistake(value: float, candidates: list[tuple[float, str]], rtol: float = 1e-6) -> str | None:
    """The hint of the first (wrong value, hint) pair that ``value`` matches to ``rtol``, else None."""
    for wrong, hint in candidates:
        if abs(value - wrong) <= rtol * max(1.0, abs(wrong)):
            return hint
    return None


def close(a: Any, b: Any, tol: float = 1e-8) -> bool:
    """max |a - b| <= tol * max(1, max |b|), for numbers or tensors of one shape.

    The one comparison of the self-checks: relative for values above 1, absolute below.
    """
    a = torch.as_tensor(a, dtype=torch.float64)
    b = torch.as_tensor(b, dtype=torch.float64)
    if a.shape != b.shape:
        return False
    if a.numel() == 0:
        return True
    return bool((a - b).abs().max() <= tol * max(1.0, b.abs().max().item()))


def check_predictions(answer: Any, truth: dict[str, tuple[Any, str]], example: str,
                      success: str) -> CheckResult:
    """Compare a dict of predictions with ``truth`` (label -> (right value, why)); explain each miss."""
    if not isinstance(answer, dict):
        return CheckResult(False, f"expected a dict such as {example}, got {type(answer).__name__}")
    missing = [k for k in truth if k not in answer]
    if missing:
        return CheckResult(False, f"missing predictions for {missing}")
    wrong = [k for k, (right, _) in truth.items() if bool(answer[k]) != right]
    if wrong:
        return CheckResult(False, "; ".join(f"{k}: you said {answer[k]}, but {truth[k][1]}"
                                            for k in wrong))
    return CheckResult(True, success)


def as_float_tensor(given: Any, what: str) -> torch.Tensor | CheckResult:
    """``given`` as a float64 tensor, or a CheckResult saying it is not one."""
    if not isinstance(given, torch.Tensor):
        try:
            given = torch.as_tensor(given, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            return CheckResult(False, f"{what} should be a tensor, got {type(given).__name__}")
    return given.to(torch.float64)


def diagnose_matrix(given: Any, expected: torch.Tensor, what: str) -> CheckResult | None:
    """Compare a proposed matrix with the right one; None when they agree, else the likely mistake."""
    given = as_float_tensor(given, what)
    if isinstance(given, CheckResult):
        return given
    if tuple(given.shape) != tuple(expected.shape):
        return CheckResult(False, f"{what} has shape {tuple(given.shape)}, expected "
                                  f"{tuple(expected.shape)} (one row and column per unit parameter)")
    if close(given, expected):
        return None
    if not close(given, given.T):
        return CheckResult(False, f"{what} is not symmetric; a structure matrix always is "
                                  "(it is half a Hessian)")
    for factor, hint in [(2.0, "too large by a factor of 2: A is HALF the per-unit Hessian"),
                         (0.5, "too small by a factor of 2: A is half the Hessian, not a quarter"),
                         (-1.0, "has the wrong sign"),
                         (4.0, "too large by a factor of 4")]:
        if close(given, factor * expected):
            return CheckResult(False, f"{what} is {hint}")
    rows = (given - expected).abs().sum(dim=1) > 1e-8 * max(1.0, expected.abs().max().item())
    bad = [int(i) for i in torch.nonzero(rows).flatten()]
    return CheckResult(False, f"{what} differs from the right answer in rows/columns {bad} "
                              "(0-based, in the order of the unit's parameters)")


def as_number(given: Any, what: str) -> float | CheckResult:
    """``given`` as a finite float, or a CheckResult saying it is not one."""
    try:
        value = float(given)
    except (TypeError, ValueError):
        return CheckResult(False, f"{what} should be a number, got {type(given).__name__}")
    if not math.isfinite(value):
        return CheckResult(False, f"{what} is not finite ({value})")
    return value
