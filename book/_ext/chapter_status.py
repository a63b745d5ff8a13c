"""Sphinx extension of the course: tables generated from the chapter notebooks at build time.

``{chapter-status}``
    one row per chapter in ``chapters/``: its execution time and the versions of Python and of the
    main packages it was executed with, read from the notebook metadata ``nqf_execution`` that
    ``scripts/execute_chapters.py`` (``make execute``) writes.
``{chapter-exercises}``
    one row per exercise: chapter, label (a link), title, difficulty, kind, the self-check label if
    the exercise has one, and the suggested use (:func:`suggested_use`).
``{site-report}``
    one row per chapter page: the bytes it loads by its ``load`` event, its requests, load
    time, layout shift, Tab presses to its explorer and Lighthouse scores, as recorded in
    :data:`SITE_REPORT` by ``make site-report`` (``tests/browser/page_metrics.py``).
``{chapter-workload}``
    one row per chapter: words of prose, proofs and lines of code a student works
    through (the solutions left out), the exercises, and the study time estimated from
    them (:func:`workload`, rates in :data:`READING_RATES` and
    :data:`EXERCISE_MINUTES`).

Both are re-rendered whenever a notebook changes (the notebooks are noted as dependencies), so the
pages can never disagree with the chapters.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from scripts.notebook_edition import exercises as grammar
from scripts.notebook_edition.exercises import source

PACKAGES = ["torch", "numpy", "matplotlib", "ipywidgets", "nqf_mini"]


def chapter_paths(srcdir: Path) -> list[Path]:
    return sorted((srcdir / "chapters").glob("*.ipynb"))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def title(nb: dict, fallback: str) -> str:
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            match = re.search(r"^#\s+(.+)$", source(cell), re.M)
            if match:
                return match.group(1).strip()
    return fallback


def suggested_use(stars: int, kind: str) -> str:
    """Homework or in class: the rule the instructor page explains."""
    if kind == "exploration":
        return "in class"  # widgets and predictions: best discussed together
    if kind == "coding":
        return "homework"  # graded by its self-check
    return "in class" if stars <= 1 else "homework"


def exercises(nb: dict) -> list[dict]:
    """The exercises of a notebook (:func:`scripts.notebook_edition.exercises.exercises`)
    as rows: label, title, stars, kind, self-checks and the suggested use."""
    return [
        {
            "label": ex.label,
            "title": ex.title,
            "stars": ex.stars,
            "kind": ex.kind,
            "checks": ex.checks,
            "use": suggested_use(ex.stars, ex.kind),
        }
        for ex in grammar.exercises(nb)
    ]


#: Estimated study rates: words of mathematical prose read (and understood) per minute,
#: minutes to follow one proof, lines of code read and run per minute. Assumptions
#: stated on the instructor page, not measurements of students.
READING_RATES = {"words_per_minute": 80, "minutes_per_proof": 5, "code_lines_per_minute": 15}
#: Estimated minutes for an exercise, by kind and number of stars.
EXERCISE_MINUTES = {"derivation": (10, 25, 45), "coding": (15, 30, 45), "exploration": (10, 20, 30)}
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$", re.S)
_FENCE_LINE = re.compile(r"^(`{3,}|:{3,})")


def workload(nb: dict) -> dict:
    """Words, proofs and lines of code outside the solutions, the exercises, and the
    estimated minutes: lecture (reading, proofs, code) and exercises
    (:data:`EXERCISE_MINUTES`)."""
    words = proofs = code = 0
    in_region = False
    for _, cell, in_solution in grammar.cells_with_regions(nb):
        text = source(cell)
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "markdown":
            prose, in_region = grammar.strip_solutions(text, in_region)
            proofs += prose.count("{prf:proof}")
            prose = "\n".join(
                line
                for line in _MATH.sub(" ", prose).splitlines()
                if not _FENCE_LINE.match(line) and not line.startswith(":")
            )
            words += len(re.findall(r"[A-Za-z][A-Za-z'\-]*", prose))
        elif not in_solution and "hide-cell" not in tags:
            code += sum(
                1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#")
            )
    rates = READING_RATES
    lecture = (
        words / rates["words_per_minute"]
        + proofs * rates["minutes_per_proof"]
        + code / rates["code_lines_per_minute"]
    )
    found = exercises(nb)
    practice = sum(
        EXERCISE_MINUTES.get(ex["kind"], (0, 0, 0))[max(ex["stars"], 1) - 1] for ex in found
    )
    return {
        "words": words,
        "proofs": proofs,
        "code": code,
        "exercises": len(found),
        "lecture": lecture,
        "practice": practice,
    }


def _minutes(value: float) -> str:
    value = 5 * round(value / 5)
    return f"{value // 60} h {value % 60:02d}" if value >= 60 else f"{value} min"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


class _Generated(SphinxDirective):
    has_content = False

    def notebooks(self) -> list[tuple[Path, dict]]:
        paths = chapter_paths(Path(self.env.srcdir))
        for path in paths:
            self.env.note_dependency(str(path))
        return [(path, load(path)) for path in paths]

    def render(self, lines: list[str]) -> list[nodes.Node]:
        container = nodes.container(classes=["nqf-generated"])
        self.state.nested_parse(
            StringList(lines, source="chapter_status"), self.content_offset, container
        )
        return [container]

    def link(self, path: Path, nb: dict, number: int) -> str:
        return f"{number}. {{doc}}`{title(nb, path.stem)} </chapters/{path.stem}>`"


class ChapterStatus(_Generated):
    """``{chapter-status}``: execution time and versions of every chapter."""

    def run(self) -> list[nodes.Node]:
        rows, total = [], 0.0
        for k, (path, nb) in enumerate(self.notebooks(), start=1):
            info = nb.get("metadata", {}).get("nqf_execution")
            if not info:
                rows.append(
                    [self.link(path, nb, k), "not recorded (run `make execute`)"]
                    + [""] * (2 + len(PACKAGES))
                )
                continue
            total += float(info["seconds"])
            packages = info.get("packages", {})
            rows.append(
                [
                    self.link(path, nb, k),
                    f"{float(info['seconds']):.1f}",
                    info["date"],
                    info["python"],
                ]
                + [packages.get(p, "") for p in PACKAGES]
            )
        rows.append(["**all chapters**", f"**{total:.1f}**"] + [""] * (2 + len(PACKAGES)))
        return self.render(
            _table(["chapter", "execution time (s)", "executed on", "python"] + PACKAGES, rows)
        )


class ChapterExercises(_Generated):
    """``{chapter-exercises}``: every exercise, its difficulty, self-check and suggested use."""

    def run(self) -> list[nodes.Node]:
        rows = []
        for k, (_, nb) in enumerate(self.notebooks(), start=1):
            for ex in exercises(nb):
                checks = (
                    ", ".join(f"`{c}`" for c in ex["checks"]) or "(none: discuss or grade by hand)"
                )
                rows.append(
                    [
                        str(k),
                        f"{{ref}}`{ex['label']}` (`{ex['label']}`)",
                        ex["title"],
                        "★" * ex["stars"] + "☆" * (3 - ex["stars"]),
                        ex["kind"],
                        checks,
                        ex["use"],
                    ]
                )
        return self.render(
            _table(
                [
                    "chapter",
                    "exercise (label)",
                    "title",
                    "difficulty",
                    "kind",
                    "self-check",
                    "suggested use",
                ],
                rows,
            )
        )


class ChapterWorkload(_Generated):
    """``{chapter-workload}``: what each chapter asks of a student, and the time."""

    def run(self) -> list[nodes.Node]:
        rows, total = [], {"lecture": 0.0, "practice": 0.0}
        for k, (path, nb) in enumerate(self.notebooks(), start=1):
            w = workload(nb)
            total["lecture"] += w["lecture"]
            total["practice"] += w["practice"]
            rows.append(
                [
                    self.link(path, nb, k),
                    f"{w['words']:,}",
                    str(w["proofs"]),
                    str(w["code"]),
                    str(w["exercises"]),
                    _minutes(w["lecture"]),
                    _minutes(w["practice"]),
                ]
            )
        rows.append(
            [
                "**all chapters**",
                "",
                "",
                "",
                "",
                f"**{_minutes(total['lecture'])}**",
                f"**{_minutes(total['practice'])}**",
            ]
        )
        header = [
            "chapter",
            "words",
            "proofs",
            "lines of code",
            "exercises",
            "lecture (est.)",
            "all exercises (est.)",
        ]
        return self.render(_table(header, rows))


#: Where ``make site-report`` records page weight, load time, Tab presses and Lighthouse.
SITE_REPORT = "book/site_report.json"


class SiteReport(_Generated):
    """``{site-report}``: what each chapter page costs a reader (``make site-report``)."""

    def run(self) -> list[nodes.Node]:
        path = Path(self.env.srcdir) / SITE_REPORT
        self.env.note_dependency(str(path))
        if not path.is_file():
            return self.render(["Not recorded yet: run `make site-report`."])
        report = json.loads(path.read_text(encoding="utf-8"))
        rows = []
        for k, (nb_path, nb) in enumerate(self.notebooks(), start=1):
            m = report.get(f"chapters/{nb_path.stem}")
            if not m:
                continue
            lh = m.get("lighthouse") or {}
            scores = " / ".join(
                f"{round(100 * lh[c])}" if c in lh else "–"
                for c in ("performance", "accessibility", "best-practices", "seo")
            )
            tabs = m.get("tabs_to_explorer")
            rows.append(
                [
                    self.link(nb_path, nb, k),
                    f"{m['bytes'] / 2**20:.2f}",
                    str(m["requests"]),
                    f"{m['load_s']:.2f}",
                    f"{m['cls']:.3f}",
                    "–" if tabs is None else str(tabs),
                    scores,
                ]
            )
        header = [
            "chapter",
            "MiB by load",
            "requests",
            "load (s)",
            "layout shift",
            "Tab presses to the explorer",
            "Lighthouse perf. / a11y / b.p. / SEO",
        ]
        return self.render(_table(header, rows))


def setup(app):
    app.add_directive("site-report", SiteReport)
    app.add_directive("chapter-status", ChapterStatus)
    app.add_directive("chapter-exercises", ChapterExercises)
    app.add_directive("chapter-workload", ChapterWorkload)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
