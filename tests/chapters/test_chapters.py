"""Structural checks of the chapter notebooks: executed, in order, listed, launchable.

The book shows the outputs stored in the notebooks and nbval re-checks them, so a chapter stored
unexecuted, executed out of order or with an error would let the book show something no test saw.
"""

import re
from pathlib import Path

import nbformat
import pytest
import yaml

from scripts import toc
from scripts.notebook_edition import exercises as grammar

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
# Chapters 1-7 teach the theory and Chapter 10 tests it on real data; each has an explorer.
# Chapters 8-9 report the paper's experiments as fixed grids of runs (the "Appendix" part).
LECTURES = [p for p in CHAPTERS if int(p.stem.split("_")[0]) not in (8, 9)]


def repository_url():
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]


def test_there_are_chapters():
    assert CHAPTERS, "no notebooks in chapters/"


def test_toc_and_chapter_folder_agree():
    listed = {f for f in toc.pages() if f.startswith("chapters/")}
    present = {f"chapters/{p.stem}" for p in CHAPTERS}
    assert listed == present, (
        f"in _toc.yml only: {listed - present}; on disk only: {present - listed}")
    for f in toc.pages():
        assert any((ROOT / f).with_suffix(s).exists() for s in (".md", ".ipynb")), f


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_executed_top_to_bottom_without_errors(path):
    nb = nbformat.read(path, as_version=4)
    counts = [c.execution_count for c in code_cells(nb)]
    assert None not in counts, f"{path.name} has unexecuted code cells: run `make execute`"
    assert counts == list(range(1, len(counts) + 1)), f"{path.name} was not run top to bottom"
    errors = [o for c in code_cells(nb) for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{path.name} stores an error output"
    stderr = [o.text for c in code_cells(nb) for o in c.outputs
              if o.output_type == "stream" and o.name == "stderr"]
    assert not stderr, f"{path.name} stores stderr output (warnings): {stderr[:1]}"


def canonical_install_cell():
    """The Colab install cell made from _config.yml and the version
    (scripts/notebook_edition)."""
    from scripts.notebook_edition.install_cell import install_cell_source

    return install_cell_source(ROOT)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_first_code_cell_installs_in_colab_only(path):
    first = code_cells(nbformat.read(path, as_version=4))[0]
    assert '"google.colab" in sys.modules' in first.source
    assert f"git+{repository_url()}" in first.source, (
        "install cell and _config.yml disagree on the URL")
    assert first.source == canonical_install_cell(), (
        f"{path.name}: the first code cell is not the canonical install cell (--no-deps, pinned "
        f"tag, NQF_DEVICE=cpu in Colab): run `make install-cells`")
    assert "hide-cell" in first.metadata.get("tags", [])
    assert not first.outputs


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_install_cell_installs_the_release_of_this_version(path):
    """The tag every Colab cell installs is ``v`` + the package's version, the tag
    ``make release`` creates."""
    import nqf_mini

    first = code_cells(nbformat.read(path, as_version=4))[0]
    tags = re.findall(r"nqf_mini @ git\+\S+?@([\w.\-]+)", first.source)
    assert tags == [f"v{nqf_mini.__version__}"], (path.name, tags)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_lecture_anatomy(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "**Learning objectives.**" in text and "**Prerequisites.**" in text
    found = grammar.exercises(nb)
    assert len(found) >= 3, f"{path.name}: {len(found)} exercises, need at least 3"
    solved = [label for label, _ in grammar.solutions(nb)]
    assert sorted(solved) == sorted(ex.label for ex in found), (path.name, solved)
    assert text.count(":class: dropdown") >= len(solved)
    assert "assert " in "\n".join(c.source for c in code_cells(nb)), "a chapter checks its claims"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_only_explorer_cells_ignore_output(path):
    """nbval skips only the explorers (their PNG bytes vary across library versions)."""
    for cell in code_cells(nbformat.read(path, as_version=4)):
        if "nbval-ignore-output" in cell.metadata.get("tags", []):
            assert "explorer(" in cell.source or "interact" in cell.source, (
                "only explorer and widget cells may skip nbval's comparison")


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_explorer_works_without_a_kernel(path):
    """Each chapter's explorer is built by nqf_mini.course.explorer, so that it works on the
    static page: its stored output is self-contained HTML (every frame precomputed) with a
    PNG fallback, and the text before it tells the reader so."""
    nb = nbformat.read(path, as_version=4)
    cells = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"
             and "nqf_mini.course.explorer import" in c.source]
    assert len(cells) == 1, f"{path.name}: {len(cells)} explorer cells, expected 1"
    i, cell = cells[0]
    assert "widgets.interact" not in cell.source, "an explorer needs no kernel"
    assert "nbval-ignore-output" in cell.metadata.get("tags", [])
    (output,) = cell.outputs
    html = output["data"].get("text/html", "")
    assert 'class="nqf-explorer"' in html and "image/png" in output["data"]
    assert "nqf-explorer-caption" in html and "What to look for" in html
    # Seven explorers may add 5 MB to chapters/ in all: about 0.7 MB each, 1 MB at most.
    size = len(html) + len(output["data"]["image/png"])
    assert size < 1_000_000, f"{path.name}: the explorer stores {size / 1e6:.2f} MB"
    intro = nb.cells[i - 1]
    assert intro.cell_type == "markdown" and "without a kernel" in intro.source
    assert not nb.metadata.get("widgets"), f"{path.name} stores widget state no cell shows"


# --- one exercise convention, one figure style ----------------------------------------------------

@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercise_convention(path):
    """Each exercise: a label ex-ch<N>-..., a difficulty and kind; coding ones a
    registered check."""
    from nqf_mini.course.check import CHECKS

    number = int(path.stem.split("_")[0])
    found = grammar.exercises(nbformat.read(path, as_version=4))
    assert found
    for ex in found:
        assert ex.label.startswith(f"ex-ch{number}-"), ex
        assert 1 <= ex.stars <= 3 and ex.kind in {"derivation", "coding", "exploration"}, (
            f"{ex.label}: needs a line '*Difficulty: ★★☆ (derivation|coding|exploration).*'")
        if ex.kind == "coding":
            assert ex.checks, f"{ex.label}: a coding exercise needs nqf.check.exercise(...)"
        for label in ex.checks:
            assert label in CHECKS and label.startswith(f"ch{number}."), (ex.label, label)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_one_figure_style(path):
    """The setup cell applies the course style; colours come from COLORS; figures are opaque."""
    import base64
    import io

    import matplotlib.image

    cells = code_cells(nbformat.read(path, as_version=4))
    assert "apply_style()" in cells[1].source, (
        f"{path.name}: call nqf.plotting.apply_style() in setup")
    literal = re.compile(r"\b(?:color|facecolor|edgecolor)\s*=\s*[\"'#]")
    for cell in cells:
        assert not literal.search(cell.source), (
            f"{path.name}: use nqf_mini.plotting.COLORS instead of a colour literal:\n"
            f"{cell.source}")
        for out in cell.outputs:
            png = out.get("data", {}).get("image/png")
            if png:
                image = matplotlib.image.imread(io.BytesIO(base64.b64decode(png)))
                assert image.shape[-1] == 3 or image[..., 3].min() == 1.0, (
                    f"{path.name}: a figure has transparent pixels (unreadable in dark mode)")


# --- what the reader sees of the code ----------------------------------------------------

MAX_LINE = 88
FIGURE_CODE = re.compile(r"plt\.(?:subplots|figure|show)\(|\bexplorer\(")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_code_lines_fit_the_page(path):
    """Code lines are at most 88 characters, so that no line is cut off at the page edge."""
    long = [(i, line) for i, cell in enumerate(nbformat.read(path, as_version=4).cells)
            if cell.cell_type == "code" for line in cell.source.splitlines()
            if len(line) > MAX_LINE]
    assert not long, (f"{path.name}: {len(long)} code lines longer than {MAX_LINE} characters, "
                      f"e.g. cell {long[0][0]}: {long[0][1]!r}")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_figure_code_is_behind_a_toggle(path):
    """A cell that draws a figure hides its input (the figure is the point; the code a
    click away)."""
    for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type == "code" and FIGURE_CODE.search(cell.source):
            tags = cell.metadata.get("tags", [])
            assert {"hide-input", "hide-cell"} & set(tags), (
                f"{path.name}: cell {i} draws a figure but is not tagged hide-input")
