"""k-star methods (presets of the degree and local k-star protocols, their ``simulate`` and ``moments``
hooks): exact analytic laws on small inputs, the kernels, and the Facebook Monte-Carlo checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dlap_exact import exact_expectation
from scipy import integrate

from ldpgraph.graph import kstar_counts as exact_kstars
from ldpgraph.protocols.degrees import kernels as kk
from ldpgraph.run.method import get_method, method_names

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
    assert m.analytic_mean(d, "kstars", k, eps) == pytest.approx(mean.sum(), rel=1e-10)
    assert m.analytic_variance(d, "kstars", k, eps) == pytest.approx((second - mean**2).sum(), rel=1e-8)


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
    assert m.analytic_mean([d], "kstars", k, eps) == pytest.approx(mean, rel=1e-8)
    assert m.analytic_variance([d], "kstars", k, eps) == pytest.approx(second - mean**2, rel=1e-7)


def test_unbiased_dlap_analytic_variance_is_exact():
    from ldpgraph.estimators.polynomials import binomial

    d, k, eps = np.array([2, 9]), 3, 1.0
    second = exact_expectation(lambda z: binomial(z, k, eps) ** 2, d, eps)
    truth = _binom(d, k)
    assert get_method("unbiased-dlap").analytic_variance(d, "kstars", k, eps) == pytest.approx(
        (second - truth**2).sum(), rel=1e-9
    )


def test_registry_and_errors():
    assert set(DEGREE_METHODS) <= set(method_names("kstars"))
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        get_method("nope")
    m = get_method("unbiased-dlap")
    with pytest.raises(ValueError, match="epsilon"):
        m.estimate_trials([1, 2], "kstars", 2, -1.0)
    with pytest.raises(ValueError, match="k must be"):
        m.estimate_trials([1, 2], "kstars", 0, 1.0)
    with pytest.raises(ValueError, match="non-negative"):
        m.estimate_trials([1, -2], "kstars", 2, 1.0)


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
    est = m.estimate_trials(d, "kstars", k, eps, trials, rng=np.random.SeedSequence([2026, k, len(name)]))
    mean, var = m.analytic_mean(d, "kstars", k, eps), m.analytic_variance(d, "kstars", k, eps)
    se_mean = math.sqrt(var / trials)
    if m.unbiased:
        assert mean == truth
    # the Monte-Carlo mean agrees with the analytic mean (the truth, for unbiased methods)
    assert abs(est.mean() - mean) < 4 * se_mean, (est.mean(), mean, se_mean)
    # the empirical MSE agrees with the analytic one within its sampling error
    sq = (est - truth) ** 2
    mse_analytic = m.analytic_rmse(d, "kstars", k, eps) ** 2
    assert abs(sq.mean() - mse_analytic) < 5 * sq.std(ddof=1) / math.sqrt(trials)


def test_facebook_naive_bias_is_visible_and_matches_closed_form(facebook_degrees):
    d, k, eps = facebook_degrees, 2, 0.5
    m = get_method("naive-dlap")
    truth = exact_kstars(d, k)
    bias = m.analytic_mean(d, "kstars", k, eps) - truth
    # C(d+eta,2) = C(d,2) + d eta + C(eta,2): E = C(d,2) + E[eta^2]/2 per node
    p = math.exp(-eps)
    assert bias == pytest.approx(d.size * (2 * p / (1 - p) ** 2) / 2, rel=1e-10)
    est = m.estimate_trials(d, "kstars", k, eps, 800, rng=11)
    assert abs(est.mean() - truth - bias) < 4 * math.sqrt(m.analytic_variance(d, "kstars", k, eps) / 800)


@pytest.mark.parametrize(("noise", "estimator"), [("dlap", "unbiased"), ("laplace", "naive")])
def test_degree_reports_and_curator_values_compose_to_the_simulation(noise, estimator):
    from ldpgraph.mechanisms import DiscreteLaplace, Laplace

    d, eps = np.array([1, 4, 4, 9]), 1.0
    mech = DiscreteLaplace(epsilon=eps) if noise == "dlap" else Laplace(epsilon=eps)
    reports = d[None, :] + mech.sample((5, 4), rng=np.random.default_rng(8))
    direct = kk.degree_values(reports, 2, eps, noise, estimator).sum(axis=-1)
    sim = kk.simulate_degree_kstars(d, 2, eps, 5, np.random.default_rng(8), noise, estimator)
    np.testing.assert_array_equal(direct, sim)


@pytest.mark.parametrize("noise", ["dlap", "laplace"])
def test_local_count_releases_compose_to_the_simulation(noise):
    d = np.array([1, 4, 4, 9])
    reports = kk.local_count_release(d, 2, 1.0, 9, 5, np.random.default_rng(8), noise)
    assert reports.shape == (5, 4)
    sim = kk.simulate_local_counts(d, 2, 1.0, 9, 5, np.random.default_rng(8), noise)
    np.testing.assert_array_equal(reports.sum(axis=-1, dtype=np.float64), sim)


def test_local_lap_kstars_projects_and_uses_the_bound_sensitivity():
    rep = kk.local_count_release(np.array([1, 5]), 2, 2.0, 3, 200_000, np.random.default_rng(1), "laplace")
    # projected counts C(1,2)=0 and C(3,2)=3; Laplace scale C(3,1)/2 = 1.5 -> variance 4.5
    assert abs(rep[:, 1].mean() - 3.0) < 5 * math.sqrt(4.5 / 200_000)
    assert rep[:, 0].var() == pytest.approx(4.5, rel=0.03)
    m = get_method("local-lap-kstars").with_options(d_max=3)
    assert m.analytic_mean([1, 5, 2], "kstars", 2, 2.0) == 0 + 3 + 1  # projected to D = 3


def test_private_dmax_variant_is_two_round():
    m = get_method("local-lap-kstars-private")
    assert list(m.budget(1.0)) == ["degree-bound", "kstar-count"]
    est = m.estimate_trials(np.arange(1, 30), "kstars", 2, 5.0, 50, rng=0)
    assert est.shape == (50,) and np.isfinite(est).all()
    assert m.analytic_mean(np.arange(1, 30), "kstars", 2, 5.0) is None


@pytest.mark.parametrize(("noise", "estimator"), [("dlap", "unbiased"), ("laplace", "unbiased"), ("dlap", "naive"),
                                                  ("laplace", "naive")])
@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_piece_kernels_give_the_values_bitwise(noise, estimator, k):
    """The simulation's in-place piece kernels against the methods' elementwise values, on
    reports of every sign and size, with pieces that split rows and groups anywhere."""
    rng = np.random.default_rng(k)
    for n_trials, n_nodes in [(3, 1), (5, 977), (40, 4039)]:
        y = rng.integers(-300, 3000, size=(n_trials, n_nodes))
        if noise == "laplace":
            y = y + rng.laplace(0, 7.0, size=y.shape)
        y[0, 0] = -(2**20) if n_nodes > 1 else y[0, 0]
        kernel = kk.degree_piece_kernel(y, k, 0.7, noise, estimator)
        ref = kk.row_sums(y, lambda part: kk.degree_values(part, k, 0.7, noise, estimator))
        for piece in (kk.PIECE_VALUES, 1000, 7):
            got = kk.row_sums_kernel(y, kernel, piece=piece)
            assert np.array_equal(got, ref)
        assert np.array_equal(ref, kk.degree_values(y, k, 0.7, noise, estimator).sum(axis=-1))


def test_piece_kernel_keeps_the_reports_checks():
    with pytest.raises(ValueError):
        kk.degree_piece_kernel(np.array([[1.0, np.nan]]), 2, 1.0, "laplace", "unbiased")
