"""Unit tests of the MyST -> CommonMark transforms (scripts/notebook_edition), on small
sources. Each transform is tested on its own with a hand-made numbering table, so these
tests need no book build. The leftover detector used by the edition tests is tested here
too: it must flag every MyST construct that the conversion is supposed to remove.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from scripts.notebook_edition import edition, myst, transforms

from .myst_leftovers import myst_leftovers

ROOT = Path(__file__).resolve().parents[2]


SITE = "https://example.org/book/"
TABLE = {
    "citations": {
        "ziyin2026nqf": {"label": "ZXPC26", "entry": "L. Ziyin et al. NQF. 2026."},
        "bahri2024": {"label": "BDK+24", "entry": "Y. Bahri et al. Scaling. 2024."},
    },
    "docs": {
        "chapters/01_a": {
            "number": "1",
            "title": "First",
            "blocks": [
                {
                    "kind": "theorem",
                    "label": "thm-a",
                    "caption": "Theorem 1.1",
                    "number": "1.1",
                    "title": "Main",
                },
                {
                    "kind": "exercise",
                    "label": "ex-a",
                    "caption": "Exercise 1.1",
                    "number": "1.1",
                    "title": "Derive: it",
                },
            ],
            "equations": {"eq-a": "1.1"},
            "sections": [
                {"level": 1, "number": "1", "title": "First"},
                {
                    "level": 2,
                    "number": "1.1",
                    "title": "Setting $x$",
                    "labels": ["sec-setting"],
                },
            ],
        },
        "chapters/02_b": {
            "number": "2",
            "title": "Second",
            "blocks": [
                {
                    "kind": "lemma",
                    "label": "lem-b",
                    "caption": "Lemma 2.1",
                    "number": "2.1",
                    "title": "",
                }
            ],
            "equations": {"eq-b": "2.3"},
            "sections": [],
        },
        "book/open_questions": {"number": "", "title": "Open questions"},
    },
}


def ctx(student: bool = False, doc: str = "chapters/01_a") -> transforms.Context:
    return transforms.Context(doc=doc, table=TABLE, site=SITE, student=student)


# --- the reader
# -----------------------------------------------------------------------------------


def test_parse_blocks_splits_directives_code_and_math():
    source = (
        "text\n\n```{prf:theorem} Main\n:label: thm-a\n\nbody\n```\n\n"
        "```python\nx = 1\n```\n\n$$\na\n$$ (eq-a)\n\nend"
    )
    blocks = myst.parse_blocks(source)
    kinds = [type(b).__name__ if not isinstance(b, str) else "text" for b in blocks]
    assert kinds == [
        "text",
        "Directive",
        "text",
        "Verbatim",
        "text",
        "Verbatim",
        "text",
    ]
    theorem = blocks[1]
    assert (theorem.name, theorem.argument, theorem.label, theorem.body) == (
        "prf:theorem",
        "Main",
        "thm-a",
        "body",
    )
    assert blocks[5].kind == "math" and blocks[5].label == "eq-a" and blocks[5].math == "a"


def test_longer_fence_holds_code_fences():
    source = "````{exercise} T\n:label: ex-a\n\n```python\nx\n```\n\nafter\n````\nout"
    blocks = myst.parse_blocks(source)
    assert isinstance(blocks[0], myst.Directive) and "after" in blocks[0].body
    assert blocks[1] == "out"


def test_colon_fence_directive():
    blocks = myst.parse_blocks(":::{note}\nbody\n:::")
    assert isinstance(blocks[0], myst.Directive) and blocks[0].name == "note"


# --- inline
# --------------------------------------------------------------------------------------


def test_cite_before_a_parenthesis_is_not_a_link():
    assert transforms.roles("{cite}`bahri2024`(2024)", ctx()) == "[BDK+24\\](2024)"


def test_cite_shows_the_book_label_and_records_the_key():
    c = ctx()
    assert transforms.roles("see {cite}`ziyin2026nqf,bahri2024`.", c) == ("see [ZXPC26, BDK+24].")
    assert c.cited == ["ziyin2026nqf", "bahri2024"]


def test_references_in_the_same_chapter_are_text_and_others_are_links():
    c = ctx()
    assert transforms.roles("{prf:ref}`thm-a`", c) == "Theorem 1.1"
    assert transforms.roles("{eq}`eq-a`", c) == "(1.1)"
    assert transforms.roles("{ref}`ex-a`", c) == "Exercise 1.1"
    assert transforms.roles("{prf:ref}`lem-b`", c) == (
        f"[Lemma 2.1]({SITE}chapters/02_b.html#lem-b)"
    )
    assert transforms.roles("{eq}`eq-b`", c) == f"[(2.3)]({SITE}chapters/02_b.html#equation-eq-b)"
    assert transforms.roles("{doc}`../book/open_questions`", c) == (
        f"[Open questions]({SITE}book/open_questions.html)"
    )


def test_explicit_titles_and_sections():
    c = ctx()
    assert transforms.roles("{ref}`the exercise <ex-a>`", c) == "the exercise"
    assert transforms.roles("{ref}`sec-setting`", c) == "Setting $x$"
    assert transforms.roles("{numref}`sec-setting`", c) == "Section 1.1"


def test_roles_inside_inline_code_are_kept():
    c = ctx()
    assert transforms.roles("write `{eq}`? no: ``{cite}`x` `` and {eq}`eq-a`", c).endswith(
        "and (1.1)"
    )
    assert "``{cite}`x` ``" in transforms.roles("``{cite}`x` `` {eq}`eq-a`", c)


def test_unknown_role_or_label_stops_the_conversion():
    with pytest.raises(transforms.ConversionError, match="role"):
        transforms.roles("{glue}`x`", ctx())
    with pytest.raises(transforms.ConversionError, match="no-such"):
        transforms.roles("{prf:ref}`no-such`", ctx())


def test_labelled_equation_gets_its_number_as_a_tag():
    out = transforms.convert("$$\nx = 1\n$$ (eq-a)", ctx())
    assert out == "$$\nx = 1\n\\tag{1.1}\n$$"


def test_targets_are_dropped_and_relative_links_go_online():
    c = ctx()
    assert transforms.targets("(sec-setting)=\n## Setting") == "\n## Setting"
    assert (
        transforms.relative_links("[refs](../book/references.md#x) [web](https://a.b/c.md)", c)
        == f"[refs]({SITE}book/references.html#x) [web](https://a.b/c.md)"
    )


def test_headings_take_the_book_numbers():
    c = ctx()
    assert transforms.convert("# First\n\n## Setting $x$", c, top=True) == (
        "# 1. First\n\n## 1.1. Setting $x$"
    )
    with pytest.raises(transforms.ConversionError, match="heading"):
        transforms.convert("# Something else", ctx(), top=True)


# --- directives
# -----------------------------------------------------------------------------------


def test_theorem_gets_a_bold_numbered_lead():
    out = transforms.convert(
        "```{prf:theorem} Main\n:label: thm-a\n\nFrom {cite}`ziyin2026nqf`.\n```", ctx()
    )
    assert out == "**Theorem 1.1 (Main).** From [ZXPC26]."


def test_theorem_starting_with_math_keeps_it_a_block():
    out = transforms.convert("```{prf:theorem} Main\n:label: thm-a\n\n$$\nx\n$$\n```", ctx())
    assert out == "**Theorem 1.1 (Main).**\n\n$$\nx\n$$"


def test_proof_gets_a_lead_and_an_end_mark():
    assert transforms.convert("```{prf:proof}\nEasy.\n```", ctx()) == "*Proof.* Easy. ∎"
    assert transforms.convert("```{prf:proof}\nSo\n\n$$\nx\n$$\n```", ctx()).endswith("$$\n\n∎")


def test_exercise_heading_has_number_title_difficulty_and_kind():
    c = ctx()
    c.heading_level, c.block_index = 2, 1  # the theorem of the table comes first
    out = transforms.convert(
        "```{exercise} Derive: it\n:label: ex-a\n\n*Difficulty: ★★☆ (derivation).* Show it.\n```",
        c,
    )
    assert out == "### Exercise 1.1 (Derive: it) · ★★☆ · derivation\n\nShow it."
    assert c.exercises == [
        {"label": "ex-a", "number": "1.1", "kind": "derivation", "difficulty": "★★☆"}
    ]


def test_solution_is_collapsed_or_left_out():
    source = "```{solution} ex-a\n:class: dropdown\n\nBecause.\n```"
    assert transforms.convert(source, ctx()) == (
        "<details><summary>Solution to Exercise 1.1</summary>\n\nBecause.\n\n</details>"
    )
    assert transforms.convert(source, ctx(student=True)) == ""


def test_solution_region_spans_cells():
    c = ctx()
    first = transforms.convert("Question.\n\n```{solution-start} ex-a\n:class: dropdown\n```", c)
    assert first == "Question.\n\n**Solution to Exercise 1.1.**" and c.region == "ex-a"
    last = transforms.convert("Why it works.\n\n```{solution-end}\n```\n\nNext.", c)
    assert last.startswith("<details><summary>Solution to Exercise 1.1 (continued)</summary>")
    assert last.endswith("</details>\n\nNext.") and c.region is None
    s = ctx(student=True)
    assert transforms.convert("Q.\n\n```{solution-start} ex-a\n```", s) == "Q."
    assert transforms.convert("See {cite}`bahri2024`.\n```{solution-end}\n```\nNext.", s) == (
        "Next."
    )
    assert s.cited == []  # a citation only in a removed solution is not listed


def test_admonitions_become_blockquotes():
    assert transforms.convert("```{note}\nMind it.\n```", ctx()) == "> **Note.** Mind it."
    assert transforms.convert(":::{admonition} Careful\nTwo\n\nlines\n:::", ctx()) == (
        "> **Careful.** Two\n>\n> lines"
    )


def test_unknown_directive_stops_the_conversion():
    with pytest.raises(transforms.ConversionError, match="glue:figure"):
        transforms.convert("```{glue:figure} x\n```", ctx())


# --- whole notebooks
# ------------------------------------------------------------------------------


def _notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    )
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "# First\n\nSee {cite}`ziyin2026nqf`.\n\n"
            "```{prf:theorem} Main\n:label: thm-a\nTrue.\n```"
        ),
        nbformat.v4.new_code_cell("old install cell", metadata={"tags": ["hide-cell"]}),
        nbformat.v4.new_markdown_cell(
            "```{exercise} Derive: it\n:label: ex-a\n\nDo.\n```\n\n```{solution-start} ex-a\n```"
        ),
        nbformat.v4.new_code_cell("answer = 1", metadata={"tags": ["solution"]}),
        nbformat.v4.new_markdown_cell("```{solution-end}\n```"),
    ]
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    return nb


def test_full_edition_of_a_notebook():
    out = edition.convert_notebook(
        _notebook(), "chapters/01_a", TABLE, site=SITE, install_source="INSTALL"
    )
    assert out.cells[0].metadata["tags"] == ["edition-note"]
    code = [c for c in out.cells if c.cell_type == "code"]
    assert code[0].source == "INSTALL" and code[0].metadata["tags"] == ["hide-cell"]
    assert code[1].metadata["jupyter"]["source_hidden"] and not code[1].outputs
    assert out.cells[-1].metadata["tags"] == ["references"]
    assert "* [ZXPC26] L. Ziyin et al. NQF. 2026." in out.cells[-1].source
    for cell in out.cells:
        if cell.cell_type == "markdown":
            assert not myst_leftovers(cell.source), cell.source


def test_student_edition_of_a_notebook_uses_the_hook():
    out = edition.convert_notebook(
        _notebook(),
        "chapters/01_a",
        TABLE,
        site=SITE,
        install_source="INSTALL",
        student=True,
        solution_code=lambda c: nbformat.v4.new_code_cell("# yours"),
    )
    assert [c.source for c in out.cells if c.cell_type == "code"] == [
        "INSTALL",
        "# yours",
    ]
    assert "Solution" not in "\n".join(c.source for c in out.cells)


# --- the leftover detector
# ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "```{prf:theorem} T\nx\n```",
        ":::{note}\nx\n:::",
        "see {cite}`key`",
        ":label: ex-a\n\ntext",
        "(sec-a)=\n## A",
        "$$\nx\n$$ (eq-a)",
    ],
)
def test_leftover_detector_flags_myst(bad):
    assert myst_leftovers(bad), bad


def test_leftover_detector_passes_commonmark():
    ok = (
        "**Theorem 1.1 (Main).** text $x$ [ZXPC26]\n\n$$\nx\n\\tag{1.1}\n$$\n\n"
        "<details><summary>Solution</summary>\n\nBecause: `x = {a: 1}`.\n\n"
        "</details>\n\n"
        "```python\n# {cite}`not a role in code`\n```"
    )
    assert myst_leftovers(ok) == []
