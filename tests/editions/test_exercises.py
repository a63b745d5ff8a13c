"""The exercise grammar (scripts/notebook_edition/exercises.py), on small notebooks: every
fence MyST allows (backticks or colons, three or more), solution blocks and regions that
span cells, the self-checks of each exercise, and the workload estimate that reads it."""

from __future__ import annotations

import nbformat
import pytest

from book._ext import chapter_status
from scripts.notebook_edition import exercises as grammar

md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def exercise(fence: str, label: str, kind: str = "derivation") -> str:
    return (
        f"{fence}{{exercise}} Title {label}\n:label: {label}\n\n"
        f"*Difficulty: ★★☆ ({kind}).* Show it.\n{fence}"
    )


@pytest.mark.parametrize("fence", ["```", "````", ":::", "::::"])
def test_every_fence_reads_the_same(fence):
    nb = nbformat.v4.new_notebook(
        cells=[
            md(
                exercise(fence, "ex-a") + f"\n\n{fence}{{solution}} ex-a\n:class: dropdown\n\n"
                "SECRET BLOCK\n" + fence + "\n\nAfter the block."
            ),
            md(
                exercise(fence, "ex-b", "coding")
                + f"\n\n{fence}{{solution-start}} ex-b\n{fence}\n\nSECRET REGION"
            ),
            code("check.exercise('ch1.b', f)\nSECRET_CODE = 1"),
            md(f"More SECRET REGION.\n\n{fence}{{solution-end}}\n{fence}\n\nOutro."),
            code("x = 1", metadata={"tags": ["solution"]}),
        ]
    )
    found = grammar.exercises(nb)
    assert [(e.label, e.title, e.stars, e.kind, e.cell) for e in found] == [
        ("ex-a", "Title ex-a", 2, "derivation", 0),
        ("ex-b", "Title ex-b", 2, "coding", 1),
    ]
    assert found[1].checks == ["ch1.b"] and found[0].checks == []
    assert grammar.solutions(nb) == [("ex-a", 0), ("ex-b", 1)]
    prose, solution_code = grammar.solution_text(nb)
    assert "SECRET BLOCK" in prose and "SECRET REGION" in prose
    assert "More SECRET REGION." in prose and "Outro." not in prose
    assert solution_code == ["check.exercise('ch1.b', f)\nSECRET_CODE = 1", "x = 1"]
    kept = []
    in_region = False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            text, in_region = grammar.strip_solutions(cell.source, in_region)
            kept.append(text)
    assert "SECRET" not in "\n".join(kept)
    assert "After the block." in kept[0] and kept[2] == "Outro." and not in_region


def test_a_code_fence_is_not_a_directive():
    text = "```python\n```{exercise} not one\n```\n\n" + exercise("```", "ex-c")
    assert [d.label for _, _, d in grammar.exercise_fences(text)] == ["ex-c"]


def test_workload_leaves_out_solutions_of_any_fence():
    def notebook(fence):
        return nbformat.v4.new_notebook(
            cells=[
                md(
                    exercise(fence, "ex-a")
                    + f"\n\n{fence}{{solution-start}} ex-a\n{fence}\n\n"
                    + "word " * 200
                    + f"\n\n{fence}{{solution-end}}\n{fence}\n\nLecture prose."
                ),
                code("a = 1\nb = 2", metadata={}),
                code("c = 3", metadata={"tags": ["solution"]}),
            ]
        )

    loads = [chapter_status.workload(notebook(f)) for f in ("```", "````", ":::")]
    assert all(w == loads[0] for w in loads)
    assert loads[0]["words"] < 20 and loads[0]["code"] == 2 and loads[0]["exercises"] == 1
