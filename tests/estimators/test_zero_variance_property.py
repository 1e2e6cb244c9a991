"""Property over the estimator family: a variance of 0 means the estimate is exact.

Two readings, both tested:

* **Reported variance estimates of the order-statistic family** (min, max, k-th; the median is
  the mean of two of them and has no variance function of its own). Their unbiased variance estimate (H1 - G0)^2 - (H1 + G0) is
  0 only where there is no noise (c = 0, i.e. the DLap law is a point mass in float64); then
  the estimate is the plain order statistic of the reports, which equal the true values. A
  variance estimate of 0 elsewhere was a numerical failure (the binomial pmf underflowing to 0
  while (1+2c)^ties overflowed), which returned the plug-in as if it were certain.
* **Exact variances** of profile, partition function, entropy and KL (the variance as a function
  of the true values, by exact summation over the noise law on tiny inputs, tail < 1e-15):
  Var = 0 implies the estimate equals the truth at every noise value of positive probability.

Note what is *not* claimed: an unbiased variance *estimate* of a profile bin, a partition
function or an entropy can legitimately be 0 (or negative) when the truth is not known -- e.g.
no report within 1 of bin k gives phi_k^ = 0 and profile_variance = 0 whatever x is, and the
unique unbiased estimate of the variance is that one (the operator applied to the variance
function vanishes there). Those are estimates of a variance, not claims of exactness.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldpgraph._validation import dlap_c
from ldpgraph.estimators import (
    HighVarianceWarning,
    entropy,
    kl_divergence,
    maximum,
    minimum,
    order_statistic,
    order_statistic_variance,
    partition_function,
    profile,
    profile_exact_variance,
)
from ldpgraph.mechanisms import DiscreteLaplace

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

epsilons = st.one_of(
    st.floats(0.01, 5.0),
    st.floats(5.0, 1000.0),
    st.sampled_from([0.05, 0.5, 30.0, 745.0, 800.0]),
)


@st.composite
def tied_values(draw):
    """True values with heavy ties: a few values, some repeated thousands of times."""
    n_values = draw(st.integers(1, 4))
    base = draw(st.integers(-50, 50))
    counts = [draw(st.sampled_from([1, 2, 3, 10, 100, 1000, 5000])) for _ in range(n_values)]
    gaps = [draw(st.integers(1, 3)) for _ in range(n_values)]
    values = base + np.cumsum(gaps)
    y = np.repeat(values, counts)
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1))).permutation(y)


@SETTINGS
@given(x=tied_values(), eps=epsilons, where=st.floats(0.0, 1.0), seed=st.integers(0, 2**32 - 1))
def test_order_statistic_variance_zero_means_exact(x, eps, where, seed):
    # y = x + DLap noise; a variance estimate of exactly 0 must come with the true value. It can
    # legitimately underflow to 0 without c = 0: 1000 reports tied at 2 and one at 1, eps = 4,
    # k = 355 gives H1, G0 ~ 1e-330 (exact rationals): the estimate is 2 up to that, and so is
    # the truth except with probability ~1e-330.
    n = x.size
    k = min(n - 1, int(where * n))
    y = DiscreteLaplace(epsilon=eps).randomize(x, rng=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        cases = [
            (order_statistic(y, k, eps, warn_above=None), order_statistic_variance(y, k, eps), np.sort(x)[k]),
            (maximum(y, eps, warn_above=None), order_statistic_variance(y, n - 1, eps), x.max()),
            (minimum(y, eps, warn_above=None), order_statistic_variance(y, 0, eps), x.min()),
        ]
    for est, var, truth in cases:
        est, var = float(est), float(var)
        if var == 0.0 and np.isfinite(est):
            assert est == float(truth), (est, var, eps, k)
        if not np.isfinite(est):
            assert not (np.isfinite(var) and var <= 0.0)


@SETTINGS
@given(x=st.lists(st.integers(-3, 8), min_size=1, max_size=30), eps=epsilons, seed=st.integers(0, 2**32 - 1))
def test_profile_exact_variance_zero_means_exact(x, eps, seed):
    # the closed-form exact variance underflows to 0 only where it is below ~1e-323 (e.g. x = 0,
    # eps = 125, bin 6: p^6 = e^-750): the estimate then equals the truth except with that
    # probability
    x = np.asarray(x, dtype=np.int64)
    v = profile_exact_variance(x, eps, 6, min_count=-2)
    zero = v == 0.0
    if zero.any():
        truth = np.array([np.count_nonzero(x == k) for k in range(-2, 7)], dtype=float)
        y = DiscreteLaplace(epsilon=eps).randomize(x, rng=seed)
        assert np.array_equal(profile(y, eps, 6, min_count=-2)[zero], truth[zero])


@SETTINGS
@given(x=st.lists(st.integers(0, 30), min_size=2, max_size=6), eps=epsilons, seed=st.integers(0, 2**32 - 1))
def test_no_noise_estimates_are_exact(x, eps, seed):
    # where c = 0 (eps beyond ~745 at sensitivity 1) every estimator returns the truth from the
    # (then noise-free) reports, with variance estimates 0
    if dlap_c(eps) != 0.0:
        return
    x = np.asarray(x, dtype=np.int64)
    y = x.copy()
    k = int(seed % x.size)
    assert float(order_statistic(y, k, eps)) == float(np.sort(x)[k])
    assert float(order_statistic_variance(y, k, eps)) == 0.0
    assert float(maximum(y, eps)) == float(x.max()) and float(minimum(y, eps)) == float(x.min())
    if x.sum() > 0:
        p = x[x > 0] / x.sum()
        assert float(entropy(y, eps, total=int(x.sum()))) == pytest.approx(float(-np.sum(p * np.log(p))), rel=1e-12)
    assert float(partition_function(y, 1.0, eps)) == float(x.size)
    assert np.array_equal(profile(y, eps, 30), np.bincount(x, minlength=31).astype(float))
    # KL has no variance function; without noise it is the plug-in at the pseudo-counts
    w = x[::-1] + 1
    assert float(kl_divergence(y, w, eps)) == pytest.approx(float(kl_divergence(x, w, eps)), rel=1e-12)
