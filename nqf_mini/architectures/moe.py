"""A mixture of linear experts whose (gate, expert) pairs are the units (Chapter 2, MoE).

Gates are declared as data: each gate is a function of the logits z_i = r_i^T x and the few Taylor
coefficients at z = 0 that the closed forms need. For a softmax over d experts they depend on d.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

import torch

from .. import _batched as bt
from .._validate import require_choice, require_positive_int
from ..blocks import offdiag
from ._helpers import gaussian
from .base import Architecture, Forms, InputPart, register


@dataclass(frozen=True)
class Gate:
    """A gate gamma(z) over the logits z (d,) of all d experts, with its expansion at z = 0.

    Attributes:
        name: registry key.
        fn: logits (d,) -> gate values (d,).
        value: d -> gamma_i(0), which gives g = [0; gamma_i(0) x].
        a: d -> coefficient of O(x x^T) in A.
        b: d -> coefficient of O(x x^T) in B (non-zero only for gates that couple experts).
        remainder_order: order of the first term the quadratic form leaves out (None: exact).
    """

    name: str
    fn: Callable[[torch.Tensor], torch.Tensor]
    value: Callable[[int], float]
    a: Callable[[int], float]
    b: Callable[[int], float]
    remainder_order: int | None


GATES: dict[str, Gate] = {
    gate.name: gate
    for gate in [
        Gate("linear", lambda z: z, lambda d: 0.0, lambda d: 1.0, lambda d: 0.0, None),
        Gate("tanh", torch.tanh, lambda d: 0.0, lambda d: 1.0, lambda d: 0.0, 4),
        Gate("sigmoid", torch.sigmoid, lambda d: 0.5, lambda d: 0.25, lambda d: 0.0, 4),
        Gate("softmax", lambda z: torch.softmax(z, dim=0), lambda d: 1.0 / d, lambda d: 1.0 / d,
             lambda d: -1.0 / d**2, 3),
    ]
}


@register
@dataclass(frozen=True)
class MixtureOfExperts(Architecture):
    """f(x) = sum_i gamma_i(R^T x) v_i^T x, unit i = (gate r_i, linear expert v_i) (Chapter 2, MoE).

    With w_i = [r_i; v_i] and O(x x^T) = (1/2) [[0, x x^T], [x x^T, 0]] (Chapter 2):

        linear   gamma_i = r_i^T x:      A = O(x x^T), exact (no remainder)
        tanh     gamma_i = tanh(r_i^T x): A = O(x x^T), remainder order 4
        sigmoid  gamma_i = sigma(r_i^T x): g = [0; x/2], A = O(x x^T)/4, B = 0, order 4
        softmax  gamma = softmax(R^T x):  g = [0; x/d], A = O(x x^T)/d, B = -O(x x^T)/d^2, order 3

    f0 = 0 always; ZGZ holds for the linear and tanh gates only. The softmax closed forms are for
    d = ``n_experts`` units: pass ``d=arch.n_units`` to the extractors.

    Args:
        n_in: input dimension.
        gate: ``'linear'``, ``'tanh'``, ``'sigmoid'`` or ``'softmax'``.
        n_experts: number of experts d the softmax closed forms are stated for.
    """

    name: ClassVar[str] = "moe"
    unit: ClassVar[str] = "one expert with its gate: gate weights r_i and expert weights v_i"
    n_in: int = 3
    gate: str = "linear"
    n_experts: int = 3

    def __post_init__(self) -> None:
        self._normalise(n_in=require_positive_int("n_in", self.n_in),
                        n_experts=require_positive_int("n_experts", self.n_experts, minimum=2))
        require_choice("gate", self.gate, list(GATES))

    @property
    def _gate(self) -> Gate:
        return GATES[self.gate]

    @property
    def p(self) -> int:
        return 2 * self.n_in

    @property
    def zgz(self) -> bool:
        d = self.n_experts
        return self._gate.value(d) == 0.0 and self._gate.b(d) == 0.0

    @property
    def n_units(self) -> int | None:
        return self.n_experts if self.gate == "softmax" else None

    @property
    def remainder_order(self) -> int | None:
        return self._gate.remainder_order

    def input_parts(self) -> tuple[InputPart, ...]:
        return (InputPart("the input x", (self.n_in,)),)

    def _f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        R, V = W[: self.n_in], W[self.n_in:]                # (n_in, d) each
        return self._gate.fn(R.T @ x) @ (V.T @ x)

    def _Oxx(self, x: torch.Tensor) -> torch.Tensor:
        return offdiag(torch.outer(x, x))                   # (2 n_in, 2 n_in)

    def _A(self, x: torch.Tensor) -> torch.Tensor:
        return self._gate.a(self.n_experts) * self._Oxx(x)

    def _B(self, x: torch.Tensor) -> torch.Tensor:
        return self._gate.b(self.n_experts) * self._Oxx(x)

    def _g(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([torch.zeros_like(x), self._gate.value(self.n_experts) * x])

    def _batched_forms(self, xs: torch.Tensor) -> Forms:
        gate, d = self._gate, self.n_experts
        Oxx = bt.offdiag(torch.einsum("sa,sb->sab", xs, xs))      # O(x x^T)
        g = None if gate.value(d) == 0.0 else torch.cat(
            [torch.zeros_like(xs), gate.value(d) * xs], dim=1)
        B = None if gate.b(d) == 0.0 else gate.b(d) * Oxx
        return Forms(xs.new_zeros(xs.shape[0]), g, gate.a(d) * Oxx, B)

    def _predictor(self, xs: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
        if self.gate == "softmax":                        # couples the experts: vmap
            return super()._predictor(xs)

        def predict(W: torch.Tensor) -> torch.Tensor:
            gates = self._gate.fn(xs @ W[..., :self.n_in, :])      # (..., s, d)
            return (gates * (xs @ W[..., self.n_in:, :])).sum(-1)
        return predict

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        """A Gaussian input x of shape (n_in,), from :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        return gaussian((self.n_in,), seed)
