"""Block matrices that recur in the structure matrices of Chapter 2."""

from __future__ import annotations

import torch

from ._validate import as_tensor


def offdiag(Z: torch.Tensor) -> torch.Tensor:
    """O(Z) = (1/2) [[0, Z], [Z^T, 0]] for Z of shape (a, b); returns shape (a + b, a + b).

    A vector Z of shape (a,) is read as a column (a, 1). The non-zero eigenvalues of O(Z) are
    +-sigma_j(Z)/2, with eigenvectors (l_j, +-r_j)/sqrt(2) built from the singular vectors of Z.
    """
    Z = as_tensor("Z", Z)
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.ndim != 2:
        raise ValueError(f"argument `Z`: expected a vector or a matrix, got shape {tuple(Z.shape)}")
    a, b = Z.shape
    out = Z.new_zeros(a + b, a + b)
    out[:a, a:] = Z / 2
    out[a:, :a] = Z.T / 2
    return out
