"""Self-checks of Chapter 3's exercises (training closes on M)."""

from __future__ import annotations

from typing import Callable

import torch

from .feedback import CheckResult, check_predictions, close, not_a_function
from .registry import register_check

def _ch3_problem(seed: int, n: int, p: int, d: int) -> tuple[torch.Tensor, ...]:
    """Random symmetric data matrices A (n, p, p), targets y (n,) and weights W (p, d)."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, p, p, generator=gen, dtype=torch.float64)
    A = (X + X.transpose(1, 2)) / (2 * p)
    y = torch.randn(n, generator=gen, dtype=torch.float64)
    W = torch.randn(p, d, generator=gen, dtype=torch.float64) / d ** 0.5
    return A, y, W


def _ch3_G(A: torch.Tensor, y: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    r = torch.einsum("npq,qp->n", A, M) - y                        # residuals f - y, (n,)
    return torch.einsum("n,npq->pq", r, A) / A.shape[0]             # G = (1/n) sum r A, (p, p)


@register_check("ch3.m_step")
def _ch3_m_step(answer: Callable[..., torch.Tensor]) -> CheckResult:
    """answer(M, A, y, lr) -> M after one full-batch GD step on L = (1/2n) sum (Tr[M A] - y)^2."""
    if (verdict := not_a_function(answer, "m_step(M, A, y, lr)")) is not None:
        return verdict
    for seed, (n, p, d, lr) in enumerate([(12, 4, 6, 0.3), (20, 5, 3, 0.7), (8, 3, 10, 1.1)]):
        A, y, W = _ch3_problem(100 + seed, n, p, d)
        M = W @ W.T
        Wg = W.clone().requires_grad_(True)
        r = torch.einsum("npq,qp->n", A, Wg @ Wg.T) - y
        (grad,) = torch.autograd.grad(0.5 * (r * r).mean(), Wg)
        W_new = W - lr * grad
        truth = W_new @ W_new.T                                     # the weight-space oracle
        given = answer(M.clone(), A.clone(), y.clone(), lr)
        what = f"M+ for n = {n}, p = {p}, lr = {lr}"
        if not isinstance(given, torch.Tensor):
            try:
                given = torch.as_tensor(given, dtype=torch.float64)
            except (TypeError, ValueError, RuntimeError):
                return CheckResult(False, f"{what} should be a tensor, got {type(given).__name__}")
        given = given.to(torch.float64)
        if tuple(given.shape) != (p, p):
            return CheckResult(False, f"{what} has shape {tuple(given.shape)}, expected {(p, p)}: "
                                      "M+ is a p x p matrix like M")
        if close(given, truth, 1e-10):
            continue
        G, eye = _ch3_G(A, y, M), torch.eye(p, dtype=torch.float64)
        GM = G @ M
        candidates = [
            (M - 2 * lr * (GM + GM.T), "is only first order in lr: M - 2 lr (G M + M G) is the "
             "flow, but the step map is exact, M+ = (I - 2 lr G) M (I - 2 lr G), including the "
             "term 4 lr^2 G M G"),
            ((eye - 4 * lr * G) @ M @ (eye - 4 * lr * G), "uses dL/dW = 4 G W, the gradient of "
             "(1/n) sum (f - y)^2; with this chapter's loss (1/2n) sum it is 2 G W"),
            ((eye - lr * G) @ M @ (eye - lr * G), "uses dL/dW = G W; with L = (1/2n) sum (f - y)^2 "
             "and f = Tr[W^T A W] it is 2 G W (the quadratic form gives a factor 2)"),
            ((eye + 2 * lr * G) @ M @ (eye + 2 * lr * G), "has the wrong sign: with r = f - y the "
             "step is W+ = (I - 2 lr G) W"),
            ((eye - 2 * lr * n * G) @ M @ (eye - 2 * lr * n * G), "sums r_mu A_mu over the samples; "
             "G is the MEAN, (1/n) sum r_mu A_mu"),
            ((eye - 2 * lr * G) @ M, "multiplies on one side only: W+ = (I - 2 lr G) W gives "
             "M+ = W+ W+^T = (I - 2 lr G) M (I - 2 lr G)"),
        ]
        for wrong, hint in candidates:
            if close(given, wrong, 1e-10):
                return CheckResult(False, f"{what} {hint}")
        if not close(given, given.T, 1e-10):
            return CheckResult(False, f"{what} is not symmetric; M+ = W+ W+^T always is")
        err = (given - truth).abs().max().item()
        return CheckResult(False, f"{what} differs from one weight-space GD step by up to "
                                  f"{err:.3g} (entries of M+ are of order "
                                  f"{truth.abs().max().item():.3g})")
    return CheckResult(True, "M+ = (I - 2 lr G) M (I - 2 lr G) agrees with a weight-space "
                             "autograd step on 3 random problems")


_EQUIVARIANT = {
    "GD, rotation": (True, "the GD step W -> W - lr 2 G W commutes with W -> W R because G "
                           "depends on M only"),
    "SGD, rotation": (True, "each minibatch step is W -> (I - 2 lr G_batch) W, a left "
                            "multiplication, so W0 R stays W(t) R"),
    "Adam, rotation": (False, "Adam divides every entry of the gradient by its own running RMS; "
                              "that coordinate-wise normalisation does not commute with a rotation "
                              "that mixes the units"),
    "Adam, permutation": (True, "permuting the units permutes the entries of the gradient and of "
                                "Adam's moment estimates the same way: the coordinate-wise update "
                                "commutes with it"),
    "Adam, sign flip of one unit": (True, "flipping w_i flips its gradient and first moment, "
                                          "leaves the second moment unchanged, so the update of "
                                          "that unit flips too"),
    "momentum SGD, rotation": (True, "heavy-ball momentum W+ = W - lr grad + beta (W - W_prev) is "
                                     "linear in W and its gradient, both of which rotate with R"),
}


@register_check("ch3.equivariance")
def _ch3_equivariance(answer: dict[str, bool]) -> CheckResult:
    """answer maps 'optimiser, transformation of W0' to whether f(t) stays exactly the same."""
    return check_predictions(answer, _EQUIVARIANT, "{'GD, rotation': True, ...}",
                             "all six right: an optimiser preserves f(t) under W0 -> W0 R exactly "
                             "when its update commutes with R; for Adam, only signed permutations")
