"""Every page of the book within its weight budget, and its explorer within reach of the keyboard.

Each page of ``_toc.yml`` is loaded cold (a fresh browser context) from the local server and
measured by :func:`page_metrics.measure`. The test enforces what does not depend on the
machine:

* :data:`BYTES_BUDGET`: the bytes a page needs up to its ``load`` event, uncompressed, as
  a plain server sends them (figures below the fold load later, as a reader scrolls). Before
  the budget a page needed 3.7-5.3 MiB (fontawesome.js, eager RGBA figures); with it 1.1-2.3
  MiB for pages without an explorer and 2.3-3.3 MiB for chapters, of which MathJax is 1.1
  MiB, the theme's CSS 0.55 MiB and the chapter's HTML 0.1-1.1 MiB (mostly the explorer's
  inlined frames);
* :data:`TABS_BUDGET`: Tab presses from the top of a chapter to its explorer's first control
  (287 to over 400 when every formula was a tab stop).

Load times are recorded beside them (``_build/screenshots/page-metrics.json``) but not
asserted here: on a machine shared by other jobs they vary by a factor of five.
``tests/browser/test_explorers.py`` asserts the 2 s load budget of the chapter pages.
"""

from __future__ import annotations

import json

import pytest

from scripts import toc

from .conftest import SCREENSHOTS
from .page_metrics import measure

PAGES = toc.pages()
#: Bytes loaded by the load event, per page.
BYTES_BUDGET = int(3.5 * 2**20)
#: Tab presses from the top of a chapter page to its explorer's first control.
TABS_BUDGET = 150
RECORD = SCREENSHOTS / "page-metrics.json"


@pytest.fixture(scope="module")
def record():
    found: dict = {}
    yield found
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("page_path", PAGES)
def test_page_weight_and_tabs(page_path, playwright_chromium, book_server, record):
    metrics = measure(playwright_chromium, f"{book_server.url}/{page_path}.html")
    record[page_path] = metrics
    assert metrics["bytes"] <= BYTES_BUDGET, (
        f"{page_path}: {metrics['bytes'] / 2**20:.2f} MiB loaded by the load event, budget "
        f"{BYTES_BUDGET / 2**20:.2f} MiB ({metrics['requests']} requests)"
    )
    if metrics["tabs_to_explorer"] is not None:
        assert metrics["tabs_to_explorer"] <= TABS_BUDGET, (
            f"{page_path}: {metrics['tabs_to_explorer']} Tab presses to the explorer"
        )
