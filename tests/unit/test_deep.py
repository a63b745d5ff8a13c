"""Deep networks and their layer-wise NQF (Chapter 9, ours), against oracles.

* The networks against straightforward per-sample implementations (loops over layers and
  heads; layer 2 of the attention model is ``MultiHeadAttention.f`` of Chapter 2).
* The layer-wise NQF against the structure matrices of each block extracted by autograd
  (:func:`nqf_mini.structure_matrix`, :func:`nqf_mini.quadratic_expansion`), composed by
  hand; for L = 2 against the two-layer NQF of Chapter 2.
* Closure: gradient descent on the layer-wise NQF from theta and from theta with every
  layer's units rotated gives the same outputs; on the network it does not.
"""

from __future__ import annotations

import math

import pytest
import torch

import nqf_mini as nqf
from nqf_mini.architectures._helpers import unit_blocks
from nqf_mini.deep import DeepAttention, DeepMLP, rotate_units
from nqf_mini.surrogates import nqf_module

from ..conftest import tolerance

MLP = DeepMLP(n_in=3, widths=(4, 5, 4))
ATT = DeepAttention(n_in=3, n_tokens=4, h=2, h_v=2, d1=3, d2=2)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _mlp_reference(theta, x, kind="network"):
    """Per-layer slices written out: W1 (4, 3), W2 (5, 4), W3 (4, 5), w4 (4,)."""
    W1, rest = theta[:12].reshape(4, 3), theta[12:]
    W2, rest = rest[:20].reshape(5, 4), rest[20:]
    W3, w4 = rest[:20].reshape(4, 5), rest[20:]
    if kind == "network":
        return w4 @ torch.tanh(W3 @ torch.tanh(W2 @ torch.tanh(W1 @ x)))
    if kind == "nqf":
        return w4 @ W3 @ torch.tanh(W2 @ W1 @ x)
    return w4 @ W3 @ W2 @ W1 @ x


def _att_reference(theta, q, X):
    """Layer 1 head by head and token by token, then MultiHeadAttention.f."""
    W1 = theta[: ATT.p1 * ATT.d1].reshape(ATT.p1, ATT.d1)
    W2 = theta[ATT.p1 * ATT.d1 :].reshape(ATT.readout.p, ATT.d2)
    hn, vn = ATT.h * ATT.n_in, ATT.h_v * ATT.n_in
    Q, K = unit_blocks(W1, 0, (2, 3)), unit_blocks(W1, hn, (2, 3))
    V, O = unit_blocks(W1, 2 * hn, (2, 3)), unit_blocks(W1, 2 * hn + vn, (3, 2))

    def layer1(z):
        out = z.clone()
        for i in range(ATT.d1):
            a = torch.softmax((K[i] @ X).T @ (Q[i] @ z) / math.sqrt(2), dim=0)
            out = out + O[i] @ V[i] @ X @ a
        return out

    X1 = torch.stack([layer1(X[:, t]) for t in range(X.shape[1])], dim=1)
    return ATT.readout.f(W2, (layer1(q), X1))


def test_networks_match_the_written_out_ones():
    theta = MLP.init(0.7, seed=1)
    x = torch.randn(3, generator=_gen(2), dtype=torch.float64)
    for kind in ("network", "nqf", "leading"):
        assert torch.allclose(
            MLP.forward(theta, x, kind), _mlp_reference(theta, x, kind), atol=1e-14
        )
    theta = ATT.init(0.6, seed=3)
    q, X = (
        torch.randn(3, generator=_gen(4), dtype=torch.float64),
        torch.randn(3, 4, generator=_gen(5), dtype=torch.float64),
    )
    assert torch.allclose(ATT.f(theta, (q, X)), _att_reference(theta, q, X), atol=1e-13)


def test_two_layers_give_the_nqf_of_chapter_2():
    model = DeepMLP(n_in=4, widths=(6,))
    theta = model.init(0.5, seed=6)
    xs = torch.randn(7, 4, generator=_gen(7), dtype=torch.float64)
    U = model.units(theta)[0]  # (n_in + 1, d), [u_i; v_i]
    arch = nqf.make_architecture("mlp", n_in=4, phi="tanh")
    assert torch.allclose(
        model.module("nqf").batch(xs)(theta), nqf_module(arch).batch(xs)(U), atol=1e-14
    )
    assert torch.allclose(
        model.module("network").batch(xs)(theta),
        torch.stack([arch.f(U, x) for x in xs]),
        atol=1e-14,
    )


def test_mlp_layerwise_nqf_is_composed_from_autograd_structure_matrices():
    theta = MLP.init(0.6, seed=8)
    x = torch.randn(3, generator=_gen(9), dtype=torch.float64)
    U1, U2 = MLP.units(theta)  # (3 + 5, 4), (5 + 1, 4)
    M1, M2 = MLP.order_parameters(theta)
    assert torch.allclose(M1, U1 @ U1.T) and torch.allclose(M2, U2 @ U2.T)

    def block1(c):  # output c of block 1
        return lambda U, x: U[3:, :][c] @ torch.tanh(U[:3, :].T @ x)

    h = torch.stack([torch.sum(M1 * nqf.structure_matrix(block1(c), x, 8)) for c in range(5)])
    block2 = lambda U, z: U[5] @ torch.tanh(U[:5].T @ z)
    A2 = nqf.structure_matrix(block2, torch.tanh(h), 6)
    assert torch.allclose(MLP.nqf(theta, x), torch.sum(M2 * A2), atol=1e-12)


def test_attention_layerwise_nqf_is_composed_from_autograd_expansions():
    theta = ATT.init(0.5, seed=10)
    q = torch.randn(3, generator=_gen(11), dtype=torch.float64)
    X = torch.randn(3, 4, generator=_gen(12), dtype=torch.float64)
    W1, W2 = ATT.units(theta)
    M1 = W1 @ W1.T

    def shift(a):  # coordinate a of layer 1, minus z
        return lambda W, x: ATT.layer1(W, *x)[a] - x[0][a]

    for z in (q, X[:, 0]):
        quad = [nqf.quadratic_expansion(shift(a), (z, X), ATT.p1) for a in range(3)]
        assert all(e.zgz for e in quad)
    xbar_shift = torch.stack(
        [torch.sum(M1 * nqf.quadratic_expansion(shift(a), (q, X), ATT.p1).A) for a in range(3)]
    )  # the same for every token
    readout = nqf_module(ATT.readout)
    X1 = X + xbar_shift[:, None]
    assert torch.allclose(ATT.nqf(theta, (q, X)), readout(W2, (q + xbar_shift, X1)), atol=1e-12)
    assert torch.allclose(ATT.leading(theta, (q, X)), readout(W2, (q, X)), atol=1e-12)


def test_remainders_shrink_like_the_square_of_the_scale():
    for model, x in [
        (MLP, torch.randn(3, generator=_gen(13), dtype=torch.float64)),
        (
            ATT,
            (
                torch.randn(3, generator=_gen(14), dtype=torch.float64),
                torch.randn(3, 4, generator=_gen(15), dtype=torch.float64),
            ),
        ),
    ]:
        theta = model.init(1.0, seed=16)
        scales = torch.tensor([1e-3, 1e-2], dtype=torch.float64)
        for kind in ("nqf", "leading"):
            gaps = [
                abs(float(model.forward(s * theta, x, kind) / model.f(s * theta, x) - 1))
                for s in scales
            ]
            assert abs(math.log(gaps[1] / gaps[0]) / math.log(10) - 2) < 0.05


@pytest.mark.parametrize("model", [MLP, ATT], ids=["mlp", "attention"])
def test_gradient_descent_on_the_layerwise_nqf_closes_on_the_order_parameters(model):
    gen = _gen(17)
    if model is MLP:
        xs = torch.randn(10, 3, generator=gen, dtype=torch.float64)
    else:
        xs = (
            torch.randn(10, 3, generator=gen, dtype=torch.float64),
            torch.randn(10, 3, 4, generator=gen, dtype=torch.float64),
        )
    y = torch.randn(10, generator=gen, dtype=torch.float64)
    theta = model.init(0.3, seed=18)
    rotated = rotate_units(model, theta, seed=19)
    for M, M_rot in zip(model.order_parameters(theta), model.order_parameters(rotated)):
        assert torch.allclose(M, M_rot, atol=1e-13)
    assert not torch.allclose(theta, rotated)
    pair = torch.stack([theta, rotated])
    gap = {}
    for kind in ("nqf", "network"):
        run = nqf.train_module(
            model.module(kind),
            xs,
            y,
            pair,
            lr=0.05,
            steps=30,
            stacked=True,
            record_every=10,
        )
        gap[kind] = nqf.relative_gap(run.outputs[:, 1], run.outputs[:, 0]).max()
    assert gap["nqf"] < 1e-12 < 1e-4 < gap["network"]
    assert torch.allclose(model.from_units(model.units(theta)), theta)


@pytest.mark.parametrize("model", [MLP, ATT], ids=["mlp", "attention"])
def test_stacked_batches_match_single_calls(model, dtype, device):
    gen = _gen(20)
    if model is MLP:
        xs = torch.randn(5, 3, generator=gen, dtype=torch.float64)
        samples = list(xs)
    else:
        xs = (
            torch.randn(5, 3, generator=gen, dtype=torch.float64),
            torch.randn(5, 3, 4, generator=gen, dtype=torch.float64),
        )
        samples = list(zip(*xs))
    thetas = torch.stack([model.init(0.4, seed=s) for s in (21, 22)])
    cast = lambda t: t.to(device, dtype)
    xs_d = cast(xs) if isinstance(xs, torch.Tensor) else tuple(cast(t) for t in xs)
    for kind in ("network", "nqf", "leading"):
        got = model.module(kind).batch(xs_d)(cast(thetas))
        assert got.shape == (2, 5) and got.dtype == dtype and got.device.type == device.type
        ref = torch.stack(
            [torch.stack([model.forward(th, x, kind) for x in samples]) for th in thetas]
        )
        assert torch.allclose(got.cpu().double(), ref, atol=100 * tolerance(dtype))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="`widths`"):
        DeepMLP(widths=(4, 4))
    with pytest.raises(TypeError, match="`widths`"):
        DeepMLP(widths=[4, 4, 4])
    with pytest.raises(ValueError, match="`phi`"):
        DeepMLP(phi="sigmoid")
    with pytest.raises(ValueError, match="`n_tokens`"):
        DeepAttention(n_tokens=1)
    with pytest.raises(ValueError, match="`theta`"):
        MLP.units(torch.zeros(MLP.P + 1, dtype=torch.float64))
    with pytest.raises(ValueError, match="`kind`"):
        MLP.module("linear")
    with pytest.raises(ValueError, match="`scale`"):
        ATT.init(-1.0)
    with pytest.raises(TypeError, match="`model`"):
        rotate_units("mlp", torch.zeros(3))
