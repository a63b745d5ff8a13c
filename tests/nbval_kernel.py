"""A pytest plugin for the nbval runs (``-p tests.nbval_kernel``: ``make nbval`` and the
Colab session of ``make compat``): each notebook's kernel starts under the run's kernel
lock (:func:`scripts.kernel_start.starting`), and a kernel that dies while starting is
started once more.

nbval sends a kernel's stderr to /dev/null, so the reason a kernel died is not shown;
under load in CI one died before its first reply and nbval failed every cell of its
chapter. A kernel that dies twice fails as before, with nbval's error.
"""

from __future__ import annotations

import logging
from typing import Any

import nbval.kernel

from scripts.kernel_start import starting

_start = nbval.kernel.start_new_kernel


def start_new_kernel(*args: Any, **kwargs: Any) -> Any:
    """nbval's ``start_new_kernel``, under the lock, and once more if the kernel died."""
    try:
        with starting():
            return _start(*args, **kwargs)
    except RuntimeError as exc:
        if "died" not in str(exc):
            raise
        logging.getLogger(__name__).warning("%s: starting the kernel once more", exc)
    with starting():
        return _start(*args, **kwargs)


nbval.kernel.start_new_kernel = start_new_kernel
