"""Any module f(W, x) trained on data or a stream, next to its NQF (Chapters 2 and 8).

:func:`train_module` trains a module written in the convention of Chapter 1 (W of shape
(p, d), units as columns, scalar output) by gradient descent, seeded minibatch SGD, Adam or
heavy-ball momentum, with gradients from autograd, on the loop of :mod:`nqf_mini.training`.
Its NQF (:func:`nqf_mini.surrogates.module_pair`) is a module too, so the network and its
quadratic form are trained by the same code from the same initialisation on the same
batches, and any difference between the two runs is the remainder of Theorem 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np
import torch

from ._modules import (
    Module,
    cast_input,
    check_input,
    leaves,
    prepare_call,
    require_finite_output,
    sample,
    scalar_output,
)
from ._validate import as_tensor, require_bool, require_positive_int, require_steps
from .training import (
    State,
    WeightSpace,
    make_optimizer,
    minibatches,
    record_points,
    require_record_memory,
    train,
)


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

    def run(self, r: int) -> ModuleRun:
        """Run r of a stacked training, as the :class:`ModuleRun` of that run alone."""
        if not self.stacked:
            raise ValueError("argument `r`: this ModuleRun holds one run (not stacked)")
        R = self.W.shape[0]
        r = require_positive_int("r", r, minimum=0)
        if r >= R:
            raise ValueError(f"argument `r`: expected a run index in [0, {R}), got {r}")
        return ModuleRun(
            steps=self.steps,
            loss=self.loss[r],
            W=self.W[r],
            outputs=self.outputs[:, r],
            M_traj=None if self.M_traj is None else self.M_traj[:, r],
            W_traj=None if self.W_traj is None else self.W_traj[:, r],
        )


def batched(
    f: Module, xs: Any, n: int, stacked: bool = False
) -> Callable[[torch.Tensor], torch.Tensor]:
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
        except RuntimeError:  # modules vmap cannot trace: call per sample
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
OnRows = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


class _ModuleSpace(WeightSpace):
    """:class:`~nqf_mini.training.WeightSpace` for :func:`train_module`: R stacked runs
    (the loss is the sum of the runs' losses, so each run gets its own gradient) and
    fresh batches from a stream, ``batch = (xs_t, y_t)``.

    On a minibatch of rows B the gradient is that of (1/2b) sum_{mu in B} (f_mu - y_mu)^2,
    so autograd runs through the module on those b samples only (``on_rows``); the
    prediction on all n samples, for the loss of the step, is evaluated without a graph.
    """

    def __init__(
        self,
        predict: Callable[[torch.Tensor], torch.Tensor],
        y: torch.Tensor,
        observe: Observe,
        on_batch: OnBatch,
        on_rows: OnRows,
    ):
        super().__init__(predict, y, observe)
        self.on_batch, self.on_rows = on_batch, on_rows
        self.loss_scale = 0.5 / y.shape[-1]  # the sum of the runs' losses

    def gradient(self, state: State, batch: Any) -> tuple[torch.Tensor | None, State]:
        W = state[0].detach().requires_grad_(True)
        full = None
        if isinstance(batch, torch.Tensor):  # minibatch rows: f on all samples, no graph
            with torch.no_grad():
                full = self.predict(W)  # (n,) or (R, n)
        with torch.enable_grad():
            if isinstance(batch, tuple):  # a fresh batch from a stream
                f_b, y_b = self.on_batch(W, batch)
                r = f_b - y_b
            elif batch is None:
                full = self.predict(W)  # (n,) or (R, n)
                r = full - self.y
            else:
                r = self.on_rows(W, batch) - self.y[..., batch]
            (grad,) = torch.autograd.grad(0.5 * (r * r).mean(-1).sum(), W)
        return (None if full is None else full.detach()), (grad,)


def _module_targets(name: str, y: Any, W: torch.Tensor, stacked: bool) -> torch.Tensor:
    """Targets (n,) (shared by all runs) or, for stacked runs, (R, n)."""
    y = as_tensor(name, y, dtype=W.dtype, device=W.device)
    if y.ndim == 1 or (stacked and y.ndim == 2 and y.shape[0] == W.shape[0]):
        return y
    want = f"(n,) or (R, n) with R = {W.shape[0]}" if stacked else "(n,)"
    raise ValueError(f"argument `{name}`: expected shape {want}, got {tuple(y.shape)}")


def _sample_count(name: str, xs: Any, n: int, targets: str = "y") -> None:
    sizes = {
        leaf.shape[0] if leaf.ndim else 0 for leaf in leaves(xs) if isinstance(leaf, torch.Tensor)
    }
    if sizes != {n}:
        raise ValueError(
            f"argument `{name}`: expected a leading sample dimension "
            f"n = {n} like the targets `{targets}` in every tensor, got sizes "
            f"{sorted(sizes)}"
        )


def _blame(exc: Exception) -> str:
    """Which argument of train_module a failure of f(W0, xs) points to."""
    msg = str(exc)
    if "argument `W`" in msg:
        return "argument `W0`"
    if "argument `f`" in msg:
        return "argument `f`"
    return "argument `xs`"


def train_module(
    f: Module,
    xs: Any,
    y: Any,
    W0: Any,
    *,
    lr: float,
    steps: int,
    optimizer: str = "sgd",
    batch_size: int | None = None,
    seed: int = 0,
    stream: ModuleStream | None = None,
    stacked: bool = False,
    record_every: int | None = 1,
    record_steps: Sequence[int] | None = None,
    record_weights: bool = False,
    record_M: bool = True,
    adam_betas: Sequence[float] = (0.9, 0.999),
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
        record_every / record_steps: which steps to record: every k steps and the last
            (``record_every=k``), exactly ``record_steps``, or (``record_every=None`` and
            no ``record_steps``) the first and the last step only.
        record_weights: also keep W at the recorded steps.
        record_M: keep M = W W^T at the recorded steps (for W of shape (p, d)).

    Returns:
        A :class:`ModuleRun`.

    Raises:
        ValueError: on a bad argument (the message names it).
        DivergenceError: if the summed loss becomes non-finite or exceeds 1e6 times its
            initial value.
    """
    W = as_tensor("W0", W0).detach().clone()
    stacked = require_bool("stacked", stacked)
    record_M = require_bool("record_M", record_M)
    record_weights = require_bool("record_weights", record_weights)
    if W.ndim not in ((2, 3) if stacked else (1, 2)):
        want = "(R, p, d) or (R, P)" if stacked else "(p, d) or (P,)"
        raise ValueError(f"argument `W0`: expected shape {want}, got {tuple(W.shape)}")
    units = W.ndim == (3 if stacked else 2)  # columns are units: M = W W^T
    y = _module_targets("y", y, W, stacked).detach()
    xs, _ = prepare_call(f, xs, W.dtype, W.device, name="xs")
    xs = cast_input(xs, W.dtype, W.device, detach=True)
    n = y.shape[-1]
    _sample_count("xs", xs, n)
    predict = batched(f, xs, n, stacked)
    try:
        first = predict(W)
    except (RuntimeError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(
            f"{_blame(exc)}: f(W0, x) failed on the data ({exc}); check that "
            "`W0` has the shape `f` expects and that every sample of `xs` is "
            "what `f` expects"
        ) from exc
    require_finite_output(first.detach(), "f(W0, x) on the data")
    opt = make_optimizer("gd", optimizer, lr, adam_betas, adam_eps)
    steps = require_steps("steps", steps)
    if record_every is None and record_steps is None:
        record = {0, steps}
    else:
        record = record_points(
            steps, None if record_steps is not None else record_every, record_steps
        )
    per_record = y.numel() + (W[..., 0].numel() * W.shape[-2] if record_M and units else 0)
    require_record_memory(
        len(record), per_record + (W.numel() if record_weights else 0), W.dtype, W.device
    )
    if stream is not None:
        if batch_size is not None:
            raise ValueError(
                "argument `batch_size`: give either batch_size "
                "(minibatches of xs, y) or stream (fresh batches), not "
                "both"
            )
        if not callable(stream):
            raise TypeError(
                f"argument `stream`: expected a function t -> (xs_t, y_t), "
                f"got {type(stream).__name__}"
            )

    def on_batch(W_: torch.Tensor, batch: tuple[Any, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        xs_b, y_b = batch
        try:
            if not callable(getattr(f, "batch", None)):  # else f.batch checks them
                xs_b = check_input(xs_b, "stream")
            xs_b = cast_input(xs_b, W.dtype, W.device, detach=True)
            y_b = _module_targets("stream", y_b, W, stacked).detach()
            _sample_count("stream", xs_b, y_b.shape[-1], "stream")
            return batched(f, xs_b, y_b.shape[-1], stacked)(W_), y_b
        except (TypeError, ValueError) as exc:
            raise type(exc)(str(exc).replace("argument `xs`", "argument `stream`")) from None

    rows = getattr(predict, "rows", None)  # a predictor that can select its samples

    def on_rows(W_: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        if callable(rows):
            return rows(idx)(W_)
        return batched(f, sample(xs, idx), idx.shape[-1], stacked)(W_)

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
    trace = train(
        _ModuleSpace(predict, y, observe, on_batch, on_rows),
        (W,),
        opt,
        steps,
        batches=batches,
        record=record,
        every_step=stream is None,
    )
    rec = trace.records
    loss = rec["loss"].detach().double().cpu().numpy()  # (T,) or (T, R)
    return ModuleRun(
        steps=trace.steps,
        loss=loss.T.copy() if stacked else loss,
        W=trace.state[0],
        outputs=rec["f"],
        M_traj=rec.get("M"),
        W_traj=rec.get("W"),
        stacked=stacked,
    )
