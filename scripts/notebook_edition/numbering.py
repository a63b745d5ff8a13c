"""The book's numbering table: the numbers and titles the HTML book shows ("Theorem
1.1", "(2.2)", "Exercise 3.2", "1.4. Extracting ...", "[ZXPC26]"), which the notebook
edition must show too. Guessing them a second time would drift, so Sphinx's own are
used: the book's build writes the table from its environment at the end of every HTML
build (``book/_ext/numbering_table.py``, into ``_build/.doctrees/book-numbering.json``);
``make notebooks`` copies it to ``notebooks/book-numbering.json``, committed so that the
edition can be regenerated without a book build, and the book-build tests check it
against the fresh build, the way a lock file is checked.

This module holds what the table's writer and its readers share: its file format
(:func:`dumps`, :func:`load`) and how a MyST label or heading compares with what the
HTML shows (:func:`make_id`, :func:`plain_title`, :data:`HEADING`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

#: An ATX heading of a markdown cell: ``## Title``.
HEADING = re.compile(r"^ {0,3}(?P<hashes>#{1,6})[ \t]+(?P<title>.+?)[ \t#]*$", re.M)


def make_id(text: str) -> str:
    """Sphinx/docutils id of a label: lower case, runs of other characters become one
    hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def plain_title(text: str) -> str:
    """A title reduced to its letters and digits, so MyST source and HTML text compare
    equal."""
    text = re.sub(r"\\\(|\\\)|\$", "", text)
    text = re.sub(r"[*_`\\]", "", text)
    return re.sub(r"[^\w]+", " ", text).strip().lower()


def dumps(table: dict[str, Any]) -> str:
    """The table as committed: sorted keys, one item per line, a final newline."""
    return json.dumps(table, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} missing: run `make notebooks` (it builds the book, which writes the "
            f"numbering table)"
        )
    return json.loads(path.read_text(encoding="utf-8"))
