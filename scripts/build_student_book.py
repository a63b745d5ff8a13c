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

Its launch buttons and download buttons open the student edition (``make student``),
never the notebook edition in ``notebooks/``, which holds the solutions (collapsed):

* the download button serves ``student/<chapter>.ipynb``, copied into the built book;
* the Binder button opens ``student/<chapter>.ipynb`` in the repository's Binder image,
  whose ``binder/postBuild`` writes the student edition there;
* the Colab button opens ``student/<chapter>.ipynb`` on GitHub, which exists only where
  a teacher has published the student edition: on the branch named by
  ``nqf_student_branch`` in ``_config.yml`` (``sphinx: config:``; the instructor page
  says how). Without it the student book has no Colab button (students upload the
  downloaded notebook to Colab, as their README says).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

from scripts import make_student

ROOT = Path(__file__).resolve().parents[1]

#: Where the student edition goes, in the source tree and in the built book.
EDITION = "student"

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
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    extensions = config["sphinx"]["local_extensions"]
    for name, path in extensions.items():  # the extensions and the tooling stay here
        extensions[name] = str((ROOT / path).resolve())
    settings = config.setdefault("sphinx", {}).setdefault("config", {})
    branch = str(settings.get("nqf_student_branch") or "")
    settings["nqf_edition_dir"] = EDITION
    settings["nqf_launch_branch"] = branch
    settings["nqf_drop_launchers"] = "" if branch else "colab.research.google.com"
    (src / "_config.yml").write_text(
        yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    shutil.copy(ROOT / "_toc.yml", src / "_toc.yml")
    notebooks = sorted((ROOT / "chapters").glob("*.ipynb"))
    notebooks += sorted((ROOT / "book").glob("*.ipynb"))  # companion notebooks
    make_student.build(notebooks, src / EDITION)
    make_student.write_readme(src / EDITION)
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
