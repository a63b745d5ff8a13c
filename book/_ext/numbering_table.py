"""Sphinx extension of the course: the book's numbering as one JSON table, written at the
end of every HTML build from Sphinx's own environment.

The notebook edition (``make notebooks``, ``scripts/notebook_edition``) must show the
numbers and titles the HTML book shows ("Theorem 1.1", "(2.2)", "Exercise 3.2", "1.4.
Extracting ...", "[ZXPC26]"). Sphinx assigns them while it builds: section numbers
(``env.toc_secnumbers``, continued across parts by sphinx-multitoc-numbering), the numbers
of theorem-like blocks (sphinx-proof), exercises (sphinx-exercise) and labelled equations
(``env.toc_fignumbers``), and the citation labels (sphinxcontrib-bibtex's ``cite`` domain).
This extension reads them from the resolved doctree of each page (``doctree-resolved``:
what the HTML writer renders, at no extra cost), the way the HTML writer does, and on
``build-finished`` writes the table ``book-numbering.json`` into the build's doctree
folder (``_build/.doctrees``, beside the pickled environment; it is not part of the
published site). ``make notebooks`` copies it
to ``notebooks/book-numbering.json``, the committed table the edition is made from.

The table (:func:`numbering_table`)::

    {"docs": {DOCNAME: {"number": "1", "title": "The neural quadratic form",
                        # pages with a notebook edition only:
                        "blocks": [{"kind", "label", "caption", "number", "title"}, ...],
                        "equations": {LABEL: "1.2", ...},
                        "sections": [{"level", "number", "title"}, ...]}},
     "citations": {KEY: {"label": "ZXPC26", "entry": "Liu Ziyin, ..."}}}

``blocks``, ``sections`` and the labelled equations are in document order (the edition
consumes them in that order); a section's ``title`` is its MyST source, the other titles
are the text the HTML page shows (math as ``\\(...\\)``). ``tests/book/test_numbering_table.py``
compares the table with what the built HTML pages show.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number
from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node
from sphinx_proof.nodes import NODE_TYPES, unenumerable_node

from book._ext.notebook_edition_links import has_edition
from scripts.notebook_edition import numbering

LOGGER = logging.getLogger(__name__)
TABLE = "book-numbering.json"  # written into the build's doctree folder
PROOF_NODES = (*NODE_TYPES.values(), unenumerable_node)
EXERCISE_NODES = (exercise_enumerable_node, exercise_node)
proof_translation = get_translation("proof")  # sphinx-proof's captions ("Theorem")


def html_text(node: nodes.Node) -> str:
    """The text the HTML page shows for ``node``: inline math as MathJax's ``\\(...\\)``."""
    if isinstance(node, nodes.math):
        return f"\\({node.astext()}\\)"
    if isinstance(node, nodes.Text):
        return str(node)
    return "".join(html_text(child) for child in node.children)


def _dotted(numbers: tuple[int, ...] | None) -> str:
    return ".".join(map(str, numbers or ()))


def secnumber(title: nodes.title, secnumbers: dict[str, tuple[int, ...]]) -> str:
    """The number the HTML writer puts before a section title (Sphinx's
    ``HTML5Translator.get_secnumber``: the section's anchor, else the page's number)."""
    anchor = "#" + title.parent["ids"][0]
    if anchor not in secnumbers:
        anchor = ""  # the first heading of a page has no anchor of its own
    return _dotted(secnumbers.get(anchor))


def _top_level_sections(doctree: nodes.document) -> list[tuple[int, nodes.title]]:
    """(depth, title) of every heading of the page's text, in order; the sections that
    sphinx-proof and sphinx-exercise make inside their blocks are left out."""
    found = []
    for section in doctree.findall(nodes.section):
        depth, parent = 1, section.parent
        while isinstance(parent, nodes.section):
            depth, parent = depth + 1, parent.parent
        if isinstance(parent, nodes.document) and isinstance(section[0], nodes.title):
            found.append((depth, section[0]))
    return found


def _block_title(node: nodes.Element) -> str:
    """A block's own title (its directive's argument) as the HTML shows it, without the
    parentheses sphinx-proof and sphinx-exercise put around it."""
    parts = list(node[0].children) if isinstance(node[0], nodes.title) else []
    if isinstance(node, exercise_node) and parts and isinstance(parts[0], nodes.Text):
        parts = parts[1:]  # an unnumbered exercise's title starts with "Exercise"
    text = "".join(html_text(part) for part in parts).strip()
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def _block(app: Sphinx, node: nodes.Element, docname: str, fignumbers: dict) -> dict[str, str]:
    """The table's entry for a theorem-like block or an exercise."""
    node_id = node["ids"][0]
    if isinstance(node, EXERCISE_NODES):
        kind = "exercise"
        implicit = f"{docname}-exercise-{node['serial_number']}"  # sphinx-exercise's
        numbered = isinstance(node, exercise_enumerable_node)
    else:
        kind = node["realtype"]
        implicit = rf"{re.escape(kind)}-\d+"  # sphinx-proof's label of an unlabelled block
        numbered = not isinstance(node, unenumerable_node)
    label = "" if re.fullmatch(implicit, node["label"]) else node["label"]
    number = caption = ""
    if numbered:
        figtype = app.env.get_domain("std").get_enumerable_node_type(node)
        number = _dotted(fignumbers.get(figtype, {}).get(node_id))
        if kind == "exercise":
            caption = app.config.numfig_format["exercise"] % number
        else:
            caption = f"{proof_translation(kind.title())} {number}"
    return {
        "kind": kind,
        "label": label,
        "caption": caption,
        "number": number,
        "title": _block_title(node),
    }


def page_entry(app: Sphinx, docname: str, doctree: nodes.document) -> dict[str, Any]:
    """A page's number and title (its first heading) and, if it has a notebook edition,
    its numbered blocks, labelled equations and sections, from its resolved doctree."""
    env = app.env
    secnumbers = env.toc_secnumbers.get(docname, {})
    fignumbers = env.toc_fignumbers.get(docname, {})
    sections = _top_level_sections(doctree)
    first = sections[0][1] if sections else None
    entry: dict[str, Any] = {
        "number": secnumber(first, secnumbers) if first is not None else "",
        "title": html_text(first).strip() if first is not None else "",
    }
    if not has_edition(app, docname):
        return entry
    writer = SimpleNamespace(
        builder=SimpleNamespace(config=app.config, name=app.builder.name, fignumbers=fignumbers)
    )
    entry["blocks"] = [
        _block(app, node, docname, fignumbers)
        for node in doctree.findall(lambda n: isinstance(n, PROOF_NODES + EXERCISE_NODES))
    ]
    entry["equations"] = {
        node["label"]: str(get_node_equation_number(writer, node))  # type: ignore[arg-type]
        for node in doctree.findall(nodes.math_block)
        if node.get("label")
    }
    entry["sections"] = [
        {"level": depth, "number": number, "title": title.rawsource}
        for depth, title in sections
        if (number := secnumber(title, secnumbers))
    ]
    return entry


def citations(app: Sphinx, docnames: set[str]) -> dict[str, dict[str, str]]:
    """Label and reference-list entry (the text of the citation's tooltip) of every work
    cited in ``docnames``, as sphinxcontrib-bibtex shows them."""
    domain: Any = app.env.get_domain("cite")
    keys = {
        target.key
        for ref in domain.citation_refs
        if ref.docname in docnames
        for target in ref.targets
    }
    plaintext = _plaintext_backend()
    found: dict[str, dict[str, str]] = {}
    for citation in domain.citations:
        if citation.key in keys and citation.key not in found:
            tooltip = citation.tooltip_entry
            found[citation.key] = {
                "label": citation.formatted_entry.label,
                # sphinxcontrib-bibtex's tooltip text (BibtexDomain.resolve_xref)
                "entry": tooltip.text.render(plaintext).replace("\\url ", "") if tooltip else "",
            }
    missing = sorted(keys - set(found))
    if missing:
        raise ValueError(f"cited but in no bibliography: {', '.join(missing)}")
    return dict(sorted(found.items()))


def _plaintext_backend() -> Any:
    import pybtex.plugin

    return pybtex.plugin.find_plugin("pybtex.backends", "plaintext")()


def _wanted(app: Sphinx) -> bool:
    return app.builder.format == "html" and app.builder.name != "singlehtml"


def record_page(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: the page's entry, from the doctree the HTML writer is about to
    render (emitted in the main process, also when pages are written in parallel)."""
    if _wanted(app):
        app.nqf_numbering_pages[docname] = page_entry(app, docname, doctree)  # type: ignore[attr-defined]


def numbering_table(app: Sphinx) -> dict[str, Any]:
    """The numbering table of the book just built (see the module's docstring). The pages
    an incremental build did not write again are resolved here."""
    pages: dict[str, dict[str, Any]] = app.nqf_numbering_pages  # type: ignore[attr-defined]
    for doc in sorted(app.env.found_docs - set(pages)):
        pages[doc] = page_entry(app, doc, app.env.get_and_resolve_doctree(doc, app.builder))
    edition = {doc for doc in app.env.found_docs if has_edition(app, doc)}
    return {
        "docs": {doc: pages[doc] for doc in sorted(app.env.found_docs)},
        "citations": citations(app, edition),
    }


def write_table(app: Sphinx, exception: Exception | None) -> None:
    """``build-finished``: write the table after a successful HTML build."""
    if exception is not None or not _wanted(app):
        return
    path = Path(app.doctreedir) / TABLE
    path.write_text(numbering.dumps(numbering_table(app)), encoding="utf-8")
    LOGGER.info(f"numbering table: {path}")


def _start(app: Sphinx) -> None:
    app.nqf_numbering_pages = {}  # type: ignore[attr-defined]


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("book._ext.notebook_edition_links")
    app.connect("builder-inited", _start)
    app.connect("doctree-resolved", record_page)
    app.connect("build-finished", write_table)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
