"""A 1-D convolutional layer whose output channels are the units (Chapter 2, CNN)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from .._validate import require_choice, require_positive_int
from ..activations import Activation, get_activation
from ..blocks import offdiag
from ._helpers import activation_remainder_order, gaussian, unit_blocks
from .base import Architecture, register


def patch_matrix(x: torch.Tensor, k: int, padding: str = "valid") -> torch.Tensor:
    """The patch matrix Pi(x) = [x_1 ... x_P] of a signal x of shape (C_in, L).

    Patch x_p = vec x[:, p : p + k] (row-major: channel first, then offset), so a filter u of shape
    (C_in, k) acts as u . x_p with u flattened the same way. ``padding='valid'`` gives P = L - k + 1
    patches, ``'circular'`` wraps around and gives P = L.

    Returns:
        Pi(x), shape (C_in * k, P).
    """
    if padding == "circular":
        x = torch.cat([x, x[:, : k - 1]], dim=1)              # (C_in, L + k - 1)
    windows = x.unfold(1, k, 1)                                # (C_in, P, k)
    return windows.permute(0, 2, 1).reshape(-1, windows.shape[1])   # (C_in * k, P)


@register
@dataclass(frozen=True)
class ConvNet1D(Architecture):
    """A 1-D CNN with one output channel per unit (Chapter 2, CNN).

    With patches x_p of the input x (C_in, L), filters u_c (C_in, k) and readout weights a:

        global:        f(x) = sum_c a_c sum_p phi(u_c . x_p),      w_c = [vec u_c; a_c]
        per_position:  f(x) = sum_{c,p} a_{cp} phi(u_c . x_p),     w_c = [vec u_c; a_c in R^P]

    Closed forms (Chapter 2): A(x) = phi'(0) O(sum_p x_p) for global pooling and
    A(x) = phi'(0) O(Pi(x)) for the per-position readout, Pi(x) the patch matrix (C_in k, P).
    If phi(0) != 0 ZGZ fails: g = phi(0) P e_a (global) or g = phi(0) [0; 1_P] (per position);
    B = 0 and f0 = 0 always. The cubic term is (phi''(0)/2) sum_{c,p} a (u_c . x_p)^2.

    Args:
        c_in: number of input channels.
        length: signal length L.
        k: filter width.
        padding: ``'valid'`` (P = L - k + 1 patches) or ``'circular'`` (P = L).
        readout: ``'global'`` (global sum pooling) or ``'per_position'``.
        phi: activation name or :class:`Activation`.
    """

    name: ClassVar[str] = "cnn"
    unit: ClassVar[str] = "one output channel: its filter u_c (C_in x k) and readout weight(s) a_c"
    c_in: int = 2
    length: int = 6
    k: int = 3
    padding: str = "valid"
    readout: str = "global"
    phi: str | Activation = "tanh"

    def __post_init__(self) -> None:
        for arg in ("c_in", "length", "k"):
            require_positive_int(arg, getattr(self, arg))
        require_choice("padding", self.padding, ("valid", "circular"))
        require_choice("readout", self.readout, ("global", "per_position"))
        if self.k > self.length:
            raise ValueError(f"argument `k`: expected a filter width <= length = {self.length}, "
                             f"got {self.k}")
        get_activation(self.phi)

    @property
    def act(self) -> Activation:
        return get_activation(self.phi)

    @property
    def n_patches(self) -> int:
        return self.length if self.padding == "circular" else self.length - self.k + 1

    @property
    def _q(self) -> int:                                   # filter size C_in * k
        return self.c_in * self.k

    @property
    def p(self) -> int:
        return self._q + (1 if self.readout == "global" else self.n_patches)

    @property
    def zgz(self) -> bool:
        return self.act.phi0 == 0.0

    @property
    def remainder_order(self) -> int | None:
        return activation_remainder_order(self.act)

    def patches(self, x: torch.Tensor) -> torch.Tensor:
        """Pi(x), shape (C_in k, P)."""
        return patch_matrix(x, self.k, self.padding)

    def f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        U = unit_blocks(W, 0, (self._q,))                     # (d, C_in k)
        h = self.act(U @ self.patches(x))                  # (d, P)
        if self.readout == "global":
            return W[self._q] @ h.sum(dim=1)
        return torch.sum(W[self._q:].T * h)                # a: (P, d) -> (d, P)

    def _readout_input(self, x: torch.Tensor) -> torch.Tensor:
        Pi = self.patches(x)                               # (C_in k, P)
        return Pi.sum(dim=1) if self.readout == "global" else Pi

    def A(self, x: torch.Tensor) -> torch.Tensor:
        return self.act.phi1 * offdiag(self._readout_input(x))

    def g(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(self.p, dtype=x.dtype, device=x.device)
        out[self._q:] = self.act.phi0 * (self.n_patches if self.readout == "global" else 1.0)
        return out

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        return gaussian((self.c_in, self.length), seed)
