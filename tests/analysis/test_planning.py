"""Accuracy planner: analytic variances (exact enumeration), worst cases under a degree bound
(brute force over all bounded sequences), epsilon for a target, budget split vs a grid."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dlap_exact import exact_expectation_nd

from ldpgraph.analysis.planning import (
    DegreeModel,
    _objective_function,
    epsilon_for_rmse,
    estimator_variance,
    relative_rmse,
    split_budget,
    true_value,
)
from ldpgraph.estimators import binomial_variance, power_variance
from ldpgraph.graph import kstar_counts as exact_kstars
from ldpgraph.protocols import NodeReports, ReleasedValues, curator


def _rep(row, eps):
    return NodeReports(released={"degree": ReleasedValues("degree", np.asarray(row), eps, 1.0)})


@pytest.mark.parametrize(
    ("statistic", "stat"),
    [
        ("kstars_2", lambda r: curator.kstars(r, 2).value),
        ("edges", lambda r: curator.edge_count(r).value),
        ("degree_moment_2", lambda r: curator.degree_moment(r, 2).value),
        ("degree_variance", lambda r: curator.degree_variance(r).value),
        ("degree_mean", lambda r: curator.degree_mean(r).value),
    ],
)
def test_variances_equal_exact_enumeration(statistic, stat):
    """E[g^2] - E[g]^2 of the curator's estimate, summed over the DLap law of two nodes."""
    eps, x = 2.5, np.array([2, 6])

    def moments(z):
        flat = z.reshape(-1, z.shape[-1])
        return np.array([stat(_rep(row, eps)) for row in flat]).reshape(z.shape[:-1])

    mean = exact_expectation_nd(moments, x, eps)
    second = exact_expectation_nd(lambda z: moments(z) ** 2, x, eps)
    model = DegreeModel.from_degrees(x)
    assert mean == pytest.approx(true_value(statistic, model), rel=1e-9)
    assert estimator_variance(statistic, model, eps) == pytest.approx(second - mean**2, rel=1e-7)


def test_kstars_from_counts_variance_and_truth():
    model = DegreeModel.from_degrees([1, 3, 10], d_max=4)
    eps = 0.8
    sens = math.comb(4, 1)
    p = math.exp(-eps / sens)
    assert estimator_variance("kstars_2_from_counts", model, eps) == pytest.approx(3 * 2 * p / (1 - p) ** 2)
    assert true_value("kstars_2_from_counts", model) == 0 + 3 + 6
    with pytest.raises(ValueError, match="d_max"):
        estimator_variance("kstars_2_from_counts", DegreeModel.from_degrees([1, 3]), eps)


def test_distribution_model_equals_the_sequence_it_describes():
    seq = DegreeModel.from_degrees([1, 1, 4, 4, 4, 9] * 10)
    dist = DegreeModel.from_distribution(60, {1: 2, 4: 3, 9: 1})
    arr = DegreeModel.from_distribution(60, np.bincount([1, 1, 4, 4, 4, 9]))
    for s in ("kstars_3", "edges", "degree_variance", "degree_moment_3"):
        for m in (dist, arr):
            assert estimator_variance(s, m, 0.7) == pytest.approx(estimator_variance(s, seq, 0.7), rel=1e-12)
            assert true_value(s, m) == pytest.approx(true_value(s, seq), rel=1e-12)
    assert true_value("kstars_2", seq) == exact_kstars(np.array([1, 1, 4, 4, 4, 9] * 10), 2)


@pytest.mark.parametrize("statistic", ["kstars_2", "kstars_3", "degree_moment_2", "degree_variance", "edges"])
def test_bounded_model_is_the_worst_case_over_all_bounded_sequences(statistic):
    n, d_max, eps = 3, 5, 0.9
    bound = estimator_variance(statistic, DegreeModel.bounded(n, d_max), eps)
    worst = max(
        estimator_variance(statistic, DegreeModel.from_degrees(seq), eps)
        for seq in itertools.product(range(d_max + 1), repeat=n)
    )
    assert bound == pytest.approx(worst, rel=1e-12)  # attained, so also the least bound


def test_per_node_sums_use_the_estimators_variances():
    d = np.array([0, 2, 2, 7, 30])
    m = DegreeModel.from_degrees(d)
    assert estimator_variance("kstars_4", m, 1.1) == pytest.approx(binomial_variance(d, 4, 1.1).sum(), rel=1e-13)
    assert estimator_variance("degree_moment_3", m, 1.1) == pytest.approx(power_variance(d, 3, 1.1).sum(), rel=1e-13)


@pytest.mark.parametrize("statistic", ["edges", "kstars_2", "kstars_3", "degree_variance", "degree_mean"])
@pytest.mark.parametrize("target", [0.1, 0.01, 0.001])
def test_epsilon_for_a_relative_target(statistic, target):
    rng = np.random.default_rng(0)
    model = DegreeModel.from_degrees(np.minimum(np.floor(3 * (rng.pareto(2.2, 4000) + 1)), 500).astype(int))
    eps = epsilon_for_rmse(statistic, model, relative_rmse=target)
    assert relative_rmse(statistic, model, eps) == pytest.approx(target, rel=1e-9)
    assert relative_rmse(statistic, model, eps * 0.999) > target  # smallest such epsilon


def test_epsilon_for_an_absolute_target_with_only_a_bound():
    model = DegreeModel.bounded(10_000, 200)
    eps = epsilon_for_rmse("kstars_2", model, rmse=5e4)
    assert math.sqrt(estimator_variance("kstars_2", model, eps)) == pytest.approx(5e4, rel=1e-9)
    # any graph within the bound then has RMSE <= target
    d = np.random.default_rng(1).integers(0, 201, size=10_000)
    assert math.sqrt(estimator_variance("kstars_2", DegreeModel.from_degrees(d), eps)) <= 5e4


def _grid_best_2(names, model, eps, weights=None):
    """Brute force: a 400-point grid of shares, then a 400-point grid around its best cell."""
    f = _objective_function(names, model, eps, weights)
    s = np.linspace(0, 1, 401)[1:-1]
    for _ in range(2):
        vals = [f({names[0]: a, names[1]: 1 - a}) for a in s]
        i = int(np.argmin(vals))
        step = s[1] - s[0]
        best = s[i], vals[i]
        s = np.linspace(max(s[i] - step, 1e-9), min(s[i] + step, 1 - 1e-9), 401)
    return best


@pytest.mark.parametrize("eps", [0.2, 1.0, 4.0])
@pytest.mark.parametrize(
    ("names", "weights"),
    [(["edges", "kstars_2"], None), (["kstars_2", "kstars_3"], [1.0, 5.0]), (["degree_variance", "edges"], [3, 1])],
)
def test_split_budget_matches_a_brute_force_grid(names, weights, eps):
    model = DegreeModel.from_degrees(np.random.default_rng(2).geometric(0.08, size=2000))
    shares = split_budget(names, model, eps, weights)
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-12)
    best_s, best_v = _grid_best_2(names, model, eps, weights)
    got = _objective_function(names, model, eps, weights)(shares)
    assert got <= best_v * (1 + 1e-9)
    assert shares[names[0]] == pytest.approx(best_s, abs=1e-4)


def test_split_budget_three_statistics_vs_simplex_grid():
    model = DegreeModel.from_degrees(np.random.default_rng(3).geometric(0.1, size=1000))
    names = ["edges", "kstars_2", "degree_variance"]
    eps = 1.5
    shares = split_budget(names, model, eps)
    f = _objective_function(names, model, eps)
    got = f(shares)
    grid = np.linspace(0, 1, 81)[1:-1]
    best = min(
        f({"edges": a, "kstars_2": b, "degree_variance": 1 - a - b})
        for a in grid for b in grid if a + b < 1 - 1e-9
    )  # fmt: skip
    assert got <= best * (1 + 1e-9)


def test_closed_form_in_the_small_epsilon_regime():
    """R_i = a_i v(eps_i) with v ~ 2/eps^2: shares proportional to (w_i a_i)^(1/3).
    edges and mean have equal relative variances 1/(n dbar^2) v(eps), so weights 1 and 8
    give shares 1/3, 2/3."""
    model = DegreeModel.from_degrees([4, 9, 2] * 100)
    shares = split_budget(["edges", "degree_mean"], model, 1e-3, weights=[1.0, 8.0])
    assert shares["edges"] == pytest.approx(1 / 3, abs=1e-6)


def test_planner_errors():
    m = DegreeModel.from_degrees([1, 2])
    with pytest.raises(ValueError, match="unknown statistic 'triangles'"):
        estimator_variance("triangles", m, 1.0)
    with pytest.raises(ValueError, match="k must be >= 1"):
        estimator_variance("kstars_0", m, 1.0)
    with pytest.raises(TypeError, match="statistic must be a string"):
        estimator_variance(2, m, 1.0)
    with pytest.raises(ValueError, match="exactly one"):
        epsilon_for_rmse("edges", m)
    with pytest.raises(ValueError, match="exactly one"):
        epsilon_for_rmse("edges", m, rmse=1.0, relative_rmse=0.1)
    with pytest.raises(ValueError, match="degree bound does not give"):
        epsilon_for_rmse("edges", DegreeModel.bounded(10, 3), relative_rmse=0.1)
    with pytest.raises(ValueError, match="relative_rmse must be finite and > 0"):
        epsilon_for_rmse("edges", m, relative_rmse=-1)
    with pytest.raises(ValueError, match="is 0 under the model"):
        relative_rmse("kstars_3", m, 1.0)
    with pytest.raises(ValueError, match="distinct"):
        split_budget(["edges", "edges"], m, 1.0)
    with pytest.raises(ValueError, match="one entry per statistic"):
        split_budget(["edges", "kstars_2"], m, 1.0, weights=[1.0])
    with pytest.raises(ValueError, match="distribution must be"):
        DegreeModel.from_distribution(10, [-1.0, 2.0])
    with pytest.raises(ValueError, match="at least one node"):
        DegreeModel.from_degrees([])
    assert split_budget(["kstars_2"], m, 1.0) == {"kstars_2": 1.0}


@pytest.mark.parametrize("statistic", ["kstars_2", "kstars_4", "degree_moment_3", "degree_variance", "edges",
                                       "kstars_3_from_counts"])  # fmt: skip
@pytest.mark.parametrize("degrees", [[0, 0, 1, 2], [5, 40, 300, 7, 7], [1000, 3]])
def test_fast_variance_polynomial_equals_exact_evaluation(statistic, degrees):
    from ldpgraph.analysis.planning import _variance_function

    model = DegreeModel.from_degrees(degrees, d_max=50)
    fast = _variance_function(statistic, model)
    for eps in (1e-4, 0.05, 0.7, 3.0, 12.0):
        exact = estimator_variance(statistic, model, eps)
        assert fast(eps) == pytest.approx(exact, rel=1e-9, abs=1e-300)
