"""The student edition (``make student``): no solution leaks, and it runs what was tested.

The edition of every chapter is built into a temporary folder with ``scripts/make_student.py``.
For each chapter the test checks that no solution fence and no line of solution code survives
(other than the def signatures and self-check calls the skeletons keep), and that every code
cell it keeps is the chapter's own, which nbval executes; the skeletons parse and keep their
self-checks. The edition of one chapter runs in a kernel to its end in tests/grading (the
untouched student edition earns nothing), and tests/unit/test_check.py shows that a self-check
answers "NOT YET" to a missing answer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from scripts import make_student
from scripts.notebook_edition import exercises as grammar

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    make_student.build(CHAPTERS, out)
    return out


def solution_cells(nb):
    return [
        c for c in nb.cells if c.cell_type == "code" and "solution" in c.metadata.get("tags", [])
    ]


def allowed_lines(source: str) -> set[str]:
    """Lines of a solution cell a skeleton may repeat: def signatures and self-check calls."""
    tree = ast.parse(source)
    lines = source.splitlines()
    keep = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) or make_student._is_check_call(node):
            keep.update(
                lines[
                    node.lineno - 1 : (
                        node.body[0].lineno - 1
                        if isinstance(node, ast.FunctionDef)
                        else node.end_lineno
                    )
                ]
            )
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
    public = {
        line.strip()
        for c in original.cells
        if "solution" not in c.metadata.get("tags", [])
        for line in c.source.splitlines()
    }
    student_lines = {line.strip() for line in text.splitlines()}
    for cell in solution_cells(original):
        ok = allowed_lines(cell.source) | public
        leaked = [
            line.strip()
            for line in cell.source.splitlines()
            if line.strip()
            and not line.strip().startswith("#")
            and line.strip() in student_lines
            and line.strip() not in ok
        ]
        assert not leaked, f"{path.name}: solution code leaks into the student edition: {leaked}"
    # The prose of the solutions (read by the grammar, not by the edition's code): its
    # longer lines are gone.
    prose = {line.strip() for line in grammar.solution_text(original)[0] if len(line.strip()) > 30}
    leaked = sorted((prose - public_outside(original, prose)) & student_lines)
    assert prose, f"{path.name}: found no solution prose to check"
    assert not leaked, f"{path.name}: solution text leaks: {leaked[:2]}"


def public_outside(nb, prose):
    """Markdown lines that also occur in some cell without any solution fence."""
    return {
        line.strip()
        for c in nb.cells
        if c.cell_type == "markdown" and "{solution" not in c.source
        for line in c.source.splitlines()
    } & prose


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_skeletons_clear_and_every_exercise_has_one_per_solution(edition, path):
    original = nbformat.read(path, as_version=4)
    student = nbformat.read(edition / path.name, as_version=4)
    skeletons = [
        c for c in student.cells if make_student.SKELETON_TAG in c.metadata.get("tags", [])
    ]
    assert len(skeletons) == len(solution_cells(original))
    for cell in skeletons:
        assert not cell.outputs and cell.execution_count is None
        ast.parse(cell.source)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_student_edition_runs_the_code_nbval_runs(edition, path):
    """Every code cell the student edition keeps is a code cell of the chapter, in the
    chapter's order (the install cell first), so nbval's run of the chapter runs them;
    what the edition adds is skeleton cells, each of whose self-checks is kept as a
    ``result = ...`` call. (The untouched edition of one chapter runs in a kernel to its
    end in tests/grading, earning nothing.)"""
    original = nbformat.read(path, as_version=4)
    student = nbformat.read(edition / path.name, as_version=4)
    chapter_code = [
        c.source
        for c in original.cells
        if c.cell_type == "code" and "solution" not in c.metadata.get("tags", [])
    ]
    kept = [
        c.source
        for c in student.cells
        if c.cell_type == "code" and make_student.SKELETON_TAG not in c.metadata.get("tags", [])
    ]
    assert kept == chapter_code
    for cell in student.cells:
        if make_student.SKELETON_TAG in cell.metadata.get("tags", []):
            calls = make_student.check_calls(ast.parse(cell.source))
            assert cell.source.count("result = ") == len(calls), cell.source


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_derivation_exercise_has_an_answer_cell(edition, path):
    derivations = [
        ex.label
        for ex in grammar.exercises(nbformat.read(path, as_version=4))
        if ex.kind == "derivation"
    ]
    student = nbformat.read(edition / path.name, as_version=4)
    answers = [
        (k, c)
        for k, c in enumerate(student.cells)
        if make_student.ANSWER_TAG in c.metadata.get("tags", [])
    ]
    assert [c.metadata["nqf_exercise"] for _, c in answers] == derivations
    for k, cell in answers:
        assert cell.source.startswith("**Your answer.**")
        before = student.cells[k - 1]
        assert before.cell_type == "markdown"
        stated = [e["label"] for e in before.metadata.get("nqf", {}).get("exercises", [])]
        assert stated and stated[-1] == cell.metadata["nqf_exercise"]  # right after it


def test_the_student_book_keeps_myst_and_drops_every_solution():
    """``student_book_notebook`` (the chapters of ``make book-student``): solution blocks
    and solution regions spanning cells go, the exercise and the text around them stay
    MyST, solution code becomes a skeleton, a derivation gets its answer cell."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(
        cells=[
            md(
                "Intro {prf:ref}`thm-nqf`.\n\n```{exercise} Derive\n:label: ex-a\n\n"
                "*Difficulty: ★☆☆ (derivation).* Show it.\n```\n\n"
                "```{solution} ex-a\n:class: dropdown\n\nSECRET ONE\n```\n\nAfter."
            ),
            md("````{solution-start} ex-b\n````\n\nSECRET TWO"),
            code("def f(x):\n    return x + 1\n\n\ncheck.exercise('ch1.f', f)"),
            md("SECRET THREE\n\n````{solution-end}\n````\n\nOutro."),
            code("def g(x):\n    return 2 * x", metadata={"tags": ["solution"]}),
        ]
    )
    out = make_student.student_book_notebook(nb)
    text = "\n".join(c.source for c in out.cells)
    assert "SECRET" not in text and "return x + 1" not in text and "return 2 * x" not in text
    assert "{prf:ref}`thm-nqf`" in text and "```{exercise} Derive" in text
    assert "After." in text and "Outro." in text
    assert text.count("NotImplementedError") == 2 and "Your answer." in text
    assert [c.cell_type for c in out.cells] == [
        "markdown",
        "markdown",
        "markdown",
        "code",
        "markdown",
        "code",
    ]
