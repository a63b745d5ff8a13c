"""The sandbox a student's code runs in when ``make grade`` grades it (bubblewrap).

Each grading kernel (:mod:`nqf_mini.course.grading_kernel`) is a Python process started
by ``bwrap`` (Debian's package ``bubblewrap``) in namespaces of its own:

* a new PID namespace, killed as a whole when the kernel ends or the grader stops it
  (``--die-with-parent``): a ``fork`` + ``setsid`` grandchild dies with it;
* no network (a network namespace with only its own loopback), a new IPC and UTS
  namespace, a user namespace in which it holds no capability and may not make another
  (``--disable-userns``), and a new session (no terminal to push keys into);
* a file system of its own: the Python interpreter, the virtual environment and a staged
  copy of the package, all read-only; a private ``/tmp`` and home, each a size-limited
  tmpfs; ``/proc`` of its own namespace. Not the class folder, not the repository, not
  the grader's files: the notebook arrives through the kernel's pipe and is written
  into the private home;
* a scrubbed environment (:data:`KERNEL_ENV`, nothing of the grader's);
* limits (:class:`Limits`) on CPU seconds, address space, processes, open files and
  file size, set by the kernel before it reads anything from the grader.

When the grader runs as root, the kernel does not: bwrap runs as uid 65534 (``nobody``),
so the kernel is an unprivileged user outside its namespaces too and cannot signal,
read or write anything of root's. A privileged, mount-only bwrap with a PID namespace
of its own holds that one (so that everything dies with the grader) and re-exposes the
directories uid 65534 cannot enter, such as a Python under ``/root``.

The grader talks to a kernel through two pipes, one message at a time (:meth:`Kernel.
request`): what comes back is read with a size limit and ``torch.load(weights_only=
True)``, which builds tensors, numbers, strings and containers of those and nothing
else. A kernel that uses its CPU seconds, stops computing for ``idle_seconds`` (asleep,
waiting) or outlives the wall-clock backstop is killed: :class:`KernelTimeout`; one that
dies or answers garbage: :class:`KernelFailure`. Time is counted in CPU seconds so that
a loaded machine does not turn correct work into a timeout.

``unsafe=True`` runs the kernel as a plain process with the same limits and environment
but none of the isolation, for machines without user namespaces; ``make grade`` refuses
it unless the teacher passes ``--unsafe``.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .grading_kernel import HEADER, pack, unpack

#: The uid and gid a kernel runs as when the grader is root (``nobody``).
SANDBOX_UID = 65534
#: Where the staged package is mounted in the sandbox, and the kernel's home.
SITE = "/opt/nqf"
HOME = "/home/student"
#: The kernel's whole environment.
KERNEL_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": HOME,
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "NQF_DEVICE": "cpu",
    "NQF_EXPLORER_FRAMES": "default",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": "/tmp/matplotlib",
    "PYTHONDONTWRITEBYTECODE": "1",
}


class SandboxError(Exception):
    """Base of the grader's sandbox errors."""


class SandboxUnavailable(SandboxError):
    """This machine cannot run the sandbox; the message says why."""


class KernelTimeout(SandboxError):
    """The kernel used its CPU seconds, stopped computing, or outlived the backstop."""


class KernelFailure(SandboxError):
    """The kernel died, or its reply could not be read."""


@dataclass(frozen=True)
class Limits:
    """What one grading kernel may use.

    ``cpu_seconds``: CPU time of each of its processes (``RLIMIT_CPU``), for the
    notebook and the probes of its answers together; ``idle_seconds``: wall-clock
    seconds it may wait without computing; ``wall_seconds``: the backstop (default ten
    times the CPU seconds, plus a minute). ``memory_mb``: address space per process;
    ``processes``: processes and threads in its namespace; ``file_size_mb``: the largest
    file it may write (its ``/tmp`` and its home hold four times that each);
    ``reply_mb``: the largest reply the grader reads.
    """

    cpu_seconds: float = 120.0
    idle_seconds: float = 60.0
    wall_seconds: float | None = None
    memory_mb: int = 4096
    processes: int = 64
    open_files: int = 256
    file_size_mb: int = 64
    reply_mb: int = 64

    def __post_init__(self) -> None:
        for name in (
            "cpu_seconds",
            "idle_seconds",
            "memory_mb",
            "processes",
            "open_files",
            "file_size_mb",
            "reply_mb",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(
                    f"argument `{name}`: expected a positive number, got {getattr(self, name)!r}"
                )

    @property
    def backstop(self) -> float:
        """Wall-clock seconds after which a kernel is stopped whatever it does."""
        if self.wall_seconds is not None:
            return self.wall_seconds
        return 10 * self.cpu_seconds + 60

    def rlimits(self) -> dict[str, int]:
        """The resource limits the kernel sets on itself (names of :mod:`resource`)."""
        cpu = int(self.cpu_seconds + 0.999)
        return {
            "RLIMIT_CPU": cpu,
            "RLIMIT_AS": self.memory_mb * 2**20,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_FSIZE": self.file_size_mb * 2**20,
            "RLIMIT_CORE": 0,
        }


# --- the staged package ---------------------------------------------------------------

#: Modules of the package that the notebook kernel does not get: the checks' oracles
#: and hidden cases, and the grader itself.
GRADER_ONLY = (
    "checks_ch*.py",
    "feedback.py",
    "grade.py",
    "grade_notebook.py",
    "gradebook.py",
    "points.py",
    "notebook_slice.py",
    "rubrics.py",
)

CHECK_STUB = '''"""``check.exercise`` while a notebook is graded: the grader judges the
answers outside this sandbox, so the self-check only says so (and lets the notebook
go on)."""

from typing import Any

from .registry import CHECKS, CheckResult

MESSAGE = "not checked here: the grader judges this answer outside the sandbox"


def exercise(label: str, answer: Any, *, quiet: bool = False) -> CheckResult:
    return CheckResult(True, MESSAGE)
'''

ANSWER_PACKAGE = '''"""nqf_mini as an answer sees it while it is graded: the helpers an
answer may use, and nothing that computes what an exercise asks. Every other name is a
function that refuses to run."""

import importlib.abc
import importlib.machinery
import sys
import types

{imports}

REFUSED = {refused!r}


def _refusal(name):
    def refused(*args, **kwargs):
        raise PermissionError(REFUSED + name)

    refused.__qualname__ = refused.__name__ = name.rsplit(".", 1)[-1]
    return refused


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _refusal(f"nqf_mini.{{name}}")


class _Refusing(importlib.abc.Loader, importlib.abc.MetaPathFinder):
    """Any other module of the package is a module of refusals."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("nqf_mini.") and fullname not in {kept!r}:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []

        def getattr_(name, _prefix=spec.name):
            if name.startswith("__"):
                raise AttributeError(name)
            return _refusal(f"{{_prefix}}.{{name}}")

        module.__getattr__ = getattr_
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Refusing())
'''


@dataclass(frozen=True)
class StagedPackage:
    """Read-only copies of the package for the two kernels, made once per class.

    ``notebook``: the science and the course's presentation modules, without the
    checks (oracles, hidden cases) and the grader, ``check.exercise`` a stub; what a
    notebook imports. ``answers``: only what an answer may call
    (:data:`~nqf_mini.course.answers.ALLOWED_MODULES`), every other name of the
    package a refusal (:data:`~nqf_mini.course.grading_kernel.REFUSED`), and the
    kernel; the source of the package's other functions is not in that sandbox at all.
    """

    root: Path

    @property
    def notebook(self) -> Path:
        return self.root / "notebook"

    @property
    def answers(self) -> Path:
        return self.root / "answers"


def stage_package(root: Path) -> StagedPackage:
    """Write both copies of the package under ``root`` (byte-compiled,
    world-readable)."""
    import compileall

    from . import answers as answers_module
    from .answers import REFUSED

    source = Path(__file__).resolve().parents[1]
    staged = StagedPackage(root)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", *GRADER_ONLY)
    shutil.copytree(source, staged.notebook / "nqf_mini", ignore=ignore)
    (staged.notebook / "nqf_mini" / "course" / "check.py").write_text(CHECK_STUB)

    pkg = staged.answers / "nqf_mini"
    (pkg / "course").mkdir(parents=True)
    kept = ["nqf_mini.course"]
    for name in sorted(answers_module.ALLOWED_MODULES):
        shutil.copy(source / name, pkg / name)
        kept.append(f"nqf_mini.{name[:-3]}")
    for name in ("__init__.py", "answers.py", "registry.py", "grading_kernel.py"):
        shutil.copy(source / "course" / name, pkg / "course" / name)
        kept.append(f"nqf_mini.course.{name[:-3]}")
    (pkg / "__init__.py").write_text(
        ANSWER_PACKAGE.format(imports=_allowed_imports(), refused=REFUSED, kept=tuple(sorted(kept)))
    )
    for tree in (staged.notebook, staged.answers):
        compileall.compile_dir(tree, quiet=2, workers=1)
        for path in [tree, *tree.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    root.chmod(0o755)
    return staged


def _allowed_imports() -> str:
    """``from .blocks import offdiag`` lines: the public names the allowed modules give
    ``nqf_mini``."""
    import nqf_mini

    from .answers import ALLOWED_MODULES

    allowed = {f"nqf_mini.{name[:-3]}" for name in ALLOWED_MODULES}
    lines = []
    for name in sorted(nqf_mini.__all__):
        module = getattr(getattr(nqf_mini, name), "__module__", None)
        if module in allowed:
            lines.append(f"from .{module.split('.')[-1]} import {name}")
    return "\n".join(lines)


# --- starting bubblewrap --------------------------------------------------------------


def _python_dirs() -> list[str]:
    """The directories the interpreter and the virtual environment live in."""
    dirs = {
        os.path.realpath(sys.prefix),
        os.path.realpath(sys.base_prefix),
        os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
    }
    return sorted(dirs)


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime"):
        if os.path.exists(f"/etc/{name}"):
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return args


def _untraversable(path: str) -> str | None:
    """The first directory above ``path`` that others may not enter, or None."""
    parts = Path(path).parts
    for k in range(2, len(parts) + 1):
        ancestor = str(Path(*parts[:k]))
        mode = os.stat(ancestor).st_mode
        if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return ancestor
    return None


def bwrap_command(site: Path, limits: Limits, argv: list[str]) -> list[str]:
    """The command line that runs ``argv`` in the sandbox (see the module docstring)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed")
    tmp_size = str(limits.file_size_mb * 2**20 * 4)
    inner = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--cap-drop",
        "ALL",
        *_system_binds(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        tmp_size,
        "--tmpfs",
        "/tmp",
        "--size",
        tmp_size,
        "--tmpfs",
        HOME,
        "--ro-bind",
        str(site),
        SITE,
    ]
    sources = _python_dirs() + [str(site)]
    for path in _python_dirs():
        inner += ["--ro-bind", path, path]
    for key, value in KERNEL_ENV.items():
        inner += ["--setenv", key, value]
    inner += ["--chdir", HOME, "--", *argv]
    if os.geteuid() != 0:
        return inner
    # Root: the kernel runs as an unprivileged uid, outside its namespaces too. A
    # privileged, mount-only bwrap with a PID namespace of its own holds the rest: when
    # it dies (with the grader), the kernel's namespace, nested in its own, dies too
    # (a root parent's death does not reach an unprivileged bwrap's --die-with-parent),
    # and it re-exposes the directories that uid could not enter (a Python under /root).
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise SandboxUnavailable("setpriv (util-linux) is needed to drop root")
    drop = [
        setpriv,
        f"--reuid={SANDBOX_UID}",
        f"--regid={SANDBOX_UID}",
        "--clear-groups",
        "--inh-caps=-all",
        "--no-new-privs",
        "--",
    ]
    outer = [bwrap, "--die-with-parent", "--unshare-pid", "--dev-bind", "/", "/"]
    hidden = sorted({a for s in sources if (a := _untraversable(s)) is not None})
    for ancestor in hidden:
        outer += ["--tmpfs", ancestor]
        for source in sources:
            if source == ancestor or source.startswith(ancestor + os.sep):
                between = Path(source).relative_to(ancestor).parents
                for part in sorted(str(Path(ancestor) / d) for d in between)[1:]:
                    outer += ["--perms", "0755", "--dir", part]
                outer += ["--ro-bind", source, source]
    return outer + ["--", *drop, *inner]


def bwrap_problem(site: Path | None = None) -> str | None:
    """None when the sandbox works on this machine; else what stops it, in words."""
    if shutil.which("bwrap") is None:
        return (
            "bubblewrap is not installed (Debian/Ubuntu: `apt-get install bubblewrap`; "
            "`make grade` installs it when it runs as root)"
        )
    with tempfile.TemporaryDirectory(prefix="nqf-probe-") as tmp:
        Path(tmp).chmod(0o755)
        try:
            cmd = bwrap_command(
                Path(site or tmp), Limits(), [sys.executable, "-I", "-c", "print('ok')"]
            )
            run = subprocess.run(cmd, capture_output=True, timeout=60, text=True)
        except (OSError, subprocess.SubprocessError, SandboxUnavailable) as exc:
            return f"bubblewrap could not start: {exc}"
    if run.returncode != 0 or run.stdout.strip() != "ok":
        tail = (run.stderr.strip().splitlines() or ["no message"])[-1]
        return (
            f"bubblewrap cannot make the sandbox here ({tail}); user namespaces may "
            f"be disabled (sysctl kernel.unprivileged_userns_clone, or an AppArmor "
            f"policy)"
        )
    return None


# --- one kernel -----------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid``, parents before children (read from /proc)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop(0)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                kids = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            except OSError:
                continue
            for kid in map(int, kids):
                if kid not in found:
                    found.append(kid)
                    queue.append(kid)
    return found


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (all its threads), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Kernel:
    """One grading kernel in its sandbox; :meth:`request` sends a message and returns
    the reply.

    ``mode`` is ``"notebook"`` or ``"answers"``
    (:mod:`~nqf_mini.course.grading_kernel`), ``site`` the staged copy of the package
    it imports.
    """

    _live: set[Kernel] = set()
    _live_lock = threading.Lock()
    stopping = threading.Event()

    @classmethod
    def stop_all(cls) -> None:
        """Kill every kernel still running and start no new one (Ctrl-C); the threads
        that talk to them see them die and clean up."""
        cls.stopping.set()
        with cls._live_lock:
            kernels = list(cls._live)
        for kernel in kernels:
            kernel.kill()

    def kill(self) -> None:
        """Kill the sandbox now: bwrap and every process below it (the namespaces die
        with their first process; in the unsafe mode, its process group)."""
        for pid in [self.proc.pid, *_descendants(self.proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self._workdir is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def __init__(self, mode: str, site: Path, limits: Limits, unsafe: bool = False) -> None:
        if Kernel.stopping.is_set():
            raise KernelFailure("grading was stopped")
        self.limits = limits
        self.started = time.monotonic()
        boot = (
            f"import sys; sys.path.insert(0, {SITE if not unsafe else str(site)!r}); "
            "from nqf_mini.course.grading_kernel import main; main(sys.argv[1:])"
        )
        argv = [sys.executable, "-I", "-c", boot, mode, json.dumps(limits.rlimits())]
        to_kernel, self._to = os.pipe()
        self._from, from_kernel = os.pipe()
        stderr = tempfile.TemporaryFile()
        self._workdir: str | None = None
        try:
            if unsafe:
                self._workdir = tempfile.mkdtemp(prefix="nqf-unsafe-")
                env = {**KERNEL_ENV, "HOME": self._workdir, "TMPDIR": self._workdir}
                self.proc = subprocess.Popen(
                    argv,
                    stdin=to_kernel,
                    stdout=from_kernel,
                    stderr=stderr,
                    cwd=self._workdir,
                    env=env,
                    start_new_session=True,
                )
                self.pid: int | None = self.proc.pid
            else:
                cmd = bwrap_command(site, limits, argv)
                self.proc = subprocess.Popen(
                    cmd,
                    stdin=to_kernel,
                    stdout=from_kernel,
                    stderr=stderr,
                    env={"PATH": os.environ.get("PATH", "")},
                )
                self.pid = None
        finally:
            os.close(to_kernel)
            os.close(from_kernel)
        self._stderr = stderr
        self._cpu = 0.0
        self._progress = time.monotonic()
        self.closed = False
        self._clean = True  # no request in flight, none failed
        with Kernel._live_lock:
            Kernel._live.add(self)

    # -- reading, with the limits --

    def _kernel_pid(self) -> int | None:
        """The kernel process's pid (outside its namespaces): the first process below
        bwrap that runs the grading kernel."""
        if self.pid is None:
            for pid in _descendants(self.proc.pid):
                try:
                    args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if args[0] == sys.executable.encode() and b"grading_kernel" in args[3]:
                    self.pid = pid
                    break
        return self.pid

    def cpu_seconds(self) -> float:
        """CPU seconds the kernel process has used so far (the last value read)."""
        pid = self._kernel_pid()
        cpu = _cpu_seconds(pid) if pid is not None else None
        if cpu is not None:
            self._cpu = max(self._cpu, cpu)
        return self._cpu

    def _wait(self, fd: int, event: int) -> None:
        """Wait until ``fd`` is ready for ``event``, within the limits (see the
        class)."""
        poller = select.poll()
        poller.register(fd, event | select.POLLHUP | select.POLLERR)
        while True:
            if poller.poll(500):
                return
            now = time.monotonic()
            cpu = self._cpu
            if self.cpu_seconds() > cpu:
                self._progress = now
            if self._cpu >= self.limits.cpu_seconds:
                raise KernelTimeout(f"used its {self.limits.cpu_seconds:g} CPU seconds")
            if now - self._progress > self.limits.idle_seconds:
                raise KernelTimeout(
                    f"computed nothing for {self.limits.idle_seconds:g} s (asleep or waiting)"
                )
            if now - self.started > self.limits.backstop:
                raise KernelTimeout(
                    f"ran past the wall-clock backstop of {self.limits.backstop:g} s"
                )
            if self.proc.poll() is not None:
                raise self._stopped()

    def _read_exactly(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            self._wait(self._from, select.POLLIN)
            chunk = os.read(self._from, min(left, 2**20))
            if not chunk:
                raise self._stopped()
            chunks.append(chunk)
            left -= len(chunk)
            self._progress = time.monotonic()
        return b"".join(chunks)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            self._wait(self._to, select.POLLOUT)
            try:
                view = view[os.write(self._to, view[: 2**16]) :]
            except OSError:  # the kernel closed its end: it is gone
                raise self._stopped() from None

    def _stopped(self) -> SandboxError:
        """Why the kernel stopped answering: KernelTimeout or KernelFailure."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        if (
            self._cpu >= self.limits.cpu_seconds - 1
            or code in (-signal.SIGXCPU, 128 + signal.SIGXCPU, -signal.SIGKILL)
            and self._cpu >= self.limits.cpu_seconds / 2
        ):
            return KernelTimeout(f"used its {self.limits.cpu_seconds:g} CPU seconds")
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - 2000))
        tail = self._stderr.read().decode(errors="replace").strip().splitlines()
        detail = f": {tail[-1]}" if tail else ""
        return KernelFailure(f"the kernel stopped (exit status {code}){detail}"[:300])

    def request(self, message: dict[str, Any]) -> Any:
        """Send ``message``; the kernel's reply, as plain data.

        Raises KernelTimeout or KernelFailure; after either the kernel is closed.
        """
        if self.closed:
            raise KernelFailure("the kernel was stopped")
        self._progress = time.monotonic()
        self._clean = False
        try:
            self._write_all(pack(message))
            (size,) = HEADER.unpack(self._read_exactly(HEADER.size))
            if size > self.limits.reply_mb * 2**20:
                raise KernelFailure(
                    f"its reply has {size / 2**20:.0f} MB, more than the limit of "
                    f"{self.limits.reply_mb} MB"
                )
            reply = unpack(self._read_exactly(size))
            self._clean = True
            return reply
        except SandboxError:
            self.close()
            raise
        except Exception as exc:
            # Anything unreadable is the kernel's failure.
            self.close()
            raise KernelFailure(f"its reply could not be read ({type(exc).__name__})") from None

    def close(self) -> None:
        """Stop the kernel and everything it started (its namespace dies with it):
        politely first (so that its CPU time is accounted to the grader), then by
        force."""
        if self.closed:
            return
        self.closed = True
        with Kernel._live_lock:
            Kernel._live.discard(self)
        if self.proc.poll() is None and self._clean:
            try:
                os.write(self._to, pack({"op": "exit"}))
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            self.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for fd in (self._to, self._from):
            try:
                os.close(fd)
            except OSError:
                pass
        self._stderr.close()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
