"""nqf_mini.remainder.asymptotic_scales: scales where a remainder order can be measured.

Oracles: modules whose expansion is written out by hand, with a leading remainder coefficient
that is small on purpose (the case that bends a fit on fixed scales), and the round-off floor
eps (|f0| + |f(sW) - f0|) computed directly.
"""

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini.remainder import DEFAULT_SCALES, asymptotic_scales, remainder_curve

W = torch.tensor([[1.0, -0.5], [0.3, 0.8]], dtype=torch.float64)
X = torch.tensor([0.7, -1.1], dtype=torch.float64)


def polynomial(c3: float, c4: float, f0: float = 0.0):
    """f = f0 + sum_i [(u_i x)(v_i) + c3 (u_i x)^2 v_i + c4 (u_i x)^3 v_i], units (u_i, v_i)."""
    def f(W_, x):
        z, v = W_[0] * x[0], W_[1]
        return f0 + (z * v + c3 * z**2 * v + c4 * z**3 * v).sum()
    return f


def test_small_leading_coefficient_is_measured_at_small_scales():
    f = polynomial(c3=1e-3, c4=1.0)                      # R = 1e-3 s^3 + s^4 ...: order 3
    on_default = nqf.remainder_order(f, X, W, DEFAULT_SCALES)
    scales = asymptotic_scales(f, X, W)
    fit = nqf.remainder_order(f, X, W, scales)
    assert abs(on_default.slope - 3) > 0.3                 # the fixed scales see the s^4 term
    assert abs(fit.slope - 3) < 0.02 and scales[-1] <= 1e-4
    assert len(scales) == 9 and np.isclose(scales[-1] / scales[0], 10**1.5)


def test_window_stands_above_round_off_and_moves_up_with_f0():
    f_zero, f_const = polynomial(0.5, 1.0), polynomial(0.5, 1.0, f0=3.0)
    for f in (f_zero, f_const):
        scales = asymptotic_scales(f, X, W, margin=1e6)
        exp = nqf.quadratic_expansion(f, X, 2)
        rem, sig = remainder_curve(f, X, W, scales, exp)
        eps = np.finfo(np.float64).eps
        quad = (exp.A.abs() * (W @ W.T).abs()).sum().item()  # g = B = 0 here
        assert np.all(rem > 1e6 * eps * (abs(float(exp.f0)) + scales**2 * quad + sig))
    assert asymptotic_scales(f_const, X, W)[0] > 10 * asymptotic_scales(f_zero, X, W)[0]


def test_exact_model_gets_the_default_scales():
    phase = nqf.make_architecture("phase_retrieval", n_in=3)
    x = phase.sample_input(0)
    W3 = torch.randn(3, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert np.allclose(asymptotic_scales(phase.f, x, W3), DEFAULT_SCALES)


@pytest.mark.parametrize("kw, match", [({"margin": 0.0}, "argument `margin`"),
                                       ({"decades": -1.0}, "argument `decades`"),
                                       ({"points": 1}, "argument `points`")])
def test_bad_arguments_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        asymptotic_scales(polynomial(1.0, 1.0), X, W, **kw)
