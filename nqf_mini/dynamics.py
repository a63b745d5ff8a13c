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

and the flow dM/dt = -2 (G M + M G) - (mu h^T + h mu^T), dmu/dt = -2 G mu - d h: the dynamics close on
(M, mu) for a given width d.

Weight space (:func:`simulate_W`) takes its gradients from autograd, so it is an independent check of
the M-space updates (:func:`simulate_M`, :func:`simulate_M_mu`). Scalar series (``loss``, ``steps``,
``times``) come back as NumPy arrays for plotting; states stay tensors on the compute device.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import torch

from ._validate import (
    FLOAT_DTYPES, as_tensor, require_positive, require_positive_int, require_psd, require_shape,
    require_symmetric,
)
from .device import resolve_device

State = tuple  # a tuple of tensors: (M,), (M, mu), (W,) or (W, m, v) for Adam
METHODS = ("gd", "flow")
OPTIMIZERS = ("sgd", "adam")
DIVERGENCE_FACTOR = 1e6     # loss above this multiple of the initial loss counts as divergence
_CHECK_EVERY = 64           # steps between divergence checks (one host sync each)
_RK4_STABLE = 2.785         # RK4 is stable for h * lambda in (-2.785, 0] on the real axis


class DivergenceError(ValueError):
    """Training blew up: the loss became non-finite or exceeded 1e6 times its initial value.

    Attributes:
        step: the first step at which the loss was bad.
        lr: the learning rate (or flow time step) used.
        suggested_lr: a smaller value to try (at most lr / 4; see the message for the estimate).
    """

    def __init__(self, message: str, step: int, lr: float, suggested_lr: float):
        super().__init__(message)
        self.step, self.lr, self.suggested_lr = step, lr, suggested_lr


@dataclass(frozen=True)
class TrainingResult:
    """What :func:`simulate_W`, :func:`simulate_M` and :func:`simulate_M_mu` return.

    Attributes:
        loss: full-data loss L at steps 0, 1, ..., steps (NumPy float64, shape (steps + 1,)).
        M: final M = W W^T, shape (p, p).
        W: final weights, shape (p, d) (weight space only, else None).
        mu: final mu = W 1, shape (p,) (general form only, else None).
        steps: recorded step indices 0, k, 2k, ... and the last step (NumPy int, (T,)), or None.
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

    A: torch.Tensor                 # (n, p, p), symmetrised
    A_flat: torch.Tensor            # (n, p * p)
    y: torch.Tensor                 # (n,)
    f0: torch.Tensor                # (n,)
    g: torch.Tensor | None          # (n, p) or None
    B: torch.Tensor | None          # (n, p, p) or None

    @property
    def n(self) -> int:
        return self.A.shape[0]

    @property
    def p(self) -> int:
        return self.A.shape[1]

    def predict(self, M: torch.Tensor, mu: torch.Tensor | None = None) -> torch.Tensor:
        """f = f0 + Tr[M A] (+ g.mu + mu^T B mu), shape (n,)."""
        f = torch.addmv(self.f0, self.A_flat, M.reshape(-1))            # Tr[M A_mu] = <A_mu, M>
        if mu is not None and self.g is not None:
            f = f + self.g @ mu
        if mu is not None and self.B is not None:
            f = f + torch.einsum("npq,p,q->n", self.B, mu, mu)
        return f

    def gradient_parts(self, r: torch.Tensor, idx: torch.Tensor | None,
                       mu: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """G = mean_batch r_mu A_mu (p, p) and h = mean_batch r_mu (g_mu + 2 B_mu mu) (p,)."""
        A_flat, g, B = self.A_flat, self.g, self.B
        if idx is not None:
            r, A_flat = r[idx], A_flat[idx]
            g = None if g is None else g[idx]
            B = None if B is None else B[idx]
        inv_b = 1.0 / r.shape[0]
        G = torch.mv(A_flat.T, r).view(self.p, self.p) * inv_b             # (p, p)
        if mu is None or (g is None and B is None):
            return G, (None if mu is None else torch.zeros_like(mu))
        h = torch.zeros_like(mu)
        if g is not None:
            h = h + r @ g * inv_b
        if B is not None:
            h = h + 2 * inv_b * torch.einsum("n,npq,q->p", r, B, mu)
        return G, h


def _resolve(A: Any, device: torch.device | str | None, dtype: torch.dtype) -> torch.device:
    if dtype not in FLOAT_DTYPES:
        raise TypeError(f"argument `dtype`: expected torch.float32 or torch.float64, got {dtype}")
    if device is None and isinstance(A, torch.Tensor):
        return A.device
    return resolve_device(device)


def _prepare(A: Any, y: Any, f0: Any, g: Any, B: Any, dtype: torch.dtype,
             device: torch.device) -> _Data:
    A = as_tensor("A", A, ndim=3, dtype=dtype, device=device)
    require_symmetric("A", A)
    n, p = A.shape[0], A.shape[1]
    y = as_tensor("y", y, ndim=1, dtype=dtype, device=device)
    require_shape("y", y, (n,))
    f0 = as_tensor("f0", f0, dtype=dtype, device=device)
    if f0.ndim == 0:
        f0 = f0.expand(n).clone()
    require_shape("f0", f0, (n,))
    if g is not None:
        g = as_tensor("g", g, ndim=2, dtype=dtype, device=device)
        require_shape("g", g, (n, p))
    if B is not None:
        B = as_tensor("B", B, ndim=3, dtype=dtype, device=device)
        require_shape("B", B, (n, p, p))
        require_symmetric("B", B)
        B = (B + B.transpose(1, 2)) / 2
    A = (A + A.transpose(1, 2)) / 2                      # exact: Tr[M A] only sees the symmetric part
    return _Data(A=A, A_flat=A.reshape(n, p * p).contiguous(), y=y, f0=f0, g=g, B=B)


def _check_options(n: int, lr: float, steps: int, batch_size: int | None, method: str,
                   optimizer: str, record_every: int | None) -> None:
    require_positive("lr", lr)
    require_positive_int("steps", steps)
    if method not in METHODS:
        raise ValueError(f"argument `method`: expected one of {METHODS}, got {method!r}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"argument `optimizer`: expected one of {OPTIMIZERS}, got {optimizer!r}")
    if method == "flow" and optimizer != "sgd":
        raise ValueError(f"argument `optimizer`: method='flow' is plain gradient flow, "
                         f"got optimizer={optimizer!r}")
    if batch_size is not None:
        require_positive_int("batch_size", batch_size)
        if batch_size > n:
            raise ValueError(f"argument `batch_size`: expected an integer between 1 and n = {n}, "
                             f"got {batch_size}")
        if method == "flow":
            raise ValueError("argument `batch_size`: method='flow' uses the full batch, "
                             f"expected None, got {batch_size}")
    if record_every is not None:
        require_positive_int("record_every", record_every)


def minibatches(n: int, batch_size: int | None, steps: int, seed: int = 0) -> torch.Tensor | None:
    """The minibatch index sequence used by every simulator, shape (steps, batch_size).

    Sampling is without replacement within an epoch: each epoch is a fresh permutation of the n
    samples (from a ``torch.Generator`` seeded with ``seed``, on the CPU, so every device sees the
    same batches) cut into floor(n / batch_size) batches; the last n mod batch_size samples of each
    permutation are skipped. ``batch_size=None`` (full batch) returns None.
    """
    if batch_size is None:
        return None
    per_epoch = n // batch_size
    epochs = -(-steps // per_epoch)
    gen = torch.Generator().manual_seed(int(seed))
    perms = torch.rand(epochs, n, generator=gen, dtype=torch.float64).argsort(dim=1)  # (epochs, n)
    return perms[:, :per_epoch * batch_size].reshape(-1, batch_size)[:steps]


# --- ODE step shared with the Lotka-Volterra solvers -----------------------------------------------

def _axpy(state: State, h: float, rate: State) -> State:
    return tuple(x + h * k for x, k in zip(state, rate))


def rk4_step(rhs: Callable[[State], State], state: State, h: float, k1: State | None = None) -> State:
    """One classical Runge-Kutta step (order 4) for a state that is a tuple of tensors.

    ``k1`` may be passed when rhs(state) is already known.
    """
    k1 = rhs(state) if k1 is None else k1
    k2 = rhs(_axpy(state, h / 2, k1))
    k3 = rhs(_axpy(state, h / 2, k2))
    k4 = rhs(_axpy(state, h, k3))
    return tuple(x + (h / 6) * (a + 2 * b + 2 * c + e) for x, a, b, c, e in zip(state, k1, k2, k3, k4))


# --- the systems: one step of each method ------------------------------------------------------------

class _MSpace:
    """GD / SGD / flow on (M,) or, for the general form, on (M, mu) with width d."""

    def __init__(self, data: _Data, lr: float, method: str, width: int | None):
        self.data, self.lr, self.method, self.width = data, lr, method, width
        self.eye = torch.eye(data.p, dtype=data.A.dtype, device=data.A.device)
        self.A_T = data.A_flat.T.contiguous()                              # (p * p, n)

    def _plain_step(self, M: torch.Tensor, idx: torch.Tensor | None) -> tuple[torch.Tensor, State]:
        """M+ = P M P, P = I - 2 lr G: the hot loop of the benchmark, in as few tensor ops as possible."""
        data = self.data
        f = torch.addmv(data.f0, data.A_flat, M.view(-1))                  # f0 + Tr[M A_mu]: (n,)
        r = f - data.y
        if idx is None:
            S, b = torch.mv(self.A_T, r), data.n                           # b G, flattened
        else:
            S, b = torch.mv(data.A_flat[idx].T, r[idx]), idx.shape[0]
        P = torch.add(self.eye, S.view(data.p, data.p), alpha=-2 * self.lr / b)   # I - 2 lr G
        return f, (P @ M @ P,)

    def predict(self, state: State) -> torch.Tensor:
        return self.data.predict(*state)

    def observe(self, state: State) -> tuple[torch.Tensor, torch.Tensor | None]:
        return state[0], (state[1] if len(state) > 1 else None)

    def rhs(self, state: State, f: torch.Tensor | None = None) -> State:
        f = self.predict(state) if f is None else f
        M, mu = self.observe(state)
        G, h = self.data.gradient_parts(f - self.data.y, None, mu)
        GM = G @ M
        dM = -2 * (GM + GM.T)                                              # -2 (G M + M G)
        if mu is None:
            return (dM,)
        hmu = torch.outer(h, mu)
        return dM - (hmu + hmu.T), -2 * G @ mu - self.width * h

    def step(self, state: State, idx: torch.Tensor | None) -> tuple[torch.Tensor, State]:
        if self.method == "gd" and len(state) == 1:
            return self._plain_step(state[0], idx)
        f = self.predict(state)                                            # (n,)
        if self.method == "flow":
            return f, rk4_step(self.rhs, state, self.lr, self.rhs(state, f))
        M, mu = self.observe(state)
        G, h = self.data.gradient_parts(f - self.data.y, idx, mu)
        P = torch.add(self.eye, G, alpha=-2 * self.lr)                     # I - 2 lr G
        PM = P @ M
        if mu is None:
            return f, (PM @ P,)
        Pmu = P @ mu
        cross = torch.outer(Pmu, h)
        M_new = PM @ P - self.lr * (cross + cross.T) + self.lr ** 2 * self.width * torch.outer(h, h)
        return f, (M_new, Pmu - self.lr * self.width * h)


class _WSpace:
    """GD / SGD / Adam / flow on W with gradients from autograd (the oracle for M space)."""

    def __init__(self, data: _Data, lr: float, method: str, optimizer: str,
                 betas: tuple[float, float], eps: float):
        self.data, self.lr, self.method, self.optimizer = data, lr, method, optimizer
        self.betas, self.eps, self.t = betas, eps, 0
        self.general = data.g is not None or data.B is not None

    def predict_W(self, W: torch.Tensor) -> torch.Tensor:
        mu = W.sum(dim=1) if self.general else None                        # (p,)
        return self.data.predict(W @ W.T, mu)

    def predict(self, state: State) -> torch.Tensor:
        return self.predict_W(state[0])

    def observe(self, state: State) -> tuple[torch.Tensor, torch.Tensor | None]:
        W = state[0]
        return W @ W.T, (W.sum(dim=1) if self.general else None)

    def _grad(self, W: torch.Tensor, idx: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        W = W.detach().requires_grad_(True)
        f = self.predict_W(W)                                               # (n,)
        r = f - self.data.y
        r = r if idx is None else r[idx]
        (grad,) = torch.autograd.grad(0.5 * (r * r).mean(), W)             # dL/dW on the batch
        return f.detach(), grad

    def rhs(self, state: State) -> State:
        return (-self._grad(state[0], None)[1],)

    def step(self, state: State, idx: torch.Tensor | None) -> tuple[torch.Tensor, State]:
        W = state[0]
        f, grad = self._grad(W, idx)
        if self.method == "flow":
            return f, rk4_step(self.rhs, state, self.lr, (-grad,))
        if self.optimizer == "sgd":
            return f, (W - self.lr * grad,)
        _, m, v = state                                                    # Adam, torch.optim defaults
        (b1, b2), self.t = self.betas, self.t + 1
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        m_hat, v_hat = m / (1 - b1 ** self.t), v / (1 - b2 ** self.t)
        return f, (W - self.lr * m_hat / (v_hat.sqrt() + self.eps), m, v)


# --- the training loop -------------------------------------------------------------------------------

def ntk_lambda_max(A: torch.Tensor, M: torch.Tensor, iters: int = 100) -> float:
    """Largest eigenvalue of the kernel K_{mu nu} = (4/n) Tr[A_mu M A_nu] (power iteration).

    Linearising f around M, one GD step maps residuals r -> (I - lr K) r, so GD is stable for
    lr < 2 / lambda_max(K) (and RK4 gradient flow for lr < 2.785 / lambda_max(K)). Chapter 3.
    """
    n, p = A.shape[0], A.shape[1]
    A_flat = A.reshape(n, p * p)
    v = torch.ones(n, dtype=A.dtype, device=A.device) / n ** 0.5
    lam = torch.zeros((), dtype=A.dtype, device=A.device)
    for _ in range(iters):
        S = torch.mv(A_flat.T, v).view(p, p)                               # sum_nu v_nu A_nu
        Kv = (4.0 / n) * torch.mv(A_flat, (S @ M).reshape(-1))             # (n,)
        lam = Kv.norm()
        if lam == 0:
            return 0.0
        v = Kv / lam
    return float(lam)


def check_divergence(step: int, loss: float, initial: float, lr: float) -> None:
    """Raise :class:`DivergenceError` if ``loss`` is non-finite or above 1e6 times ``initial``.

    The check of the simulators that have no M-space kernel to estimate a stable step from (the
    two-layer networks, the square network, the NTK-drift runs); it suggests lr / 4.
    """
    if math.isfinite(loss) and loss <= DIVERGENCE_FACTOR * max(initial, 1e-300):
        return
    raise DivergenceError(
        f"training diverged at step {step}: loss {loss:.3g} (initial loss {initial:.3g}) with "
        f"lr = {lr:g}. Try a smaller step, e.g. lr = {lr / 4:.3g}", step, lr, lr / 4)


def _divergence(system: Any, state: State, step: int, value: float, initial: float, lr: float,
                method: str) -> DivergenceError:
    M, _ = system.observe(state)
    lam = ntk_lambda_max(system.data.A, M.detach())
    bound = (_RK4_STABLE if method == "flow" else 2.0) / lam if lam > 0 else float("inf")
    suggested = min(lr / 4, 0.5 * bound)
    return DivergenceError(
        f"training diverged at step {step}: loss {value:.3g} (initial loss {initial:.3g}) with "
        f"lr = {lr:g}. Try lr <= {suggested:.3g} (lr / 4 = {lr / 4:.3g}; the linear-stability bound "
        f"{'2.785' if method == 'flow' else '2'} / lambda_max(K) = {bound:.3g} from the kernel "
        f"K = (4/n) Tr[A_mu M A_nu] at the last checked step)", step, lr, suggested)


def _record_points(steps: int, record_every: int | None) -> set[int]:
    if record_every is None:
        return set()
    return set(range(0, steps + 1, record_every)) | {steps}


def _run(system: Any, state: State, steps: int, batches: torch.Tensor | None,
         record_every: int | None, lr: float, method: str) -> tuple[State, dict]:
    """Loop over steps; record losses and trajectories; check for divergence every 64 steps."""
    y, n = system.data.y, system.data.n
    points = _record_points(steps, record_every)
    norms: list[torch.Tensor] = []                                     # |f - y| at each step
    rec: dict[str, list] = {"steps": [], "f": [], "M": [], "mu": []}
    good_state, checked, initial, limit = state, 0, None, None
    for t in range(steps + 1):
        if t < steps:
            f, new_state = system.step(state, None if batches is None else batches[t])
        else:
            f, new_state = system.predict(state).detach(), state
        norms.append(torch.dist(f, y))                                 # L = |f - y|^2 / (2n)
        if t in points:
            M, mu = system.observe(state)
            rec["steps"].append(t), rec["f"].append(f), rec["M"].append(M.detach())
            rec["mu"].append(None if mu is None else mu.detach())
        if t == 0:
            initial = 0.5 / n * float(norms[0]) ** 2
            limit = DIVERGENCE_FACTOR * max(initial, torch.finfo(y.dtype).eps)
            if not np.isfinite(initial):
                raise ValueError("argument `A`: the initial loss is not finite; check the data and "
                                 "the initial weights")
        if t % _CHECK_EVERY == 0 or t == steps:
            chunk = torch.stack(norms[checked:]).cpu().double().square() * (0.5 / n)
            bad = ~torch.isfinite(chunk) | (chunk > limit)
            if bad.any():
                k = checked + int(bad.nonzero()[0, 0])
                raise _divergence(system, good_state, k, float(chunk[k - checked]), initial, lr,
                                  method)
            good_state, checked = state, t + 1
        state = new_state
    return state, {"loss": torch.stack(norms).double().square() * (0.5 / n), **rec}


def _result(state: State, out: dict, system: Any, lr: float, keep_W: bool) -> TrainingResult:
    M, mu = system.observe(state)
    loss = out["loss"].detach().cpu().double().numpy()
    if not out["steps"]:
        return TrainingResult(loss=loss, M=M.detach(), W=state[0] if keep_W else None, mu=mu)
    steps = np.asarray(out["steps"], dtype=np.int64)
    mu_traj = torch.stack(out["mu"]) if mu is not None else None
    return TrainingResult(loss=loss, M=M.detach(), W=state[0] if keep_W else None,
                          mu=None if mu is None else mu.detach(), steps=steps, times=lr * steps,
                          f=torch.stack(out["f"]), M_traj=torch.stack(out["M"]), mu_traj=mu_traj)


# --- public simulators ----------------------------------------------------------------------------------

def simulate_W(
    A: Any, y: Any, W0: Any, lr: float, steps: int, batch_size: int | None = None, seed: int = 0,
    f0: Any = 0.0, *, g: Any = None, B: Any = None, method: str = "gd", optimizer: str = "sgd",
    record_every: int | None = None, adam_betas: Sequence[float] = (0.9, 0.999),
    adam_eps: float = 1e-8, device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float64,
) -> TrainingResult:
    """Train the NQF in weight space, f_mu = f0 + g_mu.mu + mu^T B_mu mu + Tr[W^T A_mu W] (Chapter 3).

    Gradients come from autograd on L = (1/2n) sum_mu (f_mu - y_mu)^2 (so dL/dW = 2 G W + h 1^T, with
    G = (1/n) sum r_mu A_mu; see the module docstring). Methods: full-batch GD
    (``batch_size=None``), minibatch SGD (``batch_size=b``, batches from :func:`minibatches`), Adam
    (``optimizer="adam"``, torch.optim.Adam's update with ``adam_betas``, ``adam_eps``), and
    gradient flow dW/dt = -dL/dW (``method="flow"``: classical RK4 with time step ``lr``).

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
        optimizer: "sgd" (plain steps) or "adam" (discrete steps only).
        record_every: record f, M = W W^T (and mu) every k steps and at the last step.
        device: where to compute; None means the device of ``A`` if a tensor, else the default.
        dtype: torch.float64 (default) or torch.float32.

    Returns:
        A :class:`TrainingResult` with ``W`` (p, d) and ``M`` (p, p).

    Raises:
        ValueError: on a bad argument (the message names it).
        DivergenceError: if the loss becomes non-finite or exceeds 1e6 times its initial value.
    """
    dev = _resolve(A, device, dtype)
    data = _prepare(A, y, f0, g, B, dtype, dev)
    W0 = as_tensor("W0", W0, ndim=2, dtype=dtype, device=dev)
    require_shape("W0", W0, (data.p, None))
    _check_options(data.n, lr, steps, batch_size, method, optimizer, record_every)
    system = _WSpace(data, float(lr), method, optimizer, tuple(adam_betas), adam_eps)
    state = (W0, torch.zeros_like(W0), torch.zeros_like(W0)) if optimizer == "adam" else (W0,)
    batches = minibatches(data.n, batch_size, steps, seed)
    batches = None if batches is None else batches.to(dev)
    state, out = _run(system, state, steps, batches, record_every, float(lr), method)
    return _result(state, out, system, float(lr), keep_W=True)


def _simulate_m_space(A, y, M0, mu0, width, lr, steps, batch_size, seed, f0, g, B, method,
                      record_every, device, dtype) -> TrainingResult:
    dev = _resolve(A, device, dtype)
    data = _prepare(A, y, f0, g, B, dtype, dev)
    M0 = as_tensor("M0", M0, ndim=2, dtype=dtype, device=dev)
    require_shape("M0", M0, (data.p, data.p))
    require_psd("M0", M0)
    state: State = ((M0 + M0.T) / 2,)
    if mu0 is not None:
        mu0 = as_tensor("mu0", mu0, ndim=1, dtype=dtype, device=dev)
        require_shape("mu0", mu0, (data.p,))
        state = (state[0], mu0)
    _check_options(data.n, lr, steps, batch_size, method, "sgd", record_every)
    system = _MSpace(data, float(lr), method, width)
    batches = minibatches(data.n, batch_size, steps, seed)
    batches = None if batches is None else batches.to(dev)
    state, out = _run(system, state, steps, batches, record_every, float(lr), method)
    return _result(state, out, system, float(lr), keep_W=False)


def simulate_M(
    A: Any, y: Any, M0: Any, lr: float, steps: int, batch_size: int | None = None, seed: int = 0,
    f0: Any = 0.0, *, method: str = "gd", record_every: int | None = None,
    device: torch.device | str | None = None, dtype: torch.dtype = torch.float64,
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
    return _simulate_m_space(A, y, M0, None, None, lr, steps, batch_size, seed, f0, None, None,
                             method, record_every, device, dtype)


def simulate_M_mu(
    A: Any, y: Any, M0: Any, mu0: Any, width: int, lr: float, steps: int,
    batch_size: int | None = None, seed: int = 0, f0: Any = 0.0, *, g: Any = None, B: Any = None,
    method: str = "gd", record_every: int | None = None,
    device: torch.device | str | None = None, dtype: torch.dtype = torch.float64,
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
    return _simulate_m_space(A, y, M0, mu0, width, lr, steps, batch_size, seed, f0, g, B, method,
                             record_every, device, dtype)
