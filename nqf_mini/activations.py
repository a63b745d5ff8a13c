"""Activation functions phi with their Taylor coefficients at zero.

The structure matrix of a two-layer network depends on phi only through phi'(0) (Chapter 1), and the
order of the remainder of the quadratic form through the first non-zero derivative beyond it:
phi''(0) != 0 gives a cubic remainder, phi''(0) = 0 a quartic one (Chapter 1, "remainder order").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable

import torch

Fn = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Activation:
    """A scalar nonlinearity and its exact values at 0.

    Attributes:
        name: registry key.
        fn: elementwise torch function.
        phi0, phi1, phi2: phi(0), phi'(0), phi''(0) in closed form (tests compare them with
        autograd). smooth: False for functions that are not C^3 at 0 (ReLU), where Theorem 1 does
        not apply.
    """

    name: str
    fn: Fn
    phi0: float
    phi1: float
    phi2: float
    smooth: bool = True

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        return self.fn(z)


def _softplus0(z: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.softplus(z) - math.log(2.0)


def _gelu(z: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(z)


def _tanh_no_cubic(z: torch.Tensor) -> torch.Tensor:
    """tanh z + z^3 / 3 = z + 2 z^5 / 15 - ...: tanh without its cubic term (Chapter 6's control
    for the harmonics a tanh network makes)."""
    return torch.tanh(z) + z * z * z / 3.0


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in [
        Activation("linear", lambda z: z, 0.0, 1.0, 0.0),
        Activation("tanh", torch.tanh, 0.0, 1.0, 0.0),
        # tanh's Taylor polynomial to third order, z - z^3/3: the NQF plus the leading term of
        # tanh's remainder (Chapter 5 traces the network's later ignitions to this term)
        Activation("cubic", lambda z: z - z**3 / 3, 0.0, 1.0, 0.0),
        Activation("sin", torch.sin, 0.0, 1.0, 0.0),
        Activation("silu", torch.nn.functional.silu, 0.0, 0.5, 0.5),
        Activation("gelu", _gelu, 0.0, 0.5, 2.0 / math.sqrt(2.0 * math.pi)),
        Activation("softplus0", _softplus0, 0.0, 0.5, 0.25),
        Activation("sigmoid", torch.sigmoid, 0.5, 0.25, 0.0),
        Activation("relu", torch.relu, 0.0, 0.0, 0.0, smooth=False),
        Activation("tanh_no_cubic", _tanh_no_cubic, 0.0, 1.0, 0.0),
    ]
}


def get_activation(phi: str | Activation, name: str = "phi") -> Activation:
    """Look up an activation by name (``'tanh'``, ``'silu'``, ...) or pass an :class:`Activation`.

    ``name`` is the argument that carried it, for the error message.
    """
    if isinstance(phi, Activation):
        return phi
    if isinstance(phi, str) and phi in ACTIVATIONS:
        return ACTIVATIONS[phi]
    raise ValueError(
        f"argument `{name}`: expected one of {sorted(ACTIVATIONS)} or an Activation, got {phi!r}"
    )
