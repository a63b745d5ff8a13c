"""Execute chapter notebooks in place, top to bottom, each on a fresh kernel (``make execute``).

The stored outputs are what the book shows and what nbval re-checks, so every chapter is run from a
clean kernel with sequential execution counts. The wall time and the versions of the main packages
are written into the notebook's metadata (``nqf_execution``) for the book's status page.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from scripts.timeouts import scaled

PACKAGES = ["torch", "numpy", "matplotlib", "ipywidgets", "nqf_mini"]


def notebook_client(
    nb: nbformat.NotebookNode, path: Path, timeout: int, **options: object
) -> NotebookClient:
    """A client that runs ``nb`` on a fresh ``python3`` kernel in the folder of ``path``,
    ``timeout`` seconds per cell, stopping at the first error (also ``make seeds``)."""
    return NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
        **options,
    )


def execute(path: Path, timeout: int) -> float:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)  # widget state is saved again only if widgets are shown
    client = notebook_client(nb, path, timeout, record_timing=False)
    # The stored outputs are what a reader without a kernel sees: every explorer with all its
    # frames and no live widgets (NQF_EXPLORER_FRAMES=all), and no seed shift.
    env = {**os.environ, "NQF_EXPLORER_FRAMES": "all"}
    env.pop("NQF_SEED", None)
    start = time.perf_counter()
    client.execute(env=env)
    seconds = time.perf_counter() - start
    nb.metadata["nqf_execution"] = {
        "seconds": round(seconds, 1),
        "date": _dt.date.today().isoformat(),
        "python": platform.python_version(),
        "packages": {name: metadata.version(name) for name in PACKAGES},
    }
    nbformat.write(nb, path)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--timeout", type=int, default=scaled(600), help="seconds allowed per cell")
    args = parser.parse_args()
    for path in args.notebooks:
        seconds = execute(path, args.timeout)
        print(f"{path}: executed in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
