"""Where computations run: CUDA when present, otherwise the CPU.

The environment variable ``NQF_DEVICE`` (for example ``cpu`` or ``cuda:1``) overrides the choice, so
a reader with a GPU can still reproduce the CPU outputs stored in the book.
"""

from __future__ import annotations

import os

import torch

ENV_VAR = "NQF_DEVICE"


def default_device() -> torch.device:
    """Return ``torch.device(os.environ['NQF_DEVICE'])`` if set, else CUDA if available, else CPU."""
    override = os.environ.get(ENV_VAR, "").strip()
    if override:
        try:
            device = torch.device(override)
        except RuntimeError as exc:
            raise ValueError(f"environment variable {ENV_VAR}: expected a torch device such as "
                             f"'cpu' or 'cuda', got {override!r}") from exc
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"environment variable {ENV_VAR} asks for {override!r}, "
                             "but CUDA is not available on this machine")
        return device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def resolve_device(device: torch.device | str | None) -> torch.device:
    """``None`` means :func:`default_device`; strings are parsed by ``torch.device``."""
    if device is None:
        return default_device()
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"argument `device`: expected a torch device such as 'cpu' or 'cuda', "
                         f"got {device!r}") from exc


def describe_device(device: torch.device | str | None = None) -> str:
    """A one-line description of a device, e.g. ``'cpu (2 threads)'`` or ``'cuda: NVIDIA H200'``."""
    dev = resolve_device(device)
    if dev.type == "cuda":
        return f"cuda: {torch.cuda.get_device_name(dev)}"
    return f"{dev.type} ({torch.get_num_threads()} threads)"
