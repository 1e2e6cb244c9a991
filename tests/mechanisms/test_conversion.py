"""Tests of the exact DLap -> Laplace / staircase conversions by post-processing."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from ldpgraph.mechanisms import (
    DiscreteLaplace,
    Laplace,
    Staircase,
    laplace_conversion_density,
    staircase_conversion_density,
    to_laplace,
    to_staircase,
)

EPSILONS = [1e-3, 0.1, 1.0, 5.0, 30.0]
GAMMAS = [None, 0.0, 0.2, 0.5, 0.7, 1.0]


def _T(f, y, p):
    """The stencil of DESIGN.md (1) applied to a density f with unit shifts."""
    c = p / (1 - p) ** 2
    return f(y) - c * (f(y + 1) - 2 * f(y) + f(y - 1))


def _dlap_convolve(q, z, t, tail=1e-15):
    """sum_k P[eta = k] q(z - k) with eta ~ DLap(e^-t), over the support truncated at `tail`."""
    p = math.exp(-t)
    z = np.atleast_1d(z)
    K = max(math.ceil(np.abs(z).max()) + 2, math.ceil(math.log(tail * (1 + p) / 2) / -t))
    k = np.arange(-K, K + 1)
    pmf = stats.dlaplace(t).pmf(k)
    return np.array([math.fsum(pmf * q(zi - k)) for zi in z])


def _grid_avoiding(breaks, lo=-6.0, hi=6.0, n=240, margin=1e-6):
    """Points in [lo, hi] whose fractional part keeps away from the given breakpoints mod 1."""
    z = np.linspace(lo, hi, n) + 0.0123
    frac = np.mod(z, 1.0)
    ok = np.ones_like(z, dtype=bool)
    for b in breaks:
        dist = np.abs(frac - np.mod(b, 1.0))
        ok &= np.minimum(dist, 1 - dist) > margin
    return z[ok]


# ---------------------------------------------------------------------------- Laplace density
@pytest.mark.parametrize("eps", EPSILONS)
def test_laplace_q_formula_nonnegative_and_normalised(eps):
    y = np.linspace(-1.5, 1.5, 301)
    q = laplace_conversion_density(y, eps)
    with mpmath.workdps(50):
        p = mpmath.exp(-mpmath.mpf(eps))
        ref = [
            float(mpmath.log(1 / p) / (2 * (1 - p) ** 2) * (p ** abs(mpmath.mpf(v)) - p ** (2 - abs(mpmath.mpf(v)))))
            if abs(v) <= 1
            else 0.0
            for v in y
        ]
    np.testing.assert_allclose(q, ref, rtol=1e-11, atol=1e-300)
    assert (q >= 0).all()
    assert (q[np.abs(y) > 1] == 0).all()
    total = 2 * integrate.quad(lambda v: laplace_conversion_density(v, eps), 0, 1, epsabs=0, epsrel=1e-13)[0]
    assert total == pytest.approx(1.0, rel=1e-11)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_laplace_q_is_T_applied_to_the_laplace_density(eps):
    y = np.linspace(-2.5, 2.5, 501)
    f = Laplace(epsilon=eps).pdf
    expected = _T(f, y, math.exp(-eps))
    scale = np.abs(expected).max()
    np.testing.assert_allclose(laplace_conversion_density(y, eps), expected, rtol=0, atol=1e-10 * scale)


@pytest.mark.parametrize("eps", EPSILONS)
def test_laplace_convolution_identity(eps):
    """sum_k P[eta = k] q(z - k) = Lap(1/eps) density at every z (q is continuous)."""
    z = np.linspace(-6.0, 6.0, 97) + 0.01
    conv = _dlap_convolve(lambda y: laplace_conversion_density(y, eps), z, eps)
    np.testing.assert_allclose(conv, Laplace(epsilon=eps).pdf(z), rtol=1e-10)


def test_laplace_convolution_identity_with_sensitivity():
    eps, delta = 1.2, 3.0
    z = np.linspace(-5, 5, 41) + 0.03
    q = lambda y: laplace_conversion_density(y, eps, sensitivity=delta)  # noqa: E731
    conv = _dlap_convolve(q, z, eps / delta)
    np.testing.assert_allclose(conv, Laplace(epsilon=eps, sensitivity=delta).pdf(z), rtol=1e-10)


# ---------------------------------------------------------------------------- staircase density
@pytest.mark.parametrize("eps", [0.05, 1.0, 4.0])
@pytest.mark.parametrize("gamma", GAMMAS)
def test_staircase_q_is_T_f_nonnegative_and_normalised(eps, gamma):
    mech = Staircase(epsilon=eps, gamma=gamma)
    g = mech.gamma
    y = _grid_avoiding([0.0, g, 1 - g], lo=-2.5, hi=2.5, n=1001)
    q = staircase_conversion_density(y, eps, gamma)
    expected = _T(mech.pdf, y, math.exp(-eps))
    np.testing.assert_allclose(q, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
    assert (q >= 0).all()
    # support |y| < max(gamma, 1 - gamma)
    assert (q[np.abs(y) > max(g, 1 - g)] == 0).all()
    assert (q[np.abs(y) < max(g, 1 - g) - 1e-6] > 0).all()
    pts = sorted({0.0, min(g, 1 - g), max(g, 1 - g), 1.0})
    total = 2 * math.fsum(
        integrate.quad(lambda v: staircase_conversion_density(v, eps, gamma), lo, hi)[0]
        for lo, hi in zip(pts[:-1], pts[1:], strict=True)
    )
    assert total == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("eps", [0.05, 1.0, 4.0])
@pytest.mark.parametrize("gamma", GAMMAS)
def test_staircase_convolution_identity(eps, gamma):
    mech = Staircase(epsilon=eps, gamma=gamma)
    g = mech.gamma
    z = _grid_avoiding([0.0, g, 1 - g, -g], n=121)
    conv = _dlap_convolve(lambda y: staircase_conversion_density(y, eps, gamma), z, eps)
    np.testing.assert_allclose(conv, mech.pdf(z), rtol=1e-10)


@pytest.mark.parametrize("delta", [1.5, 2.0, 3.0])
@pytest.mark.parametrize("gamma", [None, 0.0, 0.3, 0.5, 0.8])
def test_staircase_with_sensitivity_above_one_has_no_conversion(delta, gamma):
    """T f_gamma (with DLap(e^{-eps/delta}) on the integers) goes negative: nothing to sample."""
    eps = 1.0
    mech = Staircase(epsilon=eps, gamma=gamma, sensitivity=delta)
    y = np.linspace(-8, 8, 16001) + 1e-4
    q = _T(mech.pdf, y, math.exp(-eps / delta))
    assert q.min() < -0.05 * q.max()
    with pytest.raises(ValueError, match="sensitivity"):
        to_staircase([0, 1], eps, gamma, sensitivity=delta)
    with pytest.raises(ValueError, match="no post-processing conversion exists"):
        staircase_conversion_density(0.0, eps, gamma, sensitivity=delta)


# ---------------------------------------------------------------------------- samplers
def _H(s, eps):
    """cdf of |Y| for the Laplace conversion: (1 - p^s)(1 - p^{2-s}) / (1-p)^2."""
    p = math.exp(-eps)
    return (1 - p**s) * (1 - p ** (2 - s)) / (1 - p) ** 2


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_laplace_conversion_noise_alone_ks(eps):
    for s in [0.1, 0.5, 0.9]:  # the closed-form cdf used below is the integral of q
        assert _H(s, eps) == pytest.approx(
            2 * integrate.quad(lambda v: laplace_conversion_density(v, eps), 0, s)[0], rel=1e-10
        )
    noise = to_laplace(np.zeros(100_000, dtype=np.int64), eps, rng=3)
    assert np.abs(noise).max() <= 1
    cdf = lambda y: 0.5 + 0.5 * np.sign(y) * _H(np.minimum(np.abs(y), 1.0), eps)  # noqa: E731
    assert stats.kstest(noise, cdf).pvalue > 1e-3


@pytest.mark.parametrize("eps, delta, seed", [(1e-3, 1.0, 1), (0.3, 1.0, 2), (1.0, 1.0, 3), (5.0, 1.0, 4), (1.0, 2.0, 5)])
def test_to_laplace_ks(eps, delta, seed):
    rng = np.random.default_rng(seed)
    x = np.full(100_000, 7)
    noisy = DiscreteLaplace(epsilon=eps, sensitivity=delta).randomize(x, rng=rng)
    out = to_laplace(noisy, eps, sensitivity=delta, rng=rng)
    assert out.dtype == np.float64 and out.shape == x.shape
    assert np.abs(out - noisy).max() <= 1
    assert stats.kstest(out - x, Laplace(epsilon=eps, sensitivity=delta).cdf).pvalue > 1e-3


def test_to_laplace_ks_detects_wrong_noise():
    rng = np.random.default_rng(0)
    noisy = DiscreteLaplace(epsilon=1.0).sample(100_000, rng=rng)
    out = to_laplace(noisy, 2.0, rng=rng)  # the conversion noise for another epsilon
    assert stats.kstest(out, Laplace(epsilon=1.0).cdf).pvalue < 1e-3
    out = noisy + rng.uniform(-0.5, 0.5, noisy.shape)  # the naive "dequantisation"
    assert stats.kstest(out, Laplace(epsilon=1.0).cdf).pvalue < 1e-3


@pytest.mark.parametrize(
    "eps, gamma, seed",
    [(0.05, None, 1), (1.0, None, 2), (1.0, 0.0, 3), (1.0, 0.2, 4), (2.0, 0.5, 5), (2.0, 0.7, 6), (4.0, 1.0, 7)],
)
def test_to_staircase_ks(eps, gamma, seed):
    rng = np.random.default_rng(seed)
    x = np.full(100_000, -3)
    noisy = DiscreteLaplace(epsilon=eps).randomize(x, rng=rng)
    out = to_staircase(noisy, eps, gamma, rng=rng)
    assert out.dtype == np.float64 and out.shape == x.shape
    g = Staircase(epsilon=eps, gamma=gamma).gamma
    assert np.abs(out - noisy).max() <= max(g, 1 - g)
    assert stats.kstest(out - x, Staircase(epsilon=eps, gamma=gamma).cdf).pvalue > 1e-3


def test_to_staircase_ks_detects_wrong_gamma():
    rng = np.random.default_rng(0)
    noisy = DiscreteLaplace(epsilon=2.0).sample(100_000, rng=rng)
    out = to_staircase(noisy, 2.0, 0.2, rng=rng)
    assert stats.kstest(out, Staircase(epsilon=2.0, gamma=0.5).cdf).pvalue < 1e-3


# ---------------------------------------------------------------------------- API and errors
def test_reproducible_and_shape_preserving():
    noisy = np.arange(-6, 6).reshape(3, 4)
    for conv in (lambda r: to_laplace(noisy, 0.7, rng=r), lambda r: to_staircase(noisy, 0.7, rng=r)):
        assert conv(1).shape == (3, 4)
        np.testing.assert_array_equal(conv(1), conv(1))
        assert not np.array_equal(conv(1), conv(2))
    np.testing.assert_array_equal(to_laplace([1.0, 2.0], 1.0, rng=4), to_laplace([1, 2], 1.0, rng=4))


@pytest.mark.parametrize("func", [to_laplace, to_staircase])
def test_bad_reports(func):
    with pytest.raises(ValueError, match=r"noisy\[1\] = 2.5"):
        func([1, 2.5, 3], 1.0)
    with pytest.raises(ValueError, match=r"noisy\[0, 1\] = nan"):
        func([[1.0, math.nan]], 1.0)
    with pytest.raises(ValueError, match=r"noisy\[0\] = inf"):
        func([math.inf], 1.0)
    with pytest.raises(TypeError, match="noisy"):
        func([True, False], 1.0)
    with pytest.raises(TypeError, match="noisy"):
        func(["1"], 1.0)


@pytest.mark.parametrize("func", [to_laplace, to_staircase, laplace_conversion_density, staircase_conversion_density])
def test_bad_epsilon(func):
    for bad in [0.0, -1.0, math.nan, math.inf]:
        with pytest.raises(ValueError, match="epsilon"):
            func([0], bad)
    for bad in ["1", True]:
        with pytest.raises(TypeError, match="epsilon"):
            func([0], bad)


@pytest.mark.parametrize("func", [to_staircase, staircase_conversion_density])
def test_bad_gamma(func):
    for bad in [-0.01, 1.01, math.nan]:
        with pytest.raises(ValueError, match="gamma"):
            func([0], 1.0, bad)
    for bad in ["0.5", True]:
        with pytest.raises(TypeError, match="gamma"):
            func([0], 1.0, bad)


def test_scalar_reports():
    for conv in (to_laplace, to_staircase):
        out = conv(4, 1.0, rng=0)
        assert out.shape == () and abs(out - 4) <= 1
        assert conv(np.zeros((0, 3), dtype=np.int64), 1.0, rng=0).shape == (0, 3)
