"""Deployed triangle protocols: the node -> files -> curator path against the benchmark simulation.

For ``two-round-triangles-dlap`` on GRAPH (default Facebook, D = the largest lower degree,
eps 1 split in halves) and ``rr-triangles`` (eps 1), times in this process, best of REPEAT:

* ``simulate_deployment``: every node's own release (one Python call per node), the
  curator's validation and estimate with its standard error, all in memory;
* the same through Parquet files: round-1 rows written and read back, the broadcast edge
  list written and read back, round-2 rows written and read back;
* the reference: one trial of the vectorized benchmark simulation (``simulate_two_round`` /
  ``simulate_rr_triangles``), which has the same law but no per-node structure and no
  standard error.

Prints the ratios against the reference and checks that the file path gives the in-memory
estimate bit for bit.

Usage: PYTHONPATH=. python scripts/bench_deploy_triangles.py [GRAPH] [--repeat R]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _timing import best_of, load_note

from ldpgraph.datasets import resolve_graph
from ldpgraph.protocols import deploy_triangles as dt
from ldpgraph.protocols.triangles import lower_wedges, simulate_rr_triangles, simulate_two_round
from ldpgraph.reportfiles import write_reports
from ldpgraph.trianglefiles import (
    read_round1_files,
    read_round2_files,
    read_triangle_broadcast,
    write_triangle_broadcast,
)


def through_files(g, protocol: str, eps: float, seed: int, bound: int | None, tmp: Path):
    nodes = list(range(g.n_nodes))
    lists = [g.indices[g.indptr[v] : g.indptr[v + 1]] for v in nodes]
    eps1 = eps if protocol == dt.RR_PROTOCOL else eps / 2
    write_reports(tmp / "r1.parquet", dt.round1_columns(protocol, nodes, lists, eps1, seed=seed))
    s = read_round1_files(tmp / "r1.parquet", protocol)
    if protocol == dt.RR_PROTOCOL:
        return dt.rr_triangles_estimate(s)
    write_triangle_broadcast(
        tmp / "b.txt", dt.TriangleBroadcast.build(protocol, s.n_nodes, s.epsilon, bound, s.index)
    )
    b = read_triangle_broadcast(tmp / "b.txt")
    write_reports(tmp / "r2.parquet", dt.round2_columns(nodes, lists, b, eps / 2, seed=seed))
    return read_round2_files(tmp / "r2.parquet", b)[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("graph", nargs="?", default="facebook")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    g = resolve_graph(args.graph, rng=0)
    bound = max(int(lower_wedges(g).lower_degrees.max()), 1)
    print(f"{args.graph}: {g.n_nodes:,} nodes, {g.n_edges:,} edges; D = {bound}; {load_note()}")
    with tempfile.TemporaryDirectory() as tmp:
        for protocol, ref in (
            (dt.DLAP_PROTOCOL, lambda: simulate_two_round(g, 1.0, 1, rng=0)),
            (dt.RR_PROTOCOL, lambda: simulate_rr_triangles(g, 1.0, 1, rng=0)),
        ):
            b = bound if protocol == dt.DLAP_PROTOCOL else None
            t_ref, _ = best_of(ref, args.repeat)
            t_mem, run = best_of(
                lambda p=protocol, b=b: dt.simulate_deployment(g, p, 1.0, seed=0, bound=b), args.repeat
            )
            t_file, est = best_of(
                lambda p=protocol, b=b: through_files(g, p, 1.0, 0, b, Path(tmp)), args.repeat
            )
            same = (est.value, est.std_error) == (run.estimate.value, run.estimate.std_error)
            print(
                f"\n{protocol}: estimate {run.estimate.value:,.1f} +- {run.estimate.std_error:,.1f}; "
                f"files give the same bit for bit: {same}"
            )
            print(f"  benchmark simulation (reference) {t_ref:7.2f} s")
            print(f"  deployment in memory             {t_mem:7.2f} s  ratio {t_mem / t_ref:6.1f}")
            print(f"  deployment through Parquet files {t_file:7.2f} s  ratio {t_file / t_ref:6.1f}")
    print(f"\n{load_note()}")


if __name__ == "__main__":
    main()
