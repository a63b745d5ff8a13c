"""train_module's stacked runs, streams and flat parameter vectors (Chapters 8 and 9).

Oracles: R stacked runs against the same runs trained one at a time; a stream against
the minibatch path fed the same batches; a flat-parameter module against a
gradient-descent loop written out with autograd.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini.deep import DeepMLP
from nqf_mini.training import DivergenceError, minibatches

from ..conftest import tolerance


def _problem(seed=0, n=12, R=3):
    arch = nqf.make_architecture("mlp", n_in=3, phi="tanh")
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=gen, dtype=torch.float64)
    Y = torch.randn(R, n, generator=gen, dtype=torch.float64)
    W0 = torch.stack(
        [s * torch.randn(arch.p, 5, generator=gen, dtype=torch.float64) for s in (0.01, 0.1, 0.5)][
            :R
        ]
    )
    return arch, X, Y, W0


@pytest.mark.parametrize(
    "kw",
    [
        dict(optimizer="sgd", lr=0.1),
        dict(optimizer="sgd", lr=0.1, batch_size=4, seed=3),
        dict(optimizer="adam", lr=0.01),
    ],
    ids=["gd", "sgd", "adam"],
)
def test_stacked_runs_are_the_runs_one_at_a_time(kw, dtype, device):
    arch, X, Y, W0 = _problem()
    cast = lambda t: t.to(device, dtype)
    both = nqf.train_module(
        arch.f,
        cast(X),
        cast(Y),
        cast(W0),
        steps=40,
        stacked=True,
        record_every=10,
        **kw,
    )
    assert both.loss.shape == (3, 5) and both.outputs.shape == (5, 3, 12)
    assert both.M_traj.shape == (5, 3, arch.p, arch.p)
    for r in range(3):
        one = nqf.train_module(arch.f, X, Y[r], W0[r], steps=40, record_every=10, **kw)
        part = both.run(r)
        tol = 100 * tolerance(dtype)
        assert torch.allclose(part.W.cpu().double(), one.W, atol=tol, rtol=tol)
        assert np.allclose(part.loss, one.loss, atol=tol, rtol=tol)
        assert torch.allclose(part.outputs.cpu().double(), one.outputs, atol=tol, rtol=tol)


def test_shared_targets_for_all_runs():
    arch, X, Y, W0 = _problem()
    both = nqf.train_module(arch.f, X, Y[0], W0, lr=0.1, steps=10, stacked=True)
    one = nqf.train_module(arch.f, X, Y[0], W0[2], lr=0.1, steps=10)
    assert torch.allclose(both.run(2).W, one.W, atol=1e-14)


def test_a_stream_is_the_minibatch_path_fed_the_same_batches(dtype, device):
    arch, X, Y, W0 = _problem()
    idx = minibatches(12, 4, 30, seed=5)
    cast = lambda t: t.to(device, dtype)
    Xd, yd = cast(X), cast(Y[0])
    stream = lambda t: (Xd[idx[t]], yd[idx[t]])
    online = nqf.train_module(
        arch.f, Xd, yd, cast(W0[1]), lr=0.1, steps=30, stream=stream, record_every=10
    )
    batched = nqf.train_module(
        arch.f, X, Y[0], W0[1], lr=0.1, steps=30, batch_size=4, seed=5, record_every=10
    )
    assert torch.allclose(online.W.cpu().double(), batched.W, atol=100 * tolerance(dtype))
    assert np.allclose(online.loss, batched.loss, atol=100 * tolerance(dtype))


def test_a_stream_of_stacked_targets():
    arch, X, Y, W0 = _problem()
    stream = lambda t: (X[t % 12 : t % 12 + 1], Y[:, t % 12 : t % 12 + 1])
    both = nqf.train_module(arch.f, X, Y, W0, lr=0.1, steps=15, stream=stream, stacked=True)
    for r in range(3):
        one = nqf.train_module(
            arch.f,
            X,
            Y[r],
            W0[r],
            lr=0.1,
            steps=15,
            stream=lambda t, r=r: (X[t % 12 : t % 12 + 1], Y[r, t % 12 : t % 12 + 1]),
        )
        assert torch.allclose(both.run(r).W, one.W, atol=1e-13)


def test_flat_parameters_follow_gradient_descent_written_out():
    model = DeepMLP(n_in=3, widths=(4, 4, 4))
    gen = torch.Generator().manual_seed(7)
    X = torch.randn(10, 3, generator=gen, dtype=torch.float64)
    y = torch.randn(10, generator=gen, dtype=torch.float64)
    theta = model.init(0.3, seed=1)
    run = nqf.train_module(model.module("network"), X, y, theta, lr=0.05, steps=20, record_every=20)
    assert run.M_traj is None and run.W.shape == (model.P,)
    w = theta.clone()
    for _ in range(20):
        w = w.requires_grad_(True)
        loss = 0.5 * (torch.stack([model.f(w, x) for x in X]) - y).square().mean()
        (g,) = torch.autograd.grad(loss, w)
        w = (w - 0.05 * g).detach()
    assert torch.allclose(run.W, w, atol=1e-13)


def test_recording_options():
    arch, X, Y, W0 = _problem()
    run = nqf.train_module(
        arch.f,
        X,
        Y[0],
        W0[0],
        lr=0.1,
        steps=6,
        record_steps=[0, 2, 6],
        record_M=False,
        record_weights=True,
    )
    assert list(run.steps) == [0, 2, 6] and run.M_traj is None
    assert run.W_traj.shape == (3, arch.p, 5) and not run.stacked
    with pytest.raises(ValueError, match="`r`"):
        run.run(0)
    both = nqf.train_module(arch.f, X, Y, W0, lr=0.1, steps=2, stacked=True)
    with pytest.raises(ValueError, match="`r`"):
        both.run(3)


def test_bad_arguments_are_named():
    arch, X, Y, W0 = _problem()
    call = dict(lr=0.1, steps=3)
    with pytest.raises(ValueError, match="`W0`"):
        nqf.train_module(arch.f, X, Y[0], W0, **call)  # 3-D, not stacked
    with pytest.raises(ValueError, match="`W0`"):
        nqf.train_module(arch.f, X, Y[0], W0[0, 0], stacked=True, **call)
    with pytest.raises(TypeError, match="`stacked`"):
        nqf.train_module(arch.f, X, Y[0], W0[0], stacked=1, **call)
    with pytest.raises(ValueError, match="`y`"):
        nqf.train_module(arch.f, X, Y[:2], W0, stacked=True, **call)
    with pytest.raises(ValueError, match="`xs`"):
        nqf.train_module(arch.f, X[:5], Y[0], W0[0], **call)
    with pytest.raises(ValueError, match="`batch_size`"):
        nqf.train_module(arch.f, X, Y[0], W0[0], stream=lambda t: (X, Y[0]), batch_size=2, **call)
    with pytest.raises(TypeError, match="`stream`"):
        nqf.train_module(arch.f, X, Y[0], W0[0], stream=3, **call)
    with pytest.raises(ValueError, match="`stream`"):
        nqf.train_module(arch.f, X, Y[0], W0[0], stream=lambda t: (X, Y[0, :3]), **call)
    with pytest.raises(DivergenceError):
        nqf.train_module(arch.f, X, 100 * Y[0], W0[2], lr=50.0, steps=200)
    assert math.isfinite(nqf.train_module(arch.f, X, Y[0], W0[0], **call).loss[-1])


def test_record_every_none_records_the_first_and_last_step():
    arch, X, Y, W0 = _problem()
    run = nqf.train_module(arch.f, X, Y[0], W0[0], lr=0.1, steps=6, record_every=None)
    assert list(run.steps) == [0, 6] and run.loss.shape == (2,)
    every = nqf.train_module(arch.f, X, Y[0], W0[0], lr=0.1, steps=6, record_every=1)
    assert run.loss[-1] == every.loss[-1] and run.loss[0] == every.loss[0]
