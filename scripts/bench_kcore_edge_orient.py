"""Multi-round LEDP against the published reference: k-core decomposition and EdgeOrient triangles.

Prints three tables on Facebook and Email-Enron (``--graphs`` to change):

1. **k-core** at ε_paper ∈ {0.5, 1, 2} (the paper's LEDP ε: an edge's two endpoints together,
   so a node spends ε_paper / 2): ``kcore-reference`` (k-CoreD as the authors' Go code runs
   it, ψ = 1/2, f = 4/5, bias factor 8) against ours, ``kcore-svt`` at the same per-node
   budget ε_paper / 2 (ψ = 1/4, two levels per group), and ``kcore-svt-degree`` (ψ = 1/2, one
   level per group, capped and read through a noisy degree); mean and max approximation factor
   (averaged over the trials), degeneracy estimate, rounds; and the reference without noise
   (its rounding floor).
2. **Triangles** at ε_paper ∈ {1, 2}: ``edge-orient-reference`` (the code, at ε_paper) against
   ours with per-node bounds and with the global bound, at the same *per-edge* budget
   (per node ε_paper / (1 + order share): the noisy degree that orders the nodes is the only
   release that both endpoints of an edge make); relative RMSE, relative bias, the ratio to
   the reference.
3. **Triangles on Email-Enron at per-node ε = 1**: ours against every other ldpgraph triangle
   method that runs there (``rr-triangles`` does not: its noisy graph has ~1e8 edges).

And the time of one whole multi-round k-core run on Email-Enron (the simulation's vectorised
path, and the deployable path: every node's release through the protocol layer, one stream
per node and round), with the load average. The reference in the tables is a line-by-line
Python transcription (:mod:`ldpgraph.protocols.kcore`, :mod:`ldpgraph.protocols.edge_orient`).

``--reference SRC``: a checkout of mundrapranay/DistributedLEDPGraphAlgos that ``go build``
builds (Go >= 1.21; without the module proxy, ``replace`` directives to local copies of its
modules and ``GOFLAGS=-mod=mod GOPROXY=off``). The script writes a ten-line driver of ours
into ``SRC/ldpgraph_driver/`` that calls the code's ``algorithms.KCoreLDPCoord`` at a given ε
(the code's own runner fixes ε = 1 and its output path), builds it with the ``go`` on PATH,
writes the graph as the code's one-worker partition file, and prints the binary's k-core
numbers beside the transcription's, mean ± standard error over the trials.

Usage: ``LDPGRAPH_DATA=... PYTHONPATH=. python scripts/bench_kcore_edge_orient.py [--trials 10]
[--reference SRC]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from ldpgraph.datasets import load_dataset
from ldpgraph.graph.statistics import triangle_count
from ldpgraph.protocols.edge_orient import edge_orient_budget, reference_edge_orient, simulate_edge_orient
from ldpgraph.protocols.kcore import core_summary, exact_core_numbers, reference_kcore, svt_kcore
from ldpgraph.protocols.kcore_degree import degree_svt_kcore
from ldpgraph.registry import get_method


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _table(rows: list[tuple]) -> str:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def kcore_table(graphs: dict, trials: int) -> None:
    rows = [("graph", "eps_paper", "method", "mean factor", "max factor", "degeneracy", "rounds")]
    for name, g in graphs.items():
        truth = exact_core_numbers(g)
        for eps in (0.5, 1.0, 2.0):
            for label, run in (("reference", lambda s, e=eps, g=g: reference_kcore(g, e / 2, rng=s)),
                               ("svt (ours)", lambda s, e=eps, g=g: svt_kcore(g, e / 2, rng=s,
                                                                         max_degree=int(g.degrees.max()))),
                               ("svt-degree (ours)", lambda s, e=eps, g=g: degree_svt_kcore(
                                   g, e / 2, rng=s, max_degree=int(g.degrees.max())))):
                res = [run(s) for s in range(trials)]
                summ = [core_summary(r.core_numbers, truth) for r in res]
                rounds = max(r.rounds for r in res) + (1 if label == "reference" else 0)
                rows.append((name, eps, label, f"{np.mean([s['mean_approximation_factor'] for s in summ]):.3f}",
                             f"{np.mean([s['max_approximation_factor'] for s in summ]):.2f}",
                             f"{np.mean([s['degeneracy_estimate'] for s in summ]):.1f} / {truth.max()}",
                             rounds))
        floor = core_summary(reference_kcore(g, 1.0, noise=False).core_numbers, truth)
        quiet = core_summary(svt_kcore(g, 1.0, noise=False, max_degree=int(g.degrees.max())).core_numbers, truth)
        rows.append((name, "no noise", "reference", f"{floor['mean_approximation_factor']:.3f}",
                     f"{floor['max_approximation_factor']:.2f}", "", ""))
        rows.append((name, "no noise", "svt (ours)", f"{quiet['mean_approximation_factor']:.3f}",
                     f"{quiet['max_approximation_factor']:.2f}", "", ""))
    print("k-core: approximation factor max(est/true, true/est) over nodes of core >= 1 "
          f"(mean of {trials} trials; rounds include the reference's degree round)")
    print(_table(rows))


_DRIVER = """package main

import (
	"flag"
	"fmt"

	"github.com/mundrapranay/DistributedLEDPGraphAlgos/algorithms"
)

func main() {
	n := flag.Int("n", 0, "nodes")
	eps := flag.Float64("epsilon", 1.0, "the paper's epsilon")
	base := flag.String("base", "", "partition directory, with a trailing slash")
	out := flag.String("out", "", "output file")
	flag.Parse()
	algorithms.KCoreLDPCoord(*n, 0.5, *eps, 0.8, true, 8, true, *base, []string{"0.txt"}, *out)
	fmt.Print("")
}
"""


def build_reference(src: str) -> Path:
    """Build our driver of the reference's k-CoreD inside the checkout ``src``; the binary's path."""
    folder = Path(src) / "ldpgraph_driver"
    folder.mkdir(exist_ok=True)
    (folder / "main.go").write_text(_DRIVER)
    binary = Path(tempfile.mkdtemp()) / "ledp-kcore"
    subprocess.run(["go", "build", "-o", str(binary), "./ldpgraph_driver"], cwd=src, check=True)
    return binary


def run_reference(binary: Path, graph, eps_paper: float, folder: str) -> np.ndarray:
    """One run of the Go binary on ``graph`` (partition file already in ``folder``): core estimates."""
    out = os.path.join(folder, "out.txt")
    subprocess.run([str(binary), f"-n={graph.n_nodes}", f"-epsilon={eps_paper}", f"-base={folder}/",
                    f"-out={out}"], check=True)
    est = np.zeros(graph.n_nodes)
    with open(out) as f:
        for line in f:
            head, _, value = line.partition(":")
            if head.isdigit():
                est[int(head)] = float(value)
    return est


def go_table(graphs: dict, trials: int, src: str) -> None:
    binary = build_reference(src)
    rows = [("graph", "eps_paper", "Go mean", "Python mean", "Go max", "Python max")]
    for name, g in graphs.items():
        truth = exact_core_numbers(g)
        folder = tempfile.mkdtemp()
        with open(os.path.join(folder, "0.txt"), "w") as f:  # the code's partition: "v u" per arc
            ptr, idx = np.asarray(g.indptr), np.asarray(g.indices)
            for v in range(g.n_nodes):
                f.write("".join(f"{v} {u}\n" for u in idx[ptr[v]:ptr[v + 1]]))
        for eps in (0.5, 1.0, 2.0):
            go = [core_summary(run_reference(binary, g, eps, folder), truth) for _ in range(trials)]
            py = [core_summary(reference_kcore(g, eps / 2, rng=s).core_numbers, truth) for s in range(trials)]

            def ms(runs: list, key: str) -> str:
                x = np.array([r[key] for r in runs])
                return f"{x.mean():.3f} ± {x.std(ddof=1) / np.sqrt(x.size):.3f}"

            rows.append((name, eps, ms(go, "mean_approximation_factor"), ms(py, "mean_approximation_factor"),
                         ms(go, "max_approximation_factor"), ms(py, "max_approximation_factor")))
    print(f"\nk-CoreD: the Go binary against the Python transcription ({trials} trials, ± one SE)")
    print(_table(rows))


def triangle_table(graphs: dict, trials: int) -> None:
    order_share = edge_orient_budget(1.0)["order"]
    rows = [("graph", "eps_paper", "method", "rel RMSE", "rel bias", "ours / ref")]
    for name, g in graphs.items():
        t = triangle_count(g)
        for eps in (1.0, 2.0):
            ref = np.array([reference_edge_orient(g, eps, rng=s) for s in range(trials)])
            r_ref = float(np.sqrt(np.mean((ref - t) ** 2)) / t)
            rows.append((name, eps, "reference", f"{r_ref:.4f}", f"{(ref.mean() - t) / t:+.4f}", ""))
            per_node = eps / (1.0 + order_share)
            for bounds in ("local", "global"):
                x = simulate_edge_orient(g, per_node, trials, bounds=bounds, rng=100 + int(eps))
                r = float(np.sqrt(np.mean((x - t) ** 2)) / t)
                rows.append((name, eps, f"ours ({bounds})", f"{r:.4f}", f"{(x.mean() - t) / t:+.4f}",
                             f"{r / r_ref:.2f}"))
    print(f"\ntriangles: relative RMSE over {trials} trials, the same per-edge budget")
    print(_table(rows))


def enron_methods(g, trials: int) -> None:
    t = triangle_count(g)
    rows = [("method (per-node eps 1)", "rel RMSE", "rel bias", "seconds / trial")]
    for name in ("edge-orient-triangles", "edge-orient-triangles-global", "two-round-triangles-dlap",
                 "two-round-triangles-dlap-private", "arr-triangles", "edge-orient-reference"):
        m = get_method(name)
        t0 = time.perf_counter()
        x = m.estimate_trials(g, "triangles", None, 1.0, trials, rng=7)
        sec = (time.perf_counter() - t0) / trials
        rows.append((name, f"{np.sqrt(np.mean((x - t) ** 2)) / t:.4f}", f"{(x.mean() - t) / t:+.4f}", f"{sec:.2f}"))
    print(f"\nEmail-Enron, per-node epsilon 1, {trials} trials ({_load()})")
    print(_table(rows))


def timing(g) -> None:
    from ldpgraph.run import run_in_memory

    t0 = time.perf_counter()
    run = svt_kcore(g, 0.5, rng=1, max_degree=int(g.degrees.max()))
    fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    layer = run_in_memory("kcore-svt", g, 0.5, sampler=1)
    slow = time.perf_counter() - t0
    print(f"\nEmail-Enron, one whole kcore-svt run at eps 0.5: vectorised simulation {fast:.2f} s "
          f"({run.rounds} rounds); protocol layer (per-node streams, all rounds) {slow:.1f} s "
          f"({layer.n_rounds} rounds) ({_load()})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--graphs", nargs="+", default=["facebook", "email-enron"])
    ap.add_argument("--reference", metavar="SRC", help="checkout of the Go reference to build and run")
    ap.add_argument("--skip", nargs="*", default=[], choices=["kcore", "triangles", "enron", "timing"])
    args = ap.parse_args()
    graphs = {name: load_dataset(name) for name in args.graphs}
    print(_load())
    if "kcore" not in args.skip:
        kcore_table(graphs, args.trials)
    if args.reference:
        go_table(graphs, args.trials, args.reference)
    if "triangles" not in args.skip:
        triangle_table(graphs, args.trials)
    if "enron" in graphs or "email-enron" in graphs:
        g = graphs.get("email-enron", graphs.get("enron"))
        if "enron" not in args.skip:
            enron_methods(g, args.trials)
        if "timing" not in args.skip:
            timing(g)


if __name__ == "__main__":
    main()
