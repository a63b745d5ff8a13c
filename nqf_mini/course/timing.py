"""Wall-clock timing for the speed comparisons of the chapters and the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(fn: Callable[[], object], repeats: int = 3) -> float:
    """Smallest wall-clock time of ``repeats`` calls, in seconds (the least disturbed run)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
