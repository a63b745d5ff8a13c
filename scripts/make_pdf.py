"""Print the built HTML book as one PDF (``make pdf``).

Every page of ``_toc.yml``, in its order, goes into one print document: the article of each
built page (``_build/html``) is copied into a copy of the intro page, one after the other,
each starting on a new sheet, and links between pages become links inside the PDF. Headless
Chromium (Debian's, driven by Playwright, as the browser test) loads that document from a
local server with no other host reachable, typesets **every** formula (the online book
typesets lazily, as formulas scroll into view; here MathJax's ``lazyTypesetAll`` runs and is
awaited), loads every image (the online figures are lazy), and prints it: A4, numbered
sheets, a PDF outline from the headings, code wrapped (``@media print`` in
``book/_static/custom.css``), each explorer as its default frame without its controls.
Chapter, section, equation, theorem and exercise numbers are those of the online book,
since the pages are the built ones.

Two editions come from one typeset document: ``--out`` with every solution shown open, and
``--student-out`` (optional) with the solutions removed, for a term in which the exercises are
graded. ``make pdf`` writes both into the HTML build, where the intro page links them:
``_build/html/nqf-course.pdf`` and ``_build/html/nqf-course-student.pdf``.

Why Chromium and not LaTeX: the book is HTML first (MathJax, myst-nb outputs, explorers);
printing that HTML needs no second renderer and no TeX Live (several GB), and the browser is
already installed for the browser test.

Usage: ``python -m scripts.make_pdf [--html _build/html] --out FILE.pdf [--student-out FILE.pdf]``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from pathlib import Path

from scripts import toc
from scripts.browser import OFFLINE_RULES, find_chromium, serve_directory

ROOT = Path(__file__).resolve().parents[1]
ARTICLE = re.compile(r'(<article class="bd-article"[^>]*>)(?P<body>.*)(</article>)', re.S)
LINK = re.compile(
    r'href="(?:\.\./)?(?:(?P<dir>book|chapters)/)?(?P<name>[\w.-]+)\.html'
    r'(?:#(?P<frag>[^"]*))?"'
)
PRINT_DIR = "_print"  # depth 1 inside the build, like book/ and chapters/: relative URLs hold

DROP_SOLUTIONS = """() => { const found = document.querySelectorAll('.solution');
  found.forEach(e => e.remove()); return found.length; }"""

PREPARE = """async () => {
  // Solutions (sphinx-togglebutton dropdowns) shown open.
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  document.querySelectorAll('.dropdown.toggle-hidden, .toggle-details')
    .forEach(e => e.classList.remove('toggle-hidden'));
  // Every figure now, not when it scrolls into view.
  const images = Array.from(document.images);
  images.forEach(i => { i.loading = 'eager'; });
  await Promise.all(images.map(i => i.complete ? null
    : new Promise(r => { i.onload = r; i.onerror = r; })));
  if (window.MathJax && MathJax.startup) {
    await MathJax.startup.promise;
    if (MathJax.startup.document.lazyTypesetAll) await MathJax.startup.document.lazyTypesetAll();
  }
  return {images: images.length, broken: images.filter(i => !i.naturalWidth).length,
          formulas: document.querySelectorAll('mjx-container').length,
          untypeset: Array.from(document.querySelectorAll('mjx-container'))
            .filter(c => !c.querySelector('mjx-math')).length,
          errors: document.querySelectorAll('mjx-merror').length};
}"""

FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;color:#444">'
    '<span class="title"></span> · <span class="pageNumber"></span> / '
    '<span class="totalPages"></span></div>'
)


def anchor(page: str) -> str:
    return "page-" + page.replace("/", "-")


def print_document(html: Path, pages: list[str]) -> str:
    """The intro page with the articles of all ``pages`` in its article, in order."""
    known = {Path(p).name: p for p in pages}

    def local(match: re.Match) -> str:
        page = known.get(match.group("name"))
        if page is None:  # genindex, search, a page outside the book: leave it
            return match.group(0)
        return f'href="#{match.group("frag") or anchor(page)}"'

    sections = []
    for page in pages:
        text = (html / f"{page}.html").read_text(encoding="utf-8")
        article = ARTICLE.search(text)
        if article is None:
            raise SystemExit(f"make_pdf: no <article> in {page}.html")
        body = LINK.sub(local, article.group("body"))
        sections.append(f'<section class="nqf-print-page" id="{anchor(page)}">{body}</section>')
    template = (html / f"{pages[0]}.html").read_text(encoding="utf-8")
    match = ARTICLE.search(template)
    return template[: match.start("body")] + "\n".join(sections) + template[match.end("body") :]


def make_pdf(html: Path, out: Path, student_out: Path | None = None) -> dict:
    """Print the book into ``out`` (solutions shown) and ``student_out`` (none)."""
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("make_pdf: Debian's chromium is not installed (`make pdf` installs it)")
    folder = html / PRINT_DIR
    folder.mkdir(exist_ok=True)
    (folder / "book.html").write_text(print_document(html, toc.pages()), encoding="utf-8")
    started = time.perf_counter()
    try:
        with serve_directory(html) as (url, _), sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=chromium,
                headless=True,
                args=["--no-sandbox", "--disable-gpu", f"--host-resolver-rules={OFFLINE_RULES}"],
            )
            try:
                page = browser.new_page(viewport={"width": 1000, "height": 1400})
                page.goto(f"{url}/{PRINT_DIR}/book.html", wait_until="load", timeout=180_000)
                page.emulate_media(media="print")
                state = page.evaluate(PREPARE)
                if state["broken"] or state["untypeset"] or state["errors"]:
                    raise SystemExit(f"make_pdf: not ready to print: {state}")
                editions = [(out, False)] + ([(student_out, True)] if student_out else [])
                for path, student in editions:
                    if student:
                        state["solutions"] = page.evaluate(DROP_SOLUTIONS)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    page.pdf(
                        path=str(path),
                        format="A4",
                        scale=0.8,
                        print_background=True,
                        margin={"top": "14mm", "bottom": "16mm", "left": "12mm", "right": "12mm"},
                        display_header_footer=True,
                        header_template="<span></span>",
                        footer_template=FOOTER,
                        outline=True,
                        tagged=True,
                    )
            finally:
                browser.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    state["seconds"] = round(time.perf_counter() - started, 1)
    return state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, required=True, help="the book, solutions shown")
    parser.add_argument("--student-out", type=Path, help="the book without solutions")
    args = parser.parse_args(argv)
    if not (args.html / "index.html").is_file():
        print(f"make_pdf: no built book in {args.html} (run `make book`)", file=sys.stderr)
        return 1
    state = make_pdf(args.html, args.out, args.student_out)
    for path in filter(None, [args.out, args.student_out]):
        print(f"make_pdf: {path} ({path.stat().st_size / 2**20:.1f} MiB)")
    print(
        f"make_pdf: {state['formulas']} formulas, {state['images']} images, "
        f"{state.get('solutions', 0)} solutions left out of the student edition; "
        f"{state['seconds']} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
