"""The input contract (see ``test_input_contract.py``) of the functions added for the
paper's experiments (Chapters 8 and 9): every bad input raises ValueError or TypeError
naming the argument; a Python list gives the float64 result."""

from __future__ import annotations

import pytest
import torch

from .input_cases import assert_refused, contains_nonfinite, mutations, resolve


def _g(seed, *shape):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


def _sym(seed, n, p):
    S = _g(seed, n, p, p)
    return (S + S.transpose(1, 2)) / 2


def _t(values):
    return torch.tensor(values, dtype=torch.float64)


CASES = [
    (
        "agreement_window",
        lambda: dict(
            steps=_t([0.0, 10.0, 20.0]),
            loss_net=_t([1.0, 0.5, 0.4]),
            loss_nqf=_t([1.0, 0.5, 0.45]),
            f_net=_g(0, 3, 4),
            f_nqf=_g(1, 3, 4),
            threshold=0.1,
            loss_floor=0.01,
        ),
        {
            "steps": "T",
            "loss_net": "T",
            "loss_nqf": "T",
            "f_net": "T",
            "f_nqf": "T",
            "threshold": "pos",
            "loss_floor": "nonneg",
        },
    ),
    (
        "identity_init",
        lambda: dict(eps=1e-3, p=3, d=4),
        {"eps": "pos", "p": "int", "d": "int"},
    ),
    ("eps_from_sigma", lambda: dict(sigma=0.1, d=4), {"sigma": "pos", "d": "int"}),
    (
        "initialisation:sigma_from_eps",
        lambda: dict(eps=1e-3, d=4),
        {"eps": "pos", "d": "int"},
    ),
    (
        "surrogates:nqf_floor",
        lambda: dict(A=_sym(0, 5, 3), y=_g(1, 5)),
        {"A": "T", "y": "T"},
    ),
]

BAD_CALLS = [
    (name, make, arg, what, bad)
    for name, make, kinds in CASES
    for arg, kind in kinds.items()
    for what, bad in mutations(kind, make()[arg])
]


@pytest.mark.parametrize(
    "name, make", [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_valid_call_works(name, make):
    fn = resolve(name)
    assert fn is not None, name
    assert not contains_nonfinite(fn(**make()))


@pytest.mark.parametrize(
    "name, make, arg, what, bad",
    BAD_CALLS,
    ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in BAD_CALLS],
)
def test_bad_input_is_refused_naming_the_argument(name, make, arg, what, bad):
    assert_refused(name, make, arg, what, bad)


def test_a_list_is_read_as_float64():
    fn = resolve("surrogates:nqf_floor")
    kwargs = CASES[-1][1]()
    assert fn(**kwargs) == fn(A=kwargs["A"].tolist(), y=kwargs["y"].tolist())


def test_objects_that_are_not_architectures_are_refused():
    with pytest.raises(TypeError, match="`arch`"):
        resolve("module_pair")("mlp")
