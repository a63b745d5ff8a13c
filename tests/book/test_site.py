"""The built HTML book, read as files: what a reader without sight, on a slow line or
with a search engine gets (``make test`` runs it after the book build; the browser tests in
``tests/browser`` check the same pages rendered).

* Every figure is a ``<figure>`` with a ``<figcaption>`` (``book/_ext/figures.py``), and its
  image has alt text that describes it: not empty, not a file name (myst-nb falls back to
  the image's path when a cell carries no ``"mystnb": {"image": {"alt": ...}}``).
* Figure images are sized (``width``/``height``), lazy, and palette PNGs no bigger than
  :data:`FIGURE_BUDGET` bytes.
* No page repeats an inline script (a repeated ``const`` is a SyntaxError), loads the
  1.45 MiB ``fontawesome.js``, lacks a description or a favicon, or ships the unused
  ipywidgets HTML manager and RequireJS.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from scripts import toc
from tests.html_void import VOID

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
NEEDS = (HTML / "index.html", "book")

#: The largest figure image, in bytes, after the build's palette conversion.
FIGURE_BUDGET = 200_000
FILE_NAME = re.compile(r"(^|/)[\w.-]+\.(png|jpe?g|svg|gif|webp)$", re.I)
PAGES = toc.pages()


class _Figures(HTMLParser):
    """The figure images of a page, and the <figure> elements with what they hold."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.figures: list[dict] = []  # {"images": [...], "caption": str}
        self.images: list[dict] = []  # attributes of every content image (in _images/)
        self._caption_depth: int | None = None
        self.inline_scripts: list[str] = []
        self._script = False
        self.meta: dict[str, str] = {}
        self.links: list[dict] = []
        self.script_srcs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag == "figure":
            self.figures.append({"images": [], "caption": "", "id": attrs.get("id", "")})
        if tag == "figcaption" and self.figures:
            self._caption_depth = len(self.stack)
        if tag == "img" and "_images/" in attrs.get("src", ""):
            attrs["in_figure"] = "figure" in self.stack
            self.images.append(attrs)
            if "figure" in self.stack:
                self.figures[-1]["images"].append(attrs)
        if tag == "script":
            self._script = not attrs.get("src")
            if attrs.get("src"):
                self.script_srcs.append(attrs["src"])
        if tag == "meta" and attrs.get("name"):
            self.meta[attrs["name"]] = attrs.get("content", "")
        if tag == "link":
            self.links.append(attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass
        if tag == "figcaption":
            self._caption_depth = None
        if tag == "script":
            self._script = False

    def handle_data(self, data):
        if self._caption_depth is not None and self.figures:
            self.figures[-1]["caption"] += data
        if self._script and data.strip():
            self.inline_scripts.append(data.strip())


def parse(page: str) -> _Figures:
    parser = _Figures()
    parser.feed((HTML / f"{page}.html").read_text(encoding="utf-8"))
    return parser


def bad_alt(alt: str) -> bool:
    return not alt.strip() or bool(FILE_NAME.search(alt.strip()))


@pytest.mark.parametrize("page", PAGES)
def test_every_figure_has_a_caption_element(page):
    """Each figure image sits in a <figure> whose <figcaption> starts "Figure N"."""
    parsed = parse(page)
    loose = [i["src"] for i in parsed.images if not i["in_figure"]]
    assert not loose, (
        f"{page}: {len(loose)} figure image(s) outside a <figure> (is the "
        f"caption a paragraph starting **Figure N.** right after the cell?): "
        f"{loose[:3]}"
    )
    for figure in parsed.figures:
        caption = " ".join(figure["caption"].split())
        assert re.match(r"Figure \d+", caption), (
            f"{page}: a <figure> without a 'Figure N' caption: {caption[:80]!r}"
        )
        assert figure["images"], f"{page}: <figure> with no image: {caption[:60]!r}"


@pytest.mark.parametrize("page", PAGES)
def test_every_figure_has_alt_text(page):
    """No figure image's alt text is empty or a file name; it describes the figure."""
    missing = [
        i["src"].rsplit("/", 1)[-1][:16] for i in parse(page).images if bad_alt(i.get("alt", ""))
    ]
    assert not missing, f"{page}: {len(missing)} figure(s) without alt text: {missing}"


def test_alt_text_check_fails_on_file_names():
    """The check itself: myst-nb's fallback (the path) and an empty alt are caught."""
    assert bad_alt(
        "../_images/faf7df4e15018f106f1839f242bb202de0665c738a305bc163b40ac55c52315a.png"
    )
    assert bad_alt("  ")
    assert not bad_alt(
        "Training loss against step: the network's curve and its quadratic "
        "form's fall together after a plateau."
    )


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("chapters/")])
def test_figure_images_are_sized_lazy_and_small(page):
    for image in parse(page).images:
        name = image["src"].rsplit("/", 1)[-1]
        assert image.get("width") and image.get("height"), f"{page}: {name} has no size"
        assert image.get("loading") == "lazy", f"{page}: {name} is not lazy"
        path = HTML / "_images" / name
        with Image.open(path) as picture:
            assert picture.size == (int(image["width"]), int(image["height"])), name
            if name.endswith(".png"):
                assert picture.mode == "P", f"{name}: {picture.mode} PNG, not a palette PNG"
        assert path.stat().st_size <= FIGURE_BUDGET, (
            f"{name}: {path.stat().st_size} bytes > {FIGURE_BUDGET}"
        )


@pytest.mark.parametrize("page", PAGES)
def test_page_head(page):
    parsed = parse(page)
    repeated = {s[:60] for s in parsed.inline_scripts if parsed.inline_scripts.count(s) > 1}
    assert not repeated, f"{page}: inline scripts emitted twice: {sorted(repeated)}"
    assert not [s for s in parsed.script_srcs if "fontawesome" in s], (
        f"{page}: loads fontawesome.js (the icons are drawn by the theme's web font)"
    )
    description = parsed.meta.get("description", "")
    assert 40 <= len(description) <= 160, f"{page}: description {description!r}"
    assert "\\" not in description and "$" not in description, description
    assert any("icon" in link.get("rel", "") for link in parsed.links), f"{page}: no favicon"
    assert 'data-default-mode=""' not in (HTML / f"{page}.html").read_text(encoding="utf-8")


def test_no_unused_bundles():
    """The ipywidgets HTML manager and RequireJS are not shipped (the explorers need neither),
    nor Font Awesome's script."""
    vendor = HTML / "_static" / "vendor"
    assert not (vendor / "html-manager").exists()
    assert not (vendor / "require.js").exists()
    assert not list((HTML / "_static").rglob("fontawesome.js"))
    assert not list((HTML / "_static").rglob("embed-amd.js"))


def test_references_roles():
    """docutils' citation roles are repaired: list items in the citation list."""
    text = (HTML / "book/references.html").read_text(encoding="utf-8")
    assert "doc-biblioentry" not in text
    if 'role="list"' in text:
        assert 'role="listitem"' in text


@pytest.mark.parametrize("page", PAGES)
def test_sidebar_expanders_have_names(page):
    """Each sidebar expand arrow (open on the pages of its section) has a name."""
    text = (HTML / f"{page}.html").read_text(encoding="utf-8")
    summaries = re.findall(r"<summary[^>]*>\s*<span class=\"toctree-toggle\"", text)
    assert summaries, "no sidebar expand arrow found"
    unnamed = [s for s in summaries if "aria-label=" not in s]
    assert not unnamed, f"{page}: {len(unnamed)} sidebar expand arrows without a name"
