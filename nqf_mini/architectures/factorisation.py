"""Matrix-factorisation models: exactly quadratic, no remainder (Chapter 2, factorisation).

In each, a unit is one rank-one component (one column of each factor), and the module is a
bilinear form in the unit, so f = Tr[M A] holds exactly. For a two-factor unit w_i = [u_i; v_i] a
term sum_i u_i^T Z v_i is sum_i w_i^T O(Z) w_i, with O(Z) = (1/2) [[0, Z], [Z^T, 0]].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from .._validate import require_positive_int
from ..blocks import offdiag
from ._helpers import gaussian, gaussians
from .base import Architecture, register
from ..seeds import generator


class _ExactlyQuadratic(Architecture):
    """Shared by the factorisation models: ZGZ holds and there is no remainder."""

    @property
    def remainder_order(self) -> None:
        return None


@register
@dataclass(frozen=True)
class PhaseRetrieval(_ExactlyQuadratic):
    """f(a) = |U^T a|^2 = sum_i (u_i^T a)^2, a unit is one column u_i (Chapter 2, factorisation).

    Exactly quadratic: A(a) = a a^T with no remainder.
    """

    name: ClassVar[str] = "phase_retrieval"
    unit: ClassVar[str] = "one column u_i of the factor U"
    n_in: int = 4

    @property
    def p(self) -> int:
        return self.n_in

    def f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return ((W.T @ x) ** 2).sum()

    def A(self, x: torch.Tensor) -> torch.Tensor:
        return torch.outer(x, x)

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        return gaussian((self.n_in,), seed)


@register
@dataclass(frozen=True)
class SymmetricSensing(_ExactlyQuadratic):
    """f(X) = <X, U U^T> = Tr[X^T U U^T], a unit is one column of U (Chapter 2, factorisation).

    Exactly quadratic: A(X) = (X + X^T)/2.
    """

    name: ClassVar[str] = "symmetric_sensing"
    unit: ClassVar[str] = "one column u_i of the factor U"
    n: int = 4

    @property
    def p(self) -> int:
        return self.n

    def f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x * (W @ W.T))

    def A(self, x: torch.Tensor) -> torch.Tensor:
        return (x + x.T) / 2

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        return gaussian((self.n, self.n), seed)


@dataclass(frozen=True)
class _TwoFactors(_ExactlyQuadratic):
    """Units w_i = [u_i; v_i] with u_i in R^m (a column of U) and v_i in R^n (a column of V)."""

    m: int = 3
    n: int = 4

    def __post_init__(self) -> None:
        require_positive_int("m", self.m)
        require_positive_int("n", self.n)

    @property
    def p(self) -> int:
        return self.m + self.n

    def factors(self, W: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """U (m, d) and V (n, d)."""
        return W[: self.m], W[self.m:]


@register
@dataclass(frozen=True)
class AsymmetricSensing(_TwoFactors):
    """f(X) = Tr[U V^T X] = sum_i v_i^T X u_i for X of shape (n, m) (Chapter 2, factorisation).

    Exactly quadratic: u_i^T X^T v_i = w_i^T O(X^T) w_i, so A(X) = O(X^T). (With the other common
    convention <X', U V^T> for X' of shape (m, n), A = O(X').)
    """

    name: ClassVar[str] = "asymmetric_sensing"
    unit: ClassVar[str] = "one rank-one component: a column u_i of U and the column v_i of V"

    def f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        U, V = self.factors(W)
        return torch.trace(U @ V.T @ x)

    def A(self, x: torch.Tensor) -> torch.Tensor:
        return offdiag(x.T)

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        return gaussian((self.n, self.m), seed)


@register
@dataclass(frozen=True)
class MatrixCompletion(_TwoFactors):
    """f(a, b) = (U V^T)_{ab} = sum_i U_{ai} V_{bi}, one observed entry (Chapter 2, factorisation).

    The input is an index pair, a long tensor [a, b] (a user and an item of a recommender).
    Exactly quadratic: A = O(e_a e_b^T), in float64 on the device of the indices.
    """

    name: ClassVar[str] = "matrix_completion"
    unit: ClassVar[str] = "one latent factor: a column u_i of U (rows) and v_i of V (columns)"

    def f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        U, V = self.factors(W)
        return U[x[0]] @ V[x[1]]

    def A(self, x: torch.Tensor) -> torch.Tensor:
        E = torch.zeros(self.m, self.n, dtype=torch.float64, device=x.device)
        E[x[0], x[1]] = 1.0                                  # e_a e_b^T
        return offdiag(E)

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        gen = generator(seed)
        return torch.stack([torch.randint(self.m, (), generator=gen),
                            torch.randint(self.n, (), generator=gen)])


@register
@dataclass(frozen=True)
class Word2Vec(_TwoFactors):
    """f(a, b) = a^T U V^T b, a bilinear word-context score (Chapter 2, factorisation).

    The input is a pair (a (m,), b (n,)) (one-hot words, or any embeddings of them).
    Exactly quadratic: A = O(a b^T).
    """

    name: ClassVar[str] = "word2vec"
    unit: ClassVar[str] = "one embedding dimension: column u_i of U (words) and v_i of V (contexts)"

    def f(self, W: torch.Tensor, x: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        U, V = self.factors(W)
        a, b = x
        return (U.T @ a) @ (V.T @ b)

    def A(self, x: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return offdiag(torch.outer(*x))

    def sample_input(self, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        return gaussians(seed, (self.m,), (self.n,))


@register
@dataclass(frozen=True)
class DeepLinear(_ExactlyQuadratic):
    """f(x) = w3^T W2 W1 x, a three-layer linear network with w3 fixed (Chapter 2, factorisation).

    The units are the hidden neurons of layer 1: w_i = [W1[i, :]; W2[:, i]] in R^{n_in + n_out}, so
    f = sum_i (W1[i, :] x)(w3^T W2[:, i]) and, exactly, A(x) = O(x w3^T).

    Args:
        n_in: input dimension.
        w3: the fixed output weights (a tuple of floats; n_out = len(w3)).
    """

    name: ClassVar[str] = "deep_linear"
    unit: ClassVar[str] = "one hidden neuron of layer 1: its row of W1 and its column of W2"
    n_in: int = 3
    w3: tuple[float, ...] = (1.0, -0.5)

    def __post_init__(self) -> None:
        require_positive_int("n_in", self.n_in)
        if len(self.w3) == 0:
            raise ValueError("argument `w3`: expected at least one output weight, got ()")

    @property
    def p(self) -> int:
        return self.n_in + len(self.w3)

    def _w3(self, like: torch.Tensor) -> torch.Tensor:
        return torch.tensor(self.w3, dtype=like.dtype, device=like.device)

    def f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        W1, W2 = W[: self.n_in].T, W[self.n_in:]            # (d, n_in), (n_out, d)
        return self._w3(W) @ (W2 @ (W1 @ x))

    def A(self, x: torch.Tensor) -> torch.Tensor:
        return offdiag(torch.outer(x, self._w3(x)))

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        return gaussian((self.n_in,), seed)
