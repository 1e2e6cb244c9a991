"""Peak memory and time of ``ldpgraph shuffle`` and ``ldpgraph curate`` on a small Parquet file of many
constant rows (issue 36, finding 7).

The file holds ``--rows`` copies of one ``wshuffle-triangles`` wedge row of node 0 (a few hundred KB:
Parquet's dictionary and run-length encodings). The tree measured is this one; ``--reference DIR``
(e.g. ``git archive 7443152 | tar -x -C DIR``) measures an older tree on the same kind of file, its
rows in that tree's format (version 1, central epsilon), beside. Each command runs in a child process
whose peak resident memory (``ru_maxrss``) and wall time are printed; the commands are expected to
refuse the file (exit 1): what is measured is what it costs them to do so.

    python scripts/measure_shuffle_memory.py --rows 20000000 --reference /tmp/old
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent.parent
N_USERS = 500
PLAN = ["--epsilon", "1", "--n-users", str(N_USERS), "--pairing-seed", "1"]


def constant_parquet(path: Path, rows: int, epsilon: float, version: int) -> None:
    """``rows`` copies of node 0's wedge row for pair 0, in row groups of 10^6 (bounded memory)."""
    group = min(rows, 1_000_000)
    one = pa.table({
        "node": pa.array(np.zeros(group, dtype=np.int64)), "round": pa.array(np.ones(group, dtype=np.int64)),
        "quantity": pa.array(["wedge"] * group).dictionary_encode(),
        "value": pa.array(np.zeros(group, dtype=np.int64)), "epsilon": pa.array(np.full(group, epsilon)),
        "sensitivity": pa.array(np.ones(group)),
        "protocol": pa.array(["wshuffle-triangles"] * group).dictionary_encode(),
        "protocol_version": pa.array(np.full(group, version, dtype=np.int64))})
    with pq.ParquetWriter(path, one.schema) as writer:
        done = 0
        while done < rows:
            take = min(group, rows - done)
            writer.write_table(one.slice(0, take))
            done += take


def measure(tree: Path, argv: list[str]) -> tuple[int, float, float, str]:
    """(exit code, peak RSS in MB, seconds, last line of stderr) of ``python -m ldpgraph ARGV`` on ``tree``."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "s = time.perf_counter() - t; "
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, s); "
             "print((r.stderr.strip().splitlines() or [''])[-1][:160])")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "ldpgraph", *argv],
                         capture_output=True, text=True, env=env, cwd=tree, check=True).stdout.splitlines()
    code, kib, secs = out[0].split()
    return int(code), int(kib) / 1024.0, float(secs), out[1] if len(out) > 1 else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--reference", type=Path, help="an older source tree to measure beside this one")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    from ldpgraph.protocols import registry

    eps0 = registry.get("wshuffle-triangles").plan(1.0, n_users=N_USERS).public["local_epsilon"]
    trees = [("this tree", HERE, eps0, 2, True)]
    if args.reference is not None:
        trees.insert(0, ("reference", args.reference, 1.0, 1, False))
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{args.rows:,} constant rows; plan: wshuffle-triangles, epsilon 1, {N_USERS} users")
        print(f"{'tree':<10} {'command':<8} {'file MB':>8} {'exit':>4} {'peak MB':>8} {'seconds':>8}  message")
        for label, tree, eps, version, new in trees:
            path = Path(tmp) / f"constant-v{version}.parquet"
            constant_parquet(path, args.rows, eps, version)
            size = path.stat().st_size / 1e6
            shuffle = ["shuffle", str(path), "--out", str(Path(tmp) / "out.parquet"), *(PLAN if new else [])]
            curate = ["curate", str(path), *PLAN, "--protocol", "wshuffle-triangles"]
            for name, argv in (("shuffle", shuffle), ("curate", curate)):
                code, mb, secs, msg = measure(tree, argv)
                print(f"{label:<10} {name:<8} {size:8.2f} {code:4d} {mb:8.0f} {secs:8.1f}  {msg}")
            (Path(tmp) / "out.parquet").unlink(missing_ok=True)
            path.unlink()


if __name__ == "__main__":
    main()
