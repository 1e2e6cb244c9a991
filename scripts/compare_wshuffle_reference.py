"""Wedge shuffling: ours against the reference C++ (Triangle4CycleShuffle) on the same graph and parameters.

For each published method (WShuffle triangles, WShuffle ignoring low noisy degrees, WLocal
triangles, WShuffle and WLocal 4-cycles) and ε ∈ {0.5, 1, 2} (δ = 1e-8), prints:

- ours: the Monte-Carlo relative error (the reference's metric: mean |est - truth| / truth),
  the Monte-Carlo relative RMSE and the analytic relative RMSE (exact moments) and their ratio;
- the reference's mean relative error over ``--ref-iterations`` runs of its program, when
  ``--reference DIR`` gives its ``cpp`` folder (``SubgraphShuffle.cpp``, with StatsLib and GCEM
  headers in ``DIR/include``: ``stats.hpp``, ``stats_incl/``, ``gcem.hpp``, ``gcem_incl/``).
  The script copies it to a temporary folder, makes the one-line fix of its pairing loop
  (``i < NodeNum`` reads ``node_order[NodeNum]`` when n is odd: Facebook's n = 4039 is; we stop
  at ``i + 1 < NodeNum``, its ``pair_num`` is already n // 2), builds it with g++ -O3, writes the
  graph in its edge format and the numerical amplification table it reads
  (``numerical-bound_n<n>_d10-8.csv``: ε_L by steps of 0.001 and the central ε of Feldman et
  al.'s numerical bound, computed here by :mod:`ldpgraph.privacy`, for n users as the reference
  does), and runs it.

Nothing of the reference is kept. Usage::

    python scripts/compare_wshuffle_reference.py [--graph facebook] [--trials 2000]
        [--reference /path/to/Triangle4CycleShuffle/cpp --ref-iterations 100]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ldpgraph.datasets import resolve_graph
from ldpgraph.graph.cycles import four_cycle_count
from ldpgraph.graph.statistics import triangle_count
from ldpgraph.privacy import local_epsilon_for, numerical_epsilon
from ldpgraph.protocols import registry

EPSILONS = (0.5, 1.0, 2.0)
#: (our protocol, the reference's algorithm code, statistic)
METHODS = [
    ("wshuffle-triangles", "2n", "triangles"),
    ("wshuffle-triangles-ignore", "4n", "triangles"),
    ("wlocal-triangles", "5", "triangles"),
    ("wshuffle-four-cycles", "8n", "four_cycles"),
    ("wlocal-four-cycles", "9", "four_cycles"),
]
#: our variants beside the published ones
OURS = {"wshuffle-triangles": "wshuffle-triangles-rr", "wshuffle-triangles-ignore": "wshuffle-triangles-ignore-rr",
        "wshuffle-four-cycles": "wshuffle-four-cycles-rr"}


def build_reference(src: Path, work: Path) -> Path:
    """Copy, patch the odd-n pairing loop, build; the executable's path."""
    code = (src / "SubgraphShuffle.cpp").read_text()
    loop = "for(i=0;i<NodeNum;i+=2){"
    if code.count(loop) != 2:
        raise SystemExit(f"unexpected reference source: {loop!r} found {code.count(loop)} times (expected 2)")
    code = code.replace(loop, "for(i=0;i+1<NodeNum;i+=2){")
    (work / "SubgraphShuffle.cpp").write_text(code)
    for name in ("mt19937ar.h", "MemoryOperation.h"):
        shutil.copy(src / name, work / name)
    shutil.copytree(src / "include", work / "include")
    exe = work / "SubgraphShuffle"
    subprocess.run(["g++", "-O3", "-std=c++11", "-isystem", str(work / "include"), "-o", str(exe),
                    str(work / "SubgraphShuffle.cpp")], check=True)
    return exe


def write_reference_inputs(graph, data: Path) -> Path:
    """The edge file (``#nodes``, n, ``node,node``, then ``u,v``) and the numerical ε table."""
    n = graph.n_nodes
    rows = np.repeat(np.arange(n), np.diff(graph.indptr))
    keep = rows < graph.indices
    edges = data / "edges.csv"
    with edges.open("w") as fh:
        fh.write(f"#nodes\n{n}\nnode,node\n")
        np.savetxt(fh, np.c_[rows[keep], graph.indices[keep]], fmt="%d", delimiter=",")
    # the reference scans ε_L down by 0.001 to the first row whose bound is <= its ε; rows on that
    # 0.001 grid near the ε_L of every central ε it is run at (ε and 0.9 ε), coarse rows elsewhere
    grid = set(np.round(np.arange(8.0, 0.0, -0.05), 3))
    for eps in (*EPSILONS, *(0.9 * e for e in EPSILONS)):
        top = local_epsilon_for(eps, n, 1e-8)
        grid |= set(np.round(np.arange(top + 0.06, max(top - 0.06, 0.001), -0.001), 3))
    with (data / f"numerical-bound_n{n}_d10-8.csv").open("w") as fh:
        fh.write("epsL,eps_lower,eps_upper\n")
        for eps_l in sorted(grid, reverse=True):
            e = numerical_epsilon(float(eps_l), n, 1e-8)
            fh.write(f"{eps_l},{e},{e}\n")
    return edges


def run_reference(exe: Path, edges: Path, alg: str, eps: float, iterations: int) -> float:
    """The reference's AVG(rel-err) of ``iterations`` runs."""
    eps_s = f"{eps:g}"
    subprocess.run([str(exe), str(edges), "-1", f"{eps_s}-8", "-1", str(iterations), alg], check=True,
                   cwd=exe.parent, stdout=subprocess.DEVNULL)
    out = edges.parent / f"res_n{_n_of(edges)}_alg{alg}_eps{eps_s}-8_pair-1_itr{iterations}.csv"
    for line in out.read_text().splitlines():
        if line.startswith(("Triangles,", "4-cycles,")):
            return float(line.split(",")[1])
    raise RuntimeError(f"no average in {out}")


def _n_of(edges: Path) -> int:
    with edges.open() as fh:
        fh.readline()
        return int(fh.readline())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", default="facebook")
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--reference", type=Path, help="the reference's cpp folder (with include/ populated)")
    ap.add_argument("--ref-iterations", type=int, default=100)
    ap.add_argument("--methods", nargs="*", help="only these of ours (default: all)")
    args = ap.parse_args()
    g = resolve_graph(args.graph)
    truth = {"triangles": float(triangle_count(g)), "four_cycles": float(four_cycle_count(g))}
    print(f"graph {args.graph}: n = {g.n_nodes:,}, triangles {truth['triangles']:,.0f}, 4-cycles "
          f"{truth['four_cycles']:,.0f}; load {os.getloadavg()[0]:.1f}")
    exe = edges = None
    tmp = None
    if args.reference is not None:
        tmp = tempfile.TemporaryDirectory()
        work = Path(tmp.name)
        exe = build_reference(args.reference, work)
        edges = write_reference_inputs(g, work)
    rng = np.random.default_rng(2026)
    print(f"\n{'method':32s} {'eps':>4s} {'eps0':>6s} {'MC rel.err':>10s} {'ref rel.err':>11s} "
          f"{'MC relRMSE':>10s} {'analytic':>9s} {'MC/an.':>6s} {'ms/trial':>8s}")
    for name, alg, stat in METHODS:
        for ours in ([name, OURS[name]] if name in OURS else [name]):
            if args.methods and ours not in args.methods:
                continue
            proto = registry.get(ours)
            for eps in EPSILONS:
                plan = proto.plan(eps, n_users=g.n_nodes, pairing_seed=0)
                t0 = time.perf_counter()
                est = proto.simulate(g, plan, stat, args.trials, rng)
                ms = 1e3 * (time.perf_counter() - t0) / args.trials
                mean, var = proto.moments(g, plan, stat)
                tr = truth[stat]
                mc_re = float(np.mean(np.abs(est - tr))) / tr
                mc_rmse = math.sqrt(float(np.mean((est - tr) ** 2))) / tr
                an = math.sqrt((mean - tr) ** 2 + var) / tr
                ref = "-"
                if exe is not None and ours == name:
                    ref = f"{run_reference(exe, edges, alg, eps, args.ref_iterations):.4f}"
                print(f"{ours:32s} {eps:4g} {plan.public['local_epsilon']:6.3f} {mc_re:10.4f} {ref:>11s} "
                      f"{mc_rmse:10.4f} {an:9.4f} {mc_rmse / an:6.3f} {ms:8.2f}", flush=True)
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
