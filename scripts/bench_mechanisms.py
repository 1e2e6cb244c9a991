"""Benchmark the noise samplers and the DLap -> Laplace / staircase conversions.

Prints, for each task, values per second (best of 3) of ldpgraph and of references measured in
the same run, and the speed ratio ldpgraph / reference. Per-value Python loops are timed on a
smaller batch and reported per value (values/s does not depend on the batch size).

Usage (from the repository root, or anywhere once ldpgraph is installed):
    PYTHONPATH=. python scripts/bench_mechanisms.py [--n 10000000] [--loop-n 100000] [--epsilon 1.0]
"""

from __future__ import annotations

import argparse
import math
import random

import numpy as np
from _timing import best_time  # scripts/ is on sys.path when a script runs
from scipy import stats

from ldpgraph.mechanisms import (
    DiscreteLaplace,
    Laplace,
    Staircase,
    to_laplace,
    to_staircase,
)


# ---------------------------------------------------------------------- per-value references
def loop_dlap(n: int, p: float, rnd: random.Random) -> list[int]:
    """Textbook per-value sampler: difference of two geometrics by inversion."""
    log_p = math.log(p)
    out = []
    for _ in range(n):
        g1 = int(math.log(1.0 - rnd.random()) / log_p)
        g2 = int(math.log(1.0 - rnd.random()) / log_p)
        out.append(g1 - g2)
    return out


def loop_laplace(n: int, scale: float, rnd: random.Random) -> list[float]:
    out = []
    for _ in range(n):
        e = rnd.expovariate(1.0) * scale
        out.append(e if rnd.random() < 0.5 else -e)
    return out


def loop_staircase(n: int, eps: float, gamma: float, delta: float, rnd: random.Random) -> list[float]:
    """Geng et al. Algorithm 1, one value at a time."""
    b = math.exp(-eps)
    p0 = gamma / (gamma + (1 - gamma) * b)
    log_b = math.log(b)
    out = []
    for _ in range(n):
        s = 1.0 if rnd.random() < 0.5 else -1.0
        g = int(math.log(1.0 - rnd.random()) / log_b)
        u = rnd.random()
        if rnd.random() < p0:
            x = g + gamma * u
        else:
            x = g + gamma + (1 - gamma) * u
        out.append(s * delta * x)
    return out


def loop_to_laplace(noisy: np.ndarray, eps: float, rnd: random.Random) -> list[float]:
    """Per-value conversion by rejection from the uniform on [-1, 1] under the bound q(0)."""
    p = math.exp(-eps)
    qmax = eps / (2 * (1 - p) ** 2) * (1 - p * p)
    out = []
    for y in noisy.tolist():
        while True:
            v = 2.0 * rnd.random() - 1.0
            a = abs(v)
            if rnd.random() * qmax <= eps / (2 * (1 - p) ** 2) * (p**a - p ** (2 - a)):
                break
        out.append(y + v)
    return out


# ---------------------------------------------------------------------- table
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--loop-n", type=int, default=100_000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    args = ap.parse_args()
    n, n_loop, eps = args.n, args.loop_n, args.epsilon
    rng = np.random.default_rng(12345)
    rnd = random.Random(12345)
    rows: list[tuple[str, str, int, float]] = []

    def add(task: str, name: str, size: int, seconds: float) -> None:
        rows.append((task, name, size, size / seconds))

    # discrete Laplace ------------------------------------------------------------
    dlap = DiscreteLaplace(epsilon=eps)
    p = dlap.p
    add("DLap", "ldpgraph DiscreteLaplace.sample", n, best_time(lambda: dlap.sample(n, rng=rng)))
    t = best_time(lambda: rng.geometric(1 - p, n) - rng.geometric(1 - p, n))
    add("DLap", "numpy geometric difference", n, t)
    n_scipy = min(n, 1_000_000)
    t = best_time(lambda: stats.dlaplace.rvs(eps, size=n_scipy, random_state=rng))
    add("DLap", "scipy.stats.dlaplace.rvs", n_scipy, t)
    t = best_time(lambda: loop_dlap(n_loop, p, rnd))
    add("DLap", "per-value Python loop", n_loop, t)

    # Laplace -------------------------------------------------------------------------
    lap = Laplace(epsilon=eps)
    add("Laplace", "ldpgraph Laplace.sample", n, best_time(lambda: lap.sample(n, rng=rng)))
    t = best_time(lambda: rng.laplace(0.0, lap.scale, n))
    add("Laplace", "numpy Generator.laplace", n, t)
    t = best_time(lambda: loop_laplace(n_loop, lap.scale, rnd))
    add("Laplace", "per-value Python loop", n_loop, t)

    # staircase -------------------------------------------------------------------
    st = Staircase(epsilon=eps)
    add("Staircase", "ldpgraph Staircase.sample (dim 1)", n, best_time(lambda: st.sample(n, rng=rng)))
    t = best_time(lambda: loop_staircase(n_loop, eps, st.gamma, 1.0, rnd))
    add("Staircase", "per-value loop of Algorithm 1", n_loop, t)
    n_d = max(1, n // 10)
    st3 = Staircase(epsilon=eps, dim=3)
    add("Staircase d=3", "ldpgraph Staircase.sample (points)", n_d, best_time(lambda: st3.sample(n_d, rng=rng)))

    # conversions -----------------------------------------------------------------
    noisy = dlap.sample(n, rng=rng)
    add("to_laplace", "ldpgraph to_laplace", n, best_time(lambda: to_laplace(noisy, eps, rng=rng)))
    t = best_time(lambda: loop_to_laplace(noisy[:n_loop], eps, rnd))
    add("to_laplace", "per-value rejection loop", n_loop, t)
    add("to_staircase", "ldpgraph to_staircase", n, best_time(lambda: to_staircase(noisy, eps, rng=rng)))
    t = best_time(lambda: dlap.randomize(noisy, rng=rng))
    add("to_staircase", "(reference) DLap randomize of the same array", n, t)

    # ratios: ldpgraph over each reference of the same task
    own_rate = {task: rate for task, name, _, rate in rows if name.startswith("ldpgraph")}
    print(f"epsilon = {eps}, best of 3, numpy {np.__version__}")
    print(f"{'task':<15}{'implementation':<46}{'n':>11}{'values/s':>14}{'ldpgraph x':>12}")
    for task, name, size, rate in rows:
        ratio = "" if name.startswith("ldpgraph") else f"{own_rate[task] / rate:.1f}"
        print(f"{task:<15}{name:<46}{size:>11,}{rate / 1e6:>12.1f} M{ratio:>12}")


if __name__ == "__main__":
    main()
