"""Checks of the built HTML book (run by `make test` after the -W build).

The browser test (tests/browser) renders pages in Chromium; this one only reads the files, so it
runs anywhere: every page of the table of contents was built, and no page pulls a script or a
stylesheet from a remote host (the book must work offline).
"""

import re
from pathlib import Path

import pytest

from .test_chapters import toc_files

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
REMOTE_ASSET = re.compile(r"<(?:script|link)\b[^>]*\b(?:src|href)=\"(?:https?:)?//[^\"]+\"[^>]*>")

pytestmark = pytest.mark.skipif(not HTML.exists(), reason="book not built: run `make book` first")


@pytest.mark.parametrize("page", toc_files())
def test_every_toc_page_was_built(page):
    assert (HTML / f"{page}.html").exists(), f"{page}.html missing from the build"


@pytest.mark.parametrize("page", toc_files())
def test_no_remote_scripts_or_stylesheets(page):
    html = (HTML / f"{page}.html").read_text(encoding="utf-8")
    remote = [m for m in REMOTE_ASSET.findall(html) if 'rel="canonical"' not in m]
    assert not remote, f"{page}: loads remote assets {remote[:3]}"
