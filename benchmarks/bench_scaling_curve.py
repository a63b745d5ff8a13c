"""How fast the closed-form scaling-law curve is (Chapter 6).

Times E(t) = sum_k V_k expit(ln(1/u_k0 - 1) - zeta_k t)^2 (``nqf_mini.logistic_loss_curve``) for
K = 1e5 modes at T = 1e3 times, the size of the feature-wise experiment, and prints the ratio to the
goal of 1 s on the CPU (a ratio below 1 meets it). Also prints the chunk size's effect, and the time
of the same curve by the logistic closed form (``nqf_mini.logistic``, which stores the whole (T, K)
array).

Run:  python benchmarks/bench_scaling_curve.py   (about 10 s on 2 CPU cores)
"""

from __future__ import annotations

import math

import torch

from nqf_mini.course.timing import best_time
from nqf_mini.lotka_volterra import logistic
from nqf_mini.loss_curves import logistic_loss_curve, power_law_modes

K, T, GOAL_S = 100_000, 1_000, 1.0


def main() -> None:
    V, zeta, u0 = power_law_modes(K, 2.0, 0.8, eps=1e-5)
    t = torch.logspace(0.0, math.log10(3e5), T, dtype=torch.float64)
    print(f"K = {K} modes x T = {T} times, float64, CPU, {torch.get_num_threads()} thread(s)")
    for chunk in (250_000, 1_000_000, 4_000_000, 16_000_000):
        sec = best_time(
            lambda: logistic_loss_curve(V, zeta, u0, t, chunk_elements=chunk, device="cpu")
        )
        print(
            f"  chunk {chunk:>10} elements ({8 * chunk / 2**20:5.0f} MiB): {sec:.3f} s, "
            f"ratio to the {GOAL_S:g} s goal {sec / GOAL_S:.2f}"
        )
    sec_default = best_time(lambda: logistic_loss_curve(V, zeta, u0, t, device="cpu"), repeats=5)
    print(f"default chunk: {sec_default:.3f} s, ratio to goal {sec_default / GOAL_S:.2f}")
    b = zeta / 4  # the same modes through nqf_mini.logistic
    t_small = t[::10]
    sec_log = best_time(lambda: (1 - logistic(u0 * b, b, zeta, t_small) / b) ** 2 @ V, repeats=1)
    print(
        f"nqf_mini.logistic on {t_small.shape[0]} times (full (T, K) array): {sec_log:.3f} s "
        f"-> {10 * sec_log / sec_default:.1f}x the chunked curve per time"
    )
    torch.set_num_threads(1)
    sec_one = best_time(lambda: logistic_loss_curve(V, zeta, u0, t, device="cpu"))
    print(f"one thread: {sec_one:.3f} s, ratio to goal {sec_one / GOAL_S:.2f}")


if __name__ == "__main__":
    main()
