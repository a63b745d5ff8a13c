"""The Chapter 4 self-checks accept a right answer and explain each recognised wrong one."""

import itertools

import torch

from nqf_mini.course.check import CHECKS, exercise

from ..conftest import assert_feedback


def right_lv_rhs(z, b, C):
    return 4 * z * (b - C @ z)


WRONG_LV_RHS = {
    "factor of 2: dM/dt": lambda z, b, C: 2 * z * (b - C @ z),
    "(1/n) sum (f - y)^2": lambda z, b, C: 8 * z * (b - C @ z),
    "missing the factor 4": lambda z, b, C: z * (b - C @ z),
    "wrong sign": lambda z, b, C: -4 * z * (b - C @ z),
    "missing the factor z_k": lambda z, b, C: 4 * (b - C @ z),
    "off-diagonal entries of C": lambda z, b, C: 4 * z * (b - torch.diagonal(C) * z),
    "shape": lambda z, b, C: right_lv_rhs(z, b, C)[None],
    "differs from the velocity": lambda z, b, C: right_lv_rhs(z, b, C) + 0.1,
    "should be a tensor": lambda z, b, C: "dz/dt",
}


def test_ch4_checks_registered():
    assert {"ch4.lv_rhs", "ch4.nnls_end_state", "ch4.extinction_threshold"} <= set(CHECKS)


def test_ch4_lv_rhs():
    assert_feedback("ch4.lv_rhs", right_lv_rhs, WRONG_LV_RHS)
    assert "expected a function" in exercise("ch4.lv_rhs", 4.0, quiet=True).message


def right_end_state(b, C):
    K = b.shape[0]
    for size in range(K, -1, -1):
        for S in itertools.combinations(range(K), size):
            z, idx = torch.zeros(K, dtype=torch.float64), list(S)
            if idx:
                z[idx] = torch.linalg.solve(C[idx][:, idx], b[idx])
            if (z[idx] > 0).all() and (C @ z - b >= -1e-12).all():
                return z
    raise ValueError("no KKT point")


def _projected_gradient(b, C, steps=20000):
    z = torch.zeros_like(b)
    lr = 1.0 / torch.linalg.eigvalsh(C).max()
    for _ in range(steps):
        z = (z - lr * (C @ z - b)).clamp_min(0)
    return z


WRONG_END_STATE = {
    "unconstrained minimiser": lambda b, C: torch.linalg.solve(C, b),
    "clips C^-1 b": lambda b, C: torch.linalg.solve(C, b).clamp_min(0),
    "negative entry": lambda b, C: right_end_state(b, C) - 0.5,
    "optimality conditions": lambda b, C: right_end_state(b, C) + 0.5,
    "shape": lambda b, C: right_end_state(b, C)[:-1],
}


def test_ch4_nnls_end_state():
    assert exercise("ch4.nnls_end_state", right_end_state, quiet=True).ok
    assert exercise("ch4.nnls_end_state", _projected_gradient, quiet=True).ok  # another method
    for phrase, wrong in WRONG_END_STATE.items():
        result = exercise("ch4.nnls_end_state", wrong, quiet=True)
        assert not result.ok and phrase in result.message, (phrase, result.message)
    assert "expected a function" in exercise("ch4.nnls_end_state", [1.0], quiet=True).message


def test_ch4_extinction_threshold():
    assert exercise("ch4.extinction_threshold", 4 / 13, quiet=True).ok
    assert exercise("ch4.extinction_threshold", torch.tensor(0.308), quiet=True).ok
    for wrong in (0.2, 0.5):  # no "higher" or "lower": that would allow a bisection
        result = exercise("ch4.extinction_threshold", wrong, quiet=True)
        assert not result.ok and "not the threshold" in result.message
        assert not any(w in result.message for w in ("higher", "lower", "survives at"))
    assert "Gram matrix" in exercise("ch4.extinction_threshold", 1.5, quiet=True).message
    assert "expected a number" in exercise("ch4.extinction_threshold", "c*", quiet=True).message
