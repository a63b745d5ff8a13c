"""Ensembles of two-layer networks (nqf_mini.two_layer_ensemble): every member is the single run.

The oracle is :func:`nqf_mini.train_two_layer`, run member by member from the same initial
weights: the stacked ensemble must reproduce its losses, outputs and weights to round-off, for
gradient descent, minibatch SGD (one minibatch seed per member) and Adam, for the network and
for its NQF.
"""

import numpy as np
import pytest
import torch

from nqf_mini import DivergenceError, train_two_layer, two_layer_init
from nqf_mini.two_layer_ensemble import train_two_layer_ensemble, two_layer_ensemble_init

torch.set_num_threads(1)


def _data(n=16, p=5, K=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, p, generator=gen, dtype=torch.float64)
    Y = torch.randn(n, K, generator=gen, dtype=torch.float64)
    return X, Y


def test_init_stacks_the_single_draws_at_their_scales():
    U0, V0 = two_layer_ensemble_init(5, 7, 3, [0.1, 0.2, 0.3], seeds=[4, 5, 6])
    assert U0.shape == (3, 5, 7) and V0.shape == (3, 7, 3)
    for r, (scale, seed) in enumerate(zip([0.1, 0.2, 0.3], [4, 5, 6])):
        u, v = two_layer_init(5, 7, 3, scale, seed=seed)
        assert torch.equal(U0[r], u) and torch.equal(V0[r], v)


@pytest.mark.parametrize("model", ["network", "nqf"])
@pytest.mark.parametrize("kw", [dict(), dict(batch_size=4), dict(optimizer="adam")],
                         ids=["gd", "sgd", "adam"])
def test_every_member_follows_its_single_run(model, kw):
    X, Y = _data()
    seeds = [3, 8, 11]
    U0, V0 = two_layer_ensemble_init(5, 7, 3, 0.3, seeds=seeds)
    lr = 0.01 if kw.get("optimizer") == "adam" else 0.1
    extra = dict(seeds=seeds) if "batch_size" in kw else {}
    ens = train_two_layer_ensemble(X, Y, U0, V0, lr=lr, steps=60, model=model,
                                   record_every=10, record_outputs=True,
                                   record_weights=True, **kw, **extra)
    assert ens.loss.shape == (3, 7) and ens.outputs.shape == (3, 7, 16, 3)
    moved = 0.0
    for r, seed in enumerate(seeds):
        one = train_two_layer(X, Y, U0[r], V0[r], lr=lr, steps=60, model=model,
                              record_every=10, record_outputs=True, record_weights=True,
                              seed=seed, **kw)
        np.testing.assert_array_equal(ens.steps, one.steps)
        np.testing.assert_allclose(ens.loss[r], one.loss, rtol=1e-12, atol=0)
        assert (ens.outputs[r] - one.outputs).abs().max() < 1e-12
        assert (ens.U_traj[r] - one.U_traj).abs().max() < 1e-12
        assert (ens.V_traj[r] - one.V_traj).abs().max() < 1e-12
        assert (ens.V[r] - one.V).abs().max() < 1e-12
        moved = max(moved, (one.U - U0[r]).abs().max().item())
    assert moved > 1e-2  # the runs did train, so the comparison is not between starts


def test_minibatch_seeds_differ_between_members():
    X, Y = _data()
    U0, V0 = two_layer_ensemble_init(5, 7, 3, 0.3, seeds=[1, 1])  # two equal starts
    ens = train_two_layer_ensemble(X, Y, U0, V0, lr=0.1, steps=20, batch_size=4,
                                   seeds=[0, 1])
    assert abs(ens.loss[0, -1] - ens.loss[1, -1]) > 1e-6  # other batches, other path


def test_bad_input_names_the_argument():
    X, Y = _data()
    U0, V0 = two_layer_ensemble_init(5, 7, 3, 0.3, seeds=[1, 2])
    with pytest.raises(ValueError, match="`seeds`"):
        train_two_layer_ensemble(X, Y, U0, V0, lr=0.1, steps=5, batch_size=4)
    with pytest.raises(ValueError, match="`V0`"):
        train_two_layer_ensemble(X, Y, U0, V0[:1], lr=0.1, steps=5)
    with pytest.raises(ValueError, match="`U0`"):
        train_two_layer_ensemble(X, Y, U0[0], V0, lr=0.1, steps=5)
    with pytest.raises(ValueError, match="`scale`"):
        two_layer_ensemble_init(5, 7, 3, [0.1, 0.2], seeds=[1, 2, 3])
    with pytest.raises(TypeError, match="`seeds`"):
        two_layer_ensemble_init(5, 7, 3, 0.1, seeds=3)


def test_a_diverging_member_raises_with_advice():
    X, Y = _data()
    U0, V0 = two_layer_ensemble_init(5, 7, 3, [0.3, 3.0], seeds=[1, 2])
    with pytest.raises(DivergenceError, match="smaller step"):
        train_two_layer_ensemble(X, Y, U0, V0, lr=50.0, steps=200, model="nqf")
