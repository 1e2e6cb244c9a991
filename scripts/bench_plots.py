"""Plotting cost against the main job: ``ldpgraph experiment`` with and without plots.

The main job is the study's default run (Facebook, nine epsilons, k = 2 and 3, the five study
methods, 100 trials). Each configuration runs as a fresh ``python -m ldpgraph`` process (so
matplotlib's import is counted), best of ``--repeat``; the ratio (plots - no plots) / no plots is
the plotting cost (goal: <= 10%). Also timed in-process: one figure per format.

    PYTHONPATH=. python scripts/bench_plots.py [--repeat 3] [--trials 100]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_time  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _run(extra: list[str], trials: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
        subprocess.run([sys.executable, "-m", "ldpgraph", "experiment", "--trials", str(trials), "--seed", "0",
                        "--quiet", "--out", str(Path(d) / "out"), *extra], check=True, env=env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trials", type=int, default=100)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores (shared machine: timings are noisy)")
    base = best_time(lambda: _run(["--no-plots"], args.trials), args.repeat)
    rows = [("no plots (reference)", base)]
    for fmts in ("png", "png,svg"):
        t = best_time(lambda f=fmts: _run(["--plot-formats", f], args.trials), args.repeat)
        rows.append((f"plots {fmts}", t))
    for name, t in rows:
        extra = "" if t is base else f"   plotting cost {(t - base) / base:+.1%} of the main job"
        print(f"{name:22s} {t:7.2f} s{extra}")

    from ldpgraph.experiments import run_experiment
    from ldpgraph.experiments.plots import plot_relative_rmse

    res = run_experiment("facebook", epsilons=[0.5, 1, 2], ks=[2], n_trials=20, seed=0, quiet=True, n_jobs=1)
    import matplotlib.figure  # noqa: F401  (import excluded from the per-figure times)

    with tempfile.TemporaryDirectory() as d:
        for fmt in ("png", "svg"):
            t0 = time.perf_counter()
            plot_relative_rmse(res.summary, d, formats=(fmt,))
            print(f"one figure, {fmt}: {time.perf_counter() - t0:.3f} s")


if __name__ == "__main__":
    main()
