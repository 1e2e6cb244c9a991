"""Plotting cost against the main job of ``ldpgraph experiment`` (goal: <= 10%).

The main job is the study's default run: Facebook, nine epsilons, k = 2 and 3, the five study
methods, 100 trials, automatic n_jobs. As the command line does, matplotlib is imported in a
background thread while the simulation runs (:func:`~ldpgraph.experiments.plots.preload_matplotlib`).
Each repetition, in one process: the simulation, ``write(plots=False)`` and ``write(plots=True)``
(PNG, the default; then PNG + SVG). Plotting cost = (write with plots - write without) / simulation,
best of ``--repeat`` for each time.

    PYTHONPATH=. python scripts/bench_plots.py [--repeat 3] [--trials 100]
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trials", type=int, default=100)
    args = ap.parse_args()
    os.environ.setdefault("MPLBACKEND", "Agg")
    from ldpgraph.cli import STUDY_EPSILONS
    from ldpgraph.experiments import run_experiment
    from ldpgraph.experiments.plots import preload_matplotlib

    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores (shared machine: timings are noisy)")
    best = {"simulation": math.inf, "write, no plots": math.inf, "write, png": math.inf, "write, png+svg": math.inf}
    preload_matplotlib()
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        res = run_experiment("facebook", epsilons=STUDY_EPSILONS, n_trials=args.trials, seed=0, quiet=True)
        best["simulation"] = min(best["simulation"], time.perf_counter() - t0)
        with tempfile.TemporaryDirectory() as d:
            for key, kw in (("write, no plots", {"plots": False}), ("write, png", {}),
                            ("write, png+svg", {"plot_formats": ("png", "svg")})):
                t0 = time.perf_counter()
                res.write(Path(d) / key.replace(" ", "_").replace(",", ""), **kw)
                best[key] = min(best[key], time.perf_counter() - t0)
    print(f"grid: {res.config['n_cells']} cells x {args.trials} trials, n_jobs={res.config['n_jobs']}")
    for key, t in best.items():
        print(f"{key:18s} {t:7.3f} s")
    for key in ("write, png", "write, png+svg"):
        cost = (best[key] - best["write, no plots"]) / best["simulation"]
        print(f"plotting cost, {key[7:]:8s} {cost:6.1%} of the main job's simulation")


if __name__ == "__main__":
    main()
