"""The student edition (``make student``): no solution leaks, and every chapter runs as handed out.

The edition of every chapter is built into a temporary folder with ``scripts/make_student.py``. For
each chapter the test checks that no solution fence and no line of solution code survives (other than
the def signatures and self-check calls the skeletons keep), then executes, on one fresh kernel, all
cells before the first exercise followed by the exercise skeletons, and requires every self-check
in a skeleton to answer "NOT YET" instead of crashing.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from nqf_mini.course.grade_notebook import start_kernel, stop_kernel
from scripts import make_student

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
#: Seconds one cell may take. The slowest cell of these runs took 2.3 s (Chapter 4, 12
#: runs on 2 cores; whole chapters execute in 7-22 s), so 90 s is a wide margin for a
#: loaded CI machine, and a lost kernel message fails the test in 90 s, not 600 s.
CELL_TIMEOUT = 90



@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    make_student.build(CHAPTERS, out)
    return out


def solution_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code" and "solution" in c.metadata.get("tags", [])]


def allowed_lines(source: str) -> set[str]:
    """Lines of a solution cell a skeleton may repeat: def signatures and self-check calls."""
    tree = ast.parse(source)
    lines = source.splitlines()
    keep = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) or make_student._is_check_call(node):
            keep.update(lines[node.lineno - 1:(node.body[0].lineno - 1 if isinstance(
                node, ast.FunctionDef) else node.end_lineno)])
    return {line.strip() for line in keep}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_solution_leaks(edition, path):
    original = nbformat.read(path, as_version=4)
    student = nbformat.read(edition / path.name, as_version=4)
    assert student.cells[0].metadata.get("tags") == [make_student.NOTE_TAG]
    text = "\n".join(c.source for c in student.cells)
    for marker in ("{solution}", "{solution-start}", "{solution-end}"):
        assert marker not in text, f"{path.name}: {marker} survives in the student edition"
    assert not [c for c in student.cells if "solution" in c.metadata.get("tags", [])]
    # Lines that also occur outside the solutions (e.g. `X, S = x`) are not leaks.
    public = {line.strip() for c in original.cells
              if "solution" not in c.metadata.get("tags", []) for line in c.source.splitlines()}
    student_lines = {line.strip() for line in text.splitlines()}
    for cell in solution_cells(original):
        ok = allowed_lines(cell.source) | public
        leaked = [line.strip() for line in cell.source.splitlines()
                  if line.strip() and not line.strip().startswith("#")
                  and line.strip() in student_lines and line.strip() not in ok]
        assert not leaked, f"{path.name}: solution code leaks into the student edition: {leaked}"
    # The prose of the solutions (a scan independent of the script's): its longer lines are gone.
    prose, state = set(), None
    for cell in original.cells:
        for line in cell.source.splitlines():
            if line.startswith("```{solution}") or line.startswith("```{solution-start}"):
                state = "block" if line.startswith("```{solution}") else "region"
            elif state == "block" and line.strip() == "```":
                state = None
            elif state == "region" and line.startswith("```{solution-end}"):
                state = None
            elif state and cell.cell_type == "markdown" and len(line.strip()) > 30:
                prose.add(line.strip())
    leaked = sorted((prose - public_outside(original, prose)) & student_lines)
    assert prose, f"{path.name}: found no solution prose to check"
    assert not leaked, f"{path.name}: solution text leaks: {leaked[:2]}"


def public_outside(nb, prose):
    """Markdown lines that also occur in some cell without any solution fence."""
    return {line.strip() for c in nb.cells if c.cell_type == "markdown" and "{solution" not in c.source
            for line in c.source.splitlines()} & prose


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_skeletons_clear_and_every_exercise_has_one_per_solution(edition, path):
    original = nbformat.read(path, as_version=4)
    student = nbformat.read(edition / path.name, as_version=4)
    skeletons = [c for c in student.cells
                 if make_student.SKELETON_TAG in c.metadata.get("tags", [])]
    assert len(skeletons) == len(solution_cells(original))
    for cell in skeletons:
        assert not cell.outputs and cell.execution_count is None
        ast.parse(cell.source)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_student_edition_runs_up_to_the_first_exercise(edition, path, monkeypatch):
    monkeypatch.setenv("NQF_DEVICE", "cpu")
    student = nbformat.read(edition / path.name, as_version=4)
    first = next(i for i, c in enumerate(student.cells)              # the edition marks the
                 if c.metadata.get("nqf", {}).get("exercises"))       # cells with exercises
    skeletons = [c for c in student.cells
                 if make_student.SKELETON_TAG in c.metadata.get("tags", [])]
    run = nbformat.v4.new_notebook(metadata=student.metadata)
    run.cells = [nbformat.from_dict(dict(c)) for c in student.cells[:first] + skeletons]
    execute(run)                             # raises CellExecutionError on any error
    for cell in run.cells[first:]:
        n_checks = len(make_student.check_calls(ast.parse(cell.source)))
        printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        assert "result = " in cell.source or not n_checks
        assert printed.count("NOT YET") == n_checks, (
            f"{path.name}: skeleton should answer NOT YET {n_checks} times:\n{cell.source}\n{printed}")


def execute(nb: nbformat.NotebookNode) -> None:
    """Run every code cell of ``nb`` on a fresh kernel, ``CELL_TIMEOUT`` s per cell.

    The kernel start is retried (a kernel that misses its start-up handshake is
    replaced), the client waits for messages in 1 s slices so that a lost ZMQ wake-up
    costs one slice (``nqf_mini.course.grade_notebook.poll_in_slices``: the likely
    cause of the run that hung for 600 s), and a cell whose reply never comes fails after
    ``CELL_TIMEOUT`` with nbclient's CellTimeoutError.
    """
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            allow_errors=False, startup_timeout=60)
    start_kernel(client, attempts=3, cwd=str(ROOT / "chapters"))
    try:
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, index)
    finally:
        stop_kernel(client)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_derivation_exercise_has_an_answer_cell(edition, path):
    from ..chapters.test_chapters import _chapter_status

    exercises = _chapter_status().exercises
    derivations = [ex["label"] for ex in exercises(nbformat.read(path, as_version=4))
                   if ex["kind"] == "derivation"]
    student = nbformat.read(edition / path.name, as_version=4)
    answers = [(k, c) for k, c in enumerate(student.cells)
               if make_student.ANSWER_TAG in c.metadata.get("tags", [])]
    assert [c.metadata["nqf_exercise"] for _, c in answers] == derivations
    for k, cell in answers:
        assert cell.source.startswith("**Your answer.**")
        before = student.cells[k - 1]
        assert before.cell_type == "markdown"
        stated = [e["label"] for e in before.metadata.get("nqf", {}).get("exercises", [])]
        assert stated and stated[-1] == cell.metadata["nqf_exercise"]   # right after it


def test_the_student_book_keeps_myst_and_drops_every_solution():
    """``student_book_notebook`` (the chapters of ``make book-student``): solution blocks
    and solution regions spanning cells go, the exercise and the text around them stay
    MyST, solution code becomes a skeleton, a derivation gets its answer cell."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[
        md("Intro {prf:ref}`thm-nqf`.\n\n```{exercise} Derive\n:label: ex-a\n\n"
           "*Difficulty: ★☆☆ (derivation).* Show it.\n```\n\n"
           "```{solution} ex-a\n:class: dropdown\n\nSECRET ONE\n```\n\nAfter."),
        md("````{solution-start} ex-b\n````\n\nSECRET TWO"),
        code("def f(x):\n    return x + 1\n\n\ncheck.exercise('ch1.f', f)"),
        md("SECRET THREE\n\n````{solution-end}\n````\n\nOutro."),
        code("def g(x):\n    return 2 * x", metadata={"tags": ["solution"]}),
    ])
    out = make_student.student_book_notebook(nb)
    text = "\n".join(c.source for c in out.cells)
    assert "SECRET" not in text and "return x + 1" not in text and "return 2 * x" not in text
    assert "{prf:ref}`thm-nqf`" in text and "```{exercise} Derive" in text
    assert "After." in text and "Outro." in text
    assert text.count("NotImplementedError") == 2 and "Your answer." in text
    assert [c.cell_type for c in out.cells] == [
        "markdown", "markdown", "markdown", "code", "markdown", "code"]
