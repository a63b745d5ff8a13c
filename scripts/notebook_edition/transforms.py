"""MyST -> CommonMark, one construct per function.
 Each function takes MyST source (or a parsed :class:`~.myst.Directive`) and returns
CommonMark with LaTeX math and the few HTML elements every Jupyter front end renders
(``<details>``, ``<summary>``). Numbers and titles come from the book's numbering table
(:mod:`.numbering`) through a :class:`Context`; nothing is numbered here.
 To support a new directive or role, add a function and register it in
:data:`DIRECTIVES` or :data:`ROLES`; an unknown one stops the conversion with its name,
so MyST never slips through.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from . import myst
from .numbering import HEADING, make_id, plain_title

ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
}
DIFFICULTY = re.compile(
    r"^\*Difficulty:\s*(?P<stars>[★☆]+)\s*\((?P<kind>[^)]+)\)\.?\*\.?[ \t]*"
    r"\n?"
)
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<url>[^)\s]+)\)")
#: Numfig formats Sphinx uses by default (the book sets none of its own).
NUMFIG = {"section": "Section {}", "figure": "Fig. {}", "table": "Table {}"}
# : A role, or an inline code span (whose content is never converted), scanned left to
# right.
ROLE_OR_CODE = re.compile(myst.ROLE.pattern + r"|(?P<code>``[^`].*?``|`[^`]+`)")


class ConversionError(ValueError):
    """The source uses MyST that the edition cannot render, or a label the book does not
    know."""


@dataclass
class Context:
    """What a transform may look up, and the state carried from cell to cell of one
    notebook.

    ``doc`` is the docname of the chapter (``chapters/01_...``), ``table`` the numbering
    table, ``site`` the online book's address (ending in ``/``), ``student`` whether
    solutions are left out. The rest is state: the position in the chapter's numbered
    blocks and sections, the level of the last heading, the open solution region, and
    the citation keys used.
    """

    doc: str
    table: dict[str, Any]
    site: str
    student: bool = False
    block_index: int = 0
    section_index: int = 0
    heading_level: int = 1
    region: str | None = None
    cited: list[str] = field(default_factory=list)
    exercises: list[dict[str, str]] = field(default_factory=list)

    @property
    def chapter(self) -> dict[str, Any]:
        return self.table["docs"][self.doc]

    def next_block(self, directive: myst.Directive) -> dict[str, Any]:
        """The table's entry for the next numbered block of the chapter (checked against
        it)."""
        blocks = self.chapter.get("blocks", [])
        if self.block_index >= len(blocks):
            raise ConversionError(
                f"{self.doc}: more numbered blocks than the book has; "
                f"run `make notebooks` to refresh the numbering"
            )
        entry = blocks[self.block_index]
        self.block_index += 1
        kind = directive.name.removeprefix("prf:")
        if entry["kind"] != kind or entry["label"] != directive.label:
            raise ConversionError(
                f"{self.doc}: {directive.name} {directive.label!r} is "
                f"{entry['kind']} {entry['label']!r} in the numbering table; "
                f"run `make notebooks`"
            )
        return entry

    def find(self, label: str) -> tuple[str, dict[str, Any]]:
        """(docname, entry) of a numbered block with this label, in any chapter."""
        for doc, info in self.table["docs"].items():
            for entry in info.get("blocks", []):
                if entry["label"] == label:
                    return doc, entry
        raise ConversionError(
            f"{self.doc}: no numbered block labelled {label!r} in the book"
        )

    def equation(self, label: str) -> tuple[str, str]:
        """(docname, number) of a labelled equation."""
        for doc, info in self.table["docs"].items():
            if label in info.get("equations", {}):
                return doc, info["equations"][label]
        raise ConversionError(f"{self.doc}: no equation labelled {label!r} in the book")

    def section(self, label: str) -> tuple[str, dict[str, Any]]:
        for doc, info in self.table["docs"].items():
            for entry in info.get("sections", []):
                if label in entry.get("labels", []):
                    return doc, entry
        raise ConversionError(f"{self.doc}: no section labelled {label!r} in the book")

    def url(self, doc: str, anchor: str = "") -> str:
        return f"{self.site}{doc}.html" + (f"#{anchor}" if anchor else "")

    def link(self, text: str, doc: str, anchor: str = "") -> str:
        """``text``, linked to the online page when it lives in another document."""
        if doc == self.doc:
            return text
        return f"[{text}]({self.url(doc, anchor)})"

    def resolve_doc(self, target: str) -> str:
        """Docname of a ``{doc}`` target or relative link, from the current document."""
        target = re.sub(r"\.(md|ipynb|html)$", "", target)
        if target.startswith("/"):
            return target.lstrip("/")
        return posixpath.normpath(posixpath.join(posixpath.dirname(self.doc), target))


# --- inline
# --------------------------------------------------------------------------------------


def escape(text: str) -> str:
    """Text that CommonMark shows literally: emphasis, code, HTML and math characters
    are escaped. Brackets and backslashes are not: ``\\[`` and ``\\(`` open math in
    some front ends, and a bracket that no ``(`` follows is plain text anyway."""
    return re.sub(r"([`*_<>$])", r"\\\1", text)


def cite(content: str, ctx: Context) -> str:
    """``{cite}`a,b``` -> ``[LABEL_A, LABEL_B]``, the labels the book shows."""
    labels = []
    for key in (k.strip() for k in content.split(",") if k.strip()):
        if key not in ctx.table["citations"]:
            raise ConversionError(
                f"{ctx.doc}: citation {key!r} not in the numbering table"
            )
        if key not in ctx.cited:
            ctx.cited.append(key)
        labels.append(escape(ctx.table["citations"][key]["label"]))
    return "[" + ", ".join(labels) + "]"


def xref(role: str, content: str, ctx: Context) -> str:
    """``{prf:ref}``, ``{ref}``, ``{numref}``, ``{eq}`` and ``{doc}``: the text the book
    shows."""
    explicit, target = myst.split_explicit(content)
    if role == "eq":
        doc, number = ctx.equation(target)
        return ctx.link(explicit or f"({number})", doc, f"equation-{make_id(target)}")
    if role == "doc":
        doc = ctx.resolve_doc(target)
        if doc not in ctx.table["docs"]:
            raise ConversionError(
                f"{ctx.doc}: {{doc}} target {target!r} is not in the book"
            )
        title = explicit or ctx.table["docs"][doc]["title"]
        return f"[{title}]({ctx.url(doc)})"
    try:
        doc, entry = ctx.find(target)
        text = entry["caption"] or entry["title"]
    except ConversionError:
        doc, entry = ctx.section(target)
        text = (
            NUMFIG["section"].format(entry["number"])
            if role == "numref"
            else entry["title"]
        )
    if explicit and role == "numref":
        text = explicit.replace("%s", entry["number"]).replace(
            "{number}", entry["number"]
        )
    elif explicit:
        text = explicit
    return ctx.link(text, doc, make_id(target))


def math_role(content: str, ctx: Context) -> str:
    return f"${content}$"


ROLES: dict[str, Callable[[str, Context], str]] = {
    "cite": cite,
    "cite:p": cite,
    "cite:t": cite,
    "prf:ref": lambda c, ctx: xref("prf:ref", c, ctx),
    "ref": lambda c, ctx: xref("ref", c, ctx),
    "numref": lambda c, ctx: xref("numref", c, ctx),
    "eq": lambda c, ctx: xref("eq", c, ctx),
    "doc": lambda c, ctx: xref("doc", c, ctx),
    "math": math_role,
}


def roles(text: str, ctx: Context) -> str:
    """Replace every role in plain text with what the book shows; inline code stays as
    it is."""

    def replace(match: re.Match) -> str:
        if match.group("code"):
            return match.group("code")
        name = match.group("name")
        if name not in ROLES:
            raise ConversionError(
                f"{ctx.doc}: no notebook rendering for the role {{{name}}}"
            )
        shown = ROLES[name](match.group("content"), ctx)
        following = match.string[match.end() : match.end() + 1]
        if shown.endswith("]") and following and following in "([":
            shown = shown[:-1] + "\\]"  # "[A](" or "[A][" would read as a link
        return shown

    return ROLE_OR_CODE.sub(replace, text)


def targets(text: str) -> str:
    """Drop ``(label)=`` lines: the notebook has no use for Sphinx targets."""
    return myst.TARGET.sub("", text)


def relative_links(text: str, ctx: Context) -> str:
    """``[text](../book/page.md)`` -> the page in the online book (no local file in
    Colab)."""

    def replace(match: re.Match) -> str:
        url = match.group("url")
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", url, re.I):
            return match.group(0)
        path, _, anchor = url.partition("#")
        if not re.search(r"\.(md|ipynb|html)$", path):
            return match.group(0)
        return f"[{match.group('text')}]({ctx.url(ctx.resolve_doc(path), anchor)})"

    return LINK.sub(replace, text)


def headings(text: str, ctx: Context) -> str:
    """Give each heading the number the book gives its section ("## 1.4. Extracting
    ...")."""

    def replace(match: re.Match) -> str:
        sections = ctx.chapter.get("sections", [])
        if ctx.section_index >= len(sections):
            raise ConversionError(
                f"{ctx.doc}: more headings than the book has sections; "
                f"run `make notebooks`"
            )
        entry = sections[ctx.section_index]
        ctx.section_index += 1
        title = match.group("title")
        if plain_title(title) != plain_title(entry["title"]):
            raise ConversionError(
                f"{ctx.doc}: heading {title!r} is {entry['title']!r} in the "
                f"numbering table; run `make notebooks`"
            )
        ctx.heading_level = len(match.group("hashes"))
        number = f"{entry['number']}. " if entry["number"] else ""
        return f"{match.group('hashes')} {number}{title}"

    return HEADING.sub(replace, text)


def inline(text: str, ctx: Context, top: bool = False) -> str:
    """All inline transforms of a piece of plain text (headings only at the top level).
    """
    text = targets(text)
    if top:
        text = headings(text, ctx)
    return relative_links(roles(text, ctx), ctx)


def equation(block: myst.Verbatim, ctx: Context) -> str:
    """``$$ ... $$ (label)`` -> ``$$ ... \\tag{2.2} $$`` with the book's number."""
    if block.kind != "math" or not block.label:
        return block.text
    _, number = ctx.equation(block.label)
    return f"$$\n{block.math.strip()}\n\\tag{{{number}}}\n$$"


# --- directives
# -----------------------------------------------------------------------------------


def _starts_with_paragraph(body: str) -> bool:
    first = body.lstrip("\n").split("\n", 1)[0]
    return bool(first.strip()) and not re.match(
        r"^\s*(\$\$|\||[-*+] |\d+[.)] |>|#|```|:::)", first
    )


def _ends_with_paragraph(body: str) -> bool:
    last = body.rstrip().rsplit("\n", 1)[-1]
    return bool(last.strip()) and not re.match(r"^\s*(\||```|:::)|.*\$\$\s*$", last)


def lead_in(lead: str, body: str) -> str:
    """``lead`` as the start of the first paragraph of ``body``, or a paragraph of its
    own."""
    body = body.strip("\n")
    if not body:
        return lead
    return (
        f"{lead} {body.lstrip()}"
        if _starts_with_paragraph(body)
        else f"{lead}\n\n{body}"
    )


def theorem(d: myst.Directive, body: str, ctx: Context, entry: dict[str, Any]) -> str:
    """A theorem-like block -> **Theorem 1.1 (Title).** followed by the statement."""
    kind = entry["caption"] or d.name.removeprefix("prf:").capitalize()
    title = inline(d.argument, ctx).strip()
    lead = f"**{kind} ({title}).**" if title else f"**{kind}.**"
    return lead_in(lead, body)


def proof(d: myst.Directive, body: str, ctx: Context) -> str:
    """A proof -> *Proof.* ... ∎"""
    text = lead_in("*Proof.*", body)
    return f"{text} ∎" if _ends_with_paragraph(text) else f"{text}\n\n∎"


def exercise(d: myst.Directive, body: str, ctx: Context, entry: dict[str, Any]) -> str:
    """An exercise -> a heading with number, title, difficulty and kind, then the
    question."""
    title = inline(d.argument, ctx).strip()
    level = "#" * min(ctx.heading_level + 1, 6)
    heading = entry["caption"] or "Exercise"
    if title:
        heading += f" ({title})"
    stars = kind = ""
    match = DIFFICULTY.match(body.lstrip())
    if match:
        stars, kind = match.group("stars"), match.group("kind").strip()
        heading += f" · {stars} · {kind}"
        body = body.lstrip()[match.end() :]
    ctx.exercises.append(
        {"label": d.label, "number": entry["number"], "kind": kind, "difficulty": stars}
    )
    return f"{level} {heading}\n\n{body.strip()}"


def _exercise_name(label: str, ctx: Context) -> str:
    try:
        _, entry = ctx.find(label)
    except ConversionError:
        return "the exercise"
    return entry["caption"] or "the exercise"


def solution_name(ctx: Context) -> str:
    """The exercise whose solution region is open ("Exercise 7.2"), or "the exercise"."""
    return _exercise_name(ctx.region or "", ctx)


def solution(d: myst.Directive, body: str, ctx: Context) -> str:
    """A solution -> a collapsed ``<details>`` block; nothing in the student edition."""
    if ctx.student:
        return ""
    return details(f"Solution to {_exercise_name(d.argument.strip(), ctx)}", body)


def details(summary: str, body: str) -> str:
    """A ``<details>`` block whose body is still markdown (blank lines around it)."""
    return f"<details><summary>{summary}</summary>\n\n{body.strip()}\n\n</details>"


def admonition(d: myst.Directive, body: str, ctx: Context) -> str:
    """``{note}``, ``{warning}``, ``{admonition} Title``, ... -> a blockquote with a
    bold title."""
    title = (
        inline(d.argument, ctx).strip()
        if d.name == "admonition"
        else ADMONITIONS[d.name]
    )
    text = lead_in(f"**{title}.**", body)
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.split("\n"))


def math_directive(d: myst.Directive, body: str, ctx: Context) -> str:
    block = myst.Verbatim(d.body, "math", d.label, d.body)
    return equation(block, ctx) if d.label else f"$$\n{d.body.strip()}\n$$"


DIRECTIVES: dict[str, Callable[[myst.Directive, str, Context], str]] = {
    "prf:proof": proof,
    "solution": solution,
    "math": math_directive,
    "admonition": admonition,
    **{name: admonition for name in ADMONITIONS},
}
# : Numbered directives: they take their entry of the numbering table before their body
# is read.
NUMBERED: dict[str, Callable[[myst.Directive, str, Context, dict[str, Any]], str]] = {
    "exercise": exercise,
}
#: Directives whose body is verbatim (math), not markdown.
VERBATIM_BODY = {"math"}


def directive(d: myst.Directive, ctx: Context) -> str:
    """Render one directive, its body converted first (recursively)."""
    numbered = NUMBERED.get(d.name) or (
        theorem if d.name.startswith("prf:") and d.name != "prf:proof" else None
    )
    if numbered is None and d.name not in DIRECTIVES:
        raise ConversionError(
            f"{ctx.doc}: no notebook rendering for the directive {{{d.name}}}"
        )
    if ctx.student and d.name == "solution":
        return ""
    entry = ctx.next_block(d) if numbered else None
    body = d.body if d.name in VERBATIM_BODY else convert(d.body, ctx)
    if numbered:
        return numbered(d, body, ctx, entry)
    return DIRECTIVES[d.name](d, body, ctx)


# --- a whole markdown source
# ----------------------------------------------------------------------


def convert(source: str, ctx: Context, top: bool = False) -> str:
    """Convert MyST markdown (a cell, or a directive body) to CommonMark.

    Solution regions (``{solution-start}`` ... ``{solution-end}``) may span cells: the
    open region is kept in ``ctx.region``. Text inside one is collapsed into
    ``<details>`` in the full edition and left out of the student edition (still
    converted, so that the numbering stays in step, but its citations are not listed).
    """
    out: list[str] = []
    held: list[str] = []  # text of the open solution region in this cell
    cited = len(ctx.cited)

    def flush_region() -> None:
        text = "\n".join(held).strip("\n")
        held.clear()
        if ctx.student:
            del ctx.cited[cited:]
        elif text.strip():
            name = _exercise_name(ctx.region or "", ctx)
            out.append(_block(details(f"Solution to {name} (continued)", text)))

    for block in myst.parse_blocks(source):
        if isinstance(block, myst.Directive) and block.name == "solution-start":
            ctx.region = block.argument.strip()
            cited = len(ctx.cited)
            if not ctx.student:
                out.append(
                    _block(f"**Solution to {_exercise_name(ctx.region, ctx)}.**")
                )
            continue
        if isinstance(block, myst.Directive) and block.name == "solution-end":
            flush_region()
            ctx.region = None
            continue
        if isinstance(block, str):
            piece = inline(block, ctx, top=top)
        elif isinstance(block, myst.Verbatim):
            piece = equation(block, ctx)
        else:
            piece = _block(directive(block, ctx))
        (held if ctx.region is not None else out).append(piece)
    if ctx.region is not None:
        flush_region()
    text = "\n".join(out)
    return re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text).strip("\n")


def _block(text: str) -> str:
    """A block-level piece: blank lines around it keep it apart from the text beside it.
    """
    return f"\n{text.strip(chr(10))}\n" if text.strip() else ""
