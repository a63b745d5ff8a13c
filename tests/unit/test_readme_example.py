"""The README's example "From a module of your own to predicted ignition times" runs as printed.

The script is read from README.md (its ```python block under that heading) and executed; what it
prints must be the ```text block that follows, and its numbers must say what the README says:
the run's ignition times are the Lotka-Volterra prediction to within the recorded grid (0.2 time
units), and Theorem 8's ln(1/eps)/zeta_k differs from them by ln(z*_k)/zeta_k (to 1%, the run's
eps = 1e-6 correction ln(1 - 2 eps / z*) being far smaller).
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import torch

README = Path(__file__).resolve().parents[2] / "README.md"
HEADING = "## From a module of your own to predicted ignition times"


def _section() -> str:
    text = README.read_text()
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    return text[start:] if end == -1 else text[start:end]


def test_the_readme_example_runs_and_prints_what_the_readme_shows():
    section = _section()
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), namespace)  # our own README
    assert out.getvalue() == shown
    measured, predicted = namespace["measured"], namespace["predicted"]
    leading, zstar, b = namespace["leading"], namespace["zstar"], namespace["b"]
    assert torch.isfinite(measured).all()
    assert (measured - predicted).abs().max() < 0.2  # the recorded grid
    offset = torch.log(zstar) / (4 * b)  # ln(z*_k) / zeta_k
    assert torch.allclose(leading + offset, predicted, rtol=1e-2)
    assert max(len(line) for line in code.splitlines()) <= 88
