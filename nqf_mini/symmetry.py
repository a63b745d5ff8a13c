"""Numerical checks of Theorem 1's two structural hypotheses (Chapter 1).

* Permutation symmetry: f(W P, x) = f(W, x) for every permutation matrix P of the d units.
* ZGZ (zero gradient at zero): grad_{w_i} f(W, x) = 0 whenever w_i = 0, whatever the other units
are.

Both are tested at random weights drawn from a seeded generator, so the answers are reproducible.
"""

from __future__ import annotations

from typing import Any

import torch

from ._modules import Module, evaluate, prepare_call, require_finite_output, scalar_output
from ._validate import (
    largest,
    require_dtype,
    require_memory,
    require_positive,
    require_positive_int,
    require_seed,
    require_trials,
)
from .seeds import generator

MAX_EVALUATIONS = 10**6  # module evaluations of one symmetry check


def _random_weights(
    p: int, d: int, scale: float, seed: int, dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    gen = generator(seed)
    return (scale * torch.randn(p, d, generator=gen, dtype=dtype)).to(device)


def _setup(
    f: Module, x: Any, p: int, d: int, trials: int, scale: float, seed: int, dtype: torch.dtype
) -> tuple[Any, torch.device, int, int, int, float, int]:
    """Validate the common arguments; returns (x cast to dtype, device, p, d, trials, scale,
    seed)."""
    p, d = require_positive_int("p", p), require_positive_int("d", d, minimum=2)
    trials, scale = require_trials("trials", trials), require_positive("scale", scale)
    seed = require_seed("seed", seed)
    require_dtype(dtype)
    x, device = prepare_call(f, x, dtype)
    require_memory(
        largest(p=p, d=d), float(p) * d, dtype=dtype, device=device, what="the weights (p x d)"
    )
    if trials * d > MAX_EVALUATIONS:
        raise ValueError(
            f"argument `trials`: trials * d = {trials * d:,} gradient evaluations, "
            f"more than {MAX_EVALUATIONS:,}; use fewer trials or units `d`"
        )
    evaluate(f, torch.zeros(p, d, dtype=dtype, device=device), x)  # reports a bad x naming it
    return x, device, p, d, trials, scale, seed


def permutation_asymmetry(
    f: Module,
    x: Any,
    p: int,
    d: int = 5,
    *,
    trials: int = 4,
    scale: float = 0.5,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> float:
    r"""How far a module is from permutation symmetry (Theorem 1's first hypothesis, Chapter 1).

    .. math:: \max_{W, P} \frac{|f(WP, x) - f(W, x)|}{\max(|f(W, x)|, 1)}

    over ``trials`` random W (entries N(0, scale^2)) and random permutations P of the d units.

    Args:
        f: the module ``f(W, x)``, W of shape (p, d) with the units as columns.
        x: the input.
        p: number of parameters per unit.
        d: number of units (>= 2).
        trials: number of random W (at most 10**5, and trials * d <= 10**6).
        scale: standard deviation of the entries of W.
        seed: seed of :func:`nqf_mini.generator`.
        dtype: float64 (default) or float32.

    Returns:
        The largest relative change, a float (0 up to round-off for a symmetric module).

    Raises:
        ValueError, TypeError: on a bad argument (naming it), or a module whose value is NaN.
    """
    x, device, p, d, trials, scale, seed = _setup(f, x, p, d, trials, scale, seed, dtype)
    gen = generator(seed + 1)
    worst = 0.0
    for t in range(trials):
        W = _random_weights(p, d, scale, seed + t, dtype, device)
        perm = torch.randperm(d, generator=gen).to(device)
        a, b = scalar_output(f(W, x)), scalar_output(f(W[:, perm], x))
        require_finite_output(torch.stack([a, b]).detach(), "f(W, x) at random weights W")
        worst = max(worst, (a - b).abs().item() / max(a.abs().item(), 1.0))
    return worst


def zgz_violation(
    f: Module,
    x: Any,
    p: int,
    d: int = 3,
    *,
    trials: int = 4,
    scale: float = 0.5,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> float:
    r"""How far a module is from ZGZ, zero gradient at zero (Theorem 1's second hypothesis,
    Chapter 1).

    .. math:: \max_{W, i} \frac{|\nabla_{w_i} f(W, x)|}{\max(1, |\nabla_W f(W, x)|)}
              \quad\text{at random } W \text{ with } w_i = 0,

    scale-free; 0 up to round-off exactly when ZGZ holds.

    Args:
        f: the module ``f(W, x)``, W of shape (p, d) with the units as columns.
        x: the input.
        p: number of parameters per unit.
        d: number of units (>= 2).
        trials: number of random W (at most 10**5, and trials * d <= 10**6).
        scale: standard deviation of the entries of W.
        seed: seed of :func:`nqf_mini.generator`.
        dtype: float64 (default) or float32.

    Returns:
        The largest relative gradient, a float.

    Raises:
        ValueError, TypeError: on a bad argument (naming it), or a module whose gradient is
            NaN.
    """
    x, device, p, d, trials, scale, seed = _setup(f, x, p, d, trials, scale, seed, dtype)
    worst = 0.0
    for t in range(trials):
        for i in range(d):
            W = _random_weights(p, d, scale, seed + t, dtype, device)
            W[:, i] = 0.0
            W.requires_grad_(True)
            out = scalar_output(f(W, x))
            grad = torch.autograd.grad(out, W, allow_unused=True)[0] if out.requires_grad else None
            if grad is None:
                continue
            require_finite_output(grad, "the gradient of f(W, x) at random weights W")
            worst = max(worst, grad[:, i].norm().item() / max(1.0, grad.norm().item()))
    return worst


def is_permutation_symmetric(
    f: Module, x: Any, p: int, d: int = 5, *, tol: float = 1e-10, **kwargs: Any
) -> bool:
    """Whether a module is permutation symmetric: ``permutation_asymmetry(f, x, p, d) <= tol``
    (Chapter 1).

    Args:
        f: the module ``f(W, x)``.
        x: the input.
        p: number of parameters per unit.
        d: number of units (>= 2).
        tol: the largest relative change that counts as zero.
        **kwargs: ``trials``, ``scale``, ``seed``, ``dtype`` of :func:`permutation_asymmetry`.

    Returns:
        True or False.
    """
    return permutation_asymmetry(f, x, p, d, **kwargs) <= require_positive("tol", tol)


def satisfies_zgz(
    f: Module, x: Any, p: int, d: int = 3, *, tol: float = 1e-10, **kwargs: Any
) -> bool:
    """Whether a module satisfies ZGZ: ``zgz_violation(f, x, p, d) <= tol`` (Chapter 1).

    Args:
        f: the module ``f(W, x)``.
        x: the input.
        p: number of parameters per unit.
        d: number of units (>= 2).
        tol: the largest relative gradient that counts as zero.
        **kwargs: ``trials``, ``scale``, ``seed``, ``dtype`` of :func:`zgz_violation`.

    Returns:
        True or False.

    Raises:
        ValueError, TypeError: as :func:`zgz_violation`.
    """
    return zgz_violation(f, x, p, d, **kwargs) <= require_positive("tol", tol)
