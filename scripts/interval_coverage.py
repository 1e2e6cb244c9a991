"""Coverage of the report-based 95% intervals ``estimate ± 1.96 SE`` of every method that prints one.

Each trial is one ``ldpgraph estimate`` run (:func:`~ldpgraph.experiments.single.estimate_once`
with a fresh root seed): the estimate and its standard error come from the same reports, the
SE from what a curator has (the reports and public values; ``std_error_kind`` says how). A
trial whose estimate has no standard error (kind ``none: ...``, e.g. a variance estimate <= 0)
counts as a miss and is reported in ``no_se``. The table gives, per graph, statistic, method
and ε: the SE kind, the trials, the coverage and its binomial standard error
sqrt(c (1 - c) / T); a coverage outside 0.95 ± 2 of those is flagged ``*``.

Methods without any report-based SE (plug-ins, clipped or privately bounded estimators, and
simulation-only methods) are listed at the end with the reason.

Usage (CPU-heavy: run it under nice):
    nice -n 10 python scripts/interval_coverage.py [--trials 200] [--epsilons 1 2]
        [--graphs ba:n=300,m=5 ws:n=300,k=10,p=0.1] [--stats kstars edges ... four_cycles]
        [--methods M ...] [--budget-seconds 600]

``--budget-seconds`` caps each cell: a cell that would take longer runs the trials that fit (at
least 50) and says so.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

from ldpgraph.experiments.runner import resolve_graph_inputs
from ldpgraph.experiments.single import estimate_once
from ldpgraph.run.method import method_names

Z95 = 1.959963984540054
STATS = ("kstars", "edges", "degree_variance", "triangles", "transitivity", "avg_clustering", "four_cycles")


def cell(graph, statistic: str, method: str, epsilon: float, trials: int, seed: int, budget: float):
    """``(kind, trials run, hits, no_se, seconds)`` of one cell."""
    root = np.random.SeedSequence(seed)
    hits = no_se = done = 0
    kinds: set[str] = set()
    t0 = time.perf_counter()
    for child in root.spawn(trials):
        s = int(child.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
        run = estimate_once(graph, epsilon=epsilon, statistic=statistic, k=2, methods=[method], seed=s)
        e = run.estimates[0]
        kinds.add(e.std_error_kind if not e.std_error_kind.startswith("none") else "none")
        if e.std_error is None:
            no_se += 1
        else:
            hits += abs(e.estimate - run.truth) <= Z95 * e.std_error
        done += 1
        if done >= 50 and (time.perf_counter() - t0) / done * trials > budget:
            break
    kind = "/".join(sorted(kinds))
    return kind, done, hits, no_se, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--graphs", nargs="+", default=["ba:n=300,m=5", "ws:n=300,k=10,p=0.1"])
    ap.add_argument("--stats", nargs="+", default=list(STATS))
    ap.add_argument("--methods", nargs="+", default=None)
    ap.add_argument("--budget-seconds", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    graphs = resolve_graph_inputs(args.graphs, graph_seed=0)
    print(f"{'graph':22s} {'statistic':15s} {'method':36s} {'eps':>4s} {'se_kind':22s} {'trials':>6s} "
          f"{'no_se':>5s} {'coverage':>8s} {'+-sd':>6s}  seconds")
    without: dict[str, str] = {}
    for g in graphs:
        for stat in args.stats:
            for m in method_names(stat):
                if args.methods and m not in args.methods:
                    continue
                probe = estimate_once(g, epsilon=args.epsilons[0], statistic=stat, k=2, methods=[m], seed=1)
                kind0 = probe.estimates[0].std_error_kind
                if kind0.startswith("none") and "variance estimate is" not in kind0:
                    without[f"{m} ({stat})"] = kind0[len("none: "):]
                    continue
                for eps in args.epsilons:
                    kind, done, hits, no_se, secs = cell(g, stat, m, eps, args.trials, args.seed, args.budget_seconds)
                    c = hits / done
                    sd = math.sqrt(0.95 * 0.05 / done)
                    flag = "*" if abs(c - 0.95) > 2 * sd else " "
                    short = "" if done == args.trials else f" (budget: {done} of {args.trials})"
                    print(f"{g.label:22s} {stat:15s} {m:36s} {eps:4g} {kind:22s} {done:6d} {no_se:5d} "
                          f"{c:8.3f} {sd:6.3f}{flag} {secs:7.1f}{short}", flush=True)
    print("\nno report-based standard error:")
    for m, why in without.items():
        print(f"  {m}: {why}")


if __name__ == "__main__":
    main()
