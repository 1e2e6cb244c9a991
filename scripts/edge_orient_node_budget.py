"""Issue 37, item 3: ``edge-orient-triangles`` against ``edge-orient-reference`` at the same per-node budget.

The reference at ε_paper (the paper's per-edge LEDP accounting) has each node spend 3/4 of ε_paper
(k-core ε_paper/8, RR ε_paper/4, out-degree ε_paper/4, count ε_paper/8: ``ldpgraph methods``);
ours runs at that same per-node total, ε = 3 ε_paper / 4. For ε_paper ∈ {0.5, 1, 2} on Facebook and
Wiki-Vote (``--graphs``, ``--eps-paper``): mean |relative error| of the triangle count over
``--trials`` runs (common seeds per cell), ± its Monte-Carlo SE, and the ratio ours / reference.

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. nice -n 10 python scripts/edge_orient_node_budget.py [--trials 100]``
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ldpgraph.datasets import load_dataset
from ldpgraph.graph.statistics import triangle_count
from ldpgraph.run.method import get_method


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--graphs", nargs="+", default=["facebook", "wiki-vote"])
    ap.add_argument("--eps-paper", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    ap.add_argument("--seed", type=int, default=37)
    args = ap.parse_args()
    print(f"{'graph':10s} {'eps_paper':>9s} {'eps/node':>8s} {'method':24s} {'mean |rel err|':>20s} "
          f"{'rel bias':>9s} {'s/trial':>7s}", flush=True)
    for name in args.graphs:
        g = load_dataset(name)
        truth = float(triangle_count(g))
        for ep in args.eps_paper:
            eps = 0.75 * ep
            res = {}
            for method in ("edge-orient-reference", "edge-orient-triangles"):
                t0 = time.perf_counter()
                x = get_method(method).estimate_trials(g, "triangles", None, eps, args.trials,
                                                       rng=np.random.default_rng([args.seed, int(ep * 1000)]))
                sec = (time.perf_counter() - t0) / args.trials
                err = np.abs(x - truth) / truth
                res[method] = err
                print(f"{name:10s} {ep:9g} {eps:8.4g} {method:24s} {err.mean():11.3f} ± "
                      f"{err.std(ddof=1) / math.sqrt(err.size):.3f} {(x.mean() - truth) / truth:+9.3f} "
                      f"{sec:7.2f}", flush=True)
            r = res["edge-orient-triangles"].mean() / res["edge-orient-reference"].mean()
            print(f"{'':10s} {'':9s} {'':8s} {'ours / reference':24s} {r:11.3f}", flush=True)


if __name__ == "__main__":
    main()
