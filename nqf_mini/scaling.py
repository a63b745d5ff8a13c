"""Scaling laws from many logistic modes: closed-form loss curves, ignition windows, power-law fits.

With orthogonal features (Chapter 4, regime 2) every mode k is an independent logistic with growth
rate zeta_k and capacity z*_k. Writing u_k = z_k / z*_k for the learnt fraction and V_k for the loss
the mode carries when it is not learnt at all, the excess loss is (Chapter 6)

    E(t) = sum_k V_k (1 - u_k(t))^2 = sum_k V_k expit(ln(1/u_k0 - 1) - zeta_k t)^2 .

Mode k reaches half capacity at t_k = ln(1/u_k0 - 1) / zeta_k (its *ignition time*). For power-law
spectra V_k ~ k^-alpha1, zeta_k ~ k^-alpha2 (Theorems 9-10 of the paper, feature-wise) the ignition
front k*(t) sweeps through the modes and E(t) ~ t^-(alpha1 - 1)/alpha2; for the sample-wise law
(Theorem 11), y_mu ~ mu^-gamma1 and zeta_mu ~ mu^-gamma2 give t^-(2 gamma1 - 1)/gamma2.

A finite number K of modes biases a fitted exponent upward (the loss of modes beyond K is missing);
:func:`feature_wise_curve` can add the analytic tail sum_{k > K} k^-alpha1 = zeta(alpha1, K + 1)
(the Hurwitz zeta function), the loss of modes that have not ignited yet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ._validate import as_tensor, require_finite, require_positive, require_positive_int
from .device import resolve_device
from .dynamics import check_divergence
from .ignition import ignition_times, logistic_ignition_time

_CHUNK_ELEMENTS = 1_000_000          # times x modes evaluated at once by logistic_loss_curve


# --- exponents -------------------------------------------------------------------------------------

def feature_exponent(alpha1: float, alpha2: float) -> float:
    """Feature-wise exponent (alpha1 - 1) / alpha2 of E ~ t^-exponent (Theorem 10, Chapter 6).

    Needs alpha1 > 1 (a summable loss) and alpha2 > 0.
    """
    alpha1, alpha2 = float(alpha1), require_positive("alpha2", alpha2)
    if not alpha1 > 1:
        raise ValueError(f"argument `alpha1`: expected alpha1 > 1 (sum_k k^-alpha1 must converge), "
                         f"got {alpha1}")
    return (alpha1 - 1.0) / alpha2


def sample_exponent(gamma1: float, gamma2: float) -> float:
    """Sample-wise exponent (2 gamma1 - 1) / gamma2 (Theorem 11, Chapter 6).

    The loss of sample mu is y_mu^2 / 2n ~ mu^(-2 gamma1), so this is :func:`feature_exponent` with
    alpha1 = 2 gamma1, alpha2 = gamma2. Needs gamma1 > 1/2 and gamma2 > 0.
    """
    gamma1, gamma2 = float(gamma1), require_positive("gamma2", gamma2)
    if not gamma1 > 0.5:
        raise ValueError(f"argument `gamma1`: expected gamma1 > 1/2, got {gamma1}")
    return (2.0 * gamma1 - 1.0) / gamma2


def fourier_exponent(theta: float, beta: float) -> float:
    """Exponent (2 beta - 1) / (theta + beta) of the one-output-per-mode Fourier network (Chapter 6).

    Mode k carries V_k = b_k^2 / 2 ~ k^(-2 beta) and grows at zeta_k = 2 s_k b_k ~ k^-(theta + beta).
    """
    theta, beta = require_positive("theta", theta), float(beta)
    return feature_exponent(2.0 * beta, theta + beta)


def rank_one_exponent(theta: float, beta: float) -> float:
    """Exponent of the scalar-output Fourier network, our rank-one theory (Chapter 6).

    After one escape along c_k = s_k b_k, the end-to-end weights w = U v follow preconditioned
    regression dw/dt = -(|w| I + w w^T / |w|)(S^2 w - c), with |w| growing as modes are learnt:
    E ~ t^-(2 beta - 1)/(theta + beta - 1/2) for beta < theta + 1/2 and t^-(2 beta - 1)/(2 theta) beyond.
    """
    theta, beta = require_positive("theta", theta), float(beta)
    if not beta > 0.5:
        raise ValueError(f"argument `beta`: expected beta > 1/2, got {beta}")
    if beta < theta + 0.5:
        return (2.0 * beta - 1.0) / (theta + beta - 0.5)
    return (2.0 * beta - 1.0) / (2.0 * theta)


def nonproportional_exponent(alpha1: float, alpha2: float, delta: float, eps: float,
                             k_star: float) -> float:
    """Local exponent for the initialisation u_k0 = eps k^-delta (Chapter 6).

    The ignition time is t_k = (ln(1/eps) + delta ln k) k^alpha2, so d ln t / d ln k* =
    alpha2 + delta / (ln(1/eps) + delta ln k*) and E ~ k*^-(alpha1 - 1) falls with the local exponent
    (alpha1 - 1) / (alpha2 + delta / (ln(1/eps) + delta ln k*)).
    """
    eps, k_star = require_positive("eps", eps), require_positive("k_star", k_star)
    base = math.log(1.0 / eps) + float(delta) * math.log(k_star)
    if not base > 0:
        raise ValueError(f"argument `eps`: expected ln(1/eps) + delta ln k* > 0, got {base:.3g}")
    return (float(alpha1) - 1.0) / (require_positive("alpha2", alpha2) + float(delta) / base)


# --- ignition times and the fit window ---------------------------------------------------------------

def half_capacity_times(u0: Any, zeta: Any) -> torch.Tensor:
    """Half-capacity times t_k = ln(1/u_k0 - 1) / zeta_k of logistic modes (Chapters 4-6).

    :func:`nqf_mini.ignition.logistic_ignition_time` with z* = 1, i.e. in units of the capacity.

    Args:
        u0: initial learnt fractions z_k(0) / z*_k, in (0, 1/2); a scalar or (K,).
        zeta: growth rates, > 0, (K,).
    """
    zeta = as_tensor("zeta", zeta, ndim=1)
    u0 = as_tensor("u0", u0, dtype=zeta.dtype, device=zeta.device)
    if ((u0 <= 0) | (u0 >= 0.5)).any():
        raise ValueError("argument `u0`: expected initial fractions in (0, 1/2) (a mode that starts "
                         f"above half capacity has no ignition), got range [{u0.min().item():.3g}, "
                         f"{u0.max().item():.3g}]")
    return logistic_ignition_time(u0, torch.ones_like(zeta), zeta)


def ignition_front(t: Any, eps: float, alpha2: float, zeta0: float = 1.0) -> torch.Tensor:
    """The ignition front k*(t) = (zeta0 t / ln(1/eps))^(1/alpha2) for zeta_k = zeta0 k^-alpha2 (Ch. 6)."""
    t = as_tensor("t", t)
    eps, alpha2 = require_positive("eps", eps), require_positive("alpha2", alpha2)
    return (require_positive("zeta0", zeta0) * t / math.log(1.0 / eps)) ** (1.0 / alpha2)


def ignition_window(u0: Any, zeta: Any, k_min: int = 10, k_max: int | None = None
                    ) -> tuple[float, float]:
    """Fit window (t_{k_min}, t_{k_max}): the ignition front runs from mode k_min to k_max (Chapter 6).

    Modes are numbered from 1 (``zeta[k - 1]`` is mode k); ``k_max`` defaults to K // 10. Between the
    two times, the modes being learnt are neither the first few (the power law has not set in) nor
    the last tenth (where the missing modes beyond K bend the curve down).
    """
    t_k = half_capacity_times(u0, zeta)
    K = t_k.shape[0]
    k_min = require_positive_int("k_min", k_min)
    k_max = K // 10 if k_max is None else require_positive_int("k_max", k_max)
    if not k_min < k_max <= K:
        raise ValueError(f"argument `k_max`: expected k_min < k_max <= K = {K}, got k_min = {k_min}, "
                         f"k_max = {k_max}")
    return float(t_k[k_min - 1]), float(t_k[k_max - 1])


# --- closed-form curves --------------------------------------------------------------------------------

def logistic_loss_curve(V: Any, zeta: Any, u0: Any, t: Any, *, chunk_elements: int = _CHUNK_ELEMENTS,
                        device: torch.device | str | None = None) -> torch.Tensor:
    """E(t) = sum_k V_k expit(ln(1/u_k0 - 1) - zeta_k t)^2 for independent logistic modes (Chapter 6).

    ``expit(ln(1/u0 - 1) - zeta t) = 1 - u(t)`` is the unlearnt fraction of a logistic mode started at
    u0 = z(0)/z*. Vectorised over modes and times; the times are processed in chunks of about
    ``chunk_elements / K`` so that memory stays bounded (1e5 modes x 1e3 times: ~8 MB at a time).

    Args:
        V: loss carried by each mode, >= 0, (K,).
        zeta: growth rates, > 0, (K,).
        u0: initial fractions in (0, 1), a scalar or (K,).
        t: times, >= 0, 1-D.

    Returns:
        E at the times t, (T,), float64.
    """
    dev = resolve_device(device)
    V = as_tensor("V", V, ndim=1, dtype=torch.float64, device=dev)
    zeta = as_tensor("zeta", zeta, ndim=1, dtype=torch.float64, device=dev)
    u0 = as_tensor("u0", u0, dtype=torch.float64, device=dev)
    t = as_tensor("t", t, dtype=torch.float64, device=dev)
    t = t.reshape(1) if t.ndim == 0 else t
    if t.ndim != 1:
        raise ValueError(f"argument `t`: expected a 1-D tensor of times, got shape {tuple(t.shape)}")
    K = V.shape[0]
    if zeta.shape != (K,):
        raise ValueError(f"argument `zeta`: expected shape ({K},) like V, got {tuple(zeta.shape)}")
    if u0.ndim > 1 or (u0.ndim == 1 and u0.shape != (K,)):
        raise ValueError(f"argument `u0`: expected a scalar or shape ({K},), got {tuple(u0.shape)}")
    for name, x in (("V", V), ("zeta", zeta), ("u0", u0), ("t", t)):
        require_finite(name, x)
    if (V < 0).any():
        raise ValueError("argument `V`: expected losses >= 0, got a negative entry")
    if (zeta <= 0).any():
        raise ValueError("argument `zeta`: expected growth rates > 0, got an entry <= 0")
    if ((u0 <= 0) | (u0 >= 1)).any():
        raise ValueError("argument `u0`: expected initial fractions in (0, 1)")
    if (t < 0).any():
        raise ValueError("argument `t`: expected times >= 0")
    require_positive_int("chunk_elements", chunk_elements)
    logit0 = torch.log(1.0 / u0 - 1.0).expand(K).contiguous()            # (K,)
    step = max(1, chunk_elements // max(K, 1))
    out = torch.empty_like(t)
    for start in range(0, t.shape[0], step):
        tc = t[start:start + step]
        arg = torch.outer(tc, -zeta).add_(logit0)                          # (Tc, K)
        arg.sigmoid_().square_()
        out[start:start + step] = arg @ V
    return out


def hurwitz_tail(alpha1: float, K: int, prefactor: float = 1.0) -> float:
    """sum_{k > K} prefactor k^-alpha1 = prefactor zeta(alpha1, K + 1), the Hurwitz zeta (Chapter 6)."""
    alpha1 = float(alpha1)
    if not alpha1 > 1:
        raise ValueError(f"argument `alpha1`: expected alpha1 > 1 for a convergent tail, got {alpha1}")
    K = require_positive_int("K", K, minimum=0)
    value = torch.special.zeta(torch.tensor(alpha1, dtype=torch.float64),
                               torch.tensor(K + 1.0, dtype=torch.float64))
    return float(prefactor) * float(value)


def power_law_modes(K: int, alpha1: float, alpha2: float, eps: float = 1e-5, delta: float = 0.0,
                    zeta0: float = 1.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(V, zeta, u0) with V_k = k^-alpha1, zeta_k = zeta0 k^-alpha2, u_k0 = eps k^-delta (Chapter 6).

    ``delta = 0`` is the initialisation proportional to capacity, z_k(0) = eps z*_k.
    """
    K = require_positive_int("K", K)
    eps = require_positive("eps", eps)
    if not eps < 0.5:
        raise ValueError(f"argument `eps`: expected eps < 1/2, got {eps}")
    if float(delta) < 0:
        raise ValueError(f"argument `delta`: expected delta >= 0 (u_k0 must stay below eps), "
                         f"got {delta}")
    k = torch.arange(1, K + 1, dtype=torch.float64)
    V = k ** -float(alpha1)
    zeta = require_positive("zeta0", zeta0) * k ** -require_positive("alpha2", alpha2)
    return V, zeta, eps * k ** -float(delta)


def feature_wise_curve(alpha1: float, alpha2: float, K: int, t: Any, *, eps: float = 1e-5,
                       delta: float = 0.0, zeta0: float = 1.0, tail: bool = False,
                       device: torch.device | str | None = None) -> torch.Tensor:
    """Closed-form E(t) of K logistic modes with power-law spectra (Theorems 9-10, Chapter 6).

    V_k = k^-alpha1, zeta_k = zeta0 k^-alpha2, u_k0 = eps k^-delta (:func:`power_law_modes`); with
    ``tail=True`` the loss zeta(alpha1, K + 1) of the modes k > K, which have not ignited yet, is added
    (exact while t << t_{K+1}).
    """
    V, zeta, u0 = power_law_modes(K, alpha1, alpha2, eps, delta, zeta0)
    E = logistic_loss_curve(V, zeta, u0, t, device=device)
    return E + hurwitz_tail(alpha1, K) if tail else E


def sample_wise_curve(gamma1: float, gamma2: float, n: int, t: Any, *, eps: float = 1e-5,
                      zeta0: float = 1.0, tail: bool = False,
                      device: torch.device | str | None = None) -> torch.Tensor:
    """Closed-form E(t) of n samples that are their own modes (Theorem 11, Chapter 6).

    Sample mu carries V_mu = y_mu^2 / 2n = mu^(-2 gamma1) / 2n and grows at zeta_mu = zeta0 mu^-gamma2,
    from u_mu0 = eps; ``tail=True`` adds zeta(2 gamma1, n + 1) / 2n.
    """
    n = require_positive_int("n", n)
    V, zeta, u0 = power_law_modes(n, 2.0 * float(gamma1), gamma2, eps, 0.0, zeta0)
    E = logistic_loss_curve(V / (2 * n), zeta, u0, t, device=device)
    return E + hurwitz_tail(2.0 * float(gamma1), n) / (2 * n) if tail else E


# --- fitting ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PowerLawFit:
    """A least-squares fit loss ~ prefactor * t^-exponent over a window (Chapter 6).

    Attributes:
        exponent: minus the slope of ln(loss) against ln(t).
        stderr: standard error of the slope from the regression residuals.
        prefactor: exp(intercept).
        window: the (t_min, t_max) used.
        n_points: number of data points inside the window.
    """

    exponent: float
    stderr: float
    prefactor: float
    window: tuple[float, float]
    n_points: int


def fit_power_law(t: Any, loss: Any, window: tuple[float, float]) -> PowerLawFit:
    """Fit ln loss = ln prefactor - exponent ln t by least squares over t_min <= t <= t_max (Chapter 6).

    The standard error is the usual one of a regression slope,
    sqrt(sum residual^2 / (m - 2) / sum (ln t - mean)^2); on a log-spaced grid it measures curvature
    of the curve inside the window, not noise.

    Raises:
        ValueError: if t or loss are not positive and finite, have different lengths, the window is not
            inside the data, or fewer than 3 points fall in it.
    """
    t_arr = as_tensor("t", t, ndim=1).detach().cpu().double().numpy()
    y_arr = as_tensor("loss", loss, ndim=1).detach().cpu().double().numpy()
    if t_arr.shape != y_arr.shape:
        raise ValueError(f"argument `loss`: expected the shape of t, {t_arr.shape}, got {y_arr.shape}")
    for name, arr in (("t", t_arr), ("loss", y_arr)):
        if not (np.isfinite(arr).all() and (arr > 0).all()):
            raise ValueError(f"argument `{name}`: expected finite values > 0 (a log-log fit), got "
                             f"minimum {arr.min():.3g}")
    try:
        t_min, t_max = (float(w) for w in window)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"argument `window`: expected a pair (t_min, t_max), got {window!r}") from exc
    if not 0 < t_min < t_max:
        raise ValueError(f"argument `window`: expected 0 < t_min < t_max, got ({t_min:.4g}, {t_max:.4g})")
    if t_min < t_arr.min() * (1 - 1e-6) or t_max > t_arr.max() * (1 + 1e-6):
        raise ValueError(f"argument `window`: expected a window inside the data range "
                         f"[{t_arr.min():.4g}, {t_arr.max():.4g}], got ({t_min:.4g}, {t_max:.4g})")
    inside = (t_arr >= t_min * (1 - 1e-6)) & (t_arr <= t_max * (1 + 1e-6))   # float32 grids
    m = int(inside.sum())
    if m < 3:
        raise ValueError(f"argument `window`: expected at least 3 points inside, got {m}")
    x, y = np.log(t_arr[inside]), np.log(y_arr[inside])
    xc = x - x.mean()
    slope = float((xc * (y - y.mean())).sum() / (xc * xc).sum())
    intercept = float(y.mean() - slope * x.mean())
    resid = y - (intercept + slope * x)
    stderr = float(math.sqrt((resid * resid).sum() / max(m - 2, 1) / (xc * xc).sum()))
    return PowerLawFit(exponent=-slope, stderr=stderr, prefactor=math.exp(intercept),
                       window=(t_min, t_max), n_points=m)


# --- the exact quadratic network on orthonormal inputs (sample-wise law) ---------------------------------

def train_square_network(X: Any, y: Any, W0: Any, lr: float, steps: int, record_every: int = 1,
                         device: torch.device | str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gradient descent on f(x) = sum_i (w_i . x)^2 = |W^T x|^2, an exact NQF with A(x) = x x^T (Ch. 6).

    The same iteration as :func:`nqf_mini.simulate_W` with A_mu = x_mu x_mu^T and the loss
    L = (1/2n) sum_mu (f_mu - y_mu)^2 (dL/dW = (2/n) X^T diag(r) X W), but without forming the n
    matrices A_mu: one step costs O(n p d) instead of O(n p^2 d).

    Args:
        X: inputs (n, p); y: targets (n,); W0: initial weights (p, d), units are columns.
        lr: learning rate (time t = lr * step); steps: number of steps.
        record_every: record the loss every k steps and at the last step.

    Returns:
        (steps, loss): NumPy arrays of the recorded step indices and losses.

    Raises:
        DivergenceError: if the loss becomes non-finite or exceeds 1e6 times its initial value.
    """
    dev = resolve_device(device)
    W = as_tensor("W0", W0, ndim=2, dtype=torch.float64, device=dev).clone()
    X = as_tensor("X", X, ndim=2, dtype=torch.float64, device=dev)
    y = as_tensor("y", y, ndim=1, dtype=torch.float64, device=dev)
    n = X.shape[0]
    if X.shape[1] != W.shape[0] or y.shape[0] != n:
        raise ValueError(f"argument `X`: expected shape (n, {W.shape[0]}) with n = len(y) = "
                         f"{y.shape[0]}, got {tuple(X.shape)}")
    lr = require_positive("lr", lr)
    steps = require_positive_int("steps", steps)
    record_every = require_positive_int("record_every", record_every)
    rec_steps, rec_loss, initial = [], [], None
    for step in range(steps + 1):
        H = X @ W                                                          # (n, d)
        r = H.square().sum(1) - y                                          # residuals (n,)
        if step % record_every == 0 or step == steps:
            value = float(0.5 * r.square().mean())
            initial = value if initial is None else initial
            check_divergence(step, value, initial, lr)
            rec_steps.append(step), rec_loss.append(value)
        if step == steps:
            break
        W = W - lr * (2.0 / n) * (X.T @ (r[:, None] * H))
    return np.asarray(rec_steps, dtype=np.int64), np.asarray(rec_loss, dtype=np.float64)


# --- the scalar-output Fourier network: balanced rank-one dynamics ----------------------------------------

@dataclass(frozen=True)
class RankOneCurve:
    """What :func:`rank_one_curve` returns (Chapter 6).

    Attributes:
        t: times (T,); loss: E(t) = (1/2) |S w - b|^2 (T,); fraction: learnt fractions s_k w_k / b_k,
        (T, K); tau: the preconditioned time tau(t) = int |w| dt (T,).
    """

    t: np.ndarray
    loss: np.ndarray
    fraction: np.ndarray
    tau: np.ndarray


def rank_one_curve(K: int, theta: float, beta: float, *, w0_norm: float = 1e-4, n_steps: int = 1500,
                   tau_max: float | None = None) -> RankOneCurve:
    """Balanced rank-one dynamics of the scalar-output two-layer linear network (Chapter 6).

    For F = x^T U v on Fourier inputs (s_k = k^-theta, target b_k = k^-beta) the loss is
    (1/2) |S w - b|^2 with w = U v. A small initialisation escapes along c = S b and stays (nearly)
    rank one and balanced, U = u q^T, v = |u| q; then w obeys

        dw/dt = -(|w| I + w w^T / |w|) (S^2 w - c),

    preconditioned regression whose speed |w| grows as modes are learnt. Integrated in
    tau = int |w| dt (where it reads dw/dtau = -(I + q q^T)(S^2 w - c), q = w / |w|) by implicit Euler
    on a log-spaced tau grid from 1e-4 to tau_max (default 10 K^(2 theta)), with
    t = int dtau / |w| by the trapezoidal rule. Each step is O(K) (Sherman-Morrison), so K = 4096 costs
    well under a second.
    """
    K = require_positive_int("K", K)
    theta, beta = require_positive("theta", theta), require_positive("beta", beta)
    w0_norm = require_positive("w0_norm", w0_norm)
    n_steps = require_positive_int("n_steps", n_steps, minimum=10)
    tau_max = 10.0 * K ** (2 * theta) if tau_max is None else require_positive("tau_max", tau_max)
    k = torch.arange(1, K + 1, dtype=torch.float64)
    s, b = k ** -theta, k ** -beta
    c, s2 = s * b, s * s
    w = w0_norm * c / c.norm()
    taus = np.logspace(-4.0, math.log10(tau_max), n_steps)
    t_now, tau_prev = 0.0, 0.0
    T, E, F = [], [], []
    for tau in taus:
        h = float(tau - tau_prev)
        tau_prev = float(tau)
        q = w / w.norm()
        rhs = w + h * (c + q * (q @ c))                       # w + h P c, P = I + q q^T
        d_inv = 1.0 / (1.0 + h * s2)
        x, y, a = d_inv * rhs, d_inv * q, s2 * q              # (D + h q a^T)^-1 rhs, D = I + h S^2
        w_new = x - y * (h * (a @ x)) / (1.0 + h * (a @ y))
        t_now += float(2.0 * h / (w.norm() + w_new.norm()))
        w = w_new
        T.append(t_now)
        E.append(float(0.5 * (s * w - b).square().sum()))
        F.append(s * w / b)
    return RankOneCurve(t=np.asarray(T), loss=np.asarray(E), fraction=torch.stack(F).numpy(),
                        tau=np.asarray(taus))


def half_times(t: Any, fraction: Any, modes: Any) -> np.ndarray:
    """First time each listed mode's learnt fraction reaches 1/2, NaN if never (Chapter 6).

    :func:`nqf_mini.ignition.ignition_times` on the fractions (capacity 1), for 1-based ``modes``.

    Args:
        t: times (T,); fraction: learnt fractions (T, K); modes: 1-based mode indices.
    """
    fraction = as_tensor("fraction", fraction, ndim=2, dtype=torch.float64)
    times = ignition_times(fraction, t, 1.0).cpu().numpy()
    idx = np.atleast_1d(np.asarray(modes, dtype=np.int64)) - 1
    return np.where(np.isinf(times[idx]), np.nan, times[idx])
