"""Shared fixtures: the devices and dtypes every numerical test runs on; the markers
of the folders whose tests need the built book (``build``) or a browser (``browser``)."""

import os
from pathlib import Path

import pytest
import torch

#: Folders of ``tests/`` whose tests carry a marker (see ``[tool.pytest.ini_options]``).
FOLDER_MARKERS = {"book": "build", "browser": "browser"}

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


def need(present: bool, reason: str) -> None:
    """Skip the calling test when something it needs is absent, but fail it when the
    environment variable ``CI`` is ``true``: CI has every prerequisite, so an absence
    there is a fault, not a reason to test less."""
    if present:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def pytest_collection_modifyitems(config, items):
    """Mark every test by its folder, so that the Makefile selects phases by marker and
    a test in a new file or folder cannot fall out of CI."""
    here = Path(__file__).resolve().parent
    for item in items:
        try:
            folder = Path(item.fspath).resolve().relative_to(here).parts[0]
        except ValueError:
            continue
        marker = FOLDER_MARKERS.get(folder)
        if marker:
            item.add_marker(marker)
