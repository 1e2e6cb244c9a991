"""Benchmark the node-wise unbiased sum (m = 2 report vectors) on many nodes.

Every node releases (noisy degree, noisy local count) with its own epsilon per column. Prints
nodes per second (best of --repeat) of ``nodewise_sum`` (estimate and variance estimate) for
two per-node functions h -- the local clustering t / C(d, 2) (several numpy operations per
point) and the product d * t (one) -- under method="direct" (3^m evaluations of h per node)
and "auto" (deduplicated report vectors where their bounding box is small), against two
references timed in the same run on the same reports:
- "debias_nd": the generic brute-force operator on all rows (estimate only; its variance
  estimate would cost as much again), summed;
- "loop": a Python loop over nodes calling debias_nd per node (on --loop-nodes nodes,
  extrapolated), i.e. what one writes without a node-wise kernel.
Prints the machine load (os.getloadavg) before and after: the machine is shared and the
timings are noisy. The last column checks agreement with debias_nd.

Usage (from the repository root):
    PYTHONPATH=. python scripts/bench_nodewise.py [--n 10000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _timing import best_of  # scripts/ is on sys.path when a script runs

from ldpgraph.estimators import debias_nd, nodewise_sum
from ldpgraph.mechanisms import DiscreteLaplace


def clustering(z: np.ndarray) -> np.ndarray:
    d = z[..., 0].astype(np.float64)
    pairs = np.where(d >= 2, d * (d - 1) * 0.5, 1.0)
    return np.where(d >= 2, z[..., 1] / pairs, 0.0)


def product(z: np.ndarray) -> np.ndarray:
    return z[..., 0] * z[..., 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000_000, help="number of nodes")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--loop-nodes", type=int, default=2000)
    args = ap.parse_args()
    n, rep = args.n, args.repeat
    eps = [0.5, 0.5]
    sens = [1.0, 60.0]

    print(f"load before: {os.getloadavg()}  (2 cores, shared)")
    rng = np.random.default_rng(0)
    deg = np.minimum(rng.zipf(2.1, size=n), 5000).astype(np.int64)
    tri = rng.binomial(deg * (deg - 1) // 2, 0.1).astype(np.int64)
    y = np.stack(
        [
            DiscreteLaplace(epsilon=eps[0], sensitivity=sens[0]).randomize(deg, rng=rng),
            DiscreteLaplace(epsilon=eps[1], sensitivity=sens[1]).randomize(tri, rng=rng),
        ],
        axis=1,
    )
    del deg, tri
    print(f"n = {n:,} nodes, m = 2, epsilon per column {eps}, sensitivity {sens}")
    print(f"{'h':<11}{'method':<10}{'M nodes/s':>10}{'debias_nd':>11}{'ratio':>8}{'loop':>10}{'ratio':>9}  agrees")
    for name, h in [("clustering", clustering), ("product", product)]:
        t_ref, ref = best_of(lambda h=h: float(debias_nd(h, y, eps, sens).sum()), 1)
        sub = y[: args.loop_nodes]

        def loop(h=h, sub=sub):
            return sum(float(debias_nd(h, row, eps, sens)) for row in sub)

        t_loop = best_of(loop, 1)[0] * n / sub.shape[0]
        for method in ["direct", "auto"]:
            t, est = best_of(lambda h=h, method=method: nodewise_sum(h, y, eps, sens, method=method), rep)
            ok = abs(est.value - ref) <= 1e-9 * max(1.0, abs(ref))
            print(
                f"{name:<11}{method:<10}{n / t / 1e6:>10.2f}{n / t_ref / 1e6:>11.2f}{t_ref / t:>8.1f}"
                f"{n / t_loop / 1e6:>10.4f}{t_loop / t:>9.0f}  {ok}"
            )
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
