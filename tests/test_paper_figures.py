"""The page "The paper's figures" stays true: every figure and page it links exists.

A ``{ref}`` target must be defined somewhere in the book (a ``(label)=`` target, a
``:label:`` or a ``:name:``), a ``{doc}`` target must be a file, and every figure of the
paper has a row. The only exception is the named list of figures still being added to
the chapters (``PENDING`` in ``book/_ext/paper_figures.py``): while one of them is
missing it is skipped (the book links the chapter, marked "in preparation"); once it
exists it must be in the chapter the list names.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "paper_figures.md"
REF = re.compile(r"\{(?:ref|prf:ref)\}`(?:[^`<]*<)?([\w.-]+)>?`")
DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`")
TARGET = re.compile(r"^\(([\w.-]+)\)=|^:(?:label|name):\s*([\w.-]+)", re.M)


def _pending() -> dict[str, str]:
    spec = importlib.util.spec_from_file_location(
        "paper_figures", ROOT / "book" / "_ext" / "paper_figures.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PENDING


def _labels() -> dict[str, str]:
    """Every label defined in the book: label -> the document that defines it."""
    found: dict[str, str] = {}
    sources = [(p, p.read_text(encoding="utf-8")) for p in (ROOT / "book").glob("*.md")]
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        sources.append(
            (path, "\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))
        )
    for path, text in sources:
        for match in TARGET.finditer(text):
            label = match.group(1) or match.group(2)
            found[label] = f"{path.parent.name}/{path.stem}"
    return found


def test_every_linked_figure_exists_or_is_pending():
    text = PAGE.read_text(encoding="utf-8")
    labels, pending = _labels(), _pending()
    linked = set(REF.findall(text))
    assert linked, "the page links no figure"
    missing = sorted(label for label in linked if label not in labels)
    unexpected = [label for label in missing if label not in pending]
    assert (
        not unexpected
    ), f"the figures page links labels that do not exist: {unexpected}"
    for label, chapter in pending.items():
        assert label in linked, f"{label} is pending but the page does not link it"
        if label in labels:  # it has landed: in the chapter the list names
            assert labels[label] == chapter, (label, labels[label], chapter)


def test_every_linked_page_exists():
    text = PAGE.read_text(encoding="utf-8")
    for target in DOC.findall(text):
        path = (PAGE.parent / target).resolve()
        assert (
            path.with_suffix(".ipynb").exists() or path.with_suffix(".md").exists()
        ), target


@pytest.mark.parametrize(
    "figure",
    ["1", "2", "3, left", "3, right", "4", "5", "6, left", "6, right", "7", "8"],
)
def test_every_figure_has_a_row_with_a_status(figure):
    rows = [
        line
        for line in PAGE.read_text(encoding="utf-8").splitlines()
        if line.startswith(f"| {figure} |")
    ]
    assert len(rows) == 1, figure
    status = rows[0].rstrip(" |").rsplit("|", 1)[1].strip()
    assert status.split()[0].rstrip(",:;") in {
        "reproduced",
        "partly",
        "our",
        "not",
    }, status


def test_the_pending_rule_fails_for_an_unknown_label(tmp_path):
    """The check above is not vacuous: a made-up label is reported."""
    fake = "{ref}`Chapter 8, Figure 9 <fig-ch8-does-not-exist>`"
    labels, pending = _labels(), _pending()
    missing = [label for label in REF.findall(fake) if label not in labels]
    assert missing == ["fig-ch8-does-not-exist"] and missing[0] not in pending
