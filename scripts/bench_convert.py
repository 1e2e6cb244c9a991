"""Benchmark: graph objects -> Graph through public APIs only (issue 26, goals of items 1-3).

Times, on seeded random edges (best of ``--repeat``, the load average printed: the machine may
be shared):

- ``from_networkx`` against networkx's own ``nx.to_scipy_sparse_array`` on the same
  ``nx.Graph`` (``--nx-edges`` edges, default 10^6), timed in turn: the ratio of the best and of
  the median times, goal >= 10;
- ``from_igraph`` on an ``igraph.Graph`` of ``--edges`` edges (default 10^7), in edges/s
  (goal >= 10 M edges/s), next to igraph's ``get_edgelist()`` alone (the public export it
  reads, the floor of any public route);
- ``from_scipy_sparse`` on a symmetric CSR adjacency of ``--edges`` edges and on the directed
  (non-symmetric) CSR of the same edges, in edges/s (goal >= 10 M edges/s).

Speed is measured here, never asserted in tests. Usage::

    PYTHONPATH=. python scripts/bench_convert.py [--edges 10000000] [--nx-edges 1000000] [--repeat 3]
    PYTHONPATH=. python scripts/bench_convert.py --quick      # 10^6 / 2 * 10^5 edges
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ldpgraph.graph import from_igraph, from_networkx, from_scipy_sparse

GOAL_NX_RATIO = 10.0
GOAL_RATE = 10e6


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of ``repeat`` calls of ``fn``, in seconds."""
    return timings(fn, repeat)[0]


def timings(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Best and median wall time of ``repeat`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), float(np.median(times))


def edges(m: int, n: int, seed: int) -> np.ndarray:
    """``m`` seeded random pairs on ``n`` nodes, no self-loops (int64, shape (m, 2))."""
    rng = np.random.default_rng(seed)
    u = rng.integers(0, n, m)
    v = (u + rng.integers(1, n, m)) % n
    return np.column_stack([u, v])


def bench_networkx(m: int, repeat: int) -> float:
    import networkx as nx

    pairs = edges(m, max(m // 8, 2), 1)
    g = nx.Graph()
    g.add_nodes_from(range(max(m // 8, 2)))
    g.add_edges_from(pairs.tolist())
    me = g.number_of_edges()
    # interleaved, so that a change of the machine's load hits both alike
    ours, ref = [], []
    for _ in range(repeat):
        ours.append(timings(lambda: from_networkx(g), 1)[0])
        ref.append(timings(lambda: nx.to_scipy_sparse_array(g), 1)[0])
    t_ours, t_nx = min(ours), min(ref)
    ratio = t_nx / t_ours
    ratio_median = float(np.median(ref) / np.median(ours))
    print(f"networkx, {me:,} edges: from_networkx {t_ours:.3f} s ({me / t_ours / 1e6:.2f} M edges/s), "
          f"nx.to_scipy_sparse_array {t_nx:.3f} s: ratio {ratio:.1f}x of the best times, "
          f"{ratio_median:.1f}x of the medians (goal >= {GOAL_NX_RATIO:.0f}x) "
          f"{'MET' if min(ratio, ratio_median) >= GOAL_NX_RATIO else 'NOT MET'}")
    return ratio


def bench_igraph(m: int, repeat: int) -> float:
    import igraph as ig

    n = max(m // 10, 2)
    g = ig.Graph(n=n, edges=edges(m, n, 2), directed=False)
    t_ours = best(lambda: from_igraph(g), repeat)
    t_export = best(lambda: g.get_edgelist(), repeat)
    rate = m / t_ours
    print(f"igraph, {m:,} edges: from_igraph {t_ours:.3f} s = {rate / 1e6:.2f} M edges/s "
          f"(goal >= {GOAL_RATE / 1e6:.0f}) {'MET' if rate >= GOAL_RATE else 'NOT MET'}; "
          f"get_edgelist() alone {t_export:.3f} s = {m / t_export / 1e6:.2f} M edges/s")
    return rate


def bench_scipy(m: int, repeat: int) -> tuple[float, float]:
    import scipy.sparse as sp

    n = max(m // 10, 2)
    pairs = edges(m, n, 3)
    ones = np.ones(2 * m, dtype=np.int8)
    sym = sp.csr_array((ones, (np.concatenate([pairs[:, 0], pairs[:, 1]]),
                               np.concatenate([pairs[:, 1], pairs[:, 0]]))), shape=(n, n))
    directed = sp.csr_array((ones[:m], (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    rates = []
    for name, a in (("symmetric CSR", sym), ("directed CSR", directed)):
        m_graph = from_scipy_sparse(a).n_edges
        t = best(lambda a=a: from_scipy_sparse(a), repeat)
        rate = m_graph / t
        rates.append(rate)
        print(f"scipy {name}, {m_graph:,} edges ({a.nnz:,} entries): from_scipy_sparse {t:.3f} s = "
              f"{rate / 1e6:.2f} M edges/s (goal >= {GOAL_RATE / 1e6:.0f}) "
              f"{'MET' if rate >= GOAL_RATE else 'NOT MET'}")
    return rates[0], rates[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", type=int, default=10_000_000, help="edges for igraph and scipy")
    ap.add_argument("--nx-edges", type=int, default=1_000_000, help="edges for networkx")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10^6 edges (igraph, scipy), 2 * 10^5 (networkx)")
    ap.add_argument("--only", default="networkx,igraph,scipy", help="comma-separated subset")
    args = ap.parse_args()
    if args.quick:
        args.edges, args.nx_edges = 1_000_000, 200_000
    only = set(args.only.split(","))
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    if "networkx" in only:
        bench_networkx(args.nx_edges, args.repeat)
    if "igraph" in only:
        bench_igraph(args.edges, args.repeat)
    if "scipy" in only:
        bench_scipy(args.edges, args.repeat)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
