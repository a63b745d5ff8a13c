"""What a reader sees at a common window size: every display equation fits its column.

Each page of the book is loaded in Debian's Chromium (driven by Playwright) at 1280 x 1000
pixels and scrolled through from top to bottom, as a reader would (the book typesets a
formula lazily, when it comes into view); once MathJax has typeset every formula that is
shown (not those in the hidden solution dropdowns), none of them may be a MathJax error, and
the rendered width of every display equation
(``mjx-container[display]``, whose ``mjx-math`` child holds the formula) is compared with
the width of the block that holds it. A display wider than its column is cut off or
scrolls, and its equation number can land on top of it.
"""

from __future__ import annotations

import pytest

from scripts import toc

PAGES = toc.pages()

MEASURE = """() => Array.from(document.querySelectorAll('mjx-container[display="true"]'))
  .map(c => {
    const math = c.querySelector('mjx-math');
    const box = c.parentElement;
    return {tex: (c.getAttribute('aria-label') || box.textContent || '').slice(0, 80),
            width: math ? math.getBoundingClientRect().width : 0,
            room: box.clientWidth};
  })"""


#: Every formula on show (its container is laid out) has been typeset.
TYPESET = """() => Array.from(document.querySelectorAll('mjx-container'))
  .filter(c => c.getClientRects().length > 0
                && getComputedStyle(c).visibility !== 'hidden')
  .every(c => c.querySelector('mjx-math') !== null)"""

SHOW_PENDING = """async () => {
  for (const c of document.querySelectorAll('mjx-container')) {
    if (c.getClientRects().length > 0 && getComputedStyle(c).visibility !== 'hidden'
        && !c.querySelector('mjx-math')) {
      c.scrollIntoView();
      await new Promise(r => setTimeout(r, 50));
    }
  }
}"""

ERRORS = """() => Array.from(document.querySelectorAll('mjx-merror, [data-mjx-error]'))
  .map(e => (e.getAttribute('data-mjx-error') || e.textContent || '').slice(0, 80))"""


@pytest.mark.parametrize("page_path", PAGES)
def test_display_equations_fit_their_column(page_path, playwright_chromium, book_server):
    context = playwright_chromium.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.goto(f"{book_server.url}/{page_path}.html", wait_until="load", timeout=60_000)
        page.wait_for_function(
            "() => !window.MathJax || !MathJax.startup || MathJax.startup.promise.then(() => true)",
            timeout=60_000,
        )
        page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
        y = 0  # the page grows as its formulas are typeset: measure it at every step
        while y < page.evaluate("document.documentElement.scrollHeight") + 1000:
            page.evaluate(f"window.scrollTo(0, {y})")
            page.wait_for_timeout(50)
            y += 800
        for _ in range(3):  # a formula scrolled past too fast: bring it into view
            if page.evaluate(TYPESET):
                break
            page.evaluate(SHOW_PENDING)
            page.wait_for_timeout(200)
        page.wait_for_function(TYPESET, timeout=60_000)
        errors = page.evaluate(ERRORS)
        displays = page.evaluate(MEASURE)
    finally:
        context.close()
    assert not errors, f"{page_path}: {len(errors)} MathJax error(s), e.g. {errors[0]!r}"
    wide = [d for d in displays if d["width"] > d["room"] + 1]
    assert not wide, (
        f"{page_path}: {len(wide)} display equation(s) wider than their "
        f"column at 1280 px, e.g. {wide[0]['width']:.0f} px in "
        f"{wide[0]['room']} px: {wide[0]['tex']!r}"
    )
