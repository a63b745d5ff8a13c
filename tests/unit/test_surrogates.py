"""The NQF of an architecture as a module (nqf_mini.surrogates), against oracles.

* The closed forms (vectorised or per sample) against the general form extracted by
  autograd (:func:`nqf_mini.quadratic_expansion`, a Hessian of the module itself).
* The vectorised networks against ``arch.f`` called sample by sample.
* The NQF trained by ``train_module`` against ``simulate_W`` on the stacked structure
  matrices (a second implementation of the same training).
* ``nqf_floor`` against least squares written out for the MLP, whose NQF is a linear
  model.
"""

from __future__ import annotations

import pytest
import torch

import nqf_mini as nqf
from nqf_mini.surrogates import (
    Expansions,
    best_quadratic_form,
    network_module,
    nqf_floor,
    nqf_module,
)

from ..conftest import tolerance

CASES = [
    ("mlp", dict(n_in=4)),
    ("mlp", dict(n_in=3, bias="trainable")),
    ("mlp", dict(n_in=3, phi="sigmoid")),  # ZGZ fails: g = phi(0) e_v
    ("mlp", dict(n_in=3, bias="frozen", b0=0.4)),
    ("attention", dict(n_in=3, n_tokens=4, h=2, h_v=2)),
    ("qk_attention", dict(n_in=3, n_tokens=4, h=2, n_heads=3)),
    ("moe", dict(n_in=3, gate="tanh")),
    ("moe", dict(n_in=3, gate="sigmoid")),
    ("moe", dict(n_in=3, gate="softmax", n_experts=3)),  # B != 0, d fixed
    ("moe", dict(n_in=3, gate="sigmoid", expert="neuron")),  # gate invisible in A
    ("cnn", dict(c_in=1, length=5, k=2)),  # no vectorised form: the loop
    ("phase_retrieval", dict(n_in=3)),
]


def _data(arch, n, seed=0):
    """n sample inputs stacked along a leading axis (tensors or tuples of tensors)."""
    samples = [arch.sample_input(seed + i) for i in range(n)]
    if isinstance(samples[0], torch.Tensor):
        return torch.stack(samples), samples
    return tuple(torch.stack(parts) for parts in zip(*samples)), samples


def _units(arch):
    return arch.n_units or 3


@pytest.mark.parametrize("name, params", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_nqf_module_is_the_autograd_general_form(name, params):
    arch = nqf.make_architecture(name, **params)
    xs, samples = _data(arch, 5)
    d = _units(arch)
    W = 0.3 * torch.randn(
        arch.p, d, generator=torch.Generator().manual_seed(1), dtype=torch.float64
    )
    quad = nqf_module(arch)
    oracle = torch.stack(
        [nqf.quadratic_expansion(arch.f, x, arch.p, d=max(d, 2)).predict(W) for x in samples]
    )
    assert torch.allclose(quad.batch(xs)(W), oracle, atol=1e-10, rtol=1e-10)
    assert torch.allclose(quad(W, samples[0]), oracle[0], atol=1e-10, rtol=1e-10)
    stacked = torch.stack([W, -2 * W])  # two runs at once
    assert torch.allclose(quad.batch(xs)(stacked)[1], quad.batch(xs)(-2 * W), atol=1e-12)


@pytest.mark.parametrize("name, params", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_network_module_is_arch_f(name, params, dtype, device):
    arch = nqf.make_architecture(name, **params)
    xs, samples = _data(arch, 4)
    W = 0.5 * torch.randn(
        2,
        arch.p,
        _units(arch),
        generator=torch.Generator().manual_seed(2),
        dtype=torch.float64,
    )
    oracle = torch.stack([torch.stack([arch.f(w, x) for x in samples]) for w in W])
    cast = lambda t: t.to(device, dtype)
    xs_d = cast(xs) if isinstance(xs, torch.Tensor) else tuple(cast(t) for t in xs)
    got = network_module(arch).batch(xs_d)(cast(W))
    assert got.dtype == dtype and got.device.type == device.type
    assert torch.allclose(got.cpu().double(), oracle, atol=100 * tolerance(dtype), rtol=1e-4)
    one = network_module(arch).batch(xs_d)(cast(W[0]))
    assert one.shape == (4,)


def test_vectorised_closed_forms_match_the_per_sample_ones(dtype):
    for name, params in CASES:
        arch = nqf.make_architecture(name, **params)
        xs, samples = _data(arch, 3, seed=7)
        xs = xs.to(dtype) if isinstance(xs, torch.Tensor) else tuple(t.to(dtype) for t in xs)
        forms = nqf_module(arch).expansions(xs)
        assert forms.A.dtype == dtype
        for i, x in enumerate(samples):
            e = arch.expansion(x)
            assert torch.allclose(forms.A[i].double(), e.A, atol=tolerance(dtype))
            assert torch.allclose(forms.f0[i].double(), e.f0, atol=tolerance(dtype))
            g = torch.zeros(arch.p, dtype=torch.float64) if forms.g is None else forms.g[i]
            assert torch.allclose(g.double(), e.g, atol=tolerance(dtype))


@pytest.mark.parametrize("optimizer, batch_size", [("sgd", None), ("sgd", 4), ("adam", None)])
def test_nqf_trained_by_train_module_is_simulate_w(optimizer, batch_size, dtype, device):
    arch = nqf.make_architecture("attention", n_in=3, n_tokens=4, h=2, h_v=2)
    xs, samples = _data(arch, 12)
    gen = torch.Generator().manual_seed(3)
    y = torch.randn(12, generator=gen, dtype=torch.float64)
    W0 = 0.1 * torch.randn(arch.p, 4, generator=gen, dtype=torch.float64)
    A = torch.stack([arch.A(x) for x in samples])
    lr = 0.05 if optimizer == "sgd" else 0.01
    ref = nqf.simulate_W(
        A,
        y,
        W0,
        lr=lr,
        steps=30,
        batch_size=batch_size,
        seed=4,
        optimizer=optimizer,
        record_every=10,
    )
    cast = lambda t: t.to(device, dtype)
    run = nqf.train_module(
        nqf_module(arch),
        tuple(cast(t) for t in xs),
        cast(y),
        cast(W0),
        lr=lr,
        steps=30,
        batch_size=batch_size,
        seed=4,
        optimizer=optimizer,
        record_every=10,
    )
    assert run.W.dtype == dtype and run.W.device.type == device.type
    assert torch.allclose(run.W.cpu().double(), ref.W, atol=100 * tolerance(dtype))
    assert abs(run.loss[-1] - ref.loss[-1]) <= 100 * tolerance(dtype) * max(1, ref.loss[0])


def test_vectorised_network_trains_like_vmap():
    arch = nqf.make_architecture("moe", n_in=3, gate="tanh")
    xs, _ = _data(arch, 10)
    gen = torch.Generator().manual_seed(5)
    y = torch.randn(10, generator=gen, dtype=torch.float64)
    W0 = 0.2 * torch.randn(arch.p, 4, generator=gen, dtype=torch.float64)
    a = nqf.train_module(arch.f, xs, y, W0, lr=0.05, steps=25, batch_size=3)
    b = nqf.train_module(network_module(arch), xs, y, W0, lr=0.05, steps=25, batch_size=3)
    assert torch.allclose(a.W, b.W, atol=1e-13) and abs(a.loss - b.loss).max() < 1e-13


def test_module_pair():
    arch = nqf.make_architecture("mlp", n_in=3)
    net, quad = nqf.module_pair(arch)
    assert net.arch is arch and quad.arch is arch
    W = 1e-3 * torch.randn(
        arch.p, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64
    )
    x = arch.sample_input(1)
    assert abs(float(net(W, x) - quad(W, x))) < 1e-10  # the remainder is O(|W|^4)


def test_nqf_floor_is_the_best_linear_fit_for_the_mlp():
    arch = nqf.make_architecture("mlp", n_in=4, phi="tanh")
    gen = torch.Generator().manual_seed(6)
    X = torch.randn(40, 4, generator=gen, dtype=torch.float64)
    y = torch.tanh(2 * X[:, 0]) + 0.3 * X[:, 1] ** 2
    forms = nqf_module(arch).expansions(X)
    beta = torch.linalg.lstsq(X, y[:, None]).solution  # f_NQF = x^T U v: linear
    oracle = 0.5 * float((X @ beta - y[:, None]).square().mean())
    assert abs(nqf_floor(forms.A, y, forms.f0) - oracle) < 1e-12
    # an NQF teacher is fitted exactly; the NQF trained long reaches the floor of a tanh
    # one
    W_star = torch.randn(arch.p, 2, generator=gen, dtype=torch.float64)
    assert nqf_floor(forms.A, nqf_module(arch).batch(X)(W_star)) < 1e-25
    run = nqf.train_module(
        nqf_module(arch),
        X,
        y,
        0.1 * torch.randn(arch.p, 3, generator=gen, dtype=torch.float64),
        lr=0.1,
        steps=2000,
        record_every=2000,
    )
    assert abs(run.loss[-1] / oracle - 1) < 1e-6


def test_best_quadratic_form_reaches_the_floor_on_every_target():
    # qk attention: f0 = d mean(y) and an off-diagonal A; three targets at once
    arch = nqf.make_architecture("qk_attention", n_in=3, n_tokens=4, n_heads=2)
    gen = torch.Generator().manual_seed(11)
    xs = tuple(
        torch.randn(60, *shape, generator=gen, dtype=torch.float64)
        for shape in ((3,), (3, 4), (4,))
    )
    forms = nqf_module(arch).expansions(xs)
    Y = torch.randn(3, 60, generator=gen, dtype=torch.float64)
    M = best_quadratic_form(forms.A, Y, forms.f0)
    assert M.shape == (3, arch.p, arch.p) and torch.equal(M, M.transpose(1, 2))
    fitted = forms.f0 + torch.einsum("npq,rpq->rn", forms.A, M)
    floors = nqf_floor(forms.A, Y, forms.f0)
    assert floors.shape == (3,)
    for r in range(3):  # the loss of M is the floor, which matches the one-target call
        assert abs(0.5 * float((fitted[r] - Y[r]).square().mean()) - floors[r]) < 1e-12
        assert abs(nqf_floor(forms.A, Y[r], forms.f0) - floors[r]) < 1e-12
        assert torch.allclose(best_quadratic_form(forms.A, Y[r], forms.f0), M[r])
    # the residual is orthogonal to every feature Tr[E A_mu] (normal equations)
    E = torch.randn(arch.p, arch.p, generator=gen, dtype=torch.float64)
    feature = torch.einsum("npq,pq->n", forms.A, E + E.T)
    assert abs(float(feature @ (fitted[0] - Y[0]))) < 1e-9 * float(feature.norm() * Y[0].norm())


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="`arch`"):
        nqf_module("mlp")
    with pytest.raises(TypeError, match="`arch`"):
        network_module(3)
    arch = nqf.make_architecture("qk_attention", n_in=3, n_tokens=4, n_heads=3)
    xs, _ = _data(arch, 2)
    forms = nqf_module(arch).expansions(xs)
    assert isinstance(forms, Expansions)
    with pytest.raises(ValueError, match="`W`"):
        forms(torch.zeros(arch.p, 5, dtype=torch.float64))  # f0 = 3 mean(y) needs d = 3
    with pytest.raises(ValueError, match="`W`"):
        forms(torch.zeros(arch.p + 1, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="`A`"):
        nqf_floor(torch.zeros(3, 2, 3), torch.zeros(3))
    with pytest.raises(ValueError, match="`y`"):
        nqf_floor(torch.zeros(3, 2, 2), torch.zeros(4))
    with pytest.raises(ValueError, match="`y`"):
        best_quadratic_form(torch.zeros(3, 2, 2), torch.zeros(2, 4))
