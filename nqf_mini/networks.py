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
than autograd for networks this small.

Ensembles. A claim about a trained network is a claim about every draw of its initial weights, so
the course checks it on R draws at once: ``train_two_layer(..., stacked=True)`` trains R runs
stacked along a leading axis (one step of all of them costs little more than one step of one
network this small: the time goes into per-operation overhead). Run r is exactly the single run
from U0[r], V0[r] (the tests check it to round-off), on data shared by the runs or its own, on the
minibatches of one seed or of its own seed, or on its own stream of fresh batches (one teacher per
run, :func:`nqf_mini.online_stream`). This is the package's one mechanism for many two-layer runs.

The NQF trained by full-batch gradient descent sees the data only through the moments
S_xx = X^T X / n and S_xy = X^T Y / n (Chapter 10), and can be trained on them alone, at a cost
independent of n. Chapters 5-7 and 10 use this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ._validate import (
    as_tensor,
    describe,
    largest,
    require_bool,
    require_choice,
    require_dtype,
    require_memory,
    require_positive,
    require_positive_int,
    require_seed,
    require_shape,
    require_steps,
    to_numpy,
)
from .activations import get_activation
from .device import resolve_device
from .training import (
    State,
    make_optimizer,
    minibatches,
    record_points,
    require_record_memory,
    train,
)
from .seeds import generator
from .teacher_student import OnlineStream

MODELS = ("network", "nqf")
Stream = Callable[[int], tuple[torch.Tensor, torch.Tensor]]

_DERIVATIVES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "tanh": lambda z, h: 1.0 - h * h,
    "cubic": lambda z, h: 1.0 - z * z,
    "linear": lambda z, h: torch.ones_like(z),
    "sin": lambda z, h: torch.cos(z),
    "softplus0": lambda z, h: torch.sigmoid(z),
    "sigmoid": lambda z, h: h * (1.0 - h),
    "tanh_no_cubic": lambda z, h: 1.0 - (h - z * z * z / 3.0) ** 2 + z * z,
}


@dataclass(frozen=True)
class TwoLayerRun:
    """What :func:`train_two_layer` returns.

    For stacked runs (``stacked=True``) every weight and record has a run axis R: the loss is
    (R, T), the outputs (T, R, n, K), U (R, p, d), V (R, d, K), U_traj (T, R, p, d) (the layout
    of :class:`nqf_mini.ModuleRun`); :meth:`run` cuts one run out.

    Attributes:
        steps: recorded step indices 0, k, 2k, ... and the last step (NumPy int, (T,)).
        loss: the loss (1/2n) sum |F - Y|^2 on the evaluation data at those steps (NumPy, (T,)).
        outputs: F on the evaluation inputs at those steps, (T, n, K), or None.
        U: final input weights, (p, d).
        V: final output weights, (d, K).
        U_traj: input weights at the recorded steps, (T, p, d), or None.
        V_traj: output weights at the recorded steps, (T, d, K), or None.
        model: "network" or "nqf"; activation: the activation's name.
        stacked: whether the first axis of U and V holds independent runs.
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
    stacked: bool = False

    def run(self, r: int) -> TwoLayerRun:
        """Run r of a stacked training, as the :class:`TwoLayerRun` of that run alone.

        Args:
            r: the run index, 0 <= r < R.

        Returns:
            The :class:`TwoLayerRun` that :func:`train_two_layer` returns for run r alone.

        Raises:
            ValueError: if this run is not stacked or r is out of range.
        """
        if not self.stacked:
            raise ValueError("argument `r`: this TwoLayerRun holds one run (not stacked)")
        R = self.U.shape[0]
        r = require_positive_int("r", r, minimum=0)
        if r >= R:
            raise ValueError(f"argument `r`: expected a run index in [0, {R}), got {r}")

        def pick(x: torch.Tensor | None) -> torch.Tensor | None:
            return None if x is None else x[:, r]

        return TwoLayerRun(
            steps=self.steps,
            loss=self.loss[r],
            outputs=pick(self.outputs),
            U=self.U[r],
            V=self.V[r],
            U_traj=pick(self.U_traj),
            V_traj=pick(self.V_traj),
            model=self.model,
            activation=self.activation,
        )


def _seed_list(name: str, seed: Any) -> list[int] | None:
    """None for one seed (an integer), else the list of per-run seeds (a non-empty sequence)."""
    if isinstance(seed, (str, bytes)) or not isinstance(seed, (Sequence, np.ndarray)):
        require_seed(name, seed)
        return None
    if len(seed) == 0:
        raise ValueError(
            f"argument `{name}`: expected an integer or a non-empty sequence of "
            "integers (one per run), got an empty sequence"
        )
    return [require_seed(name, s) for s in seed]


def two_layer_init(
    p: int,
    d: int,
    K: int,
    scale: float | Sequence[float],
    seed: int | Sequence[int] = 0,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""I.i.d. Gaussian initial weights U0 (p, d) and V0 (d, K), every entry
    :math:`N(0, \sigma^2)` with :math:`\sigma` = ``scale`` (Chapters 5-7).

    Drawn on the CPU from :func:`nqf_mini.generator`, so every device gets the same numbers. Each
    unit starts with :math:`|w_i|^2 \approx (p + K)\sigma^2`, and a unit-norm mode direction
    :math:`e_k` of a unit's parameters gets
    :math:`z_k(0) = \sum_{i=1}^d (e_k^\top w_i)^2 \approx d\sigma^2`: the initial mode strength
    is :math:`\varepsilon = d\sigma^2` (the course's notation; the review's minor point 1 asks
    for the relation between :math:`\varepsilon` and :math:`z_k(0)`; Chapter 5 derives the
    prefactor of each model). With a sequence of R seeds it returns the starts of an
    ensemble, stacked for ``train_two_layer(..., stacked=True)``: run r is exactly
    ``two_layer_init(p, d, K, scale_r, seed[r])``.

    Args:
        p: input dimension (the rows of U).
        d: number of hidden units.
        K: number of outputs.
        scale: standard deviation :math:`\sigma` of every entry; with a sequence of seeds, also
            one number per run (e.g. the same draws at several scales).
        seed: seed of :func:`nqf_mini.generator`, or a sequence of R seeds (one per run).
        dtype: float64 (default) or float32.
        device: where to put the weights (None: :func:`nqf_mini.default_device`).

    Returns:
        (U0 (p, d), V0 (d, K)); for R seeds (U0 (R, p, d), V0 (R, d, K)).

    Raises:
        ValueError, TypeError: on a bad argument (naming it), including sizes that do not fit in
            memory.
    """
    p, d, K = (require_positive_int(name, v) for name, v in (("p", p), ("d", d), ("K", K)))
    seeds = _seed_list("seed", seed)
    runs = 1 if seeds is None else len(seeds)
    if isinstance(scale, (str, bytes)) or not isinstance(scale, (Sequence, np.ndarray)):
        scales = [require_positive("scale", scale)] * runs
    elif seeds is None or len(scale) != runs:
        raise ValueError(
            f"argument `scale`: one number per run needs a sequence of seeds of the "
            f"same length; got {len(scale)} scales and "
            f"{'one seed' if seeds is None else f'{runs} seeds'}"
        )
    else:
        scales = [require_positive("scale", v) for v in scale]
    require_memory(
        largest(p=p, d=d, K=K), runs * (float(p) * d + float(d) * K), what="the weights U0, V0"
    )
    require_dtype(dtype)
    dev = resolve_device(device)
    pairs = []
    for sigma, s in zip(scales, [require_seed("seed", seed)] if seeds is None else seeds):
        gen = generator(s)
        U0 = torch.randn(p, d, generator=gen, dtype=torch.float64) * sigma
        V0 = torch.randn(d, K, generator=gen, dtype=torch.float64) * sigma
        pairs.append((U0.to(device=dev, dtype=dtype), V0.to(device=dev, dtype=dtype)))
    if seeds is None:
        return pairs[0]
    return torch.stack([u for u, _ in pairs]), torch.stack([v for _, v in pairs])


def _check_model(model: str, activation: str) -> Any:
    require_choice("model", model, MODELS)
    act = get_activation(activation, "activation")
    if model == "nqf" and act.phi0 != 0.0:
        raise ValueError(
            f"argument `activation`: the NQF needs phi(0) = 0 (ZGZ), but "
            f"{act.name}(0) = {act.phi0:g}"
        )
    return act


def _scaled(c: float, T: torch.Tensor) -> torch.Tensor:
    """c T, and T itself when c = 1 (where the product is exact)."""
    return T if c == 1.0 else c * T


def _hidden(act: Any, model: str, Z: torch.Tensor) -> torch.Tensor:
    """Hidden activations phi(Z) of the network, or phi'(0) Z for its NQF."""
    return _scaled(act.phi1, Z) if model == "nqf" else act(Z)


def _times_vt(A: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """A V^T for V (..., d, K); for one output (K = 1) the outer product, written as one."""
    return A * V.mT if V.shape[-1] == 1 else A @ V.mT


def _end_to_end(model: str, U: torch.Tensor, V: torch.Tensor, X: torch.Tensor) -> bool:
    """Whether the NQF phi'(0) X U V is cheaper through its end-to-end matrix P = U V
    (about 2 n p K + 3 p d K operations for F and both gradients) than through the hidden
    layer X U (about 2 n p d + 3 n d K): for few outputs K. The two orders agree to round-off."""
    if model != "nqf":
        return False
    n, (p, d), K = X.shape[-2], U.shape[-2:], V.shape[-1]
    return 2 * n * p * K + 3 * p * d * K < 2 * n * p * d + 3 * n * d * K


def _output(
    act: Any, model: str, U: torch.Tensor, V: torch.Tensor, X: torch.Tensor
) -> torch.Tensor:
    """F = phi(X U) V, or the NQF phi'(0) X U V in the cheaper order (:func:`_end_to_end`),
    as training evaluates it (:func:`two_layer_output` keeps the order (X U) V, in which the
    NQF of a linear network is the network itself, exactly)."""
    if _end_to_end(model, U, V, X):
        return _hidden(act, model, X @ (U @ V))
    return _hidden(act, model, X @ U) @ V


def _times_slope(
    act: Any, model: str, D: torch.Tensor, Z: torch.Tensor, H: torch.Tensor
) -> torch.Tensor:
    """D * phi'(Z) with H = phi(Z): phi' written out where known, else from autograd (which
    works under torch.no_grad); for the NQF phi'(0) D (D itself when phi'(0) = 1)."""
    if model == "nqf":
        return _scaled(act.phi1, D)
    if act.name in _DERIVATIVES:
        return D * _DERIVATIVES[act.name](Z, H)
    with torch.enable_grad():
        Zg = Z.detach().requires_grad_(True)
        (slope,) = torch.autograd.grad(act(Zg).sum(), Zg)
    return D * slope


def two_layer_output(
    U: Any, V: Any, X: Any, activation: str = "tanh", model: str = "network"
) -> torch.Tensor:
    r"""The two-layer network :math:`F = \phi(XU)V` or its NQF :math:`\phi'(0)\,XUV` (Chapters 5-7).

    Args:
        U: input weights (p, d).
        V: output weights (d, K), or (d,) for one output.
        X: inputs (n, p).
        activation: a name from :data:`nqf_mini.activations.ACTIVATIONS` (phi(0) = 0 for the NQF).
        model: ``"network"`` (the original) or ``"nqf"`` (its quadratic form).

    Returns:
        F, shape (n, K).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    act = _check_model(model, activation)
    U = as_tensor("U", U, ndim=2)
    X = as_tensor("X", X, ndim=2, dtype=U.dtype, device=U.device)
    V = as_tensor("V", V, dtype=U.dtype, device=U.device)
    V = V[:, None] if V.ndim == 1 else V
    require_shape("X", X, (None, U.shape[0]), like="U")
    require_shape("V", V, (U.shape[1], None), like="U")
    return _hidden(act, model, X @ U) @ V


def _loss(
    act: Any, model: str, U: torch.Tensor, V: torch.Tensor, X: torch.Tensor, Y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(the loss, summed over stacked runs; F of shape (n, K) or (R, n, K))."""
    F = _hidden(act, model, X @ U) @ V
    return 0.5 * (F - Y).square().sum() / X.shape[0], F


def _forward_backward(
    act: Any, model: str, U: torch.Tensor, V: torch.Tensor, X: torch.Tensor, Y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(F, dL/dU, dL/dV) of L = (1/2b) sum |phi(X U) V - Y|^2 on one batch (module docstring);
    U (p, d) or stacked (R, p, d), and V alike.

    The NQF with few outputs goes through P = U V (:func:`_end_to_end`): F = phi'(0) X P,
    dL/dU = phi'(0) X^T R V^T, dL/dV = phi'(0) U^T X^T R."""
    if _end_to_end(model, U, V, X):
        F = _output(act, model, U, V, X)  # (..., b, K)
        XR = _scaled(act.phi1, X.mT @ ((F - Y) / X.shape[-2]))  # (..., p, K)
        return F, _times_vt(XR, V), U.mT @ XR
    Z = X @ U  # (..., b, d)
    H = _hidden(act, model, Z)
    F = H @ V  # (..., b, K)
    R = (F - Y) / X.shape[-2]
    G = _times_slope(act, model, _times_vt(R, V), Z, H)  # (..., b, d)
    return F, X.mT @ G, H.mT @ R


def _gradients(
    act: Any, model: str, U: torch.Tensor, V: torch.Tensor, X: torch.Tensor, Y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """dL/dU and dL/dV of L = (1/2b) sum |phi(X U) V - Y|^2 on one batch (module docstring).

    Leading axes broadcast (stacked runs: U (R, p, d), V (R, d, K), X (R, b, p) or (b, p));
    each run gets the gradient of its own loss."""
    return _forward_backward(act, model, U, V, X, Y)[1:]


def _prepare_data(
    X: Any, Y: Any, U0: torch.Tensor, stacked: bool, names: tuple[str, str] = ("X", "Y")
) -> tuple[torch.Tensor, torch.Tensor]:
    """X (n, p) and Y (n, K), shared by the runs; stacked runs may have their own, X (R, n, p),
    Y (R, n, K) (or (R, n) when X is per run)."""
    X = as_tensor(names[0], X, dtype=U0.dtype, device=U0.device).detach()
    p = U0.shape[-2]
    if stacked and X.ndim == 3:
        require_shape(names[0], X, (U0.shape[0], None, p), like="U0")
    elif X.ndim == 2:
        require_shape(names[0], X, (None, p), like="U0")
    else:
        want = "(n, p), or (R, n, p) for stacked runs" if stacked else "(n, p)"
        raise ValueError(
            f"argument `{names[0]}`: expected a tensor of shape {want}, got {tuple(X.shape)}"
        )
    Y = as_tensor(names[1], Y, dtype=U0.dtype, device=U0.device).detach()
    if Y.ndim == 1 or (X.ndim == 3 and Y.ndim == 2):
        Y = Y[..., None]
    n = X.shape[-2]
    if stacked and Y.ndim == 3:
        require_shape(names[1], Y, (U0.shape[0], n, None), like="U0")
    else:
        require_shape(names[1], Y, (n, None), like=names[0])
    return X, Y


def _checked_stream(stream: OnlineStream, U0: torch.Tensor, stacked: bool) -> OnlineStream:
    """All batches of an :func:`nqf_mini.online_stream` checked and cast at once, as
    :func:`_prepare_data` checks a batch of any stream at every step: the same (X_t,
    Y_t), Y_t with its output axis (..., b, K), and the same errors, before step 0."""
    _, Y0 = _prepare_data(stream.X[0], stream.Y[0], U0, stacked, ("stream", "stream"))
    X = as_tensor("stream", stream.X, dtype=U0.dtype, device=U0.device).detach()
    Y = as_tensor("stream", stream.Y, dtype=U0.dtype, device=U0.device).detach()
    return OnlineStream(X, Y.reshape(Y.shape[0], *Y0.shape))


def _batch_indices(n: int, batch_size: int, steps: int, seed: int) -> torch.Tensor:
    """The minibatch indices of :func:`nqf_mini.training.minibatches` for a batch size."""
    batches = minibatches(n, batch_size, steps, seed)
    assert batches is not None  # batch_size is not None
    return batches


def _rows(T: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """The rows ``idx`` of data shared by the runs, T (n, .), or of each run's own, T (R, n, .);
    idx (b,) for all runs or (R, b) one set per run."""
    if T.ndim == 2:
        return T[idx]
    if idx.ndim == 1:
        return T[:, idx]
    return T[torch.arange(T.shape[0], device=T.device)[:, None], idx]


class _TwoLayer:
    """The system trained by :func:`train_two_layer`: state (U, V), loss on the evaluation data."""

    def __init__(
        self,
        act: Any,
        model: str,
        X: torch.Tensor,
        Y: torch.Tensor,
        record_outputs: bool,
        record_weights: bool,
        stream_checked: bool = False,
    ):
        self.act, self.model, self.X, self.Y = act, model, X, Y
        self.record_outputs, self.record_weights = record_outputs, record_weights
        self.stream_checked = stream_checked  # stream batches come from _checked_stream

    def gradient(self, state: State, batch: Any) -> tuple[torch.Tensor | None, State]:
        """(F on the evaluation data when the batch is all of it, else None; the gradients)."""
        U, V = state
        if batch is None:  # F is measure's prediction
            F, dU, dV = _forward_backward(self.act, self.model, U, V, self.X, self.Y)
            return F, (dU, dV)
        if isinstance(batch, torch.Tensor):
            Xb, Yb = _rows(self.X, batch), _rows(self.Y, batch)
        elif self.stream_checked:  # a batch of a stream checked once
            Xb, Yb = batch
        else:  # a fresh batch of a stream
            Xb, Yb = _prepare_data(batch[0], batch[1], U, U.ndim == 3, ("stream", "stream"))
        return None, _gradients(self.act, self.model, U, V, Xb, Yb)

    def measure(
        self, state: State, prediction: torch.Tensor | None, record: bool
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        U, V = state
        F = (
            _output(self.act, self.model, U, V, self.X) if prediction is None else prediction
        )  # (..., n, K)
        if U.ndim == 2:
            loss = 0.5 * (F - self.Y).square().sum() / self.X.shape[0]
            return loss, (self.observe(U, V, None, lambda: F) if record else {})
        runs = 0.5 * (F - self.Y).square().sum((-1, -2)) / self.X.shape[-2]
        return runs.sum(), (self.observe(U, V, runs, lambda: F) if record else {})

    def observe(
        self,
        U: torch.Tensor,
        V: torch.Tensor,
        runs: torch.Tensor | None,
        outputs: Callable[[], torch.Tensor],
    ) -> dict[str, torch.Tensor]:
        """What a recorded step keeps: each stacked run's loss, and F, U, V when asked."""
        obs: dict[str, torch.Tensor] = {}
        if runs is not None:
            obs["runs"] = runs
        if self.record_outputs:
            obs["F"] = outputs()
        if self.record_weights:
            obs["U"], obs["V"] = U.clone(), V.clone()
        return obs


class _TwoLayerMoments(_TwoLayer):
    """The NQF F = phi'(0) X U V under full-batch gradient descent, trained on the moments.

    With P = phi'(0) U V the loss is L = tr(P^T S_xx P) / 2 - tr(P^T S_xy) + tr(S_yy) / 2, and
    dL/dU = phi'(0) (S_xx P - S_xy) V^T, dL/dV = phi'(0) U^T (S_xx P - S_xy): the steps of
    :class:`_TwoLayer` on (X, Y) up to round-off, at a cost independent of n (Chapter 10).
    """

    def __init__(
        self, act: Any, X: torch.Tensor, Y: torch.Tensor, record_outputs: bool, record_weights: bool
    ):
        super().__init__(act, "nqf", X, Y, record_outputs, record_weights)
        n = X.shape[-2]
        self.Sxx, self.Sxy = X.mT @ X / n, X.mT @ Y / n  # (.., p, p), (.., p, K)
        self.half_Syy = 0.5 * Y.square().sum((-1, -2)) / n  # () or (R,): each run's own

    def _residual(self, U: torch.Tensor, V: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        P = self.act.phi1 * (U @ V)  # (..., p, K)
        return P, self.Sxx @ P - self.Sxy  # P, dL/dP

    def gradient(self, state: State, batch: Any) -> tuple[None, State]:
        U, V = state
        _, G = self._residual(U, V)
        phi1 = self.act.phi1
        return None, (phi1 * (G @ V.transpose(-1, -2)), phi1 * (U.transpose(-1, -2) @ G))

    def measure(
        self, state: State, prediction: torch.Tensor | None, record: bool
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        U, V = state
        P, G = self._residual(U, V)
        runs = 0.5 * ((G - self.Sxy) * P).sum((-1, -2)) + self.half_Syy  # (R,) or ()
        if not record:
            return runs.sum(), {}
        return runs.sum(), self.observe(U, V, runs if U.ndim == 3 else None, lambda: self.X @ P)


def train_two_layer(
    X: Any,
    Y: Any,
    U0: Any,
    V0: Any,
    *,
    lr: float,
    steps: int,
    activation: str = "tanh",
    model: str = "network",
    optimizer: str = "sgd",
    batch_size: int | None = None,
    seed: int | Sequence[int] = 0,
    stream: Stream | None = None,
    record_every: int | None = None,
    record_steps: Sequence[int] | None = None,
    record_outputs: bool = False,
    record_weights: bool = False,
    adam_betas: Sequence[float] = (0.9, 0.999),
    adam_eps: float = 1e-8,
    stacked: bool = False,
    moments: bool = False,
) -> TwoLayerRun:
    r"""Train :math:`F = V^\top\phi(U^\top x)` (``model="network"``) or its NQF (``model="nqf"``),
    one run or R runs at once (Chapters 5-7, 10).

    One step is :math:`W \leftarrow W - \eta\,\partial L/\partial W` on
    :math:`L = \frac{1}{2n}\sum_\mu |F(x_\mu) - Y_\mu|^2` (``optimizer="sgd"``; full batch when
    ``batch_size`` is None, otherwise the seeded minibatches of
    :func:`nqf_mini.training.minibatches`, the same sequence for both models) or Adam's step
    (``optimizer="adam"``, torch.optim.Adam's update). With ``stream``, step t trains on the fresh
    batch ``stream(t) -> (X_t, Y_t)`` (online SGD), and X, Y only serve to record the loss. The loop
    is :func:`nqf_mini.training.train`.

    With ``stacked=True`` the R runs of U0 (R, p, d), V0 (R, d, K) (an ensemble, e.g. from
    :func:`two_layer_init` with R seeds) train in one loop, run r exactly as the single run from
    U0[r], V0[r] would: on data shared by the runs or its own (X (R, n, p), Y (R, n, K)), on the
    minibatches of ``seed`` or of its own ``seed[r]``, or on its own part of each stream batch
    (X_t (R, b, p), Y_t (R, b) or (R, b, K); e.g. :func:`nqf_mini.online_stream` with one teacher
    per run). The loss minimised is the sum of the runs' losses, so each run follows its own
    gradient (and Adam's per-entry steps are each run's own).

    Args:
        X: inputs (n, p); with ``stacked=True`` also (R, n, p), one set per run.
        Y: targets (n, K) or (n,); with ``stacked=True`` also (R, n, K), one set per run (or
            (R, n) when X is (R, n, p)).
        U0: initial input weights (p, d) (see :func:`two_layer_init`); fixes device and dtype.
            With ``stacked=True``: (R, p, d), R independent runs.
        V0: initial output weights (d, K) or (d,); with ``stacked=True`` (R, d, K).
        lr: learning rate :math:`\eta`.
        steps: number of steps (at most 10**7).
        activation: a name from :data:`nqf_mini.activations.ACTIVATIONS` with phi(0) = 0 for the
            NQF.
        model: "network" (the original) or "nqf" (its quadratic form, phi'(0) X U V).
        optimizer: ``"sgd"`` or ``"adam"``.
        batch_size: None for the full batch, else the minibatch size.
        seed: seed of the minibatch sequence; with ``stacked=True`` also a sequence of R seeds,
            run r on the minibatches of ``seed[r]``.
        stream: a function t -> (X_t, Y_t) of fresh batches (not together with ``batch_size``).
        record_every: record the loss (and optionally outputs, weights) every k steps and at the
            end (default 1); or
        record_steps: the steps to record, e.g. a logarithmic grid (with ``record_every=None``).
        record_outputs: also keep F on X at the recorded steps.
        record_weights: also keep U and V at the recorded steps.
        adam_betas: Adam's (beta1, beta2), each in (0, 1).
        adam_eps: Adam's epsilon, > 0.
        stacked: train the R runs of (U0, V0) at once (see above).
        moments: train the NQF on S_xx = X^T X / n and S_xy = X^T Y / n alone (full-batch
            gradient descent only): the same run up to round-off, at a cost independent of n
            (Chapter 10). The outputs, when recorded, are phi'(0) X U V.

    Returns:
        A :class:`TwoLayerRun`; for stacked runs every record has a run axis, and
        ``run.run(r)`` is run r alone.

    Raises:
        ValueError, TypeError: on a bad argument (the message names it).
        DivergenceError: if the loss (summed over stacked runs) becomes non-finite or exceeds
            1e6 times its initial value.
    """
    act = _check_model(model, activation)
    record_outputs = require_bool("record_outputs", record_outputs)
    record_weights = require_bool("record_weights", record_weights)
    stacked, moments = require_bool("stacked", stacked), require_bool("moments", moments)
    U = as_tensor("U0", U0, ndim=3 if stacked else 2).detach().clone()
    V = as_tensor("V0", V0, dtype=U.dtype, device=U.device).detach().clone()
    if stacked:
        V = V[..., None] if V.ndim == 2 else V
        require_shape("V0", V, (U.shape[0], U.shape[2], None), like="U0")
    else:
        V = V[:, None] if V.ndim == 1 else V
        require_shape("V0", V, (U.shape[1], None), like="U0")
    X, Y = _prepare_data(X, Y, U, stacked)
    require_shape("Y", Y, Y.shape[:-1] + (V.shape[-1],), like="V0")
    opt = make_optimizer("gd", optimizer, lr, adam_betas, adam_eps)
    steps = require_steps("steps", steps)
    seeds = _seed_list("seed", seed)
    if seeds is not None and not stacked:
        raise TypeError(
            f"argument `seed`: a sequence of seeds (one per run) needs "
            f"stacked=True; got {describe(seed)}"
        )
    if seeds is not None and len(seeds) != U.shape[0]:
        raise ValueError(
            f"argument `seed`: expected one seed per run ({U.shape[0]}), got {len(seeds)}"
        )
    if batch_size is not None and stream is not None:
        raise ValueError(
            "argument `batch_size`: give either batch_size (minibatches of X, Y) or "
            "stream (fresh batches), not both"
        )
    if stream is not None and not callable(stream):
        raise TypeError(
            f"argument `stream`: expected a function t -> (X_t, Y_t), got {describe(stream)}"
        )
    if moments and (
        model != "nqf" or optimizer != "sgd" or batch_size is not None or stream is not None
    ):
        raise ValueError(
            "argument `moments`: only the NQF (model='nqf') under full-batch "
            "gradient descent (optimizer='sgd', no batch_size, no stream) is a "
            "function of the moments"
        )
    record = record_points(
        steps, 1 if record_every is None and record_steps is None else record_every, record_steps
    )
    runs = U.shape[0] if stacked else 1
    per_record = (runs * X.shape[-2] * Y.shape[-1] if record_outputs else 0) + (
        U.numel() + V.numel() if record_weights else 0
    )
    require_record_memory(len(record), per_record + 1, U.dtype, U.device)
    if stacked:
        record |= {steps}  # each run's loss is read from the records
    batches: Any = stream
    if stream is None and seeds is None:
        batches = minibatches(X.shape[-2], batch_size, steps, require_seed("seed", seed))
    elif stream is None and seeds is not None and batch_size is not None:
        batches = torch.stack(
            [_batch_indices(X.shape[-2], batch_size, steps, s) for s in seeds], dim=1
        )  # (steps, R, b): each run's own
    if isinstance(batches, torch.Tensor):
        batches = batches.to(U.device)
    checked = isinstance(stream, OnlineStream)
    if isinstance(stream, OnlineStream):  # all its batches at hand: checked once, here
        batches = _checked_stream(stream, U, stacked)  # (isinstance again: for mypy)
    system = (
        _TwoLayerMoments(act, X, Y, record_outputs, record_weights)
        if moments
        else _TwoLayer(act, model, X, Y, record_outputs, record_weights, checked)
    )
    trace = train(system, (U, V), opt, steps, batches=batches, record=record, every_step=False)
    rec = trace.records
    loss = to_numpy(rec["runs"]).T.copy() if stacked else trace.loss  # (R, T) or (T,)
    return TwoLayerRun(
        steps=trace.steps if stacked else trace.loss_steps,
        loss=loss,
        outputs=rec.get("F"),
        U=trace.state[0],
        V=trace.state[1],
        U_traj=rec.get("U"),
        V_traj=rec.get("V"),
        model=model,
        activation=act.name,
        stacked=stacked,
    )


# --- the square network: an exact NQF trained without forming A ------------------------------


class _Square:
    """f(x) = |W^T x|^2 on data (X, y): dL/dW = (2/n) X^T diag(r) X W."""

    def __init__(self, X: torch.Tensor, y: torch.Tensor):
        self.X, self.y = X, y

    def _residual(self, W: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        H = self.X @ W  # (n, d)
        return H, H.square().sum(1) - self.y  # residuals (n,)

    def gradient(self, state: State, batch: None) -> tuple[None, State]:
        H, r = self._residual(state[0])
        return None, ((2.0 / self.X.shape[0]) * (self.X.T @ (r[:, None] * H)),)

    def measure(
        self, state: State, prediction: None, record: bool
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        return 0.5 * self._residual(state[0])[1].square().mean(), {}


def train_square_network(
    X: Any,
    y: Any,
    W0: Any,
    lr: float,
    steps: int,
    record_every: int = 1,
    device: torch.device | str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Gradient descent on :math:`f(x) = \sum_i (w_i\cdot x)^2 = |W^\top x|^2`, an exact NQF with
    :math:`A(x) = xx^\top` (Chapter 6).

    The same iteration as :func:`nqf_mini.simulate_W` with :math:`A_\mu = x_\mu x_\mu^\top` and the
    loss :math:`L = \frac{1}{2n}\sum_\mu (f_\mu - y_\mu)^2`, but without forming the n matrices
    :math:`A_\mu`: one step costs O(n p d) instead of O(n p^2 d).

    Args:
        X: inputs (n, p).
        y: targets (n,).
        W0: initial weights (p, d), units are columns.
        lr: learning rate (time t = lr * step).
        steps: number of steps (at most 10**7).
        record_every: record the loss every k steps and at the last step.
        device: where to compute (None: :func:`nqf_mini.default_device`).

    Returns:
        (steps, loss): NumPy arrays of the recorded step indices and losses.

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
        DivergenceError: if the loss becomes non-finite or exceeds 1e6 times its initial value.
    """
    dev = resolve_device(device)
    W = as_tensor("W0", W0, ndim=2, dtype=torch.float64, device=dev).detach().clone()
    X = as_tensor("X", X, ndim=2, dtype=torch.float64, device=dev).detach()
    require_shape("X", X, (None, W.shape[0]), like="W0")
    y = as_tensor("y", y, ndim=1, dtype=torch.float64, device=dev).detach()
    require_shape("y", y, (X.shape[0],), like="X")
    steps = require_steps("steps", steps)
    record_every = require_positive_int("record_every", record_every)
    trace = train(
        _Square(X, y),
        (W,),
        make_optimizer("gd", "sgd", lr),
        steps,
        record=record_points(steps, record_every),
        every_step=False,
    )
    return trace.loss_steps, trace.loss
