"""Grade a class: ``make grade SUBMISSIONS=dir`` (or ``python -m nqf_mini.course.grade
dir``).

Every ``*.ipynb`` under ``dir`` is a submission: the student is the name of the folder
that directly contains it, the chapter is read from the file name
(``04_lotka_volterra.ipynb``, ``ch4.ipynb``, ``chapter_04.ipynb``, ``alice-ch4.ipynb``).
Each notebook is graded in a process of its own (:mod:`nqf_mini.course.grade_notebook`)
with a time limit, several at a time. The result is ``dir/grades.csv`` with the columns
``student, chapter, label, points, max_points, verdict, message``: one row per student,
graded chapter and self-checked exercise, with the verdict ``pass``, ``fail``,
``missing`` (no answer), ``error`` (the notebook could not be run) or ``timeout``. A
summary per student is printed. Points are set in :mod:`nqf_mini.course.points`.

The student's code runs with the rights of whoever runs the grader: run it in a
container or a throwaway account (see the instructor page).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .points import GRADED, labels_of_chapter

COLUMNS = ["student", "chapter", "label", "points", "max_points", "verdict", "message"]
VERDICTS = ("pass", "fail", "missing", "error", "timeout")
CHAPTERS = sorted({int(label[2 : label.index(".")]) for label in GRADED})
#: Seconds a worker gets beyond the notebook's limit (start-up, probing, shutting down).
MARGIN = 60.0


@dataclass(frozen=True)
class Submission:
    """One notebook to grade."""

    student: str
    chapter: int
    path: Path


def chapter_of(name: str) -> int | None:
    """The chapter a notebook's file name refers to, or None.

    Accepted: a leading chapter number (``04_lotka_volterra``, ``4-notes``), or
    ``ch``/``chapter`` followed by the number anywhere (``alice_ch4``, ``Chapter 04``).
    """
    stem = Path(name).stem.lower()
    match = re.match(r"0*(\d+)(?:[_\-\s.]|$)", stem) or re.search(
        r"(?:^|[^a-z])ch(?:apter)?[_\-\s]*0*(\d+)(?!\d)", stem
    )
    if match and int(match.group(1)) in CHAPTERS:
        return int(match.group(1))
    return None


def find_submissions(root: Path) -> tuple[list[Submission], list[str]]:
    """The notebooks under ``root`` and the warnings about files that cannot be
    graded."""
    found: dict[tuple[str, int], Submission] = {}
    warnings = []
    for path in sorted(root.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        chapter = chapter_of(path.name)
        if chapter is None:
            warnings.append(f"{path}: no chapter number in the file name; skipped")
            continue
        student = path.parent.name
        key = (student, chapter)
        if key in found:
            warnings.append(
                f"{path}: a second notebook of {student} for chapter {chapter}; graded "
                f"{found[key].path.name} only"
            )
            continue
        found[key] = Submission(student, chapter, path)
    return sorted(found.values(), key=lambda s: (s.student, s.chapter)), warnings


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def grade_one(
    sub: Submission, seed: int, timeout: float
) -> tuple[list[dict[str, Any]], float]:
    """Grade one notebook in a worker process; returns its rows and the seconds it
    took."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="nqf-worker-") as tmp:
        out, pid_file = Path(tmp) / "rows.json", Path(tmp) / "kernel.pid"
        cmd = [
            sys.executable,
            "-m",
            "nqf_mini.course.grade_notebook",
            str(sub.path),
            "--chapter",
            str(sub.chapter),
            "--seed",
            str(seed),
            "--timeout",
            str(timeout),
            "--out",
            str(out),
            "--pid-file",
            str(pid_file),
        ]
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            _, stderr = proc.communicate(timeout=timeout + MARGIN)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.communicate()
            stderr = b""
        finally:
            if pid_file.exists() and pid_file.read_text().strip().isdigit():
                _kill_group(int(pid_file.read_text()))  # the kernel has its own group
        seconds = time.monotonic() - start
        try:
            result = json.loads(out.read_text())
            rows, timing = result["rows"], result.get("timing", {})
        except (OSError, ValueError, KeyError):
            timing = {}
            if seconds >= timeout + MARGIN:
                verdict, message = (
                    "timeout",
                    f"the notebook did not finish within {timeout:g} s",
                )
            else:
                tail = stderr.decode(errors="replace").strip().splitlines()[-1:] or [
                    "?"
                ]
                verdict, message = (
                    "error",
                    f"the grader's worker crashed: {tail[0]}"[:300],
                )
            rows = [
                {
                    "label": label,
                    "points": 0,
                    "max_points": GRADED[label].points,
                    "verdict": verdict,
                    "message": message,
                }
                for label in labels_of_chapter(sub.chapter)
            ]
    if os.environ.get("NQF_GRADE_TIMING"):
        phases = ", ".join(f"{k} {v:.1f}" for k, v in timing.items())
        print(f"{sub.path}: {seconds:.1f} s ({phases})", file=sys.stderr, flush=True)
    return [
        {"student": sub.student, "chapter": sub.chapter, **row} for row in rows
    ], seconds


def missing_rows(student: str, chapter: int) -> list[dict[str, Any]]:
    """The rows of a chapter for which a student handed in no notebook."""
    return [
        {
            "student": student,
            "chapter": chapter,
            "label": label,
            "points": 0,
            "max_points": GRADED[label].points,
            "verdict": "missing",
            "message": f"no notebook for chapter {chapter}",
        }
        for label in labels_of_chapter(chapter)
    ]


def grade_class(
    root: Path,
    timeout: float = 120.0,
    jobs: int = 2,
    seed: int | None = None,
    log: Any = print,
) -> list[dict[str, Any]]:
    """Grade every notebook under ``root``; write ``root/grades.csv`` and return its
    rows."""
    subs, warnings = find_submissions(root)
    for warning in warnings:
        log(f"warning: {warning}")
    seed = secrets.randbelow(2**31) if seed is None else seed
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        graded = list(pool.map(lambda s: grade_one(s, seed, timeout), subs))
    rows = [row for sub_rows, _ in graded for row in sub_rows]
    students = sorted({s.student for s in subs})
    chapters = sorted({s.chapter for s in subs})
    handed = {(s.student, s.chapter) for s in subs}
    rows += [
        row
        for st in students
        for ch in chapters
        if (st, ch) not in handed
        for row in missing_rows(st, ch)
    ]
    rows.sort(
        key=lambda r: (r["student"], r["chapter"], list(GRADED).index(r["label"]))
    )
    write_csv(root / "grades.csv", rows)
    times = [seconds for _, seconds in graded]
    log(summary(rows))
    if times:
        log(
            f"{len(times)} notebooks in {time.monotonic() - start:.0f} s with {jobs} "
            f"at a time ({sum(times) / len(times):.1f} s per notebook, at most "
            f"{max(times):.1f} s); wrote {root / 'grades.csv'}"
        )
    return rows


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write the gradebook with exactly the columns of :data:`COLUMNS`."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row[k] for k in COLUMNS})


def summary(rows: list[dict[str, Any]]) -> str:
    """One line per student: total points and the points of each chapter."""
    lines = []
    for student in sorted({r["student"] for r in rows}):
        mine = [r for r in rows if r["student"] == student]
        parts = []
        for chapter in sorted({r["chapter"] for r in mine}):
            ch = [r for r in mine if r["chapter"] == chapter]
            flags = {r["verdict"] for r in ch} & {"error", "timeout"}
            parts.append(
                f"ch{chapter} "
                f"{sum(r['points'] for r in ch)}/{sum(r['max_points'] for r in ch)}"
                + (f" ({', '.join(sorted(flags))})" if flags else "")
            )
        total = sum(r["points"] for r in mine)
        lines.append(
            f"{student}: {total}/{sum(r['max_points'] for r in mine)}  "
            + "  ".join(parts)
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "submissions", type=Path, help="folder of student folders of notebooks"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="seconds allowed for one notebook (default 120)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 2,
        help="notebooks graded at a time (default: the number of cores)",
    )
    parser.add_argument(
        "--seed", type=int, help="seed of the hidden cases (default: random)"
    )
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"{args.submissions} is not a folder")
    grade_class(args.submissions, args.timeout, args.jobs, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
