"""Isotropic data (a matrix Riccati equation) and a single sample: closed forms against the flow."""

import pytest
import torch

from nqf_mini.commutativity import max_commutator
from nqf_mini.dynamics import simulate_M
from nqf_mini.lotka_volterra import mode_strengths
from nqf_mini.riccati import (
    isotropic_dataset,
    isotropy_constant,
    riccati_closed_form,
    single_sample_solution,
)

torch.set_num_threads(1)


def _rel(a, b):
    return ((a - b).abs().max() / b.abs().max()).item()


def _riccati_rk4(B, kappa, M0, t_end, h):
    def rhs(M):
        return 2 * (B @ M + M @ B) - 4 * kappa * M @ M

    M, steps = M0.clone(), round(t_end / h)
    for _ in range(steps):
        k1 = rhs(M)
        k2 = rhs(M + h / 2 * k1)
        k3 = rhs(M + h / 2 * k2)
        k4 = rhs(M + h * k3)
        M = M + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return M


def test_isotropic_dataset_is_isotropic_and_not_commuting():
    A, y = isotropic_dataset(4, seed=0, device="cpu")
    assert A.shape == (10, 4, 4) and y.shape == (10,)
    assert abs(isotropy_constant(A) - 1 / 10) <= 1e-14
    assert max_commutator(A) > 0.1
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(10, 4, 4, generator=gen, dtype=torch.float64)
    with pytest.raises(ValueError, match="`A`.*not isotropic.*relative"):
        isotropy_constant(X + X.transpose(1, 2))


def test_closed_form_matches_the_m_space_flow():
    A, y = isotropic_dataset(4, seed=0, device="cpu")
    kappa, n = isotropy_constant(A), A.shape[0]
    B = torch.einsum("n,npq->pq", y, A) / n  # (1/n) sum y_mu A_mu
    W0 = 0.1 * torch.randn(4, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    flow = simulate_M(A, y, W0 @ W0.T, 0.01, 3000, method="flow", record_every=300, device="cpu")
    M = riccati_closed_form(B, kappa, W0, torch.tensor(flow.times))
    assert M.shape == flow.M_traj.shape
    assert _rel(M, flow.M_traj) <= 1e-8
    assert torch.allclose(M[0], W0 @ W0.T, atol=1e-15)


def test_closed_form_with_a_zero_eigenvalue_and_its_limit():
    gen = torch.Generator().manual_seed(4)
    Q, _ = torch.linalg.qr(torch.randn(4, 4, generator=gen, dtype=torch.float64))
    lam = torch.tensor([1.0, 0.5, 0.0, -0.7], dtype=torch.float64)  # K(t) -> t for lambda = 0
    B, kappa = Q @ torch.diag(lam) @ Q.T, 0.3
    W0 = 0.2 * torch.randn(4, 4, generator=gen, dtype=torch.float64)
    exact = riccati_closed_form(B, kappa, W0, 2.0)
    assert exact.shape == (4, 4)
    assert _rel(exact, _riccati_rk4(B, kappa, W0 @ W0.T, 2.0, 1e-3)) <= 1e-8
    B2 = Q @ torch.diag(torch.tensor([1.5, 1.0, -0.8, -1.2], dtype=torch.float64)) @ Q.T
    late = riccati_closed_form(B2, kappa, W0, torch.tensor([5.0, 80.0]))  # M(inf) = P+ B P+ / kappa
    P = Q[:, :2] @ Q[:, :2].T
    assert torch.allclose(late[0], P @ B2 @ P / kappa, atol=1e-6)
    # e^{4 lam t} = e^{480}: no overflow
    assert torch.allclose(late[1], P @ B2 @ P / kappa, atol=1e-12)
    one = riccati_closed_form(B2, kappa, W0[:, :1], 80.0)  # d = 1: only the top direction
    assert torch.allclose(one, 1.5 * torch.outer(Q[:, 0], Q[:, 0]) / kappa, atol=1e-12)
    early = riccati_closed_form(B, kappa, W0, torch.tensor([0.0, 1e-4]))
    M0 = W0 @ W0.T
    assert torch.equal(early[0], M0)
    assert _rel(early[1], _riccati_rk4(B, kappa, M0, 1e-4, 1e-5)) <= 1e-10


def test_single_sample_solution_matches_the_flow():
    gen = torch.Generator().manual_seed(2)
    a = torch.tensor([1.0, -0.5, 0.3, 2.0], dtype=torch.float64)
    E, _ = torch.linalg.qr(torch.randn(4, 4, generator=gen, dtype=torch.float64))
    A = (E @ torch.diag(a) @ E.T)[None]  # n = 1
    M0 = 0.01 * torch.eye(4, dtype=torch.float64)
    flow = simulate_M(
        A,
        torch.tensor([0.7], dtype=torch.float64),
        M0,
        0.002,
        5000,
        method="flow",
        record_every=500,
        device="cpu",
    )
    z = single_sample_solution(a, 0.7, torch.full((4,), 0.01, dtype=torch.float64), flow.times)
    assert z.shape == (11, 4)
    assert _rel(z, mode_strengths(flow.M_traj, E)) <= 1e-8


def test_validation():
    with pytest.raises(ValueError, match="`kappa`"):
        riccati_closed_form(torch.eye(2), 0.0, torch.eye(2), 1.0)
    with pytest.raises(ValueError, match=r"`W0`.*\(2, \*\)"):
        riccati_closed_form(torch.eye(2), 1.0, torch.eye(3), 1.0)
    with pytest.raises(ValueError, match="`z0`"):
        single_sample_solution(torch.ones(2), 1.0, torch.tensor([-1.0, 1.0]), torch.tensor([1.0]))
    with pytest.raises(ValueError, match="`t`"):
        single_sample_solution(torch.ones(2), 1.0, torch.ones(2), torch.tensor([2.0, 1.0]))
    with pytest.raises(ValueError, match="`p`"):
        isotropic_dataset(1)


def test_closed_form_refuses_overflowing_times_instead_of_returning_nan():
    B = torch.diag(torch.tensor([1.0, -0.5], dtype=torch.float64))
    W0 = 1e-3 * torch.ones(2, 1, dtype=torch.float64)
    assert torch.isfinite(riccati_closed_form(B, 1.0, W0, 100.0)).all()
    with pytest.raises(ValueError, match="argument `t`: the closed form overflows"):
        riccati_closed_form(B, 1.0, W0, 1000.0)


@pytest.mark.parametrize("dtype, rtol", [(torch.float32, 1e-4), (torch.float16, 1e-2)])
def test_isotropy_tolerance_follows_the_precision_of_the_data(dtype, rtol):
    """A float32 (float16) copy of an exactly isotropic set is isotropic to that precision's
    round-off: accepted with kappa = 1/n to the same relative accuracy; generic data are still
    refused."""
    A, _ = isotropic_dataset(3)
    kappa = isotropy_constant(A.to(dtype))
    assert abs(kappa * 6 - 1) < rtol
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(8, 3, 3, generator=gen)
    with pytest.raises(ValueError, match="not isotropic"):
        isotropy_constant((X + X.transpose(1, 2)).to(dtype))


@pytest.mark.parametrize("dtype, limit", [(torch.float32, "~89"), (torch.float64, "~710")])
def test_riccati_overflow_message_quotes_the_limit_of_the_dtype(dtype, limit):
    B = torch.diag(torch.tensor([1.0, 0.5], dtype=dtype))
    W0 = 0.1 * torch.ones(2, 2, dtype=dtype)
    t_end = 60.0 if dtype == torch.float32 else 400.0  # 2 lambda t = 120 > 89; 800 > 710
    with pytest.raises(ValueError, match=f"overflows in {dtype}.*{limit}"):
        riccati_closed_form(B, 0.5, W0, torch.tensor([0.0, t_end], dtype=dtype))
    M = riccati_closed_form(B, 0.5, W0, torch.tensor([0.0, 40.0], dtype=dtype))
    assert torch.isfinite(M).all()  # below the limit it is finite
