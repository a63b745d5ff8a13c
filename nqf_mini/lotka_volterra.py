"""Commuting data reduce the M-space flow to a Lotka-Volterra system (Theorems 4-7, Chapter 4).

If every structure matrix shares one orthonormal eigenbasis, A_mu = E diag(a_mu) E^T (Assumption 1),
the mode strengths z_k = (E^T M E)_kk obey, under gradient flow on L = (1/2n) sum_mu r_mu^2,

    dz_k/dt = 4 z_k (b_k - (C z)_k),
    C = (1/n) sum_mu a_mu a_mu^T,    b = (1/n) sum_mu (y_mu - f0_mu) a_mu,

for ANY M(0): in the eigenbasis dM/dt = -2 (G M + M G) with G = E diag(C z - b) E^T, and the
diagonal entry k picks up -4 (C z - b)_k z_k. (With the loss (1/n) sum r^2 the factor would be 8.)
With C diagonal the modes are independent logistics with rate zeta_k = 4 b_k and capacity z*_k = b_k
/ C_kk.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import torch

from ._ode import integrate
from ._validate import (
    MAX_STEPS,
    as_tensor,
    require_dtype,
    require_positive,
    require_seed,
    require_shape,
    require_symmetric_stack,
    require_time_grid,
    round_off_rtol,
    warn_subnormal,
)
from .commutativity import common_eigenbasis, max_commutator
from .device import resolve_device

_STEP_FRACTION = 0.03  # default RK4 substep: this fraction of the fastest rate's time scale
_ROUND_OFF = 1e-12  # relative size below which a coefficient of b or C counts as round-off
MAX_MODES_NNLS = 20  # nnls_end_state tries 2^K supports


class CommutingReduction(NamedTuple):
    """What :func:`reduce_commuting` returns (unpacks as ``E, a, b, C``).

    Attributes:
        E: the common orthogonal eigenbasis, (p, p).
        a: the eigenvalues of every A_mu in E, (n, K = p).
        b: the growth vector b_k = (1/n) sum_mu (y_mu - f0_mu) a_mu,k, (K,).
        C: the interaction matrix C = (1/n) sum_mu a_mu a_mu^T, (K, K).
    """

    E: torch.Tensor
    a: torch.Tensor
    b: torch.Tensor
    C: torch.Tensor


def require_substeps(name: str, t_end: float, h: float) -> None:
    """Refuse an integration that would take more than MAX_STEPS RK4 steps, naming ``name``."""
    if t_end / h > MAX_STEPS:
        raise ValueError(
            f"argument `{name}`: integrating to t = {t_end:.3g} with steps of "
            f"{h:.3g} takes {t_end / h:.3g} RK4 steps, more than {MAX_STEPS:,}; "
            f"use a larger `{name}` or shorter times"
        )


def _default_max_step(b: torch.Tensor, C: torch.Tensor, z0: torch.Tensor) -> float:
    """A substep small against 1/rate, rate = 4 max(|b|, |C| z_scale), z_scale >= z0 and z*."""
    diag = torch.diagonal(C, dim1=-2, dim2=-1).abs()
    zstar = torch.where(diag > 0, b.abs() / torch.where(diag > 0, diag, 1.0), 0.0)
    zscale = torch.maximum(z0, zstar.expand_as(z0))  # (..., K)
    rate = 4.0 * max(
        b.abs().max().item(), (C.abs() @ zscale.unsqueeze(-1)).abs().max().item(), 1e-12
    )
    return _STEP_FRACTION / rate


def lotka_volterra(
    b: Any,
    C: Any,
    z0: Any,
    t: Any,
    *,
    max_step: float | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    r"""Integrate dz/dt = 4 z (b - C z) in log space (Theorems 4-7, Chapter 4).

    With u = ln z the system is du/dt = 4 (b - C e^u), which RK4 integrates accurately even from
    z0 = 1e-30 (no stiffness at small z); z0 = 0 stays 0. Integration starts at time 0.

    Args:
        b: growth vector, shape (K,) or (..., K).
        C: interaction matrix, shape (K, K) or (..., K, K).
        z0: initial strengths, >= 0, shape (K,) or (..., K); batch dimensions broadcast.
        t: output times, 1-D, increasing, >= 0 (may start at 0).
        max_step: largest RK4 substep (default: 3% of 1 / rate,
            :math:`\mathrm{rate} = 4\max(|b|, |C|z)` with :math:`z \ge z_0, z^\ast`).
        device: where to compute (None: the default device).
        dtype: dtype of the result, torch.float64 (default) or torch.float32; the integration
            itself always runs in float64 (the state is tiny, and ln z needs the digits).

    Returns:
        z at the times t, shape (..., T, K).

    Raises:
        ValueError: on malformed shapes, negative z0, or times that are not increasing.
    """
    require_dtype(dtype)
    dev = resolve_device(device)
    b = as_tensor("b", b, dtype=dtype, device=dev)
    C = as_tensor("C", C, dtype=dtype, device=dev)
    z0 = as_tensor("z0", z0, dtype=dtype, device=dev)
    if z0.ndim < 1:
        raise ValueError(f"argument `z0`: expected shape (K,) or (..., K), got {tuple(z0.shape)}")
    K = z0.shape[-1]
    if b.ndim < 1 or b.shape[-1] != K:
        raise ValueError(
            f"argument `b`: expected shape ({K},) or (..., {K}) to match `z0`, got {tuple(b.shape)}"
        )
    if C.ndim < 2 or C.shape[-2:] != (K, K):
        raise ValueError(
            f"argument `C`: expected shape ({K}, {K}) or (..., {K}, {K}) to match "
            f"`z0`, got {tuple(C.shape)}"
        )
    if (z0 < 0).any():
        raise ValueError(
            f"argument `z0`: expected strengths >= 0, got minimum {z0.min().item():.3g}"
        )
    t = require_time_grid("t", t, dtype=torch.float64, device=dev)
    try:
        batch = torch.broadcast_shapes(z0.shape[:-1], b.shape[:-1], C.shape[:-2])
    except RuntimeError as exc:
        raise ValueError(
            f"arguments `b`, `C`, `z0`: batch shapes {tuple(b.shape[:-1])}, "
            f"{tuple(C.shape[:-2])}, {tuple(z0.shape[:-1])} do not broadcast"
        ) from exc
    # float64 inside: ln z ~ -69 at z = 1e-30, and float32 round-off in u is relative error in z
    z0, b = z0.double().expand(*batch, K), b.double().expand(*batch, K)
    C = C.double().expand(*batch, K, K)
    h_max = (
        _default_max_step(b, C, z0) if max_step is None else require_positive("max_step", max_step)
    )
    require_substeps("max_step" if max_step is not None else "t", t[-1].item(), h_max)

    def velocity(state: tuple[torch.Tensor]) -> tuple[torch.Tensor]:  # du/dt: (..., K)
        return (4.0 * (b - (C @ torch.exp(state[0]).unsqueeze(-1)).squeeze(-1)),)

    states = integrate(velocity, (torch.log(z0),), t.tolist(), h_max)  # u = ln z, -inf at 0
    out = [torch.exp(u) for (u,) in states]
    return torch.stack(out, dim=-2).to(dtype)  # (..., T, K)


def logistic(z0: Any, zstar: Any, zeta: Any, t: Any) -> torch.Tensor:
    """Closed-form logistic z(t) = z* / (1 + (z*/z0 - 1) e^{-zeta t}) (orthogonal features, Chapter
    4).

    It solves dz/dt = zeta z (1 - z / z*); for the NQF with diagonal C, zeta_k = 4 b_k and
    z*_k = b_k / C_kk. Exact at any z0 > 0, including z0 = 1e-30.

    Args:
        z0: initial values, > 0; z0, zstar and zeta broadcast together to shape (..., K) or ().
        zstar: capacities (non-zero).
        zeta: growth rates.
        t: times, 1-D (or a scalar).

    Returns:
        z(t), shape (..., T, K) (or (T,) when the parameters are scalars).

    Raises:
        ValueError: if z0 <= 0 or zstar == 0 somewhere.
    """
    ref = next((x for x in (z0, zstar, zeta, t) if isinstance(x, torch.Tensor)), None)
    dtype = (
        ref.dtype
        if ref is not None and ref.dtype in (torch.float32, torch.float64)
        else torch.float64
    )
    device = ref.device if ref is not None and ref.device.type != "meta" else None
    z0, zstar, zeta = (
        as_tensor(k, v, dtype=dtype, device=device)
        for k, v in (("z0", z0), ("zstar", zstar), ("zeta", zeta))
    )
    warn_subnormal("z0", z0)
    t = as_tensor("t", t, dtype=dtype, device=z0.device)
    t = t.reshape(1) if t.ndim == 0 else t
    if t.ndim != 1:
        raise ValueError(
            f"argument `t`: expected a 1-D tensor of times, got shape {tuple(t.shape)}"
        )
    if (z0 <= 0).any():
        raise ValueError(f"argument `z0`: expected values > 0, got minimum {z0.min().item():.3g}")
    if (zstar == 0).any():
        raise ValueError("argument `zstar`: expected non-zero capacities, got a zero")
    try:
        z0, zstar, zeta = torch.broadcast_tensors(z0, zstar, zeta)
    except RuntimeError as exc:
        raise ValueError(
            f"arguments `z0`, `zstar`, `zeta`: shapes {tuple(z0.shape)}, "
            f"{tuple(zstar.shape)}, {tuple(zeta.shape)} do not broadcast"
        ) from exc
    z0, zstar, zeta, t = (v.double() for v in (z0, zstar, zeta, t))  # z*/z0 may exceed
    if z0.ndim == 0:  # float32's range
        return (zstar / (1.0 + (zstar / z0 - 1.0) * torch.exp(-zeta * t))).to(dtype)
    tt = t.reshape(-1, 1)  # (T, 1)
    z0, zstar, zeta = (x.unsqueeze(-2) for x in (z0, zstar, zeta))  # (..., 1, K)
    return (zstar / (1.0 + (zstar / z0 - 1.0) * torch.exp(-zeta * tt))).to(dtype)  # (..., T, K)


def reduce_commuting(
    A: Any,
    y: Any,
    f0: float | Any = 0.0,
    *,
    rtol: float | None = None,
    seed: int = 0,
) -> CommutingReduction:
    """Reduce commuting data to Lotka-Volterra coefficients (Assumption 1, Chapter 4).

    Finds E with A_mu = E diag(a_mu) E^T by diagonalising a random combination sum_mu c_mu A_mu
    (which also copes with degenerate eigenvalues), then

        C = (1/n) sum_mu a_mu a_mu^T,    b = (1/n) sum_mu (y_mu - f0_mu) a_mu.

    Args:
        A: structure matrices, symmetric, shape (n, p, p).
        y: targets, shape (n,).
        f0: f(0, x_mu), scalar or shape (n,).
        rtol: largest accepted relative off-diagonal residual ||offdiag(E^T A_mu E)|| / ||A_mu||
            (default: the round-off of the precision A comes in, 1e-8 for float64, 1e-4 for
            float32, 1e-2 for float16).
        seed: seed of the random combination.

    Returns:
        :class:`CommutingReduction` (E (p, p) orthogonal, a (n, K = p), b (K,), C (K, K)); it
        unpacks as ``E, a, b, C``.

    Raises:
        ValueError: if the matrices do not commute (the message gives the largest relative
            commutator ||[A_mu, A_nu]||_F / (||A_mu||_F ||A_nu||_F) and points to
            :func:`nqf_mini.nearest_commuting`, the closest commuting data).
    """
    default_rtol = round_off_rtol(A)
    A = as_tensor("A", A, ndim=3)
    require_symmetric_stack("A", A)
    n = A.shape[0]
    y = as_tensor("y", y, ndim=1, dtype=A.dtype, device=A.device)
    require_shape("y", y, (n,), like="A")
    f0 = as_tensor("f0", f0, dtype=A.dtype, device=A.device)
    if f0.ndim > 1 or (f0.ndim == 1 and f0.shape[0] != n):
        raise ValueError(
            f"argument `f0`: expected a scalar or shape ({n},) to match `A`, got {tuple(f0.shape)}"
        )
    rtol = require_positive("rtol", default_rtol if rtol is None else rtol)
    basis = common_eigenbasis(A, seed=require_seed("seed", seed))
    if basis.residual > rtol:
        raise ValueError(
            f"argument `A`: the structure matrices do not commute (Assumption 1 fails): "
            f"largest relative commutator {max_commutator(A):.3g}, off-diagonal residual "
            f"{basis.residual:.3g} in the best common basis (tolerance {rtol:.3g}). "
            "For a Lotka-Volterra description of approximately commuting data, "
            "reduce nqf_mini.nearest_commuting(A).matrices instead (Chapter 7)"
        )
    a = basis.a  # (n, K)
    C = a.T @ a / n  # (K, K)
    b = (y - f0) @ a / n  # (K,)
    return CommutingReduction(basis.E, a, b, C)


def mode_strengths(M_traj: Any, E: Any) -> torch.Tensor:
    r"""Mode strengths :math:`z_k = (E^\top M E)_{kk}`, the Lotka-Volterra variables (Chapter 4).

    Args:
        M_traj: one M (p, p) or a trajectory (..., p, p), e.g. ``TrainingResult.M_traj``.
        E: the common orthogonal eigenbasis (p, p) of the data, from :func:`reduce_commuting`.

    Returns:
        z, shape (..., K) with K = p.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    M_traj = as_tensor("M_traj", M_traj)
    E = as_tensor("E", E, ndim=2, dtype=M_traj.dtype, device=M_traj.device)
    if E.shape[0] != E.shape[1]:
        raise ValueError(
            f"argument `E`: expected a square orthogonal matrix, got shape {tuple(E.shape)}"
        )
    if M_traj.ndim < 2 or M_traj.shape[-2:] != (E.shape[0], E.shape[0]):
        raise ValueError(
            f"argument `M_traj`: expected shape (..., {E.shape[0]}, {E.shape[0]}) to match "
            f"`E`, got {tuple(M_traj.shape)}"
        )
    return torch.einsum("pk,...pq,qk->...k", E, M_traj, E)


def nnls_end_state(b: Any, C: Any) -> torch.Tensor:
    r"""End state of :math:`\dot z = 4 z (b - C z)`: :math:`\arg\min_{z \ge 0} z^\top C z / 2
    - b^\top z` (Chapter 4).

    Brute force over supports S (largest first): :math:`z_S = C_{SS}^{-1} b_S`, z = 0 elsewhere,
    keeping the candidate with :math:`z_S > 0` and :math:`(Cz - b) \ge 0` (the KKT conditions).
    Round-off is not a mode: a mode whose :math:`b_k` and :math:`C_{kk}` are both below
    :math:`10^{-12}` of the largest entries of b and C (e.g. what
    :func:`nqf_mini.nearest_commuting` leaves in a direction the data do not span) ends at 0,
    and the KKT conditions are tested to :math:`10^{-12}` of the data's scale. Cost
    :math:`2^K` solves: K <= 20.

    Args:
        b: growth vector, shape (K,).
        C: positive-definite interaction matrix, shape (K, K).

    Returns:
        z, shape (K,), in the dtype and on the device of b (computed in float64).

    Raises:
        ValueError: on malformed shapes, K > 20, or if no support satisfies the KKT conditions
            (C not positive semi-definite).
    """
    b_in = as_tensor("b", b, ndim=1)
    b = b_in.detach().double()  # the KKT test needs float64 digits
    C = as_tensor("C", C, ndim=2, dtype=torch.float64, device=b.device).detach()
    K = b.shape[0]
    require_shape("C", C, (K, K), like="b")
    if K > MAX_MODES_NNLS:
        raise ValueError(
            f"argument `b`: expected at most {MAX_MODES_NNLS} modes (the search "
            f"tries 2^K supports), got K = {K}"
        )
    scale_b, scale_C = b.abs().max().item(), C.abs().max().item()
    noise = (b.abs() <= _ROUND_OFF * scale_b) & (torch.diagonal(C).abs() <= _ROUND_OFF * scale_C)
    live = [k for k in range(K) if not bool(noise[k])]
    tol = _ROUND_OFF * max(scale_b, 1e-300)  # C z - b has the scale of b
    for size in range(len(live), -1, -1):
        for S in itertools.combinations(live, size):
            z = torch.zeros(K, dtype=torch.float64, device=b.device)
            idx = list(S)
            if idx:
                try:
                    z[idx] = torch.linalg.solve(C[idx][:, idx], b[idx])
                except RuntimeError:  # a singular block: not this support
                    continue
            if not bool(torch.isfinite(z).all()):
                continue
            if (z[idx] > 0).all() and (C @ z - b >= -tol).all():
                return z.to(b_in.dtype)
    raise ValueError(
        "argument `C`: expected a positive-definite matrix, got one for which no "
        "support satisfies the KKT conditions"
    )
