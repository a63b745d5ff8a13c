"""Grade one submitted notebook (run by ``make grade`` once per notebook, in its own
process).

The student's notebook runs, top to bottom, in a Jupyter kernel of its own (the "student
kernel": a separate process, with a deadline for the whole notebook). What it prints is
ignored, and so is anything it does to its own modules: a ``check.exercise`` replaced by
``lambda *a: print("PASS")`` changes nothing here. After the last cell, this process
asks the kernel, cell by cell, for each exercise's answer
(:mod:`nqf_mini.course.probe`): a function is called on the public cases and on hidden,
randomised ones drawn from a seed the notebook never saw, and only the plain data it
returns (tensors, numbers, strings) comes back, read with
``torch.load(weights_only=True)``. The checks of :mod:`nqf_mini.course.check` then judge
that data in this process, which never runs a line of the student's code.

Usage: ``python -m nqf_mini.course.grade_notebook NOTEBOOK --chapter N --out
result.json``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import sys
import tempfile
import time
from queue import Empty
from pathlib import Path
from typing import Any

import nbformat
import torch
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync

from .answers import Answer, AnswerError, encode_arrays, reject
from .check import judge
from .points import GRADED, labels_of_chapter

#: Environment of the student kernel: CPU, one thread per kernel (the grader runs
#: several).
KERNEL_ENV = {
    "NQF_DEVICE": "cpu",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
}


class NotebookTimeout(Exception):
    """The notebook (or a probe of its answers) ran past the deadline."""


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


class KernelSession:
    """The student kernel, with a deadline for everything run in it."""

    def __init__(
        self,
        nb: nbformat.NotebookNode,
        deadline: float,
        workdir: Path,
        pid_file: Path | None = None,
    ) -> None:
        self.deadline = deadline
        self.io = Path(tempfile.mkdtemp(prefix="nqf-probe-"))
        self.client = NotebookClient(
            nb,
            timeout=60,
            kernel_name="python3",
            allow_errors=True,
            record_timing=False,
            startup_timeout=60,
            iopub_timeout=10,
            shutdown_kernel="immediate",
        )
        env = {**os.environ, **KERNEL_ENV}
        self.probe_index = len(nb.cells)  # nbclient stores each executed cell there
        nb.cells.append(nbformat.v4.new_code_cell(""))
        start_kernel(self.client, env=env, cwd=str(workdir))
        if pid_file is not None:
            pid = getattr(self.client.km.provisioner, "pid", None)
            pid_file.write_text(str(pid or ""))
        self.calls = 0

    def remaining(self) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise NotebookTimeout
        return max(1, int(left))

    def execute(
        self, cell: nbformat.NotebookNode, index: int, store_history: bool = True
    ) -> None:
        """Run one cell; NotebookTimeout past the deadline, DeadKernelError if the
        kernel dies."""
        self.client.timeout = self.remaining()
        try:
            self.client.execute_cell(cell, index, store_history=store_history)
        except CellTimeoutError:
            raise NotebookTimeout from None

    def run_code(self, code: str) -> None:
        """Run the grader's own code in the kernel (not stored in the history)."""
        self.execute(
            nbformat.v4.new_code_cell(code), self.probe_index, store_history=False
        )

    def exchange(self, code: str, payload: Any | None = None) -> Any:
        """Save ``payload`` for the kernel, run ``code`` (which may use {inp} and {out})
        and
        read back what it wrote, as plain data."""
        self.calls += 1
        inp, out = self.io / f"in{self.calls}.pt", self.io / f"out{self.calls}.pt"
        if payload is not None:
            torch.save(encode_arrays(payload), inp)
        self.run_code(code.format(inp=str(inp), out=str(out)))
        try:
            return torch.load(out, weights_only=True)
        except Exception as exc:  # noqa: BLE001
            # Anything unreadable is the answer's failure.
            raise reject(
                f"the answer could not be read back from the kernel "
                f"({type(exc).__name__})"
            ) from None

    def close(self) -> None:
        stop_kernel(self.client)
        shutil.rmtree(self.io, ignore_errors=True)


_PROBE = "__import__('nqf_mini.course.probe', fromlist=['probe'])"


class RemoteAnswer(Answer):
    """An answer that lives in the student kernel; every call is a round trip to it."""

    def __init__(
        self,
        session: KernelSession,
        expr: str,
        index: int | None = None,
        name: str = "your function",
    ) -> None:
        self.session, self.expr, self.index, self.name = session, expr, index, name
        if index is None:
            info = session.exchange(f"{_PROBE}.describe({expr!r}, {{out!r}})")
            info = info if isinstance(info, dict) else {"kind": "error"}
        else:
            info = {"kind": "function", "type": "function"}
        self.kind = info.get("kind", "error")
        self.type_name = str(info.get("type", "?"))
        self.length = int(info.get("length", 0) or 0)
        self._info = info
        if self.kind == "error":
            self.kind, self.type_name = (
                "value",
                f"an expression that raised {self.type_name}",
            )

    def _call(self, args: tuple, hessian: int | None = None) -> Any:
        code = (
            f"{_PROBE}.call({self.expr!r}, {self.index!r}, {{inp!r}}, {{out!r}}, "
            f"{self.name!r}, {hessian!r})"
        )
        record = self.session.exchange(code, payload=args)
        if not isinstance(record, dict) or record.get("status") not in (
            "value",
            "raised",
            "refused",
            "missing",
        ):
            raise reject("the answer's result could not be read back from the kernel")
        if record["status"] == "value":
            from .answers import plain

            return plain(record["value"], f"the result of {self.name}")
        raise reject(
            str(record.get("message", ""))[:300], missing=record["status"] == "missing"
        )

    def __call__(self, *args: Any) -> Any:
        return self._call(args)

    @property
    def value(self) -> Any:
        if "error" in self._info:
            raise reject(str(self._info["error"]))
        from .answers import plain

        return plain(self._info.get("value"))

    def part(self, index: int) -> Answer:
        return RemoteAnswer(
            self.session, self.expr, index, f"your function #{index + 1}"
        )

    def hessian(self, x: Any, p: int) -> Any:
        return self._call((x,), hessian=p)


def answer_expression(nb: nbformat.NotebookNode, label: str) -> str:
    """The expression the student's own ``check.exercise(label, ...)`` call passes (the
    last one),
    or the chapter's, from :data:`~nqf_mini.course.points.GRADED`."""
    found = GRADED[label].answer
    for cell in nb.cells:
        if cell.cell_type != "code" or label not in cell.source:
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and ast.unparse(node.func).endswith("exercise")
                and len(node.args) >= 2
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value == label
            ):
                found = ast.unparse(node.args[1])
    return found


#: Code that has no business in a chapter and is how one would tamper with the grader's
#: probe
#: inside the student kernel (frames, profilers, the probe and the answers module
#: themselves).
TAMPERING = re.compile(
    r"\b(setprofile|settrace|_getframe|currentframe|_current_frames|f_back|"
    r"f_locals|f_globals|gc\.get_referr\w+|ctypes|course\.(?:probe|answers|"
    r"grade\w*)|import\s[^\n]*\b(?:probe|answers|grade_notebook)\b)"
)


def tampering(nb: nbformat.NotebookNode) -> str | None:
    """The first suspicious piece of code in the notebook's code cells, or None."""
    for cell in nb.cells:
        if cell.cell_type == "code" and (match := TAMPERING.search(cell.source)):
            return match.group(0)
    return None


def _row(label: str, verdict: str, message: str) -> dict[str, Any]:
    points = GRADED[label].points
    return {
        "label": label,
        "points": points if verdict == "pass" else 0,
        "max_points": points,
        "verdict": verdict,
        "message": message,
    }


def grade_notebook(
    path: Path,
    chapter: int,
    seed: int,
    timeout: float,
    pid_file: Path | None = None,
    timing: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """One row per graded exercise of ``chapter`` for the notebook at ``path``.

    ``timing``, when given, receives the seconds spent starting the kernel, running the
    cells (and the slowest cell), probing the answers and stopping the kernel.
    """
    timing = {} if timing is None else timing
    labels = labels_of_chapter(chapter)
    start = time.monotonic()
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # noqa: BLE001
        # An unreadable file is the submission's error.
        return [
            _row(label, "error", f"the notebook cannot be read: {exc}"[:300])
            for label in labels
        ]
    if (found := tampering(nb)) is not None:
        return [
            _row(
                label,
                "error",
                f"not graded: the notebook uses `{found}`, which reaches into the "
                f"grader or the call stack; review it by hand",
            )
            for label in labels
        ]
    workdir = Path(tempfile.mkdtemp(prefix="nqf-grade-"))
    session, rows = None, []
    try:
        expressions = {label: answer_expression(nb, label) for label in labels}
        cells = list(enumerate(nb.cells))
        mark = time.monotonic()
        session = KernelSession(nb, start + timeout, workdir, pid_file)
        timing["kernel"], mark = time.monotonic() - mark, time.monotonic()
        timing["slowest_cell"] = 0.0
        for index, cell in cells:
            if cell.cell_type == "code":
                session.execute(cell, index)
                timing["slowest_cell"] = max(
                    timing["slowest_cell"], time.monotonic() - mark
                )
                mark = time.monotonic()
        timing["cells"] = time.monotonic() - start - timing["kernel"]
        mark = time.monotonic()
        for label in labels:
            answer = RemoteAnswer(session, expressions[label])
            result = judge(label, answer, hidden=seed)
            verdict = "pass" if result.ok else "missing" if result.missing else "fail"
            rows.append(_row(label, verdict, result.message))
        timing["probes"] = time.monotonic() - mark
        return rows
    except NotebookTimeout:
        verdict, message = (
            "timeout",
            f"the notebook did not finish within {timeout:g} s",
        )
    except DeadKernelError:
        verdict, message = "error", "the kernel died while running the notebook"
    except AnswerError as err:
        verdict, message = "error", err.verdict.message
    except Exception as exc:  # noqa: BLE001
        # A crash of the run is the notebook's error.
        verdict, message = "error", f"{type(exc).__name__}: {exc}"[:300]
    finally:
        mark = time.monotonic()
        if session is not None:
            session.close()
        timing["close"] = time.monotonic() - mark
        shutil.rmtree(workdir, ignore_errors=True)
    return rows + [_row(label, verdict, message) for label in labels[len(rows) :]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--chapter", type=int, required=True)
    parser.add_argument(
        "--seed", type=int, required=True, help="seed of the hidden cases"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds for the notebook"
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="where to write the rows (JSON)"
    )
    parser.add_argument(
        "--pid-file", type=Path, help="where to write the kernel's process id"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.monotonic()
    timing: dict[str, float] = {}
    rows = grade_notebook(
        args.notebook, args.chapter, args.seed, args.timeout, args.pid_file, timing
    )
    timing["total"] = time.monotonic() - start
    args.out.write_text(json.dumps({"rows": rows, "timing": timing}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
