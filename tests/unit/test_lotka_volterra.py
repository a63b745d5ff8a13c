"""Theorems 4-7: commuting data reduce the M-space flow to Lotka-Volterra; exact logistic
solutions."""

import pytest
import torch

import nqf_mini as nqf

from nqf_mini.dynamics import simulate_M
from nqf_mini.lotka_volterra import logistic, lotka_volterra, mode_strengths, reduce_commuting

torch.set_num_threads(1)


def _commuting(n=10, p=4, seed=1, degenerate=False):
    gen = torch.Generator().manual_seed(seed)
    E, _ = torch.linalg.qr(torch.randn(p, p, generator=gen, dtype=torch.float64))
    a = torch.randn(n, p, generator=gen, dtype=torch.float64)
    if degenerate:
        a[:, 1] = a[:, 0]  # a repeated eigenvalue in every A_mu
    A = E @ torch.diag_embed(a) @ E.T  # (n, p, p)
    y = torch.randn(n, generator=gen, dtype=torch.float64)
    return A, y, gen


def _rel(a, b):
    return ((a - b).abs().max() / b.abs().max()).item()


def test_diagonal_C_is_logistic_even_from_1e_minus_30(device, dtype):
    b = torch.tensor([1.0, 0.5, 0.25, 0.8], dtype=torch.float64)
    c = torch.tensor([1.0, 2.0, 0.5, 2.5], dtype=torch.float64)
    # the last starts above capacity 0.32
    z0 = torch.tensor([1e-30, 1e-3, 0.3, 1.0], dtype=torch.float64)
    t = torch.linspace(0.0, 30.0, 16)
    z = lotka_volterra(b, torch.diag(c), z0, t, device=device, dtype=dtype)
    exact = logistic(
        z0.to(device), (b / c).to(device), (4 * b).to(device), t.to(device, torch.float64)
    )
    assert z.shape == (16, 4) and z.dtype == dtype
    tol = 1e-8 if dtype == torch.float64 else 1e-6  # float32: rounding of the output only
    assert ((z.double() - exact).abs() / exact).max().item() <= tol


def test_logistic_solves_its_ode():
    z0, zstar, zeta = torch.tensor([1e-30, 0.5]), torch.tensor([2.0, 0.1]), torch.tensor([3.0, 1.0])
    t = torch.linspace(0.0, 30.0, 7, dtype=torch.float64).requires_grad_(True)
    z = logistic(z0.double(), zstar.double(), zeta.double(), t)  # (T, K)
    assert torch.allclose(z[0], z0.double(), rtol=1e-14)
    for k in range(2):
        (dz,) = torch.autograd.grad(z[:, k].sum(), t, retain_graph=True)
        rhs = zeta[k] * z[:, k] * (1 - z[:, k] / zstar[k])  # 1 - z/z* cancels near capacity
        assert torch.allclose(dz, rhs, rtol=1e-8, atol=1e-12)
    assert logistic(0.1, 1.0, 2.0, torch.tensor([0.0, 1.0])).shape == (2,)


@pytest.mark.parametrize("degenerate", [False, True], ids=["generic", "degenerate"])
def test_lotka_volterra_matches_full_m_flow(degenerate):
    """The factor 4 with L = (1/2n) sum r^2 (it would be 8 with (1/n) sum r^2)."""
    A, y, gen = _commuting(degenerate=degenerate)
    W0 = 0.1 * torch.randn(4, 3, generator=gen, dtype=torch.float64)
    E, a, b, C = reduce_commuting(A, y)
    assert torch.allclose(E @ torch.diag_embed(a) @ E.T, A, atol=1e-12)
    flow = simulate_M(A, y, W0 @ W0.T, 0.004, 1000, method="flow", record_every=100, device="cpu")
    z_flow = mode_strengths(flow.M_traj, E)  # (T, K)
    z_lv = lotka_volterra(
        b, C, mode_strengths(W0 @ W0.T, E), torch.tensor(flow.times), device="cpu"
    )
    assert _rel(z_lv, z_flow) <= 1e-8
    z_wrong = lotka_volterra(
        2 * b, 2 * C, mode_strengths(W0 @ W0.T, E), torch.tensor(flow.times), device="cpu"
    )  # factor 8
    assert _rel(z_wrong, z_flow) > 1e-2


def test_reduction_with_offsets_uses_y_minus_f0():
    A, y, _ = _commuting()
    _, a, b, _ = reduce_commuting(A, y, f0=0.5)
    assert torch.allclose(b, (y - 0.5) @ a / 10, atol=1e-14)


def test_batching_matches_one_by_one():
    gen = torch.Generator().manual_seed(3)
    K, Bt = 3, 4
    b = torch.rand(Bt, K, generator=gen, dtype=torch.float64)
    X = torch.randn(Bt, K, K, generator=gen, dtype=torch.float64)
    C = X @ X.transpose(1, 2) / K + torch.eye(K, dtype=torch.float64)
    z0 = torch.rand(Bt, K, generator=gen, dtype=torch.float64) * 1e-3
    t = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)  # starts > 0
    h = 5e-3
    z = lotka_volterra(b, C, z0, t, max_step=h, device="cpu")
    assert z.shape == (Bt, 3, K)
    for i in range(Bt):
        zi = lotka_volterra(b[i], C[i], z0[i], t, max_step=h, device="cpu")
        assert torch.allclose(z[i], zi, rtol=1e-12, atol=0)
    shared = lotka_volterra(b[0], C[0], z0, t, max_step=h, device="cpu")  # b, C broadcast
    assert shared.shape == (Bt, 3, K)
    zero = lotka_volterra(b[0], C[0], torch.tensor([0.0, 1e-3, 1e-3]), t, device="cpu")
    assert (zero[:, 0] == 0).all() and torch.isfinite(zero).all()


def test_non_commuting_data_are_refused_with_the_commutator():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(5, 4, 4, generator=gen, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"`A`.*do not commute.*relative commutator \d"):
        reduce_commuting(X + X.transpose(1, 2), torch.zeros(5))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(z0=torch.tensor([-1e-3, 1.0])), "`z0`.*>= 0"),
        (dict(t=torch.tensor([0.0, 2.0, 1.0])), "`t`.*increasing"),
        (dict(t=torch.tensor([-1.0, 1.0])), "`t`"),
        (dict(b=torch.ones(3)), r"`b`.*\(2,\)"),
        (dict(C=torch.eye(3)), r"`C`.*\(2, 2\)"),
        (dict(max_step=0.0), "`max_step`"),
    ],
)
def test_validation(kwargs, match):
    args = dict(
        b=torch.ones(2), C=torch.eye(2), z0=torch.tensor([0.1, 0.2]), t=torch.tensor([0.0, 1.0])
    )
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        lotka_volterra(
            args.pop("b"), args.pop("C"), args.pop("z0"), args.pop("t"), device="cpu", **args
        )
    with pytest.raises(ValueError, match="`z0`"):
        logistic(0.0, 1.0, 1.0, torch.tensor([0.0]))
    with pytest.raises(ValueError, match="`M_traj`"):
        mode_strengths(torch.eye(3), torch.eye(2))


def test_nnls_end_state_refuses_a_mode_that_could_invade():
    """Support {1} leaves mode 2 with invasion rate (C z - b)_2 = -1e-3 < 0: not the end state.

    The right answer keeps only mode 2, z = (0, b_2); a KKT tolerance of -1e-2 would accept
    z = (b_1, 0).
    """
    b = torch.tensor([0.04, 0.99 * 0.04 + 1e-3], dtype=torch.float64)
    C = torch.tensor([[1.0, 0.99], [0.99, 1.0]], dtype=torch.float64)
    z = nqf.nnls_end_state(b, C)
    assert torch.allclose(z, torch.tensor([0.0, b[1].item()], dtype=torch.float64), atol=1e-15)
    t = torch.tensor([0.0, 3e4], dtype=torch.float64)  # the flow agrees
    z0 = torch.full((2,), 1e-3, dtype=torch.float64)
    z_end = nqf.lotka_volterra(b, C, z0, t, max_step=2.0)[-1]  # rates <= 0.33: h rate < 0.7
    assert z_end[0] < 1e-6 and abs(z_end[1] - b[1]) < 1e-6


def test_results_are_named_and_still_unpack():
    A, y = _commuting()[:2]
    red = reduce_commuting(A, y)
    E, a, b, C = red
    assert red.E is E and red.a is a and red.b is b and red.C is C
    near = nqf.nearest_commuting(A)
    matrices, residual = near
    assert near.matrices is matrices and near.residual == residual
    modes = nqf.power_law_modes(10, 2.0, 0.8)
    assert torch.equal(modes.V, modes[0]) and torch.equal(modes.u0, modes[2])


def test_non_commuting_data_point_to_nearest_commuting():
    gen = torch.Generator().manual_seed(2)
    X = torch.randn(5, 3, 3, generator=gen, dtype=torch.float64)
    with pytest.raises(ValueError, match="do not commute.*nearest_commuting"):
        reduce_commuting(X + X.transpose(1, 2), torch.zeros(5))


def test_nnls_end_state_ignores_round_off_modes_but_keeps_small_real_ones():
    """A mode whose b_k and C_kk are round-off (what nearest_commuting leaves in a direction the
    data do not span) ends at 0, not at b/C = 3e16; a small mode with a real C_kk is kept, and
    every answer satisfies the KKT conditions of argmin z^T C z / 2 - b^T z over z >= 0."""
    C = torch.diag(torch.tensor([1.0, 1e-34], dtype=torch.float64))
    assert torch.equal(
        nqf.nnls_end_state([1.0, 3e-18], C), torch.tensor([1.0, 0.0], dtype=torch.float64)
    )
    C2 = torch.tensor([[1.0, 0.2], [0.2, 1.0]], dtype=torch.float64)
    z = nqf.nnls_end_state([1.0, 1e-9], C2)  # mode 2 loses the competition: z = 0
    grad = C2 @ z - torch.tensor([1.0, 1e-9], dtype=torch.float64)
    assert z[1] == 0 and abs(grad[0].item()) < 1e-15 and grad[1].item() >= 0
    small = nqf.nnls_end_state([1.0, 1e-9], torch.eye(2, dtype=torch.float64))
    assert abs(small[1].item() - 1e-9) < 1e-24  # a small but real mode is a mode
    with pytest.raises(ValueError, match="at most 20 modes"):
        nqf.nnls_end_state(torch.ones(21), torch.eye(21))
