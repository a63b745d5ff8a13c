"""One training loop for every simulator of the package (Chapters 3 and 5-7).

A run has three parts:

* a **system**, what is trained: the NQF in weight space or in M space (:mod:`nqf_mini.dynamics`),
  a two-layer network or its NQF, the square network (:mod:`nqf_mini.networks`). It knows its loss
  and its gradient, and may replace gradient descent by an exact map and the gradient-flow velocity
  by its own (the M-space updates of Theorem 2);
* an **optimiser**, how one step moves the state. Three small frozen dataclasses:

      GD(lr)                 W <- W - lr dL/dW on the batch of the step (full batch: gradient
                             descent; minibatches: SGD)
      Adam(lr, betas, eps)   torch.optim.Adam's update, without weight decay
      Momentum(lr, beta)     heavy-ball momentum, torch.optim.SGD's form
      Flow(dt)               gradient flow dW/dt = -dL/dW, one classical RK4 step of length dt

* this module's loop :func:`train`: the minibatch schedule (:func:`minibatches`), what is recorded
  and when, and the divergence monitor, which raises :class:`DivergenceError` with advice instead of
  letting NaN through.

A state is a tuple of tensors, e.g. (W,), (M,), (M, mu), (U, V).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, overload
from collections.abc import Callable, Sequence

import numpy as np
import torch

from ._ode import rk4_step
from ._validate import (
    require_fraction,
    require_in_open_interval,
    require_memory,
    require_positive,
    require_positive_int,
    require_seed,
    require_steps,
    to_numpy,
)
from .seeds import generator

State = tuple
DIVERGENCE_FACTOR = 1e6  # loss above this multiple of the initial loss counts as divergence
CHECK_EVERY = 64  # measured losses between divergence checks (one host sync each)


class DivergenceError(ValueError):
    """Training blew up: the loss became non-finite or exceeded 1e6 times its initial value.

    Attributes:
        step: the first step at which the loss was bad.
        lr: the learning rate (or flow time step) used.
        suggested_lr: a smaller value to try (see the message for how it was estimated).
    """

    def __init__(self, message: str, step: int, lr: float, suggested_lr: float):
        super().__init__(message)
        self.step, self.lr, self.suggested_lr = step, lr, suggested_lr


# --- optimisers ----------------------------------------------------------------------------------


class System(Protocol):
    """What :func:`train` needs of a system (see the module docstring)."""

    def gradient(self, state: State, batch: Any) -> tuple[torch.Tensor | None, State]:
        """(the prediction on the full data at ``state``, or None; dL/dstate on ``batch``)."""

    def measure(
        self, state: State, prediction: torch.Tensor | None, record: bool
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """(the loss at ``state`` as a 0-d tensor; what to record there when ``record``).

        A system whose loss is c |f - y|^2 may report the norm |f - y| instead and set the
        attribute ``loss_scale = c``: the loop then squares and scales once per divergence
        check, not at every step (the M-space step costs only a few microseconds).
        """


@dataclass(frozen=True)
class GD:
    """Gradient descent, or SGD on minibatches: state <- state - lr * gradient.

    A system with a method ``gd_step(state, batch, lr) -> (prediction, new_state)`` (an exact
    update such as M+ = (I - 2 lr G) M (I - 2 lr G)) is stepped by that method instead.
    """

    lr: float

    def init(self, state: State) -> Any:
        return None

    def step(self, system: Any, state: State, memory: Any, batch: Any) -> tuple[Any, State, Any]:
        exact = getattr(system, "gd_step", None)
        if exact is not None:
            prediction, new = exact(state, batch, self.lr)
            return prediction, new, memory
        prediction, grad = system.gradient(state, batch)
        return prediction, tuple(x - self.lr * g for x, g in zip(state, grad)), memory


@dataclass(frozen=True)
class Adam:
    """torch.optim.Adam's update (no weight decay): bias-corrected moments m, v, and
    state <- state - lr m_hat / (sqrt(v_hat) + eps). Not equivariant under W -> W R (Chapter 3)."""

    lr: float
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8

    def init(self, state: State) -> Any:
        return (
            0,
            tuple(torch.zeros_like(x) for x in state),
            tuple(torch.zeros_like(x) for x in state),
        )

    def step(self, system: Any, state: State, memory: Any, batch: Any) -> tuple[Any, State, Any]:
        if not hasattr(system, "gradient"):
            raise ValueError(
                "argument `optimizer`: Adam needs the gradient with respect to the "
                "weights; M space has none (Adam does not close on M, Chapter 3)"
            )
        prediction, grad = system.gradient(state, batch)
        (b1, b2), (t, m, v) = self.betas, memory
        t += 1
        m = tuple(b1 * mi + (1 - b1) * g for mi, g in zip(m, grad))
        v = tuple(b2 * vi + (1 - b2) * g * g for vi, g in zip(v, grad))
        new = tuple(
            x - self.lr * (mi / (1 - b1**t)) / ((vi / (1 - b2**t)).sqrt() + self.eps)
            for x, mi, vi in zip(state, m, v)
        )  # x - lr m_hat / (sqrt(v_hat) + eps)
        return prediction, new, (t, m, v)


@dataclass(frozen=True)
class Momentum:
    """Heavy-ball momentum in torch.optim.SGD's form: buf <- beta buf + grad, state <- state - lr
    buf.

    Equivalently W+ = W - lr grad + beta (W - W_prev): linear in W and its gradient, so it commutes
    with W -> W R and closes on (M, W W_prev^T, W_prev W_prev^T) (Chapter 3).
    """

    lr: float
    beta: float = 0.9

    def init(self, state: State) -> Any:
        return tuple(torch.zeros_like(x) for x in state)

    def step(self, system: Any, state: State, memory: Any, batch: Any) -> tuple[Any, State, Any]:
        prediction, grad = system.gradient(state, batch)
        buf = tuple(self.beta * b + g for b, g in zip(memory, grad))
        return prediction, tuple(x - self.lr * b for x, b in zip(state, buf)), buf


@dataclass(frozen=True)
class Flow:
    """Gradient flow integrated by one classical RK4 step of length ``dt`` per step.

    The velocity is -gradient on the full data, or the system's ``velocity(state) ->
    (prediction, rates)`` when it has one (dM/dt = -2 (G M + M G) in M space).
    """

    dt: float

    @property
    def lr(self) -> float:
        return self.dt

    def init(self, state: State) -> Any:
        return None

    def step(self, system: Any, state: State, memory: Any, batch: Any) -> tuple[Any, State, Any]:
        velocity = getattr(system, "velocity", None)
        if velocity is None:

            def velocity(s: State) -> tuple[Any, State]:
                prediction, grad = system.gradient(s, None)
                return prediction, tuple(-g for g in grad)

        prediction, k1 = velocity(state)
        return prediction, rk4_step(lambda s: velocity(s)[1], state, self.dt, k1), memory


Optimizer = GD | Adam | Momentum | Flow
OPTIMIZERS = ("sgd", "adam", "momentum")


def make_optimizer(
    method: str,
    optimizer: str,
    lr: float,
    adam_betas: Sequence[float] = (0.9, 0.999),
    adam_eps: float = 1e-8,
    momentum: float = 0.9,
) -> Optimizer:
    """The optimiser named by a simulator's ``method`` ("gd", "flow") and ``optimizer`` ("sgd",
    "adam", "momentum") arguments. Every hyper-parameter is validated, also those the chosen
    optimiser does not use (a typo there is still a typo)."""
    lr = require_positive("lr", lr)
    if method not in ("gd", "flow"):
        raise ValueError(f"argument `method`: expected one of ['gd', 'flow'], got {method!r}")
    if not isinstance(optimizer, str) or optimizer not in OPTIMIZERS:
        raise ValueError(
            f"argument `optimizer`: expected one of {list(OPTIMIZERS)}, got {optimizer!r}"
        )
    beta = require_in_open_interval("momentum", momentum, 0.0, 1.0)
    if (
        isinstance(adam_betas, (str, bytes))
        or not hasattr(adam_betas, "__len__")
        or len(adam_betas) != 2
    ):
        raise ValueError(
            f"argument `adam_betas`: expected two numbers in (0, 1), got {adam_betas!r}"
        )
    betas = (
        require_fraction("adam_betas", adam_betas[0]),
        require_fraction("adam_betas", adam_betas[1]),
    )
    eps = require_positive("adam_eps", adam_eps)
    if method == "flow":
        if optimizer != "sgd":
            raise ValueError(
                "argument `optimizer`: method='flow' is plain gradient flow, "
                f"got optimizer={optimizer!r}"
            )
        return Flow(lr)
    if optimizer == "sgd":
        return GD(lr)
    if optimizer == "momentum":
        return Momentum(lr, beta)
    return Adam(lr, betas, eps)


# --- the weight-space system: any prediction, gradients by autograd -------------------------------


class WeightSpace:
    """State (W,) with the loss L = (1/2n) sum_mu (f_mu(W) - y_mu)^2, gradients from autograd.

    ``predict(W)`` returns the predictions f(W) on all n samples, (n,); ``observe(W, f)`` returns
    what to record at a recorded step. The NQF in weight space (:func:`nqf_mini.simulate_W`) and
    any module f(W, x) (:func:`nqf_mini.module_training.train_module`) are this system with
    different predictions.
    """

    def __init__(
        self,
        predict: Callable[[torch.Tensor], torch.Tensor],
        y: torch.Tensor,
        observe: Callable[[torch.Tensor, torch.Tensor], dict[str, torch.Tensor]],
    ):
        self.predict, self.y, self.observe = predict, y, observe
        self.loss_scale = 0.5 / y.shape[0]  # L = |f - y|^2 / 2n

    def gradient(self, state: State, idx: Any) -> tuple[torch.Tensor | None, State]:
        W = state[0].detach().requires_grad_(True)
        with torch.enable_grad():
            f = self.predict(W)  # (n,)
            r = f - self.y
            r = r if idx is None else r[idx]
            (grad,) = torch.autograd.grad(0.5 * (r * r).mean(), W)  # dL/dW on the batch
        return f.detach(), (grad,)

    def measure(
        self, state: State, f: torch.Tensor | None, record: bool
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        W = state[0]
        if f is None:
            with torch.no_grad():
                f = self.predict(W)
        return torch.dist(f, self.y), (self.observe(W.detach(), f) if record else {})


# --- minibatches and recording --------------------------------------------------------------------


@overload
def minibatches(n: int, batch_size: int, steps: int, seed: int = 0) -> torch.Tensor: ...
@overload
def minibatches(n: int, batch_size: None, steps: int, seed: int = 0) -> None: ...
@overload
def minibatches(
    n: int, batch_size: int | None, steps: int, seed: int = 0
) -> torch.Tensor | None: ...
def minibatches(n: int, batch_size: int | None, steps: int, seed: int = 0) -> torch.Tensor | None:
    """The minibatch index sequence used by every simulator, shape (steps, batch_size).

    Sampling is without replacement within an epoch: each epoch is a fresh permutation of the n
    samples (from a ``torch.Generator`` seeded with ``seed``, on the CPU, so every device sees the
    same batches) cut into floor(n / batch_size) batches; the last n mod batch_size samples of each
    permutation are skipped. ``batch_size=None`` (full batch) returns None.
    """
    n, steps, seed = (
        require_positive_int("n", n),
        require_steps("steps", steps),
        require_seed("seed", seed),
    )
    if batch_size is None:
        return None
    batch_size = require_positive_int("batch_size", batch_size)
    if batch_size > n:
        raise ValueError(
            f"argument `batch_size`: expected an integer between 1 and n = {n}, got {batch_size}"
        )
    per_epoch = n // batch_size
    epochs = -(-steps // per_epoch)
    require_memory("steps", 2.0 * epochs * n, what="the minibatch schedule")
    gen = generator(seed)
    perms = torch.rand(epochs, n, generator=gen, dtype=torch.float64).argsort(dim=1)  # (epochs, n)
    return perms[:, : per_epoch * batch_size].reshape(-1, batch_size)[:steps]


def record_points(
    steps: int, record_every: int | None = None, record_steps: Sequence[int] | None = None
) -> set[int]:
    """The steps to record: 0, k, 2k, ... and the last (``record_every=k``), or exactly
    ``record_steps`` (integers in [0, steps]); none when both are None."""
    if record_every is not None and record_steps is not None:
        raise ValueError(
            "argument `record_steps`: give either record_every or record_steps, not both"
        )
    if record_every is not None:
        k = require_positive_int("record_every", record_every)
        return set(range(0, steps + 1, k)) | {steps}
    if record_steps is None:
        return set()
    points = {require_positive_int("record_steps", s, minimum=0) for s in record_steps}
    if not points or max(points) > steps:
        raise ValueError(
            f"argument `record_steps`: expected steps in [0, {steps}], got "
            f"{sorted(points)[:3]}...{sorted(points)[-2:]}"
        )
    return points


def require_record_memory(
    n_records: int, per_record: int, dtype: torch.dtype, device: torch.device
) -> None:
    """Refuse a recording (``n_records`` records of ``per_record`` numbers each) that would not
    fit in the device's memory, naming ``record_every``."""
    require_memory(
        "record_every",
        float(n_records) * per_record,
        dtype=dtype,
        device=device,
        what=f"recording {n_records:,} steps",
    )


def growing_record_steps(
    steps: int, first_every: int = 2, factor: int = 4, per_stage: int = 50
) -> list[int]:
    """Steps to record for a log-time plot: every ``first_every`` steps for ``per_stage`` records,
    then ``factor`` times less often, and so on, plus the last step (Chapter 6)."""
    steps = require_positive_int("steps", steps)
    every = require_positive_int("first_every", first_every)
    factor = require_positive_int("factor", factor, minimum=2)
    per_stage = require_positive_int("per_stage", per_stage)
    out, done = {0}, 0
    while done < steps:
        length = min(per_stage * every, steps - done)
        out |= {done + s for s in range(0, length + 1, every)} | {done + length}
        done, every = done + length, every * factor
    return sorted(out)


@dataclass
class Trace:
    """What :func:`train` returns: the final state and what was recorded on the way.

    Attributes:
        state: the state after the last step taken.
        loss: the measured losses (NumPy float64), one per measured step.
        loss_steps: the steps at which they were measured (NumPy int64).
        steps: the recorded steps (NumPy int64).
        records: name -> tensor stacked over the recorded steps.
        last_step: the last step reached (< steps when ``stop_below`` stopped the run).
    """

    state: State
    loss: np.ndarray
    loss_steps: np.ndarray
    steps: np.ndarray
    records: dict[str, torch.Tensor] = field(default_factory=dict)
    last_step: int = 0


Advice = Callable[[State, float], tuple[float, str]]


def lr_quarter(state: State, lr: float) -> tuple[float, str]:
    """The default advice after a divergence: a quarter of the step."""
    return lr / 4, f"Try a smaller step, e.g. lr = {lr / 4:.3g}"


def train(
    system: Any,
    state: State,
    optimizer: Optimizer,
    steps: int,
    *,
    batches: torch.Tensor | Callable[[int], Any] | None = None,
    record: set[int] | None = None,
    every_step: bool = True,
    stop_below: float | None = None,
    advice: Advice = lr_quarter,
) -> Trace:
    """Run ``steps`` steps of ``optimizer`` on ``system`` from ``state`` (the module docstring).

    Args:
        batches: the batch of step t: ``batches[t]`` (rows of minibatch indices), ``batches(t)``
            (a stream of fresh data), or None (the full batch).
        record: the steps at which ``system.measure(..., record=True)`` is stored.
        every_step: measure the loss at every step (free when the step computes the prediction
            anyway, as for the NQF simulators), else only at the recorded steps.
        stop_below: stop at the first measured step with loss <= stop_below * initial loss.
        advice: (last good state, lr) -> (suggested lr, sentence) for the DivergenceError.

    Raises:
        DivergenceError: when a measured loss is non-finite or exceeds 1e6 times the initial loss
            (checked every 64 steps and at the end; the error names the first bad step).
    """
    record = record or set()
    memory = optimizer.init(state)
    scale = getattr(system, "loss_scale", None)  # loss = scale * measured^2 (see System)
    to_loss = (lambda m: m) if scale is None else (lambda m: scale * m.square())
    losses: list[torch.Tensor] = []
    loss_steps: list[int] = []
    recs: dict[str, list[torch.Tensor]] = {}
    good_state, checked, limit, threshold = state, 0, None, None
    for t in range(steps + 1):
        if t < steps:
            batch = (
                batches if batches is None else (batches(t) if callable(batches) else batches[t])
            )
            prediction, new_state, memory = optimizer.step(system, state, memory, batch)
        else:
            prediction, new_state = None, state
        if every_step or t in record or t == steps:
            measured, obs = system.measure(state, prediction, t in record)
            losses.append(measured)
            loss_steps.append(t)
            for key, value in obs.items():
                recs.setdefault(key, []).append(value)
            if limit is None:
                initial = float(to_loss(measured))
                if not np.isfinite(initial):
                    raise ValueError(
                        "the initial loss is not finite: the data or the initial "
                        "weights are too large for this dtype"
                    )
                limit = DIVERGENCE_FACTOR * max(initial, torch.finfo(measured.dtype).eps)
                threshold = None if stop_below is None else stop_below * initial
            if threshold is not None and float(to_loss(measured)) <= threshold:
                break  # state is the state at step t
        if t % CHECK_EVERY == 0 or t == steps:
            _check(losses, loss_steps, checked, limit, good_state, optimizer.lr, advice, to_loss)
            good_state, checked = state, len(losses)
        if t < steps:
            state = new_state
    _check(losses, loss_steps, checked, limit, good_state, optimizer.lr, advice, to_loss)
    return Trace(
        state=state,
        loss=to_numpy(to_loss(torch.stack(losses).double())),
        loss_steps=np.asarray(loss_steps, dtype=np.int64),
        steps=np.asarray(sorted(s for s in record if s <= t), dtype=np.int64),
        records={k: torch.stack(v) for k, v in recs.items()},
        last_step=t,
    )


def _check(
    losses: list[torch.Tensor],
    loss_steps: list[int],
    checked: int,
    limit: float | None,
    good_state: State,
    lr: float,
    advice: Advice,
    to_loss: Callable[[torch.Tensor], torch.Tensor],
) -> None:
    """Raise DivergenceError if a loss measured since index ``checked`` is bad."""
    if limit is None or checked >= len(losses):
        return
    chunk = to_loss(torch.stack(losses[checked:]).to("cpu", torch.float64))
    bad = ~torch.isfinite(chunk) | (chunk > limit)
    if not bool(bad.any()):
        return
    k = int(bad.nonzero()[0, 0])
    step, value = loss_steps[checked + k], float(chunk[k])
    initial = float(to_loss(losses[0].to("cpu", torch.float64)))
    suggested, sentence = advice(good_state, lr)
    raise DivergenceError(
        f"training diverged at step {step}: loss {value:.3g} (initial loss "
        f"{initial:.3g}) with lr = {lr:g}. {sentence}",
        step,
        lr,
        suggested,
    )
