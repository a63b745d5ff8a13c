"""Sphinx extension of the course: each chapter's explorer, as this package writes it, with
its frames out of the page.

A chapter stores its explorer's HTML output (:mod:`nqf_mini.course.explorer_page`): the
default frame, the controls and, in a JSON element, every other frame. Here, once the
page's doctree is resolved, each such output is written again by
:func:`nqf_mini.course.explorer_page.rerender` (so the page has the markup of this
version of the package even where the chapter was executed with an older one), and its
frames go to ``_static/explorers/<id>.js``, a script the page loads when the reader
first touches a control. The page itself keeps only the default frame: Chapter 2's HTML
shrinks from 1.09 MB, of which 0.76 MB were frames that no reader sees before moving a
control, and no frame is read before the page is shown. The script file works from
``file://`` too (a ``<script src>``, not a fetch), so does the book opened from disk.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from nqf_mini.course.explorer_page import rerender

MARKER = 'class="nqf-explorer"'
FOLDER = "_static/explorers"


def move_frames(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    page = app.builder.get_target_uri(docname)
    for node in list(doctree.findall(nodes.raw)):
        if "html" not in node.get("format", "").split() or MARKER not in node.astext():
            continue
        stored = node.astext()
        ident = stored.split('id="', 1)[1].split('"', 1)[0]
        url = posixpath.relpath(f"{FOLDER}/{ident}.js", posixpath.dirname(page) or ".")
        html, script = rerender(stored, url)
        if script is not None:
            target = Path(app.outdir) / FOLDER / f"{ident}.js"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(script, encoding="utf-8")
        node.replace_self(nodes.raw("", html, format="html", classes=node.get("classes", [])))


def setup(app: Sphinx) -> dict:
    app.connect("doctree-resolved", move_frames)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
