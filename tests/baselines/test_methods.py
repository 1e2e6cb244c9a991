"""k-star methods: exact analytic laws on small inputs, and the Facebook Monte-Carlo checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dlap_exact import exact_expectation
from scipy import integrate

from ldpgraph.baselines import METHODS, exact_kstars, get_method

DEGREE_METHODS = ["unbiased-dlap", "naive-dlap", "unbiased-laplace", "naive-laplace"]


def _binom(y, k):
    out = np.ones_like(np.asarray(y, dtype=float))
    for j in range(k):
        out = out * (np.asarray(y, dtype=float) - j) / (j + 1)
    return out


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_naive_dlap_analytic_law_is_exact(k, eps):
    d = np.array([0, 1, 3, 17])
    m = get_method("naive-dlap")
    mean = exact_expectation(lambda z: _binom(z, k), d, eps)
    second = exact_expectation(lambda z: _binom(z, k) ** 2, d, eps)
    assert m.analytic_mean(d, k, eps) == pytest.approx(mean.sum(), rel=1e-10)
    assert m.analytic_variance(d, k, eps) == pytest.approx((second - mean**2).sum(), rel=1e-8)


@pytest.mark.parametrize("k", [2, 3])
def test_naive_laplace_analytic_law_by_integration(k):
    eps, d = 0.8, 5
    b = 1 / eps

    def moment(h):
        f = lambda u: h(d + u) * math.exp(-abs(u) / b) / (2 * b)  # noqa: E731
        return integrate.quad(f, -np.inf, 0)[0] + integrate.quad(f, 0, np.inf)[0]

    mean = moment(lambda y: float(_binom(y, k)))
    second = moment(lambda y: float(_binom(y, k)) ** 2)
    m = get_method("naive-laplace")
    assert m.analytic_mean([d], k, eps) == pytest.approx(mean, rel=1e-8)
    assert m.analytic_variance([d], k, eps) == pytest.approx(second - mean**2, rel=1e-7)


def test_unbiased_dlap_analytic_variance_is_exact():
    from ldpgraph.estimators.polynomials import binomial

    d, k, eps = np.array([2, 9]), 3, 1.0
    second = exact_expectation(lambda z: binomial(z, k, eps) ** 2, d, eps)
    truth = _binom(d, k)
    assert get_method("unbiased-dlap").analytic_variance(d, k, eps) == pytest.approx(
        (second - truth**2).sum(), rel=1e-9
    )


def test_registry_and_errors():
    assert set(DEGREE_METHODS) <= set(METHODS)
    with pytest.raises(ValueError, match="unknown method 'nope'; choose from"):
        get_method("nope")
    m = get_method("unbiased-dlap")
    with pytest.raises(ValueError, match="epsilon"):
        m.estimate_trials([1, 2], 2, -1.0)
    with pytest.raises(ValueError, match="k must be"):
        m.estimate_trials([1, 2], 0, 1.0)
    with pytest.raises(ValueError, match="non-negative"):
        m.estimate_trials([1, -2], 2, 1.0)


# ----------------------------------------------------------------------------- Facebook


@pytest.fixture(scope="module")
def facebook_degrees(request):
    from conftest import data_file

    from ldpgraph.graph import read_edgelist

    g = read_edgelist(data_file("facebook_combined.txt.gz"))
    return g.degrees


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize(
    "name", ["unbiased-dlap", "naive-dlap", "unbiased-laplace", "naive-laplace", "local-lap-kstars", "local-dlap-kstars"]
)
def test_facebook_monte_carlo_matches_analytic_law(facebook_degrees, name, k):
    d = facebook_degrees
    eps, trials = 1.0, 1500
    m = get_method(name)
    truth = exact_kstars(d, k)
    est = m.estimate_trials(d, k, eps, trials, rng=np.random.SeedSequence([2026, k, len(name)]))
    mean, var = m.analytic_mean(d, k, eps), m.analytic_variance(d, k, eps)
    se_mean = math.sqrt(var / trials)
    if m.unbiased:
        assert mean == truth
    # the Monte-Carlo mean agrees with the analytic mean (the truth, for unbiased methods)
    assert abs(est.mean() - mean) < 4 * se_mean, (est.mean(), mean, se_mean)
    # the empirical MSE agrees with the analytic one within its sampling error
    sq = (est - truth) ** 2
    mse_analytic = m.analytic_rmse(d, k, eps) ** 2
    assert abs(sq.mean() - mse_analytic) < 5 * sq.std(ddof=1) / math.sqrt(trials)


def test_facebook_naive_bias_is_visible_and_matches_closed_form(facebook_degrees):
    d, k, eps = facebook_degrees, 2, 0.5
    m = get_method("naive-dlap")
    truth = exact_kstars(d, k)
    bias = m.analytic_mean(d, k, eps) - truth
    # C(d+eta,2) = C(d,2) + d eta + C(eta,2): E = C(d,2) + E[eta^2]/2 per node
    p = math.exp(-eps)
    assert bias == pytest.approx(d.size * (2 * p / (1 - p) ** 2) / 2, rel=1e-10)
    est = m.estimate_trials(d, k, eps, 800, rng=11)
    assert abs(est.mean() - truth - bias) < 4 * math.sqrt(m.analytic_variance(d, k, eps) / 800)


@pytest.mark.parametrize("name", ["unbiased-dlap", "naive-laplace", "local-lap-kstars", "local-dlap-kstars"])
def test_node_side_and_curator_side_compose_to_estimate_trials(name):
    m = get_method(name)
    d = np.array([1, 4, 4, 9])
    seq = np.random.SeedSequence(8)
    reports = m.randomize(d, 2, 1.0, size=5, rng=np.random.default_rng(seq))
    assert reports.shape == (5, 4)
    direct = m.estimate(reports, 2, 1.0)
    np.testing.assert_array_equal(direct, m.estimate_trials(d, 2, 1.0, 5, rng=np.random.default_rng(seq)))
    one = m.randomize(d, 2, 1.0, rng=0)
    assert one.shape == (4,)


def test_local_lap_kstars_projects_and_uses_the_bound_sensitivity():
    m = get_method("local-lap-kstars").__class__(d_max=3)
    rep = m.randomize(np.array([1, 5]), 2, 2.0, size=200_000, rng=1)
    # projected counts C(1,2)=0 and C(3,2)=3; Laplace scale C(3,1)/2 = 1.5 -> variance 4.5
    assert abs(rep[:, 1].mean() - 3.0) < 5 * math.sqrt(4.5 / 200_000)
    assert rep[:, 0].var() == pytest.approx(4.5, rel=0.03)
    assert not m.unbiased


def test_private_dmax_variant_is_two_round():
    m = get_method("local-lap-kstars-private")
    with pytest.raises(NotImplementedError, match="multi-round"):
        m.randomize([1, 2], 2, 1.0)
    est = m.estimate_trials(np.arange(1, 30), 2, 5.0, 50, rng=0)
    assert est.shape == (50,) and np.isfinite(est).all()


@pytest.mark.parametrize("name", ["unbiased-dlap", "unbiased-laplace", "naive-dlap", "naive-laplace"])
@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_piece_kernels_give_the_values_bitwise(name, k):
    """The simulation's in-place piece kernels against the methods' elementwise values, on
    reports of every sign and size, with pieces that split rows and groups anywhere."""
    from ldpgraph.baselines import methods as M

    m = get_method(name)
    rng = np.random.default_rng(k)
    for n_trials, n_nodes in [(3, 1), (5, 977), (40, 4039)]:
        y = rng.integers(-300, 3000, size=(n_trials, n_nodes))
        if m.noise == "laplace":
            y = y + rng.laplace(0, 7.0, size=y.shape)
        y[0, 0] = -(2**20) if n_nodes > 1 else y[0, 0]
        kernel = m._piece_kernel(y, k, 0.7)
        assert kernel is not None
        ref = M._row_sums(y, lambda part: m._values(part, k, 0.7))
        for piece in (M._PIECE_VALUES, 1000, 7):
            got = M._row_sums_kernel(y, kernel, piece=piece)
            assert np.array_equal(got, ref)
        assert np.array_equal(ref, m._values(y, k, 0.7).sum(axis=-1))


def test_piece_kernel_keeps_the_reports_checks():
    from ldpgraph.baselines import methods as M

    with pytest.raises(ValueError):
        M.get_method("unbiased-laplace")._piece_kernel(np.array([[1.0, np.nan]]), 2, 1.0)
