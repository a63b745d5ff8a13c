"""Ensembles of two-layer networks (or of their NQF) trained at once, one per random draw (Ch. 5).

A claim about a trained network is a claim about every draw of its initial weights, so the course
checks it on an ensemble: R copies of F_c(x) = sum_i v_ic phi(u_i . x) (or of its quadratic form
phi'(0) x^T U V), each from its own initial weights U0[r], V0[r], trained side by side on the same
data. The R runs are independent; they are stacked along a leading axis so that one step of all of
them costs about as much as one step of a single network of this size (the tensors are tiny, the
time goes into per-operation overhead). Member r follows exactly the run of
:func:`nqf_mini.train_two_layer` from U0[r], V0[r] (the tests check it to round-off): the same
hand-written gradients, the same optimisers (:func:`nqf_mini.training.make_optimizer`), the same
training loop (:func:`nqf_mini.training.train`), and for minibatch SGD the minibatch sequence of
``minibatches(n, batch_size, steps, seed=seeds[r])``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from ._validate import as_tensor, require_positive_int, require_seed, require_shape
from .networks import _check_model, _gradients, _hidden, two_layer_init
from .training import State, make_optimizer, minibatches, record_points, train

__all__ = ["EnsembleRun", "two_layer_ensemble_init", "train_two_layer_ensemble"]


@dataclass(frozen=True)
class EnsembleRun:
    """What :func:`train_two_layer_ensemble` returns (R members, T recorded steps).

    Attributes:
        steps: recorded step indices 0, k, 2k, ... and the last step (NumPy int, (T,)).
        loss: each member's loss (1/2n) sum |F - Y|^2 at those steps (NumPy, (R, T)).
        outputs: F on the inputs at those steps, (R, T, n, K), or None.
        U, V: final weights, (R, p, d) and (R, d, K).
        U_traj, V_traj: weights at the recorded steps, (R, T, p, d) and (R, T, d, K), or None.

    Member r's records are ``loss[r]``, ``outputs[r]``, ...: the fields of a
    :class:`nqf_mini.networks.TwoLayerRun`, with the ensemble axis first.
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


def two_layer_ensemble_init(p: int, d: int, K: int, scale: float | Sequence[float],
                            seeds: Sequence[int], dtype: torch.dtype = torch.float64,
                            device: torch.device | str | None = None,
                            ) -> tuple[torch.Tensor, torch.Tensor]:
    """Initial weights of an ensemble: member r is ``two_layer_init(p, d, K, scale_r, seeds[r])``.

    Every entry of U0[r] (p, d) and V0[r] (d, K) is N(0, scale_r^2), drawn from
    ``nqf_mini.generator(seeds[r])`` (so ``NQF_SEED`` shifts every member). ``scale`` is one number
    for all members or one per member (e.g. the same draws at several scales, Chapter 5).

    Returns:
        U0 (R, p, d) and V0 (R, d, K).
    """
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
        raise TypeError(f"argument `seeds`: expected a non-empty sequence of integers, got "
                        f"{seeds!r}")
    seeds = [require_seed("seeds", s) for s in seeds]
    scales = [scale] * len(seeds) if not isinstance(scale, Sequence) else list(scale)
    if len(scales) != len(seeds):
        raise ValueError(f"argument `scale`: expected one number or {len(seeds)} (one per seed), "
                         f"got {len(scales)}")
    pairs = [two_layer_init(p, d, K, s, seed=r, dtype=dtype, device=device)
             for s, r in zip(scales, seeds)]
    return torch.stack([u for u, _ in pairs]), torch.stack([v for _, v in pairs])


class _Ensemble:
    """R two-layer networks (state U (R, p, d), V (R, d, K)) on the same data X (n, p), Y (n, K)."""

    def __init__(self, act: Any, model: str, X: torch.Tensor, Y: torch.Tensor,
                 record_outputs: bool, record_weights: bool):
        self.act, self.model, self.X, self.Y = act, model, X, Y
        self.record_outputs, self.record_weights = record_outputs, record_weights

    def gradient(self, state: State, batch: torch.Tensor | None) -> tuple[None, State]:
        U, V = state
        if batch is None:
            return None, _gradients(self.act, self.model, U, V, self.X, self.Y)
        return None, _gradients(self.act, self.model, U, V, self.X[batch], self.Y[batch])

    def measure(self, state: State, prediction: None,
                record: bool) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        U, V = state
        F = _hidden(self.act, self.model, self.X @ U) @ V                     # (R, n, K)
        loss = 0.5 * (F - self.Y).square().sum(dim=(-2, -1)) / self.X.shape[0]  # (R,)
        obs: dict[str, torch.Tensor] = {"loss": loss} if record else {}
        if record and self.record_outputs:
            obs["F"] = F
        if record and self.record_weights:
            obs["U"], obs["V"] = U.clone(), V.clone()
        return loss.sum(), obs                     # the sum: any diverging member is caught


def train_two_layer_ensemble(
    X: Any, Y: Any, U0: Any, V0: Any, *, lr: float, steps: int, activation: str = "tanh",
    model: str = "network", optimizer: str = "sgd", batch_size: int | None = None,
    seeds: Sequence[int] | None = None, record_every: int = 1, record_outputs: bool = False,
    record_weights: bool = False, adam_betas: Sequence[float] = (0.9, 0.999),
    adam_eps: float = 1e-8,
) -> EnsembleRun:
    """Train R two-layer networks (or their NQF) side by side, one per initial draw (Chapter 5).

    Member r minimises L_r = (1/2n) sum_mu sum_c (F_c(x_mu; U_r, V_r) - Y_mu,c)^2 with
    F = phi(X U_r) V_r (``model="network"``) or phi'(0) X U_r V_r (``model="nqf"``), by the step of
    :func:`nqf_mini.train_two_layer`: gradient descent (``optimizer="sgd"``, full batch when
    ``batch_size`` is None), minibatch SGD (member r on the minibatches of ``seeds[r]``) or Adam.

    Args:
        X: inputs (n, p); Y: targets (n, K).
        U0, V0: initial weights (R, p, d) and (R, d, K) (:func:`two_layer_ensemble_init`); they fix
            the device and dtype.
        lr: learning rate; steps: number of steps.
        seeds: with ``batch_size``, one minibatch seed per member (R integers).
        record_every: record losses (and optionally outputs, weights) every k steps and at the end.

    Returns:
        An :class:`EnsembleRun`.

    Raises:
        ValueError: on a bad argument (the message names it).
        DivergenceError: if the summed loss of the members becomes non-finite or exceeds 1e6 times
            its initial value.
    """
    act = _check_model(model, activation)
    U = as_tensor("U0", U0, ndim=3).clone()
    V = as_tensor("V0", V0, ndim=3, dtype=U.dtype, device=U.device).clone()
    R, p, d = U.shape
    require_shape("V0", V, (R, d, None))
    X = as_tensor("X", X, ndim=2, dtype=U.dtype, device=U.device)
    require_shape("X", X, (None, p))
    Y = as_tensor("Y", Y, ndim=2, dtype=U.dtype, device=U.device)
    require_shape("Y", Y, (X.shape[0], V.shape[2]))
    opt = make_optimizer("gd", optimizer, lr, adam_betas, adam_eps)
    steps = require_positive_int("steps", steps)
    batches = None
    if batch_size is not None:
        if seeds is None or len(seeds) != R:
            raise ValueError(f"argument `seeds`: minibatches need one seed per member ({R}), "
                             f"got {seeds!r}")
        batches = torch.stack([minibatches(X.shape[0], batch_size, steps, seed=s)
                               for s in seeds], dim=1).to(U.device)   # (steps, R, batch_size)
    system = _Ensemble(act, model, X, Y, record_outputs, record_weights)
    trace = train(system, (U, V), opt, steps, batches=batches,
                  record=record_points(steps, record_every), every_step=False)
    rec = {key: value.transpose(0, 1) for key, value in trace.records.items()}  # (R, T, ...)
    return EnsembleRun(steps=trace.steps, loss=rec["loss"].cpu().numpy(),
                       outputs=rec.get("F"), U=trace.state[0], V=trace.state[1],
                       U_traj=rec.get("U"), V_traj=rec.get("V"), model=model,
                       activation=act.name)
