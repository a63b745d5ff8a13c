"""The architectures' batched closed forms and networks against one sample at a time (Ch. 2, 8).

For every registered architecture, on n = 256 inputs, this prints the time of
``arch.batched_forms(xs)`` divided by that of calling ``arch.expansion(x)`` on each input, and the
time of one evaluation of ``arch.predictor(xs)`` on 8 stacked runs divided by calling
``arch.f(w, x)`` for every run and input. Ratios well below 1 are the vectorised fast paths (the
MLP, attention, query-key attention and the mixture of experts); the others fall back to a loop
(forms) or torch.func.vmap (networks), and their ratio near 1 for the forms says the fallback
costs nothing extra. The last column is the cost of the argument checks of one ``arch.f`` call,
relative to the unchecked computation.
Run: python benchmarks/bench_batched_forms.py
"""

from __future__ import annotations

import time

import torch

import nqf_mini as nqf
from nqf_mini.architectures import ARCHITECTURES


def seconds(fn, repeats: int) -> float:
    fn()  # warm-up
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(repeats):
            fn()
        best = min(best, (time.process_time() - start) / repeats)
    return best


def stack(arch, n: int):
    samples = [arch.sample_input(i) for i in range(n)]
    if isinstance(samples[0], torch.Tensor):
        return torch.stack(samples), samples
    return tuple(torch.stack(parts) for parts in zip(*samples)), samples


def main() -> None:
    torch.set_num_threads(1)
    n, runs = 256, 8
    print(
        f"{'architecture':>20} {'forms: batched / loop':>22} {'network: batched / loop':>24} "
        f"{'f: checks / compute':>20}"
    )
    for name in ARCHITECTURES:
        arch = nqf.make_architecture(name)
        xs, samples = stack(arch, n)
        d = arch.n_units or 4
        W = 0.3 * torch.randn(
            runs, arch.p, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0)
        )
        t_forms = seconds(lambda: arch.batched_forms(xs), 3)
        t_loop = seconds(lambda: [arch.expansion(x) for x in samples], 1)
        predict = arch.predictor(xs)
        t_net = seconds(lambda: predict(W), 3)
        few = samples[:16]  # the loop over runs x inputs, scaled up
        t_net_loop = seconds(lambda: [arch.f(w, x) for w in W for x in few], 1) * n / len(few)
        x0 = samples[0]
        x_checked = arch.check_input(x0)
        t_checked = seconds(lambda: arch.f(W[0], x0), 200)
        t_bare = seconds(lambda: arch._f(W[0], x_checked), 200)
        print(
            f"{name:>20} {t_forms / t_loop:>22.3f} {t_net / t_net_loop:>24.3f} "
            f"{(t_checked - t_bare) / t_bare:>20.2f}"
        )


if __name__ == "__main__":
    main()
