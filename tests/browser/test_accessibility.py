"""axe-core (WCAG 2.1 A and AA) on every page of the book, light and dark; and the keyboard.

For each page of ``_toc.yml``, Debian's Chromium (Playwright) loads the page from the local
server at 1280 x 900, injects axe-core from ``node_modules/axe-core`` (pinned in
``package.json``; nothing is fetched) and runs every rule tagged ``wcag2a``, ``wcag2aa``,
``wcag21a`` and ``wcag21aa`` in the light theme, then switches the same page to the dark
theme and runs ``color-contrast`` again (the one rule whose outcome depends on the colours;
the others read the DOM and ARIA, which the theme switch does not change). Typeset formulas
(``mjx-container``) are left out of the audit: MathJax draws their glyphs with CSS in the
colour of the text around them, which axe cannot read (it reported math-only table headers
as empty), and screen readers get their MathML. On a machine shared by several jobs (load
10 on 2 cores) one chapter took 27 s light and 22 s dark; about a fifth of that when idle.
A **serious or critical** violation fails the test, except the theme-owned ones listed in
:data:`THEME_OWNED` (each with its upstream issue), which are reported instead. Minor and
moderate findings are written, with the rest, to ``_build/screenshots/axe.json``.

The console: no page logs an error or throws while it loads (before the fixes every page did:
the thebe configuration script emitted twice, "invalid theme mode", a missing favicon).

The keyboard check: no formula is a tab stop (``inTabOrder: false`` in ``_config.yml``;
screen readers still read each formula's MathML), and every shown image has alt text.
"""

from __future__ import annotations

import json

import pytest

from scripts import toc

from .conftest import ROOT, SCREENSHOTS

PAGES = toc.pages()
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
REPORT = SCREENSHOTS / "axe.json"
FAILING = {"serious", "critical"}

#: Serious or critical findings that come from the themes and cannot be fixed in the course:
#: rule id -> (CSS selector fragment of the offending element, upstream issue). Empty: every
#: such finding of the last audit (summary-name, the citation roles) is fixed here.
THEME_OWNED: dict[str, tuple[str, str]] = {}

RUN_AXE = """async rules => {
  const result = await axe.run({exclude: [['mjx-container']]}, {
    runOnly: rules ? {type: 'rule', values: rules}
                   : {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']},
    resultTypes: ['violations'],
  });
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5), count: v.nodes.length}));
}"""

MATHJAX_READY = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
}"""

KEYBOARD = """() => ({
  formulaStops: Array.from(document.querySelectorAll('mjx-container'))
    .filter(c => c.tabIndex >= 0).length,
  formulas: document.querySelectorAll('mjx-container').length,
  noAlt: Array.from(document.querySelectorAll('.bd-article img'))
    .filter(i => !(i.getAttribute('alt') || '').trim()).map(i => i.src.slice(-40)),
})"""


def _theme_owned(violation: dict) -> str | None:
    owned = THEME_OWNED.get(violation["id"])
    if owned and all(owned[0] in node for node in violation["nodes"]):
        return owned[1]
    return None


@pytest.fixture(scope="module")
def report():
    results: dict = {}
    yield results
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(results, indent=1, sort_keys=True))


@pytest.mark.parametrize("page_path", PAGES)
def test_axe_light_and_dark(page_path, playwright_chromium, book_server, report):
    assert AXE.is_file(), "axe-core missing: run `npm ci` (make book does)"
    context = playwright_chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        console: list[str] = []
        page.on(
            "console",
            lambda m: console.append(f"{m.type}: {m.text}"[:200]) if m.type == "error" else None,
        )
        page.on("pageerror", lambda e: console.append(f"uncaught: {e}"[:200]))
        page.goto(f"{book_server.url}/{page_path}.html", wait_until="load", timeout=60_000)
        page.evaluate(MATHJAX_READY)
        page.wait_for_timeout(200)
        loading_console = list(console)
        keyboard = page.evaluate(KEYBOARD)
        page.add_script_tag(path=str(AXE))
        # The theme animates colour changes: without this, axe could measure a colour
        # half-way between the light and the dark theme.
        page.add_style_tag(
            content="*, *::before, *::after { transition: none !important;"
            " animation: none !important; }"
        )
        found = {}
        for theme, rules in (("light", None), ("dark", ["color-contrast"])):
            page.evaluate(
                "t => { document.documentElement.dataset.theme = t;"
                " document.documentElement.dataset.mode = t; }",
                theme,
            )
            page.wait_for_timeout(100)
            found[theme] = page.evaluate(RUN_AXE, rules)
    finally:
        context.close()
    report[page_path] = {"keyboard": keyboard, "console": loading_console, **found}
    assert not loading_console, f"{page_path}: console errors while loading: {loading_console}"

    failures, owned = [], []
    for theme, violations in found.items():
        for v in violations:
            if v["impact"] not in FAILING:
                continue
            issue = _theme_owned(v)
            (owned if issue else failures).append(
                f"{theme}: {v['id']} ({v['impact']}, {v['count']} nodes: {v['help']}) "
                f"e.g. {v['nodes'][:2]}" + (f" [theme, {issue}]" if issue else "")
            )
    assert not failures, f"{page_path}: axe violations:\n" + "\n".join(failures)
    assert keyboard["formulaStops"] == 0, (
        f"{page_path}: {keyboard['formulaStops']} of {keyboard['formulas']} formulas are tab "
        f"stops (MathJax's inTabOrder)"
    )
    assert not keyboard["noAlt"], f"{page_path}: images without alt text {keyboard['noAlt']}"
    if owned:
        pytest.xfail(f"{page_path}: theme-owned violations only: {owned}")
