"""Attention layers whose heads are the units (Chapter 2, attention; Prop. 3 for query-key only).

Notation: a query x of shape (n,), tokens X of shape (n, N), head dimension h, centred tokens
X_c = X - xbar 1^T with xbar = X 1 / N, and the token covariance Sigma_X = X_c X_c^T / N.
At W = 0 every head attends uniformly, softmax(s) = 1/N, and to first order in the scores s

    X softmax(s) = xbar + X_c s / N + O(|s|^2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar
from collections.abc import Callable

import torch

from .. import _batched as bt
from .._validate import require_positive_int
from ..blocks import offdiag
from ._helpers import gaussians, unit_blocks
from .base import Architecture, Forms, InputPart, register

Tokens = tuple[torch.Tensor, torch.Tensor]  # (query x (n,), tokens X (n, N))
Labelled = tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # (query x, tokens X, labels y (N,))


def _check_tokens(n_tokens: int) -> None:
    if n_tokens < 2:
        raise ValueError(
            f"argument `n_tokens`: expected at least 2 tokens (attention over one "
            f"token is a constant), got {n_tokens}"
        )


def _scores(Q: torch.Tensor, K: torch.Tensor, x: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """Per-head attention logits X^T K_i^T Q_i x / sqrt(h): Q, K (d, h, n) -> (d, N)."""
    queries = Q @ x  # (d, h)
    keys = K @ X  # (d, h, N)
    return torch.einsum("dh,dhN->dN", queries, keys) / math.sqrt(Q.shape[1])


@register
@dataclass(frozen=True)
class MultiHeadAttention(Architecture):
    """Multi-head attention with a scalar readout per head (Chapter 2, attention).

        f(x, X) = sum_i v_i^T V_i X softmax(X^T K_i^T Q_i x / sqrt(h)),
        w_i = [vec Q_i; vec K_i; vec V_i; v_i],   Q_i, K_i (h, n),  V_i (h_v, n),  v_i (h_v,).

    Closed form (Chapter 2): at W = 0 attention is uniform, so only V_i and v_i meet, through the
    mean token: Tr[M A] = sum_i v_i^T V_i xbar, i.e. A = O(I_{h_v} kron xbar) on the (vec V, v)
    block and zero elsewhere; A does not depend on the query. ZGZ holds, f0 = 0, and the cubic term
    vanishes: Q and K first enter at quartic order through :meth:`quartic_term`,
    T4_i = h^{-1/2} v_i^T V_i Sigma_X K_i^T Q_i x, so f(sW) = s^2 Tr[M A] + s^4 sum_i T4_i + O(s^6).

    Args:
        n_in: token (and query) dimension n.
        n_tokens: number of tokens N (>= 2).
        h: query/key dimension of a head.
        h_v: value dimension of a head.
    """

    name: ClassVar[str] = "attention"
    unit: ClassVar[str] = "one attention head: its query, key and value matrices and readout v_i"
    n_in: int = 3
    n_tokens: int = 4
    h: int = 2
    h_v: int = 2

    def __post_init__(self) -> None:
        for arg in ("n_in", "n_tokens", "h", "h_v"):
            self._normalise(**{arg: require_positive_int(arg, getattr(self, arg))})
        _check_tokens(self.n_tokens)

    @property
    def p(self) -> int:
        return 2 * self.h * self.n_in + self.h_v * self.n_in + self.h_v

    @property
    def remainder_order(self) -> int:
        return 4

    def input_parts(self) -> tuple[InputPart, ...]:
        return (
            InputPart("the query q", (self.n_in,)),
            InputPart("the tokens X", (self.n_in, self.n_tokens)),
        )

    def heads(self, W: Any) -> tuple[torch.Tensor, ...]:
        """Split W (p, d) into Q, K (d, h, n), V (d, h_v, n) and v (d, h_v)."""
        return self._heads(self.check_weights(W))

    def _heads(self, W: torch.Tensor) -> tuple[torch.Tensor, ...]:
        hn, vn = self.h * self.n_in, self.h_v * self.n_in
        Q = unit_blocks(W, 0, (self.h, self.n_in))
        K = unit_blocks(W, hn, (self.h, self.n_in))
        V = unit_blocks(W, 2 * hn, (self.h_v, self.n_in))
        v = unit_blocks(W, 2 * hn + vn, (self.h_v,))
        return Q, K, V, v

    def _f(self, W: torch.Tensor, x: Tokens) -> torch.Tensor:
        q, X = x
        Q, K, V, v = self._heads(W)
        attn = torch.softmax(_scores(Q, K, q, X), dim=-1)  # (d, N)
        values = torch.einsum("dv,dvn,nN->dN", v, V, X)  # v_i^T V_i X: (d, N)
        return torch.sum(values * attn)

    def _A(self, x: Tokens) -> torch.Tensor:
        _, X = x
        xbar = X.mean(dim=1)  # (n,)
        eye = torch.eye(self.h_v, dtype=X.dtype, device=X.device)
        Z = torch.kron(eye, xbar[:, None])  # (h_v n, h_v): Z[a n + b, a] = xbar_b
        out = X.new_zeros(self.p, self.p)
        start = 2 * self.h * self.n_in  # (vec V, v) are the last rows
        out[start:, start:] = offdiag(Z)
        return out

    def _batched_forms(self, xs: Tokens) -> Forms:
        _, X = xs
        xbar = X.mean(dim=2)  # (s, n)
        A = X.new_zeros(X.shape[0], self.p, self.p)
        start = 2 * self.h * self.n_in  # the (vec V, v) block
        A[:, start:, start:] = bt.offdiag(bt.eye_kron(self.h_v, xbar[:, :, None]))
        return Forms(X.new_zeros(X.shape[0]), None, A, None)

    def _predictor(self, xs: Tokens) -> Callable[[torch.Tensor], torch.Tensor]:
        return lambda W: _attention_outputs(self, W, xs)

    def quartic_term(self, W: Any, x: Any) -> torch.Tensor:
        r""":math:`T_{4,i} = h^{-1/2} v_i^\top V_i \Sigma_X K_i^\top Q_i q` for every head
        (Chapter 2): returns shape (d,)."""
        W = self.check_weights(W)
        q, X = self.check_input(x, dtype=W.dtype, device=W.device)
        Q, K, V, v = self._heads(W)
        Xc = X - X.mean(dim=1, keepdim=True)  # (n, N)
        sigma = Xc @ Xc.T / X.shape[1]  # (n, n)
        qk = torch.einsum("dhn,dh->dn", K, Q @ q)  # K_i^T Q_i x: (d, n)
        vV = torch.einsum("dv,dvn->dn", v, V)  # V_i^T v_i: (d, n)
        return torch.einsum("dn,nm,dm->d", vV, sigma, qk) / math.sqrt(self.h)

    def sample_input(self, seed: int = 0) -> Tokens:
        """A Gaussian query q (n_in,) and tokens X (n_in, n_tokens), from
        :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        q, X = gaussians(seed, (self.n_in,), (self.n_in, self.n_tokens))
        return q, X


@register
@dataclass(frozen=True)
class QKAttention(Architecture):
    """Query-key-only attention against fixed token labels (Chapter 2, Prop. 3; our definition).

        f(x, X, y) = sum_i y^T softmax(X^T K_i^T Q_i x / sqrt(h)),   w_i = [vec Q_i; vec K_i].

    Closed form (Chapter 2): with c = X_c y / N (the covariance of tokens and labels),
    f0 = d * mean(y) (not zero, yet ZGZ holds: the scores are bilinear in Q and K) and
    Tr[M A] = h^{-1/2} sum_i (K_i c)^T (Q_i x), so A = O(h^{-1/2} I_h kron x c^T) is an off-diagonal
    Q-K block; A = 0 when the labels or the tokens are constant. The next term is quartic.

    Args:
        n_in: token (and query) dimension n.
        n_tokens: number of tokens N (>= 2).
        h: query/key dimension of a head.
        n_heads: the number of heads d that f0 = d * mean(y) is stated for (A does not depend on d).
    """

    name: ClassVar[str] = "qk_attention"
    unit: ClassVar[str] = "one attention head: its query and key matrices Q_i, K_i (h x n)"
    n_in: int = 3
    n_tokens: int = 4
    h: int = 2
    n_heads: int = 2

    def __post_init__(self) -> None:
        for arg in ("n_in", "n_tokens", "h"):
            self._normalise(**{arg: require_positive_int(arg, getattr(self, arg))})
        self._normalise(n_heads=require_positive_int("n_heads", self.n_heads, minimum=2))
        _check_tokens(self.n_tokens)

    @property
    def p(self) -> int:
        return 2 * self.h * self.n_in

    @property
    def n_units(self) -> int:
        return self.n_heads

    @property
    def remainder_order(self) -> int:
        return 4

    def input_parts(self) -> tuple[InputPart, ...]:
        return (
            InputPart("the query q", (self.n_in,)),
            InputPart("the tokens X", (self.n_in, self.n_tokens)),
            InputPart("the labels y", (self.n_tokens,)),
        )

    def _f(self, W: torch.Tensor, x: Labelled) -> torch.Tensor:
        q, X, y = x
        Q = unit_blocks(W, 0, (self.h, self.n_in))  # (d, h, n)
        K = unit_blocks(W, self.h * self.n_in, (self.h, self.n_in))
        return torch.sum(torch.softmax(_scores(Q, K, q, X), dim=-1) @ y)

    def label_covariance(self, x: Any) -> torch.Tensor:
        """:math:`c = X_c y / N`, shape (n,) (Chapter 2)."""
        return self._label_covariance(self.check_input(x))

    def _label_covariance(self, x: Labelled) -> torch.Tensor:
        _, X, y = x
        return (X - X.mean(dim=1, keepdim=True)) @ y / X.shape[1]

    def _A(self, x: Labelled) -> torch.Tensor:
        q = x[0]
        eye = torch.eye(self.h, dtype=q.dtype, device=q.device)
        Z = torch.kron(eye, torch.outer(q, self._label_covariance(x)))  # (h n, h n)
        return offdiag(Z / math.sqrt(self.h))

    def _f0(self, x: Labelled) -> torch.Tensor:
        return self.n_heads * x[2].mean()

    def _batched_forms(self, xs: Labelled) -> Forms:
        q, X, y = xs
        c = torch.einsum("snN,sN->sn", X - X.mean(dim=2, keepdim=True), y) / X.shape[2]
        Z = bt.eye_kron(self.h, torch.einsum("sa,sb->sab", q, c)) / math.sqrt(self.h)
        return Forms(self.n_heads * y.mean(dim=1), None, bt.offdiag(Z), None)

    def _predictor(self, xs: Labelled) -> Callable[[torch.Tensor], torch.Tensor]:
        return lambda W: _attention_outputs(self, W, xs)

    def sample_input(self, seed: int = 0) -> Labelled:
        """A Gaussian query q (n_in,), tokens X (n_in, n_tokens) and labels y (n_tokens,), from
        :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        q, X, y = gaussians(seed, (self.n_in,), (self.n_in, self.n_tokens), (self.n_tokens,))
        return q, X, y


def _attention_outputs(
    arch: MultiHeadAttention | QKAttention, W: torch.Tensor, xs: Any
) -> torch.Tensor:
    """The module on all samples (s,) for W (p, d), or (R, s) for stacked W (R, p, d)."""
    q, X = xs[0], xs[1]
    hn = arch.h * arch.n_in
    Q = bt.unit_blocks(W, 0, (arch.h, arch.n_in))  # (..., d, h, n)
    K = bt.unit_blocks(W, hn, (arch.h, arch.n_in))
    queries = torch.einsum("...dha,sa->...sdh", Q, q)  # pairwise contractions:
    keys = torch.einsum("...dhb,sbN->...sdhN", K, X)  # several times faster
    scores = torch.einsum("...sdh,...sdhN->...sdN", queries, keys)
    attn = bt.softmax_last(scores / math.sqrt(arch.h))  # (..., s, d, N)
    if isinstance(arch, QKAttention):
        return torch.einsum("...sdN,sN->...s", attn, xs[2])
    vn = arch.h_v * arch.n_in
    V = bt.unit_blocks(W, 2 * hn, (arch.h_v, arch.n_in))
    v = bt.unit_blocks(W, 2 * hn + vn, (arch.h_v,))
    readout = torch.einsum("...dv,...dva->...da", v, V)  # V_i^T v_i
    values = torch.einsum("...da,saN->...sdN", readout, X)
    return (values * attn).sum((-1, -2))
