"""The book's own numbering, read from the HTML that ``make book`` builds, as one JSON
table. The notebook edition must show the numbers and titles the HTML book shows
("Theorem 1.1", "(2.2)", "Exercise 3.2", "[ZXPC26]"). Guessing them a second time would
drift, so they are read from the build: Sphinx numbers the theorem-like blocks
(sphinx-proof), the exercises (sphinx-exercise), the equations and the sections, and
sphinxcontrib-bibtex makes the citation labels. :func:`extract` pairs what the HTML
shows with the chapter sources, in document order, and checks that each pair agrees
(kind, label, section title), so a mismatch stops the build instead of producing a wrong
number. The table is committed as ``notebooks/book-numbering.json`` (the edition can
then be regenerated without a book build), and the book-build tests check it against the
fresh HTML, the way a lock file is checked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import nbformat

from . import myst

VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}
# : Directive names the book numbers, and the CSS class sphinx-proof / sphinx-exercise
# give them.
NUMBERED = re.compile(r"^(?:prf:(?P<kind>\w+)|(?P<exercise>exercise))$")
UNNUMBERED = {"prf:proof"}
HEADING = re.compile(r"^ {0,3}(?P<hashes>#{1,6})[ \t]+(?P<title>.+?)[ \t#]*$", re.M)


# --- a minimal DOM
# ---------------------------------------------------------------------------------


@dataclass
class Element:
    """An HTML element: tag, attributes, children (elements and text, in order)."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Any] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> Iterator[Element]:
        """This element and all elements below it, in document order."""
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def find(self, tag: str | None = None, cls: str | None = None) -> Element | None:
        return next(self.find_all(tag, cls), None)

    def find_all(self, tag: str | None = None, cls: str | None = None) -> Iterator[Element]:
        for el in self.iter():
            if (tag is None or el.tag == tag) and (cls is None or cls in el.classes):
                yield el


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("document")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_html(html: str) -> Element:
    """The DOM of a page (lenient: unclosed elements end with their parent)."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


def article(page: Element) -> Element:
    """The page's content (the theme's ``bd-article``), without navigation and sidebars."""
    found = page.find("article", "bd-article")
    if found is None:
        raise ValueError("no <article class='bd-article'> in the page: did the theme change?")
    return found


# --- normalisation used to check that the HTML and the source agree
# --------------------------------


def make_id(text: str) -> str:
    """Sphinx/docutils id of a label: lower case, runs of other characters become one
    hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def plain_title(text: str) -> str:
    """A title reduced to its letters and digits, so MyST source and HTML text compare
    equal."""
    text = re.sub(r"\\\(|\\\)|\$", "", text)
    text = re.sub(r"[*_`\\]", "", text)
    return re.sub(r"[^\w]+", " ", text).strip().lower()


# --- the chapter sources, in document order
# --------------------------------------------------------


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
    items: dict[str, list] = {
        "blocks": [],
        "equations": [],
        "sections": [],
        "cites": [],
    }

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


# --- the HTML, in document order
# -------------------------------------------------------------------


def _caption(el: Element) -> tuple[str, str]:
    """(caption such as "Theorem 1.1", title in parentheses) of an admonition-like
    block."""
    title_el = el.find("p", "admonition-title")
    if title_el is None:
        return "", ""
    number_el = title_el.find("span", "caption-number")
    caption = number_el.text().strip() if number_el else ""
    rest = title_el.text().replace(number_el.text() if number_el else "", "", 1).strip()
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1]
    return caption, rest


def _html_items(root: Element) -> dict[str, list]:
    items: dict[str, list] = {
        "blocks": [],
        "equations": [],
        "sections": [],
        "cites": [],
    }
    for el in root.iter():
        cls = el.classes
        if el.tag == "div" and "admonition" in cls and ({"proof", "exercise"} & cls):
            kind = (
                "exercise"
                if "exercise" in cls
                else next((c for c in sorted(cls - {"proof", "admonition", "dropdown"})), "")
            )
            if kind:  # a bare "proof admonition": a proof
                caption, title = _caption(el)
                items["blocks"].append(
                    {
                        "kind": kind,
                        "id": el.attrs.get("id", ""),
                        "caption": caption,
                        "title": title,
                    }
                )
        elif el.tag == "div" and "math" in cls and el.attrs.get("id", "").startswith("equation-"):
            eqno = el.find("span", "eqno")
            number = re.sub(r"[()]", "", eqno.text()).replace("#", "").strip() if eqno else ""
            items["equations"].append({"id": el.attrs["id"][len("equation-") :], "number": number})
        elif re.fullmatch(r"h[1-6]", el.tag):
            number_el = el.find("span", "section-number")
            if number_el is not None:
                title = "".join(
                    c if isinstance(c, str) else c.text()
                    for c in el.children
                    if not (
                        isinstance(c, Element) and ({"section-number", "headerlink"} & c.classes)
                    )
                )
                items["sections"].append(
                    {
                        "level": int(el.tag[1]),
                        "number": number_el.text().strip().rstrip("."),
                        "title": title.strip(),
                    }
                )
        elif el.tag == "span" and "bibtex-citation" in cls:
            items["cites"].append(
                [(a.text().strip(), a.attrs.get("title", "")) for a in el.find_all("a")]
            )
    return items


def page_title(root: Element) -> tuple[str, str]:
    """(number, title) of a page's first heading, as the book shows them."""
    h1 = root.find("h1")
    if h1 is None:
        return "", ""
    number_el = h1.find("span", "section-number")
    number = number_el.text().strip().rstrip(".") if number_el else ""
    title = "".join(
        c if isinstance(c, str) else c.text()
        for c in h1.children
        if not (isinstance(c, Element) and ({"section-number", "headerlink"} & c.classes))
    )
    return number, title.strip()


# --- the table
# -------------------------------------------------------------------------------------


class NumberingMismatch(ValueError):
    """The HTML and the chapter source disagree: the table would be wrong, so none is
    made."""


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
        require(
            make_id(label) == shown["id"],
            f"equation {label!r} is {shown['id']!r} in HTML",
        )
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
    """The numbering table of the built book.

    ``chapters`` maps a docname (``chapters/01_...``) to its notebook; ``pages`` lists
    every docname of the table of contents (for the titles that ``{doc}`` shows).
    """
    docs: dict[str, Any] = {}
    citations: dict[str, dict[str, str]] = {}
    for doc in pages:
        path = html_dir / f"{doc}.html"
        if not path.is_file():
            raise FileNotFoundError(f"{path} missing: build the book first (`make book`)")
        root = article(parse_html(path.read_text(encoding="utf-8")))
        number, title = page_title(root)
        docs[doc] = {"number": number, "title": title}
        if doc in chapters:
            docs[doc].update(
                _chapter_table(doc, _source_items(chapters[doc]), _html_items(root), citations)
            )
    return {"docs": docs, "citations": dict(sorted(citations.items()))}


def dumps(table: dict[str, Any]) -> str:
    """The table as committed: sorted keys, one item per line, a final newline."""
    return json.dumps(table, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} missing: run `make notebooks` (it builds the book and "
            f"reads the numbering from the HTML)"
        )
    return json.loads(path.read_text(encoding="utf-8"))
