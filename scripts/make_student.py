"""Write the student edition of every chapter (``make student``): solutions out, skeletons in.

The edition is derived mechanically from the chapter notebooks, with the same MyST -> CommonMark
conversion as the notebook edition (``scripts/notebook_edition``), so it reads properly in
Jupyter, JupyterLab, VS Code and Colab and carries the canonical Colab install cell. A new chapter
that follows the exercise convention gets one with no change here:

* a markdown ```{solution} <label>``` block (backtick or colon fence) is left out;
* everything from a ```{solution-start}``` fence to the matching ```{solution-end}``` fence is
  left out (the text around the two fences in their cells is kept);
* every code cell tagged ``solution`` (or lying inside a solution-start/end region) becomes a
  skeleton cell: each top-level ``def`` keeps its signature, gets the docstring "Your code here."
  and the body ``raise NotImplementedError``; each name passed to a self-check that the cell does
  not define as a function becomes ``name = None  # your answer here``; the self-check calls
  (any call whose dotted name ends in ``check.exercise``) are kept as ``result = ...(...)`` (no
  ``assert``: ``result.ok`` is there for grading), so that running the skeleton prints
  "NOT YET: ..." and running a finished answer prints "PASS: ...". A solution cell with neither
  functions nor self-checks becomes a comment asking for the student's own code;
* the outputs and execution counts of the skeleton cells are cleared. All other cells keep their
  stored outputs, so the student sees the figures and printed checks of the lecture part without
  running anything;
* every derivation exercise (``*Difficulty: ... (derivation).*``) is followed by a
  markdown cell "**Your answer.**" tagged ``student-answer``, where the student writes
  the derivation (:func:`add_answer_cells`, applied to the chapter before conversion);
* a note at the top says that this is the student edition;
* ``make student`` also writes ``README.md`` (:func:`write_readme`): how to open the
  notebooks, check the exercises and hand them in.

Theorem, exercise and equation numbers come from ``notebooks/book-numbering.json``, the table
``make notebooks`` reads from the built book.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import nbformat

from scripts.notebook_edition import edition as _edition
from scripts.notebook_edition import exercises as _grammar
from scripts.notebook_edition import install_cell as _install_cell

ROOT = Path(__file__).resolve().parents[1]
SOLUTION_TAG = _grammar.SOLUTION_TAG
SKELETON_TAG = "exercise-skeleton"
NOTE_TAG = "student-note"
ANSWER_TAG = "student-answer"
CHECK_NAMES = {"exercise"}  # check.exercise / exercise

NOTE = """> **Student edition.** The solutions of this chapter's exercises have been removed. Each
> coding exercise has a skeleton cell: replace every `raise NotImplementedError` (or `None`) with
> your answer and run the cell; its self-check `check.exercise(...)` prints `PASS: ...`, or
> `NOT YET: ...` with what is wrong. Each derivation exercise is followed by a cell
> **Your answer.**: double-click it and write your derivation there. The figures and
> checks of the lecture part are shown as they were computed; re-run the notebook from
> the top to reproduce them."""

ANSWER = """**Your answer.** ({label}) Double-click this cell and write your derivation
here: Markdown, with the mathematics in LaTeX between single dollar signs (inline) or
double ones (displayed)."""


# --- code ----------------------------------------------------------------------------------------


def _is_check_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    fn = node.func
    name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
    if name not in CHECK_NAMES:
        return False
    dotted = ast.unparse(fn)
    return dotted == "exercise" or dotted.endswith("check.exercise")


def check_calls(tree: ast.Module) -> list[ast.Call]:
    """The self-check calls of a cell, in source order."""
    calls = [n for n in ast.walk(tree) if _is_check_call(n)]
    return sorted(calls, key=lambda n: (n.lineno, n.col_offset))


def skeleton(source: str) -> str:
    """The skeleton of a solution code cell (see the module docstring)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: nothing to keep mechanically
        return "# Your code here: write your solution of this exercise."
    parts: list[str] = []
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(node.name)
            prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            parts.append(
                f"{prefix} {node.name}({ast.unparse(node.args)}){returns}:\n"
                f'    """Your code here."""\n'
                f"    raise NotImplementedError"
            )
    calls = check_calls(tree)
    answers = []
    for call in calls:
        for arg in call.args[1:2]:
            for name in ast.walk(arg):
                if (
                    isinstance(name, ast.Name)
                    and name.id not in defined
                    and name.id not in answers
                    and _assigned(tree, name.id)
                ):
                    answers.append(name.id)
    for name in answers:
        parts.append(f"{name} = None  # your answer here")
    if calls:
        parts.append(
            "\n".join(
                "result = " + (ast.get_source_segment(source, call) or ast.unparse(call))
                for call in calls
            )
        )
    if not parts:
        parts.append("# Your code here: write the numerical check of this exercise.")
    return "\n\n\n".join(parts) if defined else "\n\n".join(parts)


def _assigned(tree: ast.Module, name: str) -> bool:
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        if any(
            isinstance(t, ast.Name)
            and t.id == name
            or isinstance(t, ast.Tuple)
            and any(getattr(e, "id", None) == name for e in t.elts)
            for t in targets
        ):
            return True
    return False


# --- answer cells ---------------------------------------------------------------------


def add_answer_cells(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The MyST markdown ``cell`` split after each derivation exercise fence, with a
    "**Your answer.**" cell (tagged ``student-answer``) after each; the solutions that
    follow are removed by the conversion."""
    lines = cell.source.split("\n")
    out: list = []
    start = 0
    for _, end, directive in _grammar.exercise_fences(cell.source):
        diff = _grammar.DIFFICULTY.search(directive.body)
        if not diff or diff.group("kind").strip() != "derivation":
            continue
        label = directive.label or "derivation"
        out.append("\n".join(lines[start : end + 1]).strip())
        out.append(
            nbformat.v4.new_markdown_cell(
                ANSWER.format(label=label), metadata={"tags": [ANSWER_TAG], "nqf_exercise": label}
            )
        )
        start = end + 1
    if not out:
        return [cell]
    out.append("\n".join(lines[start:]).strip())
    cells = []
    for part in out:
        if isinstance(part, str):
            if part:
                meta = dict(cell.metadata)
                cells.append(nbformat.v4.new_markdown_cell(part, metadata=meta))
        else:
            cells.append(part)
    if "attachments" in cell:
        cells[0]["attachments"] = cell["attachments"]
    return cells


# --- notebooks -----------------------------------------------------------------------------------


def skeleton_cell(cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The skeleton cell that replaces a solution code cell (no outputs, tagged as a skeleton)."""
    tags = cell.metadata.get("tags", [])
    meta = {k: v for k, v in cell.metadata.items() if k != "execution"}
    meta["tags"] = [t for t in tags if t != SOLUTION_TAG] + [SKELETON_TAG]
    return nbformat.v4.new_code_cell(skeleton(cell.source), metadata=meta)


def student_notebook(
    nb: nbformat.NotebookNode, doc: str = "", table: dict | None = None
) -> nbformat.NotebookNode:
    """The student edition of one chapter notebook (a new notebook; ``nb`` is not modified).

    ``doc`` is the chapter's name in the book (``chapters/01_...``) and ``table`` the numbering
    table (default: the committed ``notebooks/book-numbering.json``).
    """
    table = table if table is not None else _edition.load_table(ROOT)
    nb = nbformat.from_dict(dict(nb))
    nb.cells = [
        part
        for cell in nb.cells
        for part in (add_answer_cells(cell) if cell.cell_type == "markdown" else [cell])
    ]
    out = _edition.convert_notebook(
        nb,
        doc,
        table,
        site=_edition.site_url(ROOT),
        install_source=_install_cell.install_cell_source(ROOT),
        student=True,
        solution_code=skeleton_cell,
        keep_outputs=True,
    )
    out.metadata["nqf_student_edition"] = True
    note = nbformat.v4.new_markdown_cell(NOTE, metadata={"tags": [NOTE_TAG]})
    out.cells.insert(0, note)
    for k, cell in enumerate(out.cells):
        cell["id"] = f"cell-{k:03d}"  # stable ids: editions diff cleanly
    nbformat.validate(out)
    return out


def student_book_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The chapter for the book without solutions (``make book-student``): still MyST, so
    that the book's numbering and cross-references (also those from the pages in
    ``book/``) resolve inside the student book; solutions out, skeleton cells and "Your
    answer" cells in, as in :func:`student_notebook`."""
    nb = nbformat.from_dict(dict(nb))
    cells, in_region = [], False
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "markdown":
            text, in_region = _grammar.strip_solutions(cell.source, in_region)
            if text.strip():
                kept = nbformat.from_dict(dict(cell))
                kept.source = text
                cells.extend(add_answer_cells(kept))
        elif cell.cell_type == "code" and (SOLUTION_TAG in tags or in_region):
            cells.append(skeleton_cell(cell))
        elif not in_region:
            cells.append(cell)
    nb.cells = [nbformat.from_dict(dict(c)) for c in cells]
    for k, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{k:03d}"
    nbformat.validate(nb)
    return nb


def build(chapters: list[Path], dest: Path) -> list[Path]:
    """Write the student edition of each chapter into ``dest``; returns the written paths."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    table = _edition.load_table(ROOT)
    for path in chapters:
        nb = nbformat.read(path, as_version=4)
        target = dest / path.name
        student = student_notebook(nb, _edition.docname(path, ROOT), table)
        nbformat.write(student, target)
        written.append(target)
    return written


def write_readme(dest: Path) -> Path:
    """Write the students' README (``scripts/student_README.md``) into ``dest``, with
    the repository's address (``_config.yml``) and the package's install line (the one
    of the Colab install cell) filled in."""
    cell = _install_cell.install_cell_source(ROOT)
    spec = re.search(r'"(nqf_mini @ git\+[^"]+)"', cell).group(1)
    text = (ROOT / "scripts" / "student_README.md").read_text(encoding="utf-8")
    target = dest / "README.md"
    text = text.replace("{install_spec}", spec).replace(
        "{repository}", _install_cell.repository_url(ROOT)
    )
    target.write_text(text, encoding="utf-8")
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "chapters", nargs="*", type=Path, default=sorted((ROOT / "chapters").glob("*.ipynb"))
    )
    parser.add_argument("--out", type=Path, default=ROOT / "student")
    args = parser.parse_args()
    for path in build(args.chapters, args.out) + [write_readme(args.out)]:
        print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
