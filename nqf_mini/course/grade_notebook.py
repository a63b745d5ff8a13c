"""Grade one submitted notebook (:func:`grade_notebook`), for ``make grade``.

The notebook's cells run in a sandboxed *notebook kernel* (:mod:`~nqf_mini.course.
grading_kernel`, :mod:`~nqf_mini.course.sandbox`): every cell the student wrote, and of
the lecture's cells those an answer depends on (:mod:`~nqf_mini.course.notebook_slice`).
What it prints is ignored, and so is anything it does to its own modules. Then, exercise
by exercise, the grader asks that kernel for the answer (the expression the student's
own ``check.exercise(label, ...)`` call passes, or the one the instructor's chapter
passes): a value comes back as plain data, a function as a pickle that a second
sandboxed *answers kernel* loads and calls on the public cases and on hidden, randomised
ones drawn here from a seed neither kernel sees. The checks of :mod:`nqf_mini.course.
check` judge the plain results in this process, which never runs a line of the
student's code.

One answer that hangs, crashes its kernel or cannot be read costs that answer only: the
kernel is started again for the next one.
"""

from __future__ import annotations

import ast
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from .answers import PLAIN_TYPES, Answer, encode_arrays, plain, reject
from .check import judge
from .notebook_slice import cells_to_run
from .points import POINTS
from .registry import CHECKS
from .sandbox import Kernel, KernelFailure, KernelTimeout, Limits, StagedPackage

KINDS = ("missing", "value", "function", "functions", "error")


@dataclass(frozen=True)
class ChapterKey:
    """What the grader takes from an instructor chapter: its graded labels, the
    expression each exercise's self-check passes, and its lecture cells."""

    number: int
    labels: tuple[str, ...]
    expressions: dict[str, str]
    lecture: frozenset[str]


def chapter_number(path: Path) -> int | None:
    """The number a chapter's file name starts with (``04_lotka_volterra.ipynb``)."""
    match = re.match(r"0*(\d+)_", path.name)
    return int(match.group(1)) if match else None


def labels_of_chapter(chapter: int) -> list[str]:
    """The graded labels of ``chapter`` (registered checks, in registration order)."""
    return [label for label in CHECKS if label.startswith(f"ch{chapter}.")]


def answer_expression(nb: nbformat.NotebookNode, label: str) -> str | None:
    """The expression the notebook's last ``check.exercise(label, ...)`` call passes,
    or None."""
    found = None
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


def chapter_keys(chapters: Path) -> dict[int, ChapterKey]:
    """The :class:`ChapterKey` of every instructor chapter in ``chapters`` that has
    graded exercises (found by their file names' numbers and the registered checks)."""
    keys = {}
    for path in sorted(chapters.glob("*.ipynb")):
        number = chapter_number(path)
        if number is None:
            continue
        labels = labels_of_chapter(number)
        if not labels:
            continue
        nb = nbformat.read(path, as_version=4)
        expressions = {}
        for label in labels:
            expr = answer_expression(nb, label)
            if expr is None:
                raise ValueError(
                    f"{path.name}: no check.exercise({label!r}, ...) call, so the "
                    f"grader does not know which name holds the answer"
                )
            if label not in POINTS:
                raise ValueError(f"{label}: no points set; add it to nqf_mini/course/points.py")
            expressions[label] = expr
        lecture = frozenset(
            cell.source.strip()
            for cell in nb.cells
            if cell.cell_type == "code" and "solution" not in cell.metadata.get("tags", [])
        )
        keys[number] = ChapterKey(number, tuple(labels), expressions, lecture)
    return keys


# --- the answers kernel ---------------------------------------------------------------


class AnswerCalls:
    """The answers kernel of one notebook, started when an answer is first called and
    again after it died; it loads each answer's pickle before its first call."""

    def __init__(self, staged: StagedPackage, limits: Limits, unsafe: bool) -> None:
        self.staged, self.limits, self.unsafe = staged, limits, unsafe
        self.kernel: Kernel | None = None
        self.loaded: set[str] = set()
        self.cpu = 0.0
        self.dtype = "torch.float32"  # the notebook's default dtype, once it has run

    def call(
        self,
        key: str,
        blob: bytes,
        index: int | None,
        args: tuple,
        name: str,
        hessian: int | None = None,
    ) -> Any:
        """The plain result of calling answer ``key`` (element ``index`` of a tuple)
        on ``args``, or AnswerError; KernelTimeout / KernelFailure when the kernel
        fails."""
        if self.kernel is None or self.kernel.closed:
            self.close()
            self.kernel = Kernel("answers", self.staged.answers, self.limits, self.unsafe)
            self.loaded = set()
        if key not in self.loaded:
            reply = self.kernel.request(
                {"op": "load", "key": key, "blob": blob, "dtype": self.dtype}
            )
            if not isinstance(reply, dict) or reply.get("ok") is not True:
                message = reply.get("message", "") if isinstance(reply, dict) else ""
                raise reject(f"{name}: {message}"[:300])
            self.loaded.add(key)
        record = self.kernel.request(
            {
                "op": "call",
                "key": key,
                "index": index,
                "name": name,
                "args": list(encode_arrays(args)),
                "hessian": hessian,
            }
        )
        if not isinstance(record, dict) or record.get("status") not in (
            "value",
            "raised",
            "refused",
            "missing",
        ):
            raise reject("the answer's result could not be read back")
        if record["status"] == "value":
            return plain(record.get("value"), f"the result of {name}")
        raise reject(str(record.get("message", ""))[:300], missing=record["status"] == "missing")

    def close(self) -> None:
        if self.kernel is not None:
            self.cpu += self.kernel.cpu_seconds()
            self.kernel.close()
            self.kernel = None


class RemoteAnswer(Answer):
    """An answer as the notebook kernel described it; a function's calls go to the
    answers kernel."""

    def __init__(
        self,
        info: Any,
        key: str,
        calls: AnswerCalls,
        index: int | None = None,
        name: str = "your function",
    ) -> None:
        info = info if isinstance(info, dict) else {}
        kind = info.get("kind")
        self.kind = kind if kind in KINDS else "error"
        self.type_name = str(info.get("type", "?"))[:100]
        length = info.get("length", 0)
        self.length = length if type(length) is int else 0
        self._info, self.key, self.calls = info, key, calls
        self.index, self.name = index, name
        if self.kind == "error":
            self.kind = "value"
            self.type_name = f"an expression that raised {self.type_name}"

    def _call(self, args: tuple, hessian: int | None = None) -> Any:
        if "error" in self._info:
            raise reject(str(self._info["error"])[:300])
        blob = self._info.get("blob")
        if not isinstance(blob, bytes):
            raise reject(f"{self.name} could not be read back from the notebook")
        return self.calls.call(self.key, blob, self.index, args, self.name, hessian)

    def __call__(self, *args: Any) -> Any:
        return self._call(args)

    @property
    def value(self) -> Any:
        if "error" in self._info:
            raise reject(str(self._info["error"])[:300])
        if "value" not in self._info:
            raise reject(f"your answer is {self.type_name}: expected {PLAIN_TYPES}")
        return plain(self._info["value"])

    def part(self, index: int) -> Answer:
        return RemoteAnswer(
            {**self._info, "kind": "function"},
            self.key,
            self.calls,
            index,
            f"your function #{index + 1}",
        )

    def hessian(self, x: Any, p: int) -> Any:
        return self._call((x,), hessian=p)


# --- one notebook ---------------------------------------------------------------------


@dataclass
class Graded:
    """The rows of one notebook and how it went."""

    rows: list[dict[str, Any]]
    cells_run: int = 0
    cells: int = 0
    cell_errors: list[tuple[int, str]] = field(default_factory=list)
    cpu: float = 0.0
    seconds: float = 0.0


def row(label: str, verdict: str, message: str) -> dict[str, Any]:
    """One gradebook row: ``label``'s points follow from the verdict."""
    points = POINTS[label]
    return {
        "label": label,
        "points": points if verdict == "pass" else 0,
        "max_points": points,
        "verdict": verdict,
        "message": message,
    }


class NotebookFailed(Exception):
    """The notebook itself did not run to its end: every answer left gets
    ``verdict``."""

    def __init__(self, verdict: str, message: str) -> None:
        super().__init__(message)
        self.verdict, self.message = verdict, message[:300]


class NotebookKernel:
    """The notebook kernel of one submission: started, and the notebook's cells run,
    when an answer is first asked for, and again after it died."""

    def __init__(
        self,
        data: bytes,
        name: str,
        cells: list[tuple[int, str]],
        staged: StagedPackage,
        limits: Limits,
        unsafe: bool,
    ) -> None:
        self.data, self.name, self.cells = data, name, cells
        self.staged, self.limits, self.unsafe = staged, limits, unsafe
        self.kernel: Kernel | None = None
        self.cpu = 0.0
        self.dtype = "torch.float32"
        self.cell_errors: list[tuple[int, str]] = []

    def describe(self, expr: str) -> Any:
        """What the notebook's answer ``expr`` is (see :class:`RemoteAnswer`)."""
        if self.kernel is None or self.kernel.closed:
            self.close()
            self.kernel = Kernel("notebook", self.staged.notebook, self.limits, self.unsafe)
            try:
                result = self.kernel.request(
                    {"op": "run", "notebook": self.data, "name": self.name, "cells": self.cells}
                )
            except KernelTimeout as exc:
                message = f"the notebook did not finish: it {exc}"
                raise NotebookFailed("timeout", message) from None
            except KernelFailure as exc:
                message = f"the notebook's kernel stopped while it ran: {exc}"
                raise NotebookFailed("error", message) from None
            result = result if isinstance(result, dict) else {}
            self.dtype = str(result.get("dtype", "torch.float32"))
            errors = result.get("errors", [])
            self.cell_errors = [(i, str(m)[:200]) for i, m in errors if type(i) is int][:20]
        return self.kernel.request({"op": "describe", "expr": expr})

    def close(self) -> None:
        if self.kernel is not None:
            self.cpu += self.kernel.cpu_seconds()
            self.kernel.close()
            self.kernel = None


def grade_notebook(
    data: bytes,
    name: str,
    key: ChapterKey,
    seed: int,
    staged: StagedPackage,
    limits: Limits,
    unsafe: bool = False,
) -> Graded:
    """Grade the notebook ``data`` (its file's bytes; ``name`` its file name) as
    chapter ``key``: one row per graded exercise (see the module docstring)."""
    start = time.monotonic()
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as exc:
        # An unreadable file is the submission's error.
        message = f"the notebook cannot be read: {type(exc).__name__}: {exc}"[:300]
        return Graded([row(label, "error", message) for label in key.labels])
    sources = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    expressions = {
        label: answer_expression(nb, label) or key.expressions[label] for label in key.labels
    }
    run = cells_to_run(sources, set(key.lecture), list(expressions.values()))
    graded = Graded([], cells_run=len(run), cells=len(sources))
    notebook = NotebookKernel(data, name, [(i, sources[i]) for i in run], staged, limits, unsafe)
    calls = AnswerCalls(staged, limits, unsafe)
    try:
        for label in key.labels:
            graded.rows.append(_grade_answer(label, expressions[label], seed, notebook, calls))
    except NotebookFailed as failed:
        graded.rows += [
            row(label, failed.verdict, failed.message) for label in key.labels[len(graded.rows) :]
        ]
    finally:
        notebook.close()
        calls.close()
    graded.cell_errors = notebook.cell_errors
    graded.cpu = notebook.cpu + calls.cpu
    graded.seconds = time.monotonic() - start
    return graded


def _grade_answer(
    label: str, expr: str, seed: int, notebook: NotebookKernel, calls: AnswerCalls
) -> dict[str, Any]:
    """The row of one exercise; a failure costs this answer only (NotebookFailed
    aside)."""
    calls.dtype = notebook.dtype
    try:
        info = notebook.describe(expr)
        calls.dtype = notebook.dtype
        result = judge(label, RemoteAnswer(info, label, calls), hidden=seed)
    except NotebookFailed:
        raise
    except KernelTimeout as exc:
        return row(label, "timeout", f"this answer {exc}"[:300])
    except KernelFailure as exc:
        return row(label, "error", f"this answer: {exc}"[:300])
    except Exception as exc:
        # A check that cannot judge what came back: this answer's error only.
        message = f"the answer could not be judged ({type(exc).__name__}: {exc})"
        return row(label, "error", message[:300])
    verdict = "pass" if result.ok else "missing" if result.missing else "fail"
    return row(label, verdict, result.message)
