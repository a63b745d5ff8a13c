"""Tensor helpers for modules evaluated on many samples and runs at once (Chapter 8).

Shapes follow one rule: a leading run axis (R, ...) is optional everywhere (written
``...``), the sample axis s comes next. No validation here: these run inside training
loops, after the public functions have checked their arguments.
"""

from __future__ import annotations

import math

import torch


def softmax_last(s: torch.Tensor) -> torch.Tensor:
    """softmax over the last axis, exp(s - max) / sum: the values of torch.softmax,
    several times faster on the CPU for the short rows (a few tokens) of attention."""
    e = (s - s.amax(-1, keepdim=True).detach()).exp()
    return e / e.sum(-1, keepdim=True)


def unit_blocks(W: torch.Tensor, start: int, shape: tuple[int, ...]) -> torch.Tensor:
    """Rows start : start + prod(shape) of W (..., p, d), one block per unit, returned
    as (..., d, *shape): the row-major vec convention of
    :func:`nqf_mini.architectures._helpers.unit_blocks`, with optional leading axes."""
    size = math.prod(shape)
    rows = W[..., start : start + size, :].transpose(-1, -2)
    return rows.reshape(*W.shape[:-2], W.shape[-1], *shape)


def offdiag(Z: torch.Tensor) -> torch.Tensor:
    """O(Z) = (1/2) [[0, Z], [Z^T, 0]] for a stack Z (s, a, b): (s, a + b, a + b)."""
    s, a, b = Z.shape
    out = Z.new_zeros(s, a + b, a + b)
    out[:, :a, a:] = Z / 2
    out[:, a:, :a] = Z.transpose(1, 2) / 2
    return out


def eye_kron(k: int, Z: torch.Tensor) -> torch.Tensor:
    """I_k kron Z_s for a stack Z (s, a, b): (s, k a, k b), in torch.kron's layout."""
    s, a, b = Z.shape
    eye = torch.eye(k, dtype=Z.dtype, device=Z.device)
    return torch.einsum("ij,src->sirjc", eye, Z).reshape(s, k * a, k * b)
