"""Running a notebook on a Jupyter kernel in a test: a kernel start that is retried, and
channels that wait in slices. (The grader no longer runs Jupyter kernels; the test of the
student edition, which executes each chapter up to its exercises, still does.)"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

from nbclient import NotebookClient
from nbclient.util import run_sync

#: Longest single wait for a kernel message, in seconds (see :func:`poll_in_slices`).
POLL_SLICE = 1.0


def poll_in_slices(channel: Any) -> None:
    """Make ``channel.get_msg`` wait in slices of :data:`POLL_SLICE` seconds.

    The client's sockets are asyncio ZMQ sockets, woken by an edge-triggered file
    descriptor. A wake-up can be lost (the same race as ipykernel's shell socket had,
    ipykernel PR 1529): the message sits in the socket, kernel and client both idle,
    until the wait's timeout, whose final non-blocking poll finds it. nbclient waits
    for a cell's reply in one piece (the whole cell timeout) and for its output with no
    timeout at all, so a lost wake-up showed up as a cell that "took" exactly its
    timeout, or as a run stalled for minutes. Waiting in short slices ends every slice
    with that final poll: a lost wake-up then costs at most one slice.
    """
    get_msg = channel.get_msg

    async def sliced(timeout: float | None = None) -> dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_SLICE if deadline is None else deadline - time.monotonic()
            try:
                return await get_msg(timeout=max(0.0, min(POLL_SLICE, left)))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = sliced


def start_kernel(client: NotebookClient, attempts: int = 3, **kwargs: Any) -> None:
    """Start ``client``'s kernel and its channels, retrying when the kernel does not
    answer; the channels wait in slices (:func:`poll_in_slices`).

    A kernel that misses its start-up handshake (``startup_timeout``) is shut down and
    replaced, so that one lost message at start-up fails fast and is retried instead of
    stalling a run.
    """
    for attempt in range(1, attempts + 1):
        client.km = client.create_kernel_manager()
        try:
            client.start_new_kernel(**kwargs)
            client.start_new_kernel_client()
            poll_in_slices(client.kc.shell_channel)
            poll_in_slices(client.kc.iopub_channel)
            return
        except (RuntimeError, TimeoutError):
            stop_kernel(client)  # start_new_kernel_client cleans up after itself
            if attempt == attempts:
                raise


def stop_kernel(client: NotebookClient) -> None:
    """Kill the kernel now (its whole process group) and close the channels."""
    if client.km is not None and run_sync(client.km._async_is_alive)():
        run_sync(client.km._async_shutdown_kernel)(now=True)
    if client.kc is not None:
        client.kc.stop_channels()
