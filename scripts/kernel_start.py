"""One Jupyter kernel starts at a time, across every process of a run (:func:`starting`).

jupyter_client chooses a kernel's five ports by asking the system for free ones, then
the kernel binds them when it has started, seconds later under load. Two processes that
start kernels at the same moment can be handed the same free port, and one kernel then
dies before its first reply ("Address already in use"; seen with two notebooks started
at once, and in CI under load, where nbval then failed every cell of a chapter). The
suite's kernel starters (nbval through :mod:`tests.nbval_kernel`, ``make seeds`` and the
compat sessions' notebook runs, the test front end :mod:`tests.unit.kernel_driver`) hold
one lock file while a kernel starts; the kernels still run side by side.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, as before
    fcntl = None  # type: ignore[assignment]

#: The lock file: in /tmp, which every process of the run sees (nox gives each session
#: its own TMPDIR), or the temporary folder where there is no /tmp.
LOCK = (Path("/tmp") if os.path.isdir("/tmp") else Path(tempfile.gettempdir())) / (
    "nqf-kernel-start.lock"
)


@contextlib.contextmanager
def starting() -> Iterator[None]:
    """Hold the lock while a kernel starts (until it has answered its first request)."""
    if fcntl is None:
        yield
        return
    with open(LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
