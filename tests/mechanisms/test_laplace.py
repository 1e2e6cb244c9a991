"""Tests of the continuous Laplace mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from ldpgraph.mechanisms import Laplace

CASES = [(1e-3, 1.0), (0.1, 1.0), (1.0, 1.0), (1.0, 2.5), (30.0, 1.0)]


@pytest.mark.parametrize("eps, delta", CASES)
def test_law_matches_scipy(eps, delta):
    mech = Laplace(epsilon=eps, sensitivity=delta)
    b = delta / eps
    ref = stats.laplace(scale=b)
    z = np.linspace(-40 * b, 40 * b, 801)
    np.testing.assert_allclose(mech.pdf(z), ref.pdf(z), rtol=1e-12)
    np.testing.assert_allclose(mech.logpdf(z), ref.logpdf(z), rtol=1e-12, atol=1e-12)
    lower = z <= 0
    np.testing.assert_allclose(mech.cdf(z[lower]), ref.cdf(z[lower]), rtol=1e-12)
    np.testing.assert_allclose(mech.sf(z[~lower]), ref.sf(z[~lower]), rtol=1e-12)
    np.testing.assert_allclose(mech.cdf(z), ref.cdf(z), rtol=1e-12, atol=1e-16)
    assert mech.scale == pytest.approx(b, rel=1e-15)
    assert mech.variance == pytest.approx(ref.var(), rel=1e-12)
    assert mech.expected_abs == pytest.approx(ref.expect(abs), rel=1e-8)


@pytest.mark.parametrize("eps, delta", [(0.5, 1.0), (2.0, 3.0)])
def test_pdf_integrates_to_one_and_moments(eps, delta):
    mech = Laplace(epsilon=eps, sensitivity=delta)
    total = 2 * integrate.quad(mech.pdf, 0, np.inf)[0]
    second = 2 * integrate.quad(lambda z: z * z * mech.pdf(z), 0, np.inf)[0]
    first = 2 * integrate.quad(lambda z: z * mech.pdf(z), 0, np.inf)[0]
    assert total == pytest.approx(1.0, rel=1e-10)
    assert second == pytest.approx(mech.variance, rel=1e-10)
    assert first == pytest.approx(mech.expected_abs, rel=1e-10)


@pytest.mark.parametrize("eps, delta, seed", [(1e-3, 1.0, 1), (0.3, 1.0, 2), (1.0, 4.0, 3), (30.0, 1.0, 4)])
def test_samples_ks(eps, delta, seed):
    mech = Laplace(epsilon=eps, sensitivity=delta)
    x = mech.sample(100_000, rng=seed)
    assert x.dtype == np.float64 and x.shape == (100_000,)
    assert stats.kstest(x, mech.cdf).pvalue > 1e-3
    # the sign is fair: the count of positives is within 5 binomial standard errors of n/2
    assert abs((x > 0).sum() - 50_000) < 5 * math.sqrt(100_000 / 4)


def test_samples_ks_detects_wrong_scale():
    x = Laplace(epsilon=1.05).sample(100_000, rng=1)
    assert stats.kstest(x, Laplace(epsilon=1.0).cdf).pvalue < 1e-3


def test_sample_shapes_and_reproducibility():
    mech = Laplace(epsilon=1.0)
    assert mech.sample((2, 3), rng=0).shape == (2, 3)
    assert isinstance(mech.sample(rng=0), np.float64)
    np.testing.assert_array_equal(mech.sample(100, rng=7), mech.sample(100, rng=7))
    assert not np.array_equal(mech.sample(100, rng=7), mech.sample(100, rng=8))
    values = np.array([[1.0, -2.0], [0.5, 3.0]])
    out = mech.randomize(values, rng=9)
    np.testing.assert_allclose(out - values, mech.sample((2, 2), rng=9), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(mech.randomize([1, 2], rng=9), mech.randomize([1.0, 2.0], rng=9))


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf])
def test_bad_epsilon_value(bad):
    with pytest.raises(ValueError, match="epsilon"):
        Laplace(epsilon=bad)


@pytest.mark.parametrize("bad", ["1", True, None])
def test_bad_epsilon_type(bad):
    with pytest.raises(TypeError, match="epsilon"):
        Laplace(epsilon=bad)


def test_bad_sensitivity_and_values():
    with pytest.raises(ValueError, match="sensitivity"):
        Laplace(epsilon=1.0, sensitivity=-2)
    mech = Laplace(epsilon=1.0)
    with pytest.raises(ValueError, match=r"values\[1\] = nan"):
        mech.randomize([0.0, math.nan])
    with pytest.raises(ValueError, match=r"values\[0, 1\] = -inf"):
        mech.randomize([[0.0, -math.inf]])
    with pytest.raises(TypeError, match="values"):
        mech.randomize([True])
    with pytest.raises(TypeError, match="values"):
        mech.randomize(["x"])
    with pytest.raises(TypeError, match="rng"):
        mech.sample(3, rng="seed")


def test_laws_reject_complex_input():
    """Regression: complex points were cast to float with a ComplexWarning (imaginary part dropped).

    Covers the laws that share the helper: Laplace, its conversion density, and DiscreteLaplace."""
    from ldpgraph.mechanisms import DiscreteLaplace, laplace_conversion_density

    lap, dl = Laplace(epsilon=1.0), DiscreteLaplace(epsilon=1.0)
    laws = (lap.pdf, lap.logpdf, lap.cdf, lap.sf, dl.pmf, dl.logpmf, dl.cdf, dl.sf,
            lambda z: laplace_conversion_density(z, 1.0))  # fmt: skip
    for law in laws:
        for bad in (np.array([1 + 2j]), 2j, np.array(["0.5"]), np.array([None], dtype=object)):
            with pytest.raises(TypeError, match="real numbers"):
                law(bad)
    # real inputs of any numeric dtype, including object arrays and Python ints beyond float64
    z = np.array([0, 3, -(10**400)], dtype=object)
    assert lap.pdf(z).tolist() == [0.5, lap.pdf(3.0), 0.0]
    assert dl.cdf(z).tolist() == [dl.cdf(0), dl.cdf(3), 0.0]
    assert lap.cdf(np.array([True, False])).tolist() == lap.cdf([1.0, 0.0]).tolist()
