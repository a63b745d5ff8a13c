"""The input contract of the public functions, as data: one valid call per function, and the
argument kinds that say which bad inputs each argument must refuse.

Used by ``tests/unit/test_input_contract.py`` (every bad input must raise a ``ValueError`` or
``TypeError`` naming the argument at fault; a Python list must give the same float64 result as a
tensor) and by ``scripts/input_contract_report.py`` (the table of outcomes).

A case is ``(name, make_kwargs, kinds)``: ``make_kwargs()`` returns fresh valid keyword arguments,
and ``kinds`` maps an argument to its kind:

* ``"T"``: a float tensor (NaN, inf, complex, strings, empty and extra-dimensional tensors are
  refused; a list of its values is accepted); ``"Tinf"``: the same, but inf is meaningful;
  ``"TB"``: the same, but leading batch dimensions are allowed;
* ``"pos"``: a finite number > 0; ``"real"``: any finite number; ``"nonneg"``: finite, >= 0;
* ``"int"``: an integer >= 1 (``"int0"``: >= 0; ``"seed"``: any integer);
* ``"choice"``: one of a fixed set of strings; ``"fn"``: a callable.
"""

from __future__ import annotations

import importlib
import math
import warnings
from dataclasses import fields, is_dataclass
from typing import Any, Callable

import numpy as np
import torch

import nqf_mini as nqf

Case = tuple[str, Callable[[], dict[str, Any]], dict[str, str]]


def _t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _g(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _sym(seed: int, n: int, p: int) -> torch.Tensor:
    S = _g(seed, n, p, p)
    return (S + S.transpose(1, 2)) / 2


def _mlp():
    return nqf.make_architecture("mlp", n_in=3, phi="tanh")


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


def resolve(name: str) -> Callable[..., Any] | None:
    """``nqf_mini.<name>``, or ``module:function`` inside the package; None when absent."""
    if ":" in name:
        module, attr = name.split(":")
        try:
            return getattr(importlib.import_module(f"nqf_mini.{module}"), attr, None)
        except ImportError:
            return None
    return getattr(nqf, name, None)


CASES: list[Case] = [
    # --- Chapter 1 ---------------------------------------------------------------------------
    ("structure_matrix", lambda: dict(f=_mlp().f, x=_g(0, 3), p=4), {"f": "fn", "x": "T", "p": "int"}),
    ("quadratic_expansion", lambda: dict(f=_mlp().f, x=_g(0, 3), p=4),
     {"f": "fn", "x": "T", "p": "int"}),
    ("structure_matrices", lambda: dict(f=_mlp().f, xs=_g(0, 5, 3), p=4),
     {"f": "fn", "xs": "T", "p": "int"}),
    ("nqf_value", lambda: dict(M=_sym(1, 1, 4)[0], A=_sym(2, 5, 4)), {"M": "T", "A": "T"}),
    ("offdiag", lambda: dict(Z=_g(0, 3, 2)), {"Z": "T"}),
    ("permutation_asymmetry", lambda: dict(f=_mlp().f, x=_g(0, 3), p=4, d=5),
     {"f": "fn", "x": "T", "p": "int", "d": "int"}),
    ("zgz_violation", lambda: dict(f=_mlp().f, x=_g(0, 3), p=4, d=3),
     {"f": "fn", "x": "T", "p": "int", "d": "int"}),
    ("satisfies_zgz", lambda: dict(f=_mlp().f, x=_g(0, 3), p=4, tol=1e-10),
     {"f": "fn", "x": "T", "p": "int", "tol": "pos"}),
    ("remainder_order", lambda: dict(f=_mlp().f, x=_g(0, 3), W=_g(1, 4, 5),
                                     scales=[1e-3, 3e-3, 1e-2, 3e-2]),
     {"f": "fn", "x": "T", "W": "T", "scales": "T"}),
    ("make_architecture", lambda: dict(name="mlp", n_in=3), {"name": "choice", "n_in": "int"}),
    # --- Chapter 2 ---------------------------------------------------------------------------
    ("commutativity:commutator_norm", lambda: dict(A1=_sym(0, 1, 4)[0], A2=_sym(1, 1, 4)[0]),
     {"A1": "T", "A2": "T"}),
    ("commutativity:pairwise_commutators", lambda: dict(As=_sym(0, 4, 3)), {"As": "T"}),
    ("max_commutator", lambda: dict(As=_sym(0, 4, 3)), {"As": "T"}),
    ("commutativity:common_eigenbasis", lambda: dict(As=_commuting(), seed=0), {"As": "T", "seed": "seed"}),
    # --- Chapter 3 ---------------------------------------------------------------------------
    ("simulate_W", lambda: dict(A=_sym(0, 6, 3), y=_g(1, 6), W0=0.1 * _g(2, 3, 4), lr=0.05,
                                steps=5, batch_size=2, record_every=2),
     {"A": "T", "y": "T", "W0": "T", "lr": "pos", "steps": "int", "batch_size": "int",
      "record_every": "int"}),
    ("simulate_M", lambda: dict(A=_sym(0, 6, 3), y=_g(1, 6), M0=0.01 * torch.eye(3, dtype=torch.float64), lr=0.05,
                                steps=5, method="gd"),
     {"A": "T", "y": "T", "M0": "T", "lr": "pos", "steps": "int", "method": "choice"}),
    ("simulate_M_mu", lambda: dict(A=_sym(0, 6, 3), y=_g(1, 6), M0=0.01 * torch.eye(3, dtype=torch.float64),
                                   mu0=0.1 * _g(3, 3), width=4, lr=0.05, steps=5, g=_g(5, 6, 3)),
     {"A": "T", "y": "T", "M0": "T", "mu0": "T", "width": "int", "lr": "pos", "steps": "int",
      "g": "T"}),
    ("compress_rank", lambda: dict(W0=_g(0, 3, 5), rtol=1e-12), {"W0": "T", "rtol": "pos"}),
    ("lift_weights", lambda: dict(W_compressed=_g(0, 3, 2), R=_g(1, 5, 2)),
     {"W_compressed": "T", "R": "T"}),
    ("psd_factor", lambda: dict(M=_spd(0, 3), rtol=1e-12), {"M": "T", "rtol": "pos"}),
    ("compress_data_subspace", lambda: dict(A=_sym(0, 4, 3), M0=_spd(1, 3), rtol=1e-10),
     {"A": "T", "M0": "T", "rtol": "pos"}),
    # --- Chapter 4 ---------------------------------------------------------------------------
    ("lotka_volterra", lambda: dict(b=_t([1.0, 0.5]), C=_spd(0, 2),
                                    z0=_t([1e-3, 1e-3]), t=_t([0.0, 1.0])),
     {"b": "TB", "C": "TB", "z0": "TB", "t": "T"}),
    ("logistic", lambda: dict(z0=_t([1e-3, 1e-2]), zstar=_t([1.0, 2.0]),
                              zeta=_t([1.0, 0.5]), t=_t([0.0, 1.0, 2.0])),
     {"z0": "TB", "zstar": "TB", "zeta": "TB", "t": "T"}),
    ("reduce_commuting", lambda: dict(A=_commuting(), y=_g(1, 6), rtol=1e-8),
     {"A": "T", "y": "T", "rtol": "pos"}),
    ("mode_strengths", lambda: dict(M_traj=_spd(0, 3), E=torch.linalg.qr(_g(1, 3, 3))[0]),
     {"M_traj": "TB", "E": "T"}),
    ("nnls_end_state", lambda: dict(b=_t([1.0, 0.5, 0.6]), C=_spd(0, 3)),
     {"b": "T", "C": "T"}),
    ("piecewise_linear_limit", lambda: dict(b=_t([1.0, 0.5]), C=_spd(0, 2),
                                            s_grid=_t([0.0, 0.5, 1.0])),
     {"b": "T", "C": "T", "s_grid": "T"}),
    ("isotropy_constant", lambda: dict(A=resolve("isotropic_dataset")(3)[0], rtol=1e-8),
     {"A": "T", "rtol": "pos"}),
    ("isotropic_dataset", lambda: dict(p=3, seed=0), {"p": "int", "seed": "seed"}),
    ("riccati_closed_form", lambda: dict(B=_sym(0, 1, 3)[0], kappa=0.5, W0=0.1 * _g(1, 3, 2),
                                         t=_t([0.0, 0.5, 1.0])),
     {"B": "T", "kappa": "pos", "W0": "T", "t": "T"}),
    ("single_sample_solution", lambda: dict(a=_t([1.0, -0.5]), y=1.0,
                                            z0=_t([1e-3, 1e-3]),
                                            t=_t([0.0, 1.0])),
     {"a": "T", "y": "real", "z0": "T", "t": "T"}),
    # --- Chapter 5 ---------------------------------------------------------------------------
    ("two_layer_init", lambda: dict(p=3, d=4, K=2, scale=0.1, seed=0),
     {"p": "int", "d": "int", "K": "int", "scale": "pos", "seed": "seed"}),
    ("two_layer_output", lambda: dict(U=_g(0, 3, 4), V=_g(1, 4, 2), X=_g(2, 5, 3),
                                      activation="tanh", model="network"),
     {"U": "T", "V": "T", "X": "T", "activation": "choice", "model": "choice"}),
    ("train_two_layer", lambda: dict(X=_g(0, 8, 3), Y=_g(1, 8, 2), U0=0.1 * _g(2, 3, 4),
                                     V0=0.1 * _g(3, 4, 2), lr=0.1, steps=4, batch_size=4,
                                     record_every=2, optimizer="sgd"),
     {"X": "T", "Y": "T", "U0": "T", "V0": "T", "lr": "pos", "steps": "int", "batch_size": "int",
      "record_every": "int", "optimizer": "choice"}),
    ("two_layer_ensemble_init", lambda: dict(p=3, d=4, K=2, scale=0.1, seeds=[0, 1]),
     {"p": "int", "d": "int", "K": "int", "scale": "pos"}),
    ("train_two_layer_ensemble", lambda: dict(X=_g(0, 8, 3), Y=_g(1, 8, 2),
                                              U0=0.1 * _g(2, 2, 3, 4), V0=0.1 * _g(3, 2, 4, 2),
                                              lr=0.1, steps=4, batch_size=4, seeds=[0, 1],
                                              record_every=2, optimizer="sgd"),
     {"X": "T", "Y": "T", "U0": "T", "V0": "T", "lr": "pos", "steps": "int", "batch_size": "int",
      "record_every": "int", "optimizer": "choice"}),
    ("crossing_times", lambda: dict(values=torch.linspace(0, 1, 5, dtype=torch.float64)[:, None].repeat(1, 2),
                                    times=torch.arange(5.0, dtype=torch.float64), level=0.5, direction="up"),
     {"values": "TB", "times": "T", "level": "real", "direction": "choice"}),
    ("ignition_times", lambda: dict(z=torch.linspace(0, 1, 5, dtype=torch.float64)[:, None].repeat(1, 2),
                                    times=torch.arange(5.0, dtype=torch.float64), zstar=_t([1.0, 1.5]),
                                    fraction=0.5),
     {"z": "TB", "times": "T", "zstar": "T", "fraction": "frac"}),
    ("logistic_ignition_time", lambda: dict(z0=_t([1e-3]), zstar=_t([1.0]),
                                            zeta=_t([2.0]), fraction=0.5),
     {"z0": "TB", "zstar": "TB", "zeta": "TB", "fraction": "frac"}),
    ("ignition:predicted_ignition_time", lambda: dict(zeta=_t([1.0, 2.0]),
                                             eps=_t([1e-3])),
     {"zeta": "TB", "eps": "TB"}),
    ("ignition_slope", lambda: dict(eps=_t([1e-2, 1e-4, 1e-6]),
                                    t_star=_t([[1.0, 2.0], [2.0, 4.1], [3.0, 6.0]])),
     {"eps": "T", "t_star": "T"}),
    ("limit_ignition_slopes", lambda: dict(b=_t([1.0, 0.5]), C=_spd(0, 2)),
     {"b": "T", "C": "T"}),
    ("mode_fractions", lambda: dict(outputs=_g(0, 6, 2), X=_g(1, 6, 3), Y=_g(2, 6, 2)),
     {"outputs": "TB", "X": "T", "Y": "T"}),
    ("relative_gap", lambda: dict(a=_g(0, 4, 3, 1), b=_g(1, 4, 3, 1)), {"a": "T", "b": "T"}),
    ("loss_gap", lambda: dict(loss_a=_t([1.0, 0.5]), loss_b=_t([1.0, 0.4])),
     {"loss_a": "T", "loss_b": "T"}),
    ("first_exceeding", lambda: dict(steps=_t([0.0, 10.0, 20.0]),
                                     gap=_t([0.0, 0.2, 0.5]), threshold=0.1),
     {"steps": "T", "gap": "T", "threshold": "pos"}),
    ("trajectory_remainder", lambda: dict(U_traj=0.1 * _g(0, 3, 3, 4), V_traj=0.1 * _g(1, 3, 4, 1),
                                          X=_g(2, 5, 3)),
     {"U_traj": "T", "V_traj": "T", "X": "T"}),
    # --- Chapter 6 ---------------------------------------------------------------------------
    ("feature_exponent", lambda: dict(alpha1=2.0, alpha2=0.8), {"alpha1": "pos", "alpha2": "pos"}),
    ("sample_exponent", lambda: dict(gamma1=1.0, gamma2=1.0), {"gamma1": "pos", "gamma2": "pos"}),
    ("fourier_exponent", lambda: dict(theta=1.0, beta=1.0), {"theta": "pos", "beta": "pos"}),
    ("rank_one_exponent", lambda: dict(theta=1.0, beta=1.0), {"theta": "pos", "beta": "pos"}),
    ("nonproportional_exponent", lambda: dict(alpha1=2.0, alpha2=0.8, delta=0.5, eps=1e-5,
                                              k_star=100.0),
     {"alpha1": "pos", "alpha2": "pos", "delta": "nonneg", "eps": "frac", "k_star": "pos"}),
    ("logistic_loss_curve", lambda: dict(V=_t([1.0, 0.5]), zeta=_t([1.0, 0.5]),
                                         u0=_t([1e-3, 1e-3]),
                                         t=_t([0.0, 1.0, 10.0])),
     {"V": "T", "zeta": "T", "u0": "T", "t": "T"}),
    ("hurwitz_tail", lambda: dict(alpha1=2.0, K=10), {"alpha1": "pos", "K": "int0"}),
    ("power_law_modes", lambda: dict(K=10, alpha1=2.0, alpha2=0.8, eps=1e-5),
     {"K": "int", "alpha1": "pos", "alpha2": "pos", "eps": "frac"}),
    ("feature_wise_curve", lambda: dict(alpha1=2.0, alpha2=0.8, K=10, t=_t([1.0, 10.0]),
                                        eps=1e-5),
     {"alpha1": "pos", "alpha2": "pos", "K": "int", "t": "T", "eps": "frac"}),
    ("sample_wise_curve", lambda: dict(gamma1=1.0, gamma2=1.0, n=10, t=_t([1.0, 10.0])),
     {"gamma1": "pos", "gamma2": "pos", "n": "int", "t": "T"}),
    ("ignition_window", lambda: dict(u0=torch.full((200,), 1e-3, dtype=torch.float64),
                                     zeta=torch.arange(1, 201.0, dtype=torch.float64) ** -0.8, k_min=10),
     {"u0": "T", "zeta": "T", "k_min": "int"}),
    ("fit_power_law", lambda: dict(t=torch.logspace(0, 2, 20, dtype=torch.float64), loss=torch.logspace(0, 2, 20, dtype=torch.float64) ** -1.5,
                                   window=(2.0, 50.0)),
     {"t": "T", "loss": "T", "window": "T"}),
    ("rank_one_curve", lambda: dict(K=8, theta=1.0, beta=1.0, n_steps=20),
     {"K": "int", "theta": "pos", "beta": "pos", "n_steps": "int"}),
    ("spectral_data:fourier_basis", lambda: dict(K=4, N=10), {"K": "int", "N": "int"}),
    ("fourier_features", lambda: dict(K=4, N=10, theta=1.0, beta=1.0),
     {"K": "int", "N": "int", "theta": "pos", "beta": "pos"}),
    ("orthonormal_samples", _rank_one_data,
     {"n": "int", "gamma1": "pos", "gamma2": "pos", "p": "int", "seed": "seed"}),
    ("proportional_init", lambda: dict(samples=_samples(), eps=1e-3, d=2, seed=0),
     {"eps": "frac", "d": "int", "seed": "seed"}),
    ("train_square_network", lambda: dict(X=_samples().X, y=_samples().y,
                                          W0=0.01 * _g(0, 6, 2), lr=0.1, steps=4),
     {"X": "T", "y": "T", "W0": "T", "lr": "pos", "steps": "int"}),
    # --- Chapter 7 ---------------------------------------------------------------------------
    ("make_teacher", lambda: dict(p=4, k=2, norm=2.0, activation="tanh", seed=0),
     {"p": "int", "k": "int", "norm": "pos", "activation": "choice", "seed": "seed"}),
    ("online_stream", lambda: dict(teacher=resolve("make_teacher")(p=4, k=2), batch_size=2,
                                   steps=3, seed=2),
     {"batch_size": "int", "steps": "int", "seed": "seed"}),
    ("scaled_nqf_problem", lambda: dict(d=8, alpha_A=1.0, alpha_B=1.5, n=4, p=3),
     {"d": "int", "alpha_A": "real", "alpha_B": "real", "n": "int", "p": "int"}),
    ("ntk_drift", lambda: dict(problem=resolve("scaled_nqf_problem")(8, 1.0, 1.5, n=4, p=3),
                               init_scale=1e-3, loss_fraction=0.5, lr=0.05, max_steps=400),
     {"init_scale": "pos", "loss_fraction": "frac", "lr": "pos", "max_steps": "int"}),
    ("drift_scaling", lambda: dict(alpha_A=1.0, alpha_B=1.5, widths=[4, 8], n=4, p=3,
                                   max_steps=400),
     {"alpha_A": "real", "alpha_B": "real"}),
    ("ntk_regime", lambda: dict(alpha_A=1.0, alpha_B=1.5), {"alpha_A": "real", "alpha_B": "real"}),
    ("perturb_commuting", lambda: dict(E=torch.linalg.qr(_g(0, 3, 3))[0], a=_g(1, 4, 3), t=0.1),
     {"E": "T", "a": "T", "t": "nonneg"}),
    ("commutativity:joint_diagonalizer", lambda: dict(As=_sym(0, 4, 3), seed=0, sweeps=5, tol=1e-13),
     {"As": "T", "seed": "seed", "sweeps": "int", "tol": "pos"}),
    ("nearest_commuting", lambda: dict(As=_sym(0, 4, 3)), {"As": "T"}),
    ("scaled_remainder", lambda: dict(U=_g(0, 3, 4), V=_g(1, 4, 1), X=_g(2, 5, 3),
                                      scales=[1e-2, 3e-2, 1e-1]),
     {"U": "T", "V": "T", "X": "T", "scales": "T"}),
    ("best_linear_fit", lambda: dict(teacher=resolve("make_teacher")(p=4, k=2)), {}),
]

# --- bad inputs -----------------------------------------------------------------------------------

BAD_SCALARS = {
    "pos": [math.nan, math.inf, -1.0, 0.0, "1", True],
    "real": [math.nan, math.inf, "1", True],
    "nonneg": [math.nan, math.inf, -1.0, "1", True],
    "frac": [math.nan, -0.5, 0.0, 1.0, 1.5, "0.5", True],
    "int": [-5, 0, 2.5, "3", True, math.nan],
    "int0": [-5, 2.5, "3", True],
    "seed": [2.5, "3", True],
    "choice": ["bogus", 3],
    "fn": [3, "f"],
}


def _tensor_mutations(value: torch.Tensor, allow_inf: bool, batched: bool
                      ) -> list[tuple[str, Any]]:
    nan, inf = value.contiguous().clone(), value.contiguous().clone()
    nan.view(-1)[0], inf.view(-1)[0] = math.nan, math.inf
    out = [("NaN entry", nan), ("complex dtype", value.to(torch.complex128)),
           ("a string", "abc"), ("empty", value.new_zeros((0,) + tuple(value.shape[1:])))]
    if not batched:
        out.append(("extra dimension", value.unsqueeze(0)))
    if not allow_inf:
        out.append(("inf entry", inf))
    return out


def mutations(kind: str, value: Any) -> list[tuple[str, Any]]:
    """(description, bad value) pairs for an argument of ``kind`` whose valid value is ``value``."""
    if kind in ("T", "Tinf", "TB"):
        t = value if isinstance(value, torch.Tensor) else torch.as_tensor(value, dtype=torch.float64)
        return _tensor_mutations(t, kind == "Tinf", kind == "TB")
    return [(f"{kind} {v!r}", v) for v in BAD_SCALARS[kind]]


def contains_nonfinite(result: Any) -> bool:
    """Whether any number inside ``result`` (tensors, arrays, floats, tuples, dataclasses) is NaN/inf."""
    if isinstance(result, torch.Tensor):
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


def classify(fn: Callable[..., Any], kwargs: dict[str, Any], arg: str) -> tuple[str, str]:
    """Outcome of a call with a bad ``arg``: 'clear', 'wrong argument', 'silent NaN',
    'silent accept' or 'other error', with the message."""
    try:
        result = fn(**kwargs)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        if type(exc).__name__ == "DivergenceError":
            return "other error", f"DivergenceError: {msg}"
        return ("clear" if f"`{arg}`" in msg else "wrong argument"), msg
    except Exception as exc:  # noqa: BLE001 - the point is to see what escapes
        return "other error", f"{type(exc).__name__}: {exc}"
    return ("silent NaN" if contains_nonfinite(result) else "silent accept"), ""


def assert_refused(name: str, make: Callable[[], dict[str, Any]], arg: str, what: str,
                   bad: Any) -> None:
    """The call ``name(**make())`` with ``arg`` replaced by ``bad`` (described as
    ``what``) raises a clear error naming ``arg`` (see :func:`classify`)."""
    kwargs = make()
    kwargs[arg] = bad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome, message = classify(resolve(name), kwargs, arg)
    assert outcome == "clear", f"{name}({arg} = {what}): {outcome}: {message}"
