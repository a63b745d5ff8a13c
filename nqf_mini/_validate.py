"""Argument checking shared by the whole package.

Every public function of ``nqf_mini`` validates its inputs with these helpers so that a bad call
fails at once with a message that names the argument, says what was expected and what was given.
Shape and value problems raise ``ValueError``; wrong kinds of object or dtypes raise ``TypeError``.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

FLOAT_DTYPES = (torch.float32, torch.float64)


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"[:120]


def as_tensor(
    name: str,
    value: Any,
    *,
    ndim: int | None = None,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Convert ``value`` to a floating tensor, checking its number of dimensions.

    Integer and boolean inputs are promoted to ``dtype`` (float64 when ``dtype`` is None); complex
    inputs are refused.
    """
    if isinstance(value, torch.Tensor):
        tensor = value
    else:
        try:
            tensor = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise TypeError(f"argument `{name}`: expected a tensor or array of numbers, "
                            f"got {_describe(value)}") from exc
    if tensor.is_complex():
        raise TypeError(f"argument `{name}`: expected a real tensor, got dtype {tensor.dtype}")
    if dtype is not None and dtype not in FLOAT_DTYPES:
        raise TypeError(f"argument `dtype`: expected torch.float32 or torch.float64, got {dtype}")
    target = dtype or (tensor.dtype if tensor.dtype in FLOAT_DTYPES else torch.float64)
    tensor = tensor.to(dtype=target, device=device if device is not None else tensor.device)
    if ndim is not None and tensor.ndim != ndim:
        raise ValueError(f"argument `{name}`: expected a {ndim}-D tensor, "
                         f"got shape {tuple(tensor.shape)}")
    return tensor


def require_shape(name: str, tensor: torch.Tensor, shape: Sequence[int | None]) -> None:
    """Check ``tensor.shape`` against ``shape``, where ``None`` matches any size."""
    ok = tensor.ndim == len(shape) and all(s is None or s == t for s, t in zip(shape, tensor.shape))
    if not ok:
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"argument `{name}`: expected shape {want}, got {tuple(tensor.shape)}")


def require_positive_int(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"argument `{name}`: expected an integer >= {minimum}, got {_describe(value)}")
    if value < minimum:
        raise ValueError(f"argument `{name}`: expected an integer >= {minimum}, got {value}")
    return value


def require_positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"argument `{name}`: expected a positive number, got {_describe(value)}")
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError(f"argument `{name}`: expected a finite number > 0, got {value}")
    return float(value)


def require_symmetric(name: str, tensor: torch.Tensor, rtol: float = 1e-6) -> None:
    """Check that the last two dimensions of ``tensor`` form symmetric matrices."""
    if tensor.ndim < 2 or tensor.shape[-1] != tensor.shape[-2]:
        raise ValueError(f"argument `{name}`: expected square matrices in the last two dimensions, "
                         f"got shape {tuple(tensor.shape)}")
    gap = (tensor - tensor.transpose(-1, -2)).abs().max().item() if tensor.numel() else 0.0
    scale = max(tensor.abs().max().item() if tensor.numel() else 0.0, 1e-300)
    if gap > rtol * scale:
        raise ValueError(f"argument `{name}`: expected symmetric matrices, "
                         f"got max |X - X^T| = {gap:.3g} (relative {gap / scale:.3g})")


def require_psd(name: str, tensor: torch.Tensor, rtol: float = 1e-8) -> None:
    """Check that ``tensor`` is a symmetric positive semi-definite matrix."""
    require_symmetric(name, tensor)
    eig_min = torch.linalg.eigvalsh(tensor).min().item()
    scale = max(tensor.abs().max().item(), 1e-300)
    if eig_min < -rtol * scale:
        raise ValueError(f"argument `{name}`: expected a positive semi-definite matrix, "
                         f"got smallest eigenvalue {eig_min:.3g}")


def require_finite(name: str, tensor: torch.Tensor) -> None:
    if not torch.isfinite(tensor).all():
        raise ValueError(f"argument `{name}`: expected finite values, got NaN or inf")
