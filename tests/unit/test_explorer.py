"""The precomputed explorers (nqf_mini.course.explorer): frames, HTML, fallbacks.

The browser test (tests/browser/test_explorers.py) moves the controls on the built book;
these tests check what the chapters rely on without a browser: one frame per grid point,
the same bytes for the same input, a page with nothing remote in it, a default frame
that shows when scripts do not run, and errors that name the argument at fault.
"""

from __future__ import annotations

import base64
import io
import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from nqf_mini.course.explorer import MAX_FRAMES, Choice, Explorer, Slider, explorer
from nqf_mini.course.style import COLORS


def draw_line(fig: Figure, slope: float, kind: str = "line") -> None:
    """A cheap figure that depends visibly on both controls."""
    ax = fig.subplots()
    x = np.linspace(0.0, 1.0, 20)
    ax.plot(x, slope * x, "o-" if kind == "dots" else "-", color=COLORS["network"],
            label=f"slope {slope:g}")
    ax.set_ylim(-2, 2)
    ax.legend()


def small(*controls: Slider | Choice, **kwargs) -> Explorer:
    kwargs.setdefault("caption", "What to look for: the line tilts as the slope moves.")
    return explorer(draw_line, *controls, figsize=(2.0, 1.5), dpi=30, **kwargs)


SLOPE = Slider("slope", [-1.0, 0.0, 0.5, 1.0], default=0.5)
KIND = Choice("kind", ["line", "dots"])


class Parts(HTMLParser):
    """The explorer's image, controls, data and scripts, as a browser without scripts
    would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict] = []
        self.controls: list[dict] = []
        self.hidden: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images.append(attrs)
        if tag in {"input", "select"}:
            self.controls.append({"tag": tag, **attrs})
        if "hidden" in attrs:
            self.hidden.append(attrs.get("class", ""))
        if tag == "script":
            self._script = attrs

    def handle_data(self, data):
        if self._script is not None:
            self.scripts.append((self._script, data))
            self._script = None

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script, ""))
            self._script = None


def parts(html: str) -> Parts:
    p = Parts()
    p.feed(html)
    p.close()
    return p


def data_of(html: str) -> dict:
    (text,) = [t for a, t in parts(html).scripts if a.get("type") == "application/json"]
    return json.loads(text)


@pytest.fixture(scope="module")
def two() -> Explorer:
    return small(KIND, SLOPE)


def test_one_frame_per_grid_point_and_they_differ(two):
    assert two.shape == (2, 4) and len(two.index) == 8
    frames = {two.frame(kind=k, slope=s) for k in KIND.options for s in SLOPE.values}
    assert len(frames) == 8, "every grid point should draw a different figure"
    for png in frames:
        image = Image.open(io.BytesIO(png))
        assert image.format == "PNG" and image.mode == "P"     # palette-quantised
        assert image.size == (60, 45)                            # figsize x dpi
        assert not image.info.get("Software")                    # no metadata
    assert two.frame() == two.frame(kind="line", slope=0.5) == two._repr_png_()


def test_same_input_same_bytes(two):
    again = small(KIND, SLOPE)
    assert again.frames == two.frames and again.index == two.index
    assert again._repr_html_() == two._repr_html_()


def test_identical_frames_are_stored_once():
    ex = explorer(lambda fig, n: fig.subplots().plot([0, 1], [0, 1]),
                  Slider("n", range(5)), caption="Nothing moves here.", figsize=(1, 1),
                  dpi=30)
    assert len(ex.index) == 5 and len(ex.frames) == 1


def test_html_has_nothing_remote(two):
    html = two._repr_html_()
    # Base64 frames may contain "//" by chance: leave them out of the search.
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:", html)
    text = re.sub(r'"[A-Za-z0-9+/=]{40,}"', '""', text)
    assert not re.search(r"https?:|//[a-z0-9]|\b(src|href)=\"(?!data:)", text, re.I)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    # The data cannot close its <script> element early.
    for _, text in parts(html).scripts:
        assert "</" not in text


def test_without_scripts_the_default_frame_shows(two):
    """A page whose scripts do not run shows the default frame and the caption, and no
    dead controls (they stay hidden)."""
    html = two._repr_html_()
    p = parts(html)
    (img,) = p.images
    default = base64.b64encode(two.frame()).decode()
    assert img["src"] == "data:image/png;base64," + default
    assert "kind = line" in img["alt"] and "slope = 0.5" in img["alt"]
    assert "nqf-explorer-controls" in p.hidden
    assert two.caption in html


def test_data_maps_every_control_value_to_its_frame(two):
    """The data the script reads: each grid point's frame, row-major."""
    html = two._repr_html_()
    d = data_of(html)
    assert d["shape"] == [2, 4]
    assert d["labels"] == [["line", "dots"], ["-1", "0", "0.5", "1"]]
    default = parts(html).images[0]["src"]
    for i, kind in enumerate(KIND.options):
        for j, slope in enumerate(SLOPE.values):
            f = d["index"][i * 4 + j]
            src = default if d["frames"][f] is None else (
                "data:image/png;base64," + d["frames"][f])
            assert src == "data:image/png;base64," + base64.b64encode(
                two.frame(kind=kind, slope=slope)).decode()
    slider = [c for c in parts(html).controls if c["tag"] == "input"][0]
    assert (slider["type"], slider["min"], slider["max"], slider["value"]) == (
        "range", "0", "3", "2")


def test_values_reach_draw_as_given():
    seen = []

    def draw(fig, seed, name):
        seen.append((seed, name))
        fig.subplots()

    explorer(draw, Slider("seed", np.arange(3)), Choice("name", ["a", "b"]),
             caption="Seeds stay integers.", figsize=(1, 1), dpi=30)
    assert all(type(seed) is int for seed, _ in seen)
    assert {s for s, _ in seen} == {0, 1, 2} and {n for _, n in seen} == {"a", "b"}


def test_figure_draws_off_the_grid(two):
    fig = two.figure(slope=0.3)
    assert isinstance(fig, Figure) and fig.axes[0].get_legend().texts[0].get_text() == (
        "slope 0.3")
    with pytest.raises(ValueError, match="not on the grid"):
        two.frame(slope=0.3)
    with pytest.raises(ValueError, match="unknown control"):
        two.frame(angle=1.0)


def test_repr_says_what_it_holds(two):
    text = repr(two)
    assert "kind (2) x slope (4)" in text and "8 grid points" in text


@pytest.mark.parametrize("make, argument", [
    (lambda: small(), "controls"),
    (lambda: small(SLOPE, KIND, Choice("c", ["x", "y"])), "controls"),
    (lambda: small(SLOPE, Slider("slope", [1, 2])), "controls"),
    (lambda: small("slope"), "controls"),
    (lambda: small(SLOPE, caption=""), "caption"),
    (lambda: small(SLOPE, colors=1), "colors"),
    (lambda: small(SLOPE, dpi=5), "dpi"),
    (lambda: explorer(draw_line, SLOPE, caption="c", figsize=(0, 1)), "figsize"),
    (lambda: explorer(draw_line, SLOPE, caption="c", figsize="big"), "figsize"),
    (lambda: explorer("draw", SLOPE, caption="c"), "draw"),
    (lambda: explorer(lambda fig, slope: None, SLOPE, caption="c"), "draw"),
    (lambda: small(SLOPE, alt=3), "alt"),
    (lambda: small(Slider("a", range(30)), Slider("b", range(MAX_FRAMES // 30 + 1))),
     "controls"),
    (lambda: Slider("slope", [1.0]), "values"),
    (lambda: Slider("slope", [1.0, 0.5]), "values"),
    (lambda: Slider("slope", [0.0, np.nan]), "values"),
    (lambda: Slider("slope", ["a", "b"]), "values"),
    (lambda: Slider("slope", [0.0, 1.0], default=0.3), "default"),
    (lambda: Slider("slope", [0.0, 1.0], fmt="{:d}"), "fmt"),
    (lambda: Slider("2d", [0.0, 1.0]), "name"),
    (lambda: Choice("kind", ["line"]), "options"),
    (lambda: Choice("kind", ["a", "a"]), "options"),
    (lambda: Choice("kind", "ab"), "options"),
    (lambda: Choice("kind", ["a", "b"], default="c"), "default"),
])
def test_bad_arguments_name_the_argument(make, argument):
    with pytest.raises((TypeError, ValueError), match=argument):
        make()
