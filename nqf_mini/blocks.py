"""Block matrices that recur in the structure matrices of Chapter 2."""

from __future__ import annotations

import torch

from ._validate import as_tensor


def offdiag(Z: torch.Tensor) -> torch.Tensor:
    r"""The off-diagonal block :math:`O(Z) = \tfrac12 \begin{pmatrix}0 & Z\\ Z^\top & 0
    \end{pmatrix}` (Chapter 2).

    The structure matrix of a two-factor unit :math:`w_i = [u_i; v_i]` whose module is
    :math:`\sum_i u_i^\top Z v_i`. The non-zero eigenvalues of O(Z) are
    :math:`\pm\sigma_j(Z)/2`, with eigenvectors :math:`(l_j, \pm r_j)/\sqrt2` built from the
    singular vectors of Z.

    Args:
        Z: a matrix of shape (a, b), or a vector of shape (a,) read as a column (a, 1).

    Returns:
        O(Z), shape (a + b, a + b).

    Raises:
        ValueError, TypeError: on a bad argument (naming ``Z``).
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
