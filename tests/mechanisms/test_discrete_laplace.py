"""Tests of the discrete Laplace mechanism: exact law, sampler goodness of fit, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpgraph.mechanisms import DiscreteLaplace

EPSILONS = [1e-3, 0.1, 1.0, 5.0, 30.0]


def _support(t: float, tail: float = 1e-15) -> np.ndarray:
    """Integers k with |k| <= K, where P[|eta| > K] = 2 p^(K+1) / (1+p) < tail, p = e^-t."""
    p = math.exp(-t)
    K = max(1, math.ceil(math.log(tail * (1 + p) / 2) / -t))
    assert 2 * p ** (K + 1) / (1 + p) < tail
    return np.arange(-K, K + 1)


@pytest.mark.parametrize("eps", EPSILONS)
def test_pmf_sums_to_one(eps):
    k = _support(eps)
    assert math.fsum(DiscreteLaplace(epsilon=eps).pmf(k)) == pytest.approx(1.0, abs=2e-15)


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("sensitivity", [1.0, 3.0])
def test_pmf_cdf_sf_match_scipy(eps, sensitivity):
    t = eps / sensitivity
    mech = DiscreteLaplace(epsilon=eps, sensitivity=sensitivity)
    ref = stats.dlaplace(t)
    k = np.unique(np.concatenate([np.arange(-40, 41), _support(t)[:: max(1, len(_support(t)) // 50)]]))
    np.testing.assert_allclose(mech.pmf(k), ref.pmf(k), rtol=1e-10, atol=0)
    # scipy's logpmf is log(pmf) and underflows to -inf far out; compare where it is finite
    finite = ref.pmf(k) > 0
    np.testing.assert_allclose(mech.logpmf(k)[finite], ref.logpmf(k)[finite], rtol=1e-10)
    np.testing.assert_allclose(
        mech.logpmf(k), math.log(math.tanh(t / 2)) - t * np.abs(k), rtol=1e-12
    )
    np.testing.assert_allclose(mech.cdf(k), ref.cdf(k), rtol=1e-10, atol=0)
    # scipy's sf is 1 - cdf (no relative accuracy in the upper tail); use symmetry instead
    np.testing.assert_allclose(mech.sf(k), ref.cdf(-k - 1), rtol=1e-10, atol=0)
    np.testing.assert_allclose(mech.sf(k), ref.sf(k), rtol=1e-10, atol=1e-16)
    # cdf is a step function: constant between integers
    np.testing.assert_allclose(mech.cdf(k + 0.5), mech.cdf(k), rtol=1e-15)
    assert mech.pmf(0.5) == 0.0


@pytest.mark.parametrize("eps", EPSILONS)
def test_variance_and_mean_abs_against_exact_sums(eps):
    mech = DiscreteLaplace(epsilon=eps)
    k = _support(eps)
    w = mech.pmf(k)
    kf = k.astype(np.float64)
    assert mech.variance == pytest.approx(math.fsum(w * kf * kf), rel=1e-10)
    assert mech.expected_abs == pytest.approx(math.fsum(w * np.abs(kf)), rel=1e-10)
    assert mech.variance == pytest.approx(stats.dlaplace(eps).var(), rel=1e-10)
    p = math.exp(-eps)
    assert mech.p == pytest.approx(p, rel=1e-15)
    if eps >= 0.1:  # the textbook forms are accurate away from epsilon -> 0
        assert mech.variance == pytest.approx(2 * p / (1 - p) ** 2, rel=1e-12)
        assert mech.expected_abs == pytest.approx(2 * p / (1 - p * p), rel=1e-12)


@pytest.mark.parametrize("eps, seed", [(0.05, 1), (0.5, 2), (2.0, 3), (8.0, 4)])
def test_samples_chi_square(eps, seed):
    n = 200_000
    mech = DiscreteLaplace(epsilon=eps)
    x = mech.sample(n, rng=seed)
    assert x.dtype == np.int64 and x.shape == (n,)
    # one bin per value while the expected count is >= 5; both tails pooled
    k = np.arange(0, 100_000)
    K = int(k[n * mech.pmf(k) >= 5].max())
    inner = np.arange(-K, K + 1)
    expected = n * mech.pmf(inner)
    observed = np.bincount(np.clip(x, -K - 1, K + 1) + K + 1, minlength=2 * K + 3)
    exp_low = n * mech.cdf(-K - 1)
    exp_high = n * mech.sf(K)
    obs = observed.astype(float)
    exp = np.concatenate([[exp_low], expected, [exp_high]])
    if exp_low < 5:  # pool each tail into its neighbour
        obs = np.concatenate([[obs[0] + obs[1]], obs[2:-2], [obs[-2] + obs[-1]]])
        exp = np.concatenate([[exp[0] + exp[1]], exp[2:-2], [exp[-2] + exp[-1]]])
    assert exp.sum() == pytest.approx(n, rel=1e-12)
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_samples_moments_small_epsilon():
    eps, n = 1e-3, 200_000
    mech = DiscreteLaplace(epsilon=eps)
    x = mech.sample(n, rng=11).astype(np.float64)
    k = _support(eps)
    m4 = math.fsum(mech.pmf(k) * k.astype(np.float64) ** 4)
    var = mech.variance
    assert abs(x.mean()) < 5 * math.sqrt(var / n)
    assert abs(np.mean(x * x) - var) < 5 * math.sqrt((m4 - var * var) / n)


def test_randomize_is_values_plus_noise_and_reproducible():
    mech = DiscreteLaplace(epsilon=1.0)
    values = np.arange(12).reshape(3, 4)
    out = mech.randomize(values, rng=5)
    assert out.shape == (3, 4) and out.dtype == np.int64
    np.testing.assert_array_equal(out - values, mech.sample((3, 4), rng=5))
    np.testing.assert_array_equal(out, mech.randomize(values, rng=5))
    assert not np.array_equal(mech.sample(1000, rng=5), mech.sample(1000, rng=6))
    children = np.random.SeedSequence(0).spawn(2)
    assert not np.array_equal(mech.sample(1000, rng=children[0]), mech.sample(1000, rng=children[1]))
    # whole-valued floats are accepted
    np.testing.assert_array_equal(mech.randomize([1.0, 2.0], rng=1), mech.randomize([1, 2], rng=1))
    assert isinstance(mech.sample(rng=0), np.int64)


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, -math.inf])
def test_bad_epsilon_value(bad):
    with pytest.raises(ValueError, match="epsilon"):
        DiscreteLaplace(epsilon=bad)


@pytest.mark.parametrize("bad", ["1", True, None, [1.0]])
def test_bad_epsilon_type(bad):
    with pytest.raises(TypeError, match="epsilon"):
        DiscreteLaplace(epsilon=bad)


def test_bad_sensitivity():
    with pytest.raises(ValueError, match="sensitivity"):
        DiscreteLaplace(epsilon=1.0, sensitivity=0)
    with pytest.raises(TypeError, match="sensitivity"):
        DiscreteLaplace(epsilon=1.0, sensitivity=False)


def test_randomize_rejects_bad_reports():
    mech = DiscreteLaplace(epsilon=1.0)
    with pytest.raises(ValueError, match=r"values\[2\] = 1.5"):
        mech.randomize([1, 2, 1.5])
    with pytest.raises(ValueError, match=r"values\[1, 0\] = nan"):
        mech.randomize([[1.0, 2.0], [math.nan, 3.0]])
    with pytest.raises(ValueError, match=r"values\[0\] = inf"):
        mech.randomize([math.inf])
    with pytest.raises(TypeError, match="values"):
        mech.randomize([True, False])
    with pytest.raises(TypeError, match="values"):
        mech.randomize(["a", "b"])


def test_positional_epsilon_rejected():
    with pytest.raises(TypeError):
        DiscreteLaplace(1.0)  # keyword-only


# ------------------------------------------------------------------ where the fast sampler's law breaks


def test_bool_and_numpy_bool_refused_as_parameters():
    for b in (True, np.bool_(True)):
        with pytest.raises(TypeError, match="epsilon"):
            DiscreteLaplace(epsilon=b)
        with pytest.raises(TypeError, match="sensitivity"):
            DiscreteLaplace(epsilon=1.0, sensitivity=b)


@pytest.mark.parametrize(("eps", "sens"), [(1e-16, 1.0), (9.8e-15, 1.0), (1e-6, 1e9)])
def test_fast_sampler_refuses_noise_beyond_2_52(eps, sens):
    mech = DiscreteLaplace(epsilon=eps, sensitivity=sens)
    assert mech.fast_noise_bound >= 2**52
    with pytest.raises(ValueError, match=r"too small to sample.*2\*\*52.*exact sampler.*secure=True"):
        mech.sample(10, rng=0)
    with pytest.raises(ValueError, match="exact sampler"):
        mech.randomize([0, 1], rng=0)


def test_exact_sampler_still_serves_tiny_epsilon():
    # the refusal points to it: secure=True works at eps = 1e-16 and has both parities
    eta = DiscreteLaplace(epsilon=1e-16).sample(40, secure=True)
    assert eta.dtype == np.int64 and len(set((eta % 2).tolist())) == 2


def test_just_above_the_limit_every_parity_appears():
    # t = 1.1e-14: noise up to ~4.1e15 < 2**52, every integer representable; parities balanced
    eta = DiscreteLaplace(epsilon=1.1e-14).sample(20_000, rng=1)
    odd = int(np.count_nonzero(eta % 2))
    assert abs(odd - 10_000) < 5 * math.sqrt(5_000)  # binomial(20000, 1/2): 5 sd


class _MaxExponential:
    """A generator stub whose exponentials are all numpy's largest, E_max = r + 53 ln 2."""

    def standard_exponential(self, shape):
        u = (2**53 - 1) * (1.0 / 2**53)  # numpy's largest next_double
        return np.full(shape, 7.69711747013104972 - np.log1p(-u))

    def bytes(self, n):
        return b"\x00" * n


@pytest.mark.parametrize(("eps", "sens"), [(1.0, 1.0), (0.1, 1.0), (0.05, 3.0), (1e-6, 1.0), (30.0, 1.0)])
def test_fast_noise_bound_is_what_the_sampler_draws_at_the_largest_exponential(eps, sens):
    from ldpgraph.mechanisms.discrete_laplace import sample_dlap as _sample_dlap

    mech = DiscreteLaplace(epsilon=eps, sensitivity=sens)
    out = _sample_dlap(_MaxExponential(), (4,), mech._t, mech.p)
    assert np.all(np.abs(out) == mech.fast_noise_bound)
    t = eps / sens
    assert mech.fast_noise_bound == pytest.approx((44.4339 + math.log(2 / (1 + math.exp(-t)))) / t, rel=1e-5, abs=1.0)
    # the exact law puts mass ~1e-19 beyond it: invisible to sampling, documented as a delta
    assert mech.fast_tail_mass == pytest.approx(2 * mech.sf(mech.fast_noise_bound), rel=1e-12)
    assert 1e-21 < mech.fast_tail_mass < 1e-19 or t > 20


def test_numpy_exponential_stays_below_the_documented_maximum():
    e = np.random.default_rng(3).standard_exponential(10**6)
    assert e.max() < 7.69711747013104972 + 53 * math.log(2)


def test_one_draw_takes_the_vector_path_values_and_stream():
    """sample_dlap's scalar path (one draw: a node's noise) gives the vector path's value and leaves the
    generator where the vector path does (the sign: the first bit of ``gen.bytes(1)``)."""
    from ldpgraph.mechanisms.discrete_laplace import sample_dlap

    for seed in range(3000):
        t = (0.05, 0.7, 2.0, 9.0)[seed % 4]
        p = math.exp(-t)
        scalar, vector = np.random.default_rng(seed), np.random.default_rng(seed)
        for shape in ((1,), (), 1):
            a = sample_dlap(scalar, shape, t, p)
            b = sample_dlap(vector, (1,), t, p, out=np.empty(1, dtype=np.int64))  # the in-place vector path
            assert a.dtype == np.int64 and a.shape == np.empty(shape).shape and int(a.reshape(-1)[0]) == int(b[0])
        assert scalar.bytes(5) == vector.bytes(5) and scalar.random() == vector.random()
