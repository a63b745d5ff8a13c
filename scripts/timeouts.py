"""Every fixed time limit of the suite and the tooling, scaled by ``NQF_TIMEOUT_SCALE``.

A time limit is there to stop a run that hangs, not to measure speed (``benchmarks/``
does that). On a loaded machine every step takes longer, so the limits stretch with
the environment variable ``NQF_TIMEOUT_SCALE`` (a positive number, default 1): with
``NQF_TIMEOUT_SCALE=4`` a 120 s cell limit becomes 480 s, and a loaded machine makes
the suite slower instead of red. ``.ci/run`` sets it.

    python -m scripts.timeouts 120     # prints the scaled limit, for the Makefile
"""

from __future__ import annotations

import math
import os
import sys

VARIABLE = "NQF_TIMEOUT_SCALE"


def scale() -> float:
    """The factor of ``NQF_TIMEOUT_SCALE`` (1 when unset)."""
    text = os.environ.get(VARIABLE, "").strip() or "1"
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{VARIABLE} must be a positive number, got {text!r}")
    return value


def scaled(seconds: float) -> int:
    """``seconds`` times the scale, in whole seconds (rounded up)."""
    return math.ceil(seconds * scale())


if __name__ == "__main__":
    print(scaled(float(sys.argv[1])))
