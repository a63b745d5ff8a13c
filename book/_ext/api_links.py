"""Sphinx extension of the course: inline code naming a public function links to the API
reference.

In the chapters and pages, inline code such as ```nqf.crossing_times``` or
```nqf_mini.lotka_volterra(b, C, z0, t)``` names a public function of the package. The
first such mention of each name on a page becomes a link to its entry on the API
reference page (``book/api.md``, built by autodoc), so a reader finds the signature and
docstring where a function first appears, without any markup in the chapters. Only the
names of ``nqf_mini.__all__`` are linked; code cells are left alone.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform

#: ``nqf.NAME``, ``nqf_mini.NAME``, optionally followed by a call's arguments.
MENTION = re.compile(r"^(?:nqf|nqf_mini)\.(?P<name>[A-Za-z_]\w*)(?:\(.*\))?$", re.S)
API_PAGE = "book/api"


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
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
