"""Run the course's checks in the environments students actually have (``make compat``).

The lock (``requirements.txt``) is one environment. Two others matter:

* ``colab``: what Google Colab ships: Python 3.12, the newest torch pip gives, numpy
  2.x, matplotlib 3.10, ipywidgets 7.7.1, scikit-learn 1.6.1, and ``nqf_mini`` installed
  with ``--no-deps``,
  exactly as the chapters' Colab install cell does;
* ``minimum``: Python 3.10 with every dependency of ``pyproject.toml`` at its declared
  floor (``numpy>=X`` becomes ``numpy==X``), plus the floors of ipywidgets and
  scikit-learn from the ``notebooks`` extra.
 In each, the package's unit tests (``tests/unit``) and nbval over every chapter (the
stored outputs reproduced, with the sanitizer of ``make nbval``) run against the
*installed* package: the tests and chapters are copied into the venv's work folder, away
from the checkout's ``nqf_mini/``. The versions used are printed.
The environments run side by side (on 2 cores this halves the wall time), each writing
its test output to ``.venv-compat/NAME-tests.log``, whose end is printed when a run
fails.

The venvs live in ``.venv-compat/NAME-HASH`` (ignored by git), keyed by a hash of the
interpreter version and the requirement list, and are reused while that key is
unchanged, so a warm run installs nothing but ``nqf_mini``. An environment whose
interpreter is not on this machine is skipped with a message saying which one is missing
(it is looked for as ``pythonX.Y`` on the PATH, then under ``pyenv root``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / ".venv-compat"
SPEC_FILE = ".spec.json"
# : Test tools, unpinned: the newest that pip finds for the interpreter when the venv is
# made.
TOOLS = ["pytest", "nbval", "ipykernel", "setuptools>=64", "wheel"]
SHOWN = [
    "torch",
    "numpy",
    "matplotlib",
    "matplotlib-inline",
    "ipywidgets",
    "ipykernel",
    "ipython",
    "nbval",
    "pytest",
    "nqf_mini",
]
NBVAL = [
    "--nbval",
    "--nbval-current-env",
    "--nbval-sanitize-with",
    "tests/nbval_sanitize.cfg",
    "-p",
    "no:randomly",
    "chapters",
    "-q",
]


@dataclass
class Environment:
    """One environment: its name, Python version, requirements and what it stands for.
    """

    name: str
    python: str
    requirements: list[str]
    about: str
    interpreter: str | None = None
    results: dict[str, str] = field(default_factory=dict)


def _dependencies(text: str, table: str, key: str) -> list[str]:
    """The quoted requirement strings of ``key = [...]`` under ``[table]`` of
    pyproject.toml."""
    section = text.split(f"[{table}]", 1)[1].split("\n[", 1)[0]
    match = re.search(rf"^{re.escape(key)}\s*=\s*\[(.*?)\]", section, re.M | re.S)
    if not match:
        raise ValueError(f"pyproject.toml: no {key} in [{table}]")
    return re.findall(r'"([^"]+)"', match.group(1))


def floors(root: Path = ROOT) -> list[str]:
    """Every runtime dependency at its declared floor, and the ipywidgets floor of the
    notebooks.

    ``numpy>=1.23`` -> ``numpy==1.23``; a dependency without a floor is an error, since
    the minimum environment could not be defined.
    """
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    wanted = _dependencies(text, "project", "dependencies")
    wanted += [
        r
        for r in _dependencies(text, "project.optional-dependencies", "notebooks")
        if r.startswith(("ipywidgets", "scikit-learn"))
    ]
    pinned = []
    for requirement in wanted:
        match = re.fullmatch(
            r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][^,;\s]*)\s*(?:,.*)?", requirement
        )
        if not match:
            raise ValueError(f"pyproject.toml: {requirement!r} has no floor (>=)")
        pinned.append(f"{match.group(1)}=={match.group(2)}")
    return pinned


def environments(root: Path = ROOT) -> list[Environment]:
    return [
        Environment(
            "colab",
            "3.12",
            ["torch", "numpy==2.0.2", "matplotlib==3.10.0", "ipywidgets==7.7.1",
             "scikit-learn==1.6.1"]
            + TOOLS,
            "Colab-like: Python 3.12, newest torch, numpy 2.0, matplotlib 3.10, "
            "ipywidgets 7.7.1, scikit-learn 1.6.1, nqf_mini --no-deps",
        ),
        Environment(
            "minimum",
            "3.10",
            floors(root) + TOOLS,
            "minimum: Python 3.10, every dependency at its declared floor",
        ),
    ]


# --- interpreters
# ---------------------------------------------------------------------------------


def _version_of(exe: str) -> str | None:
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def find_interpreter(version: str) -> tuple[str | None, list[str]]:
    """(path of a Python ``version`` interpreter or None, the places looked at)."""
    looked = []
    candidates = []
    on_path = shutil.which(f"python{version}")
    looked.append(f"python{version} on the PATH")
    if on_path:
        candidates.append(on_path)
    roots = [os.environ.get("PYENV_ROOT", "")]
    pyenv = shutil.which("pyenv")
    if pyenv:
        out = subprocess.run([pyenv, "root"], capture_output=True, text=True)
        roots.append(out.stdout.strip())
    for root in dict.fromkeys(r for r in roots if r):
        looked.append(f"{root}/versions/{version}.*")
        found = sorted(
            Path(root, "versions").glob(f"{version}.*/bin/python{version}"),
            key=lambda p: [int(x) for x in re.findall(r"\d+", p.parent.parent.name)],
        )
        candidates += [str(p) for p in reversed(found)]
    for exe in candidates:  # a pyenv shim may exist yet refuse to run
        full = _version_of(exe)
        if full and full.rsplit(".", 1)[0] == version:
            return exe, looked
    return None, looked


# --- venvs
# --------------------------------------------------------------------------------------


def _run(
    cmd: list[str],
    cwd: Path | None = None,
    env: dict | None = None,
    log: Path | None = None,
) -> int:
    """Run a command, its output to the terminal (or appended to ``log``); its exit
    status."""
    print("  $", " ".join(str(c) for c in cmd), flush=True)
    if log is None:
        return subprocess.run(cmd, cwd=cwd, env=env).returncode
    with log.open("a") as handle:
        return subprocess.run(
            cmd, cwd=cwd, env=env, stdout=handle, stderr=subprocess.STDOUT
        ).returncode


def spec_key(env: Environment, full_version: str) -> tuple[dict, str]:
    spec = {"python": full_version, "requirements": env.requirements}
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return spec, digest


def prepare(env: Environment) -> Path | None:
    """The venv of ``env``, made (cold) or reused (warm); None if its install failed."""
    full = _version_of(env.interpreter or "") or "?"
    spec, digest = spec_key(env, full)
    venv = HOME / f"{env.name}-{digest}"
    marker = venv / SPEC_FILE
    for old in HOME.glob(f"{env.name}-*"):
        if old != venv:
            print(f"  removing {old.name} (its spec changed)")
            shutil.rmtree(old, ignore_errors=True)
    if marker.is_file():
        env.results["venv"] = "reused"
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    HOME.mkdir(exist_ok=True)
    env.results["venv"] = "made"
    python = str(venv / "bin" / "python")
    log = venv.parent / f"{env.name}-install.log"
    log.unlink(missing_ok=True)
    steps = [
        [env.interpreter, "-m", "venv", str(venv)],
        [python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
        [python, "-m", "pip", "install", "--quiet", *env.requirements],
    ]
    for step in steps:
        if _run(step, log=log) != 0:
            print(f"  install failed; see {log.relative_to(ROOT)}")
            print(log.read_text()[-3000:])
            return None
    marker.write_text(json.dumps(spec, indent=1) + "\n")
    return venv


def install_package(venv: Path) -> int:
    """``nqf_mini`` from this checkout with ``--no-deps``, as the Colab cell installs
    it."""
    return _run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--force-reinstall",
            "--no-build-isolation",
            f"nqf_mini @ {ROOT.as_uri()}",
        ]
    )


def work_copy(venv: Path) -> Path:
    """The tests and chapters, copied where the checkout's ``nqf_mini/`` cannot shadow
    the
    installed package."""
    work = venv / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints")
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    shutil.copytree(ROOT / "chapters", work / "chapters", ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")  # pytest's settings
    return work


def versions(venv: Path) -> dict[str, str]:
    code = (
        "import json, platform, importlib.metadata as m\n"
        f"names = {SHOWN!r}\n"
        "out = {'python': platform.python_version()}\n"
        "for n in names:\n"
        "    try: out[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: out[n] = '-'\n"
        "print(json.dumps(out))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True
    )
    return json.loads(out.stdout) if out.returncode == 0 else {}


def check(env: Environment) -> bool:
    """Prepare the venv of ``env`` and run the unit tests and nbval in it; True if all
    pass."""
    start = time.perf_counter()
    venv = prepare(env)
    if venv is None:
        env.results["status"] = "FAILED (install)"
        return False
    if install_package(venv) != 0:
        env.results["status"] = "FAILED (installing nqf_mini)"
        return False
    env.results["setup_s"] = f"{time.perf_counter() - start:.0f}"
    shown = versions(venv)
    env.results["versions"] = ", ".join(f"{k} {v}" for k, v in shown.items())
    print(f"  [{env.name}] versions: " + env.results["versions"], flush=True)
    work = work_copy(venv)
    python = str(venv / "bin" / "python")
    run_env = {
        **os.environ,
        "NQF_DEVICE": "cpu",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    run_env.pop("PYTHONPATH", None)
    where = subprocess.run(
        [python, "-c", "import nqf_mini; print(nqf_mini.__file__)"],
        cwd=work,
        env=run_env,
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"  [{env.name}] nqf_mini imported from {where}")
    if str(ROOT / "nqf_mini") in where:
        env.results["status"] = "FAILED (the checkout shadows the installed package)"
        return False
    ok = True
    log = HOME / f"{env.name}-tests.log"
    log.unlink(missing_ok=True)
    for label, args in (
        ("unit", ["tests/unit", "-q", "-p", "no:randomly"]),
        ("nbval", NBVAL),
    ):
        t0 = time.perf_counter()
        code = _run([python, "-m", "pytest", *args], cwd=work, env=run_env, log=log)
        env.results[f"{label}_s"] = f"{time.perf_counter() - t0:.0f}"
        env.results[label] = "passed" if code == 0 else f"FAILED (exit {code})"
        if code != 0:
            print(f"  [{env.name}] {label} failed; the end of {log.relative_to(ROOT)}:")
            print(log.read_text()[-6000:], flush=True)
        ok &= code == 0
    env.results["total_s"] = f"{time.perf_counter() - start:.0f}"
    env.results["status"] = "passed" if ok else "FAILED"
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="environments to run (default: all)")
    parser.add_argument(
        "--list", action="store_true", help="print the environments and exit"
    )
    args = parser.parse_args()
    chosen = [e for e in environments() if not args.names or e.name in args.names]
    if args.list:
        for env in chosen:
            print(f"{env.name}: Python {env.python}: {' '.join(env.requirements)}")
        return 0
    start = time.perf_counter()
    runnable = []
    for env in chosen:
        print(f"== {env.about}", flush=True)
        env.interpreter, looked = find_interpreter(env.python)
        if env.interpreter is None:
            env.results["status"] = (
                f"SKIPPED: no Python {env.python} interpreter on this "
                f"machine (looked for {'; '.join(looked)})"
            )
            print("  " + env.results["status"], flush=True)
            continue
        print(f"  interpreter: {env.interpreter}")
        runnable.append(env)
    # The environments run side by side (each chapter's kernel is mostly one busy
    # thread), their test output in .venv-compat/NAME-tests.log: on 2 cores this halves
    # the wall time of the two nbval runs.
    with concurrent.futures.ThreadPoolExecutor(max(1, len(runnable))) as pool:
        failed = not all(pool.map(check, runnable))
    print(f"\n== make compat: {time.perf_counter() - start:.0f} s in all")
    for env in chosen:
        r = env.results
        print(f"{env.name:8} {r.get('status', '?')}")
        if "versions" in r:
            print(f"         {r['versions']}")
            print(
                f"         venv {r['venv']}; setup {r.get('setup_s', '?')} s, "
                f"unit tests {r.get('unit_s', '?')} s ({r.get('unit', '?')}), nbval "
                f"{r.get('nbval_s', '?')} s ({r.get('nbval', '?')})"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
