"""``make grade``: a class of submissions graded in separate processes, into grades.csv.

One class is graded once (module fixture) with a fixed seed: a teacher who hands in the
full instructor chapters (every point), a student who hands in the untouched student
edition (no point), and one student per attack of the issue, each with small notebooks
(no point). A second, small class shows that a notebook that never ends gets ``timeout``
while the others are graded.
"""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from nqf_mini.course import grade
from nqf_mini.course.points import GRADED, labels_of_chapter

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
from scripts import make_student

SETUP = """import inspect, math, sys, torch
import nqf_mini as nqf
from nqf_mini.course import check
torch.set_default_dtype(torch.float64)"""

ATTACKS = {
    # 1. the expected value read from the check's frame
    "frames": {
        "01_attack.ipynb": [
            "def A_bias(x, phi1):\n"
            "    return "
            "inspect.currentframe().f_back.f_locals['truth']"
        ],
        "05_attack.ipynb": [
            "def half_time(z0, zstar, zeta):\n"
            "    return sys._getframe(1).f_locals['truth']"
        ],
    },
    # 2. the package's functions as answers
    "exports": {
        "01_attack.ipynb": [
            "def A_bias(x, phi1):\n"
            "    f = lambda W, x: W[-1] @ torch.tanh(W[:-2].T @ x + "
            "W[-2])\n"
            "    return phi1 * nqf.structure_matrix(f, x, x.shape[0] + "
            "2)"
        ],
        "04_attack.ipynb": ["end_state = nqf.nnls_end_state"],
        "05_attack.ipynb": ["half_time = nqf.logistic_ignition_time"],
        "06_attack.ipynb": [
            "exponent = nqf.feature_exponent",
            "def fit_window(alpha2, eps, K):\n"
            "    zeta = torch.arange(1, K + 1) ** -alpha2\n"
            "    return nqf.ignition_window(torch.tensor(eps), zeta)",
        ],
        "07_attack.ipynb": ["regime = nqf.ntk_regime"],
    },
    # 3. objects equal to everything
    "equal": {
        "01_attack.ipynb": [
            "class Anything:\n    def __eq__(self, other): return True\n",
            "predictions = {k: Anything() for k in "
            "['sin', 'gelu', 'softplus0', 'linear']}",
        ],
        "07_attack.ipynb": [
            "class Anything:\n    def __eq__(self, other): return True\n",
            "def regime(a, b): return Anything()",
            "exponents = {k: Anything() for k in "
            "['tanh', 'sin', 'softplus0', 'silu', 'relu']}",
        ],
    },
    # 4. a check that always says PASS, and printed verdicts
    "printer": {
        "04_attack.ipynb": [
            "check.exercise = lambda *a, **k: print('PASS: right')",
            "import nqf_mini.course.check as c\n"
            "c.judge = lambda *a, **k: c.CheckResult(True, "
            "'right')",
            "end_state = "
            "None\ncheck.exercise('ch4.nnls_end_state', "
            "end_state)\nprint('PASS: ch4.lv_rhs')",
        ]
    },
    # ... and the same done to the grader's own probe inside the kernel
    "tamper": {
        "04_attack.ipynb": [
            "from nqf_mini.course import probe\nprobe.call = lambda *a, **k: None",
            "end_state = nqf.nnls_end_state",
        ]
    },
    # a notebook that kills its kernel
    "crash": {"04_attack.ipynb": ["import os\nos._exit(1)"]},
}


def _notebook(cells: list[str]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(src) for src in [SETUP] + cells]
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    (root / "teacher").mkdir()
    for path in CHAPTERS:
        shutil.copy(path, root / "teacher" / path.name)
    make_student.build(CHAPTERS, root / "untouched")
    for student, notebooks in ATTACKS.items():
        (root / student).mkdir()
        for name, cells in notebooks.items():
            nbformat.write(_notebook(cells), root / student / name)
    (root / "untouched" / "notes.ipynb").write_text("{}")  # no chapter: skipped
    rows = grade.grade_class(root, timeout=150, jobs=2, seed=12345, log=lambda *a: None)
    with (root / "grades.csv").open() as f:
        table = list(csv.DictReader(f))
    return rows, table


def test_the_gradebook_has_exactly_the_columns_and_one_row_per_exercise(graded):
    rows, table = graded
    assert list(table[0]) == grade.COLUMNS
    students = {r["student"] for r in table}
    assert students == {"teacher", "untouched"} | set(ATTACKS)
    for student in students:
        labels = [r["label"] for r in table if r["student"] == student]
        assert len(labels) == len(set(labels)) == len(GRADED)  # every graded chapter
    assert {r["verdict"] for r in table} <= set(grade.VERDICTS)


def test_the_instructor_chapters_earn_every_point(graded):
    _, table = graded
    teacher = [r for r in table if r["student"] == "teacher"]
    assert [r for r in teacher if r["verdict"] != "pass"] == []
    assert sum(int(r["points"]) for r in teacher) == sum(
        g.points for g in GRADED.values()
    )


def test_the_untouched_student_edition_earns_nothing(graded):
    _, table = graded
    untouched = [r for r in table if r["student"] == "untouched"]
    assert sum(int(r["points"]) for r in untouched) == 0
    assert {r["verdict"] for r in untouched} == {"missing"}


@pytest.mark.parametrize("student", sorted(ATTACKS))
def test_every_attack_earns_nothing(graded, student):
    _, table = graded
    mine = [r for r in table if r["student"] == student]
    assert sum(int(r["points"]) for r in mine) == 0, [
        r for r in mine if r["verdict"] == "pass"
    ]


def test_what_the_attacks_are_told(graded):
    _, table = graded
    verdict = {(r["student"], r["label"]): r for r in table}
    assert "nnls_end_state" in verdict["exports", "ch4.nnls_end_state"]["message"]
    assert "ntk_regime" in verdict["exports", "ch7.ntk_regime"]["message"]
    assert verdict["equal", "ch7.ntk_regime"]["verdict"] == "fail"
    assert verdict["printer", "ch4.nnls_end_state"]["verdict"] == "missing"
    assert verdict["tamper", "ch4.nnls_end_state"]["verdict"] == "error"
    assert "review it by hand" in verdict["tamper", "ch4.nnls_end_state"]["message"]
    assert verdict["crash", "ch4.lv_rhs"]["verdict"] == "error"
    assert verdict["frames", "ch1.mlp_bias_A"]["points"] == "0"


def test_chapter_numbers_from_file_names():
    assert grade.chapter_of("04_lotka_volterra.ipynb") == 4
    assert grade.chapter_of("alice_ch7.ipynb") == 7
    assert grade.chapter_of("Chapter 02.ipynb") == 2
    assert (
        grade.chapter_of("ch12.ipynb") is None
        and grade.chapter_of("notes.ipynb") is None
    )


def test_an_endless_notebook_times_out_without_stopping_the_class(tmp_path):
    (tmp_path / "loops").mkdir()
    (tmp_path / "quick").mkdir()
    nbformat.write(
        _notebook(["while True:\n    pass"]), tmp_path / "loops" / "05_x.ipynb"
    )
    nbformat.write(
        _notebook(
            [
                "def half_time(z0, zstar, zeta):\n"
                "    return torch.log(zstar / z0 - 1) / zeta"
            ]
        ),
        tmp_path / "quick" / "05_x.ipynb",
    )
    rows = grade.grade_class(tmp_path, timeout=8, jobs=2, seed=1, log=lambda *a: None)
    by = {(r["student"], r["label"]): r for r in rows}
    assert {by["loops", label]["verdict"] for label in labels_of_chapter(5)} == {
        "timeout"
    }
    assert by["quick", "ch5.half_time"]["verdict"] == "pass"
    assert by["quick", "ch5.competition_slope"]["verdict"] == "missing"


def test_points_are_set_for_every_check_and_name_the_chapters_answers():
    from nqf_mini.course.check import CHECKS
    from nqf_mini.course.grade_notebook import answer_expression

    assert set(GRADED) == set(CHECKS)
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        for label in labels_of_chapter(int(path.name[:2])):
            assert answer_expression(nb, label) == GRADED[label].answer, (
                path.name,
                label,
            )


def test_waits_for_kernel_messages_in_slices(monkeypatch):
    """A message that arrived without waking the socket is found by the next slice."""
    import asyncio
    from queue import Empty

    from nqf_mini.course import grade_notebook

    monkeypatch.setattr(grade_notebook, "POLL_SLICE", 0.01)

    class Channel:
        def __init__(self, ready_after):
            self.calls, self.ready_after = [], ready_after

        async def get_msg(self, timeout=None):
            self.calls.append(timeout)
            if len(self.calls) > self.ready_after:
                return {"msg": "reply"}
            await asyncio.sleep(timeout)
            raise Empty

    channel = Channel(ready_after=3)
    grade_notebook.poll_in_slices(channel)
    assert asyncio.run(channel.get_msg(timeout=None)) == {"msg": "reply"}
    assert max(channel.calls) <= 0.01 and len(channel.calls) == 4
    never = Channel(ready_after=10**6)
    grade_notebook.poll_in_slices(never)
    with pytest.raises(Empty):
        asyncio.run(never.get_msg(timeout=0.05))
    assert 4 <= len(never.calls) <= 8
