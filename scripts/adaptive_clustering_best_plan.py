"""The margin (tail) and budget split of ``adaptive-clustering-best``: Monte-Carlo RMSE curves behind its defaults.

The best estimate has no closed-form RMSE (its empirical-Bayes step is non-linear), so its
plan is chosen by simulation. For each planning graph (default Facebook and Email-Enron) and
total epsilon (default 1 and 2) it prints the relative RMSE (bias included, with its
Monte-Carlo standard error), the relative bias and the error of the clipping-loss correction
(:func:`~ldpgraph.protocols.clustering.adaptive.clipping_bias_estimate` with ``inverse=True``
against the exact loss :func:`~ldpgraph.protocols.clustering.adaptive.clipping_bias`) of
:func:`~ldpgraph.protocols.clustering.adaptive.best_estimate` over

1. the tail probability that fixes the margin (``TAILS``; the budget split at
   ``DEFAULT_SHARES``);
2. the degree share (``DEGREE``; rr and local_clustering split the rest equally, as the
   default does) at the chosen tail, on ``--degree-graphs`` (default Facebook only: an
   Email-Enron trial costs about 20 Facebook ones);

every cell with the same seed (common random numbers: the curves compare better than their
standard errors suggest).

The rule (graph-independent: one default for every graph, no per-graph tuning): the tail,
among those at most ``MAX_TAIL``, then the degree share, that minimise the worst ratio of the
relative RMSE to the issue's target (0.15 at eps 1, 0.04 at eps 2) over the planning graphs
and epsilons; the default split (shared with the unbiased estimate) is kept unless another
degree share beats it by more than the Monte-Carlo SE of its RMSE. Graphs not used for planning (``--validate``, default Wiki-Vote) are then run
at the chosen plan and at the unconstrained best tail. The cap was set after Wiki-Vote showed
the unconstrained choice failing there (so for the cap Wiki-Vote is no longer unseen).

A graph is a dataset name, a synthetic spec (``ws:n=5000,k=10,p=0.1``) or an edge-list file
(:func:`~ldpgraph.datasets.resolve_graph`, seed 0).

``--confirm N`` instead runs only the defaults (``BEST_TAIL``, ``DEFAULT_SHARES``) with N trials
per graph and epsilon (``--epsilons``), and prints the Monte-Carlo standard error of the RMSE.

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. python scripts/adaptive_clustering_best_plan.py
[--graphs facebook email-enron] [--trials 100 30] [--epsilons 1 2] [--validate wiki-vote]
[--confirm N]``
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ldpgraph.core.plan import split_budget
from ldpgraph.datasets import resolve_graph
from ldpgraph.protocols.clustering import adaptive as ac
from ldpgraph.protocols.clustering.kernels import average_clustering_truth

TAILS = (0.1, 0.2, 0.3, 0.4, 0.5)
#: the largest tail the rule admits: the clipping loss is at most tail x the truth, and the
#: plug-in correction of it can miss a graph-dependent share of it (measured: +28% of the truth
#: on Wiki-Vote at eps 2 and tail 0.4, whose coefficients are small: the clipped noisy c^ of
#: its low-degree nodes average far above their c), so the tail bounds what a wrong correction
#: can cost on a graph nobody planned on
MAX_TAIL = 0.2
DEGREE = (0.15, 0.2, 0.25)
#: the issue's targets for the best estimate (relative RMSE, bias included)
TARGETS = {1.0: 0.15, 2.0: 0.04}


def shares_for(degree):
    """rr and local_clustering split what the degree leaves equally (as the default 0.4 / 0.2 / 0.4)."""
    return {"rr": (1.0 - degree) / 2, "degree": degree, "local_clustering": (1.0 - degree) / 2}


def run(g, table, truth, eps, shares, tail, trials, seed):
    """(relative RMSE, its Monte-Carlo SE, relative bias, correction error, unbiased RMSE, s/trial,
    coverage of the 95% interval)."""
    e = split_budget(eps, shares)
    mu = ac.default_margin(e["degree"], tail)
    loss = -ac.clipping_bias(g, e["degree"], mu)
    gen = np.random.default_rng(seed)
    err, unb, corr, cover = np.empty(trials), np.empty(trials), np.empty(trials), np.empty(trials)
    t0 = time.perf_counter()
    for t in range(trials):
        rep = ac.simulate_reports(table, e["rr"], e["degree"], e["local_clustering"], mu, rng=gen)
        est = ac.best_estimate(rep)
        err[t] = (est.value - truth) / truth
        unb[t] = (est.unbiased.value - truth) / truth
        corr[t] = (ac.clipping_bias_estimate(rep, inverse=True) - loss) / truth
        lo, hi = est.interval(0.95)
        cover[t] = lo <= truth <= hi
    sec = (time.perf_counter() - t0) / trials
    rmse = math.sqrt(float(np.mean(err**2)))
    # delta method: SE(sqrt(mean e^2)) = sd(e^2) / (2 rmse sqrt(T))
    se = float(np.std(err**2, ddof=1)) / (2 * rmse * math.sqrt(trials)) if trials > 1 else math.nan
    return (rmse, se, float(err.mean()), float(corr.mean()), math.sqrt(float(np.mean(unb**2))), sec,
            float(cover.mean()))


def _line(label, r, eps):
    rmse, se, bias, corr, unb, sec, cover = r
    ratio = rmse / TARGETS[eps] if eps in TARGETS else math.nan
    return (f"  {label:14s} RMSE {rmse:.4f} +- {se:.4f}  bias {bias:+.4f}  correction error {corr:+.4f}  "
            f"(unbiased estimate: {unb:.4f})  RMSE/target {ratio:.2f}  coverage {cover:.3f}  {sec:.2f} s/trial")


def load(name):
    g = resolve_graph(name, rng=0)
    return g, ac.wedge_table(g), average_clustering_truth(g)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=["facebook", "email-enron"])
    ap.add_argument("--trials", type=int, nargs="+", default=[100, 30], help="per planning graph")
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--degree-graphs", nargs="*", default=["facebook"],
                    help="planning graphs of the degree-share curve (the costly Email-Enron is left out)")
    ap.add_argument("--validate", nargs="*", default=["wiki-vote"])
    ap.add_argument("--validate-trials", type=int, default=30)
    ap.add_argument("--confirm", type=int, default=0, help="only the defaults, with this many trials")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    if args.confirm:
        for name in args.graphs:
            g, table, truth = load(name)
            print(f"{name}: truth {truth:.6f}; defaults tail {ac.BEST_TAIL}, shares {ac.DEFAULT_SHARES}, "
                  f"{args.confirm} trials")
            for eps in args.epsilons:
                r = run(g, table, truth, eps, ac.DEFAULT_SHARES, ac.BEST_TAIL, args.confirm, args.seed + 1)
                print(_line(f"eps {eps:g}", r, eps), flush=True)
        return
    trials = dict(zip(args.graphs, (args.trials + args.trials[-1:] * len(args.graphs))[:len(args.graphs)],
                      strict=True))
    graphs = {name: load(name) for name in args.graphs}
    d0 = ac.DEFAULT_SHARES["degree"]
    worst = {}
    for name, (g, table, truth) in graphs.items():
        print(f"\n{name}: truth {truth:.6f}, {trials[name]} trials per cell; tail curve at shares {ac.DEFAULT_SHARES}")
        for eps in args.epsilons:
            print(f" eps {eps:g}")
            for tail in TAILS:
                e_d = eps * d0
                r = run(g, table, truth, eps, shares_for(d0), tail, trials[name], args.seed)
                worst[tail] = max(worst.get(tail, 0.0), r[0] / TARGETS.get(eps, math.inf))
                print(_line(f"tail {tail:g} (mu {ac.default_margin(e_d, tail)})", r, eps), flush=True)
    free = min(worst, key=worst.get)
    tail = min((t for t in worst if t <= MAX_TAIL), key=worst.get)
    print("\nworst RMSE/target over graphs and epsilons per tail: "
          + ", ".join(f"{t:g}: {w:.2f}" for t, w in worst.items())
          + f"; smallest: tail {free:g}; chosen among tails <= {MAX_TAIL:g} (MAX_TAIL): {tail:g}")
    worst_d, worst_se = {}, {}
    for name, (g, table, truth) in graphs.items():
        if name not in args.degree_graphs:
            continue
        print(f"\n{name}: degree-share curve at tail {tail:g} (rr = local_clustering = (1 - degree) / 2)")
        for eps in args.epsilons:
            print(f" eps {eps:g}")
            for d in DEGREE:
                r = run(g, table, truth, eps, shares_for(d), tail, trials[name], args.seed)
                if r[0] / TARGETS.get(eps, math.inf) > worst_d.get(d, 0.0):
                    worst_d[d], worst_se[d] = r[0] / TARGETS[eps], r[1] / TARGETS[eps]
                print(_line(f"degree {d:g}", r, eps), flush=True)
    # the default split is kept unless another share beats it by more than the Monte-Carlo SE
    best_d = min(worst_d, key=worst_d.get)
    d = best_d if worst_d[best_d] < worst_d.get(d0, math.inf) - worst_se.get(d0, 0.0) else d0
    print("\nworst RMSE/target per degree share: " + ", ".join(f"{k:g}: {w:.2f}" for k, w in worst_d.items())
          + f"; smallest: {best_d:g}; chosen degree share {d:g} (the default {d0:g} unless beaten by more "
          "than its Monte-Carlo SE)")
    for name in args.validate:
        g, table, truth = load(name)
        for t in sorted({tail, free}):
            print(f"\nvalidation (not planned on) {name}: truth {truth:.6f}, tail {t:g}, degree {d:g}, "
                  f"{args.validate_trials} trials")
            for eps in args.epsilons:
                r = run(g, table, truth, eps, shares_for(d), t, args.validate_trials, args.seed)
                print(_line(f"eps {eps:g}", r, eps), flush=True)


if __name__ == "__main__":
    main()
