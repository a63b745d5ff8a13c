"""The book's numbering as the built HTML pages show it: the oracle of the numbering table
that the build writes from Sphinx's environment (``book/_ext/numbering_table.py``).

:func:`extract` reads every page of the table of contents (BeautifulSoup), pairs what
each notebook page shows with the page's MyST source, in document order, and checks that
each pair agrees (kind, label, section title): a numbered block's label and a section's
source title come from the chapter, its number and shown title from the HTML. It is a
second derivation of the table, from the other end of the build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
from bs4 import BeautifulSoup, NavigableString, Tag

from scripts.notebook_edition import myst
from scripts.notebook_edition.numbering import HEADING, make_id, plain_title

#: Directive names the book numbers (sphinx-proof's ``prf:KIND``, sphinx-exercise).
NUMBERED = re.compile(r"^(?:prf:(?P<kind>\w+)|(?P<exercise>exercise))$")
UNNUMBERED = {"prf:proof"}


class NumberingMismatch(ValueError):
    """The HTML and the chapter source disagree."""


def article(html: str) -> Tag:
    """The page's content (the theme's ``bd-article``), without navigation and sidebars."""
    found = BeautifulSoup(html, "html.parser").find("article", class_="bd-article")
    if not isinstance(found, Tag):
        raise ValueError("no <article class='bd-article'> in the page: did the theme change?")
    return found


def markdown_sources(nb: nbformat.NotebookNode) -> list[str]:
    """The markdown cells the book renders (cells tagged ``remove-cell`` are not shown)."""
    return [
        c.source
        for c in nb.cells
        if c.cell_type == "markdown" and "remove-cell" not in c.metadata.get("tags", [])
    ]


def _source_items(nb: nbformat.NotebookNode) -> dict[str, list]:
    """Numbered blocks, labelled equations, headings and citations of a chapter, in
    order."""
    items: dict[str, list] = {"blocks": [], "equations": [], "sections": [], "cites": []}

    def visit(blocks: list[myst.Block], top: bool) -> None:
        for block in blocks:
            if isinstance(block, str):
                if top:
                    items["sections"] += [
                        (len(m.group("hashes")), m.group("title")) for m in HEADING.finditer(block)
                    ]
                items["cites"] += [c for r, c in myst.roles(block) if r.startswith("cite")]
            elif isinstance(block, myst.Verbatim):
                if block.kind == "math" and block.label:
                    items["equations"].append(block.label)
            else:
                match = NUMBERED.match(block.name)
                if match and block.name not in UNNUMBERED:
                    kind = match.group("kind") or "exercise"
                    items["blocks"].append(
                        (kind, block.label, block.argument, "nonumber" in block.options)
                    )
                items["cites"] += [c for r, c in myst.roles(block.argument) if r.startswith("cite")]
                visit(myst.parse_blocks(block.body), False)

    for source in markdown_sources(nb):
        visit(myst.parse_blocks(source), True)
    return items


def _classes(el: Tag) -> set[str]:
    return set(el.get("class") or [])


def _text_without(el: Tag, skip: set[str]) -> str:
    """The text of ``el`` without its children of the classes ``skip`` (the section
    number and the ``#`` link beside a heading)."""
    return "".join(
        str(c) if isinstance(c, NavigableString) else c.get_text()
        for c in el.children
        if not (isinstance(c, Tag) and _classes(c) & skip)
    )


def _caption(el: Tag) -> tuple[str, str]:
    """(caption such as "Theorem 1.1", title in parentheses) of an admonition-like
    block."""
    title_el = el.find("p", class_="admonition-title")
    if not isinstance(title_el, Tag):
        return "", ""
    number_el = title_el.find("span", class_="caption-number")
    caption = number_el.get_text().strip() if number_el else ""
    rest = title_el.get_text().replace(number_el.get_text() if number_el else "", "", 1).strip()
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1]
    return caption, rest


def _html_items(root: Tag) -> dict[str, list]:
    items: dict[str, list] = {"blocks": [], "equations": [], "sections": [], "cites": []}
    for el in root.find_all(True):
        cls = _classes(el)
        if el.name == "div" and "admonition" in cls and ({"proof", "exercise"} & cls):
            kind = (
                "exercise"
                if "exercise" in cls
                else next((c for c in sorted(cls - {"proof", "admonition", "dropdown"})), "")
            )
            if kind:  # a bare "proof admonition": a proof
                caption, title = _caption(el)
                items["blocks"].append(
                    {"kind": kind, "id": el.get("id", ""), "caption": caption, "title": title}
                )
        elif el.name == "div" and "math" in cls and el.get("id", "").startswith("equation-"):
            eqno = el.find("span", class_="eqno")
            number = re.sub(r"[()]", "", eqno.get_text()).replace("#", "").strip() if eqno else ""
            items["equations"].append({"id": el["id"][len("equation-") :], "number": number})
        elif re.fullmatch(r"h[1-6]", el.name):
            number_el = el.find("span", class_="section-number")
            if number_el is not None:
                items["sections"].append(
                    {
                        "level": int(el.name[1]),
                        "number": number_el.get_text().strip().rstrip("."),
                        "title": _text_without(el, {"section-number", "headerlink"}).strip(),
                    }
                )
        elif el.name == "span" and "bibtex-citation" in cls:
            items["cites"].append(
                [(a.get_text().strip(), a.get("title", "")) for a in el.find_all("a")]
            )
    return items


def page_title(root: Tag) -> tuple[str, str]:
    """(number, title) of a page's first heading, as the book shows them."""
    h1 = root.find("h1")
    if not isinstance(h1, Tag):
        return "", ""
    number_el = h1.find("span", class_="section-number")
    number = number_el.get_text().strip().rstrip(".") if number_el else ""
    return number, _text_without(h1, {"section-number", "headerlink"}).strip()


def _chapter_table(
    doc: str,
    items: dict[str, list],
    html: dict[str, list],
    citations: dict[str, dict[str, str]],
) -> dict[str, Any]:
    def require(ok: bool, what: str) -> None:
        if not ok:
            raise NumberingMismatch(f"{doc}: {what}")

    require(
        len(items["blocks"]) == len(html["blocks"]),
        f"{len(items['blocks'])} numbered blocks in the source, {len(html['blocks'])} in the HTML",
    )
    blocks = []
    for (kind, label, argument, nonumber), shown in zip(items["blocks"], html["blocks"]):
        require(
            kind == shown["kind"],
            f"block {label or argument!r} is a {kind} in the source "
            f"but a {shown['kind']} in the HTML",
        )
        require(
            not label or make_id(label) == shown["id"],
            f"block {label!r} appears as id {shown['id']!r} in the HTML",
        )
        number = shown["caption"].rsplit(" ", 1)[-1] if shown["caption"] else ""
        require(bool(number) != nonumber, f"block {label or argument!r}: numbered or not?")
        blocks.append(
            {
                "kind": kind,
                "label": label,
                "caption": shown["caption"],
                "number": number,
                "title": shown["title"],
            }
        )
    require(
        len(items["equations"]) == len(html["equations"]),
        f"{len(items['equations'])} labelled equations in the source, "
        f"{len(html['equations'])} in the HTML",
    )
    equations = {}
    for label, shown in zip(items["equations"], html["equations"]):
        require(make_id(label) == shown["id"], f"equation {label!r} is {shown['id']!r} in HTML")
        equations[label] = shown["number"]
    require(
        len(items["sections"]) == len(html["sections"]),
        f"{len(items['sections'])} headings in the source, "
        f"{len(html['sections'])} numbered sections in the HTML",
    )
    sections = []
    for (level, title), shown in zip(items["sections"], html["sections"]):
        require(
            plain_title(title) == plain_title(shown["title"]),
            f"heading {title!r} is {shown['title']!r} in the HTML",
        )
        sections.append({"level": level, "number": shown["number"], "title": title})
    require(
        len(items["cites"]) == len(html["cites"]),
        f"{len(items['cites'])} citations in the source, {len(html['cites'])} in the HTML",
    )
    for content, shown in zip(items["cites"], html["cites"]):
        keys = [k.strip() for k in content.split(",") if k.strip()]
        require(len(keys) == len(shown), f"citation {content!r} shows {len(shown)} labels")
        for key, (label, entry) in zip(keys, shown):
            known = citations.setdefault(key, {"label": label, "entry": entry})
            require(
                known["label"] == label,
                f"citation {key!r} is both {known['label']!r} and {label!r}",
            )
    return {"blocks": blocks, "equations": equations, "sections": sections}


def extract(
    html_dir: Path, chapters: dict[str, nbformat.NotebookNode], pages: list[str]
) -> dict[str, Any]:
    """The numbering table as the book built in ``html_dir`` shows it.

    ``chapters`` maps the docname (``chapters/01_...``) of each page with a notebook
    edition to its notebook; ``pages`` lists every docname of the table of contents.
    """
    docs: dict[str, Any] = {}
    citations: dict[str, dict[str, str]] = {}
    for doc in pages:
        root = article((html_dir / f"{doc}.html").read_text(encoding="utf-8"))
        number, title = page_title(root)
        docs[doc] = {"number": number, "title": title}
        if doc in chapters:
            docs[doc].update(
                _chapter_table(doc, _source_items(chapters[doc]), _html_items(root), citations)
            )
    return {"docs": docs, "citations": dict(sorted(citations.items()))}
