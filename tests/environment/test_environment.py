"""The environments the course declares: the package's ranges, the lock, Binder.

* the README's local command works: JupyterLab is in the lock and ``jupyter lab`` runs
  from the venv;
* ``pyproject.toml`` declares what the package needs and floors that were measured (see
  its comment and ``make compat``): no ipywidgets, torch >= 2.3 (2.2 fails with numpy
  2), matplotlib >= 3.7.5 (3.6 fails in Jupyter, 3.7.0-3.7.4 under numpy 2), Python >=
  3.10;
* the lock has no CUDA packages, and Binder installs the CPU build of the locked torch.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
from scripts import compat

PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
LOCK = (ROOT / "requirements.txt").read_text(encoding="utf-8")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def test_jupyterlab_runs_from_the_venv():
    jupyter = Path(sys.executable).parent / "jupyter"
    out = subprocess.run(
        [str(jupyter), "lab", "--version"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert re.match(r"^\d+\.\d+", out.stdout.strip()), out.stdout
    assert re.search(r"^jupyterlab==", LOCK, re.M), (
        "JupyterLab missing from requirements.txt"
    )


def test_package_ranges_are_the_measured_ones():
    deps = compat._dependencies(PYPROJECT, "project", "dependencies")
    assert not [d for d in deps if d.startswith("ipywidgets")], (
        "ipywidgets is not the package's"
    )
    floors = dict(f.split("==") for f in compat.floors(ROOT))
    assert _version(floors["torch"]) >= (2, 3), (
        "torch < 2.3 breaks .numpy() under numpy 2"
    )
    assert _version(floors["matplotlib"]) >= (3, 7, 5), (
        "matplotlib 3.7.0-3.7.4 break on numpy 2"
    )
    assert _version(floors["ipywidgets"]) <= (7, 7, 1), "Colab ships ipywidgets 7.7.1"
    assert re.search(r'^requires-python = ">=3\.10"', PYPROJECT, re.M)


def test_lock_satisfies_the_ranges():
    pins = dict(re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)$", LOCK, re.M))
    for name, floor in (f.split("==") for f in compat.floors(ROOT)):
        assert _version(pins[name]) >= _version(floor), (name, pins[name], floor)


def test_lock_has_no_cuda_packages():
    cuda = re.findall(r"^(nvidia-\S+|triton\S*)", LOCK, re.M | re.I)
    assert not cuda, f"CUDA packages in the lock: {cuda}"


def test_binder_installs_cpu_torch_first():
    post = (ROOT / "binder" / "postBuild").read_text(encoding="utf-8")
    lines = [
        line for line in post.splitlines() if line.startswith("python -m pip install")
    ]
    assert (
        "--index-url" in lines[0] and "$TORCH" in lines[0] and "--no-deps" in lines[0]
    )
    assert "/whl/cpu" in post
    assert "-r requirements.txt" in lines[1]
    assert "nvidia-|triton" in post, "postBuild must refuse an image with CUDA packages"
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    lock_python = re.search(r"Python (\d+\.\d+)", LOCK).group(1)
    assert runtime == f"python-{lock_python}", (runtime, lock_python)


def test_compat_skips_a_missing_interpreter_and_keys_venvs_by_spec():
    exe, looked = compat.find_interpreter("3.99")
    assert exe is None and any("python3.99" in place for place in looked)
    env = compat.environments(ROOT)[1]
    _, key = compat.spec_key(env, "3.10.13")
    more = env.requirements + ["x"]
    changed = compat.Environment(env.name, env.python, more, env.about)
    assert compat.spec_key(changed, "3.10.13")[1] != key
    assert compat.spec_key(env, "3.10.14")[1] != key
