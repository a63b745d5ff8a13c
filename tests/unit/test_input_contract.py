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

BAD_CALLS = bad_calls()
GOOD_CALLS = good_calls()


def test_every_public_name_and_architecture_method_is_covered():
    names = {c[0] for c in CASES}
    missing = [n for n in nqf.__all__ if n not in names and n not in NOT_FUZZED]
    assert not missing, f"public names without an input-contract case: {missing}"
    for key in ARCHS:
        for method in ("f", "A", "g", "B", "f0", "expansion"):
            assert f"arch.{key}.{method}" in names
    assert {f"arch.{name}" for name in ARCHITECTURES} <= names
    assert {n.split(".")[1] for n in names if n.startswith("arch.")} >= set(ARCHITECTURES)


def test_ids_are_the_same_in_every_process():
    # pytest-xdist's workers collect separately and must agree on every ID: no memory address
    ids = [f"{c[0]}-{c[2]}-{c[3]}" for c in BAD_CALLS + GOOD_CALLS]
    assert not [i for i in ids if re.search(r"0x[0-9a-fA-F]{4,}", i)]


@pytest.mark.parametrize("name, make", [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_the_valid_call_works(name, make):
    fn = resolve(name)
    assert fn is not None, f"{name} is not in the package"
    result = fn(**make())
    if name not in ("ntk_drift", "drift_scaling"):  # fields are finite there too, but
        assert not contains_nonfinite(result), name  # a mode may legitimately never ignite


@pytest.mark.parametrize(
    "name, make, arg, what, bad", BAD_CALLS, ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in BAD_CALLS]
)
def test_bad_input_is_refused_naming_the_argument(name, make, arg, what, bad):
    assert_refused(name, make, arg, what, bad)


@pytest.mark.parametrize(
    "name, make, arg, what, good, same",
    GOOD_CALLS,
    ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in GOOD_CALLS],
)
def test_accepted_variants_give_the_result(name, make, arg, what, good, same):
    fn = resolve(name)
    reference = fn(**make())
    kwargs = make()
    kwargs[arg] = good
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # e.g. torch's on requires_grad
        result = call_with_limit(fn, kwargs)
    assert not contains_nonfinite(result), f"{name}({arg} = {what}): non-finite result"
    if same:
        assert same_result(reference, result, exact=what == "a list"), (
            f"{name}({arg} = {what}) changes the result"
        )
