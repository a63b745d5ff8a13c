"""Which cells the grader runs (``nqf_mini.course.notebook_slice``): a lecture cell is
skipped only when no answer can depend on it, checked on notebooks built to break each
rule, and on the chapters themselves against running them whole."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from nqf_mini.course.grade_notebook import chapter_keys
from nqf_mini.course.notebook_slice import cell_facts, cells_to_run

ROOT = Path(__file__).resolve().parents[2]


def _run(cells: list[str], answers: list[str], lecture: list[int]) -> list[int]:
    """The cells run when ``lecture`` (indices) are the chapter's own cells."""
    return cells_to_run(cells, {cells[i].strip() for i in lecture}, answers)


def _outcome(cells: list[str], indices: list[int], answer: str) -> object:
    """The answer after running only ``indices`` (what the grader would see)."""
    namespace: dict = {}
    for i in indices:
        exec(cells[i], namespace)  # the test's own cells
    return eval(answer, namespace)


CASES = {
    "a lecture cell that binds what the answer reads runs": (
        ["import math", "k = 3", "plot = [k] * 1000", "c_star = k / 13"],
        "c_star",
        [0, 1, 2],
        [1, 3],
    ),
    "a figure that only reads is skipped": (
        ["data = [1, 2, 3]", "shown = sum(data)", "answer = data[0]"],
        "answer",
        [0, 1],
        [0, 2],
    ),
    "a cell that changes an object the answer reads runs": (
        ["data = [1, 2, 3]", "data.append(10)", "answer = sum(data)"],
        "answer",
        [0, 1],
        [0, 1, 2],
    ),
    "an item assignment is a change": (
        ["data = [1, 2, 3]", "data[0] = 7", "answer = data[0]"],
        "answer",
        [0, 1],
        [0, 1, 2],
    ),
    "a later lecture cell that rebinds the answer runs": (
        ["answer = 1", "x = 2", "answer = 5"],
        "answer",
        [1, 2],
        [0, 2],
    ),
    "a function of the notebook that changes a global, called later": (
        ["data = [0]", "def bump():\n    data.append(1)", "bump()", "answer = len(data)"],
        "answer",
        [0, 1, 2],
        [0, 1, 2, 3],
    ),
    "a function that assigns a global, called later": (
        ["n = 1", "def reset():\n    global n\n    n = 5", "reset()", "answer = n"],
        "answer",
        [0, 1, 2],
        [0, 1, 2, 3],
    ),
    "global random state is kept": (
        ["import random", "random.seed(1)", "waste = random.random()", "answer = random.random()"],
        "answer",
        [0, 1, 2],
        [0, 1, 2, 3],
    ),
    "a loop's own variable is not read from before": (
        ["i = 100", "total = 0\nfor i in range(3):\n    total += i", "answer = total"],
        "answer",
        [0, 1],
        [1, 2],
    ),
    "a name bound in one branch only keeps its earlier value": (
        ["x = 1", "if False:\n    x = 2", "answer = x"],
        "answer",
        [0, 1],
        [0, 1, 2],
    ),
    "exec anywhere runs everything": (
        ["x = 1", "y = 2", "exec('answer = x + y')"],
        "answer",
        [0, 1],
        [0, 1, 2],
    ),
    "globals() in the answer runs everything": (
        ["x = 1", "y = [0] * 10", "answer = 0"],
        "globals()['x']",
        [0, 1],
        [0, 1, 2],
    ),
    "the student's own cells always run": (
        ["x = 1", "side = [0] * 10", "note = 'mine'"],
        "x",
        [0, 1],
        [0, 2],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_slice_gives_the_answers_of_the_whole_notebook(case):
    cells, answer, lecture, expected = CASES[case]
    run = _run(cells, [answer], lecture)
    assert run == expected
    assert _outcome(cells, run, answer) == _outcome(cells, list(range(len(cells))), answer)


def test_cell_facts_of_global_effects():
    assert cell_facts("import torch\ntorch.set_default_dtype(torch.float64)").global_effect
    assert cell_facts("import torch\nx = torch.randn(3)").global_effect
    assert not cell_facts(
        "import torch\nx = torch.randn(3, generator=torch.Generator())"
    ).global_effect
    assert cell_facts("import os\nos.environ['A'] = '1'").global_effect
    assert cell_facts("open('f', 'w').write('x')").global_effect
    assert not cell_facts("%matplotlib inline\nx = 1").dynamic
    assert cell_facts("%time x = y").dynamic
    assert cell_facts("from math import *").dynamic


@pytest.mark.parametrize("number", sorted(chapter_keys(ROOT / "chapters")))
def test_the_student_edition_runs_only_its_setup_and_exercises(number, tmp_path):
    """What an honest submission costs: the student edition's slice is its setup cells
    and the exercise cells (skeletons), not the lecture."""
    from scripts import make_student

    key = chapter_keys(ROOT / "chapters")[number]
    path = next((ROOT / "chapters").glob(f"{number:02d}_*.ipynb"))
    (written,) = make_student.build([path], tmp_path)
    nb = nbformat.read(written, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    run = cells_to_run([c.source for c in cells], set(key.lecture), list(key.expressions.values()))
    skeletons = [
        i for i, c in enumerate(cells) if make_student.SKELETON_TAG in c.metadata.get("tags", [])
    ]
    assert set(skeletons) <= set(run)
    assert len(set(run) - set(skeletons)) <= 2, [cells[i].source[:60] for i in run]
