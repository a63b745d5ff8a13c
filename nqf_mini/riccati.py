"""Exactly solvable flows beyond commuting data: isotropy (Riccati) and a single sample (Chapter 4).

Isotropy (our reading of Assumption 2): (1/n) sum_mu A_mu Tr[A_mu M] = kappa M for every symmetric
M. Then G = kappa M - B with B = (1/n) sum_mu y_mu A_mu (f0 = 0), and the flow dM/dt = -2 (G M + M
G) (loss (1/2n) sum r^2) becomes the matrix Riccati equation

    dM/dt = 2 (B M + M B) - 4 kappa M^2.

Writing W = e^{2Bt} W0 S(t), the d x d matrix P = S S^T obeys dP/dt = -4 kappa P N P with
N = W0^T e^{4Bt} W0, so P^{-1} is linear in time and

    M(t) = e^{2Bt} W0 [I + 4 kappa W0^T K(t) W0]^{-1} W0^T e^{2Bt},   K(t) = int_0^t e^{4Bs} ds.

A single sample (n = 1, A = E diag(a) E^T, target y): z_k = z_k(0) exp(4 a_k s) with
ds/dt = y - sum_k a_k z_k(0) exp(4 a_k s), a one-dimensional ODE.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ._ode import integrate
from ._validate import (
    as_tensor,
    require_dtype,
    require_memory,
    require_positive,
    require_positive_int,
    require_real,
    require_shape,
    require_symmetric,
    require_symmetric_stack,
    require_time_grid,
    round_off_rtol,
)
from .device import resolve_device
from .lotka_volterra import require_substeps
from .seeds import generator

_STEP_FRACTION = 0.02  # single-sample RK4 step: this fraction of the local time scale 1 / F'(s)


def _isotropy_map(A: torch.Tensor) -> torch.Tensor:
    """The linear map M -> (1/n) sum A_mu Tr[A_mu M] as a (p^2, p^2) matrix."""
    flat = A.reshape(A.shape[0], -1)  # (n, p^2)
    return flat.T @ flat / A.shape[0]


def isotropy_constant(A: Any, rtol: float | None = None) -> float:
    """kappa with (1/n) sum_mu A_mu Tr[A_mu M] = kappa M for all symmetric M (Chapter 4).

    On symmetric matrices the map must equal kappa times the symmetriser (I + swap) / 2.

    Args:
        A: structure matrices, symmetric, shape (n, p, p).
        rtol: accepted relative deviation ||T - kappa Sym||_F / ||kappa Sym||_F (default: the
            round-off of the precision A comes in, 1e-8 for float64, 1e-4 for float32, 1e-2
            for float16).

    Returns:
        kappa (a float).

    Raises:
        ValueError: if the data are not isotropic (the message gives the measured deviation).
    """
    default_rtol = round_off_rtol(A)
    A = as_tensor("A", A, ndim=3)
    require_symmetric_stack("A", A)
    rtol = require_positive("rtol", default_rtol if rtol is None else rtol)
    p = A.shape[1]
    require_memory(
        "A", float(p) ** 4, dtype=A.dtype, device=A.device, what="the isotropy map (p^2 x p^2)"
    )
    T = _isotropy_map(A)
    eye = torch.eye(p * p, dtype=A.dtype, device=A.device)
    swap = eye.reshape(p, p, p, p).transpose(0, 1).reshape(p * p, p * p)
    sym = (eye + swap) / 2
    kappa = (torch.trace(T) / torch.trace(sym)).item()
    dev = (T - kappa * sym).norm().item() / max(abs(kappa) * sym.norm().item(), 1e-300)
    if not dev <= rtol:
        raise ValueError(
            f"argument `A`: the data are not isotropic: (1/n) sum A Tr[A M] differs from "
            f"kappa M by a relative {dev:.3g} (tolerance {rtol:.3g}, "
            f"best kappa {kappa:.3g})"
        )
    return kappa


def isotropic_dataset(
    p: int,
    seed: int = 0,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """An exactly isotropic, non-commuting data set: a rotated orthonormal basis of Sym(p) (Chapter
    4).

    The n = p(p+1)/2 matrices E_ii and (E_ij + E_ji)/sqrt2 are orthonormal in the Frobenius product;
    any orthogonal mixing A_mu = sum_nu O_mu,nu E_nu keeps sum_mu A_mu Tr[A_mu M] = M, so kappa =
    1/n. A random O makes the matrices non-commuting. Targets are standard normal.

    Args:
        p: matrix size (>= 2).
        seed: seed of the rotation and targets.
        device, dtype: where and in what precision to return the data.

    Returns:
        (A of shape (n, p, p), y of shape (n,)), n = p (p + 1) / 2.
    """
    p = require_positive_int("p", p, minimum=2)
    gen = generator(seed)
    require_dtype(dtype)
    dev = resolve_device(device)
    n_sym = p * (p + 1) / 2
    require_memory(
        "p",
        n_sym * p * p + n_sym * n_sym,
        what="the data set (n x p x p) and its rotation (n x n), n = p (p + 1) / 2",
    )
    rows, cols = torch.triu_indices(p, p)
    n = rows.numel()
    basis = torch.zeros(n, p, p, dtype=torch.float64)
    k = torch.arange(n)
    w = torch.full((n,), 1.0 / math.sqrt(2.0), dtype=torch.float64)
    w[rows == cols] = 1.0
    basis[k, rows, cols] = w
    basis[k, cols, rows] = w
    O, _ = torch.linalg.qr(torch.randn(n, n, generator=gen, dtype=torch.float64))
    A = torch.einsum("mn,npq->mpq", O, basis)
    y = torch.randn(n, generator=gen, dtype=torch.float64)
    return A.to(device=dev, dtype=dtype), y.to(device=dev, dtype=dtype)


def _log_integral_exp(lam: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """ln k with k = int_0^t e^{4 lam s} ds = expm1(4 lam t) / (4 lam) (-> t as lam -> 0): (T, p).

    Written as ln k = max(x, 0) + ln(1 - e^{-|x|}) - ln(4 |lam|), x = 4 lam t, so that it neither
    overflows nor cancels; -inf at t = 0.
    """
    tt = t[:, None].expand(-1, lam.shape[0])  # (T, p)
    x = 4.0 * lam * tt
    small = x.abs() < 1e-6
    safe_x = torch.where(small, torch.ones_like(x), x)
    safe_lam = torch.where(lam == 0, torch.ones_like(lam), lam).expand_as(x)
    big = x.clamp_min(0) + torch.log(-torch.expm1(-safe_x.abs())) - torch.log(4.0 * safe_lam.abs())
    return torch.where(small, torch.log(tt) + torch.log1p(x / 2 + x * x / 6), big)


def riccati_closed_form(B: Any, kappa: float, W0: Any, t: Any) -> torch.Tensor:
    """M(t) = e^{2Bt} W0 [I + 4 kappa W0^T K(t) W0]^{-1} W0^T e^{2Bt} (isotropic data, Chapter 4).

    Solves dM/dt = 2 (B M + M B) - 4 kappa M^2 from M(0) = W0 W0^T, with K(t) = int_0^t e^{4Bs} ds.
    In the eigenbasis of B = U diag(lam) U^T, K = diag(k), k_i = expm1(4 lam_i t) / (4 lam_i). The
    bracket grows like e^{4 lam_max t}, so instead of solving with it we write
    Y = diag(sqrt(4 kappa k)) U^T W0, take the QR factorisation [Y; I] = [Q2; Q1] R (so that the
    bracket is R^T R and Y R^{-1} = Q2), and return

        M = U D Q2 Q2^T D U^T,    D = diag(e^{2 lam t} / sqrt(4 kappa k)),

    which stays accurate at long times (M -> P+ B P+ / kappa) while 2 lam_max t stays below the
    log of the dtype's largest number (~709 in float64, ~88 in float32; rows in descending lam,
    so that Householder QR copes with their grading).

    Args:
        B: (1/n) sum_mu y_mu A_mu, symmetric, shape (p, p).
        kappa: the isotropy constant (see :func:`isotropy_constant`), > 0.
        W0: initial weights, shape (p, d).
        t: times >= 0, a scalar or 1-D.

    Returns:
        M(t), shape (T, p, p) (or (p, p) for a scalar t).

    Raises:
        ValueError: on a non-symmetric B, kappa <= 0, a W0 with the wrong number of rows, t < 0,
            or times so long that the closed form overflows (2 lam_max t above ~709 in
            float64, ~88 in float32; the message quotes the limit of the dtype in use).
    """
    B = as_tensor("B", B, ndim=2)
    require_symmetric("B", B)
    p = B.shape[0]
    kappa = require_positive("kappa", kappa)
    if B.shape[0] != B.shape[1]:
        raise ValueError(f"argument `B`: expected a square matrix, got shape {tuple(B.shape)}")
    W0 = as_tensor("W0", W0, ndim=2, dtype=B.dtype, device=B.device)
    require_shape("W0", W0, (p, None), like="B")
    t_in = as_tensor("t", t, dtype=B.dtype, device=B.device)
    if t_in.ndim > 1:
        raise ValueError(
            f"argument `t`: expected a scalar or a 1-D tensor of times, got shape "
            f"{tuple(t_in.shape)}"
        )
    t = t_in.reshape(-1)
    if (t < 0).any():
        raise ValueError(f"argument `t`: expected times >= 0, got minimum {t.min().item():.3g}")
    d = W0.shape[1]
    lam, U = torch.linalg.eigh((B + B.T) / 2)
    lam, U = lam.flip(0), U.flip(1)  # descending: QR of graded rows wants the big first
    Wt = U.T @ W0  # W0 in B's eigenbasis: (p, d)
    pos = t > 0
    tp = torch.where(pos, t, torch.ones_like(t))  # t = 0 handled below
    log_sq = 0.5 * (
        math.log(4.0 * kappa) + _log_integral_exp(lam, tp)
    )  # ln sqrt(4 kappa k): (T, p)
    Y = torch.exp(log_sq)[:, :, None] * Wt  # (T, p, d)
    eye = torch.eye(d, dtype=B.dtype, device=B.device).expand(t.shape[0], d, d)
    Q2 = torch.linalg.qr(torch.cat([Y, eye], dim=1)).Q[:, :p, :]  # Y R^{-1}: (T, p, d)
    Z = (
        torch.exp(2.0 * lam * tp[:, None] - log_sq)[:, :, None] * Q2
    )  # e^{2 lam t} W~ R^{-1}: (T, p, d)
    M = U @ (Z @ Z.transpose(1, 2)) @ U.T  # (T, p, p)
    M = torch.where(pos[:, None, None], M, W0 @ W0.T)
    if not torch.isfinite(M).all():
        log_max = math.log(torch.finfo(B.dtype).max)  # 709.8, 88.7 (float32)
        limit = log_max / 2 / max(lam.abs().max().item(), 1e-300)
        raise ValueError(
            f"argument `t`: the closed form overflows in {B.dtype} for "
            f"2 lambda_max t > ~{log_max:.0f} (here t > ~{limit:.3g}); by then M "
            "has converged to P+ B P+ / kappa, so evaluate at smaller t (or pass "
            "float64 tensors)"
        )
    return M[0] if t_in.ndim == 0 else M


def single_sample_solution(
    a: Any,
    y: float,
    z0: Any,
    t: Any,
    *,
    max_step: float | None = None,
) -> torch.Tensor:
    r"""Mode strengths for one training sample: :math:`z_k(t) = z_k(0)e^{4a_k\tau(t)}`
    (Chapter 4).

    With n = 1, :math:`C = aa^\top` and :math:`b = ya`, so :math:`\dot z_k = 4a_kz_k(y - a^\top z)`;
    hence :math:`z_k = z_k(0)e^{4a_k\tau}` with the common clock :math:`\tau(t)`, the residual
    accumulated up to time t, which solves the scalar ODE

    .. math::

        \dot\tau = y - F(\tau), \qquad F(\tau) = \sum_k a_kz_k(0)e^{4a_k\tau}, \qquad
        \tau(0) = 0,

    integrated by RK4.

    Args:
        a: eigenvalues :math:`a_k` of the single structure matrix, shape (K,).
        y: the target minus f0.
        z0: initial mode strengths :math:`z_k(0) \ge 0`, shape (K,).
        t: output times, 1-D increasing, >= 0.
        max_step: fixed RK4 step (default: 2% of the local time scale :math:`1/F'(\tau)`).

    Returns:
        z at the times t, shape (T, K).

    Raises:
        ValueError, TypeError: on a bad argument (naming it), or a step size that would take more
            than the bounded number of RK4 steps.
    """
    a = as_tensor("a", a, ndim=1).detach()
    z0 = as_tensor("z0", z0, ndim=1, dtype=a.dtype, device=a.device).detach()
    require_shape("z0", z0, (a.shape[0],), like="a")
    if (z0 < 0).any():
        raise ValueError(
            f"argument `z0`: expected strengths >= 0, got minimum {z0.min().item():.3g}"
        )
    t = require_time_grid("t", t, dtype=a.dtype, device=a.device)
    y = require_real("y", y)
    an, cn = a.double().cpu().numpy(), (a * z0).double().cpu().numpy()  # a_k, a_k z_k(0)

    def dtau(state: tuple[float]) -> tuple[float]:  # y - F(tau)
        return (y - float(np.dot(cn, np.exp(4.0 * an * state[0]))),)

    def rate(tau: float) -> float:  # F'(tau)
        return float(np.dot(4.0 * an * cn, np.exp(4.0 * an * tau)))

    floor = 4.0 * abs(y) * float(np.abs(an).max()) + 1e-12
    fixed = None if max_step is None else require_positive("max_step", max_step)
    if fixed is not None:
        require_substeps("max_step", t[-1].item(), fixed)

    def step(state: tuple[float]) -> float:  # 2% of the local scale
        return fixed if fixed is not None else _STEP_FRACTION / max(rate(state[0]), floor)

    states = integrate(dtau, (0.0,), t.tolist(), step)
    return torch.stack([z0 * torch.exp(4.0 * a * tau) for (tau,) in states])
