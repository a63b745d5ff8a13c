"""Fuzz the input contract of ``nqf_mini``: every public callable, bad input by bad input.

Every case of ``tests/unit/input_cases.py`` (every name of ``nqf_mini.__all__`` that takes
arguments, the architecture constructors, the methods ``f``, ``A``, ``g``, ``B``, ``f0``,
``expansion`` of every architecture and ``patch_matrix``) is called once with each bad value
of each argument, and once with each variant it must accept. Each call runs in a worker
process with an address-space limit (``--memory-gb``) and a time limit (``--timeout``); a
worker that dies or overruns is replaced. Outcomes of a bad call:

* clear: ``ValueError`` / ``TypeError`` naming the argument at fault;
* wrong argument: ``ValueError`` / ``TypeError`` naming another one or none (or a
  ``DivergenceError``);
* cryptic: any other exception (torch's or Python's internals);
* allocation: an attempt to allocate that the allocator refused (no argument named);
* silent NaN / silent accept: the call returned;
* hang: still running at the time limit; crash: the worker died.

An accepted variant (a list, a NumPy array, a tensor that requires grad, a non-contiguous
tensor, float32 / float16 values, NumPy and 0-d tensor scalars) is ``accepted`` when it gives
the valid call's result (or, for lower precisions, a finite one). The script prints the
percentages per group and overall; ``-v`` lists every call that is not clear, ``--json``
writes every outcome. ``tests/unit/test_input_contract.py`` asserts the same calls in-process.
Run it from the repository root: ``python -m scripts.input_contract_report -v``.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import resource
import sys
import time
import warnings
from pathlib import Path
from typing import Any

BAD_OUTCOMES = [
    "clear",
    "wrong argument",
    "cryptic",
    "allocation",
    "silent NaN",
    "silent accept",
    "hang",
    "crash",
]
GOOD_OUTCOMES = ["accepted", "different result", "refused", "non-finite"]


def _group(name: str) -> str:
    if name.startswith("arch.") and name.count(".") == 1:
        return "architecture constructors"
    if name.startswith("arch.") or name == "architectures:patch_matrix":
        return "architecture methods"
    return "package functions"


def _calls() -> list[tuple[str, ...]]:
    """(kind, name, arg, description) of every call, in a fixed order."""
    from tests.unit.input_cases import bad_calls, good_calls

    out = [("bad", name, arg, what) for name, _, arg, what, _ in bad_calls()]
    out += [("good", name, arg, what) for name, _, arg, what, _, _ in good_calls()]
    return out


def _missing() -> list[str]:
    """The case names this version of the package lacks (an older version, say)."""
    from tests.unit.input_cases import CASES, resolve

    return sorted({name for name, _, _ in CASES if resolve(name) is None})


def _run_one(index: int, table: list[tuple[Any, ...]]) -> tuple[str, str]:
    from tests.unit import input_cases as ic

    entry = table[index]
    if entry[0] == "bad":
        _, name, make, arg, what, bad = entry
        kwargs = make()
        kwargs[arg] = bad
        return ic.classify(ic.resolve(name), kwargs, arg)
    _, name, make, arg, what, good, same = entry
    fn = ic.resolve(name)
    reference = fn(**make())
    kwargs = make()
    kwargs[arg] = good
    try:
        result = ic.call_with_limit(fn, kwargs)
    except Exception as exc:
        return "refused", f"{type(exc).__name__}: {exc}"
    if ic.contains_nonfinite(result):
        return "non-finite", ""
    if same and not ic.same_result(reference, result, exact=what == "a list"):
        return "different result", ""
    return "accepted", ""


def _worker(conn: Any, memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    warnings.simplefilter("ignore")
    from tests.unit.input_cases import bad_calls, good_calls

    table: list[tuple[Any, ...]] = [("bad",) + c for c in bad_calls()]
    table += [("good",) + c for c in good_calls()]
    while True:
        index = conn.recv()
        if index is None:
            return
        try:
            conn.send(_run_one(index, table))
        except Exception as exc:  # a failure of the valid call itself
            conn.send(("crash", f"{type(exc).__name__}: {exc}"))


class _Pool:
    """One worker process at a time, replaced when it dies or overruns."""

    def __init__(self, memory_bytes: int, timeout: float):
        self.ctx = mp.get_context("spawn")
        self.memory_bytes, self.timeout = memory_bytes, timeout
        self.proc: Any = None

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.memory_bytes), daemon=True)
        self.proc.start()

    def run(self, index: int) -> tuple[str, str]:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send(index)
        if self.conn.poll(self.timeout + 20):  # the worker's own alarm first
            try:
                return self.conn.recv()
            except EOFError:
                pass
            self.stop()
            return "crash", "the worker died"
        self.stop()
        return "hang", f"no answer after {self.timeout + 20:g} s"

    def stop(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.proc = None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every unclear call")
    parser.add_argument("--json", type=Path, help="write every outcome to this file")
    parser.add_argument("--memory-gb", type=float, default=6.0)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--only", help="only cases whose name contains this string")
    args = parser.parse_args()
    calls = _calls()
    missing = _missing()
    selected = [
        i
        for i, c in enumerate(calls)
        if (not args.only or args.only in c[1]) and c[1] not in missing
    ]
    pool = _Pool(int(args.memory_gb * 2**30), args.timeout)
    bad: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    good: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    records = []
    start = time.perf_counter()
    try:
        for i in selected:
            kind, name, arg, what = calls[i]
            outcome, msg = pool.run(i)
            (bad if kind == "bad" else good)[_group(name)][outcome] += 1
            records.append(
                dict(kind=kind, name=name, arg=arg, what=what, outcome=outcome, message=msg[:300])
            )
            if args.verbose and outcome not in ("clear", "accepted"):
                print(f"{name}({arg} = {what}): {outcome}: {msg[:150]}", flush=True)
    finally:
        pool.stop()
    print(f"{len(selected)} calls in {time.perf_counter() - start:.0f} s")
    if missing:
        print(f"not in this version of the package (skipped): {', '.join(missing)}")
    for title, table, outcomes in (
        ("invalid calls", bad, BAD_OUTCOMES),
        ("inputs that must be accepted", good, GOOD_OUTCOMES),
    ):
        groups = sorted(table)
        total = collections.Counter()
        for g in groups:
            total.update(table[g])
        print(f"\n{title}")
        print(f"  {'outcome':<17}" + "".join(f"{g:>28}" for g in groups) + f"{'all':>16}")
        for o in outcomes:
            cells = "".join(f"{_cell(table[g], o):>28}" for g in groups)
            print(f"  {o:<17}{cells}{_cell(total, o):>16}")
        print(
            f"  {'total':<17}"
            + "".join(f"{sum(table[g].values()):>28}" for g in groups)
            + f"{sum(total.values()):>16}"
        )
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return 0


def _cell(counter: collections.Counter[str], outcome: str) -> str:
    n, total = counter[outcome], sum(counter.values())
    return f"{n} ({100 * n / total:.1f}%)" if total else "-"


if __name__ == "__main__":
    sys.exit(main())
