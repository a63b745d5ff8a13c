"""The registry of self-checks: labels ``"ch<N>.<name>"`` mapped to check functions
(one module ``checks_ch<N>`` per chapter).

A check takes a student's answer, seen through an
:class:`~nqf_mini.course.answers.Answer`, and ``hidden``: ``None`` for the public cases
a student's self-check runs, or a seed for the grader, which adds randomised cases the
student has never seen. It returns a :class:`CheckResult`: ``ok`` and a message meant
for the student. The per-chapter modules ``checks_ch<N>`` register their checks here
(:mod:`nqf_mini.course.check` imports every one it finds); ``check.exercise`` is what a
notebook calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Callable


@dataclass(frozen=True)
class CheckResult:
    """Outcome of a self-check: ``ok``, a message meant for the student, and ``missing``
    when
    there is no answer yet (``None``, or a function that raises NotImplementedError)."""

    ok: bool
    message: str
    missing: bool = False

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return ("PASS: " if self.ok else "NOT YET: ") + self.message


Check = Callable[[Any, "int | None"], CheckResult]
CHECKS: dict[str, Check] = {}


def register_check(label: str) -> Callable[[Check], Check]:
    """Decorator registering a check function ``check(answer, hidden)`` under
    ``label``."""

    def wrap(fn: Check) -> Check:
        if label in CHECKS:
            raise ValueError(f"check label {label!r} is already registered")
        CHECKS[label] = fn
        return fn

    return wrap
