"""The teacher's files (``nqf_mini.course.gradebook``) and the rubrics they are made from
(``nqf_mini.course.rubrics``): no grading run needed."""

from __future__ import annotations

import csv
from pathlib import Path

import nbformat
import pytest

from nqf_mini.course import gradebook
from nqf_mini.course.rubrics import Rubric, rubrics, written_answers

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "book" / "instructor.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "text",
    ["=1+2", "+cmd|calc", "-2+3", "@SUM(1+1)", "\tx", "\rx", "'=already", "alice", "", "Zoë 学生"],
)
def test_cells_a_spreadsheet_would_evaluate_are_quoted_and_read_back(text):
    safe = gradebook.spreadsheet_safe(text)
    assert not safe.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert gradebook.from_spreadsheet(safe) == text


def test_file_names_of_students_stay_distinct_and_plain():
    names = ["alice", "a/b", "a_b", "..", "h_new\nline", "=1+2", "Zoë"]
    stems = [gradebook.file_stem(n) for n in names]
    assert len(set(stems)) == len(names)
    assert all("/" not in s and "\n" not in s and not s.startswith(".") for s in stems)
    assert gradebook.file_stem("alice") == "alice"
    assert gradebook.printable("h_new\nline") == "h_new\\nline"


def _row(student, label, points=1, verdict="pass"):
    return {
        "student": student,
        "chapter": 1,
        "label": label,
        "points": points,
        "max_points": 1,
        "verdict": verdict,
        "message": "m",
        "notebook": "n",
        "sha256": "abc",
    }


def test_the_gradebook_is_appended_flushed_and_read_back(tmp_path):
    book = gradebook.GradesFile(tmp_path / "grades.csv")
    book.start([_row("=evil", "ch1.a")])
    book.append([_row("bob", "ch1.a", 0, "fail")])
    # what a Ctrl-C or a crash leaves: the rows so far, and perhaps half a line
    with (tmp_path / "grades.csv").open("a") as f:
        f.write("carol,1,ch1.a,1")
    rows = book.read()
    assert [(r["student"], r["points"], r["verdict"]) for r in rows] == [
        ("=evil", 1, "pass"),
        ("bob", 0, "fail"),
    ]
    book.finish(rows)
    with (tmp_path / "grades.csv").open(newline="") as f:
        assert next(csv.reader(f)) == gradebook.COLUMNS


def test_the_sheet_keeps_what_the_teacher_filled_in_and_adds_new_work(tmp_path):
    marks = rubrics(PAGE)
    sheet_path = tmp_path / "derivations.csv"
    rows = gradebook.update_sheet(sheet_path, {("alice", 4): ["ex-ch4-factor"]}, marks)
    assert len(rows) == len(marks["ex-ch4-factor"].items)
    rows[0]["points"], rows[0]["comment"] = "1", "good"
    rows[1]["points"] = "5"  # more than the item's points
    gradebook._write_csv(sheet_path, gradebook.SHEET_COLUMNS, rows)
    again = gradebook.update_sheet(
        sheet_path, {("alice", 4): ["ex-ch4-factor"], ("bob", 1): ["ex-ch1-cubic"]}, marks
    )
    assert again[0]["points"] == "1" and again[0]["comment"] == "good"
    assert {r["student"] for r in again} == {"alice", "bob"}
    points, warnings = gradebook.sheet_points(again)
    assert points == {"alice": 1.0}
    assert len(warnings) == 1 and "outside" in warnings[0]


def test_summary_canvas_and_feedback(tmp_path):
    rows = [_row("alice", "ch1.a"), _row("alice", "ch1.b", 0, "fail"), _row("=bob", "ch1.a")]
    sheet = [
        {
            "student": "alice",
            "chapter": "1",
            "exercise": "ex-ch1-cubic",
            "item": "x",
            "max_points": "2",
            "points": "1.5",
            "comment": "ok",
        }
    ]
    table = gradebook.write_tables(tmp_path, rows, sheet)
    alice = next(t for t in table if t["student"] == "alice")
    assert (alice["ch1"], alice["derivations"], alice["total"], alice["max"]) == (
        "1",
        "1.5",
        "2.5",
        "4",
    )
    with (tmp_path / "canvas.csv").open(newline="") as f:
        canvas = list(csv.DictReader(f))
    assert [r["SIS Login ID"] for r in canvas] == ["'=bob", "alice"]
    gradebook.write_feedback(tmp_path, rows, sheet)
    text = (tmp_path / "feedback" / "alice.md").read_text()
    assert "ch1.b" in text and "0/1" in text and "1.5/2" in text and "ok" in text


def test_every_rubric_adds_up_and_every_derivation_has_one(tmp_path):
    from scripts import make_student

    marks = rubrics(PAGE)
    for rubric in marks.values():
        assert sum(p for _, p in rubric.items) == rubric.total, rubric.label
        assert rubric.chapter is not None and len(rubric.items) >= 2
    chapters = sorted((ROOT / "chapters").glob("*.ipynb"))
    labels = []
    for path in make_student.build(chapters, tmp_path):
        labels += list(written_answers(nbformat.read(path, as_version=4)))
    assert labels and set(labels) <= set(marks), sorted(set(labels) - set(marks))


def test_rubric_items_are_read_with_their_points():
    page = (
        "* {ref}`ex-ch9-x` (`ex-ch9-x`, 3 points): a step with $f(0) = 0$ (1); "
        "the\n  rest, with (2) more (2).\n\n## Next"
    )
    assert rubrics(page) == {
        "ex-ch9-x": Rubric(
            "ex-ch9-x", 3, (("a step with $f(0) = 0$", 1), ("the rest, with (2) more", 2))
        )
    }
