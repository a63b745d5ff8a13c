"""Every public name of nqf_mini, every public method of the architectures and of the results
that have methods has a Google-style docstring (Args / Returns / Raises, napoleon's reading) that
documents each parameter, says what it returns, names the chapter that derives it, and is valid
reStructuredText as the API page of the book renders it (Sphinx's napoleon and autodoc, then
``book/_ext/api_links.literal_maths``, which keeps plain-text maths such as ``|x|`` literal)."""

from __future__ import annotations

import inspect
import re

import pytest

import nqf_mini as nqf
from nqf_mini.architectures import ARCHITECTURES, patch_matrix

napoleon = pytest.importorskip("sphinx.ext.napoleon")
docutils_core = pytest.importorskip("docutils.core")
from docutils.parsers.rst import roles  # noqa: E402
from sphinx.ext.napoleon.docstring import GoogleDocstring  # noqa: E402

from book._ext.api_links import literal_maths  # noqa: E402
from nqf_mini.quadratic_form import QuadraticExpansion  # noqa: E402
from nqf_mini.staircase import DataModes, Staircase  # noqa: E402

METHODS = ("f", "A", "g", "B", "f0", "expansion", "batched_forms", "batched_f", "predictor",
           "sample_input", "check_input", "check_weights")
for _role in ("func", "class", "meth", "mod", "data", "attr", "exc"):
    roles.register_generic_role(_role, __import__("docutils").nodes.literal)


# Results whose methods a reader calls (the chapters do).
RESULT_METHODS = [(QuadraticExpansion, "predict"), (DataModes, "fractions"),
                  (Staircase, "fractions"), (Staircase, "loss")]
def _objects():
    out = [(name, getattr(nqf, name)) for name in nqf.__all__
           if not (inspect.isclass(getattr(nqf, name))
                   and issubclass(getattr(nqf, name), BaseException))]
    out.append(("patch_matrix", patch_matrix))
    for key, cls in ARCHITECTURES.items():
        out.append((key, cls))
        out += [(f"{key}.{m}", getattr(cls, m)) for m in METHODS]
    out += [(f"{cls.__name__}.{m}", getattr(cls, m)) for cls, m in RESULT_METHODS]
    return out


OBJECTS = _objects()


def _rst(obj) -> str:
    config = napoleon.Config(napoleon_use_param=True, napoleon_use_rtype=True)
    what = "class" if inspect.isclass(obj) else "function"
    lines = GoogleDocstring(inspect.getdoc(obj) or "", config, what=what).lines()
    return "\n".join(literal_maths(lines))


@pytest.mark.parametrize("name, obj", [pytest.param(n, o, id=n) for n, o in OBJECTS])
def test_docstring_documents_every_parameter_and_the_chapter(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert "chapter" in doc.lower(), f"{name}: no chapter named"
    if inspect.isclass(obj):
        return
    rst = _rst(obj)
    sig = inspect.signature(obj)
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        assert re.search(rf":param [^:]*\b{p.name}\b[^:]*:", rst), \
            f"{name}: `{p.name}` undocumented"
    if sig.return_annotation not in (None, "None", inspect.Signature.empty):
        assert ":returns:" in rst, f"{name}: no Returns section"


@pytest.mark.parametrize("name, obj", OBJECTS, ids=[n for n, _ in OBJECTS])
def test_docstring_is_valid_restructuredtext(name, obj):
    rst = _rst(obj)
    settings = {"report_level": 2, "halt_level": 2, "warning_stream": False}
    docutils_core.publish_doctree(rst, settings_overrides=settings)
