"""The pages of the book in reading order: the documents of ``_toc.yml``, read by
sphinx-external-toc, the parser Jupyter Book builds the book with (so the order and the
set of pages are the build's: the root first, each page before its sections)."""

from __future__ import annotations

from pathlib import Path

from sphinx_external_toc.parsing import parse_toc_yaml

ROOT = Path(__file__).resolve().parents[1]


def pages(root: Path = ROOT) -> list[str]:
    """Every docname of the table of contents (``book/intro``, ``chapters/01_...``)."""
    return list(parse_toc_yaml(root / "_toc.yml"))
