"""Self-checks of Chapter 4's exercises, registered in
:data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

import torch

from .answers import Answer
from .feedback import (
    CheckResult,
    as_float_tensor,
    close,
    compare,
    hidden_generator,
    integer,
    known_mistake,
    not_a_function,
    number_answer,
)
from .registry import register_check


def _ch4_problem(gen: torch.Generator, K: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A random growth vector b (K,) and a positive-definite Gram matrix C (K, K)."""
    a = torch.randn(3 * K, K, generator=gen, dtype=torch.float64)
    b = torch.randn(K, generator=gen, dtype=torch.float64)
    return b, a.T @ a / (3 * K)


def _as_vector(given: object, K: int, what: str) -> torch.Tensor | CheckResult:
    vector = as_float_tensor(given, what)
    if isinstance(vector, CheckResult):
        return vector
    if tuple(vector.shape) != (K,):
        return CheckResult(
            False,
            f"{what} has shape {tuple(vector.shape)}, expected ({K},): one entry per mode",
        )
    return vector


# --- the Lotka-Volterra velocity ------------------------------------------------------


def _rhs_cases(
    hidden: int | None,
) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    cases = []
    for seed, K in enumerate([3, 4, 2]):
        b, C = _ch4_problem(torch.Generator().manual_seed(40 + seed), K)
        z = torch.rand(K, generator=torch.Generator().manual_seed(50 + seed), dtype=torch.float64)
        cases.append((z, b, C))
    if hidden is not None:
        gen = hidden_generator("ch4.lv_rhs", hidden)
        for _ in range(3):
            b, C = _ch4_problem(gen, integer(gen, 2, 6))
            cases.append((2 * torch.rand(b.shape[0], generator=gen, dtype=torch.float64), b, C))
    return cases


@register_check("ch4.lv_rhs")
def _ch4_lv_rhs(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(z, b, C) -> dz/dt for gradient flow on L = (1/2n) sum (f - y)^2
    (Chapter 4)."""
    if (verdict := not_a_function(answer, "lv_rhs(z, b, C)")) is not None:
        return verdict
    cases = _rhs_cases(hidden)
    for z, b, C in cases:
        K = b.shape[0]
        what = f"dz/dt for K = {K}"
        raw = answer(z.clone(), b.clone(), C.clone())
        given = _as_vector(raw, K, what)
        if isinstance(given, CheckResult):
            return given
        truth = 4 * z * (b - C @ z)  # after the answer returned
        problem = compare(raw if isinstance(raw, torch.Tensor) else given, truth, what, 1e-9)
        if problem is None:
            continue
        if problem.message:
            return problem
        candidates = [
            (
                2 * z * (b - C @ z),
                "is too small by a factor of 2: dM/dt = -2 (G M + M G) puts -2 G_kk "
                "z_k on the diagonal TWICE, so the rate is 4, not 2",
            ),
            (
                8 * z * (b - C @ z),
                "is too large by a factor of 2: 8 is the rate for the loss (1/n) sum "
                "(f - y)^2; with (1/2n) sum it is 4",
            ),
            (
                z * (b - C @ z),
                "is missing the factor 4 (2 from dL/dW = 2 G W, 2 from the two sides of G M + M G)",
            ),
            (
                -4 * z * (b - C @ z),
                "has the wrong sign: a mode with b_k > 0 and z small must GROW",
            ),
            (
                4 * (b - C @ z),
                "is missing the factor z_k: each mode grows in proportion to itself, "
                "which is what keeps z >= 0",
            ),
            (
                4 * z * (b - torch.diagonal(C) * z),
                "ignores the off-diagonal entries of C: the modes interact through (C "
                "z)_k = sum_j C_kj z_j",
            ),
        ]
        if (hint := known_mistake(given, candidates, 1e-9)) is not None:
            return CheckResult(False, f"{what} {hint}")
        err = (given - truth).abs().max().item()
        return CheckResult(
            False,
            f"{what} differs from the velocity of the Lotka-Volterra equation "
            f"(eq-ch4-lv) by up to {err:.3g}",
        )
    sizes = ", ".join(str(b.shape[0]) for _, b, _ in cases)
    return CheckResult(
        True,
        f"dz/dt = 4 z (b - C z) agrees on {len(cases)} random problems (K = {sizes})",
    )


# --- the end state: non-negative least squares ----------------------------------------


def _nnls_by_supports(b: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """min over z >= 0 of z^T C z / 2 - b^T z, by projected coordinate descent (C
    positive definite).

    An oracle independent of :func:`nqf_mini.nnls_end_state` (which enumerates
    supports): each sweep sets z_k = max(0, (b_k - sum_{j != k} C_kj z_j) / C_kk), which
    converges to the unique minimiser of the strictly convex problem.
    """
    z = torch.zeros_like(b)
    for _ in range(20_000):
        before = z.clone()
        for k in range(b.shape[0]):
            z[k] = torch.clamp((b[k] - C[k] @ z + C[k, k] * z[k]) / C[k, k], min=0.0)
        if (z - before).abs().max() <= 1e-15:
            break
    return z


# (b, C): one with an extinct mode where clipping C^{-1} b fails, and random ones
_NNLS_CASES = [
    (
        torch.tensor([1.0, 0.5, 0.6]),
        torch.tensor([[1.0, 0.8, 0.3], [0.8, 1.0, 0.7], [0.3, 0.7, 1.0]]),
    ),
    (torch.tensor([1.0, 0.6]), torch.tensor([[1.0, 0.9], [0.9, 1.0]])),
]


def _nnls_cases(hidden: int | None) -> list[tuple[torch.Tensor, torch.Tensor]]:
    cases = [(b.double(), C.double()) for b, C in _NNLS_CASES]
    cases += [
        _ch4_problem(torch.Generator().manual_seed(60 + s), K) for s, K in enumerate([3, 4, 4])
    ]
    if hidden is not None:
        gen = hidden_generator("ch4.nnls_end_state", hidden)
        cases += [_ch4_problem(gen, integer(gen, 2, 4)) for _ in range(3)]
    return cases


@register_check("ch4.nnls_end_state")
def _ch4_nnls_end_state(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(b, C) -> the end state of dz/dt = 4 z (b - C z), i.e. argmin_{z >= 0}
    L(z)."""
    if (verdict := not_a_function(answer, "end_state(b, C)")) is not None:
        return verdict
    cases = _nnls_cases(hidden)
    for b, C in cases:
        K = b.shape[0]
        what = f"the end state for K = {K}, b = {[round(v, 2) for v in b.tolist()]}"
        raw = answer(b.clone(), C.clone())
        given = _as_vector(raw, K, what)
        if isinstance(given, CheckResult):
            return given
        truth = _nnls_by_supports(b, C)  # after the answer returned
        if close(given, truth, 1e-6):
            continue
        free = torch.linalg.solve(C, b)
        if close(given, free, 1e-6):
            return CheckResult(
                False,
                f"{what} is the unconstrained minimiser C^-1 b, which has a negative "
                f"entry: z_k = (E^T M E)_kk >= 0, so the flow ends at the minimiser "
                f"over z >= 0",
            )
        if close(given, free.clamp_min(0), 1e-6):
            return CheckResult(
                False,
                f"{what} clips C^-1 b at zero; once a mode is extinct the others must "
                f"be re-solved without it (the end state is C_SS^-1 b_S on the "
                f"surviving set S)",
            )
        if (given < -1e-9).any():
            return CheckResult(False, f"{what} has a negative entry; mode strengths stay >= 0")
        grad = C @ given - b
        bad = [
            k
            for k in range(K)
            if (given[k] > 1e-9 and abs(grad[k]) > 1e-6) or (given[k] <= 1e-9 and grad[k] < -1e-6)
        ]
        return CheckResult(
            False,
            f"{what} violates the optimality conditions in modes {bad} (0-based): a "
            f"surviving mode needs (C z - b)_k = 0, an extinct one (C z - b)_k >= 0, "
            f"or it could re-invade",
        )
    return CheckResult(
        True,
        f"the end state is the non-negative least-squares solution on {len(cases)} "
        f"problems, including one where clipping C^-1 b fails",
    )


# --- the extinction threshold of the explorer -----------------------------------------

_B_EXPLORER = (1.0, 0.7, 0.4)


@register_check("ch4.extinction_threshold")
def _ch4_extinction_threshold(answer: Answer, hidden: int | None) -> CheckResult:
    """answer: the coupling c* above which mode 3 dies, for b = (1, 0.7, 0.4), C =
    (1-c) I + c 11^T."""
    c = number_answer(answer, "the critical coupling c*")
    if isinstance(c, CheckResult):
        return c
    b1, b2, b3 = _B_EXPLORER
    truth = b3 / (b1 + b2 - b3)  # b_3 (1 + 2c) = c (b_1 + b_2 + b_3)
    if abs(c - truth) <= 5e-3:
        return CheckResult(
            True,
            "c* = b_3 / (b_1 + b_2 - b_3) = 0.4 / 1.3 = 4/13 = 0.3077: above it the "
            "two stronger modes crowd out the third",
        )
    if not -0.5 < c < 1.0:
        return CheckResult(
            False,
            f"c = {c:.3g} does not give a Gram matrix: (1 - c) I + c 11^T is positive "
            f"definite only for -1/2 < c < 1",
        )
    return CheckResult(
        False,
        f"c = {c:.3g} is not the threshold. At c* the third mode is just extinct: "
        f"assume that all three modes survive, solve C z = b (use 1^T C = (1 + 2c) 1^T "
        f"to find sum_k z_k first) and ask at which c z_3 reaches 0",
    )
