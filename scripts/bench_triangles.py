"""Benchmark of the triangle protocols: time and peak memory per trial, and the counting kernels.

Prints, on Facebook (4,039 nodes) and Email-Enron (36,692 nodes):

- ``--kernels`` (Facebook, eps in {0.5, 1, 2}): the pieces of one ``rr-triangles`` trial —
  the noisy pairs (binomial count of flipped non-edges, then their positions), the CSR build,
  and the triangle count of the noisy graph by each kernel: the package's dense kernel
  (blocked float32 product of the lower triangle, n^3/6 multiply-adds) and sparse kernel,
  and two references timed in the same run: the float32 ``syrk`` of the whole adjacency
  (n^3/2 multiply-adds, the previous dense kernel) and a bit-packed popcount kernel;
- one ``rr-triangles`` trial on Facebook (target <= 2 s) and one two-round trial (targets:
  Facebook <= 0.2 s, Email-Enron <= 3 s), best of a few runs, with the peak memory of the
  trial (tracemalloc, numpy allocations included; target <= 2 GB) and the ratio to a
  reference timed in the same run: the exact triangle count of the true graph by the
  package's sparse kernel. ``rr-triangles`` on Email-Enron is refused (its noisy graph would
  hold ~1e8 edges).

BLAS runs on one thread (the targets are per core) unless OPENBLAS_NUM_THREADS is set.
Timings are wall clock on a shared machine: the load average is printed with them. The
relative RMSE of every method is printed by ``scripts/reproduce_triangles.py``.

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. python scripts/bench_triangles.py [--kernels]``
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy is imported: one core

import argparse  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import best_of, load_note  # noqa: E402

from ldpgraph.datasets import resolve_graph  # noqa: E402
from ldpgraph.graph import triangle_count  # noqa: E402
from ldpgraph.graph.statistics import adjacency_triangle_count  # noqa: E402
from ldpgraph.protocols.randomized_response import (  # noqa: E402
    flip_probability,
    keep_probability,
    noisy_lower_pairs,
    pair_from_index,
    pairs_to_csr,
)
from ldpgraph.protocols.triangles.kernels import _dense_triangles  # noqa: E402
from ldpgraph.run.method import get_method  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0)


def _peak(func):
    tracemalloc.start()
    tracemalloc.reset_peak()
    func()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def syrk_triangles(n, u, v):
    """Reference: float32 syrk of the symmetric adjacency, sum_{i<j} (A^2)_ij A_ij / 3."""
    from scipy.linalg import blas

    a = np.zeros((n, n), dtype=np.float32)
    a[u, v] = a[v, u] = 1.0
    c = blas.ssyrk(1.0, a.T)  # upper triangle of A A^T = A^2
    total = sum(float(np.multiply(c[s:s + 1024], a[s:s + 1024]).sum(dtype=np.float64))
                for s in range(0, n, 1024))
    return int(total) // 3


def popcount_triangles(n, u, v, chunk=1 << 18):
    """Reference: bit-packed higher-neighbour sets H, T = sum over lower edges of |H_u & H_v|."""
    m = np.zeros((n, (n + 63) // 64 * 64), dtype=np.bool_)
    m[v, u] = True  # bit i of row k: i > k adjacent to k
    h = np.packbits(m, axis=1, bitorder="little").view(np.uint64)
    del m
    return sum(int(np.bitwise_count(h[u[s:s + chunk]] & h[v[s:s + chunk]]).sum(dtype=np.int64))
               for s in range(0, u.size, chunk))


def kernels(g, repeat):
    print(f"\n== pieces of one rr-triangles trial on {g.n_nodes} nodes (best of {repeat}) ==")
    for eps in EPSILONS:
        _kernels_at(g, eps, repeat)
        print("  ", load_note())


def _kernels_at(g, eps, repeat):
    p, q = keep_probability(eps), flip_probability(eps)
    gen = np.random.default_rng(7)
    t_pairs, (n, idx) = best_of(lambda: noisy_lower_pairs(g, p, q, rng=gen), repeat)
    u, v = pair_from_index(idx)
    t_csr, _ = best_of(lambda: pairs_to_csr(n, idx), repeat)
    t_ref, want = best_of(lambda: syrk_triangles(n, u, v), repeat)
    print(f" eps={eps:g}: {idx.size:,} noisy edges; pairs {t_pairs:.3f} s, CSR {t_csr:.3f} s; "
          f"reference syrk {t_ref:.3f} s")
    for name, f in (("dense (package)", lambda: _dense_triangles(n, u, v)),
                    ("sparse (package)", lambda: adjacency_triangle_count(pairs_to_csr(n, idx))),
                    ("popcount", lambda: popcount_triangles(n, u, v))):
        t, got = best_of(f, 1 if name.startswith("sparse") else repeat)
        assert got == want, (name, got, want)
        print(f"   {name:18s} {t:7.3f} s  ({t / t_ref:5.2f} x syrk)")


def trials(graphs, repeat):
    print(f"\n== time and peak memory of one trial (best of {repeat} runs) ==")
    ok = True
    for label, g in graphs.items():
        ref, _ = best_of(lambda g=g: triangle_count(g), repeat)
        print(f"{label}: reference (exact sparse triangle count of the true graph) {ref:.3f} s")
        for name in ("rr-triangles", "two-round-triangles-dlap", "two-round-triangles-laplace"):
            if name == "rr-triangles" and label != "facebook":
                continue
            target = 2.0 if name == "rr-triangles" else (0.2 if label == "facebook" else 3.0)
            p = get_method(name)
            t_prep = time.perf_counter()
            p.prepare(g)
            t_prep = time.perf_counter() - t_prep
            for eps in EPSILONS:
                gen = np.random.default_rng(1)
                dt, _ = best_of(
                    lambda p=p, g=g, eps=eps, gen=gen: p.estimate_trials(g, "triangles", None, eps, 1, rng=gen),
                    repeat,
                )
                peak = _peak(lambda p=p, g=g, eps=eps: p.estimate_trials(g, "triangles", None, eps, 1, rng=2))
                good = dt <= target and peak <= 2 * 2**30
                ok &= good
                print(f"  {name:28s} eps={eps:<4g} {dt:7.3f} s/trial  ({dt / ref:6.2f} x ref; target "
                      f"{target:g} s)  peak {peak / 2**20:7.1f} MiB  [{'met' if good else 'MISSED'}]"
                      f"  [per-graph setup {t_prep:.3f} s]")
        print("  ", load_note())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS (graphs, setups and trials): {rss:.0f} MiB")
    print("all targets", "met" if ok else "NOT all met")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kernels", action="store_true", help="also time the kernels of rr-triangles")
    args = ap.parse_args()
    graphs = {"facebook": resolve_graph("facebook"), "email-enron": resolve_graph("email-enron")}
    print(load_note(), "(shared machine); BLAS threads:", os.environ["OPENBLAS_NUM_THREADS"])
    for label, g in graphs.items():
        print(f"{label}: {g.n_nodes} nodes, {g.n_edges} edges, {triangle_count(g)} triangles")
    if args.kernels:
        kernels(graphs["facebook"], args.repeat)
    trials(graphs, args.repeat)


if __name__ == "__main__":
    main()
