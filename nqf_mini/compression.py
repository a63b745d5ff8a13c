"""Compressing a wide NQF into a narrow one that trains identically (Theorem 3, Chapter 3).

Training sees W only through M = W W^T (Theorem 2), so any W' of shape (p, d') with
W' W'^T = M(0) reproduces f(t) under GD, SGD and gradient flow:

* rank compression: the thin SVD W0 = P S R^T gives W'0 = P S (p, r), r = rank M(0) <= min(p, d),
and
  the wide weights are recovered at every time as W(t) = W'(t) R^T (each step multiplies W on the
  left);
* data-subspace compression: if every A_mu = P A_mu P with P = V V^T, V of shape (p, r), then
  V^T M V evolves on its own with the data matrices V^T A_mu V, so r units suffice.
"""

from __future__ import annotations

from typing import Any

import torch

from ._validate import (
    as_tensor,
    require_finite,
    require_positive,
    require_psd,
    require_shape,
    require_square_stack,
    require_symmetric,
)


def _keep(s: torch.Tensor, rtol: float) -> int:
    """Number of singular values above rtol x the largest (at least one)."""
    if s.numel() == 0 or s.max() == 0:
        return 1
    return max(int((s > rtol * s.max()).sum()), 1)


def compress_rank(W0: Any, rtol: float = 1e-12) -> tuple[torch.Tensor, torch.Tensor]:
    """Narrowest weights with the same M(0): W0 = P S R^T, W'0 = P S (Theorem 3, Chapter 3).

    Args:
        W0: initial weights, shape (p, d), units are columns.
        rtol: singular values below rtol x the largest are dropped.

    Returns:
        (W'0 of shape (p, r), R of shape (d, r) with orthonormal columns), r = rank W0, such that
        W'0 W'0^T = W0 W0^T and W0 = W'0 R^T. Train W' and lift with :func:`lift_weights`.

    Raises:
        ValueError: if W0 is not 2-D or not finite, or rtol <= 0.
    """
    W0 = as_tensor("W0", W0, ndim=2)
    require_finite("W0", W0)
    rtol = require_positive("rtol", rtol)
    P, s, Rt = torch.linalg.svd(W0, full_matrices=False)  # (p, k), (k,), (k, d)
    r = _keep(s, rtol)
    return P[:, :r] * s[:r], Rt[:r].T.contiguous()  # (p, r), (d, r)


def lift_weights(W_compressed: Any, R: Any) -> torch.Tensor:
    r"""The wide weights :math:`W(t) = W'(t) R^\top` from the compressed ones (Theorem 3,
    Chapter 3).

    Args:
        W_compressed: the compressed weights W' (p, r), e.g. trained from :func:`compress_rank`'s
            W'0.
        R: the (d, r) matrix with orthonormal columns that :func:`compress_rank` returned.

    Returns:
        W of shape (p, d).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    W_compressed = as_tensor("W_compressed", W_compressed, ndim=2)
    R = as_tensor("R", R, ndim=2, dtype=W_compressed.dtype, device=W_compressed.device)
    require_shape("R", R, (None, W_compressed.shape[1]), like="W_compressed")
    return W_compressed @ R.T


def psd_factor(M: Any, rtol: float = 1e-12) -> torch.Tensor:
    r"""A narrowest W with :math:`WW^\top = M` for a positive semi-definite M (Chapter 3).

    :math:`W = U\sqrt\Lambda` from the eigendecomposition :math:`M = U\Lambda U^\top`, keeping the
    eigenvalues above ``rtol`` times the largest.

    Args:
        M: a positive semi-definite matrix (p, p).
        rtol: eigenvalues below rtol x the largest are dropped.

    Returns:
        W of shape (p, rank M).

    Raises:
        ValueError, TypeError: on a bad argument (naming it), e.g. an M that is not PSD.
    """
    M = as_tensor("M", M, ndim=2)
    require_psd("M", M)
    rtol = require_positive("rtol", rtol)
    lam, U = torch.linalg.eigh((M + M.T) / 2)
    lam = lam.flip(0).clamp_min(0)
    r = _keep(lam, rtol)
    return U.flip(1)[:, :r] * lam[:r].sqrt()


def compress_data_subspace(
    A: Any,
    M0: Any,
    rtol: float = 1e-10,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Restrict the NQF to the joint range of the data matrices (Theorem 3, Chapter 3).

    With V (p, r) an orthonormal basis of span(range A_1, ..., range A_n), P = V V^T satisfies
    A_mu = P A_mu P, hence Tr[M A_mu] = Tr[(V^T M V)(V^T A_mu V)], and the M-space update
    M+ = (I - 2 lr G) M (I - 2 lr G) maps V^T M V to itself. So the reduced problem with
    A'_mu = V^T A_mu V and M'(0) = V^T M0 V gives the same f(t), with only r units.

    Args:
        A: structure matrices, symmetric, shape (n, p, p).
        M0: initial M, PSD, shape (p, p).
        rtol: singular values of [A_1 ... A_n] below rtol x the largest are dropped.

    Returns:
        (V (p, r), A_reduced (n, r, r), M0_reduced (r, r)).

    Raises:
        ValueError: on malformed A or M0.
    """
    A = as_tensor("A", A, ndim=3)
    require_square_stack("A", A)
    require_symmetric("A", A)
    n, p = A.shape[:2]
    M0 = as_tensor("M0", M0, ndim=2, dtype=A.dtype, device=A.device)
    require_shape("M0", M0, (p, p), like="A")
    require_psd("M0", M0)
    rtol = require_positive("rtol", rtol)
    stacked = A.permute(1, 0, 2).reshape(p, n * p)  # [A_1 ... A_n]: (p, n p)
    U, s, _ = torch.linalg.svd(stacked, full_matrices=False)
    V = U[:, : _keep(s, rtol)]  # (p, r)
    return V, V.T @ A @ V, V.T @ M0 @ V
