"""The numbering table the book's build writes from Sphinx's environment
(``book/_ext/numbering_table.py``) is what the built HTML pages show, page by page: the
same section, theorem, proof, exercise and equation numbers, the same titles, the same
citation labels and reference entries. The oracle (:mod:`.html_numbering`) reads them
from the HTML and pairs them with the chapters' MyST sources, so neither derivation can
drift from the book unnoticed.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from scripts import toc
from scripts.notebook_edition import edition, numbering

from . import html_numbering

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
TABLE = ROOT / "_build" / ".doctrees" / "book-numbering.json"
NEEDS = (TABLE, "book")
PAGES = toc.pages(ROOT)


@pytest.fixture(scope="module")
def built() -> dict:
    return numbering.load(TABLE)


@pytest.fixture(scope="module")
def shown() -> dict:
    chapters = {
        edition.docname(p, ROOT): nbformat.read(p, as_version=4)
        for p in edition.edition_paths(ROOT)
    }
    return html_numbering.extract(HTML, chapters, PAGES)


def test_the_table_covers_every_page_and_notebook(built):
    assert sorted(built["docs"]) == sorted(PAGES)
    for path in edition.edition_paths(ROOT):
        entry = built["docs"][edition.docname(path, ROOT)]
        assert {"blocks", "equations", "sections"} <= set(entry), path.name
        assert entry["sections"], f"{path.name}: no numbered section in the table"


@pytest.mark.parametrize("doc", PAGES)
def test_page_numbers_are_what_the_html_shows(doc, built, shown):
    table, page = built["docs"][doc], shown["docs"][doc]
    for key in sorted(set(table) | set(page)):
        assert table.get(key) == page.get(key), f"{doc}: {key!r} differs from the HTML"


def test_citations_are_what_the_html_shows(built, shown):
    assert built["citations"] == shown["citations"]
    assert built["citations"], "no citation in the chapters"
