"""The Chapter 8 self-checks accept a right answer and explain recognised wrong ones."""

import math

import numpy as np
import torch

from nqf_mini.course.check import CHECKS, exercise

from ..conftest import assert_feedback


def _onset(steps, l_net, l_nqf, f_net, f_nqf, floor=0.01, by_net=False, f_by_nqf=False):
    rms = lambda a: np.sqrt(np.mean(a**2, axis=1))
    f_gap = rms(f_nqf - f_net) / rms(f_nqf if f_by_nqf else f_net)
    l_gap = np.abs(l_net - l_nqf) / (l_net if by_net else l_nqf)
    l_gap = np.where(l_nqf >= floor * l_nqf[0], l_gap, 0.0)
    above = np.nonzero((f_gap > 0.1) | (l_gap > 0.1))[0]
    return math.inf if above.size == 0 else float(steps[above[0]])


def right_onset(steps, loss_net, loss_nqf, f_net, f_nqf):
    return _onset(steps, loss_net, loss_nqf, f_net, f_nqf)


def test_ch8_checks_registered():
    assert {"ch8.agreement_window", "ch8.qk_nqf"} <= set(CHECKS)


def test_ch8_agreement_window():
    def index(*a):
        onset = right_onset(*a)
        return onset if math.isinf(onset) else float(np.searchsorted(a[0], onset))

    assert_feedback(
        "ch8.agreement_window",
        right_onset,
        {
            "ignores the floor": lambda *a: _onset(*a, floor=0.0),
            "network's loss": lambda *a: _onset(*a, by_net=True),
            "rms(f_NQF)": lambda *a: _onset(*a, f_by_nqf=True),
            "an index into": index,
            "returns None": lambda *a: None if math.isinf(right_onset(*a)) else right_onset(*a),
            "either gap": lambda *a: right_onset(*a) + 10.0,
            "should be a number": lambda *a: "never",
        },
    )
    assert "expected a function" in exercise("ch8.agreement_window", 3, quiet=True).message


def right_qk_nqf(W, x):
    q, X, y = x
    d = W.shape[1]
    Q, K = W[:16].T.reshape(d, 2, 8), W[16:].T.reshape(d, 2, 8)
    c = (X - X.mean(dim=1, keepdim=True)) @ y / X.shape[1]
    return d * y.mean() + torch.einsum("dhn,n,dhm,m->", K, c, Q, q) / math.sqrt(2)


def test_ch8_qk_nqf():
    def no_offset(W, x):
        return right_qk_nqf(W, x) - W.shape[1] * x[2].mean()

    def raw_tokens(W, x):
        q, X, y = x
        d = W.shape[1]
        Q, K = W[:16].T.reshape(d, 2, 8), W[16:].T.reshape(d, 2, 8)
        c = X @ y / X.shape[1]
        return d * y.mean() + torch.einsum("dhn,n,dhm,m->", K, c, Q, q) / math.sqrt(2)

    def network(W, x):  # the attention model itself, written out
        q, X, y = x
        d = W.shape[1]
        Q, K = W[:16].T.reshape(d, 2, 8), W[16:].T.reshape(d, 2, 8)
        scores = torch.einsum("dhm,m,dhn,nN->dN", Q, q, K, X) / math.sqrt(2)
        return (torch.softmax(scores, dim=-1) @ y).sum()

    assert_feedback(
        "ch8.qk_nqf",
        right_qk_nqf,
        {
            "offset f0": no_offset,
            "centred": raw_tokens,
            "1/sqrt(h)": lambda W, x: no_offset(W, x) * math.sqrt(2) + W.shape[1] * x[2].mean(),
            "twice the quadratic": lambda W, x: 2 * no_offset(W, x) + W.shape[1] * x[2].mean(),
            "softmax": network,
            "not f0 + Tr[M A]": lambda W, x: right_qk_nqf(W, x) + 1.0,
            "raised": lambda W, x: W @ W,
        },
    )
