"""Chapter 10's data and diagnostics: scikit-learn's digits, whitening, the two commutation
measures, and the two-layer trainer's stacked runs and moment-only NQF."""

import math

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini.blocks import offdiag
from nqf_mini.commutativity import pairwise_commutators

torch.set_num_threads(1)


def _g(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_digits_are_scikit_learns():
    datasets = pytest.importorskip("sklearn.datasets")
    bunch = datasets.load_digits()
    X, Y = nqf.digits_data()
    pixels = bunch.data / 16.0
    keep = pixels.std(axis=0) > 0
    assert X.shape == (1797, 61) and keep.sum() == 61 and Y.shape == (1797, 10)
    assert np.allclose(X.numpy(), pixels[:, keep] - pixels[:, keep].mean(axis=0), atol=1e-14)
    onehot = np.eye(10)[bunch.target]
    assert np.allclose(Y.numpy(), onehot - onehot.mean(axis=0), atol=1e-15)
    Xa, Ya = nqf.digits_data("inputs", dtype=torch.float32)
    assert Xa.dtype == torch.float32 and torch.equal(Xa, Ya)
    with pytest.raises(ValueError, match="`target`"):
        nqf.digits_data("labels")


def test_whitening_gives_the_identity_covariance_and_keeps_the_pixels_in_place():
    X = _g(0, 300, 5) @ torch.diag(torch.tensor([3.0, 1.0, 0.5, 0.1, 0.01], dtype=torch.float64))
    Xw = nqf.whiten(X)
    assert torch.allclose(Xw.T @ Xw / 300, torch.eye(5, dtype=torch.float64), atol=1e-10)
    W = torch.linalg.lstsq(X, Xw).solution  # Xw = X W
    assert torch.allclose(W, W.T, atol=1e-9)  # ZCA: symmetric, no rotation
    assert nqf.whiten(X.float()).dtype == torch.float32
    half = nqf.whiten(X, strength=0.5)  # second moment S_xx^(1/2)
    S = X.T @ X / 300
    e, Q = torch.linalg.eigh(S)
    assert torch.allclose(half.T @ half / 300, (Q * e.sqrt()) @ Q.T, atol=1e-12)
    assert torch.allclose(nqf.whiten(X, strength=0.0), X, atol=1e-12)
    with pytest.raises(ValueError, match="`strength`"):
        nqf.whiten(X, strength=1.5)
    with pytest.raises(ValueError, match="`X`.*positive definite"):
        nqf.whiten(torch.cat([X, X[:, :1]], 1))  # a duplicated column


def _mlp_matrix(x, c, K):
    """A_c(x) = (1/2) [[0, x e_c^T], [e_c x^T, 0]] of a K-output two-layer network, by hand."""
    e = torch.zeros(1, K, dtype=torch.float64)
    e[0, c] = 1.0
    return offdiag(x[:, None] @ e)


@pytest.mark.parametrize("same_channel", [True, False])
def test_per_sample_commutators_match_explicit_matrices(same_channel):
    X = _g(1, 7, 4)
    X[3] = 0.0  # a zero input commutes
    K, c2 = 3, (0 if same_channel else 2)
    A = torch.stack([_mlp_matrix(x, 0, K) for x in X] + [_mlp_matrix(x, c2, K) for x in X])
    explicit = pairwise_commutators(A)[:7, 7:]  # (sample, sample')
    if same_channel:
        explicit.fill_diagonal_(0.0)
    got = nqf.mlp_commutators(X, same_channel=same_channel)
    assert torch.allclose(got, explicit, atol=1e-14)
    assert got.max() <= 1 / math.sqrt(2) + 1e-15
    collinear = torch.outer(torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64), X[0])
    assert nqf.mlp_commutators(collinear).max() < 1e-7  # sin(0) = 0


@pytest.mark.parametrize("K", [3, 6])  # K = p: S_xy square, S_yx S_xy != S_xy S_yx
def test_covariance_commutator(K):
    X, Y = _g(2, 100, 6), _g(3, 100, K)
    Sxx, Sxy = X.T @ X / 100, X.T @ Y / 100
    A, B = Sxx.numpy(), (Sxy @ Sxy.T).numpy()
    by_hand = np.linalg.norm(A @ B - B @ A) / (np.linalg.norm(A) * np.linalg.norm(B))
    assert abs(nqf.covariance_commutator(X, Y) - by_hand) < 1e-14 and by_hand > 0.01
    assert nqf.covariance_commutator(nqf.whiten(X), Y) < 1e-12  # whatever the targets
    # orthogonal feature columns and a diagonal map: commuting without whitening
    Q = torch.linalg.qr(_g(4, 100, 6))[0] * torch.arange(1.0, 7.0, dtype=torch.float64)
    assert nqf.covariance_commutator(Q, Q[:, :3] * 2.0) < 1e-14
    with pytest.raises(ValueError, match="`Y`"):
        nqf.covariance_commutator(X, Y[:50])


def test_stacked_runs_are_the_runs_trained_one_at_a_time():
    X, Y = _g(5, 30, 5), _g(6, 30, 3)
    inits = [nqf.two_layer_init(5, 7, 3, 0.3, seed=s) for s in range(3)]
    U0, V0 = torch.stack([u for u, _ in inits]), torch.stack([v for _, v in inits])
    for kw in (dict(), dict(batch_size=6), dict(model="nqf"), dict(optimizer="adam", lr=0.01)):
        kw = {"lr": 0.1, "steps": 40, "record_every": 10, "record_outputs": True} | kw
        both = nqf.train_two_layer(X, Y, U0, V0, stacked=True, **kw)
        assert both.loss.shape == (3, 5) and both.outputs.shape == (5, 3, 30, 3)
        for r, (u, v) in enumerate(inits):
            one = nqf.train_two_layer(X, Y, u, v, **kw)
            assert np.allclose(both.loss[r], one.loss, rtol=1e-12, atol=0)
            assert torch.allclose(both.outputs[:, r], one.outputs, rtol=1e-10, atol=1e-13)
    with pytest.raises(ValueError, match="`U0`"):
        nqf.train_two_layer(X, Y, U0[0], V0[0], lr=0.1, steps=2, stacked=True)
    with pytest.raises(ValueError, match="`V0`"):
        nqf.train_two_layer(X, Y, U0, V0[:2], lr=0.1, steps=2, stacked=True)


@pytest.mark.parametrize("activation", ["tanh", "softplus0"])
def test_the_nqf_on_the_moments_is_the_nqf_on_the_data(activation):
    X, Y = _g(7, 40, 5), _g(8, 40, 2)
    U0, V0 = nqf.two_layer_init(5, 6, 2, 0.3, seed=9)
    kw = dict(
        lr=0.1,
        steps=60,
        model="nqf",
        activation=activation,
        record_every=20,
        record_outputs=True,
        record_weights=True,
    )
    data, moments = (
        nqf.train_two_layer(X, Y, U0, V0, **kw),
        nqf.train_two_layer(X, Y, U0, V0, moments=True, **kw),
    )
    assert np.abs(data.loss - moments.loss).max() < 1e-13
    assert (data.outputs - moments.outputs).abs().max() < 1e-12
    assert (data.U - moments.U).abs().max() < 1e-12
    for bad in (dict(model="network"), dict(batch_size=8), dict(optimizer="adam")):
        with pytest.raises(ValueError, match="`moments`"):
            nqf.train_two_layer(X, Y, U0, V0, **(kw | bad | {"moments": True}))


def test_float32_networks_keep_the_ignition_steps_of_float64_on_digits():
    """Chapter 10 trains its tanh networks in float32: the measured staircase is unchanged."""
    X, Y = nqf.digits_data()
    U0, V0 = nqf.two_layer_init(61, 64, 10, 1e-4, seed=0)
    steps = {}
    for dtype in (torch.float32, torch.float64):
        run = nqf.train_two_layer(
            X.to(dtype),
            Y.to(dtype),
            U0.to(dtype),
            V0.to(dtype),
            lr=0.5,
            steps=280,
            record_every=2,
            record_outputs=True,
        )
        q = nqf.fitted_fractions(run.outputs, X, Y)
        steps[dtype] = nqf.crossing_times(q, run.steps, 0.5, strict=True)
    gap = ((steps[torch.float32] - steps[torch.float64]) / steps[torch.float64]).abs().max()
    assert gap < 1e-4, gap
