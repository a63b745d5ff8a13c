"""The input contract of the package, as data: one valid call per public callable, and the
kind of every argument, which says which inputs it must refuse and which it must accept.

Used by ``tests/unit/test_input_contract.py`` (every bad input raises ``ValueError`` or
``TypeError`` naming the argument at fault; every accepted variant gives the result of the
valid call) and by ``scripts/fuzz_contract.py`` (the same calls, each in a worker process with
a time and memory limit, counted by outcome).

A case is ``(name, make_kwargs, kinds)``. ``name`` is a public name of ``nqf_mini``,
``module:function`` inside the package, ``arch.NAME`` (the constructor of a registered
architecture), ``arch.NAME.method`` (a method of a small instance of it, see :data:`ARCHS`),
``architectures:patch_matrix`` or ``NAME->method`` (a method of what the first case of the
public function ``NAME`` returns, e.g. ``predict_staircase->loss``). ``make_kwargs()``
returns fresh valid keyword arguments; ``kinds`` maps an argument to its kind. A leading
``?`` marks an optional argument (None is legal there); tensor kinds take flags after a slash:

* ``"T"``: a real tensor. Refused: None, NaN, inf, complex, bool, a string, a dict, an
  empty tensor, an extra dimension, a tensor on the ``meta`` device (a device the others are
  not on), and one more entry along the last dimension (a shape that no longer matches the
  other arguments). Accepted with the same result: a list, a NumPy array, a tensor that
  requires grad, a non-contiguous tensor; accepted and finite: float32 and float16 values.
  Refused too: one dimension less (the first entry), unless the flag ``/lower`` says a lower
  rank is legal (a scalar time, a vector where a matrix of one column is meant). Flags:
  ``/inf`` (inf is meaningful), ``/batch`` (leading batch dimensions are allowed), ``/free``
  (the last dimension is not tied to another argument), ``/rows`` (the first dimension is
  the tied one, e.g. the p rows of W (p, d)), ``/any`` (any shape that broadcasts).
* ``"X"``: the input of an architecture, a tensor or a tuple of tensors (each element gets the
  tensor mutations, and the tuple loses an element); ``"Xidx"``: an index pair.
* ``"pos"`` (finite, > 0), ``"real"``, ``"nonneg"``, ``"frac"`` (in (0, 1)), ``"frac0"``
  (in [0, 1)), ``"unit"`` (in [0, 1]).
* ``"int"``: a size >= 1 (10**12 must be refused before anything is allocated); ``"int0"``:
  a size >= 0; ``"steps"``: an iteration count (10**12 must be refused at once, not run);
  ``"count"``: an integer >= 1 whose size costs nothing (10**12 is legal); ``"seed"``.
* ``"choice"``, ``"act"`` (an activation name), ``"bool"``, ``"fn"`` (a callable),
  ``"module"`` (a module f(W, x): also refused when it returns a vector or NaN, or takes
  one argument), ``"dtype"``, ``"device"``, ``"obj"`` (an object of the package, e.g. a
  teacher), ``"sizes"`` (a sequence of sizes), ``"betas"`` (a pair in (0, 1)),
  ``"record"`` (a sequence of steps to record, within ``steps``), ``"axis"`` (an axis or a
  tuple of axes of an array), ``"str"`` (a string).
"""

from __future__ import annotations

import importlib
import math
import signal
import warnings
from dataclasses import fields, is_dataclass
from typing import Any
from collections.abc import Callable

import numpy as np
import torch

import nqf_mini as nqf

Case = tuple[str, Callable[[], dict[str, Any]], dict[str, str]]
HUGE = 10**12
TIME_LIMIT_S = 20  # a call still running after this long counts as a hang


def _t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _g(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _sym(seed: int, n: int, p: int) -> torch.Tensor:
    S = _g(seed, n, p, p)
    return (S + S.transpose(1, 2)) / 2


def _spd(seed: int, K: int) -> torch.Tensor:
    a = _g(seed, 3 * K, K)
    return a.T @ a / (3 * K)


def _commuting(n: int = 6, p: int = 3) -> torch.Tensor:
    E = torch.linalg.qr(_g(3, p, p))[0]
    return E @ torch.diag_embed(_g(4, n, p)) @ E.T


def _rank_one_data() -> dict[str, Any]:
    return dict(n=4, gamma1=1.0, gamma2=1.0, p=6, seed=0)


def _samples():
    return resolve("orthonormal_samples")(**_rank_one_data())


# --- architectures: a small instance of each, and its methods ------------------------------------

ARCHS: dict[str, dict[str, Any]] = {
    "mlp": dict(n_in=3, phi="tanh"),
    "mlp_bias": dict(n_in=3, phi="sigmoid", bias="trainable"),
    "cnn": dict(c_in=2, length=6, k=3),
    "attention": dict(n_in=3, n_tokens=4, h=2, h_v=2),
    "qk_attention": dict(n_in=3, n_tokens=4, h=2, n_heads=2),
    "moe": dict(n_in=3, gate="softmax", n_experts=3),
    "phase_retrieval": dict(n_in=4),
    "symmetric_sensing": dict(n=4),
    "asymmetric_sensing": dict(m=3, n=4),
    "matrix_completion": dict(m=3, n=4),
    "word2vec": dict(m=3, n=4),
    "deep_linear": dict(n_in=3, w3=(1.0, -0.5)),
}


def arch(key: str):
    """The instance ``key`` of :data:`ARCHS` (``mlp_bias`` is an MLP with other options)."""
    name = "mlp" if key == "mlp_bias" else key
    return nqf.make_architecture(name, **ARCHS[key])


def _W(key: str, d: int = 3, seed: int = 5) -> torch.Tensor:
    return 0.3 * _g(seed, arch(key).p, d)


def _x(key: str, seed: int = 1) -> Any:
    return arch(key).sample_input(seed)


def _arch_method_cases() -> list[Case]:
    out: list[Case] = []
    for key in ARCHS:
        xk = "Xidx" if key == "matrix_completion" else "X"
        out.append(
            (f"arch.{key}.f", lambda k=key: dict(W=_W(k), x=_x(k)), {"W": "T/rows", "x": xk})
        )
        for method in ("A", "g", "B", "f0", "expansion"):
            out.append((f"arch.{key}.{method}", lambda k=key: dict(x=_x(k)), {"x": xk}))
        out.append((f"arch.{key}.sample_input", lambda: dict(seed=3), {"seed": "seed"}))
    out += [
        ("arch.cnn.patches", lambda: dict(x=_x("cnn")), {"x": "X"}),
        ("arch.attention.heads", lambda: dict(W=_W("attention")), {"W": "T/rows"}),
        (
            "arch.attention.quartic_term",
            lambda: dict(W=_W("attention"), x=_x("attention")),
            {"W": "T/rows", "x": "X"},
        ),
        ("arch.qk_attention.label_covariance", lambda: dict(x=_x("qk_attention")), {"x": "X"}),
        (
            "arch.asymmetric_sensing.factors",
            lambda: dict(W=_W("asymmetric_sensing")),
            {"W": "T/rows"},
        ),
        (
            "architectures:patch_matrix",
            lambda: dict(x=_g(0, 2, 7), k=3, padding="valid"),
            {"x": "T/free", "k": "int", "padding": "choice"},
        ),
    ]
    return out


ARCH_CONSTRUCTORS: list[Case] = [
    (
        "arch.mlp",
        lambda: dict(n_in=3, phi="tanh", bias="frozen", b0=0.5),
        {"n_in": "count", "phi": "act", "bias": "choice", "b0": "real"},
    ),
    (
        "arch.cnn",
        lambda: dict(c_in=2, length=6, k=3, padding="valid", readout="global", phi="tanh"),
        {
            "c_in": "count",
            "length": "count",
            "k": "count",
            "padding": "choice",
            "readout": "choice",
            "phi": "act",
        },
    ),
    (
        "arch.attention",
        lambda: dict(n_in=3, n_tokens=4, h=2, h_v=2),
        {"n_in": "count", "n_tokens": "count", "h": "count", "h_v": "count"},
    ),
    (
        "arch.qk_attention",
        lambda: dict(n_in=3, n_tokens=4, h=2, n_heads=2),
        {"n_in": "count", "n_tokens": "count", "h": "count", "n_heads": "count"},
    ),
    (
        "arch.moe",
        lambda: dict(n_in=3, gate="tanh", n_experts=3),
        {"n_in": "count", "gate": "choice", "n_experts": "count"},
    ),
    ("arch.phase_retrieval", lambda: dict(n_in=4), {"n_in": "count"}),
    ("arch.symmetric_sensing", lambda: dict(n=4), {"n": "count"}),
    ("arch.asymmetric_sensing", lambda: dict(m=3, n=4), {"m": "count", "n": "count"}),
    ("arch.matrix_completion", lambda: dict(m=3, n=4), {"m": "count", "n": "count"}),
    ("arch.word2vec", lambda: dict(m=3, n=4), {"m": "count", "n": "count"}),
    ("arch.deep_linear", lambda: dict(n_in=3, w3=(1.0, -0.5)), {"n_in": "count", "w3": "T/free"}),
]


def resolve(name: str) -> Callable[..., Any] | None:
    """The callable a case names (see the module docstring); None when the package lacks it."""
    if name.startswith("arch."):
        parts = name.split(".")
        from nqf_mini.architectures import ARCHITECTURES

        if len(parts) == 2:
            cls = ARCHITECTURES.get(parts[1])
            return None if cls is None else (lambda **kw: cls(**kw))
        return getattr(arch(parts[1]), parts[2], None)
    if "->" in name:
        maker, method = name.split("->")
        make = next(c[1] for c in CASES if c[0] == maker)
        fn = resolve(maker)
        return None if fn is None else getattr(fn(**make()), method, None)
    if ":" in name:
        module, attr = name.split(":")
        try:
            return getattr(importlib.import_module(f"nqf_mini.{module}"), attr, None)
        except ImportError:
            return None
    return getattr(nqf, name, None)


def _train_module_kwargs() -> dict[str, Any]:
    mlp = arch("mlp")
    return dict(
        f=mlp.f,
        xs=_g(0, 6, 3),
        y=_g(1, 6),
        W0=0.1 * _g(2, mlp.p, 3),
        lr=0.05,
        steps=4,
        optimizer="sgd",
        batch_size=None,
        seed=0,
        stacked=False,
        record_every=2,
        record_weights=False,
        record_M=True,
        adam_eps=1e-8,
        adam_betas=(0.9, 0.999),
    )


def _staircase_kwargs() -> dict[str, Any]:
    return dict(
        X=_g(0, 8, 3),
        Y=_g(1, 8, 2),
        U0=0.01 * _g(2, 3, 4),
        V0=0.01 * _g(3, 4, 2),
        lr=0.1,
        activation="tanh",
    )


def _module_f():
    return arch("mlp").f


CASES: list[Case] = (
    [
        # --- throughout ---------------------------------------------------------------------------
        ("generator", lambda: dict(seed=3, name="seed"), {"seed": "seed", "name": "str"}),
        # --- Chapter 1 ----------------------------------------------------------------------------
        (
            "structure_matrix",
            lambda: dict(
                f=_module_f(), x=_g(0, 3), p=4, d=2, dtype=torch.float64, device="cpu", atol=None
            ),
            {
                "f": "module",
                "x": "T",
                "p": "int",
                "d": "int",
                "dtype": "dtype",
                "device": "device",
                "atol": "?pos",
            },
        ),
        (
            "quadratic_expansion",
            lambda: dict(
                f=_module_f(), x=_g(0, 3), p=4, d=2, dtype=torch.float64, device="cpu", atol=None
            ),
            {
                "f": "module",
                "x": "T",
                "p": "int",
                "d": "int",
                "dtype": "dtype",
                "device": "device",
                "atol": "?pos",
            },
        ),
        (
            "structure_matrices",
            lambda: dict(
                f=_module_f(), xs=_g(0, 5, 3), p=4, d=2, dtype=torch.float64, device="cpu"
            ),
            {
                "f": "module",
                "xs": "T",
                "p": "int",
                "d": "int",
                "dtype": "dtype",
                "device": "device",
            },
        ),
        (
            "quadratic_expansion->predict",
            lambda: dict(W=_g(1, 4, 2), drop_linear=True),
            {"W": "T/rows", "drop_linear": "bool"},
        ),
        (
            "nqf_value",
            lambda: dict(M=_sym(1, 1, 4)[0], A=_sym(2, 5, 4), f0=0.5),
            {"M": "T", "A": "T/batch", "f0": "real"},
        ),
        ("offdiag", lambda: dict(Z=_g(0, 3, 2)), {"Z": "T/free/lower"}),
        (
            "permutation_asymmetry",
            lambda: dict(
                f=_module_f(),
                x=_g(0, 3),
                p=4,
                d=5,
                trials=2,
                scale=0.5,
                seed=0,
                dtype=torch.float64,
            ),
            {
                "f": "module",
                "x": "T",
                "p": "int",
                "d": "int",
                "trials": "steps",
                "scale": "pos",
                "seed": "seed",
                "dtype": "dtype",
            },
        ),
        (
            "zgz_violation",
            lambda: dict(
                f=_module_f(),
                x=_g(0, 3),
                p=4,
                d=3,
                trials=2,
                scale=0.5,
                seed=0,
                dtype=torch.float64,
            ),
            {
                "f": "module",
                "x": "T",
                "p": "int",
                "d": "int",
                "trials": "steps",
                "scale": "pos",
                "seed": "seed",
                "dtype": "dtype",
            },
        ),
        (
            "satisfies_zgz",
            lambda: dict(f=_module_f(), x=_g(0, 3), p=4, d=3, tol=1e-10),
            {"f": "module", "x": "T", "p": "int", "d": "int", "tol": "pos"},
        ),
        (
            "remainder_order",
            lambda: dict(
                f=_module_f(),
                x=_g(0, 3),
                W=_g(1, 4, 5),
                scales=[1e-3, 3e-3, 1e-2, 3e-2],
                d=2,
                exact_tol=1e-12,
                drop_linear=False,
                expansion=None,
            ),
            {
                "f": "module",
                "x": "T",
                "W": "T/rows",
                "scales": "T/free",
                "d": "int",
                "exact_tol": "pos",
                "drop_linear": "bool",
                "expansion": "?obj",
            },
        ),
        # --- Chapter 2 ----------------------------------------------------------------------------
        (
            "make_architecture",
            lambda: dict(name="mlp", n_in=3),
            {"name": "choice", "n_in": "count"},
        ),
        (
            "commutativity:commutator_norm",
            lambda: dict(A1=_sym(0, 1, 4)[0], A2=_sym(1, 1, 4)[0]),
            {"A1": "T", "A2": "T"},
        ),
        ("commutativity:pairwise_commutators", lambda: dict(As=_sym(0, 4, 3)), {"As": "T"}),
        ("max_commutator", lambda: dict(As=_sym(0, 4, 3)), {"As": "T"}),
        (
            "commutativity:common_eigenbasis",
            lambda: dict(As=_commuting(), seed=0),
            {"As": "T", "seed": "seed"},
        ),
        (
            "train_module",
            _train_module_kwargs,
            {
                "f": "module",
                "xs": "T",
                "y": "T",
                "W0": "T/rows",
                "lr": "pos",
                "steps": "steps",
                "optimizer": "choice",
                "batch_size": "?int",
                "seed": "seed",
                "stacked": "bool",
                "record_every": "?count",
                "record_weights": "bool",
                "record_M": "bool",
                "adam_eps": "pos",
                "adam_betas": "betas",
            },
        ),
        (
            "train_module",
            lambda: {
                **_train_module_kwargs(),
                "record_every": None,
                "record_steps": [0, 2, 4],
                "stream": None,
            },
            {"record_steps": "?record", "stream": "?fn"},
        ),
        (
            "train_two_layer",
            lambda: dict(
                X=_g(0, 8, 3),
                Y=_g(1, 8, 2),
                U0=0.1 * _g(2, 3, 4),
                V0=0.1 * _g(3, 4, 2),
                lr=0.1,
                steps=4,
                record_every=None,
                record_steps=[0, 2, 4],
                stream=None,
            ),
            {"record_steps": "?record", "stream": "?fn"},
        ),
        # --- Chapter 3 ----------------------------------------------------------------------------
        (
            "simulate_W",
            lambda: dict(
                A=_sym(0, 6, 3),
                y=_g(1, 6),
                W0=0.1 * _g(2, 3, 4),
                lr=0.05,
                steps=5,
                batch_size=2,
                seed=0,
                f0=0.0,
                g=None,
                B=None,
                method="gd",
                optimizer="sgd",
                record_every=2,
                adam_eps=1e-8,
                adam_betas=(0.9, 0.999),
                momentum=0.9,
                stop_below=None,
                device="cpu",
                dtype=torch.float64,
            ),
            {
                "A": "T",
                "y": "T",
                "W0": "T/rows",
                "lr": "pos",
                "steps": "steps",
                "batch_size": "?int",
                "seed": "seed",
                "f0": "real",
                "method": "choice",
                "optimizer": "choice",
                "record_every": "?count",
                "adam_eps": "pos",
                "adam_betas": "betas",
                "momentum": "frac",
                "stop_below": "?frac0",
                "device": "device",
                "dtype": "dtype",
            },
        ),
        (
            "simulate_W",
            lambda: dict(
                A=_sym(0, 6, 3),
                y=_g(1, 6),
                W0=0.1 * _g(2, 3, 4),
                lr=0.05,
                steps=5,
                g=0.1 * _g(3, 6, 3),
                B=0.1 * _sym(4, 6, 3),
                stop_below=0.5,
            ),
            {"g": "?T", "B": "?T", "stop_below": "?frac0"},
        ),
        (
            "simulate_M",
            lambda: dict(
                A=_sym(0, 6, 3),
                y=_g(1, 6),
                M0=0.01 * torch.eye(3, dtype=torch.float64),
                lr=0.05,
                steps=5,
                batch_size=None,
                seed=0,
                f0=0.0,
                method="gd",
                record_every=None,
                device="cpu",
                dtype=torch.float64,
            ),
            {
                "A": "T",
                "y": "T",
                "M0": "T",
                "lr": "pos",
                "steps": "steps",
                "batch_size": "?int",
                "seed": "seed",
                "f0": "real",
                "method": "choice",
                "record_every": "?count",
                "device": "device",
                "dtype": "dtype",
            },
        ),
        (
            "simulate_M_mu",
            lambda: dict(
                A=_sym(0, 6, 3),
                y=_g(1, 6),
                M0=0.01 * torch.eye(3, dtype=torch.float64),
                mu0=0.1 * _g(3, 3),
                width=4,
                lr=0.05,
                steps=5,
                g=_g(5, 6, 3),
                B=0.1 * _sym(4, 6, 3),
                method="gd",
                record_every=None,
                device="cpu",
                dtype=torch.float64,
                batch_size=2,
                seed=0,
                f0=0.0,
            ),
            {
                "A": "T",
                "y": "T",
                "M0": "T",
                "mu0": "T",
                "width": "count",
                "lr": "pos",
                "steps": "steps",
                "g": "?T",
                "B": "?T",
                "method": "choice",
                "record_every": "?count",
                "device": "device",
                "dtype": "dtype",
                "batch_size": "?int",
                "seed": "seed",
                "f0": "real",
            },
        ),
        (
            "compress_rank",
            lambda: dict(W0=_g(0, 3, 5), rtol=1e-12),
            {"W0": "T/free", "rtol": "pos"},
        ),
        (
            "lift_weights",
            lambda: dict(W_compressed=_g(0, 3, 2), R=_g(1, 5, 2)),
            {"W_compressed": "T", "R": "T"},
        ),
        ("psd_factor", lambda: dict(M=_spd(0, 3), rtol=1e-12), {"M": "T", "rtol": "pos"}),
        (
            "compress_data_subspace",
            lambda: dict(A=_sym(0, 4, 3), M0=_spd(1, 3), rtol=1e-10),
            {"A": "T", "M0": "T", "rtol": "pos"},
        ),
        # --- Chapter 4 ----------------------------------------------------------------------------
        (
            "lotka_volterra",
            lambda: dict(
                b=_t([1.0, 0.5]),
                C=_spd(0, 2),
                z0=_t([1e-3, 1e-3]),
                t=_t([0.0, 1.0]),
                max_step=None,
                device="cpu",
                dtype=torch.float64,
            ),
            {
                "b": "T/batch",
                "C": "T/batch",
                "z0": "T/batch",
                "t": "T/free/lower",
                "max_step": "?pos",
                "device": "device",
                "dtype": "dtype",
            },
        ),
        (
            "logistic",
            lambda: dict(
                z0=_t([1e-3, 1e-2]),
                zstar=_t([1.0, 2.0]),
                zeta=_t([1.0, 0.5]),
                t=_t([0.0, 1.0, 2.0]),
            ),
            {
                "z0": "T/batch/lower",
                "zstar": "T/batch/lower",
                "zeta": "T/batch/lower",
                "t": "T/free/lower",
            },
        ),
        (
            "reduce_commuting",
            lambda: dict(A=_commuting(), y=_g(1, 6), f0=0.0, rtol=None, seed=0),
            {"A": "T", "y": "T", "f0": "real", "rtol": "?pos", "seed": "seed"},
        ),
        (
            "mode_strengths",
            lambda: dict(M_traj=_spd(0, 3), E=torch.linalg.qr(_g(1, 3, 3))[0]),
            {"M_traj": "T/batch", "E": "T"},
        ),
        ("nnls_end_state", lambda: dict(b=_t([1.0, 0.5, 0.6]), C=_spd(0, 3)), {"b": "T", "C": "T"}),
        (
            "piecewise_linear_limit",
            lambda: dict(b=_t([1.0, 0.5]), C=_spd(0, 2), t_hat=_t([0.0, 0.5, 1.0])),
            {"b": "T", "C": "T", "t_hat": "T/free/lower"},
        ),
        (
            "isotropy_constant",
            lambda: dict(A=resolve("isotropic_dataset")(3)[0], rtol=None),
            {"A": "T", "rtol": "?pos"},
        ),
        (
            "isotropic_dataset",
            lambda: dict(p=3, seed=0, device="cpu", dtype=torch.float64),
            {"p": "int", "seed": "seed", "device": "device", "dtype": "dtype"},
        ),
        (
            "riccati_closed_form",
            lambda: dict(
                B=_sym(0, 1, 3)[0], kappa=0.5, W0=0.1 * _g(1, 3, 2), t=_t([0.0, 0.5, 1.0])
            ),
            {"B": "T", "kappa": "pos", "W0": "T/rows", "t": "T/free/lower"},
        ),
        (
            "single_sample_solution",
            lambda: dict(
                a=_t([1.0, -0.5]), y=1.0, z0=_t([1e-3, 1e-3]), t=_t([0.0, 1.0]), max_step=None
            ),
            {"a": "T", "y": "real", "z0": "T", "t": "T/free/lower", "max_step": "?pos"},
        ),
        # --- Chapter 5 ----------------------------------------------------------------------------
        (
            "two_layer_init",
            lambda: dict(p=3, d=4, K=2, scale=0.1, seed=0, dtype=torch.float64, device="cpu"),
            {
                "p": "int",
                "d": "int",
                "K": "int",
                "scale": "pos",
                "seed": "seed",
                "dtype": "dtype",
                "device": "device",
            },
        ),
        (
            "two_layer_output",
            lambda: dict(
                U=_g(0, 3, 4), V=_g(1, 4, 2), X=_g(2, 5, 3), activation="tanh", model="network"
            ),
            {"U": "T", "V": "T/free/lower", "X": "T", "activation": "act", "model": "choice"},
        ),
        (
            "train_two_layer",
            lambda: dict(
                X=_g(0, 8, 3),
                Y=_g(1, 8, 2),
                U0=0.1 * _g(2, 3, 4),
                V0=0.1 * _g(3, 4, 2),
                lr=0.1,
                steps=4,
                batch_size=4,
                record_every=2,
                optimizer="sgd",
                activation="tanh",
                model="network",
                seed=0,
                record_outputs=True,
                record_weights=False,
                adam_eps=1e-8,
                adam_betas=(0.9, 0.999),
            ),
            {
                "X": "T",
                "Y": "T",
                "U0": "T/rows",
                "V0": "T",
                "lr": "pos",
                "steps": "steps",
                "batch_size": "?int",
                "record_every": "?count",
                "optimizer": "choice",
                "activation": "act",
                "model": "choice",
                "seed": "seed",
                "record_outputs": "bool",
                "record_weights": "bool",
                "adam_eps": "pos",
                "adam_betas": "betas",
            },
        ),
        (
            "two_layer_init",
            lambda: dict(p=3, d=4, K=2, scale=[0.1, 0.2], seed=[0, 1]),
            {"p": "int", "d": "int", "K": "int", "scale": "pos", "seed": "seed"},
        ),
        (
            "train_two_layer",
            lambda: dict(
                X=_g(0, 8, 3),
                Y=_g(1, 8, 2),
                U0=0.1 * _g(2, 2, 3, 4),
                V0=0.1 * _g(3, 2, 4, 2),
                lr=0.1,
                steps=4,
                batch_size=4,
                seed=[0, 1],
                stacked=True,
                record_every=2,
                record_outputs=True,
            ),
            {"X": "T", "Y": "T", "U0": "T", "V0": "T", "seed": "seed", "stacked": "bool"},
        ),
        (
            "train_two_layer",
            lambda: dict(
                X=_g(0, 2, 8, 3),
                Y=_g(1, 2, 8, 2),
                U0=0.1 * _g(2, 2, 3, 4),
                V0=0.1 * _g(3, 2, 4, 2),
                lr=0.1,
                steps=4,
                stacked=True,
                model="nqf",
                moments=True,
            ),
            {"X": "T/lower", "Y": "T/lower", "moments": "bool"},
        ),
        (
            "crossing_times",
            lambda: dict(
                values=torch.linspace(0, 1, 5, dtype=torch.float64)[:, None].repeat(1, 2),
                times=torch.arange(5.0, dtype=torch.float64),
                level=0.5,
                direction="up",
                strict=False,
            ),
            {
                "values": "T/batch/free",
                "times": "T",
                "level": "real",
                "direction": "choice",
                "strict": "bool",
            },
        ),
        (
            "ignition_times",
            lambda: dict(
                z=torch.linspace(0, 1, 5, dtype=torch.float64)[:, None].repeat(1, 2),
                times=torch.arange(5.0, dtype=torch.float64),
                zstar=_t([1.0, 1.5]),
                fraction=0.5,
                strict=False,
            ),
            {
                "z": "T/batch",
                "times": "T",
                "zstar": "T/batch/lower",
                "fraction": "frac",
                "strict": "bool",
            },
        ),
        (
            "logistic_ignition_time",
            lambda: dict(z0=_t([1e-3]), zstar=_t([1.0]), zeta=_t([2.0]), fraction=0.5),
            {
                "z0": "T/batch/free/lower",
                "zstar": "T/batch/free/lower",
                "zeta": "T/batch/free/lower",
                "fraction": "frac",
            },
        ),
        (
            "predicted_ignition_time",
            lambda: dict(zeta=_t([1.0, 2.0]), eps=_t([1e-3])),
            {"zeta": "T/batch/free/lower", "eps": "T/batch/free/lower"},
        ),
        (
            "ignition_slope",
            lambda: dict(
                eps=_t([1e-2, 1e-4, 1e-6]), t_star=_t([[1.0, 2.0], [2.0, 4.1], [3.0, 6.0]])
            ),
            {"eps": "T", "t_star": "T/free"},
        ),
        (
            "limit_ignition_slopes",
            lambda: dict(b=_t([1.0, 0.5]), C=_spd(0, 2)),
            {"b": "T", "C": "T"},
        ),
        (
            "mode_fractions",
            lambda: dict(outputs=_g(0, 6, 2), X=_g(1, 6, 3), Y=_g(2, 6, 2)),
            {"outputs": "T/batch", "X": "T/free", "Y": "T"},
        ),
        (
            "relative_gap",
            lambda: dict(a=_g(0, 4, 3, 1), b=_g(1, 4, 3, 1), axis=(1, 2)),
            {"a": "T", "b": "T", "axis": "?axis"},
        ),
        (
            "loss_gap",
            lambda: dict(loss_a=_t([1.0, 0.5]), loss_b=_t([1.0, 0.4])),
            {"loss_a": "T", "loss_b": "T"},
        ),
        (
            "first_exceeding",
            lambda: dict(steps=_t([0.0, 10.0, 20.0]), gap=_t([0.0, 0.2, 0.5]), threshold=0.1),
            {"steps": "T", "gap": "T", "threshold": "pos"},
        ),
        (
            "trajectory_remainder",
            lambda: dict(
                U_traj=0.1 * _g(0, 3, 3, 4),
                V_traj=0.1 * _g(1, 3, 4, 1),
                X=_g(2, 5, 3),
                activation="tanh",
            ),
            {"U_traj": "T", "V_traj": "T/free", "X": "T", "activation": "act"},
        ),
        (
            "identity_init",
            lambda: dict(eps=1e-3, p=3, d=4, dtype=torch.float64, device="cpu"),
            {"eps": "pos", "p": "int", "d": "?int", "dtype": "dtype", "device": "device"},
        ),
        ("eps_from_sigma", lambda: dict(sigma=0.1, d=4), {"sigma": "pos", "d": "count"}),
        (
            "initialisation:sigma_from_eps",
            lambda: dict(eps=1e-3, d=4),
            {"eps": "pos", "d": "count"},
        ),
        # --- Chapter 6 ----------------------------------------------------------------------------
        (
            "feature_exponent",
            lambda: dict(alpha1=2.0, alpha2=0.8),
            {"alpha1": "pos", "alpha2": "pos"},
        ),
        (
            "sample_exponent",
            lambda: dict(gamma1=1.0, gamma2=1.0),
            {"gamma1": "pos", "gamma2": "pos"},
        ),
        ("fourier_exponent", lambda: dict(theta=1.0, beta=1.0), {"theta": "pos", "beta": "pos"}),
        ("rank_one_exponent", lambda: dict(theta=1.0, beta=1.0), {"theta": "pos", "beta": "pos"}),
        (
            "nonproportional_exponent",
            lambda: dict(alpha1=2.0, alpha2=0.8, delta=0.5, eps=1e-5, k_star=100.0),
            {"alpha1": "pos", "alpha2": "pos", "delta": "nonneg", "eps": "frac", "k_star": "pos"},
        ),
        (
            "logistic_loss_curve",
            lambda: dict(
                V=_t([1.0, 0.5]),
                zeta=_t([1.0, 0.5]),
                u0=_t([1e-3, 1e-3]),
                t=_t([0.0, 1.0, 10.0]),
                chunk_elements=1000,
                device="cpu",
            ),
            {
                "V": "T",
                "zeta": "T",
                "u0": "T/lower",
                "t": "T/free/lower",
                "chunk_elements": "count",
                "device": "device",
            },
        ),
        (
            "hurwitz_tail",
            lambda: dict(alpha1=2.0, K=10, prefactor=1.0),
            {"alpha1": "pos", "K": "int0", "prefactor": "real"},
        ),
        (
            "power_law_modes",
            lambda: dict(K=10, alpha1=2.0, alpha2=0.8, eps=1e-5, delta=0.0, zeta0=1.0),
            {
                "K": "int",
                "alpha1": "pos",
                "alpha2": "pos",
                "eps": "frac",
                "delta": "nonneg",
                "zeta0": "pos",
            },
        ),
        (
            "feature_wise_curve",
            lambda: dict(
                alpha1=2.0,
                alpha2=0.8,
                K=10,
                t=_t([1.0, 10.0]),
                eps=1e-5,
                delta=0.0,
                zeta0=1.0,
                tail=False,
                device="cpu",
            ),
            {
                "alpha1": "pos",
                "alpha2": "pos",
                "K": "int",
                "t": "T/free/lower",
                "eps": "frac",
                "delta": "nonneg",
                "zeta0": "pos",
                "tail": "bool",
                "device": "device",
            },
        ),
        (
            "sample_wise_curve",
            lambda: dict(
                gamma1=1.0,
                gamma2=1.0,
                n=10,
                t=_t([1.0, 10.0]),
                eps=1e-5,
                zeta0=1.0,
                tail=False,
                device="cpu",
            ),
            {
                "gamma1": "pos",
                "gamma2": "pos",
                "n": "int",
                "t": "T/free/lower",
                "eps": "frac",
                "zeta0": "pos",
                "tail": "bool",
                "device": "device",
            },
        ),
        (
            "ignition_window",
            lambda: dict(
                u0=torch.full((200,), 1e-3, dtype=torch.float64),
                zeta=torch.arange(1, 201.0, dtype=torch.float64) ** -0.8,
                k_min=10,
                k_max=None,
            ),
            {"u0": "T/lower", "zeta": "T", "k_min": "count", "k_max": "?count"},
        ),
        (
            "fit_power_law",
            lambda: dict(
                t=torch.logspace(0, 2, 20, dtype=torch.float64),
                loss=torch.logspace(0, 2, 20, dtype=torch.float64) ** -1.5,
                window=(2.0, 50.0),
            ),
            {"t": "T", "loss": "T", "window": "T/free"},
        ),
        (
            "rank_one_curve",
            lambda: dict(K=8, theta=1.0, beta=1.0, n_steps=20, w0_norm=1e-4, tau_max=None),
            {
                "K": "int",
                "theta": "pos",
                "beta": "pos",
                "n_steps": "steps",
                "w0_norm": "pos",
                "tau_max": "?pos",
            },
        ),
        (
            "spectral_data:fourier_basis",
            lambda: dict(K=4, N=10, device="cpu"),
            {"K": "int", "N": "int", "device": "device"},
        ),
        (
            "fourier_features",
            lambda: dict(K=4, N=10, theta=1.0, beta=1.0, device="cpu"),
            {"K": "int", "N": "int", "theta": "pos", "beta": "pos", "device": "device"},
        ),
        (
            "fourier_modes",
            lambda: dict(
                data=resolve("fourier_features")(K=4, N=10, theta=1.0, beta=1.0), d=4, sigma=0.1
            ),
            {"data": "obj", "d": "count", "sigma": "pos"},
        ),
        (
            "orthonormal_samples",
            lambda: {**_rank_one_data(), "device": "cpu"},
            {
                "n": "int",
                "gamma1": "pos",
                "gamma2": "pos",
                "p": "?int",
                "seed": "seed",
                "device": "device",
            },
        ),
        (
            "proportional_init",
            lambda: dict(samples=_samples(), eps=1e-3, d=2, seed=0),
            {"samples": "obj", "eps": "frac", "d": "int", "seed": "seed"},
        ),
        (
            "train_square_network",
            lambda: dict(
                X=_samples().X,
                y=_samples().y,
                W0=0.01 * _g(0, 6, 2),
                lr=0.1,
                steps=4,
                record_every=1,
                device="cpu",
            ),
            {
                "X": "T",
                "y": "T",
                "W0": "T/rows",
                "lr": "pos",
                "steps": "steps",
                "record_every": "count",
                "device": "device",
            },
        ),
        (
            "commuting_data",
            lambda: dict(zstar=_t([1.0, 0.5, 0.25]), C=_t([1.0, 0.8, 0.6]), n=5, seed=0),
            {"zstar": "T", "C": "T", "n": "?int", "seed": "seed"},
        ),
        (
            "train_commuting_nqf",
            lambda: dict(
                data=resolve("commuting_data")(_t([1.0, 0.5, 0.25]), _t([1.0, 0.8, 0.6]), n=5),
                W0=0.01 * _g(0, 3, 2),
                lr=0.1,
                steps=4,
                record_steps=[0, 2, 4],
                record_z=True,
            ),
            {
                "data": "obj",
                "W0": "T/rows",
                "lr": "pos",
                "steps": "steps",
                "record_steps": "?record",
                "record_z": "bool",
            },
        ),
        # --- Chapter 7 ----------------------------------------------------------------------------
        (
            "make_teacher",
            lambda: dict(p=4, k=2, norm=2.0, activation="tanh", seed=0, device="cpu"),
            {
                "p": "int",
                "k": "int",
                "norm": "pos",
                "activation": "act",
                "seed": "seed",
                "device": "device",
            },
        ),
        (
            "simulate_M_stacked",
            lambda: dict(
                A=torch.stack([_sym(0, 6, 3), _sym(5, 6, 3)]),
                y=_g(1, 2, 6),
                M0=0.01 * torch.eye(3, dtype=torch.float64).repeat(2, 1, 1),
                lr=0.05,
                steps=5,
                method="gd",
                record_every=2,
            ),
            {
                "A": "T",
                "y": "T",
                "M0": "T",
                "lr": "pos",
                "steps": "steps",
                "method": "choice",
                "record_every": "count",
            },
        ),
        (
            "online_stream",
            lambda: dict(teacher=resolve("make_teacher")(p=4, k=2), batch_size=2, steps=3, seed=2),
            {"teacher": "obj", "batch_size": "int", "steps": "steps", "seed": "seed"},
        ),
        (
            "online_stream",
            lambda: dict(
                teacher=[resolve("make_teacher")(p=4, k=2, seed=s) for s in (0, 1)],
                batch_size=2,
                steps=3,
                seed=[2, 3],
            ),
            {"teacher": "obj", "batch_size": "int", "steps": "steps", "seed": "seed"},
        ),
        (
            "scaled_nqf_problem",
            lambda: dict(
                d=8, alpha_A=1.0, alpha_B=1.5, alpha_g=0.5, n=4, p=3, seed=0, device="cpu"
            ),
            {
                "d": "count",
                "alpha_A": "real",
                "alpha_B": "real",
                "alpha_g": "real",
                "n": "int",
                "p": "int",
                "seed": "seed",
                "device": "device",
            },
        ),
        (
            "ntk_drift",
            lambda: dict(
                problem=resolve("scaled_nqf_problem")(8, 1.0, 1.5, n=4, p=3),
                init_scale=1e-3,
                loss_fraction=0.5,
                lr=0.05,
                max_steps=400,
                seed=1,
            ),
            {
                "problem": "obj",
                "init_scale": "pos",
                "loss_fraction": "frac",
                "lr": "pos",
                "max_steps": "steps",
                "seed": "seed",
            },
        ),
        (
            "drift_scaling",
            lambda: dict(alpha_A=1.0, alpha_B=1.5, widths=[4, 8], n=4, p=3, max_steps=400, seed=0),
            {
                "alpha_A": "real",
                "alpha_B": "real",
                "seed": "seed",
                "max_steps": "steps",
                "widths": "sizes",
            },
        ),
        (
            "ntk_regime",
            lambda: dict(alpha_A=1.0, alpha_B=1.5),
            {"alpha_A": "real", "alpha_B": "real"},
        ),
        (
            "perturb_commuting",
            lambda: dict(E=torch.linalg.qr(_g(0, 3, 3))[0], a=_g(1, 4, 3), t=0.1, seed=0),
            {"E": "T", "a": "T", "t": "nonneg", "seed": "seed"},
        ),
        (
            "commutativity:joint_diagonalizer",
            lambda: dict(As=_sym(0, 4, 3), seed=0, sweeps=5, tol=1e-13),
            {"As": "T", "seed": "seed", "sweeps": "steps", "tol": "pos"},
        ),
        ("nearest_commuting", lambda: dict(As=_sym(0, 4, 3), seed=0), {"As": "T", "seed": "seed"}),
        (
            "scaled_remainder",
            lambda: dict(
                U=_g(0, 3, 4),
                V=_g(1, 4, 1),
                X=_g(2, 5, 3),
                scales=[1e-2, 3e-2, 1e-1],
                activation="tanh",
            ),
            {"U": "T", "V": "T/free/lower", "X": "T", "scales": "T/free", "activation": "act"},
        ),
        (
            "best_linear_fit",
            lambda: dict(teacher=resolve("make_teacher")(p=4, k=2)),
            {"teacher": "obj"},
        ),
        # --- Chapters 8 and 9 ---------------------------------------------------------------------
        ("module_pair", lambda: dict(arch=arch("mlp")), {"arch": "obj"}),
        (
            "surrogates:nqf_floor",
            lambda: dict(A=_sym(0, 5, 3), y=_g(1, 5), f0=0.0),
            {"A": "T", "y": "T/batch", "f0": "real"},
        ),
        (
            "surrogates:best_quadratic_form",
            lambda: dict(A=_sym(0, 5, 3), y=_g(1, 5), f0=0.0),
            {"A": "T", "y": "T/batch", "f0": "real"},
        ),
        (
            "agreement_window",
            lambda: dict(
                steps=_t([0.0, 10.0, 20.0]),
                loss_net=_t([1.0, 0.5, 0.4]),
                loss_nqf=_t([1.0, 0.5, 0.45]),
                f_net=_g(0, 3, 4),
                f_nqf=_g(1, 3, 4),
                threshold=0.1,
                loss_floor=0.01,
                function_scale=2.0,
            ),
            {
                "steps": "T",
                "loss_net": "T",
                "loss_nqf": "T",
                "f_net": "T",
                "f_nqf": "T",
                "threshold": "pos",
                "loss_floor": "frac0",
                "function_scale": "?pos",
            },
        ),
        # --- Chapter 10 ---------------------------------------------------------------------------
        (
            "digits_data",
            lambda: dict(target="classes", dtype=torch.float64, device="cpu"),
            {"target": "choice", "dtype": "dtype", "device": "device"},
        ),
        (
            "whiten",
            lambda: dict(X=_g(0, 8, 3), strength=0.5, rtol=1e-10),
            {"X": "T/free", "strength": "unit", "rtol": "pos"},
        ),
        (
            "mlp_commutators",
            lambda: dict(X=_g(0, 5, 3), same_channel=False),
            {"X": "T/free", "same_channel": "bool"},
        ),
        (
            "covariance_commutator",
            lambda: dict(X=_g(0, 8, 3), Y=_g(1, 8, 2)),
            {"X": "T/rows", "Y": "T/rows"},
        ),
        ("data_modes", lambda: dict(X=_g(0, 8, 3), Y=_g(1, 8, 2)), {"X": "T/rows", "Y": "T/rows"}),
        (
            "data_modes->fractions",
            lambda: dict(correlation=_g(2, 3, 2)),
            {"correlation": "T/batch"},
        ),
        (
            "predict_staircase",
            _staircase_kwargs,
            {"X": "T/rows", "Y": "T", "U0": "T/rows", "V0": "T", "lr": "pos", "activation": "act"},
        ),
        ("predict_staircase", _staircase_kwargs, {"X": "T", "V0": "T/rows"}),
        (
            "predict_staircase->fractions",
            lambda: dict(steps=_t([0.0, 10.0, 100.0])),
            {"steps": "T/free/lower"},
        ),
        (
            "predict_staircase->loss",
            lambda: dict(steps=_t([0.0, 10.0, 100.0]), levels="reduced_rank"),
            {"steps": "T/free/lower", "levels": "choice"},
        ),
        (
            "fitted_fractions",
            lambda: dict(outputs=_g(2, 4, 8, 2), X=_g(0, 8, 3), Y=_g(1, 8, 2)),
            {"outputs": "T/batch", "X": "T/rows", "Y": "T"},
        ),
    ]
    + ARCH_CONSTRUCTORS
    + _arch_method_cases()
)

# Public names that take no arguments to fuzz, or are not callables with a contract.
NOT_FUZZED = {
    "default_device": "no arguments (NQF_DEVICE is tested in test_dtype_device)",
    "DivergenceError": "an exception class",
}

# --- bad and accepted values --------------------------------------------------------------------

BAD_SCALARS: dict[str, list[Any]] = {
    "pos": [math.nan, math.inf, -1.0, 0.0, "1", True, None, 1j],
    "real": [math.nan, math.inf, "1", True, None, 1j],
    "nonneg": [math.nan, math.inf, -1.0, "1", True, None],
    "frac": [math.nan, -0.5, 0.0, 1.0, 1.5, "0.5", True, None],
    "frac0": [math.nan, -0.5, 1.0, 1.5, "0.5", True, None],
    "unit": [math.nan, -0.5, 1.5, "0.5", True, None],
    "int": [-5, 0, 2.5, "3", True, math.nan, None, HUGE],
    "int0": [-5, 2.5, "3", True, None],
    "steps": [-5, 0, 2.5, "3", True, math.nan, None, HUGE],
    "count": [-5, 0, 2.5, "3", True, math.nan, None],
    "seed": [2.5, "3", True, None],
    "choice": ["bogus", 3, None, ""],
    "act": ["bogus", 3, None],
    "bool": ["yes", None, 2.5],
    "fn": [3, "f", None],
    "module": [3, "f", None],
    "dtype": [torch.int64, torch.complex128, torch.float16, "float64", None],
    "device": ["bogus", 3.5, "meta"] + ([] if torch.cuda.is_available() else ["cuda"]),
    "obj": [None, "abc", 3, object(), {}],
    "sizes": [[], None, "abc", [4, math.nan], [4, -8], [4, 0], [4, 2.5], [4, True]],
    "betas": [(), None, "ab", (0.9,), (0.9, math.nan), (1.5, 0.9), (0.9, -0.1), (True, 0.9)],
    "record": [[], "abc", [0, -1], [0, 2.5], [0, HUGE], [0, None]],
    "axis": ["abc", 5, 2.5, (0, 7), True, -9],
    "str": [None, 3, object(), {}],
}

# Values that must be accepted in place of a valid scalar v (the result must not change).
GOOD_SCALARS: dict[str, list[tuple[str, Callable[[Any], Any]]]] = {
    "real": [
        ("numpy float", np.float64),
        ("0-d tensor", lambda v: torch.tensor(float(v), dtype=torch.float64)),
    ],
    "int": [("numpy int", np.int64), ("0-d tensor", lambda v: torch.tensor(int(v)))],
}
for _k in ("pos", "nonneg", "frac", "frac0", "unit"):
    GOOD_SCALARS[_k] = GOOD_SCALARS["real"]
for _k in ("int0", "steps", "count", "seed"):
    GOOD_SCALARS[_k] = GOOD_SCALARS["int"]


def _vector_module(W: torch.Tensor, x: Any) -> torch.Tensor:
    return W.sum(dim=1)  # a vector, not a scalar


def _nan_module(W: torch.Tensor, x: Any) -> torch.Tensor:
    return (W * math.nan).sum()  # NaN at every W


def _one_argument_module(W: torch.Tensor) -> torch.Tensor:
    return W.sum()  # no x: the wrong arity


def _parse(kind: str) -> tuple[bool, str, set[str]]:
    optional = kind.startswith("?")
    base, *flags = kind.lstrip("?").split("/")
    return optional, base, set(flags)


def _grow(value: torch.Tensor, dim: int) -> torch.Tensor:
    """One more entry along ``dim`` (a copy of the last one)."""
    extra = value.narrow(dim, value.shape[dim] - 1, 1)
    return torch.cat([value, extra], dim=dim)


def _tensor_mutations(value: torch.Tensor, flags: set[str]) -> list[tuple[str, Any]]:
    nan, inf = value.contiguous().clone(), value.contiguous().clone()
    nan.view(-1)[0], inf.view(-1)[0] = math.nan, math.inf
    out = [
        ("NaN entry", nan),
        ("complex dtype", value.to(torch.complex128)),
        ("a string", "abc"),
        ("a dict", {"a": 1.0}),
        ("empty", value.new_zeros((0,) + tuple(value.shape[1:]))),
        ("bool tensor", value > 0),
        ("numpy bool array", (value > 0).numpy()),
        ("meta device", value.to("meta")),
    ]
    if "batch" not in flags and "any" not in flags:
        out.append(("extra dimension", value.unsqueeze(0)))
    if "inf" not in flags:
        out.append(("inf entry", inf))
    if value.ndim >= 1 and not flags & {"lower", "any", "batch"}:
        out.append(("one dimension less", value[0]))
    if value.ndim >= 1 and "free" not in flags and "any" not in flags:
        dim = 0 if "rows" in flags else value.ndim - 1
        out.append((f"one more entry along dim {dim}", _grow(value, dim)))
    return out


def _input_mutations(value: Any, kind: str) -> list[tuple[str, Any]]:
    """Bad inputs x of an architecture: a tensor or a tuple of tensors, or an index pair."""
    out: list[tuple[str, Any]] = [("None", None), ("a string", "abc"), ("a dict", {"a": 1.0})]
    if kind == "Xidx":
        out += [
            ("index out of range", value + torch.tensor([0, 9])),
            ("negative index", torch.tensor([-1, 0])),
            ("float index", value.double() + 0.5),
            ("bool tensor", value > 0),
            ("three indices", torch.cat([value, value[:1]])),
            ("meta device", value.to("meta")),
        ]
        return out
    if isinstance(value, torch.Tensor):
        return out + [(w, b) for w, b in _tensor_mutations(value, set()) if w != "a dict"]
    out.append(("a bare tensor instead of a tuple", value[0]))
    out.append(("one element short", tuple(value[:-1])))
    for i, part in enumerate(value):
        for what, bad in _tensor_mutations(part, set()):
            if what in ("a dict",):
                continue
            out.append(
                (f"element {i}: {what}", tuple(bad if j == i else v for j, v in enumerate(value)))
            )
    return out


def mutations(kind: str, value: Any) -> list[tuple[str, Any]]:
    """(description, bad value) pairs for an argument of ``kind`` whose valid value is ``value``."""
    optional, base, flags = _parse(kind)
    if base == "T":
        t = (
            value
            if isinstance(value, torch.Tensor)
            else torch.as_tensor(value, dtype=torch.float64)
        )
        out = _tensor_mutations(t, flags)
        return out if optional else [("None", None)] + out
    if base in ("X", "Xidx"):
        return _input_mutations(value, base)
    bad = list(BAD_SCALARS[base])
    if base == "module":
        bad += [_vector_module, _nan_module, _one_argument_module]
    if optional:
        bad = [b for b in bad if b is not None]
    return [(f"{base} {_label(b)}", b) for b in bad]


def _label(value: Any) -> str:
    """A description of a bad value that is the same in every process (a failure names its
    case by it, and two runs' reports must compare), so never a repr with a memory address."""
    name = getattr(value, "__name__", None)
    if name:
        return name
    text = repr(value)
    return f"{type(value).__name__}()" if " at 0x" in text else text


def _noncontiguous(t: torch.Tensor) -> torch.Tensor:
    return torch.stack([t, t], dim=-1)[..., 0]


def accepted_variants(kind: str, value: Any) -> list[tuple[str, Any, bool]]:
    """(description, variant, same) for inputs that must be accepted in place of ``value``;
    ``same``: the result must equal that of the valid call (else: finite is enough)."""
    optional, base, _ = _parse(kind)
    if base == "T" and isinstance(value, torch.Tensor):
        v = value.to(torch.float64)
        return [
            ("a list", v.tolist(), True),
            ("a NumPy array", v.numpy().copy(), True),
            ("requires_grad", v.clone().requires_grad_(True), True),
            ("non-contiguous", _noncontiguous(v), True),
            ("float32", v.float(), False),
            ("float16", v.half(), False),
            ("bfloat16", v.bfloat16(), False),
        ]
    if base in GOOD_SCALARS and isinstance(value, (int, float)) and not isinstance(value, bool):
        return [(w, make(value), True) for w, make in GOOD_SCALARS[base]]
    return []


# --- outcomes ------------------------------------------------------------------------------------


def contains_nonfinite(result: Any) -> bool:
    """Whether any number inside ``result`` (tensors, arrays, floats, tuples, dataclasses) is
    NaN or inf."""
    if isinstance(result, torch.Tensor):
        if result.device.type == "meta":
            return False  # no values: a silent acceptance
        return bool(result.is_floating_point() and not torch.isfinite(result).all())
    if isinstance(result, np.ndarray):
        return bool(result.dtype.kind == "f" and not np.isfinite(result).all())
    if isinstance(result, float):
        return not math.isfinite(result)
    if isinstance(result, (tuple, list)):
        return any(contains_nonfinite(r) for r in result)
    if is_dataclass(result) and not isinstance(result, type):
        return any(contains_nonfinite(getattr(result, f.name)) for f in fields(result))
    return False


ALLOCATION = (
    "can't allocate",
    "allocate memory",
    "Storage size calculation overflowed",
    "out of memory",
    "MemoryError",
)


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang()


def call_with_limit(
    fn: Callable[..., Any], kwargs: dict[str, Any], seconds: int = TIME_LIMIT_S
) -> Any:
    """``fn(**kwargs)``, raising :class:`_Hang` after ``seconds`` (SIGALRM, main thread)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        return fn(**kwargs)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def classify(fn: Callable[..., Any], kwargs: dict[str, Any], arg: str) -> tuple[str, str]:
    """Outcome of a call with a bad ``arg``: 'clear', 'wrong argument', 'cryptic',
    'allocation', 'silent NaN', 'silent accept' or 'hang', with the message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call_with_limit(fn, kwargs)
    except _Hang:
        return "hang", f"still running after {TIME_LIMIT_S} s"
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        if type(exc).__name__ == "DivergenceError":
            return "wrong argument", f"DivergenceError: {msg}"
        if any(a in msg for a in ALLOCATION):
            return "allocation", msg
        return ("clear" if f"`{arg}`" in msg else "wrong argument"), msg
    except Exception as exc:
        msg = f"{type(exc).__name__}: {exc}"
        return ("allocation" if any(a in msg for a in ALLOCATION) else "cryptic"), msg
    return ("silent NaN" if contains_nonfinite(result) else "silent accept"), ""


def same_result(a: Any, b: Any, exact: bool = True) -> bool:
    """Whether two results agree: equal (``exact``) or within 1e-10 relative."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        a, b = a.detach().cpu(), b.detach().cpu()
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if not a.is_floating_point():
            return torch.equal(a, b)
        return (
            torch.equal(a, b)
            if exact
            else bool(torch.allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True))
        )
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.shape == b.shape
            and bool(np.allclose(a, b, rtol=0 if exact else 1e-10, atol=0 if exact else 1e-12))
        )
    if isinstance(a, (tuple, list)):
        return (
            isinstance(b, (tuple, list))
            and len(a) == len(b)
            and all(same_result(x, y, exact) for x, y in zip(a, b))
        )
    if is_dataclass(a) and not isinstance(a, type):
        return all(same_result(getattr(a, f.name), getattr(b, f.name), exact) for f in fields(a))
    if isinstance(a, torch.Generator):
        return isinstance(b, torch.Generator) and torch.equal(a.get_state(), b.get_state())
    if callable(a):
        return callable(b)  # functions: not data
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (not exact and math.isclose(a, b, rel_tol=1e-10, abs_tol=1e-12))
    try:
        return bool(a == b)
    except (TypeError, ValueError, RuntimeError):
        return True  # callables, generators: not data


def bad_calls(
    cases: list[Case] | None = None,
) -> list[tuple[str, Callable[[], dict[str, Any]], str, str, Any]]:
    """Every (name, make, arg, description, bad value) of the cases."""
    return [
        (name, make, arg, what, bad)
        for name, make, kinds in (CASES if cases is None else cases)
        for arg, kind in kinds.items()
        for what, bad in mutations(kind, make()[arg])
    ]


def good_calls(
    cases: list[Case] | None = None,
) -> list[tuple[str, Callable[[], dict[str, Any]], str, str, Any, bool]]:
    """Every (name, make, arg, description, accepted value, same) of the cases."""
    return [
        (name, make, arg, what, good, same)
        for name, make, kinds in (CASES if cases is None else cases)
        for arg, kind in kinds.items()
        for what, good, same in accepted_variants(kind, make()[arg])
    ]


def assert_refused(
    name: str, make: Callable[[], dict[str, Any]], arg: str, what: str, bad: Any
) -> None:
    """The call ``name(**make())`` with ``arg`` replaced by ``bad`` (described as
    ``what``) raises a clear error naming ``arg`` (see :func:`classify`)."""
    kwargs = make()
    kwargs[arg] = bad
    outcome, message = classify(resolve(name), kwargs, arg)
    assert outcome == "clear", f"{name}({arg} = {what}): {outcome}: {message}"
