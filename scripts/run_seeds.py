"""Execute every page under other random draws (``make seeds``): its assertions must still hold.

Each notebook runs top to bottom on a fresh kernel with ``NQF_SEED`` set to each shift (every
seed of the page moves by that much, :mod:`nqf_mini.seeds`), its outputs thrown away. A page
passes a shift when no cell raises; a failing cell is reported with its number and the error
(for an assertion, the claim that failed for that draw). Explorers draw only their default frame
(``NQF_EXPLORER_FRAMES=default``), as in the test suite. Exit status 1 if any run failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError

from scripts.execute_chapters import notebook_client
from scripts.kernel_start import starting
from scripts.timeouts import scaled

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_NOTEBOOKS = sorted(ROOT.glob("chapters/*.ipynb")) + sorted(ROOT.glob("book/*.ipynb"))


def run(path: Path, shift: int, timeout: int) -> tuple[Path, int, float, str]:
    """Execute ``path`` with ``NQF_SEED=shift``; return it with the seconds and '' or the error."""
    nb = nbformat.read(path, as_version=4)
    env = {
        **os.environ,
        "NQF_SEED": str(shift),
        "NQF_EXPLORER_FRAMES": "default",
        "NQF_DEVICE": "cpu",
        "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": "1",
    }
    client = notebook_client(nb, path, timeout)
    start = time.perf_counter()
    try:
        with starting():  # two kernels started at once can be handed the same port
            client.create_kernel_manager()
            client.start_new_kernel(env=env)
            client.start_new_kernel_client()
        client.execute()  # on the kernel just started, which it shuts down at the end
        error = ""
    except CellExecutionError as exc:
        lines = [ln for ln in str(exc).splitlines() if ln.strip()]
        error = " | ".join(lines[-3:])[:600]
    return path, shift, time.perf_counter() - start, error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, default=DEFAULT_NOTEBOOKS)
    parser.add_argument(
        "--shifts",
        type=int,
        nargs="+",
        default=[1, 2, 3],
        help="values of NQF_SEED to run each notebook with (default: 1 2 3)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="notebooks run at the same time (default: one per core)",
    )
    parser.add_argument(
        "--timeout", type=int, default=scaled(1200), help="seconds allowed per cell"
    )
    args = parser.parse_args()
    runs = [(path, shift) for shift in args.shifts for path in args.notebooks]
    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for path, shift, seconds, error in pool.map(lambda r: run(*r, args.timeout), runs):
            name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            status = "ok" if not error else f"FAILED: {error}"
            print(f"NQF_SEED={shift:<3d} {name}  {seconds:6.1f} s  {status}", flush=True)
            failed += bool(error)
    print(f"{len(runs) - failed} of {len(runs)} runs passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
