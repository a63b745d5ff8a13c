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

from ._validate import (
    as_tensor, describe, require_choice, require_positive, require_positive_int, require_shape,
)
from .activations import get_activation
from .device import resolve_device
from .training import State, make_optimizer, minibatches, record_points, train
from .seeds import generator

MODELS = ("network", "nqf")
Stream = Callable[[int], tuple[torch.Tensor, torch.Tensor]]

_DERIVATIVES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "tanh": lambda z, h: 1.0 - h * h,
    "linear": lambda z, h: torch.ones_like(z),
    "sin": lambda z, h: torch.cos(z),
    "softplus0": lambda z, h: torch.sigmoid(z),
    "sigmoid": lambda z, h: h * (1.0 - h),
    "tanh_no_cubic": lambda z, h: 1.0 - (h - z * z * z / 3.0) ** 2 + z * z,
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

    Drawn on the CPU from ``generator(seed)``, so every device gets the same
    numbers. With this convention each unit starts with |w_i|^2 ~ (p + K) scale^2, so the mode
    strengths z_k(0) are Theta(scale^2) (the review's minor point 1: epsilon = scale^2).
    """
    p, d, K = (require_positive_int(name, v) for name, v in (("p", p), ("d", d), ("K", K)))
    scale = require_positive("scale", scale)
    gen = generator(seed)
    U0 = torch.randn(p, d, generator=gen, dtype=torch.float64) * scale
    V0 = torch.randn(d, K, generator=gen, dtype=torch.float64) * scale
    dev = resolve_device(device)
    return U0.to(device=dev, dtype=dtype), V0.to(device=dev, dtype=dtype)


def _check_model(model: str, activation: str) -> Any:
    require_choice("model", model, MODELS)
    act = get_activation(activation, "activation")
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
    """dL/dU and dL/dV of L = (1/2b) sum |phi(X U) V - Y|^2 on one batch (module docstring);
    with a leading run axis on every argument, the gradients of each run's own loss."""
    Z = X @ U
    H = _hidden(act, model, Z)
    R = (H @ V - Y) / X.shape[-2]                                        # (b, K)
    # .mT: the same formula for stacked runs, X (R, b, p), U (R, p, d), V (R, d, K)
    return X.mT @ ((R @ V.mT) * _slope(act, model, Z, H)), H.mT @ R


def _prepare_data(X: Any, Y: Any, U0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    X = as_tensor("X", X, ndim=2, dtype=U0.dtype, device=U0.device)
    require_shape("X", X, (None, U0.shape[0]))
    Y = as_tensor("Y", Y, dtype=U0.dtype, device=U0.device)
    Y = Y[:, None] if Y.ndim == 1 else Y
    require_shape("Y", Y, (X.shape[0], None))
    return X, Y


class _TwoLayer:
    """The system trained by :func:`train_two_layer`: state (U, V), loss on the evaluation data."""

    def __init__(self, act: Any, model: str, X: torch.Tensor, Y: torch.Tensor,
                 record_outputs: bool, record_weights: bool):
        self.act, self.model, self.X, self.Y = act, model, X, Y
        self.record_outputs, self.record_weights = record_outputs, record_weights

    def gradient(self, state: State, batch: Any) -> tuple[None, State]:
        U, V = state
        if batch is None:
            Xb, Yb = self.X, self.Y
        elif isinstance(batch, torch.Tensor):
            Xb, Yb = self.X[batch], self.Y[batch]
        else:
            Xb, Yb = _prepare_data(*batch, U)                      # a fresh batch from a stream
        return None, _gradients(self.act, self.model, U, V, Xb, Yb)

    def measure(self, state: State, prediction: None,
                record: bool) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        U, V = state
        loss, F = _loss(self.act, self.model, U, V, self.X, self.Y)
        obs: dict[str, torch.Tensor] = {}
        if record and self.record_outputs:
            obs["F"] = F
        if record and self.record_weights:
            obs["U"], obs["V"] = U.clone(), V.clone()
        return loss, obs


def train_two_layer(
    X: Any, Y: Any, U0: Any, V0: Any, *, lr: float, steps: int, activation: str = "tanh",
    model: str = "network", optimizer: str = "sgd", batch_size: int | None = None, seed: int = 0,
    stream: Stream | None = None, record_every: int | None = None,
    record_steps: Sequence[int] | None = None, record_outputs: bool = False,
    record_weights: bool = False, adam_betas: Sequence[float] = (0.9, 0.999),
    adam_eps: float = 1e-8,
) -> TwoLayerRun:
    """Train F = V^T phi(U^T x) (``model="network"``) or its NQF (``model="nqf"``) (Chapters 5-7).

    One step is W <- W - lr * dL/dW (``optimizer="sgd"``; full batch when ``batch_size`` is None,
    otherwise the seeded minibatches of :func:`nqf_mini.training.minibatches`, the same sequence
    for both models) or Adam's step (``optimizer="adam"``, torch.optim.Adam's update). With
    ``stream``, step t trains on the fresh batch ``stream(t) -> (X_t, Y_t)`` (online SGD), and X, Y
    only serve to record the loss. The loop is :func:`nqf_mini.training.train`.

    Args:
        X: inputs (n, p); Y: targets (n, K) or (n,).
        U0, V0: initial weights (p, d) and (d, K) (see :func:`two_layer_init`); they fix the device
            and dtype.
        lr: learning rate; steps: number of steps.
        activation: a name from :data:`nqf_mini.activations.ACTIVATIONS` with phi(0) = 0 for the
            NQF.
        model: "network" (the original) or "nqf" (its quadratic form, phi'(0) X U V).
        record_every: record the loss (and optionally outputs, weights) every k steps and at the
            end (default 1); or
        record_steps: the steps to record, e.g. a logarithmic grid (with ``record_every=None``).

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
    opt = make_optimizer("gd", optimizer, lr, adam_betas, adam_eps)
    steps = require_positive_int("steps", steps)
    if batch_size is not None and stream is not None:
        raise ValueError("argument `batch_size`: give either batch_size (minibatches of X, Y) or "
                         "stream (fresh batches), not both")
    if stream is not None and not callable(stream):
        raise TypeError(f"argument `stream`: expected a function t -> (X_t, Y_t), got "
                        f"{type(stream).__name__}")
    record = record_points(steps, 1 if record_every is None and record_steps is None
                           else record_every, record_steps)
    batches = stream if stream is not None else minibatches(X.shape[0], batch_size, steps, seed)
    if isinstance(batches, torch.Tensor):
        batches = batches.to(U.device)
    system = _TwoLayer(act, model, X, Y, record_outputs, record_weights)
    trace = train(system, (U, V), opt, steps, batches=batches, record=record, every_step=False)
    rec = trace.records
    return TwoLayerRun(steps=trace.loss_steps, loss=trace.loss, outputs=rec.get("F"),
                       U=trace.state[0], V=trace.state[1], U_traj=rec.get("U"),
                       V_traj=rec.get("V"), model=model, activation=act.name)


# --- the square network: an exact NQF trained without forming A -------------------------------------

class _Square:
    """f(x) = |W^T x|^2 on data (X, y): dL/dW = (2/n) X^T diag(r) X W."""

    def __init__(self, X: torch.Tensor, y: torch.Tensor):
        self.X, self.y = X, y

    def _residual(self, W: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        H = self.X @ W                                                     # (n, d)
        return H, H.square().sum(1) - self.y                              # residuals (n,)

    def gradient(self, state: State, batch: None) -> tuple[None, State]:
        H, r = self._residual(state[0])
        return None, ((2.0 / self.X.shape[0]) * (self.X.T @ (r[:, None] * H)),)

    def measure(self, state: State, prediction: None,
                record: bool) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        return 0.5 * self._residual(state[0])[1].square().mean(), {}


def train_square_network(X: Any, y: Any, W0: Any, lr: float, steps: int, record_every: int = 1,
                         device: torch.device | str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gradient descent on f(x) = sum_i (w_i . x)^2 = |W^T x|^2, an exact NQF with A(x) = x x^T (Ch. 6).

    The same iteration as :func:`nqf_mini.simulate_W` with A_mu = x_mu x_mu^T and the loss
    L = (1/2n) sum_mu (f_mu - y_mu)^2 (dL/dW = (2/n) X^T diag(r) X W), but without forming the n
    matrices A_mu: one step costs O(n p d) instead of O(n p^2 d).

    Args:
        X: inputs (n, p); y: targets (n,); W0: initial weights (p, d), units are columns.
        lr: learning rate (time t = lr * step); steps: number of steps.
        record_every: record the loss every k steps and at the last step.

    Returns:
        (steps, loss): NumPy arrays of the recorded step indices and losses.

    Raises:
        DivergenceError: if the loss becomes non-finite or exceeds 1e6 times its initial value.
    """
    dev = resolve_device(device)
    W = as_tensor("W0", W0, ndim=2, dtype=torch.float64, device=dev).clone()
    X = as_tensor("X", X, ndim=2, dtype=torch.float64, device=dev)
    require_shape("X", X, (None, W.shape[0]))
    y = as_tensor("y", y, ndim=1, dtype=torch.float64, device=dev)
    require_shape("y", y, (X.shape[0],))
    steps = require_positive_int("steps", steps)
    trace = train(_Square(X, y), (W,), make_optimizer("gd", "sgd", lr), steps,
                  record=record_points(steps, record_every), every_step=False)
    return trace.loss_steps, trace.loss


# --- stacked runs: R independent networks (an ensemble) trained at once -----------------------------

@dataclass(frozen=True)
class StackedTwoLayerRun(TwoLayerRun):
    """What :func:`train_two_layer_stacked` returns: the fields of :class:`TwoLayerRun` for R
    runs, every array with a run axis.

    Attributes:
        steps: recorded step indices (NumPy int, (T,)).
        loss: each run's loss on its own evaluation data at those steps (NumPy, (R, T)).
        outputs: F at those steps, (T, R, n, K), or None.
        U, V: final weights, (R, p, d) and (R, d, K).
        U_traj, V_traj: weights at the recorded steps, (T, R, p, d) and (T, R, d, K), or None.
        model, activation: as in :class:`TwoLayerRun`.
    """

    def run(self, r: int) -> TwoLayerRun:
        """Run r alone, as the :class:`TwoLayerRun` that :func:`train_two_layer` would return."""
        R = self.U.shape[0]
        r = require_positive_int("r", r, minimum=0)
        if r >= R:
            raise ValueError(f"argument `r`: expected a run index in [0, {R}), got {r}")
        pick = (lambda x: None if x is None else x[:, r])
        return TwoLayerRun(steps=self.steps, loss=self.loss[r], outputs=pick(self.outputs),
                           U=self.U[r], V=self.V[r], U_traj=pick(self.U_traj),
                           V_traj=pick(self.V_traj), model=self.model,
                           activation=self.activation)


class _StackedTwoLayer(_TwoLayer):
    """R runs of :class:`_TwoLayer` at once; the monitored loss is the sum of the runs' losses."""

    def gradient(self, state: State, batch: Any) -> tuple[None, State]:
        U, V = state
        Xb, Yb = (self.X, self.Y) if batch is None else batch
        return None, _gradients(self.act, self.model, U, V, Xb, Yb)

    def measure(self, state: State, prediction: None,
                record: bool) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        U, V = state
        F = _hidden(self.act, self.model, self.X @ U) @ V                 # (R, n, K)
        losses = 0.5 * (F - self.Y).square().sum((-2, -1)) / self.X.shape[-2]
        obs: dict[str, torch.Tensor] = {"loss": losses} if record else {}
        if record and self.record_outputs:
            obs["F"] = F
        if record and self.record_weights:
            obs["U"], obs["V"] = U.clone(), V.clone()
        return losses.sum(), obs


def train_two_layer_stacked(
    X: Any, Y: Any, U0: Any, V0: Any, *, lr: float, steps: int, activation: str = "tanh",
    model: str = "network", stream: Stream | None = None,
    record_every: int | None = None, record_steps: Sequence[int] | None = None,
    record_outputs: bool = False, record_weights: bool = False,
) -> StackedTwoLayerRun:
    """Train R independent two-layer networks (or NQFs) at once: an ensemble (Chapter 7).

    Run r is exactly :func:`train_two_layer` with ``U0[r], V0[r]`` on its own data: full-batch
    gradient descent on (X[r], Y[r]), or online SGD on the fresh batches ``stream(t)[r]``,
    W <- W - lr dL_r/dW with L_r = (1/2b) sum |V_r^T phi(U_r^T x) - y|^2 on the batch (the NQF:
    phi'(0) x^T U_r V_r). The R runs share one loop and one tensor with a leading run axis, so an
    ensemble of ten small networks costs little more per step than one.

    Args:
        X: evaluation inputs (n, p), shared by the runs, or (R, n, p).
        Y: each run's evaluation targets, (R, n) or (R, n, K).
        U0, V0: initial weights (R, p, d) and (R, d, K) (or (R, d) for one output).
        lr, steps, activation, model, record_every, record_steps, record_outputs,
            record_weights: as in :func:`train_two_layer`.
        stream: online SGD: t -> (X_t (R, b, p), Y_t (R, b) or (R, b, K)), run r training on
            X_t[r] (e.g. :func:`nqf_mini.teacher_student.stacked_online_stream`, one teacher
            per run); None trains each run on its own (X, Y) by full-batch gradient descent.

    Returns:
        A :class:`StackedTwoLayerRun`; ``.run(r)`` is run r alone.

    Raises:
        ValueError: on a bad argument (the message names it).
        DivergenceError: if the summed loss becomes non-finite or exceeds 1e6 times its initial
            value.
    """
    act = _check_model(model, activation)
    U = as_tensor("U0", U0, ndim=3).clone()
    R = U.shape[0]
    V = as_tensor("V0", V0, dtype=U.dtype, device=U.device).clone()
    V = V[..., None] if V.ndim == 2 else V
    require_shape("V0", V, (R, U.shape[2], None))
    X = as_tensor("X", X, dtype=U.dtype, device=U.device)
    require_shape("X", X, (None, U.shape[1]) if X.ndim == 2 else (R, None, U.shape[1]))
    Y = as_tensor("Y", Y, dtype=U.dtype, device=U.device)
    Y = Y[..., None] if Y.ndim == 2 else Y
    require_shape("Y", Y, (R, X.shape[-2], V.shape[2]))
    steps = require_positive_int("steps", steps)
    batches: Any = None
    if stream is not None:
        if not callable(stream):
            raise TypeError(f"argument `stream`: expected a function t -> (X_t, Y_t), got "
                            f"{describe(stream)}")

        def batches(t: int) -> tuple[torch.Tensor, torch.Tensor]:
            Xb, Yb = stream(t)
            Xb, Yb = Xb.to(U), Yb.to(U)
            if Xb.ndim != 3 or Xb.shape[0] != R or Yb.shape[:2] != Xb.shape[:2]:
                raise ValueError(f"argument `stream`: step {t} gave X_t {tuple(Xb.shape)} and "
                                 f"Y_t {tuple(Yb.shape)}, expected (R = {R}, b, p) and (R, b)")
            return Xb, (Yb[..., None] if Yb.ndim == 2 else Yb)

    record = record_points(steps, 1 if record_every is None and record_steps is None
                           else record_every, record_steps)
    system = _StackedTwoLayer(act, model, X, Y, record_outputs, record_weights)
    trace = train(system, (U, V), make_optimizer("gd", "sgd", lr), steps, batches=batches,
                  record=record, every_step=False)
    rec = trace.records
    return StackedTwoLayerRun(steps=trace.steps, loss=rec["loss"].T.cpu().double().numpy(),
                              outputs=rec.get("F"), U=trace.state[0], V=trace.state[1],
                              U_traj=rec.get("U"), V_traj=rec.get("V"), model=model,
                              activation=act.name)
