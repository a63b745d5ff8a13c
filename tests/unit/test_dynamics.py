"""Theorem 2: weight-space training (autograd) and the closed M-space dynamics agree."""

import numpy as np
import pytest
import torch

from nqf_mini import DivergenceError, simulate_M, simulate_M_mu, simulate_W
from nqf_mini.training import minibatches

torch.set_num_threads(1)


def _problem(n=16, p=5, d=7, seed=0, scale=0.3):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, p, p, generator=gen, dtype=torch.float64)
    A = (X + X.transpose(1, 2)) / (2 * p)  # (n, p, p) symmetric
    y = torch.randn(n, generator=gen, dtype=torch.float64)
    W0 = scale * torch.randn(p, d, generator=gen, dtype=torch.float64)
    return A, y, W0


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize(
    "kw", [dict(), dict(batch_size=4), dict(method="flow", lr=0.01)], ids=["gd", "sgd", "flow"]
)
def test_weight_space_matches_m_space(kw, device, dtype):
    A, y, W0 = _problem()
    kw = dict(kw)
    lr = kw.pop("lr", 0.05)
    f0 = torch.linspace(-0.2, 0.2, A.shape[0])
    common = dict(lr=lr, steps=120, f0=f0, record_every=40, device=device, dtype=dtype, **kw)
    rw = simulate_W(A, y, W0, **common)
    rm = simulate_M(A, y, W0 @ W0.T, **common)
    assert rw.loss.shape == (121,) and rw.loss[-1] < rw.loss[0]
    assert rw.f.shape == (4, 16) and rm.M_traj.shape == (4, 5, 5)
    assert list(rm.steps) == list(rw.steps) == [0, 40, 80, 120] and np.allclose(
        rm.times, rm.steps * lr
    )
    if dtype == torch.float64:
        assert np.max(np.abs(rw.loss - rm.loss)) <= 1e-10
        assert (rw.f - rm.f).abs().max().item() <= 1e-10
        assert (rw.M - rm.M).abs().max().item() <= 1e-10
    else:
        assert _rel(rw.loss, rm.loss) <= 1e-4
        assert ((rw.M - rm.M).abs().max() / rm.M.abs().max()).item() <= 1e-4


def test_same_m0_same_losses_gd_sgd_but_not_adam():
    A, y, W0 = _problem()
    R, _ = torch.linalg.qr(
        torch.randn(7, 7, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    )
    for kw in (dict(), dict(batch_size=4)):
        a = simulate_W(A, y, W0, 0.05, 100, device="cpu", **kw)
        b = simulate_W(A, y, W0 @ R, 0.05, 100, device="cpu", **kw)
        assert np.max(np.abs(a.loss - b.loss)) <= 1e-12
    a = simulate_W(A, y, W0, 0.05, 100, optimizer="adam", device="cpu")
    b = simulate_W(A, y, W0 @ R, 0.05, 100, optimizer="adam", device="cpu")
    assert np.max(np.abs(a.loss - b.loss)) > 1e-3


def test_same_seed_same_output_and_shared_minibatches():
    A, y, W0 = _problem()
    a = simulate_M(A, y, W0 @ W0.T, 0.05, 50, batch_size=3, seed=7, device="cpu")
    b = simulate_M(A, y, W0 @ W0.T, 0.05, 50, batch_size=3, seed=7, device="cpu")
    c = simulate_M(A, y, W0 @ W0.T, 0.05, 50, batch_size=3, seed=8, device="cpu")
    np.testing.assert_array_equal(a.loss, b.loss)
    assert np.max(np.abs(a.loss - c.loss)) > 1e-6
    batches = list(minibatches(10, 3, 600, seed=1))  # crosses a drawing chunk
    assert len(batches) == 600 and all(len(set(x.tolist())) == 3 for x in batches)


def test_general_form_closes_on_m_and_mu():
    A, y, W0 = _problem()
    gen = torch.Generator().manual_seed(2)
    g = 0.3 * torch.randn(16, 5, generator=gen, dtype=torch.float64)
    X = torch.randn(16, 5, 5, generator=gen, dtype=torch.float64)
    B = 0.05 * (X + X.transpose(1, 2))
    for bs in (None, 4):
        rw = simulate_W(A, y, W0, 0.05, 80, batch_size=bs, g=g, B=B, device="cpu")
        rm = simulate_M_mu(
            A, y, W0 @ W0.T, W0.sum(1), 7, 0.05, 80, g=g, B=B, batch_size=bs, device="cpu"
        )
        assert np.max(np.abs(rw.loss - rm.loss)) <= 1e-10
        assert (rw.mu - rm.mu).abs().max().item() <= 1e-10
        assert (rw.M - rm.M).abs().max().item() <= 1e-10


def test_divergence_raises_with_step_and_suggestion():
    A, y, W0 = _problem()
    with pytest.raises(DivergenceError, match=r"diverged at step \d+.*lr = 50") as info:
        simulate_M(A, y, W0 @ W0.T, 50.0, 100, device="cpu")
    assert isinstance(info.value, ValueError)
    assert 0 < info.value.suggested_lr < 50.0 and info.value.step >= 1
    with pytest.raises(DivergenceError):
        simulate_W(A, y, W0, 50.0, 100, device="cpu")


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda A, y, W0: simulate_M(A + torch.triu(torch.ones(5, 5), 1), y, W0 @ W0.T, 0.1, 5),
            "`A`.*symmetric",
        ),
        (lambda A, y, W0: simulate_M(A, y, -torch.eye(5), 0.1, 5), "`M0`.*positive semi-definite"),
        (lambda A, y, W0: simulate_M(A, y[:3], W0 @ W0.T, 0.1, 5), r"`y`.*expected shape \(16,\)"),
        (lambda A, y, W0: simulate_W(A, y, W0[:3], 0.1, 5), r"`W0`.*expected shape \(5, \*\)"),
        (lambda A, y, W0: simulate_W(A, y, W0, 0.0, 5), "`lr`.*> 0, got 0"),
        (lambda A, y, W0: simulate_W(A, y, W0, -1.0, 5), "`lr`"),
        (lambda A, y, W0: simulate_M(A, y, W0 @ W0.T, 0.1, 0), "`steps`.*>= 1, got 0"),
        (
            lambda A, y, W0: simulate_M(A, y, W0 @ W0.T, 0.1, 5, batch_size=17),
            "`batch_size`.*n = 16, got 17",
        ),
        (lambda A, y, W0: simulate_M(A, y, W0 @ W0.T, 0.1, 5, batch_size=0), "`batch_size`"),
        (
            lambda A, y, W0: simulate_M(A, y, W0 @ W0.T, 0.1, 5, batch_size=4, method="flow"),
            "`batch_size`",
        ),
        (lambda A, y, W0: simulate_M(A, y, W0 @ W0.T, 0.1, 5, method="euler"), "`method`"),
        (lambda A, y, W0: simulate_W(A, y, W0, 0.1, 5, optimizer="rmsprop"), "`optimizer`"),
        (lambda A, y, W0: simulate_W(A, y, W0, 0.1, 5, f0=torch.zeros(3)), "`f0`"),
    ],
)
def test_validation_names_the_argument(call, match):
    A, y, W0 = _problem()
    with pytest.raises(ValueError, match=match):
        call(A, y, W0)


def test_divergence_advice_respects_the_stability_bound():
    """The suggested lr is at most half of 2 / lambda_max(K), K computed here as a dense matrix."""
    gen = torch.Generator().manual_seed(3)
    X = torch.randn(12, 4, 4, generator=gen, dtype=torch.float64)
    A = (X + X.transpose(1, 2)) / 2
    y = torch.randn(12, generator=gen, dtype=torch.float64)
    M0 = torch.eye(4, dtype=torch.float64)
    flat = A.reshape(12, 16)
    K = 4.0 / 12 * torch.einsum("apq,qr,brp->ab", A, M0, A)  # (4/n) Tr[A_a M A_b]
    bound = 2.0 / torch.linalg.eigvalsh(K).max().item()
    lr = 20 * bound  # lr / 4 = 5 bound: not safe
    with pytest.raises(DivergenceError) as info:
        simulate_M(A, y, M0, lr, 50)
    assert info.value.suggested_lr <= 0.5 * bound * (1 + 1e-6)
    assert info.value.suggested_lr < lr / 4
    assert flat.shape == (12, 16)
    run = simulate_M(A, y, M0, info.value.suggested_lr, 200)  # the advice works
    assert run.loss[-1] < run.loss[0]


def test_momentum_matches_torch_sgd_and_closes_on_rotations():
    """Heavy-ball momentum equals torch.optim.SGD(momentum) and, unlike Adam, is
    rotation-equivariant."""
    gen = torch.Generator().manual_seed(5)
    X = torch.randn(10, 3, 3, generator=gen, dtype=torch.float64)
    A, y = (X + X.transpose(1, 2)) / 2, torch.randn(10, generator=gen, dtype=torch.float64)
    W0 = 0.3 * torch.randn(3, 4, generator=gen, dtype=torch.float64)
    run = simulate_W(A, y, W0, 0.05, 40, optimizer="momentum", momentum=0.8)
    W = W0.clone().requires_grad_(True)
    opt = torch.optim.SGD([W], lr=0.05, momentum=0.8)
    for _ in range(40):
        opt.zero_grad()
        r = torch.einsum("npq,pi,qi->n", A, W, W) - y
        (0.5 * (r * r).mean()).backward()
        opt.step()
    assert torch.allclose(run.W, W.detach(), atol=1e-12)
    R = torch.linalg.qr(torch.randn(4, 4, generator=gen, dtype=torch.float64))[0]
    rotated = simulate_W(A, y, W0 @ R, 0.05, 40, optimizer="momentum", momentum=0.8)
    assert np.allclose(run.loss, rotated.loss, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.5, 0.9)])
def test_adam_matches_torch_adam_from_the_first_step(betas):
    """simulate_W(optimizer='adam') against torch.optim.Adam on the same loss: the first steps
    are where the bias corrections 1 / (1 - beta^t) matter most, so compare after 1, 2 and 30
    steps (to 1e-12)."""
    A, y, W0 = _problem(n=10, p=3, d=4, seed=5)
    for steps in (1, 2, 30):
        run = simulate_W(A, y, W0, 0.01, steps, optimizer="adam", adam_betas=betas, adam_eps=1e-8)
        W = W0.clone().requires_grad_(True)
        opt = torch.optim.Adam([W], lr=0.01, betas=betas, eps=1e-8)
        for _ in range(steps):
            opt.zero_grad()
            r = torch.einsum("npq,pi,qi->n", A, W, W) - y
            (0.5 * (r * r).mean()).backward()
            opt.step()
        assert torch.allclose(run.W, W.detach(), atol=1e-12, rtol=0), steps
