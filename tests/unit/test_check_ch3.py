"""The Chapter 3 self-checks accept a right answer and explain each recognised wrong one."""

import torch

from nqf_mini.course.check import CHECKS, exercise
from nqf_mini.course.checks_ch3 import _EQUIVARIANT

from ..conftest import assert_feedback


def _G(M, A, y):
    r = torch.einsum("npq,qp->n", A, M) - y
    return torch.einsum("n,npq->pq", r, A) / A.shape[0]


def right_m_step(M, A, y, lr):
    P = torch.eye(M.shape[0], dtype=M.dtype) - 2 * lr * _G(M, A, y)
    return P @ M @ P


def _scaled(c):
    def step(M, A, y, lr):
        P = torch.eye(M.shape[0], dtype=M.dtype) - c * lr * _G(M, A, y)
        return P @ M @ P

    return step


WRONG_M_STEP = {
    "first order": lambda M, A, y, lr: M - 2 * lr * (_G(M, A, y) @ M + M @ _G(M, A, y)),
    "4 G W": _scaled(4.0),
    "it is 2 G W": _scaled(1.0),
    "wrong sign": _scaled(-2.0),
    "MEAN": lambda M, A, y, lr: _scaled(2.0 * A.shape[0])(M, A, y, lr),
    "one side": lambda M, A, y, lr: (
        (torch.eye(M.shape[0], dtype=M.dtype) - 2 * lr * _G(M, A, y)) @ M
    ),
    "shape": lambda M, A, y, lr: right_m_step(M, A, y, lr)[:-1],
    "differs from one weight-space": lambda M, A, y, lr: right_m_step(M, A, y, lr) + 0.1,
    "should be a tensor": lambda M, A, y, lr: "M+",
}


def test_ch3_checks_registered():
    assert {"ch3.m_step", "ch3.equivariance"} <= set(CHECKS)


def test_ch3_m_step():
    assert_feedback("ch3.m_step", right_m_step, WRONG_M_STEP)
    assert "expected a function" in exercise("ch3.m_step", 3.0, quiet=True).message


def test_ch3_m_step_not_symmetric():
    def lopsided(M, A, y, lr):
        out = right_m_step(M, A, y, lr)
        out[0, 1] += 1.0
        return out

    result = exercise("ch3.m_step", lopsided, quiet=True)
    assert not result.ok and "not symmetric" in result.message


def test_ch3_equivariance():
    right = dict(_EQUIVARIANT)
    assert exercise("ch3.equivariance", right, quiet=True).ok
    result = exercise("ch3.equivariance", right | {"Adam, rotation": True}, quiet=True)
    assert not result.ok and "1 of the 6" in result.message
    assert "entry" in result.message
    assert "Adam, rotation" not in result.message
    assert "missing" in exercise("ch3.equivariance", {"GD, rotation": True}, quiet=True).message
    assert "expected a dict" in exercise("ch3.equivariance", [True], quiet=True).message
