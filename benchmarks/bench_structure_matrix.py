"""Cost of extracting A(x) by autograd, relative to one evaluation of the module (Chapter 1).

structure_matrix takes the Hessian of f restricted to two units, i.e. O(p) gradient evaluations.
This script prints, for a two-layer tanh network and multi-head attention of growing size, the
time of one structure_matrix call divided by the time of one forward-and-backward pass of f.
Run: .venv/bin/python benchmarks/bench_structure_matrix.py
"""

from __future__ import annotations

import time

import torch

import nqf_mini as nqf
import nqf_mini.architectures


def seconds(fn, repeats: int) -> float:
    fn()  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def gradient_pass(arch: nqf.architectures.Architecture, x) -> None:
    W = torch.zeros(arch.p, 2, dtype=torch.float64, requires_grad=True)
    torch.autograd.grad(arch.f(W, x), W, allow_unused=True)


def main() -> None:
    torch.set_num_threads(1)
    cases = [("mlp", dict(n_in=n)) for n in (8, 32, 128)]
    cases += [("attention", dict(n_in=n, n_tokens=6, h=2, h_v=2)) for n in (4, 8)]
    print(
        f"{'architecture':>12} {'p':>5} {'structure_matrix (ms)':>22} {'ratio to one gradient':>22}"
    )
    for name, params in cases:
        arch = nqf.make_architecture(name, **params)
        x = arch.sample_input(0)
        t_A = seconds(lambda: nqf.structure_matrix(arch.f, x, arch.p), repeats=5)
        t_g = seconds(lambda: gradient_pass(arch, x), repeats=20)
        print(f"{name:>12} {arch.p:>5} {1e3 * t_A:>22.2f} {t_A / t_g:>22.1f}")


if __name__ == "__main__":
    main()
