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
:meth:`NQFModule.batch` stacks them for a data set, after which one evaluation on n
samples is a matrix product, f = f0 + <A_mu, M> (+ g_mu . mu + mu^T B_mu mu), for one
run W (p, d) or R stacked runs (R, p, d). For the MLP, attention, query-key attention
and the mixture of experts with an elementwise gate, the closed forms and the network
itself are also written for all samples at once (:func:`network_module`; tested against
the per-sample ``arch.f`` and ``arch.A``), so that a grid of runs costs a few vectorised
operations per step; other architectures fall back to one call per sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import torch

from . import _batched as bt
from ._modules import leaves, prepare_call, sample
from ._validate import as_tensor, describe, require_shape, require_symmetric_stack
from .architectures import (
    GATES, MixtureOfExperts, MultiHeadAttention, QKAttention, TwoLayerMLP,
)
from .architectures._helpers import phi_derivatives
from .architectures.base import Architecture
from .module_training import batched


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

    def __call__(self, W: torch.Tensor) -> torch.Tensor:
        """f_NQF on every sample: W (p, d) -> (n,), stacked runs (R, p, d) -> (R, n)."""
        p = self.A.shape[-1]
        if W.ndim not in (2, 3) or W.shape[-2] != p:
            raise ValueError(f"argument `W`: expected shape (p, d) or (R, p, d) with "
                             f"p = {p}, got {tuple(W.shape)}")
        if self.n_units is not None and W.shape[-1] != self.n_units:
            raise ValueError(f"argument `W`: the closed forms hold for d = "
                             f"{self.n_units} units, got {W.shape[-1]} columns")
        M = W @ W.transpose(-1, -2)                                  # (..., p, p)
        f = self.f0 + torch.einsum("npq,...pq->...n", self.A, M)     # Tr[M A_mu]
        if self.g is not None or self.B is not None:
            mu = W.sum(-1)                                           # (..., p)
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

    def expansions(self, xs: Any, dtype: torch.dtype | None = None,
                   device: torch.device | None = None) -> Expansions:
        """The closed forms on the n samples of ``xs`` (a leading axis), stacked."""
        n = _sample_count(xs)
        fast = _closed_forms(self.arch, xs)
        if fast is not None:
            f0, g, A, B = (None if t is None else
                           t.to(dtype=dtype or t.dtype, device=device) for t in fast)
            return Expansions(f0=f0, g=g, A=A, B=B, n_units=self.arch.n_units)
        first = self.arch.expansion(sample(xs, 0))
        dtype = dtype or first.A.dtype
        device = device or first.A.device
        parts = [first] + [self.arch.expansion(sample(xs, i)) for i in range(1, n)]
        cast = dict(dtype=dtype, device=device)
        f0 = torch.stack([e.f0 for e in parts]).to(**cast)
        g = torch.stack([e.g for e in parts]).to(**cast)
        A = torch.stack([e.A for e in parts]).to(**cast)
        B = torch.stack([e.B for e in parts]).to(**cast)
        return Expansions(f0=f0, g=None if bool((g == 0).all()) else g, A=A,
                          B=None if bool((B == 0).all()) else B,
                          n_units=self.arch.n_units)

    def batch(self, xs: Any) -> Callable[[torch.Tensor], torch.Tensor]:
        """W -> f_NQF on every sample of ``xs``: (n,), or (R, n) when stacked."""
        leaf = next(t for t in leaves(xs) if isinstance(t, torch.Tensor))
        return self.expansions(xs, leaf.dtype, leaf.device)

    def __call__(self, W: torch.Tensor, x: Any) -> torch.Tensor:
        W = as_tensor("W", W, ndim=2)
        require_shape("W", W, (self.arch.p, None))
        x, _ = prepare_call(self.arch.f, x, W.dtype, W.device)
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


def _sample_count(xs: Any) -> int:
    sizes = {t.shape[0] for t in leaves(xs) if isinstance(t, torch.Tensor) and t.ndim}
    if len(sizes) != 1:
        raise ValueError(f"argument `xs`: expected one leading sample dimension in "
                         f"every tensor, got sizes {sorted(sizes)}")
    return sizes.pop()


def nqf_module(arch: Architecture) -> NQFModule:
    """The NQF of ``arch`` as a module f_NQF(W, x) (Chapter 8; closed forms: Chapter 2).

    f_NQF(W, x) = f0(x) + g(x) . mu + mu^T B(x) mu + Tr[W^T A(x) W], mu = W 1: the
    general form of Chapter 1 (Theorem 1 under ZGZ). Train it next to ``arch.f`` with
    :func:`nqf_mini.train_module` from the same W0 (see the module docstring).
    """
    if not isinstance(arch, Architecture):
        raise TypeError(f"argument `arch`: expected an architecture from "
                        f"make_architecture, got {describe(arch)}")
    return NQFModule(arch)


def nqf_floor(A: Any, y: Any, f0: Any = 0.0) -> float:
    """The lowest loss of any quadratic form on the data: min over symmetric M of
    (1/2n) sum_mu (f0_mu + Tr[M A_mu] - y_mu)^2 (Chapter 8).

    Tr[M A] is linear in M, so this is least squares on the features vec(A_mu)
    (rank-revealing, so dependent features are fine). It bounds the loss of the NQF from
    below (its M = W W^T is positive semi-definite, of rank <= d); the bound is reached
    when every A_mu is an off-diagonal block O(Z_mu), as for the MLP, attention and the
    mixture of experts, whose diagonal blocks of M are free (for d >= the rank needed).
    Beyond it the network can go, its NQF cannot: on a teacher it is the part of the
    target the NQF cannot express.

    Args:
        A: structure matrices (n, p, p), symmetric; y: targets (n,); f0: offsets, () or
            (n,).
    """
    A = as_tensor("A", A, dtype=torch.float64)
    require_symmetric_stack("A", A)
    n, p = A.shape[0], A.shape[1]
    y = as_tensor("y", y, ndim=1, dtype=torch.float64, device=A.device)
    require_shape("y", y, (n,))
    f0 = as_tensor("f0", f0, dtype=torch.float64, device=A.device)
    if f0.ndim == 0:
        f0 = f0.expand(n)
    require_shape("f0", f0, (n,))
    rows, cols = torch.triu_indices(p, p, device=A.device)
    weight = torch.where(rows == cols, 1.0, 2.0).to(A)       # Tr[M A] over a <= b
    F = (A[:, rows, cols] * weight).cpu()                         # (n, p(p+1)/2)
    target = (y - f0).cpu()
    coef = torch.linalg.lstsq(F, target[:, None], driver="gelsd").solution
    return 0.5 * float((F @ coef - target[:, None]).square().mean())


# --- all samples at once: the closed forms and the networks of Chapter 2 -------------

Forms = tuple[torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor | None]


def _elementwise_gate(arch: Architecture) -> bool:
    return isinstance(arch, MixtureOfExperts) and arch.gate != "softmax"


def _closed_forms(arch: Architecture, xs: Any) -> Forms | None:
    """(f0 (s,), g (s, p) or None, A (s, p, p), B (s, p, p) or None) for all samples at
    once, or None for an architecture without a vectorised closed form (Chapter 2)."""
    if isinstance(arch, TwoLayerMLP):
        phi0, phi1, _ = phi_derivatives(arch.act, arch._b)
        z = xs if arch.bias != "trainable" else torch.cat(
            [xs, xs.new_ones(xs.shape[0], 1)], dim=1)
        A = phi1 * bt.offdiag(z[:, :, None])                       # phi'(b) O(z)
        g = None
        if phi0 != 0.0:
            g = xs.new_zeros(xs.shape[0], arch.p)
            g[:, -1] = phi0                                        # phi(b) e_v
        return xs.new_zeros(xs.shape[0]), g, A, None
    if isinstance(arch, MultiHeadAttention):
        _, X = xs
        xbar = X.mean(dim=2)                                       # (s, n)
        A = X.new_zeros(X.shape[0], arch.p, arch.p)
        start = 2 * arch.h * arch.n_in                          # the (vec V, v) block
        A[:, start:, start:] = bt.offdiag(bt.eye_kron(arch.h_v, xbar[:, :, None]))
        return X.new_zeros(X.shape[0]), None, A, None
    if isinstance(arch, QKAttention):
        q, X, y = xs
        c = torch.einsum("snN,sN->sn", X - X.mean(dim=2, keepdim=True), y) / X.shape[2]
        Z = bt.eye_kron(arch.h, torch.einsum("sa,sb->sab", q, c)) / math.sqrt(arch.h)
        return arch.n_heads * y.mean(dim=1), None, bt.offdiag(Z), None
    if isinstance(arch, MixtureOfExperts) and arch.expert == "neuron":
        n_in, value = arch.n_in, GATES[arch.gate].value(arch.n_experts)
        A = xs.new_zeros(xs.shape[0], arch.p, arch.p)           # gamma(0) O(x) on (b, a)
        A[:, n_in:, n_in:] = value * bt.offdiag(xs[:, :, None])
        return xs.new_zeros(xs.shape[0]), None, A, None
    if isinstance(arch, MixtureOfExperts):
        gate, d = GATES[arch.gate], arch.n_experts
        Oxx = bt.offdiag(torch.einsum("sa,sb->sab", xs, xs))      # O(x x^T)
        g = None if gate.value(d) == 0.0 else torch.cat(
            [torch.zeros_like(xs), gate.value(d) * xs], dim=1)
        B = None if gate.b(d) == 0.0 else gate.b(d) * Oxx
        return xs.new_zeros(xs.shape[0]), g, gate.a(d) * Oxx, B
    return None


def _network_outputs(arch: Architecture, W: torch.Tensor, xs: Any) -> torch.Tensor:
    """arch.f on all samples (s,) for W (p, d), or (R, s) for stacked W (R, p, d), for
    the architectures of :func:`_vectorised`."""
    if isinstance(arch, TwoLayerMLP):
        pre = xs @ W[..., :arch.n_in, :]                           # (..., s, d)
        trainable = arch.bias == "trainable"
        pre = pre + (W[..., arch.n_in, None, :] if trainable else arch._b)
        return (arch.act(pre) * W[..., -1, None, :]).sum(-1)
    if _elementwise_gate(arch):
        gates = GATES[arch.gate].fn(xs @ W[..., :arch.n_in, :])     # (..., s, d)
        if arch.expert == "neuron":                                # a_i tanh(b_i^T x)
            hidden = torch.tanh(xs @ W[..., arch.n_in:2 * arch.n_in, :])
            return (gates * hidden * W[..., -1, None, :]).sum(-1)
        return (gates * (xs @ W[..., arch.n_in:, :])).sum(-1)
    if isinstance(arch, (MultiHeadAttention, QKAttention)):
        q, X = xs[0], xs[1]
        hn = arch.h * arch.n_in
        Q = bt.unit_blocks(W, 0, (arch.h, arch.n_in))              # (..., d, h, n)
        K = bt.unit_blocks(W, hn, (arch.h, arch.n_in))
        queries = torch.einsum("...dha,sa->...sdh", Q, q)       # pairwise contractions:
        keys = torch.einsum("...dhb,sbN->...sdhN", K, X)        # several times faster
        scores = torch.einsum("...sdh,...sdhN->...sdN", queries, keys)
        attn = bt.softmax_last(scores / math.sqrt(arch.h))         # (..., s, d, N)
        if isinstance(arch, QKAttention):
            return torch.einsum("...sdN,sN->...s", attn, xs[2])
        vn = arch.h_v * arch.n_in
        V = bt.unit_blocks(W, 2 * hn, (arch.h_v, arch.n_in))
        v = bt.unit_blocks(W, 2 * hn + vn, (arch.h_v,))
        readout = torch.einsum("...dv,...dva->...da", v, V)        # V_i^T v_i
        values = torch.einsum("...da,saN->...sdN", readout, X)
        return (values * attn).sum((-1, -2))
    raise ValueError(f"argument `arch`: no vectorised form of {type(arch).__name__}")


@dataclass(frozen=True)
class NetworkModule:
    """The network ``arch.f`` as a module whose :meth:`batch` evaluates all samples (and
    all stacked runs) at once (Chapter 8); the values of ``arch.f`` sample by sample."""

    arch: Architecture

    def __call__(self, W: torch.Tensor, x: Any) -> torch.Tensor:
        return self.arch.f(W, x)

    def batch(self, xs: Any) -> Callable[[torch.Tensor], torch.Tensor]:
        """W -> arch.f on every sample of ``xs``: (n,), or (R, n) when stacked."""
        if _vectorised(self.arch):
            return lambda W: _network_outputs(self.arch, W, xs)
        n = _sample_count(xs)
        one, many = batched(self.arch.f, xs, n), batched(self.arch.f, xs, n, True)
        return lambda W: many(W) if W.ndim == 3 else one(W)


def _vectorised(arch: Architecture) -> bool:
    """Whether :func:`_network_outputs` has a vectorised form of ``arch.f``."""
    return isinstance(arch, (TwoLayerMLP, MultiHeadAttention, QKAttention)) or \
        _elementwise_gate(arch)


def network_module(arch: Architecture) -> NetworkModule:
    """The network ``arch.f`` as a module for :func:`nqf_mini.train_module` (Chapter 8).

    Same values as ``arch.f(W, x)``; on a data set it evaluates every sample, and R
    stacked runs, in one vectorised pass for the MLP, attention, query-key attention and
    the mixture of experts with an elementwise gate (torch.func.vmap otherwise). Train
    it next to :func:`nqf_module` from the same W0.
    """
    if not isinstance(arch, Architecture):
        raise TypeError(f"argument `arch`: expected an architecture from "
                        f"make_architecture, got {describe(arch)}")
    return NetworkModule(arch)


def module_pair(arch: Architecture) -> tuple[NetworkModule, NQFModule]:
    """(the network, its NQF) of an architecture as two modules f(W, x) (Chapters 8, 9).

    ``network_module(arch)`` is ``arch.f``; ``nqf_module(arch)`` is f0 + g . mu + mu^T B
    mu + Tr[W^T A W] from the closed forms of Chapter 2. Train both with
    :func:`nqf_mini.train_module` from the same W0, with the same optimiser and batches,
    and compare them with :func:`nqf_mini.agreement_window`.
    """
    return network_module(arch), nqf_module(arch)
