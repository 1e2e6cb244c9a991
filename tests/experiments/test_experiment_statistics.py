from __future__ import annotations

import math

import numpy as np
import pytest

from ldpgraph.protocols.statistics import STATISTICS, get_statistic, statistic_names

D = np.array([3, 1, 2, 2, 0, 5], dtype=np.int64)
Y = np.array([4, -1, 2, 3, 0, 5], dtype=np.int64)  # "noisy" degrees


def _entropy(ws):
    ws = [w for w in ws if w > 0]
    s = sum(ws)
    return -sum(w / s * math.log(w / s) for w in ws)


def test_truths_by_hand():
    assert get_statistic("edges").truth(D, None) == 6  # degree sum 13 (odd: not a graph, floor)
    assert get_statistic("degree_moment").truth(D, 3) == sum(int(x) ** 3 for x in D)
    assert get_statistic("degree_mean").truth(D, None) == pytest.approx(13 / 6, rel=1e-15)
    m = 13 / 6
    assert get_statistic("degree_variance").truth(D, None) == pytest.approx(sum((x - m) ** 2 for x in D) / 6, rel=1e-14)
    assert get_statistic("max_degree").truth(D, None) == 5
    assert get_statistic("degree_entropy").truth(D, None) == pytest.approx(_entropy(D.tolist()), rel=1e-14)


def test_moment_truth_is_exact_for_large_values():
    d = np.array([10**6, 10**6 + 1], dtype=np.int64)
    assert get_statistic("degree_moment").truth(d, 4) == float(10**24 + (10**6 + 1) ** 4)


def test_naive_plug_ins_by_hand():
    assert get_statistic("edges").naive(Y, None) == 13 / 2
    assert get_statistic("degree_moment").naive(Y, 2) == sum(x * x for x in Y.tolist())
    assert get_statistic("degree_mean").naive(Y, None) == pytest.approx(13 / 6)
    assert get_statistic("degree_variance").naive(Y, None) == pytest.approx(float(np.var(Y.astype(float))))
    assert get_statistic("max_degree").naive(Y, None) == 5
    assert get_statistic("degree_entropy").naive(Y, None) == pytest.approx(_entropy([4, 0, 2, 3, 0, 5]))
    assert math.isnan(get_statistic("degree_entropy").naive(np.array([-1, 0]), None))


def test_analytic_sd_of_linear_statistics():
    from ldpgraph.mechanisms import DiscreteLaplace

    var = DiscreteLaplace(epsilon=0.7).variance
    p = math.exp(-0.7)
    assert var == pytest.approx(2 * p / (1 - p) ** 2, rel=1e-12)
    assert get_statistic("edges").analytic_sd(D, None, 0.7) == pytest.approx(math.sqrt(6 * var) / 2, rel=1e-12)
    assert get_statistic("degree_mean").analytic_sd(D, None, 0.7) == pytest.approx(math.sqrt(var / 6), rel=1e-12)
    assert get_statistic("degree_entropy").analytic_sd(D, None, 0.7) is None
    # Var(y^2 - Var eta) = 4 x^2 Var(eta) + E eta^4 - Var(eta)^2, DLap fourth moment by summation
    t = np.arange(-400, 401)
    pmf = (1 - p) / (1 + p) * p ** np.abs(t)
    m4 = float(np.sum(pmf * t.astype(float) ** 4))
    expect = sum(4 * x * x * var + m4 - var * var for x in D.tolist())
    assert get_statistic("degree_moment").analytic_sd(D, 2, 0.7) == pytest.approx(math.sqrt(expect), rel=1e-10)


def test_registry():
    assert statistic_names()[0] == "kstars"
    assert set(statistic_names()[1:]) == set(STATISTICS)
    with pytest.raises(ValueError, match="unknown statistic 'kstar'.*kstars"):
        get_statistic("kstar")
    assert get_statistic("degree_moment").parameter == "j"
