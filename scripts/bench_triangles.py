"""Benchmark of the triangle protocols: time and peak memory per trial, and relative RMSE.

Prints, on Facebook (4,039 nodes) and Email-Enron (36,692 nodes):

- one ``rr-triangles`` trial on Facebook (target <= 2 s) and one two-round trial (targets:
  Facebook <= 0.2 s, Email-Enron <= 3 s), best of a few runs, with the peak memory of the
  trial (tracemalloc, numpy allocations included) and the ratio to a reference timed in the
  same run: the exact triangle count of the true graph by the package's sparse kernel;
- the relative RMSE of every triangle method at eps in {0.5, 1, 2}: analytic and Monte-Carlo
  (with the MC/analytic ratio). ``rr-triangles`` on Email-Enron is refused (its noisy graph
  would hold ~1e8 edges); its analytic RMSE is still printed.

Timings are wall clock on a shared machine: the load average is printed with them.

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. python scripts/bench_triangles.py [--trials N]``
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import best_of  # noqa: E402

from ldpgraph.datasets import resolve_graph  # noqa: E402
from ldpgraph.graph import triangle_count  # noqa: E402
from ldpgraph.registry import get_method, method_names  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0)


def _peak(func):
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    func()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return dt, peak


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=40, help="Monte-Carlo trials of two-round methods")
    ap.add_argument("--rr-trials", type=int, default=5, help="Monte-Carlo trials of rr-triangles")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    graphs = {"facebook": resolve_graph("facebook"), "email-enron": resolve_graph("email-enron")}
    print(_load(), f"({os.cpu_count()} cores, shared)")
    for label, g in graphs.items():
        print(f"{label}: {g.n_nodes} nodes, {g.n_edges} edges, {triangle_count(g)} triangles")

    print("\n== time and peak memory of one trial (best of", args.repeat, "runs) ==")
    for label, g in graphs.items():
        ref, _ = best_of(lambda g=g: triangle_count(g), args.repeat)
        print(f"{label}: reference (exact sparse triangle count of the true graph) {ref:.3f} s")
        for name in ("rr-triangles", "two-round-triangles-dlap", "two-round-triangles-laplace"):
            if name == "rr-triangles" and label != "facebook":
                continue
            p = get_method(name)
            t_prep = time.perf_counter()
            p.prepare(g)
            t_prep = time.perf_counter() - t_prep
            for eps in EPSILONS:
                gen = np.random.default_rng(1)
                dt, _ = best_of(
                    lambda p=p, g=g, eps=eps, gen=gen: p.estimate_trials(
                        g, "triangles", None, eps, 1, rng=gen
                    ),
                    args.repeat,
                )
                _, peak = _peak(
                    lambda p=p, g=g, eps=eps: p.estimate_trials(g, "triangles", None, eps, 1, rng=2)
                )
                print(
                    f"  {name:28s} eps={eps:<4g} {dt:7.3f} s/trial  ({dt / ref:6.2f} x ref)  "
                    f"peak {peak / 2**20:7.1f} MiB   [per-graph setup {t_prep:.3f} s]"
                )
        print("  ", _load())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS so far: {rss:.0f} MiB")

    print("\n== relative RMSE (analytic; Monte-Carlo with its ratio to the analytic) ==")
    for label, g in graphs.items():
        for name in method_names("triangles"):
            p = get_method(name)
            p.prepare(g)
            truth = p.truth(g, "triangles", None)
            cells = []
            for i, eps in enumerate(EPSILONS):
                a = p.analytic_rmse(g, "triangles", None, eps)
                a = math.nan if a is None else a / truth  # arr-triangles (clipped): no closed form
                n = args.rr_trials if name == "rr-triangles" else args.trials
                try:
                    x = p.estimate_trials(g, "triangles", None, eps, n, rng=1000 + i)
                    mc = math.sqrt(float(np.mean((x - truth) ** 2))) / truth
                    cells.append(f"eps={eps:g}: {a:.4g} | MC {mc:.4g} ({mc / a:.2f}, N={n})")
                except MemoryError:
                    cells.append(f"eps={eps:g}: {a:.4g} | MC refused (noisy graph too large)")
            print(f"{label:12s} {name:36s} " + "; ".join(cells))
    print(_load())


if __name__ == "__main__":
    main()
