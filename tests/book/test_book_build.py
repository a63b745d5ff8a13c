"""Checks of the built HTML book (run by `make test` after the -W build).

The browser test (tests/browser) renders pages in Chromium; this one only reads the files, so it
runs anywhere: every page of the table of contents was built, and no page pulls a script or a
stylesheet from a remote host (the book must work offline).
"""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from scripts import toc
from tests.html_void import VOID

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
REMOTE_ASSET = re.compile(r"<(?:script|link)\b[^>]*\b(?:src|href)=\"(?:https?:)?//[^\"]+\"[^>]*>")

NEEDS = (HTML / "index.html", "book")


@pytest.mark.parametrize("page", toc.pages())
def test_every_toc_page_was_built(page):
    assert (HTML / f"{page}.html").exists(), f"{page}.html missing from the build"


@pytest.mark.parametrize("page", toc.pages())
def test_no_remote_scripts_or_stylesheets(page):
    html = (HTML / f"{page}.html").read_text(encoding="utf-8")
    remote = [m for m in REMOTE_ASSET.findall(html) if 'rel="canonical"' not in m]
    assert not remote, f"{page}: loads remote assets {remote[:3]}"


# --- what a reader sees: no TeX or MyST left in the prose ----------------------------------


class _Prose(HTMLParser):
    """The text of a page outside math, code, scripts and the page chrome."""

    SKIP_TAGS = {
        "script",
        "style",
        "pre",
        "code",
        "textarea",
        "kbd",
        "samp",
        "svg",
        "head",
        "nav",
        "title",
    }
    SKIP_CLASSES = {
        "math",
        "highlight",
        "cell_output",
        "output",
        "bd-sidebar-primary",
        "bd-header-article",
        "prev-next-area",
        "bd-footer",
        "toggle-details",
        "jupyter-widgets",
        "widget-subarea",
        "bd-sidebar-secondary",
    }

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # open elements: (tag, skipped or inside one)
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        skip = (
            tag in self.SKIP_TAGS
            or bool(classes & self.SKIP_CLASSES)
            or bool(self.stack and self.stack[-1][1])
        )
        if tag not in VOID:
            self.stack.append((tag, skip))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):  # close up to the matching element
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if not (self.stack and self.stack[-1][1]):
            self.text.append(data)


# A dollar sign, a TeX command such as \frac or \operatorname, or MyST role/directive syntax.
LEFTOVER = re.compile(r"\$|\\[A-Za-z]{2,}|\{(?:prf:ref|eq|numref|ref|doc|cite|math)\}`|```\{")


@pytest.mark.parametrize("page", [p for p in toc.pages() if p != "book/status"])
def test_no_tex_or_myst_left_in_the_prose(page):
    """The page's text outside math and code holds no `$`, TeX command or MyST role."""
    html = (HTML / f"{page}.html").read_text(encoding="utf-8")
    parser = _Prose()
    parser.feed(html)
    text = " ".join(parser.text)
    found = sorted({m.group() for m in LEFTOVER.finditer(text)})
    context = [text[max(0, m.start() - 60) : m.end() + 40] for m in LEFTOVER.finditer(text)][:3]
    assert not found, f"{page}: raw {found} in the rendered text, e.g. {context}"
