"""The Chapter 6 self-checks accept a right answer and explain each recognised wrong one."""

import math

from nqf_mini.course.check import CHECKS, exercise

from ..conftest import assert_feedback


def test_ch6_checks_registered():
    assert {"ch6.exponent", "ch6.fit_window"} <= set(CHECKS)


def test_ch6_exponent():
    wrong = {
        "forgets the -1": lambda a1, a2: a1 / a2,
        "multiplies by alpha2": lambda a1, a2: (a1 - 1) * a2,
        "upside down": lambda a1, a2: a2 / (a1 - 1),
        "sample-wise formula": lambda a1, a2: (2 * a1 - 1) / a2,
        "wrong sign": lambda a1, a2: (1 - a1) / a2,
        "forgets alpha2": lambda a1, a2: a1 - 1,
        "spurious factor 1/2": lambda a1, a2: (a1 - 1) / (2 * a2),
        "should be a number": lambda a1, a2: "fast",
        "ahead of the front": lambda a1, a2: 1.0,
    }
    assert_feedback("ch6.exponent", lambda a1, a2: (a1 - 1) / a2, wrong)
    assert "expected a function" in exercise("ch6.exponent", 1.25, quiet=True).message


def right_window(alpha2, eps, K):
    t = lambda k: math.log(1 / eps - 1) * k**alpha2
    return t(10), t(K // 10)


def test_ch6_fit_window():
    def make(lo, hi, log=lambda e: math.log(1 / e), power=lambda k, a: k**a):
        return lambda a2, eps, K: (log(eps) * power(lo(K), a2), log(eps) * power(hi(K), a2))

    ten, tenth = (lambda K: 10), (lambda K: K // 10)
    wrong = {
        "inverts the power": make(ten, tenth, power=lambda k, a: k ** (1 / a)),
        "plateau factor": make(ten, tenth, log=lambda e: 1.0),
        "instead of dividing": make(ten, tenth, power=lambda k, a: k**-a),
        "runs to k = K": make(ten, lambda K: K),
        "0-based": make(lambda K: 9, lambda K: K // 10 - 1),
        "log10": make(ten, tenth, log=lambda e: math.log10(1 / e)),
        "starts at k = 1": make(lambda K: 1, tenth),
        "pair": lambda a2, eps, K: 3.0,
        "half of it": lambda a2, eps, K: (1.0, 2.0),
    }
    assert_feedback("ch6.fit_window", right_window, wrong)
    # ln(1/eps) instead of ln(1/eps - 1) is the same to leading order and is accepted
    assert exercise("ch6.fit_window", make(ten, tenth), quiet=True).ok
    assert "expected a function" in exercise("ch6.fit_window", (1, 2), quiet=True).message
