"""Speed of wedge shuffling: one trial, the node releases, the shuffler, the amplification bound.

Prints, with the load average (the machine may be shared; a figure under load is a bound):

- one trial of each wedge-shuffle protocol's simulation (a fresh pairing, the counts drawn from
  their laws) on Facebook and Email-Enron, one core (targets: <= 1 s and <= 10 s);
- the rows path on Facebook (every node's release, seeded sampler; then shuffle and accumulate);
- the shuffler: ``secure_permutation`` (Fisher-Yates on the OS CSPRNG) against numpy's seeded
  ``Generator.permutation`` on the same number of rows;
- the amplification: the numerical bound and its inverse at n = 4037.

Usage: ``python scripts/bench_wedge_shuffle.py [--graphs facebook email-enron]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from ldpgraph.core import Seeded
from ldpgraph.datasets import resolve_graph
from ldpgraph.privacy import local_epsilon_for, numerical_epsilon
from ldpgraph.protocols import registry
from ldpgraph.protocols.deploy_triangles import chunk_from_columns
from ldpgraph.run import node_lists
from ldpgraph.run.shuffler import secure_permutation, shuffle_rows


def _best(func, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--graphs", nargs="*", default=["facebook", "email-enron"])
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores shared)")
    names = ["wshuffle-triangles", "wshuffle-triangles-ignore", "wshuffle-four-cycles"]
    for gname in args.graphs:
        g = resolve_graph(gname)
        print(f"\n{gname}: n = {g.n_nodes:,}, m = {g.n_edges:,}")
        for name in names:
            proto = registry.get(name)
            plan = proto.plan(1.0, n_users=g.n_nodes, pairing_seed=0)
            stat = proto.statistics[0]
            t = _best(lambda g=g, proto=proto, plan=plan, stat=stat: proto.simulate(g, plan, stat, 1, 1))
            print(f"  one trial {name:28s} {t:8.4f} s")
    g = resolve_graph("facebook")
    proto = registry.get("wshuffle-triangles")
    plan = proto.plan(1.0, n_users=g.n_nodes, pairing_seed=0)
    nodes, lists = node_lists(g)
    rnd = proto.rounds()[0]
    t0 = time.perf_counter()
    rows = rnd.release(plan, nodes, lists, None, Seeded(1))
    t_rel = time.perf_counter() - t0
    t0 = time.perf_counter()
    shuffled = shuffle_rows(rows, None)
    t_shuf = time.perf_counter() - t0
    t0 = time.perf_counter()
    acc = rnd.accumulator(plan, None)
    acc.add(chunk_from_columns(shuffled))
    proto.estimate(acc.result(), plan, None, "triangles")
    t_acc = time.perf_counter() - t0
    print(f"\nrows path on facebook: release {t_rel:.2f} s ({len(rows['node']):,} rows), secure shuffle "
          f"{t_shuf:.2f} s, accumulate + estimate {t_acc:.3f} s")
    for m in (10**5, 10**6):
        ts = _best(lambda m=m: secure_permutation(m), 2)
        tf = _best(lambda m=m: secure_permutation(m, "fisher-yates"), 1)
        tn = _best(lambda m=m: np.random.default_rng(0).permutation(m), 2)
        print(f"shuffler, {m:,} rows: OS CSPRNG sorted keys {ts:.3f} s ({m / ts / 1e6:.2f} M rows/s), "
              f"OS CSPRNG Fisher-Yates {tf:.3f} s ({m / tf / 1e6:.2f} M rows/s), numpy seeded {tn:.4f} s")
    t = _best(lambda: numerical_epsilon(3.6, 4037, 1e-8), 2)
    ti = _best(lambda: local_epsilon_for(1.0, 4037, 1e-8), 1)
    print(f"amplification at n = 4037: numerical bound {t * 1e3:.1f} ms, inverse (eps0 for eps = 1) {ti:.2f} s")


if __name__ == "__main__":
    main()
