"""A small reader for the MyST block syntax the chapters use: directives, code fences,
roles. The chapters are written for Jupyter Book. This module does not render anything;
it splits the source of a markdown cell into the pieces that the transforms in
:mod:`.transforms` rewrite:

* :class:`Directive`: a fenced directive, `````{name} argument`` or ``:::{name}
  argument``, with its ``:key: value`` option lines and its body (which may hold further
  directives);
* :class:`Verbatim`: a plain code fence (```` ```python ````) or a display-math block
  (``$$ ... $$``, with its ``(label)`` if it has one), which no inline transform may
  touch;
* plain text, kept as ``str``.
 The grammar is MyST's: a fence closes on a line of at least as many of its own
characters, so a directive holding code fences uses a longer fence than they do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

OPEN_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
DIRECTIVE_INFO = re.compile(r"^\{(?P<name>[^}\s]+)\}[ \t]*(?P<argument>.*?)\s*$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):(?:[ \t]+(?P<value>.*?))?\s*$")
MATH_OPEN = re.compile(r"^ {0,3}\$\$")
MATH_CLOSE = re.compile(r"\$\$(?:[ \t]*\((?P<label>[^)\s]+)\))?[ \t]*$")
#: ``{role}`content```: the role name, then one backtick-quoted argument.
ROLE = re.compile(r"\{(?P<name>[a-zA-Z][\w:.-]*)\}`(?P<content>[^`]+)`")
#: ``(label)=`` on a line of its own: a MyST target.
TARGET = re.compile(r"^ {0,3}\((?P<label>[^()\s]+)\)=[ \t]*$", re.M)


@dataclass
class Directive:
    """One fenced directive: ``name``, ``argument`` (rest of the opening line), options,
    body."""

    name: str
    argument: str = ""
    options: dict[str, str] = field(default_factory=dict)
    body: str = ""

    @property
    def label(self) -> str:
        """The ``:label:`` option, or the argument for solution blocks (which name an
        exercise)."""
        return self.options.get("label", "")


@dataclass
class Verbatim:
    """A code fence or a display-math block, kept apart from the inline transforms."""

    text: str
    kind: str = "code"  # "code" or "math"
    label: str = ""  # for math: the label of ``$$ ... $$ (label)``
    math: str = ""  # for math: the TeX between the dollar signs


Block = str | Directive | Verbatim


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _options(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """Split the leading ``:key: value`` lines of a directive body from the rest."""
    options: dict[str, str] = {}
    k = 0
    while k < len(lines):
        match = OPTION.match(lines[k])
        if not match:
            break
        options[match.group("key")] = match.group("value") or ""
        k += 1
    rest = lines[k:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    return options, rest


def fence_end(lines: list[str], i: int) -> int | None:
    """If line ``i`` opens a fence (a directive or a code block), the index of its
    closing line (``len(lines)`` when unclosed, as in CommonMark); else ``None``."""
    fence = OPEN_FENCE.match(lines[i])
    if not fence or (fence.group("fence")[0] == "`" and "`" in fence.group("info")):
        return None
    return next(
        (j for j in range(i + 1, len(lines)) if _closes(lines[j], fence.group("fence"))),
        len(lines),
    )


def directive_name(line: str) -> str | None:
    """The directive a fence's opening line opens (``solution``, ``prf:proof``, ...),
    or ``None`` for a code fence or any other line."""
    fence = OPEN_FENCE.match(line)
    directive = fence and DIRECTIVE_INFO.match(fence.group("info").strip())
    return directive.group("name") if directive else None


def directive_argument(line: str) -> str:
    """The argument on a directive's opening line (``ex-ch1-a`` of
    ```` ```{solution-start} ex-ch1-a ````), or ``""``."""
    fence = OPEN_FENCE.match(line)
    directive = fence and DIRECTIVE_INFO.match(fence.group("info").strip())
    return directive.group("argument") if directive else ""


def parse_blocks(text: str) -> list[Block]:
    """Split markdown source into plain text, directives and verbatim blocks, in order.

    An unclosed fence runs to the end of the text, as in CommonMark.
    """
    lines = text.split("\n")
    blocks: list[Block] = []
    plain: list[str] = []

    def flush() -> None:
        if plain:
            blocks.append("\n".join(plain))
            plain.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        end = fence_end(lines, i)
        if end is not None:
            fence = OPEN_FENCE.match(line)
            inner = lines[i + 1 : end]
            directive = DIRECTIVE_INFO.match(fence.group("info").strip())
            flush()
            if directive:
                options, body = _options(inner)
                blocks.append(
                    Directive(
                        directive.group("name"),
                        directive.group("argument"),
                        options,
                        "\n".join(body).rstrip(),
                    )
                )
            else:
                blocks.append(Verbatim("\n".join(lines[i : end + 1])))
            i = end + 1
            continue
        if MATH_OPEN.match(line):
            block = _math_block(lines, i)
            if block is not None:
                end, verbatim = block
                flush()
                blocks.append(verbatim)
                i = end + 1
                continue
        plain.append(line)
        i += 1
    flush()
    return blocks


def _math_block(lines: list[str], i: int) -> tuple[int, Verbatim] | None:
    """The display-math block opened by ``$$`` at line i: (index of its last line,
    block)."""
    first = lines[i].strip()[2:]
    if first.rstrip().endswith("$$") or MATH_CLOSE.search(first):  # $$ ... $$ on one line
        match = MATH_CLOSE.search(first)
        if match:
            body = first[: match.start()]
            return i, Verbatim(lines[i], "math", match.group("label") or "", body.strip())
    for j in range(i + 1, len(lines)):
        match = MATH_CLOSE.search(lines[j])
        if match:
            body = "\n".join([first] + lines[i + 1 : j] + [lines[j][: match.start()]])
            return j, Verbatim(
                "\n".join(lines[i : j + 1]),
                "math",
                match.group("label") or "",
                body.strip("\n"),
            )
    return None


def roles(text: str) -> list[tuple[str, str]]:
    """The ``(role, content)`` pairs of the roles in ``text``, in order."""
    return [(m.group("name"), m.group("content")) for m in ROLE.finditer(text)]


def split_explicit(content: str) -> tuple[str | None, str]:
    """``"Title <target>"`` -> ``("Title", "target")``; ``"target"`` -> ``(None,
    "target")``."""
    match = re.fullmatch(r"(?s)(?P<title>.*?)\s*<(?P<target>[^<>]+)>", content.strip())
    if match and match.group("title"):
        return match.group("title"), match.group("target").strip()
    return None, content.strip()


def walk_directives(blocks: list[Block]):
    """Every directive in ``blocks`` and, depth first, in their bodies, in source order."""
    for block in blocks:
        if isinstance(block, Directive):
            yield block
            yield from walk_directives(parse_blocks(block.body))


def markdown_roles(text: str) -> list[tuple[str, str]]:
    """The roles of a markdown source in document order, code fences and math excluded."""
    found: list[tuple[str, str]] = []
    for block in parse_blocks(text):
        if isinstance(block, str):
            found += roles(block)
        elif isinstance(block, Directive):
            found += roles(block.argument) + markdown_roles(block.body)
    return found
