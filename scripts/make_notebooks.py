"""Write the Jupyter/Colab edition of the chapters into ``notebooks/`` (``make
notebooks``). The chapters are written for Jupyter Book (MyST). Jupyter, JupyterLab, VS
Code and Colab render CommonMark, so the notebooks that the Colab and Binder buttons
open are this edition instead: theorems, proofs, exercises and references rewritten as
plain markdown with the numbers of the HTML book, solutions collapsed, the canonical
Colab install cell first, outputs stripped.

The numbers come from the numbering table that the book's build writes
(``book/_ext/numbering_table.py``); ``--numbering-from`` copies it to
``notebooks/book-numbering.json`` first.

    python -m scripts.make_notebooks --numbering-from _build/.doctrees/book-numbering.json
    python -m scripts.make_notebooks           # reuse notebooks/book-numbering.json
    python -m scripts.make_notebooks --check   # exit 1 if notebooks/ is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.notebook_edition import edition, numbering


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--numbering-from",
        type=Path,
        metavar="TABLE",
        help="the numbering table a book build wrote (_build/.doctrees/book-numbering.json)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if notebooks/ or its table is stale",
    )
    args = parser.parse_args()
    root = edition.ROOT
    table_path = root / edition.EDITION / edition.TABLE
    if args.numbering_from:
        if not args.numbering_from.is_file():
            parser.error(f"--numbering-from: no table at {args.numbering_from}: build the book")
        text = numbering.dumps(numbering.load(args.numbering_from))
        current = table_path.read_text(encoding="utf-8") if table_path.is_file() else None
        if args.check and current != text:
            print(
                f"{table_path.relative_to(root)} differs from the book's table "
                f"{args.numbering_from}: run `make notebooks`"
            )
            return 1
        if not args.check and current != text:
            table_path.parent.mkdir(exist_ok=True)
            table_path.write_text(text, encoding="utf-8")
            print(f"wrote {table_path.relative_to(root)}")
    if args.check:
        problems = edition.stale(root)
        for problem in problems:
            print(problem)
        if problems:
            print("the notebook edition is stale: run `make notebooks`")
        return 1 if problems else 0
    for path in edition.write_edition(edition.load_table(root), root):
        print(f"wrote {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
