"""Whole notebooks: the Jupyter/Colab edition of a chapter, full or student.

:func:`convert_notebook` turns one chapter into its edition: every markdown cell through
:func:`.transforms.convert`, the first code cell replaced by the canonical install cell,
solution code collapsed behind a first line that names it and gives nothing away (full
edition) or handed to a hook that writes a skeleton (student edition, see
``scripts/make_student.py``), and a reference list appended. The book's ``hide-input``,
``hide-output`` and ``hide-cell`` tags become JupyterLab's collapsed source and outputs
(:func:`collapse`). Stored explorer outputs are written again by the package
(:func:`jupyter_outputs`): the markup of this version, with its hint for a notebook that
is not trusted, and no widget view that a kernel would have to bring back.
:func:`write_edition` writes the committed edition ``notebooks/``; :func:`stale` says
which of its files no longer match ``chapters/`` (the check ``make test`` runs, as for a
lock file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Callable
from urllib.parse import urlsplit

import nbformat
import yaml

from . import install_cell, numbering, transforms

ROOT = Path(__file__).resolve().parents[2]
EDITION = "notebooks"  # the committed edition, at the repository root
TABLE = "book-numbering.json"  # the numbering table, inside EDITION
SOLUTION_TAG = "solution"
EDITION_NOTE_TAG = "edition-note"
REFERENCES_TAG = "references"
KEEP_METADATA = ("kernelspec", "language_info")

SolutionHook = Callable[[nbformat.NotebookNode], nbformat.NotebookNode]

#: The book's tags that hide part of a code cell -> JupyterLab's metadata that collapses it
#: (``jupyter.source_hidden``, ``jupyter.outputs_hidden``; VS Code reads them too).
COLLAPSED = {
    "hide-input": ("source_hidden",),
    "hide-output": ("outputs_hidden",),
    "hide-cell": ("source_hidden", "outputs_hidden"),
}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def config(root: Path = ROOT) -> dict[str, Any]:
    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))


def site_url(root: Path = ROOT) -> str:
    """Address of the online book: ``html.baseurl`` if set, else the repository's GitHub
    Pages
    site (``https://OWNER.github.io/NAME/``, where the Pages workflow publishes it)."""
    conf = config(root)
    base = (conf.get("html") or {}).get("baseurl") or ""
    if base:
        return base.rstrip("/") + "/"
    owner, name = urlsplit(install_cell.repository_url(root)).path.strip("/").split("/")[:2]
    return f"https://{owner.lower()}.github.io/{name}/"


def chapter_paths(root: Path = ROOT) -> list[Path]:
    return sorted((root / "chapters").glob("*.ipynb"))


def edition_paths(root: Path = ROOT) -> list[Path]:
    """Every notebook the book serves: the chapters, then the companion pages in
    ``book/`` (e.g. Chapter 2's ``book/more_architectures.ipynb``). Each gets its
    notebook edition ``notebooks/NAME.ipynb``."""
    return chapter_paths(root) + sorted((root / "book").glob("*.ipynb"))


def docname(path: Path, root: Path = ROOT) -> str:
    """``chapters/01_x.ipynb`` -> ``chapters/01_x`` (the book's name for the page)."""
    return path.resolve().relative_to(root.resolve()).with_suffix("").as_posix()


# --- the numbering table
# --------------------------------------------------------------------------


def load_table(root: Path = ROOT) -> dict[str, Any]:
    return numbering.load(root / EDITION / TABLE)


# --- one notebook
# ---------------------------------------------------------------------------------


def collapse(cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``cell`` with the parts that the book hides (its ``hide-*`` tags) collapsed in
    JupyterLab, as a reader of the book sees them."""
    for tag in cell.metadata.get("tags", []):
        for key in COLLAPSED.get(tag, ()):
            cell.metadata.setdefault("jupyter", {})[key] = True
    return cell


def jupyter_outputs(outputs: list[Any]) -> list[Any]:
    """Stored outputs for a notebook front end: each explorer's HTML as this version of
    the package writes it (:func:`nqf_mini.course.explorer_page.rerender`: its hint
    where scripts do not run, e.g. an untrusted notebook), and no widget view, which
    would show "model not found" until the cell runs again."""
    from nqf_mini.course.explorer_page import rerender

    kept = []
    for output in outputs:
        output = nbformat.from_dict(dict(output))
        data = output.get("data")
        if data is not None:
            data.pop(WIDGET_VIEW, None)
            if 'class="nqf-explorer"' in data.get("text/html", ""):
                data["text/html"] = rerender("".join(data["text/html"]))[0]
        kept.append(output)
    return kept


def solution_banner(ctx: transforms.Context) -> str:
    """The first line of a solution code cell: what a collapsed cell shows in JupyterLab
    (its first line), so that it names the cell and gives nothing away."""
    return f"# Solution to {transforms.solution_name(ctx)}"


def _clean_code(cell: nbformat.NotebookNode, keep_outputs: bool) -> nbformat.NotebookNode:
    new = nbformat.from_dict(dict(cell))
    new.metadata = {k: v for k, v in cell.metadata.items() if k != "execution"}
    if not keep_outputs:
        new.outputs, new.execution_count = [], None
    else:
        new.outputs = jupyter_outputs(new.get("outputs", []))
    return collapse(new)


def edition_note(doc: str, site: str) -> str:
    return (
        f"*This is the Jupyter edition of a chapter of the "
        f"[online book]({site}{doc}.html), made from `{doc}.ipynb` by "
        f"`make notebooks`: edit that file, not this one.*"
    )


def references(keys: list[str], table: dict[str, Any], level: int = 2) -> str:
    """The reference list of the cited works, with the labels the book shows."""
    entries = sorted((table["citations"][k]["label"], table["citations"][k]["entry"]) for k in keys)
    lines = [f"{'#' * level} References", ""]
    lines += [
        f"* [{transforms.escape(label)}] {transforms.escape(entry)}" for label, entry in entries
    ]
    return "\n".join(lines)


def convert_notebook(
    nb: nbformat.NotebookNode,
    doc: str,
    table: dict[str, Any],
    *,
    site: str,
    install_source: str,
    student: bool = False,
    solution_code: SolutionHook | None = None,
    keep_outputs: bool = False,
) -> nbformat.NotebookNode:
    """The edition of one chapter notebook (a new notebook; ``nb`` is not modified).

    ``student`` leaves the solutions out; ``solution_code`` then turns each solution
    code cell into what the student gets (``None``: the cell is dropped).
    ``keep_outputs`` keeps the stored outputs of the other code cells (the committed
    full edition strips them).
    """
    ctx = transforms.Context(doc=doc, table=table, site=site, student=student)
    out = nbformat.v4.new_notebook(
        metadata={k: nb.metadata[k] for k in KEEP_METADATA if k in nb.metadata}
    )
    out.metadata["nqf_edition"] = "student" if student else "full"
    if not student:
        out.cells.append(
            nbformat.v4.new_markdown_cell(
                edition_note(doc, site), metadata={"tags": [EDITION_NOTE_TAG]}
            )
        )
        out.cells[-1]["id"] = EDITION_NOTE_TAG
    first_code = True
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "markdown":
            ctx.exercises = []
            text = transforms.convert(cell.source, ctx, top=True)
            if not text:
                continue
            new = nbformat.v4.new_markdown_cell(text, metadata=dict(cell.metadata))
            if ctx.exercises:
                new.metadata["nqf"] = {"exercises": ctx.exercises}
            if "attachments" in cell:
                new["attachments"] = cell["attachments"]
        elif cell.cell_type == "code" and cell.source.strip() and first_code:
            first_code = False
            new = _clean_code(cell, keep_outputs=False)
            new.source = install_source
        elif cell.cell_type == "code" and (SOLUTION_TAG in tags or ctx.region is not None):
            if student:
                if solution_code is None:
                    continue
                new = solution_code(cell)
            else:
                new = _clean_code(cell, keep_outputs)
                new.source = f"{solution_banner(ctx)}\n{new.source}"
                new.metadata.setdefault("jupyter", {})["source_hidden"] = True
        elif cell.cell_type == "code":
            new = _clean_code(cell, keep_outputs)
        elif ctx.region is not None and student:
            continue  # a raw cell inside a solution
        else:
            new = nbformat.from_dict(dict(cell))
        new["id"] = cell.get("id", new.get("id"))
        out.cells.append(new)
    if ctx.cited:
        out.cells.append(
            nbformat.v4.new_markdown_cell(
                references(ctx.cited, table), metadata={"tags": [REFERENCES_TAG]}
            )
        )
        out.cells[-1]["id"] = REFERENCES_TAG
    nbformat.validate(out)
    return out


# --- the committed edition
# ------------------------------------------------------------------------


def render(path: Path, table: dict[str, Any], root: Path = ROOT) -> str:
    """The text of the full edition of the chapter at ``path``, as written to
    ``notebooks/``."""
    nb = nbformat.read(path, as_version=4)
    edition = convert_notebook(
        nb,
        docname(path, root),
        table,
        site=site_url(root),
        install_source=install_cell.install_cell_source(root),
    )
    return nbformat.writes(edition) + "\n"


def write_edition(table: dict[str, Any], root: Path = ROOT) -> list[Path]:
    """Write ``notebooks/<chapter>.ipynb`` for every chapter; remove editions of lost
    chapters."""
    dest = root / EDITION
    dest.mkdir(exist_ok=True)
    written = []
    names = set()
    for path in edition_paths(root):
        target = dest / path.name
        names.add(path.name)
        text = render(path, table, root)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
        written.append(target)
    for orphan in dest.glob("*.ipynb"):
        if orphan.name not in names:
            orphan.unlink()
    return written


def stale(root: Path = ROOT) -> list[str]:
    """Why ``notebooks/`` does not match ``chapters/`` (empty when it is up to date)."""
    problems = []
    try:
        table = load_table(root)
    except FileNotFoundError as err:
        return [str(err)]
    dest = root / EDITION
    names = set()
    for path in edition_paths(root):
        names.add(path.name)
        target = dest / path.name
        try:
            text = render(path, table, root)
        except transforms.ConversionError as err:
            problems.append(f"{path.name}: {err}")
            continue
        if not target.is_file():
            problems.append(f"{target.relative_to(root)} missing")
        elif target.read_text(encoding="utf-8") != text:
            problems.append(f"{target.relative_to(root)} differs from what {path.name} gives")
    problems += [
        f"{p.relative_to(root)} has no chapter" for p in dest.glob("*.ipynb") if p.name not in names
    ]
    return problems
