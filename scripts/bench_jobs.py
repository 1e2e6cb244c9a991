"""Benchmark: ``--jobs 2`` against ``--jobs 1`` on three grids, measured in the same run (issue 34).

Target: ``--jobs 2`` never slower than ``--jobs 1`` (ratio t(jobs 1) / t(jobs 2) >= 0.97 on the
main job and on the Facebook k-star grid: small grids stay in this process, decided from the
measured first blocks) and >= 1.7 on a grid of >= 20 s of single-core work.

The grids, each run as a user runs it (a fresh ``ldpgraph experiment`` process, so that worker
start-up is paid as a user pays it; bytecode caches on, as installed):

a. the main job: ``ldpgraph experiment --trials 200 --seed 0 --quiet --out DIR`` (Facebook, the
   study's 9 epsilons, k in {2, 3}, the 5 default methods, plots written);
b. the Facebook k-star grid: ``ldpgraph experiment facebook --epsilons 0.1,0.2,0.5,1,2,5 --k 2 3
   --trials 1000 --seed 0 --quiet --no-plots`` (60 cells, 60,000 simulated runs of all nodes);
c. a grid of >= 20 s of single-core work: two adjacency methods on Facebook,
   ``--stat triangles --methods arr-triangles edge-orient-triangles --epsilons 0.5,1,2 --trials 24
   --block-size 1`` (144 tasks of 0.1-0.3 s of CPU: about 20 s of CPU in all, one core; the
   first measurement used 12 trials, about 10 s).

Every configuration runs ``--repeat`` times (default 3), the configurations taking turns (so that
all see the same changes of load on a shared machine), and the median wall time is reported, with
the decision the run recorded (``experiment.json``: processes used, tasks done in the calling
process). With ``--baseline-src DIR`` (a checkout of another commit, e.g. ``git archive i33 | tar
-x -C DIR``) the same commands of that tree take part in the same turns: before/after under the
same load. The machine may be shared: the load average is printed before and after; a ratio
measured under load is a lower bound of the quiet-machine one for (c).

    LDPGRAPH_DATA=/work/shared/datasets PYTHONPATH=. python scripts/bench_jobs.py [--repeat 3]
        [--baseline-src DIR] [--only a,b,c]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import load_note, run_command, verdict  # scripts/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]

GRIDS = {
    "a": ("main job", ["--trials", "200", "--seed", "0", "--quiet"], 0.97),
    "b": ("Facebook k-star grid", ["facebook", "--epsilons", "0.1,0.2,0.5,1,2,5", "--k", "2", "3",
                                   "--trials", "1000", "--seed", "0", "--quiet", "--no-plots"], 0.97),
    "c": (">= 20 s grid (arr + edge-orient triangles)",
          ["facebook", "--stat", "triangles", "--methods", "arr-triangles", "edge-orient-triangles",
           "--epsilons", "0.5,1,2", "--trials", "24", "--block-size", "1", "--seed", "0", "--quiet",
           "--no-plots"], 1.7),
}


def command(src: Path, args: list[str], jobs: int, out: Path) -> tuple[list[str], dict[str, str]]:
    """The command and its environment (run it in ``src``: ``python -m`` puts the working
    directory first on sys.path)."""
    cmd = [sys.executable, "-m", "ldpgraph", "experiment", *args, "--jobs", str(jobs), "--out", str(out)]
    return cmd, {"PYTHONPATH": str(src), "MPLBACKEND": "Agg"}


def decision(out: Path) -> str:
    try:
        cfg = json.loads((out / "experiment.json").read_text())
    except (OSError, ValueError):
        return "?"
    p = cfg.get("parallel")
    if p is None:
        return f"{cfg.get('backend')} (no adaptive decision)"
    if p["processes"] == 1:
        return f"in the calling process ({p['in_process_tasks']} tasks)"
    return (f"{p['processes']} processes after {p['decided_after']} task(s) (estimated {p['estimated_seconds']} "
            f"CPU-s left, start-up {p['startup_seconds']} s); {p['in_process_tasks']} of {cfg['n_tasks']} tasks "
            "in the calling process")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-src", type=Path, default=None)
    ap.add_argument("--only", default="a,b,c")
    opts = ap.parse_args()
    trees = {"this tree": ROOT}
    if opts.baseline_src is not None:
        trees["baseline"] = opts.baseline_src.resolve()
    print(load_note(), "(the machine is shared with other jobs: times are upper bounds)")
    print(f"median of {opts.repeat} runs per configuration, configurations taking turns\n")
    env_base = {"LDPGRAPH_DATA": os.environ.get("LDPGRAPH_DATA", "")}
    with tempfile.TemporaryDirectory() as tmp:
        for src in trees.values():  # untimed: bytecode caches written, the dataset verified
            cmd, env = command(src, GRIDS["a"][1], 1, Path(tmp) / "warm")
            run_command(cmd, 1, env={**env_base, **env}, cwd=str(src), warm=False)
        for key in opts.only.split(","):
            title, args, target = GRIDS[key]
            confs = {(tree, jobs): command(src, args, jobs, Path(tmp) / f"{key}-{tree}-{jobs}".replace(" ", "_"))
                     for tree, src in trees.items() for jobs in (1, 2)}
            walls: dict[tuple[str, int], list[float]] = {c: [] for c in confs}
            notes: dict[tuple[str, int], str] = {}
            for _ in range(opts.repeat):
                for c, (cmd, env) in confs.items():
                    walls[c].append(run_command(cmd, 1, env={**env_base, **env}, cwd=env["PYTHONPATH"],
                                                warm=False).wall)
                    notes[c] = decision(Path(cmd[-1]))
            print(f"({key}) {title}: ldpgraph experiment {' '.join(args)}")
            for tree in trees:
                t1 = statistics.median(walls[(tree, 1)])
                t2 = statistics.median(walls[(tree, 2)])
                ratio = t1 / t2
                r1, r2 = (", ".join(f"{w:.2f}" for w in walls[(tree, j)]) for j in (1, 2))
                print(f"  {tree:9s}  --jobs 1 {t1:7.2f} s [{r1}]  --jobs 2 {t2:7.2f} s "
                      f"[{r2}]  ratio {ratio:5.2f}  (target >= {target}: "
                      f"{verdict(ratio >= target)})")
                print(f"             --jobs 2 decided: {notes[(tree, 2)]}")
            print(flush=True)
    print(load_note())


if __name__ == "__main__":
    main()
