"""Closed-form loss curves of many independent logistic modes, and the window they follow a power
law in (Theorems 9-11, Chapter 6).

With orthogonal features (Chapter 4, regime 2) every mode k is an independent logistic with growth
rate zeta_k and capacity z*_k. Writing u_k = z_k / z*_k for the learnt fraction and V_k for the loss
the mode carries when it is not learnt at all, the excess loss is

    E(t) = sum_k V_k (1 - u_k(t))^2 = sum_k V_k expit(ln(1/u_k0 - 1) - zeta_k t)^2 .

Mode k reaches half capacity at t_k = ln(1/u_k0 - 1) / zeta_k (its ignition time, Chapter 5).
A finite number K of modes biases a fitted exponent upward (the loss of modes beyond K is missing);
:func:`feature_wise_curve` can add the analytic tail sum_{k > K} k^-alpha1 = zeta(alpha1, K + 1)
(the Hurwitz zeta function), the loss of modes that have not ignited yet.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch

from ._validate import (
    as_tensor,
    require_bool,
    require_in_open_interval,
    require_memory,
    require_nonnegative,
    require_positive,
    require_positive_int,
    require_real,
)
from .device import resolve_device
from .ignition import logistic_ignition_time

_CHUNK_ELEMENTS = 1_000_000  # times x modes evaluated at once by logistic_loss_curve


def ignition_front(t: Any, eps: float, alpha2: float, zeta0: float = 1.0) -> torch.Tensor:
    """The ignition front k*(t) = (zeta0 t / ln(1/eps))^(1/alpha2) for zeta_k = zeta0 k^-alpha2
    (Ch. 6)."""
    t = as_tensor("t", t)
    eps = require_in_open_interval("eps", eps, 0.0, 1.0)
    alpha2 = require_positive("alpha2", alpha2)
    return (require_positive("zeta0", zeta0) * t / math.log(1.0 / eps)) ** (1.0 / alpha2)


def ignition_window(
    u0: Any, zeta: Any, k_min: int = 10, k_max: int | None = None
) -> tuple[float, float]:
    r"""The fit window :math:`(t_{k_{min}}, t_{k_{max}})`: the ignition front runs from mode
    :math:`k_{min}` to :math:`k_{max}` (Chapter 6).

    Modes are numbered from 1 (``zeta[k - 1]`` is mode k). Between the two times, the modes being
    learnt are neither the first few (the power law has not set in) nor the last tenth (where the
    missing modes beyond K bend the curve down). :math:`t_k` is the logistic ignition time of mode
    k (:func:`nqf_mini.logistic_ignition_time` with :math:`z^\ast = 1`).

    Args:
        u0: initial fractions in (0, 1/2), a scalar or (K,).
        zeta: growth rates, > 0, (K,).
        k_min: the first mode of the window (default 10).
        k_max: the last mode of the window (default K // 10).

    Returns:
        (t_min, t_max), two floats.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    zeta = as_tensor("zeta", zeta, ndim=1).detach()  # returns floats
    u0 = as_tensor("u0", u0, dtype=zeta.dtype, device=zeta.device).detach()
    if u0.ndim > 1 or (u0.ndim == 1 and u0.shape != zeta.shape):
        raise ValueError(
            f"argument `u0`: expected a scalar or shape {tuple(zeta.shape)} to "
            f"match `zeta`, got {tuple(u0.shape)}"
        )
    if ((u0 <= 0) | (u0 >= 0.5)).any():
        raise ValueError(
            "argument `u0`: expected initial fractions in (0, 1/2) (a mode that starts "
            f"above half capacity has no ignition), got range [{u0.min().item():.3g}, "
            f"{u0.max().item():.3g}]"
        )
    t_k = logistic_ignition_time(u0, torch.ones_like(zeta), zeta)  # half capacity, z* = 1
    K = t_k.shape[0]
    k_min = require_positive_int("k_min", k_min)
    k_max = K // 10 if k_max is None else require_positive_int("k_max", k_max)
    if not k_min < k_max <= K:
        raise ValueError(
            f"argument `k_max`: expected k_min < k_max <= K = {K}, got k_min = {k_min}, "
            f"k_max = {k_max}"
        )
    return float(t_k[k_min - 1]), float(t_k[k_max - 1])


def logistic_loss_curve(
    V: Any,
    zeta: Any,
    u0: Any,
    t: Any,
    *,
    chunk_elements: int = _CHUNK_ELEMENTS,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r""":math:`E(t) = \sum_k V_k\,\mathrm{expit}(\ln(1/u_k(0) - 1) - \zeta_k t)^2` for independent
    logistic modes (Chapter 6).

    :math:`\mathrm{expit}(\ln(1/u_0 - 1) - \zeta t) = 1 - u(t)` is the unlearnt fraction of a
    logistic mode started at :math:`u_0 = z(0)/z^\ast`. Vectorised over modes and times; the times
    are processed in chunks of about ``chunk_elements / K`` so that memory stays bounded (1e5 modes
    x 1e3 times: ~8 MB at a time).

    Args:
        V: loss carried by each mode, >= 0, (K,).
        zeta: growth rates, > 0, (K,).
        u0: initial fractions in (0, 1), a scalar or (K,).
        t: times, >= 0, 1-D (or a scalar).
        chunk_elements: times x modes evaluated at once.
        device: where to compute (None: :func:`nqf_mini.default_device`).

    Returns:
        E at the times t, (T,), float64.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    dev = resolve_device(device)
    V = as_tensor("V", V, ndim=1, dtype=torch.float64, device=dev)
    zeta = as_tensor("zeta", zeta, ndim=1, dtype=torch.float64, device=dev)
    u0 = as_tensor("u0", u0, dtype=torch.float64, device=dev)
    t = as_tensor("t", t, dtype=torch.float64, device=dev)
    t = t.reshape(1) if t.ndim == 0 else t
    if t.ndim != 1:
        raise ValueError(
            f"argument `t`: expected a 1-D tensor of times, got shape {tuple(t.shape)}"
        )
    K = V.shape[0]
    if zeta.shape != (K,):
        raise ValueError(
            f"argument `zeta`: expected shape ({K},) to match `V`, got {tuple(zeta.shape)}"
        )
    if u0.ndim > 1 or (u0.ndim == 1 and u0.shape != (K,)):
        raise ValueError(
            f"argument `u0`: expected a scalar or shape ({K},) to match `V`, got {tuple(u0.shape)}"
        )
    if (V < 0).any():
        raise ValueError("argument `V`: expected losses >= 0, got a negative entry")
    if (zeta <= 0).any():
        raise ValueError("argument `zeta`: expected growth rates > 0, got an entry <= 0")
    if ((u0 <= 0) | (u0 >= 1)).any():
        raise ValueError("argument `u0`: expected initial fractions in (0, 1)")
    if (t < 0).any():
        raise ValueError("argument `t`: expected times >= 0")
    chunk_elements = require_positive_int("chunk_elements", chunk_elements)
    logit0 = torch.log(1.0 / u0 - 1.0).expand(K).contiguous()  # (K,)
    step = max(1, chunk_elements // max(K, 1))
    out = torch.empty_like(t)
    for start in range(0, t.shape[0], step):
        tc = t[start : start + step]
        arg = torch.outer(tc, -zeta).add_(logit0)  # (Tc, K)
        arg.sigmoid_().square_()
        out[start : start + step] = arg @ V
    return out


def hurwitz_tail(alpha1: float, K: int, prefactor: float = 1.0) -> float:
    r"""The loss of the modes beyond K,
    :math:`\sum_{k > K} c\,k^{-\alpha_1} = c\,\zeta(\alpha_1, K+1)` (the Hurwitz zeta
    function; Chapter 6).

    Args:
        alpha1: the exponent, > 1 (a convergent tail).
        K: the last mode kept, >= 0.
        prefactor: the constant c.

    Returns:
        The tail, a float.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    alpha1 = require_real("alpha1", alpha1)
    if not alpha1 > 1:
        raise ValueError(
            f"argument `alpha1`: expected alpha1 > 1 for a convergent tail, got {alpha1}"
        )
    K = require_positive_int("K", K, minimum=0)
    prefactor = require_real("prefactor", prefactor)
    value = torch.special.zeta(
        torch.tensor(alpha1, dtype=torch.float64), torch.tensor(K + 1.0, dtype=torch.float64)
    )
    return float(prefactor) * float(value)


class PowerLawModes(NamedTuple):
    """What :func:`power_law_modes` returns (unpacks as ``V, zeta, u0``): the loss each mode
    carries, its growth rate and its initial learnt fraction, each of shape (K,)."""

    V: torch.Tensor
    zeta: torch.Tensor
    u0: torch.Tensor


def power_law_modes(
    K: int, alpha1: float, alpha2: float, eps: float = 1e-5, delta: float = 0.0, zeta0: float = 1.0
) -> PowerLawModes:
    r"""Modes with power-law spectra: :math:`V_k = k^{-\alpha_1}`, :math:`\zeta_k = \zeta_0
    k^{-\alpha_2}`, :math:`u_k(0) = \varepsilon k^{-\delta}` (Chapter 6).

    ``delta = 0`` is the initialisation proportional to capacity,
    :math:`z_k(0) = \varepsilon z_k^\ast`.

    Args:
        K: the number of modes.
        alpha1: exponent of the loss per mode, > 0.
        alpha2: exponent of the growth rates, > 0.
        eps: initial fraction of mode 1, in (0, 1/2).
        delta: exponent of the initial fractions, >= 0.
        zeta0: growth rate of mode 1, > 0.

    Returns:
        :class:`PowerLawModes` (V, zeta, u0), each (K,) float64; it unpacks as ``V, zeta, u0``.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    K = require_positive_int("K", K)
    require_memory("K", 3.0 * K, what="the modes (V, zeta, u0)")
    eps = require_in_open_interval("eps", eps, 0.0, 0.5, " (a mode must start below half capacity)")
    delta = require_nonnegative("delta", delta)
    alpha1 = require_positive("alpha1", alpha1)
    k = torch.arange(1, K + 1, dtype=torch.float64)
    V = k**-alpha1
    zeta = require_positive("zeta0", zeta0) * k ** -require_positive("alpha2", alpha2)
    return PowerLawModes(V, zeta, eps * k**-delta)


def feature_wise_curve(
    alpha1: float,
    alpha2: float,
    K: int,
    t: Any,
    *,
    eps: float = 1e-5,
    delta: float = 0.0,
    zeta0: float = 1.0,
    tail: bool = False,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r"""Closed-form :math:`E(t)` of K logistic modes with power-law spectra (Theorems 9-10,
    Chapter 6).

    :math:`V_k = k^{-\alpha_1}`, :math:`\zeta_k = \zeta_0 k^{-\alpha_2}`,
    :math:`u_k(0) = \varepsilon k^{-\delta}` (:func:`power_law_modes`) in
    :func:`logistic_loss_curve`; with ``tail=True`` the loss :math:`\zeta(\alpha_1, K+1)` of the
    modes k > K, which have not ignited yet, is added (exact while :math:`t \ll t_{K+1}`).

    Args:
        alpha1: exponent of the loss per mode.
        alpha2: exponent of the growth rates.
        K: the number of modes.
        t: times, >= 0, 1-D (or a scalar).
        eps: initial fraction of mode 1, in (0, 1/2).
        delta: exponent of the initial fractions, >= 0.
        zeta0: growth rate of mode 1, > 0.
        tail: add the loss of the modes beyond K.
        device: where to compute (None: :func:`nqf_mini.default_device`).

    Returns:
        E at the times t, (T,), float64.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    tail = require_bool("tail", tail)
    V, zeta, u0 = power_law_modes(K, alpha1, alpha2, eps, delta, zeta0)
    E = logistic_loss_curve(V, zeta, u0, t, device=device)
    return E + hurwitz_tail(alpha1, K) if tail else E


def sample_wise_curve(
    gamma1: float,
    gamma2: float,
    n: int,
    t: Any,
    *,
    eps: float = 1e-5,
    zeta0: float = 1.0,
    tail: bool = False,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r"""Closed-form :math:`E(t)` of n samples that are their own modes (Theorem 11, Chapter 6).

    Sample :math:`\mu` carries :math:`V_\mu = y_\mu^2/2n = \mu^{-2\gamma_1}/2n` and grows at
    :math:`\zeta_\mu = \zeta_0\mu^{-\gamma_2}`, from :math:`u_\mu(0) = \varepsilon`;
    ``tail=True`` adds :math:`\zeta(2\gamma_1, n+1)/2n`.

    Args:
        gamma1: exponent of the targets, > 0.
        gamma2: exponent of the growth rates, > 0.
        n: the number of samples.
        t: times, >= 0, 1-D (or a scalar).
        eps: initial fraction of every sample, in (0, 1/2).
        zeta0: growth rate of sample 1, > 0.
        tail: add the loss of the samples beyond n.
        device: where to compute (None: :func:`nqf_mini.default_device`).

    Returns:
        E at the times t, (T,), float64.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    n = require_positive_int("n", n)
    require_memory("n", 3.0 * n, what="the modes (V, zeta, u0)")
    tail = require_bool("tail", tail)
    gamma1, gamma2 = require_positive("gamma1", gamma1), require_positive("gamma2", gamma2)
    V, zeta, u0 = power_law_modes(n, 2.0 * gamma1, gamma2, eps, 0.0, zeta0)
    E = logistic_loss_curve(V / (2 * n), zeta, u0, t, device=device)
    return E + hurwitz_tail(2.0 * gamma1, n) / (2 * n) if tail else E
