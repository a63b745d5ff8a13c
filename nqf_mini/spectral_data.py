"""Data sets with prescribed power-law spectra, for the scaling laws of Chapter 6.

* Fourier features on an angle grid theta_j = 2 pi j / N: phi_{2m-1} = sqrt2 cos(m theta),
  phi_{2m} = sqrt2 sin(m theta), orthonormal under the grid average (1/N) sum_j. The inputs are
  x_k(theta_j) = s_k phi_k(theta_j) with s_k = k^-theta_exp, the target coefficients b_k = k^-beta:
  a scalar target y = sum_k b_k phi_k, or one output per mode, Y_k = b_k phi_k.
* Orthonormal-input samples for the sample-wise law: x_mu = s_mu o_mu with orthonormal o_mu,
  y_mu = mu^-gamma1 and s_mu^2 = mu^(gamma1 - gamma2), so that each sample of the exact quadratic
  network f = |W^T x|^2 is its own logistic mode with zeta_mu = 4 y_mu s_mu^2 / n ~ mu^-gamma2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ._validate import (
    describe,
    largest,
    require_fraction,
    require_memory,
    require_positive,
    require_positive_int,
)
from .device import resolve_device
from .seeds import generator


@dataclass(frozen=True)
class FourierData:
    """Fourier-feature data (Chapter 6); modes are numbered k = 1..K along the last axis.

    Attributes:
        angles: the grid theta_j, (N,).
        basis: phi_k(theta_j), (N, K), orthonormal: basis.T @ basis / N = I.
        s: input scales s_k = k^-theta, (K,).
        b: target coefficients b_k = k^-beta, (K,).
        X: inputs X[j, k] = s_k phi_k(theta_j), (N, K).
        y: scalar target y_j = sum_k b_k phi_k(theta_j), (N,).
        Y: one target per mode, Y[j, k] = b_k phi_k(theta_j), (N, K).
    """

    angles: torch.Tensor
    basis: torch.Tensor
    s: torch.Tensor
    b: torch.Tensor
    X: torch.Tensor
    y: torch.Tensor
    Y: torch.Tensor


def fourier_basis(K: int, N: int, device: torch.device | str | None = None) -> torch.Tensor:
    """phi_k(theta_j) for k = 1..K on theta_j = 2 pi j / N, (N, K) (Chapter 6).

    phi_{2m-1} = sqrt2 cos(m theta), phi_{2m} = sqrt2 sin(m theta). Orthonormal under (1/N) sum_j as
    long as the highest frequency m = ceil(K/2) stays below the Nyquist frequency N/2, i.e. N > 2
    ceil(K/2).
    """
    K, N = require_positive_int("K", K), require_positive_int("N", N)
    require_memory(largest(K=K, N=N), 4.0 * N * K, what="the Fourier features (N x K)")
    m_max = (K + 1) // 2
    if not N > 2 * m_max:
        raise ValueError(
            f"argument `N`: expected N > 2 ceil(K/2) = {2 * m_max} grid points (above "
            f"the Nyquist limit of the highest frequency {m_max}), got {N}"
        )
    angles = 2.0 * math.pi * torch.arange(N, dtype=torch.float64) / N
    k = torch.arange(1, K + 1, dtype=torch.float64)
    m = torch.ceil(k / 2.0)
    phase = angles[:, None] * m[None, :]
    basis = math.sqrt(2.0) * torch.where(k % 2 == 1, torch.cos(phase), torch.sin(phase))
    return basis.to(resolve_device(device))


def fourier_features(
    K: int, N: int, theta: float, beta: float, device: torch.device | str | None = None
) -> FourierData:
    r"""Fourier inputs with :math:`s_k = k^{-\theta}` and targets with :math:`b_k = k^{-\beta}`
    (Chapter 6, the seed's Fig. 5).

    The input covariance is :math:`X^\top X/N = \mathrm{diag}(s_k^2)` and the input-target
    correlation of the scalar target is :math:`X^\top y/N = s \odot b`, both diagonal in the mode
    index.

    Args:
        K: the number of modes.
        N: the number of grid points, N > 2 ceil(K/2).
        theta: exponent of the input scales, > 0.
        beta: exponent of the target coefficients, > 0.
        device: where to put the data (None: :func:`nqf_mini.default_device`).

    Returns:
        :class:`FourierData` (angles, basis, s, b, X, y, Y).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    theta, beta = require_positive("theta", theta), require_positive("beta", beta)
    dev = resolve_device(device)
    basis = fourier_basis(K, N, device=dev)
    angles = (2.0 * math.pi * torch.arange(N, dtype=torch.float64) / N).to(dev)
    k = torch.arange(1, K + 1, dtype=torch.float64, device=dev)
    s, b = k**-theta, k**-beta
    return FourierData(angles=angles, basis=basis, s=s, b=b, X=basis * s, y=basis @ b, Y=basis * b)


def fourier_modes(data: FourierData, d: int, sigma: float) -> tuple[torch.Tensor, torch.Tensor]:
    r""":math:`(\zeta_k, u_k(0))` of the one-output-per-mode network on ``data`` (Chapter 6, our
    estimate).

    Mode k of :math:`F = V^\top\phi(U^\top x)` with targets :math:`Y_k = b_k\phi_k` grows at
    :math:`\zeta_k = 2 s_k b_k` (capacity :math:`b_k/s_k`), and from i.i.d. N(0, sigma^2) weights
    over d units its growing direction starts at :math:`u_k(0) \approx (d\sigma^2/2)\,s_k/b_k` of
    that capacity.

    Args:
        data: from :func:`fourier_features`.
        d: the number of hidden units.
        sigma: the standard deviation of the initial weights, > 0.

    Returns:
        (zeta, u0), each of shape (K,).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    if not isinstance(data, FourierData):
        raise TypeError(f"argument `data`: expected FourierData, got {describe(data)}")
    d, sigma = require_positive_int("d", d), require_positive("sigma", sigma)
    return 2 * data.s * data.b, d * sigma**2 / 2 * data.s / data.b


@dataclass(frozen=True)
class OrthonormalSamples:
    """Orthonormal-input samples x_mu = s_mu o_mu (Chapter 6).

    Attributes:
        X: inputs, (n, p), rows x_mu.
        y: targets y_mu = mu^-gamma1, (n,).
        s: scales s_mu = mu^((gamma1 - gamma2) / 2), (n,).
        O: the orthonormal directions o_mu as rows, (n, p).
    """

    X: torch.Tensor
    y: torch.Tensor
    s: torch.Tensor
    O: torch.Tensor


def orthonormal_samples(
    n: int,
    gamma1: float,
    gamma2: float,
    p: int | None = None,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> OrthonormalSamples:
    r"""n samples with orthonormal directions, :math:`y_\mu = \mu^{-\gamma_1}`,
    :math:`s_\mu^2 = \mu^{\gamma_1 - \gamma_2}` (Chapter 6).

    The directions are the rows of a random orthogonal (p x p, p >= n) matrix from a seeded QR on
    the CPU. For :math:`f = |W^\top x|^2` each sample is one logistic mode with capacity
    :math:`z_\mu^\ast = y_\mu/s_\mu^2`, growth rate
    :math:`\zeta_\mu = 4y_\mu s_\mu^2/n = (4/n)\mu^{-\gamma_2}` and loss
    :math:`V_\mu = y_\mu^2/2n`.

    Args:
        n: the number of samples.
        gamma1: exponent of the targets, > 0.
        gamma2: exponent of the growth rates, > 0.
        p: the input dimension, >= n (default n).
        seed: seed of :func:`nqf_mini.generator`.
        device: where to put the data (None: :func:`nqf_mini.default_device`).

    Returns:
        :class:`OrthonormalSamples` (X, y, s, O).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    n = require_positive_int("n", n)
    require_memory("n", 3.0 * n * n, what="n orthonormal directions (n x n at least)")
    p = n if p is None else require_positive_int("p", p)
    if p < n:
        raise ValueError(
            f"argument `p`: expected p >= n = {n} (n orthonormal directions in R^p), got {p}"
        )
    require_memory("p" if p > n else "n", 3.0 * p * p, what="a random orthogonal p x p matrix")
    dev = resolve_device(device)
    gen = generator(seed)
    Q, R = torch.linalg.qr(torch.randn(p, p, generator=gen, dtype=torch.float64))
    Q = Q * torch.sign(torch.diagonal(R))  # a unique, Haar-like Q
    gamma1 = require_positive("gamma1", gamma1)
    mu = torch.arange(1, n + 1, dtype=torch.float64)
    y = mu**-gamma1
    s = mu ** ((gamma1 - require_positive("gamma2", gamma2)) / 2.0)
    O = Q[:n]
    return OrthonormalSamples(X=(s[:, None] * O).to(dev), y=y.to(dev), s=s.to(dev), O=O.to(dev))


def proportional_init(
    samples: OrthonormalSamples, eps: float, d: int, seed: int = 0
) -> torch.Tensor:
    r"""Weights W0 (p, d) with :math:`z_\mu(0) = o_\mu^\top W_0W_0^\top o_\mu = \varepsilon
    z_\mu^\ast` exactly (Chapter 6).

    :math:`z_\mu^\ast = y_\mu/s_\mu^2` is the capacity of sample :math:`\mu` for
    :math:`f = |W^\top x|^2`. Built as :math:`W_0 = O^\top\mathrm{diag}(\sqrt{\varepsilon
    z^\ast/d})\,G` with random signs G (n, d), so the units are not all equal and every sample
    starts at the same learnt fraction :math:`u_\mu(0) = \varepsilon` ("initialisation
    proportional to capacity").

    Args:
        samples: from :func:`orthonormal_samples`.
        eps: the initial learnt fraction, in (0, 1).
        d: the number of units.
        seed: seed of the random signs.

    Returns:
        W0 of shape (p, d).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    if not isinstance(samples, OrthonormalSamples):
        raise TypeError(f"argument `samples`: expected OrthonormalSamples, got {describe(samples)}")
    eps = require_fraction("eps", eps)
    d = require_positive_int("d", d)
    n = samples.y.shape[0]
    require_memory("d", float(samples.O.shape[1] + n) * d, what="W0 (p x d)")
    gen = generator(seed)
    G = torch.randint(0, 2, (n, d), generator=gen).to(torch.float64) * 2.0 - 1.0
    zstar = (samples.y / samples.s**2).cpu()
    W0 = samples.O.cpu().T @ (torch.sqrt(eps * zstar / d)[:, None] * G)
    return W0.to(samples.O.device)
