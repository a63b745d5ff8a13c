"""Every chapter's explorer works on the built page, with no kernel and no network.

For each chapter page, Debian's Chromium (driven by Playwright) loads the page from the
local server with every remote host unresolvable. One test times the page: the explorer
works, and the page has loaded, within 2 s of navigation; the load times are recorded
(see its docstring). The other checks that the explorer's script
ran (its controls are shown), and moves each control to at least two values, as a reader
would: keys on a slider, a pick in a menu.
After each move the image must be the frame that the chapter precomputed for the values
now set (the frame stored in the notebook), the picture in the browser must differ from
the one before, and a slider's value must be shown beside it. No request may leave
127.0.0.1. Two screenshots of each explorer (default values, then moved) go to
``_build/screenshots``, with the load times in ``explorers.json``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

import nbformat
import pytest
from PIL import Image, ImageChops

from nqf_mini.course import explorer_page
from scripts import timeouts

from .conftest import ROOT, SCREENSHOTS
from .page_metrics import timed_load
from .test_offline_book import CHAPTERS as ALL_CHAPTERS


def _has_explorer(chapter: str) -> bool:
    return "nqf_mini.course.explorer import" in (ROOT / f"{chapter}.ipynb").read_text()


# The lecture chapters have an explorer; the appendix chapters report fixed grids.
CHAPTERS = [c for c in ALL_CHAPTERS if _has_explorer(c)]

#: A chapter page with its explorer loads within this many seconds from a local server on a
#: quiet machine; NQF_TIMEOUT_SCALE stretches it on a loaded one (CI sets 4), where the time
#: measures the machine, not the page.
LOAD_BUDGET_S = 2.0 * timeouts.scale()
TIMINGS = SCREENSHOTS / "explorers.json"


class Stored(NamedTuple):
    """An explorer's stored output, as :func:`nqf_mini.course.explorer_page.parse` reads
    it (the first version's and this one's): its controls, default frame and frames."""

    meta: dict
    first: str
    data: dict

    @property
    def shape(self) -> list[int]:
        return [len(c["labels"]) for c in self.meta["controls"]]


def stored_explorer(chapter: str) -> Stored:
    """What the chapter's notebook stores for its explorer (what nbval checked ran)."""
    nb = nbformat.read(ROOT / f"{chapter}.ipynb", as_version=4)
    outputs = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if 'class="nqf-explorer"' in o.get("data", {}).get("text/html", "")
    ]
    assert len(outputs) == 1, f"{chapter}: {len(outputs)} explorer outputs, expected 1"
    stored = Stored(*explorer_page.parse(outputs[0]["data"]["text/html"]))
    assert stored.data, f"{chapter}: explorer output without frames"
    return stored


def frame_src(stored: Stored, indices: list[int]) -> str:
    """The image source of the grid point ``indices`` (row-major over the controls)."""
    flat = 0
    for i, n in zip(indices, stored.shape, strict=True):
        flat = flat * n + i
    frame = stored.data["frames"][stored.data["index"][flat]]
    return "data:image/png;base64," + (stored.first if frame is None else frame)


def pixels_differ(a: bytes, b: bytes) -> bool:
    """Whether two screenshots show different pictures (not just different bytes)."""
    first, second = (Image.open(io.BytesIO(x)).convert("RGB") for x in (a, b))
    return first.size != second.size or ImageChops.difference(first, second).getbbox() is not None


def record_timing(name: str, seconds: dict[str, float]) -> None:
    timings = json.loads(TIMINGS.read_text()) if TIMINGS.is_file() else {}
    timings[name] = {key: round(value, 3) for key, value in seconds.items()}
    TIMINGS.parent.mkdir(parents=True, exist_ok=True)
    TIMINGS.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n")


def move(page, control, tag: str, target: int) -> None:
    """Set a control to position ``target`` as a reader would."""
    if tag == "SELECT":
        control.select_option(value=str(target))
        return
    control.focus()
    page.keyboard.press("Home")
    for _ in range(target):
        page.keyboard.press("ArrowRight")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: Path(c).name)
def test_explorer_is_ready_in_time(chapter, playwright_chromium, book_server):
    """The page's HTML (with the explorer's default frame; the book moves the others
    to a script file loaded on the first touch of a control) is parsed and its script
    has run, and the whole page has loaded (its load event, once MathJax has typeset
    the formulas in view), within the 2 s budget (times NQF_TIMEOUT_SCALE), in one of
    up to three cold loads: a load over the budget is tried again (a busy moment of the
    machine), and the first one within it ends the test, since each load typesets the
    page again (about 3 CPU-seconds).

    MathJax takes most of a page's load time, and the same with or without the explorer
    (``make site-report`` records the load without it); the book typesets lazily
    (``ui/lazy`` in ``_config.yml``), which halves it on the pages with the most formulas
    (Chapter 2: 2.4 s -> 1.3 s). The best load times are written to ``explorers.json``.
    """
    name = Path(chapter).name
    url = f"{book_server.url}/{chapter}.html"
    loads = []  # (load event, HTML parsed) of each cold load, with the explorer
    for _ in range(3):
        loads.append(timed_load(playwright_chromium, url))
        if max(loads[-1]) < LOAD_BUDGET_S:
            break
    ready = min(parsed for _, parsed in loads)
    load = min(load for load, _ in loads)
    record_timing(name, {"explorer_ready_s": ready, "load_s": load})
    assert ready < LOAD_BUDGET_S, (
        f"{chapter}: the explorer was ready only {ready:.2f} s after navigation "
        f"(budget {LOAD_BUDGET_S:.1f} s, {len(loads)} loads)"
    )
    assert load < LOAD_BUDGET_S, (
        f"{chapter}: the page loaded {load:.2f} s after navigation "
        f"(budget {LOAD_BUDGET_S:.1f} s, {len(loads)} loads)"
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: Path(c).name)
def test_explorer_moves_on_the_static_page(chapter, playwright_chromium, book_server):
    name = Path(chapter).name
    stored = stored_explorer(chapter)
    shape = stored.shape
    context = playwright_chromium.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    try:
        url = f"{book_server.url}/{chapter}.html"
        page.goto(url, wait_until="load", timeout=60_000)
        root = page.locator(".nqf-explorer")
        assert root.count() == 1, f"{chapter}: {root.count()} explorers on the page"
        root.scroll_into_view_if_needed()
        controls = root.locator("[data-nqf-control]")
        assert controls.count() == len(shape)
        assert root.locator(".nqf-explorer-controls").is_visible(), (
            f"{chapter}: the explorer's controls are hidden: its script did not run"
        )
        img = root.locator("img.nqf-explorer-frame")

        def shown() -> tuple[list[int], str, bytes]:
            """The positions of the controls, the image's source and its picture."""
            indices = [int(controls.nth(k).input_value()) for k in range(len(shape))]
            expected = frame_src(stored, indices)
            # The book keeps the frames in a script file that the page loads on the
            # reader's first touch of a control: the frame may arrive a moment later.
            try:
                page.wait_for_function(
                    "([i, s]) => i.getAttribute('src') === s",
                    arg=[img.element_handle(), expected],
                    timeout=5_000,
                )
            except Exception as err:  # playwright's TimeoutError: the assertion says more
                if "Timeout" not in type(err).__name__:
                    raise
            src = img.get_attribute("src")
            assert src == expected, (
                f"{chapter}: at positions {indices} the page does not show the frame "
                "precomputed for them"
            )
            img.evaluate("i => i.decode()")
            return indices, src, img.screenshot()

        indices, src, picture = shown()
        root.screenshot(path=str(SCREENSHOTS / f"explorer-{name}-1.png"))
        moves = 0
        for k in range(len(shape)):
            control = controls.nth(k)
            tag = control.evaluate("e => e.tagName")
            start = indices[k]
            # Two positions whose frames differ from the one shown before each move.
            targets = [shape[k] - 1, 0] if start != shape[k] - 1 else [0, shape[k] - 1]
            for target in targets:
                if target == indices[k]:
                    target = (target + 1) % shape[k]
                move(page, control, tag, target)
                new_indices, new_src, new_picture = shown()
                assert new_indices[k] == target, f"{chapter}: control {k} did not move"
                assert new_src != src, f"{chapter}: the image did not change"
                assert pixels_differ(picture, new_picture), (
                    f"{chapter}: the displayed figure looks the same after the move"
                )
                if tag == "INPUT":
                    label = stored.meta["controls"][k]["labels"][target]
                    value = root.locator(f"output[data-nqf-for='{k}']").text_content()
                    assert value == label, f"{chapter}: the slider shows {value!r}"
                indices, src, picture = new_indices, new_src, new_picture
                moves += 1
                if moves == 1:
                    root.screenshot(path=str(SCREENSHOTS / f"explorer-{name}-2.png"))
        assert moves >= 2 * len(shape)
    finally:
        context.close()

    assert any(url.startswith(book_server.url) for url in requests)
    remote = sorted(
        {
            url
            for url in requests
            if urlsplit(url).scheme not in {"data", "blob"}
            and urlsplit(url).hostname != "127.0.0.1"
        }
    )
    assert not remote, f"{chapter}: requests to remote hosts: {remote}"
