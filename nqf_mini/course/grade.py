"""Grade a class: ``make grade SUBMISSIONS=dir`` (or ``python -m nqf_mini.course.grade
dir``).

Every ``*.ipynb`` under ``dir`` is a submission. The student is the *top-level* folder
under ``dir`` that holds it, however deep (``dir/alice/hw1/04_lotka_volterra.ipynb`` is
alice's); the chapter is read from the file name (``04_lotka_volterra.ipynb``,
``ch4.ipynb``, ``chapter_04.ipynb``, ``alice-ch4.ipynb``). Two notebooks of one student
for one chapter are not guessed between: that chapter's rows say ``error``, name both
files and ask for one. A notebook directly in ``dir`` (no student folder) is skipped
with a warning.

Each notebook is read once, hashed (SHA-256) and graded from that copy
(:func:`~nqf_mini.course.grade_notebook.grade_notebook`), in sandboxed kernels
(:mod:`~nqf_mini.course.sandbox`), ``jobs`` notebooks at a time. The files written
(:mod:`~nqf_mini.course.gradebook`): ``grades.csv``, row by row as notebooks finish, so
that Ctrl-C keeps what was graded and the next run grades only what is missing or
changed (``--student NAME`` regrades one student, ``--regrade`` everyone);
``derivations.csv``, the sheet for the derivations graded by hand, merged into
``summary.csv`` (the final table) and ``canvas.csv`` (Canvas's gradebook import);
``feedback/<student>.md`` to hand back. A summary per student is printed.

Without a working sandbox (no bubblewrap, no user namespaces) the grader refuses, and
says why, unless ``--unsafe`` is given: then each kernel is a plain process with the
same limits, and the students' code runs with the rights of the grader.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

import nbformat

from . import gradebook
from .grade_notebook import ChapterKey, Graded, chapter_keys, grade_notebook, row
from .rubrics import rubrics, written_answers
from .sandbox import Kernel, Limits, SandboxUnavailable, bwrap_problem, stage_package

ROOT = Path(__file__).resolve().parents[2]
#: Where the instructor chapters and the instructor page are, in the repository.
CHAPTERS = ROOT / "chapters"
INSTRUCTOR_PAGE = ROOT / "book" / "instructor.md"
#: Folders under the submissions that are the grader's own output, not students.
OUTPUT_FOLDERS = {"feedback", "derivations"}


@dataclass(frozen=True)
class Submission:
    """One notebook to grade: whose, which chapter, and its bytes as read once."""

    student: str
    chapter: int
    path: Path
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def chapter_of(name: str, chapters: set[int]) -> int | None:
    """The chapter a notebook's file name refers to, if it is one of ``chapters``.

    Accepted: a leading chapter number (``04_lotka_volterra``, ``4-notes``), or
    ``ch``/``chapter`` followed by the number anywhere (``alice_ch4``, ``Chapter 04``).
    """
    stem = Path(name).stem.lower()
    match = re.match(r"0*(\d+)(?:[_\-\s.(]|$)", stem) or re.search(
        r"(?:^|[^a-z])ch(?:apter)?[_\-\s]*0*(\d+)(?!\d)", stem
    )
    if match and int(match.group(1)) in chapters:
        return int(match.group(1))
    return None


def find_submissions(
    root: Path, chapters: set[int]
) -> tuple[list[Submission], dict[tuple[str, int], list[Path]], list[str]]:
    """The notebooks under ``root``: (submissions, duplicates (student, chapter) -> the
    files, warnings about files that are not graded)."""
    found: dict[tuple[str, int], list[Path]] = {}
    warnings = []
    for path in sorted(root.rglob("*.ipynb")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        if len(rel.parts) == 1:
            warnings.append(f"{rel}: not in a student's folder; skipped")
            continue
        if rel.parts[0] in OUTPUT_FOLDERS:
            continue
        chapter = chapter_of(path.name, chapters)
        if chapter is None:
            warnings.append(
                f"{gradebook.printable(str(rel))}: no chapter number in the file name; skipped"
            )
            continue
        found.setdefault((rel.parts[0], chapter), []).append(path)
    subs, duplicates = [], {}
    for (student, chapter), paths in sorted(found.items()):
        if len(paths) > 1:
            duplicates[student, chapter] = paths
        else:
            subs.append(Submission(student, chapter, paths[0], paths[0].read_bytes()))
    return subs, duplicates, warnings


def _rows_for(sub: Submission, root: Path, graded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    notebook = str(sub.path.relative_to(root))
    return [
        {
            "student": sub.student,
            "chapter": sub.chapter,
            **r,
            "notebook": notebook,
            "sha256": sub.sha256,
        }
        for r in graded
    ]


def _summary(rows: list[dict[str, Any]]) -> str:
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
            f"{gradebook.printable(student)}: {total}/"
            f"{sum(r['max_points'] for r in mine)}  " + "  ".join(parts)
        )
    return "\n".join(lines)


def grade_class(
    root: Path,
    *,
    out: Path | None = None,
    chapters: Path = CHAPTERS,
    limits: Limits | None = None,
    jobs: int = 2,
    seed: int | None = None,
    students: list[str] | None = None,
    regrade: bool = False,
    unsafe: bool = False,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Grade every notebook under ``root`` that ``out/grades.csv`` (default ``out =
    root``) does not already hold unchanged; write the files of
    :mod:`~nqf_mini.course.gradebook` and return the gradebook's rows.

    ``students``: regrade these students' notebooks even if unchanged (``regrade``:
    everyone's). ``unsafe``: run without the sandbox (see the module docstring).
    Raises SandboxUnavailable when the sandbox does not work here and ``unsafe`` is
    false; KeyboardInterrupt after writing what was graded.
    """
    out = root if out is None else out
    limits = Limits() if limits is None else limits
    if not chapters.is_dir():
        raise FileNotFoundError(
            f"argument `chapters`: expected the folder of the instructor chapters, got {chapters}"
        )
    keys = chapter_keys(chapters)
    if not unsafe and (problem := bwrap_problem()) is not None:
        raise SandboxUnavailable(
            f"{problem}. Without the sandbox every student's code would run with your "
            f"rights and could change other students' grades; pass --unsafe (make "
            f"grade UNSAFE=1) only on a machine and account that hold nothing else"
        )
    subs, duplicates, warnings = find_submissions(root, set(keys))
    for warning in warnings:
        log(f"warning: {warning}")
    book = gradebook.GradesFile(out / "grades.csv")
    redo = set(students or ())
    current = {(s.student, s.chapter): s for s in subs}
    kept = []
    for (student, chapter), group in _groups(book.read()).items():
        sub = current.get((student, chapter))
        complete = sorted(r["label"] for r in group) == sorted(keys[chapter].labels)
        if (
            sub is not None
            and complete
            and not regrade
            and student not in redo
            and all(r["sha256"] == sub.sha256 for r in group)
        ):
            kept += group
    done = {(r["student"], r["chapter"]) for r in kept}
    todo = [s for s in subs if (s.student, s.chapter) not in done]
    book.start(kept)
    log(
        f"{len(subs)} notebooks: {len(subs) - len(todo)} graded before and unchanged, "
        f"{len(todo)} to grade, {jobs} at a time"
    )
    seed = secrets.randbelow(2**31) if seed is None else seed
    new = _grade_all(todo, root, keys, seed, limits, jobs, unsafe, book, log)
    rows = kept + new
    for (student, chapter), paths in duplicates.items():
        names = ", ".join(str(p.relative_to(root)) for p in paths)
        message = (
            f"{len(paths)} notebooks for chapter {chapter} ({names}): keep one "
            f"and run make grade again"
        )
        rows += [
            {
                "student": student,
                "chapter": chapter,
                **row(label, "error", message),
                "notebook": names,
                "sha256": "",
            }
            for label in keys[chapter].labels
        ]
    rows += _missing(rows, keys)
    order = {label: k for k in keys.values() for label in k.labels}
    rows.sort(key=lambda r: (r["student"], r["chapter"], list(order).index(r["label"])))
    book.finish(rows)
    _write_reports(out, rows, subs, keys, log)
    log(_summary(rows))
    return rows


def _groups(rows: list[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["student"], r["chapter"]), []).append(r)
    return groups


def _missing(rows: list[dict[str, Any]], keys: dict[int, ChapterKey]) -> list[dict]:
    """Rows for the chapters others handed in that a student did not."""
    handed = {(r["student"], r["chapter"]) for r in rows}
    chapters = sorted({c for _, c in handed})
    return [
        {
            "student": student,
            "chapter": chapter,
            **row(label, "missing", f"no notebook for chapter {chapter}"),
            "notebook": "",
            "sha256": "",
        }
        for student in sorted({s for s, _ in handed})
        for chapter in chapters
        if (student, chapter) not in handed
        for label in keys[chapter].labels
    ]


def _grade_all(
    todo: list[Submission],
    root: Path,
    keys: dict[int, ChapterKey],
    seed: int,
    limits: Limits,
    jobs: int,
    unsafe: bool,
    book: gradebook.GradesFile,
    log: Callable[[str], None],
) -> list[dict[str, Any]]:
    """Grade ``todo`` with ``jobs`` workers, appending each notebook's rows to ``book``
    as it finishes; on Ctrl-C stop every kernel, keep what finished, re-raise."""
    if not todo:
        return []
    Kernel.stopping.clear()
    stage = Path(tempfile.mkdtemp(prefix="nqf-grade-"))
    stopping = threading.Event()
    rows: list[dict[str, Any]] = []
    start = time.monotonic()
    cpu, count = 0.0, 0

    def one(sub: Submission) -> Graded | None:
        if stopping.is_set():
            return None
        return grade_notebook(
            sub.data, sub.path.name, keys[sub.chapter], seed, staged, limits, unsafe
        )

    try:
        staged = stage_package(stage)
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures: dict[Future, Submission] = {pool.submit(one, s): s for s in todo}
            pending = set(futures)
            try:
                while pending:
                    finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                    for future in finished:
                        sub, graded = futures[future], future.result()
                        if graded is None:
                            continue
                        new = _rows_for(sub, root, graded.rows)
                        book.append(new)
                        rows += new
                        cpu += graded.cpu
                        got = sum(r["points"] for r in new)
                        top = sum(r["max_points"] for r in new)
                        count += 1
                        log(
                            f"[{count}/{len(todo)}] "
                            f"{gradebook.printable(sub.student)} ch{sub.chapter}: "
                            f"{got}/{top} ({graded.cells_run} of {graded.cells} "
                            f"cells run, {graded.cpu:.1f} CPU s in the kernels, "
                            f"{graded.seconds:.1f} s)"
                        )
            except KeyboardInterrupt:
                stopping.set()
                for future in pending:
                    future.cancel()
                Kernel.stop_all()
                graded_now = len({(r["student"], r["chapter"]) for r in rows})
                log(
                    f"interrupted: {graded_now} of {len(todo)} notebooks graded and "
                    f"kept in {book.path}; run the same command again to grade the "
                    f"rest"
                )
                book.finish(sorted(book.read(), key=lambda r: (r["student"], r["chapter"])))
                raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    elapsed = time.monotonic() - start
    log(
        f"{len(todo)} notebooks in {elapsed:.0f} s with {jobs} at a time "
        f"({cpu / len(todo):.1f} CPU s per notebook in the kernels)"
    )
    return rows


def _write_reports(
    out: Path,
    rows: list[dict[str, Any]],
    subs: list[Submission],
    keys: dict[int, ChapterKey],
    log: Callable[[str], None],
) -> None:
    """The sheet of derivations, the students' written answers, the final tables and
    the feedback files."""
    page = INSTRUCTOR_PAGE.read_text(encoding="utf-8") if INSTRUCTOR_PAGE.exists() else ""
    marks = rubrics(page)
    handed = {
        (s.student, s.chapter): [m.label for m in marks.values() if m.chapter == s.chapter]
        for s in subs
    }
    sheet = gradebook.update_sheet(out / "derivations.csv", handed, marks)
    answers: dict[str, dict[int, dict[str, str]]] = {}
    for sub in subs:
        try:
            nb = nbformat.reads(sub.data.decode("utf-8"), as_version=4)
        except Exception:
            continue
        written = written_answers(nb)
        if written:
            answers.setdefault(sub.student, {})[sub.chapter] = written
    gradebook.write_answers(out, answers, marks)
    _, warnings = gradebook.sheet_points(sheet)
    for warning in warnings:
        log(f"warning: {warning}")
    gradebook.write_tables(out, rows, sheet)
    gradebook.write_feedback(out, rows, sheet)
    log(
        f"wrote {out / 'grades.csv'}, summary.csv, canvas.csv, derivations.csv (to "
        f"fill in), feedback/ and derivations/"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "submissions", type=Path, help="folder with one folder of notebooks per student"
    )
    parser.add_argument(
        "--out", type=Path, help="where to write the files (default: the submissions)"
    )
    parser.add_argument(
        "--chapters",
        type=Path,
        default=CHAPTERS,
        help="the instructor chapters (default: the repository's)",
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="notebooks graded at a time (default 2)"
    )
    parser.add_argument(
        "--cpu-seconds",
        type=float,
        default=Limits.cpu_seconds,
        help="CPU seconds of a notebook's kernel (default %(default)s)",
    )
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=Limits.idle_seconds,
        help="wall seconds a kernel may compute nothing (default %(default)s)",
    )
    parser.add_argument(
        "--memory-mb",
        type=int,
        default=Limits.memory_mb,
        help="address space of a kernel process (default %(default)s)",
    )
    parser.add_argument(
        "--student",
        action="append",
        default=[],
        help="regrade this student (repeatable), changed or not",
    )
    parser.add_argument(
        "--regrade", action="store_true", help="regrade every notebook, changed or not"
    )
    parser.add_argument("--seed", type=int, help="seed of the hidden cases")
    parser.add_argument(
        "--unsafe", action="store_true", help="grade without the sandbox (see the instructor page)"
    )
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"argument submissions: expected a folder, got {args.submissions}")
    limits = Limits(
        cpu_seconds=args.cpu_seconds, idle_seconds=args.idle_seconds, memory_mb=args.memory_mb
    )
    try:
        grade_class(
            args.submissions,
            out=args.out,
            chapters=args.chapters,
            limits=limits,
            jobs=args.jobs,
            seed=args.seed,
            students=args.student,
            regrade=args.regrade,
            unsafe=args.unsafe,
        )
    except SandboxUnavailable as exc:
        print(f"make grade: not grading: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
