"""4-cycle counting under edge-LDP on Facebook: our estimators against the reference's WLocal.

For each epsilon, the relative RMSE (RMSE / truth) of

* ``rr-four-cycles`` (one round): analytic (exact variance) and Monte-Carlo;
* ``two-round-four-cycles-dlap``: analytic (exact RR part + DLap noise at the S of a reference
  draw) and Monte-Carlo;
* ``wlocal-four-cycles``: the reference's one-round local estimator (Imola, Murakami, Chaudhuri,
  CCS 2022) as our protocol: analytic (its exact variance) and Monte-Carlo;
* with ``--reference PATH``: the reference's own binary (``SubgraphShuffle``, alg 9, built from
  Triangle4CycleShuffle/cpp with StatsLib and GCEM), run on the same graph. Its pairing loop reads
  ``node_order[n]`` when n is odd (Facebook: 4039), so it is run on n - 1 nodes (its own random
  induced subgraph, fixed over its iterations: ``#itr-1``); our truth on that subgraph, from the
  node order it writes, is printed beside its own.

and the ratio of the reference's relative RMSE to ours (the issue's target: >= 5 at eps = 1).
Timings are wall-clock on this machine (load average printed).

Usage: python scripts/benchmark_four_cycles.py [--epsilons 0.5 1 2] [--trials 5] [--wlocal-trials 400]
       [--reference /path/to/SubgraphShuffle] [--reference-iterations 20]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from ldpgraph.datasets import load_dataset
from ldpgraph.graph import from_edge_array
from ldpgraph.graph.cycles import four_cycle_count
from ldpgraph.run.method import get_method


def rel_rmse(values: np.ndarray, truth: float) -> float:
    return float(np.sqrt(np.mean((values - truth) ** 2)) / truth)


def run_reference(binary: str, graph, eps: float, iterations: int) -> dict:
    """Run the reference's WLocal 4-cycle algorithm (alg 9) on ``graph`` (n - 1 nodes when n is odd)."""
    n = graph.n_nodes
    use = n - (n % 2)
    with tempfile.TemporaryDirectory() as tmp:
        edges = Path(tmp) / "edges.csv"
        e = graph.edges()
        with open(edges, "w") as fh:
            fh.write(f"#nodes\n{n}\nnode,node\n")
            np.savetxt(fh, e, fmt="%d", delimiter=",")
        t0 = time.perf_counter()
        cmd = [os.path.abspath(binary), str(edges), str(use), f"{eps:g}-8", "-1", f"{iterations}-1", "9"]
        subprocess.run(cmd, cwd=tmp, check=True, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        out = Path(tmp) / f"res_n{use}_alg9_eps{eps:g}-8_pair-1_itr{iterations}-1.csv"
        rows = []
        for line in out.read_text().splitlines()[1:]:
            parts = line.split(",")
            if len(parts) >= 4 and re.match(r"^[0-9.e+-]+$", parts[0]):
                rows.append([float(x) for x in parts[:4]])
        rows = np.array(rows[:iterations])
        order = np.loadtxt(Path(tmp) / f"node-order_itr{iterations}.csv", delimiter=",", usecols=(1,), dtype=np.int64)
    keep = (order[e[:, 0]] < use) & (order[e[:, 1]] < use)
    sub = from_edge_array(order[e[keep]], n_nodes=use)
    truth_ours = four_cycle_count(sub)
    truth_ref = float(rows[0, 0])
    return {"truth_ref": truth_ref, "truth_ours": truth_ours, "estimates": rows[:, 1],
            "rel_rmse": rel_rmse(rows[:, 1], truth_ref), "seconds": seconds, "n": use}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="facebook")
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--trials", type=int, default=5, help="Monte-Carlo trials of our two methods")
    ap.add_argument("--wlocal-trials", type=int, default=400)
    ap.add_argument("--reference", default=None, help="path to the reference's built SubgraphShuffle")
    ap.add_argument("--reference-iterations", type=int, default=20)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    g = load_dataset(args.graph)
    truth = float(four_cycle_count(g))
    print(f"{args.graph}: {g.n_nodes} nodes, {g.n_edges} edges, {truth:,.0f} 4-cycles; "
          f"load average {open('/proc/loadavg').read().split()[0]}")
    methods = [get_method(name) for name in ("rr-four-cycles", "two-round-four-cycles-dlap", "wlocal-four-cycles")]
    header = (f"{'eps':>4} {'method':28s} {'analytic':>9} {'monte-carlo':>11} {'trials':>6} {'s/trial':>7} "
              f"{'WLocal / this':>13}")
    print(header)
    for eps in args.epsilons:
        rows = []
        for m in methods:
            trials = args.wlocal_trials if m.name == "wlocal-four-cycles" else args.trials
            var = m.analytic_variance(g, "four_cycles", None, eps)
            analytic = None if var is None else math.sqrt(var) / truth
            t0 = time.perf_counter()
            est = m.estimate_trials(g, "four_cycles", None, eps, trials, rng=args.seed)
            per = (time.perf_counter() - t0) / trials
            rows.append((m.name, analytic, rel_rmse(est, truth), trials, per))
        ref = None
        if args.reference:
            ref = run_reference(args.reference, g, eps, args.reference_iterations)
            rows.append((f"reference WLocal (C++, n={ref['n']})", None, ref["rel_rmse"],
                         args.reference_iterations, ref["seconds"] / args.reference_iterations))
        wlocal = rows[2][2]
        for name, analytic, mc, trials, per in rows:
            a = "-" if analytic is None else f"{analytic:.4f}"
            best = analytic if analytic is not None else mc
            print(f"{eps:4g} {name:28s} {a:>9} {mc:11.4f} {trials:6d} {per:7.2f} {wlocal / best:13.1f}")
        if ref is not None:
            print(f"     reference truth on its {ref['n']}-node subgraph {ref['truth_ref']:,.0f}; ours on it "
                  f"{ref['truth_ours']:,}")
    print("WLocal / this: our WLocal simulation's Monte-Carlo relative RMSE over the method's analytic one "
          "(Monte-Carlo where none): how many times more accurate the method is.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
