"""The grading kernels: the processes that run a student's code inside the sandbox.

Started by :class:`nqf_mini.course.sandbox.Kernel`, one at a time per notebook, as
``python -I -c ... MODE LIMITS``; each sets its resource limits (:func:`set_limits`)
before it reads anything, then answers the grader's messages on its pipe, one reply per
message (:func:`pack` / :func:`unpack`: a length and ``torch.save`` bytes, read back
with ``weights_only=True``).

``notebook`` mode runs the student's notebook: ``{"op": "run", "cells": [(index,
source), ...], ...}`` executes the given code cells in one namespace, as Jupyter would
(IPython syntax such as ``%time`` translated; what the cells print goes nowhere; a
failing cell is recorded and the next one runs). ``{"op": "describe", "expr": ...}``
then says what an exercise's answer is: a value is sent as plain data
(:func:`~nqf_mini.course.answers.plain`), a function as ``cloudpickle`` bytes, for the
other kernel. The package this kernel imports has no checks, no oracles and no hidden
cases (:func:`~nqf_mini.course.sandbox.stage_package`).

``answers`` mode calls the functions: ``{"op": "load", ...}`` unpickles one, ``{"op":
"call", ...}`` calls it on the grader's inputs through
:func:`~nqf_mini.course.answers.run` and sends back the plain result. Its package holds
only the helpers an answer may use: every other name of ``nqf_mini`` is a function that
raises ``PermissionError(REFUSED + name)``, which :func:`~nqf_mini.course.answers.run`
reports as a refused call. So "an answer may not call the package function that
computes it" holds however the call is made (a thread, ``sys.modules``, a name built
from pieces): that function is not in the process, nor its source in the sandbox.

Nothing here decides a verdict; the grader judges what comes back, in its own process.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import struct
import sys
from typing import Any

#: The length prefix of every message.
HEADER = struct.Struct("<Q")


def pack(obj: Any) -> bytes:
    """``obj`` (plain data: tensors, numbers, strings, bytes, containers) as one
    message."""
    import torch

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    payload = buffer.getvalue()
    return HEADER.pack(len(payload)) + payload


def unpack(payload: bytes) -> Any:
    """The plain data of a message's payload (``torch.load(weights_only=True)``)."""
    import torch

    return torch.load(io.BytesIO(payload), weights_only=True)


def set_limits(rlimits: dict[str, int]) -> None:
    """Lower this process's resource limits (the names of :mod:`resource`) to the given
    values; the hard CPU limit is two seconds above the soft one (SIGXCPU, then
    SIGKILL)."""
    import resource

    for name, value in rlimits.items():
        hard = value + 2 if name == "RLIMIT_CPU" else value
        resource.setrlimit(getattr(resource, name), (value, hard))


class _Channel:
    """The kernel's end of the pipes (moved off fds 0 and 1, which get /dev/null)."""

    def __init__(self) -> None:
        self.inp, self.out = os.dup(0), os.dup(1)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.close(devnull)

    def _read(self, size: int) -> bytes:
        chunks = []
        while size:
            chunk = os.read(self.inp, min(size, 2**20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def receive(self) -> dict[str, Any]:
        (size,) = HEADER.unpack(self._read(HEADER.size))
        return unpack(self._read(size))

    def send(self, obj: Any) -> None:
        view = memoryview(pack(obj))
        while view:
            view = view[os.write(self.out, view) :]


# --- notebook mode --------------------------------------------------------------------


class _Shell:
    """What ``get_ipython()`` gives a notebook here: the magics a notebook may carry
    run their code (``%time``, ``%%capture``) or do nothing (``%matplotlib``,
    ``!pip``)."""

    RUN = {"time", "timeit", "prun", "capture"}

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.user_ns = namespace
        self.kernel = None

    def run_line_magic(self, name: str, line: str, *args: Any) -> None:
        if name in self.RUN and line.strip():
            exec(compile(line, "<magic>", "exec"), self.user_ns)
        elif name == "env" and "=" in line:
            key, _, value = line.partition("=")
            os.environ[key.strip()] = value.strip()

    def run_cell_magic(self, name: str, line: str, cell: str) -> None:
        if name in self.RUN:
            exec(compile(cell, "<magic>", "exec"), self.user_ns)

    def system(self, *args: Any, **kwargs: Any) -> None:
        return None

    getoutput = system


def _transform(source: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython is in every notebook environment
        return source
    return TransformerManager().transform_cell(source)


def _run_cells(request: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
    home = os.environ.get("HOME", ".")
    name = os.path.basename(str(request.get("name", "notebook.ipynb")))
    with open(os.path.join(home, name), "wb") as f:
        f.write(request.get("notebook", b""))
    errors = []
    quiet = open(os.devnull, "w")
    for index, source in request["cells"]:
        sys.stdout = sys.stderr = quiet
        try:
            code = compile(_transform(source), f"<cell {index}>", "exec")
            exec(code, namespace)
        except BaseException as exc:
            # A failing cell is recorded and the next one runs, as in Jupyter.
            errors.append((int(index), f"{type(exc).__name__}: {exc}"[:200]))
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
            pyplot = sys.modules.get("matplotlib.pyplot")
            if pyplot is not None:
                try:
                    pyplot.close("all")
                except Exception:
                    pass
    torch = sys.modules.get("torch")
    dtype = str(torch.get_default_dtype()) if torch is not None else "torch.float32"
    return {"errors": errors, "dtype": dtype}


def _describe(expr: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """What the answer ``expr`` is: its kind, and its plain value or its pickle."""
    from .answers import AnswerError, describe_type, kind_of, plain

    try:
        obj = eval(expr, namespace)
    except NameError as exc:
        return {"kind": "missing", "type": "undefined", "message": f"{exc}"[:300]}
    except BaseException as exc:
        return {"kind": "error", "type": type(exc).__name__, "message": f"{exc}"[:300]}
    try:
        kind = kind_of(obj)
        info: dict[str, Any] = {"kind": kind, "type": describe_type(obj)[:100]}
        if kind == "functions":
            info["length"] = len(obj)
        if kind == "value":
            info["value"] = plain(obj)
        elif kind in ("function", "functions"):
            import cloudpickle

            info["blob"] = cloudpickle.dumps(obj)
    except AnswerError as err:
        info["error"] = err.verdict.message
    except BaseException as exc:
        # An answer that cannot be looked at is this answer's failure only.
        info = {
            "kind": "error",
            "type": "answer",
            "message": f"it cannot be handed to the grader ({type(exc).__name__}: {exc})"[:300],
        }
    return info


def notebook_kernel(channel: _Channel) -> None:
    """Serve the notebook mode (see the module docstring)."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    shell: _Shell | None = None  # get_ipython() returns it once made
    namespace["get_ipython"] = lambda: shell
    namespace["display"] = lambda *args, **kwargs: None
    shell = _Shell(namespace)
    while True:
        request = channel.receive()
        if request["op"] == "run":
            channel.send(_run_cells(request, namespace))
        elif request["op"] == "describe":
            channel.send(_describe(request["expr"], namespace))
        else:
            return


# --- answers mode ---------------------------------------------------------------------


def _unit_hessian(fn: Any, p: int) -> Any:
    """x -> (1/2) d^2 f / dw_1^2 at W = 0 for a module f(W, x) with two units: the
    structure matrix A(x) of Chapter 1, by autograd (without the package)."""
    import torch

    def through(x: Any) -> Any:
        def one_unit(w: Any) -> Any:
            return fn(torch.stack([w, torch.zeros_like(w)], dim=1), x)

        zero = torch.zeros(p, dtype=torch.float64)
        return torch.autograd.functional.hessian(one_unit, zero) / 2

    return through


#: The default dtypes a notebook may leave behind (``torch.set_default_dtype``).
DTYPES = ("torch.float64", "torch.float32", "torch.float16", "torch.bfloat16")


def _set_dtype(name: Any) -> None:
    """Give the answers the default dtype the notebook left (its functions were
    written for it: ``torch.zeros(K)`` after
    ``torch.set_default_dtype(torch.float64)``)."""
    import torch

    if name in DTYPES:
        torch.set_default_dtype(getattr(torch, str(name).split(".")[1]))


def answers_kernel(channel: _Channel) -> None:
    """Serve the answers mode (see the module docstring)."""
    import pickle

    from .answers import decode_arrays, run

    loaded: dict[str, Any] = {}
    while True:
        request = channel.receive()
        if request["op"] == "load":
            try:
                _set_dtype(request.get("dtype"))
                loaded[request["key"]] = pickle.loads(request["blob"])
                reply = {"ok": True, "message": ""}
            except BaseException as exc:
                reply = {
                    "ok": False,
                    "message": f"it could not be rebuilt where the grader calls it "
                    f"({type(exc).__name__}: {exc}); an answer may hold tensors, "
                    f"numbers and functions of its own, not objects of the "
                    f"package"[:300],
                }
            channel.send(reply)
        elif request["op"] == "call":
            name = str(request.get("name", "your function"))
            try:
                fn = loaded[request["key"]]
                if request.get("index") is not None:
                    fn = fn[request["index"]]
                args = tuple(decode_arrays(request["args"]))
                if request.get("hessian") is not None:
                    fn = _unit_hessian(fn, request["hessian"])
                    name = f"autograd through {name}"
                outcome = run(fn, args, name, trusted=True)
                record = {
                    "status": outcome.status,
                    "value": outcome.value,
                    "message": outcome.message,
                }
            except BaseException as exc:
                record = {
                    "status": "raised",
                    "value": None,
                    "message": f"{name} could not be called: {type(exc).__name__}: {exc}"[:300],
                }
            channel.send(record)
        else:
            return


def main(argv: list[str]) -> None:
    """``MODE LIMITS``: set the limits (a JSON object of :mod:`resource` names), then
    serve."""
    set_limits(json.loads(argv[1]))
    channel = _Channel()
    try:
        (notebook_kernel if argv[0] == "notebook" else answers_kernel)(channel)
    except EOFError:
        pass
