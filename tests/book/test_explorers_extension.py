"""``book/_ext/explorers.py`` on a scratch book, built by Sphinx with myst-nb.

The scratch book has two pages with an explorer each: ``index`` stores one written by
this version of the package (every frame, as ``python -m scripts.execute_chapters``
stores it), ``chapters/old`` one written by the first version (its frames in the old
layout). On the built pages each explorer must keep only its default frame; its other
frames must be in ``_static/explorers/<id>.js``, referenced by a path that resolves from
the page's folder, and must be exactly the frames the notebook stored (read back by
:func:`nqf_mini.course.explorer_page.parse`). The page of the old explorer must carry
this version's markup (a labelled control group, ``aria-valuetext``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest

from nqf_mini.course import explorer_page
from nqf_mini.course.explorer import Choice, Slider, explorer

ROOT = Path(__file__).resolve().parents[2]
OLD = ROOT / "tests" / "unit" / "data" / "explorer_v1.html"


def _notebook(html: str, title: str, text: str = "") -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    cell = nbformat.v4.new_code_cell("ex")
    cell.outputs = [nbformat.v4.new_output("execute_result", execution_count=1,
                                           data={"text/html": html, "text/plain": "Explorer"})]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n{text}"), cell]
    return nb


def _draw(fig, kind, slope):
    ax = fig.subplots()
    x = np.linspace(0.0, 1.0, 12)
    ax.plot(x, slope * x, "o-" if kind == "dots" else "-")
    ax.set_ylim(-1.5, 1.5)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    sphinx = pytest.importorskip("sphinx.cmd.build")
    pytest.importorskip("myst_nb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NQF_EXPLORER_FRAMES", "all")  # every frame, as the book's outputs
        ex = explorer(_draw, Choice("kind", ["line", "dots"]),
                      Slider("slope", [-1.0, 0.0, 1.0], default=0.0),
                      caption="What to look for: the line tilts.", figsize=(1.6, 1.2),
                      dpi=40)
    stored = {"index": ex._repr_html_(), "chapters/old": OLD.read_text(encoding="utf-8")}
    src = tmp_path_factory.mktemp("explorers-src")
    (src / "chapters").mkdir()
    for name, html in stored.items():
        toc = "```{toctree}\nchapters/old\n```" if name == "index" else ""
        nbformat.write(_notebook(html, name, toc), src / f"{name}.ipynb")
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "extensions = ['myst_nb', 'book._ext.explorers']\n"
        "nb_execution_mode = 'off'\n"
        "html_theme = 'basic'\n")
    out = src / "_build"
    code = sphinx.build_main(["-q", "-b", "html", "-W", str(src), str(out)])
    assert code == 0, "the scratch book did not build"
    yield stored, out
    shutil.rmtree(src, ignore_errors=True)


@pytest.mark.parametrize("name", ["index", "chapters/old"])
def test_frames_leave_the_page_for_a_script_file(built, name):
    stored, out = built
    page = (out / f"{name}.html").read_text(encoding="utf-8")
    meta, first, data = explorer_page.parse(stored[name])
    assert page.count('class="nqf-explorer"') == 1
    assert 'class="nqf-explorer-data"' not in page, "the frames are still in the page"
    # The default frame stays, as the image shown before any script runs.
    assert f'src="data:image/png;base64,{first}"' in page
    others = [f for f in data["frames"] if f is not None and f != first]
    assert others and not any(f in page for f in others)
    url = re.search(r'data-nqf-frames="([^"]+)"', page).group(1)
    script = (out / f"{name}.html").parent / url
    assert script.resolve() == (out / "_static" / "explorers" / f"{meta['id']}.js").resolve()
    prefix = f"(window.{explorer_page.FRAMES_GLOBAL} = window.{explorer_page.FRAMES_GLOBAL}" \
             f" || {{}})[{json.dumps(meta['id'])}] = "
    text = script.read_text(encoding="utf-8")
    assert text.startswith(prefix) and text.endswith(";\n")
    assert json.loads(text[len(prefix):-2]) == data


def test_an_old_output_gets_this_versions_markup(built):
    _, out = built
    page = (out / "chapters" / "old.html").read_text(encoding="utf-8")
    assert 'role="group"' in page and "aria-valuetext=" in page
    assert "aria-describedby=" in page and '"version":2' in page
