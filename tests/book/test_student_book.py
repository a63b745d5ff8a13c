"""The book without solutions (``make book-student``, run by ``make test`` before this
test).

Every page of the table of contents is built; no solution, neither its text nor its
code, is in any page; the chapters have their skeletons and "Your answer" cells; the
instructor page with its rubrics is replaced by a note; every launch and download
button of a chapter opens its student edition, none the notebook edition with the
solutions.
"""

import ast
import html
import re
import subprocess
import sys
from urllib.parse import parse_qs, urljoin, urlsplit
from pathlib import Path

import nbformat
import pytest

from scripts.notebook_edition import exercises as grammar

from scripts import toc

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "student-html"
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

NEEDS = (HTML / "index.html", "book-student")


def _text(page: str, root: Path = HTML) -> str:
    """The page's text: tags removed, entities decoded, white space collapsed."""
    page_html = (root / f"{page}.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page_html)))


@pytest.mark.parametrize("page", toc.pages())
def test_every_toc_page_was_built(page):
    assert (HTML / f"{page}.html").exists()


def _solution_lines(nb: nbformat.NotebookNode) -> set[str]:
    """Long lines of solution prose and the bodies of solution functions."""
    prose, code = grammar.solution_text(nb)
    lines = {line.strip() for line in prose if len(line.strip()) > 40 and "$" not in line}
    for text in code:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Return) and node.value is not None:
                lines.add("return " + ast.unparse(node.value))
    return lines


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_solution_in_the_student_book(path):
    text = _text(f"chapters/{path.stem}")
    assert "Your answer." in text and "NotImplementedError" in text
    solutions = [
        re.sub(r"\s+", " ", line) for line in _solution_lines(nbformat.read(path, as_version=4))
    ]
    assert solutions
    leaked = [line for line in solutions if line in text]
    assert not leaked, f"{path.name}: solution text in the student book: {leaked[:2]}"
    default = ROOT / "_build" / "html"
    if default.exists():  # the same search finds them in the default book
        assert any(line in _text(f"chapters/{path.stem}", default) for line in solutions)


def test_the_instructor_page_is_a_note():
    text = _text("book/instructor")
    assert "student edition" in text and "Rubric" not in text and "make grade" in text


def _links(page: str) -> list[str]:
    text = (HTML / f"{page}.html").read_text(encoding="utf-8")
    return [html.unescape(h) for h in re.findall(r'href="([^"]+\.ipynb[^"]*)"', text)]


NOTEBOOK_PAGES = CHAPTERS + sorted((ROOT / "book").glob("*.ipynb"))


@pytest.fixture(scope="module")
def postbuild(tmp_path_factory) -> tuple[list[str], Path]:
    """``binder/postBuild``'s student-edition command, run once as Binder runs it (into a
    scratch folder): the notebooks it converts, and the folder it writes."""
    postbuild = (ROOT / "binder" / "postBuild").read_text()
    command = next(line for line in postbuild.splitlines() if "make_student" in line)
    words = command.split()
    assert words[:2] == ["python", "-m"] and words[-2] == "--out", command
    module, out = words[2], words[-1]
    sources = [str(p) for w in words[3:-2] for p in sorted(ROOT.glob(w))]
    folder = tmp_path_factory.mktemp("binder") / out
    subprocess.run(
        [sys.executable, "-m", module, *sources, "--out", str(folder)],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    return sources, folder


@pytest.mark.parametrize("path", NOTEBOOK_PAGES, ids=lambda p: p.stem)
def test_launch_and_download_buttons_open_the_student_edition(path, postbuild):
    """Follow each button of a chapter page: the download is a file of the built book,
    the student edition; Binder opens student/ of the repository's image (binder/
    postBuild writes it, run here into a folder); no button opens notebooks/ or
    chapters/; Colab, absent unless a student branch is configured."""
    page = f"{path.parent.name}/{path.stem}"
    links = _links(page)
    assert links, f"{path.name}: no launch or download button"
    assert not [
        u
        for u in links
        if "notebooks/" in u or "chapters/" in urlsplit(u).path or "book/" in urlsplit(u).path
    ], links
    downloads = [u for u in links if not urlsplit(u).scheme]
    assert downloads, links
    for url in downloads:
        target = HTML / urlsplit(urljoin(f"{page}.html", url)).path
        nb = nbformat.read(target, as_version=4)
        assert nb.metadata.get("nqf_student_edition") is True
        assert not [c for c in nb.cells if "solution" in c.metadata.get("tags", [])]
    binder = [u for u in links if "mybinder" in u]
    assert binder, links
    (tree,) = parse_qs(urlsplit(binder[0]).query)["urlpath"]
    sources, folder = postbuild
    assert tree.endswith(f"{folder.name}/{path.name}")
    assert str(path) in sources, f"binder/postBuild does not convert {path.name}"
    assert (folder / path.name).is_file()
    assert not [u for u in links if "colab" in u]  # no student branch configured
