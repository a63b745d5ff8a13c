"""The extractor of Theorem 1 against closed forms, and its contract on bad input."""

import math

import pytest
import torch

import nqf_mini as nqf
from nqf_mini.activations import ACTIVATIONS

from ..conftest import tolerance

SMOOTH = [name for name, a in ACTIVATIONS.items() if a.smooth and a.phi0 == 0.0]


def mlp_f(phi):
    def f(W, x):  # W: (n_in + 1, d), units are columns
        return W[-1] @ phi(W[:-1].T @ x)

    return f


@pytest.mark.parametrize("name", SMOOTH)
def test_mlp_structure_matrix_matches_closed_form(name, dtype, device):
    act = ACTIVATIONS[name]
    x = torch.randn(5, generator=torch.Generator().manual_seed(1), dtype=dtype).to(device)
    A = nqf.structure_matrix(mlp_f(act), x, 6, dtype=dtype)
    expected = (
        act.phi1
        / 2
        * torch.cat(
            [
                torch.cat([torch.zeros(5, 5), x.cpu()[:, None]], 1),
                torch.cat([x.cpu()[None, :], torch.zeros(1, 1)], 1),
            ]
        )
    )
    assert A.dtype == dtype and A.device.type == device.type
    assert torch.allclose(A.cpu().double(), expected.double(), atol=tolerance(dtype), rtol=0)


def test_activation_table_matches_autograd():
    for act in ACTIVATIONS.values():
        z = torch.zeros((), dtype=torch.float64, requires_grad=True)
        v = act(z)
        d1 = torch.autograd.grad(v, z, create_graph=True)[0]
        d2 = torch.autograd.grad(d1, z, allow_unused=True)[0] if d1.requires_grad else None
        d2 = 0.0 if d2 is None else d2.item()
        assert math.isclose(v.item(), act.phi0, abs_tol=1e-15)
        assert math.isclose(d1.item(), act.phi1, abs_tol=1e-15)
        assert math.isclose(d2, act.phi2, abs_tol=1e-12), act.name


def test_exactly_quadratic_model():
    a = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    A = nqf.structure_matrix(lambda W, x: ((W.T @ x) ** 2).sum(), a, 3)
    assert torch.allclose(A, torch.outer(a, a), atol=1e-14)


def test_structure_matrix_is_half_the_per_unit_hessian():
    x = torch.tensor([0.3, -1.2], dtype=torch.float64)
    f = mlp_f(torch.tanh)
    A = nqf.structure_matrix(f, x, 3)
    H = torch.autograd.functional.hessian(
        lambda w: f(torch.stack([w, torch.zeros(3)], 1).double(), x),
        torch.zeros(3, dtype=torch.float64),
    )
    assert torch.allclose(A, H / 2, atol=1e-15)


def test_relu_autograd_pitfall_returns_zero():
    x = torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64)
    assert torch.count_nonzero(nqf.structure_matrix(mlp_f(torch.relu), x, 4)) == 0


def test_non_zgz_module_raises_and_general_form_is_returned():
    x = torch.tensor([0.4, -0.7], dtype=torch.float64)
    f = mlp_f(lambda z: torch.tanh(z + 0.5))  # frozen bias: phi(0) != 0
    with pytest.raises(ValueError, match="violates ZGZ.*quadratic_expansion"):
        nqf.structure_matrix(f, x, 3)
    exp = nqf.quadratic_expansion(f, x, 3)
    assert not exp.zgz
    assert torch.allclose(exp.g, torch.tensor([0.0, 0.0, math.tanh(0.5)], dtype=torch.float64))
    assert torch.allclose(exp.A[:2, 2], x * (1 - math.tanh(0.5) ** 2) / 2, atol=1e-14)


def test_cross_unit_hessian_raises():
    def f(W, x):  # mu^T x squared couples different units
        return (W.sum(dim=1) @ x) ** 2

    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    with pytest.raises(ValueError, match="cross-unit Hessian"):
        nqf.structure_matrix(f, x, 2)
    exp = nqf.quadratic_expansion(f, x, 2)
    assert torch.allclose(exp.B, torch.outer(x, x), atol=1e-14)
    assert torch.allclose(exp.A, torch.zeros(2, 2, dtype=torch.float64), atol=1e-14)


def test_general_form_reproduces_second_order_terms():
    """f0 + g.mu + mu^T B mu + Tr[M A] matches f up to O(s^3) for a non-ZGZ module."""

    def f(W, x):
        return torch.sigmoid(W[:-1].T @ x + W[-1]).sum() + (W.sum(1) @ W.sum(1)) * 0.3

    x = torch.tensor([0.5, -1.0], dtype=torch.float64)
    W = torch.randn(3, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    fit = nqf.remainder_order(f, x, W, d=4)
    assert abs(fit.slope - 3) < 0.1


def test_asymmetric_module_is_refused():
    def f(W, x):
        return W[0, 0] * x[0] + (W[:, 1] ** 2).sum()  # unit 1 and unit 2 behave differently

    with pytest.raises(ValueError, match="not symmetric under swapping"):
        nqf.structure_matrix(f, torch.ones(2, dtype=torch.float64), 2)


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (dict(p=0), ValueError, "argument `p`: expected an integer >= 1, got 0"),
        (dict(p=2.5), TypeError, "argument `p`"),
        (dict(d=1), ValueError, "argument `d`: expected an integer >= 2"),
        (dict(dtype=torch.int64), TypeError, "argument `dtype`"),
    ],
)
def test_bad_arguments_name_the_argument(bad, exc, match):
    kwargs = dict(p=3, d=2) | bad
    with pytest.raises(exc, match=match):
        nqf.structure_matrix(mlp_f(torch.tanh), torch.ones(2), kwargs.pop("p"), **kwargs)


def test_non_scalar_output_is_refused():
    with pytest.raises(
        ValueError, match="expected f\\(W, x\\) to return a scalar, got a tensor of shape \\(2,\\)"
    ):
        nqf.structure_matrix(lambda W, x: W[:, 0], torch.ones(2), 2)
    with pytest.raises(TypeError, match="to return a tensor"):
        nqf.structure_matrix(lambda W, x: 1.0, torch.ones(2), 2)


def test_structure_matrices_stack_and_nqf_value():
    xs = torch.randn(4, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    As = nqf.structure_matrices(mlp_f(torch.tanh), xs, 4)
    assert As.shape == (4, 4, 4)
    W = torch.randn(4, 7, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    M = W @ W.T
    direct = torch.stack([torch.trace(M @ A) for A in As])
    assert torch.allclose(nqf.nqf_value(M, As), direct, atol=1e-13)
    with pytest.raises(ValueError, match="argument `A`: expected shape \\(4, 4\\)"):
        nqf.nqf_value(M, torch.zeros(3, 3))


def test_offdiag_spectrum():
    Z = torch.randn(3, 2, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    eig = torch.linalg.eigvalsh(nqf.offdiag(Z))
    sv = torch.linalg.svdvals(Z)
    expected = torch.sort(torch.cat([sv / 2, -sv / 2, torch.zeros(1, dtype=torch.float64)])).values
    assert torch.allclose(eig, expected, atol=1e-14)


def test_nqf_value_is_the_trace_for_non_symmetric_matrices():
    """f0 + Tr[M A] = f0 + sum_pq M_pq A_qp, also when neither M nor A is symmetric (the
    oracle: torch.trace of the product)."""
    gen = torch.Generator().manual_seed(11)
    M = torch.randn(4, 4, generator=gen, dtype=torch.float64)
    A = torch.randn(5, 4, 4, generator=gen, dtype=torch.float64)
    want = torch.stack([torch.trace(M @ a) for a in A]) + 0.5
    assert torch.allclose(nqf.nqf_value(M, A, 0.5), want, rtol=1e-14, atol=1e-14)
    assert abs(nqf.nqf_value(M, A[0]).item() - torch.trace(M @ A[0]).item()) < 1e-14


def test_a_module_that_is_nan_at_zero_is_refused():
    """f(0, x) = NaN with finite derivatives: the expansion would carry f0 = NaN; it is refused
    naming `f` (a module that is NaN everywhere is refused by its gradient too)."""

    def f(W, x):
        value = (W.T @ x).square().sum()
        return value + (math.nan if bool((W == 0).all()) else 0.0)

    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    for extract in (nqf.quadratic_expansion, nqf.structure_matrix):
        with pytest.raises(ValueError, match=r"argument `f`: f\(W, x\) at W .* is NaN"):
            extract(f, x, 2)
    with pytest.raises(ValueError, match="argument `f`"):
        nqf.satisfies_zgz(lambda W, x: (W * math.nan).sum(), x, 2)
