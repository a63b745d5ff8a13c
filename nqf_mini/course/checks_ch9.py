"""Self-checks of Chapter 9's exercises, registered in
:data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..deep import DeepMLP
from .feedback import CheckResult, as_float_tensor, as_number, close, not_a_function
from .registry import register_check

Layers = list[torch.Tensor]
_SHAPES = [(3, (4, 5, 3)), (5, (6, 2, 4))]


def _cases() -> list[tuple[DeepMLP, Layers, torch.Tensor]]:
    gen = torch.Generator().manual_seed(90)
    out = []
    for n_in, widths in _SHAPES:
        model = DeepMLP(n_in=n_in, widths=widths)
        theta = 0.8 * torch.randn(model.P, generator=gen, dtype=torch.float64)
        layers, start = [], 0
        for shape in model.shapes:
            size = 1
            for s in shape:
                size *= s
            layers.append(theta[start:start + size].reshape(shape))
            start += size
        x = torch.randn(n_in, generator=gen, dtype=torch.float64)
        out.append((model, layers, x))
    return out


def _theta(layers: Layers) -> torch.Tensor:
    return torch.cat([W.reshape(-1) for W in layers])


# --- the layer-wise NQF of a 4-layer MLP ----------------------------------------------

_NQF_SLIPS: list[tuple[Callable[[Layers, torch.Tensor], torch.Tensor], str]] = [
    (lambda L, x: L[3] @ L[2] @ L[1] @ L[0] @ x,
     "is the leading order (the deep linear network): the layer-wise NQF keeps the "
     "tanh between the two modules"),
    (lambda L, x: L[3] @ torch.tanh(L[2] @ torch.tanh(L[1] @ torch.tanh(L[0] @ x))),
     "is the network itself: inside each module the tanh is replaced by tanh'(0) = 1"),
    (lambda L, x: torch.tanh(L[3] @ L[2] @ torch.tanh(L[1] @ L[0] @ x)),
     "applies a tanh to the output: the network's output is linear in its last layer"),
]


@register_check("ch9.layerwise_nqf")
def _ch9_layerwise_nqf(answer: Any) -> CheckResult:
    """answer([W1, W2, W3, w4], x) -> w4^T W3 tanh(W2 W1 x), a scalar tensor."""
    if (verdict := not_a_function(answer, "layerwise_nqf(layers, x)")) is not None:
        return verdict
    for model, layers, x in _cases():
        truth = float(model.nqf(_theta(layers), x))
        what = f"for widths {model.widths}"
        try:
            given = as_number(answer([W.clone() for W in layers], x.clone()),
                              f"layerwise_nqf {what}")
        except (TypeError, ValueError, IndexError, RuntimeError) as exc:
            return CheckResult(False, f"layerwise_nqf(layers, x) failed {what}: {exc}")
        if isinstance(given, CheckResult):
            return given
        if close(given, truth, 1e-10):
            continue
        for slip, hint in _NQF_SLIPS:
            if close(given, float(slip(layers, x)), 1e-10):
                return CheckResult(False, f"{what} your value {given:.6g} {hint}")
        return CheckResult(False, f"{what} the layer-wise NQF is {truth:.6g}, you "
                                  f"return {given:.6g}")
    return CheckResult(True, "w4^T W3 tanh(W2 W1 x) on two networks: every module "
                             "replaced by its quadratic form, the tanh between them "
                             "kept")


# --- the order parameters of the two modules ------------------------------------------

def _order_slips(layers: Layers) -> list[tuple[list[torch.Tensor], str]]:
    W1, W2, W3, w4 = layers
    U1 = torch.cat([W1.T, W2], dim=0)
    U2 = torch.cat([W3.T, w4[None, :]], dim=0)
    V1 = torch.cat([W2, W1.T], dim=0)
    return [
        ([U1.T @ U1, U2.T @ U2],
         "are the Gram matrices U^T U of the units (d x d); the order parameter sums "
         "over the units, M = U U^T = sum_i w_i w_i^T (p x p)"),
        ([U1 @ U1.T, W3.T @ W3],
         "leave out the output weights w4: module 2's units are [row j of W3; w4[j]]"),
        ([V1 @ V1.T, U2 @ U2.T],
         "order the coordinates of a module-1 unit as [column of W2; row of W1]; the "
         "exercise asks for [row i of W1; column i of W2]"),
    ]


@register_check("ch9.order_parameters")
def _ch9_order_parameters(answer: Any) -> CheckResult:
    """answer([W1, W2, W3, w4]) -> [M1, M2] of the two modules of a 4-layer MLP."""
    if (verdict := not_a_function(answer, "order_parameters(layers)")) is not None:
        return verdict
    for model, layers, _ in _cases():
        truth = model.order_parameters(_theta(layers))
        what = f"for widths {model.widths}"
        try:
            given = answer([W.clone() for W in layers])
        except (TypeError, ValueError, IndexError, RuntimeError) as exc:
            return CheckResult(False, f"order_parameters(layers) failed {what}: {exc}")
        if not isinstance(given, (list, tuple)) or len(given) != 2:
            return CheckResult(False, f"{what} expected a list [M1, M2] of two "
                                      f"matrices, got {type(given).__name__}")
        mats = [as_float_tensor(g, f"M{k + 1}") for k, g in enumerate(given)]
        bad = next((m for m in mats if isinstance(m, CheckResult)), None)
        if bad is not None:
            return bad
        if all(m.shape == t.shape and close(m, t, 1e-10) for m, t in zip(mats, truth)):
            continue
        for wrong, hint in _order_slips(layers):
            if all(m.shape == w.shape and close(m, w, 1e-10)
                   for m, w in zip(mats, wrong)):
                return CheckResult(False, f"{what} your matrices {hint}")
        shapes = [tuple(t.shape) for t in truth]
        return CheckResult(False, f"{what} M1 and M2 should be the sums over units of "
                                  f"w w^T, of shapes {shapes}; yours are "
                                  f"{[tuple(m.shape) for m in mats]}")
    return CheckResult(True, "M1 = U1 U1^T and M2 = U2 U2^T on two networks; a "
                             "rotation of the hidden neurons of a module leaves them "
                             "unchanged")
