"""Download and upload per node of the deployed ``edge-orient-triangles`` against the two-round protocols.

For each protocol, every round runs over report files (Parquet, as ``ldpgraph node``/``curate``
write them) and the broadcast is written in its file form: bytes per node, with the ratio to
``two-round-triangles-dlap`` (public D: the true maximum lower degree; and its private-bound
variant) measured in the same run. A two-round node downloads the whole broadcast file (the
noisy bits packed by id since ``ldpgraph-broadcast-edges 2``; the text edge list before); an
``edge-orient-triangles`` node the header and the prefix of packed bits its public rank needs
(:func:`~ldpgraph.protocols.orientation.edge_orient.download_bytes`; its mean over the nodes, and
the whole file beside it). For scale, ``packed by id`` is what a two-round node would download
if it read only the prefix its id needs (its lower neighbours are the ids below its own). Also
the wall time of the whole deployed run (load average printed beside it).

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. python scripts/edge_orient_traffic.py [--graph facebook]
[--epsilon 1 2]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import load_note  # noqa: E402

from ldpgraph.core import Seeded
from ldpgraph.datasets import resolve_graph  # noqa: E402
from ldpgraph.graph import triangle_count  # noqa: E402
from ldpgraph.protocols import registry  # noqa: E402
from ldpgraph.protocols.orientation.edge_orient import download_bytes, prefix_bytes  # noqa: E402
from ldpgraph.run import accumulate_files, node_lists, release_to_file  # noqa: E402
from ldpgraph.run.files import read_broadcast, write_broadcast
from ldpgraph.run.memory import resolve_public  # noqa: E402

#: the reference first: the ratios are to it
PROTOCOLS = (("two-round-triangles-dlap", {}), ("two-round-triangles-dlap", {"private_bound": True}),
             ("edge-orient-triangles", {}))


def deployed(name, options, graph, epsilon, folder: Path):
    """(download bytes per node (mean), upload bytes per node over both rounds, estimate, seconds, whole
    broadcast file bytes, mean bytes if packed by id prefix)."""
    t0 = time.perf_counter()
    proto = registry.get(name)
    plan = proto.plan(epsilon, **resolve_public(proto, graph, dict(options)))
    nodes, lists = node_lists(graph)
    broadcast, up, down, whole, packed = None, 0, 0, 0, 0
    for rnd in proto.rounds():
        path, _ = release_to_file(folder / f"r{rnd.number}.parquet", rnd, plan, nodes, lists, broadcast, Seeded(1))
        up += path.stat().st_size
        result = accumulate_files([path], rnd, plan, broadcast)
        nxt = rnd.broadcast(result, plan)
        if nxt is not None:
            bpath = write_broadcast(proto, folder / f"b{rnd.number}.txt", nxt)
            whole += bpath.stat().st_size
            per_node = getattr(nxt, "download", None)
            down += float(download_bytes(nxt).mean()) if per_node else bpath.stat().st_size
            with open(bpath, "rb") as fh:
                head = len(fh.readline()) + len(fh.readline())
            packed += head + float(np.mean(prefix_bytes(np.arange(graph.n_nodes))))
            broadcast = read_broadcast(proto, bpath, plan)
    est = proto.estimate(result, plan, broadcast, "triangles")
    return down, up / graph.n_nodes, est.value, time.perf_counter() - t0, whole, packed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="facebook")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 2.0])
    args = ap.parse_args()
    g = resolve_graph(args.graph, rng=0)
    t = triangle_count(g)
    print(f"{args.graph}: n = {g.n_nodes:,}, m = {g.n_edges:,}, T = {t:,}")
    for eps in args.epsilon:
        print(f"\n== epsilon {eps:g}: bytes per node (download = the broadcast file every node fetches) ==")
        ref = None
        for name, options in PROTOCOLS:
            with tempfile.TemporaryDirectory() as tmp:
                down, up, value, secs, whole, packed = deployed(name, options, g, eps, Path(tmp))
            label = name + ("-private" if options else "")
            ref = down if ref is None else ref
            ratio = f"  download / two-round-triangles-dlap {down / ref:.4f}"
            print(f"{label:34s} download {down / 1e6:8.3f} MB (file {whole / 1e6:7.2f} MB; packed by id "
                  f"{packed / 1e6:6.3f} MB)   upload {up:8.0f} B   rel. error {(value - t) / t:+.3f}   {secs:5.1f} s"
                  f"{ratio}")
        print("  ", load_note())


if __name__ == "__main__":
    main()
