"""The two-layer MLP, one hidden neuron per unit (Chapter 1, Prop. MLP; Chapter 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from collections.abc import Callable

import torch

from .. import _batched as bt
from .._validate import require_choice, require_positive_int, require_real
from ..activations import Activation, get_activation
from ..blocks import offdiag
from ._helpers import activation_remainder_order, gaussian, phi_derivatives
from .base import Architecture, Forms, InputPart, register


@register
@dataclass(frozen=True)
class TwoLayerMLP(Architecture):
    """f(x) = sum_i v_i phi(u_i^T x + b_i), one neuron per unit (Chapter 1, Prop. MLP; Chapter 2).

    .. math::

        f(W, x) = \\sum_i v_i\\,\\phi(u_i^\\top x + b_i),\\qquad A(x) = \\phi'(b)\\,O(z),

    with :math:`z = x` (or :math:`[x; 1]` with a trainable bias), :math:`g = \\phi(b)\\,e_v`,
    :math:`B = 0`, :math:`f_0 = 0`. ZGZ holds iff :math:`\\phi(b) = 0`, so a sigmoid
    (:math:`\\phi(0) = 1/2`) or a frozen bias :math:`b_0 \\ne 0` give the general form.

    Args:
        n_in: input dimension.
        phi: activation name (see :mod:`nqf_mini.activations`) or an :class:`Activation`.
        bias: ``'none'`` (w_i = [u_i; v_i]), ``'trainable'`` (w_i = [u_i; b_i; v_i], a per-unit bias
            inside the unit) or ``'frozen'`` (every neuron has the fixed bias ``b0``).
        b0: the frozen bias (used only with ``bias='frozen'``).
    """

    name: ClassVar[str] = "mlp"
    unit: ClassVar[str] = "one hidden neuron: input weights u_i (and bias) and output weight v_i"
    n_in: int = 3
    phi: str | Activation = "tanh"
    bias: str = "none"
    b0: float = 0.0

    def __post_init__(self) -> None:
        self._normalise(n_in=require_positive_int("n_in", self.n_in))
        get_activation(self.phi)
        require_choice("bias", self.bias, ("none", "trainable", "frozen"))
        self._normalise(b0=require_real("b0", self.b0))

    @property
    def act(self) -> Activation:
        """The activation :math:`\\phi`."""
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

    def input_parts(self) -> tuple[InputPart, ...]:
        return (InputPart("the input x", (self.n_in,)),)

    def _f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        U, v = W[: self.n_in], W[-1]  # (n_in, d), (d,)
        pre = U.T @ x  # (d,)
        pre = pre + (W[self.n_in] if self.bias == "trainable" else self._b)
        return v @ self.act(pre)

    def _z(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x.new_ones(1)]) if self.bias == "trainable" else x

    def _A(self, x: torch.Tensor) -> torch.Tensor:
        return phi_derivatives(self.act, self._b)[1] * offdiag(self._z(x))

    def _g(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(self.p, dtype=x.dtype, device=x.device)
        out[-1] = phi_derivatives(self.act, self._b)[0]
        return out

    def _batched_forms(self, xs: torch.Tensor) -> Forms:
        phi0, phi1, _ = phi_derivatives(self.act, self._b)
        z = xs if self.bias != "trainable" else torch.cat([xs, xs.new_ones(xs.shape[0], 1)], dim=1)
        A = phi1 * bt.offdiag(z[:, :, None])  # phi'(b) O(z)
        g = None
        if phi0 != 0.0:
            g = xs.new_zeros(xs.shape[0], self.p)
            g[:, -1] = phi0  # phi(b) e_v
        return Forms(xs.new_zeros(xs.shape[0]), g, A, None)

    def _predictor(self, xs: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
        def predict(W: torch.Tensor) -> torch.Tensor:
            pre = xs @ W[..., : self.n_in, :]  # (..., s, d)
            trainable = self.bias == "trainable"
            pre = pre + (W[..., self.n_in, None, :] if trainable else self._b)
            return (self.act(pre) * W[..., -1, None, :]).sum(-1)

        return predict

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        """A Gaussian input x of shape (n_in,), from :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        return gaussian((self.n_in,), seed)
