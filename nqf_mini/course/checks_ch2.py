"""Self-checks of Chapter 2's exercises (the structure matrices of each architecture)."""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..architectures import make_architecture
from ..blocks import offdiag
from ..quadratic_form import structure_matrix
from .feedback import CheckResult, check_predictions, close, diagnose_matrix, not_a_function
from .registry import register_check

def _biased_attention(arch: Any, bias: torch.Tensor) -> Callable[[torch.Tensor, Any], torch.Tensor]:
    """Multi-head attention with a fixed score bias b: sum_i v_i^T V_i X softmax(s_i + b)."""
    def f(W: torch.Tensor, x: Any) -> torch.Tensor:
        q, X = x
        Q, K, V, v = arch.heads(W)                                    # (d, h, n) ... (d, h_v)
        scores = torch.einsum("dh,dhN->dN", Q @ q, K @ X) / Q.shape[1] ** 0.5
        attn = torch.softmax(scores + bias, dim=-1)                   # (d, N)
        values = torch.einsum("dv,dvn,nN->dN", v, V, X)               # (d, N)
        return torch.sum(values * attn)
    return f


@register_check("ch2.biased_attention_A")
def _ch2_biased_attention_A(answer: Callable[..., torch.Tensor]) -> CheckResult:
    """answer(X, b, h, h_v) -> A for attention with score bias b, w_i = [vec Q; vec K; vec V; v]."""
    if (verdict := not_a_function(answer, "A_biased(X, b, h, h_v)")) is not None:
        return verdict
    gen = torch.Generator().manual_seed(11)
    for n_in, n_tokens, h, h_v in [(3, 4, 2, 2), (2, 5, 1, 3)]:
        arch = make_architecture("attention", n_in=n_in, n_tokens=n_tokens, h=h, h_v=h_v)
        for _ in range(2):
            q = torch.randn(n_in, generator=gen, dtype=torch.float64)
            X = torch.randn(n_in, n_tokens, generator=gen, dtype=torch.float64)
            b = 2.0 * torch.randn(n_tokens, generator=gen, dtype=torch.float64)
            truth = structure_matrix(_biased_attention(arch, b), (q, X), arch.p)
            given = answer(X.clone(), b.clone(), h, h_v)
            what = f"A for n = {n_in}, N = {n_tokens}, h = {h}, h_v = {h_v}"
            problem = diagnose_matrix(given, truth, what)
            if problem is None:
                continue
            if tuple(torch.as_tensor(given).shape) == tuple(truth.shape):
                given = torch.as_tensor(given, dtype=torch.float64)
                if close(given, arch.A((q, X))):
                    return CheckResult(False, f"{what} is the unbiased one: you used the mean "
                                              "token xbar, but with the bias the attention at "
                                              "W = 0 is softmax(b), not uniform")
                m = X @ torch.softmax(b, dim=0)
                swapped = torch.zeros_like(truth)
                start = 2 * h * n_in
                swapped[start:, start:] = offdiag(torch.kron(m[:, None], torch.eye(h_v,
                                                                                  dtype=m.dtype)))
                if close(given, swapped):
                    return CheckResult(False, f"{what} stores vec V column by column; the unit "
                                              "stores it row by row, V[a, b] at position a n + b "
                                              "(use torch.kron(I, m[:, None]))")
            return problem
    return CheckResult(True, "A = O(I kron X softmax(b)) on the (vec V, v) block agrees with "
                             "autograd on 4 random inputs; Q and K stay invisible")


def _gcn_graph(gen: torch.Generator, n_in: int, n_nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random node features X (n_in, N) and S = D^{-1/2} (Adj + I) D^{-1/2} of a random graph."""
    X = torch.randn(n_in, n_nodes, generator=gen, dtype=torch.float64)
    upper = torch.triu((torch.rand(n_nodes, n_nodes, generator=gen) < 0.5).double(), diagonal=1)
    adj = upper + upper.T + torch.eye(n_nodes, dtype=torch.float64)
    scale = adj.sum(dim=1).rsqrt()
    return X, scale[:, None] * adj * scale[None, :]


def _gcn_reference(W: torch.Tensor, x: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """f = sum_i v_i sum_j tanh((u_i^T X S)_j), w_i = [u_i; v_i] (Chapter 2, exercise)."""
    X, S = x
    return W[-1] @ torch.tanh(W[:-1].T @ X @ S).sum(dim=1)


@register_check("ch2.gcn")
def _ch2_gcn(answer: Any) -> CheckResult:
    """answer = (f_gcn, A_gcn): the graph-convolution module f(W, x) and its A(x), x = (X, S)."""
    if not (isinstance(answer, (tuple, list)) and len(answer) == 2
            and all(callable(a) for a in answer)):
        return CheckResult(False, "expected a pair of functions (f_gcn, A_gcn), got "
                                  f"{type(answer).__name__}")
    f_gcn, A_gcn = answer
    gen = torch.Generator().manual_seed(12)
    for n_in, n_nodes, d in [(3, 5, 3), (2, 6, 5)]:
        x = _gcn_graph(gen, n_in, n_nodes)
        X, S = x
        W = torch.randn(n_in + 1, d, generator=gen, dtype=torch.float64)
        out = f_gcn(W.clone(), (X.clone(), S.clone()))
        if not isinstance(out, torch.Tensor) or out.numel() != 1:
            shape = tuple(getattr(out, "shape", ()))
            return CheckResult(False, "f_gcn(W, x) should return a scalar tensor, got "
                                      f"{type(out).__name__} of shape {shape}")
        want = _gcn_reference(W, x)
        if not close(out.reshape(()), want):
            if close(out.reshape(()) * n_nodes, want):
                return CheckResult(False, "f_gcn averages over the nodes; the readout sums them")
            if close(out.reshape(()), W[-1] @ torch.tanh(W[:-1].T @ X).sum(dim=1)):
                return CheckResult(False, "f_gcn does not propagate: the pre-activation is "
                                          "u_i^T X S, not u_i^T X")
            permuted = f_gcn(W[:, torch.randperm(d, generator=gen)].clone(), x)
            if not close(torch.as_tensor(permuted).reshape(()), out.reshape(())):
                return CheckResult(False, "f_gcn changes when the units are permuted: the units "
                                          "must be the COLUMNS of W, w_i = W[:, i] = [u_i; v_i]")
            return CheckResult(False, f"f_gcn(W, x) = {out.item():.4g} at random weights, "
                                      f"expected {want.item():.4g}")
        truth = offdiag(X @ S @ torch.ones(n_nodes, dtype=torch.float64))
        given = A_gcn((X.clone(), S.clone()))
        what = f"A_gcn(x) for n_in = {n_in}, N = {n_nodes}"
        problem = diagnose_matrix(given, truth, what)
        if problem is not None:
            given = torch.as_tensor(given, dtype=torch.float64)
            if given.shape == truth.shape:
                if close(given, offdiag(X.sum(dim=1))):
                    return CheckResult(False, f"{what} leaves out the propagation: the unit sees "
                                              "X S 1, not X 1")
                if close(given * n_nodes, truth):
                    return CheckResult(False, f"{what} averages over the nodes; the readout sums")
            return problem
    auto = structure_matrix(f_gcn, x, n_in + 1)
    if not close(auto, truth):
        return CheckResult(False, "your A_gcn is right but autograd on your f_gcn disagrees with "
                                  "it: is f_gcn written with torch operations throughout?")
    return CheckResult(True, "f_gcn agrees with the reference and A = O(X S 1) with autograd on "
                             "two random graphs")


_COMMUTING = {
    "MLP, 1-D input": (True, "with n_in = 1 every A(x) = phi'(0) x O(1) is a multiple of one "
                             "matrix"),
    "MLP, 3-D input": (False, "[A(x), A(x')] is proportional to x x'^T - x' x^T, non-zero unless "
                              "x and x' are collinear"),
    "CNN, circular, global pooling, 1 channel": (True, "the circular patches sum to "
                                                       "(sum_t x_t) 1_k, the same direction for "
                                                       "every input"),
    "CNN, circular, global pooling, 2 channels": (False, "the patches sum to (channel sums) "
                                                         "kron 1_k, whose direction depends on the "
                                                         "ratio of the two channel sums"),
    "multi-head attention": (False, "A depends on the mean token like the MLP's on x: it commutes "
                                    "only for collinear mean tokens"),
    "phase retrieval": (False, "a a^T and a' a'^T commute only when a and a' are parallel or "
                               "orthogonal"),
    "matrix completion, entries in different rows and columns": (
        True, "O(e_a e_b^T) O(e_a' e_b'^T) = 0 when a != a' and b != b'"),
}


@register_check("ch2.commuting")
def _ch2_commuting(answer: dict[str, bool]) -> CheckResult:
    """answer maps each configuration to whether A(x), A(x') commute for generic inputs."""
    return check_predictions(answer, _COMMUTING, "{'MLP, 1-D input': True, ...}",
                             "all seven right: commuting data matrices are the exception, built "
                             "by making every A(x) share one eigenbasis")
