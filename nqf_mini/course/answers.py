"""How a self-check sees a student's answer: called in a clean thread, read back as
plain data.

A check never calls a student's function directly and never compares the student's
objects. It goes through an :class:`Answer`, which

* calls the function in a thread of its own (:func:`run`): the function's frames lead
  back to :func:`_run` in this module and to :mod:`threading`, never to the check that
  holds the inputs, so ``inspect.currentframe().f_back`` finds nothing to copy (and the
  checks compute their expected values only after the call returns, from copies of the
  inputs made before it);
* records the calls the function makes into :mod:`nqf_mini` (a profile hook,
  :class:`_Watch`): an answer may use the small helpers of :data:`ALLOWED_MODULES`
  (``nqf.offdiag``), but an answer that calls the package function which computes what
  the exercise asks (``nqf.nnls_end_state`` for the NNLS end state,
  ``nqf.structure_matrix`` for a structure matrix, a check's own oracle) is refused, and
  so is one that removes the hook;
* turns what the function returns (or the answer itself, for a dict or a number) into
  plain data (:func:`plain`): tensors, numbers, strings, and dicts, tuples or lists of
  those, rebuilt with the base types' own methods. Anything else, e.g. an object whose
  ``__eq__`` is always true, is rejected with a message.

The grader (:mod:`nqf_mini.course.grade_notebook`) uses the same checks with a remote
:class:`Answer` whose calls run in a sandboxed grading kernel
(:mod:`nqf_mini.course.grading_kernel`), so that the verdicts are computed in a process
the student's code never ran in. There the package has no function that computes an
answer, so the rule above does not depend on this hook (which a student's own code can
switch off in its own session).
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import numpy as np
import torch

from .registry import CheckResult

#: Modules of nqf_mini whose functions an answer may call: small helpers that give
#: nothing away.
ALLOWED_MODULES = frozenset({"blocks.py", "_validate.py", "device.py"})
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE_PREFIX = PACKAGE_DIR + os.sep
_PROFILE_SETTERS = (
    sys.setprofile,
    sys.settrace,
    threading.setprofile,
    threading.settrace,
)
PLAIN_TYPES = "a tensor, a number, a string, or a dict, tuple or list of those"
#: How a refused package function says so where the grader calls answers: the package
#: there has only the allowed helpers, every other name raises
#: ``PermissionError(REFUSED + qualified name)`` (:mod:`nqf_mini.course.grading_kernel`).
REFUSED = "not available to an answer: "


class AnswerError(Exception):
    """Raised by an :class:`Answer` when the answer cannot be judged; carries the
    verdict."""

    def __init__(self, verdict: CheckResult) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


def reject(message: str, missing: bool = False) -> AnswerError:
    """An :class:`AnswerError` whose verdict is "not yet" with ``message``."""
    return AnswerError(CheckResult(False, message, missing=missing))


# --- plain data -----------------------------------------------------------------------

_ARRAY_KEY = "__numpy_array__"


def encode_arrays(value: Any) -> Any:
    """``value`` with every NumPy array wrapped as ``{_ARRAY_KEY: tensor}``, so that the
    grader can pass NumPy inputs through ``torch.save`` / ``torch.load(weights_only=True)``
    (which refuses NumPy objects); :func:`decode_arrays` undoes it."""
    if isinstance(value, np.ndarray):
        return {_ARRAY_KEY: torch.from_numpy(np.ascontiguousarray(value))}
    if isinstance(value, (tuple, list)):
        return type(value)(encode_arrays(v) for v in value)
    if isinstance(value, dict):
        return {k: encode_arrays(v) for k, v in value.items()}
    return value


def decode_arrays(value: Any) -> Any:
    """The inverse of :func:`encode_arrays`."""
    if isinstance(value, dict):
        if set(value) == {_ARRAY_KEY}:
            return value[_ARRAY_KEY].numpy()
        return {k: decode_arrays(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(decode_arrays(v) for v in value)
    return value


def plain(value: Any, what: str = "your answer") -> Any:
    """``value`` rebuilt from the base types only, or :class:`AnswerError` naming what
    it is.

    Tensors become detached CPU copies of type ``torch.Tensor`` (their dtype is kept, so
    that a float32 result can be recognised); NumPy arrays become tensors, NumPy scalars
    Python numbers; dicts (with string keys), tuples and lists are rebuilt element by
    element.
    """
    return _plain(value, what, depth=0)


def _plain(value: Any, what: str, depth: int) -> Any:
    if depth > 8:
        raise reject(f"{what} is nested too deeply: expected {PLAIN_TYPES}")
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if isinstance(value, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            copy = torch.Tensor.detach(value).to("cpu", copy=True)
        if type(copy) is not torch.Tensor:
            copy = copy.as_subclass(torch.Tensor)
        return copy
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        return torch.from_numpy(np.array(value, copy=True))
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    if isinstance(value, dict):
        out = {}
        for key, item in dict.items(value):
            if type(key) is not str:
                raise reject(f"{what} has a key of type {type(key).__name__}; expected strings")
            out[key] = _plain(item, f"{what}[{key!r}]", depth + 1)
        return out
    if isinstance(value, (tuple, list)):
        items = tuple.__iter__(value) if isinstance(value, tuple) else list.__iter__(value)
        return tuple(_plain(item, f"{what}[{k}]", depth + 1) for k, item in enumerate(items))
    raise reject(f"{what} is a {kind.__name__}: expected {PLAIN_TYPES}")


def describe_type(value: Any) -> str:
    """The name of ``value``'s type, for messages."""
    return type(value).__name__


# --- calling a function ---------------------------------------------------------------


def _in_package(filename: str) -> bool:
    return filename.startswith(_PACKAGE_PREFIX)


def _allowed(filename: str) -> bool:
    return (
        os.path.basename(filename) in ALLOWED_MODULES and os.path.dirname(filename) == PACKAGE_DIR
    )


class _Watch:
    """Profile hook: the first forbidden call into nqf_mini that the answer makes
    itself.

    A call into the package counts when no package frame lies between it and
    :func:`_run` (so the student's function, or a package function handed in as the
    answer, called it); calls the package makes internally, including callbacks into the
    student's code and back, do not. With ``trusted`` (a check's own wrapper, e.g.
    autograd through the answer) only tampering with the hook counts.
    """

    def __init__(self, trusted: bool) -> None:
        self.found: str | None = None
        self.trusted = trusted

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if self.found is not None:
            return
        if event == "call" and not self.trusted:
            filename = frame.f_code.co_filename
            if not _in_package(filename) or _allowed(filename):
                return
            caller = frame.f_back
            while caller is not None and caller.f_code is not _run.__code__:
                if _in_package(caller.f_code.co_filename):
                    return  # inside a package call already
                caller = caller.f_back
            module = os.path.relpath(filename, PACKAGE_DIR)[:-3].replace(os.sep, ".")
            self.found = f"nqf_mini.{module}.{frame.f_code.co_name}"
        elif (
            event == "c_call"
            and any(arg is f for f in _PROFILE_SETTERS)
            and frame.f_code is not _run.__code__
        ):
            self.found = "sys.setprofile"


@dataclass
class Outcome:
    """What a call of the answer gave: ``status`` is "value", "raised", "refused" or
    "missing"."""

    status: str
    value: Any = None
    message: str = ""


def _run(fn: Callable[..., Any], args: tuple, box: list, trusted: bool) -> None:
    watch = _Watch(trusted)
    sys.setprofile(watch)
    try:
        result = fn(*args)
        box.append(("value", result))
    except BaseException as exc:
        # Reported to the student, never re-raised.
        box.append(("raised", exc))
    finally:
        sys.setprofile(None)
        box.append(("watch", watch.found))


def package_function(obj: Any) -> str | None:
    """The qualified name of a function of nqf_mini outside :data:`ALLOWED_MODULES`,
    else None."""
    code = getattr(obj, "__code__", None) or getattr(
        getattr(obj, "__func__", None), "__code__", None
    )
    if code is not None and _in_package(code.co_filename) and not _allowed(code.co_filename):
        module = os.path.relpath(code.co_filename, PACKAGE_DIR)[:-3].replace(os.sep, ".")
        return f"nqf_mini.{module}.{code.co_name}"
    return None


def refused_call(name: str) -> str:
    """The message for an answer that calls the package function ``name``."""
    if name == "sys.setprofile":
        return (
            "your function changes the profiler (sys.setprofile / settrace), which the "
            "check uses to see which package functions an answer calls"
        )
    short = name.rsplit(".", 1)[-1]
    return (
        f"your answer calls {name} (nqf.{short}): the package computes what this "
        f"exercise asks you to work out, so it cannot be the answer. Write it with "
        f"torch operations (nqf.offdiag is allowed)"
    )


def run(fn: Any, args: tuple, what: str, trusted: bool = False) -> Outcome:
    """Call ``fn(*args)`` in a thread of its own and return its :class:`Outcome` as
    plain data.

    ``args`` should be copies: the check keeps its own inputs and computes the expected
    value after the call, from those. ``trusted``: ``fn`` is a check's own wrapper that
    calls the answer (e.g. autograd through it), so its own calls into the package are
    not the answer's.
    """
    if not trusted and (name := package_function(fn)) is not None:
        return Outcome("refused", message=refused_call(name))
    box: list = []
    thread = threading.Thread(
        target=_run, args=(fn, args, box, trusted), name="nqf-answer", daemon=True
    )
    thread.start()
    thread.join()
    results = dict(box)
    if results.get("watch"):
        return Outcome("refused", message=refused_call(results["watch"]))
    if "raised" in results:
        exc = results["raised"]
        if isinstance(exc, NotImplementedError):
            return Outcome("missing", message="your function still raises NotImplementedError")
        if isinstance(exc, KeyboardInterrupt):
            raise exc
        if isinstance(exc, PermissionError) and str(exc).startswith(REFUSED):
            return Outcome("refused", message=refused_call(str(exc)[len(REFUSED) :]))
        return Outcome("raised", message=f"{what} raised {type(exc).__name__}: {exc}"[:300])
    try:
        return Outcome("value", value=plain(results.get("value"), f"the result of {what}"))
    except AnswerError as err:
        return Outcome("refused", message=err.verdict.message)


# --- what a check sees ----------------------------------------------------------------


class Answer:
    """A student's answer as a check sees it (a local object or one in the student's
    kernel).

    ``kind`` is "missing" (None, NotImplemented, undefined), "function", "functions" (a
    tuple or list of functions; :meth:`part` gives each) or "value" (read it with
    :attr:`value`).
    """

    kind: str
    type_name: str
    length: int = 0

    def __call__(self, *args: Any) -> Any:
        """The plain result of calling the answer on copies of ``args``, or
        AnswerError."""
        raise NotImplementedError

    @property
    def value(self) -> Any:
        """The answer as plain data, or AnswerError."""
        raise NotImplementedError

    def part(self, index: int) -> Answer:
        """Element ``index`` of a tuple of functions."""
        raise NotImplementedError

    def hessian(self, x: Any, p: int) -> Any:
        """``nqf.structure_matrix(answer, x, p)``: autograd through the student's
        function."""
        raise NotImplementedError


def kind_of(obj: Any) -> str:
    """The :attr:`Answer.kind` of a local object."""
    if obj is None or obj is NotImplemented:
        return "missing"
    if callable(obj):
        return "function"
    if isinstance(obj, (tuple, list)) and obj and all(callable(o) for o in obj):
        return "functions"
    return "value"


def _copy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return value


def _structure_matrix(fn: Callable[..., Any], x: Any, p: int) -> Any:
    from ..quadratic_form import structure_matrix

    return structure_matrix(fn, x, p)


def outcome_value(outcome: Outcome) -> Any:
    """The value of an :class:`Outcome`, or the AnswerError that says why there is
    none."""
    if outcome.status == "value":
        return outcome.value
    raise reject(outcome.message, missing=outcome.status == "missing")


class LocalAnswer(Answer):
    """An answer given to :func:`nqf_mini.course.check.exercise` in the student's own
    session."""

    def __init__(self, obj: Any, name: str = "your function") -> None:
        self.obj, self.name = obj, name
        self.kind, self.type_name = kind_of(obj), describe_type(obj)
        self.length = len(obj) if self.kind == "functions" else 0

    def __call__(self, *args: Any) -> Any:
        return outcome_value(run(self.obj, _copy(args), self.name))

    @property
    def value(self) -> Any:
        if (name := package_function(self.obj)) is not None:
            raise reject(refused_call(name))
        return plain(self.obj)

    def part(self, index: int) -> Answer:
        return LocalAnswer(self.obj[index], f"your function #{index + 1}")

    def hessian(self, x: Any, p: int) -> Any:
        def through(x_: Any) -> Any:
            return _structure_matrix(self.obj, x_, p)

        return outcome_value(
            run(through, (_copy(x),), f"autograd through {self.name}", trusted=True)
        )
