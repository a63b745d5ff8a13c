"""The neural tangent kernel of the general NQF and how much it moves during training (Chapter 7).

The general quadratic form (no ZGZ, Chapter 1) of a module with d units w_i in R^p is

    f_mu(W) = g_mu . mu + mu^T B_mu mu + Tr[W^T A_mu W],      mu = sum_i w_i,

and the gradient with respect to one unit is grad_{w_i} f_mu = u_mu + 2 A_mu w_i with
u_mu = g_mu + 2 B_mu mu. Its neural tangent kernel is

    Theta_{mu nu} = sum_i grad_{w_i} f_mu . grad_{w_i} f_nu
                  = d u_mu.u_nu + 2 u_mu^T A_nu mu + 2 u_nu^T A_mu mu + 4 Tr[W^T A_mu A_nu W].

Width scalings (the seed's appendix fragment; the parameterisation below is our reconstruction):
g = d^{-1/2} g0, B = d^{-alpha_B} B0, A = d^{-alpha_A} A0 with g0, B0, A0 of order one, and weights
starting near zero. Then Theta(0) = g0 g0^T = O(1), and over the O(1) time in which the loss halves
the fragment bounds the drift by O(d^{1 - alpha_B} + d^{-alpha_A}): lazy (drift -> 0) if
alpha_A > 0 and alpha_B > 1, feature learning if alpha_A = 0 or 1/2 <= alpha_B <= 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ._validate import (
    as_tensor, describe, largest, require_fraction, require_memory, require_positive,
    require_positive_int, require_real, require_seed, require_steps,
)
from .device import resolve_device
from .dynamics import simulate_W
from .seeds import generator


@dataclass(frozen=True)
class GeneralNQF:
    """Data of a general NQF at width d (Chapter 7).

    Attributes:
        g: linear coefficients (n, p); B: cross-unit matrices (n, p, p); A: structure matrices
        (n, p, p); y: targets (n,); d: the width these coefficients are scaled for.
    """

    g: torch.Tensor
    B: torch.Tensor
    A: torch.Tensor
    y: torch.Tensor
    d: int


def _symmetric(gen: torch.Generator, n: int, p: int) -> torch.Tensor:
    S = torch.randn(n, p, p, generator=gen, dtype=torch.float64)
    return (S + S.transpose(1, 2)) / math.sqrt(2 * p)


def scaled_nqf_problem(d: int, alpha_A: float, alpha_B: float, *, alpha_g: float = 0.5, n: int = 12,
                       p: int = 6, seed: int = 0,
                       device: torch.device | str | None = None) -> GeneralNQF:
    r"""A general NQF with :math:`g = d^{-\alpha_g}g_0`, :math:`B = d^{-\alpha_B}B_0`,
    :math:`A = d^{-\alpha_A}A_0` (Chapter 7).

    :math:`g_0` (n, p) has i.i.d. N(0, 1/p) rows, :math:`B_0` and :math:`A_0` are random symmetric
    matrices with entries of order :math:`p^{-1/2}`, and the targets :math:`y = g_0c` are
    realisable by the linear part alone, so the loss can fall by O(1) at every width. The same seed
    gives the same :math:`g_0, B_0, A_0, y` at every d: only the width scalings change.

    Args:
        d: the width the coefficients are scaled for.
        alpha_A: exponent of the structure matrices.
        alpha_B: exponent of the cross-unit matrices.
        alpha_g: exponent of the linear coefficients (default 1/2).
        n: the number of samples.
        p: the parameters per unit.
        seed: seed of :func:`nqf_mini.generator`.
        device: where to put the data (None: :func:`nqf_mini.default_device`).

    Returns:
        :class:`GeneralNQF` (g, B, A, y, d).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    d = require_positive_int("d", d)
    n, p = require_positive_int("n", n), require_positive_int("p", p)
    require_memory(largest(n=n, p=p), 2.0 * n * p * p + n * p, what="the data (g, B, A)")
    alpha_A, alpha_B = require_real("alpha_A", alpha_A), require_real("alpha_B", alpha_B)
    alpha_g = require_real("alpha_g", alpha_g)
    gen = generator(seed)
    g0 = torch.randn(n, p, generator=gen, dtype=torch.float64) / math.sqrt(p)
    B0, A0 = _symmetric(gen, n, p), _symmetric(gen, n, p)
    c = torch.randn(p, generator=gen, dtype=torch.float64)
    y = g0 @ c
    dev = resolve_device(device)
    return GeneralNQF(g=(d ** -alpha_g * g0).to(dev), B=(d ** -alpha_B * B0).to(dev),
                      A=(d ** -alpha_A * A0).to(dev), y=y.to(dev), d=d)


def unit_gradients(problem: GeneralNQF, W: torch.Tensor) -> torch.Tensor:
    """grad_{w_i} f_mu = g_mu + 2 B_mu mu + 2 A_mu w_i for every sample and unit, (n, p, d)."""
    mu = W.sum(dim=1)
    u = problem.g + 2 * problem.B @ mu                                          # (n, p)
    return u[:, :, None] + 2 * problem.A @ W                                    # (n, p, d)


def nqf_ntk(problem: GeneralNQF, W: Any) -> torch.Tensor:
    """Theta_{mu nu} = sum_i grad_{w_i} f_mu . grad_{w_i} f_nu, shape (n, n) (Chapter 7)."""
    _check_problem(problem)
    W = as_tensor("W", W, ndim=2, dtype=problem.g.dtype, device=problem.g.device)
    if W.shape[0] != problem.g.shape[1]:
        raise ValueError(f"argument `W`: expected {problem.g.shape[1]} rows, got {tuple(W.shape)}")
    J = unit_gradients(problem, W).flatten(1)
    return J @ J.T


@dataclass(frozen=True)
class NTKDrift:
    """What :func:`ntk_drift` returns.

    Attributes:
        drift: ||Theta(T) - Theta(0)||_F / ||Theta(0)||_F.
        time: the training time T = lr * steps at which the loss first fell to ``loss_fraction``.
        loss0, loss_T: the loss at 0 and at T.
        unit_sum: |m(T)|, the length of the unit sum m = sum_i w_i at T (the fragment's step
            u = g + 2 B m = O(d^{-1/2}) needs it to stay of order one).
    """

    drift: float
    time: float
    loss0: float
    loss_T: float
    unit_sum: float = math.nan


def ntk_drift(problem: GeneralNQF, *, init_scale: float = 1e-3, loss_fraction: float = 0.5,
              lr: float = 0.05, max_steps: int = 20000, seed: int = 1) -> NTKDrift:
    r"""Relative NTK change :math:`\|\Theta(T) - \Theta(0)\|_F/\|\Theta(0)\|_F` while
    gradient descent brings the loss to ``loss_fraction`` of its start (Chapter 7).

    Trains W (p, d) from :func:`initial_weights` (i.i.d. N(0, init_scale^2 / d) entries, near zero)
    by GD on :math:`L = \frac{1}{2n}\sum(f - y)^2` (:func:`nqf_mini.simulate_W` with the g and B
    terms, stopped at the first step with :math:`L \le` loss_fraction :math:`L(0)`).

    Args:
        problem: from :func:`scaled_nqf_problem`.
        init_scale: the standard deviation of the entries of m = W 1 at the start, > 0.
        loss_fraction: the fraction of L(0) to reach, in (0, 1).
        lr: the learning rate.
        max_steps: the most steps to take (at most 10**7).
        seed: seed of the initial weights.

    Returns:
        :class:`NTKDrift` (drift, time, loss0, loss_T, unit_sum).

    Raises:
        DivergenceError: if the loss blows up (with a smaller lr to try).
        ValueError: if the loss does not reach the fraction within ``max_steps``, or on a bad
            argument (naming it).
    """
    _check_problem(problem)
    init_scale = require_positive("init_scale", init_scale)
    lr = require_positive("lr", lr)
    max_steps = require_steps("max_steps", max_steps)
    loss_fraction = require_fraction("loss_fraction", loss_fraction)
    seed = require_seed("seed", seed)
    W0 = initial_weights(problem, init_scale, seed)
    run = simulate_W(problem.A, problem.y, W0, lr, max_steps, g=problem.g, B=problem.B,
                     stop_below=loss_fraction)
    steps = run.loss.shape[0] - 1
    if run.loss[-1] > loss_fraction * run.loss[0]:
        raise ValueError(f"argument `max_steps`: the loss fell only to "
                         f"{run.loss[-1] / run.loss[0]:.3g} of its initial value in {max_steps} "
                         "steps; raise max_steps or lr")
    assert run.W is not None                                    # simulate_W returns W
    theta0 = nqf_ntk(problem, W0)
    drift = (nqf_ntk(problem, run.W) - theta0).norm() / theta0.norm()
    return NTKDrift(float(drift), lr * steps, float(run.loss[0]), float(run.loss[-1]),
                    float(run.W.sum(dim=1).norm()))


def initial_weights(problem: GeneralNQF, init_scale: float = 1e-3, seed: int = 1) -> torch.Tensor:
    """The start of :func:`ntk_drift`: W (p, d) with i.i.d. N(0, init_scale^2 / d) entries, so
    that m = W 1 has N(0, init_scale^2) entries at every width d (Chapter 7).

    Args:
        problem: from :func:`scaled_nqf_problem` (it fixes p and d).
        init_scale: the standard deviation of the entries of m, > 0.
        seed: seed of :func:`nqf_mini.generator`.

    Returns:
        W0 of shape (p, d), float64, on the device of the problem.
    """
    _check_problem(problem)
    init_scale = require_positive("init_scale", init_scale)
    p, d = problem.g.shape[1], problem.d
    require_memory("problem", 2.0 * p * d, device=problem.g.device,
                   what=f"the weights W (p x d) at the problem's width d = {d}")
    gen = generator(seed)
    W0 = torch.randn(p, d, generator=gen, dtype=torch.float64) * init_scale / math.sqrt(d)
    return W0.to(problem.g.device)


def _check_problem(problem: Any) -> None:
    if not isinstance(problem, GeneralNQF):
        raise TypeError(f"argument `problem`: expected a GeneralNQF (from scaled_nqf_problem), "
                        f"got {describe(problem)}")


@dataclass(frozen=True)
class DriftScaling:
    """NTK drift against width and its fitted exponent (Chapter 7).

    Attributes:
        widths, drifts: the widths d and the measured relative drifts (NumPy).
        exponent: log-log slope of drift against d (least squares).
        predicted: the fragment's exponent max(1 - alpha_B, -alpha_A).
        times, unit_sums: at each width, the time T at which the loss halved and |m(T)|
            (see :class:`NTKDrift`).
    """

    widths: np.ndarray
    drifts: np.ndarray
    exponent: float
    predicted: float
    times: np.ndarray | None = None
    unit_sums: np.ndarray | None = None


def predicted_drift_exponent(alpha_A: float, alpha_B: float) -> float:
    """The exponent of the fragment's bound O(d^{1 - alpha_B} + d^{-alpha_A}): max(1 - alpha_B,
    -alpha_A)."""
    a, b = require_real("alpha_A", alpha_A), require_real("alpha_B", alpha_B)
    return max(1.0 - b, -a) + 0.0                                # + 0.0: no negative zero


def ntk_regime(alpha_A: float, alpha_B: float) -> str:
    r"""The fragment's classification of the width scalings (Chapter 7): ``"lazy"``
    (:math:`\alpha_A > 0` and :math:`\alpha_B > 1`), ``"feature"`` (:math:`\alpha_A = 0` or
    :math:`1/2 \le \alpha_B \le 1`), else ``"unclassified"``.

    Args:
        alpha_A: exponent of the structure matrices.
        alpha_B: exponent of the cross-unit matrices.

    Returns:
        ``"lazy"``, ``"feature"`` or ``"unclassified"``.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    a, b = require_real("alpha_A", alpha_A), require_real("alpha_B", alpha_B)
    if a > 0 and b > 1:
        return "lazy"
    if a == 0 or 0.5 <= b <= 1:
        return "feature"
    return "unclassified"


def drift_scaling(alpha_A: float, alpha_B: float, widths: Sequence[int] = (16, 64, 256, 1024), *,
                  seed: int = 0, **kwargs: Any) -> DriftScaling:
    r"""Measure :func:`ntk_drift` at each width and fit the exponent of
    :math:`\mathrm{drift} \sim d^e` (Chapter 7).

    Args:
        alpha_A: exponent of the structure matrices.
        alpha_B: exponent of the cross-unit matrices.
        widths: at least two widths d.
        seed: seed of the data (:func:`scaled_nqf_problem`).
        **kwargs: go to :func:`scaled_nqf_problem` (n, p, alpha_g, device) and :func:`ntk_drift`
            (init_scale, loss_fraction, lr, max_steps).

    Returns:
        :class:`DriftScaling` (widths, drifts, exponent, predicted).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    alpha_A, alpha_B = require_real("alpha_A", alpha_A), require_real("alpha_B", alpha_B)
    seed = require_seed("seed", seed)
    if isinstance(widths, (str, bytes)) or not hasattr(widths, "__iter__"):
        raise TypeError(f"argument `widths`: expected a sequence of integers, got "
                        f"{describe(widths)}")
    widths = [require_positive_int("widths", w) for w in widths]
    if len(widths) < 2:
        raise ValueError(f"argument `widths`: expected at least two widths, got {widths}")
    prob_keys = {"n", "p", "alpha_g", "device"}
    pk = {k: v for k, v in kwargs.items() if k in prob_keys}
    rk = {k: v for k, v in kwargs.items() if k not in prob_keys}
    runs = [ntk_drift(scaled_nqf_problem(w, alpha_A, alpha_B, seed=seed, **pk), **rk)
            for w in widths]
    drifts = np.array([r.drift for r in runs])
    exponent = float(np.polyfit(np.log(widths), np.log(drifts), 1)[0])
    return DriftScaling(np.asarray(widths), drifts, exponent,
                        predicted_drift_exponent(alpha_A, alpha_B),
                        times=np.array([r.time for r in runs]),
                        unit_sums=np.array([r.unit_sum for r in runs]))
