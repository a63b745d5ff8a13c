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
    require_in_open_interval, require_nonnegative, require_positive, require_real,
)


def feature_exponent(alpha1: float, alpha2: float) -> float:
    """Feature-wise exponent (alpha1 - 1) / alpha2 of E ~ t^-exponent (Theorem 10, Chapter 6).

    Needs alpha1 > 1 (a summable loss) and alpha2 > 0.
    """
    alpha1, alpha2 = require_real("alpha1", alpha1), require_positive("alpha2", alpha2)
    if not alpha1 > 1:
        raise ValueError(f"argument `alpha1`: expected alpha1 > 1 (sum_k k^-alpha1 must converge), "
                         f"got {alpha1}")
    return (alpha1 - 1.0) / alpha2


def sample_exponent(gamma1: float, gamma2: float) -> float:
    """Sample-wise exponent (2 gamma1 - 1) / gamma2 (Theorem 11, Chapter 6).

    The loss of sample mu is y_mu^2 / 2n ~ mu^(-2 gamma1), so this is :func:`feature_exponent` with
    alpha1 = 2 gamma1, alpha2 = gamma2. Needs gamma1 > 1/2 and gamma2 > 0.
    """
    gamma1, gamma2 = require_real("gamma1", gamma1), require_positive("gamma2", gamma2)
    if not gamma1 > 0.5:
        raise ValueError(f"argument `gamma1`: expected gamma1 > 1/2, got {gamma1}")
    return (2.0 * gamma1 - 1.0) / gamma2


def fourier_exponent(theta: float, beta: float) -> float:
    """Exponent (2 beta - 1) / (theta + beta) of the one-output-per-mode Fourier network (Chapter 6).

    Mode k carries V_k = b_k^2 / 2 ~ k^(-2 beta) and grows at zeta_k = 2 s_k b_k ~ k^-(theta + beta).
    """
    theta, beta = require_positive("theta", theta), require_real("beta", beta)
    if not beta > 0.5:
        raise ValueError(f"argument `beta`: expected beta > 1/2 (a summable loss), got {beta}")
    return feature_exponent(2.0 * beta, theta + beta)


def rank_one_exponent(theta: float, beta: float) -> float:
    """Exponent of the scalar-output Fourier network, our rank-one theory (Chapter 6).

    After one escape along c_k = s_k b_k, the end-to-end weights w = U v follow preconditioned
    regression dw/dt = -(|w| I + w w^T / |w|)(S^2 w - c), with |w| growing as modes are learnt:
    E ~ t^-(2 beta - 1)/(theta + beta - 1/2) for beta < theta + 1/2 and t^-(2 beta - 1)/(2 theta) beyond.
    """
    theta, beta = require_positive("theta", theta), require_real("beta", beta)
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
    eps = require_in_open_interval("eps", eps, 0.0, 1.0)
    k_star, delta = require_positive("k_star", k_star), require_nonnegative("delta", delta)
    alpha1, alpha2 = require_real("alpha1", alpha1), require_positive("alpha2", alpha2)
    if not alpha1 > 1:
        raise ValueError(f"argument `alpha1`: expected alpha1 > 1, got {alpha1}")
    if not k_star >= 1:
        raise ValueError(f"argument `k_star`: expected a mode index >= 1, got {k_star}")
    base = math.log(1.0 / eps) + delta * math.log(k_star)
    return (alpha1 - 1.0) / (alpha2 + delta / base)
