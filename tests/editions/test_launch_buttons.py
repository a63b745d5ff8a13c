"""The launch buttons of a notebook page (``book/_ext/notebook_edition_links.py``): pointed
at an edition, on another branch, or left out; the download button at the edition served
by the book. The built books are checked in tests/book."""

from __future__ import annotations

from book._ext.notebook_edition_links import _rewrite

PAGE = "chapters/04_lotka_volterra.ipynb"
COLAB = f"https://colab.research.google.com/github/o/r/blob/main/{PAGE}"
BINDER = f"https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/{PAGE}"


def _buttons():
    return [{"type": "group", "buttons": [
        {"type": "link", "url": COLAB, "label": "colab"},
        {"type": "link", "url": BINDER, "label": "binder"},
    ]}, {"type": "link", "url": f"../_sources/{PAGE}", "label": "download-source-button"}]


def _urls(buttons):
    return [b["url"] for b in buttons[0]["buttons"]] + [buttons[1]["url"]]


def test_the_notebook_edition_on_the_repositorys_branch():
    buttons = _buttons()
    assert _rewrite(buttons, PAGE, "notebooks/04_lotka_volterra.ipynb",
                    "../notebooks/04_lotka_volterra.ipynb") == 2
    assert _urls(buttons) == [
        COLAB.replace(PAGE, "notebooks/04_lotka_volterra.ipynb"),
        BINDER.replace(PAGE, "notebooks/04_lotka_volterra.ipynb"),
        "../notebooks/04_lotka_volterra.ipynb"]


def test_the_student_edition_without_a_published_branch_has_no_colab_button():
    buttons = _buttons()
    _rewrite(buttons, PAGE, "student/04_lotka_volterra.ipynb",
             "../student/04_lotka_volterra.ipynb", drop=("colab.research.google.com",))
    assert _urls(buttons) == [
        BINDER.replace(PAGE, "student/04_lotka_volterra.ipynb"),
        "../student/04_lotka_volterra.ipynb"]


def test_the_student_edition_on_a_published_branch_opens_in_colab():
    """Colab opens the branch's file; Binder builds the image of main, whose
    binder/postBuild writes student/."""
    buttons = _buttons()
    _rewrite(buttons, PAGE, "student/04_lotka_volterra.ipynb",
             "../student/04_lotka_volterra.ipynb", branch=("main", "student"))
    colab, binder, _ = _urls(buttons)
    assert colab.endswith("/blob/student/student/04_lotka_volterra.ipynb")
    assert "/r/main?urlpath=lab/tree/student/04_lotka_volterra.ipynb" in binder
