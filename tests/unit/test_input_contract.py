"""The input contract of every public callable (the cases are data in ``input_cases.py``).

* Every bad input (None, NaN or inf entries, complex and bool dtypes, strings, dicts, empty
  tensors, a dimension too many or too few, a size that no longer matches another argument, a
  tensor on a device without data, bad scalars and sizes too large to allocate or iterate, bad
  dtypes and devices, modules that return a vector or NaN) raises ``ValueError`` or
  ``TypeError`` whose message names the argument at fault, within the time limit of
  ``input_cases.TIME_LIMIT_S``: never NaN, a silent success, a raw ``RuntimeError``, a failed
  allocation or a ``DivergenceError``.
* Every accepted variant (a list, a NumPy array, a tensor that requires grad, a non-contiguous
  tensor, NumPy and 0-d tensor scalars) gives the result of the valid call, without a warning;
  float32, float16 and bfloat16 values give a finite one.
* The cases cover every public name of ``nqf_mini`` and every architecture's methods.
"""

from __future__ import annotations

import re
import warnings

import pytest

import nqf_mini as nqf
from nqf_mini.architectures import ARCHITECTURES

from .input_cases import (
    ARCHS,
    CASES,
    NOT_FUZZED,
    assert_refused,
    bad_calls,
    call_with_limit,
    contains_nonfinite,
    good_calls,
    resolve,
    same_result,
)

#: One test per public name (and architecture method), which tries every bad input and
#: every accepted variant of it and reports all that fail. A test per call (7,546 of them)
#: spent two thirds of this file's time in pytest's bookkeeping of each test.
BAD_CALLS = bad_calls()
GOOD_CALLS = good_calls()


def _by_name(calls: list[tuple]) -> dict[str, list[tuple]]:
    groups: dict[str, list[tuple]] = {}
    for call in calls:
        groups.setdefault(call[0], []).append(call)
    return groups


BAD_BY_NAME = _by_name(BAD_CALLS)
GOOD_BY_NAME = _by_name(GOOD_CALLS)


def _failures(check, calls: list[tuple]) -> list[str]:
    failed = []
    for call in calls:
        try:
            check(*call)
        except AssertionError as exc:
            failed.append(str(exc).split("\n")[0])
    return failed


def test_every_public_name_and_architecture_method_is_covered():
    names = {c[0] for c in CASES}
    missing = [n for n in nqf.__all__ if n not in names and n not in NOT_FUZZED]
    assert not missing, f"public names without an input-contract case: {missing}"
    for key in ARCHS:
        for method in ("f", "A", "g", "B", "f0", "expansion"):
            assert f"arch.{key}.{method}" in names
    assert {f"arch.{name}" for name in ARCHITECTURES} <= names
    assert {n.split(".")[1] for n in names if n.startswith("arch.")} >= set(ARCHITECTURES)


def test_case_descriptions_are_the_same_in_every_process():
    # a failure names its case by these words: no memory address, so two runs compare
    words = [f"{c[0]}-{c[2]}-{c[3]}" for c in BAD_CALLS + GOOD_CALLS]
    assert not [w for w in words if re.search(r"0x[0-9a-fA-F]{4,}", w)]


@pytest.mark.parametrize("name, make", [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_the_valid_call_works(name, make):
    fn = resolve(name)
    assert fn is not None, f"{name} is not in the package"
    result = fn(**make())
    if name not in ("ntk_drift", "drift_scaling"):  # fields are finite there too, but
        assert not contains_nonfinite(result), name  # a mode may legitimately never ignite


@pytest.mark.parametrize("name", list(BAD_BY_NAME))
def test_bad_input_is_refused_naming_the_argument(name):
    calls = BAD_BY_NAME[name]
    failed = _failures(assert_refused, calls)
    assert not failed, f"{len(failed)} of {len(calls)} bad inputs:\n" + "\n".join(failed)


def _assert_accepted(name, make, arg, what, good, same):
    fn = resolve(name)
    reference = fn(**make())
    kwargs = make()
    kwargs[arg] = good
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # e.g. torch's on requires_grad
        try:
            result = call_with_limit(fn, kwargs)
        except Exception as exc:
            raise AssertionError(f"{name}({arg} = {what}): {type(exc).__name__}: {exc}") from exc
    assert not contains_nonfinite(result), f"{name}({arg} = {what}): non-finite result"
    if same:
        assert same_result(reference, result, exact=what == "a list"), (
            f"{name}({arg} = {what}) changes the result"
        )


@pytest.mark.parametrize("name", list(GOOD_BY_NAME))
def test_accepted_variants_give_the_result(name):
    calls = GOOD_BY_NAME[name]
    failed = _failures(_assert_accepted, calls)
    assert not failed, f"{len(failed)} of {len(calls)} accepted inputs:\n" + "\n".join(failed)
