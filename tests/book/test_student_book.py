"""The book without solutions (``make book-student``, run by ``make test`` before this
test).

Every page of the table of contents is built; no solution, neither its text nor its
code, is in any page; the chapters have their skeletons and "Your answer" cells; the
instructor page with its rubrics is replaced by a note.
"""

import ast
import html
import re
from pathlib import Path

import nbformat
import pytest

from ..chapters.test_chapters import toc_files

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "student-html"
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

pytestmark = pytest.mark.skipif(
    not HTML.exists(), reason="student book not built: run `make book-student` first"
)


def _text(page: str, root: Path = HTML) -> str:
    """The page's text: tags removed, entities decoded, white space collapsed."""
    page_html = (root / f"{page}.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page_html)))


@pytest.mark.parametrize("page", toc_files())
def test_every_toc_page_was_built(page):
    assert (HTML / f"{page}.html").exists()


def _solution_lines(nb: nbformat.NotebookNode) -> set[str]:
    """Long lines of solution prose and the bodies of solution functions."""
    lines, state = set(), None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith(("```{solution}", "```{solution-start}")):
                    state = "block" if line.startswith("```{solution}") else "region"
                elif state == "block" and line.strip() == "```":
                    state = None
                elif state == "region" and line.startswith("```{solution-end}"):
                    state = None
                elif state and len(line.strip()) > 40 and "$" not in line:
                    lines.add(line.strip())
        elif "solution" in cell.metadata.get("tags", []):
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Return) and node.value is not None:
                    lines.add("return " + ast.unparse(node.value))
    return lines


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_solution_in_the_student_book(path):
    text = _text(f"chapters/{path.stem}")
    assert "Your answer." in text and "NotImplementedError" in text
    solutions = [
        re.sub(r"\s+", " ", line)
        for line in _solution_lines(nbformat.read(path, as_version=4))
    ]
    assert solutions
    leaked = [line for line in solutions if line in text]
    assert not leaked, f"{path.name}: solution text in the student book: {leaked[:2]}"
    default = ROOT / "_build" / "html"
    if default.exists():  # the same search finds them in the default book
        assert any(
            line in _text(f"chapters/{path.stem}", default) for line in solutions
        )


def test_the_instructor_page_is_a_note():
    text = _text("book/instructor")
    assert "student edition" in text and "Rubric" not in text and "make grade" in text
