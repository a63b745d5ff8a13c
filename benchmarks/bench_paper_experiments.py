"""The cost of the paper's experiments (Chapters 8 and 9), and what vectorising saves.

Prints, on the CPU with one thread:

1. per training step, a network evaluated sample by sample under torch.func.vmap
   (``arch.f``) against the same network written for all samples at once
   (``nqf.module_pair(arch)[0]``), and the NQF from its stacked closed forms;
2. R = 4 runs trained one at a time against the same runs stacked in one call
   (``train_module(..., stacked=True)``);
3. the wall time of each grid of the two chapters at its own size (the Fig. 2 grid,
   the Fig. 6 right runs, the Fig. 8 runs), so that a change in their cost shows here.

Ratios are what to compare across machines; the seconds depend on the machine.
Run:  python benchmarks/bench_paper_experiments.py   (about 40 s on 2 CPU cores)
"""

from __future__ import annotations

import torch

import nqf_mini as nqf
from nqf_mini import deep
from nqf_mini.course.timing import best_time

N, STEPS = 64, 100


def _inputs(arch, n: int = N):
    """n seeded sample inputs of the architecture, stacked along a leading axis."""
    samples = [arch.sample_input(i) for i in range(n)]
    if isinstance(samples[0], torch.Tensor):
        return torch.stack(samples)
    return tuple(torch.stack(parts) for parts in zip(*samples))


ARCHS = {
    "MLP (d = 32)": (nqf.make_architecture("mlp", n_in=8), 32),
    "attention (d = 8)": (nqf.make_architecture("attention", n_in=4, n_tokens=6), 8),
    "MoE, tanh gate (d = 16)": (nqf.make_architecture("moe", n_in=6, gate="tanh"), 16),
    "query-key attention (d = 16)": (
        nqf.make_architecture("qk_attention", n_in=8, n_tokens=8, n_heads=16),
        16,
    ),
}


def per_step(f, xs, y, W0, stacked: bool = False) -> float:
    """Seconds per gradient step of train_module (full batch)."""
    run = lambda: nqf.train_module(
        f, xs, y, W0, lr=1e-3, steps=STEPS, stacked=stacked, record_every=STEPS, record_M=False
    )
    return best_time(run, repeats=2) / STEPS


def bench_vectorised() -> None:
    print(
        "1. seconds per step, one run of 64 samples: vmap of arch.f | vectorised "
        "network | NQF (closed forms)"
    )
    for name, (arch, d) in ARCHS.items():
        xs = _inputs(arch)
        gen = torch.Generator().manual_seed(1)
        y = torch.randn(N, generator=gen, dtype=torch.float64)
        W0 = 0.1 * torch.randn(arch.p, d, generator=gen, dtype=torch.float64)
        net, quad = nqf.module_pair(arch)
        t_vmap, t_net, t_nqf = (per_step(f, xs, y, W0) for f in (arch.f, net, quad))
        print(
            f"   {name:<30} {t_vmap * 1e3:7.2f} ms | {t_net * 1e3:6.2f} ms | "
            f"{t_nqf * 1e3:6.2f} ms   vmap / vectorised = {t_vmap / t_net:5.1f}"
        )


def bench_stacked() -> None:
    print("2. R = 4 runs: one at a time | stacked, seconds per step of all four")
    for name, (arch, d) in ARCHS.items():
        xs = _inputs(arch)
        gen = torch.Generator().manual_seed(2)
        Y = torch.randn(4, N, generator=gen, dtype=torch.float64)
        W0 = 0.1 * torch.randn(4, arch.p, d, generator=gen, dtype=torch.float64)
        net = nqf.module_pair(arch)[0]
        t_one = sum(per_step(net, xs, Y[r], W0[r]) for r in range(4))
        t_all = per_step(net, xs, Y, W0, stacked=True)
        print(
            f"   {name:<30} {t_one * 1e3:7.2f} ms | {t_all * 1e3:6.2f} ms   "
            f"speed-up {t_one / t_all:4.1f}"
        )


def bench_grids() -> None:
    import time

    print("3. wall time of the chapters' grids (train_module calls only)")
    start = time.perf_counter()
    for _name, (arch, d) in list(ARCHS.items())[:3]:  # Fig. 2: 3 x 3 x 2 calls
        xs = _inputs(arch)
        gen = torch.Generator().manual_seed(3)
        Y = torch.randn(4, N, generator=gen, dtype=torch.float64)
        W0 = 1e-3 * torch.randn(4, arch.p, d, generator=gen, dtype=torch.float64)
        for kw in (
            dict(optimizer="sgd", lr=0.05),
            dict(optimizer="sgd", lr=0.05, batch_size=8),
            dict(optimizer="adam", lr=0.003),
        ):
            for f in nqf.module_pair(arch):
                nqf.train_module(
                    f, xs, Y, W0, steps=600, stacked=True, record_every=10, record_M=False, **kw
                )
    fig2 = time.perf_counter() - start
    start = time.perf_counter()  # Fig. 6 right: a stream
    arch = ARCHS["query-key attention (d = 16)"][0]
    pool = _inputs(arch, 2000 * 8)
    pool_y = torch.randn(2000 * 8, dtype=torch.float64)
    test = _inputs(arch, 512)
    test_y = torch.randn(512, dtype=torch.float64)
    W0 = 1e-3 * torch.randn(3, arch.p, 16, dtype=torch.float64)

    def stream(t):
        s = slice(8 * t, 8 * t + 8)
        return tuple(v[s] for v in pool), pool_y[s]

    for f in nqf.module_pair(arch):
        nqf.train_module(
            f,
            test,
            test_y,
            W0,
            lr=0.1,
            steps=2000,
            stream=stream,
            stacked=True,
            record_every=25,
            record_M=False,
        )
    fig6 = time.perf_counter() - start
    start = time.perf_counter()
    att_xs = (torch.randn(N, 4, dtype=torch.float64), torch.randn(N, 4, 6, dtype=torch.float64))
    for model, xs in [
        (deep.DeepMLP(n_in=8, widths=(16, 16, 16)), torch.randn(N, 8, dtype=torch.float64)),
        (deep.DeepAttention(), att_xs),
    ]:
        Y = torch.randn(4, N, dtype=torch.float64)
        theta0 = torch.stack([model.init(0.05, seed=s) for s in range(4)])
        for kw in (
            dict(optimizer="sgd", lr=0.1),
            dict(optimizer="sgd", lr=0.1, batch_size=8),
            dict(optimizer="adam", lr=0.003),
        ):
            for kind in deep.KINDS:
                nqf.train_module(
                    model.module(kind),
                    xs,
                    Y,
                    theta0,
                    steps=600,
                    stacked=True,
                    record_every=10,
                    record_M=False,
                    **kw,
                )
    fig8 = time.perf_counter() - start
    print(f"   Fig. 2 grid (18 calls of 4 stacked runs, 600 steps): {fig2:5.1f} s")
    print(f"   Fig. 6 right (2 calls of 3 stacked runs, 2000 steps): {fig6:5.1f} s")
    print(f"   Fig. 8 runs (18 calls of 4 stacked runs, 600 steps): {fig8:5.1f} s")
    print(f"   Fig. 8 / Fig. 2: {fig8 / fig2:4.1f}")


def main() -> None:
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    bench_vectorised()
    bench_stacked()
    bench_grids()


if __name__ == "__main__":
    main()
