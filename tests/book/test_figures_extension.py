"""``book/_ext/figures.py`` on a scratch notebook, built by Sphinx with myst-nb.

The notebook has what a chapter has: a figure cell with alt text in its metadata
(``"mystnb": {"image": {"alt": ...}}``), tagged ``hide-input``, followed by its
``**Figure 1.**`` caption; a second figure whose caption carries a ``(label)=`` target and is
linked from the text; and a figure cell with no alt text and a paragraph that is not a
caption. The built page must show the first two as ``<figure>`` with the alt text on the image
and the caption in ``<figcaption>``, the label as the figure's anchor (the link resolves to
it), the images sized, lazy and palette PNGs; the third image stays outside any ``<figure>``
with myst-nb's file-name alt, which ``tests/book/test_site.py`` reports.
"""

from __future__ import annotations

import base64
import io
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
ALT = "Two curves fall from 1 to 0.01 after a plateau of 80 steps"


def _png(colour: tuple[int, int, int]) -> str:
    image = Image.new("RGBA", (120, 80), (255, 255, 255, 255))
    for x in range(10, 110):
        image.putpixel((x, 40 + (x % 7)), colour + (255,))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def _figure_cell(colour, alt: str | None):
    cell = nbformat.v4.new_code_cell("plot()", metadata={"tags": ["hide-input"]})
    if alt:
        cell.metadata["mystnb"] = {"image": {"alt": alt}}
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data", data={"image/png": _png(colour), "text/plain": "<Figure>"}
        )
    ]
    return cell


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    sphinx = pytest.importorskip("sphinx.cmd.build")
    src = tmp_path_factory.mktemp("figures-src")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Scratch\n\nSee [the second figure](fig-scratch-two)."),
        _figure_cell((30, 80, 160), ALT),
        nbformat.v4.new_markdown_cell("**Figure 1.** The first caption, with $x^2$."),
        _figure_cell((200, 60, 60), "A red line"),
        nbformat.v4.new_markdown_cell(
            "(fig-scratch-two)=\n**Figure 2** (a reconstruction). The second caption."
        ),
        _figure_cell((20, 20, 20), None),
        nbformat.v4.new_markdown_cell("A paragraph that is not a caption."),
    ]
    nbformat.write(nb, src / "index.ipynb")
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'book' / '_ext')!r})\n"
        "extensions = ['myst_nb', 'figures']\n"
        "nb_execution_mode = 'off'\n"
        "myst_enable_extensions = ['dollarmath']\n"
        "html_theme = 'basic'\n"
    )
    out = src / "_build"
    code = sphinx.build_main(["-q", "-b", "html", "-W", str(src), str(out)])
    assert code == 0, "the scratch book did not build"
    html = (out / "index.html").read_text(encoding="utf-8")
    yield html, out
    shutil.rmtree(src, ignore_errors=True)


def test_figures_wrapped_with_alt_and_caption(built):
    html, _ = built
    figures = re.findall(r"<figure\b[^>]*>(.*?)</figure>", html, re.S)
    assert len(figures) == 2, f"{len(figures)} <figure> elements, expected 2"
    first, second = figures
    assert f'alt="{ALT}"' in first
    assert re.search(r"<figcaption>\s*<p><strong>Figure 1\.</strong> The first caption", first)
    assert '<img alt="A red line"' in second and "The second caption" in second


def test_label_is_the_figure_anchor(built):
    html, _ = built
    assert re.search(r'<figure class="nqf-figure" id="fig-scratch-two">', html)
    assert 'href="#fig-scratch-two"' in html


def test_uncaptioned_image_stays_out_with_its_file_name(built):
    html, _ = built
    tail = html[html.rindex("</figure>") :]
    image = re.search(r'<img alt="([^"]*)"', tail)
    assert image and image.group(1).endswith(".png"), "myst-nb's fallback alt expected"


def test_images_sized_lazy_palette(built):
    html, out = built
    for tag in re.findall(r"<img\b[^>]*_images/[^>]*>", html):
        assert 'width="120" height="80"' in tag and 'loading="lazy"' in tag, tag
        name = re.search(r'_images/([^"]+)"', tag).group(1)
        with Image.open(out / "_images" / name) as image:
            assert image.mode == "P"
