"""Training the neural quadratic form in weight space and in M space (Theorem 2, Chapter 3).

Convention (Chapter 3). Data are structure matrices A_mu (n, p, p), targets y_mu and offsets f0_mu;
the model is f_mu = f0_mu + Tr[M A_mu] with M = W W^T, trained on

    L = (1/2n) sum_mu (f_mu - y_mu)^2,      r_mu = f_mu - y_mu,      G = (1/n) sum_mu r_mu A_mu.

G is symmetric and depends on W only through M, and dL/dW = 2 G W. Hence

    gradient descent   W+ = (I - 2 lr G) W     =>   M+ = (I - 2 lr G) M (I - 2 lr G)    (exactly),
    gradient flow      dW/dt = -2 G W          =>   dM/dt = -2 (G M + M G).

Minibatch SGD replaces (1/n) sum_mu by the mean over the batch and closes the same way, batch by
batch. With the loss (1/n) sum instead of (1/2n) sum every factor 2 above becomes 4. Adam is not
equivariant under W -> W R (R orthogonal), so it does not close on M.

General form without ZGZ (Chapter 1): f = f0 + g.mu + mu^T B mu + Tr[M A] with mu = W 1 (the sum of
the d units). With h = (1/n) sum_mu r_mu (g_mu + 2 B_mu mu), dL/dW = 2 G W + h 1^T, so GD gives

    mu+ = P mu - lr d h,    M+ = P M P - lr (P mu h^T + h mu^T P) + lr^2 d h h^T,    P = I - 2 lr G,

and the flow dM/dt = -2 (G M + M G) - (mu h^T + h mu^T), dmu/dt = -2 G mu - d h: the dynamics close
on (M, mu) for a given width d.

Weight space (:func:`simulate_W`) takes its gradients from autograd, so it is an independent check
of the M-space updates (:func:`simulate_M`, :func:`simulate_M_mu`). All three run on the training
loop of :mod:`nqf_mini.training`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Sequence

import numpy as np
import torch

from ._validate import (
    as_tensor,
    require_dtype,
    require_positive_int,
    require_psd,
    require_shape,
    require_steps,
    require_symmetric_stack,
    require_unit_interval,
)
from .device import resolve_device
from .training import (
    State,
    WeightSpace,
    make_optimizer,
    minibatches,
    record_points,
    require_record_memory,
    train,
)

_RK4_STABLE = 2.785  # RK4 is stable for h * lambda in (-2.785, 0] on the real axis


@dataclass(frozen=True)
class TrainingResult:
    """What :func:`simulate_W`, :func:`simulate_M` and :func:`simulate_M_mu` return.

    Attributes:
        loss: full-data loss L at steps 0, 1, ..., (NumPy float64, one entry per step taken + 1).
        M: final M = W W^T, shape (p, p).
        W: final weights, shape (p, d) (weight space only, else None).
        mu: final mu = W 1, shape (p,) (general form only, else None).
        steps: recorded step indices (NumPy int, (T,)), or None.
        times: continuous time lr * steps (NumPy float64, (T,)), or None.
        f: predictions at the recorded steps, shape (T, n), or None.
        M_traj: M at the recorded steps, shape (T, p, p), or None.
        mu_traj: mu at the recorded steps, shape (T, p) (general form only), or None.
    """

    loss: np.ndarray
    M: torch.Tensor
    W: torch.Tensor | None = None
    mu: torch.Tensor | None = None
    steps: np.ndarray | None = None
    times: np.ndarray | None = None
    f: torch.Tensor | None = None
    M_traj: torch.Tensor | None = None
    mu_traj: torch.Tensor | None = None


# --- data ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Data:
    """Validated training data on one device and dtype."""

    A: torch.Tensor  # (n, p, p), symmetrised
    A_flat: torch.Tensor  # (n, p * p)
    y: torch.Tensor  # (n,)
    f0: torch.Tensor  # (n,)
    g: torch.Tensor | None  # (n, p) or None
    B: torch.Tensor | None  # (n, p, p) or None

    @property
    def n(self) -> int:
        return self.A.shape[0]

    @property
    def p(self) -> int:
        return self.A.shape[1]

    def predict(self, M: torch.Tensor, mu: torch.Tensor | None = None) -> torch.Tensor:
        """f = f0 + Tr[M A] (+ g.mu + mu^T B mu), shape (n,)."""
        f = torch.addmv(self.f0, self.A_flat, M.reshape(-1))  # Tr[M A_mu] = <A_mu, M>
        if mu is not None and self.g is not None:
            f = f + self.g @ mu
        if mu is not None and self.B is not None:
            f = f + torch.einsum("npq,p,q->n", self.B, mu, mu)
        return f

    def gradient_parts(
        self, r: torch.Tensor, idx: torch.Tensor | None, mu: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """G = mean_batch r_mu A_mu (p, p) and h = mean_batch r_mu (g_mu + 2 B_mu mu) (p,)."""
        A_flat, g, B = self.A_flat, self.g, self.B
        if idx is not None:
            r, A_flat = r[idx], A_flat[idx]
            g = None if g is None else g[idx]
            B = None if B is None else B[idx]
        inv_b = 1.0 / r.shape[0]
        G = torch.mv(A_flat.T, r).view(self.p, self.p) * inv_b  # (p, p)
        if mu is None or (g is None and B is None):
            return G, (None if mu is None else torch.zeros_like(mu))
        h = torch.zeros_like(mu)
        if g is not None:
            h = h + r @ g * inv_b
        if B is not None:
            h = h + 2 * inv_b * torch.einsum("n,npq,q->p", r, B, mu)
        return G, h


def _prepare(
    A: Any, y: Any, f0: Any, g: Any, B: Any, dtype: torch.dtype, device: torch.device | str | None
) -> _Data:
    require_dtype(dtype)
    if device is None and isinstance(A, torch.Tensor):
        device = as_tensor("A", A).device
    dev = resolve_device(device)
    A = as_tensor("A", A, dtype=dtype, device=dev)
    require_symmetric_stack("A", A)
    n, p = A.shape[0], A.shape[1]
    y = as_tensor("y", y, ndim=1, dtype=dtype, device=dev)
    require_shape("y", y, (n,), like="A")
    f0 = as_tensor("f0", f0, dtype=dtype, device=dev)
    if f0.ndim == 0:
        f0 = f0.expand(n).clone()
    require_shape("f0", f0, (n,), like="A")
    if g is not None:
        g = as_tensor("g", g, ndim=2, dtype=dtype, device=dev)
        require_shape("g", g, (n, p), like="A")
    if B is not None:
        B = as_tensor("B", B, dtype=dtype, device=dev)
        require_shape("B", B, (n, p, p), like="A")
        require_symmetric_stack("B", B)
        B = (B + B.transpose(1, 2)) / 2
    A = (A + A.transpose(1, 2)) / 2  # exact: Tr[M A] only sees the symmetric part
    A, y, f0 = A.detach(), y.detach(), f0.detach()  # data, not parameters
    g = None if g is None else g.detach()
    B = None if B is None else B.detach()
    return _Data(A=A, A_flat=A.reshape(n, p * p).contiguous(), y=y, f0=f0, g=g, B=B)


def _batches(
    data: _Data, batch_size: int | None, steps: int, seed: int, method: str
) -> torch.Tensor | None:
    if batch_size is not None and method == "flow":
        raise ValueError(
            "argument `batch_size`: method='flow' uses the full batch, "
            f"expected None, got {batch_size}"
        )
    batches = minibatches(data.n, batch_size, steps, seed)
    return None if batches is None else batches.to(data.A.device)


# --- the two systems ------------------------------------------------------------------------------


class _MSpace:
    """GD / SGD / flow on (M,) or, for the general form, on (M, mu) with width d."""

    def __init__(self, data: _Data, width: int | None):
        self.data, self.width = data, width
        self.loss_scale = 0.5 / data.n  # L = |f - y|^2 / 2n
        self.eye = torch.eye(data.p, dtype=data.A.dtype, device=data.A.device)
        self.A_T = data.A_flat.T.contiguous()  # (p * p, n)

    def predict(self, state: State) -> torch.Tensor:
        return self.data.predict(*state)

    def measure(
        self, state: State, f: torch.Tensor | None, record: bool
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        f = self.predict(state) if f is None else f
        if not record:
            return torch.dist(f, self.data.y), {}
        obs = {"f": f, "M": state[0]}
        if len(state) > 1:
            obs["mu"] = state[1]
        return torch.dist(f, self.data.y), obs

    def _plain_step(
        self, M: torch.Tensor, idx: torch.Tensor | None, lr: float
    ) -> tuple[torch.Tensor, State]:
        """M+ = P M P, P = I - 2 lr G: the hot loop of the benchmark, in as few tensor ops as
        possible."""
        data = self.data
        f = torch.addmv(data.f0, data.A_flat, M.view(-1))  # f0 + Tr[M A_mu]: (n,)
        r = f - data.y
        if idx is None:
            S, b = torch.mv(self.A_T, r), data.n  # b G, flattened
        else:
            S, b = torch.mv(data.A_flat[idx].T, r[idx]), idx.shape[0]
        P = torch.add(self.eye, S.view(data.p, data.p), alpha=-2 * lr / b)  # I - 2 lr G
        return f, (P @ M @ P,)

    def gd_step(
        self, state: State, idx: torch.Tensor | None, lr: float
    ) -> tuple[torch.Tensor, State]:
        """The exact image of one weight-space GD / SGD step (module docstring)."""
        if len(state) == 1:
            return self._plain_step(state[0], idx, lr)
        M, mu = state
        f = self.predict(state)  # (n,)
        G, h = self.data.gradient_parts(f - self.data.y, idx, mu)
        assert h is not None and self.width is not None  # the general form
        P = torch.add(self.eye, G, alpha=-2 * lr)  # I - 2 lr G
        Pmu = P @ mu
        cross = torch.outer(Pmu, h)
        M_new = P @ M @ P - lr * (cross + cross.T) + lr**2 * self.width * torch.outer(h, h)
        return f, (M_new, Pmu - lr * self.width * h)

    def velocity(self, state: State) -> tuple[torch.Tensor, State]:
        """dM/dt = -2 (G M + M G) (- mu h^T - h mu^T), dmu/dt = -2 G mu - d h."""
        f = self.predict(state)
        M = state[0]
        mu = state[1] if len(state) > 1 else None
        G, h = self.data.gradient_parts(f - self.data.y, None, mu)
        GM = G @ M
        dM = -2 * (GM + GM.T)  # -2 (G M + M G)
        if mu is None:
            return f, (dM,)
        assert h is not None and self.width is not None  # the general form
        hmu = torch.outer(h, mu)
        return f, (dM - (hmu + hmu.T), -2 * G @ mu - self.width * h)


def _w_space(data: _Data) -> WeightSpace:
    """Weights W (p, d) with gradients from autograd: the oracle for M space."""
    general = data.g is not None or data.B is not None

    def predict(W: torch.Tensor) -> torch.Tensor:
        return data.predict(W @ W.T, W.sum(dim=1) if general else None)

    def observe(W: torch.Tensor, f: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"f": f, "M": W @ W.T, **({"mu": W.sum(dim=1)} if general else {})}

    return WeightSpace(predict, data.y, observe)


def _kernel_bound(data: _Data, M: torch.Tensor, method: str) -> float:
    """The linear-stability bound 2 / lambda_max (2.785 / lambda_max for RK4) at M."""
    lam = ntk_lambda_max(data.A, M.detach())
    return (_RK4_STABLE if method == "flow" else 2.0) / lam if lam > 0 else float("inf")


def ntk_lambda_max(A: torch.Tensor, M: torch.Tensor, iters: int = 100) -> float:
    """Largest eigenvalue of the kernel K_{mu nu} = (4/n) Tr[A_mu M A_nu] (power iteration).

    Linearising f around M, one GD step maps residuals r -> (I - lr K) r, so GD is stable for
    lr < 2 / lambda_max(K) (and RK4 gradient flow for lr < 2.785 / lambda_max(K)). Chapter 3.
    """
    n, p = A.shape[0], A.shape[1]
    A_flat = A.reshape(n, p * p)
    v = torch.ones(n, dtype=A.dtype, device=A.device) / n**0.5
    lam = torch.zeros((), dtype=A.dtype, device=A.device)
    for _ in range(iters):
        S = torch.mv(A_flat.T, v).view(p, p)  # sum_nu v_nu A_nu
        Kv = (4.0 / n) * torch.mv(A_flat, (S @ M).reshape(-1))  # (n,)
        lam = Kv.norm()
        if lam == 0:
            return 0.0
        v = Kv / lam
    return float(lam)


def _advice(data: _Data, weights: bool, method: str):
    """Divergence advice: lr <= min(lr / 4, half the linear-stability bound at the last good M)."""

    def advice(state: State, lr: float) -> tuple[float, str]:
        M = state[0] @ state[0].T if weights else state[0]
        bound = _kernel_bound(data, M, method)
        suggested = min(lr / 4, 0.5 * bound)
        return suggested, (
            f"Try lr <= {suggested:.3g} (lr / 4 = {lr / 4:.3g}; the linear-stability "
            f"bound {'2.785' if method == 'flow' else '2'} / lambda_max(K) = "
            f"{bound:.3g} from the kernel K = (4/n) Tr[A_mu M A_nu] at the last "
            "checked step)"
        )

    return advice


def _simulate(
    system: Any,
    state: State,
    data: _Data,
    lr: float,
    steps: int,
    batch_size: int | None,
    seed: int,
    method: str,
    optimizer: str,
    record_every: int | None,
    adam_betas: Sequence[float],
    adam_eps: float,
    stop_below: float | None = None,
    momentum: float = 0.9,
) -> tuple[State, TrainingResult]:
    opt = make_optimizer(method, optimizer, lr, adam_betas, adam_eps, momentum)
    steps = require_steps("steps", steps)
    if stop_below is not None:
        stop_below = require_unit_interval(
            "stop_below", stop_below, " (a fraction of the initial loss)"
        )
    record = record_points(steps, record_every)
    weights = isinstance(system, WeightSpace)
    p = data.p
    require_record_memory(
        len(record),
        data.n + p * p + p + (state[0].numel() if weights else 0),
        data.A.dtype,
        data.A.device,
    )
    trace = train(
        system,
        state,
        opt,
        steps,
        batches=_batches(data, batch_size, steps, seed, method),
        record=record,
        stop_below=stop_below,
        advice=_advice(data, weights, method),
    )
    M = trace.state[0] @ trace.state[0].T if weights else trace.state[0]
    mu = None
    if not weights and len(trace.state) > 1:
        mu = trace.state[1]
    elif weights and (data.g is not None or data.B is not None):
        mu = trace.state[0].sum(dim=1)
    if not record:
        return trace.state, TrainingResult(
            loss=trace.loss, M=M.detach(), mu=None if mu is None else mu.detach()
        )
    rec = trace.records
    return trace.state, TrainingResult(
        loss=trace.loss,
        M=M.detach(),
        mu=None if mu is None else mu.detach(),
        steps=trace.steps,
        times=opt.lr * trace.steps,
        f=rec["f"],
        M_traj=rec["M"],
        mu_traj=rec.get("mu"),
    )


# --- public simulators ----------------------------------------------------------------------------


def simulate_W(
    A: Any,
    y: Any,
    W0: Any,
    lr: float,
    steps: int,
    batch_size: int | None = None,
    seed: int = 0,
    f0: Any = 0.0,
    *,
    g: Any = None,
    B: Any = None,
    method: str = "gd",
    optimizer: str = "sgd",
    record_every: int | None = None,
    adam_betas: Sequence[float] = (0.9, 0.999),
    adam_eps: float = 1e-8,
    momentum: float = 0.9,
    stop_below: float | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float64,
) -> TrainingResult:
    """Train the NQF in weight space, f_mu = f0 + g_mu.mu + mu^T B_mu mu + Tr[W^T A_mu W] (Chapter
    3).

    Gradients come from autograd on L = (1/2n) sum_mu (f_mu - y_mu)^2 (so dL/dW = 2 G W + h 1^T,
    with G = (1/n) sum r_mu A_mu; see the module docstring). Methods: full-batch GD
    (``batch_size=None``), minibatch SGD (``batch_size=b``, batches from
    :func:`nqf_mini.training.minibatches`), Adam (``optimizer="adam"``, torch.optim.Adam's update
    with ``adam_betas``, ``adam_eps``), heavy-ball momentum (``optimizer="momentum"``,
    torch.optim.SGD's update with ``momentum``), and gradient flow dW/dt = -dL/dW
    (``method="flow"``: classical RK4 with time step ``lr``).

    Args:
        A: structure matrices, (n, p, p), symmetric.
        y: targets, (n,).
        W0: initial weights, (p, d), the units are the columns.
        lr: learning rate (the time step for ``method="flow"``); time is t = lr * step.
        steps: number of steps (>= 1).
        batch_size: None for the full batch, else 1 <= b <= n.
        seed: seed of the minibatch sequence (the same sequence as :func:`simulate_M`).
        f0: offsets f(0, x_mu), a scalar or (n,).
        g: linear coefficients, (n, p), or None (ZGZ).
        B: cross-unit matrices, (n, p, p) symmetric, or None (ZGZ).
        method: "gd" (discrete steps) or "flow".
        optimizer: "sgd" (plain steps), "adam" or "momentum" (discrete steps only).
        record_every: record f, M = W W^T (and mu) every k steps and at the last step.
        adam_betas: Adam's (beta1, beta2), each in (0, 1) (checked for every optimizer).
        adam_eps: Adam's epsilon, > 0.
        momentum: the heavy-ball coefficient, in (0, 1).
        stop_below: stop at the first step at which L <= stop_below * L(0), a number in
            [0, 1) (None: run all steps).
        device: where to compute; None means the device of ``A`` if a tensor, else the default.
        dtype: torch.float64 (default) or torch.float32.

    Returns:
        A :class:`TrainingResult` with ``W`` (p, d) and ``M`` (p, p).

    Raises:
        ValueError: on a bad argument (the message names it).
        DivergenceError: if the loss becomes non-finite or exceeds 1e6 times its initial value.
    """
    data = _prepare(A, y, f0, g, B, dtype, device)
    W0 = as_tensor("W0", W0, ndim=2, dtype=dtype, device=data.A.device).detach()
    require_shape("W0", W0, (data.p, None), like="A")
    state, result = _simulate(
        _w_space(data),
        (W0,),
        data,
        lr,
        steps,
        batch_size,
        seed,
        method,
        optimizer,
        record_every,
        adam_betas,
        adam_eps,
        stop_below,
        momentum,
    )
    return TrainingResult(**{**result.__dict__, "W": state[0]})


def _m_space_state(data: _Data, M0: Any, mu0: Any) -> State:
    M0 = as_tensor("M0", M0, ndim=2, dtype=data.A.dtype, device=data.A.device).detach()
    require_shape("M0", M0, (data.p, data.p), like="A")
    require_psd("M0", M0)
    if mu0 is None:
        return ((M0 + M0.T) / 2,)
    mu0 = as_tensor("mu0", mu0, ndim=1, dtype=data.A.dtype, device=data.A.device).detach()
    require_shape("mu0", mu0, (data.p,), like="A")
    return ((M0 + M0.T) / 2, mu0)


def simulate_M(
    A: Any,
    y: Any,
    M0: Any,
    lr: float,
    steps: int,
    batch_size: int | None = None,
    seed: int = 0,
    f0: Any = 0.0,
    *,
    method: str = "gd",
    record_every: int | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float64,
) -> TrainingResult:
    """Train the NQF f_mu = f0 + Tr[M A_mu] directly in M space (Theorem 2, Chapter 3).

    GD / SGD:  M+ = (I - 2 lr G) M (I - 2 lr G),  G = mean over the batch of r_mu A_mu, which is
    exactly what weight-space GD on L = (1/2n) sum (f - y)^2 does to M = W W^T for any width d.
    Flow (``method="flow"``): dM/dt = -2 (G M + M G), classical RK4 with time step ``lr``. One step
    costs O(n p^2 + p^3), independent of the width.

    Args:
        A: structure matrices, (n, p, p), symmetric.
        y: targets, (n,).
        M0: initial M = W0 W0^T, (p, p), positive semi-definite.
        lr, steps, batch_size, seed, f0, method, record_every, device, dtype: as in
            :func:`simulate_W`; the same ``seed`` gives the same minibatches.

    Returns:
        A :class:`TrainingResult` with ``M`` (p, p) (``W`` is None).

    Raises:
        ValueError: on a bad argument (the message names it), e.g. a non-PSD ``M0``.
        DivergenceError: if the loss becomes non-finite or exceeds 1e6 times its initial value.
    """
    data = _prepare(A, y, f0, None, None, dtype, device)
    state = _m_space_state(data, M0, None)
    return _simulate(
        _MSpace(data, None),
        state,
        data,
        lr,
        steps,
        batch_size,
        seed,
        method,
        "sgd",
        record_every,
        (0.9, 0.999),
        1e-8,
    )[1]


def simulate_M_mu(
    A: Any,
    y: Any,
    M0: Any,
    mu0: Any,
    width: int,
    lr: float,
    steps: int,
    batch_size: int | None = None,
    seed: int = 0,
    f0: Any = 0.0,
    *,
    g: Any = None,
    B: Any = None,
    method: str = "gd",
    record_every: int | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float64,
) -> TrainingResult:
    """Train the general form f = f0 + g.mu + mu^T B mu + Tr[M A] on (M, mu) (Chapter 3).

    With P = I - 2 lr G and h = mean_batch r_mu (g_mu + 2 B_mu mu), GD is exactly
    mu+ = P mu - lr d h and M+ = P M P - lr (P mu h^T + h mu^T P) + lr^2 d h h^T; the flow is
    dM/dt = -2 (G M + M G) - (mu h^T + h mu^T), dmu/dt = -2 G mu - d h. The width d enters, but no
    other property of W: (M, mu) is a closed state.

    Args:
        A, y, f0, g, B: as in :func:`simulate_W`.
        M0: initial M = W0 W0^T, (p, p), PSD.
        mu0: initial mu = W0 1, (p,).
        width: the number of units d (>= 1).
        lr, steps, batch_size, seed, method, record_every, device, dtype: as in :func:`simulate_W`.

    Returns:
        A :class:`TrainingResult` with ``M``, ``mu`` (and ``mu_traj`` when recording).

    Raises:
        ValueError: on a bad argument (the message names it).
        DivergenceError: if the loss becomes non-finite or exceeds 1e6 times its initial value.
    """
    width = require_positive_int("width", width)
    data = _prepare(A, y, f0, g, B, dtype, device)
    if mu0 is None:
        raise TypeError(
            "argument `mu0`: expected the initial sum of the units m(0) = W0 1, "
            "a tensor of shape (p,), got None (without it, use simulate_M)"
        )
    state = _m_space_state(data, M0, mu0)
    return _simulate(
        _MSpace(data, width),
        state,
        data,
        lr,
        steps,
        batch_size,
        seed,
        method,
        "sgd",
        record_every,
        (0.9, 0.999),
        1e-8,
    )[1]
