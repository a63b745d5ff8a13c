"""The neural quadratic form: extracting A(x) (and the general form) from any module by autograd.

Convention (Chapter 1): a module with d interchangeable units is a function ``f(W, x)`` of a weight
matrix ``W`` of shape (p, d) whose COLUMNS w_1, ..., w_d are the units. Theorem 1 says that a C^3,
permutation-symmetric module whose per-unit gradient vanishes at w_i = 0 (ZGZ) obeys

    f(W, x) = f(0, x) + sum_i w_i^T A(x) w_i + O(|W|^3) = f(0, x) + Tr[M A(x)] + O(|W|^3),

with M = W W^T and A(x) = (1/2) d^2 f / dw_i^2 at W = 0. Without ZGZ the general form is

    f = f0 + g^T mu + mu^T B mu + Tr[M A] + O(|W|^3),    mu = sum_i w_i,
    A = (P - Q) / 2,   B = Q / 2,   P = d^2 f / dw_i^2,   Q = d^2 f / dw_i dw_j  (i != j).

Both are read off the Hessian of f restricted to two units (the others held at zero), which
costs O(p) gradient evaluations of f.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ._modules import Module, evaluate, prepare_call, require_finite_output, scalar_output
from ._validate import (
    as_tensor,
    largest,
    require_bool,
    require_dtype,
    require_memory,
    require_positive,
    require_positive_int,
    require_shape,
)
from .device import resolve_device


@dataclass(frozen=True)
class QuadraticExpansion:
    """The general second-order form f = f0 + g.mu + mu^T B mu + Tr[M A] (Chapter 1, eq. general).

    Attributes:
        f0: f(0, x), a 0-D tensor.
        g: gradient with respect to one unit at W = 0, shape (p,).
        A: structure matrix, (P - Q) / 2, shape (p, p).
        B: cross-unit matrix, Q / 2, shape (p, p).
        atol: tolerance below which g and B count as zero.
    """

    f0: torch.Tensor
    g: torch.Tensor
    A: torch.Tensor
    B: torch.Tensor
    atol: float

    @property
    def zgz(self) -> bool:
        """True when the per-unit gradient at 0 and the cross-unit block both vanish."""
        return bool(self.g.abs().max() <= self.atol and self.B.abs().max() <= self.atol)

    def predict(self, W: torch.Tensor, drop_linear: bool = False) -> torch.Tensor:
        r"""Evaluate the second-order form at weights W (Chapter 1):
        :math:`f_0 + g^\top m + \operatorname{Tr}[MA] + m^\top B m`, :math:`M = WW^\top`,
        :math:`m = W\mathbf 1`.

        Args:
            W: weights, shape (p, d), units as columns.
            drop_linear: leave out the linear term :math:`g^\top m` (default False).

        Returns:
            A 0-d tensor, in the dtype and on the device of the expansion.

        Raises:
            ValueError, TypeError: on a bad argument (naming it).
        """
        W = as_tensor("W", W, ndim=2, dtype=self.A.dtype, device=self.A.device)
        require_shape("W", W, (self.A.shape[0], None))
        drop_linear = require_bool("drop_linear", drop_linear)
        mu = W.sum(dim=1)  # (p,)
        quad = torch.einsum("pi,pq,qi->", W, self.A, W)  # Tr[W^T A W] = Tr[M A]
        out = self.f0 + quad + mu @ self.B @ mu
        return out if drop_linear else out + self.g @ mu


def _default_atol(dtype: torch.dtype) -> float:
    return 1e3 * torch.finfo(dtype).eps


def two_unit_derivatives(
    f: Module,
    x: Any,
    p: int,
    d: int = 2,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Value, gradient and Hessian of f in the first two units, all other units at zero.

    Returns ``(f0, grad, H)`` with ``grad`` of shape (2p,) and ``H`` of shape (2p, 2p), ordered
    [w_1; w_2]. ``d`` is the total number of units (>= 2) that ``f`` is evaluated with.
    """
    p = require_positive_int("p", p)
    d = require_positive_int("d", d, minimum=2)
    require_dtype(dtype)
    x, dev = prepare_call(f, x, dtype, None if device is None else resolve_device(device))
    require_memory("p", 4.0 * p * p, dtype=dtype, device=dev, what="the Hessian (2p x 2p)")
    require_memory(
        largest(p=p, d=d), float(p) * d, dtype=dtype, device=dev, what="the weights (p x d)"
    )
    rest = torch.zeros(p, d - 2, dtype=dtype, device=dev)

    def weights(w: torch.Tensor) -> torch.Tensor:
        return torch.cat([w.reshape(2, p).T, rest], dim=1)  # (p, d): units 1, 2 from w

    def restricted(w: torch.Tensor) -> torch.Tensor:
        return scalar_output(f(weights(w), x))

    w0 = torch.zeros(2 * p, dtype=dtype, device=dev)
    f0 = evaluate(f, weights(w0), x).detach()  # reports a bad x naming it
    w = w0.clone().requires_grad_(True)
    out = restricted(w)
    grad = torch.autograd.grad(out, w, allow_unused=True)[0] if out.requires_grad else None
    grad = torch.zeros_like(w0) if grad is None else grad
    require_finite_output(grad, "the gradient of f(W, x) at W = 0")
    try:
        H = torch.autograd.functional.hessian(restricted, w0, vectorize=True)
    except RuntimeError:  # modules that vmap cannot trace fall back to one backward pass per row
        H = torch.autograd.functional.hessian(restricted, w0)
    require_finite_output(H, "the Hessian of f(W, x) at W = 0")
    return f0, grad.detach(), H.detach()


def quadratic_expansion(
    f: Module,
    x: Any,
    p: int,
    d: int = 2,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    atol: float | None = None,
) -> QuadraticExpansion:
    r"""General second-order form :math:`(f_0, g, A, B)` of a permutation-symmetric module
    (Chapter 1).

    .. math::

        f(W, x) = f_0 + g^\top m + m^\top B m + \mathrm{Tr}[MA] + O(|W|^3),

        A = (P - Q)/2,\qquad B = Q/2,

    with :math:`P = H_{11}` and :math:`Q = H_{12}` the per-unit and cross-unit Hessian blocks at
    W = 0, :math:`g = \nabla_{w_1} f(0, x)` and :math:`m = W\mathbf 1`.

    Args:
        f: the module, ``f(W, x)`` with ``W`` of shape (p, d) (units are columns), scalar output.
        x: the input, passed through unchanged except that floating tensors are cast to ``dtype``.
        p: number of parameters per unit.
        d: number of units to evaluate ``f`` with (matters when f depends on d, e.g. softmax gates).
        dtype: float64 (default) or float32.
        device: where to compute; None uses the device of ``x`` (else the CPU).
        atol: tolerance for "zero" (default 1000 machine epsilons of ``dtype``, relative to scale).

    Returns:
        :class:`QuadraticExpansion` (f0, g, A, B, atol; ``zgz`` says whether g and B vanish).

    Raises:
        ValueError: when the Hessian blocks show that ``f`` is not symmetric under swapping two
            units (:math:`H_{11} \ne H_{22}` or :math:`g_1 \ne g_2`), when f or its derivatives are
            not finite at W = 0, or on a bad argument (naming it).
    """
    f0, grad, H = two_unit_derivatives(f, x, p, d, dtype=dtype, device=device)
    if atol is not None:
        atol = require_positive("atol", atol)
    P, Q, Q21, P22 = H[:p, :p], H[:p, p:], H[p:, :p], H[p:, p:]
    scale = max(1.0, H.abs().max().item(), grad.abs().max().item())
    tol = (atol if atol is not None else _default_atol(dtype)) * scale
    asym = max(
        (P - P22).abs().max().item(),
        (grad[:p] - grad[p:]).abs().max().item(),
        (Q - Q21).abs().max().item(),
    )
    if asym > tol:
        raise ValueError(
            f"argument `f`: the module is not symmetric under swapping two units "
            f"(the two units' derivatives differ by {asym:.3g}); Theorem 1 needs "
            "interchangeable units, with units as the columns of W"
        )
    Q = (Q + Q.T) / 2
    return QuadraticExpansion(f0=f0, g=grad[:p], A=(P - Q) / 2, B=Q / 2, atol=tol)


def structure_matrix(
    f: Module,
    x: Any,
    p: int,
    d: int = 2,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    atol: float | None = None,
) -> torch.Tensor:
    """The structure matrix A(x) = (1/2) d^2 f / dw_i^2 at W = 0 (Theorem 1, Chapter 1).

    Args:
        f: the module, ``f(W, x)`` with ``W`` of shape (p, d) whose columns are the units; returns a
            scalar tensor. It must accept any number of units d >= 2.
        x: the input (a tensor, or any structure of tensors that ``f`` understands).
        p: number of parameters per unit.
        d: number of units ``f`` is evaluated with (default 2).
        dtype: float64 by default; float32 is accepted for tests of single precision.
        device: where to compute; None means the device of ``x`` (else the CPU).
        atol: tolerance for "zero" (default 1000 machine epsilons, relative to the Hessian's scale).

    Returns:
        A(x), a symmetric tensor of shape (p, p).

    Raises:
        ValueError: if f violates ZGZ (non-zero per-unit gradient at 0) or has a non-zero cross-unit
            Hessian; both mean the general form applies, see :func:`quadratic_expansion`.
    """
    exp = quadratic_expansion(f, x, p, d, dtype=dtype, device=device, atol=atol)
    g_norm, b_max = exp.g.norm().item(), exp.B.abs().max().item()
    if g_norm > exp.atol:
        raise ValueError(
            f"argument `f` violates ZGZ: the gradient with respect to a unit at W = 0 "
            f"has norm {g_norm:.3g} (expected 0), so f has a linear term g.mu. Use "
            "nqf_mini.quadratic_expansion(f, x, p) for the general form (f0, g, A, B)."
        )
    if b_max > exp.atol:
        raise ValueError(
            f"argument `f` has a non-zero cross-unit Hessian (max |B| = {b_max:.3g}, "
            "expected 0), so f has a term mu^T B mu. Use "
            "nqf_mini.quadratic_expansion(f, x, p) for the general form (f0, g, A, B)."
        )
    return exp.A


def structure_matrices(
    f: Module,
    xs: Any,
    p: int,
    d: int = 2,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r"""The structure matrices :math:`A_\mu = A(x_\mu)` of n inputs, stacked (Chapter 1).

    :func:`structure_matrix` on each input in turn.

    Args:
        f: the module ``f(W, x)`` (see :func:`structure_matrix`).
        xs: a sequence of n inputs (a tensor whose first axis is n, or a list of inputs).
        p: number of parameters per unit.
        d: number of units ``f`` is evaluated with (default 2).
        dtype: float64 (default) or float32.
        device: where to compute; None means the device of the inputs (else the CPU).

    Returns:
        A tensor of shape (n, p, p).

    Raises:
        ValueError, TypeError: on a bad argument (naming it; a bad input names ``xs`` and its
            index), or if f violates ZGZ (see :func:`structure_matrix`).
    """
    if isinstance(xs, (str, bytes)) or not hasattr(xs, "__len__") or len(xs) == 0:
        raise ValueError(
            f"argument `xs`: expected a non-empty sequence of inputs, got {type(xs).__name__}"
        )
    if isinstance(xs, torch.Tensor):
        xs = as_tensor("xs", xs)
    mats = []
    for i, x in enumerate(xs):
        try:
            mats.append(structure_matrix(f, x, p, d, dtype=dtype, device=device))
        except (ValueError, TypeError) as exc:
            if "argument `x`" not in str(exc):
                raise
            raise type(exc)(f"argument `xs`: input {i}: {exc}") from exc
    return torch.stack(mats)


def nqf_value(M: torch.Tensor, A: torch.Tensor, f0: float | torch.Tensor = 0.0) -> torch.Tensor:
    r"""The quadratic form :math:`f_0 + \mathrm{Tr}[MA]` (Theorem 1, Chapter 1).

    Exactly the trace :math:`\sum_{pq} M_{pq} A_{qp}`, also for matrices that are not
    symmetric.

    Args:
        M: the order parameter :math:`M = WW^\top`, shape (p, p).
        A: one structure matrix (p, p) or a stack (n, p, p).
        f0: the offset :math:`f(0, x)`, a number or a tensor that broadcasts with the result.

    Returns:
        A 0-d tensor for one A, shape (n,) for a stack, in the dtype of ``M``.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    M = as_tensor("M", M, ndim=2)
    A = as_tensor("A", A, dtype=M.dtype, device=M.device)
    if A.ndim not in (2, 3) or A.shape[-2:] != M.shape:
        raise ValueError(
            f"argument `A`: expected shape {tuple(M.shape)} or (n, *{tuple(M.shape)}) "
            f"to match `M`, got {tuple(A.shape)}"
        )
    f0 = as_tensor("f0", f0, dtype=M.dtype, device=M.device)
    return f0 + torch.einsum("...pq,qp->...", A, M)
