"""Mutation testing of ``nqf_mini``: does a wrong line of the science fail a unit test?

Each mutant below replaces one piece of code by a plausible mistake (a sign, a factor, an index,
a dropped term, a weakened check). The 32 mutants ``M01``-``M32`` are those of the reliability
review of 0.2.0, rewritten for the current code; ``N01``... are new ones on the code added since
(the argument contract, the batched forms on the architecture classes, the round-off
tolerances, Chapter 10's staircase, whitening and commutation measures). For each mutant, the
package and the unit tests are copied into a scratch folder (never the working tree), the one
replacement is made there, and the named unit test files run with ``pytest -x``: the mutant is
*killed* when they fail, and *survives* when they pass. A replacement whose original text is not
found is reported as *stale* (the code moved: update the mutant). The script prints the table and
exits 1 if any mutant survived or is stale.

Run from the repository root: ``python -m scripts.mutation_test`` (``--only M19 N03`` for a
few; about 15 minutes for all on two busy cores).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = [
    "nqf_mini",
    "tests/__init__.py",
    "tests/conftest.py",
    "tests/unit",
    "pyproject.toml",
    "README.md",
]


@dataclass(frozen=True)
class Mutant:
    """One replacement ``old`` -> ``new`` in ``path`` (every occurrence), judged by ``tests``."""

    id: str
    path: str
    old: str
    new: str
    what: str
    tests: tuple[str, ...]


def _m(id: str, path: str, old: str, new: str, what: str, *tests: str) -> Mutant:
    return Mutant(id, f"nqf_mini/{path}", old, new, what, tuple(f"tests/unit/{t}" for t in tests))


MUTANTS = [
    _m(
        "M01",
        "architectures/mlp.py",
        "torch.cat([x, x.new_ones(1)])",
        "torch.cat([x, x.new_zeros(1)])",
        "MLP trainable bias: [x; 1] -> [x; 0] in A",
        "test_architectures.py",
    ),
    _m(
        "M02",
        "architectures/cnn.py",
        "Pi.sum(dim=1) if self.readout",
        "Pi.mean(dim=1) if self.readout",
        "CNN global readout: sum over patches -> mean",
        "test_architectures.py",
    ),
    _m(
        "M03",
        "architectures/attention.py",
        "return (X - X.mean(dim=1, keepdim=True)) @ y / X.shape[1]",
        "return X @ y / X.shape[1]",
        "QK label covariance loses its centring",
        "test_architectures.py",
    ),
    _m(
        "M04",
        "architectures/moe.py",
        "lambda d: -1.0 / d**2",
        "lambda d: -1.0 / d",
        "softmax gate B: -1/d^2 -> -1/d",
        "test_architectures.py",
    ),
    _m(
        "M05",
        "architectures/factorisation.py",
        "return offdiag(x.T)",
        "return offdiag(x)",
        "asymmetric sensing: O(X^T) -> O(X)",
        "test_architectures.py",
    ),
    _m(
        "M06",
        "quadratic_form.py",
        "A=(P - Q) / 2",
        "A=(P + Q) / 2",
        "general form: A = (P - Q)/2 -> (P + Q)/2",
        "test_quadratic_form.py",
    ),
    _m(
        "M07",
        "quadratic_form.py",
        'torch.einsum("...pq,qp->...", A, M)',
        'torch.einsum("...pq,pq->...", A, M)',
        "nqf_value: Tr[M A] -> sum M * A (transpose)",
        "test_quadratic_form.py",
    ),
    _m(
        "M08",
        "dynamics.py",
        "alpha=-2 * lr / b",
        "alpha=-4 * lr / b",
        "M-space step: -2 lr G -> -4 lr G",
        "test_dynamics.py",
    ),
    _m(
        "M09",
        "dynamics.py",
        "lr**2 * self.width * torch.outer(h, h)",
        "lr**2 * torch.outer(h, h)",
        "general form drops the width d in lr^2 d h h^T",
        "test_dynamics.py",
    ),
    _m(
        "M10",
        "dynamics.py",
        "h = h + 2 * inv_b * torch.einsum",
        "h = h + inv_b * torch.einsum",
        "h drops the 2 in 2 B m",
        "test_dynamics.py",
    ),
    _m(
        "M11",
        "training.py",
        "(mi / (1 - b1**t))",
        "mi",
        "Adam loses its first-moment bias correction",
        "test_dynamics.py",
    ),
    _m(
        "M12",
        "training.py",
        "self.beta * b + g for b, g",
        "self.beta * b + (1 - self.beta) * g for b, g",
        "momentum buffer: beta b + g -> beta b + (1 - beta) g",
        "test_dynamics.py",
    ),
    _m(
        "M13",
        "_ode.py",
        "k3 = rhs(_axpy(state, h / 2, k2))",
        "k3 = rhs(_axpy(state, h, k2))",
        "RK4: k3 with step h instead of h/2",
        "test_dynamics.py",
        "test_lotka_volterra.py",
    ),
    _m(
        "M14",
        "lotka_volterra.py",
        "return (4.0 * (b - (C @",
        "return (2.0 * (b - (C @",
        "Lotka-Volterra velocity: 4 -> 2",
        "test_lotka_volterra.py",
    ),
    _m(
        "M15",
        "lotka_volterra.py",
        "(zstar / z0 - 1.0)",
        "(zstar / z0 + 1.0)",
        "logistic: (z*/z0 - 1) -> (z*/z0 + 1)",
        "test_lotka_volterra.py",
    ),
    _m(
        "M16",
        "riccati.py",
        "math.log(4.0 * kappa)",
        "math.log(2.0 * kappa)",
        "Riccati: log(4 kappa) -> log(2 kappa)",
        "test_riccati.py",
    ),
    _m(
        "M17",
        "ignition.py",
        "reached = sign * (x - lev) >= 0",
        "reached = sign * (x - lev) > 0",
        "crossing: >= level -> > level",
        "test_ignition.py",
    ),
    _m(
        "M18",
        "ignition.py",
        "- math.log(1.0 / fraction - 1.0)) / zeta",
        "+ math.log(1.0 / fraction - 1.0)) / zeta",
        "logistic_ignition_time: sign of the ln(1/f - 1) term",
        "test_ignition.py",
    ),
    _m(
        "M19",
        "ignition.py",
        "intercept = tt.mean(0) - slope * x.mean()",
        "intercept = tt.mean(0) + slope * x.mean()",
        "ignition_slope intercept: - -> +",
        "test_ignition.py",
    ),
    _m(
        "M20",
        "exponents.py",
        "(theta + beta - 0.5)",
        "(theta + beta + 0.5)",
        "rank-one exponent: theta + beta - 1/2 -> + 1/2",
        "test_scaling.py",
    ),
    _m(
        "M21",
        "power_law_fit.py",
        "max(m - 2, 1)",
        "max(m - 1, 1)",
        "stderr degrees of freedom: m - 2 -> m - 1",
        "test_scaling.py",
    ),
    _m(
        "M22",
        "loss_curves.py",
        "torch.tensor(K + 1.0, dtype=torch.float64)",
        "torch.tensor(K + 0.0, dtype=torch.float64)",
        "Hurwitz tail: zeta(a, K + 1) -> zeta(a, K)",
        "test_scaling.py",
    ),
    _m(
        "M23",
        "loss_curves.py",
        "float(t_k[k_min - 1])",
        "float(t_k[k_min])",
        "ignition_window: t_k[k_min - 1] -> t_k[k_min]",
        "test_scaling.py",
    ),
    _m(
        "M24",
        "rank_one.py",
        "rhs = w + h * (c + q * (q @ c))",
        "rhs = w + h * (c - q * (q @ c))",
        "rank-one: c + q (q.c) -> c - q (q.c)",
        "test_scaling.py",
    ),
    _m(
        "M25",
        "compression.py",
        "return P[:, :r] * s[:r],",
        "return P[:, :r] * s[:r].sqrt(),",
        "compress_rank: P S -> P sqrt(S)",
        "test_compression.py",
    ),
    _m(
        "M26",
        "commutativity.py",
        "(prod - prod.transpose(0, 1))",
        "(prod - prod.transpose(2, 3))",
        "pairwise commutators: A_b A_a -> (A_a A_b)^T",
        "test_commutativity.py",
    ),
    _m(
        "M27",
        "remainder.py",
        "relative_gap(torch.stack(Q), torch.stack(F))",
        "relative_gap(torch.stack(F), torch.stack(Q))",
        "trajectory_remainder normalised by the NQF instead of the network",
        "test_remainder_trajectory.py",
    ),
    _m(
        "M28",
        "ntk.py",
        "* init_scale / math.sqrt(d)",
        "* init_scale / d",
        "NTK start: scale / sqrt(d) -> scale / d",
        "test_ntk.py",
    ),
    _m(
        "M29",
        "teacher_student.py",
        "loss = 0.5 * float(Ey2 - beta @ beta)",
        "loss = float(Ey2 - beta @ beta)",
        "best linear loss drops its 1/2",
        "test_teacher_student.py",
    ),
    _m(
        "M30",
        "agreement.py",
        "loss_floor * l_nqf[0]",
        "loss_floor * l_nqf[-1]",
        "agreement loss floor: L_nqf[0] -> L_nqf[-1]",
        "test_agreement_window.py",
    ),
    _m(
        "M31",
        "deep.py",
        "z = act(c * (z @ Ws[k].transpose(-1, -2) @ Ws[k + 1].transpose(-1, -2)))",
        "z = c * (z @ Ws[k].transpose(-1, -2) @ Ws[k + 1].transpose(-1, -2))",
        "layer-wise NQF drops phi between blocks",
        "test_deep.py",
    ),
    _m(
        "M32",
        "architectures/attention.py",
        'torch.einsum("snN,sN->sn", X - X.mean(dim=2, keepdim=True), y) / X.shape[2]',
        'torch.einsum("snN,sN->sn", X - X.mean(dim=2, keepdim=True), y) / (X.shape[2] - 1)',
        "batched QK covariance: / N -> / (N - 1)",
        "test_architectures.py",
        "test_surrogates.py",
    ),
    # --- new code: the argument contract, batched forms, round-off tolerances ----------------
    _m(
        "N01",
        "_validate.py",
        "if value.dtype == torch.bool:",
        "if False:",
        "bool tensors accepted again",
        "test_input_contract.py",
    ),
    _m(
        "N02",
        "_validate.py",
        "    if need > have:",
        "    if need > 1e6 * have:",
        "the memory check lets 10**12-sized requests through",
        "test_input_contract.py",
    ),
    _m(
        "N03",
        "_validate.py",
        'name, value, minimum, MAX_STEPS, " (split',
        'name, value, minimum, None, " (split',
        "iteration counts unbounded (steps = 10**12 runs)",
        "test_validation_and_device.py",
    ),
    _m(
        "N04",
        "device.py",
        '            return "CUDA is not available on this machine"',
        "            return None",
        "device='cuda' accepted without CUDA",
        "test_validation_and_device.py",
    ),
    _m(
        "N05",
        "architectures/base.py",
        "W.shape[-2] != self.p or",
        "False or",
        "architecture methods accept W with the wrong number of rows",
        "test_architectures.py",
    ),
    _m(
        "N06",
        "architectures/mlp.py",
        "[xs, xs.new_ones(xs.shape[0], 1)], dim=1)",
        "[xs, xs.new_zeros(xs.shape[0], 1)], dim=1)",
        "batched MLP forms: [x; 1] -> [x; 0]",
        "test_architectures.py",
    ),
    _m(
        "N07",
        "architectures/moe.py",
        "return (gates * (xs @ W[..., self.n_in:, :])).sum(-1)",
        "return (gates * (xs @ W[..., :self.n_in, :])).sum(-1)",
        "batched MoE: the experts read the gate weights",
        "test_architectures.py",
    ),
    _m(
        "N08",
        "architectures/attention.py",
        "attn = bt.softmax_last(scores / math.sqrt(arch.h))",
        "attn = bt.softmax_last(scores)",
        "batched attention drops 1/sqrt(h)",
        "test_architectures.py",
    ),
    _m(
        "N09",
        "lotka_volterra.py",
        "live = [k for k in range(K) if not bool(noise[k])]",
        "live = list(range(K))",
        "nnls_end_state treats round-off as a mode",
        "test_lotka_volterra.py",
    ),
    _m(
        "N10",
        "_validate.py",
        "    torch.float32: 1e-4,\n    torch.float16",
        "    torch.float32: 1e-8,\n    torch.float16",
        "float32 data held to float64's round-off",
        "test_riccati.py",
    ),
    _m(
        "N11",
        "riccati.py",
        "log_max = math.log(torch.finfo(B.dtype).max)",
        "log_max = math.log(torch.finfo(torch.float64).max)",
        "Riccati overflow message quotes float64's limit for float32",
        "test_riccati.py",
    ),
    _m(
        "N12",
        "lotka_volterra.py",
        "z0, zstar, zeta, t = (v.double() for v in (z0, zstar, zeta, t))",
        "z0, zstar, zeta, t = (v for v in (z0, zstar, zeta, t))",
        "logistic computes in the input's float32",
        "test_ignition.py",
    ),
    _m(
        "N13",
        "_modules.py",
        '    require_finite_output(out.detach(), f"f(W, x) at W of shape',
        '    (lambda *a: None)(out.detach(), f"f(W, x) at W of shape',
        "a module that evaluates to NaN accepted",
        "test_quadratic_form.py",
        "test_input_contract.py",
    ),
    _m(
        "N14",
        "ignition.py",
        "return torch.log(1.0 / eps) / zeta",
        "return torch.log(eps) / zeta",
        "predicted_ignition_time: ln(1/eps) -> ln(eps)",
        "test_ignition.py",
    ),
    _m(
        "N15",
        "module_training.py",
        "        record = {0, steps}",
        "        record = set()",
        "train_module(record_every=None) records nothing (the KeyError of 0.2.0)",
        "test_train_module.py",
    ),
    # Chapter 10: the staircase on real data, whitening, the two commutation measures
    _m(
        "N16",
        "staircase.py",
        "rate = 2.0 * torch.log1p(lr * phi1 * modes.sigma)",
        "rate = torch.log1p(lr * phi1 * modes.sigma)",
        "predict_staircase: growth per step (1 + lr phi' sigma) instead of its square",
        "test_staircase.py",
    ),
    _m(
        "N17",
        "staircase.py",
        "zstar = 2.0 * modes.sigma / (phi1 * modes.lam)",
        "zstar = modes.sigma / (phi1 * modes.lam)",
        "capacity z*_k loses its factor 2",
        "test_staircase.py",
    ),
    _m(
        "N18",
        "staircase.py",
        "v = a[:, k] - basis @ (basis.T @ a[:, k])",
        "v = a[:, k]",
        "no competition for units (z_eff = z0 while units remain)",
        "test_staircase.py",
    ),
    _m(
        "N19",
        "staircase.py",
        "lam = (R * SR).sum(0)",
        "lam = (R * R).sum(0)",
        "lambda_k = |r_k|^2 = 1 instead of r_k^T S_xx r_k",
        "test_staircase.py",
    ),
    _m(
        "N20",
        "staircase.py",
        "V[self.order] = 0.5 * self.modes.canonical.square()",
        "V[:] = 0.5 * self.modes.canonical.square()",
        "reduced-rank levels: the j-th drop on mode j, not on the j-th to ignite",
        "test_staircase.py",
    ),
    _m(
        "N21",
        "staircase.py",
        "torch.sigmoid(torch.outer(s, self.rate) - logit)",
        "torch.sigmoid(0.5 * torch.outer(s, self.rate) - logit)",
        "Staircase.fractions grows at half the rate of the predicted steps",
        "test_staircase.py",
    ),
    _m(
        "N22",
        "real_data.py",
        "e.pow(-0.5 * strength)",
        "e.pow(-strength)",
        "whiten: S_xx^-s instead of S_xx^-s/2",
        "test_real_data.py",
    ),
    _m(
        "N23",
        "real_data.py",
        "    X = X - X.mean(axis=0)\n",
        "",
        "digits_data: pixels not centred",
        "test_real_data.py",
    ),
    _m(
        "N24",
        "commutativity.py",
        "(1.0 - cos.square()).clamp_min(0.0).sqrt()",
        "(1.0 - cos.square()).clamp_min(0.0)",
        "mlp_commutators: sin^2(theta) instead of sin(theta)",
        "test_real_data.py",
        "test_commutativity.py",
    ),
    _m(
        "N25",
        "commutativity.py",
        "return commutator_norm(X.T @ X / n, Sxy @ Sxy.T)",
        "return commutator_norm(X.T @ X / n, Sxy.T @ Sxy if Sxy.shape[0] == Sxy.shape[1] "
        "else Sxy @ Sxy.T)",
        "covariance_commutator: S_yx S_xy where S_xy S_yx is meant (square S_xy)",
        "test_real_data.py",
    ),
    _m(
        "N26",
        "staircase.py",
        "leakage = (SR - R * lam).norm(dim=0) / lam",
        "leakage = (SR - R * lam).norm(dim=0)",
        "leakage not relative to lambda_k",
        "test_staircase.py",
    ),
]


def _copy(scratch: Path) -> None:
    for item in COPIED:
        src, dst = ROOT / item, scratch / item
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst)


def run(mutant: Mutant, scratch: Path, timeout: float) -> tuple[str, float]:
    """Apply ``mutant`` in ``scratch``, run its tests, restore; returns (outcome, seconds)."""
    target = scratch / mutant.path
    original = target.read_text()
    if mutant.old not in original:
        return "stale", 0.0
    target.write_text(original.replace(mutant.old, mutant.new))
    env = {
        **os.environ,
        "PYTHONPATH": str(scratch),
        "NQF_DEVICE": "cpu",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", *mutant.tests],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        outcome = (
            "survived"
            if proc.returncode == 0
            else ("killed" if proc.returncode == 1 else f"error (pytest exit {proc.returncode})")
        )
    except subprocess.TimeoutExpired:
        outcome = "killed (timeout)"
    finally:
        target.write_text(original)
    return outcome, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="mutant ids to run (default: all)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant")
    args = parser.parse_args()
    chosen = [m for m in MUTANTS if not args.only or m.id in args.only]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="nqf-mutants-") as tmp:
        scratch = Path(tmp)
        _copy(scratch)
        print(f"{'id':<4} {'result':<17} {'s':>5}  {'module':<28} mutation", flush=True)
        for mutant in chosen:
            outcome, seconds = run(mutant, scratch, args.timeout)
            bad += outcome in ("survived", "stale") or outcome.startswith("error")
            module = mutant.path.removeprefix("nqf_mini/")
            print(
                f"{mutant.id:<4} {outcome:<17} {seconds:5.0f}  {module:<28} {mutant.what}",
                flush=True,
            )
    killed = sum(1 for _ in chosen) - bad
    print(f"{killed} of {len(chosen)} mutants killed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
