"""The API reference page (book/api.md) lists every public name of the package exactly
once, in the groups of ``nqf_mini/__init__.py`` (the chapter that introduces it)."""

from __future__ import annotations

import re
from pathlib import Path

import nqf_mini

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
ENTRY = re.compile(r"^\.\. auto(?:function|class|exception):: nqf_mini\.(\w+)$", re.M)


def _groups_of_init() -> list[list[str]]:
    """The names of ``__all__``, split at its comment lines (one group per chapter)."""
    source = (ROOT / "nqf_mini" / "__init__.py").read_text(encoding="utf-8")
    block = source[source.index("__all__ = [") :].split("\n]", 1)[0]
    groups: list[list[str]] = []
    for line in block.splitlines()[1:]:
        if line.strip().startswith("#"):
            groups.append([])
        elif groups:
            groups[-1] += re.findall(r'"(\w+)"', line)
    return groups


def test_every_public_name_has_one_entry():
    listed = ENTRY.findall(PAGE)
    assert sorted(listed) == sorted(nqf_mini.__all__), (
        f"missing: {sorted(set(nqf_mini.__all__) - set(listed))}; "
        f"not public: {sorted(set(listed) - set(nqf_mini.__all__))}"
    )


def test_entries_follow_the_chapters_of_init():
    sections = re.split(r"^## ", PAGE, flags=re.M)[1:]
    assert [ENTRY.findall(s) for s in sections] == _groups_of_init()


def test_docstring_maths_stays_literal_but_code_and_math_blocks_do_not_change():
    from book._ext.api_links import literal_maths

    lines = [
        "f = |W^T x|^2, ``|a|`` and :math:`|b|^2`",
        "",
        ".. math::",
        "",
        "   |x|^2",
        "z |y| X_:k z_k",
    ]
    assert literal_maths(lines) == [
        "f = \\|W^T x\\|^2, ``|a|`` and :math:`|b|^2`",
        "",
        ".. math::",
        "",
        "   |x|^2",
        "z \\|y\\| X\\_:k z_k",
    ]
