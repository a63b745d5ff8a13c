"""Self-checks of Chapter 8's exercises, registered in
:data:`nqf_mini.course.registry.CHECKS`."""

from __future__ import annotations

import functools
import math
from typing import Any
from collections.abc import Callable

import numpy as np
import torch

from ..architectures import QKAttention
from ..quadratic_form import quadratic_expansion
from .answers import Answer
from .feedback import CheckResult, as_number, close, hidden_generator, not_a_function
from .registry import register_check

# --- the agreement window -------------------------------------------------------------

Case = tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _window_cases(hidden: int | None = None) -> list[Case]:
    """(what, steps, loss_net, loss_nqf, f_net, f_nqf): each separates one mistake.

    The grader's hidden cases (``hidden`` a seed) use other outputs and another grid."""
    seed, spacing = 8, 10.0
    if hidden is not None:
        gen = hidden_generator("ch8.agreement_window", hidden)
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=gen))
        spacing = float(torch.randint(3, 20, (1,), generator=gen))
    steps = np.arange(0.0, 40 * spacing, spacing)
    t = steps / steps[-1]
    base = np.random.default_rng(seed).standard_normal(16)
    f_net = np.outer(1 + t, base)
    flat = np.full_like(steps, 0.5)
    cases: list[Case] = []
    # the function gap alone crosses 10% (at step 200): rms(f_nqf - f) / rms(f) = 0.2 t
    cases.append(
        (
            "the functions part first",
            steps,
            flat,
            flat.copy(),
            f_net,
            f_net * (1 + 0.2 * t)[:, None],
        )
    )
    # the loss gap alone crosses (the network's loss is the lower one)
    cases.append(
        (
            "the losses part first",
            steps,
            flat * (1 - 0.2 * t),
            flat.copy(),
            f_net,
            f_net * (1 + 0.01 * t)[:, None],
        )
    )
    # the NQF learns the target exactly: its loss falls below 1% of its start, the
    # network's stays at 5e-4; the functions part only at step 300
    decay = 0.5 * np.exp(-25 * t)
    f_far = f_net * (1 + np.where(t >= 0.77, 0.3, 0.02))[:, None]
    cases.append(
        (
            "the NQF's loss falls below the floor",
            steps,
            np.maximum(decay, 5e-4),
            decay,
            f_net,
            f_far,
        )
    )
    # never: both gaps stay below 10%
    cases.append(
        (
            "they never part",
            steps,
            flat * (1 + 0.05 * t),
            flat.copy(),
            f_net,
            f_net * (1 + 0.05 * t)[:, None],
        )
    )
    return cases


def _onset(
    steps: np.ndarray,
    l_net: np.ndarray,
    l_nqf: np.ndarray,
    f_net: np.ndarray,
    f_nqf: np.ndarray,
    floor: float = 0.01,
    loss_by: str = "nqf",
    f_by: str = "net",
) -> float:
    """Variants of the definition (the right one and the recognised slips)."""

    def rms(a: np.ndarray) -> np.ndarray:
        return np.sqrt(np.mean(a**2, axis=1))

    f_gap = rms(f_nqf - f_net) / rms(f_net if f_by == "net" else f_nqf)
    l_gap = np.abs(l_net - l_nqf) / (l_nqf if loss_by == "nqf" else l_net)
    l_gap = np.where(l_nqf >= floor * l_nqf[0], l_gap, 0.0)
    above = np.nonzero((f_gap > 0.1) | (l_gap > 0.1))[0]
    return math.inf if above.size == 0 else float(steps[above[0]])


_WINDOW_SLIPS: list[tuple[Callable[..., float], str]] = [
    (
        functools.partial(_onset, floor=0.0),
        "ignores the floor: once the NQF has fitted the target its loss goes to zero and "
        "any residual of the network is an unbounded relative gap; count the loss gap "
        "only while L_NQF >= 1% of L_NQF(0)",
    ),
    (
        functools.partial(_onset, loss_by="net"),
        "divides the loss gap by the network's loss; the definition measures it relative "
        "to the NQF's loss",
    ),
    (
        functools.partial(_onset, f_by="nqf"),
        "divides the function gap by rms(f_NQF); the definition measures it relative to "
        "the network's function, rms(f)",
    ),
]


def _onset_value(raw: Any, what: str) -> float | CheckResult:
    if isinstance(raw, float) and math.isinf(raw):
        return raw
    return as_number(raw, f"the onset when {what}")


@register_check("ch8.agreement_window")
def _ch8_agreement_window(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(steps, loss_net, loss_nqf, f_net, f_nqf) -> the onset (a step or inf)."""
    signature = "first_onset(steps, loss_net, loss_nqf, f_net, f_nqf)"
    if (verdict := not_a_function(answer, signature)) is not None:
        return verdict
    cases = _window_cases() + ([] if hidden is None else _window_cases(hidden))
    for what, steps, l_net, l_nqf, f_net, f_nqf in cases:
        arrays = (steps, l_net, l_nqf, f_net, f_nqf)
        raw = answer(*(a.copy() for a in arrays))
        truth = _onset(steps, l_net, l_nqf, f_net, f_nqf)  # after the answer returned
        if raw is None:
            return CheckResult(
                False,
                f"when {what} your function returns None; return "
                "math.inf for 'never' (the package's convention)",
            )
        given = _onset_value(raw, what)
        if isinstance(given, CheckResult):
            return given
        if given == truth:
            continue
        if not math.isinf(truth) and given == float(np.searchsorted(steps, truth)):
            return CheckResult(
                False,
                f"when {what} you return {given:g}, an index into "
                "the recorded steps; return the step itself",
            )
        for slip, hint in _WINDOW_SLIPS:
            if slip(*arrays) == given:
                return CheckResult(False, f"when {what} you return {given:g}: your function {hint}")
        return CheckResult(
            False,
            f"when {what} you return {given:g}, which is not the "
            "first recorded step at which either gap exceeds 10% "
            "(the loss gap counted only above the floor)",
        )
    return CheckResult(
        True,
        "the onset is right in 4 cases: functions first, losses "
        "first, a loss below the floor, and never",
    )


# --- the NQF of query-key attention ---------------------------------------------------


def _qk_variants(W: torch.Tensor, x: tuple[torch.Tensor, ...]) -> dict[str, float]:
    q, X, y = x
    d = W.shape[1]
    Q = W[:16].T.reshape(d, 2, 8)
    K = W[16:].T.reshape(d, 2, 8)
    c = (X - X.mean(dim=1, keepdim=True)) @ y / X.shape[1]
    root = math.sqrt(2)
    bilinear = float(torch.einsum("dhn,n,dhm,m->", K, c, Q, q)) / root
    raw = float(torch.einsum("dhn,n,dhm,m->", K, X @ y / X.shape[1], Q, q)) / root
    f0 = d * float(y.mean())
    return {
        "leaves out the offset f0 = d mean(y): with every head attending uniformly, "
        "each returns the mean label": bilinear,
        "uses the raw tokens X y / N: softmax sees only differences of scores, so the "
        "tokens must be centred, c = X_c y / N": f0 + raw,
        "is missing the 1/sqrt(h) of the scores": f0 + root * bilinear,
        "is twice the quadratic term: A = O(Z) carries a factor 1/2, and Tr[M A] "
        "counts each (Q, K) pair twice": f0 + 2 * bilinear,
    }


def _qk_truth(arch: QKAttention, W: torch.Tensor, x: tuple[torch.Tensor, ...]) -> float:
    """f0 + Tr[W^T A W] with f0 and A from autograd on the attention model itself: an
    oracle independent of the closed forms of Chapter 2 and of nqf_mini.surrogates."""
    exp = quadratic_expansion(arch.f, x, arch.p, W.shape[1])
    return float(exp.f0 + torch.einsum("pi,pq,qi->", W, exp.A, W))


def _qk_cases(hidden: int | None) -> list[tuple[int, int, int]]:
    cases = [(3, 5, 81), (5, 8, 82)]
    if hidden is not None:
        gen = hidden_generator("ch8.qk_nqf", hidden)
        cases += [
            (
                int(torch.randint(2, 7, (1,), generator=gen)),
                int(torch.randint(3, 10, (1,), generator=gen)),
                int(torch.randint(0, 2**31 - 1, (1,), generator=gen)),
            )
        ]
    return cases


@register_check("ch8.qk_nqf")
def _ch8_qk_nqf(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(W (32, d), (q (8,), X (8, N), y (N,))) -> f_NQF of query-key attention."""
    if (verdict := not_a_function(answer, "qk_nqf(W, x)")) is not None:
        return verdict
    cases = _qk_cases(hidden)
    for d, N, seed in cases:
        gen = torch.Generator().manual_seed(seed)
        arch = QKAttention(n_in=8, n_tokens=N, h=2, n_heads=d)
        W = 0.5 * torch.randn(arch.p, d, generator=gen, dtype=torch.float64)
        x = (
            torch.randn(8, generator=gen, dtype=torch.float64),
            torch.randn(8, N, generator=gen, dtype=torch.float64),
            torch.randn(N, generator=gen, dtype=torch.float64) + 0.7,
        )
        what = f"for d = {d} heads, N = {N} tokens"
        given = as_number(answer(W.clone(), tuple(v.clone() for v in x)), f"qk_nqf(W, x) {what}")
        if isinstance(given, CheckResult):
            return given
        truth = _qk_truth(arch, W, x)  # after the answer returned
        if close(given, truth, 1e-9):
            continue
        if close(given, float(arch.f(W, x)), 1e-9):
            return CheckResult(
                False,
                "this is the attention model itself, with its "
                "softmax; the NQF keeps only the term linear in "
                "the scores",
            )
        for hint, wrong in _qk_variants(W, x).items():
            if close(given, wrong, 1e-9):
                return CheckResult(False, f"{what} your value {given:.6g} {hint}")
        return CheckResult(
            False,
            f"{what} your value {given:.6g} is not f0 + Tr[M A]: "
            "expand the softmax to first order in the scores",
        )
    return CheckResult(
        True,
        "f_NQF = d mean(y) + x^T S c with S = sum_i Q_i^T K_i / "
        "sqrt(h) and c = X_c y / N, on two inputs with uncentred "
        "labels",
    )
