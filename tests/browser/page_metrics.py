"""What a page of the built book costs a reader: bytes, time, and Tab presses.

:func:`measure` loads one page in Chromium (Playwright, a fresh context: a cold cache) from the
local server and returns

* ``bytes``: the bytes of every response the page needed up to its ``load`` event (the
  document, scripts, stylesheets, fonts, images; lazy figures below the fold are not among
  them until a reader scrolls to them), from the Resource Timing API (``encodedBodySize``:
  as served, uncompressed here; a host that compresses sends less);
* ``requests``; ``dcl_s``, ``load_s``: DOMContentLoaded and load, from navigation start;
  ``fcp_s``: first contentful paint; ``cls``: the layout shift accumulated by the load event;
* ``tabs_to_explorer``: how many times a keyboard reader presses Tab from the top of the
  page to reach the first control of the chapter's explorer (the focusable elements before
  it in document order; None when the page has no explorer).

:func:`timed_load` times one cold load (its ``load`` event, and when its HTML was
parsed, which is when the explorer's script has run): ``tests/browser/test_explorers.py``
holds the chapter pages to a budget with it, and ``make site-report`` records, for each
page with an explorer, ``load_with_and_without_explorer_s``: the load event with the
explorer and with the page served without it, how much of the load the explorer costs.

``tests/browser/test_desktop.py`` enforces the budgets on every page and writes what it
measured to ``_build/screenshots/page-metrics.json``; ``python -m tests.browser.page_metrics
--write book/site_report.json`` (``make site-report``) records them, with the Lighthouse
scores when ``--lighthouse`` is given, for the status page (``book/_ext/chapter_status.py``).
Times depend on the machine and its load; bytes and Tab presses do not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts.browser import OFFLINE_RULES

ROOT = Path(__file__).resolve().parents[2]
#: Lighthouse's accessibility score every chapter must reach (``--lighthouse`` fails below).
A11Y_FLOOR = 0.95

COLLECT = """() => new Promise(resolve => {
  const finish = () => {
    const nav = performance.getEntriesByType('navigation')[0];
    const resources = performance.getEntriesByType('resource')
      .filter(r => r.responseEnd <= nav.loadEventEnd + 1);
    const paint = performance.getEntriesByName('first-contentful-paint')[0];
    const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
    const focusable = Array.from(document.querySelectorAll(
        'a[href], button, input, select, textarea, summary, [tabindex]'))
      .filter(e => e.tabIndex >= 0 && !e.disabled && shown(e));
    const control = document.querySelector('.nqf-explorer select, .nqf-explorer input');
    const index = control ? focusable.indexOf(control) : -1;
    resolve({
      bytes: nav.encodedBodySize + resources.reduce((s, r) => s + r.encodedBodySize, 0),
      requests: 1 + resources.length,
      dcl_s: nav.domContentLoadedEventEnd / 1000,
      load_s: nav.loadEventEnd / 1000,
      fcp_s: paint ? paint.startTime / 1000 : null,
      cls: window.__nqfCls || 0,
      tabs_to_explorer: index >= 0 ? index + 1 : null,
    });
  };
  if (document.readyState === 'complete') setTimeout(finish, 0);
  else window.addEventListener('load', () => setTimeout(finish, 0));
})"""

#: Layout shifts, recorded from the start (the page's own scripts have not run yet).
WATCH_CLS = """window.__nqfCls = 0;
new PerformanceObserver(list => { for (const e of list.getEntries())
  if (!e.hadRecentInput) window.__nqfCls += e.value; })
  .observe({type: 'layout-shift', buffered: true});"""


#: The window every desktop measurement uses (CSS pixels).
DESKTOP = {"width": 1280, "height": 900}


def open_measured(browser, url: str, on_page=None):
    """Load ``url`` in a fresh context of ``browser`` (Playwright: a cold cache) at
    :data:`DESKTOP` size and measure it. Returns ``(context, page, metrics)``; the caller
    may go on using the page, and closes the context. ``on_page(page)`` is called before
    the page loads (to attach listeners)."""
    context = browser.new_context(viewport=DESKTOP)
    try:
        context.add_init_script(WATCH_CLS)
        page = context.new_page()
        if on_page is not None:
            on_page(page)
        page.goto(url, wait_until="load", timeout=60_000)
        found = page.evaluate(COLLECT)
    except BaseException:
        context.close()
        raise
    for key in ("dcl_s", "load_s", "fcp_s", "cls"):
        if found[key] is not None:
            found[key] = round(found[key], 3)
    return context, page, found


EXPLORER_DIV = re.compile(r'<div class="nqf-explorer".*?</script></div>', re.S)


def timed_load(browser, url: str, strip: bool = False) -> tuple[float, float]:
    """(load event, HTML parsed) in seconds after navigation, for a cold load (a new
    browser context: nothing cached). With ``strip``, the page is served without its
    explorer. The explorer's script runs while the HTML is parsed; MathJax typesets
    afterwards, before the load event."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()

        def serve(route):
            response = route.fetch()
            body = response.text()
            route.fulfill(response=response, body=EXPLORER_DIV.sub("", body) if strip else body)

        page.route(url, serve)
        page.goto(url, wait_until="load", timeout=60_000)
        return tuple(
            page.evaluate(
                "() => { const n = performance.getEntriesByType('navigation')[0];"
                " return [n.loadEventEnd / 1000, n.domInteractive / 1000]; }"
            )
        )
    finally:
        context.close()


def measure(browser, url: str) -> dict:
    """Load ``url`` in a fresh context of ``browser`` (Playwright) and measure it."""
    context, _, found = open_measured(browser, url)
    context.close()
    return found


def lighthouse(url: str, chromium: str) -> dict | None:
    """Lighthouse's four category scores for ``url`` (desktop preset), or None when the
    ``lighthouse`` command is not installed (``npx`` finds it in ``node_modules``)."""
    npx = shutil.which("npx")
    if npx is None:
        return None
    with tempfile.TemporaryDirectory(prefix="nqf-lh-") as tmp:
        out = Path(tmp) / "report.json"
        cmd = [
            npx,
            "--no-install",
            "lighthouse",
            url,
            "--preset=desktop",
            "--quiet",
            "--output=json",
            f"--output-path={out}",
            "--chrome-flags=--headless=new --no-sandbox --disable-gpu "
            f"--host-resolver-rules='{OFFLINE_RULES}'",
            "--only-categories=performance,accessibility,best-practices,seo",
        ]
        env = dict(os.environ, CHROME_PATH=chromium)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
        if proc.returncode != 0 or not out.is_file():
            print(f"lighthouse failed on {url}: {proc.stderr[-500:]}", file=sys.stderr)
            return None
        report = json.loads(out.read_text())
    return {
        k: round(v["score"], 2)
        for k, v in report["categories"].items()
        if v.get("score") is not None
    }


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    from scripts import toc
    from scripts.browser import PLAYWRIGHT_FLAGS, find_chromium, serve_directory

    from .conftest import HTML

    parser = argparse.ArgumentParser(
        description="record page weight, load time, Tab presses "
        "(and Lighthouse scores) of every page"
    )
    parser.add_argument("--write", type=Path, required=True)
    parser.add_argument("--lighthouse", action="store_true")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("no chromium: install Debian's chromium", file=sys.stderr)
        return 1
    pages = toc.pages()
    records = {}
    with serve_directory(HTML) as (url, _), sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium, headless=True, args=PLAYWRIGHT_FLAGS
        )
        try:
            for page in pages:
                address = f"{url}/{page}.html"
                records[page] = measure(browser, address)
                html = (HTML / f"{page}.html").read_text(encoding="utf-8")
                if 'class="nqf-explorer"' in html:
                    records[page]["load_with_and_without_explorer_s"] = [
                        round(timed_load(browser, address, strip=strip)[0], 3)
                        for strip in (False, True)
                    ]
                if args.lighthouse and page.startswith("chapters/"):
                    records[page]["lighthouse"] = lighthouse(f"{url}/{page}.html", chromium)
                print(page, records[page], flush=True)
        finally:
            browser.close()
    args.write.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    low = {
        p: r["lighthouse"]["accessibility"]
        for p, r in records.items()
        if (r.get("lighthouse") or {}).get("accessibility", 1) < A11Y_FLOOR
    }
    if low:
        print(f"Lighthouse accessibility below {A11Y_FLOOR}: {low}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
