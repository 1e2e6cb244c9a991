"""Deployed triangle protocols: the node -> files -> curator path against the benchmark simulation.

For ``two-round-triangles-dlap`` on GRAPH (default Facebook, public D = the largest lower
degree, total eps 1 split in halves by the plan) and ``rr-triangles`` (eps 1), times in this
process, best of REPEAT, all through the protocol layer (:mod:`ldpgraph.core`, :mod:`ldpgraph.run`):

* ``run_in_memory``: every node's own release (one Python call per node), the curator's
  validation and estimate with its standard error, all in memory;
* the same through Parquet files (``release_to_file`` / ``accumulate_files``, what
  ``ldpgraph node`` / ``ldpgraph curate`` run): round-1 rows written and read back, the
  broadcast edge list written and read back, round-2 rows written and read back;
* the reference: one trial of the vectorized benchmark simulation (``simulate_two_round`` /
  ``simulate_rr_triangles``), which has the same law but no per-node structure and no
  standard error.

Prints the ratios against the reference and checks that the file path gives the in-memory
estimate bit for bit (same seed: the same per-(round, node) streams).

Usage: PYTHONPATH=. python scripts/bench_deploy_triangles.py [GRAPH] [--repeat R]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _timing import best_of, load_note

from ldpgraph.core import Secure, Seeded
from ldpgraph.datasets import resolve_graph
from ldpgraph.protocols import registry
from ldpgraph.protocols.triangles.kernels import lower_wedges, simulate_rr_triangles, simulate_two_round
from ldpgraph.run import accumulate_files, node_lists, release_to_file, run_in_memory
from ldpgraph.run.files import read_broadcast, write_broadcast

DLAP, RR = "two-round-triangles-dlap", "rr-triangles"


def through_files(g, protocol: str, eps: float, seed: int, options: dict, tmp: Path):
    """Every round through Parquet files (and the broadcast through its file); the estimate."""
    proto = registry.get(protocol)
    plan = proto.plan(eps, **options)
    nodes, lists = node_lists(g)
    sampler = Seeded(seed)
    broadcast = None
    result = None
    for rnd in proto.rounds():
        path, _ = release_to_file(tmp / f"r{rnd.number}.parquet", rnd, plan, nodes, lists, broadcast, sampler)
        result = accumulate_files([path], rnd, plan, broadcast)
        nxt = rnd.broadcast(result, plan)
        if nxt is not None:
            write_broadcast(proto, tmp / "b.txt", nxt)
            broadcast = read_broadcast(proto, tmp / "b.txt", plan)
    return proto.estimate(result, plan, broadcast, proto.statistics[0])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("graph", nargs="?", default="facebook")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    g = resolve_graph(args.graph, rng=0)
    bound = max(int(lower_wedges(g).lower_degrees.max()), 1)
    print(f"{args.graph}: {g.n_nodes:,} nodes, {g.n_edges:,} edges; D = {bound}; {load_note()}")
    with tempfile.TemporaryDirectory() as tmp:
        for protocol, options, ref in (
            (DLAP, {"d_max": bound}, lambda: simulate_two_round(g, 0.5, 0.5, 1, rng=0)),
            (RR, {}, lambda: simulate_rr_triangles(g, 1.0, 1, rng=0)),
        ):
            t_ref, _ = best_of(ref, args.repeat)
            def in_memory(p=protocol, o=options, sampler=0):
                run = run_in_memory(p, g, 1.0, sampler=sampler, **o)
                run.estimate  # noqa: B018 (computed on first access: time it with the run)
                return run

            t_mem, run = best_of(in_memory, args.repeat)
            t_secure, _ = best_of(lambda: in_memory(sampler=Secure()), 1)
            t_file, est = best_of(
                lambda p=protocol, o=options: through_files(g, p, 1.0, 0, o, Path(tmp)), args.repeat
            )
            same = (est.value, est.std_error) == (run.estimate.value, run.estimate.std_error)
            se = "-" if run.estimate.std_error is None else f"{run.estimate.std_error:,.1f}"
            print(
                f"\n{protocol} ({run.plan.describe()}): estimate {run.estimate.value:,.1f} +- {se}; "
                f"files give the same bit for bit: {same}"
            )
            print(f"  benchmark simulation (reference) {t_ref:7.2f} s")
            print(f"  deployment in memory             {t_mem:7.2f} s  ratio {t_mem / t_ref:6.1f}")
            print(f"  deployment through Parquet files {t_file:7.2f} s  ratio {t_file / t_ref:6.1f}  "
                  f"(files / memory {t_file / t_mem:.2f}; target <= 2)")
            print(f"  in memory on the secure sampler  {t_secure:7.2f} s  (its extra cost "
                  f"{t_secure - t_mem:+.2f} s over the seeded one)")
    print(f"\n{load_note()}")


if __name__ == "__main__":
    main()
