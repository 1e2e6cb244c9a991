"""Monte-Carlo check of the 4-cycle estimators against their analytic mean and variance.

On a mid-size graph (default: the subgraph of Facebook induced by its first 1000 nodes), for
``rr-four-cycles`` and the RR part of ``two-round-four-cycles-dlap`` (its sum of local counts
before the DLap noise, whose variance is exact), print the Monte-Carlo mean and variance, the
analytic ones, and the z-scores: the mean within 4 SE of the truth, and the sample variance
within 4 SE of the analytic variance (SE of a sample variance: s^2 sqrt(2 / (T - 1)), the
estimates being sums of many terms). Also the spread of the two-round sensitivity S over the
trials, on which the noise part of that protocol's variance depends.

Usage: python scripts/validate_four_cycles.py [--graph facebook] [--nodes 1000] [--trials 400] [--epsilon 1]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ldpgraph.datasets import resolve_graph
from ldpgraph.graph import from_edge_array
from ldpgraph.graph.cycles import four_cycle_count
from ldpgraph.protocols.four_cycles.kernels import (
    four_cycle_sensitivity,
    rr_four_cycle_estimate,
    rr_four_cycle_variance,
    two_round_rr_variance,
    z_matrix,
)
from ldpgraph.protocols.randomized_response import flip_probability, keep_probability, noisy_lower_pairs


def induced(graph, k):
    e = graph.edges()
    keep = (e[:, 0] < k) & (e[:, 1] < k)
    return from_edge_array(e[keep], n_nodes=k)


def report(name, values, truth, variance):
    t = values.size
    mean, var = float(values.mean()), float(values.var(ddof=1))
    z_mean = (mean - truth) / math.sqrt(variance / t)
    z_var = (var - variance) / (variance * math.sqrt(2.0 / (t - 1)))
    ok = abs(z_mean) <= 4 and abs(z_var) <= 4
    print(f"{name:34s} mean {mean:14.6g} truth {truth:14.6g} z {z_mean:+6.2f} | var {var:11.4g} "
          f"analytic {variance:11.4g} ratio {var / variance:6.3f} z {z_var:+6.2f}  {'ok' if ok else 'FAIL'}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="facebook")
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    g = resolve_graph(args.graph, rng=0)
    if args.nodes and args.nodes < g.n_nodes:
        g = induced(g, args.nodes)
    eps = args.epsilon
    truth = four_cycle_count(g)
    print(f"graph {args.graph} ({g.n_nodes} nodes, {g.n_edges} edges), 4-cycles {truth}, epsilon {eps}, "
          f"{args.trials} trials")
    gen = np.random.default_rng(args.seed)
    p, q = keep_probability(eps), flip_probability(eps)
    a = np.zeros((g.n_nodes, g.n_nodes))
    e = g.edges()
    a[e[:, 0], e[:, 1]] = a[e[:, 1], e[:, 0]] = 1.0
    deg = g.degrees
    rr, local, sens = [], [], []
    t0 = time.perf_counter()
    for _ in range(args.trials):
        n, index = noisy_lower_pairs(g, p, q, rng=gen)
        rr.append(rr_four_cycle_estimate(n, index, eps))
        z = z_matrix(n, index, eps)
        local.append(0.5 * float(np.einsum("vu,uv->", a, z @ a)) - float((deg * (deg - 1) / 2).sum()))
        sens.append(four_cycle_sensitivity(z, int(deg.max())))
    print(f"{time.perf_counter() - t0:.1f} s")
    ok = report("rr-four-cycles", np.array(rr), truth, rr_four_cycle_variance(g, eps))
    ok &= report("two-round: sum of local counts", np.array(local), 4 * truth, two_round_rr_variance(g, eps))
    s = np.array(sens, dtype=np.float64)
    print(f"two-round sensitivity S at d_max = {int(deg.max())}: mean {s.mean():.6g}, sd {s.std(ddof=1):.4g} "
          f"({s.std(ddof=1) / s.mean():.2%}), range [{s.min():.6g}, {s.max():.6g}]")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
