"""Checks of Theorem 1's hypotheses and of the remainder order."""

import math

import numpy as np
import pytest
import torch

import nqf_mini as nqf
from nqf_mini.symmetry import is_permutation_symmetric


def W_random(p, d, seed=3):
    return torch.randn(p, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_permutation_symmetry_detects_a_broken_module():
    mlp = nqf.make_architecture("mlp", n_in=3)
    x = mlp.sample_input()
    assert nqf.permutation_asymmetry(mlp.f, x, mlp.p) < 1e-14
    weighted = lambda W, x: (
        torch.arange(1.0, W.shape[1] + 1, dtype=W.dtype) * (W[-1] * torch.tanh(W[:-1].T @ x))
    ).sum()
    assert nqf.permutation_asymmetry(weighted, x, mlp.p) > 1e-2
    assert not is_permutation_symmetric(weighted, x, mlp.p)


def test_zgz_holds_for_mlp_and_fails_with_frozen_bias():
    good = nqf.make_architecture("mlp", n_in=3, phi="silu")
    bad = nqf.make_architecture("mlp", n_in=3, phi="tanh", bias="frozen", b0=0.3)
    x = good.sample_input(1)
    assert nqf.satisfies_zgz(good.f, x, good.p)
    assert nqf.zgz_violation(bad.f, x, bad.p) > 0.1
    assert not nqf.satisfies_zgz(bad.f, x, bad.p)


@pytest.mark.parametrize(
    "phi, order", [("tanh", 4), ("sin", 4), ("silu", 3), ("gelu", 3), ("softplus0", 3), ("relu", 2)]
)
def test_remainder_order_of_mlp(phi, order):
    arch = nqf.make_architecture("mlp", n_in=4, phi=phi)
    fit = nqf.remainder_order(arch.f, arch.sample_input(2), W_random(arch.p, 8))
    assert abs(fit.slope - order) < 0.05
    assert fit.order == order == arch.remainder_order


def test_dropped_linear_term_gives_slope_one():
    arch = nqf.make_architecture("mlp", n_in=3, phi="tanh", bias="frozen", b0=0.4)
    x = arch.sample_input(4)
    W = W_random(arch.p, 5)
    assert abs(nqf.remainder_order(arch.f, x, W, drop_linear=True).slope - 1) < 0.05
    assert abs(nqf.remainder_order(arch.f, x, W).slope - 3) < 0.05


def test_exact_model_is_reported_exact():
    arch = nqf.make_architecture("phase_retrieval", n_in=3)
    fit = nqf.remainder_order(arch.f, arch.sample_input(), W_random(3, 4))
    assert fit.exact and fit.order is None and math.isnan(fit.slope)
    assert np.all(fit.relative < 1e-12)


def test_remainder_scales_are_validated():
    arch = nqf.make_architecture("mlp")
    with pytest.raises(ValueError, match="argument `scales`"):
        nqf.remainder_order(arch.f, arch.sample_input(), W_random(arch.p, 3), scales=[0.1])
    with pytest.raises(ValueError, match="argument `W`: expected a 2-D tensor, got shape \\(4,\\)"):
        nqf.remainder_order(arch.f, arch.sample_input(), torch.ones(4))


def test_same_seed_same_answer():
    arch = nqf.make_architecture("mlp", phi="silu")
    x = arch.sample_input(3)
    assert nqf.permutation_asymmetry(arch.f, x, arch.p, seed=5) == nqf.permutation_asymmetry(
        arch.f, x, arch.p, seed=5
    )
    assert nqf.zgz_violation(arch.f, x, arch.p, seed=5) == nqf.zgz_violation(
        arch.f, x, arch.p, seed=5
    )
