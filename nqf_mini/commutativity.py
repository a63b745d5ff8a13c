"""Do the data matrices commute? The paper's Assumption 1, measured (Chapter 2).

The exact solutions of the training dynamics (Chapter 4) assume that the structure matrices of all
training inputs share one orthonormal eigenbasis E,

    A(x_mu) = E diag(a_mu) E^T  for every mu,

which for symmetric matrices is the same as commuting pairwise, [A(x_mu), A(x_nu)] = 0. The size of
a commutator is measured relative to the two matrices,

    c(A1, A2) = ||A1 A2 - A2 A1||_F / (||A1||_F ||A2||_F),

a number in [0, sqrt(2)] (the Boettcher-Wenzel inequality) that is 0 exactly when they commute and
does not change when either matrix is rescaled. For the two-layer MLP,
c(A(x), A(x')) = sin(theta) / sqrt(2), theta the angle between x and x' (Chapter 2). On real data
the condition that decides the two-layer network's modes is weaker, a commutator of covariances
(:func:`covariance_commutator`, Chapter 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from ._validate import (
    as_tensor,
    require_nonnegative,
    require_positive,
    require_square_stack,
    require_trials,
)
from .seeds import generator


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
        raise ValueError(
            f"arguments `A1`, `A2`: expected two square matrices of the same shape, "
            f"got {tuple(A1.shape)} and {tuple(A2.shape)}"
        )
    scale = (A1.norm() * A2.norm()).item()
    if scale == 0.0:
        return 0.0
    return (A1 @ A2 - A2 @ A1).norm().item() / scale


def pairwise_commutators(As: torch.Tensor) -> torch.Tensor:
    """All relative commutators c(A_mu, A_nu) of a stack As of shape (n, p, p): returns (n, n)."""
    As = as_tensor("As", As, ndim=3)
    require_square_stack("As", As)
    norms = As.flatten(1).norm(dim=1)  # (n,)
    prod = torch.einsum("apq,bqr->abpr", As, As)  # A_a A_b: (n, n, p, p)
    comm = (prod - prod.transpose(0, 1)).flatten(2).norm(dim=2)  # ||[A_a, A_b]||_F: (n, n)
    scale = torch.outer(norms, norms)
    return torch.where(scale > 0, comm / torch.where(scale > 0, scale, 1.0), 0.0)


def max_commutator(As: torch.Tensor) -> float:
    r"""The largest relative commutator of a stack, :math:`\max_{\mu\nu} c(A_\mu, A_\nu)`
    (Chapter 2).

    :math:`c(A_1, A_2) = \|A_1A_2 - A_2A_1\|_F / (\|A_1\|_F\|A_2\|_F)` (the module docstring): 0
    exactly when Assumption 1 holds.

    Args:
        As: square matrices, shape (n, p, p) (symmetric or not).

    Returns:
        A float in [0, sqrt(2)].

    Raises:
        ValueError, TypeError: on a bad argument (naming ``As``).
    """
    return pairwise_commutators(As).max().item()


# --- real data: the two-layer network's matrices, the covariance-level condition (Chapter 10) -


def mlp_commutators(X: Any, *, same_channel: bool = True) -> torch.Tensor:
    r"""Relative commutators of a two-layer network's per-sample structure matrices (Chapter 10).

    Output channel c of :math:`F(x) = V^\top\phi(U^\top x)` has the structure matrix
    :math:`A_c(x) = \tfrac{\phi'(0)}{2}\begin{pmatrix}0 & x e_c^\top\\ e_c x^\top & 0
    \end{pmatrix}` (Chapter 2). For two samples at angle :math:`\theta`,

    .. math::

        c(A_c(x), A_c(x')) = \frac{\sin\theta}{\sqrt 2}, \qquad
        c(A_c(x), A_{c'}(x')) = \frac{|\cos\theta|}{\sqrt 2} \quad (c \ne c'),

    with :math:`c(A_1, A_2) = \|[A_1, A_2]\|_F / (\|A_1\|_F\|A_2\|_F)` (Chapter 2), so
    Assumption 1 (all of them commute) needs collinear inputs. Computed from the Gram matrix of
    the inputs, without forming the matrices.

    Args:
        X: inputs :math:`x_\mu`, shape (n, p); a zero row commutes with everything.
        same_channel: pairs within one output channel (default) or across two channels.

    Returns:
        The (n, n) tensor of :math:`c` over sample pairs (0 on the diagonal for
        ``same_channel``), in X's dtype and on its device.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    X = as_tensor("X", X, ndim=2)
    if not isinstance(same_channel, bool):
        raise TypeError(f"argument `same_channel`: expected True or False, got {same_channel!r}")
    norms = X.norm(dim=1)
    unit = X / torch.where(norms > 0, norms, 1.0)[:, None]
    cos = (unit @ unit.T).clamp(-1.0, 1.0)  # (n, n)
    c = (1.0 - cos.square()).clamp_min(0.0).sqrt() if same_channel else cos.abs()
    nonzero = (norms > 0)[:, None] & (norms > 0)[None, :]
    c = torch.where(nonzero, c / math.sqrt(2.0), 0.0)
    if same_channel:
        c.fill_diagonal_(0.0)
    return c


def covariance_commutator(X: Any, Y: Any) -> float:
    r"""The covariance-level commutator
    :math:`c(S_{xx}, S_{xy}S_{yx}) = \|[S_{xx}, S_{xy}S_{yx}]\|_F /
    (\|S_{xx}\|_F\,\|S_{xy}S_{yx}\|_F)` (Chapter 10).

    :math:`S_{xx} = X^\top X/n`, :math:`S_{xy} = X^\top Y/n`. Zero exactly when every singular
    direction :math:`r_k` of :math:`S_{xy}` is an eigenvector of :math:`S_{xx}` (distinct
    singular values), the condition under which the modes of the two-layer NQF decouple (Saxe et
    al. 2014); whitened inputs (:math:`S_{xx} = I`, :func:`nqf_mini.whiten`) satisfy it.

    Args:
        X: inputs, shape (n, p).
        Y: targets, shape (n, K) or (n,).

    Returns:
        A float in :math:`[0, \sqrt 2]`, 0 up to round-off when the condition holds (0.0 when
        either matrix is zero).

    Raises:
        ValueError, TypeError: on a bad argument (naming it), e.g. Y with another number of rows.
    """
    X = as_tensor("X", X, ndim=2)
    Y = as_tensor("Y", Y, dtype=X.dtype, device=X.device)
    Y = Y[:, None] if Y.ndim == 1 else Y
    if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
        raise ValueError(
            f"argument `Y`: expected shape ({X.shape[0]}, K) or ({X.shape[0]},) to "
            f"match `X`, got {tuple(Y.shape)}"
        )
    n = X.shape[0]
    Sxy = X.T @ Y / n
    return commutator_norm(X.T @ X / n, Sxy @ Sxy.T)


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
    require_square_stack("As", As)
    gen = generator(seed)
    c = torch.randn(As.shape[0], generator=gen, dtype=torch.float64).to(As)
    _, E = torch.linalg.eigh(torch.einsum("n,npq->pq", c, As))
    D = E.T @ As @ E  # (n, p, p)
    a = torch.diagonal(D, dim1=1, dim2=2)  # (n, p)
    off = (D - torch.diag_embed(a)).flatten(1).norm(dim=1)
    norms = As.flatten(1).norm(dim=1)
    rel = torch.where(norms > 0, off / torch.where(norms > 0, norms, 1.0), 0.0)
    return CommonEigenbasis(E=E, a=a, residual=rel.max().item())


# --- from commuting to generic data (Chapter 7) ---------------------------------------------------


def perturb_commuting(E: Any, a: Any, t: float, seed: int = 0) -> torch.Tensor:
    r""":math:`A_\mu(\chi) = E\,\mathrm{diag}(a_\mu)E^\top + \chi\|a_\mu\| S_\mu`: commuting at
    :math:`\chi = 0`, generic for :math:`\chi > 0` (Chapter 7).

    :math:`S_\mu` are independent random symmetric matrices (symmetrised Gaussians, drawn on the CPU
    from ``seed``) normalised to :math:`\|S_\mu\|_F = 1`, so :math:`\chi` (``t``) is the size of the
    non-commuting part relative to the commuting one.

    Args:
        E: orthogonal matrix (p, p).
        a: eigenvalues (n, p).
        t: the interpolation parameter :math:`\chi`, >= 0.
        seed: seed of :func:`nqf_mini.generator`.

    Returns:
        The stack A(t), shape (n, p, p), symmetric.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    E = as_tensor("E", E, ndim=2)
    a = as_tensor("a", a, ndim=2, dtype=E.dtype, device=E.device)
    if E.shape[0] != E.shape[1] or a.shape[1] != E.shape[0]:
        raise ValueError(
            f"arguments `E`, `a`: expected E (p, p) and a (n, p), got "
            f"{tuple(E.shape)} and {tuple(a.shape)}"
        )
    t = require_nonnegative("t", t)
    n, p = a.shape
    gen = generator(seed)
    S = torch.randn(n, p, p, generator=gen, dtype=torch.float64).to(E)
    S = (S + S.transpose(1, 2)) / 2
    S = S / S.flatten(1).norm(dim=1)[:, None, None]
    base = E @ torch.diag_embed(a) @ E.T
    return base + t * a.norm(dim=1)[:, None, None] * S


def _off_norm(D: torch.Tensor) -> torch.Tensor:
    return (D - torch.diag_embed(torch.diagonal(D, dim1=1, dim2=2))).square().sum()


def joint_diagonalizer(
    As: Any, seed: int = 0, sweeps: int = 50, tol: float = 1e-13
) -> torch.Tensor:
    """An orthogonal E that minimises sum_mu ||offdiag(E^T A_mu E)||_F^2 (Jacobi sweeps, Chapter 7).

    Starts from the basis of :func:`common_eigenbasis` and applies Givens rotations chosen in closed
    form for each pair (i, j) (the Cardoso-Souloumiac angle for real symmetric matrices); each
    rotation never increases the off-diagonal mass. For commuting matrices it returns their common
    eigenbasis; otherwise it returns a local optimum, the best basis for a Lotka-Volterra
    description.
    """
    As = as_tensor("As", As, ndim=3)
    require_square_stack("As", As)
    sweeps, tol = require_trials("sweeps", sweeps), require_positive("tol", tol)
    E = common_eigenbasis(As, seed=seed).E.clone()
    D = E.T @ As @ E
    p = As.shape[1]
    total = As.square().sum().clamp_min(1e-300)
    for _ in range(sweeps):
        before = _off_norm(D)
        for i in range(p - 1):
            for j in range(i + 1, p):
                g = torch.stack([D[:, i, i] - D[:, j, j], 2 * D[:, i, j]], dim=1)  # (n, 2)
                _, vec = torch.linalg.eigh(g.T @ g)
                x, y = vec[0, 1], vec[1, 1]
                if x < 0:
                    x, y = -x, -y
                r = torch.sqrt(x * x + y * y).clamp_min(1e-300)
                c = torch.sqrt((x + r) / (2 * r))
                s = y / torch.sqrt(2 * r * (x + r)).clamp_min(1e-300)
                R = torch.eye(p, dtype=D.dtype, device=D.device)
                R[i, i], R[j, j], R[i, j], R[j, i] = c, c, -s, s
                D2 = R.T @ D @ R
                if _off_norm(D2) <= _off_norm(D):
                    D, E = D2, E @ R
        if (before - _off_norm(D)) <= tol * total:
            break
    return E


class NearestCommuting(NamedTuple):
    """What :func:`nearest_commuting` returns (unpacks as ``matrices, residual``).

    Attributes:
        matrices: the commuting stack E diag(E^T A_mu E) E^T, (n, p, p).
        residual: max_mu ||offdiag(E^T A_mu E)||_F / ||A_mu||_F, the part dropped.
    """

    matrices: torch.Tensor
    residual: float


def nearest_commuting(As: Any, seed: int = 0) -> NearestCommuting:
    """Drop the off-diagonal part in the best common basis: A_mu -> E diag(E^T A_mu E) E^T
    (Chapter 7).

    E comes from :func:`joint_diagonalizer`. The returned stack commutes exactly, so
    :func:`nqf_mini.reduce_commuting` accepts it: it is the Lotka-Volterra model one would use when
    Assumption 1 holds only approximately.

    Args:
        As: symmetric matrices, shape (n, p, p).
        seed: seed of the starting basis (:func:`common_eigenbasis`).

    Returns:
        :class:`NearestCommuting` (the commuting stack (n, p, p), the residual
        max_mu ||offdiag(E^T A_mu E)||_F / ||A_mu||_F); it unpacks as ``matrices, residual``.
    """
    As = as_tensor("As", As, ndim=3)
    require_square_stack("As", As)
    E = joint_diagonalizer(As, seed=seed)
    D = E.T @ As @ E
    a = torch.diagonal(D, dim1=1, dim2=2)
    off = (D - torch.diag_embed(a)).flatten(1).norm(dim=1)
    norms = As.flatten(1).norm(dim=1)
    rel = torch.where(norms > 0, off / torch.where(norms > 0, norms, 1.0), 0.0)
    return NearestCommuting(E @ torch.diag_embed(a) @ E.T, rel.max().item())
