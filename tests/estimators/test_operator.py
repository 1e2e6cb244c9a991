"""The unbiased operator (1)/(2): exact unbiasedness, brute force, variance estimates, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dlap_exact import dlap_support, exact_expectation, exact_expectation_nd

from ldpgraph._validation import dlap_c
from ldpgraph.estimators import (
    MAX_BRUTE_FORCE_EVALUATIONS,
    debias,
    debias_laplace,
    debias_laplace_variance,
    debias_nd,
    debias_nd_variance,
    debias_variance,
)

EPSILONS = [0.3, 1.0, 2.5]


def _functions(eps):
    p = math.exp(-eps)
    return {
        "cubic": lambda d: d.astype(float) ** 3 - 2.0 * d,
        # grows like p^{-|y|/2}: E|f(y)| still finite, the operator must stay exact
        "exp_growth": lambda d: p ** (-np.abs(d) / 2.0),
        "indicator": lambda d: (d == 2).astype(float),
        "step": lambda d: np.where(d >= 1, 3.0, -1.0),
        "sin": lambda d: np.sin(d.astype(float)),
    }


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("name", ["cubic", "exp_growth", "indicator", "step", "sin"])
def test_debias_is_exactly_unbiased(eps, name):
    f = _functions(eps)[name]
    x = np.array([-4, -1, 0, 1, 2, 3, 7])
    # f may grow like p^{-|y|/2}: truncate where pmf * |f| (not just the pmf) is below 1e-15
    mean = exact_expectation(lambda z: debias(f, z, eps), x, eps, tail=1e-32)
    truth = f(x)
    np.testing.assert_allclose(mean, truth, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(truth).max()))


def test_exact_expectation_helper_detects_bias():
    # the plug-in is biased for a quadratic by exactly Var(eta): the checker must see it
    eps = 1.0
    x = np.array([3])
    plug_in = exact_expectation(lambda z: z.astype(float) ** 2, x, eps)
    p = math.exp(-eps)
    assert plug_in[0] - 9.0 == pytest.approx(2 * p / (1 - p) ** 2, rel=1e-12)


def test_support_tail_is_below_threshold():
    k, pmf = dlap_support(0.5)
    assert 1 - math.fsum(pmf) < 1e-14


@pytest.mark.parametrize("sensitivity", [1, 2.5])
def test_debias_with_sensitivity_uses_p_of_eps_over_delta(sensitivity):
    eps = 1.2
    f = lambda d: d.astype(float) ** 2  # noqa: E731
    x = np.array([0, 5])
    mean = exact_expectation(lambda z: debias(f, z, eps, sensitivity), x, eps, sensitivity)
    np.testing.assert_allclose(mean, f(x), rtol=1e-9, atol=1e-9)


def test_debias_matches_closed_form_for_binomial():
    # C(y,2) - c is the estimator for C(x,2) (DESIGN.md §4): independent derivation
    y = np.array([-3, 0, 1, 10])
    eps = 0.7
    got = debias(lambda d: d * (d - 1) / 2.0, y, eps)
    np.testing.assert_allclose(got, y * (y - 1) / 2.0 - dlap_c(eps), rtol=1e-12)


def test_dlap_c_is_stable_for_small_and_large_epsilon():
    for eps in [1e-8, 1e-3, 1.0, 30.0]:
        p = math.exp(-eps)
        ref = p / (-math.expm1(-eps)) ** 2
        assert dlap_c(eps) == pytest.approx(ref, rel=1e-12)
    assert dlap_c(2000.0) == 0.0


@pytest.mark.parametrize("eps", EPSILONS)
def test_debias_nd_is_exactly_unbiased(eps):
    def f(z):
        z = z.astype(float)
        return np.minimum(z[..., 0], z[..., 1]) * np.sin(z[..., -1]) + (z[..., 0] > z[..., -1])

    # the truncated support has ~2*35/eps points per axis: keep the grid below ~10^6 points
    x = np.array([2, 3, 1]) if eps >= 1 else np.array([2, 3])
    mean = exact_expectation_nd(lambda z: debias_nd(f, z, eps), x, eps)
    assert mean == pytest.approx(float(f(x)), rel=1e-9, abs=1e-9)


def test_debias_nd_reduces_to_debias_in_one_dimension():
    f = lambda d: np.cos(d.astype(float)) * d  # noqa: E731
    y = np.array([-2, 0, 5, 9])
    np.testing.assert_allclose(
        debias_nd(lambda z: f(z[..., 0]), y[:, None], 0.8), debias(f, y, 0.8), rtol=1e-12, atol=1e-12
    )


def test_debias_nd_tensorizes_product_functions():
    # f(z) = h1(z1) h2(z2) -> g = g1 g2 because the noises are independent
    h1 = lambda d: d.astype(float) ** 2  # noqa: E731
    h2 = lambda d: np.exp(0.1 * d)  # noqa: E731
    y = np.array([[3, -1], [0, 4], [7, 7]])
    got = debias_nd(lambda z: h1(z[..., 0]) * h2(z[..., 1]), y, 0.9)
    np.testing.assert_allclose(got, debias(h1, y[:, 0], 0.9) * debias(h2, y[:, 1], 0.9), rtol=1e-10)


def test_debias_nd_batch_axes_and_chunking():
    rng = np.random.default_rng(3)
    y = rng.integers(-5, 6, size=(2, 3, 7))
    f = lambda z: np.max(z, axis=-1) + 0.5 * z[..., 0]  # noqa: E731
    got = debias_nd(f, y, 1.1)
    assert got.shape == (2, 3)
    # 3^7 weights of alternating sign: summation order changes the last ~5 digits
    for i in range(2):
        for j in range(3):
            assert got[i, j] == pytest.approx(float(debias_nd(f, y[i, j], 1.1)), rel=1e-9)


def test_debias_nd_refuses_huge_cubes():
    n = round(math.log(MAX_BRUTE_FORCE_EVALUATIONS, 3)) + 1
    with pytest.raises(ValueError, match="fast form"):
        debias_nd(lambda z: z.sum(-1), np.zeros(n, dtype=int), 1.0)


def test_debias_variance_estimate_is_unbiased():
    eps = 0.8
    f = lambda d: np.where(d > 1, d.astype(float) ** 2, 0.5)  # noqa: E731
    x = np.array([-1, 2, 4])
    g_mean_sq = exact_expectation(lambda z: debias(f, z, eps) ** 2, x, eps)
    true_var = g_mean_sq - f(x) ** 2
    est_mean = exact_expectation(lambda z: debias_variance(f, z, eps), x, eps)
    np.testing.assert_allclose(est_mean, true_var, rtol=1e-8)
    assert np.all(true_var > 0)


def test_debias_nd_variance_estimate_is_unbiased():
    eps = 1.3
    f = lambda z: (z[..., 0] * z[..., 1]).astype(float)  # noqa: E731
    x = np.array([2, -1])
    true_var = exact_expectation_nd(lambda z: debias_nd(f, z, eps) ** 2, x, eps) - float(f(x)) ** 2
    est = exact_expectation_nd(lambda z: debias_nd_variance(f, z, eps), x, eps)
    assert est == pytest.approx(true_var, rel=1e-8)


def _laplace_expectation(h, x, b):
    from scipy import integrate

    dens = lambda u: math.exp(-abs(u) / b) / (2 * b)  # noqa: E731
    total = 0.0
    for lo, hi in [(-np.inf, 0.0), (0.0, np.inf)]:
        val, _ = integrate.quad(lambda u: h(x + u) * dens(u), lo, hi, epsabs=1e-12, epsrel=1e-12)
        total += val
    return total


def test_debias_laplace_is_unbiased_by_integration():
    eps, x = 1.5, 2.0
    b = 1 / eps
    f, f2 = (lambda z: z**3 + np.sin(z)), (lambda z: 6 * z - np.sin(z))
    mean = _laplace_expectation(lambda u: float(debias_laplace(f, f2, [u], eps)[0]), x, b)
    assert mean == pytest.approx(x**3 + math.sin(x), rel=1e-8)


def test_debias_laplace_variance_estimate_is_unbiased():
    eps, x = 1.0, 1.5
    f, f1, f2 = (lambda z: z**2), (lambda z: 2 * z), (lambda z: 2 + 0 * z)
    g_sq = _laplace_expectation(lambda u: float(debias_laplace(f, f2, [u], eps)[0]) ** 2, x, 1 / eps)
    true_var = g_sq - x**4
    est = _laplace_expectation(
        lambda u: float(debias_laplace_variance(f, f1, f2, [u], eps)[0]), x, 1 / eps
    )
    assert est == pytest.approx(true_var, rel=1e-7)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        debias(lambda d: d, [1], bad)


def test_bad_epsilon_type():
    with pytest.raises(TypeError, match="epsilon"):
        debias(lambda d: d, [1], "1")


def test_non_integer_reports_name_position():
    with pytest.raises(ValueError, match=r"y\[2\] = 0.5"):
        debias(lambda d: d, [1, 2, 0.5], 1.0)
    with pytest.raises(ValueError, match=r"y\[1, 0\] = nan"):
        debias_nd(lambda z: z.sum(-1), [[1, 2], [np.nan, 1]], 1.0)


def test_wrong_output_shape_of_f():
    with pytest.raises(ValueError, match="shape"):
        debias_nd(lambda z: z, [[1, 2]], 1.0)


def test_bad_sensitivity():
    with pytest.raises(ValueError, match="sensitivity"):
        debias(lambda d: d, [1], 1.0, sensitivity=0)
