"""Comparisons with specific feedback, shared by the self-checks of every chapter.

A wrong answer gets a message that names the likely mistake (wrong shape, a factor of 2,
a sign, a missing block, float32 arithmetic) instead of a bare "incorrect". Two rules
keep the feedback from giving the answer away: a message never shows the expected value,
and the hints for dicts of predictions and for numbers point at the idea to use, not at
the value to write.

:func:`close` is the one numerical comparison of the checks.
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np
import torch

from .answers import Answer
from .registry import CheckResult

#: Relative agreement that float32 arithmetic reaches and float64 arithmetic beats by
#: far.
FLOAT32_TOL = 1e-5


def not_a_function(answer: Answer, signature: str) -> CheckResult | None:
    """The verdict for an answer that should be a function ``signature`` but is not;
    else None."""
    if answer.kind == "function":
        return None
    return CheckResult(False, f"expected a function {signature}, got {answer.type_name}")


def close(a: Any, b: Any, tol: float = 1e-8) -> bool:
    """max |a - b| <= tol * max(1, max |b|), for numbers or tensors of one shape.

    The one comparison of the self-checks: relative for values above 1, absolute below.
    NaN is never close to anything.
    """
    a = torch.as_tensor(a, dtype=torch.float64)
    b = torch.as_tensor(b, dtype=torch.float64)
    if a.shape != b.shape:
        return False
    if a.numel() == 0:
        return True
    if not bool(torch.isfinite(a).all()):
        return False
    return bool((a - b).abs().max() <= tol * max(1.0, b.abs().max().item()))


def known_mistake(value: Any, candidates: list[tuple[Any, str]], tol: float = 1e-6) -> str | None:
    """The hint of the first (wrong value, hint) pair that ``value`` matches to
    ``tol``, else None."""
    for wrong, hint in candidates:
        if close(value, wrong, tol):
            return hint
    return None


def looks_float32(value: Any) -> bool:
    """Whether ``value`` was (probably) computed in single precision.

    True for a float32/float16/bfloat16 tensor, and for a Python float that float32
    represents exactly (``float(torch.tensor(1/3))`` is one; 1/3 computed in float64 is
    not).
    """
    if isinstance(value, torch.Tensor):
        return value.dtype in (torch.float32, torch.float16, torch.bfloat16)
    if type(value) is float and math.isfinite(value) and value != int(value):
        return float(np.float32(value)) == value
    return False


def float32_hint(what: str) -> CheckResult:
    """The verdict for an answer that is right to float32 precision only."""
    return CheckResult(
        False,
        f"{what} is right to about 7 digits only: it was computed in float32. The "
        f"check's inputs are float64; keep their dtype (create tensors with "
        f"dtype=x.dtype, x.new_zeros(...), torch.zeros_like(x); torch.zeros(K) and "
        f"torch.tensor([...]) default to float32) and run it again",
    )


def finer_than_float32(given: Any, truth: Any, tol: float) -> bool:
    """Whether ``given`` is a float32 result (a float32 tensor, or a Python float that
    float32 holds exactly and float16 does not: a round number such as 0.5 is not
    counted) that differs from ``truth`` while ``tol``, as :func:`close` applies it, is
    finer than float32's rounding at ``truth`` (half a unit in the last place, 2^-24 of
    its size). Such an answer meets ``tol`` only when its rounding errors happen to be
    small: whether it does depends on the data and on the order of the sums, not on the
    answer's method."""
    if isinstance(given, torch.Tensor):
        if given.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            return False
    elif not (looks_float32(given) and float(np.float16(given)) != given):
        return False
    a = torch.as_tensor(given, dtype=torch.float64)
    b = torch.as_tensor(truth, dtype=torch.float64)
    size = b.abs().max().item() if b.numel() else 0.0
    return bool((a != b).any()) and tol * max(1.0, size) < size * 2.0**-24


def compare(given: Any, truth: Any, what: str, tol: float) -> CheckResult | None:
    """None when ``given`` agrees with ``truth`` to ``tol``; the float32 verdict when it
    agrees only to float32 precision, or meets a tolerance finer than float32's
    rounding by luck (:func:`finer_than_float32`); else a bare "not yet" (the caller
    looks for a specific mistake)."""
    if close(given, truth, tol):
        return float32_hint(what) if finer_than_float32(given, truth, tol) else None
    if close(given, truth, FLOAT32_TOL):
        if looks_float32(given):
            return float32_hint(what)
        return CheckResult(
            False,
            f"{what} is right to about 6 digits only, the precision of float32: is "
            f"part of it computed in float32 (a tensor made with torch.tensor(...) or "
            f"torch.zeros(...) without dtype=torch.float64), or by an iteration "
            f"stopped early? The inputs are float64; keep their dtype",
        )
    return CheckResult(False, "")


def check_predictions(
    answer: Answer, truth: dict[str, bool], example: str, idea: str, success: str
) -> CheckResult:
    """Compare a dict of yes/no predictions with ``truth``.

    A wrong prediction is not named: with two possible values, naming it would give the
    answer. The message says how many are wrong and the idea that decides them.
    """
    if answer.kind != "value":
        return CheckResult(False, f"expected a dict such as {example}, got {answer.type_name}")
    given = answer.value
    if not isinstance(given, dict):
        return CheckResult(False, f"expected a dict such as {example}, got {type(given).__name__}")
    missing = [k for k in truth if k not in given]
    if missing:
        return CheckResult(False, f"missing predictions for {missing}")
    not_bool = [k for k in truth if type(given[k]) is not bool]
    if not_bool:
        return CheckResult(
            False,
            f"every prediction should be True or False; {not_bool[0]!r} is {given[not_bool[0]]!r}",
        )
    wrong = sum(given[k] != right for k, right in truth.items())
    if wrong:
        return CheckResult(
            False,
            f"{wrong} of the {len(truth)} predictions {'is' if wrong == 1 else 'are'} "
            f"not right yet. {idea}",
        )
    return CheckResult(True, success)


def as_float_tensor(given: Any, what: str) -> torch.Tensor | CheckResult:
    """Plain ``given`` as a float64 tensor (its original dtype noted), or a
    CheckResult."""
    if isinstance(given, torch.Tensor):
        if given.is_complex() or given.dtype == torch.bool:
            return CheckResult(False, f"{what} should be a real tensor, got dtype {given.dtype}")
        return given.to(torch.float64)
    if type(given) in (int, float):
        return torch.tensor(float(given), dtype=torch.float64)
    if isinstance(given, tuple):
        try:
            return torch.tensor(given, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            pass
    return CheckResult(False, f"{what} should be a tensor, got {type(given).__name__}")


def diagnose_matrix(
    given: Any, expected: torch.Tensor, what: str, tol: float = 1e-8
) -> CheckResult | None:
    """Compare a proposed matrix with the right one; None when they agree, else the
    likely mistake."""
    single = looks_float32(given)
    given = as_float_tensor(given, what)
    if isinstance(given, CheckResult):
        return given
    if tuple(given.shape) != tuple(expected.shape):
        return CheckResult(
            False,
            f"{what} has shape {tuple(given.shape)}, expected {tuple(expected.shape)} "
            f"(one row and column per unit parameter)",
        )
    if close(given, expected, tol):
        return None
    if single and close(given, expected, FLOAT32_TOL):
        return float32_hint(what)
    if not close(given, given.T, tol):
        return CheckResult(
            False,
            f"{what} is not symmetric; a structure matrix always is (it is half a Hessian)",
        )
    for factor, hint in [
        (2.0, "is too large by a factor of 2: A is HALF the per-unit Hessian"),
        (0.5, "is too small by a factor of 2: A is half the Hessian, not a quarter"),
        (-1.0, "has the wrong sign"),
        (4.0, "is too large by a factor of 4"),
    ]:
        if close(given, factor * expected, tol):
            return CheckResult(False, f"{what} {hint}")
    rows = (given - expected).abs().sum(dim=1) > tol * max(1.0, expected.abs().max().item())
    bad = [int(i) for i in torch.nonzero(rows).flatten()]
    return CheckResult(
        False,
        f"{what} differs from the right answer in rows/columns {bad} (0-based, in the "
        f"order of the unit's parameters)",
    )


def as_number(given: Any, what: str) -> float | CheckResult:
    """Plain ``given`` (a number or a one-element tensor) as a finite float, or a
    CheckResult."""
    if isinstance(given, torch.Tensor) and given.numel() == 1 and not given.is_complex():
        value = float(given.reshape(()).item())
    elif type(given) in (int, float):
        value = float(given)
    else:
        return CheckResult(False, f"{what} should be a number, got {type(given).__name__}")
    if not math.isfinite(value):
        return CheckResult(False, f"{what} is not finite ({value})")
    return value


def number_answer(answer: Answer, what: str) -> float | CheckResult:
    """A number answer (not a function) as a finite float, or the CheckResult saying
    why not."""
    value = as_number(answer.value, what) if answer.kind == "value" else None
    if isinstance(value, CheckResult) and "finite" in value.message:
        return value
    if not isinstance(value, float):
        return CheckResult(False, f"expected a number ({what}), got {answer.type_name}")
    return value


def hidden_generator(label: str, hidden: int) -> torch.Generator:
    """The generator of the grader's randomised cases of ``label`` for the grading seed
    ``hidden``: each label gets its own stream, and none is known before grading."""
    return torch.Generator().manual_seed((hidden * 1_000_003 + zlib.crc32(label.encode())) % 2**63)


def uniform(gen: torch.Generator, low: float, high: float) -> float:
    """One float drawn uniformly from [low, high) with ``gen``."""
    return low + (high - low) * float(torch.rand((), generator=gen, dtype=torch.float64))


def integer(gen: torch.Generator, low: int, high: int) -> int:
    """One integer drawn uniformly from [low, high] with ``gen``."""
    return int(torch.randint(low, high + 1, (), generator=gen))
