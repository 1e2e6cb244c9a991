"""Benchmark of the clustering methods on Facebook and Email-Enron (issue 23).

Prints, per graph and epsilon in {0.5, 1, 2, 4}, the relative RMSE of every clustering method
of the registry (``avg-clustering-dlap[-private]``, ``adaptive-clustering[-best]``), its
relative bias, the coverage of its 95% intervals (``Estimate.interval``) and the seconds per trial:

- ``adaptive-clustering`` (unbiased): Monte-Carlo over ``--trials`` trials, and the analytic
  RMSE (:func:`~ldpgraph.protocols.clustering.adaptive.analytic_moments`) with their ratio
  (target: Monte-Carlo within 10%);
- ``adaptive-clustering-best``: Monte-Carlo (bias measured);
- ``avg-clustering-dlap``: the analytic RMSE (its Monte-Carlo is slow and agrees, see its
  module); a few timed trials where the memory guard lets it run;
- ``avg-clustering-dlap-private``: a few trials where the memory guard lets it run.

Then the speed targets: 100 trials at eps = 2 on Facebook (<= 30 s, one core, wedge table
included) and one trial on Email-Enron (<= 5 s, <= 2 GB peak; measured in a child process
from a fresh interpreter, the graph load excluded), against the exact triangle count of the
graph (a reference timed in the same run). The load average is printed: a figure measured
under load is a bound.

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. python scripts/bench_adaptive_clustering.py [--trials N]
[--graphs facebook email-enron] [--quick]``
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import load_note  # noqa: E402

from ldpgraph.datasets import load_dataset  # noqa: E402
from ldpgraph.graph.statistics import local_triangle_counts  # noqa: E402
from ldpgraph.protocols.clustering import adaptive as ac  # noqa: E402
from ldpgraph.run.method import get_method  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0, 4.0)

_CHILD = """
import sys, time
import numpy as np
from ldpgraph.datasets import load_dataset
from ldpgraph.run.method import get_method
g = load_dataset("email-enron")
t0 = time.perf_counter()
m = get_method("adaptive-clustering")
v = m.estimate_trials(g, "avg_clustering", None, float(sys.argv[1]), 1, rng=0)[0]
dt = time.perf_counter() - t0
# VmHWM: this process's own peak (ru_maxrss would carry the parent's peak across the exec)
hwm = next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM"))
print(dt, hwm / 2**20, v)
"""


def _adaptive_trials(method, g, table, eps, trials, seed):
    """Values, standard errors and seconds per trial (``table``: the graph's wedge table, built before)."""
    plan = method.plan(eps, g, "avg_clustering")
    par = ac.AdaptiveClustering.parameters(plan)
    est = ac.best_estimate if plan.public["estimator"] == "best" else ac.unbiased_estimate
    gen = np.random.default_rng(seed)
    vals, ivs = np.empty(trials), np.empty((trials, 2))
    t0 = time.perf_counter()
    for t in range(trials):
        e = est(ac.simulate_reports(table, *par, rng=gen))
        vals[t], ivs[t] = e.value, e.interval(0.95)
    return vals, ivs, (time.perf_counter() - t0) / trials


def _row(name, truth, vals=None, ivs=None, sec=None, analytic=None, note=""):
    cells = [f"{name:28s}"]
    if vals is not None:
        rmse = math.sqrt(float(np.mean((vals - truth) ** 2))) / truth
        bias = (float(vals.mean()) - truth) / truth
        cov = float(np.mean((ivs[:, 0] <= truth) & (truth <= ivs[:, 1]))) if ivs is not None else math.nan
        cells += [f"{rmse:10.4f}", f"{bias:+9.4f}", f"{cov:8.3f}"]
    else:
        cells += [f"{'-':>10s}", f"{'-':>9s}", f"{'-':>8s}"]
    cells.append(f"{analytic:10.4g}" if analytic is not None else f"{'-':>10s}")
    if vals is not None and analytic is not None:
        cells.append(f"{math.sqrt(float(np.mean((vals - truth) ** 2))) / truth / analytic:6.3f}")
    else:
        cells.append(f"{'-':>6s}")
    cells.append(f"{sec:9.3f}" if sec is not None else f"{'-':>9s}")
    print(" ".join(cells) + (f"  {note}" if note else ""))


def bench_graph(name, trials, quick):
    g = load_dataset(name)
    m_unb, m_best = get_method("adaptive-clustering"), get_method("adaptive-clustering-best")
    truth = m_unb.truth(g, "avg_clustering", None)
    t0 = time.perf_counter()
    table = ac.wedge_table(g)
    table_s = time.perf_counter() - t0
    import networkx as nx

    G = nx.Graph()
    G.add_nodes_from(range(g.n_nodes))
    G.add_edges_from(g.edges().tolist())
    ref = nx.average_clustering(G)
    print(f"\n{name}: n = {g.n_nodes:,}, truth {truth:.12f} (networkx average_clustering {ref:.12f}, "
          f"difference {truth - ref:.1e}); wedge table {table_s:.2f} s; {load_note()}")
    print(f"{'method':28s} {'rel.RMSE':>10s} {'rel.bias':>9s} {'cover95':>8s} {'analytic':>10s} "
          f"{'MC/an':>6s} {'s/trial':>9s}")
    dlap, private = get_method("avg-clustering-dlap"), get_method("avg-clustering-dlap-private")
    for i, eps in enumerate(EPSILONS):
        print(f"eps = {eps:g}")
        vals, ivs, sec = _adaptive_trials(m_unb, g, table, eps, trials, 10 + i)  # independent seeds
        mean, var = m_unb.analytic_mean(g, "avg_clustering", None, eps), \
            m_unb.analytic_variance(g, "avg_clustering", None, eps)
        _row("adaptive-clustering", truth, vals, ivs, sec, math.sqrt((mean - truth) ** 2 + var) / truth)
        vals, ivs, sec = _adaptive_trials(m_best, g, table, eps, max(trials // 4, 10) if quick else trials, 20 + i)
        _row("adaptive-clustering-best", truth, vals, ivs, sec)
        analytic = dlap.analytic_rmse(g, "avg_clustering", None, eps) / truth if g.n_nodes < 10_000 else None
        sec = note = None
        try:
            t1 = time.perf_counter()
            dlap.estimate_trials(g, "avg_clustering", None, eps, 1, rng=3)
            sec = time.perf_counter() - t1
        except MemoryError:
            note = "refused by the memory guard (noisy graph > 2 GiB)"
        _row("avg-clustering-dlap", truth, None, None, sec, analytic, note or "")
        sec = note = None
        try:
            t1 = time.perf_counter()
            pv = private.estimate_trials(g, "avg_clustering", None, eps, 3, rng=4)
            sec = (time.perf_counter() - t1) / 3
            note = f"3 trials: rel. errors {', '.join(f'{(v - truth) / truth:+.3g}' for v in pv)}"
        except MemoryError:
            note = "refused by the memory guard (noisy graph > 2 GiB)"
        _row("avg-clustering-dlap-private", truth, None, None, sec, None, note)


def speed():
    print(f"\nspeed ({load_note()})")
    g = load_dataset("facebook")
    t0 = time.perf_counter()
    local_triangle_counts(g)
    ref = time.perf_counter() - t0
    m = get_method("adaptive-clustering")
    t0 = time.perf_counter()
    m.estimate_trials(g, "avg_clustering", None, 2.0, 100, rng=0)
    fb = time.perf_counter() - t0
    print(f"facebook: 100 trials at eps = 2 (wedge table included): {fb:.2f} s (target <= 30 s); "
          f"{fb / ref:.0f}x the exact local triangle counts ({ref:.3f} s)")
    out = subprocess.run([sys.executable, "-c", _CHILD, "2.0"], capture_output=True, text=True, check=True,
                         env=dict(os.environ))
    sec, gib, value = (float(x) for x in out.stdout.split())
    print(f"email-enron: one trial at eps = 2 (wedge table included): {sec:.2f} s (target <= 5 s), peak RSS "
          f"{gib:.2f} GiB of the whole process (target <= 2 GB); estimate {value:.4f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--graphs", nargs="+", default=["facebook", "email-enron"])
    ap.add_argument("--quick", action="store_true", help="fewer trials of the best estimate (EM is slower)")
    ap.add_argument("--no-speed", action="store_true")
    args = ap.parse_args(argv)
    for name in args.graphs:
        bench_graph(name, args.trials, args.quick)
    if not args.no_speed:
        speed()


if __name__ == "__main__":
    main()
