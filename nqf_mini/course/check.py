"""What a notebook calls: ``check.exercise(label, answer)`` says what is right or wrong.

Each check compares a student's answer with an independent oracle (usually autograd through
:func:`nqf_mini.structure_matrix`) and, when it disagrees, names the specific mistake it recognises
(wrong shape, off by a factor of 2, wrong sign, a missing block) instead of a bare "incorrect".
Labels are ``"ch<N>.<name>"``; ``CHECKS`` lists them all. Usage in a chapter::

    from nqf_mini.course import check
    check.exercise("ch1.mlp_bias_A", A_bias)
"""

from __future__ import annotations

from typing import Any

from . import checks_ch1, checks_ch2, checks_ch3, checks_ch4, checks_ch5, checks_ch6, checks_ch7
from . import checks_ch8, checks_ch9
from .registry import CHECKS, CheckResult

CHAPTER_MODULES = (checks_ch1, checks_ch2, checks_ch3, checks_ch4, checks_ch5, checks_ch6,
                   checks_ch7, checks_ch8, checks_ch9)


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
