"""Tests of the exact discrete Laplace sampler (ldpgraph.mechanisms.secure).

The law is checked against the DLap pmf written out here from DESIGN.md section 2,
P[eta = k] = (1-p)/(1+p) p^|k| with p = exp(-epsilon/sensitivity), by chi-square tests at
alpha = 1e-3 on seeded byte sources (the sampler consumes bytes only, so a seeded source runs
exactly the deployed code path).
"""

from __future__ import annotations

import decimal
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from ldpgraph.mechanisms import secure
from ldpgraph.mechanisms.secure import SecureDiscreteLaplace, sample_bernoulli_exp, sample_dlap_exact

ALPHA = 1e-3


def dlap_pmf(k: np.ndarray, ratio: float) -> np.ndarray:
    """(1-p)/(1+p) p^|k|, p = exp(-ratio), ratio = epsilon / sensitivity."""
    p = math.exp(-ratio)
    return (1 - p) / (1 + p) * p ** np.abs(k)


def chi2_pvalue(draws: np.ndarray, ratio: float, min_expected: float = 5.0) -> float:
    """Chi-square goodness of fit to DLap(exp(-ratio)): bins -K..K, both tails pooled."""
    n = draws.size
    p = math.exp(-ratio)
    k_max = 0
    while n * dlap_pmf(np.array([k_max + 1]), ratio)[0] >= min_expected:
        k_max += 1
    ks = np.arange(-k_max, k_max + 1)
    tail = p ** (k_max + 1) / (1 + p)  # P[eta > K] = P[eta < -K]
    expected = n * np.concatenate([[tail], dlap_pmf(ks, ratio), [tail]])
    # index 0: eta < -K, 1..2K+1: eta = -K..K, last: eta > K
    observed = np.bincount(np.clip(draws, -k_max - 1, k_max + 1) + k_max + 1, minlength=ks.size + 2)
    assert observed.sum() == n
    assert abs(expected.sum() - n) < 1e-6 * n
    return float(stats.chisquare(observed, expected).pvalue)


@pytest.fixture
def seeded_os(monkeypatch):
    """Replace the OS byte source by a seeded one (same code path, reproducible)."""

    def install(seed: int) -> None:
        monkeypatch.setattr(secure, "_os_randbytes", np.random.default_rng(seed).bytes)

    return install


# ------------------------------------------------------------------ the law, exactly


@pytest.mark.parametrize("epsilon", ["0.5", 1, 2])
@pytest.mark.parametrize("sensitivity", [1, 3])
def test_secure_dlap_law_chi_square(seeded_os, epsilon, sensitivity):
    seeded_os(100 + 7 * sensitivity + int(2 * float(Fraction(epsilon))))
    mech = SecureDiscreteLaplace(epsilon=epsilon, sensitivity=sensitivity)
    draws = mech.sample(200_000)
    ratio = float(Fraction(epsilon) / sensitivity)
    assert chi2_pvalue(draws, ratio) > ALPHA
    # the sample variance agrees with 2p/(1-p)^2 within 5 standard errors
    p = math.exp(-ratio)
    var = 2 * p / (1 - p) ** 2
    fourth = float(np.sum(np.arange(-400, 401) ** 4 * dlap_pmf(np.arange(-400, 401), ratio)))
    se = math.sqrt((fourth - var**2) / draws.size)
    assert abs(np.mean(draws.astype(float) ** 2) - var) < 5 * se


def test_float_epsilon_uses_its_exact_binary_value():
    # epsilon = 0.1 as a float is 3602879701896397 / 2**55: denominators of 2^55, vector path
    mech = SecureDiscreteLaplace(epsilon=0.1)
    assert mech.epsilon == Fraction(3602879701896397, 2**55) != Fraction(1, 10)
    assert mech.scale == 1 / Fraction(0.1)
    draws = sample_dlap_exact(mech.scale.numerator, mech.scale.denominator, 100_000, rng=3)
    assert chi2_pvalue(draws, float(Fraction(0.1))) > ALPHA


def test_pure_python_path_for_huge_denominators():
    # scale (2^64 + 1) / 2^64: numerator and denominator above the vector limit 2^62
    num, den = 2**64 + 1, 2**64
    draws = sample_dlap_exact(num, den, 20_000, rng=random.Random(5))
    assert draws.dtype == np.int64
    assert chi2_pvalue(draws, den / num) > ALPHA


def test_vector_and_scalar_paths_have_the_same_law():
    # same scale 5/2, once reduced (vector path) and once via the scalar reference loop
    bits = secure._Bits(np.random.default_rng(11).bytes)
    scalar = np.array([secure._dlap_scalar(bits, 5, 2) for _ in range(20_000)])
    vector = sample_dlap_exact(5, 2, 100_000, rng=12)
    assert chi2_pvalue(scalar, 2 / 5) > ALPHA
    assert chi2_pvalue(vector, 2 / 5) > ALPHA


def test_scale_is_reduced_and_equals_sensitivity_over_epsilon():
    mech = SecureDiscreteLaplace(epsilon="1/3", sensitivity="1.5")
    assert mech.scale == Fraction(9, 2)
    assert mech.p == pytest.approx(math.exp(-2 / 9), rel=1e-15)
    assert mech.variance == pytest.approx(2 * mech.p / (1 - mech.p) ** 2, rel=1e-12)
    # sample_dlap_exact reduces num/den: the same seed gives the same draws
    assert np.array_equal(sample_dlap_exact(18, 4, 50, rng=1), sample_dlap_exact(9, 2, 50, rng=1))


@pytest.mark.parametrize(
    "epsilon",
    ["1e-10", "0.1", "1", "1.99", "2", "2.01", "10", "100", "700", "745", "746", "1420", "2000", 10**400],
)
def test_variance_at_any_epsilon_matches_mpmath(epsilon):
    """Regression: sinh(epsilon/2) overflowed (OverflowError) beyond epsilon ~ 1420."""
    import mpmath

    mech = SecureDiscreteLaplace(epsilon=epsilon)
    eps = Fraction(epsilon)
    with mpmath.workdps(50):
        ref = float(1 / (2 * mpmath.sinh(mpmath.mpf(eps.numerator) / eps.denominator / 2) ** 2))
    # relative 1e-14, or a few subnormal units where the variance underflows
    assert mech.variance == pytest.approx(ref, rel=1e-14, abs=1e-323)


def test_variance_beyond_the_float_range():
    assert SecureDiscreteLaplace(epsilon=Fraction(1, 10**400)).variance == math.inf  # float(eps) = 0
    assert SecureDiscreteLaplace(epsilon="1e-160").variance == math.inf  # 2e320
    assert SecureDiscreteLaplace(epsilon=10**400).p == 0.0


# ------------------------------------------------------------------ Bernoulli(exp(-gamma))


@pytest.mark.parametrize(
    "gamma", [Fraction(1, 3), 1, "0.5", "2.5", 0.7, Fraction(7, 1000), Fraction(2**64, 2**64 + 3)]
)
def test_bernoulli_exp_binomial(gamma):
    n = 200_000 if Fraction(gamma).denominator < 2**62 else 20_000
    draws = sample_bernoulli_exp(gamma, n, rng=random.Random(21))
    assert draws.dtype == np.bool_ and draws.shape == (n,)
    p = math.exp(-float(Fraction(gamma)))
    assert stats.binomtest(int(draws.sum()), n, p).pvalue > ALPHA


def test_bernoulli_exp_zero_is_always_one_and_scalar_shape():
    assert sample_bernoulli_exp(0, 1000, rng=0).all()
    assert isinstance(sample_bernoulli_exp("1/2", rng=0), np.bool_)
    with pytest.raises(ValueError, match="gamma"):
        sample_bernoulli_exp(-1, 3)


def test_uniform_integers_below_m():
    bits = secure._Bits(np.random.default_rng(4).bytes)
    for m in (3, 200, 2**20 + 7):
        r = bits.below(m, 120_000)
        assert r.min() >= 0 and r.max() < m
        cells = 3 if m != 3 else m
        # residues mod 3 of a uniform on {0..m-1}: exact probabilities
        expected = np.array([len(range(c, m, 3)) for c in range(cells)]) / m * r.size
        observed = np.bincount((r % 3).astype(np.int64), minlength=3)
        assert stats.chisquare(observed, expected).pvalue > ALPHA
    big = 2**62 + 2**61 + 1  # uses 64-bit words, rejects a third of them
    r = bits.below(big, 30_000)
    assert int(r.max()) < big
    assert stats.binomtest(int(np.count_nonzero(r >= 2**62)), r.size, (big - 2**62) / big).pvalue > ALPHA
    ints = [bits.randbelow(10**30) for _ in range(3000)]
    assert max(ints) < 10**30 and min(ints) >= 0
    assert stats.binomtest(sum(i < 10**29 for i in ints), 3000, 0.1).pvalue > ALPHA


# ------------------------------------------------------------------ the OS source and the API


def test_default_source_is_os_urandom(monkeypatch):
    calls = []

    def spy(n):
        calls.append(n)
        return secure.os.urandom(n)

    monkeypatch.setattr(secure, "_os_randbytes", spy)
    mech = SecureDiscreteLaplace(epsilon=1)
    out = mech.randomize([3, 10, -2])
    assert calls, "SecureDiscreteLaplace must draw from the OS byte source"
    assert out.dtype == np.int64 and out.shape == (3,)
    calls.clear()
    sample_dlap_exact(1, 1, 4)
    assert calls
    assert secure._os_randbytes is not secure.os.urandom  # still patched here
    monkeypatch.undo()
    assert secure._os_randbytes is secure.os.urandom


def test_randomize_adds_noise_to_values(seeded_os):
    seeded_os(9)
    x = np.array([[0, 5], [100, -7]])
    out = SecureDiscreteLaplace(epsilon=2).randomize(x)
    seeded_os(9)
    noise = SecureDiscreteLaplace(epsilon=2).sample((2, 2))
    assert np.array_equal(out, x + noise)
    with pytest.raises(ValueError, match=r"values\[1\]"):
        SecureDiscreteLaplace(epsilon=1).randomize([1, 2.5])


def test_shapes_and_reproducibility():
    assert sample_dlap_exact(1, 1, (3, 4), rng=0).shape == (3, 4)
    assert sample_dlap_exact(1, 1, 0, rng=0).shape == (0,)
    assert isinstance(sample_dlap_exact(1, 1, rng=0), np.int64)
    a = sample_dlap_exact(7, 3, 1000, rng=np.random.default_rng(5))
    b = sample_dlap_exact(7, 3, 1000, rng=5)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, sample_dlap_exact(7, 3, 1000, rng=6))
    c = sample_dlap_exact(7, 3, 1000, rng=random.Random(5))
    assert np.array_equal(c, sample_dlap_exact(7, 3, 1000, rng=random.Random(5)))
    assert isinstance(SecureDiscreteLaplace(epsilon=1).sample(), np.int64)
    assert SecureDiscreteLaplace(epsilon=1).sample((2, 3)).shape == (2, 3)
    assert "Fraction(1, 2)" in repr(SecureDiscreteLaplace(epsilon="0.5"))


def test_overflow_is_reported():
    with pytest.raises(OverflowError):
        sample_dlap_exact(2**70, 1, 4, rng=0)  # pure-Python path, draws ~ 2^70
    with pytest.raises(OverflowError):
        sample_dlap_exact(2**62 - 1, 1, 200, rng=0)  # vector path, u + t v beyond int64


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0.5", Fraction(1, 2)),
        ("1/3", Fraction(1, 3)),
        (" 1e-3 ", Fraction(1, 1000)),
        (decimal.Decimal("0.1"), Fraction(1, 10)),
        (0.1, Fraction(0.1)),
        (np.float64(0.25), Fraction(1, 4)),
        (np.int64(2), Fraction(2)),
        (Fraction(3, 7), Fraction(3, 7)),
    ],
)
def test_epsilon_is_converted_exactly(value, expected):
    assert SecureDiscreteLaplace(epsilon=value).epsilon == expected


@pytest.mark.parametrize("bad", [0, -1, "-0.5", "0", float("nan"), float("inf"), "nan", "inf", "abc",
                                 decimal.Decimal("NaN"), "", Fraction(-1, 2)])
def test_bad_epsilon_value(bad):
    with pytest.raises(ValueError, match="epsilon"):
        SecureDiscreteLaplace(epsilon=bad)


@pytest.mark.parametrize("bad", [None, True, 1 + 2j, [1], object()])
def test_bad_epsilon_type(bad):
    with pytest.raises(TypeError, match="epsilon"):
        SecureDiscreteLaplace(epsilon=bad)


def test_bad_sensitivity_and_scale():
    with pytest.raises(ValueError, match="sensitivity"):
        SecureDiscreteLaplace(epsilon=1, sensitivity=0)
    with pytest.raises(TypeError, match="sensitivity"):
        SecureDiscreteLaplace(epsilon=1, sensitivity=None)
    with pytest.raises(ValueError, match="scale_num"):
        sample_dlap_exact(0, 1, 3)
    with pytest.raises(TypeError, match="scale_den"):
        sample_dlap_exact(1, 1.5, 3)
    with pytest.raises(ValueError, match="size"):
        sample_dlap_exact(1, 1, -2)
    with pytest.raises(TypeError, match="rng"):
        sample_dlap_exact(1, 1, 2, rng="seed")


# ------------------------------------------------------------------ the pool (timing decoupled from values)


def test_releases_are_the_exact_stream_in_order_each_value_once(seeded_os):
    # pool_size 8: 20 one-value releases are the first 20 values of three batch draws of 8
    seeded_os(41)
    expected = np.concatenate([sample_dlap_exact(2, 1, 8) for _ in range(3)])
    seeded_os(41)
    mech = SecureDiscreteLaplace(epsilon="1/2", pool_size=8)
    got = np.array([mech.sample() for _ in range(20)])
    assert np.array_equal(got, expected[:20])
    assert mech.pooled == 4
    # a larger request takes the 3 pooled values, then whole new batches (two, in one draw)
    seeded_os(41)
    expected = np.concatenate([sample_dlap_exact(2, 1, 8), sample_dlap_exact(2, 1, 16)])
    seeded_os(41)
    m2 = SecureDiscreteLaplace(epsilon="1/2", pool_size=8)
    first = m2.sample(5)
    rest = m2.sample(13)
    assert np.array_equal(np.concatenate([first, rest]), expected[:18])
    assert m2.pooled == 6


def test_refill_schedule_depends_on_counts_only(monkeypatch, seeded_os):
    seeded_os(42)
    calls = []
    real = secure.sample_dlap_exact

    def spy(a, b, size, *, rng=None):
        calls.append(size)
        return real(a, b, size, rng=rng)

    monkeypatch.setattr(secure, "sample_dlap_exact", spy)
    mech = SecureDiscreteLaplace(epsilon=1, pool_size=16)
    for i in range(50):
        mech.sample()
        assert mech.pooled == (-(i + 1)) % 16  # refills at releases 1, 17, 33, 49
    assert calls == [16, 16, 16, 16]
    mech.refill()  # 14 left: tops up with one more batch
    assert calls[-1] == 16 and mech.pooled == 30
    mech.refill()  # already >= pool_size: nothing drawn
    assert len(calls) == 5


def test_used_noise_is_zeroed_and_never_copied(seeded_os):
    import copy
    import pickle

    seeded_os(43)
    mech = SecureDiscreteLaplace(epsilon="1/4", pool_size=64)
    mech.sample(10)
    assert mech._pos == 10 and not mech._pool[:10].any() and mech._pool[10:].any()
    for clone in (copy.deepcopy(mech), copy.copy(mech), pickle.loads(pickle.dumps(mech))):
        assert clone.pooled == 0 and clone.epsilon == Fraction(1, 4) and clone.pool_size == 64
        assert clone.sample(3).shape == (3,)


def test_forked_child_discards_the_parents_pool(seeded_os):
    seeded_os(44)
    mech = SecureDiscreteLaplace(epsilon=1, pool_size=32)
    mech.refill()
    parent_next = mech._pool[mech._pos : mech._pos + 32].copy()
    mech._pid = -1  # what a child process sees: os.getpid() differs from the recorded pid
    assert mech.pooled == 0
    child = mech.sample(32)
    assert not np.array_equal(child, parent_next)


def test_pooled_single_releases_have_the_dlap_law(seeded_os):
    # 30,000 one-value releases through a small pool (many refills): the law and no serial
    # dependence across consecutive releases (2x2 table of eta_i = 0 and eta_{i+1} = 0)
    seeded_os(45)
    mech = SecureDiscreteLaplace(epsilon="1/2", pool_size=100)
    draws = np.array([mech.sample() for _ in range(30_000)])
    assert chi2_pvalue(draws, 0.5) > ALPHA
    z = draws == 0
    table = np.array([[np.sum(~z[:-1] & ~z[1:]), np.sum(~z[:-1] & z[1:])],
                      [np.sum(z[:-1] & ~z[1:]), np.sum(z[:-1] & z[1:])]])
    assert stats.chi2_contingency(table).pvalue > ALPHA


def test_pool_size_validation():
    with pytest.raises(ValueError, match="pool_size"):
        SecureDiscreteLaplace(epsilon=1, pool_size=0)
    with pytest.raises(TypeError, match="pool_size"):
        SecureDiscreteLaplace(epsilon=1, pool_size=2.5)
