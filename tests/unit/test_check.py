"""Every exercise self-check accepts a right answer and explains a wrong one."""

import torch

import nqf_mini as nqf
from nqf_mini.course.check import CHECKS, exercise

from ..conftest import assert_feedback


def right_bias_A(x, phi1):
    return phi1 * nqf.offdiag(torch.cat([x, x.new_ones(1)]))


WRONG_BIAS_A = {
    "factor of 2": lambda x, p1: 2 * right_bias_A(x, p1),
    "shape": lambda x, p1: p1 * nqf.offdiag(x),
    "does not scale": lambda x, p1: right_bias_A(x, 1.0),
    "wrong sign": lambda x, p1: -right_bias_A(x, p1),
    "rows/columns": lambda x, p1: p1 * nqf.offdiag(torch.cat([x, x.new_zeros(1)])),
}


def test_ch1_mlp_bias_A():
    assert_feedback("ch1.mlp_bias_A", right_bias_A, WRONG_BIAS_A)


def test_ch1_remainder_orders():
    right = {"sin": 4, "gelu": 3, "softplus0": 3, "linear": None}
    assert exercise("ch1.remainder_orders", right, quiet=True).ok
    result = exercise("ch1.remainder_orders", right | {"gelu": 4}, quiet=True)
    assert not result.ok and "gelu" in result.message and "phi''(0)" in result.message
    assert "3" not in result.message.split("gelu:")[1]  # the idea, not the order
    assert "missing" in exercise("ch1.remainder_orders", {"sin": 4}, quiet=True).message


def test_unanswered_and_unknown_labels(capsys):
    def skeleton(x, phi1):
        raise NotImplementedError

    assert "NotImplementedError" in exercise("ch1.mlp_bias_A", skeleton).message
    assert "NOT YET" in capsys.readouterr().out
    assert not exercise("ch1.mlp_bias_A", None, quiet=True).ok
    try:
        exercise("ch9.nothing", 1)
    except ValueError as e:
        assert "argument `label`" in str(e)
    else:
        raise AssertionError("unknown label accepted")


def test_every_check_is_covered_here():
    """Each registered label "chN.name" has a test `test_chN_name` (a right and a wrong answer)."""
    import re
    from pathlib import Path

    names = {
        m
        for f in Path(__file__).parent.glob("test_*.py")
        for m in re.findall(r"^def (test_\w+)\(", f.read_text(), re.M)
    }
    missing = [label for label in CHECKS if "test_" + label.replace(".", "_") not in names]
    assert not missing, f"self-checks without a test of a right and a wrong answer: {missing}"


# --- Chapter 2 ----------------------------------------------------------------------------------


def right_biased_A(X, b, h, h_v):
    n = X.shape[0]
    m = X @ torch.softmax(b, dim=0)  # the attention-weighted token at W = 0
    A = torch.zeros(2 * h * n + h_v * n + h_v, 2 * h * n + h_v * n + h_v, dtype=X.dtype)
    A[2 * h * n :, 2 * h * n :] = nqf.offdiag(torch.kron(torch.eye(h_v, dtype=X.dtype), m[:, None]))
    return A


def _with_token(token):
    def answer(X, b, h, h_v):
        n = X.shape[0]
        A = torch.zeros(2 * h * n + h_v * n + h_v, 2 * h * n + h_v * n + h_v, dtype=X.dtype)
        Z = token(X, b, h_v)
        A[2 * h * n :, 2 * h * n :] = nqf.offdiag(Z)
        return A

    return answer


WRONG_BIASED_A = {
    "mean token": _with_token(
        lambda X, b, h_v: torch.kron(torch.eye(h_v, dtype=X.dtype), X.mean(dim=1)[:, None])
    ),
    "row by row": _with_token(
        lambda X, b, h_v: torch.kron(
            (X @ torch.softmax(b, 0))[:, None], torch.eye(h_v, dtype=X.dtype)
        )
    ),
    "factor of 2": lambda *a: 2 * right_biased_A(*a),
    "shape": lambda X, b, h, h_v: right_biased_A(X, b, h, h_v)[1:, 1:],
    "rows/columns": _with_token(
        lambda X, b, h_v: torch.kron(torch.eye(h_v, dtype=X.dtype), X[:, :1])
    ),
}


def test_ch2_biased_attention_A():
    assert_feedback("ch2.biased_attention_A", right_biased_A, WRONG_BIASED_A)
    assert "function" in exercise("ch2.biased_attention_A", 3, quiet=True).message


def f_gcn(W, x):
    X, S = x
    return W[-1] @ torch.tanh(W[:-1].T @ X @ S).sum(dim=1)


def A_gcn(x):
    X, S = x
    return nqf.offdiag(X @ S @ torch.ones(S.shape[0], dtype=X.dtype))


WRONG_GCN = {
    "averages over the nodes": (lambda W, x: f_gcn(W, x) / x[1].shape[0], A_gcn),
    "does not propagate": (lambda W, x: W[-1] @ torch.tanh(W[:-1].T @ x[0]).sum(dim=1), A_gcn),
    "COLUMNS": (lambda W, x: f_gcn(W * torch.arange(1.0, W.shape[1] + 1), x), A_gcn),
    "scalar tensor": (lambda W, x: torch.tanh(W[:-1].T @ x[0] @ x[1]), A_gcn),
    "leaves out the propagation": (f_gcn, lambda x: nqf.offdiag(x[0].sum(dim=1))),
    "factor of 2": (f_gcn, lambda x: 2 * A_gcn(x)),
    "wrong sign": (f_gcn, lambda x: -A_gcn(x)),
    "pair of functions": f_gcn,
}


def test_ch2_gcn():
    assert exercise("ch2.gcn", (f_gcn, A_gcn), quiet=True).ok
    for phrase, wrong in WRONG_GCN.items():
        result = exercise("ch2.gcn", wrong, quiet=True)
        assert not result.ok and phrase in result.message, (phrase, result.message)


def test_ch2_commuting():
    right = {
        "MLP, 1-D input": True,
        "MLP, 3-D input": False,
        "CNN, circular, global pooling, 1 channel": True,
        "CNN, circular, global pooling, 2 channels": False,
        "multi-head attention": False,
        "phase retrieval": False,
        "matrix completion, entries in different rows and columns": True,
    }
    assert exercise("ch2.commuting", right, quiet=True).ok
    result = exercise(
        "ch2.commuting", right | {"CNN, circular, global pooling, 2 channels": True}, quiet=True
    )
    assert not result.ok and "1 of the 7 predictions is not right" in result.message
    assert "eigenbasis" in result.message  # the idea, not the answer
    assert not any(key in result.message for key in right)  # a yes/no is never named
    flipped = {"phase retrieval": True, "MLP, 1-D input": False}
    result = exercise("ch2.commuting", right | flipped, quiet=True)
    assert not result.ok and "2 of the 7 predictions are not right" in result.message
    assert (
        "True or False"
        in exercise("ch2.commuting", right | {"phase retrieval": 1}, quiet=True).message
    )
    assert "missing" in exercise("ch2.commuting", {"MLP, 1-D input": True}, quiet=True).message
    assert "dict" in exercise("ch2.commuting", [True], quiet=True).message
