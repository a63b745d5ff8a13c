"""The API reference in the built book: an entry for every public name, and the chapters'
inline mentions (``nqf.lotka_volterra``) linked to it by book/_ext/api_links.py."""

from __future__ import annotations

import re
from pathlib import Path

import nqf_mini

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
NEEDS = (HTML / "index.html", "book")


def test_every_public_name_has_an_entry():
    page = (HTML / "book" / "api.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'id="nqf_mini\.(\w+)"', page))
    assert ids >= set(nqf_mini.__all__), sorted(set(nqf_mini.__all__) - ids)


def test_a_chapter_links_its_first_mention_of_each_function():
    page = (HTML / "chapters" / "04_lotka_volterra.html").read_text(encoding="utf-8")
    targets = re.findall(r'href="\.\./book/api\.html#nqf_mini\.(\w+)"', page)
    assert "lotka_volterra" in targets and "nnls_end_state" in targets, targets
    assert len(targets) == len(set(targets)), "only the first mention of a name is linked"
