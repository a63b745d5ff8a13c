"""Self-checks of Chapter 3's exercises (training closes on M)."""

from __future__ import annotations

import torch

from .answers import Answer
from .feedback import (
    CheckResult,
    as_float_tensor,
    check_predictions,
    close,
    compare,
    hidden_generator,
    integer,
    known_mistake,
    not_a_function,
    uniform,
)
from .registry import register_check


def _ch3_problem(gen: torch.Generator, n: int, p: int, d: int) -> tuple[torch.Tensor, ...]:
    """Random symmetric data matrices A (n, p, p), targets y (n,) and weights W (p,
    d)."""
    X = torch.randn(n, p, p, generator=gen, dtype=torch.float64)
    A = (X + X.transpose(1, 2)) / (2 * p)
    y = torch.randn(n, generator=gen, dtype=torch.float64)
    W = torch.randn(p, d, generator=gen, dtype=torch.float64) / d**0.5
    return A, y, W


def _ch3_G(A: torch.Tensor, y: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    r = torch.einsum("npq,qp->n", A, M) - y  # residuals f - y, (n,)
    return torch.einsum("n,npq->pq", r, A) / A.shape[0]  # G = (1/n) sum r A, (p, p)


def _step_cases(
    hidden: int | None,
) -> list[tuple[torch.Generator, int, int, int, float]]:
    cases = [
        (torch.Generator().manual_seed(100 + seed), n, p, d, lr)
        for seed, (n, p, d, lr) in enumerate([(12, 4, 6, 0.3), (20, 5, 3, 0.7), (8, 3, 10, 1.1)])
    ]
    if hidden is not None:
        gen = hidden_generator("ch3.m_step", hidden)
        cases += [
            (
                gen,
                integer(gen, 4, 20),
                integer(gen, 2, 5),
                integer(gen, 2, 8),
                round(uniform(gen, 0.05, 1.0), 3),
            )
            for _ in range(2)
        ]
    return cases


def _weight_space_step(
    A: torch.Tensor, y: torch.Tensor, W: torch.Tensor, lr: float
) -> torch.Tensor:
    """The oracle: M+ = W+ W+^T after one autograd GD step on W."""
    Wg = W.clone().requires_grad_(True)
    r = torch.einsum("npq,qp->n", A, Wg @ Wg.T) - y
    (grad,) = torch.autograd.grad(0.5 * (r * r).mean(), Wg)
    W_new = W - lr * grad
    return W_new @ W_new.T


@register_check("ch3.m_step")
def _ch3_m_step(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(M, A, y, lr) -> M after one full-batch GD step on L = (1/2n) sum (Tr[M
    A] - y)^2."""
    if (verdict := not_a_function(answer, "m_step(M, A, y, lr)")) is not None:
        return verdict
    cases = _step_cases(hidden)
    for gen, n, p, d, lr in cases:
        A, y, W = _ch3_problem(gen, n, p, d)
        M = W @ W.T
        raw = answer(M.clone(), A.clone(), y.clone(), lr)
        truth = _weight_space_step(A, y, W, lr)  # after the answer returned
        what = f"M+ for n = {n}, p = {p}, lr = {lr}"
        given = as_float_tensor(raw, what)
        if isinstance(given, CheckResult):
            return given
        if tuple(given.shape) != (p, p):
            return CheckResult(
                False,
                f"{what} has shape {tuple(given.shape)}, expected {(p, p)}: M+ is a p "
                f"x p matrix like M",
            )
        problem = compare(raw if isinstance(raw, torch.Tensor) else given, truth, what, 1e-10)
        if problem is None:
            continue
        if problem.message:
            return problem
        G, eye = _ch3_G(A, y, M), torch.eye(p, dtype=torch.float64)
        GM = G @ M
        candidates = [
            (
                M - 2 * lr * (GM + GM.T),
                "is only first order in lr: M - 2 lr (G M + M G) is the flow, but the "
                "step map is exact, M+ = (I - 2 lr G) M (I - 2 lr G), including the "
                "term 4 lr^2 G M G",
            ),
            (
                (eye - 4 * lr * G) @ M @ (eye - 4 * lr * G),
                "uses dL/dW = 4 G W, the gradient of (1/n) sum (f - y)^2; with this "
                "chapter's loss (1/2n) sum it is 2 G W",
            ),
            (
                (eye - lr * G) @ M @ (eye - lr * G),
                "uses dL/dW = G W; with L = (1/2n) sum (f - y)^2 and f = Tr[W^T A W] "
                "it is 2 G W (the quadratic form gives a factor 2)",
            ),
            (
                (eye + 2 * lr * G) @ M @ (eye + 2 * lr * G),
                "has the wrong sign: with r = f - y the step is W+ = (I - 2 lr G) W",
            ),
            (
                (eye - 2 * lr * n * G) @ M @ (eye - 2 * lr * n * G),
                "sums r_mu A_mu over the samples; G is the MEAN, (1/n) sum r_mu A_mu",
            ),
            (
                (eye - 2 * lr * G) @ M,
                "multiplies on one side only: W+ = (I - 2 lr G) W gives M+ = W+ W+^T = "
                "(I - 2 lr G) M (I - 2 lr G)",
            ),
        ]
        if (hint := known_mistake(given, candidates, 1e-10)) is not None:
            return CheckResult(False, f"{what} {hint}")
        if not close(given, given.T, 1e-10):
            return CheckResult(False, f"{what} is not symmetric; M+ = W+ W+^T always is")
        err = (given - truth).abs().max().item()
        return CheckResult(
            False,
            f"{what} differs from one weight-space GD step by up to {err:.3g} (entries "
            f"of M+ are of order {truth.abs().max().item():.3g})",
        )
    return CheckResult(
        True,
        f"M+ = (I - 2 lr G) M (I - 2 lr G) agrees with a weight-space autograd step on "
        f"{len(cases)} random problems",
    )


_EQUIVARIANT = {
    "GD, rotation": True,
    "SGD, rotation": True,
    "Adam, rotation": False,
    "Adam, permutation": True,
    "Adam, sign flip of one unit": True,
    "momentum SGD, rotation": True,
}


@register_check("ch3.equivariance")
def _ch3_equivariance(answer: Answer, hidden: int | None) -> CheckResult:
    """answer maps 'optimiser, transformation of W0' to whether f(t) stays exactly
    the same."""
    idea = (
        "f(t) stays the same under W0 -> W0 T exactly when every update commutes with "
        "right multiplication by T. For each optimiser ask whether its update is built "
        "from W and the gradient 2 G W by left multiplications and linear "
        "combinations, or acts on each entry separately, and then which T an entrywise "
        "map commutes with."
    )
    return check_predictions(
        answer,
        _EQUIVARIANT,
        "{'GD, rotation': True, ...}",
        idea,
        "all six right: an optimiser preserves f(t) under W0 -> W0 R exactly when its "
        "update commutes with R; for Adam, only signed permutations",
    )
