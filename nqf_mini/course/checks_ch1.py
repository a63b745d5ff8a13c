"""Self-checks of Chapter 1's exercises (the neural quadratic form)."""

from __future__ import annotations

import torch

from ..activations import Activation, get_activation
from ..architectures import make_architecture
from ..quadratic_form import structure_matrix
from .answers import Answer
from .feedback import (
    CheckResult,
    diagnose_matrix,
    hidden_generator,
    integer,
    not_a_function,
    uniform,
)
from .registry import register_check


def _random_inputs(n_in: int, count: int = 3, seed: int = 7) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(n_in, generator=gen, dtype=torch.float64) for _ in range(count)]


def _scaled_tanh(phi1: float) -> Activation:
    """phi = phi1 tanh: phi(0) = 0 and phi'(0) = phi1, for any slope the grader
    draws."""
    return Activation("scaled_tanh", lambda z: phi1 * torch.tanh(z), 0.0, phi1, 0.0)


def _bias_cases(hidden: int | None) -> list[tuple[str | Activation, int, torch.Tensor]]:
    """(activation, n_in, x): the three public activations, plus randomised ones when
    grading."""
    cases: list[tuple[str | Activation, int, torch.Tensor]] = [
        (phi, n_in, x)
        for phi, n_in in [("tanh", 3), ("silu", 2), ("gelu", 4)]
        for x in _random_inputs(n_in)
    ]
    if hidden is not None:
        gen = hidden_generator("ch1.mlp_bias_A", hidden)
        for phi in ("sin", "softplus0", _scaled_tanh(round(uniform(gen, 0.2, 3.0), 3))):
            n_in = integer(gen, 1, 6)
            x = uniform(gen, 0.3, 3.0) * torch.randn(n_in, generator=gen, dtype=torch.float64)
            cases.append((phi, n_in, x))
    return cases


@register_check("ch1.mlp_bias_A")
def _ch1_mlp_bias_A(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(x, phi1) -> A(x) for f = sum_i v_i phi(u_i^T x + b_i) with w_i = [u_i;
    b_i; v_i]."""
    if (verdict := not_a_function(answer, "A_bias(x, phi1)")) is not None:
        return verdict
    cases = _bias_cases(hidden)
    for phi, n_in, x in cases:
        phi1 = get_activation(phi).phi1
        given = answer(x.clone(), phi1)
        arch = make_architecture("mlp", n_in=n_in, phi=phi, bias="trainable")
        truth = structure_matrix(arch.f, x, arch.p)  # computed after the answer returned
        name = phi if isinstance(phi, str) else f"{phi1:g} tanh"
        problem = diagnose_matrix(given, truth, f"A(x) for n_in = {n_in}, phi = {name}")
        if problem is not None:
            if phi1 != 1.0 and diagnose_matrix(answer(x.clone(), 1.0), truth / phi1, "") is None:
                return CheckResult(
                    False,
                    "right for phi'(0) = 1 but it does not scale with `phi1`: A is "
                    "proportional to phi'(0)",
                )
            return problem
    return CheckResult(
        True,
        f"A(x) = phi'(0) O([x; 1]) agrees with autograd on {len(cases)} random inputs "
        f"(tanh, SiLU, GELU)",
    )


_ORDERS = {"sin": 4, "gelu": 3, "softplus0": 3, "linear": None}
_ORDER_IDEAS = {
    "sin": "sin is odd: which derivatives of an odd phi vanish at 0, and which term of "
    "the expansion does phi''(0) multiply?",
    "gelu": "compute GELU's phi''(0); the cubic term of the expansion is (phi''(0)/2) v (u.x)^2",
    "softplus0": "compute phi''(0) for softplus(z) - ln 2; the cubic term is "
    "(phi''(0)/2) v (u.x)^2",
    "linear": "with phi(z) = z the module is v u^T x: what is left of it beyond the "
    "quadratic part (None means exactly quadratic)?",
}


@register_check("ch1.remainder_orders")
def _ch1_remainder_orders(answer: Answer, hidden: int | None) -> CheckResult:
    """answer maps activation names to the remainder order of the two-layer MLP
    (None: exact)."""
    given = answer.value if answer.kind == "value" else None
    if not isinstance(given, dict):
        return CheckResult(
            False, f"expected a dict such as {{'sin': 4, ...}}, got {answer.type_name}"
        )
    missing = sorted(set(_ORDERS) - set(given))
    if missing:
        return CheckResult(False, f"missing predictions for {missing}")
    odd = [k for k in _ORDERS if not (given[k] is None or type(given[k]) is int)]
    if odd:
        return CheckResult(
            False,
            f"each order should be an int or None; {odd[0]!r} is {given[odd[0]]!r}",
        )
    wrong = [k for k, right in _ORDERS.items() if given[k] != right]
    if wrong:
        return CheckResult(
            False,
            f"{len(wrong)} of the 4 orders {'is' if len(wrong) == 1 else 'are'}"
            " not right yet. " + "; ".join(f"{k}: {_ORDER_IDEAS[k]}" for k in wrong),
        )
    return CheckResult(True, "all four orders right: the cubic term is (phi''(0)/2) v (u.x)^2")
