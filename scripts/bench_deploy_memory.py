"""Peak memory and time of a two-round-triangles-dlap deployment: ``ldpgraph node`` (rounds 1, 2)
and ``ldpgraph curate`` (rounds 1, 2), each command under ``/usr/bin/time -v``, for this
checkout (after) and, with ``--before DIR``, for another checkout's ``ldpgraph`` package (a
directory holding it, e.g. ``git archive i33 ldpgraph | tar -x -C DIR``), on the same graph in
the same run; prints the table with the after/before ratios and checks that the two runs'
report files hold the same rows and print the same estimate.

    python scripts/bench_deploy_memory.py --graph ba:n=20000,m=20 --before /tmp/before

Issue 34 (item 2): the target is a peak RSS of at most 1 GB per command whatever n.

Measured (2 shared cores under load from other jobs: times are upper bounds), ba:n=20000,m=20,
eps 2, d_max 100, seed 0; 53,980,330 round-1 rows (98 MiB Parquet), broadcast 23.8 MiB:

    command          after s  after MiB  before s  before MiB  time a/b  RSS a/b
    node round 1        92.4        475     324.3        7182      0.28     0.07
    curate round 1      20.0       1095     159.3        4316      0.13     0.25
    node round 2        43.0        926     101.0        1085      0.43     0.85
    curate round 2      29.9       1008      40.2        1167      0.74     0.86

(then, after the last two memory commits, on the same files: curate round 1 819 MiB, node round 2
623 MiB; the broadcast and the round-2 file byte-identical to before.) What is left: the
curator's noisy graph and the broadcast in memory are int64 pair indices (8 bytes a noisy edge:
432 MB here, 10.8 GB at 10^5 nodes), where the packed bits would be 25 MB / 625 MB.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _run(cmd: list[str], pythonpath: str, cwd: Path) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MiB, stdout) of one command under /usr/bin/time -v."""
    env = dict(os.environ, PYTHONPATH=pythonpath, LDPGRAPH_CURATOR_KEY=str(cwd / "curator.key"))
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "ldpgraph", *cmd], cwd=cwd, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1)) / 1024
    return wall, rss, proc.stdout


def deploy(pythonpath: str, work: Path, graph: str, epsilon: float, d_max: int, n: int,
           seed: int) -> dict[str, tuple[float, float, str]]:
    """The four commands of one deployment, in ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    common = ["--protocol", "two-round-triangles-dlap", "--epsilon", str(epsilon), "--d-max", str(d_max)]
    node = ["--graph", graph, "--simulate", "--seed", str(seed)]
    steps = {
        "node round 1": ["node", *common, *node, "--out", "r1.parquet"],
        "curate round 1": ["curate", "r1.parquet", *common, "--expected-nodes", str(n), "--broadcast-out",
                           "b.txt", "-q"],
        "node round 2": ["node", *common, *node, "--round", "2", "--broadcast", "b.txt", "--out", "r2.parquet"],
        "curate round 2": ["curate", "r2.parquet", *common, "--broadcast", "b.txt", "-q"],
    }
    out = {}
    for name, cmd in steps.items():
        out[name] = _run(cmd, pythonpath, work)
        print(f"  {name:<15} {out[name][0]:8.1f} s {out[name][1]:9.0f} MiB", file=sys.stderr, flush=True)
    return out


def _same_rows(a: Path, b: Path) -> bool:
    import pyarrow.parquet as pq

    return pq.read_table(a).equals(pq.read_table(b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", default="ba:n=20000,m=20")
    ap.add_argument("--epsilon", type=float, default=2.0)
    ap.add_argument("--d-max", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--before", help="directory holding the reference checkout's ldpgraph package")
    ap.add_argument("--work", help="working directory (default: a temporary one)")
    args = ap.parse_args()
    n = int(re.search(r"n=(\d+)", args.graph).group(1))
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        runs = {}
        for label, path in (("before", args.before), ("after", str(HERE))):
            if path is None:
                continue
            print(f"{label}: {path}", file=sys.stderr)
            runs[label] = deploy(path, Path(tmp) / label, args.graph, args.epsilon, args.d_max, n, args.seed)
        print(f"two-round-triangles-dlap on {args.graph}, epsilon {args.epsilon}, d_max {args.d_max}, "
              f"seed {args.seed}")
        size = (Path(tmp) / "after" / "r1.parquet").stat().st_size
        rows = re.search(r"\(([\d,]+) rows", runs["after"]["node round 1"][2]).group(1)
        print(f"round 1: {rows} rows, {size / 2**20:,.1f} MiB; broadcast "
              f"{(Path(tmp) / 'after' / 'b.txt').stat().st_size / 2**20:,.1f} MiB")
        head = f"{'command':<15} {'after s':>8} {'after MiB':>10}"
        if "before" in runs:
            head += f" {'before s':>9} {'before MiB':>11} {'time a/b':>9} {'RSS a/b':>8}"
        print(head)
        for name, (t, rss, _) in runs["after"].items():
            line = f"{name:<15} {t:8.1f} {rss:10.0f}"
            if "before" in runs:
                tb, rb, _ = runs["before"][name]
                line += f" {tb:9.1f} {rb:11.0f} {t / tb:9.2f} {rss / rb:8.2f}"
            print(line)
        if "before" in runs:
            same = all(_same_rows(Path(tmp) / "before" / f, Path(tmp) / "after" / f)
                       for f in ("r1.parquet", "r2.parquet"))
            est = [re.findall(r"^triangles .*$", runs[k]["curate round 2"][2], re.M) for k in ("before", "after")]
            print(f"same rows in the report files: {same}; same estimate line: {est[0] == est[1]} {est[1]}")


if __name__ == "__main__":
    main()
