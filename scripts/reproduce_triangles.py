"""Relative RMSE of every triangle method (and transitivity) on Facebook and Email-Enron.

For each graph, statistic (``triangles``, ``transitivity``), method of the registry and eps in
{0.5, 1, 2} it prints the analytic relative RMSE (``analytic_rmse / truth``: exact for the
triangle count, delta method for transitivity) and the Monte-Carlo one,
sqrt(mean((estimate - truth)^2)) / truth over N independent trials, with its 95% chi-square
interval and the MC/analytic ratio. ``rr-triangles`` on Email-Enron is refused by its memory
guard (its noisy graph would hold ~1e8 edges): only the analytic value is printed.

Seeds: one root seed, one ``SeedSequence.spawn`` child per cell. Trials of ``rr-triangles``
cost ~0.5 s each on Facebook (one noisy graph each), the two-round ones ~0.03 s.

Usage (from the repository root):

    LDPGRAPH_DATA=... PYTHONPATH=. python scripts/reproduce_triangles.py [--trials 200] [--rr-trials 40]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(__file__))
from _timing import load_note  # noqa: E402

from ldpgraph.datasets import resolve_graph  # noqa: E402
from ldpgraph.run.method import get_method, method_names  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0)
GRAPHS = ("facebook", "email-enron")
STATISTICS = ("triangles", "transitivity")


def cell(method, g, statistic, eps, n_trials, seed):
    """(analytic relative RMSE, MC relative RMSE or None, 95% interval, N) of one cell."""
    truth = method.truth(g, statistic, None)
    analytic = method.analytic_rmse(g, statistic, None, eps)
    a = analytic / abs(truth) if analytic is not None else math.nan
    try:
        x = method.estimate_trials(g, statistic, None, eps, n_trials, rng=seed)
    except MemoryError:
        return a, None, None, 0
    mse = float(np.mean((x - truth) ** 2))
    lo, hi = (math.sqrt(mse * n_trials / c) / abs(truth) for c in stats.chi2.ppf([0.975, 0.025], n_trials))
    return a, math.sqrt(mse) / abs(truth), (lo, hi), n_trials


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200, help="trials per cell of the two-round methods")
    ap.add_argument("--rr-trials", type=int, default=40, help="trials per cell of rr-triangles")
    ap.add_argument("--graphs", nargs="+", default=list(GRAPHS))
    ap.add_argument("--statistics", nargs="+", default=list(STATISTICS))
    ap.add_argument("--seed", type=int, default=20261201)
    args = ap.parse_args()
    print(load_note(), "(shared machine)")
    root = np.random.SeedSequence(args.seed)
    for label in args.graphs:
        g = resolve_graph(label)
        for statistic in args.statistics:
            names = method_names(statistic)
            children = iter(root.spawn(len(names) * len(EPSILONS)))
            print(f"\n### {label} ({g.n_nodes:,} nodes): relative RMSE of {statistic}, "
                  "Monte-Carlo [95% CI] (analytic; MC/analytic)\n")
            print("| method | N | " + " | ".join(f"eps={e:g}" for e in EPSILONS) + " |")
            print("|---|---:|" + "---|" * len(EPSILONS))
            for name in names:
                p = get_method(name)
                p.prepare(g)
                n = args.rr_trials if name == "rr-triangles" else args.trials
                t0 = time.perf_counter()
                cells, used = [], 0
                for eps in EPSILONS:
                    a, mc, ci, used_here = cell(p, g, statistic, eps, n, next(children))
                    used = max(used, used_here)
                    if mc is None:
                        cells.append(f"refused (memory) ({a:.3g})")
                    else:
                        cells.append(f"{mc:.3g} [{ci[0]:.3g}, {ci[1]:.3g}] ({a:.3g}; {mc / a:.2f})")
                dt = time.perf_counter() - t0
                print(f"| {name} | {used} | " + " | ".join(cells) + f" |  <!-- {dt:.0f} s -->", flush=True)
    print("\n" + load_note())


if __name__ == "__main__":
    main()
