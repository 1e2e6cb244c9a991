"""Every triangle method on Facebook at eps in {0.5, 1, 2}: Monte-Carlo mean within 4 analytic
SEs, and Monte-Carlo RMSE against the analytic RMSE (triangles; transitivity by the delta method).

The RMSE tolerance comes from the law of the Monte-Carlo MSE: with N trials of a Gaussian error
of MSE sigma^2 (the estimates are sums over thousands of nodes and pairs),
N MSE_hat / sigma^2 ~ chi^2_N (a non-central one with the bias, which only narrows it). The
two-round methods run N = 400 trials per cell (a trial costs O(n)), enough for the chi-square
interval at level 1e-4 to lie inside +-15% of the RMSE: they are held to 15%, the target of
issue 9. A ``rr-triangles`` trial builds and counts a noisy graph of ~1e6 edges (~0.5 s), so
here it runs 2 trials (mean within 4 SEs; RMSE only within its wide chi-square interval);
its variance is exact by enumeration (test_triangles.py) and ``scripts/reproduce_triangles.py``
checks its Monte-Carlo RMSE with more trials.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpgraph.graph import read_edgelist
from ldpgraph.run.method import get_method

EPSILONS = (0.5, 1.0, 2.0)
TWO_ROUND = [
    "two-round-triangles-laplace",
    "two-round-triangles-laplace-private",
    "two-round-triangles-dlap",
    "two-round-triangles-dlap-private",
]
TRIALS = {"rr-triangles": 2, **dict.fromkeys(TWO_ROUND, 400)}


@pytest.fixture(scope="module")
def facebook(request):
    from tests.conftest import data_file

    return read_edgelist(data_file("facebook_combined.txt.gz"))


def _mse_interval(n: int) -> tuple[float, float]:
    """Interval of MSE_hat / MSE at level 1e-4 (chi-square law), never tighter than +-15% RMSE."""
    lo, hi = stats.chi2.ppf([0.5e-4, 1 - 0.5e-4], n) / n
    return min(lo, 0.85**2), max(hi, 1.15**2)


def test_two_round_trials_are_enough_for_fifteen_percent():
    lo, hi = stats.chi2.ppf([0.5e-4, 1 - 0.5e-4], TRIALS[TWO_ROUND[0]]) / TRIALS[TWO_ROUND[0]]
    assert 0.85**2 < lo and hi < 1.15**2  # so _mse_interval is exactly +-15% for them


def _check(p, g, statistic, n, seed):
    truth = p.truth(g, statistic, None)
    for i, eps in enumerate(EPSILONS):
        x = p.estimate_trials(g, statistic, None, eps, n, rng=seed + i)
        mean = p.analytic_mean(g, statistic, None, eps)
        var = p.analytic_variance(g, statistic, None, eps)
        assert abs(x.mean() - mean) <= 4 * math.sqrt(var / n), (eps, x.mean(), mean)
        rmse_a = p.analytic_rmse(g, statistic, None, eps)
        ratio = float(np.mean((x - truth) ** 2)) / rmse_a**2
        lo, hi = _mse_interval(n)
        assert lo <= ratio <= hi, (eps, math.sqrt(ratio))


@pytest.mark.parametrize("name", list(TRIALS))
def test_facebook_triangles_monte_carlo_against_analytic(facebook, name):
    _check(get_method(name), facebook, "triangles", TRIALS[name], 100)


@pytest.mark.parametrize("name", ["two-round-triangles-laplace", "two-round-triangles-dlap"])
def test_facebook_transitivity_monte_carlo_against_delta_method(facebook, name):
    """3 T_hat / S2_hat: mean within 4 delta-method SEs, RMSE within 15% of the delta method's.

    The ratio is formed the same way whatever the triangle protocol: two of them suffice here
    (the private-bound ones cost ~2 s of exact mixture moments per cell).
    """
    _check(get_method(name), facebook, "transitivity", TRIALS[name], 200)
