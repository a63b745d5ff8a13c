"""Two-layer networks F(x) = V^T phi(U^T x) and their neural quadratic form, trained side by side.

The original network has hidden units w_i = (u_i, v_i), u_i in R^p (input weights), v_i in R^K (one
output weight per output channel):

    F_c(x) = sum_i v_ic phi(u_i . x),        c = 1, ..., K.

For an activation with phi(0) = 0 the unit's gradient vanishes at w_i = 0 (ZGZ), and Theorem 1 gives
the quadratic form F_c(x) = sum_i w_i^T A_c(x) w_i with the off-diagonal structure matrix
A_c(x) = (phi'(0) / 2) [[0, x e_c^T], [e_c x^T, 0]] (Chapters 1-2). Written out, the NQF of this
network is the two-layer *linear* network

    F_c^NQF(x) = phi'(0) sum_i v_ic (u_i . x) = phi'(0) (x^T U V)_c,

and the remainder F - F^NQF is O(|w|^3) (O(|w|^4) when phi''(0) = 0, as for tanh). Both are trained
here with the same code, the same initialisation and the same minibatches, on the loss

    L = (1 / 2n) sum_mu sum_c (F_c(x_mu) - Y_mu,c)^2,

which for K = 1 is the loss of :func:`nqf_mini.simulate_W`. Gradients are written out by hand
(dV = H^T R, dU = X^T ((R V^T) * phi'(X U)) with R = (F - Y) / batch), which is several times faster
than autograd for networks this small. Chapters 5-7 use this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import torch

from ._validate import as_tensor, require_positive, require_positive_int, require_shape
from .activations import get_activation
from .device import resolve_device
from .dynamics import check_divergence, minibatches

MODELS = ("network", "nqf")
OPTIMIZERS = ("sgd", "adam")
Stream = Callable[[int], tuple[torch.Tensor, torch.Tensor]]

_DERIVATIVES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "tanh": lambda z, h: 1.0 - h * h,
    "linear": lambda z, h: torch.ones_like(z),
    "sin": lambda z, h: torch.cos(z),
    "softplus0": lambda z, h: torch.sigmoid(z),
    "sigmoid": lambda z, h: h * (1.0 - h),
}


@dataclass(frozen=True)
class TwoLayerRun:
    """What :func:`train_two_layer` returns.

    Attributes:
        steps: recorded step indices 0, k, 2k, ... and the last step (NumPy int, (T,)).
        loss: the loss (1/2n) sum |F - Y|^2 on the evaluation data at those steps (NumPy, (T,)).
        outputs: F on the evaluation inputs at those steps, (T, n, K), or None.
        U: final input weights, (p, d).
        V: final output weights, (d, K).
        U_traj: input weights at the recorded steps, (T, p, d), or None.
        V_traj: output weights at the recorded steps, (T, d, K), or None.
        model: "network" or "nqf"; activation: the activation's name.
    """

    steps: np.ndarray
    loss: np.ndarray
    outputs: torch.Tensor | None
    U: torch.Tensor
    V: torch.Tensor
    U_traj: torch.Tensor | None
    V_traj: torch.Tensor | None
    model: str
    activation: str


def two_layer_init(p: int, d: int, K: int, scale: float, seed: int = 0,
                   dtype: torch.dtype = torch.float64,
                   device: torch.device | str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """I.i.d. Gaussian initial weights U0 (p, d) and V0 (d, K), every entry N(0, scale^2).

    Drawn on the CPU from ``torch.Generator().manual_seed(seed)``, so every device gets the same
    numbers. With this convention each unit starts with |w_i|^2 ~ (p + K) scale^2, so the mode
    strengths z_k(0) are Theta(scale^2) (the review's minor point 1: epsilon = scale^2).
    """
    p, d, K = (require_positive_int(name, v) for name, v in (("p", p), ("d", d), ("K", K)))
    scale = require_positive("scale", scale)
    gen = torch.Generator().manual_seed(int(seed))
    U0 = torch.randn(p, d, generator=gen, dtype=torch.float64) * scale
    V0 = torch.randn(d, K, generator=gen, dtype=torch.float64) * scale
    dev = resolve_device(device)
    return U0.to(device=dev, dtype=dtype), V0.to(device=dev, dtype=dtype)


def _check_model(model: str, activation: str) -> Any:
    if model not in MODELS:
        raise ValueError(f"argument `model`: expected one of {MODELS}, got {model!r}")
    act = get_activation(activation)
    if model == "nqf" and act.phi0 != 0.0:
        raise ValueError(f"argument `activation`: the NQF needs phi(0) = 0 (ZGZ), but "
                         f"{act.name}(0) = {act.phi0:g}")
    return act


def _hidden(act: Any, model: str, Z: torch.Tensor) -> torch.Tensor:
    """Hidden activations phi(Z) of the network, or phi'(0) Z for its NQF."""
    return act.phi1 * Z if model == "nqf" else act(Z)


def _slope(act: Any, model: str, Z: torch.Tensor, H: torch.Tensor) -> torch.Tensor:
    """phi'(Z) (written out where known, else from autograd, which works under torch.no_grad)."""
    if model == "nqf":
        return torch.full_like(Z, act.phi1)
    if act.name in _DERIVATIVES:
        return _DERIVATIVES[act.name](Z, H)
    with torch.enable_grad():
        Zg = Z.detach().requires_grad_(True)
        (slope,) = torch.autograd.grad(act(Zg).sum(), Zg)
    return slope


def two_layer_output(U: Any, V: Any, X: Any, activation: str = "tanh",
                     model: str = "network") -> torch.Tensor:
    """F = phi(X U) V (``model="network"``) or its NQF phi'(0) X U V (``model="nqf"``), (n, K).

    Args:
        U: input weights (p, d); V: output weights (d, K) (or (d,) for one output); X: inputs (n, p).
    """
    act = _check_model(model, activation)
    U = as_tensor("U", U, ndim=2)
    X = as_tensor("X", X, ndim=2, dtype=U.dtype, device=U.device)
    V = as_tensor("V", V, dtype=U.dtype, device=U.device)
    V = V[:, None] if V.ndim == 1 else V
    require_shape("X", X, (None, U.shape[0]))
    require_shape("V", V, (U.shape[1], None))
    return _hidden(act, model, X @ U) @ V


def _loss(act: Any, model: str, U: torch.Tensor, V: torch.Tensor, X: torch.Tensor,
          Y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    F = _hidden(act, model, X @ U) @ V
    return 0.5 * (F - Y).square().sum() / X.shape[0], F


def _gradients(act: Any, model: str, U: torch.Tensor, V: torch.Tensor, X: torch.Tensor,
               Y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """dL/dU and dL/dV of L = (1/2b) sum |phi(X U) V - Y|^2 on one batch (module docstring)."""
    Z = X @ U
    H = _hidden(act, model, Z)
    R = (H @ V - Y) / X.shape[0]                                         # (b, K)
    return X.T @ ((R @ V.T) * _slope(act, model, Z, H)), H.T @ R


class _Adam:
    """torch.optim.Adam's update (no weight decay), on a tuple of tensors."""

    def __init__(self, params: Sequence[torch.Tensor], betas: tuple[float, float], eps: float):
        self.b1, self.b2 = betas
        self.eps, self.t = eps, 0
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]

    def direction(self, grads: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        self.t += 1
        out = []
        for i, g in enumerate(grads):
            self.m[i] = self.b1 * self.m[i] + (1 - self.b1) * g
            self.v[i] = self.b2 * self.v[i] + (1 - self.b2) * g * g
            m_hat = self.m[i] / (1 - self.b1 ** self.t)
            v_hat = self.v[i] / (1 - self.b2 ** self.t)
            out.append(m_hat / (v_hat.sqrt() + self.eps))
        return out


def _prepare_data(X: Any, Y: Any, U0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    X = as_tensor("X", X, ndim=2, dtype=U0.dtype, device=U0.device)
    require_shape("X", X, (None, U0.shape[0]))
    Y = as_tensor("Y", Y, dtype=U0.dtype, device=U0.device)
    Y = Y[:, None] if Y.ndim == 1 else Y
    require_shape("Y", Y, (X.shape[0], None))
    return X, Y


def _check_training(lr: float, steps: int, batch_size: int | None, n: int, optimizer: str,
                    record_every: int, stream: Stream | None) -> None:
    require_positive("lr", lr)
    require_positive_int("steps", steps)
    require_positive_int("record_every", record_every)
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"argument `optimizer`: expected one of {OPTIMIZERS}, got {optimizer!r}")
    if batch_size is not None and stream is not None:
        raise ValueError("argument `batch_size`: give either batch_size (minibatches of X, Y) or "
                         "stream (fresh batches), not both")
    if batch_size is not None and not (isinstance(batch_size, int) and 1 <= batch_size <= n):
        raise ValueError(f"argument `batch_size`: expected None or an int in [1, {n}], got "
                         f"{batch_size!r}")


def train_two_layer(
    X: Any, Y: Any, U0: Any, V0: Any, *, lr: float, steps: int, activation: str = "tanh",
    model: str = "network", optimizer: str = "sgd", batch_size: int | None = None, seed: int = 0,
    stream: Stream | None = None, record_every: int = 1, record_outputs: bool = False,
    record_weights: bool = False, adam_betas: Sequence[float] = (0.9, 0.999),
    adam_eps: float = 1e-8,
) -> TwoLayerRun:
    """Train F = V^T phi(U^T x) (``model="network"``) or its NQF (``model="nqf"``) (Chapters 5-7).

    One step is W <- W - lr * dL/dW (``optimizer="sgd"``; full batch when ``batch_size`` is None,
    otherwise the seeded minibatches of :func:`nqf_mini.dynamics.minibatches`, the same sequence for
    both models) or Adam's step (``optimizer="adam"``, torch.optim.Adam's update). With ``stream``,
    step t trains on the fresh batch ``stream(t) -> (X_t, Y_t)`` (online SGD), and X, Y only serve to
    record the loss.

    Args:
        X: inputs (n, p); Y: targets (n, K) or (n,).
        U0, V0: initial weights (p, d) and (d, K) (see :func:`two_layer_init`); they fix the device
            and dtype.
        lr: learning rate; steps: number of steps.
        activation: a name from :data:`nqf_mini.ACTIVATIONS` with phi(0) = 0 for the NQF.
        model: "network" (the original) or "nqf" (its quadratic form, phi'(0) X U V).
        record_every: record the loss (and optionally outputs, weights) every k steps and at the end.

    Returns:
        A :class:`TwoLayerRun`.

    Raises:
        ValueError: on a bad argument (the message names it).
        DivergenceError: if the loss becomes non-finite or exceeds 1e6 times its initial value.
    """
    act = _check_model(model, activation)
    U = as_tensor("U0", U0, ndim=2).clone()
    V = as_tensor("V0", V0, dtype=U.dtype, device=U.device).clone()
    V = V[:, None] if V.ndim == 1 else V
    require_shape("V0", V, (U.shape[1], None))
    X, Y = _prepare_data(X, Y, U)
    require_shape("Y", Y, (X.shape[0], V.shape[1]))
    _check_training(lr, steps, batch_size, X.shape[0], optimizer, record_every, stream)
    batches = minibatches(X.shape[0], batch_size, steps, seed)
    batches = None if batches is None else batches.to(U.device)
    adam = _Adam((U, V), (float(adam_betas[0]), float(adam_betas[1])), adam_eps) \
        if optimizer == "adam" else None
    rec: dict[str, list] = {"steps": [], "loss": [], "F": [], "U": [], "V": []}
    initial = None
    for t in range(steps + 1):
        if t % record_every == 0 or t == steps:
            loss, F = _loss(act, model, U, V, X, Y)
            value = float(loss)
            initial = value if initial is None else initial
            check_divergence(t, value, initial, lr)
            rec["steps"].append(t), rec["loss"].append(value)
            if record_outputs:
                rec["F"].append(F)
            if record_weights:
                rec["U"].append(U.clone()), rec["V"].append(V.clone())
        if t == steps:
            break
        if stream is not None:
            Xb, Yb = _prepare_data(*stream(t), U)
        elif batches is not None:
            Xb, Yb = X[batches[t]], Y[batches[t]]
        else:
            Xb, Yb = X, Y
        gU, gV = _gradients(act, model, U, V, Xb, Yb)
        if adam is not None:
            gU, gV = adam.direction((gU, gV))
        U, V = U - lr * gU, V - lr * gV
    stack = (lambda key: torch.stack(rec[key]) if rec[key] else None)
    return TwoLayerRun(steps=np.asarray(rec["steps"], dtype=np.int64),
                       loss=np.asarray(rec["loss"], dtype=np.float64), outputs=stack("F"), U=U, V=V,
                       U_traj=stack("U"), V_traj=stack("V"), model=model, activation=act.name)


# --- comparing two runs: the network and its NQF ----------------------------------------------------

def relative_gap(a: Any, b: Any, axis: int | None = None) -> np.ndarray:
    """rms(a - b) / rms(b) along ``axis`` (all axes but the first when None): the gap of a from b.

    For recorded outputs of shape (T, n, K) this is the function gap at each recorded step; for two
    loss curves of shape (T,) pass them as (T, 1) or use :func:`loss_gap`.
    """
    a = np.asarray(torch.as_tensor(a).detach().cpu(), dtype=float)
    b = np.asarray(torch.as_tensor(b).detach().cpu(), dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"arguments `a`, `b`: expected equal shapes, got {a.shape} and {b.shape}")
    axes = tuple(range(1, a.ndim)) if axis is None else axis
    num = np.sqrt(np.mean((a - b) ** 2, axis=axes))
    den = np.sqrt(np.mean(b ** 2, axis=axes))
    return num / np.maximum(den, 1e-300)


def loss_gap(loss_a: Any, loss_b: Any) -> np.ndarray:
    """|L_a - L_b| / L_b at each recorded step: how far a network's loss is from its NQF's (Ch. 5, 7)."""
    a, b = np.asarray(loss_a, dtype=float), np.asarray(loss_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"arguments `loss_a`, `loss_b`: expected equal shapes, got {a.shape} and "
                         f"{b.shape}")
    return np.abs(a - b) / np.maximum(np.abs(b), 1e-300)


def first_exceeding(steps: Any, gap: Any, threshold: float = 0.1) -> int | None:
    """The first recorded step at which ``gap`` exceeds ``threshold`` (None if it never does)."""
    steps, gap = np.asarray(steps), np.asarray(gap, dtype=float)
    if steps.shape != gap.shape:
        raise ValueError(f"arguments `steps`, `gap`: expected equal shapes, got {steps.shape} and "
                         f"{gap.shape}")
    above = np.nonzero(gap > threshold)[0]
    return None if above.size == 0 else int(steps[above[0]])
