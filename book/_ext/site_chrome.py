"""Sphinx extension of the course: the parts of every page that the themes get wrong.

Each fix names what it repairs; ``tests/browser/test_desktop.py`` (axe-core, every
page, light and dark) and ``tests/book/test_site.py`` (the built files) check the result.

* **A description per page** (``<meta name="description">``, for search results and link
  previews): the first paragraph of the page's text, cut at a word before
  :data:`DESCRIPTION_CHARS` characters (:func:`description`).
* **One copy of each inline script.** sphinx-thebe and sphinx-togglebutton add their inline
  configuration scripts from events that run after the HTML builder copied the script list,
  so each appeared twice, and the second ``const THEBE_JS_URL`` was a ``SyntaxError`` in
  the console of every page (:func:`unique_assets`).
* **A valid colour mode.** Jupyter Book leaves the theme's ``default_mode`` (an
  ``html_context`` value) empty, which the
  theme reports as "invalid theme mode" on every page; it is ``auto`` here.
* **Names for the sidebar's expand arrows.** pydata-sphinx-theme writes each as a
  ``<summary>`` holding only an icon (axe ``summary-name``); each gets
  ``aria-label="Sections of <title>"`` (:func:`name_expanders`).
* **Citation roles on the references page.** docutils marks each citation
  ``role="doc-biblioentry"`` (deprecated, and not allowed on a ``<div>``) inside a
  ``role="list"`` that then has no list items (axe ``aria-allowed-role``,
  ``aria-deprecated-role``, ``aria-required-children``); each citation is a ``listitem``
  (:func:`citation_roles`).
* **The "Show code cell source" toggle** of myst-nb is named by its visible text, not by an
  ``aria-label`` that says something else (WCAG 2.5.3, Lighthouse
  ``label-content-name-mismatch``): :func:`visit_hidden_cell` replaces myst-nb's visitor.
* **One icon mechanism.** pydata-sphinx-theme loads Font Awesome twice: as web fonts, from
  its stylesheet, and as ``fontawesome.js`` (1.45 MiB, SVG icons drawn by script). The web
  fonts show every icon the book uses; the script and its ``<script>`` tag are removed
  from the build (:func:`rewrite_pages`).
* **The search field** is named by what it shows ("Search Ctrl+K"): the theme's
  ``aria-label="Search"`` left its visible shortcut out of its name (WCAG 2.5.3, axe
  ``label-content-name-mismatch``, serious); the label is removed (:func:`rewrite_pages`).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

DESCRIPTION_CHARS = 155
SUMMARY = re.compile(
    r'(<a class="[^"]*\breference internal\b[^"]*" href="[^"]*">'
    r"(?P<title>(?:(?!</a>).)*)</a>\s*<details[^>]*>\s*)<summary>",
    re.S,
)
CITATION = re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"')
SEARCH_LABEL = re.compile(
    r'(<button class="[^"]*search-button-field[^"]*"[^>]*?) aria-label="Search"'
)
FONTAWESOME_JS = re.compile(
    r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js'
    r'[^"]*"></script>'
)
TAG = re.compile(r"<[^>]+>")


def description(doctree: nodes.document | None) -> str:
    """The first paragraph of the page's own text, at most :data:`DESCRIPTION_CHARS` long."""
    if doctree is None:
        return ""
    for paragraph in doctree.findall(nodes.paragraph):
        if any(
            isinstance(a, (nodes.admonition, nodes.Admonition, nodes.table))
            for a in _ancestors(paragraph)
        ):
            continue
        if any(n.tagname == "math" for n in paragraph.findall()):
            continue  # TeX source is no description
        text = " ".join(paragraph.astext().split())
        if len(text.split()) < 6:  # a byline or a one-word lead is no description
            continue
        if len(text) <= DESCRIPTION_CHARS:
            return text
        cut = text[: DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:")
        return cut + "…"
    return ""


def _ancestors(node: nodes.Node):
    while node.parent is not None:
        node = node.parent
        yield node


def name_expanders(toctree_html: str) -> str:
    """Give each sidebar ``<summary>`` the name "Sections of <the entry's title>"."""

    def named(match: re.Match) -> str:
        title = html.unescape(TAG.sub("", match.group("title"))).strip()
        return f'{match.group(1)}<summary aria-label="Sections of {html.escape(title)}">'

    return SUMMARY.sub(named, toctree_html)


def citation_roles(body: str) -> str:
    """Citations as ``listitem`` of docutils' ``role="list"`` citation list."""
    return CITATION.sub(r'\1 role="listitem"', body)


def unique_assets(assets: list) -> list:
    """The script or stylesheet list without repeats, in order. An inline script is added
    with the file name ``None`` by one path of Sphinx and ``""`` by another, so assets are
    compared by file name (either empty counts as none), priority and attributes (the
    inline body is one)."""
    seen: list = []
    for asset in assets:
        key = (
            getattr(asset, "filename", str(asset)) or "",
            getattr(asset, "priority", 0),
            sorted((k, str(v)) for k, v in getattr(asset, "attributes", {}).items()),
        )
        if key not in seen:
            seen.append(key)
            yield asset


def page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: nodes.document | None
) -> None:
    for name in ("script_files", "css_files"):
        if name in context:
            context[name] = list(unique_assets(context[name]))
    text = description(doctree)
    if text:
        context["metatags"] = (
            context.get("metatags", "")
            + f'\n<meta name="description" content="{html.escape(text)}" />'
        )
    if "body" in context:
        context["body"] = citation_roles(context["body"])
    toctree = context.get("generate_toctree_html")
    if callable(toctree):
        context["generate_toctree_html"] = lambda *a, **k: name_expanders(str(toctree(*a, **k)))


def set_defaults(app: Sphinx, config) -> None:
    context = dict(config.html_context or {})
    if not context.get("default_mode"):
        context["default_mode"] = "auto"  # pydata-sphinx-theme reads it from html_context
    config.html_context = context


def rewrite_pages(app: Sphinx, exception: Exception | None) -> None:
    """Drop ``fontawesome.js`` and name the search fields by their visible text."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = SEARCH_LABEL.sub(r"\1", FONTAWESOME_JS.sub("", text))
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")
    (outdir / "_static" / "scripts" / "fontawesome.js").unlink(missing_ok=True)
    for extra in (outdir / "_static" / "scripts").glob("fontawesome.js*"):
        extra.unlink()


def visit_hidden_cell(self, node) -> None:
    """myst-nb's toggle of a hidden code cell, named by its visible text."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n<summary>\n')
    self.body.append(
        f'<p class="collapsed admonition-title">{html.escape(node["prompt_show"])}</p>\n'
    )
    self.body.append(
        f'<p class="expanded admonition-title">{html.escape(node["prompt_hide"])}</p>\n'
    )
    self.body.append("</summary>\n")


def setup(app: Sphinx) -> dict:
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_HideCellInput))
    # The phone's sidebar toggles (a theme bug) and the scroll cue of wide formulas.
    app.add_js_file("site.js", loading_method="defer")
    app.connect("config-inited", set_defaults)
    app.connect("html-page-context", page_context, priority=900)
    app.connect("build-finished", rewrite_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
