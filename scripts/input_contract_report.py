"""How the public functions of ``nqf_mini`` answer bad input: a table of outcomes.

Every function of ``tests/unit/input_cases.py`` is called once with each bad value of each of its
arguments (NaN and inf entries, complex dtypes, strings, empty and extra-dimensional tensors, bad
scalars). An outcome is *clear* when the call raises ``ValueError`` or ``TypeError`` naming the
argument at fault, *wrong argument* when the message names another one (or none), *silent NaN* or
*silent accept* when it returns, and *other error* for anything else (a raw ``RuntimeError``, a
``DivergenceError`` advising a smaller step). ``tests/unit/test_input_contract.py`` requires
*clear* everywhere; this script prints the counts, and with ``-v`` every call that is not clear.
"""

from __future__ import annotations

import argparse
import collections
import sys
import warnings
from pathlib import Path

from tests.unit.input_cases import CASES, classify, mutations, resolve

OUTCOMES = ["clear", "wrong argument", "silent NaN", "silent accept", "other error"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every unclear call")
    args = parser.parse_args()
    counts: collections.Counter[str] = collections.Counter()
    functions, missing = 0, []
    warnings.simplefilter("ignore")
    for name, make, kinds in CASES:
        fn = resolve(name)
        if fn is None:
            missing.append(name)
            continue
        functions += 1
        for arg, kind in kinds.items():
            for what, bad in mutations(kind, make()[arg]):
                kwargs = make()
                kwargs[arg] = bad
                outcome, msg = classify(fn, kwargs, arg)
                counts[outcome] += 1
                if args.verbose and outcome != "clear":
                    print(f"{name}({arg} = {what}): {outcome}: {msg[:110]}")
    total = sum(counts.values())
    print(f"{functions} functions, {total} calls with a bad argument")
    for outcome in OUTCOMES:
        print(f"  {outcome:<15} {counts[outcome]:5d}  ({100 * counts[outcome] / total:5.1f}%)")
    if missing:
        print(f"not in this version of the package: {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
