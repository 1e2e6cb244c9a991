"""The runner's per-trial path for adjacency protocols (triangles, transitivity)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from ldpgraph.experiments import run_experiment
from ldpgraph.experiments.runner import parse_statistics
from ldpgraph.graph import Degrees, from_networkx, transitivity, triangle_count
from ldpgraph.run.method import get_method

G = from_networkx(nx.gnp_random_graph(50, 0.3, seed=2))
METHODS = ["rr-triangles", "two-round-triangles-dlap", "unbiased-dlap"]


def _run(**kw):
    base = dict(
        epsilons=[1.0, 3.0],
        methods=METHODS,
        statistics=["triangles", "transitivity", "kstars"],
        n_trials=6,
        seed=4,
        block_size=4,
        quiet=True,
    )
    base.update(kw)
    return run_experiment({"g": G}, **base)


def test_cells_truths_analytic_and_costs():
    res = _run()
    cells = {(c.method, c.statistic, c.epsilon): c for c in res.records}
    assert ("rr-triangles", "kstars", 1.0) not in cells  # methods run only the statistics they estimate
    assert ("unbiased-dlap", "triangles", 1.0) not in cells
    c = cells[("rr-triangles", "triangles", 3.0)]
    assert c.truth == triangle_count(G) and c.n_trials == 6
    assert cells[("two-round-triangles-dlap", "transitivity", 1.0)].truth == pytest.approx(transitivity(G))
    p = get_method("two-round-triangles-dlap")
    key = ("g", "two-round-triangles-dlap", "triangles", None, 1.0)
    assert res.analytic_rmse[key] == pytest.approx(p.analytic_rmse(G, "triangles", None, 1.0))
    costs = res.config["cell_costs"]
    assert len(costs) == 8
    row = next(x for x in costs if x["method"] == "rr-triangles" and x["statistic"] == "triangles")
    assert row["upload_bits_per_node"] == (G.n_nodes - 1) / 2 and row["download_bits_per_node"] == 0
    assert row["seconds_per_trial"] > 0 and row["budget"] == {"rr": row["epsilon"]}


def test_records_do_not_depend_on_jobs_and_follow_the_block_streams():
    a = _run()
    b = _run(n_jobs=2, backend="threading")
    assert a.records == b.records
    # block 0 of a cell is the cell's stream: the protocol's own estimates, trial after trial
    from ldpgraph.experiments.seeding import block_rng, cell_key

    gen = block_rng(a.seed, cell_key("triangles", "g", None, 1.0, "rr-triangles"), 0)
    p = get_method("rr-triangles")
    want = [p.estimate_trials(G, "triangles", None, 1.0, 1, rng=gen)[0] for _ in range(4)]
    got = next(
        c for c in a.records if c.method == "rr-triangles" and c.statistic == "triangles" and c.epsilon == 1.0
    )
    assert np.array_equal(got.estimates[:4], want)


def test_degrees_only_and_missing_methods_are_clear_errors():
    with pytest.raises(TypeError, match="needs the graph's adjacency"):
        run_experiment(
            {"d": Degrees(G.degrees)},
            epsilons=[1.0],
            methods=["rr-triangles"],
            statistics=["triangles"],
            n_trials=1,
            seed=0,
            quiet=True,
        )
    with pytest.raises(ValueError, match="estimated by .*rr-triangles"):
        run_experiment(
            {"g": G},
            epsilons=[1.0],
            methods=["unbiased-dlap"],
            statistics=["triangles"],
            n_trials=1,
            seed=0,
            quiet=True,
        )
    assert parse_statistics(["triangles", "transitivity"], ks=[2]) == [
        ("triangles", None),
        ("transitivity", None),
    ]
    with pytest.raises(ValueError, match="takes no parameter"):
        parse_statistics(["triangles:2"], ks=[2])


def test_write_costs(tmp_path):
    paths = _run(n_trials=2, block_size=2).write(tmp_path, plots=False)
    text = paths["costs"].read_text().splitlines()
    assert text[0].startswith("graph,method,statistic,k,epsilon,upload_bits_per_node")
    assert len(text) == 1 + 8
