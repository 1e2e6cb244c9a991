"""Reproduce the k-star study: Facebook, every method, eps in {0.1, ..., 5}, k = 2 and 3.

Each node of the SNAP ego-Facebook graph (4,039 nodes, 88,234 edges) releases what its method
prescribes at budget eps; the curator estimates the k-star count S_k = sum_v C(d_v, k). For
each (method, k, eps) the script simulates --trials independent runs (default 1000) and writes
into --out (default results/kstars):

* records.csv     one row per trial (graph, method, statistic, k, epsilon, trial, estimate,
                  truth, seed, spawn_key)
* summary.csv     relative RMSE with its 95% confidence interval, bias, analytic RMSE
* summary.txt     the same as a text table
* table.md        relative RMSE, methods x epsilons, one table per k (markdown)
* plots/          relative RMSE vs epsilon, log-log, PNG and SVG, one figure per k
* experiment.json seed, grid, versions, timing

Run from the repository root (the graph is looked up in LDPGRAPH_DATA, then the cache):

    LDPGRAPH_DATA=../shared/datasets python scripts/reproduce_kstars.py [--trials 1000] [--jobs -1]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from ldpgraph.cli import STUDY_EPSILONS
from ldpgraph.datasets import DatasetNotFoundError, dataset_path
from ldpgraph.experiments import run_experiment
from ldpgraph.run.method import method_names


def markdown_tables(summary, epsilons) -> str:
    """Relative RMSE, one row per method and one column per epsilon, for each k."""
    out = []
    for k in sorted({r.k for r in summary}):
        rows = [r for r in summary if r.k == k]
        methods = list(dict.fromkeys(r.method for r in rows))
        by = {(r.method, r.epsilon): r for r in rows}
        out.append(f"### k = {k}: relative RMSE of S_{k} (truth {rows[0].truth:,.0f})\n")
        out.append("| method | " + " | ".join(f"eps={e:g}" for e in epsilons) + " |")
        out.append("|---|" + "---:|" * len(epsilons))
        for m in methods:
            cells = []
            for e in epsilons:
                v = by[(m, e)].relative_rmse
                cells.append("-" if not math.isfinite(v) else f"{v:.2e}")
            out.append(f"| {m} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=1000, help="trials per cell (default 1000)")
    ap.add_argument("--jobs", type=int, default=-1, help="parallel workers (default: all cores)")
    ap.add_argument("--seed", type=int, default=20240601, help="root seed")
    ap.add_argument("--out", default="results/kstars", help="output folder")
    ap.add_argument("--scheduler", help="Dask scheduler address (optional)")
    args = ap.parse_args()

    try:
        dataset_path("facebook")
    except DatasetNotFoundError as exc:
        print(f"reproduce_kstars: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    result = run_experiment(
        "facebook",
        epsilons=STUDY_EPSILONS,
        ks=[2, 3],
        methods=method_names("kstars"),
        n_trials=args.trials,
        seed=args.seed,
        n_jobs=args.jobs,
        scheduler=args.scheduler,
    )
    paths = result.write(args.out)
    tables = markdown_tables(result.summary, STUDY_EPSILONS)
    table_path = Path(args.out) / "table.md"
    table_path.write_text(tables, encoding="utf-8")
    print(result.table())
    print()
    print(tables)
    print(f"{len(result.records)} cells x {args.trials} trials in {time.perf_counter() - t0:.1f} s "
          f"(simulation {result.config['simulation_seconds']:.1f} s, backend {result.config['backend']})")
    for key in ("records", "summary", "table", "config"):
        print(f"wrote {paths[key]}")
    print(f"wrote {table_path}")
    for p in paths["plots"]:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
