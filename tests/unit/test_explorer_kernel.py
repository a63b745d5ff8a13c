"""An explorer live in a real kernel, its widgets moved as a front end moves them.

A ``python3`` kernel (:mod:`tests.unit.kernel_driver`) runs a small explorer cell. Its
output must carry the live widget (and the static HTML beside it, for a front end that
cannot show widgets); moving the slider to a value between two grid points and picking
another menu option, with the messages JupyterLab or Colab send, must redraw the figure
that the front end receives: the picture ``draw`` makes at exactly that value (drawn
again in the kernel, compared pixel for pixel), not the nearest grid point's. The same
test runs under ipywidgets 8 (the lock) and 7.7.1 (``make compat``'s Colab session).
``NQF_EXPLORER_FRAMES=all`` keeps the kernel static (how the book's outputs are made).
tests/chapters/test_live_explorers.py drives every chapter's explorer the same way.
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ..conftest import need

from .kernel_driver import WIDGET_VIEW, Kernel

CELL = '''
import numpy as np
from nqf_mini.course.explorer import Choice, Slider, explorer


def draw(fig, kind, slope):
    ax = fig.subplots()
    x = np.linspace(0.0, 1.0, 20)
    ax.plot(x, slope * x, "o-" if kind == "dots" else "-", label=f"slope {slope:g}")
    ax.set_ylim(-2, 2)
    ax.legend(loc="upper left")


ex = explorer(draw, Choice("kind", ["line", "dots"]),
              Slider("slope", [-1.0, 0.0, 0.5, 1.0], default=0.5, label="slope s"),
              caption="What to look for: the line tilts as the slope moves.",
              figsize=(2.4, 1.8), dpi=40)
ex
'''

ORACLE = '''(lambda fig: (lambda b: (fig.savefig(b, format="png", dpi=ex.dpi,
    metadata={{"Software": None}}), b.getvalue())[1])(__import__("io").BytesIO()))(
    ex.figure({values}))'''


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def drawn(kernel: Kernel, **values: object) -> np.ndarray:
    """The figure ``draw`` makes at ``values``, drawn again in the kernel (a plain PNG)."""
    arguments = ", ".join(f"{k}={v!r}" for k, v in values.items())
    return pixels(kernel.png(ORACLE.format(values=arguments)))


@pytest.fixture(scope="module")
def kernel():
    need(importlib.util.find_spec("ipywidgets") is not None, "ipywidgets is not installed")
    with Kernel(Path(__file__).parent, env={"NQF_EXPLORER_FRAMES": None,
                                            "NQF_DEVICE": "cpu"}, timeout=300) as k:
        yield k


def test_the_widget_redraws_any_value_as_a_front_end_moves_it(kernel):
    (output,) = kernel.run(CELL)
    assert WIDGET_VIEW in output and "text/html" in output and "image/png" in output
    assert 'class="nqf-explorer"' in output["text/html"]
    assert kernel.evaluate("[ex.live, ex.complete, len(ex.frames)]") == [True, False, 1]
    models = kernel.descendants(output[WIDGET_VIEW]["model_id"])
    (image,) = [m for m in models if m.name == "ImageModel"]
    (menu,) = [m for m in models if m.name == "DropdownModel"]
    (slider,) = [m for m in models if m.name == "FloatSliderModel"]
    assert slider.state["description"] == "slope s" and menu.state["description"] == "kind"
    assert (slider.state["min"], slider.state["max"]) == (-1.0, 1.0)
    first = image.state["value"]
    assert first == kernel.png("ex._repr_png_()")          # the default frame, precomputed

    kernel.move(slider, value=0.3)                          # between the grid points 0 and 0.5
    moved = image.state["value"]
    assert moved != first, "the figure did not change when the slider moved"
    assert np.array_equal(pixels(moved), drawn(kernel, kind="line", slope=0.3))
    for grid_value in (0.0, 0.5):
        assert not np.array_equal(pixels(moved), drawn(kernel, kind="line", slope=grid_value))
    readouts = [m for m in models if m.name == "LabelModel"]
    assert [m.state["value"] for m in readouts] == ["0.3"]

    kernel.move(menu, index=1)                              # "dots"
    assert np.array_equal(pixels(image.state["value"]), drawn(kernel, kind="dots", slope=0.3))
    assert kernel.evaluate("ex.widget().current()") == {"kind": "dots", "slope": 0.3}


def test_a_failing_draw_says_so_under_the_figure(kernel):
    kernel.run(CELL.replace("ax.set_ylim(-2, 2)",
                            "ax.set_ylim(-2, 2)\n    assert slope < 0.9, 'slope too steep'"))
    models = kernel.descendants(kernel.evaluate("ex.widget().box.model_id"))
    (slider,) = [m for m in models if m.name == "FloatSliderModel"]
    (image,) = [m for m in models if m.name == "ImageModel"]
    before = image.state["value"]
    kernel.move(slider, value=1.0)
    notes = " ".join(str(m.state.get("value", "")) for m in models if m.name == "HTMLModel")
    assert "No figure for kind = line, slope = 1.0" in notes and "slope too steep" in notes
    assert image.state["value"] == before


def test_all_frames_and_no_widget_when_asked(kernel):
    """``NQF_EXPLORER_FRAMES=all`` (the book's stored outputs): the static explorer
    with every frame, also in a kernel."""
    with Kernel(Path(__file__).parent, env={"NQF_EXPLORER_FRAMES": "all"},
                timeout=300) as kernel:
        (output,) = kernel.run(CELL)
        assert WIDGET_VIEW not in output and 'class="nqf-explorer-data"' in output["text/html"]
        assert kernel.evaluate("[ex.live, ex.complete, len(ex.frames)]") == [False, True, 8]
