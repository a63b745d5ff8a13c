"""Calling a module f(W, x): the input x, its device and dtype, and the scalar output (Chapter 1).

A module's input may be a tensor or any nesting of tuples, lists and dicts of tensors (attention
takes a query and tokens). These helpers are shared by the extraction of A(x)
(:mod:`nqf_mini.quadratic_form`), the symmetry checks and the remainders.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np
import torch

from ._validate import as_tensor, describe, require_callable, require_data_device

Module = Callable[[torch.Tensor, Any], torch.Tensor]


def check_input(x: Any, name: str = "x") -> Any:
    """Validate every leaf of ``x``: real, finite, non-empty tensors (numbers become tensors)."""
    if isinstance(x, (tuple, list)):
        if not x:
            raise ValueError(
                f"argument `{name}`: expected an input, got an empty {type(x).__name__}"
            )
        if not _holds_tensors(x):
            return as_tensor(name, x)  # a list of numbers: one float64 tensor
        return type(x)(check_input(v, name) for v in x)
    if isinstance(x, dict):
        return {k: check_input(v, name) for k, v in x.items()}
    if isinstance(x, torch.Tensor) and x.dtype == torch.bool:
        raise TypeError(
            f"argument `{name}`: expected numbers, got a bool tensor of shape {tuple(x.shape)}"
        )
    if isinstance(x, torch.Tensor) and not x.is_floating_point() and not x.is_complex():
        require_data_device(name, x)
        return x  # integer inputs: indices, token ids
    if isinstance(x, (torch.Tensor, np.ndarray, int, float)) and not isinstance(x, bool):
        return as_tensor(name, x) if not isinstance(x, torch.Tensor) else _checked(name, x)
    raise TypeError(
        f"argument `{name}`: expected tensors (or tuples of tensors), got {describe(x)}"
    )


def _holds_tensors(x: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return True
    if isinstance(x, (tuple, list)):
        return any(_holds_tensors(v) for v in x)
    return isinstance(x, dict)


def _checked(name: str, x: torch.Tensor) -> torch.Tensor:
    as_tensor(name, x)  # raises on complex, NaN, inf, empty
    return x


def cast_input(x: Any, dtype: torch.dtype, device: torch.device, detach: bool = False) -> Any:
    """Move every floating tensor inside ``x`` (tensors, tuples, lists, dicts) to dtype/device;
    with ``detach``, cut them from any autograd graph (training data are not parameters)."""
    if isinstance(x, torch.Tensor):
        x = x.detach() if detach else x
        return x.to(device=device, dtype=dtype) if x.is_floating_point() else x.to(device=device)
    if isinstance(x, (tuple, list)):
        return type(x)(cast_input(v, dtype, device, detach) for v in x)
    if isinstance(x, dict):
        return {k: cast_input(v, dtype, device, detach) for k, v in x.items()}
    return x


def leaves(x: Any) -> list[Any]:
    """The tensors (and other leaves) inside a nesting of tuples, lists and dicts."""
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in leaves(v)]
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in leaves(v)]
    return [x]


def sample(x: Any, i: int | torch.Tensor) -> Any:
    """Sample i of a batched input: index i of the leading dimension of every tensor inside x
    (with an index tensor i (b,), the batch of those b samples)."""
    if isinstance(x, torch.Tensor):
        return x[i]
    if isinstance(x, (tuple, list)):
        return type(x)(sample(v, i) for v in x)
    if isinstance(x, dict):
        return {k: sample(v, i) for k, v in x.items()}
    return x


def input_device(x: Any) -> torch.device | None:
    """The device of the first tensor inside ``x`` (None when there is none)."""
    if isinstance(x, torch.Tensor):
        return x.device
    if isinstance(x, (tuple, list)):
        return next((d for d in map(input_device, x) if d is not None), None)
    if isinstance(x, dict):
        return input_device(list(x.values()))
    return None


def scalar_output(out: Any) -> torch.Tensor:
    """The output of f(W, x) as a 0-d tensor; refuse anything else naming ``f``."""
    if not isinstance(out, torch.Tensor):
        raise TypeError(
            f"argument `f`: expected f(W, x) to return a tensor, got {type(out).__name__}"
        )
    if out.numel() != 1:
        raise ValueError(
            f"argument `f`: expected f(W, x) to return a scalar, "
            f"got a tensor of shape {tuple(out.shape)}"
        )
    return out.reshape(())


def require_finite_output(value: torch.Tensor, where: str) -> None:
    """Refuse a module whose value (or derivative) ``where`` is NaN or inf, naming ``f``."""
    if not bool(torch.isfinite(value).all()):
        bad = "NaN" if bool(torch.isnan(value).any()) else "inf"
        raise ValueError(
            f"argument `f`: {where} is {bad}; the module must be finite (and "
            "twice differentiable) near W = 0 for this input"
        )


def prepare_call(
    f: Any, x: Any, dtype: torch.dtype, device: torch.device | None = None, name: str = "x"
) -> tuple[Any, torch.device]:
    """Validate ``f`` and ``x`` (the argument ``name``) and cast x: returns (x on the device,
    the device)."""
    require_callable("f", f, "f(W, x) returning a scalar tensor", n_args=2)
    x = check_input(x, name)
    dev = device if device is not None else (input_device(x) or torch.device("cpu"))
    return cast_input(x, dtype, dev), dev


def evaluate(f: Module, W: torch.Tensor, x: Any) -> torch.Tensor:
    """f(W, x) as a 0-d tensor; an exception inside f is reported against ``x`` and ``f``."""
    try:
        out = f(W, x)
    except (RuntimeError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(
            f"argument `x`: f(W, x) failed for this input with W of shape "
            f"{tuple(W.shape)} ({type(exc).__name__}: {exc}); check that `x` has "
            "the structure and shape that `f` expects"
        ) from exc
    out = scalar_output(out)
    require_finite_output(out.detach(), f"f(W, x) at W of shape {tuple(W.shape)}")
    return out
