"""Self-checks of Chapter 9's exercises, registered in
:data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .answers import Answer
from .feedback import (
    CheckResult,
    as_float_tensor,
    as_number,
    close,
    hidden_generator,
    not_a_function,
)
from .registry import register_check

Layers = list[torch.Tensor]
_SHAPES: list[tuple[int, tuple[int, ...]]] = [(3, (4, 5, 3)), (5, (6, 2, 4))]


def _cases(hidden: int | None = None) -> list[tuple[Layers, torch.Tensor]]:
    """Random weights [W1 (d1, n), W2 (d2, d1), W3 (d3, d2), w4 (d3,)] and an input x;
    the grader's hidden cases (``hidden`` a seed) add other shapes and weights."""
    shapes, seed = list(_SHAPES), 90
    if hidden is not None:
        gen = hidden_generator("ch9", hidden)
        shapes = [
            (
                int(torch.randint(2, 7, (1,), generator=gen)),
                tuple(int(v) for v in torch.randint(2, 7, (3,), generator=gen)),
            )
        ]
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=gen))
    gen = torch.Generator().manual_seed(seed)
    out = []
    for n_in, (d1, d2, d3) in shapes:
        layers = [
            0.8 * torch.randn(*shape, generator=gen, dtype=torch.float64)
            for shape in ((d1, n_in), (d2, d1), (d3, d2), (d3,))
        ]
        out.append((layers, torch.randn(n_in, generator=gen, dtype=torch.float64)))
    return out


def _layerwise_truth(layers: Layers, x: torch.Tensor) -> float:
    """w4^T W3 tanh(W2 W1 x): each two-layer module replaced by its NQF (tanh'(0) = 1),
    the tanh between the modules kept (Chapter 9), written out independently of
    nqf_mini.deep."""
    W1, W2, W3, w4 = layers
    return float(w4 @ W3 @ torch.tanh(W2 @ W1 @ x))


def _order_truth(layers: Layers) -> list[torch.Tensor]:
    """M1 = U1 U1^T with units [row i of W1; column i of W2], M2 likewise for W3, w4."""
    W1, W2, W3, w4 = layers
    U1 = torch.cat([W1.T, W2], dim=0)
    U2 = torch.cat([W3.T, w4[None, :]], dim=0)
    return [U1 @ U1.T, U2 @ U2.T]


# --- the layer-wise NQF of a 4-layer MLP ----------------------------------------------

_NQF_SLIPS: list[tuple[Callable[[Layers, torch.Tensor], torch.Tensor], str]] = [
    (
        lambda L, x: L[3] @ L[2] @ L[1] @ L[0] @ x,
        "is the leading order (the deep linear network): the layer-wise NQF keeps the "
        "tanh between the two modules",
    ),
    (
        lambda L, x: L[3] @ torch.tanh(L[2] @ torch.tanh(L[1] @ torch.tanh(L[0] @ x))),
        "is the network itself: inside each module the tanh is replaced by tanh'(0) = 1",
    ),
    (
        lambda L, x: torch.tanh(L[3] @ L[2] @ torch.tanh(L[1] @ L[0] @ x)),
        "applies a tanh to the output: the network's output is linear in its last layer",
    ),
]


@register_check("ch9.layerwise_nqf")
def _ch9_layerwise_nqf(answer: Answer, hidden: int | None) -> CheckResult:
    """answer([W1, W2, W3, w4], x) -> w4^T W3 tanh(W2 W1 x), a scalar tensor."""
    if (verdict := not_a_function(answer, "layerwise_nqf(layers, x)")) is not None:
        return verdict
    for layers, x in _cases() + ([] if hidden is None else _cases(hidden)):
        what = f"for widths {tuple(W.shape[0] for W in layers[:3])}"
        given = as_number(answer([W.clone() for W in layers], x.clone()), f"layerwise_nqf {what}")
        if isinstance(given, CheckResult):
            return given
        if close(given, _layerwise_truth(layers, x), 1e-10):
            continue
        for slip, hint in _NQF_SLIPS:
            if close(given, float(slip(layers, x)), 1e-10):
                return CheckResult(False, f"{what} your value {given:.6g} {hint}")
        return CheckResult(
            False,
            f"{what} your value {given:.6g} is not the layer-wise "
            "NQF: replace each two-layer module by its quadratic "
            "form and keep what lies between them",
        )
    return CheckResult(
        True,
        "w4^T W3 tanh(W2 W1 x) on two networks: every module "
        "replaced by its quadratic form, the tanh between them "
        "kept",
    )


# --- the order parameters of the two modules ------------------------------------------


def _order_slips(layers: Layers) -> list[tuple[list[torch.Tensor], str]]:
    W1, W2, W3, w4 = layers
    U1 = torch.cat([W1.T, W2], dim=0)
    U2 = torch.cat([W3.T, w4[None, :]], dim=0)
    V1 = torch.cat([W2, W1.T], dim=0)
    return [
        (
            [U1.T @ U1, U2.T @ U2],
            "are the Gram matrices U^T U of the units (d x d); the order parameter sums "
            "over the units, M = U U^T = sum_i w_i w_i^T (p x p)",
        ),
        (
            [U1 @ U1.T, W3.T @ W3],
            "leave out the output weights w4: module 2's units are [row j of W3; w4[j]]",
        ),
        (
            [V1 @ V1.T, U2 @ U2.T],
            "order the coordinates of a module-1 unit as [column of W2; row of W1]; the "
            "exercise asks for [row i of W1; column i of W2]",
        ),
    ]


@register_check("ch9.order_parameters")
def _ch9_order_parameters(answer: Answer, hidden: int | None) -> CheckResult:
    """answer([W1, W2, W3, w4]) -> [M1, M2] of the two modules of a 4-layer MLP."""
    if (verdict := not_a_function(answer, "order_parameters(layers)")) is not None:
        return verdict
    for layers, _ in _cases() + ([] if hidden is None else _cases(hidden)):
        what = f"for widths {tuple(W.shape[0] for W in layers[:3])}"
        given = answer([W.clone() for W in layers])
        if not isinstance(given, (list, tuple)) or len(given) != 2:
            return CheckResult(
                False,
                f"{what} expected a list [M1, M2] of two matrices, got {type(given).__name__}",
            )
        checked = [as_float_tensor(g, f"M{k + 1}") for k, g in enumerate(given)]
        bad = next((m for m in checked if isinstance(m, CheckResult)), None)
        if bad is not None:
            return bad
        mats = [m for m in checked if isinstance(m, torch.Tensor)]
        truth = _order_truth(layers)  # after the answer returned
        if all(m.shape == t.shape and close(m, t, 1e-10) for m, t in zip(mats, truth)):
            continue
        for wrong, hint in _order_slips(layers):
            if all(m.shape == w.shape and close(m, w, 1e-10) for m, w in zip(mats, wrong)):
                return CheckResult(False, f"{what} your matrices {hint}")
        return CheckResult(
            False,
            f"{what} M1 and M2 should be the sums over each "
            f"module's units of w w^T (p x p); yours have shapes "
            f"{[tuple(m.shape) for m in mats]}",
        )
    return CheckResult(
        True,
        "M1 = U1 U1^T and M2 = U2 U2^T on two networks; a "
        "rotation of the hidden neurons of a module leaves them "
        "unchanged",
    )
