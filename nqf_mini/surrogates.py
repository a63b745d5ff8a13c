"""The NQF of an architecture as a module, trained by the network's code (Chapter 8).

For an architecture of Chapter 2 with closed forms f0(x), g(x), A(x), B(x) (its method
``expansion(x)``), the neural quadratic form is the module

    f_NQF(W, x) = f0(x) + g(x) . mu + mu^T B(x) mu + Tr[W^T A(x) W],     mu = W 1,

the general form of Chapter 1 (Theorem 1 when ZGZ holds: g = 0, B = 0). It takes the
same weights W (p, d) as the network ``arch.f(W, x)``, so :func:`nqf_mini.train_module`
trains both from the same initialisation on the same batches (full batch, minibatches, a
stream) with the same optimiser, and any gap between the two runs is the remainder
O(|W|^3) at work.

The closed forms are evaluated once per sample (they do not depend on W):
:meth:`NQFModule.batch` stacks them for a data set (the architecture's
``batched_forms``), after which one evaluation on n samples is a matrix product,
f = f0 + <A_mu, M> (+ g_mu . mu + mu^T B_mu mu), for one run W (p, d) or R stacked runs
(R, p, d). The network on a data set is the architecture's ``predictor`` (vectorised for
the MLP, attention, query-key attention and the mixture of experts with an elementwise
gate, torch.func.vmap otherwise), so that a grid of runs costs a few vectorised
operations per step. Nothing here branches on the type of the architecture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import torch

from ._modules import leaves
from ._validate import as_tensor, describe, require_shape, require_symmetric_stack
from .architectures.base import Architecture


@dataclass(frozen=True)
class Expansions:
    """The closed forms of one architecture on n samples (Chapter 8).

    Attributes:
        f0: (n,); g: (n, p) or None (ZGZ); A: (n, p, p); B: (n, p, p) or None (ZGZ).
        n_units: the number of units d the closed forms hold for (None: any d).
    """

    f0: torch.Tensor
    g: torch.Tensor | None
    A: torch.Tensor
    B: torch.Tensor | None
    n_units: int | None = None

    def rows(self, idx: torch.Tensor) -> Expansions:
        """The closed forms on the samples ``idx`` (b,) alone (a minibatch)."""
        return Expansions(
            f0=self.f0[idx],
            g=None if self.g is None else self.g[idx],
            A=self.A[idx],
            B=None if self.B is None else self.B[idx],
            n_units=self.n_units,
        )

    def __call__(self, W: torch.Tensor) -> torch.Tensor:
        """f_NQF on every sample: W (p, d) -> (n,), stacked runs (R, p, d) -> (R, n)."""
        p = self.A.shape[-1]
        if W.ndim not in (2, 3) or W.shape[-2] != p:
            raise ValueError(
                f"argument `W`: expected shape (p, d) or (R, p, d) with "
                f"p = {p}, got {tuple(W.shape)}"
            )
        if self.n_units is not None and W.shape[-1] != self.n_units:
            raise ValueError(
                f"argument `W`: the closed forms hold for d = "
                f"{self.n_units} units, got {W.shape[-1]} columns"
            )
        M = W @ W.transpose(-1, -2)  # (..., p, p)
        f = self.f0 + torch.einsum("npq,...pq->...n", self.A, M)  # Tr[M A_mu]
        if self.g is not None or self.B is not None:
            mu = W.sum(-1)  # (..., p)
            if self.g is not None:
                f = f + torch.einsum("np,...p->...n", self.g, mu)
            if self.B is not None:
                Bmu = torch.einsum("npq,...q->...np", self.B, mu)
                f = f + (mu[..., None, :] * Bmu).sum(-1)
        return f


@dataclass(frozen=True)
class NQFModule:
    """f_NQF(W, x) = f0 + g . mu + mu^T B mu + Tr[W^T A W] of an architecture (Ch. 8).

    Call it like the network, ``f_nqf(W, x)`` on one input; :meth:`batch` gives the
    predictor on a data set that :func:`nqf_mini.train_module` uses.

    Attributes:
        arch: the architecture (see :func:`nqf_mini.make_architecture`).
    """

    arch: Architecture

    def expansions(
        self, xs: Any, dtype: torch.dtype | None = None, device: torch.device | None = None
    ) -> Expansions:
        """The closed forms on the n samples of ``xs`` (a leading axis), stacked."""
        forms = self.arch.batched_forms(xs)
        dtype = dtype or forms.A.dtype

        def cast(t: torch.Tensor) -> torch.Tensor:
            return t.to(dtype=dtype, device=device)

        return Expansions(
            f0=cast(forms.f0),
            g=None if forms.g is None else cast(forms.g),
            A=cast(forms.A),
            B=None if forms.B is None else cast(forms.B),
            n_units=self.arch.n_units,
        )

    def batch(self, xs: Any) -> Callable[[torch.Tensor], torch.Tensor]:
        """W -> f_NQF on every sample of ``xs``: (n,), or (R, n) when stacked."""
        leaf = next(t for t in leaves(xs) if isinstance(t, torch.Tensor))
        return self.expansions(xs, leaf.dtype if leaf.is_floating_point() else None, leaf.device)

    def __call__(self, W: torch.Tensor, x: Any) -> torch.Tensor:
        W = self.arch.check_weights(W)
        x = self.arch.check_input(x, dtype=W.dtype, device=W.device)
        return self.batch(_as_batch(x))(W)[0]


def _as_batch(x: Any) -> Any:
    """One input as a batch of one: a leading axis of size 1 on each tensor of x."""
    if isinstance(x, torch.Tensor):
        return x[None]
    if isinstance(x, (tuple, list)):
        return type(x)(_as_batch(v) for v in x)
    if isinstance(x, dict):
        return {k: _as_batch(v) for k, v in x.items()}
    return x


def nqf_module(arch: Architecture) -> NQFModule:
    """The NQF of ``arch`` as a module f_NQF(W, x) (Chapter 8; closed forms: Chapter 2).

    f_NQF(W, x) = f0(x) + g(x) . mu + mu^T B(x) mu + Tr[W^T A(x) W], mu = W 1: the
    general form of Chapter 1 (Theorem 1 under ZGZ). Train it next to ``arch.f`` with
    :func:`nqf_mini.train_module` from the same W0 (see the module docstring).
    """
    if not isinstance(arch, Architecture):
        raise TypeError(
            f"argument `arch`: expected an architecture from "
            f"make_architecture, got {describe(arch)}"
        )
    return NQFModule(arch)


def _least_squares_form(
    A: Any, y: Any, f0: Any
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, bool]:
    """(F, coefficients, targets, one): least squares of y - f0 on the features of Tr[M A_mu]
    (one column per entry M_ab, a <= b), for targets (n,) or (R, n) (``one``: y was (n,))."""
    A = as_tensor("A", A, dtype=torch.float64)
    require_symmetric_stack("A", A)
    n, p = A.shape[0], A.shape[1]
    y = as_tensor("y", y, dtype=torch.float64, device=A.device)
    one = y.ndim == 1
    if y.ndim not in (1, 2) or y.shape[-1] != n:
        raise ValueError(
            f"argument `y`: expected targets (n,) or (R, n) with n = {n} "
            f"samples like `A`, got shape {tuple(y.shape)}"
        )
    f0 = as_tensor("f0", f0, dtype=torch.float64, device=A.device)
    if f0.ndim == 0:
        f0 = f0.expand(n)
    require_shape("f0", f0, (n,), like="A")
    rows, cols = torch.triu_indices(p, p, device=A.device)
    weight = torch.where(rows == cols, 1.0, 2.0).to(A)  # Tr[M A] over a <= b
    F = (A[:, rows, cols] * weight).detach().cpu()  # (n, p(p+1)/2)
    target = (y - f0).detach().cpu().reshape(-1, n).T  # (n, R)
    coef = torch.linalg.lstsq(F, target, driver="gelsd").solution
    return F, coef, target, one


def nqf_floor(A: Any, y: Any, f0: Any = 0.0) -> Any:
    """The lowest loss of any quadratic form on the data: min over symmetric M of
    (1/2n) sum_mu (f0_mu + Tr[M A_mu] - y_mu)^2 (Chapter 8).

    Tr[M A] is linear in M, so this is least squares on the features vec(A_mu)
    (rank-revealing, so dependent features are fine). It bounds the loss of the NQF from
    below (its M = W W^T is positive semi-definite, of rank <= d); the bound is reached
    when every A_mu is an off-diagonal block O(Z_mu), as for the MLP, attention and the
    mixture of experts, whose diagonal blocks of M are free (for d >= the rank needed).
    Beyond it the network can go, its NQF cannot: on a teacher it is the part of the
    target the NQF cannot express. :func:`best_quadratic_form` returns the minimiser.

    Args:
        A: structure matrices (n, p, p), symmetric; y: targets (n,), or (R, n) for R
            targets on the same inputs (one factorisation for all); f0: offsets, () or
            (n,).

    Returns:
        The floor as a float for y (n,); a NumPy array (R,) for y (R, n).
    """
    F, coef, target, one = _least_squares_form(A, y, f0)
    floors = 0.5 * (F @ coef - target).square().mean(0).numpy()
    return float(floors[0]) if one else floors


def best_quadratic_form(A: Any, y: Any, f0: Any = 0.0) -> torch.Tensor:
    """The symmetric M that reaches :func:`nqf_floor`: the minimum-norm least-squares
    solution of f0_mu + Tr[M A_mu] = y_mu (Chapter 8).

    Evaluated on other inputs, f0(x) + Tr[M A(x)] is the best quadratic form of the training
    inputs applied to new ones: its loss on a test set is the floor that the test loss of a
    trained NQF is to be compared with (Chapter 8).

    Args:
        A: structure matrices (n, p, p), symmetric; y: targets (n,) or (R, n); f0: offsets,
            () or (n,).

    Returns:
        M (p, p), or (R, p, p) for y (R, n), in float64 on the CPU.
    """
    F, coef, _, one = _least_squares_form(A, y, f0)
    p = as_tensor("A", A).shape[-1]
    rows, cols = torch.triu_indices(p, p)
    M = torch.zeros(coef.shape[1], p, p, dtype=torch.float64)
    M[:, rows, cols] = coef.T
    M[:, cols, rows] = coef.T
    return M[0] if one else M


@dataclass(frozen=True)
class NetworkModule:
    """The network ``arch.f`` as a module whose :meth:`batch` evaluates all samples (and
    all stacked runs) at once (Chapter 8); the values of ``arch.f`` sample by sample."""

    arch: Architecture

    def __call__(self, W: torch.Tensor, x: Any) -> torch.Tensor:
        return self.arch.f(W, x)

    def batch(self, xs: Any) -> Callable[[torch.Tensor], torch.Tensor]:
        """W -> arch.f on every sample of ``xs``: (n,), or (R, n) when stacked."""
        return self.arch.predictor(xs)


def network_module(arch: Architecture) -> NetworkModule:
    """The network ``arch.f`` as a module for :func:`nqf_mini.train_module` (Chapter 8).

    Same values as ``arch.f(W, x)``; on a data set it evaluates every sample, and R
    stacked runs, in one vectorised pass for the MLP, attention, query-key attention and
    the mixture of experts with an elementwise gate (torch.func.vmap otherwise). Train
    it next to :func:`nqf_module` from the same W0.
    """
    if not isinstance(arch, Architecture):
        raise TypeError(
            f"argument `arch`: expected an architecture from "
            f"make_architecture, got {describe(arch)}"
        )
    return NetworkModule(arch)


def module_pair(arch: Architecture) -> tuple[NetworkModule, NQFModule]:
    r"""(The network, its NQF) of an architecture as two modules f(W, x) (Chapters 8, 9).

    ``network_module(arch)`` is ``arch.f``; ``nqf_module(arch)`` is
    :math:`f_0 + g^\top m + m^\top Bm + \mathrm{Tr}[W^\top AW]` from the closed forms of Chapter 2.
    Train both with :func:`nqf_mini.train_module` from the same W0, with the same optimiser and
    batches, and compare them with :func:`nqf_mini.agreement_window`.

    Args:
        arch: an architecture from :func:`nqf_mini.make_architecture`.

    Returns:
        (NetworkModule, NQFModule); each has ``batch(xs)``, the predictor on a data set.

    Raises:
        TypeError: if ``arch`` is not an architecture.
    """
    return network_module(arch), nqf_module(arch)
