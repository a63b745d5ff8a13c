"""Seeds: every random draw of the package, and of the book's pages, comes from :func:`generator`.

A claim checked on a page must hold for any draw, not only for the one stored with the page. The
environment variable ``NQF_SEED`` (an integer, ``0`` when unset) is added to every seed passed to
:func:`generator`, so one switch moves every draw of a page (data, initial weights, minibatch
orders, teachers) to other values, and a reader can re-run the page to see that its assertions
still hold: ``NQF_SEED=3 jupyter execute chapters/05_sudden_learning.ipynb``, or ``make seeds``
for every page under several shifts. With ``NQF_SEED`` unset a page reproduces its stored outputs.
"""

from __future__ import annotations

import os

import torch

from ._validate import require_seed

ENV_VAR = "NQF_SEED"

__all__ = ["ENV_VAR", "generator", "seed_shift"]


def seed_shift() -> int:
    """The shift ``int(os.environ['NQF_SEED'])`` added to every seed, ``0`` when unset or empty."""
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return 0
    try:
        return int(raw)
    except ValueError:
        raise ValueError(
            f"environment variable {ENV_VAR}: expected an integer seed shift, got {raw!r}"
        ) from None


def generator(seed: int, *, name: str = "seed") -> torch.Generator:
    """A CPU ``torch.Generator`` seeded with ``seed + NQF_SEED``: every seeded draw of the
    course (all chapters).

    Draws are made on the CPU and moved to the device afterwards, so every device sees the same
    numbers; ``NQF_SEED`` shifts every seed at once (the module docstring).

    Args:
        seed: any integer.
        name: the argument named in the error when ``seed`` is not an integer.

    Returns:
        A ``torch.Generator`` on the CPU.

    Raises:
        TypeError: if ``seed`` is not an integer.
        ValueError: if ``NQF_SEED`` is set to something that is not an integer.
    """
    if not isinstance(name, str):
        raise TypeError(
            f"argument `name`: expected the name of the seed argument (a string), "
            f"got {type(name).__name__}"
        )
    return torch.Generator().manual_seed(require_seed(name, seed) + seed_shift())
