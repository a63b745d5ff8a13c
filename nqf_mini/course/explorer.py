"""Explorers: a figure that the reader redraws by moving a control, wherever it is read.

A chapter's explorer lets the reader move a control (a slider or a menu) and watch a
figure change. :func:`explorer` returns an :class:`Explorer`, which shows itself in one
of two ways.

* **Without a kernel** (the online book, a printed page, a notebook opened without
  running it): ``draw`` is called once for every point of a small grid of control
  values when the chapter executes, and the HTML output holds the frames (small palette
  PNGs) and a few lines of JavaScript that show the frame of the current values
  (:mod:`nqf_mini.course.explorer_page`: accessible controls, a frame that stays legible
  on a phone, frames read only when the reader first touches a control). No widget
  manager, kernel or network is needed. Where scripts are stripped (an untrusted
  notebook, a notebook viewer) the default frame, the caption and a hint show.
* **In a kernel** (Colab, JupyterLab, VS Code, Binder, with ipywidgets 7.7 or 8): the
  controls are ipywidgets that call ``draw`` again for any value in their range, not
  only the grid's (:mod:`nqf_mini.course.explorer_live`); only the default frame is
  drawn in advance. The static HTML travels with the widget, for a front end that
  cannot show it. :meth:`Explorer.figure` draws any values from code, off the grid and
  outside its range too.

The environment variable ``NQF_EXPLORER_FRAMES`` (:data:`FRAMES_ENV_VAR`) overrides the
choice: ``all`` draws every frame and shows no widgets, also in a kernel (the stored
outputs of the book are made so, by ``python -m scripts.execute_chapters``); ``default``
draws only the default frame (the test suite's kernels, which never look at the others).

Usage, in a chapter::

    def draw(fig, activation, scale):
        ax = fig.subplots()
        ...

    explorer(draw, Choice("activation", ["tanh", "sin"]),
             Slider("scale", np.linspace(0.1, 1.0, 10), label="scale s"),
             caption="What to look for as the controls move.")

``draw(fig, **values)`` receives a fresh :class:`matplotlib.figure.Figure` in the course
style of :mod:`nqf_mini.course.style` and draws into it (no ``plt.show()``). Each grid
point is drawn once, so the grid is the explorer's cost in time and in bytes: 10 to 30
values for a slider, at most two controls.
"""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox
from PIL import Image

from . import explorer_page
from .style import STYLE

__all__ = ["Choice", "Explorer", "Slider", "explorer"]

#: At most this many controls: beyond two, the grid (and the page) grows too fast.
MAX_CONTROLS = 2
#: At most this many grid points in one explorer (each is a PNG embedded in the page).
MAX_FRAMES = 400
#: ``NQF_EXPLORER_FRAMES=all``: every frame, no widgets (the book's stored outputs);
#: ``default``: only the default frame (the test suite's kernels: their checks never look at
#: the other frames, which are most of a chapter's run time); unset: every frame, or in a
#: kernel with ipywidgets the default frame and live widgets.
FRAMES_ENV_VAR = "NQF_EXPLORER_FRAMES"
FRAMES_MODES = ("", "all", "default")


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * (1.0 + abs(b))


@dataclass(frozen=True)
class Slider:
    """A numeric control: a slider over increasing ``values``, showing the current one.

    ``name`` is the keyword passed to ``draw``; ``label`` is what the reader sees
    (``name`` when empty); ``fmt`` formats a value for display; ``default`` is the value
    shown first (the middle of the grid when ``None``). A grid of Python or NumPy
    integers stays integers (``draw`` may use them as seeds or sizes).
    """

    name: str
    values: Sequence[float]
    label: str = ""
    default: float | None = None
    fmt: str = "{:g}"

    def __post_init__(self) -> None:
        _check_name(self.name)
        where = f"Slider {self.name!r}"
        if isinstance(self.values, (str, bytes)):
            raise TypeError(f"{where}: values must be numbers, got a string")
        raw = list(self.values)
        try:
            grid = np.asarray(raw, dtype=float)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{where}: values must be numbers") from err
        if grid.ndim != 1 or grid.size < 2:
            raise ValueError(f"{where}: values must be a 1-D grid of 2 or more numbers")
        if not np.all(np.isfinite(grid)):
            raise ValueError(f"{where}: values must be finite")
        if not np.all(np.diff(grid) > 0):
            raise ValueError(f"{where}: values must be strictly increasing")
        integers = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                       for v in raw)
        values = tuple(int(v) for v in raw) if integers else tuple(grid.tolist())
        object.__setattr__(self, "values", values)
        if self.default is None:
            object.__setattr__(self, "default", values[(len(values) - 1) // 2])
        else:
            try:
                index = self.index(self.default)
            except (TypeError, ValueError) as err:
                raise ValueError(f"{where}: default {self.default!r} is not one of "
                                 "values") from err
            object.__setattr__(self, "default", values[index])
        if not isinstance(self.label, str):
            raise TypeError(f"{where}: label must be a string")
        if not isinstance(self.fmt, str):
            raise TypeError(f"{where}: fmt must be a format string such as '{{:.2f}}'")
        try:
            self.fmt.format(values[0])
        except (ValueError, IndexError, KeyError) as err:
            raise ValueError(f"{where}: fmt {self.fmt!r} cannot format a number"
                             ) from err

    @property
    def labels(self) -> list[str]:
        """The values as the reader sees them."""
        return [self.fmt.format(v) for v in self.values]

    @property
    def default_index(self) -> int:
        """Position of the default value in the grid."""
        return self.values.index(self.default)

    def index(self, value: Any) -> int:
        """Position of ``value`` in the grid; a value off the grid raises ValueError."""
        value = float(value)
        i = int(np.argmin(np.abs(np.asarray(self.values, dtype=float) - value)))
        if not _same(float(self.values[i]), value):
            raise ValueError(f"{self.name}={value:g} is not on the grid {self.labels}")
        return i


@dataclass(frozen=True)
class Choice:
    """A categorical control: a menu of ``options`` (strings, passed to ``draw`` as is).

    ``label`` is what the reader sees (``name`` when empty); ``default`` is the option
    shown first (the first one when ``None``).
    """

    name: str
    options: Sequence[str]
    label: str = ""
    default: str | None = None

    def __post_init__(self) -> None:
        _check_name(self.name)
        where = f"Choice {self.name!r}"
        if isinstance(self.options, str) or not all(isinstance(o, str)
                                                    for o in self.options):
            raise TypeError(f"{where}: options must be a sequence of strings")
        options = tuple(self.options)
        if len(options) < 2:
            raise ValueError(f"{where}: options needs at least 2 entries")
        if len(set(options)) != len(options):
            raise ValueError(f"{where}: options must be distinct")
        object.__setattr__(self, "options", options)
        if self.default is None:
            object.__setattr__(self, "default", options[0])
        elif self.default not in options:
            raise ValueError(f"{where}: default {self.default!r} is not one of options")
        if not isinstance(self.label, str):
            raise TypeError(f"{where}: label must be a string")

    @property
    def values(self) -> tuple[str, ...]:
        """The options, under the name that :class:`Slider` uses."""
        return tuple(self.options)

    @property
    def labels(self) -> list[str]:
        """The options as the reader sees them."""
        return list(self.options)

    @property
    def default_index(self) -> int:
        """Position of the default option."""
        return self.index(self.default)

    def index(self, value: Any) -> int:
        """Position of ``value`` among the options; another value raises ValueError."""
        if value not in self.options:
            raise ValueError(f"{self.name}={value!r} is not one of "
                             f"{list(self.options)}")
        return list(self.options).index(value)


Control = Slider | Choice


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError("name: a control's name must be a Python identifier (a "
                         f"keyword of draw), got {name!r}")


@dataclass(frozen=True)
class Explorer:
    """A figure over a grid of control values: its precomputed frames, and in a kernel
    its live controls.

    A notebook or the book's page shows it through :meth:`_repr_mimebundle_` (in a
    kernel with ipywidgets: the live widget, with the HTML beside it) and
    :meth:`_repr_html_` (the precomputed frames); the default frame (:meth:`_repr_png_`)
    and ``repr`` are the fallbacks of front ends that show neither. Build one with
    :func:`explorer`.
    """

    draw: Callable[..., None] = field(repr=False)
    controls: tuple[Control, ...]
    caption: str
    frames: tuple[bytes, ...] = field(repr=False)   # the distinct PNGs
    index: tuple[int, ...] = field(repr=False)      # grid point (row-major) -> frame
    figsize: tuple[float, float] = (6.4, 4.0)
    dpi: int = 80
    alt: str = ""
    #: Every grid point was drawn (False: only the default, which every point shows).
    complete: bool = True
    #: Shown as ipywidgets that redraw in the kernel.
    live: bool = False
    #: Where the frames' axes are (the same in every frame); None: each figure laid out
    #: by itself.
    layout: tuple[Bbox, ...] | None = field(default=None, repr=False, compare=False)
    #: CPU seconds one frame took to draw (the live widget follows a slider when it is
    #: short; CPU time, so that a machine busy with other work does not change it).
    seconds: float = field(default=0.0, repr=False, compare=False)
    _views: list[Any] = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def shape(self) -> tuple[int, ...]:
        """Number of values of each control."""
        return tuple(len(c.values) for c in self.controls)

    @property
    def default_point(self) -> int:
        """Row-major grid position of the default values."""
        return self._flat([c.default_index for c in self.controls])

    @property
    def nbytes(self) -> int:
        """Size of the distinct frames (PNG bytes, before base64)."""
        return sum(len(f) for f in self.frames)

    @property
    def html_id(self) -> str:
        """An element id derived from the content: same input, same page."""
        digest = hashlib.sha256(self.caption.encode())
        for frame in self.frames:
            digest.update(hashlib.sha256(frame).digest())
        digest.update(json.dumps([c.labels for c in self.controls]).encode())
        return "nqf-explorer-" + digest.hexdigest()[:12]

    def _flat(self, indices: Sequence[int]) -> int:
        flat = 0
        for i, n in zip(indices, self.shape, strict=True):
            flat = flat * n + i
        return flat

    def _check_names(self, values: dict[str, Any]) -> None:
        unknown = set(values) - {c.name for c in self.controls}
        if unknown:
            raise ValueError(f"unknown control(s) {sorted(unknown)}; the controls are "
                             f"{[c.name for c in self.controls]}")

    def frame(self, **values: Any) -> bytes:
        """The precomputed PNG for ``values`` (on the grid; an omitted one: default)."""
        self._check_names(values)
        indices = [c.index(values[c.name]) if c.name in values else c.default_index
                   for c in self.controls]
        return self.frames[self.index[self._flat(indices)]]

    def figure(self, **values: Any) -> Figure:
        """Draw the figure for any values, off the grid and outside its range too (an
        omitted one: its default), with the axes where the frames have them. The live
        widget shows this figure."""
        self._check_names(values)
        kwargs = {c.name: c.default for c in self.controls}
        kwargs.update(values)
        return _draw_figure(self.draw, self.figsize, kwargs,
                            None if self.layout is None else list(self.layout))

    def widget(self) -> Any:
        """The live view (an ipywidgets box), made on first use: what a kernel shows."""
        if not self._views:
            from .explorer_live import LiveView

            self._views.append(LiveView(self))
        return self._views[0]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None
                          ) -> dict[str, Any] | None:
        if not self.live:
            return None
        try:
            view = self.widget()
        except ImportError:       # ipywidgets removed since: the static HTML
            return None
        return {**view.mimebundle(), "text/plain": repr(self)}

    def _repr_png_(self) -> bytes:
        return self.frames[self.index[self.default_point]]

    def __repr__(self) -> str:
        grid = " x ".join(f"{c.name} ({len(c.values)})" for c in self.controls)
        drawn = (f"{len(self.frames)} distinct frames" if self.complete
                 else "the default frame drawn")
        live = ", live in this kernel" if self.live else ""
        return (f"Explorer over {grid}: {len(self.index)} grid points, {drawn}, "
                f"{self.nbytes / 1e3:.0f} kB{live}. {self.caption}")

    def _repr_html_(self) -> str:
        return _html(self)


# --- drawing the frames --------------------------------------------------------------


def _draw_figure(draw: Callable[..., None], figsize: tuple[float, float],
                 values: dict[str, Any], boxes: list[Bbox] | None = None) -> Figure:
    """A new figure with ``draw``'s content, laid out by constrained layout; or, when
    ``boxes`` match its axes, with the axes placed there (no layout pass)."""
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=figsize, layout="constrained")
        draw(fig, **values)
    if not fig.axes:
        raise ValueError(f"draw: it drew no axes for {values}; it must draw into the "
                         "figure it is given")
    if boxes is not None and len(boxes) == len(fig.axes):
        fig.set_layout_engine("none")
        for ax, box in zip(fig.axes, boxes, strict=True):
            ax.set_position(box)
    return fig


def _common_layout(figures: list[Figure]) -> list[Bbox] | None:
    """Axes boxes that leave room for the labels of every figure given: the constrained
    layout of each, intersected. ``None`` when the figures' axes differ in number.

    Used for every frame, the boxes keep the axes still while the reader moves a
    control (a plot that jumps is hard to compare), and they spare each frame a layout
    pass, which costs as much as drawing it.
    """
    layouts = []
    for fig in figures:
        with mpl.rc_context(STYLE):
            fig.draw_without_rendering()
        layouts.append([ax.get_position(original=True) for ax in fig.axes])
    if len({len(boxes) for boxes in layouts}) != 1:
        return None
    common = []
    for boxes in zip(*layouts, strict=True):
        x0, y0 = max(b.x0 for b in boxes), max(b.y0 for b in boxes)
        x1, y1 = min(b.x1 for b in boxes), min(b.y1 for b in boxes)
        if x1 - x0 < 0.02 or y1 - y0 < 0.02:      # no common box: lay out each frame
            return None
        common.append(Bbox.from_extents(x0, y0, x1, y1))
    return common


def _corners(controls: Sequence[Control]) -> list[tuple[Any, ...]]:
    """The default point and the grid's corners (where tick labels are widest)."""
    points = [tuple(c.default for c in controls)]
    for combo in itertools.product(*((c.values[0], c.values[-1]) for c in controls)):
        if combo not in points:
            points.append(combo)
    return points


def _png(fig: Figure, dpi: int, colors: int) -> bytes:
    """The figure as a palette PNG of ``colors`` colours, with no metadata: small, and
    the same bytes for the same figure."""
    buffer = io.BytesIO()
    with mpl.rc_context(STYLE):
        fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    palette = image.quantize(colors=colors, method=Image.Quantize.MEDIANCUT,
                             dither=Image.Dither.NONE)
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _check_arguments(draw: object, controls: tuple[object, ...], caption: object,
                     alt: object, figsize: object, dpi: object,
                     colors: object) -> tuple[float, float]:
    if not callable(draw):
        raise TypeError("draw must be a function draw(fig, **values), got "
                        f"{type(draw).__name__}")
    if not 1 <= len(controls) <= MAX_CONTROLS:
        raise ValueError(f"controls: give 1 to {MAX_CONTROLS} Slider or Choice, "
                         f"got {len(controls)}")
    for c in controls:
        if not isinstance(c, (Slider, Choice)):
            raise TypeError("controls must be Slider or Choice, got "
                            f"{type(c).__name__}")
    checked = [c for c in controls if isinstance(c, (Slider, Choice))]
    names = [c.name for c in checked]
    if len(set(names)) != len(names):
        raise ValueError(f"controls: names must be distinct, got {names}")
    points = math.prod(len(c.values) for c in checked)
    if points > MAX_FRAMES:
        raise ValueError(f"controls: the grid has {points} points, more than "
                         f"{MAX_FRAMES}; use fewer values")
    if not isinstance(caption, str) or not caption.strip():
        raise ValueError("caption must say what to look for as the controls move "
                         "(a non-empty string)")
    if not isinstance(alt, str):
        raise TypeError(f"alt must be a string, got {type(alt).__name__}")
    try:
        width, height = (float(v) for v in figsize)  # type: ignore[attr-defined]
    except (TypeError, ValueError) as err:
        raise ValueError(f"figsize must be (width, height) in inches, got {figsize!r}"
                         ) from err
    if not (math.isfinite(width) and math.isfinite(height)) or min(width, height) <= 0:
        raise ValueError(f"figsize must be two positive numbers, got {figsize!r}")
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 20 <= dpi <= 300:
        raise ValueError(f"dpi must be an integer from 20 to 300, got {dpi!r}")
    if isinstance(colors, bool) or not isinstance(colors, int) or not 2 <= colors < 257:
        raise ValueError(f"colors must be an integer from 2 to 256, got {colors!r}")
    return width, height


def _mode() -> str:
    mode = os.environ.get(FRAMES_ENV_VAR, "").strip().lower()
    if mode not in FRAMES_MODES:
        raise ValueError(f"{FRAMES_ENV_VAR}: expected 'all', 'default' or unset, got "
                         f"{mode!r}")
    return mode


def _kernel_with_widgets() -> bool:
    """Whether this runs in a Jupyter kernel (IPython's ``kernel`` attribute: Colab,
    JupyterLab, VS Code, Binder) where ipywidgets can be imported."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if getattr(shell, "kernel", None) is None:
        return False
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def explorer(draw: Callable[..., None], *controls: Control, caption: str,
             figsize: tuple[float, float] = (6.4, 4.0), dpi: int = 80, colors: int = 32,
             alt: str = "") -> Explorer:
    """Precompute ``draw`` over the grid of ``controls``; return an explorer to display.

    ``draw(fig, **values)`` draws into a fresh figure of ``figsize`` inches, once per
    grid point (the product of the controls' values, at most :data:`MAX_FRAMES`). The
    axes are placed once, by constrained layout on the default point and the grid's
    corners, so that they stay still from frame to frame. Each frame is saved at ``dpi``
    as a PNG of at most ``colors`` colours (raise it for colour maps); identical frames
    are stored once. ``caption`` says what to look for as the controls move and is shown
    under the figure (screen readers read it as the figure's description); ``alt``
    (default "The figure") names the figure in a few words, and its alt text adds the
    values shown.

    In a kernel with ipywidgets only the default frame is drawn, and the explorer shows
    live controls instead (see the module's docstring and :data:`FRAMES_ENV_VAR`).
    """
    size = _check_arguments(draw, controls, caption, alt, figsize, dpi, colors)
    mode = _mode()
    live = mode != "all" and _kernel_with_widgets()
    complete = mode == "all" or (mode == "" and not live)
    names = [c.name for c in controls]
    default = tuple(c.default for c in controls)
    frames: list[bytes] = []
    seen: dict[bytes, int] = {}
    index: list[int] = []
    start = time.process_time()
    if not complete:
        # The default frame alone, laid out by itself; every grid point shows it.
        fig = _draw_figure(draw, size, dict(zip(names, default, strict=True)))
        frames.append(_png(fig, dpi, colors))
        index = [0] * math.prod(len(c.values) for c in controls)
        boxes = None
        seconds = time.process_time() - start
    else:
        corners = [dict(zip(names, point, strict=True)) for point in _corners(controls)]
        boxes = _common_layout([_draw_figure(draw, size, values) for values in corners])
        grid = list(itertools.product(*(c.values for c in controls)))
        start = time.process_time()
        for combo in grid:
            fig = _draw_figure(draw, size, dict(zip(names, combo, strict=True)), boxes)
            png = _png(fig, dpi, colors)
            if png not in seen:
                seen[png] = len(frames)
                frames.append(png)
            index.append(seen[png])
        seconds = (time.process_time() - start) / len(grid)
    return Explorer(draw=draw, controls=tuple(controls), caption=caption.strip(),
                    frames=tuple(frames), index=tuple(index), figsize=size, dpi=dpi,
                    alt=alt.strip(), complete=complete, live=live,
                    layout=None if boxes is None else tuple(boxes), seconds=seconds)


# --- the HTML output (nqf_mini.course.explorer_page) ---------------------------------


def _meta(ex: Explorer) -> dict[str, Any]:
    """What the explorer's HTML carries besides the frames (see explorer_page.render)."""
    with Image.open(io.BytesIO(ex._repr_png_())) as image:
        width, height = image.size
    controls = []
    for c in ex.controls:
        label = c.label or c.name
        controls.append({"name": c.name, "label": label, "spoken": explorer_page.spoken(label),
                         "kind": "slider" if isinstance(c, Slider) else "menu",
                         "labels": c.labels, "default": c.default_index})
    return {"version": explorer_page.VERSION, "id": ex.html_id,
            "alt": ex.alt or "The figure", "caption": ex.caption, "width": width,
            "height": height, "complete": ex.complete, "controls": controls}


def _html(ex: Explorer) -> str:
    default = ex.index[ex.default_point]
    data = {
        "index": list(ex.index),
        # The default frame is in the <img> already; the script takes it from there.
        "frames": [None if f == default else base64.b64encode(png).decode()
                   for f, png in enumerate(ex.frames)],
    }
    first = base64.b64encode(ex.frames[default]).decode()
    return explorer_page.render(_meta(ex), first, data)
