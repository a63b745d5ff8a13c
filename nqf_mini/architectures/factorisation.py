"""Factorisation models: exactly quadratic, no remainder (Chapter 2, factorisation).

In each, a unit is one rank-one component (one column of each factor), and the module is a
bilinear form in the unit, so :math:`f = \\mathrm{Tr}[MA]` holds exactly. For a two-factor unit
:math:`w_i = [u_i; v_i]` a term :math:`\\sum_i u_i^\\top Z v_i` is :math:`\\sum_i w_i^\\top O(Z)
w_i`, with :math:`O(Z) = \\tfrac12 \\begin{pmatrix}0 & Z\\\\ Z^\\top & 0\\end{pmatrix}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from .._validate import DATA_DEVICES, as_tensor, describe, require_positive_int, require_real
from ..blocks import offdiag
from ..seeds import generator
from ._helpers import gaussian, gaussians
from .base import Architecture, InputPart, _functorch_wrapped, register


class _ExactlyQuadratic(Architecture):
    """Shared by the factorisation models: ZGZ holds and there is no remainder."""

    @property
    def remainder_order(self) -> None:
        return None


@register
@dataclass(frozen=True)
class PhaseRetrieval(_ExactlyQuadratic):
    r""":math:`f(a) = \|U^\top a\|^2 = \sum_i (u_i^\top a)^2`, a unit is one column :math:`u_i`
    (Chapter 2, factorisation).

    Exactly quadratic: :math:`A(a) = a a^\top` with no remainder.

    Args:
        n_in: the dimension of a (and of each column u_i).
    """

    name: ClassVar[str] = "phase_retrieval"
    unit: ClassVar[str] = "one column u_i of the factor U"
    n_in: int = 4

    def __post_init__(self) -> None:
        self._normalise(n_in=require_positive_int("n_in", self.n_in))

    @property
    def p(self) -> int:
        return self.n_in

    def input_parts(self) -> tuple[InputPart, ...]:
        return (InputPart("the measurement vector a", (self.n_in,)),)

    def _f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return ((W.T @ x) ** 2).sum()

    def _A(self, x: torch.Tensor) -> torch.Tensor:
        return torch.outer(x, x)

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        """A Gaussian vector a of shape (n_in,), from :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        return gaussian((self.n_in,), seed)


@register
@dataclass(frozen=True)
class SymmetricSensing(_ExactlyQuadratic):
    """f(X) = <X, U U^T> = Tr[X^T U U^T], a unit is one column of U (Chapter 2, factorisation).

    Exactly quadratic: :math:`A(X) = (X + X^\\top)/2`.

    Args:
        n: the size of the sensing matrix X (n, n).
    """

    name: ClassVar[str] = "symmetric_sensing"
    unit: ClassVar[str] = "one column u_i of the factor U"
    n: int = 4

    def __post_init__(self) -> None:
        self._normalise(n=require_positive_int("n", self.n))

    @property
    def p(self) -> int:
        return self.n

    def input_parts(self) -> tuple[InputPart, ...]:
        return (InputPart("the sensing matrix X", (self.n, self.n)),)

    def _f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x * (W @ W.T))

    def _A(self, x: torch.Tensor) -> torch.Tensor:
        return (x + x.T) / 2

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        """A Gaussian matrix X of shape (n, n), from :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        return gaussian((self.n, self.n), seed)


@dataclass(frozen=True)
class _TwoFactors(_ExactlyQuadratic):
    """Units w_i = [u_i; v_i] with u_i in R^m (a column of U) and v_i in R^n (a column of V)."""

    m: int = 3
    n: int = 4

    def __post_init__(self) -> None:
        self._normalise(m=require_positive_int("m", self.m), n=require_positive_int("n", self.n))

    @property
    def p(self) -> int:
        return self.m + self.n

    def factors(self, W: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """U (m, d) and V (n, d)."""
        return self._factors(self.check_weights(W))

    def _factors(self, W: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return W[: self.m], W[self.m :]


@register
@dataclass(frozen=True)
class AsymmetricSensing(_TwoFactors):
    """f(X) = Tr[U V^T X] = sum_i v_i^T X u_i for X of shape (n, m) (Chapter 2, factorisation).

    Exactly quadratic: :math:`u_i^\\top X^\\top v_i = w_i^\\top O(X^\\top) w_i`, so
    :math:`A(X) = O(X^\\top)`. (With the other common convention :math:`\\langle X', UV^\\top
    \\rangle` for X' of shape (m, n), :math:`A = O(X')`.)

    Args:
        m, n: the sizes of the factors U (m, d) and V (n, d).
    """

    name: ClassVar[str] = "asymmetric_sensing"
    unit: ClassVar[str] = "one rank-one component: a column u_i of U and the column v_i of V"

    def input_parts(self) -> tuple[InputPart, ...]:
        return (InputPart("the sensing matrix X", (self.n, self.m)),)

    def _f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        U, V = self._factors(W)
        return torch.trace(U @ V.T @ x)

    def _A(self, x: torch.Tensor) -> torch.Tensor:
        return offdiag(x.T)

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        """A Gaussian matrix X of shape (n, m), from :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        return gaussian((self.n, self.m), seed)


@register
@dataclass(frozen=True)
class MatrixCompletion(_TwoFactors):
    """f(a, b) = (U V^T)_{ab} = sum_i U_{ai} V_{bi}, one observed entry (Chapter 2, factorisation).

    The input is an index pair, an integer tensor [a, b] with 0 <= a < m, 0 <= b < n (a user
    and an item of a recommender). Exactly quadratic: :math:`A = O(e_a e_b^\\top)`, in float64
    on the device of the indices.

    Args:
        m, n: the sizes of the factors U (m, d) and V (n, d).
    """

    name: ClassVar[str] = "matrix_completion"
    unit: ClassVar[str] = "one latent factor: a column u_i of U (rows) and v_i of V (columns)"

    def input_parts(self) -> tuple[InputPart, ...]:
        return (InputPart("the index pair [a, b]", (2,)),)

    def check_input(
        self,
        x: Any,
        name: str = "x",
        *,
        dtype: torch.dtype | None = None,
        device: torch.device | None = None,
        batch: int | None = None,
    ) -> Any:
        """Validate an index pair (Chapter 2): an integer tensor (or a list [a, b]) with
        0 <= a < m, 0 <= b < n; with ``batch``, n pairs (n, 2).

        Args:
            x: the index pair, or pairs.
            name: the argument named in errors.
            dtype: ignored (indices stay integers).
            device: the device to move the indices to (default: theirs).
            batch: None for one pair; n for n pairs; 0 for any number of pairs.

        Returns:
            The indices as an integer tensor.

        Raises:
            TypeError, ValueError: naming ``name`` (floats, booleans, a wrong shape, an index out of
                range).
        """
        what = f"the index pair [a, b] of {self.describe()}"
        if isinstance(x, torch.Tensor):
            if _functorch_wrapped(x):
                return x
            t = x
        elif isinstance(x, (list, tuple)) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in x
        ):
            t = torch.tensor(list(x), dtype=torch.int64)
        elif hasattr(x, "__array__") and not isinstance(x, (str, bytes)):
            t = torch.as_tensor(x)
        else:
            raise TypeError(
                f"argument `{name}`: expected {what} as an integer tensor, got {describe(x)}"
            )
        if t.dtype == torch.bool or t.is_floating_point() or t.is_complex():
            raise TypeError(f"argument `{name}`: expected {what} as integers, got dtype {t.dtype}")
        if t.device.type not in DATA_DEVICES:
            raise ValueError(
                f"argument `{name}`: expected a tensor on one of the devices "
                f"{list(DATA_DEVICES)}, got one on {t.device}"
            )
        shape_ok = (
            t.shape == (2,)
            if batch is None
            else (t.ndim == 2 and t.shape[1] == 2 and (batch == 0 or t.shape[0] == batch))
        )
        if not shape_ok:
            want = "(2,)" if batch is None else "(n, 2)"
            raise ValueError(
                f"argument `{name}`: expected {what} of shape {want}, got {tuple(t.shape)}"
            )
        rows, cols = t[..., 0], t[..., 1]
        if bool(((rows < 0) | (rows >= self.m) | (cols < 0) | (cols >= self.n)).any()):
            raise ValueError(
                f"argument `{name}`: expected 0 <= a < m = {self.m} and "
                f"0 <= b < n = {self.n}, got {t.tolist()}"
            )
        return t if device is None else t.to(device)

    def _like(self, x: Any) -> tuple[torch.dtype, torch.device]:
        return torch.float64, x.device

    def _f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        U, V = self._factors(W)
        # one-element index tensors, not 0-d ones: torch < 2.4 cannot vmap a 0-d index
        return (U[x[0:1]] * V[x[1:2]]).sum()

    def _A(self, x: torch.Tensor) -> torch.Tensor:
        E = torch.zeros(self.m, self.n, dtype=torch.float64, device=x.device)
        E[x[0], x[1]] = 1.0  # e_a e_b^T
        return offdiag(E)

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        """A random index pair [a, b] (int64), 0 <= a < m, 0 <= b < n, from
        :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        gen = generator(seed)
        return torch.stack(
            [torch.randint(self.m, (), generator=gen), torch.randint(self.n, (), generator=gen)]
        )


@register
@dataclass(frozen=True)
class Word2Vec(_TwoFactors):
    """f(a, b) = a^T U V^T b, a bilinear word-context score (Chapter 2, factorisation).

    The input is a pair (a (m,), b (n,)) (one-hot words, or any embeddings of them).
    Exactly quadratic: :math:`A = O(a b^\\top)`.

    Args:
        m, n: the sizes of the word and context embeddings U (m, d) and V (n, d).
    """

    name: ClassVar[str] = "word2vec"
    unit: ClassVar[str] = "one embedding dimension: column u_i of U (words) and v_i of V (contexts)"

    def input_parts(self) -> tuple[InputPart, ...]:
        return (InputPart("the word a", (self.m,)), InputPart("the context b", (self.n,)))

    def _f(self, W: torch.Tensor, x: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        U, V = self._factors(W)
        a, b = x
        return (U.T @ a) @ (V.T @ b)

    def _A(self, x: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return offdiag(torch.outer(*x))

    def sample_input(self, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """Gaussian vectors a (m,) and b (n,), from :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        a, b = gaussians(seed, (self.m,), (self.n,))
        return a, b


@register
@dataclass(frozen=True)
class DeepLinear(_ExactlyQuadratic):
    """f(x) = w3^T W2 W1 x, a three-layer linear network with w3 fixed (Chapter 2, factorisation).

    The units are the hidden neurons of layer 1: :math:`w_i = [W_1[i, :]; W_2[:, i]]` in
    :math:`\\mathbb{R}^{n_{in} + n_{out}}`, so :math:`f = \\sum_i (W_1[i, :] x)(w_3^\\top
    W_2[:, i])` and, exactly, :math:`A(x) = O(x w_3^\\top)`.

    Args:
        n_in: input dimension.
        w3: the fixed output weights (a tuple of finite floats; n_out = len(w3)).
    """

    name: ClassVar[str] = "deep_linear"
    unit: ClassVar[str] = "one hidden neuron of layer 1: its row of W1 and its column of W2"
    n_in: int = 3
    w3: tuple[float, ...] = (1.0, -0.5)

    def __post_init__(self) -> None:
        self._normalise(n_in=require_positive_int("n_in", self.n_in))
        w3 = as_tensor("w3", self.w3, ndim=1, dtype=torch.float64, nonempty=False)
        if w3.numel() == 0:
            raise ValueError("argument `w3`: expected at least one output weight, got ()")
        self._normalise(w3=tuple(require_real("w3", v) for v in w3.tolist()))

    @property
    def p(self) -> int:
        return self.n_in + len(self.w3)

    def input_parts(self) -> tuple[InputPart, ...]:
        return (InputPart("the input x", (self.n_in,)),)

    def _w3(self, like: torch.Tensor) -> torch.Tensor:
        return torch.tensor(self.w3, dtype=like.dtype, device=like.device)

    def _f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        W1, W2 = W[: self.n_in].T, W[self.n_in :]  # (d, n_in), (n_out, d)
        return self._w3(W) @ (W2 @ (W1 @ x))

    def _A(self, x: torch.Tensor) -> torch.Tensor:
        return offdiag(torch.outer(x, self._w3(x)))

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        """A Gaussian input x of shape (n_in,), from :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        return gaussian((self.n_in,), seed)
