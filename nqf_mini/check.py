"""Self-checks for the exercises: ``check.exercise(label, answer)`` says what is right or wrong.

Each check compares a student's answer with an independent oracle (usually autograd through
:func:`~nqf_mini.structure_matrix`) and, when it disagrees, names the specific mistake it recognises
(wrong shape, off by a factor of 2, wrong sign, a missing block) instead of a bare "incorrect".
Labels are ``"ch<N>.<name>"``; :data:`CHECKS` lists them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from .architectures import make_architecture
from .blocks import offdiag
from .quadratic_form import structure_matrix


@dataclass(frozen=True)
class CheckResult:
    """Outcome of a self-check: ``ok`` and a message meant for the student."""

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return ("PASS: " if self.ok else "NOT YET: ") + self.message


Check = Callable[[Any], CheckResult]
CHECKS: dict[str, Check] = {}


def register_check(label: str) -> Callable[[Check], Check]:
    """Decorator registering a check function under ``label``."""
    def wrap(fn: Check) -> Check:
        if label in CHECKS:
            raise ValueError(f"check label {label!r} is already registered")
        CHECKS[label] = fn
        return fn
    return wrap


def exercise(label: str, answer: Any, *, quiet: bool = False) -> CheckResult:
    """Run the self-check ``label`` on ``answer``, print the verdict and return it."""
    if label not in CHECKS:
        raise ValueError(f"argument `label`: expected one of {sorted(CHECKS)}, got {label!r}")
    if answer is NotImplemented or answer is None:
        result = CheckResult(False, "no answer yet: replace the `raise NotImplementedError` "
                                    "(or the None) with your solution")
    else:
        try:
            result = CHECKS[label](answer)
        except NotImplementedError:
            result = CheckResult(False, "your function still raises NotImplementedError")
    if not quiet:
        print(repr(result))
    return result


# --- matrix comparisons with specific feedback -------------------------------------------------

def not_a_function(answer: Any, signature: str) -> CheckResult | None:
    """The verdict for an answer that should be a function ``signature`` but is not; else None."""
    if callable(answer):
        return None
    return CheckResult(False, f"expected a function {signature}, got {type(answer).__name__}")


def known_mistake(value: float, candidates: list[tuple[float, str]], rtol: float = 1e-6) -> str | None:
    """The hint of the first (wrong value, hint) pair that ``value`` matches to ``rtol``, else None."""
    for wrong, hint in candidates:
        if abs(value - wrong) <= rtol * max(1.0, abs(wrong)):
            return hint
    return None


def _close(a: torch.Tensor, b: torch.Tensor, tol: float = 1e-8) -> bool:
    return bool((a - b).abs().max() <= tol * max(1.0, b.abs().max().item()))


def check_predictions(answer: Any, truth: dict[str, tuple[Any, str]], example: str,
                      success: str) -> CheckResult:
    """Compare a dict of predictions with ``truth`` (label -> (right value, why)); explain each miss."""
    if not isinstance(answer, dict):
        return CheckResult(False, f"expected a dict such as {example}, got {type(answer).__name__}")
    missing = [k for k in truth if k not in answer]
    if missing:
        return CheckResult(False, f"missing predictions for {missing}")
    wrong = [k for k, (right, _) in truth.items() if bool(answer[k]) != right]
    if wrong:
        return CheckResult(False, "; ".join(f"{k}: you said {answer[k]}, but {truth[k][1]}"
                                            for k in wrong))
    return CheckResult(True, success)


def as_float_tensor(given: Any, what: str) -> torch.Tensor | CheckResult:
    """``given`` as a float64 tensor, or a CheckResult saying it is not one."""
    if not isinstance(given, torch.Tensor):
        try:
            given = torch.as_tensor(given, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            return CheckResult(False, f"{what} should be a tensor, got {type(given).__name__}")
    return given.to(torch.float64)


def diagnose_matrix(given: Any, expected: torch.Tensor, what: str) -> CheckResult | None:
    """Compare a proposed matrix with the right one; None when they agree, else the likely mistake."""
    given = as_float_tensor(given, what)
    if isinstance(given, CheckResult):
        return given
    if tuple(given.shape) != tuple(expected.shape):
        return CheckResult(False, f"{what} has shape {tuple(given.shape)}, expected "
                                  f"{tuple(expected.shape)} (one row and column per unit parameter)")
    if _close(given, expected):
        return None
    if not _close(given, given.T):
        return CheckResult(False, f"{what} is not symmetric; a structure matrix always is "
                                  "(it is half a Hessian)")
    for factor, hint in [(2.0, "too large by a factor of 2: A is HALF the per-unit Hessian"),
                         (0.5, "too small by a factor of 2: A is half the Hessian, not a quarter"),
                         (-1.0, "has the wrong sign"),
                         (4.0, "too large by a factor of 4")]:
        if _close(given, factor * expected):
            return CheckResult(False, f"{what} is {hint}")
    rows = (given - expected).abs().sum(dim=1) > 1e-8 * max(1.0, expected.abs().max().item())
    bad = [int(i) for i in torch.nonzero(rows).flatten()]
    return CheckResult(False, f"{what} differs from the right answer in rows/columns {bad} "
                              "(0-based, in the order of the unit's parameters)")


def _random_inputs(n_in: int, count: int = 3, seed: int = 7) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(n_in, generator=gen, dtype=torch.float64) for _ in range(count)]


# --- Chapter 1 ----------------------------------------------------------------------------------

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


# --- Chapter 2 ----------------------------------------------------------------------------------

def _biased_attention(arch: Any, bias: torch.Tensor) -> Callable[[torch.Tensor, Any], torch.Tensor]:
    """Multi-head attention with a fixed score bias b: sum_i v_i^T V_i X softmax(s_i + b)."""
    from .architectures.attention import _scores

    def f(W: torch.Tensor, x: Any) -> torch.Tensor:
        q, X = x
        Q, K, V, v = arch.heads(W)
        attn = torch.softmax(_scores(Q, K, q, X) + bias, dim=-1)      # (d, N)
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
                if _close(given, arch.A((q, X))):
                    return CheckResult(False, f"{what} is the unbiased one: you used the mean "
                                              "token xbar, but with the bias the attention at "
                                              "W = 0 is softmax(b), not uniform")
                m = X @ torch.softmax(b, dim=0)
                swapped = torch.zeros_like(truth)
                start = 2 * h * n_in
                swapped[start:, start:] = offdiag(torch.kron(m[:, None], torch.eye(h_v,
                                                                                  dtype=m.dtype)))
                if _close(given, swapped):
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
        if not _close(out.reshape(()), want):
            if _close(out.reshape(()) * n_nodes, want):
                return CheckResult(False, "f_gcn averages over the nodes; the readout sums them")
            if _close(out.reshape(()), W[-1] @ torch.tanh(W[:-1].T @ X).sum(dim=1)):
                return CheckResult(False, "f_gcn does not propagate: the pre-activation is "
                                          "u_i^T X S, not u_i^T X")
            permuted = f_gcn(W[:, torch.randperm(d, generator=gen)].clone(), x)
            if not _close(torch.as_tensor(permuted).reshape(()), out.reshape(())):
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
                if _close(given, offdiag(X.sum(dim=1))):
                    return CheckResult(False, f"{what} leaves out the propagation: the unit sees "
                                              "X S 1, not X 1")
                if _close(given * n_nodes, truth):
                    return CheckResult(False, f"{what} averages over the nodes; the readout sums")
            return problem
    auto = structure_matrix(f_gcn, x, n_in + 1)
    if not _close(auto, truth):
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


# --- Chapter 3 ----------------------------------------------------------------------------------

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
        if _close(given, truth, 1e-10):
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
            if _close(given, wrong, 1e-10):
                return CheckResult(False, f"{what} {hint}")
        if not _close(given, given.T, 1e-10):
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
