"""The teacher-student helpers of Chapter 7: teacher, seeded stream, closed-form best linear
loss."""

import pytest
import torch

import nqf_mini as nqf
from nqf_mini import teacher_student as ts


def test_teacher_shapes_norms_and_seed():
    T = ts.make_teacher(p=12, k=3, norm=2.0, seed=4)
    assert T.U.shape == (12, 3) and T.v.shape == (3,)
    assert torch.allclose(T.U.norm(dim=0), torch.full((3,), 2.0, dtype=torch.float64))
    assert torch.equal(T.U, ts.make_teacher(p=12, k=3, norm=2.0, seed=4).U)
    assert not torch.equal(T.U, ts.make_teacher(p=12, k=3, norm=2.0, seed=5).U)
    X = ts.gaussian_inputs(5, 12, seed=0)
    assert torch.allclose(T(X), torch.tanh(X @ T.U).sum(dim=1))


def test_best_linear_loss_matches_least_squares_on_a_large_sample():
    T = ts.make_teacher(p=8, k=3, norm=2.0, seed=1)
    beta, lin = ts.best_linear_fit(T)
    X = ts.gaussian_inputs(200_000, 8, seed=9)
    y = T(X)
    sol = torch.linalg.lstsq(X, y[:, None]).solution[:, 0]
    emp = 0.5 * float((X @ sol - y).square().mean())
    assert abs(lin - emp) < 0.01 * emp
    assert torch.allclose(beta, sol, atol=0.02)
    zero = ts.zero_loss(T)
    assert abs(zero - 0.5 * float(y.square().mean())) < 0.01 * zero
    assert 0 < lin < zero


def test_best_linear_loss_vanishes_for_a_linear_teacher():
    T = ts.make_teacher(p=6, k=2, activation="linear", seed=0)
    assert ts.best_linear_loss(T) < 1e-10


def test_stream_is_seeded_and_consistent_with_the_teacher():
    T = ts.make_teacher(p=5, k=2, seed=0)
    s1, s2 = ts.online_stream(T, 4, 10, seed=3), ts.online_stream(T, 4, 10, seed=3)
    X, y = s1(7)
    assert X.shape == (4, 5) and y.shape == (4,)
    assert torch.equal(X, s2(7)[0]) and torch.allclose(y, T(X))
    assert not torch.equal(s1(0)[0], s1(1)[0])
    with pytest.raises(ValueError, match="argument `t`"):
        s1(10)


def test_nqf_student_approaches_the_best_linear_loss():
    T = ts.make_teacher(p=8, k=2, seed=0)
    X, y = ts.evaluation_set(T, 2048)
    U0, V0 = nqf.two_layer_init(8, 8, 1, 0.05, seed=0)
    run = nqf.train_two_layer(X, y, U0, V0, lr=0.02, steps=3000, model="nqf",
                              stream=ts.online_stream(T, 8, 3000), record_every=500)
    lin = ts.best_linear_loss(T)
    assert abs(run.loss[-1] - lin) < 0.1 * lin
    assert run.loss[0] > 2 * lin


def test_validation_names_arguments():
    with pytest.raises(ValueError, match="`p`"):
        ts.make_teacher(p=0)
    with pytest.raises(ValueError, match="`norm`"):
        ts.make_teacher(norm=-1.0)
    with pytest.raises(ValueError, match="`X`"):
        ts.make_teacher(p=4)(torch.zeros(3, 5))
