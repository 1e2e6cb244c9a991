"""The clustering profile C(k) and the distribution of local clustering from one ``adaptive-clustering`` run.

Runs the simulation of ``adaptive-clustering`` once on a graph (default Facebook) at a total
epsilon (default 2), prints the profile (buckets of the released degree: estimate, its
standard error, the truth by true degree) and the deconvolved histogram against the true one,
and writes the two-panel figure (:func:`~ldpgraph.experiments.plots.clustering_profile_figure`)
as ``<out>/clustering_profile_<graph>_eps<epsilon>.png``.

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. MPLBACKEND=Agg python scripts/adaptive_clustering_profile.py
[--graph facebook] [--epsilon 2] [--seed 0] [--out plots]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ldpgraph.datasets import load_dataset
from ldpgraph.experiments.plots import clustering_profile_figure
from ldpgraph.protocols.clustering import adaptive as ac

EDGES = [0, 2, 4, 8, 16, 32, 64, 128, 256, 100_000]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="facebook")
    ap.add_argument("--epsilon", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="plots")
    args = ap.parse_args(argv)
    g = load_dataset(args.graph)
    e = {k: args.epsilon * v for k, v in ac.DEFAULT_SHARES.items()}
    rep = ac.simulate_reports(ac.wedge_table(g), e["rr"], e["degree"], e["local_clustering"],
                              ac.default_margin(e["degree"]), rng=args.seed)
    prof = ac.clustering_profile(rep, EDGES)
    c, d = ac.local_clustering_of(g), g.degrees
    truth = [c[(d >= lo) & (d < hi)].mean() if ((d >= lo) & (d < hi)).any() else np.nan
             for lo, hi in zip(EDGES[:-1], EDGES[1:], strict=True)]
    print(f"{args.graph}, epsilon {args.epsilon:g}: C(k) by bucket of the released degree")
    print(f"{'bucket':>14s} {'nodes':>6s} {'estimate':>9s} {'se':>8s} {'truth':>7s}")
    for i in range(len(EDGES) - 1):
        print(f"[{EDGES[i]:>5d}, {EDGES[i + 1]:>6d}) {prof.nodes[i]:6d} {prof.mean[i]:9.4f} {prof.std_error[i]:8.4f} "
              f"{truth[i]:7.4f}")
    edges, frac = ac.clustering_histogram(rep, 10)
    true_frac = np.histogram(c, bins=edges)[0] / g.n_nodes
    print("distribution of the local coefficients (deconvolved | true):")
    for i in range(10):
        print(f"  [{edges[i]:.1f}, {edges[i + 1]:.1f}) {frac[i]:.3f} | {true_frac[i]:.3f}")
    fig = clustering_profile_figure(prof, truth, edges, frac, true_frac,
                                    f"adaptive-clustering on {args.graph}, epsilon {args.epsilon:g}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"clustering_profile_{args.graph}_eps{args.epsilon:g}.png"
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
