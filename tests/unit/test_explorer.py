"""The explorers (nqf_mini.course.explorer): frames, HTML, fallbacks, live widgets.

The browser test (tests/browser/test_explorers.py) moves the controls on the built book,
and tests/unit/test_explorer_kernel.py and tests/chapters/test_live_explorers.py drive
the live widgets in a kernel; these tests check what the chapters rely on without a
browser or a kernel: one frame per grid point, the same bytes for the same input, a page
with nothing remote in it, a default frame and a hint that show when scripts do not run,
markup that a screen reader and a phone can use, HTML that the book and the notebook
edition can read back (also the first version's), the live view's values and redraws,
and errors that name the argument at fault.
"""

from __future__ import annotations

import base64
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from nqf_mini.course import explorer_live, explorer_page
from nqf_mini.course.explorer import (FRAMES_ENV_VAR, MAX_FRAMES, Choice, Explorer, Slider,
                                      explorer)
from nqf_mini.course.style import COLORS

DATA = Path(__file__).parent / "data"


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


SLOPE = Slider("slope", [-1.0, 0.0, 0.5, 1.0], default=0.5, label="slope α_s")
KIND = Choice("kind", ["line", "dots"])


class Parts(HTMLParser):
    """The explorer's image, controls, data and scripts, as a browser without scripts
    would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict] = []
        self.controls: list[dict] = []
        self.hidden: list[str] = []
        self.elements: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs))
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


def by_class(html: str, name: str) -> list[dict]:
    return [a for _, a in parts(html).elements if name in (a.get("class") or "").split()]


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
    """A page whose scripts do not run shows the default frame, the caption and a hint
    that says how to get the controls and which values are shown; the controls stay
    hidden (also where a sanitiser drops the ``hidden`` attribute but keeps styles)."""
    html = two._repr_html_()
    p = parts(html)
    (img,) = p.images
    default = base64.b64encode(two.frame()).decode()
    assert img["src"] == "data:image/png;base64," + default
    assert "kind = line" in img["alt"] and "slope alpha s = 0.5" in img["alt"]
    (box,) = by_class(html, "nqf-explorer-controls")
    assert "hidden" in box and "display:none" in box["style"]
    assert two.caption in html
    (hint,) = by_class(html, "nqf-explorer-hint")
    text = re.search(r'class="nqf-explorer-hint"[^>]*>([^<]*)<', html).group(1)
    assert "Trust Notebook" in text and "kind = line, slope alpha s = 0.5" in text


def test_markup_for_screen_readers_and_phones(two):
    """Controls in a labelled group; the slider announces the value shown (a minus read
    as "minus"), symbol names spoken as words; a short alt with the caption as its
    description; targets of 24 px; the frame with its size, never below MIN_SCALE."""
    html = two._repr_html_()
    (box,) = by_class(html, "nqf-explorer-controls")
    assert box["role"] == "group"
    name = [a for _, a in parts(html).elements if a.get("id") == box["aria-labelledby"]]
    assert len(name) == 1
    select, slider = parts(html).controls
    assert "aria-label" not in select                     # "kind" needs no other name
    assert slider["aria-label"] == "slope alpha s"        # shown: "slope α_s"
    assert slider["aria-valuetext"] == "0.5"
    assert f"height:{explorer_page.TARGET_PX}px" in slider["style"]
    assert f"min-height:{explorer_page.TARGET_PX}px" in select["style"]
    (img,) = parts(html).images
    assert two.caption not in img["alt"] and len(img["alt"]) < 80
    (caption,) = by_class(html, "nqf-explorer-caption")
    assert img["aria-describedby"] == caption["id"]
    width, height = Image.open(io.BytesIO(two.frame())).size
    assert (img["width"], img["height"]) == (str(width), str(height))
    assert f"min-width:{round(explorer_page.MIN_SCALE * width)}px" in img["style"]
    assert f"max-width:{width}px" in img["style"]
    (view,) = by_class(html, "nqf-explorer-view")
    assert "overflow-x:auto" in view["style"]
    # A negative value is read as "minus 1", not "dash 1".
    moved = explorer_page.render({**explorer_page.parse(html)[0], "controls": [
        {**c, "default": 0} for c in explorer_page.parse(html)[0]["controls"]]},
        *explorer_page.parse(html)[1:])
    assert parts(moved).controls[1]["aria-valuetext"] == "\u22121"


@pytest.mark.parametrize("label, said", [
    ("α_A", "alpha A"), ("(α1, α2)", "(alpha 1, alpha 2)"), ("coupling ρ", "coupling rho"),
    ("log10 eps", "log10 eps"), ("width d", "width d"), ("σ_k / Σ", "sigma k / Sigma"),
])
def test_symbol_names_are_spoken_as_words(label, said):
    assert explorer_page.spoken(label) == said


def test_data_maps_every_control_value_to_its_frame(two):
    """The data the script reads: each grid point's frame, row-major."""
    html = two._repr_html_()
    meta, first, d = explorer_page.parse(html)
    assert [len(c["labels"]) for c in meta["controls"]] == [2, 4]
    assert [c["labels"] for c in meta["controls"]] == [["line", "dots"], ["-1", "0", "0.5", "1"]]
    assert [c["kind"] for c in meta["controls"]] == ["menu", "slider"]
    for i, kind in enumerate(KIND.options):
        for j, slope in enumerate(SLOPE.values):
            f = d["index"][i * 4 + j]
            src = first if d["frames"][f] is None else d["frames"][f]
            assert base64.b64decode(src) == two.frame(kind=kind, slope=slope)
    slider = [c for c in parts(html).controls if c["tag"] == "input"][0]
    assert (slider["type"], slider["min"], slider["max"], slider["value"]) == (
        "range", "0", "3", "2")


def test_rerender_reads_back_what_it_wrote(two):
    """The book and the notebook edition re-render stored outputs: the same HTML back;
    with a frames address, the frames leave the page for a script file holding the
    same data."""
    html = two._repr_html_()
    assert explorer_page.rerender(html) == (html, None)
    page, script = explorer_page.rerender(html, "../_static/explorers/x.js")
    meta, first, data = explorer_page.parse(html)
    assert 'data-nqf-frames="../_static/explorers/x.js"' in page
    assert 'class="nqf-explorer-data"' not in page
    assert len(html) - len(page) > sum(len(f) for f in data["frames"] if f)
    assert explorer_page.parse(page) == (meta, first, None)
    prefix = f'(window.nqfExplorerFrames = window.nqfExplorerFrames || {{}})["{meta["id"]}"] = '
    assert script.startswith(prefix) and script.endswith(";\n")
    assert json.loads(script[len(prefix):-2]) == data


def test_the_first_version_is_read_and_rendered_anew(two):
    """Outputs stored by the first version of the explorer (before aria-valuetext, the
    hint and lazy frames) are re-rendered with the present markup."""
    old = (DATA / "explorer_v1.html").read_text()
    meta, first, data = explorer_page.parse(old)
    new_meta = explorer_page.parse(two._repr_html_())[0]
    for key in ("caption", "width", "height", "complete"):
        assert meta[key] == new_meta[key], key
    assert meta["alt"] == "The figure"
    assert [{k: c[k] for k in ("name", "label", "spoken", "kind", "labels", "default")}
            for c in meta["controls"]] == new_meta["controls"]
    assert len(data["index"]) == 8 and len({f for f in data["frames"] if f}) == 7
    html, _ = explorer_page.rerender(old)
    assert 'role="group"' in html and 'aria-valuetext="0.5"' in html
    with pytest.raises(ValueError, match="stored"):
        explorer_page.parse("<p>no explorer</p>")


def test_only_the_default_frame(monkeypatch):
    """NQF_EXPLORER_FRAMES=default (test kernels): one frame for every grid point, no
    controls in the HTML, and a hint that says where the controls appear."""
    monkeypatch.setenv(FRAMES_ENV_VAR, "default")
    ex = small(KIND, SLOPE)
    assert not ex.complete and len(ex.frames) == 1 and len(ex.index) == 8
    assert not ex.live
    html = ex._repr_html_()
    assert not parts(html).controls and "<script>" not in html
    assert "runs in a notebook with a kernel" in html
    monkeypatch.setenv(FRAMES_ENV_VAR, "some")
    with pytest.raises(ValueError, match=FRAMES_ENV_VAR):
        small(SLOPE)


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


# --- the live view (ipywidgets, here without a kernel: the same objects, no messages) ---


def live(*controls: Slider | Choice, draw=draw_line) -> Explorer:
    ex = explorer(draw, *controls, caption="What to look for: the line tilts.",
                  figsize=(2.0, 1.5), dpi=30)
    return ex


def test_live_controls_cover_the_whole_range(monkeypatch):
    """Each control's widget spans the grid's range, not only its points: a float grid
    in steps of a power of 10 below its spacing, an integer grid over every integer, a
    geometric grid of integers on a log scale rounded to integers, a menu as a menu."""
    pytest.importorskip("ipywidgets")
    monkeypatch.setenv(FRAMES_ENV_VAR, "default")
    widths = Slider("width", 2 ** np.arange(2, 11), default=64, label="width d")
    seeds = Slider("seed", range(4))
    view = live(KIND, SLOPE, draw=lambda fig, kind, slope: fig.subplots()).widget()
    (menu, none), (slider, readout) = view.inputs
    assert none is None and list(menu.options) == ["line", "dots"]
    assert (slider.min, slider.max, slider.step) == (-1.0, 1.0, 0.1)
    assert type(slider).__name__ == "FloatSlider" and readout.value == "0.5"
    assert explorer_live.draw_value(SLOPE, 0.30000000000000004) == 0.3
    assert explorer_live.draw_value(SLOPE, -0.0) == 0.0
    for control, kind, value, drawn in [(widths, "FloatLogSlider", 90.5, 90),
                                        (seeds, "IntSlider", 2, 2)]:
        (w, _), = live(control, draw=lambda fig, **v: fig.subplots()).widget().inputs
        assert type(w).__name__ == kind and explorer_live.draw_value(control, value) == drawn
    (w, _), = live(widths, draw=lambda fig, **v: fig.subplots()).widget().inputs
    assert (10 ** w.min, 10 ** w.max) == pytest.approx((4, 1024))
    assert explorer_live.slider_step(Slider("r", [0.0, 0.25, 0.5])) == 0.01


def test_live_view_redraws_the_value_and_paces_itself(monkeypatch):
    """A move draws exactly ``figure(**values)``; a draw slower than FOLLOW_SECONDS of
    CPU time switches the sliders to redraw on release and says so, a fast one back."""
    pytest.importorskip("ipywidgets")
    import time

    monkeypatch.setenv(FRAMES_ENV_VAR, "default")
    cost = {"seconds": 0.0}

    def draw(fig, slope):
        end = time.process_time() + cost["seconds"]
        while time.process_time() < end:
            pass
        draw_line(fig, slope)

    ex = live(Slider("slope", [-1.0, 0.0, 0.5, 1.0], default=0.5), draw=draw)
    view = ex.widget()
    (slider, readout), = view.inputs
    assert view.follows and slider.continuous_update
    slider.value = -0.3
    assert readout.value == "-0.3" and view.values == {"slope": -0.3}
    assert view.image.value == explorer_live.png(ex.figure(slope=-0.3), ex.dpi)
    cost["seconds"] = 1.2 * explorer_live.FOLLOW_SECONDS
    for value in (0.1, 0.2):
        slider.value = value
    assert not view.follows and not slider.continuous_update
    assert "redraws when you release" in view.status.value
    cost["seconds"] = 0.0
    for value in (0.3, 0.4, 0.6):
        slider.value = value
    assert view.follows and slider.continuous_update and view.status.value == ""
