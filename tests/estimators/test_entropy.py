"""Tests for ldpgraph.estimators.entropies.

References used here, none of them the code under test:
- ``debias_nd`` / ``debias``: the brute-force operator (2) over all 3^n shifts (float64). Its
  weights alternate and reach (1+4c)^n in total, so it carries an absolute rounding error up to
  3^n u sum_xi |f(y+xi) w_xi| (u = 2^-53); we allow 1e-9 relative plus that bound;
- ``_bruteforce_mp``: the same 3^n sum in 50-digit mpmath arithmetic, where float64 cancels;
- ``_trinomial_mp``: the formula of the task, sum_i sum_xi alpha_xi sum_s w_{n-1}(s)
  h(y_i+xi, Y+xi+s), with the trinomial weights w_{n-1}(s) built by convolution in mpmath
  (medium n: checks the reduction to functions of N and every evaluation path at once);
- ``_series_mp``: (1 - c Delta^2)^m = sum_j C(m,j) (-c)^j Delta^{2j}, with Delta^{2j} taken as
  exact finite differences at 150 digits (large n, where the series converges fast);
- ``exact_expectation_nd``: E[g(x + eta)] summed over the DLap pmf (tail < 1e-15).
"""

from __future__ import annotations

import collections
import gzip
import itertools
import math
import re
import time
import warnings

import mpmath
import numpy as np
import pytest
from conftest import data_file
from dlap_exact import dlap_support, exact_expectation_nd

import ldpgraph.estimators.entropies as ent
from ldpgraph._validation import dlap_c
from ldpgraph.estimators.entropies import entropy, entropy_variance_estimate, kl_divergence
from ldpgraph.estimators.operator import debias, debias_nd, debias_nd_variance
from ldpgraph.estimators.order_statistics import HighVarianceWarning

U = 2.0**-53
EPSILONS = [0.5, 1.0, 2.0, 5.0]


# ------------------------------------------------------------------------------------------
# the functions, in float64 (vectorized over the last axis) and in mpmath
# ------------------------------------------------------------------------------------------


def _H(z):
    z = np.asarray(z)
    N = z.sum(axis=-1, keepdims=True)
    ok = (z >= 1) & (N >= 1)
    zz, NN = np.where(ok, z, 1), np.where(N >= 1, N, 1)
    return np.where(ok, -(zz / NN) * np.log(zz / NN), 0.0).sum(axis=-1)


def _H_total(N):
    def f(z):
        z = np.asarray(z)
        zz = np.where(z >= 1, z, 1)
        return np.where(z >= 1, -(zz / N) * np.log(zz / N), 0.0).sum(axis=-1)

    return f


def _KL(n, pc=0.5):
    def f(v):
        v = np.asarray(v)
        x, w = v[..., :n], v[..., n:]
        N = x.sum(axis=-1, keepdims=True)
        M = w.sum(axis=-1, keepdims=True)
        NN, MM = np.where(N >= 1, N, 1), np.where(M >= 1, M, 1)
        xx = np.where(x >= 1, x, 1)
        lam = np.where(w >= 1, np.log(np.where(w >= 1, w, 1)), math.log(pc))
        t = np.where(x >= 1, xx / NN * (np.log(xx / NN) - lam + np.log(MM)), 0.0).sum(axis=-1)
        return np.where((N[..., 0] >= 1) & (M[..., 0] >= 1), t, 0.0)

    return f


def _H_mp(z):
    N = sum(z)
    if N < 1:
        return mpmath.mpf(0)
    return -mpmath.fsum(mpmath.mpf(a) / N * mpmath.log(mpmath.mpf(a) / N) for a in z if a >= 1)


def _KL_mp(n, pc=0.5):
    def f(v):
        x, w = v[:n], v[n:]
        N, M = sum(x), sum(w)
        if N < 1 or M < 1:
            return mpmath.mpf(0)
        terms = []
        for a, b in zip(x, w, strict=True):
            if a >= 1:
                lam = mpmath.log(b) if b >= 1 else mpmath.log(mpmath.mpf(pc))
                terms.append(mpmath.mpf(a) / N * (mpmath.log(mpmath.mpf(a) / N) - lam + mpmath.log(M)))
        return mpmath.fsum(terms)

    return f


def _c_mp(eps):
    return 1 / (4 * mpmath.sinh(mpmath.mpf(eps) / 2) ** 2)


def _cube(n):
    return np.array(list(itertools.product([-1, 0, 1], repeat=n)), dtype=np.int64).reshape(-1, n)


def _bruteforce_bound(f, y, c):
    """Rigorous rounding-error bound 3^n u sum |f(y+xi) w_xi| of the float64 brute force."""
    xi = _cube(len(y))
    w = np.prod(np.where(xi == 0, 1 + 2 * c, c), axis=1)
    return xi.shape[0] * U * float(np.abs(np.asarray(f(np.asarray(y) + xi), dtype=float)) @ w)


def _bruteforce_mp(f_mp, y, eps, dps=50):
    with mpmath.workdps(dps):
        c = _c_mp(eps)
        a0, a1 = 1 + 2 * c, -c
        terms = []
        for xi in itertools.product((-1, 0, 1), repeat=len(y)):
            w = mpmath.mpf(1)
            for e in xi:
                w *= a0 if e == 0 else a1
            terms.append(w * f_mp([int(a) + e for a, e in zip(y, xi, strict=True)]))
        return mpmath.fsum(terms)


def _trinomial_mp(y, eps):
    """sum_i sum_xi alpha_xi sum_s w_{n-1}(s) h(y_i + xi, Y + xi + s), h(a, N) = -(a/N) ln(a/N)."""
    y = [int(v) for v in y]
    n, Y = len(y), sum(y)
    m = n - 1
    c0 = float(1 / (4 * math.sinh(eps / 2) ** 2))
    bits = int(m * math.log2(1 + 4 * c0)) + 200
    with mpmath.workprec(bits):
        c = _c_mp(eps)
        alpha = {-1: -c, 0: 1 + 2 * c, 1: -c}
        w = [mpmath.mpf(1)]
        for _ in range(m):  # coefficients of (alpha_0 + alpha_1 (z + 1/z))^k, offset k
            nw = [mpmath.mpf(0)] * (len(w) + 2)
            for k, v in enumerate(w):
                nw[k] += -c * v
                nw[k + 1] += (1 + 2 * c) * v
                nw[k + 2] += -c * v
            w = nw
        logs = {}

        def lg(v):
            if v not in logs:
                logs[v] = mpmath.log(v)
            return logs[v]

        terms = []
        for yi in y:
            for xi in (-1, 0, 1):
                a = yi + xi
                if a < 1:
                    continue
                inner = []
                for s in range(-m, m + 1):
                    N = Y + xi + s
                    if N >= 1:
                        inner.append(w[s + m] * (-(mpmath.mpf(a) / N) * (lg(a) - lg(N))))
                terms.append(alpha[xi] * mpmath.fsum(inner))
        return mpmath.fsum(terms)


def _series_mp(m, K, r, c, J=10):
    """(T^m r)(K) = sum_{j<=J} C(m,j)(-c)^j Delta^{2j} r(K) (exact differences), and the last term."""
    vals = {N: r(mpmath.mpf(N)) for N in range(K - J, K + J + 1)}
    total, term = mpmath.mpf(0), mpmath.mpf(0)
    for j in range(J + 1):
        d = mpmath.fsum((-1) ** k * mpmath.binomial(2 * j, k) * vals[K - j + k] for k in range(2 * j + 1))
        term = mpmath.binomial(m, j) * (-c) ** j * d
        total += term
    return total, term


_R = {
    "u": lambda N: 1 / N,
    "v": lambda N: mpmath.log(N) / N,
    "u2": lambda N: 1 / N**2,
    "v2": lambda N: mpmath.log(N) / N**2,
    "w2": lambda N: mpmath.log(N) ** 2 / N**2,
    "ln": lambda N: mpmath.log(N),
}


def _power_ref(m, K, kind, eps):
    c = _c_mp(eps)
    val, last = _series_mp(m, K, _R[kind], c)
    assert abs(last) < mpmath.mpf(10) ** -40 * abs(val), "reference series not converged"
    return val


def _grouped(y):
    vals, counts = np.unique(np.asarray(y), return_counts=True)
    return [int(v) for v in vals], [int(k) for k in counts]


def _entropy_ref_large(y, eps):
    """Ĥ(y) from the reduction with T^{n-1} by the exact-difference series (large totals)."""
    with mpmath.workdps(150):
        c = _c_mp(eps)
        alpha = {-1: -c, 0: 1 + 2 * c, 1: -c}
        vals, counts = _grouped(y)
        n, Y = len(y), int(np.sum(y))
        total = []
        for xi in (-1, 0, 1):
            S1 = mpmath.fsum(
                k * (v + xi) * mpmath.log(v + xi) for v, k in zip(vals, counts, strict=True) if v + xi >= 1
            )
            S2 = mpmath.fsum(k * (v + xi) for v, k in zip(vals, counts, strict=True) if v + xi >= 1)
            U_ = _power_ref(n - 1, Y + xi, "u", eps)
            V_ = _power_ref(n - 1, Y + xi, "v", eps)
            total.append(alpha[xi] * (-S1 * U_ + S2 * V_))
        return mpmath.fsum(total)


def _variance_ref_large(y, eps):
    """T[H^2](y) by the pair expansion, every T^m by the exact-difference series."""
    with mpmath.workdps(150):
        c = _c_mp(eps)
        alpha = {-1: -c, 0: 1 + 2 * c, 1: -c}
        vals, counts = _grouped(y)
        n, Y = len(y), int(np.sum(y))

        def phi(p, a):
            if a < 1:
                return mpmath.mpf(0)
            return -a * mpmath.log(a) if p == 1 else mpmath.mpf(a)

        kind = {(1, 1): "u2", (1, 2): "v2", (2, 1): "v2", (2, 2): "w2"}
        total = []
        for xi in (-1, 0, 1):
            for p, q in kind:
                D = mpmath.fsum(
                    k * phi(p, v + xi) * phi(q, v + xi) for v, k in zip(vals, counts, strict=True)
                )
                total.append(alpha[xi] * D * _power_ref(n - 1, Y + xi, kind[p, q], eps))
        F = {
            (p, xi): mpmath.fsum(k * phi(p, v + xi) for v, k in zip(vals, counts, strict=True))
            for p in (1, 2)
            for xi in (-1, 0, 1)
        }
        for xi in (-1, 0, 1):
            for xj in (-1, 0, 1):
                for p, q in kind:
                    diag = mpmath.fsum(
                        k * phi(p, v + xi) * phi(q, v + xj) for v, k in zip(vals, counts, strict=True)
                    )
                    pair = F[p, xi] * F[q, xj] - diag
                    total.append(
                        alpha[xi] * alpha[xj] * pair * _power_ref(n - 2, Y + xi + xj, kind[p, q], eps)
                    )
        return mpmath.fsum(total)


def _zipf_histogram(n, total, seed, s=1.1):
    """Seeded synthetic Zipf counts with n bins, sum close to ``total``, all >= 1."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n + 1) ** s
    return 1 + rng.multinomial(total - n, p / p.sum())


def _noisy(x, eps, seed):
    rng = np.random.default_rng(seed)
    p = math.exp(-eps)
    return x + rng.geometric(1 - p, x.shape) - rng.geometric(1 - p, x.shape)


def _small_inputs(seed, count, nmax):
    """Random small histograms with ties, zeros, negative reports and N <= 0 cases."""
    rng = np.random.default_rng(seed)
    out = [
        np.array([0]),
        np.array([-2, 1]),
        np.array([1, -1, 0]),
        np.array([0, 0, 0, 1]),
        np.array([3, 3, 3]),
    ]
    for _ in range(count):
        n = int(rng.integers(1, nmax + 1))
        hi = int(rng.choice([2, 6, 40]))
        out.append(rng.integers(-3, hi, size=n))
    return out


# ------------------------------------------------------------------------------------------
# entropy: brute force, multiprecision, exact unbiasedness
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", EPSILONS)
def test_entropy_equals_bruteforce_operator(eps):
    c = dlap_c(eps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        for y in _small_inputs(seed=int(eps * 10), count=14, nmax=7):
            ref = float(debias_nd(_H, y, eps))
            tol = 1e-9 * max(1.0, abs(ref)) + _bruteforce_bound(_H, y, c)
            assert abs(float(entropy(y, eps)) - ref) <= tol, (y, eps)


@pytest.mark.parametrize("eps", EPSILONS)
def test_entropy_with_total_equals_bruteforce_and_debias(eps):
    c = dlap_c(eps)
    rng = np.random.default_rng(7)
    for y in _small_inputs(seed=int(eps * 10) + 1, count=10, nmax=7):
        N = int(rng.integers(1, 60))
        got = float(entropy(y, eps, total=N))
        h = _H_total(N)
        ref = float(debias_nd(h, y, eps))
        assert abs(got - ref) <= 1e-9 * max(1.0, abs(ref)) + _bruteforce_bound(h, y, c), (y, N)
        one_d = float(np.sum(debias(lambda a, N=N: _H_total(N)(a[..., None]), y, eps)))
        assert got == pytest.approx(one_d, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("y", "eps"),
    [
        ([-1, 3, 4, 13, 0, 6, 1], 0.5),
        ([-3, 10, -2, 2, 5, 5, -1], 0.2),
        ([14, 10, 14, -2, 10, 2], 0.2),
        ([0, 0, 1, 0, 0, 2], 0.3),
        ([40, 41, 40], 0.1),
        ([1, 1], 0.5),
    ],
)
def test_entropy_equals_multiprecision_bruteforce(y, eps):
    """Where float64 brute force loses up to 1e-3 (eps 0.2), the fast form keeps ~1e-15."""
    ref = float(_bruteforce_mp(_H_mp, y, eps))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        got = float(entropy(y, eps))
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-13)


@pytest.mark.parametrize(
    ("x", "eps"),
    [
        ([3], 1.0),
        ([4, 2], 0.5),
        ([0, 5], 0.5),
        ([1, 1], 1.0),
        ([2, 0, 3], 1.0),
        ([6, 1, 2], 2.0),
        ([0, 0, 0], 2.0),
    ],
)
def test_entropy_exactly_unbiased(x, eps):
    truth = float(_H(np.array(x)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        mean = exact_expectation_nd(lambda y: entropy(y, eps), x, eps)
        sq = exact_expectation_nd(lambda y: entropy(y, eps) ** 2, x, eps)
        mean_v = exact_expectation_nd(lambda y: entropy_variance_estimate(y, eps), x, eps)
    # the estimates reach ~1e4 on noisy totals near 0: allow their rounding, summed with the pmf
    assert mean == pytest.approx(truth, abs=1e-9)
    assert mean_v == pytest.approx(sq - truth**2, rel=1e-8, abs=1e-8)
    N = max(1, sum(x) + 1)
    truth_N = float(_H_total(N)(np.array(x)))
    mean_N = exact_expectation_nd(lambda y: entropy(y, eps, total=N), x, eps)
    assert mean_N == pytest.approx(truth_N, abs=1e-12)
    sq_N = exact_expectation_nd(lambda y: entropy(y, eps, total=N) ** 2, x, eps)
    var_N = exact_expectation_nd(lambda y: entropy_variance_estimate(y, eps, total=N), x, eps)
    assert var_N == pytest.approx(sq_N - truth_N**2, rel=1e-10, abs=1e-13)


@pytest.mark.parametrize(
    ("n", "total", "eps"),
    [
        (30, 3000, 0.5),  # quadrature, boundary negligible
        (40, 70, 0.5),  # quadrature + boundary integral (Y < n / tanh(eps/2))
        (40, 25, 0.5),  # window reaches N <= 0: exact multiprecision sum
        (25, 40, 2.0),  # float64 direct sum
        (12, 30, 0.1),
    ],
)
def test_entropy_equals_trinomial_formula(n, total, eps):
    """The reduction to a function of N against the task's formula, at medium n, every path."""
    x = _zipf_histogram(n, max(total, n), seed=n)
    y = _noisy(x, eps, seed=total)
    ref = float(_trinomial_mp(y, eps))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        got = float(entropy(y, eps))
    assert np.isfinite(got)
    assert got == pytest.approx(ref, rel=1e-11, abs=1e-12)


def test_entropy_variance_equals_bruteforce():
    for eps in (0.5, 1.0, 2.0):
        c = dlap_c(eps)
        for y in _small_inputs(seed=int(eps * 100), count=6, nmax=5):
            ref = float(debias_nd_variance(_H, y, eps))
            bound = _bruteforce_bound(_H, y, c) * (2 * max(1.0, abs(float(debias_nd(_H, y, eps))))) + (
                _bruteforce_bound(lambda z: _H(z) ** 2, y, c)
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", HighVarianceWarning)
                got = float(entropy_variance_estimate(y, eps))
            assert abs(got - ref) <= 1e-9 * max(1.0, abs(ref)) + bound, (y, eps)


@pytest.mark.parametrize(("y", "eps"), [([5, 3, 9, 2], 0.3), ([12, 0, 7], 0.5), ([2, 1, 1, 3, 0], 0.5)])
def test_entropy_variance_equals_multiprecision(y, eps):
    def f2(z):
        return _H_mp(z) ** 2

    with mpmath.workdps(50):
        g = _bruteforce_mp(_H_mp, y, eps)
        ref = float(g * g - _bruteforce_mp(f2, y, eps))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        got = float(entropy_variance_estimate(y, eps))
    assert got == pytest.approx(ref, rel=1e-10, abs=1e-12)


def test_variance_with_total_is_nonnegative_and_matches_operator():
    rng = np.random.default_rng(11)
    for eps in (0.5, 2.0):
        for _ in range(5):
            y = rng.integers(-3, 30, size=4)
            N = int(rng.integers(1, 100))
            ref = float(debias_nd_variance(_H_total(N), y, eps))
            got = float(entropy_variance_estimate(y, eps, total=N))
            assert got >= 0
            assert got == pytest.approx(ref, rel=1e-8, abs=1e-12)


# ------------------------------------------------------------------------------------------
# large n: stability against high-precision references
# ------------------------------------------------------------------------------------------


def test_entropy_large_n_zipf_stable():
    x = _zipf_histogram(12_419, 900_000, seed=1)
    y = _noisy(x, 0.5, seed=2)
    got = float(entropy(y, 0.5))
    assert np.isfinite(got)
    ref = float(_entropy_ref_large(y, 0.5))
    assert got == pytest.approx(ref, rel=1e-11)
    assert abs(got - float(_H(x))) < 0.05  # sanity: near the truth (sd ~ 2e-3)


def test_entropy_variance_large_n_stable():
    x = _zipf_histogram(12_419, 900_000, seed=3)
    y = _noisy(x, 0.5, seed=4)
    got = float(entropy_variance_estimate(y, 0.5))
    g = _entropy_ref_large(y, 0.5)
    with mpmath.workdps(150):
        ref = float(g * g - _variance_ref_large(y, 0.5))
    assert np.isfinite(got)
    # V (4e-6) is 1e-7 of H^2 and the pair sums reach ~(1+4c)^2 N^2 u^2-type terms of 1e5:
    # float64 leaves an absolute error ~1e5 * 1e-16 = 1e-11, i.e. ~1e-5 of V (a 5e-6 relative
    # error in a standard error); a wrong term would be off by orders of magnitude
    assert got == pytest.approx(ref, rel=1e-4)
    assert 0 < ref < 1e-4


def test_kl_large_n_stable():
    x = _zipf_histogram(12_419, 900_000, seed=5)
    w = _zipf_histogram(12_419, 800_000, seed=6, s=1.05)
    y, z = _noisy(x, 0.5, seed=7), _noisy(w, 0.5, seed=8)
    got = float(kl_divergence(y, z, 0.5))
    assert np.isfinite(got)
    n, Y, Z = len(y), int(y.sum()), int(z.sum())
    with mpmath.workdps(150):
        c = _c_mp(0.5)
        alpha = {-1: -c, 0: 1 + 2 * c, 1: -c}
        H = _entropy_ref_large(y, 0.5)
        U_ = {xi: _power_ref(n - 1, Y + xi, "u", 0.5) for xi in (-1, 0, 1)}
        Tln = _power_ref(n, Z, "ln", 0.5)

        def lam(b):
            return mpmath.log(b) if b >= 1 else mpmath.log(mpmath.mpf(0.5))

        P = [mpmath.fsum(alpha[e] * (a + e) * U_[e] for e in (-1, 0, 1) if a + e >= 1) for a in y.tolist()]
        Q = [mpmath.fsum(alpha[e] * lam(b + e) for e in (-1, 0, 1)) for b in z.tolist()]
        ref = -H - mpmath.fsum(p * q for p, q in zip(P, Q, strict=True)) + mpmath.fsum(P) * Tln
    assert got == pytest.approx(float(ref), rel=1e-10, abs=1e-12)


def _shakespeare_counts():
    text = gzip.open(data_file("t8.shakespeare.txt.gz"), "rt").read().lower()
    words = re.findall(r"[a-z]+", text)
    counts = collections.Counter(words)
    assert len(counts) == 23_683 and sum(counts.values()) == 928_012
    top = [w for w, _ in counts.most_common(12_419)]
    half = len(words) // 2
    first, second = collections.Counter(words[:half]), collections.Counter(words[half:])
    x = np.array([counts[w] for w in top])
    return x, np.array([first[w] for w in top]), np.array([second[w] for w in top])


def test_shakespeare_entropy_and_kl():
    x, a, b = _shakespeare_counts()
    y = _noisy(x, 0.5, seed=9)
    t0 = time.perf_counter()
    got = float(entropy(y, 0.5))
    elapsed = time.perf_counter() - t0
    assert np.isfinite(got)
    assert got == pytest.approx(float(_entropy_ref_large(y, 0.5)), rel=1e-11)
    assert elapsed < 5.0  # the target is < 1 s (see scripts/bench_entropy.py); generous on shared CI
    v = float(entropy_variance_estimate(y, 0.5))
    assert abs(got - float(_H(x))) < 8 * math.sqrt(max(v, 0)) + 1e-3
    kl = float(kl_divergence(_noisy(a, 0.5, seed=10), _noisy(b, 0.5, seed=11), 0.5))
    assert np.isfinite(kl) and abs(kl - float(_KL(len(a))(np.concatenate([a, b])))) < 0.05


# ------------------------------------------------------------------------------------------
# KL divergence
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 5.0])
def test_kl_equals_bruteforce_operator(eps):
    c = dlap_c(eps)
    rng = np.random.default_rng(int(eps * 10) + 5)
    cases = [
        (np.array([2]), np.array([-1])),
        (np.array([3, 0]), np.array([0, 4])),
        (np.array([1, 1]), np.array([-2, 1])),
    ]
    for _ in range(8):
        n = int(rng.integers(1, 5))
        cases.append((rng.integers(-2, 15, size=n), rng.integers(-2, 15, size=n)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        for y, z in cases:
            f = _KL(len(y))
            v = np.concatenate([y, z])
            ref = float(debias_nd(f, v, eps))
            tol = 1e-9 * max(1.0, abs(ref)) + _bruteforce_bound(f, v, c)
            assert abs(float(kl_divergence(y, z, eps)) - ref) <= tol, (y, z)


@pytest.mark.parametrize(
    ("y", "z", "eps"),
    [([6, 1, 4], [0, 8, 4], 0.5), ([-2, 1, 7, 5], [3, 1, -1, 6], 0.5), ([9, 3], [2, 12], 0.2)],
)
def test_kl_equals_multiprecision_bruteforce(y, z, eps):
    ref = float(_bruteforce_mp(_KL_mp(len(y)), list(y) + list(z), eps))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        got = float(kl_divergence(y, z, eps))
    assert got == pytest.approx(ref, rel=1e-11, abs=1e-12)


def test_kl_exactly_unbiased():
    x, w = np.array([3, 1]), np.array([2, 0])
    eps, eps_z = 3.0, 2.5
    kx, px = dlap_support(eps)
    kz, pz = dlap_support(eps_z)
    grid = np.array(np.meshgrid(kx, kx, kz, kz, indexing="ij")).reshape(4, -1).T
    weight = (
        px[grid[:, 0] + kx[-1]] * px[grid[:, 1] + kx[-1]] * pz[grid[:, 2] + kz[-1]] * pz[grid[:, 3] + kz[-1]]
    )
    y = x + grid[:, :2]
    z = w + grid[:, 2:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        est = kl_divergence(y, z, eps, epsilon_z=eps_z, pseudo_count=0.25)
    truth = float(_KL(2, pc=0.25)(np.concatenate([x, w])))
    assert math.fsum(est * weight) == pytest.approx(truth, abs=1e-9)


def test_kl_noise_free_limit_and_zero():
    x = np.array([80, 20, 5])
    w = np.array([50, 45, 1])
    ref = float(np.sum(x / x.sum() * np.log((x / x.sum()) / (w / w.sum()))))
    assert float(kl_divergence(x, w, 60.0)) == pytest.approx(ref, rel=1e-13)
    assert float(kl_divergence(x, x, 60.0)) == pytest.approx(0.0, abs=1e-14)


# ------------------------------------------------------------------------------------------
# evaluation paths of T^m against direct multiprecision sums
# ------------------------------------------------------------------------------------------


def _direct_mp(m, K, eps, kind):
    bits = int(m * math.log2(1 + 4 * dlap_c(eps))) + 200
    with mpmath.workprec(bits):
        c = _c_mp(eps)
        a, b = 1 + 2 * c, c
        T = [mpmath.mpf(0)] * (m + 2)
        T[m] = b**m
        for s in range(m, 0, -1):
            T[s - 1] = (a * s * T[s] + b * (s + 1 + m) * T[s + 1]) / (b * (m + 1 - s))
        r = _R.get(kind, lambda N: mpmath.mpf(1))
        return mpmath.fsum(
            (-1) ** (s % 2) * T[abs(s)] * r(mpmath.mpf(K + s)) for s in range(-m, m + 1) if K + s >= 1
        )


@pytest.mark.parametrize(
    ("m", "K", "eps"),
    [(100, 160, 0.5), (100, 120, 0.5), (300, 700, 0.2), (5, 7, 0.5), (3, 4, 0.5), (1, 2, 0.5), (2, 5, 0.1),
     (6, 3, 0.5), (8, -5, 1.0), (40, 2, 2.0), (150, 2000, 0.1), (40, 5, 30.0), (60, 30, 12.0)],
)  # fmt: skip
def test_power_paths_against_direct_sum(m, K, eps):
    c = dlap_c(eps)
    kinds = ("u", "v", "u2", "v2", "w2", "ln", "ind")
    got = ent._power(m, np.array([K]), c, kinds, "test")
    for kind in kinds:
        ref = float(_direct_mp(m, K, eps, kind))
        assert got[kind][0] == pytest.approx(ref, rel=1e-12, abs=1e-300), kind


@pytest.mark.parametrize(
    ("m", "K", "eps"),
    [(1, 10, 1e-3), (2, 10, 1e-3), (2, 3, 1e-2), (1, 3, 1e-3), (3, 50, 1e-3), (1, 2, 1e-3), (30, 31, 0.01)],
)
def test_power_boundary_quadrature_at_small_epsilon(m, K, eps):
    """Regression: where the part x > x0 dominates, the boundary integral was off by up to 3e-7."""
    c = dlap_c(eps)
    kinds = ("u", "v", "u2", "v2", "w2", "ln", "ind")
    got = ent._power(m, np.array([K]), c, kinds, "test")
    for kind in kinds:
        ref = float(_direct_mp(m, K, eps, kind))
        assert got[kind][0] == pytest.approx(ref, rel=1e-12, abs=1e-300), kind


@pytest.mark.parametrize(
    ("m", "K", "eps"),
    [(1, 2 * 10**7, 1e-3), (1, 3, 1e-3), (2, 30_000, 1e-3), (100, 160, 0.5), (5, 7, 0.5), (3, 4, 0.5),
     (2, 5, 0.1), (6, 3, 0.5), (8, -5, 1.0), (3, -4, 1.0), (150, 2000, 0.1), (0, 5, 1.0), (0, 0, 1.0)],
)  # fmt: skip
def test_power_of_differences_against_direct_sum(m, K, eps):
    """T^m of the forward / second differences of u, v, [N >= 1] along N, every path, against
    the differences of 100-digit direct sums (T^m commutes with shifts)."""
    c = dlap_c(eps)
    kinds = ("du", "dv", "dind", "ddu", "ddv", "ddind")
    got = ent._power(m, np.array([K]), c, kinds, "test")
    for kind in kinds:
        order = 2 if kind.startswith("dd") else 1
        base = kind[order:]
        with mpmath.workdps(100):
            f = {k: _direct_mp(m, k, eps, base) for k in (K - 1, K, K + 1)}
            ref = f[K + 1] - f[K] if order == 1 else f[K + 1] - 2 * f[K] + f[K - 1]
        if abs(ref) < 1e-150:  # exactly zero (flat [N >= 1] on the window), up to 100-digit rounding
            assert got[kind][0] == 0.0, kind
        else:
            assert got[kind][0] == pytest.approx(float(ref), rel=1e-12), kind


BIG = 10**7


@pytest.mark.parametrize(
    "y", [[BIG, BIG - 1], [10**5, 10**5], [10**4, 10**4, 10**4], [BIG, 12, 0], [100, 3], [5, 5]]
)
@pytest.mark.parametrize("eps", [1e-3, 1e-2])
def test_entropy_at_small_epsilon_against_multiprecision(y, eps):
    """Regression: the three-point sum multiplied rounding errors of F(xi) by c ~ 1e6 (1e-8 off)."""
    ref = _bruteforce_mp(_H_mp, y, eps, dps=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        got = float(entropy(y, eps))
    # floor: a few 1e-16 ln Y absolute from F(0) (see the Accuracy note of entropy)
    assert abs(got - float(ref)) <= 1e-13 * abs(float(ref)) + 1e-15 * math.log(sum(y)), (got, ref)


@pytest.mark.parametrize("eps", [1e-3, 1e-2])
def test_entropy_high_variance_small_histograms_exact(eps):
    ref = _bruteforce_mp(_H_mp, [0, 3], eps, dps=60)
    with pytest.warns(HighVarianceWarning):
        got = float(entropy([0, 3], eps))
    assert got == pytest.approx(float(ref), rel=1e-13)


@pytest.mark.parametrize(
    ("y", "z"), [([BIG, 3], [BIG // 2, BIG // 2]), ([BIG, BIG - 1], [BIG - 5, BIG + 2]), ([30, 0], [1, 29])]
)
def test_kl_at_small_epsilon_against_multiprecision(y, z):
    eps = 1e-3
    ref = _bruteforce_mp(_KL_mp(2), y + z, eps, dps=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)  # [30, 0] vs [1, 29]: estimate ~6e14
        got = float(kl_divergence(y, z, eps))
    assert abs(got - float(ref)) <= 1e-13 * max(abs(float(ref)), 1.0), (got, ref)


# ------------------------------------------------------------------------------------------
# shapes, limits, errors
# ------------------------------------------------------------------------------------------


def test_batch_rows_equal_single_calls():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 40, size=(2, 3, 5))
    z = rng.integers(0, 40, size=(2, 3, 5))
    res = entropy(y, 1.0)
    resv = entropy_variance_estimate(y, 1.0)
    resk = kl_divergence(y, z, 1.0)
    assert res.shape == resv.shape == resk.shape == (2, 3)
    for idx in itertools.product(range(2), range(3)):
        assert res[idx] == pytest.approx(float(entropy(y[idx], 1.0)), rel=1e-14)
        assert resv[idx] == pytest.approx(float(entropy_variance_estimate(y[idx], 1.0)), rel=1e-12)
        assert resk[idx] == pytest.approx(float(kl_divergence(y[idx], z[idx], 1.0)), rel=1e-14)


def test_noise_free_limit_is_plugin():
    x = np.array([50, 20, 0, 7, 1])
    assert float(entropy(x, 60.0)) == pytest.approx(float(_H(x)), rel=1e-13)
    assert float(entropy(x, 60.0, total=int(x.sum()))) == pytest.approx(float(_H(x)), rel=1e-13)
    assert float(entropy_variance_estimate(x, 60.0)) == pytest.approx(0.0, abs=1e-13)  # u H^2


def test_sensitivity_scales_epsilon():
    y = np.array([12, 7, 30, 2])
    assert float(entropy(y, 2.0, sensitivity=2)) == pytest.approx(float(entropy(y, 1.0)), rel=1e-14)


def test_bad_inputs():
    with pytest.raises(ValueError, match="epsilon"):
        entropy([1, 2], 0.0)
    with pytest.raises(TypeError, match="epsilon"):
        entropy([1, 2], "1")
    with pytest.raises(ValueError, match="sensitivity"):
        entropy([1, 2], 1.0, sensitivity=-1)
    with pytest.raises(ValueError, match=r"y\[1\] = 2.5"):
        entropy([1, 2.5], 1.0)
    with pytest.raises(TypeError, match="integers"):
        entropy([True, False], 1.0)
    with pytest.raises(ValueError, match="dimension"):
        entropy(3, 1.0)
    with pytest.raises(ValueError, match="number of bins"):
        entropy(np.zeros((2, 0), dtype=int), 1.0)
    with pytest.raises(ValueError, match="total"):
        entropy([1, 2], 1.0, total=0)
    with pytest.raises(TypeError, match="total"):
        entropy([1, 2], 1.0, total=2.5)
    with pytest.raises(ValueError, match="total"):
        entropy_variance_estimate([1, 2], 1.0, total=-3)
    with pytest.raises(ValueError, match="same shape"):
        kl_divergence([1, 2], [1, 2, 3], 1.0)
    with pytest.raises(ValueError, match=r"z\[0\]"):
        kl_divergence([1, 2], [0.5, 2], 1.0)
    with pytest.raises(ValueError, match="pseudo_count"):
        kl_divergence([1, 2], [1, 2], 1.0, pseudo_count=0)
    with pytest.raises(ValueError, match="epsilon_z"):
        kl_divergence([1, 2], [1, 2], 1.0, epsilon_z=-1.0)


def test_small_total_warns():
    y = np.array([0, 1, 0, 0, 2, 0, -1, 1])
    with pytest.warns(HighVarianceWarning, match="entropy"):
        v = entropy(y, 0.5)
    assert np.isfinite(v)


def test_astronomically_large_estimate_raises():
    # 1046 bins holding 3500 counts at epsilon 0.1: weights of order 10^700 (beyond float64)
    x = _zipf_histogram(1046, 3500, seed=12)
    y = _noisy(x, 0.1, seed=13)
    with pytest.raises(ValueError, match="astronomically large|overflows"):
        entropy(y, 0.1)
    # the window of the noisy total reaches N <= 0 with 3000 bins: exact sum too costly
    y = np.zeros(3000, dtype=np.int64)
    y[:40] = 3
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="multiprecision|arithmetic"):
        entropy(y, 0.5)
    assert time.perf_counter() - t0 < 5.0
    # with the total public the estimate is separable and always available
    assert np.isfinite(entropy(y, 0.5, total=120))
