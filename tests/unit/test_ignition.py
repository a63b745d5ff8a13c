"""Ignition times: measured on trajectories, predicted by the logistic and by Theorem 8
(Chapter 5)."""

import math

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini.ignition import predicted_ignition_time

EPS = torch.logspace(-2, -8, 7, dtype=torch.float64)


def test_crossing_times_interpolates_linearly():
    t = torch.tensor([0.0, 1.0, 2.0, 3.0])
    x = torch.tensor([[0.0, 0.0], [0.2, 0.6], [0.8, 1.0], [1.0, 1.0]])
    out = nqf.crossing_times(x, t, 0.5)
    assert torch.allclose(
        out, torch.tensor([1.5, 1.0 - 0.1 / 0.6 + 0.0]).new_tensor([1.0 + 0.3 / 0.6, 0.5 / 0.6])
    )
    down = nqf.crossing_times(
        torch.tensor([4.0, 2.0, 1.0]), torch.tensor([0.0, 10.0, 20.0]), 1.5, direction="down"
    )
    assert abs(down.item() - 15.0) < 1e-12


def test_not_reached_is_inf_unless_strict():
    t = torch.arange(5.0)
    z = torch.tensor([[0.1, 0.1], [0.2, 0.1], [0.6, 0.1], [0.9, 0.1], [1.0, 0.1]])
    out = nqf.ignition_times(z, t, torch.tensor([1.0, 1.0]))
    assert out[1].item() == math.inf and 1.0 < out[0].item() < 2.0
    with pytest.raises(ValueError, match="never"):
        nqf.ignition_times(z, t, torch.tensor([1.0, 1.0]), strict=True)
    already = nqf.ignition_times(z + 1.0, t, 1.0)  # above the level at the start
    assert (already == 0.0).all()


def test_ignition_slope_of_logistics_is_one_over_zeta(device):
    zeta = torch.tensor([4.0, 2.0, 1.0, 0.5], dtype=torch.float64, device=device)
    zstar = torch.tensor([1.0, 0.8, 0.6, 0.4], dtype=torch.float64, device=device)
    t = torch.arange(0.0, 40.0, 0.02, dtype=torch.float64, device=device)
    z = nqf.logistic(EPS.to(device)[:, None].expand(7, 4), zstar, zeta, t)  # (7, T, 4)
    t_star = nqf.ignition_times(z, t, zstar)
    fit = nqf.ignition_slope(EPS.to(device), t_star)
    assert ((fit.slope * zeta - 1).abs() < 0.02).all()
    exact = nqf.logistic_ignition_time(EPS.to(device)[:, None], zstar, zeta)
    assert (t_star - exact).abs().max() < 1e-3  # interpolation on a 0.02 grid
    # the small-eps law differs from the exact time by ln(z* - eps) / zeta = O(1) only
    gap = exact - predicted_ignition_time(zeta, EPS.to(device)[:, None])
    assert (gap - torch.log(zstar - EPS.to(device)[:, None]) / zeta).abs().max() < 1e-9


def test_closed_form_matches_lotka_volterra_for_diagonal_C():
    b = torch.tensor([1.0, 0.5, 0.25], dtype=torch.float64)
    Cd = torch.diag(torch.tensor([1.0, 0.6, 0.5], dtype=torch.float64))
    zstar, zeta = b / torch.diagonal(Cd), 4 * b
    t = torch.arange(0.0, 25.0, 0.01, dtype=torch.float64)
    z = nqf.lotka_volterra(b, Cd, torch.full((3,), 1e-6), t)
    measured = nqf.ignition_times(z, t, zstar)
    exact = nqf.logistic_ignition_time(torch.full((3,), 1e-6), zstar, zeta)
    assert (measured - exact).abs().max() < 1e-3
    third = nqf.ignition_times(z, t, zstar, fraction=0.25)
    assert (third - nqf.logistic_ignition_time(1e-6, zstar, zeta, 0.25)).abs().max() < 1e-3


def test_coupled_modes_follow_the_limit_not_one_over_zeta():
    gen = torch.Generator().manual_seed(1)
    a = torch.randn(12, 4, generator=gen, dtype=torch.float64)
    C = a.T @ a / 12
    z_end = torch.tensor([1.0, 0.8, 0.6, 0.4], dtype=torch.float64)
    b = C @ z_end
    assert torch.allclose(nqf.nnls_end_state(b, C), z_end)
    limit = nqf.limit_ignition_slopes(b, C)
    eps = torch.logspace(-4, -8, 3, dtype=torch.float64)
    t = torch.arange(0.0, 15.0, 0.02, dtype=torch.float64)
    z = nqf.lotka_volterra(b, C, eps[:, None].expand(3, 4), t)
    fit = nqf.ignition_slope(eps, nqf.ignition_times(z, t, z_end, strict=True))
    assert ((fit.slope / limit - 1).abs() < 0.06).all()
    assert (fit.slope * 4 * b - 1).abs().max() > 0.5  # 1/zeta_k is wrong for later modes


def test_limit_slopes_reduce_to_one_over_zeta_for_diagonal_C():
    b = torch.tensor([0.9, 0.3, 0.5], dtype=torch.float64)
    C = torch.diag(torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64))
    assert torch.allclose(nqf.limit_ignition_slopes(b, C), 1 / (4 * b))
    # a mode driven extinct never ignites
    b2 = torch.tensor([1.0, 0.6], dtype=torch.float64)
    C2 = torch.tensor([[1.0, 0.9], [0.9, 1.0]], dtype=torch.float64)
    s = nqf.limit_ignition_slopes(b2, C2)
    assert abs(s[0].item() - 0.25) < 1e-12 and s[1].item() == math.inf


def test_piecewise_linear_limit_events():
    b = torch.tensor([1.0, 0.7, 0.4], dtype=torch.float64)
    C = 0.75 * torch.eye(3, dtype=torch.float64) + 0.25
    ell, events = nqf.piecewise_linear_limit(b, C, torch.linspace(0.0, 3.0, 31))
    assert ell.shape == (31, 3) and (ell <= 1e-12).all()
    assert torch.allclose(
        torch.tensor(events, dtype=torch.float64), nqf.limit_ignition_slopes(b, C)
    )


def test_mode_fractions_of_a_linear_network():
    gen = torch.Generator().manual_seed(0)
    Q, _ = torch.linalg.qr(torch.randn(16, 3, generator=gen, dtype=torch.float64))
    X, y = 4.0 * Q, torch.tensor([1.0, 0.5], dtype=torch.float64)
    Y = 4.0 * Q[:, :2] * y
    P = torch.tensor([[0.5, 0.0], [0.0, 0.25], [0.3, 0.1]], dtype=torch.float64)  # q = (0.5, 0.5)
    q = nqf.mode_fractions(X @ P, X, Y)
    assert torch.allclose(q, torch.tensor([0.5, 0.5], dtype=torch.float64))
    assert nqf.mode_fractions(torch.stack([X @ P, Y]), X, Y).shape == (2, 2)
    ensemble = torch.stack([torch.stack([X @ P, Y, 0 * Y])] * 4)  # (R, T, n, K) = (4, 3, 16, 2)
    q_ens = nqf.mode_fractions(ensemble, X, Y)
    assert q_ens.shape == (4, 3, 2)
    assert torch.allclose(q_ens[:, 1], torch.ones(4, 2, dtype=torch.float64))
    assert (q_ens[:, 2] == 0).all() and torch.allclose(q_ens[:, 0], q.expand(4, 2))


@pytest.mark.parametrize(
    "call, phrase",
    [
        (lambda: nqf.crossing_times(torch.zeros(3, 2), torch.arange(4.0), 0.5), "`times`"),
        (
            lambda: nqf.crossing_times(torch.zeros(3, 2), torch.tensor([0.0, 2.0, 1.0]), 0.5),
            "increasing",
        ),
        (
            lambda: nqf.crossing_times(torch.zeros(3, 2), torch.arange(3.0), 0.5, direction="left"),
            "`direction`",
        ),
        (
            lambda: nqf.crossing_times(torch.zeros(3, 2), torch.arange(3.0), torch.ones(3)),
            "`level`",
        ),
        (lambda: nqf.crossing_times(torch.tensor(1.0), torch.arange(1.0), 0.5), "`values`"),
        (lambda: nqf.ignition_times(torch.zeros(3, 2), torch.arange(3.0), -1.0), "`zstar`"),
        (
            lambda: nqf.ignition_times(torch.zeros(3, 2), torch.arange(3.0), 1.0, fraction=1.5),
            "`fraction`",
        ),
        (lambda: nqf.ignition_times(torch.zeros(3), torch.arange(3.0), 1.0), "`z`"),
        (lambda: nqf.logistic_ignition_time(0.0, 1.0, 1.0), "`z0`"),
        (lambda: nqf.logistic_ignition_time(0.9, 1.0, 1.0), "z0 < fraction"),
        (lambda: nqf.logistic_ignition_time(0.1, 1.0, -1.0), "`zeta`"),
        (lambda: predicted_ignition_time(1.0, 2.0), "`eps`"),
        (lambda: predicted_ignition_time(0.0, 0.1), "`zeta`"),
        (lambda: nqf.ignition_slope(torch.tensor([0.1, 0.1]), torch.ones(2)), "two distinct"),
        (lambda: nqf.ignition_slope(torch.tensor([0.1, 0.01]), torch.ones(3)), "`t_star`"),
        (
            lambda: nqf.ignition_slope(torch.tensor([0.1, 0.01]), torch.tensor([1.0, math.inf])),
            "never ignited",
        ),
        (lambda: nqf.limit_ignition_slopes(torch.ones(2), torch.eye(3)), "`C`"),
        (lambda: nqf.nnls_end_state(torch.ones(2), torch.eye(3)), "`C`"),
        (lambda: nqf.mode_fractions(torch.zeros(4, 2), torch.zeros(5, 2), torch.ones(4, 2)), "`X`"),
        (
            lambda: nqf.mode_fractions(torch.zeros(4, 3), torch.ones(4, 2), torch.ones(4, 2)),
            "`outputs`",
        ),
    ],
)
def test_validation_names_the_argument(call, phrase):
    with pytest.raises(ValueError, match=phrase.replace("(", r"\(")):
        call()


def test_ignition_slope_intercept_is_the_least_squares_line():
    """Slope and intercept against an independent fit (numpy.polyfit) on uncentred data, and the
    line through exact logistic ignition times: t* = (ln(1/eps) + ln(z* - eps)) / zeta."""
    gen = torch.Generator().manual_seed(3)
    eps = torch.logspace(-2, -9, 8, dtype=torch.float64)
    x = torch.log(1 / eps).numpy()
    t_star = (
        5.0
        + 0.7 * torch.log(1 / eps)[:, None] * torch.tensor([1.0, 2.0, 0.5])
        + 0.1 * torch.randn(8, 3, generator=gen, dtype=torch.float64)
    )
    fit = nqf.ignition_slope(eps, t_star)
    for k in range(3):
        slope, intercept = np.polyfit(x, t_star[:, k].numpy(), 1)
        assert abs(fit.slope[k].item() - slope) < 1e-12
        assert abs(fit.intercept[k].item() - intercept) < 1e-10
    # exact logistic times: the line is t = (ln(1/eps) + ln z*) / zeta up to
    # |ln(z* - eps) - ln z*| / zeta <= eps_max / (z* zeta) = 1e-3 / 0.4 = 2.5e-3
    eps = torch.logspace(-3, -9, 7, dtype=torch.float64)
    zeta = torch.tensor([2.0, 0.5], dtype=torch.float64)
    zstar = torch.tensor([1.5, 0.8], dtype=torch.float64)
    exact = nqf.logistic_ignition_time(eps[:, None], zstar, zeta)  # (7, 2)
    line = nqf.ignition_slope(eps, exact)
    drawn = line.slope * torch.log(1 / eps)[:, None] + line.intercept  # Chapter 5's lines
    assert (drawn - exact).abs().max() < 2.5e-3
    assert torch.allclose(line.intercept, torch.log(zstar) / zeta, atol=2.5e-3, rtol=0)
    # the slope's bias: that spread over the fitted range of ln(1/eps), 2.5e-3 / 13.8 = 1.8e-4
    assert torch.allclose(line.slope, 1 / zeta, atol=2e-4, rtol=0)
    single = nqf.ignition_slope(eps, exact[:, 0])
    assert abs(single.intercept.item() - line.intercept[0].item()) < 1e-12


@pytest.mark.parametrize(
    "values, level, expected",
    [
        ([0.0, 0.5, 0.5], 0.5, 1.0),  # the level is reached exactly and never exceeded
        ([0.5, 0.5, 1.0], 0.5, 0.0),  # exactly at the level from the first sample
        ([0.0, 0.5, 1.0], 0.5, 1.0),
        ([0.0, 0.25, 1.0], 0.25, 1.0),
    ],
)
def test_a_sample_exactly_at_the_level_is_a_crossing(values, level, expected):
    """The rule is 'first index with values[j] >= level' (not >)."""
    t = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    assert (
        nqf.crossing_times(torch.tensor(values, dtype=torch.float64), t, level).item() == expected
    )
    down = nqf.crossing_times(
        -torch.tensor(values, dtype=torch.float64), t, -level, direction="down"
    )
    assert down.item() == expected


def test_predicted_ignition_time_is_public_and_is_theorem_8():
    zeta = torch.tensor([4.0, 1.0], dtype=torch.float64)
    assert torch.allclose(nqf.predicted_ignition_time(zeta, 1e-6), math.log(1e6) / zeta, rtol=1e-15)


def test_float32_logistic_far_below_capacity_is_not_lost(recwarn):
    """float32 z0 = 1e-40 is subnormal: a warning says so, and the times stay finite (they are
    computed in float64): z*/z0 overflowed float32 and gave z = 0, t* = inf."""
    z0 = torch.tensor([1e-40], dtype=torch.float32)
    one = torch.tensor([1.0], dtype=torch.float32)
    with pytest.warns(RuntimeWarning, match="smallest normal"):
        t_star = nqf.logistic_ignition_time(z0, one, one)
    assert t_star.dtype == torch.float32 and abs(t_star.item() - math.log(1e40)) < 1e-2 * 92
    with pytest.warns(RuntimeWarning, match="smallest normal"):
        z = nqf.logistic(z0, one, one, torch.tensor([0.0, 100.0]))
    assert z[-1].item() > 0.99 and z[0].item() > 0
