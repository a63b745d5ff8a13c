"""Every page on a phone (390 x 844 CSS pixels, touch, 2x): what a reader can open and read.

For each page of ``_toc.yml``, Debian's Chromium (Playwright, touch emulation) loads the page
from the local server and

* taps the visible chapter-menu button: the sidebar dialog must open with the book's
  chapter links, and close again with Escape; then taps the visible page-contents button
  (on pages that have one): its dialog must open with the page's section links. The theme
  attaches both handlers to a hidden duplicate button (pydata-sphinx-theme#2451), which
  ``book/_static/site.js`` works around; without it neither dialog opens;
* checks that the page does not scroll sideways as a whole, and that every typeset display
  formula either fits its column or scrolls inside it with the cue showing on the side that
  hides content (``.nqf-more-right``);
* checks that every control of the site's own chrome shown on the phone (header buttons,
  sidebar entries and arrows in the open dialog, previous/next links) is at least
  :data:`TARGET_PX` CSS pixels in both directions (WCAG 2.5.8). Links inside running text
  are exempt, as WCAG exempts them; the explorers' controls are checked with the explorers.

Screenshots of the open menu and of the first wide formula of each chapter go to
``_build/screenshots/phone-*.png``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import toc

from .conftest import SCREENSHOTS
from .test_desktop import TYPESET_PENDING

PAGES = toc.pages()
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}
TARGET_PX = 24

VISIBLE_TOGGLE = """kind => Array.from(document.querySelectorAll('.' + kind + '-toggle'))
  .findIndex(b => b.getClientRects().length > 0 && getComputedStyle(b).visibility !== 'hidden')"""

DIALOG = """id => { const d = document.getElementById(id);
  return d ? {open: d.open, links: d.querySelectorAll('a[href]').length} : null; }"""

#: Interactive elements of the site's chrome that are shown, with their size.
SMALL_TARGETS = """min => {
  const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const roots = ['.bd-header-article', '.bd-header', '.prev-next-area',
                 'dialog[open]'].flatMap(s => Array.from(document.querySelectorAll(s)));
  const out = [];
  for (const root of roots) {
    for (const e of root.querySelectorAll('a[href], button, summary, select, input')) {
      if (!shown(e) || e.closest('.bd-article p, .bd-article li > p')) continue;
      const r = e.getBoundingClientRect();
      if (r.width < min - 0.5 || r.height < min - 0.5) {
        out.push({what: (e.getAttribute('aria-label') || e.textContent || e.tagName)
                         .trim().slice(0, 40), w: Math.round(r.width), h: Math.round(r.height)});
      }
    }
  }
  return out;
}"""

WIDE_MATH = """() => Array.from(document.querySelectorAll('mjx-container[display="true"]'))
  .map((c, i) => ({index: i,
              shown: c.querySelector('mjx-math') !== null && c.getClientRects().length > 0,
              wide: c.scrollWidth > c.clientWidth + 1,
              scrolls: ['auto', 'scroll'].includes(getComputedStyle(c).overflowX),
              cue: c.classList.contains('nqf-more-right'),
              fits: c.getBoundingClientRect().right <= document.documentElement.clientWidth + 1,
              tex: (c.getAttribute('aria-label') || '').slice(0, 60)}))"""


@pytest.fixture(scope="module")
def phone(playwright_chromium):
    context = playwright_chromium.new_context(**PHONE)
    yield context
    context.close()


def _open(page, kind: str, dialog_id: str) -> dict | None:
    index = page.evaluate(VISIBLE_TOGGLE, kind)
    if index < 0:
        return None
    page.locator(f".{kind}-toggle").nth(index).tap()
    page.wait_for_timeout(150)
    return page.evaluate(DIALOG, dialog_id)


@pytest.mark.parametrize("page_path", PAGES)
def test_phone(page_path, phone, book_server):
    page = phone.new_page()
    try:
        page.goto(f"{book_server.url}/{page_path}.html", wait_until="load", timeout=60_000)
        name = Path(page_path).name

        # The chapter menu opens on a tap, with the book's chapters in it, and closes.
        menu = _open(page, "primary", "pst-primary-sidebar-modal")
        assert menu is not None, f"{page_path}: no visible chapter-menu button at 390 px"
        assert menu["open"], f"{page_path}: tapping the chapter-menu button opened nothing"
        assert menu["links"] >= 10, f"{page_path}: the open menu shows {menu['links']} links"
        small = page.evaluate(SMALL_TARGETS, TARGET_PX)
        if page_path.startswith("chapters/01"):
            page.screenshot(path=str(SCREENSHOTS / f"phone-{name}-menu.png"))
        page.keyboard.press("Escape")
        page.wait_for_timeout(100)
        assert not page.evaluate(DIALOG, "pst-primary-sidebar-modal")["open"], (
            f"{page_path}: the chapter menu did not close on Escape"
        )

        # The page contents (pages with sections) open on a tap too.
        contents = _open(page, "secondary", "pst-secondary-sidebar-modal")
        if contents is not None:
            assert contents["open"], f"{page_path}: tapping the contents button opened nothing"
            assert contents["links"] >= 1, f"{page_path}: the open contents list no link"
            small += page.evaluate(SMALL_TARGETS, TARGET_PX)
            page.keyboard.press("Escape")
            page.wait_for_timeout(100)
        small += page.evaluate(SMALL_TARGETS, TARGET_PX)
        assert not small, (
            f"{page_path}: {len(small)} touch target(s) under {TARGET_PX} px "
            f"at 390 px, e.g. {small[:3]}"
        )

        # No sideways scrolling of the page; wide formulas scroll inside, with a cue.
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 2, f"{page_path}: the page scrolls sideways by {overflow} px"
        page.evaluate(TYPESET_PENDING)
        page.wait_for_timeout(300)
        displays = [d for d in page.evaluate(WIDE_MATH) if d["shown"]]
        wide = [d for d in displays if d["wide"]]
        for d in wide:
            assert d["scrolls"] and d["cue"], (
                f"{page_path}: a display formula wider than the phone's column neither "
                f"scrolls nor shows the cue: {d['tex']!r}"
            )
        assert all(d["fits"] for d in displays), f"{page_path}: a formula overflows the page"
        if wide and page_path.startswith("chapters/"):
            box = page.locator('mjx-container[display="true"]').nth(wide[0]["index"])
            box.scroll_into_view_if_needed()
            page.screenshot(path=str(SCREENSHOTS / f"phone-{name}-math.png"))
    finally:
        page.close()
