"""Benchmark of the graph protocol end to end, with references timed in the same run.

1. k-star estimates, k = 1..4 together, from 10^8 noisy degrees: ``sum_binomials`` (one pass)
   vs four ``binomial(...).sum()`` passes vs the biased plug-in with ``scipy.special.comb``.
2. Loading a 10^7-edge synthetic SNAP edge list into a Graph (``read_edgelist``) vs
   ``numpy.loadtxt`` of the same file (parsing only, no graph).
3. Simulating every node's reports on a 10^6-node Barabasi-Albert graph (degree + local 2- and
   3-star counts under a budget split) and the curator's estimates.
4. Facebook (when LDPGRAPH_DATA has it): relative RMSE per method at eps in {0.5, 1, 2},
   k = 2 and 3, analytic and over --trials Monte-Carlo runs.

Usage (from the repository root)::

    PYTHONPATH=. python scripts/bench_graph.py [--reports 100000000] [--edges 10000000] [--trials 1000]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import special

from ldpgraph.datasets import DatasetNotFoundError, load_dataset, synthetic_graph
from ldpgraph.estimators import binomial, sum_binomials
from ldpgraph.graph import kstar_counts as exact_kstars
from ldpgraph.graph import read_edgelist
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols import DegreeRandomizer, kstars
from ldpgraph.run.method import get_method

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of  # scripts/ is on sys.path when a script runs
from bench_graph_io import format_edges  # noqa: E402


def bench_kstars(n_reports: int, eps: float = 1.0) -> None:
    rng = np.random.default_rng(1)
    degrees = np.minimum(rng.zipf(2.2, n_reports), 10**6).astype(np.int64)
    y = degrees + DiscreteLaplace(epsilon=eps).sample(n_reports, rng=rng)
    ks = [1, 2, 3, 4]
    t_one, est = best_of(lambda: sum_binomials(y, ks, eps))
    t_four, est4 = best_of(lambda: [binomial(y, k, eps).sum() for k in ks])
    sub = y[: n_reports // 10]
    t_comb, _ = best_of(lambda: [special.comb(sub, k).sum() for k in ks], repeat=1)
    t_comb *= 10
    print(f"\n1. k-star estimates k=1..4 from {n_reports:,} noisy degrees (eps={eps})")
    print(f"{'method':<44}{'seconds':>10}{'M reports/s':>14}{'ratio':>9}")
    for name, t in [
        ("sum_binomials (one pass, unbiased)", t_one),
        ("binomial(y, k).sum() for each k (unbiased)", t_four),
        ("scipy.special.comb plug-in (biased; 1/10, scaled)", t_comb),
    ]:
        print(f"{name:<44}{t:>10.3f}{n_reports / t / 1e6:>14.1f}{t_comb / t:>9.1f}")
    rel = np.max(np.abs(np.asarray(est4) - est) / np.abs(est))
    print(f"max relative difference between the two unbiased paths: {rel:.1e}")


def bench_loading(n_edges: int) -> None:
    rng = np.random.default_rng(2)
    n_nodes = max(10, n_edges // 10)
    pairs = rng.integers(0, n_nodes, size=(n_edges, 2), dtype=np.int64)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "edges.txt"
        path.write_bytes(b"# synthetic\n# FromNodeId\tToNodeId\n" + format_edges(pairs))
        t_graph, g = best_of(lambda: read_edgelist(path), repeat=2)
        t_np, _ = best_of(lambda: np.loadtxt(path, dtype=np.int64), repeat=1)
    print(f"\n2. loading a {n_edges:,}-edge list ({g.n_nodes:,} nodes, {g.n_edges:,} distinct edges)")
    print(f"{'reader':<44}{'seconds':>10}{'M edges/s':>14}{'ratio':>9}")
    print(f"{'ldpgraph read_edgelist -> Graph (CSR)':<44}{t_graph:>10.2f}{n_edges / t_graph / 1e6:>14.1f}{t_np / t_graph:>9.1f}")
    print(f"{'numpy.loadtxt -> array (no graph)':<44}{t_np:>10.2f}{n_edges / t_np / 1e6:>14.1f}{1.0:>9.1f}")


def bench_simulation(n_nodes: int) -> None:
    t_gen, g = best_of(lambda: synthetic_graph(f"ba:n={n_nodes},m=10", rng=3), repeat=1)
    d_max = int(np.quantile(g.degrees, 0.99))
    rand = DegreeRandomizer(epsilon=1.0, kstar_counts=[2, 3], d_max=d_max)
    t_sim, reports = best_of(lambda: rand.randomize(g.degrees, rng=4))
    t_cur, est = best_of(lambda: kstars(reports, 2))
    print(f"\n3. simulation on ba:n={n_nodes:,},m=10 ({g.n_edges:,} edges; generated in {t_gen:.1f} s)")
    print(f"all nodes release degree + 2-star + 3-star counts (d_max={d_max}): {t_sim:.3f} s "
          f"({n_nodes / t_sim / 1e6:.1f} M nodes/s)")
    truth = exact_kstars(g.degrees, 2)
    print(f"curator S_2 estimate with standard error: {t_cur:.3f} s; "
          f"error {(est.value - truth) / est.std_error:+.2f} standard errors")


def facebook_rmse(trials: int) -> None:
    try:
        g = load_dataset("facebook")
    except DatasetNotFoundError:
        print("\n4. Facebook not available (set LDPGRAPH_DATA): skipped")
        return
    names = ["unbiased-dlap", "naive-dlap", "unbiased-laplace", "naive-laplace", "local-lap-kstars"]
    print(f"\n4. Facebook relative RMSE (analytic / Monte-Carlo over {trials} trials)")
    for k in (2, 3):
        truth = exact_kstars(g.degrees, k)
        print(f"k = {k} (S_{k} = {truth:,})")
        print(f"{'method':<20}" + "".join(f"{'eps=' + str(e):>24}" for e in (0.5, 1, 2)))
        for name in names:
            m = get_method(name)
            cells = []
            for eps in (0.5, 1.0, 2.0):
                seq = np.random.SeedSequence([k, int(eps * 10)])
                est = m.estimate_trials(g.degrees, "kstars", k, eps, trials, rng=seq)
                mc = math.sqrt(np.mean((est - truth) ** 2)) / truth
                rmse = m.analytic_rmse(g.degrees, "kstars", k, eps)
                cells.append(f"{rmse / truth:.3e} / {mc:.3e}")
            print(f"{name:<20}" + "".join(f"{c:>24}" for c in cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", type=int, default=10**8)
    ap.add_argument("--edges", type=int, default=10**7)
    ap.add_argument("--nodes", type=int, default=10**6)
    ap.add_argument("--trials", type=int, default=1000)
    args = ap.parse_args()
    bench_kstars(args.reports)
    bench_loading(args.edges)
    bench_simulation(args.nodes)
    facebook_rmse(args.trials)


if __name__ == "__main__":
    main()
