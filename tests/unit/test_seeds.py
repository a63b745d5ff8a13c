"""``NQF_SEED`` moves every draw: the shift itself, and no page or module seeding around it.

``make seeds`` (scripts/run_seeds.py) re-executes the pages under other shifts; these tests
check the two things it relies on, cheaply enough for every run of the suite: the shift is
added to every seed given to :func:`nqf_mini.generator`, and no chapter, book page or science
module draws from a generator it seeded itself (such a draw would stay fixed when the shift
changes, and a claim could hold for that one draw only). The coursework (``nqf_mini/course``)
is exempt: a self-check's hidden cases are drawn from the grader's own seeds on purpose, so
that a reader's shift cannot change what an answer is graded against.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

import nqf_mini as nqf
from nqf_mini.seeds import seed_shift

ROOT = Path(__file__).resolve().parents[2]
# Seeding that bypasses nqf.generator: torch's and NumPy's global or private generators.
OWN_SEEDING = re.compile(
    r"\.manual_seed\(|np\.random\.seed\(|numpy\.random\.seed\(|default_rng\(|RandomState\(|"
    r"random\.seed\(|torch\.seed\("
)


def _sources() -> list[tuple[str, str]]:
    out = []
    for nb in sorted(ROOT.glob("chapters/*.ipynb")) + sorted(ROOT.glob("book/*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for i, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                out.append((f"{nb.relative_to(ROOT)} cell {i}", "".join(cell["source"])))
    for py in sorted((ROOT / "nqf_mini").rglob("*.py")):
        if py.name != "seeds.py" and "course" not in py.parts:
            out.append((str(py.relative_to(ROOT)), py.read_text(encoding="utf-8")))
    return out


def test_the_shift_is_added_to_every_seed(monkeypatch):
    monkeypatch.delenv("NQF_SEED", raising=False)
    plain = torch.randn(5, generator=nqf.generator(8))
    assert seed_shift() == 0
    monkeypatch.setenv("NQF_SEED", "3")
    assert seed_shift() == 3
    assert torch.equal(torch.randn(5, generator=nqf.generator(5)), plain)
    assert not torch.equal(torch.randn(5, generator=nqf.generator(8)), plain)


def test_a_malformed_shift_names_the_variable(monkeypatch):
    monkeypatch.setenv("NQF_SEED", "three")
    with pytest.raises(ValueError, match="NQF_SEED.*integer.*'three'"):
        nqf.generator(0)


def test_no_page_or_module_seeds_its_own_generator():
    found = [
        f"{where}: {line.strip()}"
        for where, text in _sources()
        for line in text.splitlines()
        if OWN_SEEDING.search(line) and not line.lstrip().startswith("#")
    ]
    assert not found, "draws that NQF_SEED does not move (use nqf.generator(seed)):\n" + "\n".join(
        found
    )
