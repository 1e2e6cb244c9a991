"""Benchmark: reading a SNAP-style edge list with ldpgraph vs numpy.loadtxt vs networkx.

Writes a seeded synthetic edge list (default 10^7 edges on 10^6 nodes, tab-separated, with a
4-line SNAP header) to a temporary folder, then times, in the same run:

- ldpgraph ``parse_edge_pairs`` (bytes in memory -> (m, 2) int64), with 1 and 2 threads;
- ldpgraph ``read_edge_pairs`` (file -> (m, 2) int64);
- ldpgraph ``read_edgelist`` (file -> Graph: relabel, symmetrise, dedupe, CSR);
- ``numpy.loadtxt(path, dtype=np.int64)`` (file -> (m, 2) int64), the reference;
- ``networkx.read_edgelist(path, nodetype=int)`` on the first ``--nx-edges`` lines
  (default 10^6; its rate is per edge and scaled to the full size in the table).

Each timing is the best and the median of ``--repeat`` runs. Usage::

    PYTHONPATH=. python scripts/bench_graph_io.py [--edges 10000000] [--nx-edges 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import numpy as np

from ldpgraph.graph import edgelist
from ldpgraph.graph.edgelist import parse_edge_pairs, read_edge_pairs, read_edgelist


def format_edges(pairs: np.ndarray) -> bytes:
    """ASCII ``u<TAB>v<LF>`` lines for non-negative int64 pairs, vectorised."""
    m = pairs.shape[0]
    width = max(1, len(str(int(pairs.max())))) if m else 1
    cols = []
    for j in range(2):
        x = pairs[:, j].copy()
        digits = np.empty((m, width), dtype=np.uint8)
        for k in range(width - 1, -1, -1):
            digits[:, k] = ord("0") + x % 10
            x //= 10
        # keep the last digit always; drop leading zeros
        keep = np.cumsum(digits != ord("0"), axis=1) > 0
        keep[:, -1] = True
        cols.append((digits, keep))
    sep = np.full((m, 1), ord("\t"), dtype=np.uint8)
    end = np.full((m, 1), ord("\n"), dtype=np.uint8)
    true = np.ones((m, 1), dtype=bool)
    table = np.hstack([cols[0][0], sep, cols[1][0], end])
    mask = np.hstack([cols[0][1], true, cols[1][1], true])
    return table[mask].tobytes()


def best_and_median(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", type=int, default=10**7)
    ap.add_argument("--nodes", type=int, default=10**6)
    ap.add_argument("--nx-edges", type=int, default=10**6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gzip", action="store_true", help="also time a gzip copy of the file")
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    pairs = rng.integers(0, args.nodes, size=(args.edges, 2), dtype=np.int64)
    header = (
        b"# Synthetic directed graph (ldpgraph bench_graph_io)\n"
        + f"# seed {args.seed}\n".encode()
        + f"# Nodes: {args.nodes} Edges: {args.edges}\n".encode()
        + b"# FromNodeId\tToNodeId\n"
    )
    body = format_edges(pairs)
    data = header + body
    m, m_nx = args.edges, min(args.nx_edges, args.edges)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.txt"
        path.write_bytes(data)
        nx_path = Path(tmp) / "synthetic_nx.txt"
        nx_path.write_bytes(header + format_edges(pairs[:m_nx]))
        print(f"file: {len(data) / 1e6:.1f} MB, {m:,} edges; networkx subset {m_nx:,} edges")

        check = read_edge_pairs(path).pairs
        assert np.array_equal(check, pairs), "parser disagrees with the generated edges"

        rows: list[tuple[str, int, float, float]] = []

        def run(name: str, edges: int, fn: Callable[[], object], repeat: int) -> None:
            best, med = best_and_median(fn, repeat)
            rows.append((name, edges, best, med))
            print(f"  {name:45s} best {best:8.3f} s  median {med:8.3f} s", flush=True)

        saved = edgelist._MAX_THREADS
        try:
            edgelist._MAX_THREADS = 1
            run("ldpgraph parse_edge_pairs, 1 thread", m, lambda: parse_edge_pairs(data),
                args.repeat)
        finally:
            edgelist._MAX_THREADS = saved
        run(f"ldpgraph parse_edge_pairs, {saved} threads", m, lambda: parse_edge_pairs(data),
            args.repeat)
        run("ldpgraph read_edge_pairs (file)", m, lambda: read_edge_pairs(path), args.repeat)
        run("ldpgraph read_edgelist (file -> Graph)", m, lambda: read_edgelist(path),
            args.repeat)
        if args.gzip:
            gz = Path(tmp) / "synthetic.txt.gz"
            gz.write_bytes(gzip.compress(data, compresslevel=6))
            run("ldpgraph read_edgelist (gzip -> Graph)", m, lambda: read_edgelist(gz),
                args.repeat)
        run("numpy.loadtxt (file)", m, lambda: np.loadtxt(path, dtype=np.int64), args.repeat)
        run(f"networkx.read_edgelist ({m_nx:,} edges)", m_nx,
            lambda: nx.read_edgelist(nx_path, nodetype=int), 1)

    rate = {name: edges / best for name, edges, best, _ in rows}
    ref_np = rate["numpy.loadtxt (file)"]
    ref_nx = rate[f"networkx.read_edgelist ({m_nx:,} edges)"]
    print()
    print(f"{'method':45s} {'M edges/s':>10s} {'x loadtxt':>10s} {'x networkx':>11s}"
          f" {'s per 1e7':>10s}")
    for name, _, _, _ in rows:
        r = rate[name]
        print(f"{name:45s} {r / 1e6:10.2f} {r / ref_np:10.2f} {r / ref_nx:11.1f}"
              f" {1e7 / r:10.3f}")
    print("(best of the runs; networkx measured on the subset, per edge)")


if __name__ == "__main__":
    main()
