"""What the notebook edition looks like in JupyterLab: collapsed as the book hides, no
answer on show, explorers that explain themselves.

* The book's ``hide-input`` / ``hide-output`` / ``hide-cell`` tags become JupyterLab's
  ``jupyter.source_hidden`` / ``outputs_hidden`` (VS Code reads them too).
* A collapsed solution cell shows its first line in JupyterLab; that line names the
  exercise and is never the answer (Chapter 1's ``predictions = {...}``, Chapter 7's
  ``exponents = {...}`` and Chapter 4's ``c_star = ...`` used to show).
* A stored explorer output is written again by the package: with a hint for an untrusted
  notebook, where its script does not run, and without a widget view, which a notebook
  opened without a kernel could not show.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import numpy as np

from nqf_mini.course.explorer import Slider, explorer
from scripts.notebook_edition import edition

DATA = Path(__file__).resolve().parents[1] / "unit" / "data"

TABLE = {
    "docs": {"chapters/x": {"title": "X", "sections": [], "equations": {},
                            "blocks": [{"kind": "exercise", "label": "ex-x-guess",
                                        "caption": "Exercise 9.4", "number": "9.4",
                                        "title": "Guess"}]}},
    "citations": {},
}
EXERCISE = """```{exercise} Guess
:label: ex-x-guess

*Difficulty: ★☆☆ (coding).* Guess the exponents.
```

```{solution-start} ex-x-guess
:class: dropdown
```"""


def chapter(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import nqf_mini"), *cells]
    return nb


def convert(nb: nbformat.NotebookNode, keep_outputs: bool = False) -> nbformat.NotebookNode:
    return edition.convert_notebook(nb, "chapters/x", TABLE, site="https://example.org/",
                                    install_source="# install", keep_outputs=keep_outputs)


def test_hidden_parts_collapse_in_jupyterlab():
    tags = {"hide-input": {"source_hidden": True}, "hide-output": {"outputs_hidden": True},
            "hide-cell": {"source_hidden": True, "outputs_hidden": True}, "other": None}
    out = convert(chapter(*(nbformat.v4.new_code_cell(f"x = {k}", metadata={"tags": [t]})
                            for k, t in enumerate(tags))))
    for cell, expected in zip(out.cells[-4:], tags.values(), strict=True):
        assert cell.metadata.get("jupyter") == expected, cell.metadata


def test_a_collapsed_solution_shows_its_exercise_not_its_answer():
    answer = 'exponents = {"tanh": 2, "relu": 0}'
    out = convert(chapter(nbformat.v4.new_markdown_cell(EXERCISE),
                          nbformat.v4.new_code_cell(answer, metadata={"tags": ["solution"]}),
                          nbformat.v4.new_markdown_cell("```{solution-end}\n```")))
    (solution,) = [c for c in out.cells if "solution" in c.metadata.get("tags", [])]
    assert solution.metadata["jupyter"]["source_hidden"]
    first, rest = solution.source.split("\n", 1)
    assert first == "# Solution to Exercise 9.4" and rest == answer


def test_stored_explorers_are_rewritten_for_jupyter():
    """A chapter's stored explorer (here: one written by the first version of the
    package) comes out with this version's markup and its hint; a widget view that a
    kernel left in the outputs is dropped."""
    old = (DATA / "explorer_v1.html").read_text(encoding="utf-8")
    cell = nbformat.v4.new_code_cell("ex", outputs=[nbformat.v4.new_output(
        "execute_result", data={"text/html": old, "text/plain": "Explorer",
                                edition.WIDGET_VIEW: {"model_id": "abc"}},
        execution_count=1)])
    (output,) = convert(chapter(cell), keep_outputs=True).cells[-1].outputs
    assert edition.WIDGET_VIEW not in output.data
    assert "nqf-explorer-hint" in output.data["text/html"]
    assert "File \u2192 Trust Notebook" in output.data["text/html"]
    # What the package writes now comes back unchanged.
    ex = explorer(lambda fig, a: fig.subplots().plot([0, a]), Slider("a", np.arange(3.0)),
                  caption="What to look for: the line rises.", figsize=(1, 1), dpi=30)
    assert edition.jupyter_outputs([{"output_type": "display_data", "metadata": {},
                                     "data": {"text/html": ex._repr_html_()}}]
                                   )[0]["data"]["text/html"] == ex._repr_html_()
