"""An explorer's HTML for pages without a kernel: precomputed frames, switched by a script.

:mod:`nqf_mini.course.explorer` draws the frames; this module writes them into HTML that
works wherever HTML is shown (the online book, a printed page, Jupyter, Colab, VS Code),
and reads such HTML back (:func:`parse`), so that the book and the notebook edition can
show a stored explorer with the markup of this version of the package (:func:`rerender`).

What a reader gets:

* the controls (a slider or a menu each) in a group labelled for screen readers; a
  slider announces the value shown beside it (``aria-valuetext``), not its position;
  symbol names are spoken as words (``aria-label`` "alpha A" for the label "α_A");
  every control is at least :data:`TARGET_PX` CSS pixels tall (WCAG 2.5.8);
* the frame of the current values, with a short alt text saying what the values are
  and the caption tied to it as its description (``aria-describedby``), so that the
  caption is not read twice; the image has its width and height (no layout shift), is
  never shown below :data:`MIN_SCALE` of its drawn size (its labels stay legible) and
  scrolls sideways, with a visible cue, in a narrower column (a phone);
* the frames are not read before the reader touches a control: inline (a notebook) they
  sit in a JSON element that is parsed on the first interaction; in the book
  (``frames_url``) they are a separate script file, loaded on the first interaction.
* where scripts do not run (an untrusted notebook, a viewer) the default frame, the
  caption and a hint show, and no dead controls.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
from html.parser import HTMLParser
from typing import Any

from PIL import Image

__all__ = ["MIN_SCALE", "TARGET_PX", "frames_script", "parse", "render", "rerender", "spoken"]

#: The smallest scale at which a frame is shown; a narrower column scrolls it sideways.
MIN_SCALE = 0.8
#: The smallest height of a control, in CSS pixels (WCAG 2.5.8, target size).
TARGET_PX = 24
#: Version of the data the HTML carries (1: the first explorers, read by :func:`parse`).
VERSION = 2
#: The global object the book's frame files add themselves to.
FRAMES_GLOBAL = "nqfExplorerFrames"

_GREEK = dict(zip("αβγδεζηθικλμνξπρστυφχψωΓΔΘΛΞΠΣΦΨΩ", (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma "
    "tau upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega"
).split(), strict=True))
#: Visually hidden, still read by screen readers.
_SR_ONLY = ("position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;"
            "clip:rect(0 0 0 0);white-space:nowrap;border:0")


def spoken(text: str) -> str:
    """``text`` as a screen reader should say it: Greek letters by name, underscores as
    spaces ("α_A" -> "alpha A", "(α1, α2)" -> "(alpha 1, alpha 2)")."""
    for letter, name in _GREEK.items():
        text = text.replace(letter, f" {name} ")
    text = re.sub(r"\s+", " ", text.replace("_", " "))
    text = re.sub(r"\(\s+", "(", re.sub(r"\s+([),;:])", r"\1", text))
    return text.strip()


def _spoken_value(text: str) -> str:
    """A shown value for a screen reader: a minus sign that is read as "minus"."""
    return re.sub(r"(?<![\w.])-(?=[0-9.])", "\u2212", text)


def _state(meta: dict[str, Any], indices: list[int]) -> str:
    return ", ".join(f"{c['spoken']} = {_spoken_value(c['labels'][i])}"
                     for c, i in zip(meta["controls"], indices, strict=True))


def _json_for_script(value: Any) -> str:
    """JSON that is safe inside a <script> element (nothing in it can close the tag)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# --- writing -------------------------------------------------------------------------

# Finds its explorer (the element around the script), shows the controls, removes the
# hint, and on every move shows the values and their frame. The frames are read on the
# first interaction: from the JSON beside it, or from the file the book moved them to
# (data-nqf-frames). Plain ES5: it runs in every front end that runs scripts.
_SCRIPT = r"""(function () {
  var s = document.currentScript;
  var root = (s && s.parentNode) || document.getElementById(%(id)s);
  if (!root || !root.querySelector) return;
  function one(selector) { return root.querySelector(selector); }
  var meta = JSON.parse(one("script.nqf-explorer-meta").textContent);
  var img = one("img.nqf-explorer-frame"), view = one(".nqf-explorer-view");
  var cue = one(".nqf-explorer-cue"), box = one(".nqf-explorer-controls");
  var hint = one(".nqf-explorer-hint"), inputs = root.querySelectorAll("[data-nqf-control]");
  var first = img.getAttribute("src"), data = null, loading = false;
  function said(text) { return text.replace(/(^|[^\w.])-(?=[0-9.])/g, "$1\u2212"); }
  function show() {
    var flat = 0, parts = [];
    for (var k = 0; k < inputs.length; k++) {
      var c = meta.controls[k], i = parseInt(inputs[k].value, 10), text = c.labels[i];
      flat = flat * c.labels.length + i;
      var out = one("output[data-nqf-for='" + k + "']");
      if (out) out.textContent = text;
      if (c.kind === "slider") inputs[k].setAttribute("aria-valuetext", said(text));
      parts.push(c.spoken + " = " + said(text));
    }
    img.setAttribute("alt", meta.alt + ": " + parts.join(", "));
    if (!data) return;
    var f = data.index[flat];
    img.setAttribute("src", data.frames[f] === null ? first
                     : "data:image/png;base64," + data.frames[f]);
    img.setAttribute("data-nqf-point", String(flat));
  }
  function load() {
    if (data || loading) return;
    var inline = one("script.nqf-explorer-data"), url = root.getAttribute("data-nqf-frames");
    if (inline) { data = JSON.parse(inline.textContent); show(); return; }
    if (!url) return;
    loading = true;
    var tag = document.createElement("script");
    tag.src = url;
    tag.onload = function () {
      data = (window.%(frames)s || {})[root.id] || null;
      loading = false;
      show();
    };
    tag.onerror = function () { loading = false; };
    document.head.appendChild(tag);
  }
  function fit() {
    var over = view.scrollWidth > view.clientWidth + 1;
    cue.style.display = over ? "" : "none";
    if (over) {
      view.setAttribute("tabindex", "0");
      view.setAttribute("role", "region");
      view.setAttribute("aria-label", "figure, scrolls sideways");
    } else {
      view.removeAttribute("tabindex");
      view.removeAttribute("role");
      view.removeAttribute("aria-label");
    }
  }
  function moved() { load(); show(); }
  for (var k = 0; k < inputs.length; k++) {
    inputs[k].addEventListener("input", moved);
    inputs[k].addEventListener("change", moved);
  }
  var wake = ["focusin", "pointerdown", "mouseover", "touchstart"];
  for (var w = 0; w < wake.length; w++) box.addEventListener(wake[w], load, {passive: true});
  box.hidden = false;
  box.style.display = "";
  if (hint && hint.parentNode) hint.parentNode.removeChild(hint);
  show();
  fit();
  window.addEventListener("resize", fit);
  if (window.ResizeObserver) new ResizeObserver(fit).observe(view);
})();"""


def _control_html(k: int, control: dict[str, Any]) -> str:
    label, name = html.escape(control["label"]), html.escape(control["name"])
    aria = (f' aria-label="{html.escape(control["spoken"])}"'
            if control["spoken"] != control["label"] else "")
    i, labels = control["default"], control["labels"]
    wrap = ('class="nqf-explorer-control" style="display:inline-block;margin:0 1.5em 0.3em 0;'
            f'font-size:0.9em;line-height:{TARGET_PX}px"')
    if control["kind"] == "slider":
        return (f"<label {wrap}>{label} "
                f'<input type="range" min="0" max="{len(labels) - 1}" step="1" value="{i}" '
                f'data-nqf-control="{name}"{aria} '
                f'aria-valuetext="{html.escape(_spoken_value(labels[i]))}" '
                f'style="vertical-align:middle;width:12em;height:{TARGET_PX}px;margin:0 0.3em"> '
                f'<output data-nqf-for="{k}" aria-hidden="true">{html.escape(labels[i])}'
                "</output></label>")
    options = "".join(f'<option value="{j}"{" selected" if j == i else ""}>'
                      f"{html.escape(option)}</option>" for j, option in enumerate(labels))
    return (f'<label {wrap}>{label} <select data-nqf-control="{name}"{aria} '
            f'style="min-height:{TARGET_PX}px;font-size:inherit;vertical-align:middle">'
            f"{options}</select></label>")


def _hint(meta: dict[str, Any], indices: list[int]) -> str:
    shown = f"The figure shows {_state(meta, indices)}."
    if meta["complete"]:
        return ("The controls of this explorer need scripts: run this cell, or trust the "
                "notebook (JupyterLab: File \u2192 Trust Notebook). " + shown)
    return ("The controls of this explorer appear when this cell runs in a notebook with a "
            "kernel. " + shown)


def render(meta: dict[str, Any], first: str, data: dict[str, Any] | None,
           frames_url: str | None = None) -> str:
    """The explorer's HTML: ``meta`` (what :func:`parse` returns as its first item), the
    default frame ``first`` (base64 PNG), and the other frames, inline (``data``) or in
    the script file at ``frames_url`` (:func:`frames_script`)."""
    ident = meta["id"]
    shape = [len(c["labels"]) for c in meta["controls"]]
    indices = [c["default"] for c in meta["controls"]]
    point = 0
    for i, n in zip(indices, shape, strict=True):
        point = point * n + i
    width, height = meta["width"], meta["height"]
    interactive = meta["complete"] and (data is not None or frames_url is not None)
    parts = [f'<div class="nqf-explorer" id="{ident}"'
             + (f' data-nqf-frames="{html.escape(frames_url)}"' if frames_url else "")
             + ' style="margin:0.5em 0">']
    if interactive:
        names = ", ".join(c["spoken"] for c in meta["controls"])
        parts.append(
            '<div class="nqf-explorer-controls" role="group" '
            f'aria-labelledby="{ident}-name" hidden style="display:none;margin-bottom:0.3em">'
            f'<span id="{ident}-name" style="{_SR_ONLY}">Explorer of the figure below: '
            f"{html.escape(names)}</span>"
            + "".join(_control_html(k, c) for k, c in enumerate(meta["controls"]))
            + "</div>"
            '<p class="nqf-explorer-cue" aria-hidden="true" style="display:none;'
            'font-size:0.85em;margin:0 0 0.2em">\u27f7 The figure is wider than the '
            "screen: scroll it sideways.</p>")
    parts.append(
        '<div class="nqf-explorer-view" style="overflow-x:auto;max-width:100%">'
        f'<img class="nqf-explorer-frame" src="data:image/png;base64,{first}" '
        f'width="{width}" height="{height}" '
        f'alt="{html.escape(meta["alt"] + ": " + _state(meta, indices))}" '
        f'aria-describedby="{ident}-caption" data-nqf-point="{point}" '
        f'style="display:block;width:100%;max-width:{width}px;'
        f'min-width:{round(MIN_SCALE * width)}px;height:auto"></div>'
        f'<p class="nqf-explorer-caption" id="{ident}-caption" '
        f'style="font-size:0.9em;margin-top:0.3em">{html.escape(meta["caption"])}</p>'
        '<p class="nqf-explorer-hint" style="font-size:0.85em;font-style:italic">'
        f"{html.escape(_hint(meta, indices))}</p>"
        '<script type="application/json" class="nqf-explorer-meta">'
        f"{_json_for_script(meta)}</script>")
    if interactive:
        if frames_url is None:
            parts.append('<script type="application/json" class="nqf-explorer-data">'
                         f"{_json_for_script(data)}</script>")
        script = _SCRIPT % {"id": _json_for_script(ident), "frames": FRAMES_GLOBAL}
        parts.append(f"<script>{script}</script>")
    parts.append("</div>")
    return "".join(parts)


def frames_script(meta: dict[str, Any], data: dict[str, Any]) -> str:
    """The script file that holds an explorer's frames outside the page (the book's):
    it adds them to ``window.nqfExplorerFrames`` under the explorer's id."""
    return (f"(window.{FRAMES_GLOBAL} = window.{FRAMES_GLOBAL} || {{}})"
            f"[{json.dumps(meta['id'])}] = {_json_for_script(data)};\n")


# --- reading -------------------------------------------------------------------------


class _Stored(HTMLParser):
    """The parts of a stored explorer output that :func:`parse` needs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root: dict[str, str | None] = {}
        self.image: dict[str, str | None] = {}
        self.controls: list[dict[str, str | None]] = []
        self.scripts: dict[str, str] = {}
        self.caption = ""
        self._into: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if tag == "div" and "nqf-explorer" in classes and not self.root:
            self.root = found
        elif tag == "img" and "nqf-explorer-frame" in classes:
            self.image = found
        elif tag in {"input", "select"} and "data-nqf-control" in found:
            self.controls.append({"tag": tag, **found})
        elif tag == "script" and classes:
            self._into = "script:" + classes[0]
            self.scripts[classes[0]] = ""
        elif tag == "p" and "nqf-explorer-caption" in classes:
            self._into = "caption"

    def handle_data(self, data: str) -> None:
        if self._into == "caption":
            self.caption += data
        elif self._into and self._into.startswith("script:"):
            self.scripts[self._into[7:]] += data

    def handle_endtag(self, tag: str) -> None:
        if tag in {"p", "script"}:
            self._into = None


def _png_size(b64: str) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(b64))) as image:
        return image.size


def parse(stored: str) -> tuple[dict[str, Any], str, dict[str, Any] | None]:
    """``(meta, first, data)`` of an explorer's stored HTML (this version's or the first
    version's): what :func:`render` takes. ``data`` is None when the frames are not in
    the HTML. A string that is not an explorer's output raises ValueError."""
    found = _Stored()
    found.feed(stored)
    found.close()
    src = found.image.get("src") or ""
    if not found.root or not src.startswith("data:image/png;base64,"):
        raise ValueError("stored: not the HTML output of an explorer (no nqf-explorer "
                         "element with a frame)")
    first = src.split(",", 1)[1]
    data_text = found.scripts.get("nqf-explorer-data")
    data = json.loads(data_text) if data_text else None
    if "nqf-explorer-meta" in found.scripts:
        meta = json.loads(found.scripts["nqf-explorer-meta"])
        if meta.get("version") != VERSION:
            raise ValueError(f"stored: explorer data of version {meta.get('version')!r}, "
                             f"this package reads {VERSION} and 1")
        return meta, first, data
    if data is None:
        raise ValueError("stored: an explorer output without its frame data")
    # The first version: the controls' names and kinds are in the HTML, the labels, frames
    # and alt text in the data; the default point is the image's.
    shape = data["shape"]
    point = int(found.image.get("data-nqf-point") or 0)
    defaults: list[int] = []
    for n in reversed(shape):
        defaults.insert(0, point % n)
        point //= n
    caption = found.caption.strip()
    width, height = _png_size(first)
    controls = [{"name": c.get("data-nqf-control") or "", "label": label,
                 "spoken": spoken(label), "kind": "slider" if c["tag"] == "input" else "menu",
                 "labels": labels, "default": i}
                for c, label, labels, i in zip(found.controls, data["names"], data["labels"],
                                               defaults, strict=True)]
    meta = {"version": VERSION, "id": found.root.get("id") or "nqf-explorer",
            "alt": "The figure" if data.get("alt", caption) == caption else data["alt"],
            "caption": caption, "width": width, "height": height,
            "complete": True,  # the first version stored every frame
            "controls": controls}
    return meta, first, {"index": data["index"], "frames": data["frames"]}


def rerender(stored: str, frames_url: str | None = None) -> tuple[str, str | None]:
    """An explorer's stored HTML output as this version of the package writes it; with
    ``frames_url``, its frames moved out to the script file whose text is returned as
    well (to be written at that address), else ``(html, None)``."""
    meta, first, data = parse(stored)
    if frames_url is None or data is None or not meta["complete"]:
        return render(meta, first, data), None
    return render(meta, first, None, frames_url), frames_script(meta, data)
