"""The closed forms that ``scripts/reproduce_histograms.py`` prints next to its Monte-Carlo figures
for the partition function Z(t): exact, against sums over the discrete Laplace law."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from ldpgraph.estimators.profiles import partition_function

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "reproduce_histograms.py"
_spec = importlib.util.spec_from_file_location("reproduce_histograms", SCRIPT)
rh = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rh)

X = np.array([0, 1, 3, 3, 7, 12])


@pytest.mark.parametrize(("t", "eps"), [(0.5, 2.0), (0.9, 0.5), (0.99, 0.1), (1.01, 0.1), (1.3, 1.0)])
def test_exact_moments_of_both_estimators(t, eps):
    """Mean and variance of sum_i t^(y_i) (naive) and of kappa(t) times it (unbiased), per report
    from E[t^eta] and E[t^(2 eta)] summed over the noise law on [-K, K]: the terms of E[t^(2 eta)]
    decay like exp(-(eps - 2|ln t|)|k|), so the neglected tail is below exp(-40) / (1 - exp(-rate))
    relative to the sum."""
    assert rh.finite_variance(t, eps)
    rate = eps - 2 * abs(math.log(t))
    big = math.ceil(40 / rate)
    k = np.arange(-big, big + 1)
    pmf = math.tanh(eps / 2) * np.exp(-eps * np.abs(k))
    m1 = float(np.sum(pmf * t ** k.astype(float)))  # E t^eta
    m2 = float(np.sum(pmf * t ** (2.0 * k)))  # E t^(2 eta)
    z = float(np.sum(t ** X.astype(float)))
    z2 = float(np.sum(t ** (2.0 * X)))
    ex = rh.partition_exact(X, np.array([t]), eps)
    kap = float(rh.kappa(np.array([t]), eps)[0])
    assert kap * m1 == pytest.approx(1.0, rel=1e-13)  # kappa(t) = 1 / E t^eta
    assert ex["truth"][0] == pytest.approx(z, rel=1e-14)
    assert ex["naive_mean"][0] == pytest.approx(z * m1, rel=1e-13)
    assert ex["var_naive"][0] == pytest.approx(z2 * (m2 - m1 * m1), rel=1e-10)
    assert ex["var_unbiased"][0] == pytest.approx(kap * kap * z2 * (m2 - m1 * m1), rel=1e-10)
    # the library's estimate is the unbiased one: kappa(t) times the naive sum
    y = X + np.array([2, -1, 0, 5, -3, 1])
    assert partition_function(y, t, eps) == pytest.approx(kap * rh.naive_partition(y, np.array([t]))[0], rel=1e-13)


def test_variance_condition_and_truth_from_the_fingerprint():
    assert rh.finite_variance(0.9, 0.22) and not rh.finite_variance(0.9, 0.2)  # |ln 0.9| = 0.105
    assert not rh.finite_variance(1 / 0.9, 0.2)
    # Z(t) = sum_j phi_j t^j from the fingerprint, as from the counts
    assert rh.partition_truth(X, np.array([0.5]))[0] == pytest.approx(
        math.fsum(0.5 ** int(v) for v in X), rel=1e-15)
