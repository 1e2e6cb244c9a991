"""Benchmark: reading a SNAP-style edge list with ldpgraph vs numpy.loadtxt vs networkx.

Writes a seeded synthetic edge list (default 10^7 edges on 10^6 nodes, tab-separated, with a
4-line SNAP header) to a temporary folder, then times, in the same run:

- ldpgraph ``parse_edge_pairs`` (bytes in memory -> (m, 2) int64), with 1 and 2 threads;
- ldpgraph ``read_edge_pairs`` (file -> (m, 2) int64);
- ldpgraph ``read_edgelist`` (file -> Graph: relabel, symmetrise, dedupe, CSR);
- ``numpy.loadtxt(path, dtype=np.int64)`` (file -> (m, 2) int64), the reference;
- ``networkx.read_edgelist(path, nodetype=int)`` on the first ``--nx-edges`` lines
  (default 10^6; its rate is per edge and scaled to the full size in the table);
- the library routes of the performance issue (goal 2), in the same run: ``pyarrow.csv.read_csv``
  alone (file -> two int64 columns); pyarrow + numpy to the same Graph arrays as
  ``read_edgelist`` (relabel by a dense presence map, canonical (min, max) keys, drop self-loops,
  dedupe by sort + neighbour comparison, symmetric CSR by a second sort; checked equal to
  ``read_edgelist``'s CSR); pyarrow + ``np.bincount`` degrees (no dedupe: a lower bound);
- the graph build alone (node-index columns -> CSR, ``core._simple_csr``) against the build as it
  was before the counting-sort rewrite (``reference_build``, kept here as the reference), and
  ``read_edgelist`` with that old build swapped in: the after/before ratios; with ``--before DIR``
  also ``read_edgelist`` in fresh processes of this checkout and of DIR (e.g. the commit before a
  change), taking turns so that both see the same load;
- peak memory (``--memory``, default on): each route in a fresh subprocess, peak resident size
  above the size after the imports (Linux VmHWM, reset by /proc/self/clear_refs), against the
  raw edge array (m x 2 int64), and the tracemalloc peak of the same route in another fresh process;
- graph objects -> Graph (``--objects``): ``from_scipy_sparse`` on a CSR adjacency of the same
  edges, ``from_igraph`` on an igraph.Graph of them and ``from_networkx`` on a networkx graph of
  the first ``--nx-edges``, each next to the library's own export of the same object (scipy
  ``tocoo``, igraph ``get_edgelist`` + ``degree``, ``nx.to_scipy_sparse_array``);
- small inputs (``--small``): the numpy build of small inputs (``core._simple_csr_sorted``, no
  scipy import) against the counting sorts from 2**12 to 2**22 edges (the crossover
  ``core._SMALL_EDGES``), and the wall time of ``import ldpgraph; load_dataset("facebook")`` in
  a fresh process, with the modules it left out; ``--before DIR`` times the same in a fresh
  process of another checkout (e.g. ``--before /work/main``), alternating with this one.

Each timing is the best and the median of ``--repeat`` runs; the machine may be shared (the load
average is printed). Usage::

    PYTHONPATH=. python scripts/bench_graph_io.py [--edges 10000000] [--nx-edges 1000000] [--repeat 3]
    PYTHONPATH=. python scripts/bench_graph_io.py --small [--before /work/main]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import numpy as np

from ldpgraph.graph import core, edgelist
from ldpgraph.graph.edgelist import parse_edge_pairs, read_edge_pairs, read_edgelist

HEADER_LINES = 4


def arrow_columns(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """pyarrow's multi-threaded CSV reader: the two int64 columns of the tab-separated file."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(skip_rows=HEADER_LINES, column_names=["u", "v"], block_size=1 << 24),
        parse_options=pacsv.ParseOptions(delimiter="\t"),
        convert_options=pacsv.ConvertOptions(column_types={"u": pa.int64(), "v": pa.int64()}),
    )
    return table.column(0).to_numpy(), table.column(1).to_numpy()


def arrow_numpy_graph(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """File -> (node_ids, indptr, indices) of the simple undirected graph, pyarrow + numpy."""
    u, v = arrow_columns(path)
    top = int(max(u.max(), v.max())) + 1
    present = np.zeros(top, dtype=bool)  # dense relabelling: ids are bounded here
    present[u] = True
    present[v] = True
    node_ids = np.flatnonzero(present)
    remap = np.cumsum(present, dtype=np.int64) - 1
    a, b = remap[u], remap[v]
    del u, v, remap, present
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    del a, b
    keep = lo != hi
    n = node_ids.size
    key = np.sort(lo[keep] * n + hi[keep])
    del lo, hi, keep
    key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    row, col = np.divmod(key, n)
    both = np.sort(np.concatenate((key, col * n + row)))
    del key, row, col
    src, indices = np.divmod(both, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return node_ids, indptr, indices


def arrow_bincount_degrees(path: Path) -> np.ndarray:
    """File -> degree counts with duplicates and self-loops (a lower bound, not a Graph)."""
    u, v = arrow_columns(path)
    top = int(max(u.max(), v.max())) + 1
    return np.bincount(u, minlength=top) + np.bincount(v, minlength=top)


def reference_build(u: np.ndarray, v: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The graph build as it was before the counting-sort rewrite (kept as the "before" reference).

    Same contract as ``core._simple_csr``: (indptr, indices, self-loops, edges given both ways).
    One counting sort by ``lo`` plus a sort inside each row, dedupe through int64 prefix sums,
    then the transpose and a merge through ``np.repeat``/``np.arange`` position arrays.
    """
    import scipy.sparse as sp

    itype = np.int64 if n >= 2**30 else np.int32
    lo = np.minimum(u, v).astype(itype)
    col = np.maximum(u, v).astype(itype)
    loops = lo == col
    n_loops = int(np.count_nonzero(loops))
    col <<= 1
    col |= np.greater(u, v)
    if n_loops:
        lo, col = lo[~loops], col[~loops]
    ptr, ind = core._sorted_rows(lo, col, n, 2 * n)
    del lo, col
    key = ind >> 1
    same = np.equal(key[1:], key[:-1])
    starts = ptr[1:-1]
    same[starts[(starts > 0) & (starts < key.size)] - 1] = False
    keep = np.concatenate(([True], ~same))[: key.size]
    first = np.flatnonzero(keep)
    upper = key[first]
    last = np.append(first[1:], ind.size) - 1
    n_both = int(np.count_nonzero((ind[first] & 1 == 0) & (ind[last] & 1 == 1)))
    kept_before = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
    ptr_u = kept_before[ptr].astype(np.int64)
    del key, same, keep, first, last, kept_before, ind
    nnz = int(upper.size)
    lower = sp.csr_array((np.ones(nnz, dtype=np.int8), upper, ptr_u), shape=(n, n)).T.tocsr()
    ptr_l = lower.indptr.astype(np.int64)
    indices = np.empty(2 * nnz, dtype=np.int64)
    indices[np.arange(nnz, dtype=np.int64) + np.repeat(ptr_l[1:], np.diff(ptr_u))] = upper
    indices[np.arange(nnz, dtype=np.int64) + np.repeat(ptr_u[:-1], np.diff(ptr_l))] = lower.indices
    return ptr_l + ptr_u, indices, n_loops, n_both


def build_new(columns: tuple[np.ndarray, np.ndarray, int]) -> object:
    u, v, n = columns
    return core._simple_csr([u, v], n)


def build_before(columns: tuple[np.ndarray, np.ndarray, int]) -> object:
    return reference_build(*columns)


def reference_csr(cols: list[np.ndarray], n: int, *, offset: int = 0, loop_nodes: list | None = None) -> object:
    """:func:`reference_build` with the interface of ``core._simple_csr`` (offset, loop nodes)."""
    u, v = cols
    cols.clear()
    if offset:
        u, v = u - offset, v - offset
    if loop_nodes is not None and (u == v).any():
        loop_nodes.append(u[u == v])
    return reference_build(u, v, n)


def read_edgelist_before(path: Path) -> object:
    """``read_edgelist`` with the build swapped for :func:`reference_build` (same parser)."""
    saved = core._simple_csr
    core._simple_csr = reference_csr
    try:
        return read_edgelist(path)
    finally:
        core._simple_csr = saved


def npy_columns(path: Path) -> tuple[np.ndarray, np.ndarray, int]:
    """The two node-index columns saved by the benchmark (``.npy``), and the node count."""
    pairs = np.load(path)
    return pairs[:, 0].copy(), pairs[:, 1].copy(), int(pairs.max()) + 1 if pairs.size else 0


ROUTES: dict[str, Callable[[Path], object]] = {
    "read_edgelist": read_edgelist,
    "read_edgelist (before)": read_edgelist_before,
    "pyarrow+numpy": arrow_numpy_graph,
    "pyarrow read_csv": arrow_columns,
}
# build only (relabelled columns -> CSR), the columns loaded from a .npy before the baseline
BUILD_ROUTES: dict[str, Callable[[tuple[np.ndarray, np.ndarray, int]], object]] = {
    "build (new)": build_new,
    "build (before)": build_before,
}


def child(route: str, path: str, traced: bool = False) -> None:
    """Run one route in this (fresh) process; print the peak resident MB above the imports.

    With ``traced``, the peak of the allocations tracemalloc sees (numpy's and Python's, not
    pyarrow's pool) instead, the route run under tracemalloc (slower; its time is not shown).
    """
    import tracemalloc

    import pyarrow.csv  # noqa: F401 - loaded before the baseline, as in the parent

    def kib(field: str) -> int:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(field))

    if route in BUILD_ROUTES:
        columns = npy_columns(Path(path))
        func: Callable[[], object] = lambda: BUILD_ROUTES[route](columns)  # noqa: E731
    else:
        func = lambda: ROUTES[route](Path(path))  # noqa: E731
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    if traced:
        tracemalloc.start()
        func()
        print(json.dumps({"traced_mb": tracemalloc.get_traced_memory()[1] / 2**20}))
        return
    before = kib("VmRSS:")
    t0 = time.perf_counter()
    func()
    print(json.dumps({"peak_mb": (kib("VmHWM:") - before) / 1024, "seconds": time.perf_counter() - t0}))


def peak_memory(route: str, path: Path, traced: bool = False) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent.parent),
                                                        os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, __file__, "--child", route, str(path)] + ["--traced"] * traced,
                         capture_output=True,
                         text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


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
    ap.add_argument("--no-memory", dest="memory", action="store_false", help="skip the peak memory runs")
    ap.add_argument("--no-objects", dest="objects", action="store_false",
                    help="skip networkx / igraph / scipy.sparse -> Graph")
    ap.add_argument("--small", action="store_true",
                    help="only the small-input measures: numpy build crossover, Facebook start-up load")
    ap.add_argument("--before", metavar="DIR",
                    help="also time read_edgelist (or, with --small, the Facebook load) from this checkout, "
                         "in fresh processes alternating with this one")
    ap.add_argument("--child", nargs=2, metavar=("ROUTE", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child, traced=args.traced)
        return
    print(f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    if args.small:
        small_inputs(args.repeat, args.before)
        print(f"\nload average {' / '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
        return
    import scipy.sparse  # noqa: F401 - imported before the timings (the build imports it on first use)

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
        run("  read_edgelist, build before (reference)", m, lambda: read_edgelist_before(path),
            args.repeat)
        columns = (pairs[:, 0].copy(), pairs[:, 1].copy(), args.nodes)
        new, old = build_new(columns), reference_build(*columns)
        assert all(np.array_equal(a, b) for a, b in zip(new, old, strict=True)), "the builds disagree"
        del new, old
        run("build only: core._simple_csr (columns -> CSR)", m, lambda: build_new(columns), args.repeat)
        run("  build only, before (reference)", m, lambda: build_before(columns), args.repeat)
        np.save(Path(tmp) / "columns.npy", pairs)
        if args.gzip:
            gz = Path(tmp) / "synthetic.txt.gz"
            gz.write_bytes(gzip.compress(data, compresslevel=6))
            run("ldpgraph read_edgelist (gzip -> Graph)", m, lambda: read_edgelist(gz),
                args.repeat)
        if args.before:
            checkouts_read_edgelist(path, args.before, args.repeat)
        g = read_edgelist(path)
        ids, ptr, idx = arrow_numpy_graph(path)
        assert np.array_equal(g.node_ids, ids) and np.array_equal(g.indptr, ptr) and np.array_equal(
            g.indices, idx), "the pyarrow + numpy route disagrees with read_edgelist"
        del g, ids, ptr, idx
        run("pyarrow read_csv (file -> 2 columns)", m, lambda: arrow_columns(path), args.repeat)
        run("pyarrow + numpy (file -> Graph arrays)", m, lambda: arrow_numpy_graph(path), args.repeat)
        run("pyarrow + bincount (degrees, no dedupe)", m, lambda: arrow_bincount_degrees(path), args.repeat)
        run("numpy.loadtxt (file)", m, lambda: np.loadtxt(path, dtype=np.int64), args.repeat)
        run(f"networkx.read_edgelist ({m_nx:,} edges)", m_nx,
            lambda: nx.read_edgelist(nx_path, nodetype=int), 1)
        memory = {}
        if args.memory:
            for route in ROUTES:
                memory[route] = min((peak_memory(route, path) for _ in range(2)), key=lambda r: r["peak_mb"])
                memory[route].update(peak_memory(route, path, traced=True))
            for route in BUILD_ROUTES:
                memory[route] = min((peak_memory(route, Path(tmp) / "columns.npy") for _ in range(2)),
                                    key=lambda r: r["peak_mb"])
                memory[route].update(peak_memory(route, Path(tmp) / "columns.npy", traced=True))

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
    ours = rate["ldpgraph read_edgelist (file -> Graph)"]
    lib = rate["pyarrow + numpy (file -> Graph arrays)"]
    print(f"\nFile -> Graph: read_edgelist {ours / 1e6:.2f} M edges/s = {ours / lib:.2f} x the pyarrow + numpy "
          f"route ({lib / 1e6:.2f} M edges/s); targets: >= 12 M edges/s and >= 1.2 x")
    before = rate["  read_edgelist, build before (reference)"]
    b_new, b_old = rate["build only: core._simple_csr (columns -> CSR)"], rate["  build only, before (reference)"]
    print(f"after / before: read_edgelist {ours / before:.2f} x ({before / 1e6:.2f} -> {ours / 1e6:.2f} M edges/s), "
          f"build only {b_new / b_old:.2f} x ({b_old / 1e6:.2f} -> {b_new / 1e6:.2f} M edges/s)")
    if memory:
        raw = m * 2 * 8 / 2**20
        print(f"\npeak resident memory above the imports, fresh process each (raw edge array {raw:.0f} MiB):")
        for route, r in memory.items():
            print(f"  {route:22s} {r['peak_mb']:6.0f} MiB = {r['peak_mb'] / raw:5.2f} x raw   ({r['seconds']:.2f} s);"
                  f" tracemalloc peak {r['traced_mb']:5.0f} MiB = {r['traced_mb'] / raw:5.2f} x raw")
        print("  target: read_edgelist <= 2 x raw (the parsed columns and the int64 CSR are 1 x raw each);")
        print("  the build routes start from the columns already in memory: their peak is the build's own")
        print("  working memory, the output included")
    if args.objects:
        objects(pairs, args.nodes, min(args.nx_edges, m), args.repeat)
    print(f"\nload average {' / '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")


def _time_pair(name: str, ref_name: str, edges: int, fn: Callable[[], object], ref: Callable[[], object],
               repeat: int) -> list[tuple[str, int, float]]:
    return [(name, edges, best_and_median(fn, repeat)[0]), (ref_name, edges, best_and_median(ref, repeat)[0])]


def _scipy_adjacency(pairs: np.ndarray, n_nodes: int):
    import scipy.sparse as sp

    lo, hi = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    keep = lo != hi
    a = sp.coo_array((np.ones(int(keep.sum()), dtype=np.int8), (lo[keep], hi[keep])), shape=(n_nodes, n_nodes))
    adj = (a + a.T).tocsr()
    adj.sum_duplicates()
    return adj


def objects(pairs: np.ndarray, n_nodes: int, m_nx: int, repeat: int) -> None:
    """networkx / igraph / scipy.sparse -> Graph, each next to the library's own export."""
    import igraph as ig

    from ldpgraph.graph import from_igraph, from_networkx, from_scipy_sparse

    m = pairs.shape[0]
    adj = _scipy_adjacency(pairs, n_nodes)
    rows = _time_pair("from_scipy_sparse (CSR)", "  scipy tocoo (reference)", adj.nnz // 2,
                      lambda: from_scipy_sparse(adj), adj.tocoo, repeat)
    g = ig.Graph(n=n_nodes, edges=pairs, directed=False)
    rows += _time_pair("from_igraph", "  igraph get_edgelist + degree (reference)", m,
                       lambda: from_igraph(g), lambda: (g.get_edgelist(), g.degree()), repeat)
    gs = g.copy()
    gs.simplify()
    rows += _time_pair("from_igraph (simple graph)", "  igraph get_edgelist + degree (reference)", gs.ecount(),
                       lambda: from_igraph(gs), lambda: (gs.get_edgelist(), gs.degree()), repeat)
    h = nx.Graph()
    h.add_edges_from(pairs[:m_nx].tolist())
    rows += _time_pair(f"from_networkx ({h.number_of_edges():,} edges)", "  nx.to_scipy_sparse_array (reference)",
                       h.number_of_edges(), lambda: from_networkx(h), lambda: nx.to_scipy_sparse_array(h), repeat)
    print(f"\ngraph objects -> Graph (target >= 20 M edges/s; igraph: {m:,} edges with duplicates, scipy: "
          "the same edges deduplicated)")
    print(f"{'route':45s} {'edges':>12s} {'best s':>8s} {'M edges/s':>10s}")
    for name, edges, sec in rows:
        print(f"{name:45s} {edges:12,d} {sec:8.3f} {edges / sec / 1e6:10.2f}")


READ_EDGELIST = """
import sys, time, json
import scipy.sparse, pyarrow.csv
from ldpgraph.graph import read_edgelist
times = []
for _ in range(3):
    t0 = time.perf_counter()
    g = read_edgelist(sys.argv[1])
    times.append(time.perf_counter() - t0)
    del g
print(json.dumps({"best": min(times)}))
"""


def checkouts_read_edgelist(path: Path, before: str, repeat: int) -> None:
    """``read_edgelist(path)`` in fresh processes of this checkout and of ``before``, taking turns."""
    here = str(Path(__file__).resolve().parent.parent)
    best: dict[str, float] = {}
    for _ in range(repeat):
        for name, root in (("this checkout", here), (f"before ({before})", before)):
            out = subprocess.run([sys.executable, "-c", READ_EDGELIST, str(path)], capture_output=True, text=True,
                                 check=True, cwd=root, env={**os.environ, "PYTHONPATH": root})
            t = json.loads(out.stdout.strip().splitlines()[-1])["best"]
            best[name] = min(best.get(name, t), t)
    m = read_edge_pairs(path).pairs.shape[0]
    print(f"  read_edgelist in fresh processes taking turns ({repeat} x best of 3), load "
          f"{os.getloadavg()[0]:.2f}:")
    for name, t in best.items():
        print(f"    {name:40s} {t:7.3f} s  {m / t / 1e6:6.2f} M edges/s")


FACEBOOK_LOAD = """
import sys, time, json
t0 = time.perf_counter()
import ldpgraph
from ldpgraph.datasets import load_dataset
t1 = time.perf_counter()
g = load_dataset("facebook")
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "edges": g.n_edges,
                  "left_out": [m for m in ("scipy.sparse", "pyarrow", "pyarrow.compute") if m not in sys.modules]}))
"""


def small_inputs(repeat: int, before: str | None) -> None:
    """The numpy build of small inputs against the counting sorts; the Facebook start-up load."""
    import scipy.sparse  # noqa: F401 - the counting sorts' import, outside their timings

    rng = np.random.default_rng(0)
    print(f"numpy build (core._simple_csr_sorted) vs the counting sorts (scipy kernels), m edges on "
          f"m / 10 nodes; scipy.sparse import measured apart; crossover core._SMALL_EDGES = "
          f"{core._SMALL_EDGES:,}")
    print(f"{'edges':>10s} {'counting ms':>12s} {'numpy ms':>10s} {'numpy - counting':>17s}")
    for lg in range(12, 23, 2):
        m = 1 << lg
        n = max(m // 10, 2)
        u = rng.integers(0, n, m).astype(np.int32)
        v = rng.integers(0, n, m).astype(np.int32)
        saved = core._numpy_build
        try:
            core._numpy_build = lambda m, n: False
            t_count = best_and_median(lambda u=u, v=v, n=n: core._simple_csr([u, v], n), repeat)[0]
            a = core._simple_csr([u, v], n)
        finally:
            core._numpy_build = saved
        t_np = best_and_median(lambda u=u, v=v, n=n: core._simple_csr_sorted(u, v, n), repeat)[0]
        b = core._simple_csr_sorted(u, v, n)
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True)), "the builds disagree"
        print(f"{m:10,d} {t_count * 1e3:12.2f} {t_np * 1e3:10.2f} {(t_np - t_count) * 1e3:17.2f}")
    code = "import time; t = time.perf_counter(); import scipy.sparse; print(time.perf_counter() - t)"
    imports = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", "import numpy; " + code], capture_output=True, text=True,
                             check=True)
        imports.append(float(out.stdout))
    print(f"import scipy.sparse in a fresh process (numpy imported): best {min(imports) * 1e3:.0f} ms")
    here = str(Path(__file__).resolve().parent.parent)
    checkouts = {"this checkout": here} | ({"before (" + before + ")": before} if before else {})
    runs: dict[str, list[dict]] = {name: [] for name in checkouts}
    for _ in range(max(repeat, 5)):
        for name, root in checkouts.items():  # alternating: the same load for both
            out = subprocess.run([sys.executable, "-c", FACEBOOK_LOAD], capture_output=True, text=True,
                                 check=True, cwd=root, env={**os.environ, "PYTHONPATH": root})
            runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("\nimport ldpgraph; load_dataset('facebook') in a fresh process (88,234 edges), best / median:")
    for name, rs in runs.items():
        load = [r["load"] for r in rs]
        imp = [r["import"] for r in rs]
        print(f"  {name:30s} load {min(load):.3f} / {statistics.median(load):.3f} s   import ldpgraph "
              f"{min(imp):.3f} / {statistics.median(imp):.3f} s   not imported: {', '.join(rs[0]['left_out']) or '-'}")


if __name__ == "__main__":
    main()
