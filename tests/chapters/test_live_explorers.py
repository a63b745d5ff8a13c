"""Every chapter's explorer, live in a kernel: each control moved, the figure redrawn.

For each chapter with an explorer, a ``python3`` kernel (:mod:`tests.unit.kernel_driver`)
runs the chapter's code cells that the explorer needs, no more: the cells the grader's
slicer (:func:`nqf_mini.course.notebook_slice.cells_to_run`) keeps for the explorer's
name, which include every cell with a global effect. The explorer cell itself runs
unchanged, so its output is the live widget. Then each control is moved as a front end
moves it: a slider to a value between two grid points (an integer slider to an integer
off the grid where there is one), a menu to another option. After each move the figure
the front end received must have changed, and must be, pixel for pixel, the one the
chapter's ``draw`` makes at those values (drawn again in the kernel), not the nearest
grid point's. The CPU seconds of the first draw and of each
redraw (and the wall seconds of each move, which depend on the machine's load) are
written to ``_build/live-explorers.json``.

The test runs under Colab's ipywidgets 7.7.1 in ``make compat``'s Colab session (marker
``live``: ``make unit`` leaves it out, so that CI executes each chapter's lecture cells no more
often than needed); under the lock's ipywidgets 8, ``tests/unit/test_explorer_kernel.py``
drives an explorer in a real kernel the same way, and ``pytest -m live`` runs this test here.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import math
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
from PIL import Image

from nqf_mini.course.explorer_live import draw_value, slider_step
from nqf_mini.course.notebook_slice import cells_to_run
from ..conftest import need
from ..unit.kernel_driver import WIDGET_VIEW, Kernel

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p for p in (ROOT / "chapters").glob("*.ipynb")
                  if "nqf_mini.course.explorer import" in p.read_text(encoding="utf-8"))
RECORD = ROOT / "_build" / "live-explorers.json"

ORACLE = '''(lambda fig: (lambda b: (fig.savefig(b, format="png", dpi={name}.dpi,
    metadata={{"Software": None}}), b.getvalue())[1])(__import__("io").BytesIO()))(
    {name}.figure(**{values!r}))'''


def explorer_cells(path: Path) -> tuple[list[str], str]:
    """The code cells to run up to the explorer (sliced) and the explorer's name."""
    nb = nbformat.read(path, as_version=4)
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    (at,) = [i for i, s in enumerate(sources) if "explorer(" in s and "import" in s]
    last = ast.parse(sources[at]).body[-1]
    assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Name), (
        f"{path.name}: the explorer cell should end with the explorer's name")
    name = last.value.id
    keep = cells_to_run(sources[: at + 1], set(sources), [name])
    assert keep[-1] == at
    return [sources[i] for i in keep], name


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def targets(control: dict, state: dict) -> tuple[dict, object, object]:
    """(the state a front end sends, the value draw should get, the grid value nearest
    to it, whose figure must differ; None for a menu or when no value lies between
    grid points) for one control of the explorer: a third of the way from the
    default to the next grid value."""
    if control["kind"] == "menu":
        options = control["options"]
        i = (options.index(control["default"]) + 1) % len(options)
        return {"index": i}, options[i], None
    values, default = control["values"], control["default"]
    j = values.index(default)
    a, b = (values[j], values[j + 1]) if j + 1 < len(values) else (values[j], values[j - 1])
    if state["_model_name"] == "FloatLogSliderModel":
        sent = 10 ** (math.log10(a) + (math.log10(b) - math.log10(a)) / 3)
        return {"value": sent}, draw_value(control["slider"], sent), a
    if state["_model_name"] == "IntSliderModel":
        between = sorted(range(min(a, b) + 1, max(a, b)), key=lambda v: abs(v - a))
        return ({"value": between[0]}, between[0], a) if between else ({"value": b}, b, None)
    step = slider_step(control["slider"])
    sent = round(a + round((b - a) / 3 / step) * step, 12)
    return {"value": sent}, draw_value(control["slider"], sent), a


@pytest.fixture(scope="module")
def record():
    found: dict = {}
    yield found
    RECORD.parent.mkdir(exist_ok=True)
    old = json.loads(RECORD.read_text()) if RECORD.is_file() else {}
    RECORD.write_text(json.dumps({**old, **found}, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_control_redraws_live(path, record):
    from nqf_mini.course.explorer import Slider

    need(importlib.util.find_spec("ipywidgets") is not None, "ipywidgets is not installed")
    cells, name = explorer_cells(path)
    env = {"NQF_EXPLORER_FRAMES": None, "NQF_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    with Kernel(path.parent, env=env, timeout=600) as kernel:
        for source in cells[:-1]:
            kernel.run(source)
        outputs = kernel.run(cells[-1])
        views = [o for o in outputs if WIDGET_VIEW in o]
        assert len(views) == 1 and "text/html" in views[0], (
            f"{path.name}: the explorer cell should show one live widget, with its HTML")
        models = kernel.descendants(views[0][WIDGET_VIEW]["model_id"])
        (image,) = [m for m in models if m.name == "ImageModel"]
        inputs = [m for m in models if m.name.endswith(("SliderModel", "DropdownModel"))]
        controls = kernel.evaluate(
            f"[dict(name=c.name, kind='menu' if hasattr(c, 'options') else 'slider', "
            f"options=list(getattr(c, 'options', [])), values=list(c.values), "
            f"default=c.default) for c in {name}.controls]")
        assert len(inputs) == len(controls)
        values = {c["name"]: c["default"] for c in controls}
        seconds = []
        for control, model in zip(controls, inputs, strict=True):
            if control["kind"] == "slider":
                control["slider"] = Slider(control["name"], control["values"],
                                           default=control["default"])
            state, expected, nearest = targets(control, model.state)
            before = image.state["value"]
            start = time.perf_counter()
            kernel.move(model, **state)
            seconds.append(time.perf_counter() - start)
            values[control["name"]] = expected
            assert kernel.evaluate(f"{name}.widget().current()") == values
            shown = pixels(image.state["value"])
            assert image.state["value"] != before, (
                f"{path.name}: moving {control['name']} to {expected!r} left the figure as it was")
            oracle = pixels(kernel.png(ORACLE.format(name=name, values=values)))
            assert np.array_equal(shown, oracle), (
                f"{path.name}: the live figure at {values} is not what draw makes there")
            if nearest is not None:
                near = pixels(kernel.png(ORACLE.format(
                    name=name, values={**values, control["name"]: nearest})))
                assert shown.shape != near.shape or not np.array_equal(shown, near), (
                    f"{path.name}: {control['name']} = {expected!r} shows the figure of "
                    f"the nearest grid value {nearest!r}")
        draw = kernel.evaluate(f"{name}.seconds")
        record[path.stem] = {
            "draw_cpu_s": round(draw, 3),
            "redraw_cpu_s": [round(s, 3) for s in kernel.evaluate(f"{name}.widget().seconds")],
            "redraw_wall_s": [round(s, 3) for s in seconds],
            # After the moves: whether the figure follows a slider or redraws on release.
            "follows_slider": kernel.evaluate(f"{name}.widget().follows"),
        }
