"""What MyST leaves behind when a CommonMark renderer (markdown-it-py) reads it.
 Used by the edition tests: a notebook cell passes when its rendering shows none of
these. The check reads the rendered HTML and the token stream, not the converter's code,
so it would also catch MyST that the converter never heard of.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

RENDERER = MarkdownIt("commonmark")
ROLE = re.compile(r"\{[A-Za-z][\w:.-]*\}<code>")  # {role}`x` -> {role}<code>x
OPTION = re.compile(r"(?:^|\n|>)[ \t]*:[A-Za-z][\w-]*:(?:[ \t]|$)", re.M)  # :label: x
TARGET = re.compile(r"(?:^|\n|>)[ \t]*\([^()\s]+\)=[ \t]*(?:$|\n|<)", re.M)  # (label)=
LABELLED_MATH = re.compile(r"\$\$[ \t]*\([^()\s]+\)")  # $$ (label)
COLON_FENCE = re.compile(r"(?:^|\n|>)[ \t]*:{3,}\{", re.M)  # :::{note}


def _tokens(tokens):
    for tok in tokens:
        yield tok
        yield from _tokens(tok.children or [])


def myst_leftovers(markdown: str) -> list[str]:
    """Every piece of MyST syntax in ``markdown`` that CommonMark renders as text or
    code."""
    found = [
        f"directive fence ```{t.info.strip()}"
        for t in _tokens(RENDERER.parse(markdown))
        if t.type == "fence" and t.info.strip().startswith("{")
    ]
    html = RENDERER.render(markdown)
    prose = re.sub(r"<pre><code[^>]*>.*?</code></pre>", "", html, flags=re.S)
    found += [f"role {m.group()}" for m in ROLE.finditer(prose)]
    found += [f"option line {m.group().strip()}" for m in OPTION.finditer(prose)]
    found += [f"target {m.group().strip()}" for m in TARGET.finditer(prose)]
    found += [f"labelled equation {m.group()}" for m in LABELLED_MATH.finditer(prose)]
    found += [f"colon fence {m.group().strip()}" for m in COLON_FENCE.finditer(prose)]
    return found
