"""How much the M-space closure saves (Theorem 2, Chapter 3) and what the logistic closed form
saves.

Prints the time per step of weight-space training (autograd through W W^T, cost O(p^2 d)) and of the
closed M-space update (cost O(n p^2 + p^3), independent of the width d), for p = 16, n = 64 and
d = 64 ... 16384, then the time of the logistic closed form against integrating Lotka-Volterra.

Run:  python benchmarks/bench_m_space.py   (about 30 s on 2 CPU cores)
"""

from __future__ import annotations

import torch

from nqf_mini.course.timing import best_time
from nqf_mini.dynamics import simulate_M, simulate_W
from nqf_mini.lotka_volterra import logistic, lotka_volterra

P, N = 16, 64
WIDTHS = (64, 1024, 4096, 16384)


def _problem(d: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(N, P, P, generator=gen, dtype=torch.float64)
    A = (X + X.transpose(1, 2)) / (2 * P)  # (n, p, p)
    y = torch.randn(N, generator=gen, dtype=torch.float64)  # (n,)
    W0 = torch.randn(P, d, generator=gen, dtype=torch.float64) / d**0.5  # M(0) = O(1)
    return A, y, W0


def bench_width(device: str = "cpu") -> list[tuple[int, float, float]]:
    """(d, seconds per W step, seconds per M step) for each width."""
    rows = []
    for d in WIDTHS:
        A, y, W0 = _problem(d)
        w_steps = max(10, min(300, 2_000_000 // (P * P * d)))
        t_w = best_time(lambda: simulate_W(A, y, W0, 0.01, w_steps, device=device)) / w_steps
        m_steps = 1000
        t_m = best_time(lambda: simulate_M(A, y, W0 @ W0.T, 0.01, m_steps, device=device)) / m_steps
        rows.append((d, t_w, t_m))
    return rows


def bench_logistic(device: str = "cpu") -> tuple[float, float, float]:
    """Seconds for K = 64 modes at 200 times: logistic closed form, LV integration, max rel. gap."""
    K = 64
    k = torch.arange(1, K + 1, dtype=torch.float64)
    b, c = k**-0.5, torch.ones(K, dtype=torch.float64)  # zeta = 4 b, z* = b
    z0 = 1e-8 * b
    t = torch.linspace(0.0, 40.0, 200, dtype=torch.float64)
    exact = logistic(z0, b / c, 4 * b, t)
    numeric = lotka_volterra(b, torch.diag(c), z0, t, device=device)
    gap = ((numeric - exact).abs() / exact).max().item()
    t_closed = best_time(lambda: logistic(z0, b / c, 4 * b, t), repeats=5)
    t_lv = best_time(lambda: lotka_volterra(b, torch.diag(c), z0, t, device=device), repeats=1)
    return t_closed, t_lv, gap


def main() -> None:
    torch.set_num_threads(1)
    print(f"p = {P}, n = {N}, float64, CPU, {torch.get_num_threads()} thread")
    print(f"{'d':>7} {'W step (ms)':>12} {'M step (ms)':>12} {'W / M':>8}")
    for d, t_w, t_m in bench_width():
        print(f"{d:>7} {1e3 * t_w:>12.3f} {1e3 * t_m:>12.4f} {t_w / t_m:>8.1f}")
    t_closed, t_lv, gap = bench_logistic()
    print(
        f"logistic closed form (64 modes x 200 times): {1e3 * t_closed:.3f} ms; "
        f"lotka_volterra: {1e3 * t_lv:.0f} ms ({t_lv / t_closed:.0f}x); max relative gap {gap:.1e}"
    )


if __name__ == "__main__":
    main()
