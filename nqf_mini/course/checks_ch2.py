"""Self-checks of Chapter 2's exercises (the structure matrices of each
architecture)."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import torch

from ..architectures import make_architecture
from ..blocks import offdiag
from ..quadratic_form import structure_matrix
from .answers import Answer
from .feedback import (
    CheckResult,
    as_float_tensor,
    check_predictions,
    close,
    diagnose_matrix,
    hidden_generator,
    integer,
    not_a_function,
)
from .registry import register_check


def _biased_attention(arch: Any, bias: torch.Tensor) -> Callable[[torch.Tensor, Any], torch.Tensor]:
    """Multi-head attention with a fixed score bias b: sum_i v_i^T V_i X softmax(s_i
    + b)."""

    def f(W: torch.Tensor, x: Any) -> torch.Tensor:
        q, X = x
        Q, K, V, v = arch.heads(W)  # (d, h, n) ... (d, h_v)
        scores = torch.einsum("dh,dhN->dN", Q @ q, K @ X) / Q.shape[1] ** 0.5
        attn = torch.softmax(scores + bias, dim=-1)  # (d, N)
        values = torch.einsum("dv,dvn,nN->dN", v, V, X)  # (d, N)
        return torch.sum(values * attn)

    return f


def _attention_cases(
    hidden: int | None,
) -> list[tuple[int, int, int, int, torch.Generator]]:
    public = torch.Generator().manual_seed(11)
    cases = [
        (n, N, h, h_v, public) for n, N, h, h_v in [(3, 4, 2, 2), (2, 5, 1, 3)] for _ in range(2)
    ]
    if hidden is not None:
        gen = hidden_generator("ch2.biased_attention_A", hidden)
        cases += [
            (
                integer(gen, 1, 3),
                integer(gen, 2, 5),
                integer(gen, 1, 2),
                integer(gen, 1, 3),
                gen,
            )
            for _ in range(3)
        ]
    return cases


@register_check("ch2.biased_attention_A")
def _ch2_biased_attention_A(answer: Answer, hidden: int | None) -> CheckResult:
    """answer(X, b, h, h_v) -> A for attention with score bias b, w_i = [vec Q; vec
    K; vec V; v]."""
    if (verdict := not_a_function(answer, "A_biased(X, b, h, h_v)")) is not None:
        return verdict
    cases = _attention_cases(hidden)
    for n_in, n_tokens, h, h_v, gen in cases:
        q = torch.randn(n_in, generator=gen, dtype=torch.float64)
        X = torch.randn(n_in, n_tokens, generator=gen, dtype=torch.float64)
        b = 2.0 * torch.randn(n_tokens, generator=gen, dtype=torch.float64)
        given = answer(X.clone(), b.clone(), h, h_v)
        arch = make_architecture("attention", n_in=n_in, n_tokens=n_tokens, h=h, h_v=h_v)
        truth = structure_matrix(_biased_attention(arch, b), (q, X), arch.p)
        what = f"A for n = {n_in}, N = {n_tokens}, h = {h}, h_v = {h_v}"
        problem = diagnose_matrix(given, truth, what)
        if problem is None:
            continue
        given = as_float_tensor(given, what)
        if isinstance(given, torch.Tensor) and given.shape == truth.shape:
            if close(given, arch.A((q, X))):
                return CheckResult(
                    False,
                    f"{what} is the unbiased one: you used the mean token xbar, but "
                    f"with the bias the attention at W = 0 is softmax(b), not uniform",
                )
            m = X @ torch.softmax(b, dim=0)
            swapped = torch.zeros_like(truth)
            start = 2 * h * n_in
            eye = torch.eye(h_v, dtype=m.dtype)
            swapped[start:, start:] = offdiag(torch.kron(m[:, None], eye))
            if close(given, swapped):
                return CheckResult(
                    False,
                    f"{what} stores vec V column by column; the unit stores it row by "
                    f"row, V[a, b] at position a n + b (use torch.kron(I, m[:, None]))",
                )
        return problem
    return CheckResult(
        True,
        f"A = O(I kron X softmax(b)) on the (vec V, v) block agrees with autograd on "
        f"{len(cases)} random inputs; Q and K stay invisible",
    )


def _gcn_graph(gen: torch.Generator, n_in: int, n_nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random node features X (n_in, N) and S = D^{-1/2} (Adj + I) D^{-1/2} of a
    random graph."""
    X = torch.randn(n_in, n_nodes, generator=gen, dtype=torch.float64)
    upper = torch.triu((torch.rand(n_nodes, n_nodes, generator=gen) < 0.5).double(), diagonal=1)
    adj = upper + upper.T + torch.eye(n_nodes, dtype=torch.float64)
    scale = adj.sum(dim=1).rsqrt()
    return X, scale[:, None] * adj * scale[None, :]


def _gcn_reference(W: torch.Tensor, x: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """f = sum_i v_i sum_j tanh((u_i^T X S)_j), w_i = [u_i; v_i] (Chapter 2,
    exercise)."""
    X, S = x
    return W[-1] @ torch.tanh(W[:-1].T @ X @ S).sum(dim=1)


def _gcn_cases(hidden: int | None) -> list[tuple[int, int, int, torch.Generator]]:
    public = torch.Generator().manual_seed(12)
    cases = [(n, N, d, public) for n, N, d in [(3, 5, 3), (2, 6, 5)]]
    if hidden is not None:
        gen = hidden_generator("ch2.gcn", hidden)
        cases += [
            (integer(gen, 1, 4), integer(gen, 3, 7), integer(gen, 2, 6), gen) for _ in range(2)
        ]
    return cases


def _check_f_gcn(
    f_gcn: Answer,
    W: torch.Tensor,
    x: tuple[torch.Tensor, torch.Tensor],
    gen: torch.Generator,
) -> CheckResult | None:
    """None when f_gcn(W, x) is the layer's output, else what is wrong with it."""
    X, S = x
    n_nodes, d = S.shape[0], W.shape[1]
    out = f_gcn(W.clone(), (X.clone(), S.clone()))
    if not isinstance(out, torch.Tensor) or out.numel() != 1:
        shape = tuple(getattr(out, "shape", ()))
        return CheckResult(
            False,
            f"f_gcn(W, x) should return a scalar tensor, got {type(out).__name__} of shape {shape}",
        )
    out = out.reshape(()).to(torch.float64)
    want = _gcn_reference(W, x)
    if close(out, want):
        return None
    if close(out * n_nodes, want):
        return CheckResult(False, "f_gcn averages over the nodes; the readout sums them")
    if close(out, W[-1] @ torch.tanh(W[:-1].T @ X).sum(dim=1)):
        return CheckResult(
            False,
            "f_gcn does not propagate: the pre-activation is u_i^T X S, not u_i^T X",
        )
    permuted = f_gcn(W[:, torch.randperm(d, generator=gen)].clone(), (X.clone(), S.clone()))
    if not close(torch.as_tensor(permuted).reshape(()), out):
        return CheckResult(
            False,
            "f_gcn changes when the units are permuted: the units must be the COLUMNS "
            "of W, w_i = W[:, i] = [u_i; v_i]",
        )
    err = abs(out.item() - want.item()) / max(1.0, abs(want.item()))
    return CheckResult(
        False,
        f"f_gcn(W, x) is not the layer's output at random weights (relative error "
        f"{err:.2g}): f = sum_i v_i sum_j tanh((u_i^T X S)_j)",
    )


@register_check("ch2.gcn")
def _ch2_gcn(answer: Answer, hidden: int | None) -> CheckResult:
    """answer = (f_gcn, A_gcn): the graph-convolution module f(W, x) and its A(x), x
    = (X, S)."""
    if answer.kind != "functions" or answer.length != 2:
        return CheckResult(
            False,
            f"expected a pair of functions (f_gcn, A_gcn), got {answer.type_name}",
        )
    f_gcn, A_gcn = answer.part(0), answer.part(1)
    cases = _gcn_cases(hidden)
    for n_in, n_nodes, d, gen in cases:
        x = _gcn_graph(gen, n_in, n_nodes)
        X, S = x
        W = torch.randn(n_in + 1, d, generator=gen, dtype=torch.float64)
        if (problem := _check_f_gcn(f_gcn, W, x, gen)) is not None:
            return problem
        given = A_gcn((X.clone(), S.clone()))
        truth = offdiag(X @ S @ torch.ones(n_nodes, dtype=torch.float64))
        what = f"A_gcn(x) for n_in = {n_in}, N = {n_nodes}"
        problem = diagnose_matrix(given, truth, what)
        if problem is not None:
            given = as_float_tensor(given, what)
            if isinstance(given, torch.Tensor) and given.shape == truth.shape:
                if close(given, offdiag(X.sum(dim=1))):
                    return CheckResult(
                        False,
                        f"{what} leaves out the propagation: the unit sees X S 1, not X 1",
                    )
                if close(given * n_nodes, truth):
                    return CheckResult(False, f"{what} averages over the nodes; the readout sums")
            return problem
        auto = as_float_tensor(f_gcn.hessian((X.clone(), S.clone()), n_in + 1), "autograd")
        if isinstance(auto, CheckResult) or not close(auto, truth):
            return CheckResult(
                False,
                "your A_gcn is right but autograd on your f_gcn disagrees with it: is "
                "f_gcn written with torch operations throughout?",
            )
    return CheckResult(
        True,
        f"f_gcn agrees with the reference and A = O(X S 1) with autograd on "
        f"{'two' if len(cases) == 2 else len(cases)} random graphs",
    )


_COMMUTING = {
    "MLP, 1-D input": True,
    "MLP, 3-D input": False,
    "CNN, circular, global pooling, 1 channel": True,
    "CNN, circular, global pooling, 2 channels": False,
    "multi-head attention": False,
    "phase retrieval": False,
    "matrix completion, entries in different rows and columns": True,
}


@register_check("ch2.commuting")
def _ch2_commuting(answer: Answer, hidden: int | None) -> CheckResult:
    """answer maps each configuration to whether A(x), A(x') commute for generic
    inputs."""
    idea = (
        "For each configuration, write A(x) as O(Z(x)) (or a x a^T, ...) and ask "
        "whether the feature Z(x) keeps one direction for every input, so that all "
        "A(x) share one eigenbasis, or turns with the input (the commutator of O(z) "
        "and O(z') is proportional to z z'^T - z' z^T)."
    )
    return check_predictions(
        answer,
        _COMMUTING,
        "{'MLP, 1-D input': True, ...}",
        idea,
        "all seven right: commuting data matrices are the exception, built by making "
        "every A(x) share one eigenbasis",
    )
