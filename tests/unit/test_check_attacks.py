"""The self-checks cannot be passed without solving: one test per attack a student might
try.

The attacks come from a teacher's trial of the course (the issue "Coursework a teacher
can grade"): reading the expected value from the check's frame, handing in the package
function that computes the answer, an object whose ``__eq__`` is always true, feedback
that gives the answer away, and float32 answers that got confusing messages.
Monkeypatching ``check.exercise`` can only fool the student's own kernel;
``tests/grading/test_grade.py`` shows that the grader ignores it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import math
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import numpy as np
import torch

import nqf_mini as nqf
from nqf_mini.architectures import make_architecture
from nqf_mini.course.answers import LocalAnswer
from nqf_mini.course.check import CHECKS, exercise, judge

ROOT = Path(__file__).resolve().parents[2]


# --- 1. the expected value read from the caller's frame -------------------------------


def _from_caller(*args):
    """The attack of the issue: the check computed `truth` before calling the answer."""
    return inspect.currentframe().f_back.f_locals["truth"]


def _from_any_frame(*args):
    """A thorough version: every frame of every thread, any local that looks like the
    answer."""
    for frame in sys._current_frames().values():
        while frame is not None:
            for name in ("truth", "expected", "want", "right"):
                if name in frame.f_locals and not callable(frame.f_locals[name]):
                    return frame.f_locals[name]
            frame = frame.f_back
    return torch.zeros(())


def _oracle_from_frames(x, phi1):
    """Find the check's frame in the main thread and call its oracle on the current
    input."""
    for frame in sys._current_frames().values():
        while frame is not None:
            oracle = frame.f_globals.get("structure_matrix")
            if oracle is not None and "arch" in frame.f_locals:
                arch = frame.f_locals["arch"]
                return oracle(arch.f, x, arch.p)
            if oracle is not None and frame.f_code.co_name.startswith("_ch1"):
                arch = make_architecture("mlp", n_in=x.shape[0], bias="trainable")
                return phi1 * oracle(arch.f, x, arch.p)
            frame = frame.f_back
    return torch.zeros(x.shape[0] + 2, x.shape[0] + 2, dtype=x.dtype)


@pytest.mark.parametrize(
    "label", ["ch1.mlp_bias_A", "ch4.lv_rhs", "ch5.half_time", "ch7.best_linear_loss"]
)
@pytest.mark.parametrize("attack", [_from_caller, _from_any_frame], ids=["f_back", "all_frames"])
def test_the_expected_value_is_not_in_any_frame(label, attack):
    result = exercise(label, attack, quiet=True)
    assert not result.ok, result.message


def test_calling_the_checks_oracle_through_the_frames_is_refused():
    result = exercise("ch1.mlp_bias_A", _oracle_from_frames, quiet=True)
    assert not result.ok and "your answer calls nqf_mini" in result.message, result.message


# --- 2. the package's own functions as answers ----------------------------------------


def _bias_by_autograd(x, phi1):
    def f(W, x):  # the student's own module, A by autograd
        return W[-1] @ torch.tanh(W[:-2].T @ x + W[-2])

    return phi1 * nqf.structure_matrix(f, x, x.shape[0] + 2)


def _window_by_package(alpha2, eps, K):
    zeta = torch.arange(1, K + 1, dtype=torch.float64) ** -alpha2
    return nqf.ignition_window(torch.tensor(eps, dtype=torch.float64), zeta)


EXPORTED = {
    "ch4.nnls_end_state": (nqf.nnls_end_state, "nnls_end_state"),
    "ch5.half_time": (nqf.logistic_ignition_time, "logistic_ignition_time"),
    "ch6.exponent": (nqf.feature_exponent, "feature_exponent"),
    "ch7.ntk_regime": (nqf.ntk_regime, "ntk_regime"),
    "ch6.fit_window": (_window_by_package, "ignition_window"),
    "ch1.mlp_bias_A": (_bias_by_autograd, "structure_matrix"),
}


@pytest.mark.parametrize("label", sorted(EXPORTED))
def test_the_package_function_is_not_an_answer(label):
    answer, name = EXPORTED[label]
    for given in (answer, functools.partial(answer), lambda *a: answer(*a)):
        result = exercise(label, given, quiet=True)
        assert not result.ok and name in result.message, (label, result.message)


def test_the_architectures_closed_form_and_the_checks_oracles_are_refused():
    def by_closed_form(x, phi1):
        return make_architecture("mlp", n_in=x.shape[0], bias="trainable").A(x) * phi1

    def by_check_oracle(b, C):
        from nqf_mini.course.checks_ch4 import _nnls_by_supports

        return _nnls_by_supports(b, C)

    assert "architectures" in exercise("ch1.mlp_bias_A", by_closed_form, quiet=True).message
    assert (
        "_nnls_by_supports" in exercise("ch4.nnls_end_state", by_check_oracle, quiet=True).message
    )


def test_switching_the_watch_off_is_refused():
    def sneaky(b, C):
        sys.setprofile(None)
        return nqf.nnls_end_state(b, C)

    result = exercise("ch4.nnls_end_state", sneaky, quiet=True)
    assert not result.ok and "profiler" in result.message


def test_the_allowed_helper_is_allowed_and_the_science_namespace_has_no_coursework():
    assert exercise(
        "ch1.mlp_bias_A",
        lambda x, p1: p1 * nqf.offdiag(torch.cat([x, x.new_ones(1)])),
        quiet=True,
    ).ok
    code = (
        "import sys, nqf_mini; print(any(m.startswith('nqf_mini.course') or m == "
        "'matplotlib' for m in sys.modules), hasattr(nqf_mini, 'check'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# --- 3. objects that claim to equal anything ------------------------------------------


class Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


class AnythingStr(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


@pytest.mark.parametrize(
    "label, answer",
    [
        (
            "ch1.remainder_orders",
            {
                "sin": Anything(),
                "gelu": Anything(),
                "softplus0": Anything(),
                "linear": Anything(),
            },
        ),
        ("ch1.remainder_orders", Anything()),
        ("ch7.ntk_regime", lambda a, b: Anything()),
        ("ch7.ntk_regime", lambda a, b: AnythingStr("lazy")),
        (
            "ch2.commuting",
            {
                k: Anything()
                for k in [
                    "MLP, 1-D input",
                    "MLP, 3-D input",
                    "CNN, circular, global pooling, 1 channel",
                    "CNN, circular, global pooling, 2 channels",
                    "multi-head attention",
                    "phase retrieval",
                    "matrix completion, entries in different rows and columns",
                ]
            },
        ),
        (
            "ch7.remainder_exponent",
            {k: Anything() for k in ["tanh", "sin", "softplus0", "silu", "relu"]},
        ),
        ("ch4.extinction_threshold", Anything()),
    ],
)
def test_an_object_equal_to_everything_is_rejected(label, answer):
    result = exercise(label, answer, quiet=True)
    assert not result.ok and ("expected" in result.message or "should be" in result.message), (
        result.message
    )


def test_a_string_subclass_that_equals_everything_is_read_as_its_text():
    # plain() rebuilds a str subclass only when it is exactly str; a subclass is
    # rejected
    result = exercise("ch7.ntk_regime", lambda a, b: AnythingStr("feature"), quiet=True)
    assert not result.ok


# --- 5. feedback that gives the answer away -------------------------------------------


def test_feedback_never_shows_the_expected_value():
    """A wrong function answer is told what is wrong, never the value it should have
    returned."""
    window = exercise("ch6.fit_window", lambda a2, eps, K: (1.0, 2.0), quiet=True).message
    t10 = math.log(1 / 1e-5 - 1) * 10**0.8
    assert f"{t10:.4g}" not in window and "expected (" not in window
    half = exercise("ch5.half_time", lambda z0, zs, zeta: z0 * 0 + 1.0, quiet=True).message
    assert f"{math.log(1.5 / 0.2 - 1) / 2:.4g}" not in half and "expected" not in half
    loss = exercise("ch7.best_linear_loss", lambda X, y: 0.1, quiet=True).message
    assert "expected" not in loss
    exponent = exercise("ch6.exponent", lambda a1, a2: 1.0, quiet=True).message
    assert "1.25" not in exponent
    rhs = exercise("ch4.lv_rhs", lambda z, b, C: z + 1, quiet=True).message
    assert "4 z (b - C z)" not in rhs


# --- float32 answers ------------------------------------------------------------------


def test_float32_answers_are_told_so():
    half = exercise(
        "ch5.half_time",
        lambda z0, zs, zeta: (torch.log(zs / z0 - 1) / zeta).float(),
        quiet=True,
    )

    def loss32(X, y):
        X, y = X.float(), y.float()
        beta = torch.linalg.lstsq(X, y[:, None]).solution[:, 0]
        return float((X @ beta - y).square().mean() / 2)

    loss = exercise("ch7.best_linear_loss", loss32, quiet=True)
    bias = exercise(
        "ch1.mlp_bias_A",
        lambda x, p1: (p1 * nqf.offdiag(torch.cat([x, x.new_ones(1)]))).float(),
        quiet=True,
    )
    rhs = exercise("ch4.lv_rhs", lambda z, b, C: (4 * z * (b - C @ z)).float(), quiet=True)
    for result in (half, loss, bias, rhs):
        assert not result.ok and "float32" in result.message, result.message
        assert "rows/columns" not in result.message and "expected" not in result.message


def test_a_float32_answer_that_meets_the_tolerance_by_luck_is_told_so():
    """A float32 value within 1e-8 of the truth (its rounding errors happened to be
    small) is flagged; a float64 value, a round number and an exact value are not."""
    from nqf_mini.course.feedback import compare

    lucky = float(np.float32(0.3))
    truth = lucky + 1e-9  # the float32 value is 1e-9 from it: inside the 1e-8 tolerance
    flagged = compare(lucky, truth, "the loss", 1e-8)
    assert flagged is not None and "float32" in flagged.message
    tensor = compare(torch.tensor(lucky, dtype=torch.float32), truth, "the loss", 1e-8)
    assert tensor is not None and "float32" in tensor.message
    assert compare(truth + 5e-9, truth, "the loss", 1e-8) is None  # float64
    assert compare(0.5, 0.5 - 2**-54, "the loss", 1e-8) is None  # a round number
    assert compare(lucky, lucky, "the loss", 1e-8) is None  # exact
    assert compare(lucky, truth, "the loss", 1e-6) is None  # float32 resolves 1e-6


def test_diagnose_matrix_grammar():
    from nqf_mini.course.feedback import diagnose_matrix

    A = nqf.offdiag(torch.tensor([1.0, 2.0], dtype=torch.float64))
    assert diagnose_matrix(-A, A, "A").message == "A has the wrong sign"
    assert "is too large by a factor of 2" in diagnose_matrix(2 * A, A, "A").message


# --- the instructor's solutions pass the grader's hidden cases ------------------------


def _solution_functions() -> dict[str, object]:
    """label -> the function answer defined in the chapter's solution cell (function
    labels)."""
    found = {}
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if "solution" not in cell.metadata.get("tags", []) or cell.cell_type != "code":
                continue
            tree = ast.parse(cell.source)
            defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
            if not defs:
                continue
            namespace = {
                "torch": torch,
                "nqf": nqf,
                "math": math,
                "itertools": itertools,
                "np": np,
            }
            exec(
                compile(ast.Module(body=defs, type_ignores=[]), str(path), "exec"),
                namespace,
            )
            for call in ast.walk(tree):
                if isinstance(call, ast.Call) and ast.unparse(call.func).endswith("exercise"):
                    label = call.args[0].value
                    found[label] = eval(ast.unparse(call.args[1]), namespace)
    return found


SOLUTIONS = _solution_functions()


def test_every_function_check_has_a_chapter_solution():
    functions = {
        "ch1.mlp_bias_A",
        "ch2.biased_attention_A",
        "ch2.gcn",
        "ch3.m_step",
        "ch4.lv_rhs",
        "ch4.nnls_end_state",
        "ch5.half_time",
        "ch6.exponent",
        "ch6.fit_window",
        "ch7.best_linear_loss",
        "ch7.ntk_regime",
    }
    assert functions <= set(SOLUTIONS) and functions <= set(CHECKS)


@pytest.mark.parametrize("label", sorted(SOLUTIONS))
def test_the_chapter_solution_passes_hidden_cases(label):
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # as the chapters' setup cells do
    try:
        for seed in range(8):
            result = judge(label, LocalAnswer(SOLUTIONS[label]), hidden=seed)
            assert result.ok, (label, seed, result.message)
    finally:
        torch.set_default_dtype(default)
