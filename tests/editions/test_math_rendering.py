"""Every formula of both notebook editions renders in the front ends students use.

Both editions are made from ``chapters/`` and ``book/`` as ``make notebooks`` and ``make
student`` make them (numbered from ``notebooks/book-numbering.json``), into a scratch
folder. ``render_math.js`` (node, the npm packages of ``package.json``, no network) finds
every math span of every markdown cell as JupyterLab does (its ``removeMath``, ported) and
renders each with KaTeX (Colab, VS Code; every error and strict warning counts), with
MathJax 3 (JupyterLab; an undefined macro counts) and through VS Code's notebook renderer
(markdown-it with @vscode/markdown-it-katex), which must take each span for math rather
than show its TeX. A failure that comes from a chapter's own source, not from the
conversion, is listed in :data:`KNOWN` with what to fix there; the test fails when a
known failure is gone (remove it) as well as on any new one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from scripts import make_student
from scripts.notebook_edition import edition, install_cell, transforms

from ..conftest import need

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("render_math.js")
PACKAGES = ("katex", "mathjax", "markdown-it", "@vscode/markdown-it-katex")

#: (notebook, TeX) of failures whose cause is the chapter's own source: what to fix there.
KNOWN: dict[tuple[str, str], str] = {}


def run_node(cells: list[dict[str, str]], tmp: Path) -> dict:
    need(shutil.which("node") is not None, "node is not installed (Debian's nodejs)")
    need(all((ROOT / "node_modules" / p / "package.json").is_file() for p in PACKAGES),
         "the npm packages are not installed: run `npm ci` (make installs them)")
    source, result = tmp / "cells.json", tmp / "result.json"
    source.write_text(json.dumps(cells), encoding="utf-8")
    proc = subprocess.run(["node", str(SCRIPT), str(source), str(result)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(result.read_text(encoding="utf-8"))


def markdown_cells(folder: Path, edition_name: str) -> list[dict[str, str]]:
    return [{"where": f"{edition_name}/{path.name}[{k}]", "source": cell.source}
            for path in sorted(folder.glob("*.ipynb"))
            for k, cell in enumerate(nbformat.read(path, as_version=4).cells)
            if cell.cell_type == "markdown"]


@pytest.fixture(scope="module")
def editions(tmp_path_factory) -> dict[str, Path]:
    """Both editions, written as the make targets write them."""
    out = tmp_path_factory.mktemp("editions")
    full, student = out / "notebooks", out / "student"
    full.mkdir()
    try:
        table = edition.load_table(ROOT)
        for path in edition.edition_paths(ROOT):
            nb = edition.convert_notebook(
                nbformat.read(path, as_version=4), edition.docname(path, ROOT), table,
                site=edition.site_url(ROOT),
                install_source=install_cell.install_cell_source(ROOT))
            nbformat.write(nb, full / path.name)
        make_student.build(edition.chapter_paths(ROOT), student)
    except transforms.ConversionError as err:
        pytest.fail(f"the editions cannot be made: {err}", pytrace=False)
    return {"notebooks": full, "student": student}


def test_every_formula_renders_in_katex_mathjax_and_vscode(editions, tmp_path):
    cells = [c for name, folder in editions.items() for c in markdown_cells(folder, name)]
    result = run_node(cells, tmp_path)
    # Each edition has thousands of formulas: a finder that found few would pass wrongly.
    assert result["spans"] > 5000 and result["display"] > 100, result
    found: dict[tuple[str, str], list[str]] = {}
    for failure in result["failures"]:
        notebook = failure["where"].split("/", 1)[1].split("[", 1)[0]
        found.setdefault((notebook, failure["tex"]), []).append(
            f"{failure['where']} {failure['renderer']}: {failure['error']}")
    new = {key: errors for key, errors in found.items() if key not in KNOWN}
    assert not new, "formulas that do not render:\n" + "\n".join(
        f"  {tex!r}: {errors}" for (_, tex), errors in new.items())
    gone = [reason for key, reason in KNOWN.items() if key not in found]
    assert not gone, f"fixed at the source, remove from KNOWN: {gone}"


CHECK_CASES = [
    ("fine", "A formula $x^2 + \\frac12$ and a display\n\n$$\nA = B\n\\tag{2.1}\n$$\n", []),
    ("vscode", "per unit of time $t = \\eta\\times$step is", ["vscode"]),
    ("undefined", "an undefined $\\nosuchmacro x$ macro", ["katex", "mathjax"]),
    ("code", "code `$x` and `$y` is not math; nor is a fence\n\n```\n$z$\n```\n", []),
    ("unclosed", "a brace $a_{b$ left open", ["katex", "mathjax"]),
]


@pytest.mark.parametrize("name, source, renderers", CHECK_CASES, ids=[c[0] for c in CHECK_CASES])
def test_the_check_finds_what_each_renderer_rejects(name, source, renderers, tmp_path):
    result = run_node([{"where": f"case/{name}.ipynb[0]", "source": source}], tmp_path)
    assert sorted({f["renderer"] for f in result["failures"]}) == sorted(renderers), result
    assert result["spans"] == {"fine": 2, "code": 0}.get(name, 1)
