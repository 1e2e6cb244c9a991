"""Poisoning screening: the exact noise quantile, the admissible ranges and the screen; then one
liar's influence on the degree statistics (:func:`ldpgraph.protocols.curator.influence_bound`, enumerated)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from ldpgraph.protocols import NodeReports, ReleasedValues, curator
from ldpgraph.protocols.curator import influence_bound
from ldpgraph.protocols.screening import (
    PublicBounds,
    admissible_range,
    noise_quantile,
    screen_reports,
)


def _tail_by_summation(t: int, eps: float, sens: float) -> mpmath.mpf:
    """P[|eta| > t] as 1 - sum of the pmf over |k| <= t, at 80 digits (independent of the closed form)."""
    with mpmath.workdps(80):
        p = mpmath.exp(-mpmath.mpf(eps) / mpmath.mpf(sens))
        norm = (1 - p) / (1 + p)
        inside = norm * (1 + 2 * mpmath.fsum(p**k for k in range(1, t + 1)))
        return 1 - inside


@pytest.mark.parametrize("eps, sens", [(1.0, 1.0), (0.1, 1.0), (3.0, 1.0), (0.5, 45.0), (2.0, 7.0), (20.0, 1.0)])
def test_noise_quantile_is_exact_at_1e_12(eps, sens):
    t = noise_quantile(eps, sens)
    assert _tail_by_summation(t, eps, sens) <= mpmath.mpf(1e-12)
    if t > 0:
        assert _tail_by_summation(t - 1, eps, sens) > mpmath.mpf(1e-12)


def test_noise_quantile_other_alpha_and_errors():
    t = noise_quantile(1.0, alpha=0.5)
    assert _tail_by_summation(t, 1.0, 1.0) <= 0.5 < _tail_by_summation(t - 1, 1.0, 1.0)
    for bad in (0, 1, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="alpha"):
            noise_quantile(1.0, alpha=bad)
    with pytest.raises(ValueError, match="epsilon"):
        noise_quantile(0.0)


def test_admissible_range_and_bounds():
    t = noise_quantile(1.0)
    assert admissible_range("degree", epsilon=1.0, sensitivity=1.0, bounds=PublicBounds(n_nodes=50)) == (-t, 49 + t)
    # the tighter of n - 1 and the degree bound
    assert PublicBounds(n_nodes=50, degree_bound=10).max_degree == 10
    t6 = noise_quantile(0.5, 6.0)
    lo, hi = admissible_range("kstar_2", epsilon=0.5, sensitivity=6.0, bounds=PublicBounds(n_nodes=50), d_max=6)
    assert (lo, hi) == (-t6, math.comb(6, 2) + t6)
    with pytest.raises(ValueError, match="n_nodes or degree_bound"):
        PublicBounds()


EPS = 1.0
HONEST = np.array([0, 3, 1, 4, 2, 5, 3])  # noisy degrees of 7 truthful nodes


def _estimates(y: np.ndarray) -> dict[str, float]:
    rep = NodeReports({"degree": ReleasedValues("degree", y, EPS, 1.0)})
    hist, _ = curator.degree_histogram(rep, 6)
    return {
        "kstars_2": curator.kstars(rep, 2).value,
        "kstars_3": curator.kstars(rep, 3).value,
        "edges": curator.edge_count(rep).value,
        "degree_moment_2": curator.degree_moment(rep, 2).value,
        "degree_mean": curator.degree_mean(rep).value,
        "degree_variance": curator.degree_variance(rep).value,
        "degree_histogram_3": float(hist[3]),
    }


_BOUND_ARGS = {
    "kstars_2": ("kstars", 2), "kstars_3": ("kstars", 3), "edges": ("edges", None),
    "degree_moment_2": ("degree_moment", 2), "degree_mean": ("degree_mean", None),
    "degree_variance": ("degree_variance", None), "degree_histogram_3": ("degree_histogram", None),
}


def test_one_malicious_node_moves_each_estimate_by_at_most_the_bound():
    bounds = PublicBounds(n_nodes=HONEST.size)
    lo, hi = admissible_range("degree", epsilon=EPS, sensitivity=1.0, bounds=bounds)
    # the liar (node 0) sends every admissible value; the others are honest
    runs = []
    for y0 in range(lo, hi + 1):
        y = HONEST.copy()
        y[0] = y0
        runs.append(_estimates(y))
    honest = _estimates(HONEST)
    for stat, (name, k) in _BOUND_ARGS.items():
        bound = influence_bound(name, lo, hi, epsilon=EPS, n_nodes=HONEST.size, k=k)
        values = np.array([r[stat] for r in runs])
        spread = values.max() - values.min()
        assert np.max(np.abs(values - honest[stat])) <= bound * (1 + 1e-12), stat
        assert spread <= bound * (1 + 1e-12), stat
        if name != "degree_variance":  # separable statistics: the bound is attained
            assert spread == pytest.approx(bound, rel=1e-12), stat


def test_degree_variance_bound_is_attained_when_the_others_sit_at_one_end():
    # others all at lo: the liar's best moves are from lo to hi, the full (n-1)(U-L)^2/n^2
    bounds = PublicBounds(n_nodes=5)
    lo, hi = admissible_range("degree", epsilon=EPS, sensitivity=1.0, bounds=bounds)
    y = np.full(5, lo)
    a = _estimates(y)["degree_variance"]
    y[0] = hi
    b = _estimates(y)["degree_variance"]
    assert b - a == pytest.approx(influence_bound("degree_variance", lo, hi, epsilon=EPS, n_nodes=5), rel=1e-12)


def test_kstars_from_counts_bound():
    rep = NodeReports({"kstar_2": ReleasedValues("kstar_2", np.array([3, 0, 6]), 0.5, 3.0)}, d_max=3)
    bounds = PublicBounds(n_nodes=3)
    lo, hi = admissible_range("kstar_2", epsilon=0.5, sensitivity=3.0, bounds=bounds, d_max=3)
    est = []
    for v in (lo, hi):
        vals = rep.released["kstar_2"].values.copy()
        vals[1] = v
        r = NodeReports({"kstar_2": ReleasedValues("kstar_2", vals, 0.5, 3.0)}, d_max=3)
        est.append(curator.kstars_from_counts(r, 2).value)
    assert est[1] - est[0] == influence_bound("kstars_from_counts", lo, hi, epsilon=0.5, n_nodes=3)


def test_unscreened_liar_moves_s2_by_1e22_and_screening_stops_it():
    y = HONEST.copy()
    y[0] = 2**40
    rep = NodeReports({"degree": ReleasedValues("degree", y, EPS, 1.0)})
    honest = curator.kstars(NodeReports({"degree": ReleasedValues("degree", HONEST, EPS, 1.0)}), 2).value
    assert curator.kstars(rep, 2).value - honest > 1e23
    bounds = PublicBounds(n_nodes=HONEST.size)
    clean, info = screen_reports(rep, bounds)
    assert info["degree"].n_outside == 1 and info["degree"].mode == "clip"
    lo, hi = info["degree"].lo, info["degree"].hi
    assert clean.degrees.values[0] == hi
    moved = curator.kstars(clean, 2).value - honest
    assert 0 < moved <= influence_bound("kstars", lo, hi, epsilon=EPS, n_nodes=HONEST.size, k=2)
    dropped, info = screen_reports(rep, bounds, mode="reject")
    assert dropped.degrees.values.tolist() == HONEST[1:].tolist() and info["degree"].n_outside == 1
    with pytest.raises(ValueError, match="mode"):
        screen_reports(rep, bounds, mode="ignore")


def test_influence_bound_refusals():
    assert influence_bound("max_degree", 0, 10, epsilon=1.0, n_nodes=3) is None
    with pytest.raises(ValueError, match="unknown statistic"):
        influence_bound("triangles", 0, 10, epsilon=1.0, n_nodes=3)
    with pytest.raises(ValueError, match="lo <= hi"):
        influence_bound("edges", 5, 1, epsilon=1.0, n_nodes=3)
