"""The rubrics of the derivation exercises, and the students' written answers.

The rubrics live on the instructor page (``book/instructor.md``, section "Rubrics for
the derivations"), one bullet per exercise, each item followed by its points in
brackets:

    * {ref}`ex-ch1-cubic` (`ex-ch1-cubic`, 4 points): an index that ... (2); with
      three indices ... (1); the quartic pattern ... (1).

The chapter of an exercise is the number in its label (``ex-ch<N>-...``). The student
edition follows each derivation exercise with a **Your answer.** cell whose metadata
``nqf_exercise`` names the exercise (``scripts/make_student.py``). ``make grade`` turns
the rubrics into a sheet the teacher fills in by hand, beside the students' answers
(:mod:`nqf_mini.course.gradebook`); the tests check that every derivation exercise of
every chapter has a rubric here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: Metadata key of a "Your answer." cell: the exercise it answers.
ANSWER_KEY = "nqf_exercise"
_BULLET = re.compile(
    r"^\* \{ref\}`(?P<label>[^`]+)` \(`[^`]+`, (?P<total>\d+)[^)]*\):(?P<items>.*?)"
    r"(?=^\* |^#|\Z)",
    re.S | re.M,
)
_ITEM = re.compile(r"(?P<text>.+?)\s*\((?P<points>\d+)\)(?:[;.]|\s*$)", re.S)


@dataclass(frozen=True)
class Rubric:
    """The rubric of one derivation exercise: (item, points) pairs summing to
    ``total``."""

    label: str
    total: int
    items: tuple[tuple[str, int], ...]

    @property
    def chapter(self) -> int | None:
        """The chapter in the label (``ex-ch4-factor``: 4)."""
        match = re.match(r"ex-ch(\d+)-", self.label)
        return int(match.group(1)) if match else None


def rubrics(page: str) -> dict[str, Rubric]:
    """The rubrics written on the instructor page ``page`` (its Markdown text)."""
    found = {}
    for match in _BULLET.finditer(page):
        text = " ".join(match.group("items").split())
        items = tuple(
            (item.group("text").strip(" ;."), int(item.group("points")))
            for item in _ITEM.finditer(text)
        )
        found[match.group("label")] = Rubric(match.group("label"), int(match.group("total")), items)
    return found


def written_answers(nb: Any) -> dict[str, str]:
    """The student's "Your answer." cells of a submitted notebook: exercise label ->
    the cell's text."""
    answers = {}
    for cell in nb.cells:
        label = cell.get("metadata", {}).get(ANSWER_KEY)
        if cell.get("cell_type") == "markdown" and isinstance(label, str):
            answers[label] = str(cell.get("source", ""))
    return answers
