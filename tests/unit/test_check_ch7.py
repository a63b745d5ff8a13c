"""The Chapter 7 self-checks accept a right answer and explain each recognised wrong one."""

import numpy as np
import torch

import nqf_mini as nqf
from nqf_mini.course.check import CHECKS, exercise
from nqf_mini.remainder import scaled_remainder

from ..conftest import assert_feedback


def _rss(X, y):
    beta = torch.linalg.lstsq(X, y[:, None]).solution[:, 0]
    return float((X @ beta - y).square().sum())


def right_best_linear_loss(X, y):
    return _rss(X, y) / (2 * X.shape[0])


def test_ch7_checks_registered():
    assert {"ch7.best_linear_loss", "ch7.remainder_exponent", "ch7.ntk_regime"} <= set(CHECKS)


def test_ch7_best_linear_loss():
    def with_intercept(X, y):
        X1 = torch.cat([X, torch.ones(X.shape[0], 1, dtype=X.dtype)], dim=1)
        return _rss(X1, y) / (2 * X.shape[0])

    assert_feedback(
        "ch7.best_linear_loss",
        right_best_linear_loss,
        {
            "(1/n)": lambda X, y: _rss(X, y) / X.shape[0],
            "intercept": with_intercept,
            "loss of f = 0": lambda X, y: 0.5 * float(y.square().mean()),
            "n - p": lambda X, y: _rss(X, y) / (2 * (X.shape[0] - X.shape[1])),
            "through the origin": lambda X, y: right_best_linear_loss(X, y) + 0.01,
            "should be a number": lambda X, y: "zero",
        },
    )
    assert "expected a function" in exercise("ch7.best_linear_loss", 0.2, quiet=True).message


RIGHT_EXPONENTS = {"tanh": 2, "sin": 2, "softplus0": 1, "silu": 1, "relu": 0}


def test_ch7_remainder_exponent_truth_matches_measurement():
    U, V = nqf.two_layer_init(6, 12, 1, 1.0, seed=0)
    X = torch.randn(64, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    for name, e in RIGHT_EXPONENTS.items():
        fit = scaled_remainder(U, V, X, np.geomspace(1e-3, 1e-2, 4), name)
        assert abs(fit.relative_slope - e) < 0.05, (name, fit.relative_slope)


def test_ch7_remainder_exponent():
    assert_feedback(
        "ch7.remainder_exponent",
        RIGHT_EXPONENTS,
        {
            "ABSOLUTE": {"tanh": 4, "sin": 4, "softplus0": 3, "silu": 3, "relu": 2},
            "tanh is odd": dict(RIGHT_EXPONENTS, tanh=1),
            "ReLU is not smooth": dict(RIGHT_EXPONENTS, relu=1),
            "missing exponents": {"tanh": 2},
            "should be a number": dict(RIGHT_EXPONENTS, sin="two"),
            "expected a dict": [2, 2, 1, 1, 0],
        },
    )


def right_regime(a, b):
    return "lazy" if a > 0 and b > 1 else "feature"


def test_ch7_ntk_regime():
    assert_feedback(
        "ch7.ntk_regime",
        right_regime,
        {
            "alpha_B = 1": lambda a, b: "lazy" if a > 0 and b >= 1 else "feature",
            "alpha_A = 0": lambda a, b: "lazy" if b > 1 else "feature",
            "AND": lambda a, b: "lazy" if a > 0 and b > 1.2 else "feature",
            "'lazy' or 'feature'": lambda a, b: a > 0 and b > 1,
        },
    )
    assert "expected a function" in exercise("ch7.ntk_regime", "lazy", quiet=True).message
