"""``make grade``: a class graded in sandboxes, attacked as the teacher's trial attacked it.

One class is graded once (module fixture ``graded``) with a fixed seed. A teacher hands
in one full instructor chapter (every point) and a student the untouched student edition
of it (no point); the other students hand in small notebooks (a setup cell and the
answer or attack cells): correct answers (every point), and one student per attack of
the trial (``ATTACKS``), each earning nothing and changing nothing outside its own
grade: not the package, not the submissions, not the classmates graded after it, not
``grades.csv`` after the run, and no process of theirs outlives it. Folder names that a
spreadsheet would run, nested folders, duplicates and unreadable files are graded in the
same run without a kernel. A second, small class (``limited``) runs under tight limits:
an endless loop, a sleeper, a memory bomb, a fork bomb, 100 MB of output and a 200 MB
answer each cost their author only the answer concerned, and the correct answers after
them still count.
"""

from __future__ import annotations

import csv
import hashlib
import io
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from nqf_mini.course import grade, gradebook
from nqf_mini.course.grade_notebook import chapter_keys, labels_of_chapter
from nqf_mini.course.points import POINTS
from nqf_mini.course.sandbox import KERNEL_ENV, Kernel, Limits, bwrap_problem

from scripts import make_student
from scripts.timeouts import scale
from ..conftest import need

ROOT = Path(__file__).resolve().parents[2]

FULL_CHAPTER = ROOT / "chapters" / "04_lotka_volterra.ipynb"
SCALE = scale()
#: Marks the processes an attack starts, so that the test can look for survivors.
MARK = "nqf-attack-survivor-7731"


@pytest.fixture(autouse=True, scope="module")
def _sandbox():
    """Every test here grades in the sandbox: skipped where there is none, failed under CI."""
    problem = bwrap_problem()
    need(problem is None, f"no sandbox here: {problem}")


SETUP = """import itertools, math, sys, torch
import numpy as np
import nqf_mini as nqf
from nqf_mini.course import check
torch.set_default_dtype(torch.float64)"""

CORRECT = {
    1: [
        "def A_bias(x, phi1):\n    return phi1 * nqf.offdiag(torch.cat([x, x.new_ones(1)]))",
        'predictions = {"sin": 4, "gelu": 3, "softplus0": 3, "linear": None}',
    ],
    2: [
        "def A_biased(X, b, h, h_v):\n"
        "    n = X.shape[0]\n"
        "    p, start = 2 * h * n + h_v * n + h_v, 2 * h * n\n"
        "    token = X @ torch.softmax(b, dim=0)\n"
        "    A = torch.zeros(p, p, dtype=X.dtype)\n"
        "    I_hv = torch.eye(h_v, dtype=X.dtype)\n"
        "    A[start:, start:] = nqf.offdiag(torch.kron(I_hv, token[:, None]))\n"
        "    return A",
        "def f_gcn(W, x):\n"
        "    X, S = x\n"
        "    return W[-1] @ torch.tanh(W[:-1].T @ X @ S).sum(dim=1)\n"
        "def A_gcn(x):\n"
        "    X, S = x\n"
        "    return nqf.offdiag(X @ S @ torch.ones(S.shape[0], dtype=X.dtype))",
        "predictions = {'MLP, 1-D input': True, 'MLP, 3-D input': False,\n"
        "    'CNN, circular, global pooling, 1 channel': True,\n"
        "    'CNN, circular, global pooling, 2 channels': False,\n"
        "    'multi-head attention': False, 'phase retrieval': False,\n"
        "    'matrix completion, entries in different rows and columns': True}",
    ],
    4: [
        "def lv_rhs(z, b, C):\n    return 4 * z * (b - C @ z)",
        "def end_state(b, C):\n"
        "    K = b.shape[0]\n"
        "    for size in range(K, -1, -1):\n"
        "        for S in itertools.combinations(range(K), size):\n"
        "            z, idx = torch.zeros(K), list(S)\n"
        "            if idx:\n"
        "                z[idx] = torch.linalg.solve(C[idx][:, idx], b[idx])\n"
        "            if (z[idx] > 0).all() and (C @ z - b >= -1e-12).all():\n"
        "                return z",
        "c_star = 0.4 / 1.3",
    ],
    5: [
        "def half_time(z0, zstar, zeta):\n    return torch.log(zstar / z0 - 1) / zeta",
        "slope = 0.25 + 0.4 / 1.2",
    ],
}

#: student -> {file name: cells after the setup}; every one of them earns nothing.
#: {repo} and {root} are replaced by the repository's and the class folder's paths.
ATTACKS = {
    # a1: the checks' constants and oracles, and package functions through a thread
    "a_internals": {
        "01_a.ipynb": [
            "import importlib, concurrent.futures as cf\n"
            "try:\n"
            "    predictions = dict(importlib.import_module(\n"
            "        'nqf_mini.course.checks_ch1')._ORDERS)\n"
            "except Exception:\n"
            "    predictions = None",
            "def A_bias(x, phi1):\n"
            "    def f(W, x):\n"
            "        return W[-1] @ torch.tanh(W[:-2].T @ x + W[-2])\n"
            "    with cf.ThreadPoolExecutor(1) as pool:\n"
            "        job = pool.submit(nqf.structure_matrix, f, x, x.shape[0] + 2)\n"
            "        return phi1 * job.result()",
        ]
    },
    # a2: the refusal switched off through sys.modules and a name built from pieces;
    # the grader's code in the kernel patched; printed verdicts
    "a_switch_off": {
        "04_a.ipynb": [
            "m = __import__('nqf_mini.course.' + 'an' + 'swers', fromlist=['x'])\n"
            "m.package_function = lambda o: None\n"
            "m.run = lambda fn, args, what, trusted=False: m.Outcome('value', fn(*args))\n"
            "import nqf_mini.course.grading_kernel as gk\n"
            "gk.run = m.run",
            "import concurrent.futures as cf\n"
            "def end_state(b, C):\n"
            "    with cf.ThreadPoolExecutor(1) as pool:\n"
            "        return pool.submit(nqf.nnls_end_state, b, C).result()\n"
            "lv_rhs = getattr(nqf, 'lotka' + '_volterra')",
            "check.exercise = lambda *a, **k: print('PASS: right')\n"
            "print('PASS: ch4.lv_rhs')\n"
            "c_star = sys.modules['nqf_mini.course.check'].exercise('ch4.x', 1)",
        ]
    },
    # b: the instructor chapters, read from the repository and executed
    "b_solutions": {
        "04_b.ipynb": [
            "import json, pathlib\n"
            "for p in [pathlib.Path('{repo}') / 'chapters' / '04_lotka_volterra.ipynb',\n"
            "          pathlib.Path(nqf.__file__).parents[1] / 'chapters' /\n"
            "          '04_lotka_volterra.ipynb']:\n"
            "    try:\n"
            "        for c in json.loads(p.read_text())['cells']:\n"
            "            if 'solution' in c['metadata'].get('tags', []):\n"
            "                exec(''.join(c['source']))\n"
            "    except Exception as exc:\n"
            "        print(exc)",
        ]
    },
    # c1: the package rewritten, so that blank classmates pass (this run and the next)
    "aaa_pkg": {
        "01_c.ipynb": [
            "import pathlib, nqf_mini.course as pkg\n"
            "patch = ('\\ndef judge(label, answer, hidden=None):\\n'\n"
            "         '    return CheckResult(True, \"looks right\")\\n')\n"
            "for t in [pathlib.Path(pkg.__file__).parent / 'check.py',\n"
            "          pathlib.Path('{repo}') / 'nqf_mini' / 'course' / 'check.py',\n"
            "          pathlib.Path(sys.prefix) / 'pyvenv.cfg']:\n"
            "    try:\n"
            "        t.write_text(t.read_text() + patch)\n"
            "    except Exception as exc:\n"
            "        print(exc)",
        ]
    },
    # c2: a classmate's notebooks overwritten, a chapter planted, a fake gradebook
    "aaa_overwrite": {
        "01_c.ipynb": [
            "import pathlib\n"
            "root = pathlib.Path('{root}')\n"
            "for target, text in [(root / 'zzz_victim' / '04_v.ipynb', '{{}}'),\n"
            "                     (root / 'zzz_victim' / '09_planted.ipynb', '{{}}'),\n"
            "                     (root / 'grades.csv', 'student\\n')]:\n"
            "    try:\n"
            "        target.write_text(text)\n"
            "    except Exception as exc:\n"
            "        print(exc)",
        ]
    },
    # d: a double-forked, setsid daemon that kills whatever it sees and waits
    "aab_daemon": {
        "01_d.ipynb": [
            "import os, signal, time\n"
            "code = ('import os, signal, time  # " + MARK + "\\n'\n"
            "        'while True:\\n'\n"
            "        '    for p in os.listdir(\"/proc\"):\\n'\n"
            "        '        if p.isdigit() and int(p) != os.getpid():\\n'\n"
            "        '            try: os.kill(int(p), signal.SIGKILL)\\n'\n"
            "        '            except Exception: pass\\n'\n"
            "        '    time.sleep(0.2)\\n')\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        os.execv(sys.executable, [sys.executable, '-c', code])\n"
            "    os._exit(0)\n"
            "time.sleep(1)",
            'predictions = {"sin": 4, "gelu": 3, "softplus0": 3, "linear": None}',
        ]
    },
    # the expected value read from the caller's frames; objects equal to everything
    "frames": {
        "01_f.ipynb": [
            "import inspect\n"
            "def A_bias(x, phi1):\n"
            "    for frame in sys._current_frames().values():\n"
            "        while frame is not None:\n"
            "            if 'truth' in frame.f_locals:\n"
            "                return frame.f_locals['truth']\n"
            "            frame = frame.f_back\n"
            "    return inspect.currentframe().f_back.f_locals['truth']",
            "class Anything:\n"
            "    def __eq__(self, other): return True\n"
            "predictions = {k: Anything() for k in ['sin', 'gelu', 'softplus0', 'linear']}",
        ]
    },
    # f and g: comparisons patched in the kernel, lying objects, wrong answers
    "f_liars": {
        "04_f.ipynb": [
            "import builtins, math as _m\n"
            "torch.allclose = lambda *a, **k: True\n"
            "torch.equal = lambda *a, **k: True\n"
            "torch.Tensor.__eq__ = lambda *a, **k: True\n"
            "np.allclose = lambda *a, **k: True\n"
            "_m.isclose = lambda *a, **k: True\n"
            "builtins.abs = lambda x: 0",
            "class Liar(float):\n"
            "    def __eq__(self, other): return True\n"
            "    def __sub__(self, other): return 0.0\n"
            "c_star = Liar(0.5)\n"
            "def lv_rhs(z, b, C):\n"
            "    return z * (b - C @ z)\n"
            "class LyingTensor(torch.Tensor):\n"
            "    @classmethod\n"
            "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
            "        return True\n"
            "def end_state(b, C):\n"
            "    return torch.zeros(b.shape[0]).as_subclass(LyingTensor)",
        ]
    },
    # the grader's process (through the kernel's exit) and its own kernel killed
    "crash": {"04_x.ipynb": ["import os\nos._exit(1)"]},
}


def _notebook(cells: list[str], kernel: str = "python3") -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in [SETUP, *cells]]
    return nb


def _with_stored_passes(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """i4: every cell claims, in stored outputs, to have passed its self-check."""
    for count, cell in enumerate(nb.cells, start=1):
        cell.execution_count = count
        cell.outputs = [
            nbformat.v4.new_output(
                "stream", name="stdout", text="PASS: ch4.lv_rhs\nPASS: ch4.nnls_end_state\n"
            )
        ]
    return nb


def _tree_hash(folder: Path, skip: set[str] = frozenset()) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.relative_to(folder).parts[0] not in skip
    }


def _survivors() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and MARK.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


#: Folder names a spreadsheet would evaluate, or that split a printed line; graded
#: with an unreadable notebook (no kernel), so that only the names are at stake.
NAMES = [
    "=1+2",
    '=HYPERLINK("evil.example","click")',
    "@SUM(1+1)",
    "+cmd|calc",
    "-2+3",
    "h_new\nline",
    "h_a,b",
    "Zoë 学生 🚀",
]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    (root / "teacher").mkdir()
    shutil.copy(FULL_CHAPTER, root / "teacher" / FULL_CHAPTER.name)
    make_student.build([FULL_CHAPTER], root / "untouched")
    for chapter, cells in CORRECT.items():
        (root / "correct").mkdir(exist_ok=True)
        nbformat.write(_notebook(cells), root / "correct" / f"{chapter:02d}_ok.ipynb")
    (root / "zzz_victim").mkdir()
    nbformat.write(_notebook(CORRECT[4]), root / "zzz_victim" / "04_v.ipynb")
    nbformat.write(_notebook(CORRECT[1], kernel="evil-kernel"), root / "zzz_victim" / "01_v.ipynb")
    for student, notebooks in ATTACKS.items():
        (root / student).mkdir()
        for name, cells in notebooks.items():
            cells = [
                c.replace("{repo}", str(ROOT)).replace("{root}", str(root)).replace("{{}}", "{}")
                for c in cells
            ]
            nbformat.write(_with_stored_passes(_notebook(cells)), root / student / name)
    for name in NAMES:
        (root / name).mkdir()
        (root / name / "01_x.ipynb").write_text("{ not json")
    for nested in ("bob", "carol"):
        (root / nested / "hw1").mkdir(parents=True)
        (root / nested / "hw1" / "01_x.ipynb").write_bytes(b"\xff\xfe")
    (root / "dup").mkdir()
    for name in ("01_x.ipynb", "01_x (1).ipynb"):
        (root / "dup" / name).write_text("{}")
    (root / "loose_05.ipynb").write_text("{}")  # no student folder
    (root / "untouched" / "notes.ipynb").write_text("{}")  # no chapter: skipped
    package = _tree_hash(ROOT / "nqf_mini")
    submissions = _tree_hash(root)
    log: list[str] = []
    start = time.process_time()
    rows = grade.grade_class(
        root, jobs=2, seed=12345, log=log.append, limits=Limits(idle_seconds=60 * SCALE)
    )
    time.sleep(2)  # anything still running would act now
    with (root / "grades.csv").open(newline="") as f:
        table = list(csv.DictReader(f))
    return {
        "root": root,
        "rows": rows,
        "table": table,
        "log": log,
        "package": package,
        "submissions": submissions,
        "grader_cpu": time.process_time() - start,
    }


def _mine(graded, student):
    return [r for r in graded["rows"] if r["student"] == student]


def test_the_full_instructor_chapter_earns_every_point(graded):
    teacher = [r for r in _mine(graded, "teacher") if r["chapter"] == 4]
    assert [r for r in teacher if r["verdict"] != "pass"] == []
    assert sum(r["points"] for r in teacher) == sum(POINTS[label] for label in labels_of_chapter(4))


def test_the_untouched_student_edition_earns_nothing(graded):
    untouched = _mine(graded, "untouched")
    assert {r["verdict"] for r in untouched if r["chapter"] == 4} == {"missing"}
    assert sum(r["points"] for r in untouched) == 0


def test_correct_small_notebooks_earn_every_point(graded):
    correct = [r for r in _mine(graded, "correct") if r["chapter"] in CORRECT]
    assert {r["chapter"] for r in correct} == set(CORRECT)
    assert [r for r in correct if r["verdict"] != "pass"] == []


@pytest.mark.parametrize("student", sorted(ATTACKS))
def test_every_attack_earns_nothing(graded, student):
    mine = _mine(graded, student)
    handed = {int(name[:2]) for name in ATTACKS[student]}
    assert mine and sum(r["points"] for r in mine if r["chapter"] in handed) == 0, [
        r for r in mine if r["verdict"] == "pass"
    ]


def test_what_the_attacks_are_told(graded):
    verdict = {(r["student"], r["label"]): r for r in graded["rows"]}
    assert "structure_matrix" in verdict["a_internals", "ch1.mlp_bias_A"]["message"]
    assert verdict["a_internals", "ch1.remainder_orders"]["verdict"] == "missing"
    for label, name in [("ch4.nnls_end_state", "nnls_end_state"), ("ch4.lv_rhs", "lotka_volterra")]:
        assert name in verdict["a_switch_off", label]["message"]
    assert verdict["b_solutions", "ch4.lv_rhs"]["verdict"] == "missing"
    assert verdict["crash", "ch4.lv_rhs"]["verdict"] == "error"
    assert verdict["aab_daemon", "ch1.remainder_orders"]["verdict"] == "error"


def test_no_attack_reaches_the_package_the_class_or_a_classmate(graded):
    assert _tree_hash(ROOT / "nqf_mini") == graded["package"]
    outputs = {
        "grades.csv",
        "summary.csv",
        "canvas.csv",
        "derivations.csv",
        "feedback",
        "derivations",
    }
    assert _tree_hash(graded["root"], skip=outputs) == graded["submissions"]
    victim = _mine(graded, "zzz_victim")
    assert 9 not in {r["chapter"] for r in victim}  # nothing planted
    assert [r for r in victim if r["chapter"] in (1, 4) and r["verdict"] != "pass"] == []
    assert _survivors() == []


def test_the_gradebook_on_disk_is_what_the_grader_computed(graded):
    table = graded["table"]
    assert list(table[0]) == gradebook.COLUMNS
    on_disk = {
        (gradebook.from_spreadsheet(r["student"]), r["label"]): (int(r["points"]), r["verdict"])
        for r in table
    }
    computed = {(r["student"], r["label"]): (r["points"], r["verdict"]) for r in graded["rows"]}
    assert on_disk == computed
    assert {r["verdict"] for r in table} <= set(gradebook.VERDICTS)
    for student in {r["student"] for r in graded["rows"]}:
        labels = [r["label"] for r in _mine(graded, student)]
        assert len(labels) == len(set(labels))
    sha = {r["student"]: r["sha256"] for r in table if r["chapter"] == "4"}
    assert sha["teacher"] == hashlib.sha256(FULL_CHAPTER.read_bytes()).hexdigest()


def test_names_a_spreadsheet_would_run_are_escaped(graded):
    raw = (graded["root"] / "grades.csv").read_text(encoding="utf-8")
    cells = [row[0] for row in list(csv.reader(io.StringIO(raw)))[1:] if row]
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@"))]
    students = {r["student"] for r in graded["rows"]}
    assert set(NAMES) <= students
    summary = "\n".join(graded["log"])
    assert "h_new\\nline" in summary and "h_new\nline" not in summary


def test_students_are_top_level_folders_and_duplicates_are_named(graded):
    students = {r["student"] for r in graded["rows"]}
    assert {"bob", "carol"} <= students and "hw1" not in students
    dup = [r for r in _mine(graded, "dup") if r["chapter"] == 1]
    assert {r["verdict"] for r in dup} == {"error"}
    assert all("01_x (1).ipynb" in r["message"] and "01_x.ipynb" in r["message"] for r in dup)
    assert any("loose_05.ipynb" in line and "student" in line for line in graded["log"])
    unreadable = [r for r in _mine(graded, "=1+2") if r["chapter"] == 1]
    assert {r["verdict"] for r in unreadable} == {"error"}
    assert "cannot be read" in unreadable[0]["message"]


def test_the_teachers_files(graded):
    root = graded["root"]
    with (root / "summary.csv").open(newline="") as f:
        summary = {gradebook.from_spreadsheet(r["student"]): r for r in csv.DictReader(f)}
    assert summary["teacher"]["ch4"] == "7" and summary["teacher"]["self_checked"] == "7"
    with (root / "canvas.csv").open(newline="") as f:
        canvas = list(csv.DictReader(f))
    assert list(canvas[0])[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert any(
        r["SIS Login ID"] == "teacher" and r["NQF chapter 4 self-checks"] == "7" for r in canvas
    )
    feedback = (root / "feedback" / "teacher.md").read_text()
    assert "ch4.nnls_end_state" in feedback and "ex-ch4-factor" in feedback
    with (root / "derivations.csv").open(newline="") as f:
        sheet = list(csv.DictReader(f))
    assert {r["exercise"] for r in sheet if r["student"] == "teacher"} == {"ex-ch4-factor"}
    assert (root / "derivations" / "untouched.md").exists()


def test_a_class_under_tight_limits_loses_only_the_answers_concerned(tmp_path):
    cells = {
        "loops": ["while True:\n    pass"],
        "sleeps": ["import time\ntime.sleep(10**6)"],
        "membomb": [
            "chunks = []\n"
            "try:\n"
            "    while True:\n"
            "        chunks.append(torch.ones(12_500_000))\n"
            "except MemoryError:\n"
            "    del chunks"
        ],
        "forkbomb": [
            "import os\n"
            "pids = []\n"
            "try:\n"
            "    while True:\n"
            "        pid = os.fork()\n"
            "        if pid == 0:\n"
            "            import time; time.sleep(600); os._exit(0)\n"
            "        pids.append(pid)\n"
            "except OSError:\n"
            "    pass"
        ],
        "bigprint": ["for _ in range(1000):\n    print('x' * 100_000)"],
        "fake": [
            "class Fake:\n    __class__ = property(lambda self: torch.Tensor)\nhalf_time = Fake()"
        ],
    }
    for student, bad in cells.items():
        (tmp_path / student).mkdir()
        nbformat.write(
            _notebook(bad + ["slope = 0.25 + 0.4 / 1.2"]), tmp_path / student / "05_x.ipynb"
        )
    (tmp_path / "bigans").mkdir()
    nbformat.write(
        _notebook(
            ["def lv_rhs(z, b, C):\n    return torch.zeros(25_000_000)", "c_star = 0.4 / 1.3"]
        ),
        tmp_path / "bigans" / "04_x.ipynb",
    )
    limits = Limits(
        cpu_seconds=6, idle_seconds=8 * SCALE, memory_mb=1500, processes=32, reply_mb=16
    )
    rows = grade.grade_class(tmp_path, jobs=2, seed=1, limits=limits, log=lambda *a: None)
    by = {(r["student"], r["label"]): r for r in rows}
    for student in ("loops", "sleeps"):
        assert {by[student, label]["verdict"] for label in labels_of_chapter(5)} == {"timeout"}, (
            student
        )
    assert "CPU seconds" in by["loops", "ch5.half_time"]["message"]
    assert "computed nothing" in by["sleeps", "ch5.half_time"]["message"]
    for student in ("membomb", "forkbomb", "bigprint", "fake"):
        assert by[student, "ch5.competition_slope"]["verdict"] == "pass", student
    assert by["fake", "ch5.half_time"]["points"] == 0
    assert by["bigans", "ch4.lv_rhs"]["verdict"] in ("error", "fail")
    assert by["bigans", "ch4.extinction_threshold"]["verdict"] == "pass"


def test_what_a_kernel_sees(tmp_path):
    """The notebook kernel's view: an unprivileged user alone in its namespaces, the
    environment of KERNEL_ENV, no network but loopback, no repository, no class, no
    checks."""
    from nqf_mini.course.sandbox import stage_package

    staged = stage_package(tmp_path / "stage")
    probe = (
        "import os, pathlib, socket, importlib.util\n"
        "view = {\n"
        " 'uid': os.getuid(), 'euid': os.geteuid(),\n"
        " 'env': sorted(os.environ),\n"
        " 'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),\n"
        " 'nets': sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net')"
        " else [],\n"
        f" 'repo': [os.path.exists(os.path.join({str(ROOT)!r}, name)) for name in\n"
        "          ('chapters', 'nqf_mini', 'scripts', 'tests')],\n"
        f" 'tmp': os.path.exists({str(tmp_path)!r}),\n"
        " 'checks': importlib.util.find_spec('nqf_mini.course.checks_ch1') is not None,\n"
        " 'site_writable': os.access('/opt/nqf/nqf_mini', os.W_OK),\n"
        "}\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 80), timeout=2); view['net'] = True\n"
        "except OSError:\n"
        "    view['net'] = False\n"
        "cmdlines = [open(f'/proc/{p}/cmdline', 'rb').read().decode(errors='replace')\n"
        "            for p in view['pids'] if os.path.exists(f'/proc/{p}/cmdline')]\n"
        "view['cmdlines'] = cmdlines"
    )
    with Kernel("notebook", staged.notebook, Limits()) as kernel:
        kernel.request({"op": "run", "cells": [(0, probe)], "notebook": b"{}", "name": "x.ipynb"})
        view = kernel.request({"op": "describe", "expr": "view"})["value"]
    assert view["uid"] != 0 and view["euid"] != 0
    assert set(view["env"]) <= set(KERNEL_ENV) | {"PWD"}
    assert len(view["pids"]) <= 3  # bwrap's init, the kernel (and what it starts)
    assert list(view["repo"]) == [False] * 4 and not view["tmp"] and not view["checks"]
    assert not view["site_writable"] and not view["net"]
    assert all("--seed" not in c and "12345" not in c for c in view["cmdlines"])


def test_without_a_sandbox_the_grader_refuses_and_says_why(tmp_path, monkeypatch, capsys):
    from nqf_mini.course import sandbox

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    (tmp_path / "alice").mkdir()
    nbformat.write(_notebook(CORRECT[5]), tmp_path / "alice" / "05_x.ipynb")
    assert grade.main([str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert "bubblewrap" in err and "--unsafe" in err
    assert not (tmp_path / "grades.csv").exists()


def test_ctrl_c_keeps_what_was_graded_and_the_next_run_grades_the_rest(tmp_path):
    for student, cells in [("alice", CORRECT[5]), ("zed", ["import time\ntime.sleep(10**6)"])]:
        (tmp_path / student).mkdir()
        nbformat.write(_notebook(cells), tmp_path / student / "05_x.ipynb")
    cmd = [
        sys.executable,
        "-m",
        "nqf_mini.course.grade",
        str(tmp_path),
        "--jobs",
        "1",
        "--seed",
        "3",
    ]
    proc = subprocess.Popen(  # Ctrl-C as in a terminal, even if this run ignores it
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    book = tmp_path / "grades.csv"
    deadline = time.monotonic() + 300 * SCALE
    while time.monotonic() < deadline and not (book.exists() and "alice" in book.read_text()):
        time.sleep(0.5)
    time.sleep(3)  # zed's kernel is asleep now
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60 * SCALE)
    assert proc.returncode == 130, out
    assert "interrupted" in out
    rows = gradebook.GradesFile(book).read()
    assert {r["student"] for r in rows} == {"alice"}
    assert {r["verdict"] for r in rows} == {"pass"}
    nbformat.write(_notebook(CORRECT[5]), tmp_path / "zed" / "05_x.ipynb")
    log: list[str] = []
    again = grade.grade_class(tmp_path, jobs=1, seed=3, log=log.append)
    assert "1 graded before and unchanged, 1 to grade" in log[0]
    assert {r["verdict"] for r in again} == {"pass"}
    log.clear()
    grade.grade_class(tmp_path, jobs=1, seed=3, log=log.append, students=["zed"])
    assert "1 graded before and unchanged, 1 to grade" in log[0]


def test_points_are_set_for_every_check_and_every_chapter_names_its_answers():
    from nqf_mini.course.check import CHECKS

    assert set(POINTS) == set(CHECKS)
    keys = chapter_keys(ROOT / "chapters")
    assert {label for key in keys.values() for label in key.labels} == set(CHECKS)
    assert keys[2].expressions["ch2.gcn"] == "(f_gcn, A_gcn)"


def test_chapter_numbers_from_file_names():
    chapters = set(range(1, 11))
    assert grade.chapter_of("04_lotka_volterra.ipynb", chapters) == 4
    assert grade.chapter_of("04_lotka_volterra (1).ipynb", chapters) == 4
    assert grade.chapter_of("alice_ch7.ipynb", chapters) == 7
    assert grade.chapter_of("Chapter 02.ipynb", chapters) == 2
    assert grade.chapter_of("10_real_data.ipynb", chapters) == 10
    assert grade.chapter_of("ch12.ipynb", chapters) is None
    assert grade.chapter_of("notes.ipynb", chapters) is None
