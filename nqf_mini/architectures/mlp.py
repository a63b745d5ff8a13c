"""The two-layer MLP, one hidden neuron per unit (Chapter 1, Prop. MLP; Chapter 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from .._validate import require_choice, require_positive_int, require_real
from ..activations import Activation, get_activation
from ..blocks import offdiag
from ._helpers import activation_remainder_order, gaussian, phi_derivatives
from .base import Architecture, register


@register
@dataclass(frozen=True)
class TwoLayerMLP(Architecture):
    """f(x) = sum_i v_i phi(u_i^T x + b_i), one neuron per unit (Chapter 1, Prop. MLP; Chapter 2).

    Args:
        n_in: input dimension.
        phi: activation name (see :mod:`nqf_mini.activations`) or an :class:`Activation`.
        bias: ``'none'`` (w_i = [u_i; v_i]), ``'trainable'`` (w_i = [u_i; b_i; v_i], a per-unit bias
            inside the unit) or ``'frozen'`` (every neuron has the fixed bias ``b0``).
        b0: the frozen bias (used only with ``bias='frozen'``).

    Closed forms, with c = phi(b) and the unit's input z = x (or [x; 1] with a trainable bias):
    A(x) = phi'(b) O(z); g(x) = c e_v; B = 0; f0 = 0. ZGZ holds iff c = 0, so phi = sigmoid
    (phi(0) = 1/2) or a frozen bias b0 != 0 give the general form with g = phi(b) e_v.
    """

    name: ClassVar[str] = "mlp"
    unit: ClassVar[str] = "one hidden neuron: input weights u_i (and bias) and output weight v_i"
    n_in: int = 3
    phi: str | Activation = "tanh"
    bias: str = "none"
    b0: float = 0.0

    def __post_init__(self) -> None:
        require_positive_int("n_in", self.n_in)
        require_choice("bias", self.bias, ("none", "trainable", "frozen"))
        require_real("b0", self.b0)
        get_activation(self.phi)

    @property
    def act(self) -> Activation:
        return get_activation(self.phi)

    @property
    def _b(self) -> float:
        return self.b0 if self.bias == "frozen" else 0.0

    @property
    def p(self) -> int:
        return self.n_in + (2 if self.bias == "trainable" else 1)

    @property
    def zgz(self) -> bool:
        return phi_derivatives(self.act, self._b)[0] == 0.0

    @property
    def remainder_order(self) -> int | None:
        return activation_remainder_order(self.act, self._b)

    def f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        U, v = W[: self.n_in], W[-1]                         # (n_in, d), (d,)
        pre = U.T @ x                                        # (d,)
        pre = pre + (W[self.n_in] if self.bias == "trainable" else self._b)
        return v @ self.act(pre)

    def _z(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x.new_ones(1)]) if self.bias == "trainable" else x

    def A(self, x: torch.Tensor) -> torch.Tensor:
        return phi_derivatives(self.act, self._b)[1] * offdiag(self._z(x))

    def g(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(self.p, dtype=x.dtype, device=x.device)
        out[-1] = phi_derivatives(self.act, self._b)[0]
        return out

    def B(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(self.p, self.p, dtype=x.dtype, device=x.device)

    def f0(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros((), dtype=x.dtype, device=x.device)

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        return gaussian((self.n_in,), seed)
