"""Plotting cost of ``ldpgraph experiment`` against its main job's wall time (goal: <= 10%).

The main job is the README's, as a user types it, in fresh processes:
``ldpgraph experiment --trials 200 --seed 0 --quiet`` (Facebook, nine epsilons, k = 2 and 3, the
five study methods, automatic n_jobs, PNG plots) against the same with ``--no-plots``; the
runs alternate (plots, no plots, plots, ...) so that both see the same load, and each figure
is the best of ``--repeat``. Plotting cost = (wall with plots - wall without) / wall with
plots. The same with ``--jobs 1`` (one worker process then imports matplotlib and renders the
plots on the core the simulation leaves idle) and with ``--plot-formats png,svg`` are reported without target.
User + sys CPU time of the whole process tree is printed beside each wall time: what plotting
costs in CPU, whatever the load.

    LDPGRAPH_DATA=/work/shared/datasets PYTHONPATH=. python scripts/bench_plots.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _timing import load_note, run_alternating, verdict  # scripts/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--trials", type=int, default=200, help="trials per cell (200: the README's main job)")
    args = ap.parse_args()
    print(f"before: {load_note()} (shared machine: wall times are noisy; best of {args.repeat}, alternating)\n")
    out = tempfile.mkdtemp(prefix="bench_plots_")
    base = [sys.executable, "-m", "ldpgraph", "experiment", "--seed", "0", "--quiet", "--trials", str(args.trials)]
    targets = []
    for label, extra in (("automatic n_jobs (the default)", []), ("--jobs 1", ["--jobs", "1"]),
                         ("png + svg", ["--plot-formats", "png,svg"])):
        runs = run_alternating({"plots": [*base, *extra, "--out", f"{out}/p"],
                                "no plots": [*base, *extra, "--no-plots", "--out", f"{out}/n"]},
                               args.repeat, env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
        p, n = runs["plots"], runs["no plots"]
        cost = (p.wall - n.wall) / p.wall
        floor = max(0.0, p.cpu - n.cpu) / 2  # the extra CPU spread over both cores
        print(f"{label}:\n   with plots: {p}\n   no plots:   {n}\n"
              f"   plotting cost {p.wall - n.wall:+.2f} s wall = {cost:.1%} of the main job's wall; "
              f"{p.cpu - n.cpu:+.2f} s CPU\n"
              + ("" if extra else f"   (a job that keeps both cores busy cannot hide that CPU: at least "
                                    f"+{floor:.2f} s wall, {floor / (n.wall + floor):.0%} of its wall)\n"),
              flush=True)
        if not extra:
            targets.append((f"plotting <= 10% of the main job's wall ({cost:.1%})", cost <= 0.10))
    print(f"after: {load_note()}\n\ntargets:")
    for name, ok in targets:
        print(f"   {verdict(ok):6s}  {name}")


if __name__ == "__main__":
    main()
