"""Do the data matrices commute? The paper's Assumption 1, measured (Chapter 2).

The exact solutions of the training dynamics (Chapter 4) assume that the structure matrices of all
training inputs share one orthonormal eigenbasis E,

    A(x_mu) = E diag(a_mu) E^T  for every mu,

which for symmetric matrices is the same as commuting pairwise, [A(x_mu), A(x_nu)] = 0. The size of
a commutator is measured relative to the two matrices,

    c(A1, A2) = ||A1 A2 - A2 A1||_F / (||A1||_F ||A2||_F),

a number in [0, sqrt(2)] (the Boettcher-Wenzel inequality) that is 0 exactly when they commute and
does not change when either matrix is rescaled. For the two-layer MLP,
c(A(x), A(x')) = sin(theta) / sqrt(2), theta the angle between x and x' (Chapter 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ._validate import as_tensor


def commutator_norm(A1: torch.Tensor, A2: torch.Tensor) -> float:
    """Relative commutator ||[A1, A2]||_F / (||A1||_F ||A2||_F); 0.0 when either matrix is zero.

    Args:
        A1, A2: square matrices of the same shape (p, p).

    Returns:
        A float, 0 up to round-off exactly when A1 and A2 commute.
    """
    A1 = as_tensor("A1", A1, ndim=2)
    A2 = as_tensor("A2", A2, ndim=2, dtype=A1.dtype, device=A1.device)
    if A1.shape[0] != A1.shape[1] or A1.shape != A2.shape:
        raise ValueError(f"arguments `A1`, `A2`: expected two square matrices of the same shape, "
                         f"got {tuple(A1.shape)} and {tuple(A2.shape)}")
    scale = (A1.norm() * A2.norm()).item()
    if scale == 0.0:
        return 0.0
    return (A1 @ A2 - A2 @ A1).norm().item() / scale


def pairwise_commutators(As: torch.Tensor) -> torch.Tensor:
    """All relative commutators c(A_mu, A_nu) of a stack As of shape (n, p, p): returns (n, n)."""
    As = as_tensor("As", As, ndim=3)
    if As.shape[1] != As.shape[2]:
        raise ValueError(f"argument `As`: expected a stack of square matrices (n, p, p), "
                         f"got shape {tuple(As.shape)}")
    norms = As.flatten(1).norm(dim=1)                            # (n,)
    prod = torch.einsum("apq,bqr->abpr", As, As)                 # A_a A_b: (n, n, p, p)
    comm = (prod - prod.transpose(0, 1)).flatten(2).norm(dim=2)  # ||[A_a, A_b]||_F: (n, n)
    scale = torch.outer(norms, norms)
    return torch.where(scale > 0, comm / torch.where(scale > 0, scale, 1.0), 0.0)


def max_commutator(As: torch.Tensor) -> float:
    """The largest relative commutator over all pairs of a stack of shape (n, p, p)."""
    return pairwise_commutators(As).max().item()


@dataclass(frozen=True)
class CommonEigenbasis:
    """An orthonormal basis that diagonalises a stack of symmetric matrices as well as it can.

    Attributes:
        E: orthogonal matrix of shape (p, p), columns are the shared eigenvectors.
        a: the diagonals of E^T A_mu E, shape (n, p): a_mu of A_mu = E diag(a_mu) E^T.
        residual: max over mu of ||offdiag(E^T A_mu E)||_F / ||A_mu||_F; round-off level when the
            matrices commute (Assumption 1 holds), of order one when they do not.
    """

    E: torch.Tensor
    a: torch.Tensor
    residual: float


def common_eigenbasis(As: torch.Tensor, seed: int = 0) -> CommonEigenbasis:
    """Diagonalise a random combination sum_mu c_mu A_mu and test its eigenvectors on every A_mu.

    Commuting symmetric matrices are diagonal in the eigenbasis of almost every linear combination
    of them, so this finds E whenever Assumption 1 holds; the residual says whether it does.

    Args:
        As: stack of symmetric matrices, shape (n, p, p).
        seed: seed of the random coefficients c_mu.
    """
    As = as_tensor("As", As, ndim=3)
    if As.shape[1] != As.shape[2]:
        raise ValueError(f"argument `As`: expected a stack of square matrices (n, p, p), "
                         f"got shape {tuple(As.shape)}")
    gen = torch.Generator().manual_seed(seed)
    c = torch.randn(As.shape[0], generator=gen, dtype=torch.float64).to(As)
    _, E = torch.linalg.eigh(torch.einsum("n,npq->pq", c, As))
    D = E.T @ As @ E                                             # (n, p, p)
    a = torch.diagonal(D, dim1=1, dim2=2)                        # (n, p)
    off = (D - torch.diag_embed(a)).flatten(1).norm(dim=1)
    norms = As.flatten(1).norm(dim=1)
    rel = torch.where(norms > 0, off / torch.where(norms > 0, norms, 1.0), 0.0)
    return CommonEigenbasis(E=E, a=a, residual=rel.max().item())
