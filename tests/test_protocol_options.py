"""Public protocol options in simulation: the same names, values and plans as ``node`` / ``curate``.

A simulated configuration (``estimate``/``experiment`` with ``--d-max 8``, ``options={"d_max": 8}``)
is the deployed one: the same budget split release by release, the same law (exact moments of the
fast simulator against runs of the deployed protocol), the same bits for the LayerSimulation
wrapper (it *is* the deployed code); and nothing changes when no option is given.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.core.sampling import Seeded
from ldpgraph.experiments import run_experiment
from ldpgraph.experiments.options import configure_methods, option_takers
from ldpgraph.experiments.runner import resolve_methods
from ldpgraph.experiments.single import estimate_once
from ldpgraph.graph import from_edge_array
from ldpgraph.protocols import registry as layer
from ldpgraph.protocols.triangles.two_round import max_lower_degree
from ldpgraph.run.memory import run_in_memory
from ldpgraph.run.method import get_method


def _edges() -> np.ndarray:
    e = np.random.default_rng(1).integers(0, 14, size=(40, 2))
    return e[e[:, 0] != e[:, 1]]


@pytest.fixture(scope="module")
def graph():
    g = from_edge_array(_edges())
    assert (g.n_nodes, g.n_edges, max_lower_degree(g), int(g.degrees.max())) == (14, 32, 5, 7)
    return g


def _parse_deployed(options: dict) -> dict:
    """``deployed_as`` options (shares as the CLI's ``Q=F,...``) as the layer's plan takes them."""
    out = dict(options)
    if isinstance(out.get("shares"), str):
        out["shares"] = {q: float(f) for q, f in (t.split("=") for t in out["shares"].split(","))}
    return out


def _release_epsilons(plan) -> list[float]:
    return sorted(r.epsilon for rp in plan.rounds for r in rp.releases)


CONFIGS = [
    # (method, options, what the plan also needs, expected split at epsilon 2 by hand)
    ("two-round-triangles-dlap", {"d_max": 8}, {}, [1.0, 1.0]),
    ("two-round-triangles-dlap", {"shares": {"rr": 0.3, "local_count": 0.7}}, {"d_max": 5}, [0.6, 1.4]),
    ("two-round-triangles-dlap-private", {"shares": {"lower_degree": 0.2, "rr": 0.3, "local_count": 0.5}}, {},
     [0.4, 0.6, 1.0]),
    ("arr-triangles", {"mu": 0.5, "beta": 0.01}, {}, [0.2, 0.9, 0.9]),
    ("arr-triangles", {"clipping": False, "shares": {"arr": 0.3, "local_count": 0.7}}, {"d_max": 9}, [0.6, 1.4]),
    ("avg-clustering-dlap", {"shares": {"rr": 0.2, "degree": 0.5, "local_count": 0.3}}, {"d_max": 9},
     [0.4, 0.6, 1.0]),
    ("avg-clustering-dlap-private", {"shares": {"degree_bound": 0.2, "rr": 0.2, "degree": 0.4, "local_count": 0.2}},
     {}, [0.4, 0.4, 0.4, 0.8]),
    ("two-round-four-cycles-dlap", {"d_max": 5, "shares": {"rr": 0.6, "local_count": 0.4}}, {}, [0.8, 1.2]),
    ("kcore-hindex", {"h_share": 0.7, "readout_power": 2.0, "pool_c": 1.0}, {}, [0.6, 1.4]),
    ("edge-orient-triangles", {"margin": 2.0, "shares": {"order": 0.1, "bound": 0.2, "rr": 0.3, "count": 0.4}}, {},
     [0.2, 0.4, 0.6, 0.8]),
    ("wshuffle-triangles-ignore", {"degree_share": 0.2, "threshold": 0.5, "delta": 1e-6}, {"n_users": 14},
     [0.4, 1.6]),
    ("wshuffle-four-cycles", {"accounting": "closed-form", "delta": 1e-6}, {"n_users": 14}, [2.0]),
]


@pytest.mark.parametrize(("name", "options", "extra", "split"), CONFIGS)
def test_configured_simulation_spends_the_deployed_plan(name, options, extra, split):
    orig = get_method(name)
    sim = orig.with_options(**options)
    assert sim is not orig and sim.name == name
    assert orig.deployed_as == get_method(name).deployed_as  # a configured copy: the original is untouched
    budget = sorted(sim.budget(2.0).values())
    assert budget == pytest.approx(split, rel=1e-12)
    # the deployment it names (``ldpgraph methods``: --protocol NAME --flags) has that plan
    dep, opts = sim.deployed_as
    plan = layer.get(dep).plan(2.0, **{**extra, **_parse_deployed(opts)})
    assert _release_epsilons(plan) == pytest.approx(split, rel=1e-12)
    for key, value in options.items():
        assert _parse_deployed(opts)[key] == value


def _dlap_variance(alpha: float) -> float:
    return 2 * alpha / (1 - alpha) ** 2


def test_two_round_d_max_is_the_noise_scale(graph):
    """Above the true bound (nothing projected) only round 2's DLap scale changes: its variance
    n Var DLap(e^{-eps2/(D-1)}) / (p - q)^2 moves by exactly the difference between D = 8 and D = 5."""
    sim = get_method("two-round-triangles-dlap")
    eps = 2.0
    e1 = e2 = eps / 2
    p, q = math.exp(e1) / (1 + math.exp(e1)), 1 / (1 + math.exp(e1))
    v5 = sim.analytic_variance(graph, "triangles", None, eps)
    v8 = sim.with_options(d_max=8).analytic_variance(graph, "triangles", None, eps)
    noise = graph.n_nodes * (_dlap_variance(math.exp(-e2 / 7)) - _dlap_variance(math.exp(-e2 / 4))) / (p - q) ** 2
    assert v8 - v5 == pytest.approx(noise, rel=1e-9)
    assert sim.with_options(d_max=5).analytic_variance(graph, "triangles", None, eps) == pytest.approx(v5, rel=1e-12)


def test_two_round_d_max_equals_the_deployed_protocol_in_law(graph):
    """D = 2 projects most lower lists: the configured simulator's exact mean and variance are the
    deployed protocol's (run_in_memory with d_max=2, 300 seeds); the default's mean (17) is not."""
    eps = 2.0
    sim = get_method("two-round-triangles-dlap").with_options(d_max=2)
    mean = sim.analytic_mean(graph, "triangles", None, eps)
    var = sim.analytic_variance(graph, "triangles", None, eps)
    proto = layer.get("two-round-triangles-dlap")
    n = 300
    xs = np.array([run_in_memory(proto, graph, eps, sampler=Seeded(s), d_max=2).estimate.value
                   for s in range(n)])
    se = math.sqrt(var / n)
    assert abs(xs.mean() - mean) < 4 * se
    assert abs(17.0 - mean) > 12 * se  # the check sees a d_max left out (truth 17: no projection)
    # sample variance: relative SE about sqrt(2 / (n - 1)) for a near-normal sum
    assert abs(xs.var(ddof=1) / var - 1) < 4 * math.sqrt(2 / (n - 1))


def test_method_options_are_the_deployed_plan(graph):
    """A method's options are its deployed protocol's: the plan its simulation reads is the one
    ``node``/``curate`` run with the same flags, and options= equals the method configured with them."""
    proto = layer.get("two-round-triangles-dlap")
    sim = get_method("two-round-triangles-dlap").with_options(d_max=8)
    assert sim.public == {"d_max": 8} and sim.deployed_as == ("two-round-triangles-dlap", {"d_max": 8})
    assert sim.plan(1.0, graph) == proto.plan(1.0, d_max=8)
    assert sim.budget(1.0) == proto.plan(1.0, d_max=8).release_budget()
    a = estimate_once({"g": graph}, epsilon=1.0, statistic="triangles", methods=["two-round-triangles-dlap"],
                      seed=4, options={"d_max": 8})
    b = estimate_once({"g": graph}, epsilon=1.0, statistic="triangles", methods=[sim], seed=4)
    assert a.estimates == b.estimates and a.options == {"d_max": 8} and b.options == {}
    c = estimate_once({"g": graph}, epsilon=1.0, statistic="triangles", methods=["two-round-triangles-dlap"],
                      seed=4, options={"d_max": 3})
    assert c.estimates != a.estimates


def test_no_option_changes_nothing(graph):
    kw = dict(epsilon=1.0, statistic="triangles", methods=["two-round-triangles-dlap", "rr-triangles"], seed=2)
    plain = estimate_once({"g": graph}, **kw)
    assert estimate_once({"g": graph}, options={}, **kw) == plain
    assert estimate_once({"g": graph}, options={"mu": None}, **kw) == plain
    assert "options" not in plain.to_dict()
    res = run_experiment({"g": graph}, epsilons=[1.0], methods=["rr-triangles"], statistics=["triangles"],
                         n_trials=2, seed=1, n_jobs=1, quiet=True)
    assert "options" not in res.config


def test_options_apply_to_the_methods_that_take_them(graph):
    ms = configure_methods(resolve_methods(["two-round-triangles-dlap", "rr-triangles"]), {"d_max": 8})
    assert ms[0].public["d_max"] == 8 and ms[1].name == "rr-triangles" and "d_max" not in ms[1].public
    run = estimate_once({"g": graph}, epsilon=1.0, statistic="triangles",
                        methods=["two-round-triangles-dlap", "rr-triangles"], seed=2, options={"d_max": 8})
    plain = estimate_once({"g": graph}, epsilon=1.0, statistic="triangles",
                          methods=["two-round-triangles-dlap", "rr-triangles"], seed=2)
    assert run.estimates[1] == plain.estimates[1]  # rr-triangles: the same draws
    assert run.estimates[0] != plain.estimates[0]
    assert run.to_dict()["options"] == {"d_max": 8}


@pytest.mark.parametrize(("methods", "options", "message"), [
    (["rr-triangles"], {"dmax": 8}, "unknown option 'dmax'; the protocols' options are"),
    (["rr-triangles"], {"mu": 0.5}, "option --mu is taken by none of the simulations of rr-triangles "
                                    "(the methods that take it: arr-triangles)"),
    (["arr-triangles"], {"d_max": 8}, "arr-triangles: with clipping every node's bound D_v comes from round 1; "
                                      "a public d_max (8) goes with --no-clipping"),
    (["two-round-triangles-laplace"], {"mu": 0.5}, "none of the simulations of two-round-triangles-laplace"),
    (["two-round-triangles-dlap"], {"d_max": "8"}, "option d_max (--d-max) takes an int, got '8'"),
    (["arr-triangles"], {"clipping": 1}, "option clipping (--clipping) takes a bool, got 1"),
    (["two-round-triangles-dlap"], {"clipping": True}, "option --clipping is taken by none"),
    (["two-round-triangles-dlap"], {"shares": {"arr": 0.5, "local_count": 0.5}},
     "shares of two-round-triangles-dlap: rr=F, local_count=F"),
    (["two-round-triangles-dlap"], {"shares": {"rr": 0.6, "local_count": 0.6}}, "sum to 1"),
    (["two-round-triangles-dlap-private"], {"d_max": 8}, "option --d-max is taken by none of the simulations of two-round-triangles-dlap-private"),
    (["kcore-hindex"], {"h_share": 1.5}, "h_share must be in (0, 1)"),
    (["two-round-triangles-dlap"], {"private_bound": True}, "(the private bound is a method of its own: "
                                                            "two-round-triangles-dlap-private)"),
])
def test_refusals(graph, methods, options, message):
    with pytest.raises(ValueError) as info:
        estimate_once({"g": graph}, epsilon=1.0, statistic="core_numbers" if methods == ["kcore-hindex"] else
                      "triangles", methods=methods, seed=1, options=options)
    assert message in str(info.value)


def test_the_refusal_names_every_method_that_takes_the_option(graph):
    with pytest.raises(ValueError) as info:
        estimate_once({"g": graph}, epsilon=1.0, statistic="triangles", methods=["rr-triangles"], seed=1,
                      options={"d_max": 8})
    who = str(info.value).split("the methods that take it: ")[1].rstrip(")").split(", ")
    assert who == option_takers("d_max")
    # each one's simulation takes it; not avg-clustering-dlap-private, whose private bound draws D
    assert all(get_method(m).with_options(d_max=8).public["d_max"] == 8 for m in who if m != "arr-triangles")
    assert get_method("arr-triangles").with_options(clipping=False, d_max=8).public["d_max"] == 8
    assert "avg-clustering-dlap-private" not in who and "two-round-triangles-dlap-private" not in who
    assert {"two-round-triangles-dlap", "avg-clustering-dlap", "two-round-four-cycles-dlap"} <= set(who)


def test_a_simulation_refuses_what_it_does_not_take():
    with pytest.raises(ValueError, match=r"rr-triangles's simulation does not take --mu, --d-max \(it takes no"):
        get_method("rr-triangles").with_options(mu=0.5, d_max=3)
    with pytest.raises(ValueError, match="a public d_max .3. goes with --no-clipping"):
        get_method("arr-triangles").with_options(d_max=3)
    with pytest.raises(ValueError, match="two-round-triangles-dlap's simulation does not take --mu"):
        get_method("two-round-triangles-dlap").with_options(mu=0.5)


@pytest.fixture()
def edge_file(tmp_path):
    path = tmp_path / "g.txt"
    e = _edges()
    e = e[e[:, 0] < e[:, 1]]  # one direction, no note on stderr
    np.savetxt(path, np.unique(e, axis=0), fmt="%d")
    return str(path)


def test_cli_estimate_and_experiment_take_the_flags(capsys, tmp_path, edge_file):
    base = ["estimate", edge_file, "--stat", "triangles", "--methods", "two-round-triangles-dlap", "-e", "1",
            "--seed", "3"]
    assert main([*base, "--d-max", "8", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["options"] == {"d_max": 8}
    assert main([*base, "--d-max", "8"]) == 0
    assert "options    --d-max 8\n" in capsys.readouterr().out
    assert main([*base, "--mu", "0.5"]) == 1
    assert "option --mu is taken by none of the simulations" in capsys.readouterr().err
    assert main([*base, "--shares", "rr=0.25,local_count=0.75", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["options"] == {"shares": {"rr": 0.25, "local_count": 0.75}}
    out = tmp_path / "exp"
    assert main(["experiment", edge_file, "--stat", "triangles", "--methods", "two-round-triangles-dlap",
                 "--epsilons", "1", "--trials", "3", "--jobs", "1", "--seed", "1", "--no-plots", "--d-max", "8",
                 "--out", str(out)]) == 0
    assert "options --d-max 8\n" in capsys.readouterr().out
    cfg = json.loads((out / "experiment.json").read_text())
    assert cfg["options"] == {"d_max": 8}


@pytest.mark.parametrize("command", ["estimate", "experiment", "node", "curate"])
def test_help_lists_the_same_flags(capsys, command):
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for flag in ("--d-max", "--shares", "--mu", "--projection", "--h-share", "--margin", "--clipping, --no-clipping"):
        assert flag in text


@pytest.mark.parametrize("options", [{"d_max": 3, "projection": True}, {"d_max": 9}, {"projection": True},
                                     {"d_max": 9, "shares": {"rr": 0.2, "degree": 0.5, "local_count": 0.3}}])
def test_clustering_options_are_the_deployed_release(graph, monkeypatch, options):
    """The configured simulation draws its releases with the deployed plan's D, projection,
    sensitivity and epsilons (release_clustering_reports is the deployed node release in law:
    tests/protocols/test_clustering.py); its exact variance is that of the plan's D (none with projection)."""
    import ldpgraph.protocols.clustering.avg_clustering as cm
    from ldpgraph.protocols.clustering.kernels import average_clustering_variance

    seen = []
    real = cm.release_clustering_reports

    def spy(*args, **kw):
        rel = real(*args, **kw)
        seen.append(rel)
        return rel

    monkeypatch.setattr(cm, "release_clustering_reports", spy)
    sim = get_method("avg-clustering-dlap").with_options(**options)
    sim.estimate_trials(graph, "avg_clustering", None, 2.0, 1, rng=0)
    dep, opts = sim.deployed_as
    run = run_in_memory(layer.get(dep), graph, 2.0, sampler=0, **_parse_deployed(opts))
    plan = run.plan
    (rel,) = seen
    assert (rel.d_max, rel.projection) == (plan.public["d_max"], plan.public["projection"])
    assert rel.sensitivity == plan.release("local_count").sensitivity_of("local_count")
    assert (rel.budget.rr, rel.budget.degree, rel.budget.triangles) == pytest.approx(
        (plan.release("rr_count").epsilon, plan.release("degree").epsilon, plan.release("local_count").epsilon),
        rel=1e-12)
    var = sim.analytic_variance(graph, "avg_clustering", None, 2.0)
    if plan.public["projection"]:
        assert var is None  # the projection's sampling variance has no closed form
    else:
        assert var == pytest.approx(average_clustering_variance(
            graph, epsilon_rr=rel.budget.rr, epsilon_degree=rel.budget.degree, epsilon_triangles=rel.budget.triangles,
            d_max=plan.public["d_max"]), rel=1e-12)


def test_clustering_without_projection_refuses_a_node_above_d_max(graph):
    sim = get_method("avg-clustering-dlap").with_options(d_max=4)
    with pytest.raises(ValueError, match=r"degree 7 > d_max = 4 and no projection"):
        sim.estimate_trials(graph, "avg_clustering", None, 2.0, 1, rng=0)
    with pytest.raises(ValueError, match="d_max = 4 and the broadcast allows no projection"):
        run_in_memory(layer.get("avg-clustering"), graph, 2.0, sampler=0, d_max=4, projection=False)


def test_wedge_shuffle_options_are_the_plan_its_simulation_reads(graph):
    """The wedge-shuffle methods simulate from the deployed protocol's own plan (its fast simulation
    and exact moments read it): configured, that plan is the deployment's."""
    sim = get_method("wshuffle-triangles-ignore").with_options(degree_share=0.2, threshold=0.5, delta=1e-6)
    dep, opts = sim.deployed_as
    want = layer.get(dep).plan(2.0, n_users=graph.n_nodes, **opts)
    assert sim.plan(2.0, graph) == want
    assert want.public["threshold"] == 0.5 and want.public["central_delta"] == 1e-6
    plain = get_method("wshuffle-triangles-ignore")
    assert sim.analytic_variance(graph, "triangles", None, 2.0) != plain.analytic_variance(graph, "triangles", None,
                                                                                         2.0)
    with pytest.raises(ValueError, match="does not take --pairing-seed"):
        get_method("wshuffle-triangles").with_options(pairing_seed=3)
    with pytest.raises(ValueError, match="accounting must be one of"):
        get_method("wshuffle-triangles").with_options(accounting="bogus")
