"""The course's checks in the environments students actually have (``make compat``).

The lock (``requirements.txt``) is one environment; ``make test`` runs it. Two more:

* ``colab``: what Google Colab ships: Python 3.12, the newest torch the index has, numpy
  2.0, matplotlib 3.10, ipywidgets 7.7.1, scikit-learn 1.6.1 (Chapter 10's digits), and
  ``nqf_mini`` installed with ``--no-deps``,
  as the chapters' Colab install cell does. The unit tests, every chapter's explorer
  driven live in a kernel (``tests/chapters/test_live_explorers.py``) and nbval over
  every notebook (the stored outputs reproduced) run there.
* ``minimum``: Python 3.10 with every dependency of ``pyproject.toml`` at its declared
  floor (``numpy>=1.23`` becomes ``numpy==1.23``) and the ipywidgets and scikit-learn
  floors of the ``notebooks`` extra. The unit tests run there, and every notebook executes under
  another draw (``NQF_SEED=1``, ``scripts/run_seeds.py``: every assertion must hold)
  instead of nbval: the claims are checked on the oldest versions and on other random
  draws at once, the cheap CI schedule of ``make seeds``; what it gives up is the
  comparison of printed numbers with the stored ones on those oldest versions.

Both test the *installed* package: the tests, chapters and tooling are copied into the
session's work folder, away from the checkout's ``nqf_mini/``. The venvs live in
``.venv-compat/`` and are reused; ``nox --install-only`` prepares them (``.ci/run``
starts that first, in the background: a cold install downloads gigabytes), and
``nox -R`` runs the tests without installing. nox and uv have a venv of their own
(``.venv-compat/.tools``, the Makefile's), so that the compat venvs need not wait for the
main one. uv makes the venvs and installs into them (nox's ``uv`` backend): from a cold
cache both take about 37 s and 58 CPU-seconds on two cores (pip took 115 s and 210 when
both compiled every module), since uv unpacks each wheel once into its cache and links
the files into every venv.
Modules are byte-compiled as they are first imported, or at install where the test
processes write no bytecode (:data:`COMPILE`). uv never downloads an
interpreter here: a missing one skips its session with a message, and fails the run when
the environment variable ``CI`` is set (nox's own rule). ``NQF_TORCH_INDEX`` (e.g.
PyTorch's CPU wheel index, as the GitHub workflow sets) is where torch is installed from;
unset, the package index's own.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the tooling runs on the lock's Python 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent
nox.options.envdir = ".venv-compat"
nox.options.reuse_venv = "yes"
nox.options.default_venv_backend = "uv"
nox.options.download_python = "never"
nox.options.sessions = ["colab", "minimum"]

#: Test tools, unpinned: the newest that the index has for the interpreter.
TOOLS = [
    "pytest",
    "pytest-xdist",
    "nbval",
    "nbclient",
    "nbformat",
    "ipykernel",
    "setuptools>=77",
    "wheel",
]
#: pytest-xdist workers of each session's unit tests; 0 runs them in pytest's own process
#: (``.ci/run`` sets 0: its parts already keep both cores busy, and one worker adds about
#: 11 CPU-seconds of start, collection and reports).
JOBS = os.environ.get("NQF_COMPAT_JOBS", "2")
#: Notebooks executed at a time: each runs in its own kernel process, so a second costs
#: only its runner's start (a few CPU-seconds), and the last session's notebooks, often the
#: last part of a CI run to finish, keep both cores busy.
NOTEBOOK_JOBS = "2"
#: The packages whose versions each session prints.
SHOWN = [
    "torch",
    "numpy",
    "matplotlib",
    "ipywidgets",
    "scikit-learn",
    "ipykernel",
    "nbval",
    "pytest",
    "nqf_mini",
]
#: The notebooks the suite checks: the chapters and the notebook pages of book/.
NOTEBOOKS = ["chapters", *sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("book/*.ipynb"))]


def floors(root: Path = ROOT) -> list[str]:
    """Every runtime dependency at its declared floor, and the ipywidgets and
    scikit-learn floors of the notebooks extra: ``numpy>=1.23`` -> ``numpy==1.23``. A dependency
    without a floor is an error, since the minimum environment could not be defined."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    wanted += [
        Requirement(r)
        for r in project["optional-dependencies"]["notebooks"]
        if Requirement(r).name in ("ipywidgets", "scikit-learn")
    ]
    pinned = []
    for req in wanted:
        lows = [s.version for s in req.specifier if s.operator == ">="]
        if not lows:
            raise ValueError(f"pyproject.toml: {req} has no floor (>=)")
        pinned.append(f"{req.name}=={lows[0]}")
    return pinned


#: Where ``PYTHONDONTWRITEBYTECODE`` stops the test processes from writing bytecode, every
#: installed module is byte-compiled at install (as pip does by default), or each process
#: would compile torch again. Otherwise a module is compiled by the first process that
#: imports it: compiling all of them at install cost both venvs 43 of their 101
#: CPU-seconds (cold cache), for modules that mostly nothing imports; the ones the tests
#: import take about 8.
COMPILE = {"UV_COMPILE_BYTECODE": "1"} if os.environ.get("PYTHONDONTWRITEBYTECODE") else {}


def _install(session: nox.Session, requirements: list[str]) -> None:
    """The requirements (torch from ``NQF_TORCH_INDEX`` when set), then this checkout's
    ``nqf_mini`` with ``--no-deps``, as the Colab cell installs it."""
    index = os.environ.get("NQF_TORCH_INDEX")
    torch = [r for r in requirements if Requirement(r).name == "torch"]
    if index and torch:
        session.install(*torch, "--index-url", index, env=COMPILE)
    session.install(*requirements, env=COMPILE)
    # Built from the session's own copy of the sources: the two sessions install side by
    # side (-j 2), and two setuptools builds in one checkout collide in its build/ folder.
    src = Path(session.create_tmp()).resolve() / "src"
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(
        ROOT / "nqf_mini", src / "nqf_mini", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    session.install(
        "--no-deps",
        "--force-reinstall",
        "--no-build-isolation",
        f"nqf_mini @ {src.as_uri()}",
        env=COMPILE,
    )


def _work_copy(session: nox.Session) -> Path:
    """The tests, notebooks and tooling, copied where the checkout's ``nqf_mini/``
    cannot shadow the installed package; the session works there."""
    work = Path(session.create_tmp()) / "work"
    shutil.rmtree(work, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints")
    for name in ("tests", "chapters", "scripts", "notebooks"):
        shutil.copytree(ROOT / name, work / name, ignore=ignore)
    # the pages and the book's configuration, which tests read (not the web assets)
    shutil.copytree(
        ROOT / "book",
        work / "book",
        ignore=shutil.ignore_patterns("__pycache__", "vendor", "_static"),
    )
    for name in (
        "pyproject.toml",
        "_config.yml",
        "_toc.yml",
        "README.md",
        "CHANGELOG.md",
        "CITATION.cff",
        "LICENSE",
    ):
        shutil.copy2(ROOT / name, work / name)  # pyproject.toml: pytest's settings
    session.chdir(work)
    return work


def _environment(kernels: bool = False) -> dict[str, str]:
    """The variables of a test run; ``kernels``: one that executes notebooks, whose
    explorers then draw only their default frame (the unit tests draw every frame)."""
    frames = {"NQF_EXPLORER_FRAMES": "default"} if kernels else {}
    return {
        "NQF_DEVICE": "cpu",
        "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": "",
        **frames,
    }


def _report(session: nox.Session) -> None:
    """Print the versions in use, and refuse a checkout that shadows the package."""
    code = (
        "import importlib.metadata as m, platform, nqf_mini\n"
        f"names = {SHOWN!r}\n"
        "def v(n):\n"
        "    try: return m.version(n)\n"
        "    except m.PackageNotFoundError: return '-'\n"
        "print('python', platform.python_version(), *(f'{n} {v(n)}' for n in names))\n"
        f"assert {str(ROOT / 'nqf_mini')!r} not in nqf_mini.__file__, nqf_mini.__file__"
    )
    session.run("python", "-c", code, env=_environment())


def _prepare(session: nox.Session, requirements: list[str]) -> None:
    """Install ``requirements`` and the test tools, copy the work folder, print the
    versions, and run the unit tests against the installed package."""
    _install(session, [*requirements, *TOOLS])
    _work_copy(session)
    _report(session)
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/unit",
        "-q",
        "-n",
        JOBS,
        "--dist",
        "loadfile",
        env=_environment(),
    )


def _timeout(seconds: int) -> str:
    from scripts.timeouts import scaled

    return str(scaled(seconds))


@nox.session(python="3.12", allow_parallel=True)
def colab(session: nox.Session) -> None:
    """Colab-like: Python 3.12, newest torch, numpy 2.0, matplotlib 3.10, ipywidgets
    7.7.1, scikit-learn 1.6.1, nqf_mini --no-deps: the unit tests, every chapter's
    explorer live in a kernel, and nbval over every notebook."""
    _prepare(
        session,
        ["torch", "numpy==2.0.2", "matplotlib==3.10.0", "ipywidgets==7.7.1", "scikit-learn==1.6.1"],
    )
    # Every chapter's explorer live in a kernel under Colab's ipywidgets 7.7.1: each
    # control moved as Colab's front end moves it, the figure redrawn by draw.
    session.run(
        "python", "-m", "pytest", "tests/chapters/test_live_explorers.py", "-q", env=_environment()
    )
    session.run(
        "python",
        "-m",
        "pytest",
        "--nbval",
        "-p",
        "tests.nbval_kernel",
        "--nbval-current-env",
        "--nbval-sanitize-with",
        "tests/nbval_sanitize.cfg",
        f"--nbval-cell-timeout={_timeout(120)}",
        f"--nbval-kernel-startup-timeout={_timeout(60)}",
        "-n",
        NOTEBOOK_JOBS,
        "--dist",
        "loadfile",
        *NOTEBOOKS,
        "-q",
        env=_environment(kernels=True),
    )


@nox.session(python="3.10", allow_parallel=True)
def minimum(session: nox.Session) -> None:
    """Minimum: Python 3.10, every dependency at its declared floor: the unit tests,
    and every notebook executed under NQF_SEED=1 (its assertions must hold)."""
    _prepare(session, floors())
    session.run(
        "python",
        "-m",
        "scripts.run_seeds",
        "--shifts",
        "1",
        "--jobs",
        NOTEBOOK_JOBS,
        "--timeout",
        _timeout(600),
        env=_environment(kernels=True),
    )
