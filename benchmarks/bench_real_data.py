"""What Chapter 10's runs on scikit-learn's digits cost, and what its three savings buy.

Prints, on the CPU with one thread, for the digits (n = 1797, p = 61, K = 10), width
d = 64 and three initial draws:

1. the NQF under full-batch gradient descent on the data against the same steps on the
   moments S_xx, S_xy alone (``train_two_layer(..., moments=True)``);
2. three runs of the tanh network trained one at a time against the same runs stacked in
   one call (``stacked=True``);
3. the stacked tanh runs in float64 against float32 (the chapter's choice; the unit tests
   check that the ignition steps agree to 1e-4).

Ratios are what to compare across machines; the seconds depend on the machine. Times are
CPU seconds of this process (one thread), the best of two calls, so that a machine shared
with other jobs still gives the same ratios.
Run:  python benchmarks/bench_real_data.py   (about 20 s of CPU)
"""

from __future__ import annotations

import time

import torch

import nqf_mini as nqf

STEPS = 60


def per_step(run) -> float:
    """CPU milliseconds per step of ``run()`` (STEPS steps), the best of two calls."""
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return 1e3 * best / STEPS


def main() -> None:
    torch.set_num_threads(1)
    X, Y = nqf.digits_data()
    draws = [nqf.two_layer_init(61, 64, 10, 1e-4, seed=s) for s in range(3)]
    U0, V0 = torch.stack([u for u, _ in draws]), torch.stack([v for _, v in draws])
    kw = dict(lr=0.5, steps=STEPS, record_every=STEPS)

    data = per_step(lambda: nqf.train_two_layer(X, Y, U0, V0, model="nqf", stacked=True, **kw))
    moments = per_step(
        lambda: nqf.train_two_layer(X, Y, U0, V0, model="nqf", stacked=True, moments=True, **kw)
    )
    print(
        f"NQF, 3 stacked runs: data {data:.2f} ms/step, moments {moments:.3f} ms/step, "
        f"ratio {data / moments:.0f}"
    )

    X32, Y32 = X.float(), Y.float()
    one = per_step(
        lambda: [nqf.train_two_layer(X32, Y32, u.float(), v.float(), **kw) for u, v in draws]
    )
    stacked = per_step(
        lambda: nqf.train_two_layer(X32, Y32, U0.float(), V0.float(), stacked=True, **kw)
    )
    print(
        f"tanh network, 3 runs in float32: one at a time {one:.2f} ms/step, stacked "
        f"{stacked:.2f} ms/step, ratio {one / stacked:.2f}"
    )

    double = per_step(lambda: nqf.train_two_layer(X, Y, U0, V0, stacked=True, **kw))
    print(
        f"tanh network, 3 stacked runs: float64 {double:.2f} ms/step, float32 "
        f"{stacked:.2f} ms/step, ratio {double / stacked:.2f}"
    )


if __name__ == "__main__":
    main()
