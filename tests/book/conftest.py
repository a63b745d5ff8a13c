"""The tests of the built books (marker ``build``): each module names the file it needs
as ``NEEDS = (path, make target)``; a missing build skips its tests (visibly, ``-rs``)
and fails them under CI (:func:`tests.conftest.need`)."""

import pytest

from ..conftest import need


@pytest.fixture(autouse=True)
def _the_build_exists(request):
    path, target = request.module.NEEDS
    need(path.exists(), f"{path.parent.name} not built: run `make {target}` first")
