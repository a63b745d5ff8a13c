"""The first code cell of every chapter: install ``nqf_mini`` in Colab, and nowhere
else. One canonical text, made here from the repository address in ``_config.yml`` and
the package version ``nqf_mini.__version__`` (the tag ``v<version>``):

* ``pip install --no-deps`` from the repository at that tag, so none of Colab's own
  packages is replaced (a resolving install upgrades ipywidgets 7.7.1 to 8.x, whose
  front end breaks Colab's controls); Colab already ships torch, numpy, matplotlib and
  scikit-learn (Chapter 10's digits);
* ``NQF_DEVICE=cpu``, so that a Colab GPU reproduces the stored CPU numbers, with one
  visible line saying how to use the GPU instead;
* nothing at all outside Colab.

The notebook editions always carry this cell; ``make install-cells`` writes it into
``chapters/`` and ``tests/chapters/test_chapters.py`` checks that the chapters carry it too.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import yaml

TEMPLATE = """\
# In Colab only: install the course package and change none of Colab's own packages;
# compute on the CPU, as the stored outputs were. Elsewhere this cell does nothing.
import os
import subprocess
import sys

if "google.colab" in sys.modules:
    package = "nqf_mini @ git+{url}@{ref}"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", package]
    subprocess.run(pip, check=True)
    os.environ["NQF_DEVICE"] = "cpu"  # to use a Colab GPU, write "cuda" here"""


def repository_url(root: Path) -> str:
    """The repository address: ``repository.url`` in ``_config.yml``, its one home."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return config["repository"]["url"].rstrip("/").removesuffix(".git")


def package_version() -> str:
    """The package's version, ``nqf_mini.__version__``: its one home (``pyproject.toml``
    reads it too, as a dynamic field)."""
    from nqf_mini import __version__

    return __version__


def pinned_ref(version: str | None = None) -> str:
    """The git reference the Colab cell installs: the release tag of ``version``
    (default: the package's)."""
    return f"v{version or package_version()}"


def install_cell_source(root: Path, version: str | None = None) -> str:
    """The canonical source of the first code cell (for the package's version, or
    ``version``)."""
    return TEMPLATE.format(url=repository_url(root), ref=pinned_ref(version))


def first_code_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.cell_type == "code" and c.source.strip())


def rewrite(path: Path, source: str) -> bool:
    """Make the first code cell of the notebook at ``path`` the canonical one; True if
    changed.

    Only the cell's source changes: its tags, outputs (none) and execution count stay.
    """
    nb = nbformat.read(path, as_version=4)
    cell = first_code_cell(nb)
    if cell.source == source:
        return False
    cell.source = source
    nbformat.write(nb, path)
    return True
