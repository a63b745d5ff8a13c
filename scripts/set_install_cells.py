"""Write the canonical Colab install cell into the chapters (``make install-cells``).
 The first code cell of every chapter installs ``nqf_mini`` in Colab; its text is made
in one place, ``scripts/notebook_edition/install_cell.py``, from ``_config.yml`` and
``pyproject.toml``. This rewrites that cell in each notebook given (default:
``chapters/*.ipynb``) and leaves everything else, outputs and execution counts included,
as it was. ``--check`` only reports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.notebook_edition import edition, install_cell


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "notebooks", nargs="*", type=Path, default=edition.edition_paths(edition.ROOT)
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a cell differs")
    args = parser.parse_args()
    source = install_cell.install_cell_source(edition.ROOT)
    differ = []
    for path in args.notebooks:
        if args.check:
            import nbformat

            cell = install_cell.first_code_cell(nbformat.read(path, as_version=4))
            if cell.source != source:
                differ.append(path)
        elif install_cell.rewrite(path, source):
            print(f"rewrote the install cell of {path}")
    for path in differ:
        print(
            f"{path}: first code cell is not the canonical install cell (run `make install-cells`)"
        )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
