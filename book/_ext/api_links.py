"""Sphinx extension of the course: the API reference page's docstrings, and links to it.

In the chapters and pages, inline code such as ```nqf.crossing_times``` or
```nqf_mini.lotka_volterra(b, C, z0, t)``` names a public function of the package. The
first such mention of each name on a page becomes a link to its entry on the API
reference page (``book/api.md``, built by autodoc), so a reader finds the signature and
docstring where a function first appears, without any markup in the chapters. Only the
names of ``nqf_mini.__all__`` are linked; code cells are left alone.

The package's docstrings write their maths in plain text, ``|W^T x|^2`` or ``X_:k``,
where reStructuredText reads ``|...|`` as a substitution and ``X_`` as a link:
:func:`literal_maths` escapes those two (outside inline code, roles and ``.. math::``
blocks), so the page shows what the docstring says.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform

#: ``nqf.NAME``, ``nqf_mini.NAME``, optionally followed by a call's arguments.
MENTION = re.compile(r"^(?:nqf|nqf_mini)\.(?P<name>[A-Za-z_]\w*)(?:\(.*\))?$", re.S)
API_PAGE = "book/api"
#: Inline code and roles (``...``, :math:`...`), kept as written.
_CODE = re.compile(r"(:\w+:)?(`+)[^`]*?\2")
_MATH_BLOCK = re.compile(r"^(?P<indent>\s*)\.\. math::")
#: ``_`` after a word and before a non-word: reST's reference syntax (``X_:k``).
_WORD_END = re.compile(r"(?<=\w)_(?=\W|$)")


def literal_maths(lines: list[str]) -> list[str]:
    """``lines`` of a docstring with every ``|``, and every ``_`` that ends a word, escaped
    outside inline code, roles and math blocks, so that reStructuredText shows them
    instead of reading a substitution or a link."""
    out = []
    math_indent: int | None = None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if math_indent is not None and (not line.strip() or indent > math_indent):
            out.append(line)
            continue
        math_indent = None
        block = _MATH_BLOCK.match(line)
        if block:
            math_indent = len(block.group("indent"))
            out.append(line)
            continue
        parts, last = [], 0
        for match in _CODE.finditer(line):
            parts += [_escape(line[last : match.start()]), match.group()]
            last = match.end()
        out.append("".join(parts) + _escape(line[last:]))
    return out


def _escape(text: str) -> str:
    return _WORD_END.sub(r"\\_", text.replace("|", "\\|"))


def _docstring(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = literal_maths(lines)


class LinkPublicNames(SphinxTransform):
    """The first inline mention of each public name on a page becomes a cross-reference
    to ``nqf_mini.NAME`` (resolved by Sphinx's Python domain to the autodoc entry)."""

    default_priority = 500

    def apply(self, **kwargs) -> None:
        if self.env.docname == API_PAGE:
            return
        import nqf_mini

        public = set(nqf_mini.__all__)
        seen: set[str] = set()
        for node in list(self.document.findall(nodes.literal)):
            if isinstance(node.parent, (nodes.reference, addnodes.pending_xref)):
                continue
            match = MENTION.match(node.astext())
            name = match and match.group("name")
            if not name or name not in public or name in seen:
                continue
            seen.add(name)
            xref = addnodes.pending_xref(
                "",
                refdomain="py",
                reftype="obj",
                reftarget=f"nqf_mini.{name}",
                refexplicit=True,
                refwarn=True,
                refdoc=self.env.docname,
            )
            node.replace_self(xref)
            xref += node


def setup(app):
    app.add_transform(LinkPublicNames)
    app.connect("autodoc-process-docstring", _docstring)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
