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
