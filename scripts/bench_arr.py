"""Benchmark of ``arr-triangles`` (ARR with sampling and double clipping) against the two-round protocol.

Prints, on Facebook (4,039 nodes) and Email-Enron (36,692 nodes):

- the time of one ``arr-triangles`` trial (target on Email-Enron: <= 2 s), best of a few runs,
  warm (lower wedges prepared, as the experiment runner does) and cold (wedges included),
  with its ratio to references timed in the same run: the exact triangle count of the true
  graph, and one ``two-round-triangles-dlap`` trial;
- the download volume per node (mean bits) against the unsampled two-round protocols, ratio
  printed (ARR's noisy graph is mu times the RR graph at the same eps1);
- the clipping bias at eps in {0.5, 1, 2}: measured (the mean clipping loss per trial, whose
  expectation is exactly T - E[estimate], with its standard error) and the proven bound;
- the relative RMSE (Monte-Carlo) of ``arr-triangles`` against ``two-round-triangles-dlap``
  (analytic and Monte-Carlo) and ``-private``, and a sweep over mu at the default beta.

Timings are wall clock on a shared machine: the load average is printed with them.

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. python scripts/bench_arr.py [--trials N] [--repeat R]``
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import best_of, load_note, verdict  # noqa: E402

from ldpgraph.datasets import resolve_graph  # noqa: E402
from ldpgraph.graph import triangle_count  # noqa: E402
from ldpgraph.protocols import registry  # noqa: E402
from ldpgraph.protocols.triangles.arr_kernels import (  # noqa: E402
    DEFAULT_BETA,
    DEFAULT_MU,
    arr_clipping_bias_bound,
    arr_nonbinding_variance,
    simulate_arr,
)
from ldpgraph.run.method import get_method  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0)
TARGET_ENRON = 2.0


def _graphs() -> dict:
    out = {}
    for name in ("facebook", "email-enron"):
        try:
            out[name] = resolve_graph(name)
        except (OSError, ValueError) as err:
            print(f"{name}: skipped ({err}); set LDPGRAPH_DATA=/work/shared/datasets")
    return out


def _rel_rmse(x: np.ndarray, truth: float) -> float:
    return math.sqrt(float(np.mean((x - truth) ** 2))) / truth


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=60, help="Monte-Carlo trials per cell")
    ap.add_argument("--repeat", type=int, default=5, help="timing runs (best of)")
    args = ap.parse_args()
    print(load_note(), "(shared machine: times are upper bounds)")
    graphs = _graphs()
    truths = {}
    for label, g in graphs.items():
        truths[label] = float(triangle_count(g))
        print(f"{label}: {g.n_nodes} nodes, {g.n_edges} edges, {truths[label]:.0f} triangles")

    arr = get_method("arr-triangles")
    two = get_method("two-round-triangles-dlap")
    two_p = get_method("two-round-triangles-dlap-private")
    print(f"\narr-triangles defaults: mu = {DEFAULT_MU}, beta = {DEFAULT_BETA}, budget at eps = 1: {arr.budget(1.0)}")

    print(f"\n== time of one trial (best of {args.repeat}) ==")
    for label, g in graphs.items():
        ref, _ = best_of(lambda g=g: triangle_count(g), args.repeat)
        two.prepare(g)
        t_two, _ = best_of(lambda g=g: two.estimate_trials(g, "triangles", None, 1.0, 1, rng=1), args.repeat)
        print(
            f"{label}: references: exact triangle count {ref:.3f} s; two-round-triangles-dlap trial {t_two:.3f} s"
        )
        for eps in EPSILONS:
            cold = get_method("arr-triangles")
            t_cold, _ = best_of(
                lambda g=g, eps=eps: get_method("arr-triangles").estimate_trials(g, "triangles", None, eps, 1, rng=2),
                args.repeat,
            )
            cold.prepare(g)
            t_warm, _ = best_of(
                lambda g=g, eps=eps, p=cold: p.estimate_trials(g, "triangles", None, eps, 1, rng=3),
                args.repeat,
            )
            line = (
                f"  arr-triangles eps={eps:<4g} warm {t_warm:.3f} s ({t_warm / ref:5.2f} x count, "
                f"{t_warm / t_two:5.2f} x two-round)   cold {t_cold:.3f} s ({t_cold / ref:5.2f} x count)"
            )
            if label == "email-enron":
                line += f"   target <= {TARGET_ENRON:g} s (cold): {verdict(t_cold <= TARGET_ENRON)}"
            print(line)
        print("  ", load_note())

    print("\n== download (and upload) per node, mean bits, eps = 1 ==")
    for label, g in graphs.items():
        up_a, down_a = arr.communication(g, 1.0)
        for other in (two, two_p):
            up_o, down_o = other.communication(g, 1.0)
            print(
                f"{label:12s} arr-triangles down {down_a:12.4g}  vs {other.name:34s} {down_o:12.4g}  "
                f"ratio {down_a / down_o:.4f}   (upload {up_a:.0f} vs {up_o:.0f})"
            )

    print(f"\n== clipping bias (defaults; {args.trials} trials; loss = T - estimate's mean, exactly) ==")
    for label, g in graphs.items():
        arr.prepare(g)
        w = arr.protocol.lower_wedges(g)
        t = truths[label]
        for eps in EPSILONS:
            eps0, eps1, eps2 = _split(eps)
            _, loss = simulate_arr(g, eps1, eps2, args.trials, eps0=eps0, rng=10, wedges=w, return_loss=True)
            edge, tri = arr_clipping_bias_bound(g, eps0, eps1, wedges=w)
            se = loss.std(ddof=1) / math.sqrt(loss.size)
            print(
                f"{label:12s} eps={eps:<4g} measured bias {-loss.mean():10.1f} +- {se:8.1f} "
                f"({-loss.mean() / t:+.2e} of T)   bound [-{edge + tri:.1f}, 0] "
                f"(edge {edge:.1f}, noisy-triangle {tri:.1f}; {(edge + tri) / t:.2e} of T)"
            )

    print(f"\n== relative RMSE ({args.trials} Monte-Carlo trials; analytic where it exists) ==")
    for label, g in graphs.items():
        t = truths[label]
        two_p.prepare(g)
        for eps in EPSILONS:
            a_two = two.analytic_rmse(g, "triangles", None, eps) / t
            a_two_p = two_p.analytic_rmse(g, "triangles", None, eps) / t
            x_two = two.estimate_trials(g, "triangles", None, eps, args.trials, rng=20)
            x_arr = arr.estimate_trials(g, "triangles", None, eps, args.trials, rng=21)
            r_arr, r_two = _rel_rmse(x_arr, t), _rel_rmse(x_two, t)
            nb = math.sqrt(arr_nonbinding_variance(g, *_split(eps), wedges=arr.protocol.lower_wedges(g))) / t
            print(
                f"{label:12s} eps={eps:<4g} arr-triangles MC {r_arr:.4g} (non-binding analytic sd {nb:.4g})"
                f"   two-round-triangles-dlap "
                f"analytic {a_two:.4g} (MC {r_two:.4g})   ratio arr/two-round (analytic) {r_arr / a_two:.3f}   "
                f"two-round-triangles-dlap-private analytic {a_two_p:.4g}"
            )
        print("  ", load_note())

    t0 = time.perf_counter()
    print(
        f"\n== mu sweep at eps = 1 (beta = {DEFAULT_BETA}; download ratio vs two-round-triangles-dlap-private) =="
    )
    for label, g in graphs.items():
        t = truths[label]
        _, down_p = two_p.communication(g, 1.0)
        for mu in (0.05, 0.1, 0.25, 0.5, 1.0):
            p = arr.with_options(mu=mu)
            p.protocol._wedge_cache = arr.protocol._wedge_cache  # same graphs, same wedges
            x = p.estimate_trials(g, "triangles", None, 1.0, args.trials, rng=30)
            _, down = p.communication(g, 1.0)
            print(
                f"{label:12s} mu={mu:<5g} rel RMSE {_rel_rmse(x, t):.4g}   download ratio {down / down_p:.3f}"
            )
    print(load_note(), f"(sweep took {time.perf_counter() - t0:.1f} s)")


def _split(eps: float) -> tuple[float, float, float]:
    """``(eps0, eps1, eps2)`` of arr-triangles' plan (with clipping) at ``eps``."""
    plan = registry.get("arr-triangles").plan(eps)
    return tuple(plan.release(q).epsilon for q in ("lower_degree", "rr_count", "local_count"))


if __name__ == "__main__":
    main()
