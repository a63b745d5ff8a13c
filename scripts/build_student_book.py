"""Build the book without solutions (``make book-student``) into _build/student-html.

For a term in which the exercises are graded, the published book must not show the
solutions that the default book has in collapsed dropdowns. This script assembles a
second source tree in ``_build/student-src``: the configuration, the table of contents
and the pages of ``book/`` as they are, the chapters replaced by their solution-free MyST
(``make_student.student_book_notebook``: solutions removed, skeletons and "Your answer"
cells in; MyST, not the CommonMark hand-out, so that every number and cross-reference,
also those from the pages of ``book/``, resolves inside the student book),
and the instructor page (which carries the grading rubrics) replaced by a short note.
Jupyter Book then builds it as it builds the default book, with warnings as errors.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from scripts import make_student

ROOT = Path(__file__).resolve().parents[1]

INSTRUCTOR_NOTE = """# For instructors

This is the student edition of the book: the exercises have no solutions here, and the
instructor page (syllabus, grading with `make grade`, rubrics for the derivations) is in
the instructor edition of the book, which the course's repository builds with
`make book`.
"""


def assemble(src: Path) -> None:
    """Write the source tree of the student book into ``src``, replacing its content."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "book", src / "book")
    (src / "book" / "instructor.md").write_text(INSTRUCTOR_NOTE, encoding="utf-8")
    (src / "chapters").mkdir()
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        nb = make_student.student_book_notebook(nbformat.read(path, as_version=4))
        nbformat.write(nb, src / "chapters" / path.name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "_build" / "student-src")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "student-html")
    args = parser.parse_args()
    assemble(args.src)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    subprocess.run(
        [
            str(jupyter_book),
            "build",
            str(args.src),
            "--builder",
            "html",
            "--warningiserror",
            "--keep-going",
        ],
        check=True,
    )
    if args.out.exists():
        shutil.rmtree(args.out)
    shutil.move(str(args.src / "_build" / "html"), str(args.out))
    print(f"student book: {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
