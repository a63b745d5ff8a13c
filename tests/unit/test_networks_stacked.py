"""Stacked two-layer runs (nqf_mini.train_two_layer_stacked) against train_two_layer run by run."""

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini import teacher_student as ts

torch.set_num_threads(1)

RUNS = 3


def _inits(p, d, K, scale):
    pairs = [nqf.two_layer_init(p, d, K, scale, seed=10 + r) for r in range(RUNS)]
    return torch.stack([u for u, _ in pairs]), torch.stack([v for _, v in pairs])


@pytest.mark.parametrize("model", ["network", "nqf"])
def test_online_runs_are_the_runs_trained_one_at_a_time(model):
    teachers = [nqf.make_teacher(p=6, k=2, norm=1.5, seed=r) for r in range(RUNS)]
    X, _ = ts.evaluation_set(teachers[0], n=40, seed=7)
    Y = torch.stack([t(X) for t in teachers])                      # each run its own teacher
    seeds = [20 + r for r in range(RUNS)]
    streams = [nqf.online_stream(t, batch_size=4, steps=60, seed=s)
               for t, s in zip(teachers, seeds)]
    U0, V0 = _inits(6, 5, 1, 0.3)
    common = dict(lr=0.05, steps=60, model=model, record_every=7, record_outputs=True,
                  record_weights=True)
    stream = ts.stacked_online_stream(teachers, batch_size=4, steps=60, seeds=seeds)
    stacked = nqf.train_two_layer_stacked(X, Y, U0, V0, stream=stream, **common)
    assert stacked.loss.shape == (RUNS, len(stacked.steps))
    for r in range(RUNS):
        alone = nqf.train_two_layer(X, Y[r], U0[r], V0[r], stream=streams[r], **common)
        one = stacked.run(r)
        assert np.array_equal(one.steps, alone.steps)
        assert np.allclose(one.loss, alone.loss, rtol=1e-12, atol=0)
        assert torch.allclose(one.outputs, alone.outputs, rtol=0, atol=1e-13)
        assert torch.allclose(one.U, alone.U, rtol=0, atol=1e-13)
        assert torch.allclose(one.V_traj, alone.V_traj, rtol=0, atol=1e-13)


def test_full_batch_runs_with_their_own_inputs_and_several_outputs():
    gen = nqf.generator(3)
    X = torch.randn(RUNS, 12, 4, generator=gen, dtype=torch.float64)
    Y = torch.randn(RUNS, 12, 2, generator=gen, dtype=torch.float64)
    U0, V0 = _inits(4, 3, 2, 0.5)
    stacked = nqf.train_two_layer_stacked(X, Y, U0, V0, lr=0.1, steps=25, activation="softplus0")
    for r in range(RUNS):
        alone = nqf.train_two_layer(X[r], Y[r], U0[r], V0[r], lr=0.1, steps=25,
                                    activation="softplus0")
        assert np.allclose(stacked.run(r).loss, alone.loss, rtol=1e-12, atol=0)
        assert torch.allclose(stacked.V[r], alone.V, rtol=0, atol=1e-13)


def test_bad_arguments_are_named():
    U0, V0 = _inits(4, 3, 1, 0.5)
    X, Y = torch.zeros(5, 4, dtype=torch.float64), torch.zeros(RUNS, 5, dtype=torch.float64)
    with pytest.raises(TypeError, match="argument `stream`"):
        nqf.train_two_layer_stacked(X, Y, U0, V0, lr=0.1, steps=3, stream=[lambda t: t])
    with pytest.raises(ValueError, match="argument `stream`"):                # (b, p): no run axis
        nqf.train_two_layer_stacked(X, Y, U0, V0, lr=0.1, steps=3,
                                    stream=lambda t: (X[:2], Y[0, :2]))
    with pytest.raises(ValueError, match="argument `Y`"):
        nqf.train_two_layer_stacked(X, Y[:2], U0, V0, lr=0.1, steps=3)
    with pytest.raises(ValueError, match="argument `U0`"):
        nqf.train_two_layer_stacked(X, Y, U0[0], V0, lr=0.1, steps=3)
    run = nqf.train_two_layer_stacked(X, Y, U0, V0, lr=0.1, steps=3)
    with pytest.raises(ValueError, match="argument `r`"):
        run.run(RUNS)


def test_stacked_stream_reads_each_teachers_own_stream():
    teachers = [nqf.make_teacher(p=5, k=2, seed=r) for r in range(RUNS)]
    stacked = ts.stacked_online_stream(teachers, batch_size=3, steps=4, seeds=[7, 8, 9])
    for r, t in enumerate(teachers):
        alone = nqf.online_stream(t, batch_size=3, steps=4, seed=7 + r)
        for step in range(4):
            assert torch.equal(stacked(step)[0][r], alone(step)[0])
            assert torch.equal(stacked(step)[1][r], alone(step)[1])
    with pytest.raises(ValueError, match="argument `seeds`"):
        ts.stacked_online_stream(teachers, batch_size=3, steps=4, seeds=[1])
    with pytest.raises(ValueError, match="argument `t`"):
        stacked(4)
