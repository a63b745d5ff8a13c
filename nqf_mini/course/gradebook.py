"""The files ``make grade`` writes for the teacher, next to the submissions.

* ``grades.csv`` (:class:`GradesFile`): one row per student, chapter and self-checked
  exercise (:data:`COLUMNS`), with the notebook graded and its SHA-256. It is written
  row by row as notebooks finish (flushed to disk each time), so Ctrl-C keeps what was
  graded, and it is read back on the next run, which grades only the notebooks that
  are new or changed.
* ``derivations.csv`` (:func:`update_sheet`): the sheet for the exercises graded by
  hand, one row per student, handed-in chapter, derivation exercise and rubric item
  (:mod:`nqf_mini.course.rubrics`), with ``points`` and ``comment`` left for the
  teacher; a later run adds rows for new submissions and keeps what was filled in.
  ``derivations/<student>.md`` collects each student's written answers beside the
  rubric, to read while filling the sheet.
* ``summary.csv``: the final table, one row per student: the self-checked points of
  each chapter, the derivation points from the sheet, the total.
* ``canvas.csv``: the same totals in the layout Canvas's gradebook imports (``Student``,
  ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per
  assignment); the student's folder name goes in ``SIS Login ID``.
* ``feedback/<student>.md``: what to hand back to each student: every exercise with its
  points and message, the derivation points and comments once filled in.

Every text cell that a spreadsheet would read as a formula (starting with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return) is written with a leading ``'``
(:func:`spreadsheet_safe`) and read back without it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import threading
import unicodedata
from pathlib import Path
from typing import Any
from collections.abc import Iterable

COLUMNS = [
    "student",
    "chapter",
    "label",
    "points",
    "max_points",
    "verdict",
    "message",
    "notebook",
    "sha256",
]
VERDICTS = ("pass", "fail", "missing", "error", "timeout")
SHEET_COLUMNS = ["student", "chapter", "exercise", "item", "max_points", "points", "comment"]
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> str:
    """``value`` as a CSV cell that no spreadsheet evaluates (a leading ``'`` before
    ``= + - @``, a tab or a carriage return, and before a ``'`` already there)."""
    text = str(value)
    return "'" + text if text.startswith((*_FORMULA, "'")) else text


def from_spreadsheet(text: str) -> str:
    """The inverse of :func:`spreadsheet_safe`."""
    return text[1:] if text.startswith("'") else text


def printable(name: str) -> str:
    """``name`` with control characters (newlines, tabs, ...) shown as escapes."""
    return "".join(
        ch.encode("unicode_escape").decode() if unicodedata.category(ch) == "Cc" else ch
        for ch in name
    )


def file_stem(student: str) -> str:
    """A file name for ``student``'s files: the name's letters, digits, ``.``, ``-``
    and ``_``, and a short hash when anything else had to go (so names stay
    distinct)."""
    stem = re.sub(r"[^\w.-]+", "_", student, flags=re.UNICODE).strip("._") or "student"
    if stem != student:
        stem += "-" + hashlib.sha256(student.encode()).hexdigest()[:8]
    return stem


def _write_csv(path: Path, columns: list[str], rows: Iterable[dict[str, Any]]) -> None:
    """Write ``rows`` atomically (a temporary file renamed over ``path``)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: spreadsheet_safe(row.get(k, "")) for k in columns})
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(buffer.getvalue(), encoding="utf-8")
    os.replace(tmp, path)


def _read_csv(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        try:
            return [
                {k: from_spreadsheet(v or "") for k, v in row.items() if k}
                for row in csv.DictReader(f)
            ]
        except csv.Error:
            return []


class GradesFile:
    """``grades.csv``: rows appended as notebooks finish, read back to resume."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file: io.TextIOWrapper | None = None

    def read(self) -> list[dict[str, Any]]:
        """The rows on disk (points as ints); a row cut short by a crash is dropped."""
        rows: list[dict[str, Any]] = []
        for text in _read_csv(self.path):
            row: dict[str, Any] = dict(text)
            try:
                row["chapter"] = int(row["chapter"])
                row["points"] = int(row["points"])
                row["max_points"] = int(row["max_points"])
            except (KeyError, ValueError):
                continue
            if row.get("verdict") in VERDICTS and "sha256" in row:
                rows.append(row)
        return rows

    def start(self, rows: list[dict[str, Any]]) -> None:
        """Rewrite the file with ``rows`` (those kept from the last run), then keep it
        open for :meth:`append`."""
        _write_csv(self.path, COLUMNS, rows)
        self._file = self.path.open("a", newline="", encoding="utf-8")

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Add one notebook's rows and flush them to disk."""
        with self._lock:
            assert self._file is not None, "call start() first"
            writer = csv.DictWriter(self._file, fieldnames=COLUMNS, lineterminator="\n")
            for row in rows:
                writer.writerow({k: spreadsheet_safe(row.get(k, "")) for k in COLUMNS})
            self._file.flush()
            os.fsync(self._file.fileno())

    def finish(self, rows: list[dict[str, Any]]) -> None:
        """Close the file and rewrite it with every row, sorted."""
        if self._file is not None:
            self._file.close()
            self._file = None
        _write_csv(self.path, COLUMNS, rows)


# --- derivations graded by hand -------------------------------------------------------


def update_sheet(
    path: Path,
    handed_in: dict[tuple[str, int], list[str]],
    rubrics: dict[str, Any],
) -> list[dict[str, str]]:
    """Add to the sheet at ``path`` a row per rubric item of every derivation of every
    handed-in chapter (``handed_in``: (student, chapter) -> the labels of its rubrics)
    that it does not have yet; rows already there, filled in or not, are kept. Returns
    the sheet's rows."""
    rows = _read_csv(path)
    have = {(r.get("student"), r.get("chapter"), r.get("exercise"), r.get("item")) for r in rows}
    for (student, chapter), labels in sorted(handed_in.items()):
        for label in labels:
            for item, points in rubrics[label].items:
                key = (student, str(chapter), label, item)
                if key not in have:
                    rows.append(
                        dict(
                            zip(
                                SHEET_COLUMNS,
                                [student, str(chapter), label, item, str(points), "", ""],
                            )
                        )
                    )
                    have.add(key)
    _write_csv(path, SHEET_COLUMNS, rows)
    return rows


def sheet_points(rows: list[dict[str, str]]) -> tuple[dict[str, float], list[str]]:
    """Points per student filled into the sheet, and warnings about cells that are not
    a number between 0 and the item's points."""
    points: dict[str, float] = {}
    warnings = []
    for row in rows:
        text = (row.get("points") or "").strip()
        if not text:
            continue
        try:
            value = float(text)
            top = float(row.get("max_points") or "inf")
        except ValueError:
            warnings.append(
                f"derivations.csv: {printable(row.get('student', ''))}, "
                f"{row.get('exercise')}: points {text!r} is not a number"
            )
            continue
        if not 0 <= value <= top:
            warnings.append(
                f"derivations.csv: {printable(row.get('student', ''))}, "
                f"{row.get('exercise')}: {value:g} points is outside "
                f"0 to {top:g}"
            )
            continue
        points[row["student"]] = points.get(row["student"], 0.0) + value
    return points, warnings


# --- the final table, the LMS export, feedback --------------------------------------


def _number(value: float) -> str:
    return f"{value:g}"


def summary_rows(rows: list[dict[str, Any]], sheet: list[dict[str, str]]) -> list[dict[str, str]]:
    """One row per student: points per chapter, self-checked total, derivation points
    (filled ones) out of the sheet's, and the total."""
    chapters = sorted({r["chapter"] for r in rows})
    manual, _ = sheet_points(sheet)
    manual_max: dict[str, float] = {}
    for row in sheet:
        try:
            manual_max[row["student"]] = manual_max.get(row["student"], 0.0) + float(
                row.get("max_points") or 0
            )
        except ValueError:
            pass
    table = []
    for student in sorted({r["student"] for r in rows}):
        mine = [r for r in rows if r["student"] == student]
        out = {"student": student}
        for chapter in chapters:
            out[f"ch{chapter}"] = _number(sum(r["points"] for r in mine if r["chapter"] == chapter))
        auto = sum(r["points"] for r in mine)
        auto_max = sum(r["max_points"] for r in mine)
        out.update(
            {
                "self_checked": _number(auto),
                "self_checked_max": _number(auto_max),
                "derivations": _number(manual.get(student, 0.0)),
                "derivations_max": _number(manual_max.get(student, 0.0)),
                "total": _number(auto + manual.get(student, 0.0)),
                "max": _number(auto_max + manual_max.get(student, 0.0)),
            }
        )
        table.append(out)
    return table


def write_tables(
    out: Path, rows: list[dict[str, Any]], sheet: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Write ``summary.csv`` and ``canvas.csv`` into ``out``; returns the summary."""
    table = summary_rows(rows, sheet)
    chapters = [k for k in (table[0] if table else {}) if re.fullmatch(r"ch\d+", k)]
    _write_csv(
        out / "summary.csv",
        [
            "student",
            *chapters,
            "self_checked",
            "self_checked_max",
            "derivations",
            "derivations_max",
            "total",
            "max",
        ],
        table,
    )
    canvas_columns = [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        *(f"NQF chapter {c[2:]} self-checks" for c in chapters),
        "NQF derivations",
    ]
    canvas = [
        {
            "Student": t["student"],
            "SIS Login ID": t["student"],
            **{f"NQF chapter {c[2:]} self-checks": t[c] for c in chapters},
            "NQF derivations": t["derivations"],
        }
        for t in table
    ]
    _write_csv(out / "canvas.csv", canvas_columns, canvas)
    return table


def _md(text: Any) -> str:
    """Text for a Markdown table cell."""
    return printable(str(text)).replace("|", "\\|").replace("\n", " ")


def write_feedback(
    out: Path, rows: list[dict[str, Any]], sheet: list[dict[str, str]]
) -> list[Path]:
    """``feedback/<student>.md`` for every student; returns the paths."""
    folder = out / "feedback"
    folder.mkdir(exist_ok=True)
    written = []
    for student in sorted({r["student"] for r in rows}):
        mine = [r for r in rows if r["student"] == student]
        lines = [f"# Feedback for {_md(student)}", ""]
        for chapter in sorted({r["chapter"] for r in mine}):
            ch = [r for r in mine if r["chapter"] == chapter]
            got, top = sum(r["points"] for r in ch), sum(r["max_points"] for r in ch)
            graded = {r.get("notebook", "") for r in ch} - {""}
            lines += [f"## Chapter {chapter}: {got}/{top} self-checked points", ""]
            if graded:
                lines += [f"Graded: `{_md(', '.join(sorted(graded)))}`", ""]
            lines += ["| exercise | points | result | message |", "|---|---|---|---|"]
            lines += [
                f"| `{r['label']}` | {r['points']}/{r['max_points']} | "
                f"{r['verdict']} | {_md(r['message'])} |"
                for r in ch
            ]
            hand = [
                s for s in sheet if s.get("student") == student and s.get("chapter") == str(chapter)
            ]
            if hand:
                lines += [
                    "",
                    "| derivation | rubric item | points | comment |",
                    "|---|---|---|---|",
                ]
                lines += [
                    f"| `{s['exercise']}` | {_md(s['item'])} | "
                    f"{_md(s.get('points') or 'not graded yet')}"
                    f"/{_md(s['max_points'])} | {_md(s.get('comment', ''))} |"
                    for s in hand
                ]
            lines.append("")
        path = folder / f"{file_stem(student)}.md"
        path.write_text("\n".join(lines), encoding="utf-8")
        written.append(path)
    return written


def write_answers(
    out: Path, answers: dict[str, dict[int, dict[str, str]]], rubrics: dict[str, Any]
) -> None:
    """``derivations/<student>.md``: each student's written derivations, chapter by
    chapter, each beside its rubric (``answers``: student -> chapter -> label ->
    text)."""
    folder = out / "derivations"
    folder.mkdir(exist_ok=True)
    for student, chapters in answers.items():
        lines = [f"# Derivations of {printable(student)}", ""]
        for chapter, texts in sorted(chapters.items()):
            for label, text in texts.items():
                lines += [f"## Chapter {chapter}: `{label}`", ""]
                rubric = rubrics.get(label)
                if rubric is not None:
                    lines += [f"Rubric ({rubric.total} points):", ""]
                    lines += [f"* ({p}) {item}" for item, p in rubric.items]
                    lines.append("")
                lines += ["Answer:", "", text.strip() or "(empty)", ""]
        (folder / f"{file_stem(student)}.md").write_text("\n".join(lines), encoding="utf-8")
