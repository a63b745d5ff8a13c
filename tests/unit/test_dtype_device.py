"""The Chapter 5-7 simulations in float32 and float64, on the CPU and (when present) CUDA.

Each function runs in the precision and on the device of its inputs (or of ``device=``); the result
must stay there and agree with the float64 CPU run to the precision's tolerance.
"""

from __future__ import annotations

import numpy as np
import torch

import nqf_mini as nqf
from nqf_mini.ignition import predicted_ignition_time

from ..conftest import tolerance


def _close(got, want, dtype, scale=1.0) -> bool:
    got = torch.as_tensor(got).detach().cpu().double()
    want = torch.as_tensor(want).detach().cpu().double()
    return bool(
        (got - want).abs().max() <= tolerance(dtype) * 100 * scale * max(1.0, want.abs().max())
    )


def test_two_layer_training(device, dtype):
    X = torch.randn(24, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    Y = torch.tanh(X[:, :2])
    ref_U0, ref_V0 = nqf.two_layer_init(4, 6, 2, 0.1, seed=1)
    U0, V0 = nqf.two_layer_init(4, 6, 2, 0.1, seed=1, dtype=dtype, device=device)
    for model in ("network", "nqf"):
        ref = nqf.train_two_layer(
            X,
            Y,
            ref_U0.cpu(),
            ref_V0.cpu(),
            lr=0.2,
            steps=30,
            model=model,
            record_every=10,
            record_outputs=True,
        )
        run = nqf.train_two_layer(
            X, Y, U0, V0, lr=0.2, steps=30, model=model, record_every=10, record_outputs=True
        )
        assert run.U.dtype == dtype and run.U.device.type == device.type
        assert run.outputs.dtype == dtype and run.outputs.device.type == device.type
        assert run.loss.dtype == np.float64 and _close(run.loss, ref.loss, dtype)
        q = nqf.mode_fractions(run.outputs, X.to(device, dtype), Y.to(device, dtype))
        q_ref = nqf.mode_fractions(ref.outputs, X, Y)
        assert q.dtype == dtype and _close(q, q_ref, dtype)
        rem = nqf.trajectory_remainder(
            run.outputs.new_zeros(1, 4, 6) + U0, V0[None], X.to(device, dtype)
        )
        assert rem.dtype == np.float64 and np.isfinite(rem).all()


def test_module_training(device, dtype):
    mlp = nqf.make_architecture("mlp", n_in=3, phi="tanh")
    gen = torch.Generator().manual_seed(2)
    X = torch.randn(10, 3, generator=gen, dtype=torch.float64)
    y = torch.randn(10, generator=gen, dtype=torch.float64)
    W0 = 0.1 * torch.randn(4, 5, generator=gen, dtype=torch.float64)
    ref = nqf.train_module(mlp.f, X, y, W0, lr=0.1, steps=20, record_every=5)
    run = nqf.train_module(
        mlp.f,
        X.to(device, dtype),
        y.to(device, dtype),
        W0.to(device, dtype),
        lr=0.1,
        steps=20,
        record_every=5,
    )
    assert run.W.dtype == dtype and run.W.device.type == device.type
    assert _close(run.loss, ref.loss, dtype) and _close(run.W, ref.W, dtype)


def test_ignition_times_and_laws(device, dtype):
    t = torch.linspace(0, 20, 201, dtype=torch.float64)
    z0, zstar, zeta = (
        torch.tensor(v, dtype=torch.float64) for v in ([1e-3, 1e-2], [1.0, 2.0], [1.0, 0.5])
    )
    z = nqf.logistic(z0, zstar, zeta, t)
    ref = nqf.ignition_times(z, t, zstar)
    got = nqf.ignition_times(z.to(device, dtype), t.to(device, dtype), zstar.to(device, dtype))
    assert got.dtype == dtype and got.device.type == device.type and _close(got, ref, dtype)
    exact = nqf.logistic_ignition_time(
        z0.to(device, dtype), zstar.to(device, dtype), zeta.to(device, dtype)
    )
    assert exact.dtype == dtype and _close(exact, ref, dtype, scale=1e5)  # grid: dt = 0.1
    law = predicted_ignition_time(zeta.to(device, dtype), torch.tensor(1e-3))
    assert law.dtype == dtype and law.device.type == device.type


def test_scaling_curves(device, dtype):
    t = torch.logspace(0, 3, 30, dtype=torch.float64)
    ref = nqf.feature_wise_curve(2.0, 0.8, 500, t, tail=True, device="cpu")
    got = nqf.feature_wise_curve(2.0, 0.8, 500, t.to(dtype), tail=True, device=device)
    assert got.device.type == device.type and _close(got, ref, dtype)
    V, zeta, u0 = nqf.power_law_modes(500, 2.0, 0.8)
    window = nqf.ignition_window(u0.to(dtype), zeta.to(device, dtype))
    fit = nqf.fit_power_law(t.to(device, dtype), ref.to(device, dtype), (window[0], 1000.0))
    assert abs(fit.exponent - nqf.fit_power_law(t, ref, (window[0], 1000.0)).exponent) < 1e-4


def test_spectral_data_and_square_network(device, dtype):
    data = nqf.fourier_features(8, 20, 1.0, 1.0, device=device)
    assert data.X.device.type == device.type
    zeta, u0 = nqf.fourier_modes(data, 4, 1e-2)
    assert zeta.device.type == device.type and u0.device.type == device.type
    samples = nqf.orthonormal_samples(6, 1.0, 1.0, p=8, device=device)
    W0 = nqf.proportional_init(samples, 1e-3, 2)
    steps, loss = nqf.train_square_network(samples.X, samples.y, W0, 0.2, 20, device=device)
    ref = nqf.train_square_network(
        samples.X.cpu(), samples.y.cpu(), W0.cpu(), 0.2, 20, device="cpu"
    )[1]
    assert _close(loss, ref, torch.float64)


def test_teacher_student(device, dtype):
    teacher = nqf.make_teacher(p=6, k=2, device=device)
    X = torch.randn(5, 6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    y = teacher(X.to(device, dtype))
    ref = nqf.make_teacher(p=6, k=2, device="cpu")(X)
    assert y.device.type == device.type and _close(y, ref, dtype)
    stream = nqf.online_stream(teacher, 4, 3)
    Xb, yb = stream(2)
    assert Xb.device.type == device.type and Xb.shape == (4, 6) and yb.shape == (4,)
    beta, lin = nqf.best_linear_fit(teacher)
    assert (
        beta.device.type == device.type
        and lin == nqf.best_linear_fit(nqf.make_teacher(p=6, k=2, device="cpu"))[1]
    )


def test_ntk_drift(device, dtype):
    problem = nqf.scaled_nqf_problem(8, 1.0, 1.5, n=4, p=3, device=device)
    drift = nqf.ntk_drift(problem, max_steps=2000)
    ref = nqf.ntk_drift(nqf.scaled_nqf_problem(8, 1.0, 1.5, n=4, p=3, device="cpu"), max_steps=2000)
    assert abs(drift.drift - ref.drift) <= 1e-10 * max(1.0, ref.drift)
    assert drift.time == ref.time
