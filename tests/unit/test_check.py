"""Every exercise self-check accepts a right answer and explains a wrong one."""

import torch

import nqf_mini as nqf
from nqf_mini.check import CHECKS, exercise


def right_bias_A(x, phi1):
    return phi1 * nqf.offdiag(torch.cat([x, x.new_ones(1)]))


WRONG_BIAS_A = {
    "factor of 2": lambda x, p1: 2 * right_bias_A(x, p1),
    "shape": lambda x, p1: p1 * nqf.offdiag(x),
    "does not scale": lambda x, p1: right_bias_A(x, 1.0),
    "wrong sign": lambda x, p1: -right_bias_A(x, p1),
    "rows/columns": lambda x, p1: p1 * nqf.offdiag(torch.cat([x, x.new_zeros(1)])),
}


def test_ch1_mlp_bias_A():
    assert exercise("ch1.mlp_bias_A", right_bias_A, quiet=True).ok
    for phrase, wrong in WRONG_BIAS_A.items():
        result = exercise("ch1.mlp_bias_A", wrong, quiet=True)
        assert not result.ok and phrase in result.message, (phrase, result.message)


def test_ch1_remainder_orders():
    right = {"sin": 4, "gelu": 3, "softplus0": 3, "linear": None}
    assert exercise("ch1.remainder_orders", right, quiet=True).ok
    result = exercise("ch1.remainder_orders", right | {"gelu": 4}, quiet=True)
    assert not result.ok and "gelu" in result.message and "phi''(0)" in result.message
    assert "missing" in exercise("ch1.remainder_orders", {"sin": 4}, quiet=True).message


def test_unanswered_and_unknown_labels(capsys):
    def skeleton(x, phi1):
        raise NotImplementedError
    assert "NotImplementedError" in exercise("ch1.mlp_bias_A", skeleton).message
    assert "NOT YET" in capsys.readouterr().out
    assert not exercise("ch1.mlp_bias_A", None, quiet=True).ok
    try:
        exercise("ch9.nothing", 1)
    except ValueError as e:
        assert "argument `label`" in str(e)
    else:
        raise AssertionError("unknown label accepted")


def test_every_check_is_covered_here():
    covered = {"ch1.mlp_bias_A", "ch1.remainder_orders"}
    assert covered <= set(CHECKS)
