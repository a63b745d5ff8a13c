"""Shared fixtures: the devices and dtypes every numerical test runs on."""

import pytest
import torch

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
DTYPES = [torch.float32, torch.float64]


@pytest.fixture(params=DEVICES)
def device(request):
    return torch.device(request.param)


@pytest.fixture(params=DTYPES, ids=["float32", "float64"])
def dtype(request):
    return request.param


def tolerance(dtype):
    """Agreement expected between a closed form and autograd in this precision."""
    return 1e-10 if dtype == torch.float64 else 1e-5


def assert_feedback(label, right, wrong_answers):
    """The self-check `label` passes `right` and names the mistake of every wrong answer.

    `wrong_answers` maps a phrase that the feedback must contain to an answer with that mistake.
    """
    from nqf_mini.course.check import exercise

    assert exercise(label, right, quiet=True).ok
    for phrase, wrong in wrong_answers.items():
        result = exercise(label, wrong, quiet=True)
        assert not result.ok and phrase in result.message, (phrase, result.message)
