"""The course's exercise grammar, read in one place, on top of :mod:`.myst`'s fences.

A chapter states an exercise as a MyST directive and its solution in one of two ways:

* ```` ```{exercise} Title ```` with a ``:label:`` option and a line
  ``*Difficulty: ★★☆ (derivation|coding|exploration).*`` in its body;
* ```` ```{solution} label ```` (a block), or everything from a
  ```` ```{solution-start} label ```` fence to the next ```` ```{solution-end} ```` fence
  (a region, which may span cells; its code cells are solution code, as are code cells
  tagged ``solution``).

Fences may be backticks or colons of any length (MyST's rule: a fence closes on a line
of at least as many of its own characters). The student edition
(``scripts/make_student.py``), the status tables (``book/_ext/chapter_status.py``) and
the tests read exercises and solutions only through this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from . import myst

EXERCISE = "exercise"
SOLUTION = "solution"
REGION_START, REGION_END = "solution-start", "solution-end"
#: The tag of a code cell that holds a solution.
SOLUTION_TAG = "solution"
DIFFICULTY = re.compile(r"\*Difficulty:\s*(?P<stars>[★☆]+)\s*\((?P<kind>[^)]+)\)")
#: A self-check call in code: ``check.exercise("ch4.lv_rhs", ...)``.
CHECK = re.compile(r"check\.exercise\(\s*[\"']([\w.\-]+)[\"']")


@dataclass
class Exercise:
    """One exercise of a notebook: its label, title, difficulty (stars, kind), the
    self-check labels in its text or its solution, and the index of its cell."""

    label: str
    title: str
    stars: int
    kind: str
    cell: int
    checks: list[str] = field(default_factory=list)


def source(cell: dict) -> str:
    """A cell's source as one string (nbformat stores a string or a list of lines)."""
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def fences(lines: list[str]) -> Iterator[tuple[int, int, str | None]]:
    """The top-level fences of ``lines``: (first line, last line, directive name or
    ``None`` for a code fence), in order."""
    i = 0
    while i < len(lines):
        end = myst.fence_end(lines, i)
        if end is None:
            i += 1
            continue
        yield i, min(end, len(lines) - 1), myst.directive_name(lines[i])
        i = end + 1


def split_solutions(text: str, in_region: bool = False) -> tuple[list[str], list[str], bool]:
    """The lines of markdown ``text`` outside and inside solutions, and whether a
    solution region is still open where it ends (``in_region``: open where it begins).
    The solution fences themselves count as inside."""
    lines = text.split("\n")
    outside: list[str] = []
    inside: list[str] = []
    i = 0
    for start, end, name in fences(lines):
        (inside if in_region else outside).extend(lines[i:start])
        if name in (REGION_START, REGION_END):
            inside.extend(lines[start : end + 1])
            in_region = name == REGION_START
        elif name == SOLUTION or in_region:
            inside.extend(lines[start : end + 1])
        else:
            outside.extend(lines[start : end + 1])
        i = end + 1
    (inside if in_region else outside).extend(lines[i:])
    return outside, inside, in_region


def strip_solutions(text: str, in_region: bool = False) -> tuple[str, bool]:
    """MyST ``text`` without its solutions, still MyST, and whether a region is open
    where it ends (see :func:`split_solutions`)."""
    outside, _, in_region = split_solutions(text, in_region)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(outside)).strip("\n"), in_region


def cells_with_regions(nb: dict) -> Iterator[tuple[int, dict, bool]]:
    """Every cell with its index and whether it lies in a solution: a markdown cell
    when a region is open where it begins, a code cell when it is tagged ``solution`` or
    a region is open around it."""
    in_region = False
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            begins = in_region
            _, _, in_region = split_solutions(source(cell), in_region)
            yield k, cell, begins
        else:
            tags = cell.get("metadata", {}).get("tags", [])
            yield k, cell, in_region or SOLUTION_TAG in tags


def solution_text(nb: dict) -> tuple[list[str], list[str]]:
    """The solutions of a notebook: (their markdown lines, their code cells' sources)."""
    prose: list[str] = []
    code: list[str] = []
    in_region = False
    for _, cell, in_solution in cells_with_regions(nb):
        if cell["cell_type"] == "markdown":
            _, inside, in_region = split_solutions(source(cell), in_region)
            prose += inside
        elif in_solution:
            code.append(source(cell))
    return prose, code


def solutions(nb: dict) -> list[tuple[str, int]]:
    """The solutions of a notebook: (the label they name, their cell index), one per
    ``{solution}`` block or solution region."""
    found = []
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            lines = source(cell).split("\n")
            found += [
                (myst.directive_argument(lines[start]).strip(), k)
                for start, _, name in fences(lines)
                if name in (SOLUTION, REGION_START)
            ]
    return found


def exercise_fences(text: str) -> list[tuple[int, int, myst.Directive]]:
    """The exercise directives of markdown ``text`` outside its solutions: (first line,
    last line, directive)."""
    lines = text.split("\n")
    found = []
    for start, end, name in fences(lines):
        if name == EXERCISE:
            block = myst.parse_blocks("\n".join(lines[start : end + 1]))[0]
            assert isinstance(block, myst.Directive)
            found.append((start, end, block))
    return found


def _exercise(directive: myst.Directive, cell: int) -> Exercise:
    diff = DIFFICULTY.search(directive.body)
    return Exercise(
        label=directive.label,
        title=directive.argument.strip(),
        stars=diff.group("stars").count("★") if diff else 0,
        kind=diff.group("kind").strip() if diff else "",
        cell=cell,
        checks=CHECK.findall(directive.body),
    )


def exercises(nb: dict) -> list[Exercise]:
    """The exercises of a notebook, in order, each with the self-check labels of its
    text and of the code cells of its solution region."""
    found: list[Exercise] = []
    checks: dict[str, list[str]] = {}
    current: str | None = None  # the label of the open solution region
    for k, cell in enumerate(nb["cells"]):
        text = source(cell)
        if cell["cell_type"] != "markdown":
            if current is not None:
                checks.setdefault(current, []).extend(CHECK.findall(text))
            continue
        lines = text.split("\n")
        for start, end, name in fences(lines):
            if name == EXERCISE and current is None:
                directive = myst.parse_blocks("\n".join(lines[start : end + 1]))[0]
                assert isinstance(directive, myst.Directive)
                found.append(_exercise(directive, k))
            elif name == REGION_START:
                current = myst.directive_argument(lines[start]) or "?"
            elif name == REGION_END:
                current = None
    for ex in found:
        ex.checks = list(dict.fromkeys(ex.checks + checks.get(ex.label, [])))
    return found
