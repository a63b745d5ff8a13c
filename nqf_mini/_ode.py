"""The package's one ODE integrator: the classical Runge-Kutta method of order 4.

A state is a tuple of tensors (or of floats); ``rhs(state)`` returns its time derivative, a tuple of
the same shape. :func:`rk4_step` takes one step; :func:`integrate` takes steps no longer than a
given size and stops exactly at each requested output time. Gradient flow (Chapter 3), the
Lotka-Volterra system in log space (Chapter 4) and the single-sample ODE (Chapter 4) all use it.
"""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable, Iterable

State = tuple
Rhs = Callable[[State], State]


def _axpy(state: State, h: float, rate: State) -> State:
    return tuple(x + h * k for x, k in zip(state, rate))


def rk4_step(rhs: Rhs, state: State, h: float, k1: State | None = None) -> State:
    """One classical RK4 step of length h; ``k1`` may be passed when rhs(state) is known."""
    k1 = rhs(state) if k1 is None else k1
    k2 = rhs(_axpy(state, h / 2, k1))
    k3 = rhs(_axpy(state, h / 2, k2))
    k4 = rhs(_axpy(state, h, k3))
    return tuple(
        x + (h / 6) * (a + 2 * b + 2 * c + e) for x, a, b, c, e in zip(state, k1, k2, k3, k4)
    )


def integrate(
    rhs: Rhs, state: State, times: Iterable[float], max_step: float | Callable[[State], float]
) -> list[State]:
    """The states at each of ``times`` (increasing, from time 0), by RK4 steps of at most max_step.

    ``max_step`` is a number, or a function of the current state (a local time scale); between two
    output times with a fixed number, the interval is cut into equal steps.
    """
    out: list[Any] = []
    now = 0.0
    for target in times:
        if callable(max_step):
            while now < target:
                h = min(max_step(state), target - now)
                state = rk4_step(rhs, state, h)
                now = now + h if target - now > h else target
        elif target > now:
            n_sub = math.ceil((target - now) / max_step)
            h = (target - now) / n_sub
            for _ in range(n_sub):
                state = rk4_step(rhs, state, h)
            now = target
        out.append(state)
    return out
