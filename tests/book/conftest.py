"""The tests of the built books (marker ``build``): a module that reads a build names the
file it needs as ``NEEDS = (path, make target)``; a missing build skips its tests
(visibly, ``-rs``) and fails them under CI (:func:`tests.conftest.need`). A module without
``NEEDS`` builds what it reads itself (``test_figures_extension.py``) or reads an optional
build (``test_pdf.py``, ``make pdf``) and says so in its own skip."""

import pytest

from ..conftest import need


@pytest.fixture(autouse=True)
def _the_build_exists(request):
    needs = getattr(request.module, "NEEDS", None)
    if needs is None:
        return
    path, target = needs
    need(path.exists(), f"{path.parent.name} not built: run `make {target}` first")
