"""The degree and local k-star protocols of the layer: plans, estimates, and their fast simulators in law.

The ``simulate`` hooks of these protocols (vectorised over trials; the k-star methods are their
presets) must have the law of the layer run
(:func:`~ldpgraph.run.run_in_memory`, what a deployment computes): both are checked against the
exact mean and variance of the estimate (the ``moments`` hooks), with seeded Monte-Carlo
tolerances derived from the variance; the layer's release noise itself is checked against the
discrete Laplace mass function.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpgraph.core import Seeded
from ldpgraph.datasets import resolve_graph
from ldpgraph.graph.statistics import kstar_counts
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols import curator, registry
from ldpgraph.protocols.degrees.degree import kstar_list, parse_statistic
from ldpgraph.protocols.report_histogram import ReportHistogram
from ldpgraph.protocols.statistics import get_statistic
from ldpgraph.run import accumulate_files, node_lists, release_to_file, run_in_memory
from ldpgraph.run.files import read_broadcast, write_broadcast
from ldpgraph.run.method import get_method

SMALL = "ws:n=40,k=6,p=0.3"
KSTAR_METHODS = ["unbiased-dlap", "naive-dlap", "unbiased-laplace", "naive-laplace", "local-lap-kstars",
                 "local-dlap-kstars", "local-lap-kstars-private", "local-dlap-kstars-private"]


@pytest.fixture(scope="module")
def small():
    return resolve_graph(SMALL, rng=3)


# ------------------------------------------------------------------------------ plans


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.7])
def test_every_kstar_method_prints_its_protocols_plan(epsilon):
    """The budget a method prints is its layer protocol's plan: what a node spends."""
    for name in KSTAR_METHODS:
        m = get_method(name)
        proto = m.protocol
        public = {**m.public, **({"d_max": 7} if "d_max" in m.option_names else {})}
        plan = proto.plan(epsilon, **public)
        assert m.budget(epsilon) == plan.budget(), name
        assert math.fsum(plan.budget().values()) == pytest.approx(epsilon, rel=1e-12)
        assert (m.deployed_as is not None) == proto.deployable, name


def test_the_private_bound_spends_a_tenth_on_the_bound():
    plan = registry.get("local-lap-kstars-private").plan(1.0)
    assert plan.budget() == {"degree-bound": 0.1, "kstar-count": 0.9}
    assert [rel.mechanism for r in plan.rounds for rel in r.releases] == ["laplace", "laplace"]
    assert get_method("local-lap-kstars-private").budget(1.0) == plan.budget()
    dlap = registry.get("local-dlap-kstars-private").plan(2.0, shares={"degree": 0.25, "kstar_2": 0.75})
    assert dlap.budget() == {"degree-bound": 0.5, "kstar-count": 1.5}


def test_continuous_laplace_is_not_deployable_and_says_why(small):
    for name in ("unbiased-laplace", "naive-laplace", "local-lap-kstars", "local-lap-kstars-private"):
        proto = registry.get(name)
        assert not proto.deployable and "continuous Laplace" in proto.not_deployable
        assert get_method(name).deployed_as is None and get_method(name).not_deployable == proto.not_deployable
        with pytest.raises(ValueError, match="cannot be run on report rows: continuous Laplace"):
            run_in_memory(name, small, 1.0, sampler=0)


def test_deployable_methods_name_their_protocol():
    assert get_method("unbiased-dlap").deployed_as == ("degree", {})
    assert get_method("naive-dlap").deployed_as == ("degree", {"estimator": "naive"})
    # the bounds a deployment takes from its user (--kstar-counts, --d-max) are not the method's options
    assert get_method("local-dlap-kstars").deployed_as == ("local-dlap-kstars", {})
    assert get_method("local-dlap-kstars").with_options(d_max=9).deployed_as == ("local-dlap-kstars", {"d_max": 9})


@pytest.mark.parametrize(("public", "message"), [
    ({"kstar_counts": (2,)}, "d_max"),
    ({"no_degree": True}, "nothing to release"),
    ({"kstar_counts": "2,2", "d_max": 4}, "must not repeat"),
    ({"shares": {"degree": 1.0}, "kstar_counts": (2,), "d_max": 4}, "shares of degree"),
    ({"estimator": "best"}, "'unbiased' or 'naive'"),
    ({"mu": 0.5}, "no option mu"),
])
def test_degree_plan_refuses(public, message):
    with pytest.raises(ValueError, match=message):
        registry.get("degree").plan(1.0, **public)


def test_statistic_names_and_kstar_lists():
    assert parse_statistic("kstars:4") == ("kstars", 4) and parse_statistic("max_degree") == ("max_degree", None)
    assert kstar_list("3, 2") == (3, 2)
    for bad in ("triangles", "edges:2", "kstars:x", "kstars:0"):
        with pytest.raises(ValueError):
            parse_statistic(bad)
    with pytest.raises(ValueError, match="one local k-star count"):
        registry.get("local-dlap-kstars").plan(1.0, kstar_counts=(2, 3), d_max=5)


# ------------------------------------------------------------------------------ estimates


def _degree_rows(run):
    rows = run.rows[0]
    at = rows["quantity"] == "degree"
    return rows["node"][at], rows["value"][at]


@pytest.mark.parametrize("statistic", ["kstars:3", "edges", "degree_moment:2", "degree_mean", "degree_variance",
                                       "max_degree", "degree_entropy"])
def test_estimates_are_the_curators_of_the_released_degrees(small, statistic):
    run = run_in_memory("degree", small, 1.2, sampler=5, statistic=statistic)
    nodes, y = _degree_rows(run)
    assert np.array_equal(nodes, np.arange(small.n_nodes))
    name, k = parse_statistic(statistic)
    hist = ReportHistogram.from_reports(y, 1.2)
    fn = getattr(curator, "edge_count" if name == "edges" else name)
    want = fn(hist, k) if k is not None else fn(hist)
    assert (run.estimate.value, run.estimate.std_error, run.estimate.statistic) == (
        want.value, want.std_error, want.statistic)


@pytest.mark.parametrize("statistic", ["kstars:2", "edges", "degree_moment:3", "degree_variance", "max_degree"])
def test_naive_estimates_plug_in_the_noisy_degrees(small, statistic):
    run = run_in_memory("degree", small, 0.8, sampler=6, statistic=statistic, estimator="naive")
    _, y = _degree_rows(run)
    name, k = parse_statistic(statistic)
    if name == "kstars":
        want = math.fsum(math.prod((v - j) / (j + 1) for j in range(k)) for v in y.tolist())
    else:
        want = get_statistic(name).naive(y, k)
    assert run.estimate.value == pytest.approx(want, rel=1e-12, abs=1e-9)
    assert run.estimate.std_error is None and "plug-in" in run.estimate.note


def test_the_degree_statistics_simulate_each_estimator(small):
    """The ``simulate`` hook of ``degree`` (the runner's degree statistics): for the degree variance,
    unbiased = naive - (n - 1) Var(eta) / n exactly (the curator's correction of Q(y)/n), Var(eta) =
    2p/(1-p)^2, p = e^-eps: trial by trial on the same draws (the same seed)."""
    proto, d, eps = registry.get("degree"), small.degrees, 0.7
    unbiased = proto.simulate(d, proto.plan(eps), "degree_variance", 40, np.random.default_rng(5))
    naive = proto.simulate(d, proto.plan(eps, estimator="naive"), "degree_variance", 40, np.random.default_rng(5))
    p, n = math.exp(-eps), small.n_nodes
    np.testing.assert_allclose(unbiased, naive - (n - 1) * (2 * p / (1 - p) ** 2) / n, rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match="estimator of degree must be 'unbiased' or 'naive'"):
        proto.plan(eps, estimator="plugin")


def test_simulated_edges_have_the_exact_mean_and_sd(small):
    """Edges: mean |E|, sd sqrt(n Var(eta) / 4) (closed form); 4000 trials, mean within 4 standard errors."""
    proto, d, eps, trials = registry.get("degree"), small.degrees, 0.5, 4000
    p = math.exp(-eps)
    sd = math.sqrt(small.n_nodes * (2 * p / (1 - p) ** 2) / 4)
    plan, naive = proto.plan(eps), proto.plan(eps, estimator="naive")
    assert proto.moments(d, plan, "edges") == pytest.approx((small.n_edges, sd * sd), rel=1e-12)
    assert proto.moments(d, naive, "edges") == pytest.approx((small.n_edges, sd * sd), rel=1e-12)  # unbiased too
    assert proto.moments(d, naive, "degree_moment", 2) == (None, None)  # a biased plug-in
    assert get_method("naive-dlap").analytic_rmse(d, "edges", None, eps) == pytest.approx(sd, rel=1e-12)
    x = proto.simulate(d, plan, "edges", trials, np.random.default_rng(11))
    assert abs(x.mean() - small.n_edges) < 4 * sd / math.sqrt(trials)


def test_kstar_counts_ride_along_the_degree(small):
    run = run_in_memory("degree", small, 2.0, sampler=1, statistic="kstars_from_counts:2", kstar_counts=(2,),
                        d_max=5)
    rows = run.rows[0]
    at = rows["quantity"] == "kstar_2"
    assert set(rows["sensitivity"][at].tolist()) == {5.0}  # C(5, 1)
    assert run.plan.budget() == {"degree": 2.0}
    assert sorted(set(rows["epsilon"].tolist())) == [1.0]
    assert run.estimate.value == float(rows["value"][at].sum())
    assert run.estimate.variance_estimate == small.n_nodes * DiscreteLaplace(epsilon=1.0, sensitivity=5).variance


def test_private_bound_without_noise_is_exact(small):
    """At an epsilon where every DLap draw is 0 (P[noise != 0] < 1e-80 per draw), the broadcast D is the
    true maximum degree and the estimate the exact k-star count."""
    run = run_in_memory("local-dlap-kstars-private", small, 4000.0, sampler=0, kstar_counts=(3,))
    d = small.degrees
    assert run.broadcasts[0].bound == int(d.max())
    assert run.estimate.value == float(kstar_counts(d, 3)) and run.estimate.statistic == "kstars_3"
    low = run_in_memory("local-dlap-kstars", small, 4000.0, sampler=0, kstar_counts=(2,), d_max=3)
    assert low.estimate.value == float(kstar_counts(np.minimum(d, 3), 2))  # projected to the public D


def test_private_bound_broadcast_is_the_noisy_maximum(small, tmp_path):
    run = run_in_memory("local-dlap-kstars-private", small, 1.0, sampler=4)
    _, y = _degree_rows(run)
    bound = run.broadcasts[0]
    assert bound.bound == max(1, int(y.max())) and bound.epsilon == run.plan.release("degree").epsilon
    rows = run.rows[1]
    assert set(rows["sensitivity"].tolist()) == {float(max(math.comb(bound.bound, 1), 1))}
    # round 2 against a broadcast made under another plan: refused
    proto = registry.get("local-dlap-kstars-private")
    path = tmp_path / "b.json"
    write_broadcast(proto, path, bound)
    with pytest.raises(ValueError, match="round-1 epsilon"):
        read_broadcast(proto, path, proto.plan(2.0))
    text = path.read_text().replace(f'"d_max": {bound.bound}', f'"d_max": {bound.bound + 1}')
    path.write_text(text)
    with pytest.raises(ValueError, match="run id does not match"):
        read_broadcast(proto, path, run.plan)


def test_curator_refuses_rows_of_another_plan(small, tmp_path):
    proto = registry.get("degree")
    nodes, lists = node_lists(small)
    rnd = proto.rounds()[0]
    path = tmp_path / "r.csv"
    release_to_file(path, rnd, proto.plan(1.0, kstar_counts=(2,), d_max=6), nodes, lists, None, Seeded(0))
    with pytest.raises(ValueError, match="released at epsilon 0.5, but the plan"):
        accumulate_files([path], rnd, proto.plan(2.0, kstar_counts=(2,), d_max=6))
    with pytest.raises(ValueError, match="kstar_2"):  # rows the plan does not release
        accumulate_files([path], rnd, proto.plan(1.0))
    release_to_file(path, rnd, proto.plan(1.0), nodes, lists, None, Seeded(0))
    with pytest.raises(ValueError, match="the rows release degree, but the plan"):
        accumulate_files([path], rnd, proto.plan(1.0, kstar_counts=(2,), d_max=6, shares={"degree": 0.5,
                                                                                            "kstar_2": 0.5}))


# ------------------------------------------------------------------------------ the fast simulators, in law


def test_layer_release_noise_is_discrete_laplace():
    """The degree rows minus the true degrees, over 20,000 nodes (one stream each), against the DLap
    mass function (tails pooled beyond |x| = 6): a chi-square test at alpha = 1e-3. With the estimate an
    exact function of the rows (the tests above), this is the layer run's law; the moment tests below
    check the whole chain end to end."""
    g = resolve_graph("ws:n=20000,k=4,p=0.5", rng=0)
    run = run_in_memory("degree", g, 0.7, sampler=12)
    nodes, y = _degree_rows(run)
    noise = y - g.degrees[nodes]
    mech = DiscreteLaplace(epsilon=0.7)
    edges = np.arange(-6, 7)
    observed = np.array([np.count_nonzero(noise < -6), *[np.count_nonzero(noise == x) for x in edges],
                         np.count_nonzero(noise > 6)])
    pmf = mech.pmf(edges)
    tail = (1.0 - math.fsum(pmf.tolist())) / 2
    expected = noise.size * np.array([tail, *pmf.tolist(), tail])
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def _moments_ok(sample, mean, var, z=4.5):
    """|sample mean - mean| and |sample variance - var| within z standard errors (the latter's from the
    sample's fourth central moment)."""
    n = sample.size
    assert abs(sample.mean() - mean) <= z * math.sqrt(var / n), (sample.mean(), mean, var)
    m4 = float(np.mean((sample - sample.mean()) ** 4))
    se_var = math.sqrt(max(m4 - var * var * (n - 3) / (n - 1), 0.0) / n)
    assert abs(sample.var(ddof=1) - var) <= z * se_var, (sample.var(ddof=1), var, se_var)


@pytest.mark.parametrize(("method", "public", "epsilon", "k"), [
    ("unbiased-dlap", {}, 1.0, 2),
    ("naive-dlap", {"estimator": "naive"}, 0.5, 3),
    ("local-dlap-kstars", {"d_max": 6}, 1.5, 2),
])
def test_fast_simulator_has_the_law_of_the_layer_run(small, method, public, epsilon, k):
    """Both the vectorised simulation and 300 seeded layer runs have the exact mean and variance."""
    fast = get_method(method).with_options(**{o: v for o, v in public.items() if o == "d_max"})
    d = small.degrees
    mean, var = fast.analytic_mean(d, "kstars", k, epsilon), fast.analytic_variance(d, "kstars", k, epsilon)
    simulated = fast.estimate_trials(d, "kstars", k, epsilon, 3000, rng=7)
    _moments_ok(simulated, mean, var)
    proto = fast.protocol.name
    statistic = f"kstars:{k}"
    if proto == "local-dlap-kstars":
        public, statistic = {**public, "kstar_counts": (k,)}, "kstars"
    layer = np.array([run_in_memory(proto, small, epsilon, sampler=Seeded(s), statistic=statistic,
                                    **public).estimate.value for s in range(300)])
    _moments_ok(layer, mean, var)


def test_private_bound_simulator_has_the_law_of_the_layer_run(small):
    """No closed form: 4,000 vectorised trials and 300 seeded layer runs agree in mean and variance
    (two-sample tolerances from the samples' variances and fourth moments)."""
    eps, k = 1.0, 2
    fast = get_method("local-dlap-kstars-private").estimate_trials(small.degrees, "kstars", k, eps, 4000, rng=3)
    layer = np.array([run_in_memory("local-dlap-kstars-private", small, eps, sampler=Seeded(s),
                                    kstar_counts=(k,)).estimate.value for s in range(300)])
    se_mean = math.sqrt(fast.var(ddof=1) / fast.size + layer.var(ddof=1) / layer.size)
    assert abs(fast.mean() - layer.mean()) <= 4.5 * se_mean

    def var_se(x):
        m4 = float(np.mean((x - x.mean()) ** 4))
        v = x.var(ddof=1)
        return math.sqrt(max(m4 - v * v * (x.size - 3) / (x.size - 1), 0.0) / x.size)

    assert abs(fast.var(ddof=1) - layer.var(ddof=1)) <= 4.5 * math.hypot(var_se(fast), var_se(layer))
