"""Scaling of the whole pipeline: load -> randomize -> curate on Barabasi-Albert graphs.

For each n (default 10^5, 10^6, 10^7) a fresh subprocess builds ``igraph.Graph.Barabasi(n, m)``
(not timed as part of the pipeline), then times

- load: ``ldpgraph.graph.load_graph(igraph_graph)`` (relabel, dedupe, CSR);
- randomize: ``DegreeRandomizer(epsilon).randomize(graph.degrees)`` (every node's noisy degree);
- curate: one ``ReportHistogram`` and every curator statistic with its standard error and a 95%
  interval (k-stars k = 1..4, edges, moments 2-3, mean, variance, histogram 0..100, max,
  entropy);

and measures the memory of each stage: for load, the peak resident memory above the resident
memory at its start (/proc/self/statm sampled every 2 ms by a thread; tracemalloc would slow
the Python edge list igraph returns); for randomize and curate, the peak of memory allocated
through numpy and Python (tracemalloc, in a second, untimed run) and the process's peak resident set size
(``resource.getrusage``; it includes the igraph graph, which is built first). A warm-up on a
50-node graph keeps one-off imports (scipy, about 1 s) out of the timings. Also: a reference timed in the same subprocess, ``np.bincount`` of
the reports, so the curate column can be read against it. Prints a table (and markdown with
``--markdown``), the load average before and after.

Usage (from the repository root):
    PYTHONPATH=. python scripts/bench_scaling.py [--sizes 100000 1000000 10000000] [--m 3]

``--triangles`` measures the triangle simulators of issue 34 instead (``ba:n=N,m=10``, 10^5 and
10^6 nodes: prepare + one trial, a second trial, peak RSS, time exponent; ``--path table`` the
wedge-table simulator they replace on large graphs): :func:`triangle_scaling`.
    PYTHONPATH=. python scripts/bench_scaling.py --clustering --sizes 100000 1000000 --m 10 [--cl-methods M ...]
(``--clustering``: the clustering and 4-cycle methods, :func:`clustering_main`.)
``--kcore-orientation`` instead times one trial of each k-core and orientation method
(:data:`KCORE_ORIENTATION_METHODS`; ``--methods`` to choose) on ``ba:n=N,m=10`` for each N
(default 10^5 and 10^6), each in a fresh subprocess: the graph built by ``resolve_graph`` (not
timed), a warm-up trial on a 200-node graph, then one trial at ε = 1 (``Method.estimate_trials``)
with its wall time, its peak resident memory above the start (sampled every 2 ms) and the
process's peak RSS; beside it, the reference of the same subprocess: ``np.sort`` of a copy of the
CSR's neighbour array (2m entries). Prints the exponent of the trial time from one size to the next.
    PYTHONPATH=. python scripts/bench_scaling.py --kcore-orientation [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
import tracemalloc


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _traced(fn):
    """Run fn; its wall time and the peak of memory it allocated through Python/numpy (tracemalloc)."""
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, dt, peak


def _stage(fn):
    """Run fn; its wall time and its peak resident memory above the start (sampled every 2 ms)."""
    base = _rss()
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _rss())
            done.wait(0.002)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    done.set()
    th.join()
    peak[0] = max(peak[0], _rss())
    return out, dt, peak[0] - base


def run_one(n: int, m: int, epsilon: float, seed: int) -> dict:
    import random

    import igraph as ig
    import numpy as np

    from ldpgraph.graph import load_graph
    from ldpgraph.protocols import DegreeRandomizer, ReportHistogram, curator

    # warm-up on a tiny graph: one-off imports (scipy inside the estimators) are not scaling
    warm = DegreeRandomizer(epsilon=epsilon).randomize(load_graph(ig.Graph.Barabasi(50, m)).degrees, rng=0)
    _curate(warm, curator, ReportHistogram)
    random.seed(seed)
    t0 = time.perf_counter()
    g_ig = ig.Graph.Barabasi(n, m)
    t_gen = time.perf_counter() - t0
    holder = [g_ig]
    del g_ig
    graph, t_load, m_load = _stage(lambda: load_graph(holder[0]))
    holder.clear()
    randomize = lambda: DegreeRandomizer(epsilon=epsilon).randomize(graph.degrees, rng=seed)  # noqa: E731
    reports, t_rand, _ = _stage(randomize)
    m_rand = _traced(randomize)[2]  # memory in a second run: tracemalloc slows Python code

    (ests, _, _), t_cur, _ = _stage(lambda: _curate(reports, curator, ReportHistogram))
    m_cur = _traced(lambda: _curate(reports, curator, ReportHistogram))[2]
    y = reports.degrees.values
    lo = int(y.min())
    t_bc = min(_timed(lambda: np.bincount(y - lo)) for _ in range(3))
    return {
        "n": n,
        "edges": int(graph.n_edges),
        "gen_s": t_gen,
        "load_s": t_load,
        "load_mem_mb": m_load / 2**20,
        "randomize_s": t_rand,
        "randomize_mem_mb": m_rand / 2**20,
        "curate_s": t_cur,
        "curate_mem_mb": m_cur / 2**20,
        "bincount_s": t_bc,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "edges_estimate": ests[4].value,
    }


def _curate(reports, curator, ReportHistogram):
    h = ReportHistogram.from_release(reports.degrees)
    ests = list(curator.kstars_many(h, (1, 2, 3, 4)))
    ests += [curator.edge_count(h), curator.degree_moment(h, 2), curator.degree_moment(h, 3)]
    ests += [curator.degree_mean(h), curator.degree_variance(h), curator.max_degree(h)]
    ests += [curator.degree_entropy(h)]
    intervals = [e.interval(0.95) for e in ests]
    return ests, intervals, curator.degree_histogram(h, 100)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# ---------------------------------------------------------------------------- triangle simulators (issue 34)

TRIANGLE_METHODS = ("two-round-triangles-dlap", "two-round-triangles-dlap-private", "two-round-triangles-laplace",
                    "two-round-triangles-laplace-private", "arr-triangles")


def triangle_one(method: str, n: int, m: int, epsilon: float, seed: int, path: str) -> dict:
    """One trial of ``method`` on ``ba:n=N,m=M`` in this process: prepare (per-graph cache) and the
    trial timed, the process's peak RSS. ``path``: ``scaled`` (the default: the protocol chooses, the
    scaled simulator on these graphs) or ``table`` (the wedge table, the simulator before issue 34,
    with the memory guard lifted)."""
    import numpy as np

    from ldpgraph.datasets import resolve_graph
    from ldpgraph.run import get_method

    t0 = time.perf_counter()
    g = resolve_graph(f"ba:n={n},m={m}")
    t_graph = time.perf_counter() - t0
    rss_graph = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    meth = get_method(method)
    if path == "table":
        meth.protocol.table_max_wedges, meth.protocol.max_bytes = 1 << 62, None
    t0, c0 = time.perf_counter(), time.process_time()
    meth.prepare(g)
    t_prep = time.perf_counter() - t0
    t0 = time.perf_counter()
    est = meth.estimate_trials(g, "triangles", None, epsilon, 1, rng=seed)
    t_trial = time.perf_counter() - t0
    cpu = time.process_time() - c0  # CPU seconds of prepare + trial: what a loaded machine does not inflate
    t0 = time.perf_counter()
    meth.estimate_trials(g, "triangles", None, epsilon, 1, rng=seed + 1)
    t_next = time.perf_counter() - t0
    return {"method": method, "n": n, "path": path, "table": bool(meth.protocol.uses_table(g)),
            "graph_s": t_graph, "graph_rss_mb": rss_graph, "prepare_s": t_prep, "trial_s": t_trial,
            "next_trial_s": t_next, "total_s": t_prep + t_trial, "cpu_s": cpu,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "estimate": float(np.asarray(est)[0])}


def triangle_scaling(args: argparse.Namespace) -> None:
    """Every triangle simulator of issue 34 at each size, one subprocess per (method, n): prepare + one
    trial (time), a second trial (the cached patterns), peak RSS, and the exponent of the time from the
    smallest to the largest size. ``--path table`` measures the simulator before issue 34."""
    print(f"load average before: {tuple(round(x, 2) for x in os.getloadavg())}", flush=True)
    rows = []
    for method in args.methods or TRIANGLE_METHODS:
        for n in args.sizes:
            cmd = [sys.executable, __file__, "--tri-one", method, str(n), "--m", str(args.m),
                   "--epsilon", str(args.epsilon), "--seed", str(args.seed), "--path", args.path]  # fmt: skip
            out = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
            if out.returncode:
                print(f"{method:38s} n={n:>9d} FAILED: {out.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(r)
            print(f"{method:38s} n={n:>9d} {'table ' if r['table'] else 'scaled'} | graph {r['graph_s']:6.1f}s "
                  f"({r['graph_rss_mb']:6.0f} MB) | prepare {r['prepare_s']:6.1f}s | trial {r['trial_s']:6.2f}s "
                  f"(next {r['next_trial_s']:6.2f}s) | prepare+trial {r['total_s']:6.1f}s (CPU {r['cpu_s']:6.1f}s) | max RSS "
                  f"{r['maxrss_mb']:6.0f} MB | estimate {r['estimate']:.4g}", flush=True)
    print(f"load average after: {tuple(round(x, 2) for x in os.getloadavg())}")
    import math

    for method in args.methods or TRIANGLE_METHODS:
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["n"])
        if len(mine) >= 2 and mine[0]["total_s"] > 0:
            a, b = mine[0], mine[-1]
            k = math.log(b["total_s"] / a["total_s"]) / math.log(b["n"] / a["n"])
            kc = math.log(b["cpu_s"] / a["cpu_s"]) / math.log(b["n"] / a["n"]) if a["cpu_s"] > 0 else math.nan
            print(f"{method:38s} time exponent {a['n']:.0e} -> {b['n']:.0e}: {k:.2f} (wall), {kc:.2f} (CPU)")
    if args.markdown:
        print("\n| method | n | path | prepare (s) | trial (s) | next trial (s) | CPU (s) | max RSS (MB) |")
        print("|---|---:|---|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['method']} | {r['n']:.0e} | {'table' if r['table'] else 'scaled'} | "
                  f"{r['prepare_s']:.1f} | {r['trial_s']:.2f} | {r['next_trial_s']:.2f} | {r['cpu_s']:.1f} | "
                  f"{r['maxrss_mb']:.0f} |")
# ------------------------------------------------------------------------------------------------
# clustering and 4-cycle methods at scale (issue 34): one trial each on ba:n=N,m=10


#: the clustering and 4-cycle methods measured by ``--clustering`` (``--cl-methods`` picks some)
CLUSTERING_METHODS = ("avg-clustering-dlap", "avg-clustering-dlap-private", "adaptive-clustering",
                      "adaptive-clustering-best", "two-round-four-cycles-dlap", "rr-four-cycles")


def run_clustering_one(method: str, n: int, m: int, epsilon: float, seed: int) -> dict:
    """One method on ``ba:n=n,m=m``: the graph's build, the per-graph ``prepare`` and one trial
    (``estimate_trials``), timed (wall and process CPU: the CPU time reads through a loaded machine);
    the process's peak RSS; a reference timed in the same process
    (``np.sort`` of one int64 per edge endpoint) so that the times read as ratios."""
    import numpy as np

    from ldpgraph.datasets import resolve_graph
    from ldpgraph.run.method import get_method

    statistic = "four_cycles" if "four-cycles" in method else "avg_clustering"
    t0 = time.perf_counter()
    graph = resolve_graph(f"ba:n={n},m={m}", rng=seed)
    t_graph = time.perf_counter() - t0
    meth = get_method(method)
    row = {"method": method, "n": n, "edges": int(graph.n_edges), "graph_s": t_graph}
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        meth.prepare(graph)
        row["prepare_s"], row["prepare_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        est = meth.estimate_trials(graph, statistic, None, epsilon, 1, rng=np.random.default_rng(seed))
        row["trial_s"], row["trial_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        row["estimate"] = float(np.asarray(est)[0])
    except (MemoryError, ValueError) as exc:
        row["refused"] = str(exc).splitlines()[0][:160]
    keys = np.random.default_rng(seed).integers(0, 2**62, size=2 * graph.n_edges)
    row["reference_s"] = _timed(lambda: np.sort(keys))
    row["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def clustering_main(args: argparse.Namespace) -> None:
    """``--clustering``: every method of ``--cl-methods`` at every size, a fresh subprocess each; the
    time of prepare + one trial, its ratio to the reference, the peak RSS, and the exponent of the time
    between consecutive sizes (log t2/t1 / log n2/n1)."""
    import math

    print(f"load average before: {tuple(round(x, 2) for x in os.getloadavg())}", flush=True)
    rows = []
    for method in args.cl_methods:
        prev = None
        for n in args.sizes:
            cmd = [sys.executable, __file__, "--clustering-one", method, "--one", str(n), "--m", str(args.m),
                   "--epsilon", str(args.epsilon), "--seed", str(args.seed)]  # fmt: skip
            out = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
            if out.returncode:
                row = {"method": method, "n": n, "refused": f"exit {out.returncode}: "
                       + (out.stderr.strip().splitlines() or ["?"])[-1][:160]}
            else:
                row = json.loads(out.stdout.strip().splitlines()[-1])
            total = row.get("prepare_s", 0.0) + row["trial_s"] if "trial_s" in row else None
            row["total_s"] = total
            expo = ""
            if total is not None and prev is not None and prev[1] is not None:
                row["exponent"] = math.log(total / prev[1]) / math.log(n / prev[0])
                expo = f" | exponent {row['exponent']:.2f}"
            prev = (n, total)
            rows.append(row)
            if total is None:
                print(f"{method:28s} n={n:>8d} | refused: {row.get('refused')} | max RSS "
                      f"{row.get('maxrss_mb', float('nan')):6.0f} MB", flush=True)
            else:
                print(f"{method:28s} n={n:>8d} | prepare {row['prepare_s']:7.2f}s (cpu {row['prepare_cpu_s']:.1f}s) "
                      f"| trial {row['trial_s']:7.2f}s (cpu {row['trial_cpu_s']:.1f}s) "
                      f"| total {total:7.2f}s = {total / row['reference_s']:6.1f} x reference "
                      f"({row['reference_s']:.2f}s) | max RSS {row['maxrss_mb']:6.0f} MB{expo}", flush=True)
    print(f"load average after: {tuple(round(x, 2) for x in os.getloadavg())}")
    if args.markdown:
        print("\n| method | n | prepare (s) | trial (s) | x reference | max RSS (MB) | exponent |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            if r["total_s"] is None:
                print(f"| {r['method']} | {r['n']:.0e} | refused: {r.get('refused')} | | | | |")
            else:
                print(f"| {r['method']} | {r['n']:.0e} | {r['prepare_s']:.2f} | {r['trial_s']:.2f} | "
                      f"{r['total_s'] / r['reference_s']:.1f} | {r['maxrss_mb']:.0f} | "
                      f"{r.get('exponent', float('nan')):.2f} |")


#: the k-core and orientation methods of ``--kcore-orientation``
KCORE_ORIENTATION_METHODS = ("kcore-hindex", "kcore-reference", "edge-orient-triangles",
                             "edge-orient-triangles-global", "edge-orient-reference")


def kcore_orientation_one(method: str, n: int, m: int, epsilon: float, seed: int) -> dict:
    """One trial of ``method`` on ``ba:n={n},m={m}`` in this process: time, memory, the reference."""
    import numpy as np

    from ldpgraph.datasets import resolve_graph
    from ldpgraph.run.method import get_method

    meth = get_method(method)
    stat = "core_numbers" if "kcore" in method else "triangles"
    meth.estimate_trials(resolve_graph(f"ba:n=200,m={m}", rng=seed), stat, None, epsilon, 1, rng=seed)  # warm-up
    t0 = time.perf_counter()
    graph = resolve_graph(f"ba:n={n},m={m}", rng=seed)
    t_gen = time.perf_counter() - t0
    out, t_trial, mem = _stage(lambda: meth.estimate_trials(graph, stat, None, epsilon, 1, rng=seed))
    idx = np.array(graph.indices)
    t_sort = min(_timed(lambda: np.sort(idx)) for _ in range(3))
    return {"method": method, "n": n, "edges": int(graph.n_edges), "gen_s": t_gen, "trial_s": t_trial,
            "trial_mem_mb": mem / 2**20, "sort_s": t_sort, "value": float(out[0]),
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "heavy_modules": sorted(x for x in ("igraph", "matplotlib", "pyarrow") if x in sys.modules)}


def kcore_orientation(sizes: list[int], methods: list[str], m: int, epsilon: float, seed: int,
                      markdown: bool) -> None:
    """``--kcore-orientation``: every method at every size, a fresh subprocess each; the table and the
    exponents of the trial time."""
    import math

    print(f"load average before: {tuple(round(x, 2) for x in os.getloadavg())}", flush=True)
    rows = []
    for method in methods:
        for n in sizes:
            cmd = [sys.executable, __file__, "--kcore-one", method, str(n), "--kcore-m", str(m),
                   "--epsilon", str(epsilon), "--seed", str(seed)]  # fmt: skip
            out = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
            if out.returncode:
                print(f"{method:30s} n={n:>9d} FAILED: {out.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(r)
            print(f"{method:30s} n={n:>9d} edges={r['edges']:>10d} | trial {r['trial_s']:7.2f} s "
                  f"(+{r['trial_mem_mb']:6.0f} MB) | max RSS {r['maxrss_mb']:6.0f} MB | sort ref "
                  f"{r['sort_s']:.3f} s, ratio {r['trial_s'] / r['sort_s']:6.1f} | gen {r['gen_s']:6.1f} s"
                  f"{' | loaded ' + ','.join(r['heavy_modules']) if r['heavy_modules'] else ''}", flush=True)
    print(f"load average after: {tuple(round(x, 2) for x in os.getloadavg())}")
    by = {(r["method"], r["n"]): r for r in rows}
    print("exponent of the trial time (log t2/t1 / log n2/n1):")
    for method in methods:
        parts = []
        for a, b in zip(sizes, sizes[1:], strict=False):
            if (method, a) in by and (method, b) in by:
                e = math.log(by[method, b]["trial_s"] / by[method, a]["trial_s"]) / math.log(b / a)
                parts.append(f"{a:.0e}->{b:.0e}: {e:.2f}")
        print(f"  {method:30s} {'; '.join(parts)}")
    if markdown:
        print("\n| method | n | edges | trial (s) | trial +mem (MB) | max RSS (MB) | sort ref (s) |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['method']} | {r['n']:.0e} | {r['edges']:,} | {r['trial_s']:.2f} | {r['trial_mem_mb']:.0f} | "
                  f"{r['maxrss_mb']:.0f} | {r['sort_s']:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**5, 10**6, 10**7])
    ap.add_argument("--m", type=int, default=3, help="edges per new node of the BA model")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--triangles", action="store_true",
                    help="the triangle simulators instead (issue 34; --m 10, sizes 1e5 1e6 by default)")
    ap.add_argument("--methods", nargs="+", help="with --triangles or --kcore-orientation: these methods only")
    ap.add_argument("--path", choices=("scaled", "table"), default="scaled",
                    help="with --triangles: table = the wedge-table simulator (before issue 34)")
    ap.add_argument("--tri-one", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--clustering", action="store_true",
                    help="the clustering and 4-cycle methods (prepare + one trial on ba:n=N,m=M; use --m 10)")
    ap.add_argument("--cl-methods", nargs="+", default=list(CLUSTERING_METHODS), metavar="METHOD")
    ap.add_argument("--clustering-one", help=argparse.SUPPRESS)
    ap.add_argument("--kcore-orientation", action="store_true", help="the k-core and orientation methods")
    ap.add_argument("--kcore-m", type=int, default=10, help="m of the BA graphs of --kcore-orientation")
    ap.add_argument("--kcore-one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.kcore_one is not None:
        print(json.dumps(kcore_orientation_one(args.kcore_one[0], int(args.kcore_one[1]), args.kcore_m,
                                               args.epsilon, args.seed)))
        return
    if args.kcore_orientation:
        sizes = args.sizes if "--sizes" in sys.argv else [10**5, 10**6]
        kcore_orientation(sizes, args.methods or list(KCORE_ORIENTATION_METHODS), args.kcore_m, args.epsilon,
                          args.seed, args.markdown)
        return
    if args.clustering_one is not None:
        print(json.dumps(run_clustering_one(args.clustering_one, args.one, args.m, args.epsilon, args.seed)))
        return
    if args.clustering:
        clustering_main(args)
        return
    if args.tri_one is not None:
        print(json.dumps(triangle_one(args.tri_one[0], int(args.tri_one[1]), args.m, args.epsilon, args.seed,
                                      args.path)))
        return
    if args.triangles:
        if args.sizes == [10**5, 10**6, 10**7]:
            args.sizes = [10**5, 10**6]
        if args.m == 3:
            args.m = 10
        triangle_scaling(args)
        return
    if args.one is not None:
        print(json.dumps(run_one(args.one, args.m, args.epsilon, args.seed)))
        return
    print(f"load average before: {tuple(round(x, 2) for x in os.getloadavg())}", flush=True)
    rows = []
    for n in args.sizes:
        cmd = [sys.executable, __file__, "--one", str(n), "--m", str(args.m),
               "--epsilon", str(args.epsilon), "--seed", str(args.seed)]  # fmt: skip
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(
            f"n={n:>9d} edges={row['edges']:>10d} | gen {row['gen_s']:7.2f}s | load {row['load_s']:7.2f}s "
            f"({row['load_mem_mb']:7.0f} MB) | randomize {row['randomize_s']:6.3f}s "
            f"({row['randomize_mem_mb']:5.0f} MB) | curate {row['curate_s']:6.3f}s ({row['curate_mem_mb']:5.0f} MB,"
            f" bincount {row['bincount_s']:.3f}s) | max RSS {row['maxrss_mb']:7.0f} MB",
            flush=True,
        )
    print(f"load average after: {tuple(round(x, 2) for x in os.getloadavg())}")
    if args.markdown:
        print("\n| n | edges | load (s) | load +mem (MB) | randomize (s) | curate (s) | curate +mem (MB) "
              "| bincount (s) | max RSS (MB) |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['n']:.0e} | {r['edges']:,} | {r['load_s']:.2f} | {r['load_mem_mb']:.0f} | "
                  f"{r['randomize_s']:.3f} | {r['curate_s']:.3f} | {r['curate_mem_mb']:.0f} | "
                  f"{r['bincount_s']:.3f} | {r['maxrss_mb']:.0f} |")


if __name__ == "__main__":
    main()
