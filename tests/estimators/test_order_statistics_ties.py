"""Order statistics with heavy ties, against an exact rational reference and the noise law.

The reference here is derived from the operator directly (not from the module's binomial
formulation): with s the k-th smallest report, G(t) = T[1{#{i: x_i <= t} >= k+1}](y) only
involves the reports at t and t+1. A report at t is "<= t" under the shifts xi in {-1, 0}
(weight 1 + c) and not under xi = +1 (weight -c); a report at t+1 is "<= t" only under
xi = -1 (weight -c), else 1 + c; reports <= t-1 always count, reports >= t+2 never. Hence

    G(t) = sum_{a, b} C(n_t, a) (1+c)^a (-c)^(n_t - a) C(n_{t+1}, b) (-c)^b (1+c)^(n_{t+1} - b)
           * 1{L + a + b >= k + 1},        L = #{i: y_i <= t - 1},

evaluated with prefix sums over b in exact rational arithmetic at the float value of c, and
g = s + (1 - G(s)) - G(s-1), V = (H1 - G0)^2 - (H1 + G0) with H1 = 1 - G(s), G0 = G(s-1).
The reference is itself checked against the brute-force 3^n operator on small inputs.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import ldpgraph.estimators.order_statistics as os_mod
from ldpgraph._validation import dlap_c
from ldpgraph.estimators.order_statistics import (
    HighVarianceWarning,
    median,
    order_statistic,
    order_statistic_variance,
)
from ldpgraph.mechanisms import DiscreteLaplace

FLOAT_MAX = Fraction(np.finfo(np.float64).max)


def _exact_G(y: np.ndarray, k: int, t: int, c: Fraction) -> Fraction:
    nt = int(np.count_nonzero(y == t))
    nt1 = int(np.count_nonzero(y == t + 1))
    low = int(np.count_nonzero(y <= t - 1))
    one_c = 1 + c
    # B[m] = sum_{b <= m} C(nt1, b) (-c)^b (1+c)^(nt1-b), as a running sum
    terms_b = [math.comb(nt1, b) * (-c) ** b * one_c ** (nt1 - b) for b in range(nt1 + 1)]
    prefix = list(itertools.accumulate(terms_b))
    total_b = prefix[-1]
    out = Fraction(0)
    for a in range(nt + 1):
        need = k + 1 - low - a  # b >= need
        if need <= 0:
            tail = total_b
        elif need > nt1:
            continue
        else:
            tail = total_b - prefix[need - 1]
        out += math.comb(nt, a) * one_c**a * (-c) ** (nt - a) * tail
    return out


def exact_order_statistic(y, k: int, c: float) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """(g, variance estimate, H1, G0) exactly, at the float value of c."""
    y = np.asarray(y, dtype=np.int64)
    s = int(np.partition(y, k)[k])
    cc = Fraction(c)
    h1 = 1 - _exact_G(y, k, s, cc)
    g0 = _exact_G(y, k, s - 1, cc)
    return s + h1 - g0, (h1 - g0) ** 2 - (h1 + g0), h1, g0


def _as_float(q: Fraction) -> float:
    return float(q) if abs(q) <= FLOAT_MAX else math.copysign(math.inf, q)


def _bruteforce(y, k, c):
    y = np.asarray(y, dtype=np.int64)
    n = y.size
    xi = np.array(list(itertools.product([-1, 0, 1], repeat=n)), dtype=np.int64)
    vals = np.sort(y + xi, axis=1)[:, k]
    zeros = (xi == 0).sum(axis=1)
    cc = Fraction(c)
    return sum((1 + 2 * cc) ** int(z) * (-cc) ** int(n - z) * int(v) for z, v in zip(zeros, vals, strict=True))


@pytest.mark.parametrize("seed", range(3))
def test_reference_equals_bruteforce(seed):
    rng = np.random.default_rng(seed)
    for _ in range(15):
        n = int(rng.integers(1, 8))
        y = rng.integers(0, 3, size=n)
        k = int(rng.integers(0, n))
        c = dlap_c(float(rng.choice([0.3, 1.0, 3.0])))
        assert exact_order_statistic(y, k, c)[0] == _bruteforce(y, k, c)


def _tie_cases():
    rng = np.random.default_rng(11)
    geo = np.minimum(rng.geometric(1 / 6, 800), 60)
    zipf = np.minimum(rng.zipf(1.8, 600), 50)
    equal = np.full(400, 7)
    for name, x in (("geometric", geo), ("zipf", zipf), ("all-equal", equal)):
        for eps in (0.5, 2.0, 6.0):
            y = DiscreteLaplace(epsilon=eps).randomize(x, rng=int(eps * 10))
            for k in (0, x.size // 2, x.size - 1):
                yield name, eps, y, k


@pytest.mark.parametrize(("name", "eps", "y", "k"), list(_tie_cases()))
def test_heavy_ties_against_exact_rationals(name, eps, y, k):
    c = dlap_c(eps)
    g, v, h1, g0 = exact_order_statistic(y, k, c)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = float(order_statistic(y, k, eps, warn_above=None))
        got_v = float(order_statistic_variance(y, k, eps))
    warned = any(issubclass(w.category, HighVarianceWarning) for w in caught)
    scale = max(Fraction(1), abs(h1), abs(g0))
    if scale * Fraction(2) ** -40 <= FLOAT_MAX and abs(g) <= FLOAT_MAX:
        # representable, including its weights: accurate to ~1e-12 of the largest weight
        assert abs(Fraction(got) - g) <= Fraction(1, 10**12) * scale, (got, float(g))
        if abs(v) <= FLOAT_MAX:
            assert abs(Fraction(got_v) - v) <= Fraction(1, 10**11) * scale**2
    else:
        # beyond float64: never a finite estimate that pretends to be exact
        assert not np.isfinite(got) or abs(Fraction(got) - g) <= Fraction(1, 10**12) * scale
        assert warned or not np.isfinite(got)
        assert not (np.isfinite(got) and got_v == 0.0)


@pytest.mark.parametrize("n", [100_000, 700_000, 1_000_000, 2_000_000])
def test_issue_reproduction_is_unusable_not_certain(n):
    # noisy geometric degrees, mean 50, eps = 0.5: ~n/100 reports tie at the median; the
    # weights are ~(1+2c)^(ties) = 10^(thousands). Earlier releases returned the plug-in with
    # variance 0 from n = 7e5 on (the binomial pmf underflowed to 0 beyond the threshold).
    rng = np.random.default_rng(0)
    d = rng.geometric(1 / 50, n).astype(np.int64)
    y = DiscreteLaplace(epsilon=0.5).randomize(d, rng=1)
    with pytest.warns(HighVarianceWarning):
        est = float(median(y, epsilon=0.5))
    var = float(order_statistic_variance(y, n // 2, epsilon=0.5))
    assert not np.isfinite(est)
    assert not (np.isfinite(var) and var <= 0.0)


def test_far_tail_threshold_is_not_zero():
    # A threshold deep in the tail of W (here: r far from the bulk) used to give a side mass of
    # exactly 0 and G0 = 0; the tilted path recovers the exact value.
    y = np.concatenate([np.full(250, 5), np.full(250, 6)])
    for k in (0, 249, 480):
        for eps in (3.0, 6.0):
            c = dlap_c(eps)
            g, v, h1, g0 = exact_order_statistic(y, k, c)
            got = float(order_statistic(y, k, eps, warn_above=None))
            scale = max(Fraction(1), abs(h1), abs(g0))
            assert abs(Fraction(got) - g) <= Fraction(1, 10**12) * scale, (k, eps, got, float(g))


def test_underflowing_side_with_overflowing_scale():
    # 300 reports at 5 and 1200 at 6, k = 0, eps = 1: the threshold of H1 lies ~1000 standard
    # deviations into the tail of W, whose binomial pmf underflows to 0 there, while the scale
    # (1+2c)^1500 is 10^676. Earlier releases returned 1.09e85 (H1 taken as 0), silently.
    # The exact rational reference above (about 30 s, so not run here) gives
    # g = +10^329.376 (H1 = +10^329.376, G0 = 10^85.036): beyond float64.
    y = np.concatenate([np.full(300, 5), np.full(1200, 6)])
    with pytest.warns(HighVarianceWarning, match=r"10\^329\.4"):
        est = float(order_statistic(y, 0, 1.0))
    assert est == math.inf
    # a smaller instance of the same pattern, checked against the exact reference here
    y = np.concatenate([np.full(60, 5), np.full(240, 6)])
    g, _, h1, g0 = exact_order_statistic(y, 0, dlap_c(1.0))
    got = float(order_statistic(y, 0, 1.0, warn_above=None))
    assert abs(Fraction(got) - g) <= Fraction(1, 10**12) * max(1, abs(h1), abs(g0))


def test_fft_and_direct_paths_agree(monkeypatch):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, size=1200)
    for eps in (8.0, 2.0):
        direct = float(order_statistic(y, 420, eps, warn_above=None))
        with monkeypatch.context() as m:
            m.setattr(os_mod, "_DIRECT_CONVOLUTION_MAX", 0)  # force the (tilted) FFT
            fft = float(order_statistic(y, 420, eps, warn_above=None))
        assert fft == pytest.approx(direct, rel=1e-9)
    exact = _as_float(exact_order_statistic(y, 420, dlap_c(2.0))[0])
    assert direct == pytest.approx(exact, rel=1e-12)


def test_monte_carlo_mean_within_standard_error():
    # finite, moderate variance: 6 reports tied at 20 plus spread values, eps = 1.5
    x = np.concatenate([np.full(6, 20), np.arange(0, 40, 3)])
    k = x.size // 2
    truth = float(np.sort(x)[k])
    trials = 4000
    y = DiscreteLaplace(epsilon=1.5).randomize(np.broadcast_to(x, (trials, x.size)), rng=7)
    est = order_statistic(y, k, 1.5, warn_above=None)
    var_hat = order_statistic_variance(y, k, 1.5)
    se = math.sqrt(float(np.var(est)) / trials)
    assert abs(float(est.mean()) - truth) <= 4 * se
    # the variance estimate is unbiased: its mean matches the mean squared error (both are
    # averages over the trials; compare within 4 standard errors of their difference)
    diff = var_hat - (est - truth) ** 2
    assert abs(float(diff.mean())) <= 4 * math.sqrt(float(np.var(diff)) / trials)
