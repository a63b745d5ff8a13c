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
grade``, :mod:`nqf_mini.course.grade_notebook`) runs the same checks on hidden,
randomised cases as well, in its own process, on answers computed in sandboxes.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

from .answers import Answer, AnswerError, LocalAnswer
from .registry import CHECKS, CheckResult


def _chapter_modules() -> tuple[Any, ...]:
    """Import every ``checks_ch<N>`` module of this package, in chapter order (found,
    not listed: a new chapter's checks register themselves by being there)."""
    found = [
        (int(match.group(1)), info.name)
        for info in pkgutil.iter_modules([str(Path(__file__).parent)])
        if (match := re.fullmatch(r"checks_ch(\d+)", info.name))
    ]
    return tuple(importlib.import_module(f"{__package__}.{name}") for _, name in sorted(found))


CHAPTER_MODULES = _chapter_modules()

NO_ANSWER = (
    "no answer yet: replace the `raise NotImplementedError` (or the None) with your solution"
)


def judge(label: str, answer: Answer, hidden: int | None = None) -> CheckResult:
    """The verdict of check ``label`` on ``answer``; ``hidden``: the grader's seed,
    or None."""
    if label not in CHECKS:
        raise ValueError(f"argument `label`: expected one of {sorted(CHECKS)}, got {label!r}")
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
