"""Helpers shared by the architecture modules: seeded inputs, unit blocks, activation data."""

from __future__ import annotations

import torch

from ..activations import Activation
from ..seeds import generator


def phi_derivatives(act: Activation, at: float) -> tuple[float, float, float]:
    """phi(at), phi'(at), phi''(at): exact table values at 0, autograd elsewhere."""
    if at == 0.0:
        return act.phi0, act.phi1, act.phi2
    z = torch.tensor(at, dtype=torch.float64, requires_grad=True)
    v = act(z)
    d1 = torch.autograd.grad(v, z, create_graph=True)[0]
    d2 = torch.autograd.grad(d1, z)[0]
    return v.item(), d1.item(), d2.item()


def activation_remainder_order(act: Activation, at: float = 0.0) -> int | None:
    """Remainder order of sum_i v_i phi(u_i . z + at): 2 (not smooth), None (linear), 3 or 4."""
    if not act.smooth:
        return 2
    if act.name == "linear":
        return None
    return 4 if phi_derivatives(act, at)[2] == 0.0 else 3


def gaussian(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """A float64 standard Gaussian tensor drawn from a generator seeded with ``seed``."""
    return torch.randn(*shape, generator=generator(seed), dtype=torch.float64)


def gaussians(seed: int, *shapes: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    """Several float64 Gaussian tensors drawn in order from one seeded generator."""
    gen = generator(seed)
    return tuple(torch.randn(*s, generator=gen, dtype=torch.float64) for s in shapes)


def unit_blocks(W: torch.Tensor, start: int, shape: tuple[int, ...]) -> torch.Tensor:
    """Rows start : start + prod(shape) of W (p, d), one block per unit: returns (d, *shape).

    Unit i's block is ``W[start:stop, i].reshape(shape)`` (row-major vec), so a matrix Q of shape
    (h, n) sits in the unit as vec Q with Q[r, a] at position r * n + a.
    """
    size = 1
    for s in shape:
        size *= s
    return W[start : start + size].T.reshape(W.shape[1], *shape)
