"""The predicted staircase of a two-layer network (nqf_mini.staircase), against independent oracles:
the least-squares fit, gradient descent of the linear network, Chapter 5's mode fractions."""

import math

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini.staircase import data_modes, fitted_fractions, predict_staircase

torch.set_num_threads(1)


def _g(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _commuting(n=200, p=6, K=4, sigmas=(0.9, 0.6, 0.4, 0.25)):
    """Whitened inputs (S_xx = I) and Y = X T with T = R diag(sigma) O^T: S_xy = T exactly."""
    X = nqf.whiten(_g(0, n, p))
    R = torch.linalg.qr(_g(1, p, p))[0][:, : len(sigmas)]
    O = torch.linalg.qr(_g(2, K, K))[0][:, : len(sigmas)]
    T = R @ torch.diag(torch.tensor(sigmas, dtype=torch.float64)) @ O.T
    return X, X @ T, R, O


def _aligned_init(R, O, d, scale):
    """U0, V0 with a_k = sqrt(2) scale e_k (orthogonal unit vectors) and b_k = 0: M(0) diagonal."""
    m = min(R.shape[1], d)
    U0 = torch.zeros(R.shape[0], d, dtype=torch.float64)
    V0 = torch.zeros(d, O.shape[0], dtype=torch.float64)
    U0[:, :m] = scale * R[:, :m]
    V0[:m, :] = scale * O[:, :m].T
    return U0, V0


def test_modes_reconstruct_the_moments_and_their_levels():
    X, Y = _g(3, 50, 5), _g(4, 50, 3)
    modes = data_modes(X, Y)
    Sxx, Sxy = X.T @ X / 50, X.T @ Y / 50
    assert torch.allclose(modes.r @ torch.diag(modes.sigma) @ modes.o.T, Sxy, atol=1e-14)
    assert torch.allclose(modes.lam, torch.diagonal(modes.r.T @ Sxx @ modes.r), atol=1e-14)
    assert (modes.sigma[1:] <= modes.sigma[:-1]).all()
    # the least-squares minimum, by an independent solver
    P = torch.linalg.lstsq(X, Y).solution
    assert abs(modes.loss_min - 0.5 * float((X @ P - Y).square().sum()) / 50) < 1e-13
    assert abs(modes.loss_zero - 0.5 * float(Y.square().sum()) / 50) < 1e-14
    assert modes.leakage.min() > 1e-3  # generic data leak


def test_commuting_data_have_no_leakage_and_canonical_strengths_sigma_over_root_lambda():
    X, Y, R, O = _commuting()
    modes = data_modes(X, Y)
    assert nqf.covariance_commutator(X, Y) < 1e-12
    assert modes.leakage.max() < 1e-10
    assert torch.allclose(modes.canonical, modes.sigma / modes.lam.sqrt(), atol=1e-12)


@pytest.mark.parametrize("activation", ["tanh", "softplus0"])
def test_logistic_prediction_matches_gradient_descent_of_the_nqf(activation):
    """Aligned start on commuting data: the NQF's modes are exactly independent logistic maps;
    at a small step the predicted half-way steps and loss agree with a GD run on the moments."""
    X, Y, R, O = _commuting()
    U0, V0 = _aligned_init(R, O, d=8, scale=1e-3)
    lr = 0.02  # lr zeta_1 = 0.036: the rise is nearly a flow
    st = predict_staircase(X, Y, U0, V0, lr, activation=activation)
    assert torch.allclose(st.z_eff, st.z0)  # orthogonal: no competition
    run = nqf.train_two_layer(
        X,
        Y,
        U0,
        V0,
        lr=lr,
        steps=int(st.steps.max() * 1.3),
        activation=activation,
        model="nqf",
        moments=True,
        record_outputs=True,
    )
    q = fitted_fractions(run.outputs, X, Y)
    measured = nqf.crossing_times(q, run.steps, 0.5, strict=True)
    assert ((measured - st.steps).abs() / st.steps).max() < 3e-3  # O(lr zeta) in the rise
    predicted = st.loss(torch.tensor(run.steps, dtype=torch.float64))
    assert np.abs(predicted.numpy() - run.loss).max() < 5e-3 * run.loss[0]
    both = st.loss(torch.tensor([0.0, 1e9]), levels="reduced_rank")
    assert torch.allclose(both, st.loss(torch.tensor([0.0, 1e9])), atol=1e-12)
    assert abs(both[-1].item() - st.modes.loss_min) < 1e-12


def test_the_gd_rate_is_exact_on_the_plateau():
    """Before saturation z_k grows by (1 + lr phi'(0) sigma_k)^2 per step, at any step size."""
    X, Y, R, O = _commuting()
    U0, V0 = _aligned_init(R, O, d=8, scale=1e-6)
    lr = 0.5
    st = predict_staircase(X, Y, U0, V0, lr)
    run = nqf.train_two_layer(
        X,
        Y,
        U0,
        V0,
        lr=lr,
        steps=10,
        model="nqf",
        moments=True,
        record_every=10,
        record_weights=True,
    )
    a = (run.U_traj[-1].T @ R + run.V_traj[-1] @ O) / math.sqrt(2)
    growth = torch.log(a.square().sum(0) / st.z0) / 10
    assert torch.allclose(growth, st.rate, rtol=1e-6)


def test_competition_for_units():
    """A mode whose unit vector lies in the span of earlier ones cannot ignite; with random
    starts in few units the corrected prediction is the one that matches the NQF."""
    X, Y, R, O = _commuting()
    U0, V0 = _aligned_init(R, O, d=2, scale=1e-4)  # modes 3, 4: no unit
    st = predict_staircase(X, Y, U0, V0, 0.1)
    assert math.isinf(st.steps[2]) and math.isinf(st.steps[3]) and st.z0[2] < 1e-30
    U0, V0 = nqf.two_layer_init(6, 3, 4, 1e-4, seed=5)  # 4 modes, 3 units
    st = predict_staircase(X, Y, U0, V0, 0.1)
    assert st.z_eff.le(st.z0 * (1 + 1e-12)).all() and st.z_eff[st.order[0]] == st.z0[st.order[0]]
    assert st.z_eff[st.order[-1]] == 0
    assert math.isinf(st.steps[st.order[-1]]) and torch.isfinite(st.steps[st.order[:3]]).all()
    errors = {}
    for d in (4, 6):
        U0, V0 = nqf.two_layer_init(6, d, 4, 1e-5, seed=d)
        st = predict_staircase(X, Y, U0, V0, 0.1)
        run = nqf.train_two_layer(
            X,
            Y,
            U0,
            V0,
            lr=0.1,
            steps=int(st.steps.max() * 1.5),
            model="nqf",
            moments=True,
            record_outputs=True,
        )
        measured = nqf.crossing_times(
            fitted_fractions(run.outputs, X, Y), run.steps, 0.5, strict=True
        )
        plain = nqf.logistic_ignition_time(st.z0, st.zstar, st.rate)
        errors[d] = (
            ((measured - st.steps) / st.steps).abs().max().item(),
            ((measured - plain) / plain).abs().max().item(),
        )
    for corrected, uncorrected in errors.values():
        assert corrected < 0.02 and corrected < uncorrected


def test_fitted_fractions_oracles():
    X, Y = _g(6, 40, 5), _g(7, 40, 3)
    assert fitted_fractions(torch.zeros(40, 3), X, Y).abs().max() == 0
    F = X @ torch.linalg.lstsq(X, Y).solution  # least-squares fit
    assert torch.allclose(fitted_fractions(F, X, Y), torch.ones(3, dtype=torch.float64), atol=1e-12)
    modes = data_modes(X, Y)
    assert torch.allclose(modes.fractions(X.T @ F / 40), fitted_fractions(F, X, Y), atol=1e-13)
    batch = fitted_fractions(torch.stack([0.5 * F, F]).unsqueeze(0), X, Y)  # (1, 2, m)
    assert batch.shape == (1, 2, 3) and torch.allclose(
        batch[0, 0], torch.full((3,), 0.5, dtype=torch.float64)
    )
    # Chapter 5's data: the modes are the coordinate axes, q_k is mode_fractions
    n, K = 32, 3
    Q, _ = torch.linalg.qr(_g(8, n, 5))
    X5 = math.sqrt(n) * Q * torch.tensor([1.0, 0.8, 0.6, 1.0, 1.0], dtype=torch.float64)
    Y5 = math.sqrt(n) * Q[:, :K] * torch.tensor([2.0, 1.0, 0.5], dtype=torch.float64)
    F5 = _g(9, n, K)
    assert torch.allclose(fitted_fractions(F5, X5, Y5), nqf.mode_fractions(F5, X5, Y5), atol=1e-12)


def test_predictions_on_digits_are_deterministic_and_float64():
    X, Y = nqf.digits_data()
    U0, V0 = nqf.two_layer_init(61, 16, 10, 1e-4, seed=0, dtype=torch.float32)
    a = predict_staircase(X.float(), Y, U0, V0, 0.5)
    b = predict_staircase(X.float(), Y, U0, V0, 0.5)
    assert a.steps.dtype == torch.float64 and torch.equal(a.steps, b.steps)
    assert a.steps.shape == (9,) and torch.isfinite(a.steps).all()
    assert torch.equal(a.order, torch.argsort(a.steps))
    curve = a.loss(torch.arange(0.0, 400.0))
    assert abs(curve[0].item() - a.modes.loss_zero) < 1e-6 and (curve[1:] <= curve[:-1]).all()
    assert a.fractions(torch.tensor([0.0])).max() < 1e-6


def test_bad_input_names_the_argument():
    X, Y = _g(3, 20, 4), _g(4, 20, 2)
    U0, V0 = nqf.two_layer_init(4, 3, 2, 0.1)
    for kwargs, name in [
        (dict(U0=U0[:3]), "U0"),
        (dict(V0=V0[:, :1]), "V0"),
        (dict(Y=Y[:5]), "Y"),
        (dict(lr=-1.0), "lr"),
        (dict(activation="sigmoid"), "activation"),
        (dict(Y=torch.zeros(20, 2)), "Y"),
    ]:
        call = dict(X=X, Y=Y, U0=U0, V0=V0, lr=0.1) | kwargs
        with pytest.raises(ValueError, match=f"`{name}`"):
            predict_staircase(**call)
    st = predict_staircase(X, Y, U0, V0, 0.1)
    with pytest.raises(ValueError, match="`levels`"):
        st.loss([1.0], levels="rrr")
    with pytest.raises(ValueError, match="`steps`"):
        st.fractions([-1.0])
    with pytest.raises(ValueError, match="`outputs`"):
        fitted_fractions(torch.zeros(20, 3), X, Y)


def _staggered():
    """Generic (non-commuting) data and a start whose second-strongest mode ignites first:
    a_k = sqrt(2) scale_k e_k along orthogonal units, scales 1e-9, 1e-3, 1e-12."""
    X, Y = _g(10, 60, 5), _g(11, 60, 3)
    modes = data_modes(X, Y)
    scales = torch.tensor([1e-9, 1e-3, 1e-12], dtype=torch.float64)
    U0, V0 = modes.r * scales, (modes.o * scales).T
    return X, Y, predict_staircase(X, Y, U0, V0, 0.05)


def test_predicted_fractions_start_at_z_eff_and_reach_one_half_at_the_predicted_steps():
    X, Y, st = _staggered()
    assert torch.allclose(st.fractions(0.0)[0], st.z_eff / st.zstar, rtol=1e-12, atol=0)
    q = st.fractions(st.steps)  # (m, m)
    assert torch.allclose(torch.diagonal(q), torch.full((3,), 0.5, dtype=torch.float64), atol=1e-12)
    later = st.fractions(st.steps * 1.5)
    assert (torch.diagonal(later) > 0.5).all()


def test_reduced_rank_levels_are_the_best_rank_j_losses_in_the_order_of_ignition():
    """Between the j-th and the (j+1)-th ignition the reduced-rank prediction is the loss of the
    best rank-j linear map (numpy: projection on X's columns, then Eckart-Young), whichever
    modes ignite first; here mode 2 (the second singular value) goes first."""
    X, Y, st = _staggered()
    assert st.order.tolist() == [1, 0, 2]
    Xn, Yn, n = X.numpy(), Y.numpy(), X.shape[0]
    Q, _ = np.linalg.qr(Xn)
    fit = Q @ (Q.T @ Yn)
    s = np.linalg.svd(fit, compute_uv=False)

    def best_rank(j):
        return 0.5 * (np.sum((Yn - fit) ** 2) + np.sum(s[j:] ** 2)) / n

    t = st.steps[st.order]
    between = torch.stack([0 * t[0], (t[0] * t[1]).sqrt(), (t[1] * t[2]).sqrt(), t[2] * 10])
    predicted = st.loss(between, levels="reduced_rank").numpy()
    expected = np.array([best_rank(j) for j in range(4)])
    # the logistic tails (q_k(0) = 3.5e-6 for the first mode) leave a few 1e-7 of L_0
    assert np.abs(predicted - expected).max() < 1e-5 * expected[0]
    assert abs(expected[1] - expected[0]) > 0.02  # the levels differ


def test_leakage_is_relative_and_matches_its_definition():
    X, Y = _g(12, 50, 5), _g(13, 50, 3)
    modes = data_modes(X, Y)
    Sxx = (X.T @ X / 50).numpy()
    for k in range(modes.sigma.shape[0]):
        r = modes.r[:, k].numpy()
        v = Sxx @ r
        lam = r @ v
        assert abs(modes.leakage[k].item() - np.linalg.norm(v - lam * r) / lam) < 1e-12
    assert torch.allclose(data_modes(3.0 * X, Y).leakage, modes.leakage, atol=1e-12)
