"""Where computations run: CUDA when present, otherwise the CPU.

The environment variable ``NQF_DEVICE`` (for example ``cpu`` or ``cuda:1``) overrides the choice, so
a reader with a GPU can still reproduce the CPU outputs stored in the book.
"""

from __future__ import annotations

import os

import torch

ENV_VAR = "NQF_DEVICE"


def _available(device: torch.device) -> str | None:
    """Why ``device`` cannot compute here (None when it can)."""
    if device.type == "cpu":
        return None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            return "CUDA is not available on this machine"
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            return f"this machine has {count} CUDA device(s), numbered from 0"
        return None
    if device.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        return (
            None
            if mps is not None and mps.is_available()
            else "MPS is not available on this machine"
        )
    return f"the package computes on 'cpu', 'cuda' or 'mps', not {device.type!r}"


def _parse(source: str, value: object) -> torch.device:
    """``torch.device(value)`` for a string or a device, checked; ``source`` starts the message
    (e.g. "argument `device`")."""
    if not isinstance(value, (str, torch.device)):
        raise TypeError(
            f"{source}: expected a torch device such as 'cpu' or 'cuda', "
            f"got {type(value).__name__} {value!r}"
        )
    try:
        device = torch.device(value)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise ValueError(
            f"{source}: expected a torch device such as 'cpu' or 'cuda', got {value!r}"
        ) from exc
    reason = _available(device)
    if reason is not None:
        raise ValueError(f"{source} asks for {str(value)!r}, but {reason}")
    return device


def default_device() -> torch.device:
    """The device every computation without tensor inputs runs on (all chapters).

    ``torch.device(os.environ['NQF_DEVICE'])`` if that is set (the test suite and the Colab
    cell set ``cpu``, so that the stored outputs are reproduced), else CUDA if available, else
    the CPU.

    Returns:
        A ``torch.device``.

    Raises:
        ValueError: if ``NQF_DEVICE`` is not a device, or names one this machine lacks.
    """
    override = os.environ.get(ENV_VAR, "").strip()
    if override:
        return _parse(f"environment variable {ENV_VAR}", override)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def resolve_device(device: torch.device | str | None) -> torch.device:
    """``None`` means :func:`default_device`; a string or device is parsed and checked like
    ``NQF_DEVICE`` (a device this machine lacks is refused, naming the argument ``device``)."""
    if device is None:
        return default_device()
    return _parse("argument `device`", device)


def describe_device(device: torch.device | str | None = None) -> str:
    """A one-line description of a device, e.g. ``'cpu (2 threads)'`` or ``'cuda: NVIDIA H200'``."""
    dev = resolve_device(device)
    if dev.type == "cuda":
        return f"cuda: {torch.cuda.get_device_name(dev)}"
    return f"{dev.type} ({torch.get_num_threads()} threads)"
