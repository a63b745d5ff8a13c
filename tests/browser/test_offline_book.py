"""The built HTML book renders in a browser with no network (``make browser-test``).

For the intro page and every chapter in ``_toc.yml``, headless Chromium loads the page from a local
server while every remote host name fails to resolve, and the test checks that MathJax typeset the
math, that each figure stored in the notebook is on the page and was served, and that the Colab
and Binder links point at the chapter's notebook edition (``notebooks/``, made by ``make
notebooks``) in the repository named in ``_config.yml``. (The screenshot of each chapter is
taken by ``test_desktop.py``, which loads every page once for its checks.)
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import yaml

from scripts import toc

from .conftest import HTML, ROOT
from tests.html_void import VOID

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
CHAPTERS = [f for f in toc.pages() if f.startswith("chapters/")]

# Raw TeX that MathJax would have replaced; code, scripts and MathJax's own output are not prose.
RAW_MATH = re.compile(r"\\\(|\\\[|\$\$|\\begin\{")
NOT_PROSE = {"script", "style", "pre", "code", "textarea", "kbd", "samp", "mjx-container"}
# What myst-nb's HTML renderer shows of an output, in its order of priority.
PRIORITY = [
    "application/vnd.jupyter.widget-view+json",
    "application/javascript",
    "text/html",
    "image/svg+xml",
    "image/png",
    "image/jpeg",
    "text/markdown",
    "text/latex",
    "text/plain",
]
IMAGES = {"image/svg+xml", "image/png", "image/jpeg"}
REMOTE = re.compile(r"^(https?:)?//", re.I)
ASSET_ATTRS = {
    "script": "src",
    "link": "href",
    "img": "src",
    "iframe": "src",
    "source": "src",
    "video": "src",
    "audio": "src",
    "embed": "src",
    "object": "data",
}


class Scan(HTMLParser):
    """Collects what the checks need from a page in one pass."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list = []  # (tag, classes) of the open elements
        self.prose: list = []
        self.math_nodes = self.mjx = self.mjx_errors = 0
        self.output_images: list = []
        self.links: list = []
        self.assets: list = []  # (tag, URL) of everything the page loads

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if tag == "mjx-container":
            self.mjx += 1
        if tag == "mjx-merror" or "data-mjx-error" in attrs:
            self.mjx_errors += 1
        if "math" in classes and tag in {"span", "div"}:
            self.math_nodes += 1
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if attrs.get(ASSET_ATTRS.get(tag, "")):
            self.assets.append((tag, attrs[ASSET_ATTRS[tag]]))
        if tag == "img" and any("cell_output" in c for _, c in self.stack):
            self.output_images.append(attrs.get("src", ""))
        if tag not in VOID:
            self.stack.append((tag, classes))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if not any(tag in NOT_PROSE for tag, _ in self.stack):
            self.prose.append(data)


def scan(html: str) -> Scan:
    s = Scan()
    s.feed(html)
    s.close()
    return s


def assert_typeset(page_path: str, dom: Scan, static: Scan):
    assert dom.mjx >= 1, f"{page_path}: MathJax typeset nothing (no <mjx-container>)"
    assert dom.mjx >= static.math_nodes, (
        f"{page_path}: {static.math_nodes} math elements but only {dom.mjx} typeset"
    )
    assert dom.mjx_errors == 0, f"{page_path}: {dom.mjx_errors} MathJax errors"
    raw = sorted({m.group() for m in RAW_MATH.finditer(" ".join(dom.prose))})
    assert not raw, f"{page_path}: untypeset TeX left in the text: {raw}"


def assert_only_local_requests(page_path: str, page, origin_path: str):
    assert any(origin_path in url for url in page.requests), (
        f"{page_path}: the net log shows no request for {origin_path}; cannot vouch for the rest"
    )
    remote = sorted({u for u in page.requests if urlsplit(u).hostname != "127.0.0.1"})
    assert not remote, f"{page_path}: requests to remote hosts: {remote}"


def repository():
    repo = CONFIG["repository"]
    owner, name = urlsplit(repo["url"]).path.strip("/").removesuffix(".git").split("/")[:2]
    prefix = (repo.get("path_to_book") or "").strip("/")
    return owner, name, repo.get("branch", "main"), prefix + "/" if prefix else ""


def notebook_outputs(path: Path) -> int:
    """The number of image outputs a notebook shows (what myst-nb's HTML renderer picks)."""
    nb = json.loads(path.read_text())
    images = 0
    for cell in nb["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell["cell_type"] != "code" or tags & {"remove-cell", "remove-output"}:
            continue
        for out in cell.get("outputs", []):
            shown = next((m for m in PRIORITY if m in out.get("data", {})), None)
            images += shown in IMAGES
    return images


def test_toc_lists_chapters():
    assert CHAPTERS, "_toc.yml lists no file under chapters/"


def test_pages_load_no_remote_assets():
    """No built page loads a script, stylesheet, font, image or frame from another host."""
    pages = sorted(HTML.rglob("*.html"))
    assert pages, f"no HTML pages under {HTML}"
    offenders = [
        f"{p.relative_to(HTML)}: <{tag}> {url}"
        for p in pages
        for tag, url in scan(p.read_text()).assets
        if REMOTE.match(url)
    ]
    assert not offenders, "remote assets:\n" + "\n".join(offenders)
    css = [
        f"{p.relative_to(HTML)}"
        for p in HTML.joinpath("_static").rglob("*.css")
        if re.search(r"(url\(|@import)\s*['\"]?(https?:)?//", p.read_text(errors="replace"))
    ]
    assert not css, f"stylesheets that load remote resources: {css}"


def test_intro_math(browser):
    page = browser("book/intro.html")
    assert_typeset("book/intro.html", scan(page.dom), scan((HTML / "book/intro.html").read_text()))
    assert_only_local_requests("book/intro.html", page, "/_static/vendor/mathjax/tex-chtml.js")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: Path(c).name)
def test_chapter(chapter, browser, book_server):
    name = Path(chapter).name
    page_path = f"{chapter}.html"
    built = HTML / page_path
    assert built.is_file(), f"{page_path} was not built"
    static = scan(built.read_text())

    page = browser(page_path)
    dom = scan(page.dom)

    # (a) MathJax typeset every formula, from the book's own copy of MathJax.
    assert_typeset(page_path, dom, static)
    assert_only_local_requests(page_path, page, "/_static/vendor/mathjax/tex-chtml.js")

    # (b) Every figure stored in the notebook is on the page, exists in the build and was served.
    source = ROOT / f"{chapter}.ipynb"
    if source.is_file():
        images = notebook_outputs(source)
        figures = [src for src in dom.output_images if "_images/" in src]
        assert len(figures) == images, (
            f"{page_path}: {images} image outputs in the notebook, {len(figures)} on the page"
        )
        served = dict(book_server.served)
        for src in figures:
            path = urlsplit(urljoin(f"/{page_path}", src)).path
            assert (HTML / path.lstrip("/")).stat().st_size > 0, f"{page_path}: {src} is empty"
            assert served.get(path) == 200, f"{page_path}: {src} was not served to the browser"

    # (c) The launch buttons open this chapter's notebook edition (plain CommonMark, made by
    # `make notebooks`) in Colab and on Binder, at a path that exists in the repository.
    owner, repo, branch, prefix = repository()
    launch = CONFIG.get("launch_buttons", {})
    edition = f"{CONFIG['sphinx']['config'].get('nqf_edition_dir', 'notebooks')}/{name}.ipynb"
    assert (ROOT / edition).is_file(), f"{page_path}: launch target {edition} missing"
    notebook = f"{prefix}{edition}"
    ui = {"classic": "tree", "jupyterlab": "lab/tree"}[launch.get("notebook_interface", "classic")]
    colab = f"{launch['colab_url'].strip('/')}/github/{owner}/{repo}/blob/{branch}/{notebook}"
    binder = (
        f"{launch['binderhub_url'].strip('/')}/v2/gh/{owner}/{repo}/{branch}"
        f"?urlpath={ui}/{notebook}"
    )
    assert colab in static.links, f"{page_path}: no Colab link {colab}"
    assert binder in static.links, f"{page_path}: no Binder link {binder}"
