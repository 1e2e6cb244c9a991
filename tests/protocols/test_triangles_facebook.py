"""Every triangle method on Facebook at eps in {0.5, 1, 2}: Monte-Carlo mean within 4 analytic
SEs, and Monte-Carlo RMSE against the analytic RMSE.

Trial counts are small (the suite must stay fast), so the RMSE tolerance is derived from the
law of the Monte-Carlo MSE: with N trials of a Gaussian error of MSE sigma^2 (the estimates are
sums over thousands of nodes and pairs), N MSE_hat / sigma^2 ~ chi^2_N (a non-central one
with the bias, which only narrows it); we accept the chi-square interval at level 1e-4, never
tighter than 15%. ``scripts/bench_triangles.py`` prints the same comparison with more trials.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpgraph.graph import read_edgelist
from ldpgraph.registry import get_method

TRIALS = {
    "rr-triangles": 2,
    "two-round-triangles-laplace": 20,
    "two-round-triangles-laplace-private": 20,
    "two-round-triangles-dlap": 20,
    "two-round-triangles-dlap-private": 20,
}


@pytest.fixture(scope="module")
def facebook(request):
    from tests.conftest import data_file

    return read_edgelist(data_file("facebook_combined.txt.gz"))


@pytest.mark.parametrize("name", list(TRIALS))
def test_facebook_monte_carlo_against_analytic(facebook, name):
    p = get_method(name)
    truth = p.truth(facebook, "triangles", None)
    for i, eps in enumerate((0.5, 1.0, 2.0)):
        n = TRIALS[name]
        x = p.estimate_trials(facebook, "triangles", None, eps, n, rng=100 + i)
        mean = p.analytic_mean(facebook, "triangles", None, eps)
        var = p.analytic_variance(facebook, "triangles", None, eps)
        assert abs(x.mean() - mean) <= 4 * math.sqrt(var / n), (eps, x.mean(), mean)
        rmse_a = p.analytic_rmse(facebook, "triangles", None, eps)
        ratio = float(np.mean((x - truth) ** 2)) / rmse_a**2
        lo, hi = stats.chi2.ppf([0.5e-4, 1 - 0.5e-4], n) / n
        lo, hi = min(lo, 0.85**2), max(hi, 1.15**2)
        assert lo <= ratio <= hi, (eps, math.sqrt(ratio))
