"""The notebook edition shows the numbers the HTML book shows (run by `make test` after
the build).

* the committed numbering table ``notebooks/book-numbering.json`` is the one the fresh
  build wrote (so the edition was made from the book as it is now; that table is what the
  HTML shows: tests/book/test_numbering_table.py);
* every cross-reference of every chapter, as the edition writes it ("Theorem 1.1",
  "(2.2)", "Exercise 3.2", "Open questions"), is the text of a link to the same target
  in the HTML page;
* every citation label in the edition is one the HTML page shows;
* the Colab and Binder buttons of each chapter page open its notebook in ``notebooks/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from scripts.notebook_edition import edition, myst, numbering, transforms

from .html_numbering import article, markdown_sources

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
BUILT_TABLE = ROOT / "_build" / ".doctrees" / "book-numbering.json"


NEEDS = (HTML / "index.html", "book")
CHAPTERS = edition.edition_paths(ROOT)  # the chapters and the companion pages
MD_LINK = re.compile(r"^\[(?P<text>.*)\]\((?P<url>[^)]+)\)$")


def test_numbering_table_is_the_books():
    committed = edition.load_table(ROOT)
    fresh = numbering.load(BUILT_TABLE)
    assert numbering.dumps(committed) == numbering.dumps(fresh), (
        "notebooks/book-numbering.json differs from the built book: run `make notebooks`"
    )


def _links(path: Path) -> dict[str, set[str]]:
    """Text of every internal link of a page, by the page-relative target it points to."""
    root = article(path.read_text(encoding="utf-8"))
    found: dict[str, set[str]] = {}
    for a in root.find_all("a", class_="reference"):
        found.setdefault(a.get("href", ""), set()).add(" ".join(a.get_text().split()))
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_references_read_as_in_the_book(path):
    doc = edition.docname(path)
    table = edition.load_table(ROOT)
    links = _links(HTML / f"{doc}.html")
    nb = nbformat.read(path, as_version=4)
    checked = 0
    for source in markdown_sources(nb):
        for role, content in myst.markdown_roles(source):
            if role.startswith("cite") or role == "math":
                continue
            ctx = transforms.Context(doc=doc, table=table, site="SITE/")
            shown = transforms.xref(role, content, ctx)
            match = MD_LINK.match(shown)
            text = match.group("text") if match else shown
            _, target = myst.split_explicit(content)
            anchor = ("equation-" if role == "eq" else "") + numbering.make_id(target)
            hrefs = [
                h
                for h in links
                if h.endswith(f"#{anchor}")
                or (role == "doc" and h.endswith(f"{Path(target).name}.html"))
            ]
            texts = set().union(*(links[h] for h in hrefs)) if hrefs else set()
            assert text in texts, f"{doc}: {{{role}}}`{content}` is {text!r}; the book: {texts}"
            checked += 1
    assert checked or "{" not in "".join(markdown_sources(nb))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_citation_labels_are_the_books(path):
    doc = edition.docname(path)
    page = article((HTML / f"{doc}.html").read_text(encoding="utf-8"))
    labels = {
        a.get_text().strip()
        for span in page.find_all("span", class_="bibtex-citation")
        for a in span.find_all("a")
    }
    cells = nbformat.read(ROOT / edition.EDITION / path.name, as_version=4).cells
    listed = [c for c in cells if "references" in c.metadata.get("tags", [])]
    assert listed, f"{path.name}: no reference list"
    used = set(re.findall(r"^\* \[([^\]]+)\] ", listed[0].source, re.M))
    text = "\n".join(c.source for c in cells if c not in listed)
    for label in used:
        assert re.search(rf"[\[ ]{re.escape(label)}[,\]\\]", text), (path.name, label)
    assert used, f"{path.name}: no citation in the edition"
    assert not used - labels, f"{path.name}: labels the book does not show: {used - labels}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_launch_buttons_open_the_notebook_edition(path):
    doc = edition.docname(path)
    html = (HTML / f"{doc}.html").read_text(encoding="utf-8")
    buttons = edition.config(ROOT)["launch_buttons"]
    hosts = "|".join(re.escape(buttons[k].rstrip("/")) for k in ("colab_url", "binderhub_url"))
    launch = re.findall(rf'href="((?:{hosts})/[^"]+)"', html)
    assert len(launch) == 2, f"{doc}: launch links {launch}"
    for url in launch:
        assert url.endswith(f"{edition.EDITION}/{path.name}"), url
    assert (ROOT / edition.EDITION / path.name).is_file()
