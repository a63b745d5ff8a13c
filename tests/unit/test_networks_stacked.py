"""Stacked two-layer runs (``train_two_layer(..., stacked=True)``): every run is the single run.

The oracle is :func:`nqf_mini.train_two_layer` run by run from the same initial weights, on the
same data, minibatches or stream: the stacked call must reproduce its losses, outputs and weights
to round-off, for gradient descent, minibatch SGD (one seed for all runs or one per run), Adam
and online SGD (one teacher per run), for the network and for its NQF, on data shared by the
runs or each run's own.
"""

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini import DivergenceError, teacher_student as ts

torch.set_num_threads(1)

RUNS = 3
SEEDS = [3, 8, 11]


def _data(n=16, p=5, K=3, seed=0, runs=None):
    gen = torch.Generator().manual_seed(seed)
    lead = () if runs is None else (runs,)
    X = torch.randn(*lead, n, p, generator=gen, dtype=torch.float64)
    Y = torch.randn(*lead, n, K, generator=gen, dtype=torch.float64)
    return X, Y


def _same(stacked, r, alone, tol=1e-12):
    one = stacked.run(r)
    np.testing.assert_array_equal(one.steps, alone.steps)
    np.testing.assert_allclose(one.loss, alone.loss, rtol=tol, atol=0)
    for name in ("outputs", "U", "V", "U_traj", "V_traj"):
        a, b = getattr(one, name), getattr(alone, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.shape == b.shape and (a - b).abs().max() <= tol, name


def test_init_with_seeds_stacks_the_single_draws_at_their_scales():
    U0, V0 = nqf.two_layer_init(5, 7, 3, [0.1, 0.2, 0.3], seed=[4, 5, 6])
    assert U0.shape == (3, 5, 7) and V0.shape == (3, 7, 3)
    for r, (scale, seed) in enumerate(zip([0.1, 0.2, 0.3], [4, 5, 6])):
        u, v = nqf.two_layer_init(5, 7, 3, scale, seed=seed)
        assert torch.equal(U0[r], u) and torch.equal(V0[r], v)
    U1, _ = nqf.two_layer_init(5, 7, 3, 0.2, seed=range(2))  # one scale for every run
    assert torch.equal(U1[1], nqf.two_layer_init(5, 7, 3, 0.2, seed=1)[0])
    with pytest.raises(ValueError, match="`scale`"):
        nqf.two_layer_init(5, 7, 3, [0.1, 0.2], seed=[1, 2, 3])
    with pytest.raises(ValueError, match="`scale`"):
        nqf.two_layer_init(5, 7, 3, [0.1, 0.2], seed=1)
    with pytest.raises(ValueError, match="`seed`"):
        nqf.two_layer_init(5, 7, 3, 0.1, seed=[])
    with pytest.raises(TypeError, match="`seed`"):
        nqf.two_layer_init(5, 7, 3, 0.1, seed=[1, 2.5])
    with pytest.raises(ValueError, match="`scale`"):
        nqf.two_layer_init(5, 7, 3, [0.1, -0.2], seed=[1, 2])


@pytest.mark.parametrize("model", ["network", "nqf"])
@pytest.mark.parametrize(
    "kw",
    [dict(), dict(batch_size=4), dict(batch_size=4, seed=SEEDS), dict(optimizer="adam", lr=0.01)],
    ids=["gd", "sgd-shared-seed", "sgd-own-seeds", "adam"],
)
def test_every_run_follows_its_single_run(model, kw):
    X, Y = _data()
    U0, V0 = nqf.two_layer_init(5, 7, 3, 0.3, seed=SEEDS)
    kw = (
        dict(
            lr=0.1, steps=60, model=model, record_every=10, record_outputs=True, record_weights=True
        )
        | kw
    )
    stacked = nqf.train_two_layer(X, Y, U0, V0, stacked=True, **kw)
    assert stacked.stacked and stacked.loss.shape == (RUNS, 7)
    assert stacked.outputs.shape == (7, RUNS, 16, 3) and stacked.U_traj.shape == (7, RUNS, 5, 7)
    moved = 0.0
    for r in range(RUNS):
        single = kw | ({"seed": SEEDS[r]} if isinstance(kw.get("seed"), list) else {})
        alone = nqf.train_two_layer(X, Y, U0[r], V0[r], **single)
        _same(stacked, r, alone)
        moved = max(moved, (alone.U - U0[r]).abs().max().item())
    assert moved > 1e-2  # the runs did train, so the comparison is not between starts


def test_own_minibatch_seeds_give_other_paths():
    X, Y = _data()
    U0, V0 = nqf.two_layer_init(5, 7, 3, 0.3, seed=[1, 1])  # two equal starts
    same = nqf.train_two_layer(X, Y, U0, V0, lr=0.1, steps=20, batch_size=4, stacked=True)
    own = nqf.train_two_layer(
        X, Y, U0, V0, lr=0.1, steps=20, batch_size=4, seed=[0, 1], stacked=True
    )
    assert same.loss[0, -1] == same.loss[1, -1]
    assert abs(own.loss[0, -1] - own.loss[1, -1]) > 1e-6


@pytest.mark.parametrize(
    "kw",
    [dict(), dict(batch_size=5), dict(batch_size=5, seed=SEEDS), dict(model="nqf", moments=True)],
    ids=["gd", "sgd-shared-seed", "sgd-own-seeds", "moments"],
)
def test_runs_with_their_own_data(kw):
    """X (R, n, p), Y (R, n, K): run r trains on (X[r], Y[r]); with one output, Y (R, n)."""
    X, Y = _data(n=12, p=4, K=2, seed=3, runs=RUNS)
    U0, V0 = nqf.two_layer_init(4, 3, 2, 0.5, seed=[10, 11, 12])
    kw = dict(lr=0.1, steps=25, activation="softplus0", record_every=5, record_outputs=True) | kw
    stacked = nqf.train_two_layer(X, Y, U0, V0, stacked=True, **kw)
    for r in range(RUNS):
        single = kw | ({"seed": SEEDS[r]} if isinstance(kw.get("seed"), list) else {})
        _same(stacked, r, nqf.train_two_layer(X[r], Y[r], U0[r], V0[r], **single))
    U1, V1 = nqf.two_layer_init(4, 3, 1, 0.5, seed=[10, 11, 12])
    one = nqf.train_two_layer(X, Y[..., 0], U1, V1[..., 0], stacked=True, lr=0.1, steps=5)
    alone = nqf.train_two_layer(X[1], Y[1, :, 0], U1[1], V1[1], lr=0.1, steps=5)
    np.testing.assert_allclose(one.loss[1], alone.loss, rtol=1e-12, atol=0)


@pytest.mark.parametrize("model", ["network", "nqf"])
def test_online_runs_each_on_its_own_teacher(model):
    teachers = [nqf.make_teacher(p=6, k=2, norm=1.5, seed=r) for r in range(RUNS)]
    X, _ = ts.evaluation_set(teachers[0], n=40, seed=7)
    Y = torch.stack([t(X) for t in teachers])[..., None]  # (R, n, 1): own targets
    seeds = [20 + r for r in range(RUNS)]
    U0, V0 = nqf.two_layer_init(6, 5, 1, 0.3, seed=[10, 11, 12])
    common = dict(
        lr=0.05, steps=60, model=model, record_every=7, record_outputs=True, record_weights=True
    )
    stream = nqf.online_stream(teachers, batch_size=4, steps=60, seed=seeds)
    stacked = nqf.train_two_layer(X, Y, U0, V0, stream=stream, stacked=True, **common)
    for r in range(RUNS):
        alone_stream = nqf.online_stream(teachers[r], batch_size=4, steps=60, seed=seeds[r])
        alone = nqf.train_two_layer(X, Y[r], U0[r], V0[r], stream=alone_stream, **common)
        _same(stacked, r, alone, tol=1e-13)


def test_a_shared_stream_trains_every_run_on_the_same_batches():
    teacher = nqf.make_teacher(p=4, k=2, seed=1)
    X, y = ts.evaluation_set(teacher, n=30, seed=3)
    U0, V0 = nqf.two_layer_init(4, 3, 1, 0.3, seed=[1, 2])
    stream = nqf.online_stream(teacher, batch_size=3, steps=20, seed=5)
    stacked = nqf.train_two_layer(X, y, U0, V0, stream=stream, lr=0.1, steps=20, stacked=True)
    for r in range(2):
        alone = nqf.train_two_layer(X, y, U0[r], V0[r], stream=stream, lr=0.1, steps=20)
        np.testing.assert_allclose(stacked.run(r).loss, alone.loss, rtol=1e-12, atol=0)


def test_stacked_stream_reads_each_runs_own_stream():
    teachers = [nqf.make_teacher(p=5, k=2, seed=r) for r in range(RUNS)]
    many = nqf.online_stream(teachers, batch_size=3, steps=4, seed=[7, 8, 9])
    one_teacher = nqf.online_stream(teachers[0], batch_size=3, steps=4, seed=[7, 8, 9])
    one_seed = nqf.online_stream(teachers, batch_size=3, steps=4, seed=7)
    for r, t in enumerate(teachers):
        alone = nqf.online_stream(t, batch_size=3, steps=4, seed=7 + r)
        first = nqf.online_stream(teachers[0], batch_size=3, steps=4, seed=7 + r)
        same_x = nqf.online_stream(t, batch_size=3, steps=4, seed=7)
        for step in range(4):
            for got, want in ((many, alone), (one_teacher, first), (one_seed, same_x)):
                assert torch.equal(got(step)[0][r], want(step)[0])
                assert torch.equal(got(step)[1][r], want(step)[1])
    with pytest.raises(ValueError, match="argument `seed`"):
        nqf.online_stream(teachers, batch_size=3, steps=4, seed=[1])
    with pytest.raises(ValueError, match="argument `teacher`"):
        nqf.online_stream([teachers[0], nqf.make_teacher(p=4, k=2)], batch_size=3, steps=4)
    with pytest.raises(TypeError, match="argument `teacher`"):
        nqf.online_stream([teachers[0], "t"], batch_size=3, steps=4)
    with pytest.raises(ValueError, match="argument `t`"):
        many(4)


def test_bad_arguments_are_named():
    X, Y = _data()
    U0, V0 = nqf.two_layer_init(5, 7, 3, 0.3, seed=[1, 2])
    call = dict(lr=0.1, steps=3)
    with pytest.raises(TypeError, match="`seed`"):  # seeds need stacked runs
        nqf.train_two_layer(X, Y, U0[0], V0[0], seed=[1, 2], batch_size=4, **call)
    with pytest.raises(ValueError, match="`seed`"):
        nqf.train_two_layer(X, Y, U0, V0, seed=[1, 2, 3], batch_size=4, stacked=True, **call)
    with pytest.raises(ValueError, match="`U0`"):
        nqf.train_two_layer(X, Y, U0[0], V0[0], stacked=True, **call)
    with pytest.raises(ValueError, match="`V0`"):
        nqf.train_two_layer(X, Y, U0, V0[:1], stacked=True, **call)
    with pytest.raises(ValueError, match="`X`"):  # X for 3 runs, 2 runs
        nqf.train_two_layer(torch.stack([X] * 3), Y, U0, V0, stacked=True, **call)
    with pytest.raises(ValueError, match="`Y`"):  # targets for 3 runs
        nqf.train_two_layer(X, torch.stack([Y] * 3), U0, V0, stacked=True, **call)
    with pytest.raises(ValueError, match="`Y`"):  # per-run Y, one run
        nqf.train_two_layer(X, torch.stack([Y] * 2), U0[0], V0[0], **call)
    with pytest.raises(TypeError, match="`stream`"):
        nqf.train_two_layer(X, Y, U0, V0, stream=[lambda t: t], stacked=True, **call)
    with pytest.raises(ValueError, match="`stream`"):  # a batch for 3 runs
        nqf.train_two_layer(
            X, Y, U0, V0, stacked=True, stream=lambda t: (torch.stack([X[:2]] * 3), Y[:2]), **call
        )
    run = nqf.train_two_layer(X, Y, U0, V0, stacked=True, **call)
    with pytest.raises(ValueError, match="argument `r`"):
        run.run(2)
    with pytest.raises(ValueError, match="argument `r`"):
        nqf.train_two_layer(X, Y, U0[0], V0[0], **call).run(0)


def test_a_diverging_run_raises_with_advice():
    X, Y = _data()
    U0, V0 = nqf.two_layer_init(5, 7, 3, [0.3, 3.0], seed=[1, 2])
    with pytest.raises(DivergenceError, match="smaller step"):
        nqf.train_two_layer(X, Y, U0, V0, lr=50.0, steps=200, model="nqf", stacked=True)


@pytest.mark.parametrize("stacked", [False, True])
def test_an_online_stream_checked_once_trains_as_any_stream(stacked):
    """train_two_layer checks the batches of an online_stream once, before step 0, not at
    every step: the run is that of the same batches from a plain function, to the bit."""
    teachers = [nqf.make_teacher(p=5, k=2, seed=r) for r in range(RUNS)]
    X, _ = ts.evaluation_set(teachers[0], n=20, seed=2)
    Y = torch.stack([t(X) for t in teachers])[..., None]
    U0, V0 = nqf.two_layer_init(5, 4, 1, 0.3, seed=SEEDS)
    if stacked:
        stream = nqf.online_stream(teachers, batch_size=3, steps=30, seed=SEEDS)
    else:
        U0, V0, Y = U0[0], V0[0], Y[0]
        stream = nqf.online_stream(teachers[0], batch_size=3, steps=30, seed=5)
    assert isinstance(stream, ts.OnlineStream)
    common = dict(lr=0.05, steps=30, stacked=stacked, record_every=4, record_outputs=True)
    for model in ("network", "nqf"):
        fast = nqf.train_two_layer(X, Y, U0, V0, stream=stream, model=model, **common)
        slow = nqf.train_two_layer(X, Y, U0, V0, stream=lambda t: stream(t), model=model, **common)
        assert torch.equal(fast.outputs, slow.outputs) and torch.equal(fast.U, slow.U)
    bad = ts.OnlineStream(stream.X.clone(), stream.Y.clone())
    bad.X[7].view(-1)[0] = float("nan")  # a bad batch is refused before any step
    with pytest.raises(ValueError, match="argument `stream`: expected finite"):
        nqf.train_two_layer(X, Y, U0, V0, stream=bad, **common)
    with pytest.raises(ValueError, match="the stream holds steps 0..29"):
        nqf.train_two_layer(X, Y, U0, V0, stream=stream, **(common | {"steps": 31}))
