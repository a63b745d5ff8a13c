"""Argument checking shared by the whole package: one validator per kind of quantity.

Every public function of ``nqf_mini`` validates its inputs at the boundary with these helpers, so
that a bad call fails at once with a message that names the argument, says what was expected and
what was given. Wrong kinds of object (strings, complex numbers, booleans where a number is meant,
torch ``bool`` tensors included) raise ``TypeError``; bad values and shapes raise ``ValueError``.
Tensors are refused when they hold NaN or inf (unless the caller says inf is meaningful), are
empty, or live on a device that holds no data (``meta``). Python lists and tuples of numbers
become float64 tensors; a tensor that requires grad is accepted (results are computed from its
values). Sizes are checked against the memory of the device before anything is allocated
(:func:`require_memory`), and iteration counts against :data:`MAX_STEPS`.
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
import warnings
from typing import Any
from collections.abc import Sequence

import numpy as np
import torch

FLOAT_DTYPES = (torch.float32, torch.float64)
DATA_DEVICES = ("cpu", "cuda", "mps")
MAX_STEPS = 10**7  # iteration counts above this are refused (minutes of the fastest loop)
MAX_TRIALS = 10**5  # random trials, Jacobi sweeps: each costs at least a module evaluation


def describe(value: Any) -> str:
    """A short description of a value for an error message."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"[:120]


def require_dtype(dtype: Any, name: str = "dtype") -> torch.dtype:
    """``dtype`` must be torch.float32 or torch.float64."""
    if not isinstance(dtype, torch.dtype) or dtype not in FLOAT_DTYPES:
        raise TypeError(
            f"argument `{name}`: expected torch.float32 or torch.float64, got {dtype!r}"
        )
    return dtype


def require_data_device(name: str, tensor: torch.Tensor) -> None:
    """Refuse tensors on a device that holds no values (``meta``) or that the package does not
    compute on."""
    if tensor.device.type not in DATA_DEVICES:
        raise ValueError(
            f"argument `{name}`: expected a tensor on one of the devices "
            f"{list(DATA_DEVICES)}, got one on {tensor.device}"
        )


def _to_tensor(name: str, value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bool:
            raise TypeError(
                f"argument `{name}`: expected numbers, got a bool tensor of shape "
                f"{tuple(value.shape)}"
            )
        require_data_device(name, value)
        return value
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(
            f"argument `{name}`: expected a tensor or array of numbers, got {describe(value)}"
        )
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(
            f"argument `{name}`: expected a tensor or array of numbers, got {describe(value)}"
        ) from exc
    if arr.dtype.kind == "c":
        raise TypeError(f"argument `{name}`: expected real numbers, got complex values")
    if arr.dtype.kind == "b":
        raise TypeError(f"argument `{name}`: expected numbers, got booleans {describe(value)}")
    if arr.dtype.kind not in "fiu":
        raise TypeError(
            f"argument `{name}`: expected a tensor or array of numbers, got {describe(value)}"
        )
    if arr.dtype.kind != "f" or not isinstance(value, np.ndarray):
        arr = arr.astype(np.float64)  # lists, tuples and integers: float64
    return torch.tensor(arr)  # a copy: the caller's array is never aliased


def as_tensor(
    name: str,
    value: Any,
    *,
    ndim: int | None = None,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
    finite: bool = True,
    nonempty: bool = True,
) -> torch.Tensor:
    """Convert ``value`` to a real floating tensor and check it.

    Tensors and NumPy arrays keep a float32 / float64 dtype (other dtypes become float64); lists,
    tuples and scalars become float64; ``dtype`` overrides both. Complex values, strings and
    objects that are not numbers are refused, and so are NaN and inf (``finite=False`` allows
    them) and empty tensors (``nonempty=False`` allows them).
    """
    tensor = _to_tensor(name, value)
    if tensor.is_complex():
        raise TypeError(f"argument `{name}`: expected a real tensor, got dtype {tensor.dtype}")
    if dtype is not None:
        require_dtype(dtype)
    target = dtype or (tensor.dtype if tensor.dtype in FLOAT_DTYPES else torch.float64)
    tensor = tensor.to(dtype=target, device=device if device is not None else tensor.device)
    if ndim is not None and tensor.ndim != ndim:
        raise ValueError(
            f"argument `{name}`: expected a {ndim}-D tensor, got shape {tuple(tensor.shape)}"
        )
    if nonempty and tensor.numel() == 0:
        raise ValueError(
            f"argument `{name}`: expected a non-empty tensor, got shape {tuple(tensor.shape)}"
        )
    if finite:
        require_finite(name, tensor)
    return tensor


def require_finite(name: str, tensor: torch.Tensor) -> None:
    """Refuse NaN and inf entries.

    A NaN or inf entry makes the sum of the entries NaN or inf, so a finite sum proves them
    all finite in one fast reduction (several times faster than an elementwise test, which
    runs only when the sum is not finite, e.g. when it overflows)."""
    if math.isfinite(float(tensor.detach().sum())):
        return
    if not bool(torch.isfinite(tensor).all()):
        bad = "NaN" if bool(torch.isnan(tensor).any()) else "inf"
        raise ValueError(f"argument `{name}`: expected finite values, got {bad}")


def require_shape(
    name: str, tensor: torch.Tensor, shape: Sequence[int | None], like: str | None = None
) -> None:
    """Check ``tensor.shape`` against ``shape``, where ``None`` matches any size; ``like``
    names the argument the sizes come from (it is named in the message too)."""
    ok = tensor.ndim == len(shape) and all(s is None or s == t for s, t in zip(shape, tensor.shape))
    if not ok:
        sizes = ["*" if s is None else str(s) for s in shape]
        want = "(" + ", ".join(sizes) + ("," if len(sizes) == 1 else "") + ")"
        match = f" to match `{like}`" if like else ""
        raise ValueError(
            f"argument `{name}`: expected shape {want}{match}, got {tuple(tensor.shape)}"
        )


# --- scalars -------------------------------------------------------------------------------------


def _scalar_tensor(value: Any) -> bool:
    """A 0-d tensor with a value (not bool, not complex), usable as a Python number."""
    return (
        isinstance(value, torch.Tensor)
        and value.ndim == 0
        and value.dtype != torch.bool
        and not value.is_complex()
        and value.device.type in DATA_DEVICES
    )


def _is_int(value: Any) -> bool:
    if _scalar_tensor(value):
        return not value.is_floating_point()
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    if _scalar_tensor(value):
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def require_positive_int(
    name: str, value: Any, minimum: int = 1, maximum: int | None = None, why: str = ""
) -> int:
    """An integer in [``minimum``, ``maximum``] (booleans and floats are refused); a NumPy or
    0-d tensor integer is read as a Python int. ``why`` explains the maximum."""
    if not _is_int(value):
        raise TypeError(
            f"argument `{name}`: expected an integer >= {minimum}, got {describe(value)}"
        )
    value = int(value)
    if value < minimum:
        raise ValueError(f"argument `{name}`: expected an integer >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(
            f"argument `{name}`: expected an integer <= {maximum:,}{why}, got {value:,}"
        )
    return value


def require_steps(name: str, value: Any, minimum: int = 1) -> int:
    """An iteration count in [``minimum``, :data:`MAX_STEPS`]: a count that could not finish
    in reasonable time is refused at once instead of running."""
    return require_positive_int(
        name, value, minimum, MAX_STEPS, " (split longer runs, or use a larger step size)"
    )


def require_trials(name: str, value: Any) -> int:
    """A number of random trials or sweeps in [1, :data:`MAX_TRIALS`]."""
    return require_positive_int(name, value, 1, MAX_TRIALS)


def require_seed(name: str, value: Any) -> int:
    """A seed: any integer."""
    if not _is_int(value):
        raise TypeError(f"argument `{name}`: expected an integer seed, got {describe(value)}")
    return int(value)


def require_bool(name: str, value: Any) -> bool:
    """True or False (NumPy booleans too); anything else is refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"argument `{name}`: expected True or False, got {describe(value)}")
    return bool(value)


def require_real(name: str, value: Any) -> float:
    """A finite real number (a NumPy scalar or a 0-d tensor is read as a float)."""
    if not _is_real(value):
        raise TypeError(f"argument `{name}`: expected a number, got {describe(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"argument `{name}`: expected a finite number, got {value}")
    return value


def require_positive(name: str, value: Any) -> float:
    """A finite number > 0."""
    value = require_real(name, value)
    if not value > 0:
        raise ValueError(f"argument `{name}`: expected a finite number > 0, got {value}")
    return value


def require_nonnegative(name: str, value: Any) -> float:
    """A finite number >= 0."""
    value = require_real(name, value)
    if value < 0:
        raise ValueError(f"argument `{name}`: expected a finite number >= 0, got {value}")
    return value


def require_in_open_interval(
    name: str, value: Any, low: float, high: float, why: str = ""
) -> float:
    """A number in (low, high); ``why`` is appended to the message."""
    value = require_real(name, value)
    if not low < value < high:
        raise ValueError(
            f"argument `{name}`: expected a number in ({low:g}, {high:g}){why}, got {value}"
        )
    return value


def require_fraction(name: str, value: Any) -> float:
    """A fraction strictly between 0 and 1."""
    return require_in_open_interval(name, value, 0.0, 1.0)


def require_unit_interval(name: str, value: Any, why: str = "") -> float:
    """A number in [0, 1); ``why`` is appended to the message."""
    value = require_real(name, value)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"argument `{name}`: expected a number in [0, 1){why}, got {value}")
    return value


def require_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """One of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"argument `{name}`: expected one of {list(choices)}, got {value!r}")
    return value


# --- memory ---------------------------------------------------------------------------------------


def device_memory(device: torch.device) -> int:
    """The memory of a device in bytes: the GPU's total memory, or the machine's RAM."""
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).total_memory)
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # not POSIX: assume 16 GiB
        return 16 * 2**30


def largest(**sizes: int) -> str:
    """The name of the largest of several sizes: the argument a memory error should name."""
    return max(sizes, key=lambda k: sizes[k])


ROUND_OFF_RTOL = {
    torch.float64: 1e-8,
    torch.float32: 1e-4,
    torch.float16: 1e-2,
    torch.bfloat16: 5e-2,
}


def round_off_rtol(value: Any) -> float:
    """A relative tolerance for round-off in data given as ``value``: it follows the precision
    the data came in (a float16 tensor converted to float64 still carries float16's errors)."""
    dtype = getattr(value, "dtype", torch.float64)
    if isinstance(dtype, np.dtype):
        dtype = {np.dtype("float32"): torch.float32, np.dtype("float16"): torch.float16}.get(
            dtype, torch.float64
        )
    return ROUND_OFF_RTOL.get(dtype, 1e-8)


def require_memory(
    name: str,
    numel: float,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    what: str = "the result",
) -> None:
    """Refuse a size whose ``numel`` elements of ``dtype`` exceed the device's memory.

    Called before allocating, so that a size like 10**12 fails at once, naming the argument
    that set it, instead of in torch's allocator (or after minutes of swapping).
    """
    dev = torch.device("cpu") if device is None else torch.device(device)
    need = float(numel) * torch.empty((), dtype=dtype).element_size()
    have = device_memory(dev)
    if need > have:
        raise ValueError(
            f"argument `{name}`: {what} would need {need:.3g} bytes, more than the "
            f"{have / 2**30:.0f} GiB of memory of {dev}; choose a smaller `{name}`"
        )


def require_callable(name: str, value: Any, signature: str, n_args: int | None = None) -> None:
    """A callable, e.g. the module ``f(W, x)``; with ``n_args``, one that accepts that many
    positional arguments (when its signature can be read)."""
    if not callable(value):
        raise TypeError(
            f"argument `{name}`: expected a function {signature}, got {describe(value)}"
        )
    if n_args is None:
        return
    try:
        sig = inspect.signature(value)
    except (TypeError, ValueError):  # builtins without a signature
        return
    try:
        sig.bind(*([None] * n_args))
    except TypeError:
        raise TypeError(
            f"argument `{name}`: expected a function {signature} of {n_args} "
            f"positional arguments, got one with signature {sig}"
        ) from None


# --- tensors with a meaning -----------------------------------------------------------------------


def require_positive_entries(name: str, tensor: torch.Tensor, strict: bool = True) -> None:
    """Entries > 0 (``strict``) or >= 0."""
    bad = (tensor <= 0) if strict else (tensor < 0)
    if bool(bad.any()):
        sign = ">" if strict else ">="
        raise ValueError(
            f"argument `{name}`: expected entries {sign} 0, got minimum {tensor.min().item():.3g}"
        )


def require_time_grid(
    name: str,
    t: Any,
    *,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
    nonnegative: bool = True,
) -> torch.Tensor:
    """A non-empty 1-D grid of strictly increasing finite times (a scalar becomes one time).

    ``nonnegative`` requires t >= 0 (times measured from the start of training).
    """
    t = as_tensor(name, t, dtype=dtype, device=device)
    t = t.reshape(1) if t.ndim == 0 else t
    if t.ndim != 1:
        raise ValueError(
            f"argument `{name}`: expected a 1-D tensor of times, got shape {tuple(t.shape)}"
        )
    if t.numel() > 1 and not bool((t[1:] > t[:-1]).all()):
        raise ValueError(
            f"argument `{name}`: expected strictly increasing times, got {t.tolist()[:6]}..."
        )
    if nonnegative and bool(t[0] < 0):
        raise ValueError(f"argument `{name}`: expected times >= 0, got {t[0].item():.3g}")
    return t


def require_symmetric(name: str, tensor: torch.Tensor, rtol: float = 1e-6) -> None:
    """Symmetric matrices in the last two dimensions (finite; relative tolerance ``rtol``)."""
    if tensor.ndim < 2 or tensor.shape[-1] != tensor.shape[-2]:
        raise ValueError(
            f"argument `{name}`: expected square matrices in the last two dimensions, "
            f"got shape {tuple(tensor.shape)}"
        )
    require_finite(name, tensor)
    gap = (tensor - tensor.transpose(-1, -2)).abs().max().item() if tensor.numel() else 0.0
    scale = max(tensor.abs().max().item() if tensor.numel() else 0.0, 1e-300)
    if gap > rtol * scale:
        raise ValueError(
            f"argument `{name}`: expected symmetric matrices, "
            f"got max |X - X^T| = {gap:.3g} (relative {gap / scale:.3g})"
        )


def require_square_stack(name: str, tensor: torch.Tensor) -> None:
    """A stack (n, p, p) of square matrices."""
    if tensor.ndim != 3 or tensor.shape[1] != tensor.shape[2]:
        raise ValueError(
            f"argument `{name}`: expected a stack of square matrices (n, p, p), "
            f"got shape {tuple(tensor.shape)}"
        )


def require_symmetric_stack(name: str, tensor: torch.Tensor) -> None:
    """A stack (n, p, p) of symmetric matrices."""
    require_square_stack(name, tensor)
    require_symmetric(name, tensor)


def require_psd(name: str, tensor: torch.Tensor, rtol: float = 1e-8) -> None:
    """A symmetric positive semi-definite matrix."""
    require_symmetric(name, tensor)
    eig_min = torch.linalg.eigvalsh((tensor + tensor.transpose(-1, -2)) / 2).min().item()
    scale = max(tensor.abs().max().item(), 1e-300)
    if eig_min < -rtol * scale:
        raise ValueError(
            f"argument `{name}`: expected a positive semi-definite matrix, "
            f"got smallest eigenvalue {eig_min:.3g}"
        )


def require_same_shape(names: str, a: Any, b: Any) -> None:
    """Two arrays of equal shape; ``names`` is e.g. "`a`, `b`"."""
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(
            f"arguments {names}: expected equal shapes, got {tuple(a.shape)} and {tuple(b.shape)}"
        )


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A float64 NumPy copy on the CPU (the package's type for recorded series)."""
    return tensor.detach().to("cpu", torch.float64).numpy()


def warn_subnormal(name: str, tensor: torch.Tensor) -> None:
    """Warn when non-zero entries of ``tensor`` are below the smallest normal number of its
    dtype (float32: 1.2e-38): they have already lost digits, or become 0."""
    tiny = torch.finfo(tensor.dtype).tiny
    small = (tensor != 0) & (tensor.abs() < tiny)
    if bool(small.any()):
        warnings.warn(
            f"argument `{name}`: values below {tiny:.3g}, the smallest normal "
            f"{tensor.dtype} number, have lost precision (smallest |value| "
            f"{tensor[small].abs().min().item():.3g}); pass float64 tensors",
            RuntimeWarning,
            stacklevel=3,
        )
