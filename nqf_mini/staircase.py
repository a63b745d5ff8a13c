"""The staircase of a two-layer network on any data, predicted before training (Chapter 10).

The network F(x) = V^T phi(U^T x) of :mod:`nqf_mini.networks` (U: (p, d), V: (d, K)) has the
NQF F = phi'(0) x^T U V (Chapters 1-2). With P = phi'(0) U V its loss (1/2n) sum |F - Y|^2 sees
the data only through the moments S_xx = X^T X / n and S_xy = X^T Y / n:

    L(P) = tr(P^T S_xx P) / 2 - tr(P^T S_xy) + tr(S_yy) / 2 .

**Modes.** The singular value decomposition S_xy = sum_k sigma_k r_k o_k^T (sigma_1 >= sigma_2
>= ... > 0) gives the modes; lambda_k = r_k^T S_xx r_k. Mode k occupies the unit-space vector
a_k = (U^T r_k + V o_k) / sqrt 2 in R^d, and its strength is z_k = |a_k|^2 = nu_k^T M nu_k
with nu_k = (r_k, o_k) / sqrt 2 (Chapter 5's z_k^+). What a network has learnt of mode k is
measured on any data by the fitted fraction (:func:`fitted_fractions`)

    q_k = r_k^T (X^T F / n) o_k / sigma_k ,

0 for F = 0 and 1 at the least-squares fit, for the network and its NQF alike.

**Logistic modes.** If [S_xx, S_xy S_yx] = 0 (every r_k an eigenvector of S_xx; whitened
inputs, S_xx = I, make it exact) and M(0) is diagonal in the modes, each mode is a logistic
(Saxe, McClelland & Ganguli 2014; Chapter 5):

    dz_k/dt = zeta_k z_k (1 - z_k / z*_k),
    zeta_k = 2 phi'(0) sigma_k,   z*_k = 2 sigma_k / (phi'(0) lambda_k),

and q_k = z_k / z*_k. Gradient descent at step eta multiplies z_k on its plateau by
(1 + eta phi'(0) sigma_k)^2 per step, so mode k reaches q_k = 1/2 at the step

    s_k = ln(z*_k / z_k(0) - 1) / (eta zeta_k^GD),
    zeta_k^GD = (2 / eta) ln(1 + eta phi'(0) sigma_k),

the growth rate of a gradient step per unit of time t = eta s (Chapter 5).

**Competition for units** (our refinement, Chapter 10). While all weights are small a_k(t)
grows along its initial direction; once an earlier mode j has ignited, the part of a_k along
a_j decays (its product with mode j's weights has target 0). So mode k grows from
z_k^eff(0) = |Pi_k a_k(0)|^2, Pi_k the projection orthogonal to the a_j(0) of the modes
predicted to ignite before k; with d units at most d modes ignite.

**Loss.** With V_k = sigma_k^2 / (2 lambda_k), L = L_0 - sum_k V_k + sum_k V_k (1 - q_k)^2
(decoupled levels). When the data do not commute the plateaus sit instead at the losses of
reduced-rank regression, L_0 - sum_{j <= k} rho_j^2 / 2 with rho_j the singular values of
S_xx^{-1/2} S_xy (the canonical strengths); ``levels="reduced_rank"`` puts the drop
rho_j^2 / 2 on the j-th ignition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ._validate import as_tensor, require_choice, require_positive, require_shape
from .activations import get_activation
from .ignition import logistic_ignition_time
from .loss_curves import logistic_loss_curve

LEVELS = ("decoupled", "reduced_rank")
_RTOL = 1e-9  # a singular value below this fraction of sigma_1 is not a mode


@dataclass(frozen=True)
class DataModes:
    """The modes of (X, Y) for the two-layer NQF: the SVD of S_xy = X^T Y / n (Chapter 10).

    Attributes:
        r: input directions r_k, (p, m); o: output directions o_k, (K, m).
        sigma: singular values sigma_1 >= ... >= sigma_m > 0 of S_xy, (m,).
        lam: lambda_k = r_k^T S_xx r_k, (m,).
        leakage: |(I - r_k r_k^T) S_xx r_k| / lambda_k, (m,): 0 when r_k is an eigenvector of S_xx.
        canonical: rho_k, the m largest singular values of S_xx^{-1/2} S_xy (pseudo-inverse), (m,).
        loss_zero: L at F = 0, tr(S_yy) / 2.
        loss_min: the least-squares minimum, L_0 - sum_k rho_k^2 / 2.
    """

    r: torch.Tensor
    o: torch.Tensor
    sigma: torch.Tensor
    lam: torch.Tensor
    leakage: torch.Tensor
    canonical: torch.Tensor
    loss_zero: float
    loss_min: float

    def fractions(self, correlation: Any) -> torch.Tensor:
        r"""Fitted fractions :math:`q_k = r_k^\top C o_k / \sigma_k` of an input-output
        correlation :math:`C = X^\top F/n` (Chapter 10).

        For the NQF :math:`F = XP` (:math:`\phi'(0)` absorbed in P), :math:`C = S_{xx}P`: the
        fitted fractions of a linear map, without evaluating it on the data.
        :func:`nqf_mini.fitted_fractions` is the same for a network's outputs.

        Args:
            correlation: C, shape (..., p, K) (p, K: the sizes of these modes' r and o).

        Returns:
            q, shape (..., m), float64.

        Raises:
            ValueError, TypeError: on a bad argument (naming it).
        """
        C = as_tensor("correlation", correlation, dtype=torch.float64, device=self.r.device)
        p, K = self.r.shape[0], self.o.shape[0]
        if C.ndim < 2 or tuple(C.shape[-2:]) != (p, K):
            raise ValueError(
                f"argument `correlation`: expected shape (..., {p}, {K}), got {tuple(C.shape)}"
            )
        return torch.einsum("pk,...pc,ck->...k", self.r, C, self.o) / self.sigma


def _moments(X: Any, Y: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """X (n, p), Y (n, K) as float64 tensors on X's device, with S_xx and S_xy."""
    X = as_tensor("X", X, ndim=2).detach().to(torch.float64)  # moments: values only
    Y = as_tensor("Y", Y, dtype=torch.float64, device=X.device).detach()
    Y = Y[:, None] if Y.ndim == 1 else Y
    require_shape("Y", Y, (X.shape[0], None), like="X")
    n = X.shape[0]
    return X, Y, X.T @ X / n, X.T @ Y / n


def _psd_power(S: torch.Tensor, power: float) -> torch.Tensor:
    """S^power of a symmetric PSD S on its range (eigenvalues below 1e-12 of the top dropped)."""
    e, Q = torch.linalg.eigh(S)
    keep = e > 1e-12 * e.max().clamp_min(1e-300)
    return (Q[:, keep] * e[keep] ** power) @ Q[:, keep].T


def data_modes(X: Any, Y: Any) -> DataModes:
    r"""The modes :math:`(r_k, o_k, \sigma_k, \lambda_k)` of data (X, Y) and their loss levels
    (Chapter 10).

    The singular value decomposition :math:`S_{xy} = X^\top Y/n = \sum_k \sigma_k r_k o_k^\top`,
    keeping the singular values above :math:`10^{-9}\sigma_1`, and
    :math:`\lambda_k = r_k^\top S_{xx} r_k` with :math:`S_{xx} = X^\top X/n` (the module
    docstring). Computed in float64 on the device of X.

    Args:
        X: inputs, shape (n, p).
        Y: targets, shape (n, K) or (n,).

    Returns:
        :class:`DataModes` (r (p, m), o (K, m), sigma, lam, leakage, canonical (m,), loss_zero,
        loss_min).

    Raises:
        ValueError: if an argument is malformed (the message names it), or
            :math:`X^\top Y = 0` (no mode to learn).
        TypeError: on an argument of the wrong kind (naming it).
    """
    X, Y, Sxx, Sxy = _moments(X, Y)
    R, s, Oh = torch.linalg.svd(Sxy, full_matrices=False)
    if not s[0] > 0:
        raise ValueError(
            "argument `Y`: expected targets correlated with the inputs, got "
            "X^T Y = 0 (no mode to learn)"
        )
    m = int((s > _RTOL * s[0]).sum())
    R, s, O = R[:, :m], s[:m], Oh[:m].T  # (p, m), (m,), (K, m)
    SR = Sxx @ R
    lam = (R * SR).sum(0)
    if not (lam > 0).all():
        raise ValueError("argument `X`: a mode's input direction r_k has r_k^T S_xx r_k = 0")
    leakage = (SR - R * lam).norm(dim=0) / lam
    half = _psd_power(Sxx, -0.5)
    rho = torch.linalg.svdvals(half @ Sxy)[:m]
    loss_zero = 0.5 * float(Y.square().sum()) / X.shape[0]
    return DataModes(
        r=R,
        o=O,
        sigma=s,
        lam=lam,
        leakage=leakage,
        canonical=rho,
        loss_zero=loss_zero,
        loss_min=loss_zero - 0.5 * float(rho.square().sum()),
    )


@dataclass(frozen=True)
class Staircase:
    """What :func:`predict_staircase` returns: the predicted staircase of one network.

    Attributes:
        steps: predicted gradient-descent step at which q_k first reaches 1/2, (m,); 0 for a mode
            that starts at or above half its capacity, ``math.inf`` for one that cannot ignite
            (no unit left for it).
        modes: the :class:`DataModes` of the data (directions r, o, strengths sigma, lambda, ...).
        zstar: capacities z*_k = 2 sigma_k / (phi'(0) lambda_k), (m,).
        z0: initial strengths z_k(0) = |U0^T r_k + V0 o_k|^2 / 2, (m,).
        z_eff: z_k^eff(0), the part of z_k(0) left after the competition for units, (m,).
        rate: growth of ln z_k per step on the plateau, 2 ln(1 + lr phi'(0) sigma_k), (m,).
        V: loss carried by each mode, sigma_k^2 / (2 lambda_k), (m,).
        order: the modes in predicted order of ignition (indices into the above), (m,).
        lr: the step size; phi1: phi'(0); width: d.
    """

    steps: torch.Tensor
    modes: DataModes
    zstar: torch.Tensor
    z0: torch.Tensor
    z_eff: torch.Tensor
    rate: torch.Tensor
    V: torch.Tensor
    order: torch.Tensor
    lr: float
    phi1: float
    width: int

    def fractions(self, steps: Any) -> torch.Tensor:
        r"""Predicted :math:`q_k` at the given steps: the logistic :math:`z_k/z_k^\ast` from
        :math:`z_k^{\rm eff}(0)`, growing by :math:`\eta\zeta_k^{\rm GD}` per step (Chapter 10).

        Args:
            steps: gradient-descent steps >= 0, shape (T,) or a scalar.

        Returns:
            q, shape (T, m), float64.

        Raises:
            ValueError, TypeError: on a bad argument (naming it).
        """
        s = _steps("steps", steps, self.rate)
        u0 = self.z_eff / self.zstar
        logit = torch.log(torch.where(u0 > 0, 1.0 / u0.clamp_min(1e-300) - 1.0, math.inf))
        return torch.sigmoid(torch.outer(s, self.rate) - logit)  # (T, m)

    def loss(self, steps: Any, levels: str = "decoupled") -> torch.Tensor:
        r"""Predicted loss L at the given steps (Chapter 10).

        ``levels="decoupled"``: :math:`L_0 - \sum_k V_k + \sum_k V_k (1 - q_k)^2`, exact for
        commuting data; ``"reduced_rank"``: :math:`L_{\min} + \sum_j \rho_j^2 (1 - q_{(j)})^2/2`,
        the j-th largest canonical strength :math:`\rho_j` on the j-th mode to ignite, so that
        after j ignitions the loss is that of the best rank-j linear map (the module docstring).

        Args:
            steps: gradient-descent steps >= 0, shape (T,) or a scalar.
            levels: "decoupled" (default) or "reduced_rank".

        Returns:
            L, shape (T,), float64.

        Raises:
            ValueError, TypeError: on a bad argument (naming it).
        """
        require_choice("levels", levels, LEVELS)
        s = _steps("steps", steps, self.rate)
        if levels == "decoupled":
            V, floor = self.V, self.modes.loss_zero - float(self.V.sum())
        else:
            V = torch.empty_like(self.V)
            V[self.order] = 0.5 * self.modes.canonical.square()
            floor = self.modes.loss_min
        u0 = self.z_eff / self.zstar
        live = (u0 > 0) & (u0 < 1)  # never ignites: keeps V; above z*: learnt
        out = torch.full_like(s, floor + float(V[u0 <= 0].sum()))
        if bool(live.any()):
            out = out + logistic_loss_curve(V[live], self.rate[live], u0[live], s, device=s.device)
        return out


def _steps(name: str, steps: Any, like: torch.Tensor) -> torch.Tensor:
    s = as_tensor(name, steps, dtype=torch.float64, device=like.device)
    s = s.reshape(1) if s.ndim == 0 else s
    if s.ndim != 1 or bool((s < 0).any()):
        raise ValueError(
            f"argument `{name}`: expected a 1-D tensor of steps >= 0, got shape {tuple(s.shape)}"
        )
    return s


def _competition(a: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
    """|Pi_k a_k|^2: a_k (columns of a, (d, m)) without its part along the a_j of earlier modes."""
    d, m = a.shape
    z = torch.empty(m, dtype=a.dtype, device=a.device)
    basis = a.new_zeros(d, 0)  # orthonormal, (d, j)
    for k in torch.argsort(first).tolist():
        v = a[:, k] - basis @ (basis.T @ a[:, k])
        z[k] = v.square().sum()
        if basis.shape[1] == d or z[k] <= 1e-24 * a[:, k].square().sum():
            z[k] = 0.0  # in the span of earlier modes: no unit
        else:
            basis = torch.cat([basis, (v / v.norm())[:, None]], dim=1)
    return z


def predict_staircase(
    X: Any, Y: Any, U0: Any, V0: Any, lr: float, *, activation: str = "tanh"
) -> Staircase:
    r"""Predict the staircase of :math:`F(x) = V^\top\phi(U^\top x)` trained by gradient descent
    (Chapter 10).

    From the data moments and the initial weights alone (the module docstring): mode k of
    :math:`S_{xy} = X^\top Y/n` reaches half its least-squares strength, :math:`q_k = 1/2`, at
    the step

    .. math::

        s_k = \frac{\ln\big(z_k^\ast / z_k^{\rm eff}(0) - 1\big)}
                   {2\ln\big(1 + \eta\,\phi'(0)\,\sigma_k\big)}, \qquad
        z_k^\ast = \frac{2\sigma_k}{\phi'(0)\lambda_k},

    :math:`z_k^{\rm eff}(0)` the initial strength
    :math:`z_k(0) = |U_0^\top r_k + V_0 o_k|^2/2` after the competition for units. Exact for
    the NQF on commuting data (:math:`[S_{xx}, S_{xy}S_{yx}] = 0`) in the limit of small
    weights; the network follows it while its pre-activations stay small (Chapter 10 measures
    how far, on scikit-learn's digits: with unit-variance targets of scale :math:`\kappa` over
    :math:`d` units, every mode within 1-3 % at :math:`\kappa/d \le 1/256`, the weak modes
    drifting by several per cent at :math:`\kappa/d \ge 1/64`).

    Args:
        X: inputs, shape (n, p).
        Y: targets, shape (n, K) or (n,).
        U0: initial input weights, shape (p, d).
        V0: initial output weights, shape (d, K) (or (d,) for K = 1).
        lr: the gradient-descent step size :math:`\eta` (loss
            :math:`\frac{1}{2n}\sum_\mu |F(x_\mu) - y_\mu|^2`).
        activation: the network's :math:`\phi`, with :math:`\phi(0) = 0` and
            :math:`\phi'(0) \ne 0` (default "tanh").

    Returns:
        A :class:`Staircase` (float64, on the device of X): the steps :math:`s_k`, the modes,
        capacities, initial and effective strengths, rates, and its ``fractions`` and ``loss``.

    Raises:
        ValueError: on a malformed argument (the message names it), or :math:`X^\top Y = 0`.
        TypeError: on an argument of the wrong kind (naming it).
    """
    act = get_activation(activation, "activation")
    if act.phi0 != 0.0 or act.phi1 == 0.0:
        raise ValueError(
            f"argument `activation`: expected phi(0) = 0 and phi'(0) != 0 (a network "
            f"with an NQF that learns), got {act.name} with phi(0) = {act.phi0:g}, "
            f"phi'(0) = {act.phi1:g}"
        )
    lr = require_positive("lr", lr)
    modes = data_modes(X, Y)
    p, K = modes.r.shape[0], modes.o.shape[0]
    U0 = as_tensor("U0", U0, ndim=2, dtype=torch.float64, device=modes.r.device)
    require_shape("U0", U0, (p, None), like="X")
    V0 = as_tensor("V0", V0, dtype=torch.float64, device=modes.r.device)
    V0 = V0[:, None] if V0.ndim == 1 else V0
    require_shape("V0", V0, (U0.shape[1], None), like="U0")
    require_shape("V0", V0, (None, K), like="Y")
    phi1 = act.phi1
    a = (U0.T @ modes.r + V0 @ modes.o) / math.sqrt(2.0)  # (d, m)
    z0 = a.square().sum(0)
    zstar = 2.0 * modes.sigma / (phi1 * modes.lam)
    rate = 2.0 * torch.log1p(lr * phi1 * modes.sigma)
    if not bool((rate > 0).all()):
        raise ValueError(
            f"argument `lr`: expected 1 + lr phi'(0) sigma_k > 1, got lr = {lr:g} "
            f"with phi'(0) = {phi1:g}"
        )
    steps = _ignition_steps(z0, zstar, rate)
    for _ in range(modes.sigma.shape[0]):  # the order fixes the competition and back
        z_eff = _competition(a, steps)
        new = _ignition_steps(z_eff, zstar, rate)
        if torch.equal(torch.argsort(new), torch.argsort(steps)):
            steps = new
            break
        steps = new
    V = modes.sigma.square() / (2.0 * modes.lam)
    return Staircase(
        steps=steps,
        modes=modes,
        zstar=zstar,
        z0=z0,
        z_eff=z_eff,
        rate=rate,
        V=V,
        order=torch.argsort(steps),
        lr=lr,
        phi1=phi1,
        width=int(U0.shape[1]),
    )


def _ignition_steps(z0: torch.Tensor, zstar: torch.Tensor, rate: torch.Tensor) -> torch.Tensor:
    """ln(z*/z0 - 1) / rate; 0 where z0 >= z*/2, inf where z0 = 0."""
    out = torch.where(z0 > 0, 0.0, math.inf).to(z0)
    below = (z0 > 0) & (z0 < 0.5 * zstar)
    if bool(below.any()):
        out[below] = logistic_ignition_time(z0[below], zstar[below], rate[below])
    return out


def fitted_fractions(outputs: Any, X: Any, Y: Any) -> torch.Tensor:
    r"""Fitted fraction of each mode of (X, Y),
    :math:`q_k = r_k^\top (X^\top F/n)\, o_k / \sigma_k` (Chapter 10).

    The modes are those of :func:`data_modes`; :math:`q_k` is 0 for F = 0 and 1 for the
    least-squares fit :math:`F = X S_{xx}^{+} S_{xy}`, for any network. Chapter 5's
    :func:`nqf_mini.mode_fractions` is the special case of data whose modes are the coordinate
    axes.

    Args:
        outputs: network outputs F on the inputs X, shape (..., n, K) (e.g. (T, n, K) or
            (T, R, n, K)); (..., n) for K = 1.
        X: inputs, shape (n, p).
        Y: targets, shape (n, K) or (n,).

    Returns:
        q, shape (..., m), float64.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    modes = data_modes(X, Y)
    X = as_tensor("X", X, ndim=2, dtype=torch.float64, device=modes.r.device)
    F = as_tensor("outputs", outputs, dtype=torch.float64, device=modes.r.device)
    n, K = X.shape[0], modes.o.shape[0]
    F = F[..., None] if K == 1 and F.ndim >= 1 and F.shape[-1] == n else F
    if F.ndim < 2 or tuple(F.shape[-2:]) != (n, K):
        raise ValueError(
            f"argument `outputs`: expected shape (..., {n}, {K}) to match `X` "
            f"(n = {n}) and `Y` (K = {K}), got {tuple(F.shape)}"
        )
    Xr = X @ modes.r  # (n, m)
    return ((F @ modes.o) * Xr).sum(-2) / (n * modes.sigma)  # (..., m)
