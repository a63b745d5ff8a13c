"""Sphinx extension of the course: links of the figures page to figures being added.

The page ``book/paper_figures.md`` links every figure of the paper to the place where
the course reproduces it, by the figure's label. A figure still being added to a chapter
is listed in :data:`PENDING`; until the chapter defines its label, a reference to it
resolves to the chapter itself, followed by "(in preparation)". Once the label exists,
the reference goes to the figure and this fallback is no longer used. Only the labels in
:data:`PENDING` get the fallback: any other missing label is left to Sphinx, which warns
(so ``make book``, run with -W, fails). ``tests/test_paper_figures.py`` checks the same
rule without building the book.
"""

from __future__ import annotations

from docutils import nodes

#: figure label -> the chapter document that will define it
PENDING: dict[str, str] = {}


def _fallback(app, env, node, contnode):
    """``missing-reference`` handler: a pending figure label links to its chapter."""
    if node.get("refdomain") != "std" or node.get("reftype") != "ref":
        return None
    docname = PENDING.get(node.get("reftarget"))
    if docname is None or docname not in env.all_docs:
        return None
    uri = app.builder.get_relative_uri(node["refdoc"], docname)
    link = nodes.reference("", "", internal=True, refuri=uri)
    link += contnode
    out = nodes.inline(classes=["nqf-pending-figure"])
    out += link
    out += nodes.Text(" (in preparation)")
    return out


def setup(app):
    app.connect("missing-reference", _fallback)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
