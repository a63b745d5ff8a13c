"""Sphinx extension of the course: every figure of a page is a real ``<figure>``.

A chapter draws a figure in a code cell (tagged ``hide-input``) and captions it in the
markdown paragraph right after that cell, which starts with ``**Figure N.**`` (or
``**Figure N**``), sometimes after a ``(label)=`` target line. The figure's alt text is
written in the cell's metadata, ``"mystnb": {"image": {"alt": "..."}}``, which myst-nb puts
on the image.

:class:`WrapFigures` (a post-transform, after myst-nb has chosen each output's mime type)
wraps such a cell and its caption paragraph in a :class:`captioned_figure` node, written in
HTML as ``<figure class="nqf-figure">`` with the caption in ``<figcaption>``; the caption's
label (``(fig-ch7-onset)=``) becomes the figure's ``id``, so links to it land on the figure.
It is not a docutils ``figure``, so Sphinx does not number it a second time ("Fig. 7.1"):
the chapter's own "Figure N." is the number.

:func:`finish_images` (on ``build-finished``) gives every figure image in ``_images/`` of
the HTML build its ``width`` and ``height`` (no layout shift while it loads),
``loading="lazy"`` and ``decoding="async"`` (none is fetched before it comes near the
screen), and stores each PNG as a palette PNG (:func:`to_palette`): about a third of the
bytes of matplotlib's RGBA output, with no visible change (the largest per-pixel error is
reported by ``tests/book/test_site.py``). The notebooks keep their original outputs.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from PIL import Image
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

CAPTION = re.compile(r"^Figure\s+\d+\.?$")
IMG = re.compile(r"<img\b(?P<attrs>[^>]*?)\s*/?>")
SRC = re.compile(r'\bsrc="(?P<src>[^"]*_images/[^"]+)"')


class captioned_figure(nodes.General, nodes.Element):
    """A figure: the cell that draws it, then its caption (:class:`figure_caption`)."""


class figure_caption(nodes.General, nodes.Element):
    """The caption of a :class:`captioned_figure`: the chapter's "**Figure N.**" paragraph."""


def is_caption(node: nodes.Node) -> bool:
    """A paragraph whose first child is bold text "Figure N." (or "Figure N")."""
    if not isinstance(node, nodes.paragraph):
        return False
    first = next(
        (c for c in node.children if not (isinstance(c, nodes.Text) and not c.strip())), None
    )
    return isinstance(first, nodes.strong) and bool(CAPTION.match(first.astext().strip()))


def has_output(node: nodes.Node) -> bool:
    """A myst-nb code cell that shows an output."""
    return (
        isinstance(node, nodes.container)
        and node.get("nb_element") == "cell_code"
        and any(
            isinstance(n, nodes.container) and n.get("nb_element") == "cell_code_output"
            for n in node.findall(nodes.container)
        )
    )


def previous_cell(paragraph: nodes.paragraph) -> nodes.Element | None:
    """The code cell just before ``paragraph``, skipping label targets between them."""
    parent = paragraph.parent
    index = parent.index(paragraph) - 1
    while index >= 0 and isinstance(parent[index], nodes.target):
        index -= 1
    if index >= 0 and has_output(parent[index]):
        return parent[index]
    return None


class WrapFigures(SphinxPostTransform):
    """Wrap each figure cell and its "Figure N." caption in a :class:`captioned_figure`."""

    default_priority = 300  # after myst-nb's mime selection (4) and hidden inputs (199)
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for paragraph in list(self.document.findall(is_caption)):
            cell = previous_cell(paragraph)
            if cell is None:
                continue
            figure = captioned_figure(classes=["nqf-figure"])
            # A label on the caption names the figure: its anchor moves to the <figure>.
            figure["ids"], paragraph["ids"] = paragraph["ids"], []
            # Not replace_self: it would copy the cell's classes and ids onto the figure.
            parent = cell.parent
            index = parent.index(cell)
            parent.remove(cell)
            parent.insert(index, figure)
            paragraph.parent.remove(paragraph)
            figure += cell
            figure += figure_caption("", paragraph)


def visit_figure(self, node: captioned_figure) -> None:
    self.body.append(self.starttag(node, "figure"))


def depart_figure(self, node: captioned_figure) -> None:
    self.body.append("</figure>\n")


def visit_caption(self, node: figure_caption) -> None:
    self.body.append(self.starttag(node, "figcaption"))


def depart_caption(self, node: figure_caption) -> None:
    self.body.append("</figcaption>\n")


def to_palette(path: Path) -> bool:
    """Store the PNG at ``path`` as a palette PNG of at most 256 colours, if that is smaller.

    Matplotlib's figures have few colours (lines, text, anti-aliased edges); median-cut
    quantisation keeps them, and ``optimize`` picks the smallest encoding. Returns whether
    the file was replaced."""
    with Image.open(path) as image:
        if image.mode == "P":
            return False
        image.load()
    rgb = image.convert("RGB")
    palette = rgb.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    tmp = path.with_suffix(".tmp.png")
    palette.save(tmp, optimize=True)
    if tmp.stat().st_size < path.stat().st_size:
        tmp.replace(path)
        return True
    tmp.unlink()
    return False


def image_attributes(html: str, html_path: Path, outdir: Path) -> str:
    """``html`` with width, height, lazy loading and async decoding on every figure image."""

    def fix(match: re.Match) -> str:
        attrs = match.group("attrs")
        src = SRC.search(attrs)
        if src is None or "width=" in attrs:
            return match.group(0)
        target = (html_path.parent / src.group("src")).resolve()
        if not target.is_file() or outdir.resolve() not in target.parents:
            return match.group(0)
        with Image.open(target) as image:
            width, height = image.size
        return f'<img{attrs} width="{width}" height="{height}" loading="lazy" decoding="async" />'

    return IMG.sub(fix, html)


def finish_images(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for png in sorted((outdir / "_images").glob("*.png")):
        to_palette(png)
    for page in sorted(outdir.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if "_images/" not in text:
            continue
        fixed = image_attributes(text, page, outdir)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_node(captioned_figure, html=(visit_figure, depart_figure))
    app.add_node(figure_caption, html=(visit_caption, depart_caption))
    app.add_post_transform(WrapFigures)
    app.connect("build-finished", finish_images)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
