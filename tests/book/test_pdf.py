"""The printed book (``make pdf``), read back from its PDF files.

``_build/html/nqf-course.pdf`` must hold every chapter of ``_toc.yml`` under its online
number and title ("4. The Lotka–Volterra reduction and exact solutions"), in order, with no
TeX left untypeset in its text, at least as many embedded images as the chapters have figure
outputs (the explorers print their default frame), and every solution; the student edition
``nqf-course-student.pdf`` the same chapters and no solution. Skipped when the PDFs were not
made (``make pdf`` makes them, then runs this test). The PDFs are read with poppler's
``pdftotext`` and ``pdfimages`` (Debian's ``poppler-utils``, which ``make pdf`` installs):
2 s for both books, where pypdf took four minutes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from scripts import toc

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "_build" / "html" / "nqf-course.pdf"
STUDENT = ROOT / "_build" / "html" / "nqf-course-student.pdf"
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\$\$|\\begin\{|\\(?:frac|mathbb|operatorname|top|sum)\b")
SOLUTION = re.compile(r"Solution to Exercise")

QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
pytestmark = [
    pytest.mark.skipif(not BOOK.is_file(), reason="no PDF: run `make pdf`"),
    pytest.mark.skipif(
        shutil.which("pdftotext") is None, reason="poppler-utils missing (`make pdf` installs it)"
    ),
]


def chapters() -> list[tuple[str, str]]:
    """(notebook, title) of each numbered chapter, in the order of _toc.yml."""
    out = []
    for page in toc.pages():
        if page.startswith("chapters/"):
            nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
            for cell in nb["cells"]:
                match = re.search(r"^#\s+(.+)$", "".join(cell["source"]), re.M)
                if cell["cell_type"] == "markdown" and match:
                    out.append((page, match.group(1).strip()))
                    break
    return out


def figure_outputs() -> int:
    count = 0
    for page, _ in chapters():
        nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                count += sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
    return count


def read(path: Path) -> tuple[list[str], int]:
    """The text of each page and the number of distinct images in the document."""
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"], check=True, capture_output=True, text=True
    ).stdout
    texts = text.split("\f")
    if texts and not texts[-1].strip():
        texts.pop()
    listing = subprocess.run(
        ["pdfimages", "-list", str(path)], check=True, capture_output=True, text=True
    ).stdout.splitlines()[2:]
    images = {
        (row.split()[10], row.split()[11])
        for row in listing
        if len(row.split()) > 11 and row.split()[2] == "image"
    }
    return texts, len(images)


@pytest.fixture(scope="module")
def book():
    return read(BOOK)


def _flat(text: str) -> str:
    return " ".join(text.translate(QUOTES).split())


def test_every_chapter_in_order_with_its_number(book):
    texts, _ = book
    assert len(texts) >= 100, f"{len(texts)} pages: the book is not all there"
    flat = [_flat(t) for t in texts]
    last = -1
    for number, (page, title) in enumerate(chapters(), start=1):
        heading = f"{number}. {_flat(title)}"
        found = [i for i, t in enumerate(flat) if heading[:40] in t and i > last]
        assert found, f"chapter title {heading!r} ({page}) not found after page {last + 1}"
        last = found[0]


def test_no_raw_tex_and_figures_present(book):
    texts, images = book
    raw = [(i + 1, m.group()) for i, t in enumerate(texts) for m in RAW_TEX.finditer(t)]
    assert not raw, f"untypeset TeX in the printed text (page, text): {raw[:5]}"
    assert images >= figure_outputs(), (
        f"{images} images in the PDF, {figure_outputs()} figure outputs in the chapters"
    )


def test_solutions_in_the_book_not_in_the_student_edition(book):
    texts, _ = book
    assert sum(len(SOLUTION.findall(t)) for t in texts) >= 9, "solutions missing from the book"
    if not STUDENT.is_file():
        pytest.skip("no student PDF")
    student, _ = read(STUDENT)
    assert not [i for i, t in enumerate(student) if SOLUTION.search(t)], (
        "the student edition prints solutions"
    )
    assert len(student) < len(texts)
    flat = " ".join(_flat(t) for t in student)
    for number, (_, title) in enumerate(chapters(), start=1):
        assert f"{number}. {_flat(title)}"[:40] in flat, f"student edition lacks {title!r}"
