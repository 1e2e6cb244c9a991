"""Benchmark: networkx graph -> Graph (``from_networkx``) against networkx's own exports.

Builds a seeded Barabasi-Albert edge list with igraph (``--edges`` edges, ``--degree`` edges per
new node; edge order shuffled unless ``--ordered``), turns it into networkx graphs of several
kinds, and times on each, in the same run (best of ``--repeat``):

- ``from_networkx`` (this package) and ``before``: the implementation it replaced (kept below
  as the reference; its output is checked equal);
- networkx's own fastest exports of the same graph: ``nx.to_scipy_sparse_array(G)`` and
  ``list(G.edges())``;
- the floor: one bare pass over networkx's adjacency keys, ``deque(chain(*G._adj.values()),
  maxlen=0)`` (every key visited, nothing stored: any conversion that iterates the dicts pays
  it), and ``np.fromiter`` of the keys (the pass ``from_networkx`` makes for integer labels);
- the steps of ``from_networkx`` (labels, neighbours located, build).

Kinds: ``int-range`` (labels 0..n-1 inserted in order), ``int-sparse`` (distinct random ids up
to 10^12, inserted in random order), ``str`` (labels ``"v<i>"``), ``DiGraph`` (int labels, every
edge directed at random, 10 % given both ways), ``MultiGraph`` (10 % of the edges doubled).
Rates are edges of the networkx graph (``G.number_of_edges()``) per second. The machine may be
shared: the load average is printed at the start and the end. Usage::

    PYTHONPATH=. python scripts/bench_from_networkx.py [--edges 2000000] [--repeat 3] [--kinds int-range,str]
"""

from __future__ import annotations

import argparse
import collections
import random
import time
from itertools import chain
from typing import Any

import networkx as nx
import numpy as np
from _timing import best_of, load_note, verdict

from ldpgraph.graph import convert, from_networkx
from ldpgraph.graph.core import _build_graph

TARGET = 20e6  # edges/s (issue 14, goal 2)
KINDS = ("int-range", "int-sparse", "str", "DiGraph", "MultiGraph")


def before_from_networkx(graph: Any) -> Any:
    """``from_networkx`` as it was before this benchmark (the reference; same output)."""
    labels = list(graph.nodes)
    n = len(labels)
    node_ids = convert._label_array(labels)
    if node_ids.dtype == np.int64:
        order = np.argsort(node_ids, kind="stable")
        node_ids = node_ids[order]
        identity = bool((np.diff(node_ids) > 0).all()) and convert._is_range(node_ids)
    else:
        try:
            order = np.array(sorted(range(n), key=labels.__getitem__), dtype=np.int64)
        except TypeError:
            order = np.arange(n, dtype=np.int64)
        node_ids = node_ids[order]
        identity = False
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    adj = graph._adj

    def targets(it: Any) -> np.ndarray:
        if identity:
            return np.array(list(it), dtype=np.int64)
        index = dict(zip(labels, rank.tolist(), strict=True))
        return np.array(list(map(index.__getitem__, it)), dtype=np.int64)

    deg = np.fromiter(map(len, adj.values()), dtype=np.int64, count=n)
    if graph.is_multigraph():
        per = (len(keys) for nbrs in adj.values() for keys in nbrs.values())
        mult = np.fromiter(per, dtype=np.int64)
        cols = np.repeat(targets(chain.from_iterable(adj.values())), mult)
        rows = np.repeat(np.repeat(rank, deg), mult)
    else:
        cols = targets(chain.from_iterable(adj.values()))
        rows = np.repeat(rank, deg)
    if not graph.is_directed():
        once = rows <= cols
        rows, cols = rows[once], cols[once]
    return _build_graph(rows, cols, n, node_ids, source=f"networkx.{type(graph).__name__}",
                        relabelled=not convert._is_range(node_ids), source_directed=bool(graph.is_directed()))


def make_graph(kind: str, pairs: np.ndarray, n: int, rng: np.random.Generator) -> nx.Graph:
    """A networkx graph of the given kind on the BA edges ``pairs`` (node indices 0..n-1)."""
    if kind == "int-range":
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from(pairs.tolist())
        return g
    if kind == "int-sparse":
        ids = rng.choice(10**12, size=n, replace=False)
        g = nx.Graph()
        g.add_nodes_from(ids[rng.permutation(n)].tolist())
        g.add_edges_from(ids[pairs].tolist())
        return g
    if kind == "str":
        names = [f"v{i}" for i in range(n)]
        g = nx.Graph()
        g.add_nodes_from(names)
        g.add_edges_from((names[a], names[b]) for a, b in pairs.tolist())
        return g
    if kind == "DiGraph":
        flip = rng.random(len(pairs)) < 0.5
        d = np.where(flip[:, None], pairs[:, ::-1], pairs)
        both = d[rng.random(len(d)) < 0.1][:, ::-1]
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from(np.concatenate([d, both]).tolist())
        return g
    if kind == "MultiGraph":
        extra = pairs[rng.random(len(pairs)) < 0.1]
        g = nx.MultiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from(np.concatenate([pairs, extra]).tolist())
        return g
    raise ValueError(f"unknown kind {kind!r}")


def steps(g: nx.Graph, repeat: int) -> list[tuple[str, float]]:
    """Times of the steps of from_networkx: one pass (snapshot), labels, relabel, build."""
    multi = bool(g.is_multigraph())
    t, (labels, lists, _) = best_of(lambda: convert._adjacency_snapshot(g, multi), repeat)
    out = [("  step: one pass (labels + neighbour lists)", t)]
    n = len(labels)
    t, (node_ids, rank) = best_of(lambda: convert._sorted_labels(labels), repeat)
    out.append(("  step: sort the labels", t))
    t, (cols, deg) = best_of(lambda: convert._neighbour_positions(lists, labels, node_ids, rank), repeat)
    out.append(("  step: neighbours located", t))
    if not g.is_directed() and not g.is_multigraph():
        ptr = np.zeros(n + 1, dtype=cols.dtype)
        np.cumsum(deg, out=ptr[1:])
        out.append(("  step: build (_symmetric_csr)", best_of(lambda: convert._symmetric_csr(ptr, cols, n, rank),
                                                                repeat)[0]))
    return out


def run_kind(kind: str, g: nx.Graph, repeat: int, with_scipy: bool) -> tuple[str, int, float, float, float, float]:
    """Time from_networkx and the references on ``g``; print the table; return the summary row."""
    m = g.number_of_edges()
    adj = g._adj
    nnz = sum(map(len, adj.values()))
    rows: list[tuple[str, float]] = []
    t_new, new = best_of(lambda: from_networkx(g), repeat)
    t_old, old = best_of(lambda: before_from_networkx(g), repeat)
    for a, b in ((new.indptr, old.indptr), (new.indices, old.indices)):
        np.testing.assert_array_equal(a, b)
    assert new.node_ids.tolist() == old.node_ids.tolist() and new.report == old.report
    rows += [("from_networkx", t_new), ("  before (reference implementation)", t_old)]
    t_edges = best_of(lambda: list(g.edges()), repeat)[0]
    rows.append(("  list(G.edges())", t_edges))
    if with_scipy:
        rows.append(("  nx.to_scipy_sparse_array(G)", best_of(lambda: nx.to_scipy_sparse_array(g), 1)[0]))
    t_floor = best_of(lambda: collections.deque(chain.from_iterable(adj.values()), maxlen=0), repeat)[0]
    rows.append(("  floor: bare pass over the keys", t_floor))
    if kind != "str":
        rows.append(("  np.fromiter of the keys", best_of(
            lambda: np.fromiter(chain.from_iterable(adj.values()), np.int64, count=nnz), repeat)[0]))
    rows += steps(g, repeat)
    print(f"{'route':40s} {'best s':>8s} {'M edges/s':>10s} {'x from_nx':>10s}")
    for name, sec in rows:
        print(f"{name:40s} {sec:8.3f} {m / sec / 1e6:10.2f} {sec / t_new:10.2f}")
    return kind, m, m / t_new, t_old / t_new, t_edges / t_new, m / t_floor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", type=int, default=2_000_000)
    ap.add_argument("--degree", type=int, default=4, help="BA edges per new node (n = edges / degree)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ordered", action="store_true", help="keep igraph's edge order (default: shuffled)")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--no-scipy", dest="scipy", action="store_false",
                    help="skip nx.to_scipy_sparse_array (slow: about 4 s per 10^6 edges here)")
    args = ap.parse_args()
    import igraph as ig

    print(f"start: {load_note()}")
    rng = np.random.default_rng(args.seed)
    n = max(args.edges // args.degree, args.degree + 1)
    ig.set_random_number_generator(random.Random(args.seed))
    pairs = np.array(ig.Graph.Barabasi(n, args.degree).get_edgelist(), dtype=np.int64)
    ig.set_random_number_generator(random)
    if not args.ordered:
        pairs = pairs[rng.permutation(len(pairs))]
    print(f"BA graph: {n:,} nodes, {len(pairs):,} edges ({'igraph order' if args.ordered else 'shuffled'})")
    summary = []
    for kind in args.kinds.split(","):
        t0 = time.perf_counter()
        g = make_graph(kind, pairs, n, rng)
        m = g.number_of_edges()
        print(f"\n{kind}: networkx.{type(g).__name__}, {g.number_of_nodes():,} nodes, {m:,} edges "
              f"(built in {time.perf_counter() - t0:.1f} s; {load_note()})")
        summary.append(run_kind(kind, g, args.repeat, args.scipy))
        del g
    print(f"\nsummary (target >= {TARGET / 1e6:.0f} M edges/s; 'floor' = one bare Python pass over the keys, "
          "the bound for any route that iterates networkx's dicts; the table read does not iterate them)")
    print(f"{'kind':12s} {'edges':>11s} {'M edges/s':>10s} {'x target':>9s} {'x before':>9s} "
          f"{'x G.edges':>10s} {'floor M/s':>10s}  target")
    for kind, m, rate, x_old, x_edges, floor in summary:
        print(f"{kind:12s} {m:11,d} {rate / 1e6:10.2f} {rate / TARGET:9.2f} {x_old:9.2f} {x_edges:10.2f} "
              f"{floor / 1e6:10.2f}  {verdict(rate >= TARGET)}")
    print(f"\nend: {load_note()}")


if __name__ == "__main__":
    main()
