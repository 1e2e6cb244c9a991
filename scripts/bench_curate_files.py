"""Curating a large report file: throughput (rows/s) and peak memory of the streaming curator.

Writes a Parquet report file of ROWS degree reports (one per node; written chunk by chunk, so
generation itself stays small), then curates it in a fresh subprocess (so that its peak RSS is
the curator's alone): validation of the whole set (protocol, version, round, epsilon,
sensitivity, integer values, duplicate / missing nodes) plus the k-star estimate with its
standard error. References timed in the same run: pyarrow reading the same file's columns
(the I/O floor: the curator cannot beat it) and ``np.bincount`` over the values in memory.

Usage: PYTHONPATH=. python scripts/bench_curate_files.py [ROWS] [--keep PATH]
(default ROWS = 10**8; 10**7 for a quick run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from _timing import best_time

from ldpgraph.protocols.reports import COLUMNS
from ldpgraph.run.reportfiles import parquet_write_options

CHUNK = 1 << 20


def write_file(path: Path, rows: int, seed: int = 0) -> float:
    """A degree report file of ``rows`` nodes (BA-like degrees + DLap noise), row groups of 2^20."""
    from ldpgraph.mechanisms import DiscreteLaplace

    t0 = time.perf_counter()
    gen = np.random.default_rng(seed)
    mech = DiscreteLaplace(epsilon=1.0)
    quantity = pa.DictionaryArray.from_arrays(pa.array(np.zeros(CHUNK, np.int32)), pa.array(["degree"]))
    protocol = pa.DictionaryArray.from_arrays(pa.array(np.zeros(CHUNK, np.int32)), pa.array(["degree"]))
    ones = pa.array(np.ones(CHUNK, np.int64))
    eps = pa.array(np.ones(CHUNK))
    schema = None
    writer = None
    for start in range(0, rows, CHUNK):
        n = min(CHUNK, rows - start)
        degrees = np.minimum((gen.pareto(2.0, n) * 10).astype(np.int64), 10**6)
        values = mech.randomize(degrees, rng=gen)
        arrays = [pa.array(np.arange(start, start + n, dtype=np.int64)), ones.slice(0, n), quantity.slice(0, n),
                  pa.array(values), eps.slice(0, n), eps.slice(0, n), protocol.slice(0, n), ones.slice(0, n)]
        batch = pa.record_batch(arrays, names=list(COLUMNS))
        if writer is None:
            schema = batch.schema.with_metadata({b"ldpgraph.report_format": b"1"})
            opts = parquet_write_options(CHUNK)
            writer = pq.ParquetWriter(path, schema, use_dictionary=opts["use_dictionary"],
                                      column_encoding=opts["column_encoding"])
        writer.write_batch(batch, row_group_size=CHUNK)
    writer.close()
    return time.perf_counter() - t0


CURATE = r"""
import json, resource, sys, time
import pyarrow.parquet as pq
from ldpgraph.run.reportfiles import curate_files
path, mode = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if mode == "curate":
    res = curate_files(path, [("kstars", 2)], expected_nodes=int(sys.argv[3]))
    est = res.estimates[0][2]
    out = {"value": est.value, "std_error": est.std_error, "rows": res.summary.n_rows}
else:  # the I/O floor: pyarrow reads every column of every batch, nothing else
    pf = pq.ParquetFile(path, read_dictionary=["quantity", "protocol"])
    rows = 0
    for i in range(pf.metadata.num_row_groups):
        rows += pf.read_row_group(i).num_rows
    out = {"rows": rows}
out["seconds"] = time.perf_counter() - t0
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run(path: Path, mode: str, rows: int) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                      os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", CURATE, str(path), mode, str(rows)], capture_output=True,
                          text=True, env=env, check=True)
    return json.loads(proc.stdout)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = int(float(args[0])) if args else 10**8
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (2 shared cores: timings are noisy)")
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        path = Path(keep) if keep else Path(tmp) / "reports.parquet"
        if not path.exists():
            secs = write_file(path, rows)
            print(f"wrote {rows:,} rows to {path} ({path.stat().st_size / 2**20:,.0f} MiB) in {secs:.1f} s")
        best = {"curate": None, "read": None}
        for _ in range(2):  # best of 2, alternating
            for mode in ("read", "curate"):
                r = run(path, mode, rows)
                if best[mode] is None or r["seconds"] < best[mode]["seconds"]:
                    best[mode] = r
        cur, rd = best["curate"], best["read"]
        assert cur["rows"] == rows
        print(f"pyarrow read only : {rd['seconds']:7.2f} s  {rows / rd['seconds'] / 1e6:7.1f} M rows/s  "
              f"peak RSS {rd['peak_rss_mb']:,.0f} MiB")
        print(f"ldpgraph curate   : {cur['seconds']:7.2f} s  {rows / cur['seconds'] / 1e6:7.1f} M rows/s  "
              f"peak RSS {cur['peak_rss_mb']:,.0f} MiB  (kstars_2 = {cur['value']:.6g} +- {cur['std_error']:.3g})")
        print(f"ratio curate / read-only time: {cur['seconds'] / rd['seconds']:.2f}")
        # in-memory reference on a 10^7 slice: bincount of the values
        n = min(rows, 10**7)
        values = pq.read_table(path, columns=["value"]).slice(0, n).column(0).to_numpy()
        t = best_time(lambda v=values: np.bincount(v - v.min()))
        print(f"np.bincount of {n:,} values in memory: {n / t / 1e6:.0f} M values/s (reference)")
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
