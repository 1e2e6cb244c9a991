"""The budget split and margin of ``adaptive-clustering``: the analytic RMSE curves behind the defaults.

For each total epsilon (default 1 and 2) on a graph (default Facebook) it prints the relative
RMSE of the unbiased estimate, bias included (exact: :func:`~ldpgraph.protocols.
adaptive_clustering.analytic_moments`), over

1. the shares (rr, degree; local_clustering takes the rest) at the default tail;
2. the tail probability that fixes the margin (:func:`~ldpgraph.protocols.clustering.adaptive.
   default_margin`) at the default shares: a larger margin lowers the clipping bias (bounded
   by tail x the truth) and raises the noise of the low-degree nodes (their bound L_v drops),
   with the bias in standard deviations and the coverage of the 95% interval it implies;

and the parts of the variance at the defaults (the count noise dominates; the cross terms of
the randomized-response part, which the curator's variance estimate bounds by its diagonal,
are small). The defaults ``DEFAULT_SHARES`` and ``DEFAULT_TAIL`` minimise the sum of the relative
RMSE at eps 1 and 2 over these grids among the choices whose 95% interval still covers at least
94.5% despite the clipping bias (printed last): the smallest RMSE alone would take a tail of
0.3, whose bias (-9% at eps 1) breaks the intervals. Analytic throughout:
Monte-Carlo agrees within a few percent (``scripts/bench_adaptive_clustering.py``).

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. python scripts/adaptive_clustering_split.py [--graph facebook]
[--epsilons 1 2]``
"""

from __future__ import annotations

import argparse
import itertools
import math
from statistics import NormalDist

from ldpgraph.datasets import load_dataset
from ldpgraph.protocols.clustering import adaptive as ac
from ldpgraph.protocols.clustering.kernels import average_clustering_truth

RR = (0.3, 0.35, 0.4, 0.45, 0.5)
DEGREE = (0.1, 0.15, 0.2, 0.25, 0.3)
TAILS = (0.2, 0.1, 0.05, 0.03, 0.02, 0.01)
#: the unbiased estimate's interval must keep this coverage despite the clipping bias
MIN_COVERAGE = 0.945


def moments(g, truth, eps, rr, degree, tail):
    """(relative RMSE, relative bias, bias / sd, margin) of the unbiased estimate (exact)."""
    e_rr, e_d = eps * rr, eps * degree
    mu = ac.default_margin(e_d, tail)
    mean, var = ac.analytic_moments(g, e_rr, e_d, eps - e_rr - e_d, mu)
    return math.sqrt((mean - truth) ** 2 + var) / truth, (mean - truth) / truth, (mean - truth) / math.sqrt(var), mu


def coverage(shift):
    """Coverage of value +- 1.96 sd when the estimate is off by ``shift`` sd (normal)."""
    phi = NormalDist().cdf
    return phi(1.959964 - shift) - phi(-1.959964 - shift)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="facebook")
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    args = ap.parse_args(argv)
    g = load_dataset(args.graph)
    truth = average_clustering_truth(g)
    print(f"{args.graph}: truth {truth:.6f}; defaults: shares {ac.DEFAULT_SHARES}, tail {ac.DEFAULT_TAIL}")
    table = {}
    for rr, d, tail in itertools.product(RR, DEGREE, TAILS):
        table[rr, d, tail] = [moments(g, truth, eps, rr, d, tail) for eps in args.epsilons]
    for i, eps in enumerate(args.epsilons):
        print(f"\neps = {eps:g}: relative RMSE (bias included) of the unbiased estimate, tail {ac.DEFAULT_TAIL}")
        print("rr \\ degree " + " ".join(f"{d:>8g}" for d in DEGREE))
        for rr in RR:
            print(f"{rr:<12g} " + " ".join(f"{table[rr, d, ac.DEFAULT_TAIL][i][0]:8.4f}" for d in DEGREE))
    d0 = ac.DEFAULT_SHARES
    for i, eps in enumerate(args.epsilons):
        print(f"\neps = {eps:g}, shares rr {d0['rr']:g}, degree {d0['degree']:g}: tail, margin, relative bias, "
              "bias / sd, coverage of the 95% interval, relative RMSE")
        for tail in TAILS:
            r, b, z, mu = table[d0["rr"], d0["degree"], tail][i]
            print(f"  tail {tail:<5g} margin {mu:3d}  bias {b:+.4f}  bias/sd {z:+.3f}  coverage {coverage(z):.3f}  "
                  f"RMSE {r:.4f}")
    ok = {k: v for k, v in table.items() if all(coverage(z) >= MIN_COVERAGE for _, _, z, _ in v)}
    best = min(ok, key=lambda k: sum(r for r, _, _, _ in ok[k]))
    print(f"\nsmallest sum over eps of the relative RMSE with every interval covering >= {MIN_COVERAGE}: "
          f"rr {best[0]:g}, degree {best[1]:g} (local_clustering {1 - best[0] - best[1]:g}), tail {best[2]:g}: "
          + ", ".join(f"eps {e:g}: {r:.4f}" for e, (r, _, _, _) in zip(args.epsilons, ok[best], strict=True)))
    for eps in args.epsilons:
        e = {k: eps * v for k, v in d0.items()}
        parts = ac.variance_components(g, e["rr"], e["degree"], e["local_clustering"],
                                       ac.default_margin(e["degree"]))
        var = sum(v for k, v in parts.items() if k != "mean")
        print(f"\neps = {eps:g}, defaults: variance parts (fractions of {var:.3e}): "
              + ", ".join(f"{k} {v / var:.4f}" for k, v in parts.items() if k != "mean"))


if __name__ == "__main__":
    main()
