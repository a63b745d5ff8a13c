"""A 1-D convolutional layer whose output channels are the units (Chapter 2, CNN)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from .._validate import as_tensor, require_choice, require_positive_int
from ..activations import Activation, get_activation
from ..blocks import offdiag
from ._helpers import activation_remainder_order, gaussian, unit_blocks
from .base import Architecture, InputPart, register

PADDINGS = ("valid", "circular")


def _patches(x: torch.Tensor, k: int, padding: str) -> torch.Tensor:
    if padding == "circular":
        x = torch.cat([x, x[:, : k - 1]], dim=1)  # (C_in, L + k - 1)
    windows = x.unfold(1, k, 1)  # (C_in, P, k)
    return windows.permute(0, 2, 1).reshape(-1, windows.shape[1])  # (C_in * k, P)


def patch_matrix(x: Any, k: int, padding: str = "valid") -> torch.Tensor:
    """The patch matrix :math:`\\Pi(x) = [x_1 \\dots x_{N_p}]` of a signal x (C_in, L) (Chapter 2).

    Patch :math:`x_p` = vec x[:, p : p + k] (row-major: channel first, then offset), so a filter
    u of shape (C_in, k) acts as :math:`u \\cdot x_p` with u flattened the same way.

    Args:
        x: the signal, shape (C_in, L).
        k: the filter width, 1 <= k <= L.
        padding: ``'valid'`` (:math:`N_p = L - k + 1` patches) or ``'circular'`` (wraps around,
            :math:`N_p = L`).

    Returns:
        :math:`\\Pi(x)`, shape (C_in k, N_p).

    Raises:
        TypeError, ValueError: on a bad argument (the message names it).
    """
    x = as_tensor("x", x, ndim=2)
    k = require_positive_int(
        "k", k, maximum=x.shape[1], why=f" (the signal has length L = {x.shape[1]})"
    )
    return _patches(x, k, require_choice("padding", padding, PADDINGS))


@register
@dataclass(frozen=True)
class ConvNet1D(Architecture):
    """A 1-D CNN with one output channel per unit (Chapter 2, CNN).

    With patches :math:`x_p` of the input x (C_in, L), filters :math:`u_c` (C_in, k) and readout
    weights a:

    .. math::

        \\text{global:}\\quad f(W, x) = \\sum_c a_c \\sum_p \\phi(u_c\\cdot x_p),\\qquad
        \\text{per position:}\\quad f(W, x) = \\sum_{c,p} a_{cp}\\,\\phi(u_c\\cdot x_p),

    with :math:`w_c = [\\mathrm{vec}\\,u_c; a_c]`. Closed forms (Chapter 2):
    :math:`A(x) = \\phi'(0)\\,O(\\sum_p x_p)` for global pooling and
    :math:`A(x) = \\phi'(0)\\,O(\\Pi(x))` for the per-position readout, :math:`\\Pi(x)` the patch
    matrix (C_in k, :math:`N_p`). If :math:`\\phi(0) \\ne 0` ZGZ fails:
    :math:`g = \\phi(0) N_p e_a` (global) or :math:`g = \\phi(0) [0; 1_{N_p}]` (per position);
    :math:`B = 0` and :math:`f_0 = 0` always. The cubic term is
    :math:`(\\phi''(0)/2) \\sum_{c,p} a\\,(u_c\\cdot x_p)^2`.

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
            self._normalise(**{arg: require_positive_int(arg, getattr(self, arg))})
        require_choice("padding", self.padding, PADDINGS)
        require_choice("readout", self.readout, ("global", "per_position"))
        if self.k > self.length:
            raise ValueError(
                f"argument `k`: expected a filter width <= length = {self.length}, got {self.k}"
            )
        get_activation(self.phi)

    @property
    def act(self) -> Activation:
        """The activation :math:`\\phi`."""
        return get_activation(self.phi)

    @property
    def n_patches(self) -> int:
        """The number of patches :math:`N_p`."""
        return self.length if self.padding == "circular" else self.length - self.k + 1

    @property
    def _q(self) -> int:  # filter size C_in * k
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

    def input_parts(self) -> tuple[InputPart, ...]:
        return (InputPart("the signal x", (self.c_in, self.length)),)

    def patches(self, x: Any) -> torch.Tensor:
        """:math:`\\Pi(x)`, shape (C_in k, :math:`N_p`) (:func:`patch_matrix`)."""
        return _patches(self.check_input(x), self.k, self.padding)

    def _f(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        U = unit_blocks(W, 0, (self._q,))  # (d, C_in k)
        h = self.act(U @ _patches(x, self.k, self.padding))  # (d, P)
        if self.readout == "global":
            return W[self._q] @ h.sum(dim=1)
        return torch.sum(W[self._q :].T * h)  # a: (P, d) -> (d, P)

    def _A(self, x: torch.Tensor) -> torch.Tensor:
        Pi = _patches(x, self.k, self.padding)  # (C_in k, P)
        return self.act.phi1 * offdiag(Pi.sum(dim=1) if self.readout == "global" else Pi)

    def _g(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(self.p, dtype=x.dtype, device=x.device)
        out[self._q :] = self.act.phi0 * (self.n_patches if self.readout == "global" else 1.0)
        return out

    def sample_input(self, seed: int = 0) -> torch.Tensor:
        """A Gaussian signal x of shape (c_in, length), from :func:`nqf_mini.generator` (Chapter 2).

        Args:
            seed: seed of :func:`nqf_mini.generator`.

        Returns:
            One input of this architecture.
        """
        return gaussian((self.c_in, self.length), seed)
