"""nodewise_sum: exact unbiasedness (m = 2, 3, per-axis epsilon), brute force, variance, API, checks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dlap_exact import dlap_support

from ldpgraph._validation import dlap_c
from ldpgraph.estimators import (
    HighVarianceWarning,
    NodewiseEstimate,
    Quantity,
    ReportVectors,
    Smooth,
    debias_nd,
    nodewise_mean,
    nodewise_sum,
)
from ldpgraph.estimators import nodewise as nw


def _shifts(epsilons, sensitivities):
    """All noise vectors of the truncated support and their probabilities."""
    sup = [dlap_support(e, s) for e, s in zip(epsilons, sensitivities, strict=True)]
    grids = np.meshgrid(*[k for k, _ in sup], indexing="ij")
    shifts = np.stack([g.ravel() for g in grids], axis=-1)
    prob = np.ones(shifts.shape[0])
    for j, (k, pmf) in enumerate(sup):
        prob = prob * pmf[shifts[:, j] + k[-1]]
    return shifts, prob


def _brute_g(h, y, cs):
    """Formula (2) term by term: g(y) and T[h^2](y) for one row (independent of the code)."""
    g, t2 = [], []
    for xi in itertools.product([-1, 0, 1], repeat=len(y)):
        w = math.prod((1 + 2 * c) if s == 0 else -c for s, c in zip(xi, cs, strict=True))
        v = float(np.asarray(h(np.asarray(y)[None, :] + np.asarray(xi)[None, :])).ravel()[0])
        g.append(w * v)
        t2.append(w * v * v)
    return math.fsum(g), math.fsum(t2)


def clustering(z):
    d = z[:, 0].astype(float)
    pairs = np.where(d >= 2, d * (d - 1) / 2, 1.0)
    return np.where(d >= 2, z[:, 1] / pairs, 0.0)


def steep(z):
    z = z.astype(float)
    return np.minimum(z[:, 0], z[:, -1]) * np.cos(z[:, 1]) + (z[:, 0] > z[:, 1]) * z[:, -1] ** 2


# --- exact unbiasedness ----------------------------------------------------------------------


def test_public_sum_is_exactly_unbiased_m2_per_axis_epsilon():
    eps, sens = [1.5, 2.5], [1.0, 2.0]
    x = np.array([4, 3])
    shifts, prob = _shifts(eps, sens)
    vals = np.array([nodewise_sum(clustering, (x + s)[None, :], eps, sens).value for s in shifts])
    mean = math.fsum(vals * prob)
    truth = float(clustering(x[None, :])[0])
    assert mean == pytest.approx(truth, rel=1e-9)
    assert abs(math.fsum(clustering(x + shifts) * prob) - truth) > 1e-3  # the plug-in is biased


@pytest.mark.parametrize(
    "h, x, eps, sens",
    [
        (clustering, [3, 2], [0.6, 1.3], [1.0, 3.0]),
        (steep, [2, 0, 4], [0.9, 1.6, 2.4], [1.0, 1.0, 2.0]),
    ],
)
def test_kernel_expectation_and_variance_estimate_are_exact(h, x, eps, sens):
    # the kernel with the noise law as weights computes E[g] and E[V-hat] exactly (the same
    # weighted path serves method="distinct")
    shifts, prob = _shifts(eps, sens)
    x = np.asarray(x)
    cs = np.array([dlap_c(e, s) for e, s in zip(eps, sens, strict=True)])
    rows = x + shifts
    g_sum, gammas, _, _ = nw._lattice_chunk(h, rows, prob, nw._cube(len(x)), cs)
    e_v = float(nw._combine_gammas(gammas, cs)[0, 0])
    truth = float(h(x[None, :])[0])
    assert float(g_sum[0]) == pytest.approx(truth, rel=1e-9, abs=1e-12)
    # Var g = E[g^2] - h(x)^2 with g from the (separately tested) operator
    g_rows = debias_nd(lambda z: h(z.reshape(-1, len(x))).reshape(z.shape[:-1]), rows, eps, sens)
    true_var = math.fsum(g_rows**2 * prob) - truth**2
    assert true_var > 0.1
    assert e_v == pytest.approx(true_var, rel=1e-9)


# --- brute force -----------------------------------------------------------------------------


@pytest.mark.parametrize("m", [2, 3])
@pytest.mark.parametrize("method", ["direct", "distinct", "auto"])
def test_equals_brute_force_on_random_h(m, method):
    rng = np.random.default_rng(10 + m)
    table = rng.normal(size=(21,) * m)

    def h(z):
        return table[tuple(np.clip(z[:, j] + 10, 0, 20) for j in range(m))]

    eps = rng.uniform(0.4, 3.0, size=m)
    sens = rng.choice([1.0, 2.0, 4.0], size=m)
    cs = [dlap_c(e, s) for e, s in zip(eps, sens, strict=True)]
    ys = rng.integers(-6, 7, size=(40, m))
    ys[5] = ys[3]  # repeated rows exercise the multiplicities of method="distinct"
    est = nodewise_sum(h, ys, eps, sens, method=method)
    brute = [_brute_g(h, row, cs) for row in ys]
    g_ref = math.fsum(g for g, _ in brute)
    v_ref = math.fsum(g * g - t2 for g, t2 in brute)
    scale = math.fsum(abs(g) for g, _ in brute)
    assert est.value == pytest.approx(g_ref, rel=1e-11, abs=1e-12 * scale)
    assert est.variance_estimate == pytest.approx(v_ref, rel=1e-10)
    assert est.n_nodes == 40


def test_unique_fallback_and_chunking_agree(monkeypatch):
    rng = np.random.default_rng(5)
    ys = np.stack([rng.integers(0, 10**6, 3000), rng.integers(-3, 4, 3000)], axis=1)
    ys[::7] = ys[0]
    ref = nodewise_sum(steep, ys, [0.8, 1.1], method="direct")
    monkeypatch.setattr(nw, "_CHUNK_ROWS", 256)
    chunked = nodewise_sum(steep, ys, [0.8, 1.1], method="direct")
    uniq = nodewise_sum(steep, ys, [0.8, 1.1], method="distinct")  # box too large: np.unique
    for other in (chunked, uniq):
        assert other.value == pytest.approx(ref.value, rel=1e-12)
        assert other.variance_estimate == pytest.approx(ref.variance_estimate, rel=1e-12)


@pytest.mark.parametrize("m", [2, 3])
def test_core_box_grouping_equals_direct_and_brute_force(m, monkeypatch):
    # a dense core (repeated rows) and a far-spread tail: "auto" deduplicates the core box and
    # evaluates the tail rows directly; the whole box is too large for one bincount
    rng = np.random.default_rng(20 + m)
    n = 3000
    ys = rng.integers(-4, 5, size=(n, m))
    tail = rng.random(n) < 0.1
    ys[tail, 0] = rng.integers(-10**9, 10**9, size=int(tail.sum()))
    monkeypatch.setattr(nw, "_CORE_SAMPLE", 256)
    assert nw._distinct_rows(ys) is None
    grouped = nw._core_grouped_rows(ys)
    assert grouped is not None
    rows, counts = grouped
    assert counts.sum() == n and rows.shape[0] <= 9**m + 0.12 * n  # the core cells and the tail
    # the multiset of rows is preserved
    key = lambda a: sorted(map(tuple, a.tolist()))  # noqa: E731
    assert key(np.repeat(rows, counts.astype(np.int64), axis=0)) == key(ys)
    eps, sens = [0.7, 1.3, 0.9][:m], [1.0, 3.0, 2.0][:m]
    cs = [dlap_c(e, s) for e, s in zip(eps, sens, strict=True)]
    auto = nodewise_sum(steep, ys, eps, sens, check_growth=False)
    direct = nodewise_sum(steep, ys, eps, sens, check_growth=False, method="direct")
    assert auto.value == pytest.approx(direct.value, rel=1e-12)
    assert auto.variance_estimate == pytest.approx(direct.variance_estimate, rel=1e-12)
    sub = ys[:300]  # brute force on a part (the 3^m formula per row)
    brute = [_brute_g(steep, row, cs) for row in sub]
    part = nodewise_sum(steep, np.concatenate([sub] * 1000), eps, sens, check_growth=False)
    assert part.value == pytest.approx(1000 * math.fsum(g for g, _ in brute), rel=1e-10)
    assert part.variance_estimate == pytest.approx(1000 * math.fsum(g * g - t for g, t in brute), rel=1e-10)


def test_core_box_grouping_declines_when_it_does_not_pay(monkeypatch):
    monkeypatch.setattr(nw, "_CORE_SAMPLE", 256)
    rng = np.random.default_rng(3)
    spread = rng.integers(-10**9, 10**9, size=(3000, 2))
    assert nw._core_grouped_rows(spread) is None  # every core box too large
    few = rng.integers(-10**6, 10**6, size=(3000, 2))
    few[:, 1] = rng.integers(0, 3, size=3000)
    assert nw._core_grouped_rows(few) is None  # fits, but the rows are nearly all distinct
    assert nw._core_grouped_rows(spread[:500]) is None  # too few rows to sample


def test_core_box_grouping_is_exact_at_the_int64_limits(monkeypatch):
    # rows at -2^63 next to a core near +2^63 - 5 must not wrap into the box
    monkeypatch.setattr(nw, "_CORE_SAMPLE", 256)
    top = np.iinfo(np.int64).max
    ys = np.full((3000, 2), top - 5, dtype=np.int64)
    ys[:, 1] = np.arange(3000) % 3
    ys[::10, 0] = np.iinfo(np.int64).min
    assert nw._core_grouped_rows(ys) is None  # core beyond 2^62: declined
    ys[:, 0] = np.where(ys[:, 0] < 0, ys[:, 0], 5)  # core at 5, tail at -2^63
    rows, counts = nw._core_grouped_rows(ys)
    assert counts.sum() == 3000 and (rows[:, 0] == np.iinfo(np.int64).min).sum() == 300
    # the whole box of rows at both limits has 2^64 cells (it wrapped to 0 in int64)
    ends = np.array([[np.iinfo(np.int64).min, 0], [top, 0]] * 50, dtype=np.int64)
    assert nw._distinct_rows(ends) is None


def test_several_outputs_give_the_covariance_estimate():
    rng = np.random.default_rng(2)
    ys = rng.integers(-3, 9, size=(30, 2))
    eps = [0.7, 1.4]
    cs = [dlap_c(e) for e in eps]

    def h1(z):
        return clustering(z)

    def h2(z):
        return (z[:, 0] >= 3).astype(float) * z[:, 1]

    est = nodewise_sum(lambda z: np.stack([h1(z), h2(z)], axis=1), ys, eps)
    a, b = nodewise_sum(h1, ys, eps), nodewise_sum(h2, ys, eps)
    np.testing.assert_allclose(est.value, [a.value, b.value], rtol=1e-13)
    np.testing.assert_allclose(np.diagonal(est.variance_estimate), [a.variance_estimate, b.variance_estimate], rtol=1e-12)
    # off-diagonal: sum_v g1 g2 - T[h1 h2]
    cross = 0.0
    for row in ys:
        g1, _ = _brute_g(h1, row, cs)
        g2, _ = _brute_g(h2, row, cs)
        t12, _ = _brute_g(lambda z: h1(z) * h2(z), row, cs)
        cross += g1 * g2 - t12
    assert est.variance_estimate[0, 1] == pytest.approx(cross, rel=1e-10)
    assert est.variance_estimate[1, 0] == est.variance_estimate[0, 1]
    np.testing.assert_allclose(est.std_error, np.sqrt(np.diagonal(est.variance_estimate)))


def test_noise_free_limit_is_the_truth_and_mean_divides():
    x = np.array([[3, 1], [4, 6], [0, 0], [2, 1]])
    est = nodewise_sum(clustering, x, [60.0, 60.0])
    assert est.value == pytest.approx(1 / 3 + 1 + 0 + 1, rel=1e-12)
    assert est.variance_estimate == pytest.approx(0.0, abs=1e-20)
    mean = nodewise_mean(clustering, x, [60.0, 60.0])
    assert mean.value == pytest.approx(est.value / 4)
    assert isinstance(mean, NodewiseEstimate) and mean.n_nodes == 4


# --- named quantities ------------------------------------------------------------------------


def test_report_vectors_with_named_quantities_match_the_array_api():
    rng = np.random.default_rng(3)
    deg, tri = rng.integers(0, 12, 50), rng.integers(-5, 30, 50)
    qs = [Quantity("degree", 0.8), Quantity("triangles", 0.5, sensitivity=6)]
    rv = ReportVectors(qs, {"triangles": tri, "degree": deg})

    def named(q):
        d = q.degree.astype(float)
        return np.where(d >= 2, q["triangles"] / np.where(d >= 2, d * (d - 1) / 2, 1.0), 0.0)

    got = rv.mean(named)
    ref = nodewise_mean(clustering, np.stack([deg, tri], axis=1), [0.8, 0.5], [1, 6])
    assert got.value == pytest.approx(ref.value, rel=1e-13)
    assert got.variance_estimate == pytest.approx(ref.variance_estimate, rel=1e-13)
    assert rv.sum(named).value == pytest.approx(ref.value * 50, rel=1e-13)
    assert rv.n_nodes == 50 and rv.names == ("degree", "triangles")


def test_report_vectors_validation():
    q = [Quantity("degree", 1.0), Quantity("t", 1.0)]
    with pytest.raises(ValueError, match=r"missing \['t'\], extra \['x'\]"):
        ReportVectors(q, {"degree": [1], "x": [2]})
    with pytest.raises(ValueError, match="distinct"):
        ReportVectors([Quantity("a", 1.0), Quantity("a", 2.0)], {"a": [1]})
    with pytest.raises(ValueError, match="one value per node"):
        ReportVectors(q, {"degree": [1, 2], "t": [1]})
    with pytest.raises(ValueError, match=r"values\['t'\]\[0\] = 0.5 is not an integer"):
        ReportVectors(q, {"degree": [1], "t": [0.5]})
    with pytest.raises(ValueError, match="identifier"):
        Quantity("local triangles", 1.0)
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        Quantity("d", -1.0)
    rv = ReportVectors(q, {"degree": [1], "t": [1]})
    with pytest.raises(KeyError, match="no quantity named 'degre'"):
        rv.sum(lambda c: c["degre"])


# --- finite expectation, high variance, errors -----------------------------------------------


def test_infinite_h_next_to_a_report_is_refused_naming_the_point():
    def unguarded(z):  # t / C(d, 2) is infinite at d = 0, 1
        d = z[:, 0].astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return z[:, 1] / (d * (d - 1) / 2)

    with pytest.raises(ValueError, match=r"h is not finite at \(1, [345]\).*E\|h\(y\)\| is infinite"):
        nodewise_sum(unguarded, [[5, 3], [2, 4]], [1.0, 1.0], check_growth=False)


def test_growth_probe_refuses_h_with_infinite_expectation():
    eps = [1.0, 2.0]
    p1 = math.exp(-2.0)
    # along axis 1 h grows like p^{-|y|}: E|h(y)| = sum p^{|k|} p^{-|k|} = inf
    with pytest.raises(ValueError, match="h grows too fast along axis 1"):
        nodewise_sum(lambda z: p1 ** (-np.abs(z[:, 1]).astype(float)), [[1, 2]], eps)
    # p^{-|y|/2} has a finite expectation: accepted, and exactly unbiased (debias_nd tests)
    est = nodewise_sum(lambda z: p1 ** (-np.abs(z[:, 1]).astype(float) / 2), [[1, 2]], eps)
    assert math.isfinite(est.value)
    # polynomials pass
    nodewise_sum(lambda z: (z[:, 0].astype(float) ** 5) * z[:, 1], [[1, 2]], eps)


def test_high_variance_warning():
    rng = np.random.default_rng(0)
    ys = rng.integers(-20, 20, size=(100, 3))

    def step(z):
        return ((z[:, 0] > 0) & (z[:, 1] > 0) & (z[:, 2] > 0)).astype(float)

    with pytest.warns(HighVarianceWarning, match="standard error"):
        nodewise_sum(step, ys, [0.005, 0.005, 0.005])
    with pytest.warns(HighVarianceWarning, match="more than 100 times"):
        nodewise_sum(step, ys, [0.02, 0.02, 0.02], warn_above=100)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", HighVarianceWarning)
        nodewise_sum(step, ys, [2.0, 2.0, 2.0])
        nodewise_sum(step, ys, [0.005, 0.005, 0.005], warn_above=None)


def test_laplace_columns_need_smooth_h_and_match_debias_nd():
    def d(z, order):
        a, b = order
        za, zb = z[..., 0], z[..., 1]
        fa = [za**2, 2 * za, 2 + 0 * za][a]
        fb = [np.sin(zb), np.cos(zb), -np.sin(zb)][b]
        return fa * fb

    f = Smooth(d)
    ys = np.array([[3, 0.5], [1, -1.25], [4, 2.0]])
    est = nodewise_sum(f, ys, [1.0, 1.5], noise=["dlap", "laplace"])
    assert est.value == pytest.approx(float(debias_nd(f, ys, [1.0, 1.5], noise=["dlap", "laplace"]).sum()), rel=1e-12)
    with pytest.raises(TypeError, match=r"Smooth.*columns \[1\]"):
        nodewise_sum(lambda z: z[:, 0], ys, 1.0, noise=["dlap", "laplace"])


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"reports must have shape \(n, m\)"):
        nodewise_sum(clustering, [1, 2, 3], 1.0)
    with pytest.raises(ValueError, match="epsilon must give one value per axis: y has n = 2 axes, got 3"):
        nodewise_sum(clustering, [[1, 2]], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"reports\[0, 1\] = 0.5 is not an integer"):
        nodewise_sum(clustering, [[1, 0.5]], 1.0)
    with pytest.raises(ValueError, match="method must be one of"):
        nodewise_sum(clustering, [[1, 2]], 1.0, method="fast")
    with pytest.raises(ValueError, match=r"h must map points of shape"):
        nodewise_sum(lambda z: z[:1, 0], [[1, 2], [3, 4]], 1.0)
    with pytest.raises(TypeError, match="h must be callable"):
        nodewise_sum(3, [[1, 2]], 1.0)
    with pytest.raises(ValueError, match="n >= 1"):
        nodewise_mean(clustering, np.zeros((0, 2), dtype=int), 1.0)
    assert nodewise_sum(clustering, np.zeros((0, 2), dtype=int), 1.0).value == 0.0
