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

from ._modules import Module, leaves, prepare_call, sample, scalar_output
from ._validate import (
    as_tensor, require_choice, require_positive, require_positive_int, require_seed, require_shape,
)
from .activations import get_activation
from .device import resolve_device
from .training import State, WeightSpace, make_optimizer, minibatches, record_points, train

MODELS = ("network", "nqf")
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
    gen = torch.Generator().manual_seed(require_seed("seed", seed))
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
    """dL/dU and dL/dV of L = (1/2b) sum |phi(X U) V - Y|^2 on one batch (module docstring)."""
    Z = X @ U
    H = _hidden(act, model, Z)
    R = (H @ V - Y) / X.shape[0]                                         # (b, K)
    return X.T @ ((R @ V.T) * _slope(act, model, Z, H)), H.T @ R


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


# --- any module f(W, x), trained next to its NQF ---------------------------------------------------

ModuleStream = Callable[[int], tuple[Any, Any]]


@dataclass(frozen=True)
class ModuleRun:
    """What :func:`train_module` returns.

    For ``stacked=True`` every array has a run axis R after the step axis (T, R, ...)
    and the loss is (R, T); :meth:`run` cuts one run out.

    Attributes:
        steps: recorded step indices (NumPy int, (T,)).
        loss: the loss (1/2n) sum (f - y)^2 on (xs, y) at those steps (NumPy, (T,) or
            (R, T)).
        W: final weights, the shape of W0.
        outputs: f(W, x_mu) at the recorded steps, (T, n) or (T, R, n).
        M_traj: W W^T at the recorded steps, (T, p, p) or (T, R, p, p); None when not
            recorded (``record_M=False``, or a module whose weights are a flat vector).
        W_traj: the weights at the recorded steps, (T, *W.shape), or None.
        stacked: whether the first axis of W holds independent runs.
    """

    steps: np.ndarray
    loss: np.ndarray
    W: torch.Tensor
    outputs: torch.Tensor
    M_traj: torch.Tensor | None
    W_traj: torch.Tensor | None
    stacked: bool = False

    def run(self, r: int) -> "ModuleRun":
        """Run r of a stacked training, as the :class:`ModuleRun` of that run alone."""
        if not self.stacked:
            raise ValueError("argument `r`: this ModuleRun holds one run (not stacked)")
        R = self.W.shape[0]
        r = require_positive_int("r", r, minimum=0)
        if r >= R:
            raise ValueError(f"argument `r`: expected a run index in [0, {R}), got {r}")
        return ModuleRun(steps=self.steps, loss=self.loss[r], W=self.W[r],
                         outputs=self.outputs[:, r],
                         M_traj=None if self.M_traj is None else self.M_traj[:, r],
                         W_traj=None if self.W_traj is None else self.W_traj[:, r])


def _batched(f: Module, xs: Any, n: int,
             stacked: bool = False) -> Callable[[torch.Tensor], torch.Tensor]:
    """W -> (f(W, x_mu))_mu, (n,) or (R, n) for stacked W.

    A module with a method ``batch(xs)`` (e.g. :class:`nqf_mini.surrogates.NQFModule`)
    supplies its own predictor; otherwise torch.func.vmap over the samples (and the
    runs), with a loop where vmap fails.
    """
    own = getattr(f, "batch", None)
    if callable(own):
        return own(xs)
    mapped = torch.func.vmap(f, in_dims=(None, 0))
    split = [sample(xs, i) for i in range(n)]

    def one(W: torch.Tensor) -> torch.Tensor:
        try:
            return mapped(W, xs).reshape(n)
        except RuntimeError:            # modules vmap cannot trace: call per sample
            return torch.stack([scalar_output(f(W, x)) for x in split])

    if not stacked:
        return one
    over_runs = torch.func.vmap(mapped, in_dims=(0, None))

    def predict(W: torch.Tensor) -> torch.Tensor:
        try:
            return over_runs(W, xs).reshape(W.shape[0], n)
        except RuntimeError:
            return torch.stack([one(w) for w in W])
    return predict


Observe = Callable[[torch.Tensor, torch.Tensor], dict[str, torch.Tensor]]
OnBatch = Callable[[torch.Tensor, Any], tuple[torch.Tensor, torch.Tensor]]


class _ModuleSpace(WeightSpace):
    """:class:`~nqf_mini.training.WeightSpace` for :func:`train_module`: R stacked runs
    (the loss is the sum of the runs' losses, so each run gets its own gradient) and
    fresh batches from a stream, ``batch = (xs_t, y_t)``."""

    def __init__(self, predict: Callable[[torch.Tensor], torch.Tensor], y: torch.Tensor,
                 observe: Observe, on_batch: OnBatch):
        super().__init__(predict, y, observe)
        self.on_batch = on_batch
        self.loss_scale = 0.5 / y.shape[-1]            # the sum of the runs' losses

    def gradient(self, state: State, batch: Any) -> tuple[torch.Tensor | None, State]:
        W = state[0].detach().requires_grad_(True)
        full = None
        with torch.enable_grad():
            if isinstance(batch, tuple):               # a fresh batch from a stream
                f_b, y_b = self.on_batch(W, batch)
                r = f_b - y_b
            else:
                full = self.predict(W)                 # (n,) or (R, n)
                r = full - self.y
                r = r if batch is None else r[..., batch]
            (grad,) = torch.autograd.grad(0.5 * (r * r).mean(-1).sum(), W)
        return (None if full is None else full.detach()), (grad,)


def _module_targets(name: str, y: Any, W: torch.Tensor, stacked: bool) -> torch.Tensor:
    """Targets (n,) (shared by all runs) or, for stacked runs, (R, n)."""
    y = as_tensor(name, y, dtype=W.dtype, device=W.device)
    if y.ndim == 1 or (stacked and y.ndim == 2 and y.shape[0] == W.shape[0]):
        return y
    want = f"(n,) or (R, n) with R = {W.shape[0]}" if stacked else "(n,)"
    raise ValueError(f"argument `{name}`: expected shape {want}, got {tuple(y.shape)}")


def _sample_count(name: str, xs: Any, n: int) -> None:
    sizes = {leaf.shape[0] if leaf.ndim else 0 for leaf in leaves(xs)
             if isinstance(leaf, torch.Tensor)}
    if sizes != {n}:
        raise ValueError(f"argument `{name}`: expected a leading sample dimension "
                         f"n = {n} like the targets in every tensor, got sizes "
                         f"{sorted(sizes)}")


def train_module(
    f: Module, xs: Any, y: Any, W0: Any, *, lr: float, steps: int, optimizer: str = "sgd",
    batch_size: int | None = None, seed: int = 0, stream: ModuleStream | None = None,
    stacked: bool = False, record_every: int | None = 1,
    record_steps: Sequence[int] | None = None, record_weights: bool = False,
    record_M: bool = True, adam_betas: Sequence[float] = (0.9, 0.999),
    adam_eps: float = 1e-8,
) -> ModuleRun:
    """Train a module f(W, x) on L = (1/2n) sum_mu (f(W, x_mu) - y_mu)^2 (Ch. 2, 8, 9).

    Gradient descent, seeded minibatch SGD, online SGD on a stream, or Adam in weight
    space, with gradients from autograd (:class:`nqf_mini.training.WeightSpace`, the
    loop :func:`nqf_mini.training.train`). The minibatches are those of
    :func:`nqf_mini.simulate_W` for the same ``seed``, so a network and its NQF
    (:func:`nqf_mini.module_pair`, or ``simulate_W`` on its structure matrices) trained
    from the same W0 see the same batches.

    Args:
        f: the module, f(W, x) -> scalar, W of shape (p, d) with the units as columns
            (or one flat parameter vector (P,), as for the deep networks of Chapter 9).
            A module with a method ``batch(xs)`` returning W -> predictions on all
            samples is evaluated by it.
        xs: the n inputs with a leading sample dimension: a tensor (n, ...) or a tuple
            of them. With a stream they only serve to record the loss and outputs.
        y: targets (n,), or (R, n) for stacked runs with their own targets.
        W0: initial weights (p, d) or (P,); its dtype and device are used throughout.
            With ``stacked=True`` its first axis holds R independent runs.
        lr, optimizer, adam_betas, adam_eps: as in :func:`nqf_mini.simulate_W` ("sgd"
            is a plain gradient step, on the full batch, a minibatch or a stream batch).
        steps: number of steps.
        batch_size, seed: minibatches of (xs, y) (None: the full batch).
        stream: online SGD: step t trains on the fresh batch ``stream(t) -> (xs_t,
            y_t)``, y_t of shape (b,) or (R, b) (not together with ``batch_size``).
        stacked: train the R runs of W0 at once. The loss minimised is the sum of the
            runs' losses, so each run follows its own gradient (and its own Adam
            moments): the runs are exactly those trained one at a time.
        record_every / record_steps: which steps to record (see
            :func:`train_two_layer`).
        record_weights: also keep W at the recorded steps.
        record_M: keep M = W W^T at the recorded steps (for W of shape (p, d)).

    Returns:
        A :class:`ModuleRun`.

    Raises:
        ValueError: on a bad argument (the message names it).
        DivergenceError: if the summed loss becomes non-finite or exceeds 1e6 times its
            initial value.
    """
    W = as_tensor("W0", W0).clone()
    if not isinstance(stacked, bool):
        raise TypeError(f"argument `stacked`: expected True or False, got {stacked!r}")
    if W.ndim not in ((2, 3) if stacked else (1, 2)):
        want = "(R, p, d) or (R, P)" if stacked else "(p, d) or (P,)"
        raise ValueError(f"argument `W0`: expected shape {want}, got {tuple(W.shape)}")
    units = W.ndim == (3 if stacked else 2)             # columns are units: M = W W^T
    y = _module_targets("y", y, W, stacked)
    xs, _ = prepare_call(f, xs, W.dtype, W.device)
    n = y.shape[-1]
    _sample_count("xs", xs, n)
    predict = _batched(f, xs, n, stacked)
    try:
        predict(W)
    except (RuntimeError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(f"argument `xs`: f(W0, x) failed on the data ({exc}); check "
                         "that every sample of `xs` is what `f` expects") from exc
    opt = make_optimizer("gd", optimizer, lr, adam_betas, adam_eps)
    steps = require_positive_int("steps", steps)
    record = record_points(steps, None if record_steps is not None else record_every,
                           record_steps)
    if stream is not None:
        if batch_size is not None:
            raise ValueError("argument `batch_size`: give either batch_size "
                             "(minibatches of xs, y) or stream (fresh batches), not "
                             "both")
        if not callable(stream):
            raise TypeError(f"argument `stream`: expected a function t -> (xs_t, y_t), "
                            f"got {type(stream).__name__}")

    def on_batch(W_: torch.Tensor,
                 batch: tuple[Any, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        xs_b, y_b = batch
        xs_b, _ = prepare_call(f, xs_b, W.dtype, W.device)
        y_b = _module_targets("stream", y_b, W, stacked)
        _sample_count("stream", xs_b, y_b.shape[-1])
        return _batched(f, xs_b, y_b.shape[-1], stacked)(W_), y_b

    def observe(W_: torch.Tensor, f_: torch.Tensor) -> dict[str, torch.Tensor]:
        out = {"f": f_, "loss": 0.5 * (f_ - y).square().mean(-1)}
        if record_M and units:
            out["M"] = W_ @ W_.transpose(-1, -2)
        if record_weights:
            out["W"] = W_.clone()
        return out

    batches: Any = stream
    if stream is None:
        idx = minibatches(n, batch_size, steps, seed)
        batches = None if idx is None else idx.to(W.device)
    trace = train(_ModuleSpace(predict, y, observe, on_batch), (W,), opt, steps,
                  batches=batches, record=record, every_step=stream is None)
    rec = trace.records
    loss = rec["loss"].double().cpu().numpy()                   # (T,) or (T, R)
    return ModuleRun(steps=trace.steps, loss=loss.T.copy() if stacked else loss,
                     W=trace.state[0], outputs=rec["f"], M_traj=rec.get("M"),
                     W_traj=rec.get("W"), stacked=stacked)
