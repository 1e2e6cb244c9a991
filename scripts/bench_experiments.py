"""Benchmark of the experiment runner on the full k-star reproduction grid.

Grid: Facebook (4,039 nodes), 5 methods x 9 epsilons x k in {2, 3} x 1000 trials = 90,000
simulated runs of all nodes. Timed, on the same worker pool:

* batched: blocks of 100 trials per task (the default), 2 workers;
* batched, 1 worker (sequential reference for the parallel speed-up);
* one trial per joblib task (block_size=1, joblib batch_size=1), 2 workers.

The target is < 60 s for the batched grid on 2 cores. Run from the repository root:

    LDPGRAPH_DATA=../shared/datasets python scripts/bench_experiments.py [--trials 1000] [--jobs 2]
"""

from __future__ import annotations

import argparse
import time

from ldpgraph.cli import FALLBACK_GRAPH, STUDY_EPSILONS
from ldpgraph.datasets import locate_dataset
from ldpgraph.experiments import DEFAULT_METHODS, resolve_graph_inputs, run_experiment


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-per-trial", action="store_true", help="skip the slow one-trial-per-task run")
    args = ap.parse_args()

    source = "facebook" if locate_dataset("facebook") is not None else FALLBACK_GRAPH
    [graph] = resolve_graph_inputs([source])
    graphs = {graph.label: graph.degrees}
    grid = dict(epsilons=STUDY_EPSILONS, ks=[2, 3], methods=DEFAULT_METHODS, n_trials=args.trials, seed=0,
                quiet=True)
    n_runs = len(DEFAULT_METHODS) * len(STUDY_EPSILONS) * 2 * args.trials
    print(f"graph {graph.label}: {graph.n_nodes:,} nodes, {graph.n_edges:,} edges; "
          f"{len(DEFAULT_METHODS)} methods x {len(STUDY_EPSILONS)} eps x 2 k x {args.trials} trials "
          f"= {n_runs:,} runs")

    # start the worker pool once, so that no timing below includes process start-up
    run_experiment(graphs, **{**grid, "n_trials": 2, "ks": [2]}, n_jobs=args.jobs)

    configs = [
        ("batched (block 100)", dict(n_jobs=args.jobs)),
        ("batched (block 100), 1 worker", dict(n_jobs=1)),
    ]
    if not args.skip_per_trial:
        configs.append(("one trial per task", dict(n_jobs=args.jobs, block_size=1, batch_size=1)))
    rows = []
    for name, kw in configs:
        t0 = time.perf_counter()
        res = run_experiment(graphs, **grid, **kw)
        dt = time.perf_counter() - t0
        rows.append((name, kw.get("n_jobs"), res.config["n_tasks"], dt))
        print(f"  {name}: {dt:.2f} s", flush=True)
    ref = rows[0][3]
    print()
    print(f"{'configuration':32s} {'workers':>7s} {'tasks':>7s} {'seconds':>8s} {'runs/s':>9s} {'x batched':>9s}")
    for name, jobs, tasks, dt in rows:
        print(f"{name:32s} {jobs:7d} {tasks:7d} {dt:8.2f} {n_runs / dt:9.0f} {dt / ref:9.2f}")
    print(f"\ntarget: batched grid < 60 s on 2 cores -> {'met' if ref < 60 else 'NOT met'} ({ref:.1f} s)")


if __name__ == "__main__":
    main()
