"""Closed-form scaling-law curves, exponents, the ignition window and the power-law fit
(Chapter 6)."""

import math

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini.loss_curves import ignition_front
from nqf_mini.spectral_data import orthonormal_samples, proportional_init


def test_fit_power_law_recovers_exponent_and_prefactor():
    t = torch.logspace(0, 4, 50, dtype=torch.float64)
    fit = nqf.fit_power_law(t, 3.0 * t**-1.7, (10.0, 1000.0))
    assert abs(fit.exponent - 1.7) < 1e-10 and abs(fit.prefactor - 3.0) < 1e-9
    assert (
        fit.stderr < 1e-10
        and fit.n_points == int(((t >= 10) & (t <= 1000)).sum())
        and fit.window == (10.0, 1000.0)
    )


def test_fit_power_law_stderr_reflects_noise():
    gen = np.random.default_rng(0)
    t = np.logspace(0, 3, 200)
    loss = t**-1.0 * np.exp(0.05 * gen.standard_normal(200))
    fit = nqf.fit_power_law(t, loss, (1.0, 1000.0))
    assert 0.0 < fit.stderr < 0.02 and abs(fit.exponent - 1.0) < 4 * fit.stderr + 1e-3


@pytest.mark.parametrize(
    "t, loss, window, phrase",
    [
        ([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 0.5, 0.2], (1.0, 4.0), "loss"),
        ([0.0, 2.0, 3.0, 4.0], [1.0, 1.0, 0.5, 0.2], (2.0, 4.0), "`t`"),
        ([1.0, 2.0, 3.0, 4.0], [1.0, 0.6, 0.5, 0.2], (1.0, 8.0), "inside the data"),
        ([1.0, 2.0, 3.0, 4.0], [1.0, 0.6, 0.5, 0.2], (1.5, 2.5), "at least 3 points"),
        ([1.0, 2.0, 3.0, 4.0], [1.0, 0.6, 0.5, 0.2], (3.0, 2.0), "t_min < t_max"),
        ([1.0, 2.0, 3.0], [1.0, 0.6], (1.0, 3.0), "shape"),
    ],
)
def test_fit_power_law_validates(t, loss, window, phrase):
    with pytest.raises(ValueError, match="window|loss|`t`") as info:
        nqf.fit_power_law(torch.tensor(t), torch.tensor(loss), window)
    assert phrase in str(info.value)


def test_closed_form_matches_logistic_and_lotka_volterra():
    K = 12
    V, zeta, u0 = nqf.power_law_modes(K, 2.0, 0.8, eps=1e-3, delta=0.5)
    t = torch.linspace(0.0, 60.0, 31, dtype=torch.float64)
    E = nqf.logistic_loss_curve(V, zeta, u0, t)
    # the same modes as an LV system: zeta = 4 b, z* = b / C_kk; take C_kk = 1, so z* = b
    b = zeta / 4
    z_log = nqf.logistic(u0 * b, b, zeta, t)  # (T, K)
    z_lv = nqf.lotka_volterra(b, torch.diag(torch.ones(K, dtype=torch.float64)), u0 * b, t)
    for z in (z_log, z_lv):
        E_ode = ((1 - z / b) ** 2 * V).sum(-1)
        assert (E - E_ode).abs().max() / E.max() < 1e-8


def test_chunking_does_not_change_the_result():
    V, zeta, u0 = nqf.power_law_modes(1000, 2.0, 0.8)
    t = torch.logspace(0, 5, 77, dtype=torch.float64)
    whole = nqf.logistic_loss_curve(V, zeta, u0, t, chunk_elements=10**8)
    pieces = nqf.logistic_loss_curve(V, zeta, u0, t, chunk_elements=3000)
    assert torch.allclose(whole, pieces, rtol=1e-13, atol=0.0)


def test_feature_wise_exponent_finite_K_bias_and_tail():
    K = 10_000
    V, zeta, u0 = nqf.power_law_modes(K, 2.0, 0.8, eps=1e-5)
    window = nqf.ignition_window(u0, zeta)
    t = torch.logspace(math.log10(window[0]), math.log10(window[1]), 120, dtype=torch.float64)
    raw = nqf.fit_power_law(t, nqf.feature_wise_curve(2.0, 0.8, K, t), window).exponent
    corrected = nqf.fit_power_law(
        t, nqf.feature_wise_curve(2.0, 0.8, K, t, tail=True), window
    ).exponent
    predicted = nqf.feature_exponent(2.0, 0.8)
    assert predicted == 1.25
    assert 0.005 < raw / predicted - 1 < 0.05  # finite K biases the fit upward
    assert abs(corrected / predicted - 1) < 1e-3


def test_ignition_window_and_front():
    zeta = torch.arange(1, 101, dtype=torch.float64) ** -0.8
    with pytest.raises(ValueError, match="k_max"):  # K // 10 = 10 = k_min
        nqf.ignition_window(1e-5, zeta)
    t_min, _ = nqf.ignition_window(1e-5, torch.cat([zeta, zeta]))  # K = 200: window 10..20
    assert t_min == pytest.approx(math.log(1e5 - 1) * 10**0.8)
    t_min, t_max = nqf.ignition_window(1e-5, zeta, k_min=2, k_max=50)
    assert t_max == pytest.approx(math.log(1e5 - 1) * 50**0.8)
    front = ignition_front(torch.tensor([t_max]), 1e-5, 0.8)
    assert abs(front.item() - 50) < 1e-3
    with pytest.raises(ValueError, match="u0"):
        nqf.ignition_window(0.7, zeta)
    with pytest.raises(ValueError, match="k_max"):
        nqf.ignition_window(1e-5, zeta, k_min=20, k_max=10)


def test_exponent_formulas():
    assert nqf.sample_exponent(1.0, 1.0) == 1.0
    assert nqf.fourier_exponent(1.0, 1.0) == 0.5
    assert nqf.rank_one_exponent(1.0, 1.0) == pytest.approx(2 / 3)
    assert nqf.rank_one_exponent(1.0, 2.0) == 1.5
    assert nqf.nonproportional_exponent(2.0, 0.8, 0.0, 1e-5, 100.0) == 1.25
    with pytest.raises(ValueError, match="alpha1"):
        nqf.feature_exponent(1.0, 0.8)
    with pytest.raises(ValueError, match="gamma1"):
        nqf.sample_exponent(0.4, 1.0)


def test_nonproportional_init_lowers_the_exponent_as_predicted():
    K, eps, delta = 10_000, 1e-5, 1.0
    V, zeta, u0 = nqf.power_law_modes(K, 2.0, 0.8, eps=eps, delta=delta)
    window = nqf.ignition_window(u0, zeta)
    t = torch.logspace(math.log10(window[0]), math.log10(window[1]), 120, dtype=torch.float64)
    fit = nqf.fit_power_law(
        t, nqf.feature_wise_curve(2.0, 0.8, K, t, eps=eps, delta=delta, tail=True), window
    ).exponent
    k_mid = math.sqrt(10 * K / 10)
    assert fit < 1.2
    assert abs(fit / nqf.nonproportional_exponent(2.0, 0.8, delta, eps, k_mid) - 1) < 0.01


def test_square_network_matches_simulate_W_and_sample_law():
    data = orthonormal_samples(8, 1.0, 1.0, p=10, seed=3)
    W0 = proportional_init(data, 1e-3, 3, seed=1)
    A = data.X[:, :, None] * data.X[:, None, :]
    steps, loss = nqf.train_square_network(data.X, data.y, W0, 0.5, 40, record_every=10)
    ref = nqf.simulate_W(A, data.y, W0, 0.5, 40, record_every=10)
    assert np.allclose(loss, np.asarray(ref.loss)[steps], rtol=1e-10)
    # the diagonal of O M(0) O^T is eps times the capacities
    z0 = torch.einsum("np,pd,nd->n", data.O, W0, data.O @ W0)
    assert torch.allclose(z0, 1e-3 * data.y / data.s**2)


def test_sample_wise_curve_tail():
    n = 64
    t = torch.tensor([1.0, 10.0], dtype=torch.float64)
    raw = nqf.sample_wise_curve(1.0, 1.0, n, t, eps=1e-5, zeta0=4 / n)
    full = nqf.sample_wise_curve(1.0, 1.0, n, t, eps=1e-5, zeta0=4 / n, tail=True)
    assert torch.allclose(
        full - raw, torch.full((2,), nqf.hurwitz_tail(2.0, n) / (2 * n), dtype=torch.float64)
    )
    assert nqf.hurwitz_tail(2.0, 0) == pytest.approx(math.pi**2 / 6)


def test_rank_one_curve_approaches_rank_one_theory():
    fits = []
    for K in (256, 2048):
        run = nqf.rank_one_curve(K, 1.0, 1.0, n_steps=800)
        halves = nqf.ignition_times(run.fraction, run.t, 1.0)  # fraction 1/2 reached
        window = (float(halves[9]), float(halves[K // 10 - 1]))
        fits.append(nqf.fit_power_law(run.t, run.loss, window).exponent)
    assert fits[0] > fits[1] > nqf.rank_one_exponent(1.0, 1.0)  # bias shrinks with K
    assert fits[1] < 0.74 and abs(fits[1] - 0.5) > 0.15  # not the decoupled 0.5


def test_a_mode_that_never_ignites_gets_inf_not_nan():
    t = np.array([0.0, 1.0, 2.0])
    frac = np.array([[0.0, 0.6], [0.4, 0.7], [0.8, 0.9]])
    out = nqf.ignition_times(frac, t, 1.0)
    assert out[0] == pytest.approx(1.25) and out[1] == 0.0
    assert math.isinf(nqf.ignition_times(np.zeros((3, 2)), t, 1.0)[0])


def test_fit_power_law_stderr_uses_m_minus_2_degrees_of_freedom():
    t = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    loss = t**-1.3 * np.array([1.0, 1.1, 0.95, 1.05, 0.9])
    fit = nqf.fit_power_law(t, loss, (1.0, 16.0))
    x, y = np.log(t), np.log(loss)  # an independent least-squares solve
    design = np.stack([np.ones_like(x), x], axis=1)
    coef, ssr, *_ = np.linalg.lstsq(design, y, rcond=None)
    cov = ssr[0] / (len(x) - 2) * np.linalg.inv(design.T @ design)
    assert fit.exponent == pytest.approx(-coef[1], rel=1e-12)
    assert fit.stderr == pytest.approx(math.sqrt(cov[1, 1]), rel=1e-10)


@pytest.mark.parametrize("alpha1, K", [(2.0, 10), (1.5, 3), (3.0, 0)])
def test_hurwitz_tail_is_the_sum_over_k_above_K(alpha1, K):
    N = 2_000_000  # brute force up to N, Euler-Maclaurin after
    k = np.arange(K + 1, N + 1, dtype=np.float64)
    tail = N ** (1 - alpha1) / (alpha1 - 1) - 0.5 * N**-alpha1
    brute = float(np.sum(k**-alpha1)) + tail
    assert nqf.hurwitz_tail(alpha1, K) == pytest.approx(brute, rel=1e-10)


def test_rank_one_curve_resolves_the_escape_from_any_start():
    """Before the escape |w| ~ w0 + 2|c| tau, so t = ln(1 + 2|c| tau / w0) / (2|c|): a start
    100 times smaller delays every later event by ln(100) / (2|c|), |c| = |S b|."""
    c_norm = float((torch.arange(1, 65, dtype=torch.float64) ** -2.0).norm())  # theta = beta = 1
    halves = []
    for w0 in (1e-4, 1e-6, 1e-8):
        run = nqf.rank_one_curve(64, 1.0, 1.0, w0_norm=w0, n_steps=2400)
        halves.append(nqf.ignition_times(run.fraction, run.t, 1.0)[:3].numpy())
    delay = math.log(100) / (2 * c_norm)
    assert np.allclose(np.diff(halves, axis=0), delay, rtol=0.01)
