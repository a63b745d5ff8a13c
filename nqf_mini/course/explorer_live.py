"""An explorer live in a kernel: ipywidgets that redraw the figure for any value in range.

:meth:`nqf_mini.course.explorer.Explorer.widget` makes a :class:`LiveView` when the
explorer is shown in a kernel (Colab with ipywidgets 7.7, JupyterLab, VS Code and Binder
with 8.x; the same calls work in both). Each control becomes a widget over its whole
range, not only the grid's points:

* a menu (:class:`~nqf_mini.course.explorer.Choice`): a dropdown of its options;
* a slider over integers (seeds, widths, log10 of a size): an integer slider over every
  integer from the first to the last grid value, or, when the grid is geometric (4, 8,
  ..., 1024), a logarithmic slider rounded to integers;
* a slider over other numbers: a slider over the grid's range in steps of
  :func:`slider_step` (a tenth to a fiftieth of the finest grid spacing, a power of 10),
  each value rounded to that step.

Moving one calls the chapter's ``draw`` again (:meth:`Explorer.figure`, the package's
own simulation) and shows the new PNG. While a figure takes less than
:data:`FOLLOW_SECONDS` of CPU time to draw (the median of the last three), it follows the
slider as it moves (the front end sends the next value only once the kernel has answered
the last, so a drag never queues up); a slower one redraws when the reader lets go, and
says so under the figure. The choice is made again after every redraw, so it suits the
machine the kernel runs on. A draw that fails shows its message there instead of the
figure.
"""

from __future__ import annotations

import html
import io
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .explorer import Choice, Explorer, Slider

__all__ = ["FOLLOW_SECONDS", "LiveView", "draw_value", "png", "slider_step"]

#: A figure that draws in less CPU time than this follows the slider; a slower one redraws
#: when the slider is released.
FOLLOW_SECONDS = 0.5
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def png(fig: Figure, dpi: int) -> bytes:
    """The figure as the live widget shows it: a PNG at ``dpi``, without metadata."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def _integers(control: Slider) -> bool:
    return all(isinstance(v, int) for v in control.values)


def _geometric(control: Slider) -> bool:
    """A grid of positive values with one ratio of 1.5 or more (4, 8, 16, ...)."""
    values = np.asarray(control.values, dtype=float)
    if len(values) < 3 or values[0] <= 0:
        return False
    ratios = values[1:] / values[:-1]
    return bool(ratios.min() >= 1.5 and np.allclose(ratios, ratios[0], rtol=1e-6))


def slider_step(control: Slider) -> float:
    """The live slider's step over a grid of non-integers: the power of 10 at most a
    fifth of the finest grid spacing (a grid of 0.25 apart moves in steps of 0.01)."""
    spacing = float(np.diff(np.asarray(control.values, dtype=float)).min())
    return 10.0 ** math.floor(math.log10(spacing / 5))


def draw_value(control: Slider | Choice, value: Any) -> Any:
    """What ``draw`` receives when the live widget of ``control`` holds ``value``: an
    option, an integer (a grid of integers), or a number rounded to the slider's step."""
    from .explorer import Choice

    if isinstance(control, Choice):
        return value
    if _integers(control):
        return int(round(float(value)))
    decimals = max(0, -math.floor(math.log10(slider_step(control)) + 1e-9))
    return round(float(value), decimals) + 0.0           # no "-0.0"


def _shown(control: Slider, value: Any) -> str:
    """A live slider's value as the reader sees it: the control's own format when it
    shows the value exactly (to the step), else as many decimals as the step has."""
    text = control.fmt.format(value)
    try:
        if math.isclose(float(text), float(value), rel_tol=0, abs_tol=1e-9):
            return text
    except ValueError:
        pass
    if isinstance(value, int):
        return str(value)
    decimals = max(0, -math.floor(math.log10(slider_step(control)) + 1e-9))
    return f"{value:.{decimals}f}"


def _widget(widgets: Any, control: Slider | Choice, follow: bool) -> tuple[Any, Any]:
    """The widget of one control and the label showing its value (None for a menu)."""
    from .explorer import Choice

    label = control.label or control.name
    common = {"description": label, "style": {"description_width": "initial"}}
    if isinstance(control, Choice):
        return widgets.Dropdown(options=list(control.options), value=control.default,
                                **common), None
    lo, hi = control.values[0], control.values[-1]
    options = dict(common, readout=False, continuous_update=follow,
                   layout=widgets.Layout(width="24em"))
    if _geometric(control):
        low, high = math.log10(lo), math.log10(hi)
        slider = widgets.FloatLogSlider(value=control.default, base=10, min=low, max=high,
                                        step=(high - low) / 200, **options)
    elif _integers(control):
        slider = widgets.IntSlider(value=control.default, min=lo, max=hi, step=1, **options)
    else:
        slider = widgets.FloatSlider(value=control.default, min=lo, max=hi,
                                     step=slider_step(control), **options)
    return slider, widgets.Label(value=_shown(control, control.default))


class LiveView:
    """The explorer's controls as ipywidgets, its figure redrawn in the kernel.

    ``box`` is the widget shown (controls, figure, caption, status line); ``image`` the
    figure's widget; ``values`` the values of the figure shown; ``seconds`` the CPU
    seconds of each redraw so far.
    """

    def __init__(self, explorer: Explorer) -> None:
        import ipywidgets as widgets

        self.explorer = explorer
        self.follows = explorer.seconds < FOLLOW_SECONDS
        self.inputs = [_widget(widgets, c, self.follows) for c in explorer.controls]
        self.values = {c.name: c.default for c in explorer.controls}
        self.seconds: list[float] = []
        self.image = widgets.Image(value=explorer._repr_png_(), format="png",
                                   layout=widgets.Layout(max_width="100%", height="auto"))
        self.status = widgets.HTML(value=self._pace(explorer.seconds))
        rows = [widgets.HBox([w] + ([readout] if readout is not None else []))
                for w, readout in self.inputs]
        caption = widgets.HTML(value=self._note(explorer.caption))
        self.box = widgets.VBox([widgets.HBox(rows, layout=widgets.Layout(flex_flow="row wrap")),
                                 self.image, caption, self.status])
        for w, _ in self.inputs:
            w.observe(self._redraw, names="value")

    @staticmethod
    def _note(text: str, color: str = "inherit") -> str:
        return (f'<p style="font-size:0.9em;margin:0.2em 0;color:{color}">'
                f"{html.escape(text)}</p>" if text else "")

    def _pace(self, seconds: float) -> str:
        """The status line: empty while the figure follows the slider."""
        if self.follows:
            return ""
        return self._note("The figure redraws when you release a slider (it takes about "
                          f"{max(seconds, 0.1):.1f} s to draw).")

    def _adapt(self) -> None:
        """Follow the slider, or redraw on release, by the last three redraws' CPU time."""
        recent = float(np.median(self.seconds[-3:]))
        follows = recent < FOLLOW_SECONDS
        if follows != self.follows:
            self.follows = follows
            for w, _ in self.inputs:
                if hasattr(w, "continuous_update"):
                    w.continuous_update = follows
        self.status.value = self._pace(recent)

    def current(self) -> dict[str, Any]:
        """The values ``draw`` gets for the widgets' present state."""
        return {c.name: draw_value(c, w.value)
                for c, (w, _) in zip(self.explorer.controls, self.inputs, strict=True)}

    def _redraw(self, change: Any = None) -> None:
        values = self.current()
        for control, (_, readout) in zip(self.explorer.controls, self.inputs, strict=True):
            if readout is not None:
                readout.value = _shown(control, values[control.name])  # type: ignore[arg-type]
        if values == self.values:
            return
        self.values = values
        start = time.process_time()
        try:
            self.image.value = png(self.explorer.figure(**values), self.explorer.dpi)
        except Exception as err:  # shown to the reader, who moved the control
            shown = ", ".join(f"{k} = {v}" for k, v in values.items())
            self.status.value = self._note(
                f"No figure for {shown}: {type(err).__name__}: {err}", color="#b00020")
            return
        finally:
            self.seconds.append(time.process_time() - start)
        self._adapt()

    def mimebundle(self) -> dict[str, Any]:
        """The output that shows the widget (ipywidgets 7 and 8 write the same)."""
        return {WIDGET_VIEW: {"version_major": 2, "version_minor": 0,
                              "model_id": self.box.model_id}}
