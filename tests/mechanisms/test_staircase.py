"""Tests of the staircase mechanism, one- and d-dimensional."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, optimize, stats

from ldpgraph.mechanisms import Staircase
from ldpgraph.mechanisms.staircase import _sample_radius

# (epsilon, gamma, sensitivity)
CASES_1D = [
    (0.1, None, 1.0),
    (1.0, 0.3, 1.0),
    (1.0, 0.0, 2.0),
    (1.0, 1.0, 1.0),
    (3.0, 0.8, 0.5),
    (10.0, None, 1.0),
]


def _levels(eps: float, g: float, delta: float, tail: float = 1e-17) -> np.ndarray:
    """Breakpoints k Delta and (k + g) Delta up to the radius where b^k < tail."""
    kmax = math.ceil(-math.log(tail) / eps) + 1
    k = np.arange(kmax + 1, dtype=np.float64)
    return np.unique(np.concatenate([k, k + g]) * delta)


def _quad_pieces(func, levels) -> float:
    return math.fsum(integrate.quad(func, lo, hi)[0] for lo, hi in zip(levels[:-1], levels[1:], strict=True))


def _a_design(d: int, eps: float, g: float, delta: float) -> float:
    """DESIGN.md: a = d! / (2^d Delta^d sum_k C(d,k) c_{d-k} (b + (1-b) g^k)), with mpmath."""
    with mpmath.workdps(40):
        b = mpmath.exp(-mpmath.mpf(eps))

        def c(k):
            return 1 / (1 - b) if k == 0 else mpmath.polylog(-k, b)

        s = sum(math.comb(d, k) * c(d - k) * (b + (1 - b) * mpmath.mpf(g) ** k) for k in range(1, d + 1))
        return float(mpmath.factorial(d) / (2**d * mpmath.mpf(delta) ** d * s))


# ---------------------------------------------------------------------------- dim 1: exact law
@pytest.mark.parametrize("eps, gamma, delta", CASES_1D)
def test_pdf_moments_and_cdf_by_numerical_integration(eps, gamma, delta):
    mech = Staircase(epsilon=eps, gamma=gamma, sensitivity=delta)
    lv = _levels(eps, mech.gamma, delta)
    assert 2 * _quad_pieces(mech.pdf, lv) == pytest.approx(1.0, rel=1e-10)
    assert 2 * _quad_pieces(lambda z: z * mech.pdf(z), lv) == pytest.approx(mech.expected_abs, rel=1e-10)
    assert 2 * _quad_pieces(lambda z: z * z * mech.pdf(z), lv) == pytest.approx(mech.variance, rel=1e-10)
    # cdf at a few points against the integral of the pdf
    for z in [0.3 * delta, 1.7 * delta, 4.05 * delta]:
        inner = lv[lv < z]
        expected = 0.5 + _quad_pieces(mech.pdf, np.append(inner, z))
        assert mech.cdf(z) == pytest.approx(expected, rel=1e-10)
        tail = _quad_pieces(mech.pdf, np.insert(lv[lv > z], 0, z))  # no cancellation
        assert mech.cdf(-z) == pytest.approx(tail, rel=1e-10)
        assert mech.sf(z) == pytest.approx(tail, rel=1e-10)
    # the normalising constant of DESIGN.md, d = 1 and general-d forms
    b = math.exp(-eps)
    g = mech.gamma
    a_1d = (1 - b) / (2 * delta * (g + (1 - g) * b))
    assert mech.normalizing_constant == pytest.approx(a_1d, rel=1e-12)
    assert mech.normalizing_constant == pytest.approx(_a_design(1, eps, g, delta), rel=1e-12)


def test_pdf_values_and_staircase_shape():
    eps, g, delta = 1.0, 0.25, 2.0
    mech = Staircase(epsilon=eps, gamma=g, sensitivity=delta)
    a = mech.normalizing_constant
    b = math.exp(-eps)
    # |z| in [k, k+g) Delta -> a b^k, in [k+g, k+1) Delta -> a b^{k+1}
    z = np.array([0.0, 0.49, 0.5, 1.99, 2.0, 2.49, 2.5, -2.5, -0.49])
    expected = a * np.array([1, 1, b, b, b, b, b * b, b * b, 1])
    np.testing.assert_allclose(mech.pdf(z), expected, rtol=1e-14)


def test_gamma_zero_and_one_are_the_same_law():
    z = np.linspace(-7.3, 7.3, 1001)
    m0, m1 = Staircase(epsilon=0.7, gamma=0.0), Staircase(epsilon=0.7, gamma=1.0)
    np.testing.assert_allclose(m0.pdf(z), m1.pdf(z), rtol=1e-13)
    np.testing.assert_allclose(m0.cdf(z), m1.cdf(z), rtol=1e-13)
    assert m0.variance == pytest.approx(m1.variance, rel=1e-13)
    assert m0.normalizing_constant == pytest.approx(m1.normalizing_constant / math.exp(-0.7))


@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1.0, 2.5])
def test_default_gamma_and_expected_abs_closed_form(eps, delta):
    mech = Staircase(epsilon=eps, sensitivity=delta)
    assert mech.gamma == pytest.approx(1 / (1 + math.exp(eps / 2)), rel=1e-14)
    # Geng et al.: E|X| = Delta e^{eps/2} / (e^eps - 1) at gamma*
    assert mech.expected_abs == pytest.approx(delta * math.exp(eps / 2) / math.expm1(eps), rel=1e-12)


def _argmin(func) -> float:
    res = optimize.minimize_scalar(func, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-12})
    return float(res.x)


@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 3.0, 10.0])
def test_optimal_gamma_abs_is_the_minimiser(eps):
    g_star = Staircase.optimal_gamma(eps)
    assert g_star == pytest.approx(1 / (1 + math.exp(eps / 2)), rel=1e-14)
    assert _argmin(lambda g: Staircase(epsilon=eps, gamma=g).expected_abs) == pytest.approx(
        g_star, abs=1e-5
    )


@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 3.0, 10.0, 30.0])
def test_optimal_gamma_variance_is_a_minimum_and_not_gamma_star(eps):
    g_var = Staircase.optimal_gamma(eps, "variance")
    g_star = Staircase.optimal_gamma(eps, "abs")

    def var(g):
        return Staircase(epsilon=eps, gamma=g).variance

    assert 0 < g_var < 1
    assert _argmin(var) == pytest.approx(g_var, rel=1e-4, abs=1e-7)
    h = 1e-3 * g_var
    assert var(g_var - h) > var(g_var) and var(g_var + h) > var(g_var)
    # stationarity: the central difference quotient vanishes to second order
    deriv_scale = (var(g_var + h) - var(g_var - h)) / (2 * h)
    curvature = (var(g_var + h) - 2 * var(g_var) + var(g_var - h)) / h**2
    assert abs(deriv_scale) < 1e-3 * abs(curvature) * g_var + 1e-9 * var(g_var)
    if eps >= 0.5:
        assert abs(g_var - g_star) > 0.02 * g_var
        assert var(g_var) < var(g_star)


def test_optimal_gamma_bad_criterion():
    with pytest.raises(ValueError, match="criterion"):
        Staircase.optimal_gamma(1.0, "median")
    with pytest.raises(ValueError, match="epsilon"):
        Staircase.optimal_gamma(-1.0)


# ---------------------------------------------------------------------------- dim 1: sampler
@pytest.mark.parametrize(
    "eps, gamma, delta, seed",
    [
        (0.05, None, 1.0, 1),
        (1.0, 0.3, 1.0, 2),
        (1.0, 0.0, 2.0, 3),
        (1.0, 1.0, 1.0, 4),
        (2.0, 0.9, 0.5, 5),
        (30.0, None, 1.0, 6),
    ],
)
def test_samples_ks(eps, gamma, delta, seed):
    mech = Staircase(epsilon=eps, gamma=gamma, sensitivity=delta)
    x = mech.sample(50_000, rng=seed)
    assert x.shape == (50_000,) and x.dtype == np.float64
    assert stats.kstest(x, mech.cdf).pvalue > 1e-3
    assert abs((x > 0).sum() - 25_000) < 5 * math.sqrt(50_000 / 4)


def test_samples_ks_detects_wrong_gamma():
    x = Staircase(epsilon=2.0, gamma=0.3).sample(50_000, rng=1)
    assert stats.kstest(x, Staircase(epsilon=2.0, gamma=0.5).cdf).pvalue < 1e-3


@pytest.mark.parametrize("eps, gamma, seed", [(0.5, 0.2, 1), (2.0, 0.7, 2), (1.0, 1.0, 3)])
def test_radius_sampler_in_one_dimension_matches_algorithm_1_law(eps, gamma, seed):
    mech = Staircase(epsilon=eps, gamma=gamma)
    b, u = math.exp(-eps), -math.expm1(-eps)
    r = _sample_radius(np.random.default_rng(seed), (50_000,), 1, eps, b, u, mech._g)
    assert stats.kstest(r, mech.radius_cdf).pvalue > 1e-3
    z = np.linspace(0, 9, 37)
    np.testing.assert_allclose(mech.radius_cdf(z), 2 * mech.cdf(z) - 1, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------------------- dim d
def _orthant_rule(d: int, levels: np.ndarray, n_nodes: int):
    """Cartesian quadrature on {x >= 0, sum x < levels[-1]} exact for piecewise polynomials of
    degree < 2 n_nodes on the slabs between the level sets sum x = level (Gauss-Legendre on
    each piece of each axis, breakpoints where the partial sum crosses a level)."""
    t, w = np.polynomial.legendre.leggauss(n_nodes)
    top = levels[-1]

    def rule(m, s):
        if m == 0:
            return np.zeros((1, 0)), np.ones(1)
        cuts = levels[(levels > s) & (levels <= top)] - s
        cuts = np.concatenate([[0.0], cuts])
        pts, wts = [], []
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            xs = lo + (hi - lo) * (t + 1) / 2
            ws = w * (hi - lo) / 2
            for x, wx in zip(xs, ws, strict=True):
                p, q = rule(m - 1, s + x)
                pts.append(np.column_stack([np.full(len(q), x), p]))
                wts.append(wx * q)
        return np.concatenate(pts), np.concatenate(wts)

    return rule(d, 0.0)


@pytest.mark.parametrize("d, eps, gamma, delta", [(2, 2.0, None, 1.0), (2, 3.0, 0.7, 2.0), (3, 3.0, 0.4, 1.0)])
def test_multidim_normalisation_and_moments_by_cartesian_integration(d, eps, gamma, delta):
    mech = Staircase(epsilon=eps, gamma=gamma, sensitivity=delta, dim=d)
    lv = _levels(eps, mech.gamma, delta, tail=1e-16)
    pts, wts = _orthant_rule(d, lv, n_nodes=d)
    f = mech.pdf(pts)
    assert 2**d * math.fsum(wts * f) == pytest.approx(1.0, rel=1e-9)
    assert 2**d * math.fsum(wts * f * pts[:, 0] ** 2) == pytest.approx(mech.variance, rel=1e-9)
    assert 2**d * math.fsum(wts * f * pts[:, 0]) == pytest.approx(mech.expected_abs, rel=1e-9)
    assert mech.normalizing_constant == pytest.approx(_a_design(d, eps, mech.gamma, delta), rel=1e-12)
    assert mech.pdf(np.zeros(d)) == pytest.approx(mech.normalizing_constant, rel=1e-14)


@pytest.mark.parametrize(
    "d, eps, gamma, delta",
    [(2, 0.5, None, 1.0), (2, 1.0, 0.0, 1.0), (3, 1.0, 0.5, 1.5), (3, 4.0, 0.9, 1.0), (5, 0.7, 0.3, 1.0)],
)
def test_multidim_radius_law_by_radial_integration(d, eps, gamma, delta):
    mech = Staircase(epsilon=eps, gamma=gamma, sensitivity=delta, dim=d)
    lv = _levels(eps, mech.gamma, delta, tail=1e-18)
    # more steps, for r^{d-1} b^{r/delta} to die out
    extra = np.arange(1, 12 * d + 1) * delta + lv[-1]
    lv = np.unique(np.concatenate([lv, extra, extra - (1 - mech._g) * delta]))
    assert _quad_pieces(mech.radius_pdf, lv) == pytest.approx(1.0, rel=1e-10)
    assert _quad_pieces(lambda r: r * mech.radius_pdf(r), lv) == pytest.approx(mech.radius_moment(1), rel=1e-10)
    assert _quad_pieces(lambda r: r * r * mech.radius_pdf(r), lv) == pytest.approx(
        mech.radius_moment(2), rel=1e-10
    )
    assert mech.normalizing_constant == pytest.approx(_a_design(d, eps, mech.gamma, delta), rel=1e-12)
    for r in [0.4 * delta, 2.3 * delta, 7.9 * delta]:
        expected = _quad_pieces(mech.radius_pdf, np.append(lv[lv < r], r))
        assert mech.radius_cdf(r) == pytest.approx(expected, rel=1e-10, abs=1e-15)
    assert mech.radius_cdf(-1.0) == 0.0
    assert mech.radius_cdf(1e6 * delta) == pytest.approx(1.0, abs=1e-15)
    # per-coordinate moments from the radius: E|X_1| = E R / d, E X_1^2 = 2 E R^2 / (d(d+1))
    assert mech.expected_abs == pytest.approx(mech.radius_moment(1) / d, rel=1e-14)
    assert mech.variance == pytest.approx(2 * mech.radius_moment(2) / (d * (d + 1)), rel=1e-14)


@pytest.mark.parametrize(
    "d, eps, gamma, seed", [(2, 0.5, None, 1), (2, 2.0, 0.0, 2), (3, 1.0, 0.6, 3), (5, 3.0, 0.3, 4)]
)
def test_multidim_samples_radius_ks_and_uniform_direction(d, eps, gamma, seed):
    mech = Staircase(epsilon=eps, gamma=gamma, dim=d, sensitivity=1.5)
    x = mech.sample(40_000, rng=seed)
    assert x.shape == (40_000, d)
    r = np.abs(x).sum(axis=1)
    assert stats.kstest(r, mech.radius_cdf).pvalue > 1e-3
    # direction: |X_1| / R ~ Beta(1, d - 1), independent of R; signs fair
    assert stats.kstest(np.abs(x[:, 0]) / r, stats.beta(1, d - 1).cdf).pvalue > 1e-3
    assert abs((x[:, -1] > 0).sum() - 20_000) < 5 * math.sqrt(40_000 / 4)
    # per-coordinate variance within 5 standard errors (fourth moment estimated)
    v = x[:, 0] ** 2
    assert abs(v.mean() - mech.variance) < 5 * v.std() / math.sqrt(len(v))


def test_multidim_ks_detects_wrong_gamma():
    x = Staircase(epsilon=2.0, gamma=0.2, dim=3).sample(40_000, rng=1)
    r = np.abs(x).sum(axis=1)
    assert stats.kstest(r, Staircase(epsilon=2.0, gamma=0.5, dim=3).radius_cdf).pvalue < 1e-3


# ---------------------------------------------------------------------------- privacy
@pytest.mark.parametrize("d", [1, 2, 3])
def test_density_ratio_bounded_by_e_eps(d):
    eps, delta = 0.8, 1.3
    mech = Staircase(epsilon=eps, gamma=0.35, sensitivity=delta, dim=d)
    rng = np.random.default_rng(0)
    z = rng.uniform(-6, 6, size=(20_000, d))
    shift = rng.standard_exponential((20_000, d)) * rng.choice([-1, 1], size=(20_000, d))
    shift *= delta * rng.uniform(0, 1, size=(20_000, 1)) / np.abs(shift).sum(axis=1, keepdims=True)
    if d == 1:
        z, shift = z[:, 0], shift[:, 0]
    ratio = mech.pdf(z) / mech.pdf(z + shift)
    assert ratio.max() <= math.exp(eps) * (1 + 1e-12)
    assert ratio.max() > math.exp(eps) * 0.99  # the bound is attained


# ---------------------------------------------------------------------------- API and errors
def test_shapes_reproducibility_and_randomize():
    m1 = Staircase(epsilon=1.0)
    assert isinstance(m1.sample(rng=0), np.float64)
    assert m1.sample((2, 3), rng=0).shape == (2, 3)
    np.testing.assert_array_equal(m1.sample(100, rng=3), m1.sample(100, rng=3))
    assert not np.array_equal(m1.sample(100, rng=3), m1.sample(100, rng=4))
    vals = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(m1.randomize(vals, rng=5) - vals, m1.sample(3, rng=5), atol=1e-14)
    m3 = Staircase(epsilon=1.0, dim=3)
    assert m3.sample(rng=0).shape == (3,)
    assert m3.sample((4, 5), rng=0).shape == (4, 5, 3)
    np.testing.assert_array_equal(m3.sample(10, rng=3), m3.sample(10, rng=3))
    assert not np.array_equal(m3.sample(10, rng=3), m3.sample(10, rng=4))
    vals3 = np.zeros((4, 3))
    np.testing.assert_allclose(m3.randomize(vals3, rng=5), m3.sample(4, rng=5), atol=1e-14)
    assert m3.pdf(np.zeros((2, 5, 3))).shape == (2, 5)
    with pytest.raises(ValueError, match="last axis"):
        m3.pdf(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="last axis"):
        m3.randomize(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="dim = 1 only"):
        m3.cdf(np.zeros(3))
    with pytest.raises(ValueError, match=r"values\[1\] = nan"):
        m1.randomize([0.0, math.nan])
    with pytest.raises(TypeError, match="values"):
        m1.randomize(["a"])


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, math.inf])
def test_bad_gamma_value(bad):
    with pytest.raises(ValueError, match="gamma"):
        Staircase(epsilon=1.0, gamma=bad)


@pytest.mark.parametrize("bad", ["0.5", True, [0.5]])
def test_bad_gamma_type(bad):
    with pytest.raises(TypeError, match="gamma"):
        Staircase(epsilon=1.0, gamma=bad)


def test_bad_dim_and_epsilon():
    for bad in [0, -2]:
        with pytest.raises(ValueError, match="dim"):
            Staircase(epsilon=1.0, dim=bad)
    for bad in [1.5, True, "2"]:
        with pytest.raises(TypeError, match="dim"):
            Staircase(epsilon=1.0, dim=bad)
    for bad in [0.0, -1.0, math.nan, math.inf]:
        with pytest.raises(ValueError, match="epsilon"):
            Staircase(epsilon=bad)
    for bad in ["1", False]:
        with pytest.raises(TypeError, match="epsilon"):
            Staircase(epsilon=bad)
    with pytest.raises(ValueError, match="sensitivity"):
        Staircase(epsilon=1.0, sensitivity=0.0)


def test_underflowing_staircase_is_refused_not_garbage():
    with pytest.raises(ValueError, match="underflow"):
        Staircase(epsilon=800.0, dim=2)
    mech = Staircase(epsilon=800.0, gamma=0.5, dim=2)  # b underflows, gamma^d does not
    assert mech.radius_cdf(0.5) == pytest.approx(1.0)


# ---------------------------------------------------------------------- regressions: extremes


@pytest.mark.parametrize("eps", [1400.0, 1420.0, 1490.0, 2000.0, 1e5])
def test_default_gamma_at_huge_epsilon_is_not_zero(eps):
    """Regression: gamma* = 1/(1 + e^{eps/2}) underflowed to 0, i.e. the gamma = 1 law (noise ~ Delta)."""
    from ldpgraph.mechanisms import staircase_conversion_density, to_staircase

    with mpmath.workdps(30):
        exact = 1 / (1 + mpmath.exp(mpmath.mpf(eps) / 2))
    mech = Staircase(epsilon=eps, sensitivity=2.0)
    assert mech.gamma == max(float(exact), np.finfo(float).tiny) > 0.0
    assert mech.variance <= Staircase(epsilon=50.0).variance
    assert 0.0 <= mech.expected_abs <= mech.gamma * 2.0
    assert np.abs(mech.sample(1000, rng=1)).max() <= mech.gamma * 2.0
    out = to_staircase([3, 7], eps, rng=0)
    assert np.abs(out - [3, 7]).max() < 1e-300
    # the conversion density still integrates to 1: 2 s h_in + 2 (m - s) h_out
    from ldpgraph.mechanisms.conversion import _staircase_pieces

    s, m, h_in, h_out = _staircase_pieces(eps, mech.gamma)
    assert 2 * s * h_in + 2 * (m - s) * h_out == pytest.approx(1.0, rel=1e-15)
    assert staircase_conversion_density([0.0], eps)[0] == pytest.approx(h_in)


@pytest.mark.parametrize("eps", [40.0, 60.5, 100.0, 600.0, 700.0, 2000.0])
def test_variance_optimal_gamma_at_large_epsilon(eps):
    """Root of 2u^2 g^3 + 6bu g^2 + 6b^2 g - b(1+2b) (brentq stopped converging near eps = 600)."""
    got = Staircase.optimal_gamma(eps, "variance")
    with mpmath.workdps(60):
        b = mpmath.exp(-mpmath.mpf(eps))
        u = 1 - b
        root = mpmath.findroot(
            lambda g: 2 * u * u * g**3 + 6 * b * u * g**2 + 6 * b * b * g - b * (1 + 2 * b), (b / 2) ** (mpmath.mpf(1) / 3)
        )
    assert got > 0.0
    assert got == pytest.approx(float(root), rel=1e-13)


def test_gamma_zero_at_huge_epsilon_is_the_gamma_one_law():
    from ldpgraph.mechanisms import staircase_conversion_density, to_staircase

    # w = gamma + (1 - gamma) e^-eps underflowed to 0 (ZeroDivisionError)
    assert staircase_conversion_density([0.0, 0.5, 0.99, 1.0], 2000.0, gamma=0.0).tolist() == [0.5, 0.5, 0.5, 0.0]
    out = to_staircase(np.zeros(200, dtype=np.int64), 2000.0, gamma=0.0, rng=3)
    assert np.abs(out).max() <= 1.0 and np.abs(out).max() > 0.5


@pytest.mark.parametrize("dim", [1, 3])
def test_laws_at_infinity_and_far_out(dim):
    """Regression: cdf / sf / radius_cdf gave nan (with a RuntimeWarning) at +-inf."""
    mech = Staircase(epsilon=1.0, dim=dim)
    assert mech.radius_cdf([np.inf, -np.inf, 1e308, -1e308]).tolist() == [1.0, 0.0, 1.0, 0.0]
    assert mech.radius_pdf([np.inf, 1e308, -np.inf]).tolist() == [0.0, 0.0, 0.0]
    if dim == 1:
        assert mech.cdf([-np.inf, np.inf, -1e308, 1e308]).tolist() == [0.0, 1.0, 0.0, 1.0]
        assert mech.sf([-np.inf, np.inf, -1e308, 1e308]).tolist() == [1.0, 0.0, 1.0, 0.0]
        assert mech.pdf([np.inf, -np.inf]).tolist() == [0.0, 0.0]
        assert mech.logpdf([np.inf]).tolist() == [-np.inf]
        assert np.isnan(mech.cdf([np.nan])).all()
    else:
        assert mech.pdf([[np.inf, 0.0, 1.0]]).tolist() == [0.0]
    # high dimension: the tail sums no longer overflow before the exponential factor
    big = Staircase(epsilon=1e-3, dim=20)
    r = np.array([1e3, 2e4, 1e6, 1e300])
    cdf = big.radius_cdf(r)
    assert np.all(np.diff(cdf) >= 0) and cdf[-1] == 1.0 and cdf[-2] == 1.0


def test_laws_reject_complex_and_strings():
    mech, mech3 = Staircase(epsilon=1.0), Staircase(epsilon=1.0, dim=2)
    from ldpgraph.mechanisms import staircase_conversion_density

    for law in (mech.pdf, mech.logpdf, mech.cdf, mech.sf, mech.radius_pdf, mech.radius_cdf, mech3.radius_cdf,
                lambda z: staircase_conversion_density(z, 1.0)):
        for bad in (np.array([1 + 2j]), [0.5j], np.array(["1.0"]), np.array([1, "a"], dtype=object)):
            with pytest.raises(TypeError, match="real numbers"):
                law(bad)
    with pytest.raises(TypeError, match="real numbers"):
        mech3.pdf(np.array([[1j, 0.0]]))
    # object arrays of real numbers, booleans and integers are fine
    assert mech.pdf(np.array([0, 1.5], dtype=object)).tolist() == mech.pdf([0.0, 1.5]).tolist()
    assert mech.cdf([True]).tolist() == mech.cdf([1.0]).tolist()


def test_dimension_beyond_the_float_range_is_a_value_error():
    """Regression: Staircase(dim >= 172) raised OverflowError (Eulerian numbers beyond float64)."""
    with pytest.raises(ValueError, match="dim must be <= 171"):
        Staircase(epsilon=1.0, dim=172)
    mech = Staircase(epsilon=1.0, dim=171)
    assert mech.sample(2, rng=0).shape == (2, 171)
    assert 0.0 <= mech.radius_cdf(171.0) <= 1.0
    with pytest.raises(ValueError, match="m must be <= 171 - dim = 0"):
        mech.radius_moment(1)
    # moments up to order 171 still work: variance at dim 169 (E R^2 / dim^2 ~ O(1), finite, positive)
    assert 0.0 < Staircase(epsilon=1.0, dim=169).variance < math.inf
