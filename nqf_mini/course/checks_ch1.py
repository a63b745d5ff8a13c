"""Self-checks of Chapter 1's exercises (the neural quadratic form)."""

from __future__ import annotations

from typing import Callable

import torch

from ..architectures import make_architecture
from ..quadratic_form import structure_matrix
from .feedback import CheckResult, diagnose_matrix, not_a_function
from .registry import register_check

def _random_inputs(n_in: int, count: int = 3, seed: int = 7) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(n_in, generator=gen, dtype=torch.float64) for _ in range(count)]





@register_check("ch1.mlp_bias_A")
def _ch1_mlp_bias_A(answer: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """answer(x, phi1) -> A(x) for f = sum_i v_i phi(u_i^T x + b_i) with w_i = [u_i; b_i; v_i]."""
    if (verdict := not_a_function(answer, "A_bias(x, phi1)")) is not None:
        return verdict
    for phi, n_in in [("tanh", 3), ("silu", 2), ("gelu", 4)]:
        arch = make_architecture("mlp", n_in=n_in, phi=phi, bias="trainable")
        for x in _random_inputs(n_in):
            truth = structure_matrix(arch.f, x, arch.p)
            problem = diagnose_matrix(answer(x.clone(), arch.act.phi1), truth,
                                      f"A(x) for n_in = {n_in}, phi = {phi}")
            if problem is not None:
                if phi != "tanh" and diagnose_matrix(answer(x.clone(), 1.0), truth / arch.act.phi1,
                                                     "") is None:
                    return CheckResult(False, "right for phi'(0) = 1 but it does not scale with "
                                              "`phi1`: A is proportional to phi'(0)")
                return problem
    return CheckResult(True, "A(x) = phi'(0) O([x; 1]) agrees with autograd on 9 random inputs "
                             "(tanh, SiLU, GELU)")


@register_check("ch1.remainder_orders")
def _ch1_remainder_orders(answer: dict[str, int]) -> CheckResult:
    """answer maps activation names to the remainder order of the two-layer MLP (None: exact)."""
    truth = {"sin": 4, "gelu": 3, "softplus0": 3, "linear": None}
    why = {"sin": "sin is odd, so phi''(0) = 0 and the cubic term vanishes",
           "gelu": "GELU has phi''(0) = 2/sqrt(2 pi) != 0, so the cubic term survives",
           "softplus0": "softplus - ln 2 has phi''(0) = 1/4 != 0",
           "linear": "a linear 'activation' makes v u^T x exactly quadratic: no remainder (None)"}
    if not isinstance(answer, dict):
        return CheckResult(False, f"expected a dict such as {{'sin': 4, ...}}, got "
                                  f"{type(answer).__name__}")
    missing = sorted(set(truth) - set(answer))
    if missing:
        return CheckResult(False, f"missing predictions for {missing}")
    wrong = [k for k in truth if answer[k] != truth[k]]
    if wrong:
        return CheckResult(False, "; ".join(f"{k}: you said {answer[k]}, but {why[k]}"
                                            for k in wrong))
    return CheckResult(True, "all four orders right: the cubic term is (phi''(0)/2) v (u.x)^2")
