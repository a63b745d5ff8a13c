"""Deep networks and a layer-wise NQF, our reconstruction of the seed's Fig. 8 (Ch. 9).

The seed's Fig. 8 compares "4-layer MLPs and 2-layer attention models" with their
"2-layer NQF approximations" without defining them; its fragment of Theorem 3
(compression) indexes order parameters M^(l), mu^(l) by layer. Our reading, derived in
Chapter 9 and labelled there as ours: cut the network into modules that each satisfy
Theorem 1 (a sum over interchangeable units with ZGZ) and replace every module by its
own quadratic form, keeping the composition.

* :class:`DeepMLP` with L = 2K weight layers, f(x) = w_L^T phi(W_{L-1} ... phi(W_1 x)).
  Block k is the two-layer module z -> W_{2k} phi(W_{2k-1} z); its units are the neurons
  of hidden layer 2k - 1, unit i = [row i of W_{2k-1}; column i of W_{2k}], and its NQF
  (one structure matrix A_c(z) = phi'(0) O(z e_c^T) per output c, Chapter 2) is phi'(0)
  W_{2k} W_{2k-1} z. The layer-wise NQF keeps phi between the blocks:

      f_NQF(x) = phi'(0) w_L^T W_{L-1} phi(... phi(phi'(0) W_2 W_1 x)),

  and the leading order of the whole network at small weights is the deep linear network
  f_lin(x) = phi'(0)^(L-1) w_L^T W_{L-1} ... W_1 x.
* :class:`DeepAttention`: a residual multi-head self-attention layer (head i: Q_i, K_i,
  V_i and an output map O_i) followed by the attention read-out of Chapter 2. At zero
  weights every head attends uniformly, so the NQF of layer 1 shifts every token by S
  xbar with S = sum_i O_i V_i, and that of layer 2 is sum_j v_j^T V_j times the mean
  token:

      f_NQF(q, X) = sum_j v_j^T V_j (I + S) xbar,    f_lin(q, X) = sum_j v_j^T V_j xbar.

Each layer's output depends on its weights only through its order parameter M^(l) =
W^(l) W^(l)^T, so gradient descent on f_NQF closes on (M^(1), ..., M^(K)) (Chapter 9
checks it by rotating the units of every layer). All three models take one flat
parameter vector theta (P,), so :func:`nqf_mini.train_module` trains them from the same
initialisation on the same batches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ._validate import (
    as_tensor,
    require_choice,
    require_positive,
    require_positive_int,
)
from ._batched import softmax_last, unit_blocks
from ._modules import check_input
from .activations import Activation, get_activation
from .architectures import MultiHeadAttention
from .device import resolve_device
from .seeds import generator

Shape = tuple[int, ...]
KINDS = ("network", "nqf", "leading")


def _split(theta: torch.Tensor, shapes: list[Shape]) -> list[torch.Tensor]:
    """Cut the last axis of theta (..., P) into consecutive blocks of these shapes."""
    out, start, lead = [], 0, theta.shape[:-1]
    for shape in shapes:
        size = math.prod(shape)
        out.append(theta[..., start : start + size].reshape(*lead, *shape))
        start += size
    return out


def _check_theta(theta: Any, P: int) -> torch.Tensor:
    theta = as_tensor("theta", theta, ndim=1)
    if theta.shape[0] != P:
        raise ValueError(
            f"argument `theta`: expected a flat parameter vector of "
            f"length {P}, got {theta.shape[0]}"
        )
    return theta


def _gaussian_theta(
    P: int, scale: float, seed: int, dtype: torch.dtype, device: torch.device | str | None
) -> torch.Tensor:
    scale = require_positive("scale", scale)
    gen = generator(seed)
    theta = scale * torch.randn(P, generator=gen, dtype=torch.float64)
    return theta.to(device=resolve_device(device), dtype=dtype)


@dataclass(frozen=True)
class DeepModule:
    """One of the three models of a deep network as a module of ``train_module``:
    ``module(theta, x)`` on one input, ``module.batch(xs)`` on a data set (one
    vectorised
    evaluation for all samples, and for stacked runs theta (R, P))."""

    model: Any
    kind: str

    def __call__(self, theta: torch.Tensor, x: Any) -> torch.Tensor:
        return self.model.forward(theta, x, self.kind)

    def batch(self, xs: Any) -> Any:
        """theta -> the module on every sample of ``xs`` (checked once: real, finite)."""
        xs = check_input(xs, "xs")
        return lambda theta: self.model.forward(theta, xs, self.kind, batched=True)


class _Deep:
    """What the deep models share: the three kinds and their modules."""

    @property
    def P(self) -> int:
        """The number of parameters (the length of theta)."""
        raise NotImplementedError

    def module(self, kind: str = "network") -> DeepModule:
        """The network (``"network"``), its layer-wise NQF (``"nqf"``) or its leading
        order at small weights (``"leading"``) as a module f(theta, x)."""
        return DeepModule(self, require_choice("kind", kind, KINDS))

    def f(self, theta: torch.Tensor, x: Any) -> torch.Tensor:
        """The network on one input."""
        return self.forward(theta, x, "network")

    def nqf(self, theta: torch.Tensor, x: Any) -> torch.Tensor:
        """The layer-wise NQF on one input (the class docstring)."""
        return self.forward(theta, x, "nqf")

    def leading(self, theta: torch.Tensor, x: Any) -> torch.Tensor:
        """The leading order at small weights on one input (the class docstring)."""
        return self.forward(theta, x, "leading")

    def forward(
        self, theta: torch.Tensor, x: Any, kind: str, batched: bool = False
    ) -> torch.Tensor:
        raise NotImplementedError

    def init(
        self,
        scale: float,
        seed: int = 0,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
    ) -> torch.Tensor:
        """theta with i.i.d. N(0, scale^2) entries, drawn on the CPU from ``seed``."""
        return _gaussian_theta(self.P, scale, seed, dtype, device)

    def units(self, theta: Any) -> list[torch.Tensor]:
        raise NotImplementedError

    def order_parameters(self, theta: Any) -> list[torch.Tensor]:
        """M^(l) = W^(l) W^(l)^T for every layer l of the layer-wise NQF (Chapter 9)."""
        return [U @ U.T for U in self.units(theta)]


@dataclass(frozen=True)
class DeepMLP(_Deep):
    """f(x) = w_L^T phi(W_{L-1} phi(... phi(W_1 x))), L = 2K layers (Chapter 9, ours).

    Args:
        n_in: input dimension.
        widths: the L - 1 hidden widths (d_1, ..., d_{L-1}); L - 1 must be odd.
        phi: activation with phi(0) = 0 (ZGZ), e.g. "tanh".

    The parameters are one flat vector theta = [vec W_1; ...; vec W_{L-1}; w_L]
    (row-major). The three models (module docstring):

        network   f(x) = w_L^T phi(W_{L-1} ... phi(W_1 x))
        nqf       f(x) = phi'(0) w_L^T W_{L-1} phi(... phi(phi'(0) W_2 W_1 x))
        leading   f(x) = phi'(0)^(L-1) w_L^T W_{L-1} ... W_1 x
    """

    n_in: int = 8
    widths: tuple[int, ...] = (16, 16, 16)
    phi: str | Activation = "tanh"

    def __post_init__(self) -> None:
        require_positive_int("n_in", self.n_in)
        if not isinstance(self.widths, tuple) or not self.widths:
            raise TypeError(
                f"argument `widths`: expected a tuple of hidden widths, got {self.widths!r}"
            )
        for w in self.widths:
            require_positive_int("widths", w)
        if len(self.widths) % 2 == 0:
            raise ValueError(
                f"argument `widths`: L = 2K layers have an odd number of "
                f"hidden widths, got {len(self.widths)}"
            )
        act = get_activation(self.phi)
        if act.phi0 != 0.0 or not act.smooth:
            raise ValueError(
                f"argument `phi`: the NQF needs a smooth phi, phi(0) = 0, got {act.name}"
            )

    @property
    def act(self) -> Activation:
        return get_activation(self.phi)

    @property
    def depth(self) -> int:
        """The number L of weight layers."""
        return len(self.widths) + 1

    @property
    def shapes(self) -> list[Shape]:
        dims = (self.n_in,) + self.widths
        hidden = [(dims[l + 1], dims[l]) for l in range(len(self.widths))]
        return hidden + [(self.widths[-1],)]

    @property
    def P(self) -> int:
        """The number of parameters."""
        return sum(math.prod(s) for s in self.shapes)

    def forward(
        self, theta: torch.Tensor, x: torch.Tensor, kind: str, batched: bool = False
    ) -> torch.Tensor:
        """f on x (n_in,) (or (n, n_in) with ``batched``) for theta (P,) or runs (R, P):
        returns (), (n,) or (R, n)."""
        X = x if batched else x[None]
        *Ws, w = _split(theta, self.shapes)
        c, act = self.act.phi1, self.act
        z = X  # (n, n_in) or (R, n, .)
        if kind == "network":
            for W in Ws:
                z = act(z @ W.transpose(-1, -2))
        elif kind == "nqf":
            for k in range(0, len(Ws) - 1, 2):  # block NQF, then phi
                z = act(c * (z @ Ws[k].transpose(-1, -2) @ Ws[k + 1].transpose(-1, -2)))
            z = c * (z @ Ws[-1].transpose(-1, -2))
        else:
            for W in Ws:
                z = z @ W.transpose(-1, -2)
            z = c ** len(Ws) * z
        out = (z @ w[..., :, None])[..., 0]
        return out if batched else out[..., 0]

    def units(self, theta: Any) -> list[torch.Tensor]:
        """The unit matrices W^(k) (p_k, d_{2k-1}) of the K blocks: column i is
        [row i of W_{2k-1}; column i of W_{2k}] (the last block: [row i; w_L[i]])."""
        *Ws, w = _split(_check_theta(theta, self.P), self.shapes)
        Ws = Ws + [w[None, :]]
        return [torch.cat([Ws[k].T, Ws[k + 1]], dim=0) for k in range(0, len(Ws), 2)]

    def from_units(self, units: list[torch.Tensor]) -> torch.Tensor:
        """theta from the unit matrices of :meth:`units` (its inverse)."""
        parts = []
        for U, k in zip(units, range(0, len(self.shapes), 2)):
            rows = self.shapes[k][1]
            parts += [U[:rows].T.reshape(-1), U[rows:].reshape(-1)]
        return torch.cat(parts)


@dataclass(frozen=True)
class DeepAttention(_Deep):
    """A residual self-attention layer, then the attention read-out of Ch. 2 (Ch. 9).

        layer 1 (d1 heads): z -> z + sum_i O_i V_i X softmax(X^T K_i^T Q_i z / sqrt h),
                             for every token z of X and for the query q;
        layer 2 (d2 heads): f = sum_j v_j^T V'_j X1 softmax(X1^T K'_j^T Q'_j q1/sqrt h),

    layer 2 being :class:`nqf_mini.architectures.MultiHeadAttention` on the output (q1,
    X1) of layer 1. A layer-1 unit is w_i = [vec Q_i; vec K_i; vec V_i; vec O_i] (Q_i,
    K_i (h, n), V_i (h_v, n), O_i (n, h_v)), a layer-2 unit that of Chapter 2; theta =
    [vec W^(1); vec W^(2)] with W^(1) (p1, d1) and W^(2) (p2, d2), units as columns. The
    three models (module docstring), with xbar the mean token and S = sum_i O_i V_i:

        network   f(q, X) as above
        nqf       f = sum_j v_j^T V'_j (I + S) xbar
        leading   f = sum_j v_j^T V'_j xbar
    """

    n_in: int = 4
    n_tokens: int = 6
    h: int = 2
    h_v: int = 2
    d1: int = 4
    d2: int = 4

    def __post_init__(self) -> None:
        for arg in ("n_in", "n_tokens", "h", "h_v", "d1", "d2"):
            require_positive_int(arg, getattr(self, arg))
        if self.n_tokens < 2:
            raise ValueError(
                f"argument `n_tokens`: expected at least 2 tokens, got {self.n_tokens}"
            )

    @property
    def readout(self) -> MultiHeadAttention:
        """Layer 2 as the architecture of Chapter 2."""
        return MultiHeadAttention(n_in=self.n_in, n_tokens=self.n_tokens, h=self.h, h_v=self.h_v)

    @property
    def p1(self) -> int:
        return 2 * self.h * self.n_in + 2 * self.h_v * self.n_in

    @property
    def P(self) -> int:
        return self.p1 * self.d1 + self.readout.p * self.d2

    def _weights(self, theta: torch.Tensor) -> list[torch.Tensor]:
        return _split(theta, [(self.p1, self.d1), (self.readout.p, self.d2)])

    def _heads(self, W: torch.Tensor, last: Shape) -> tuple[torch.Tensor, ...]:
        """Q, K (..., d, h, n), V (..., d, h_v, n) and the last block of each unit."""
        hn, vn = self.h * self.n_in, self.h_v * self.n_in
        return (
            unit_blocks(W, 0, (self.h, self.n_in)),
            unit_blocks(W, hn, (self.h, self.n_in)),
            unit_blocks(W, 2 * hn, (self.h_v, self.n_in)),
            unit_blocks(W, 2 * hn + vn, last),
        )

    def forward(
        self,
        theta: torch.Tensor,
        x: tuple[torch.Tensor, torch.Tensor],
        kind: str,
        batched: bool = False,
    ) -> torch.Tensor:
        """f on x = (q (n,), X (n, N)) (or (q (s, n), X (s, n, N)) with ``batched``) for
        theta (P,) or runs (R, P): returns (), (s,) or (R, s)."""
        q, X = (x[0], x[1]) if batched else (x[0][None], x[1][None])
        W1, W2 = self._weights(theta)
        Q, K, V, O = self._heads(W1, (self.n_in, self.h_v))
        Q2, K2, V2, v2 = self._heads(W2, (self.h_v,))
        root = math.sqrt(self.h)
        if kind == "network":
            Z = torch.cat([X, q[..., None]], dim=-1)  # (s, n, N + 1)
            QZ = torch.einsum("...dhk,skm->...sdhm", Q, Z)
            KX = torch.einsum("...dhk,skN->...sdhN", K, X)
            attn = softmax_last(torch.einsum("...sdhm,...sdhN->...sdmN", QZ, KX) / root)
            VX = torch.einsum("...dvk,skN->...sdvN", V, X)
            mixed = torch.einsum("...sdvN,...sdmN->...sdvm", VX, attn)
            Z1 = Z + torch.einsum("...dav,...sdvm->...sam", O, mixed)
            q1, X1 = Z1[..., -1], Z1[..., :-1]  # layer 2: Chapter 2
            queries = torch.einsum("...dhk,...sk->...sdh", Q2, q1)  # pairwise einsums
            keys = torch.einsum("...dhl,...slN->...sdhN", K2, X1)
            scores = torch.einsum("...sdh,...sdhN->...sdN", queries, keys) / root
            readout = torch.einsum("...dv,...dvk->...dk", v2, V2)
            values = torch.einsum("...dk,...skN->...sdN", readout, X1)
            out = (values * softmax_last(scores)).sum((-1, -2))
        else:
            xbar = X.mean(-1)  # (s, n)
            if kind == "nqf":
                S = torch.einsum("...dav,...dvk->...ak", O, V)
                xbar = xbar + torch.einsum("...ak,...sk->...sa", S, xbar)
            readout = torch.einsum("...dv,...dvk->...k", v2, V2)  # sum_j V_j^T v_j
            out = torch.einsum("...k,...sk->...s", readout, xbar)
        return out if batched else out[..., 0]

    def layer1(self, W1: torch.Tensor, z: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        """Layer 1 on one token or query z (n,) among the tokens X (n, N), for layer-1
        units W1 (p1, d) with any number d of heads (the module whose NQF Chapter 9
        derives): z + sum_i O_i V_i X softmax(X^T K_i^T Q_i z / sqrt(h))."""
        Q, K, V, O = self._heads(W1, (self.n_in, self.h_v))
        scores = torch.einsum("dhk,kN,dhl,l->dN", K, X, Q, z) / math.sqrt(self.h)
        return z + torch.einsum("dav,dvk,kN,dN->a", O, V, X, torch.softmax(scores, -1))

    def units(self, theta: Any) -> list[torch.Tensor]:
        """The unit matrices (W^(1) (p1, d1), W^(2) (p2, d2)) of the two layers."""
        return self._weights(_check_theta(theta, self.P))

    def from_units(self, units: list[torch.Tensor]) -> torch.Tensor:
        """theta from the unit matrices of :meth:`units` (its inverse)."""
        return torch.cat([U.reshape(-1) for U in units])


def rotate_units(model: DeepMLP | DeepAttention, theta: Any, seed: int = 0) -> torch.Tensor:
    """theta with every layer's units rotated, W^(l) -> W^(l) R_l (R_l orthogonal).

    Every order parameter M^(l) = W^(l) W^(l)^T is unchanged, so the layer-wise NQF is
    the same function, and gradient descent on it follows the same (M^(1), ..., M^(K))
    (Chapter 9).
    """
    if not isinstance(model, (DeepMLP, DeepAttention)):
        raise TypeError(
            f"argument `model`: expected a DeepMLP or DeepAttention, got {type(model).__name__}"
        )
    gen = generator(seed)
    rotated = []
    for U in model.units(theta):
        d = U.shape[1]
        R = torch.linalg.qr(torch.randn(d, d, generator=gen, dtype=torch.float64))[0]
        rotated.append(U @ R.to(U))
    return model.from_units(rotated)
