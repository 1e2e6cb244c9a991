"""Benchmark the node-wise unbiased sum (m = 2 report vectors) on many nodes.

Every node releases (noisy degree, noisy local count) with its own epsilon per column. Prints
nodes per second (best of --repeat) of ``nodewise_sum`` (estimate and variance estimate) for
two per-node functions h -- the local clustering t / C(d, 2) (several numpy operations per
point) and the product d * t (one) -- under method="direct" (3^m evaluations of h per node)
and "auto" (deduplicated report vectors: one bincount over the bounding box where it is
small, else over a core box of central quantiles with the rows outside it evaluated
directly), on two report sets:
- "zipf": degrees ~ Zipf(2.1) capped at 5000, counts ~ Bin(C(d, 2), 0.1), DLap noise (the
  shape of real graphs: most nodes have small degrees, so few distinct report vectors);
- "spread": both columns uniform over 10^6 values (nearly all distinct: "auto" must fall
  back to "direct" at no cost).
Rates are given per wall second and per CPU second (user + sys of this process): on a shared
machine the wall rate mostly measures the other processes. References timed in the same run
on the same reports:
- "debias_nd": the generic brute-force operator on all rows (estimate only; its variance
  estimate would cost as much again), summed;
- "loop": a Python loop over nodes calling debias_nd per node (on --loop-nodes nodes,
  extrapolated), i.e. what one writes without a node-wise kernel.
Prints the machine load (os.getloadavg) before and after. The last column checks agreement
with debias_nd (relative 1e-9). Target (issue 10): >= 20 M nodes/s for m = 2 on 10^7 nodes.

Usage (from the repository root):
    PYTHONPATH=. python scripts/bench_nodewise.py [--n 10000000] [--repeat 3] [--data zipf spread]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _timing import measure, verdict  # scripts/ is on sys.path when a script runs

from ldpgraph.estimators import debias_nd, nodewise_sum
from ldpgraph.mechanisms import DiscreteLaplace


def clustering(z: np.ndarray) -> np.ndarray:
    d = z[..., 0].astype(np.float64)
    pairs = np.where(d >= 2, d * (d - 1) * 0.5, 1.0)
    return np.where(d >= 2, z[..., 1] / pairs, 0.0)


def product(z: np.ndarray) -> np.ndarray:
    return z[..., 0] * z[..., 1]


def reports(kind: str, n: int, eps: list[float], sens: list[float], rng: np.random.Generator) -> np.ndarray:
    if kind == "zipf":
        deg = np.minimum(rng.zipf(2.1, size=n), 5000).astype(np.int64)
        tri = rng.binomial(deg * (deg - 1) // 2, 0.1).astype(np.int64)
    else:
        deg = rng.integers(0, 10**6, size=n)
        tri = rng.integers(0, 10**6, size=n)
    return np.stack(
        [
            DiscreteLaplace(epsilon=eps[0], sensitivity=sens[0]).randomize(deg, rng=rng),
            DiscreteLaplace(epsilon=eps[1], sensitivity=sens[1]).randomize(tri, rng=rng),
        ],
        axis=1,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000_000, help="number of nodes")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--loop-nodes", type=int, default=2000)
    ap.add_argument("--data", nargs="+", choices=["zipf", "spread"], default=["zipf", "spread"])
    args = ap.parse_args()
    n, rep = args.n, args.repeat
    eps = [0.5, 0.5]
    sens = [1.0, 60.0]

    print(f"load before: {os.getloadavg()}  (2 cores, shared)")
    print(f"n = {n:,} nodes, m = 2, epsilon per column {eps}, sensitivity {sens}")
    target = 20.0
    for kind in args.data:
        y = reports(kind, n, eps, sens, np.random.default_rng(0))
        print(f"\n{kind}: {np.unique(y[: min(n, 10**6)], axis=0).shape[0]:,} distinct rows in the first 10^6")
        print(
            f"{'h':<11}{'method':<8}{'M/s wall':>9}{'M/s CPU':>9}{'debias_nd':>10}{'ratio':>7}"
            f"{'loop':>9}{'ratio':>8}  agrees  target"
        )
        for name, h in [("clustering", clustering), ("product", product)]:
            ref_t = measure(lambda h=h, y=y: float(debias_nd(h, y, eps, sens).sum()), 1)
            sub = y[: args.loop_nodes]

            def loop(h=h, sub=sub):
                return sum(float(debias_nd(h, row, eps, sens)) for row in sub)

            t_loop = measure(loop, 1).cpu * n / sub.shape[0]
            for method in ["direct", "auto"]:
                t = measure(lambda h=h, method=method, y=y: nodewise_sum(h, y, eps, sens, method=method), rep)
                est, ref = t.result, ref_t.result
                ok = abs(est.value - ref) <= 1e-9 * max(1.0, abs(ref))
                cpu_rate = n / t.cpu / 1e6
                print(
                    f"{name:<11}{method:<8}{n / t.wall / 1e6:>9.2f}{cpu_rate:>9.2f}"
                    f"{n / ref_t.cpu / 1e6:>10.2f}{ref_t.cpu / t.cpu:>7.1f}"
                    f"{n / t_loop / 1e6:>9.4f}{t_loop / t.cpu:>8.0f}  {str(ok):<6}  "
                    f"{verdict(cpu_rate >= target) if method == 'auto' else ''}"
                )
        del y
    print(f"\nratios are of CPU seconds; load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
