"""The input contract of every public function (the cases are data in ``input_cases.py``).

* Every bad input (NaN or inf entries, complex dtypes, strings, empty or extra-dimensional tensors,
  bad scalars: negative, zero, NaN, strings, booleans, floats for integers) raises ``ValueError`` or
  ``TypeError`` whose message names the argument at fault, never NaN, a silent success, a raw
  ``RuntimeError`` or a ``DivergenceError``.
* A Python list is read as float64: it gives the same result as the float64 tensor.
* The valid call itself returns finite numbers.
"""

from __future__ import annotations

import pytest
import torch

from .input_cases import (
    CASES,
    assert_refused,
    contains_nonfinite,
    mutations,
    resolve,
)

BAD_CALLS = [(name, make, arg, what, bad)
             for name, make, kinds in CASES for arg, kind in kinds.items()
             for what, bad in mutations(kind, make()[arg])]
LIST_CALLS = [(name, make, arg) for name, make, kinds in CASES for arg, kind in kinds.items()
              if kind in ("T", "TB", "Tinf") and isinstance(make()[arg], torch.Tensor)]


@pytest.mark.parametrize("name, make", [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_the_valid_call_works(name, make):
    fn = resolve(name)
    assert fn is not None, f"{name} is not in the package"
    result = fn(**make())
    if name not in ("ntk_drift", "drift_scaling"):          # fields are finite there too, but
        assert not contains_nonfinite(result), name          # a mode may legitimately never ignite


@pytest.mark.parametrize("name, make, arg, what, bad", BAD_CALLS,
                         ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in BAD_CALLS])
def test_bad_input_is_refused_naming_the_argument(name, make, arg, what, bad):
    assert_refused(name, make, arg, what, bad)


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, (tuple, list)):
        return all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "__dataclass_fields__"):
        return all(_same(getattr(a, k), getattr(b, k)) for k in a.__dataclass_fields__)
    try:
        return bool((a == b).all()) if hasattr(a, "all") else a == b
    except (TypeError, ValueError):
        return True                                           # callables, registries: not data


@pytest.mark.parametrize("name, make, arg", LIST_CALLS,
                         ids=[f"{c[0]}-{c[2]}" for c in LIST_CALLS])
def test_a_list_is_read_as_float64(name, make, arg):
    fn = resolve(name)
    kwargs = make()
    kwargs[arg] = kwargs[arg].to(torch.float64)
    as_tensor = fn(**kwargs)
    kwargs = make()
    kwargs[arg] = kwargs[arg].to(torch.float64).tolist()
    assert _same(as_tensor, fn(**kwargs)), f"{name}: a list for `{arg}` changes the result"
