"""Predicted scaling-law exponents (Theorems 9-11 of the paper and our rank-one theory, Chapter 6).

With orthogonal features every mode k is a logistic with loss V_k, growth rate zeta_k and ignition
time t_k ~ ln(1/eps) / zeta_k (Chapters 4-5). For power-law spectra V_k ~ k^-alpha1 and
zeta_k ~ k^-alpha2 the ignition front k*(t) ~ t^(1/alpha2) sweeps through the modes, and the loss
still to learn, sum_{k > k*} k^-alpha1 ~ k*^(1 - alpha1), falls as t^-(alpha1 - 1)/alpha2. Each
function returns the exponent of E ~ t^-exponent for one family of spectra.
"""

from __future__ import annotations

import math

from ._validate import (
    require_in_open_interval,
    require_nonnegative,
    require_positive,
    require_real,
)


def feature_exponent(alpha1: float, alpha2: float) -> float:
    r"""Feature-wise exponent :math:`(\alpha_1 - 1)/\alpha_2` of
    :math:`E \sim t^{-\mathrm{exponent}}` (Theorem 10, Chapter 6).

    Args:
        alpha1: the exponent of the loss per mode, V_k ~ k^-alpha1, > 1 (a summable loss).
        alpha2: the exponent of the growth rates, zeta_k ~ k^-alpha2, > 0.

    Returns:
        The exponent, a float.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    alpha1, alpha2 = require_real("alpha1", alpha1), require_positive("alpha2", alpha2)
    if not alpha1 > 1:
        raise ValueError(
            f"argument `alpha1`: expected alpha1 > 1 (sum_k k^-alpha1 must converge), got {alpha1}"
        )
    return (alpha1 - 1.0) / alpha2


def sample_exponent(gamma1: float, gamma2: float) -> float:
    r"""Sample-wise exponent :math:`(2\gamma_1 - 1)/\gamma_2` (Theorem 11, Chapter 6).

    The loss of sample :math:`\mu` is :math:`y_\mu^2/2n \sim \mu^{-2\gamma_1}`, so this is
    :func:`feature_exponent` with :math:`\alpha_1 = 2\gamma_1`, :math:`\alpha_2 = \gamma_2`.

    Args:
        gamma1: the exponent of the targets, y_mu ~ mu^-gamma1, > 1/2.
        gamma2: the exponent of the growth rates, zeta_mu ~ mu^-gamma2, > 0.

    Returns:
        The exponent, a float.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    gamma1, gamma2 = require_real("gamma1", gamma1), require_positive("gamma2", gamma2)
    if not gamma1 > 0.5:
        raise ValueError(f"argument `gamma1`: expected gamma1 > 1/2, got {gamma1}")
    return (2.0 * gamma1 - 1.0) / gamma2


def fourier_exponent(theta: float, beta: float) -> float:
    r"""Exponent :math:`(2\beta - 1)/(\theta + \beta)` of the one-output-per-mode Fourier network
    (Chapter 6).

    Mode k carries :math:`V_k = b_k^2/2 \sim k^{-2\beta}` and grows at
    :math:`\zeta_k = 2 s_k b_k \sim k^{-(\theta + \beta)}`.

    Args:
        theta: the exponent of the input scales, s_k = k^-theta, > 0.
        beta: the exponent of the target coefficients, b_k = k^-beta, > 1/2.

    Returns:
        The exponent, a float.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    theta, beta = require_positive("theta", theta), require_real("beta", beta)
    if not beta > 0.5:
        raise ValueError(f"argument `beta`: expected beta > 1/2 (a summable loss), got {beta}")
    return feature_exponent(2.0 * beta, theta + beta)


def rank_one_exponent(theta: float, beta: float) -> float:
    r"""Exponent of the scalar-output Fourier network, our rank-one theory (Chapter 6).

    After one escape along :math:`c_k = s_k b_k`, the end-to-end weights w = U v follow
    preconditioned regression :math:`\dot w = -(|w| I + ww^\top/|w|)(S^2 w - c)`, with
    :math:`|w|` growing as modes are learnt: :math:`E \sim t^{-(2\beta - 1)/(\theta + \beta - 1/2)}`
    for
    :math:`\beta < \theta + 1/2` and :math:`t^{-(2\beta - 1)/(2\theta)}` beyond.

    Args:
        theta: the exponent of the input scales, s_k = k^-theta, > 0.
        beta: the exponent of the target coefficients, b_k = k^-beta, > 1/2.

    Returns:
        The exponent, a float.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    theta, beta = require_positive("theta", theta), require_real("beta", beta)
    if not beta > 0.5:
        raise ValueError(f"argument `beta`: expected beta > 1/2, got {beta}")
    if beta < theta + 0.5:
        return (2.0 * beta - 1.0) / (theta + beta - 0.5)
    return (2.0 * beta - 1.0) / (2.0 * theta)


def nonproportional_exponent(
    alpha1: float, alpha2: float, delta: float, eps: float, k_star: float
) -> float:
    r"""Local exponent for the initialisation :math:`u_k(0) = \varepsilon k^{-\delta}` (Chapter 6).

    The ignition time is :math:`t_k = (\ln(1/\varepsilon) + \delta\ln k)\,k^{\alpha_2}`, so
    :math:`d\ln t/d\ln k^\ast = \alpha_2 + \delta/(\ln(1/\varepsilon) + \delta\ln k^\ast)` and
    :math:`E \sim {k^\ast}^{-(\alpha_1 - 1)}` falls with the local exponent
    :math:`(\alpha_1 - 1)/(\alpha_2 + \delta/(\ln(1/\varepsilon) + \delta\ln k^\ast))`.

    Args:
        alpha1: the exponent of the loss per mode, > 1.
        alpha2: the exponent of the growth rates, > 0.
        delta: the exponent of the initial fractions, >= 0.
        eps: the initial fraction of mode 1, in (0, 1).
        k_star: the mode at the ignition front, >= 1.

    Returns:
        The exponent, a float.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    eps = require_in_open_interval("eps", eps, 0.0, 1.0)
    k_star, delta = require_positive("k_star", k_star), require_nonnegative("delta", delta)
    alpha1, alpha2 = require_real("alpha1", alpha1), require_positive("alpha2", alpha2)
    if not alpha1 > 1:
        raise ValueError(f"argument `alpha1`: expected alpha1 > 1, got {alpha1}")
    if not k_star >= 1:
        raise ValueError(f"argument `k_star`: expected a mode index >= 1, got {k_star}")
    base = math.log(1.0 / eps) + delta * math.log(k_star)
    return (alpha1 - 1.0) / (alpha2 + delta / base)
