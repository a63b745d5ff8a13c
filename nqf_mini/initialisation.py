"""The initialisation scale: the seed's two conventions and the course's one (Ch. 5, 6).

Theorem 8 assumes mode strengths z_k(0) = Theta(eps), and the course defines eps as
z_k(0) (Chapter 5). The seed's experiments use two other conventions (the referee's
minor comment 1):

* Fig. 3 starts from W(0) = sqrt(eps) I, so M(0) = W(0) W(0)^T = eps I and every mode
  starts at z_k(0) = e_k^T M(0) e_k = eps exactly, in any orthonormal basis
  (:func:`identity_init`);
* Fig. 5 draws W ~ N(0, eps^2), i.e. i.i.d. Gaussian entries of standard deviation
  sigma = eps. For a unit vector e and d units, z(0) = sum_i (e . w_i)^2 is sigma^2
  times a chi-squared variable with d degrees of freedom, so

      E z(0) = d sigma^2,     std z(0) / E z(0) = sqrt(2 / d)    (see eps_from_sigma).

So Fig. 5's eps is a sigma: z_k(0) = Theta(d eps^2), and the ignition time
t* ~ (1/zeta) ln(1/z(0)) = (1/zeta) (2 ln(1/sigma) - ln d) has twice the prefactor of
ln(1/sigma) that it has of ln(1/eps).
"""

from __future__ import annotations

import math

import torch

from ._validate import (
    largest,
    require_dtype,
    require_memory,
    require_positive,
    require_positive_int,
)
from .device import resolve_device


def identity_init(
    eps: float,
    p: int,
    d: int | None = None,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r""":math:`W(0) = \sqrt{\varepsilon}\,I` of shape (p, d) (d = p by default): the seed's Fig. 3
    (Chapter 5).

    With d >= p, :math:`M(0) = W(0)W(0)^\top = \varepsilon I_p`, so every mode starts at
    :math:`z_k(0) = \varepsilon` exactly; with d < p the first d modes start at
    :math:`\varepsilon` and the others at 0 (they never grow, Chapter 4).

    Args:
        eps: the initial mode strength :math:`z_k(0) = \varepsilon` (> 0).
        p: parameters per unit.
        d: number of units (default p).
        dtype: float64 (default) or float32.
        device: where to put W (None: :func:`nqf_mini.default_device`).

    Returns:
        W(0), shape (p, d).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    eps = require_positive("eps", eps)
    p = require_positive_int("p", p)
    d = p if d is None else require_positive_int("d", d)
    require_dtype(dtype)
    dev = resolve_device(device)
    require_memory(largest(p=p, d=d), float(p) * d, dtype=dtype, device=dev, what="W(0) (p x d)")
    W = torch.zeros(p, d, dtype=dtype, device=dev)
    k = min(p, d)
    W[torch.arange(k), torch.arange(k)] = math.sqrt(eps)
    return W


def eps_from_sigma(sigma: float, d: int) -> float:
    r""":math:`\mathbb E\,z_k(0) = d\sigma^2` for d units with i.i.d. N(0, sigma^2) entries
    (Chapters 5, 6).

    The course's :math:`\varepsilon = z_k(0)` of a Gaussian initialisation of scale
    :math:`\sigma`, in expectation; a single mode fluctuates around it by a factor of order
    :math:`1 \pm \sqrt{2/d}` (module docstring). The seed's Fig. 5 ("W ~ N(0, eps^2)") has
    :math:`\sigma = \epsilon` there.

    Args:
        sigma: the standard deviation of the weights, > 0.
        d: the number of units.

    Returns:
        :math:`d\sigma^2`, a float.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    sigma = require_positive("sigma", sigma)
    return require_positive_int("d", d) * sigma * sigma


def sigma_from_eps(eps: float, d: int) -> float:
    """The Gaussian scale sigma = sqrt(eps / d), whose E z_k(0) is eps (Chapter 5)."""
    eps = require_positive("eps", eps)
    return math.sqrt(eps / require_positive_int("d", d))
