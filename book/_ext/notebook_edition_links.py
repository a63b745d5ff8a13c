"""Sphinx extension: the launch buttons of a chapter open its notebook edition, not its
source. sphinx-book-theme points the Colab and Binder buttons (and the .ipynb download
button) at the page's source, ``chapters/NAME.ipynb``: MyST that Jupyter and Colab show
as raw code blocks. The edition made for them by ``make notebooks`` lives at
``notebooks/NAME.ipynb``; this extension rewrites the buttons of every page whose source
is in ``chapters/`` (or is a notebook page in ``book/``) to that path, after the theme
has made them. That the file exists is
checked by the tests (tests/editions/test_notebook_edition.py,
tests/book/test_edition_against_book.py), not here: ``make notebooks`` reads the numbering
from this very build, so the build must succeed before a new chapter has its edition.

The download button gets the edition too: the build copies ``notebooks/`` to
``_build/html/notebooks/``.

Configuration (``sphinx.config`` in ``_config.yml``): ``nqf_edition_dir`` (default
``notebooks``) and ``nqf_edition_sources`` (default ``chapters book``: folders whose
notebook pages have an edition, separated by spaces); ``nqf_launch_branch`` (default:
the repository's branch) and ``nqf_drop_launchers`` (hosts whose launch buttons are
left out, separated by spaces), which the book without solutions sets
(``scripts/build_student_book.py``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)


def _rewrite(
    buttons: list[dict[str, Any]],
    old: str,
    new: str,
    download: str,
    branch: tuple[str, str] | None = None,
    drop: tuple[str, ...] = (),
) -> int:
    """Replace ``old`` by ``new`` in the launch URLs (and the download URL), the branch
    ``branch[0]`` by ``branch[1]`` in the URLs of files on GitHub (Colab's), and leave
    out the launch buttons of the hosts in ``drop``; count the launch URLs changed."""
    changed = 0
    for button in list(buttons):
        if button.get("type") == "group":
            changed += _rewrite(button.get("buttons", []), old, new, download, branch, drop)
        elif button.get("type") == "link" and isinstance(button.get("url"), str):
            url = button["url"]
            if button.get("label") == "download-source-button":
                if url.endswith(".ipynb"):
                    button["url"] = download
            elif url.endswith(old) or f"{old}&" in url:
                if any(host in url for host in drop):
                    buttons.remove(button)
                    changed += 1
                    continue
                url = url.replace(old, new)
                if branch is not None:  # GitHub's files (Colab); Binder builds main
                    url = url.replace(f"/blob/{branch[0]}/", f"/blob/{branch[1]}/")
                button["url"] = url
                changed += 1
    return changed


def has_edition(app: Sphinx, pagename: str) -> bool:
    """Whether a page has a notebook edition: a notebook page in one of the folders of
    ``nqf_edition_sources`` (a markdown page has no notebook and no launch buttons)."""
    sources = app.config.nqf_edition_sources.split()
    return (
        any(pagename.startswith(f"{source.strip('/')}/") for source in sources)
        and (Path(app.srcdir) / f"{pagename}.ipynb").is_file()
    )


def point_buttons_at_edition(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """``html-page-context`` handler, run after the theme's (priority 502 > 501)."""
    if not has_edition(app, pagename):
        return
    name = Path(pagename).name + ".ipynb"
    edition = f"{app.config.nqf_edition_dir.strip('/')}/{name}"
    if not (Path(app.srcdir) / edition).is_file():
        LOGGER.info(f"{pagename}: no notebook edition at {edition} yet (run `make notebooks`)")
    depth = pagename.count("/")
    download = "../" * depth + edition
    launch_branch = app.config.nqf_launch_branch
    repository_branch = (app.config.html_theme_options or {}).get("repository_branch", "main")
    changed = _rewrite(
        context.get("header_buttons", []),
        f"{pagename}.ipynb",
        edition,
        download,
        (repository_branch, launch_branch) if launch_branch else None,
        tuple(app.config.nqf_drop_launchers.split()),
    )
    if not changed:
        LOGGER.warning(f"{pagename}: found no launch button to point at {edition}")


def copy_edition(app: Sphinx, exception: Exception | None) -> None:
    """Serve the edition from the built book (for the download button)."""
    if exception is not None or app.builder.format != "html":
        return
    src = Path(app.srcdir) / app.config.nqf_edition_dir
    dest = Path(app.outdir) / app.config.nqf_edition_dir
    if src.is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        for path in src.glob("*.ipynb"):
            shutil.copy2(path, dest / path.name)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("nqf_edition_dir", "notebooks", "html")
    app.add_config_value("nqf_edition_sources", "chapters book", "html")
    app.add_config_value("nqf_launch_branch", "", "html")
    app.add_config_value("nqf_drop_launchers", "", "html")
    app.add_config_value("nqf_student_branch", "", "html")
    app.connect("html-page-context", point_buttons_at_edition, priority=502)
    app.connect("build-finished", copy_edition)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
