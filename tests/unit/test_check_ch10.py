"""The Chapter 10 self-checks accept a right answer and explain each recognised wrong one."""

import math

import torch

import nqf_mini as nqf
from nqf_mini.course.check import CHECKS, exercise, judge
from nqf_mini.course.answers import LocalAnswer
from nqf_mini.course.checks_ch10 import ignition_step_truth
from nqf_mini.course.points import POINTS

from ..conftest import assert_feedback


def _power(S, a):
    e, Q = torch.linalg.eigh(S)
    return (Q * e**a) @ Q.T


def right_whiten(X):
    return X @ _power(X.T @ X / X.shape[0], -0.5)


def _pca(X):
    e, Q = torch.linalg.eigh(X.T @ X / X.shape[0])
    return X @ Q / e.sqrt()


WRONG_WHITEN = {
    "standard deviation": lambda X: (X - X.mean(0)) / (X - X.mean(0)).std(0, unbiased=False),
    "root mean square": lambda X: X / X.square().mean(0).sqrt(),
    "one power too many": lambda X: X @ _power(X.T @ X / X.shape[0], -1.0),
    "wrong sign": lambda X: X @ _power(X.T @ X / X.shape[0], 0.5),
    "without the 1/n": lambda X: X @ _power(X.T @ X, -0.5),
    "centres the columns": lambda X: right_whiten(X - X.mean(0)),
    "PCA whitening": _pca,
    "float32": lambda X: right_whiten(X).float(),
    "expected (200, 4)": lambda X: right_whiten(X)[:, :2],
    "is not the identity": lambda X: 2 * right_whiten(X),
    "should be a tensor": lambda X: "white",
}


def test_ch10_checks_registered_and_graded():
    labels = {"ch10.whiten", "ch10.ignition_step", "ch10.assumptions"}
    assert labels <= set(CHECKS) and labels <= set(POINTS)


def test_ch10_whiten():
    assert_feedback("ch10.whiten", right_whiten, WRONG_WHITEN)
    package = exercise("ch10.whiten", nqf.whiten, quiet=True)  # not the package's own
    assert not package.ok and "whiten" in package.message
    assert "expected a function" in exercise("ch10.whiten", 1.0, quiet=True).message
    hidden = judge("ch10.whiten", LocalAnswer(right_whiten), hidden=3)
    assert hidden.ok and "4 data sets" in hidden.message


def right_step(sigma, lam, z0, lr):
    return torch.log(2 * sigma / (lam * z0) - 1) / (2 * torch.log1p(lr * sigma))


WRONG_STEP = {
    "flow's rate": lambda s, lam, z, lr: torch.log(2 * s / (lam * z) - 1) / (2 * lr * s),
    "capacity sigma / lambda": lambda s, lam, z, lr: (
        torch.log(s / (lam * z) - 1) / (2 * torch.log1p(lr * s))
    ),
    "misses the -1": lambda s, lam, z, lr: torch.log(2 * s / (lam * z)) / (2 * torch.log1p(lr * s)),
    "leaves out lambda_k": lambda s, lam, z, lr: (
        torch.log(2 * s / z - 1) / (2 * torch.log1p(lr * s))
    ),
    "factor 2 of the rate": lambda s, lam, z, lr: (
        torch.log(2 * s / (lam * z) - 1) / torch.log1p(lr * s)
    ),
    "time t = lr x step": lambda s, lam, z, lr: lr * right_step(s, lam, z, lr),
    "float32": lambda s, lam, z, lr: right_step(s, lam, z, lr).float(),
    "expected a scalar": lambda s, lam, z, lr: torch.ones(2),
    "solve z_k(s)": lambda s, lam, z, lr: right_step(s, lam, z, lr) + 1.0,
}


def test_ch10_ignition_step():
    assert_feedback("ch10.ignition_step", right_step, WRONG_STEP)
    assert judge("ch10.ignition_step", LocalAnswer(right_step), hidden=5).ok


def test_the_ignition_step_oracle_is_predict_staircase():
    """The check's closed form against the package on one mode with a chosen z_k(0)."""
    X = nqf.whiten(
        torch.randn(400, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    )
    Y = X[:, :1] * 0.3  # sigma = 0.3, lambda = 1
    U0 = torch.zeros(3, 2, dtype=torch.float64)
    V0 = torch.zeros(2, 1, dtype=torch.float64)
    U0[0, 0], V0[0, 0] = 1e-3, 1e-3  # a = (2e-3 / sqrt 2) e_1
    st = nqf.predict_staircase(X, Y, U0, V0, 0.5)
    truth = ignition_step_truth(0.3, 1.0, float(st.z0[0]), 0.5)
    assert abs(float(st.z0[0]) - 2e-6) < 1e-18 and math.isclose(st.steps[0].item(), truth)


def test_ch10_assumptions():
    truth = dict(nqf.course.checks_ch10._ASSUMPTIONS)
    assert exercise("ch10.assumptions", truth, quiet=True).ok
    wrong = truth | {"assumption_1_whitened": True}
    result = exercise("ch10.assumptions", wrong, quiet=True)
    assert not result.ok and "1 of the 8" in result.message
    assert "missing" in exercise("ch10.assumptions", {}, quiet=True).message
