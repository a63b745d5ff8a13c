"""The notebook edition (``notebooks/``) and the student edition read properly outside
the book.

* ``notebooks/`` is what ``make notebooks`` makes from ``chapters/`` now (checked like a
  lock file: a chapter edited without regenerating the edition fails here);
* every markdown cell of both editions, rendered by a CommonMark renderer
  (markdown-it-py), shows no MyST: no directive fence, role, option line, target or
  labelled ``$$``;
* the first code cell of both editions is the canonical Colab install cell, which
  installs with ``--no-deps`` at a pinned tag, sets ``NQF_DEVICE=cpu`` in Colab and does
  nothing elsewhere.
 The numbering table itself is checked against the built book in
tests/book/test_edition_against_book.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest

from scripts import make_student
from scripts.notebook_edition import edition, install_cell

from .myst_leftovers import myst_leftovers

ROOT = Path(__file__).resolve().parents[2]


CHAPTERS = edition.chapter_paths(ROOT)
EDITION = [ROOT / edition.EDITION / p.name for p in edition.edition_paths(ROOT)]


@pytest.fixture(scope="module")
def student(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    make_student.build(CHAPTERS, out)
    return out


def test_edition_is_up_to_date():
    problems = edition.stale(ROOT)
    assert not problems, "\n".join(problems + ["run `make notebooks`"])


def test_edition_is_small():
    for path in EDITION:
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name
        assert "widgets" not in nb.metadata, f"{path.name} carries widget state"
        assert path.stat().st_size < 200_000, f"{path.name}: {path.stat().st_size} bytes"


def _markdown_problems(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [
        f"{path.name} cell {k}: {problem}"
        for k, cell in enumerate(nb.cells)
        if cell.cell_type == "markdown"
        for problem in myst_leftovers(cell.source)
    ]


@pytest.mark.parametrize("path", EDITION, ids=lambda p: p.stem)
def test_edition_markdown_is_commonmark(path):
    assert not _markdown_problems(path)


@pytest.mark.parametrize("name", [p.name for p in CHAPTERS], ids=lambda n: n[:2])
def test_student_markdown_is_commonmark(student, name):
    assert not _markdown_problems(student / name)


@pytest.mark.parametrize("name", [p.name for p in CHAPTERS], ids=lambda n: n[:2])
def test_both_editions_start_with_the_canonical_install_cell(student, name):
    canonical = install_cell.install_cell_source(ROOT)
    for path in (ROOT / edition.EDITION / name, student / name):
        cell = install_cell.first_code_cell(nbformat.read(path, as_version=4))
        assert cell.source == canonical, path
        assert "hide-cell" in cell.metadata.get("tags", [])


def test_install_cell_pins_the_tag_and_installs_nothing_else():
    source = install_cell.install_cell_source(ROOT)
    url = install_cell.repository_url(ROOT)
    assert f"git+{url}@v{install_cell.package_version()}" in source
    assert '"--no-deps"' in source
    assert '"NQF_DEVICE"] = "cpu"' in source and '"cuda"' in source


def _run_cell(monkeypatch, in_colab: bool) -> list:
    calls: list = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append((a, k)))
    monkeypatch.delenv("NQF_DEVICE", raising=False)
    if in_colab:
        google = types.ModuleType("google")
        monkeypatch.setitem(sys.modules, "google", google)
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    exec(install_cell.install_cell_source(ROOT), {})
    return calls


def test_install_cell_does_nothing_outside_colab(monkeypatch):
    assert _run_cell(monkeypatch, in_colab=False) == []
    assert "NQF_DEVICE" not in os.environ


def test_install_cell_in_colab(monkeypatch):
    calls = _run_cell(monkeypatch, in_colab=True)
    assert len(calls) == 1
    args = calls[0][0][0]
    assert args[1:4] == ["-m", "pip", "install"] and "--no-deps" in args
    assert args[-1].startswith("nqf_mini @ git+")
    assert os.environ["NQF_DEVICE"] == "cpu"


def test_student_edition_has_no_solutions_but_every_exercise(student):
    for path in CHAPTERS:
        full = nbformat.read(ROOT / edition.EDITION / path.name, as_version=4)
        mine = nbformat.read(student / path.name, as_version=4)

        def exercises(nb):
            return [
                e["label"] for c in nb.cells for e in c.metadata.get("nqf", {}).get("exercises", [])
            ]

        assert exercises(full) == exercises(mine) and exercises(full)
        assert "Solution to" not in "\n".join(c.source for c in mine.cells)
        assert "<details>" in "\n".join(c.source for c in full.cells)


def test_readme_launch_links_open_the_edition():
    """The README's Colab and Binder links open notebooks/ files that exist, one per
    chapter."""
    import re

    conf = edition.config(ROOT)
    buttons = conf["launch_buttons"]
    ui = {"classic": "tree", "jupyterlab": "lab/tree"}[buttons["notebook_interface"]]
    url = install_cell.repository_url(ROOT)
    owner_repo = url.split("github.com/", 1)[1]
    branch = conf["repository"].get("branch", "main")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in CHAPTERS:
        target = f"{edition.EDITION}/{path.name}"
        colab = f"{buttons['colab_url']}/github/{owner_repo}/blob/{branch}/{target}"
        binder = f"{buttons['binderhub_url']}/v2/gh/{owner_repo}/{branch}?urlpath={ui}/{target}"
        assert f"({colab})" in readme and f"({binder})" in readme, path.name
    for link in re.findall(r"\]\((https://[^)]+\.ipynb)\)", readme):
        name = link.rsplit("/", 1)[-1]
        assert f"/{edition.EDITION}/{name}" in link, f"README links to {link}"
        assert (ROOT / edition.EDITION / name).is_file(), link
