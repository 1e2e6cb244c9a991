"""Validation of ``arr-triangles`` on the protocol layer (what is too slow for the tests).

Prints:

- the audit of the deployed round-2 release where the noisy-triangle clipping binds (the maximum
  flow of ``clipped_triangle_count``, about 1.6 ms a release), at epsilon_2 with Delta_v = kappa_v,
  and with half the noise (which the audit must refute);
- a larger Monte-Carlo of the deployed estimate against the simulator (mean and variance within
  4 SE of ``arr_moments`` without clipping, of ``arr_nonbinding_variance`` when nothing binds), and
  with a clipping that binds, the deployed mean against ``simulate_arr``'s (two samples);
- on Facebook: the broadcast each node downloads, ``arr-triangles`` (mu = 0.25) against
  ``two-round-triangles-dlap`` at the same epsilon_1, and the time of each round in memory
  against the simulator's trial, with the load average.

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. python scripts/validate_arr_protocol.py [--runs N] [--audit N]``
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import load_note  # noqa: E402

from ldpgraph.audit import audit_neighbours  # noqa: E402
from ldpgraph.core import Sampler, Seeded
from ldpgraph.datasets import load_dataset  # noqa: E402
from ldpgraph.graph import from_networkx, triangle_count  # noqa: E402
from ldpgraph.protocols import registry  # noqa: E402
from ldpgraph.protocols.randomized_response import pair_index  # noqa: E402
from ldpgraph.protocols.triangles.arr_kernels import (  # noqa: E402
    arr_moments,
    arr_nonbinding_variance,
    arr_probabilities,
    simulate_arr,
)
from ldpgraph.protocols.triangles.arr_protocol import ARRBroadcast, arr_local_count  # noqa: E402
from ldpgraph.run import run_in_memory  # noqa: E402
from ldpgraph.run.files import write_broadcast

ARR = "arr-triangles"


class _Shared(Sampler):
    def __init__(self, rng):
        self.one = Seeded(int(np.random.default_rng(rng).integers(2**32))).stream(0, 0)

    def stream(self, round, node):
        return self.one


def audit_binding(n_samples: int) -> None:
    proto = registry.get(ARR)
    plan = proto.plan(3.0, mu=0.5, beta=0.2)
    eps1, eps2 = plan.release("rr_count").epsilon, plan.release("local_count").epsilon
    # a star of noisy edges at candidate 3 (to 0..2 and 4..8): adding 3 adds min(kappa, 8) = kappa noisy
    # triangles through the maximum flow (vertex 3 is over kappa), the worst case of the sensitivity
    u = np.array([3, 3, 3, 4, 5, 6, 7, 8])
    j = np.array([0, 1, 2, 3, 3, 3, 3, 3])
    low = np.full(10, 5) - plan.public["alpha"]
    b = ARRBroadcast.build_arr(10, eps1, np.sort(pair_index(u, j)), mu=0.5, beta=0.2, clipping=True,
                               alpha=plan.public["alpha"], lower_degrees=low)
    rnd = proto.rounds()[1]

    def node(nb, size, rng):
        rows = rnd.release(plan, np.full(size, 9), [np.array(nb)] * size, b, _Shared(rng))
        return rows["value"][rows["quantity"] == "local_count"]

    def half_noise(nb, size, rng):
        one = _Shared(rng).stream(2, 9)
        return np.array([arr_local_count(9, np.array(nb), b, 2 * eps2, one) for _ in range(size)])

    pairs = [((0, 1, 2, 4), (0, 1, 2, 3, 4)), ((0, 1, 2, 4, 5, 6), (0, 1, 2, 3, 4, 5, 6)),
             ((0, 1, 2), (0, 1, 2, 12))]
    t = time.perf_counter()
    ok = audit_neighbours(node, pairs, eps2, n_samples=n_samples, rng=1)
    bad = audit_neighbours(half_noise, pairs[:1], eps2, n_samples=n_samples, rng=2)
    print(f"audit, clipping binds (D_v = {int(b.bounds[9])}, kappa_v = {int(b.kappas[9])}, "
          f"Delta_v = {int(b.node_sensitivities[9])}), {n_samples:,} samples: passed {ok.passed}; half the "
          f"noise refuted {bad.violation}  ({time.perf_counter() - t:.0f} s)")


def _values(run) -> float:
    b = run.broadcasts[0]
    pe, pn = arr_probabilities(b.epsilon, b.mu)
    return int(run.results[-1].values()["local_count"].sum()) / (pe - pn)


def _moments_line(what: str, x: np.ndarray, mean: float, var: float) -> None:
    n = x.size
    s2 = x.var(ddof=1)
    m4 = float(np.mean((x - x.mean()) ** 4))
    z_mean = (x.mean() - mean) / math.sqrt(var / n)
    z_var = (s2 - var) / math.sqrt(max(m4 - s2 * s2, 1e-300) / n)
    print(f"{what}: {n} runs, mean {x.mean():,.2f} (want {mean:,.2f}, z = {z_mean:+.2f}), variance "
          f"{s2:,.0f} (want {var:,.0f}, z = {z_var:+.2f})")


def _split(eps: float) -> tuple[float, float, float]:
    """``(eps0, eps1, eps2)`` of arr-triangles' plan (with clipping) at ``eps``."""
    plan = registry.get(ARR).plan(eps)
    return tuple(plan.release(q).epsilon for q in ("lower_degree", "rr_count", "local_count"))


def monte_carlo(runs: int) -> None:
    g = from_networkx(nx.gnp_random_graph(30, 0.4, seed=3))
    eps, mu = 3.0, 0.5
    x = np.array([_values(run_in_memory(ARR, g, eps, sampler=s, mu=mu, clipping=False)) for s in range(runs)])
    _moments_line("no clipping     ", x, *arr_moments(g, eps / 2, eps / 2, mu=mu))
    x = np.array([_values(run_in_memory(ARR, g, eps, sampler=s, mu=mu, beta=1e-9)) for s in range(runs)])
    _moments_line("clipping, beta 1e-9", x, float(triangle_count(g)), arr_nonbinding_variance(g, *_split(eps), mu=mu,
                                                                                           beta=1e-9))
    beta = 0.2  # clipping binds
    x = np.array([_values(run_in_memory(ARR, g, eps, sampler=s, mu=mu, beta=beta)) for s in range(runs)])
    eps0, eps1, eps2 = _split(eps)
    y = simulate_arr(g, eps1, eps2, 20 * runs, eps0=eps0, mu=mu, beta=beta, rng=5)
    z = (x.mean() - y.mean()) / math.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
    print(f"clipping binds (beta {beta}): deployed mean {x.mean():,.2f} ({runs} runs), simulator {y.mean():,.2f} "
          f"({y.size} trials), z = {z:+.2f}; variances {x.var(ddof=1):,.0f} / {y.var(ddof=1):,.0f}")


def facebook() -> None:
    g = load_dataset("facebook")
    eps = 2.0
    print(f"Facebook, epsilon {eps} {load_note()}")
    with tempfile.TemporaryDirectory() as tmp:
        sizes = {}
        for name, opts in ((ARR, {}), ("two-round-triangles-dlap", {"shares": {"rr": 0.45, "local_count": 0.55}})):
            t = time.perf_counter()
            run = run_in_memory(name, g, eps, sampler=1, **opts)
            elapsed = time.perf_counter() - t
            proto = registry.get(name)
            path = write_broadcast(proto, Path(tmp) / f"{name}.txt", run.broadcasts[0])
            sizes[name] = path.stat().st_size
            print(f"  {name:<26} both rounds in memory {elapsed:6.1f} s; broadcast {sizes[name]:,} bytes "
                  f"(epsilon_1 {run.plan.release('rr_count').epsilon:g}); estimate {run.estimate.value:,.0f}")
        t = time.perf_counter()
        eps0, eps1, eps2 = _split(eps)
        simulate_arr(g, eps1, eps2, 1, eps0=eps0, rng=1)
        print(f"  simulator (simulate_arr), one trial {time.perf_counter() - t:.1f} s; truth {triangle_count(g):,}")
        print(f"  download ratio arr / two-round: {sizes[ARR] / sizes['two-round-triangles-dlap']:.3f} (mu = 0.25)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--audit", type=int, default=30_000)
    ap.add_argument("--skip-facebook", action="store_true")
    ap.add_argument("--only-audit", action="store_true")
    args = ap.parse_args()
    print(load_note())
    audit_binding(args.audit)
    if args.only_audit:
        return
    monte_carlo(args.runs)
    if not args.skip_facebook:
        facebook()


if __name__ == "__main__":
    main()
