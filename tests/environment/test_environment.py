"""The environments the course declares: the package's ranges, the lock, Binder, compat.

* the README's local command works: JupyterLab is in the lock and ``jupyter lab`` runs
  from the venv;
* the lock satisfies every range ``pyproject.toml`` declares, and has no CUDA packages;
  Binder's Python is the lock's;
* ``make compat``'s minimum environment is every dependency at its floor, and a missing
  interpreter skips its session here but fails the run under CI (``noxfile.py``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import noxfile
import pytest
from packaging.requirements import Requirement

from scripts.timeouts import scaled

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LOCK = (ROOT / "requirements.txt").read_text(encoding="utf-8")
PINS = {
    name.lower().replace("_", "-"): version
    for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)$", LOCK, re.M)
}


def test_jupyterlab_runs_from_the_venv():
    jupyter = Path(sys.executable).parent / "jupyter"
    out = subprocess.run(
        [str(jupyter), "lab", "--version"], capture_output=True, text=True, timeout=scaled(120)
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert re.match(r"^\d+\.\d+", out.stdout.strip()), out.stdout
    assert "jupyterlab" in PINS, "JupyterLab missing from requirements.txt"


def _declared() -> list[Requirement]:
    project = PYPROJECT["project"]
    found = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        found += [Requirement(r) for r in extra]
    return found


@pytest.mark.parametrize("requirement", _declared(), ids=str)
def test_lock_satisfies_the_declared_ranges(requirement):
    name = requirement.name.lower().replace("_", "-")
    assert name in PINS, f"{requirement.name} is declared but not locked"
    assert requirement.specifier.contains(PINS[name], prereleases=True), (
        f"the lock's {name}=={PINS[name]} is outside {requirement}"
    )


def test_lock_has_no_cuda_packages():
    cuda = re.findall(r"^(nvidia-\S+|triton\S*)", LOCK, re.M | re.I)
    assert not cuda, f"CUDA packages in the lock: {cuda}"


def test_binder_runs_the_python_of_the_lock():
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    lock_python = re.search(r"Python (\d+\.\d+)", LOCK).group(1)
    assert runtime == f"python-{lock_python}", (runtime, lock_python)


def test_minimum_environment_is_every_floor(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\ndependencies = ["numpy>=1.23", "torch>=2.3,<3"]\n'
        '[project.optional-dependencies]\nnotebooks = ["ipywidgets>=7.7.1", "jupyterlab"]\n'
    )
    assert noxfile.floors(tmp_path) == ["numpy==1.23", "torch==2.3", "ipywidgets==7.7.1"]
    (tmp_path / "pyproject.toml").write_text(
        '[project]\ndependencies = ["numpy"]\n[project.optional-dependencies]\nnotebooks = []\n'
    )
    with pytest.raises(ValueError, match="numpy has no floor"):
        noxfile.floors(tmp_path)
    declared = {r.name for r in map(Requirement, PYPROJECT["project"]["dependencies"])}
    assert declared <= {f.split("==")[0] for f in noxfile.floors()}


@pytest.mark.parametrize("ci", [False, True], ids=["locally", "under CI"])
def test_a_missing_interpreter_fails_compat_only_under_ci(tmp_path, ci):
    (tmp_path / "noxfile.py").write_text(
        "import nox\n\n\n@nox.session(python='3.99')\ndef nowhere(session):\n"
        "    session.run('python', '-V')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": "true"} if ci else {})
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "nox",
            "-f",
            str(tmp_path / "noxfile.py"),
            "--envdir",
            str(tmp_path / "envs"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=scaled(120),
    )
    assert "3.99" in out.stderr, out.stderr
    assert (out.returncode != 0) == ci, out.stderr


def test_every_test_folder_is_collected(pytestconfig):
    """pytest skips folders that match ``norecursedirs`` (by default ``build``, ``dist``,
    ``venv``, ...): a test folder with such a name would silently fall out of CI."""
    import fnmatch

    patterns = pytestconfig.getini("norecursedirs")
    for folder in (ROOT / "tests").rglob("*"):
        if folder.is_dir() and any(folder.glob("test_*.py")):
            assert not any(fnmatch.fnmatch(folder.name, p) for p in patterns), folder
