"""The grader's side inside the student's kernel: look at an answer, call it, write
plain data.

The grader (:mod:`nqf_mini.course.grade_notebook`) runs the student's notebook and then,
in the same kernel, cells that call :func:`describe` and :func:`call`. They evaluate the
answer's expression in the notebook's namespace, call the function through
:func:`nqf_mini.course.answers.run` on inputs the grader wrote with ``torch.save``, and
write what came back with ``torch.save``; the grader reads it with
``torch.load(weights_only=True)``, which accepts tensors, numbers, strings and
containers of those and nothing else. Nothing here decides a verdict: the student's code
can change this module in its own kernel, and then it only changes what the grader is
told the answer returned, never how the grader judges it.
"""

from __future__ import annotations

from typing import Any

import torch

from .answers import (
    AnswerError,
    decode_arrays,
    describe_type,
    kind_of,
    package_function,
    plain,
    refused_call,
    run,
)


class _Undefined(Exception):
    pass


def _resolve(expr: str, index: int | None) -> Any:
    from IPython import get_ipython

    shell = get_ipython()
    namespace = shell.user_ns if shell is not None else {}
    try:
        obj = eval(expr, namespace)  # noqa: S307 - student's kernel
    except NameError as exc:
        raise _Undefined(f"{expr} is not defined ({exc})") from None
    return obj if index is None else obj[index]


def describe(expr: str, out_path: str) -> None:
    """Write what kind of answer ``expr`` is (and its plain value when it is not a
    function)."""
    try:
        obj = _resolve(expr, None)
    except _Undefined as exc:
        torch.save(
            {"kind": "missing", "type": "undefined", "message": str(exc)}, out_path
        )
        return
    except Exception as exc:  # noqa: BLE001
        # The expression is the student's.
        torch.save(
            {"kind": "error", "type": type(exc).__name__, "message": str(exc)[:300]},
            out_path,
        )
        return
    kind = kind_of(obj)
    info: dict[str, Any] = {
        "kind": kind,
        "type": describe_type(obj),
        "length": len(obj) if kind == "functions" else 0,
    }
    if kind == "value":
        if (name := package_function(obj)) is not None:
            info["error"] = refused_call(name)
        else:
            try:
                info["value"] = plain(obj)
            except AnswerError as err:
                info["error"] = err.verdict.message
    torch.save(info, out_path)


def _hessian(fn: Any, p: int) -> Any:
    from ..quadratic_form import structure_matrix

    def through(x: Any) -> Any:
        return structure_matrix(fn, x, p)

    return through


def call(
    expr: str,
    index: int | None,
    in_path: str,
    out_path: str,
    name: str,
    hessian: int | None = None,
) -> None:
    """Call the answer on the arguments in ``in_path``; write its outcome to
    ``out_path``.

    With ``hessian = p`` the call is ``nqf.structure_matrix(answer, x, p)`` instead
    (autograd through the student's function).
    """
    try:
        fn = _resolve(expr, index)
        args = tuple(decode_arrays(torch.load(in_path, weights_only=True)))
        if hessian is None:
            outcome = run(fn, args, name)
        else:
            outcome = run(
                _hessian(fn, hessian), args, f"autograd through {name}", trusted=True
            )
        record = {
            "status": outcome.status,
            "value": outcome.value,
            "message": outcome.message,
        }
    except Exception as exc:  # noqa: BLE001
        # Reported to the grader as the answer's failure.
        record = {
            "status": "raised",
            "value": None,
            "message": f"{name} could not be called: {type(exc).__name__}: {exc}"[:300],
        }
    torch.save(record, out_path)
