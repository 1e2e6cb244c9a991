from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ldpgraph.experiments.seeding import block_rng, cell_key
from ldpgraph.experiments.single import estimate_once
from ldpgraph.graph import Degrees
from ldpgraph.run.method import get_method, method_names

DEG = np.random.default_rng(1).geometric(0.1, size=150).astype(np.int64)


#: each k-star method's standard error from its reports, as a curator has it (or why none)
KSTAR_SE_KINDS = {"unbiased-dlap": "unbiased", "unbiased-laplace": "unbiased", "local-lap-kstars": "exact",
                  "local-dlap-kstars": "exact"}


def test_kstars_every_method_with_report_se_and_analytic_sd():
    run = estimate_once({"toy": Degrees(DEG)}, epsilon=1.0, k=2, seed=8, methods="all")
    assert [e.method for e in run.estimates] == method_names("kstars")
    assert run.truth == sum(math.comb(int(d), 2) for d in DEG)
    assert (run.n_nodes, run.n_edges, run.seed, run.graph) == (150, int(DEG.sum()) // 2, 8, "toy")
    for e in run.estimates:
        m = get_method(e.method)
        var = m.analytic_variance(DEG, "kstars", 2, 1.0)
        assert e.analytic_sd == (None if var is None else pytest.approx(math.sqrt(var)))
        kind = KSTAR_SE_KINDS.get(e.method)
        if kind is None:  # plug-ins and private bounds: no standard error, and the reason
            assert e.std_error is None and e.std_error_kind.startswith("none: ") and len(e.std_error_kind) > 20
        else:
            assert e.std_error_kind == kind and e.std_error > 0
            if kind == "exact":  # a function of the public n, D, epsilon: the variance itself
                assert e.std_error == pytest.approx(math.sqrt(var))
            else:  # from the reports: near the truth's sd at n = 150 (not equal: an estimate)
                assert 0.5 < e.std_error / math.sqrt(var) < 2.0
        # trial 0 of block 0 of the experiment cell's stream
        key = cell_key("kstars", "toy", 2, 1.0, e.method)
        assert e.estimate == m.estimate_trials(DEG, "kstars", 2, 1.0, 1, rng=block_rng(8, key, 0))[0]


def test_same_seed_same_run_and_json():
    a = estimate_once({"toy": Degrees(DEG)}, epsilon=0.5, k=3, seed=2, methods=["naive-dlap", "unbiased-dlap"])
    b = estimate_once({"toy": Degrees(DEG)}, epsilon=0.5, k=3, seed=2, methods=["naive-dlap", "unbiased-dlap"])
    assert a == b
    d = json.loads(json.dumps(a.to_dict()))
    assert d["statistic"] == "kstars" and d["k"] == 3 and d["truth"] == a.truth
    assert [x["method"] for x in d["estimates"]] == ["naive-dlap", "unbiased-dlap"]
    x = d["estimates"][0]
    assert x["error"] == pytest.approx(x["estimate"] - a.truth)
    assert x["relative_error"] == pytest.approx(abs(x["estimate"] - a.truth) / a.truth)


def test_curator_statistic():
    run = estimate_once({"toy": Degrees(DEG)}, epsilon=1.0, statistic="edges", seed=1)
    assert run.k is None and run.truth == DEG.sum() // 2
    assert [e.method for e in run.estimates] == ["unbiased-dlap", "naive-dlap"]
    # each method its own cell and stream (independent noise); linear: both unbiased, with the same exact SE
    assert run.estimates[0].std_error_kind == "exact"  # the noise's variance: a function of n and epsilon
    assert run.estimates[1].std_error == run.estimates[0].std_error  # linear: the same estimate, the same SE


def test_errors():
    with pytest.raises(ValueError, match="epsilon"):
        estimate_once({"toy": Degrees(DEG)}, epsilon=0.0)
    with pytest.raises(ValueError, match="unknown statistic"):
        estimate_once({"toy": Degrees(DEG)}, epsilon=1.0, statistic="wedges")
    with pytest.raises(TypeError, match="needs the graph's adjacency"):  # degrees only
        estimate_once({"toy": Degrees(DEG)}, epsilon=1.0, statistic="triangles")
    with pytest.raises(ValueError, match="one graph"):
        estimate_once({"a": Degrees(DEG), "b": Degrees(DEG)}, epsilon=1.0)
