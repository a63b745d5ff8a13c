"""What a notebook calls: ``check.exercise(label, answer)`` says what is right or wrong.

Each check compares a student's answer with an independent oracle (usually autograd
through :func:`nqf_mini.structure_matrix`) and, when it disagrees, names the specific
mistake it recognises (wrong shape, off by a factor of 2, wrong sign, a missing block,
float32 arithmetic) instead of a
bare "incorrect". Labels are ``"ch<N>.<name>"``; ``CHECKS`` lists them all. Usage in a
chapter::

    from nqf_mini.course import check
    check.exercise("ch1.mlp_bias_A", A_bias)

The answer is called in a thread of its own and read back as plain data
(:mod:`nqf_mini.course.answers`). A self-check runs the public cases; the grader (``make
grade``) runs the same checks on hidden, randomised cases as well, in a process of its
own.
"""

from __future__ import annotations

from typing import Any

from . import (
    checks_ch1,
    checks_ch2,
    checks_ch3,
    checks_ch4,
    checks_ch5,
    checks_ch6,
    checks_ch7,
    checks_ch8,
    checks_ch9,
    checks_ch10,
)
from .answers import Answer, AnswerError, LocalAnswer
from .registry import CHECKS, CheckResult

CHAPTER_MODULES = (
    checks_ch1,
    checks_ch2,
    checks_ch3,
    checks_ch4,
    checks_ch5,
    checks_ch6,
    checks_ch7,
    checks_ch8,
    checks_ch9,
    checks_ch10,
)

NO_ANSWER = (
    "no answer yet: replace the `raise NotImplementedError` (or the None) with your "
    "solution"
)


def judge(label: str, answer: Answer, hidden: int | None = None) -> CheckResult:
    """The verdict of check ``label`` on ``answer``; ``hidden``: the grader's seed,
    or None."""
    if label not in CHECKS:
        raise ValueError(
            f"argument `label`: expected one of {sorted(CHECKS)}, got {label!r}"
        )
    if answer.kind == "missing":
        return CheckResult(False, NO_ANSWER, missing=True)
    try:
        return CHECKS[label](answer, hidden)
    except AnswerError as err:
        return err.verdict


def exercise(label: str, answer: Any, *, quiet: bool = False) -> CheckResult:
    """Run the self-check ``label`` on ``answer``, print the verdict and return it."""
    result = judge(label, LocalAnswer(answer))
    if not quiet:
        print(repr(result))
    return result
