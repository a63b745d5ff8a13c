"""Two-layer networks and their NQF (nqf_mini.networks): gradients, the quadratic form,
optimisers."""

import numpy as np
import pytest
import torch

from nqf_mini import DivergenceError, make_architecture, simulate_W
from nqf_mini.agreement import first_exceeding, loss_gap, relative_gap
from nqf_mini.networks import (
    _check_model,
    _gradients,
    _loss,
    train_two_layer,
    two_layer_init,
    two_layer_output,
)

torch.set_num_threads(1)


def _data(n=24, p=5, K=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, p, generator=gen, dtype=torch.float64)
    Y = torch.randn(n, K, generator=gen, dtype=torch.float64)
    return X, Y


@pytest.mark.parametrize("model", ["network", "nqf"])
@pytest.mark.parametrize("activation", ["tanh", "cubic", "softplus0", "silu", "sin", "gelu",
                                        "tanh_no_cubic"])
def test_hand_written_gradients_match_autograd(model, activation):
    X, Y = _data()
    U0, V0 = two_layer_init(5, 7, 3, 0.4, seed=1)
    act = _check_model(model, activation)
    U, V = U0.clone().requires_grad_(True), V0.clone().requires_grad_(True)
    loss, _ = _loss(act, model, U, V, X, Y)
    gU, gV = torch.autograd.grad(loss, (U, V))
    hU, hV = _gradients(act, model, U0, V0, X, Y)
    assert (gU - hU).abs().max() <= 1e-14 and (gV - hV).abs().max() <= 1e-14


def test_nqf_output_is_the_quadratic_form_of_the_architecture():
    """Scalar output: F^NQF(x) = Tr[W W^T A(x)] with Chapter 2's closed-form A(x), W = [U; v^T]."""
    X, _ = _data(p=4)
    arch = make_architecture("mlp", n_in=4, phi="silu")
    U, V = two_layer_init(4, 6, 1, 0.3, seed=2)
    W = torch.cat([U, V.T], dim=0)                                      # (p + 1, d)
    quad = torch.stack([torch.trace(W @ W.T @ arch.A(x)) for x in X])
    net = torch.stack([arch.f(W, x) for x in X])
    assert (two_layer_output(U, V, X, "silu", "nqf")[:, 0] - quad).abs().max() <= 1e-14
    assert (two_layer_output(U, V, X, "silu", "network")[:, 0] - net).abs().max() <= 1e-14


def test_multi_output_nqf_uses_one_structure_matrix_per_channel():
    X, _ = _data(n=6, p=3, K=2)
    U, V = two_layer_init(3, 4, 2, 0.5, seed=3)
    W = torch.cat([U, V.T], dim=0)                                      # units w_i = (u_i, v_i)
    F = two_layer_output(U, V, X, "tanh", "nqf")
    for c in range(2):
        e = torch.zeros(2, dtype=torch.float64)
        e[c] = 1.0
        for mu in range(6):
            A = torch.zeros(5, 5, dtype=torch.float64)
            A[:3, 3:] = torch.outer(X[mu], e) / 2
            A = A + A.T
            assert abs(float(torch.trace(W.T @ A @ W)) - float(F[mu, c])) <= 1e-14


@pytest.mark.parametrize("kw", [dict(), dict(batch_size=6), dict(optimizer="adam", lr=0.01)],
                         ids=["gd", "sgd", "adam"])
def test_scalar_nqf_training_matches_simulate_W(kw):
    """Same init, same minibatches: the NQF of the network is the weight-space NQF of Chapter 3."""
    X, Y = _data(n=24, p=4, K=1)
    arch = make_architecture("mlp", n_in=4, phi="tanh")
    A = torch.stack([arch.A(x) for x in X])
    U0, V0 = two_layer_init(4, 5, 1, 0.2, seed=4)
    kw = dict(kw)
    lr = kw.pop("lr", 0.1)
    run = train_two_layer(X, Y, U0, V0, lr=lr, steps=150, model="nqf", **kw)
    ref = simulate_W(A, Y[:, 0], torch.cat([U0, V0.T]), lr, 150, device="cpu", **kw)
    assert np.max(np.abs(run.loss - ref.loss)) <= 1e-12
    assert run.loss[-1] < 0.9 * run.loss[0]


def test_network_and_nqf_agree_at_small_scale_and_part_at_large_scale():
    X, Y = _data(p=4, K=2)
    gaps = []
    for scale in (1e-2, 1e-1):
        U, V = two_layer_init(4, 8, 2, scale, seed=5)
        net = two_layer_output(U, V, X, "tanh", "network")
        quad = two_layer_output(U, V, X, "tanh", "nqf")
        gaps.append(float((net - quad).norm() / quad.norm()))
    assert gaps[0] < 1e-3 and 50 < gaps[1] / gaps[0] < 200              # relative gap ~ scale^2


def test_records_shapes_and_same_seed_same_output():
    X, Y = _data()
    U0, V0 = two_layer_init(5, 7, 3, 0.1, seed=6)
    kw = dict(lr=0.2, steps=40, batch_size=8, seed=3, record_every=10, record_outputs=True,
              record_weights=True)
    a, b = train_two_layer(X, Y, U0, V0, **kw), train_two_layer(X, Y, U0, V0, **kw)
    assert list(a.steps) == [0, 10, 20, 30, 40] and a.outputs.shape == (5, 24, 3)
    assert a.U_traj.shape == (5, 5, 7) and a.V_traj.shape == (5, 7, 3)
    assert np.array_equal(a.loss, b.loss) and torch.equal(a.U, b.U)
    c = train_two_layer(X, Y, U0, V0, **{**kw, "seed": 4})
    assert not np.array_equal(a.loss, c.loss)                            # other minibatches


def test_stream_trains_on_fresh_batches():
    X, Y = _data()
    U0, V0 = two_layer_init(5, 7, 3, 0.1, seed=7)
    full = train_two_layer(X, Y, U0, V0, lr=0.1, steps=30)
    same = train_two_layer(X, Y, U0, V0, lr=0.1, steps=30, stream=lambda t: (X, Y))
    assert np.max(np.abs(full.loss - same.loss)) == 0.0
    Xs, Ys = _data(seed=9)
    other = train_two_layer(X, Y, U0, V0, lr=0.1, steps=30, stream=lambda t: (Xs, Ys))
    assert np.max(np.abs(full.loss - other.loss)) > 1e-3


def test_divergence_raises_with_advice():
    X, Y = _data()
    U0, V0 = two_layer_init(5, 7, 3, 1.0, seed=8)
    with pytest.raises(DivergenceError, match="smaller step") as info:
        train_two_layer(X, Y, U0, V0, lr=50.0, steps=200, model="nqf")
    assert info.value.suggested_lr == pytest.approx(12.5)


@pytest.mark.parametrize("kwargs, phrase", [
    (dict(model="taylor"), "argument `model`"),
    (dict(model="nqf", activation="sigmoid"), "phi(0) = 0"),
    (dict(activation="swish"), "argument `activation`"),
    (dict(optimizer="lbfgs"), "argument `optimizer`"),
    (dict(batch_size=0), "argument `batch_size`"),
    (dict(batch_size=4, stream=lambda t: None), "not both"),
    (dict(lr=-1.0), "lr"),
])
def test_bad_arguments_are_named(kwargs, phrase):
    X, Y = _data()
    U0, V0 = two_layer_init(5, 7, 3, 0.1)
    kw = dict(lr=0.1, steps=5)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=None) as info:
        train_two_layer(X, Y, U0, V0, **kw)
    assert phrase in str(info.value)


def test_shape_mismatch_names_the_argument():
    X, Y = _data()
    U0, V0 = two_layer_init(5, 7, 3, 0.1)
    with pytest.raises(ValueError, match="`X`"):
        train_two_layer(X[:, :4], Y, U0, V0, lr=0.1, steps=5)
    with pytest.raises(ValueError, match="`Y`"):
        train_two_layer(X, Y[:, :2], U0, V0, lr=0.1, steps=5)
    with pytest.raises(ValueError, match="`V0`"):
        train_two_layer(X, Y, U0, V0[:6], lr=0.1, steps=5)


def test_runs_on_every_device(device):
    X, Y = _data()
    U0, V0 = two_layer_init(5, 7, 3, 0.1, seed=1, device=device)
    run = train_two_layer(X.to(device), Y.to(device), U0, V0, lr=0.1, steps=20, batch_size=8)
    cpu = train_two_layer(X, Y, *two_layer_init(5, 7, 3, 0.1, seed=1), lr=0.1, steps=20,
                          batch_size=8)
    assert run.U.device.type == device.type
    assert np.max(np.abs(run.loss - cpu.loss)) <= 1e-12


def test_output_and_training_work_under_no_grad():
    X, Y = _data()
    U0, V0 = two_layer_init(5, 7, 3, 0.2, seed=2)
    ref = train_two_layer(X, Y, U0, V0, lr=0.1, steps=10, activation="silu")
    with torch.no_grad():
        out = two_layer_output(U0, V0, X, "gelu")
        run = train_two_layer(X, Y, U0, V0, lr=0.1, steps=10, activation="silu")
    assert out.shape == (24, 3) and np.array_equal(run.loss, ref.loss)


def test_gaps_and_first_exceeding():
    steps = np.array([0, 10, 20, 30])
    assert first_exceeding(steps, [0.0, 0.05, 0.2, 0.5]) == 20
    assert first_exceeding(steps, [0.0, 0.0, 0.0, 0.0]) is None
    assert np.allclose(loss_gap([1.0, 2.0], [1.0, 1.0]), [0.0, 1.0])
    a = torch.ones(2, 3, 1)
    assert np.allclose(relative_gap(2 * a, a), [1.0, 1.0])
    with pytest.raises(ValueError, match="equal shapes"):
        relative_gap(a, a[:1])


def test_tanh_without_its_cubic_term_starts_at_the_fifth_order():
    """tanh z + z^3/3 = z + 2 z^5 / 15 + O(z^7): the control activation of Chapter 6."""
    from nqf_mini.activations import get_activation
    z = torch.tensor([1e-2, 3e-2, -2e-2], dtype=torch.float64)
    phi = get_activation("tanh_no_cubic")
    assert torch.allclose((phi(z) - z) / z ** 5, torch.full_like(z, 2 / 15), rtol=1e-2)
