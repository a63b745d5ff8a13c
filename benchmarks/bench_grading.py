"""What grading a class costs (``make grade``): CPU seconds per notebook, and the time a
class of 40 students x 10 chapters takes on 2 cores, as a ratio to the 60-minute goal.

A class of ``--students`` honest, complete submissions is made from the chapters: each
student's notebook is the chapter's student edition with every skeleton replaced by the
instructor's solution (what a good student hands in). It is graded with the sandbox, 2
notebooks at a time. CPU time, not wall-clock time, is what a busy machine does not
change, so it is what this script measures: the kernels' CPU seconds (read from /proc
while they run) plus the grader's own. The projection assumes the same cost per notebook
on a quiet 2-core machine (two notebooks at a time keep both cores busy) and counts a
chapter with no graded exercise at the mean cost of the others. The wall-clock time of the
whole class is printed too: with ``--students 40`` on a quiet machine it is the class's
real grading time, sandbox start-up and all (book/instructor.md quotes it).

    python benchmarks/bench_grading.py [--students 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tooling, a package
from scripts import make_student  # noqa: E402

from nqf_mini.course import grade, grade_notebook  # noqa: E402

GOAL_MINUTES = 60.0
CLASS, CHAPTERS, CORES = 40, 10, 2


def honest_submission(chapter: Path, dest: Path) -> Path:
    """The student edition of ``chapter`` with the instructor's solutions in its
    skeletons."""
    (written,) = make_student.build([chapter], dest)
    solutions = [
        c.source
        for c in nbformat.read(chapter, as_version=4).cells
        if c.cell_type == "code" and "solution" in c.metadata.get("tags", [])
    ]
    nb = nbformat.read(written, as_version=4)
    skeletons = [c for c in nb.cells if make_student.SKELETON_TAG in c.metadata.get("tags", [])]
    assert len(skeletons) == len(solutions), chapter.name
    for cell, source in zip(skeletons, solutions):
        cell.source = source
    nbformat.write(nb, written)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=2)
    args = parser.parse_args()
    chapters = sorted((ROOT / "chapters").glob("*.ipynb"))
    costs: dict[int, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="nqf-bench-") as tmp:
        root = Path(tmp)
        for k in range(args.students):
            for path in chapters:
                honest_submission(path, root / f"student{k:02d}")
        original = grade_notebook.grade_notebook

        def timed(data, name, key, *rest, **kw):
            result = original(data, name, key, *rest, **kw)
            costs.setdefault(key.number, []).append(result.cpu)
            return result

        grade.grade_notebook = timed
        start_cpu, start = time.process_time(), time.monotonic()
        rows = grade.grade_class(root, jobs=CORES, seed=1, log=lambda *a: None)
        grader_cpu, wall = time.process_time() - start_cpu, time.monotonic() - start
        grade.grade_notebook = original
    missed = [r for r in rows if r["verdict"] != "pass"]
    notebooks = sum(len(v) for v in costs.values())
    per_chapter = {c: statistics.mean(v) + grader_cpu / notebooks for c, v in sorted(costs.items())}
    print(
        f"{notebooks} notebooks graded in {wall:.0f} s wall ({CORES} at a time); "
        f"{len(missed)} answers not passed"
    )
    for chapter, cpu in per_chapter.items():
        print(f"  chapter {chapter}: {cpu:5.1f} CPU s per notebook")
    mean = statistics.mean(per_chapter.values())
    student = sum(per_chapter.values()) + mean * (CHAPTERS - len(per_chapter))
    minutes = CLASS * student / CORES / 60
    print(
        f"one student, {CHAPTERS} chapters: {student:.0f} CPU s; a class of {CLASS} on "
        f"{CORES} quiet cores: {minutes:.0f} min, ratio to the {GOAL_MINUTES:.0f}-min "
        f"goal {minutes / GOAL_MINUTES:.2f}"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
