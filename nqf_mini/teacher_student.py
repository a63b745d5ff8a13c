"""A tanh teacher, a seeded stream of fresh samples, and the best loss a linear model can reach
(Chapter 7).

The teacher is a two-layer network with k units and unit output weights,

    y(x) = sum_j v*_j phi(u*_j . x),      x ~ N(0, I_p),      |u*_j| = norm,

(our reconstruction of the seed's Fig. 6 set-up: p = 32, k = 4, |w*| = 2). The NQF of a two-layer
network with phi(0) = 0 is the linear model f(x) = phi'(0) x^T U V (Chapters 1-2), so on this
teacher the NQF can at best reach the best linear fit. For Gaussian inputs it has a closed form:
the least-squares coefficient is beta = E[x y] = sum_j v*_j E[phi'(u*_j . x)] u*_j (Stein's lemma),
and the best linear loss is

    L_lin = (1/2) (E[y^2] - |beta|^2),

with E[y^2] = sum_jk v*_j v*_k E[phi(u*_j . x) phi(u*_k . x)] a two-dimensional Gaussian integral
(Gauss-Hermite quadrature below). The loss convention is L = (1/2n) sum (f - y)^2, as in
:func:`nqf_mini.train_two_layer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ._validate import (
    as_tensor,
    describe,
    largest,
    require_memory,
    require_positive,
    require_positive_int,
    require_steps,
)
from .activations import get_activation
from .device import resolve_device
from .seeds import generator

_GAUSS_HERMITE_POINTS = 96


@dataclass(frozen=True)
class Teacher:
    """A two-layer teacher y = phi(X U) v (Chapter 7).

    Attributes:
        U: input weights, (p, k), column j is u*_j.
        v: output weights, (k,).
        activation: the activation's name.
    """

    U: torch.Tensor
    v: torch.Tensor
    activation: str

    @property
    def p(self) -> int:
        return self.U.shape[0]

    def __call__(self, X: Any) -> torch.Tensor:
        """The targets y = phi(X U) v for inputs X (n, p), shape (n,)."""
        X = as_tensor("X", X, ndim=2, dtype=self.U.dtype, device=self.U.device)
        if X.shape[1] != self.p:
            raise ValueError(f"argument `X`: expected {self.p} columns, got shape {tuple(X.shape)}")
        return get_activation(self.activation)(X @ self.U) @ self.v


def make_teacher(
    p: int = 32,
    k: int = 4,
    norm: float = 2.0,
    activation: str = "tanh",
    seed: int = 0,
    device: torch.device | str | None = None,
) -> Teacher:
    r"""A teacher :math:`y(x) = \sum_j \phi(u_j^\ast\cdot x)` with k random input directions
    of length ``norm`` (Chapter 7).

    The directions :math:`u_j^\ast/|u_j^\ast|` are uniform on the sphere (normalised Gaussians,
    drawn on the CPU from :func:`nqf_mini.generator`).

    Args:
        p: the input dimension.
        k: the number of teacher units.
        norm: the length :math:`|u_j^\ast|` of every input weight, > 0.
        activation: a name from :data:`nqf_mini.activations.ACTIVATIONS`.
        seed: seed of :func:`nqf_mini.generator`.
        device: where to put the teacher (None: :func:`nqf_mini.default_device`).

    Returns:
        A :class:`Teacher` (call it on inputs X (n, p) for the targets).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    p, k = require_positive_int("p", p), require_positive_int("k", k)
    require_memory(largest(p=p, k=k), float(p) * k, what="the teacher's weights (p x k)")
    norm = require_positive("norm", norm)
    get_activation(activation, "activation")
    dev = resolve_device(device)
    gen = generator(seed)
    U = torch.randn(p, k, generator=gen, dtype=torch.float64)
    U = norm * U / U.norm(dim=0, keepdim=True)
    return Teacher(
        U=U.to(dev), v=torch.ones(k, dtype=torch.float64, device=dev), activation=activation
    )


def gaussian_inputs(
    n: int, p: int, seed: int = 0, device: torch.device | str | None = None
) -> torch.Tensor:
    """n i.i.d. inputs x ~ N(0, I_p), drawn on the CPU with the given seed, shape (n, p)."""
    n, p = require_positive_int("n", n), require_positive_int("p", p)
    require_memory("n", float(n) * p, what="the inputs (n x p)")
    gen = generator(seed)
    return torch.randn(n, p, generator=gen, dtype=torch.float64).to(resolve_device(device))


def _check_teacher(teacher: Any) -> None:
    if not isinstance(teacher, Teacher):
        raise TypeError(
            f"argument `teacher`: expected a Teacher (from make_teacher), got {describe(teacher)}"
        )


def evaluation_set(
    teacher: Teacher, n: int = 4096, seed: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed test set (X (n, p), y (n,)) on which the loss is recorded (Chapter 7)."""
    _check_teacher(teacher)
    X = gaussian_inputs(n, teacher.p, seed, teacher.U.device)
    return X, teacher(X)


def online_stream(
    teacher: Teacher | Sequence[Teacher],
    batch_size: int,
    steps: int,
    seed: int | Sequence[int] = 2,
) -> OnlineStream:
    r"""A seeded stream of fresh batches for online SGD, ``stream(t) -> (X_t (b, p), y_t (b,))``
    (Chapter 7).

    All ``steps`` batches are drawn at once (so the stream is the same for every model trained on
    it and for every device) and step t reads batch t, with inputs :math:`x \sim N(0, I_p)` and
    labels :math:`y = f^\ast(x)` of the teacher. Pass it as ``train_two_layer(stream=...)``.
    With R teachers and/or R seeds it holds R streams in one, for R runs trained at once
    (``train_two_layer(..., stacked=True)``): ``stream(t) -> (X_t (R, b, p), y_t (R, b))``,
    where run r reads exactly the batches of ``online_stream(teacher[r], batch_size, steps,
    seed[r])`` (one teacher or one seed serves every run).

    Args:
        teacher: from :func:`make_teacher`, or a sequence of R teachers with the same p.
        batch_size: samples per step.
        steps: the number of steps the stream holds (at most 10**7).
        seed: seed of :func:`nqf_mini.generator`, or a sequence of R seeds.

    Returns:
        An :class:`OnlineStream`, the function t -> (X_t, y_t) (it raises ValueError
        for t outside 0 .. steps - 1).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    teachers = (
        list(teacher)
        if isinstance(teacher, Sequence) and not isinstance(teacher, (str, bytes))
        else None
    )
    seeds = (
        list(seed)
        if isinstance(seed, (Sequence, np.ndarray)) and not isinstance(seed, (str, bytes))
        else None
    )
    if teachers is None and seeds is None:
        X, Y = _stream_batches(teacher, batch_size, steps, seed)  # type: ignore[arg-type]
        return OnlineStream(X, Y)
    if teachers is not None and seeds is not None and len(teachers) != len(seeds):
        raise ValueError(
            f"argument `seed`: expected one seed per teacher ({len(teachers)}), got {len(seeds)}"
        )
    R = len(teachers) if teachers is not None else len(seeds or [])
    if R == 0:
        name = "teacher" if teachers is not None else "seed"
        raise ValueError(f"argument `{name}`: expected a non-empty sequence (one per run)")
    teachers = teachers if teachers is not None else [teacher] * R  # type: ignore[list-item]
    seeds = seeds if seeds is not None else [seed] * R  # type: ignore[list-item]
    for t in teachers:
        _check_teacher(t)
    if len({t.p for t in teachers}) != 1:
        raise ValueError(
            "argument `teacher`: expected teachers with the same input dimension "
            f"p, got {sorted({t.p for t in teachers})}"
        )
    parts = [_stream_batches(t, batch_size, steps, s) for t, s in zip(teachers, seeds)]
    X = torch.stack([X for X, _ in parts], dim=1)  # (steps, R, b, p)
    Y = torch.stack([Y for _, Y in parts], dim=1)  # (steps, R, b)
    return OnlineStream(X, Y)


def _stream_batches(
    teacher: Teacher, batch_size: int, steps: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """All batches of :func:`online_stream`: X (steps, b, p), y (steps, b)."""
    _check_teacher(teacher)
    batch_size = require_positive_int("batch_size", batch_size)
    steps = require_steps("steps", steps)
    require_memory(
        largest(batch_size=batch_size, steps=steps),
        float(steps) * batch_size * (teacher.p + 1),
        what=f"the stream of steps x batch_size inputs of dimension {teacher.p}",
    )
    X = gaussian_inputs(steps * batch_size, teacher.p, seed, teacher.U.device)
    Y = teacher(X)
    return X.reshape(steps, batch_size, teacher.p), Y.reshape(steps, batch_size)


@dataclass(frozen=True, eq=False)
class OnlineStream:
    """The stream of :func:`online_stream`, ``stream(t) -> (X[t], Y[t])`` (Chapter 7),
    holding all its batches: X (steps, b, p) and Y (steps, b), or (steps, R, b, p) and
    (steps, R, b) for R runs. :func:`nqf_mini.train_two_layer` checks them once instead
    of at every step."""

    X: torch.Tensor
    Y: torch.Tensor

    def __call__(self, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        steps = self.X.shape[0]
        if not 0 <= t < steps:
            raise ValueError(f"argument `t`: the stream holds steps 0..{steps - 1}, got {t}")
        return self.X[t], self.Y[t]


def _gauss_hermite() -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights for E[h(g)], g ~ N(0, 1): E h = sum w_i h(x_i)."""
    x, w = np.polynomial.hermite_e.hermegauss(_GAUSS_HERMITE_POINTS)
    return x, w / w.sum()


def best_linear_fit(teacher: Teacher) -> tuple[torch.Tensor, float]:
    r"""The population least-squares linear fit of the teacher and its loss (Chapter 7).

    :math:`\beta = \mathbb E[xy] = \sum_j v_j^\ast\,\mathbb E[\phi'(u_j^\ast\cdot x)]\,u_j^\ast`
    (Stein's lemma) and :math:`L_{lin} = \tfrac12(\mathbb E[y^2] - |\beta|^2)` for
    :math:`x \sim N(0, I_p)` (module docstring). This is the lowest loss the NQF of a two-layer
    network, :math:`f = \phi'(0)x^\top UV`, can reach on this teacher.

    Args:
        teacher: from :func:`make_teacher`.

    Returns:
        (beta (p,), L_lin).

    Raises:
        ValueError, TypeError: on a bad argument (naming it).
    """
    _check_teacher(teacher)
    act = get_activation(teacher.activation)
    U = teacher.U.detach().double().cpu()
    v = teacher.v.detach().double().cpu()
    x, w = (torch.as_tensor(a, dtype=torch.float64) for a in _gauss_hermite())
    lengths = U.norm(dim=0)  # (k,)
    z = x.requires_grad_(True)[:, None] * lengths[None, :]  # (q, k)
    (slope,) = torch.autograd.grad(act(z).sum(), z)
    beta = U @ (v * (w @ slope))  # Stein's lemma
    G = U.T @ U  # (k, k) covariances
    k = U.shape[1]
    second = torch.zeros(k, k, dtype=torch.float64)
    g1, g2 = x.detach()[:, None], x.detach()[None, :]
    ww = w[:, None] * w[None, :]
    for i in range(k):
        for j in range(k):
            a = torch.sqrt(G[i, i])
            c = G[i, j] / a
            e = torch.sqrt(torch.clamp(G[j, j] - c * c, min=0.0))
            second[i, j] = (ww * act(a * g1) * act(c * g1 + e * g2)).sum()
    Ey2 = v @ second @ v
    loss = 0.5 * float(Ey2 - beta @ beta)
    return beta.to(teacher.U.device), loss


def best_linear_loss(teacher: Teacher) -> float:
    """L_lin = (1/2)(E[y^2] - |E[x y]|^2), the best loss of any linear model (Chapter 7)."""
    return best_linear_fit(teacher)[1]


def zero_loss(teacher: Teacher) -> float:
    """The loss of f = 0, (1/2) E[y^2], by the same quadrature (Chapter 7)."""
    beta, lin = best_linear_fit(teacher)
    return lin + 0.5 * float(beta @ beta)
