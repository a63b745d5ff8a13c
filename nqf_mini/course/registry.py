"""The registry of self-checks: labels ``"ch<N>.<name>"`` mapped to check functions (Chapters 1-7).

A check takes a student's answer and returns a :class:`CheckResult`: ``ok`` and a message meant for
the student. The per-chapter modules ``checks_ch1`` ... ``checks_ch7`` register their checks here;
:mod:`nqf_mini.course.check` is what a notebook calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


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
