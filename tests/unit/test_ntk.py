"""The NTK of the general NQF and its drift with width (Chapter 7)."""

import math

import pytest
import torch

import nqf_mini as nqf
from nqf_mini import ntk
from nqf_mini import DivergenceError


def test_ntk_matches_autograd_jacobian():
    prob = ntk.scaled_nqf_problem(5, 0.5, 1.0, n=4, p=3, seed=2)
    W = torch.randn(3, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    def f(w):                            # f_mu = g.mu + mu^T B mu + Tr[w^T A w], written out here
        mu = w.sum(dim=1)
        return (prob.g @ mu + torch.einsum("p,npq,q->n", mu, prob.B, mu)
                + torch.einsum("pi,npq,qi->n", w, prob.A, w))

    J = torch.autograd.functional.jacobian(f, W).flatten(1)
    assert torch.allclose(ntk.nqf_ntk(prob, W), J @ J.T, atol=1e-12)


def test_initial_ntk_is_width_independent():
    t16 = ntk.nqf_ntk(ntk.scaled_nqf_problem(16, 1, 2), torch.zeros(6, 16))
    t256 = ntk.nqf_ntk(ntk.scaled_nqf_problem(256, 1, 2), torch.zeros(6, 256))
    assert torch.allclose(t16, t256, atol=1e-12)


@pytest.mark.parametrize("alpha_A, alpha_B", [(1.0, 2.0), (0.5, 1.5), (0.0, 2.0), (1.0, 1.0)])
def test_drift_exponent_matches_the_bound(alpha_A, alpha_B):
    fit = ntk.drift_scaling(alpha_A, alpha_B, widths=(32, 128, 512), lr=0.02)
    assert abs(fit.exponent - fit.predicted) < 0.06
    assert fit.predicted == ntk.predicted_drift_exponent(alpha_A, alpha_B)


def test_regimes():
    assert ntk.ntk_regime(1, 2) == "lazy"
    assert ntk.ntk_regime(0, 2) == "feature"
    assert ntk.ntk_regime(1, 0.75) == "feature"
    assert ntk.ntk_regime(1, 0.25) == "unclassified"
    assert ntk.predicted_drift_exponent(1, 0.75) == 0.25


def test_drift_errors():
    prob = ntk.scaled_nqf_problem(16, 1, 2)
    with pytest.raises(ValueError, match="`max_steps`"):
        ntk.ntk_drift(prob, lr=1e-4, max_steps=5)
    with pytest.raises(DivergenceError):
        ntk.ntk_drift(prob, lr=1e3, max_steps=50)
    with pytest.raises(ValueError, match="`loss_fraction`"):
        ntk.ntk_drift(prob, loss_fraction=1.5)
    with pytest.raises(ValueError, match="`alpha_A`"):
        ntk.scaled_nqf_problem(16, math.nan, 1)


@pytest.mark.parametrize("alpha_A, alpha_B, regime", [
    (1.0, 0.5, "feature"),          # the boundary alpha_B = 1/2 belongs to feature learning
    (1.0, 0.4999, "unclassified"),
    (1.0, 1.0, "feature"),          # alpha_B = 1: the B term is d^0, not vanishing
    (1.0, 1.0001, "lazy"),
    (0.0, 2.0, "feature"),          # alpha_A = 0: the A term is O(1)
    (1e-9, 1.5, "lazy"),
    (-0.5, 2.0, "unclassified"),
])
def test_ntk_regime_boundaries(alpha_A, alpha_B, regime):
    assert ntk.ntk_regime(alpha_A, alpha_B) == regime


def test_drift_reports_the_unit_sum_it_reached():
    """unit_sum is |m(T)| of the same run: replay simulate_W from ntk_drift's initialisation."""
    prob = ntk.scaled_nqf_problem(32, 1.0, 1.5)
    result = ntk.ntk_drift(prob, lr=0.02)
    W0 = ntk.initial_weights(prob, seed=1)                   # ntk_drift's default seed
    run = nqf.simulate_W(prob.A, prob.y, W0, 0.02, 20000, g=prob.g, B=prob.B, stop_below=0.5)
    assert math.isclose(result.unit_sum, float(run.W.sum(dim=1).norm()), rel_tol=1e-12)
    assert math.isclose(result.time, 0.02 * (run.loss.shape[0] - 1), rel_tol=1e-12)


def test_drift_scaling_keeps_each_widths_time_and_unit_sum():
    fit = ntk.drift_scaling(1.0, 2.0, widths=(16, 64), lr=0.02)
    for d, drift, time, m in zip(fit.widths, fit.drifts, fit.times, fit.unit_sums):
        one = ntk.ntk_drift(ntk.scaled_nqf_problem(int(d), 1.0, 2.0), lr=0.02)
        assert (one.drift, one.time, one.unit_sum) == (drift, time, m)


@pytest.mark.parametrize("d", [16, 4096])
def test_initial_weights_have_entries_of_variance_init_scale_squared_over_d(d):
    """W0 ~ N(0, s^2 / d) entrywise, so m = W0 1 ~ N(0, s^2) at every width (Chapter 7): the
    sample standard deviations of the p d entries and of the p sums are within 5 standard
    errors of the law (relative standard error sqrt(1 / (2 N)) for N samples)."""
    s = 1e-3
    prob = ntk.scaled_nqf_problem(d, 1.0, 2.0, n=4, p=64)
    W0 = ntk.initial_weights(prob, init_scale=s, seed=3)
    N = W0.numel()
    assert W0.shape == (64, d)
    assert abs(W0.std().item() / (s / math.sqrt(d)) - 1) < 5 * math.sqrt(1 / (2 * N))
    m = W0.sum(dim=1)                                   # 64 sums: a looser check of the law
    assert abs(m.std().item() / s - 1) < 5 * math.sqrt(1 / (2 * 64))
    again = ntk.initial_weights(prob, init_scale=s, seed=3)
    assert torch.equal(W0, again)


def test_ntk_drift_starts_from_initial_weights():
    """ntk_drift's loss at step 0 is the loss of initial_weights (the same W0)."""
    prob = ntk.scaled_nqf_problem(8, 1.0, 1.5, n=4, p=3)
    run = ntk.ntk_drift(prob, init_scale=0.3, max_steps=2000, seed=4)
    W0 = ntk.initial_weights(prob, init_scale=0.3, seed=4)
    mu = W0.sum(dim=1)
    f = (prob.g @ mu + torch.einsum("p,npq,q->n", mu, prob.B, mu)
         + torch.einsum("pi,npq,qi->n", W0, prob.A, W0))
    assert abs(run.loss0 - 0.5 * (f - prob.y).square().mean().item()) < 1e-14
