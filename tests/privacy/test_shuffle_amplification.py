"""Amplification by shuffling: the clones divergence exactly, the bounds, their inverse."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpgraph.privacy import (
    amplified_epsilon,
    clone_probability,
    clones_delta,
    clones_delta_bruteforce,
    closed_form_epsilon,
    local_epsilon_for,
    numerical_epsilon,
)


@pytest.mark.parametrize("randomizer", ["generic", "binary-rr"])
@pytest.mark.parametrize("n", [2, 5, 17, 50])
def test_clones_delta_equals_enumeration(n, randomizer):
    for eps0 in (0.3, 1.0, 2.5):
        for eps in (0.0, 0.05, 0.2, 0.7, eps0 * 0.99):
            fast = clones_delta(eps, eps0, n, randomizer)
            brute = clones_delta_bruteforce(eps, eps0, n, randomizer)
            assert fast == pytest.approx(brute, rel=1e-9, abs=1e-15), (n, eps0, eps)


def _shuffled_rr_delta(eps: float, eps0: float, n: int) -> float:
    """Exact δ(ε) of the count of ones of n binary-RR reports, user 0's bit 0 -> 1, the other n-1
    users' bits fixed to the worst of every possible number a of ones (both directions)."""
    p = 1.0 / (1.0 + math.exp(-eps0))
    q = 1.0 - p
    m = n - 1
    worst = 0.0
    for a in range(m + 1):
        s = np.convolve(stats.binom.pmf(np.arange(a + 1), a, p), stats.binom.pmf(np.arange(m - a + 1), m - a, q))
        p0 = np.r_[p * s, 0.0] + np.r_[0.0, q * s]  # user 0 holds 0: reports 1 w.p. q
        p1 = np.r_[q * s, 0.0] + np.r_[0.0, p * s]
        for x, y in ((p0, p1), (p1, p0)):
            worst = max(worst, float(np.maximum(x - math.exp(eps) * y, 0.0).sum()))
    return worst


@pytest.mark.parametrize("n", [3, 12, 40])
def test_binary_rr_bound_holds_for_the_exact_shuffled_rr(n):
    """The binary-RR clone probability 2/(e^eps0 + 1) gives a valid bound (the true δ of the
    shuffled counts is below it), tighter than the generic e^-eps0."""
    for eps0 in (0.5, 1.5, 3.0):
        for eps in (0.02, 0.1, 0.4, 1.0):
            exact = _shuffled_rr_delta(eps, eps0, n)
            rr = clones_delta(eps, eps0, n, "binary-rr")
            generic = clones_delta(eps, eps0, n, "generic")
            assert exact <= rr + 1e-12 and rr <= generic + 1e-12, (eps0, eps, exact, rr, generic)


def test_numerical_bound_close_to_the_exact_divergence_small_n():
    """At n = 50 the ε of the numerical bound is where the exact divergence crosses δ."""
    n, delta = 50, 1e-3
    for eps0 in (0.5, 1.0, 2.0):
        eps = numerical_epsilon(eps0, n, delta)
        assert clones_delta_bruteforce(eps, eps0, n) <= delta * (1 + 1e-9)
        assert clones_delta_bruteforce(eps - 1e-6, eps0, n) > delta


def test_monotone():
    n, delta = 1000, 1e-8
    grid = np.linspace(0.1, 6.0, 12)
    num = [numerical_epsilon(e, n, delta) for e in grid]
    rr = [numerical_epsilon(e, n, delta, "binary-rr") for e in grid]
    cf = [closed_form_epsilon(e, n, delta) for e in grid]
    for seq in (num, rr, cf):
        assert np.all(np.diff(seq) >= 0)
    assert np.all(np.array(rr) <= num) and np.all(np.array(num) <= grid)
    deltas = [clones_delta(e, 3.0, n) for e in np.linspace(0, 3, 30)]
    assert np.all(np.diff(deltas) <= 0)
    # more users, more amplification
    assert numerical_epsilon(2.0, 10**5, delta) < numerical_epsilon(2.0, 10**4, delta)


# Rows of the numerical tables shipped by Imola, Murakami, Chaudhuri (Triangle4CycleShuffle,
# data/IMDB/numerical-bound_n2000_d10-8.csv and data/GPlus/numerical-bound_n80000_d10-8.csv):
# (n, eps0, their lower bound, their upper bound) on the central ε at δ = 1e-8, computed with
# the reference code of Feldman et al.; its apple/ml-shuffling-amplification example (n = 1e5,
# eps0 = 4, δ = 1e-6, 20 bisection steps, step 100) rerun here gives [0.167458, 0.172434].
PUBLISHED = [
    (2000, 1.8779016890879174, 0.40345544101498226, 0.4969837477957282),
    (2000, 0.7529016890880138, 0.10586248004624013, 0.11202922645670071),
    (80000, 3.3407811432014034, 0.16374636929818054, 0.16849264087204083),
    (80000, 1.1147811432016486, 0.02712276917845652, 0.02732902597829269),
]


@pytest.mark.parametrize("n,eps0,lo,hi", PUBLISHED)
def test_numerical_bound_within_the_published_bracket(n, eps0, lo, hi):
    # their lower end is the upper end of a bisection bracket of width ~1e-4 (not a strict bound)
    eps = numerical_epsilon(eps0, n, 1e-8)
    assert lo - 1e-4 <= eps <= hi


def test_apple_example_and_closed_form():
    eps = numerical_epsilon(4.0, 10**5, 1e-6)
    assert 0.167458 <= eps <= 0.172434
    # Theorem 3.1 in its published form ((e^eps0-1)/(e^eps0+1) factor) is below the older form of the
    # apple code (0.537804...) and, by hand, log(1 + tanh(2) (8 sqrt(e^4 log(4e6) / 1e5) + 8 e^4 / 1e5))
    a = math.exp(4.0)
    by_hand = math.log(1 + (a - 1) / (a + 1) * (8 * math.sqrt(a * math.log(4e6) / 1e5) + 8 * a / 1e5))
    assert closed_form_epsilon(4.0, 10**5, 1e-6) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand < 0.5378040242374512
    assert eps < by_hand


def test_inverse():
    n, delta = 4037, 1e-8
    for method, randomizer in (("numerical", "generic"), ("numerical", "binary-rr"), ("closed-form", "generic")):
        eps0 = local_epsilon_for(1.0, n, delta, method, randomizer)
        assert amplified_epsilon(eps0, n, delta, method, randomizer) <= 1.0 + 1e-8
        assert amplified_epsilon(eps0 + 1e-6, n, delta, method, randomizer) > 1.0
    # the reference's closed-form inverse scans eps0 down from log(n / (16 log(2/δ))) by 0.001
    # (CalcEpsL): it stops within 0.001 below ours
    e_max = math.log(n / (16 * math.log(2 / delta)))
    scan = next(e for e in np.arange(e_max, 0, -0.001) if closed_form_epsilon(e, n, delta) <= 1.0)
    ours = local_epsilon_for(1.0, n, delta, "closed-form")
    assert 0 <= ours - scan < 0.001 + 1e-9
    # never below the target: shuffling eps-LDP reports is eps-DP
    assert local_epsilon_for(0.5, 10, 1e-8) >= 0.5


def test_validation():
    with pytest.raises(ValueError, match="delta"):
        numerical_epsilon(1.0, 100, 0.0)
    with pytest.raises(ValueError, match="n must"):
        numerical_epsilon(1.0, 1, 1e-8)
    with pytest.raises(ValueError, match="randomizer"):
        clones_delta(0.1, 1.0, 10, "laplace")
    with pytest.raises(ValueError, match="closed form"):
        amplified_epsilon(1.0, 100, 1e-8, "closed-form", "binary-rr")
    with pytest.raises(ValueError, match="epsilon0"):
        clones_delta(0.1, -1.0, 10)


@pytest.mark.parametrize("accounting", ["numerical", "closed-form"])
def test_huge_epsilon_claims_no_amplification_instead_of_overflowing(accounting):
    """Beyond e^709 a double overflows: the local epsilon is the central one (always valid), and the
    divergence at eps >= eps0 is 0 without evaluating e^eps (the CLI's epsilon search goes to 1e4)."""
    assert local_epsilon_for(1e4, 198, 1e-6, accounting) == 1e4
    assert clones_delta(1e4, 1e4, 198) == 0.0 and clones_delta(800.0, 2.0, 198) == 0.0
    assert clone_probability(1e4, "binary-rr") == 0.0


def test_wedge_shuffle_moments_at_a_huge_epsilon():
    """The wedge-shuffle moments (flip probabilities at eps0 in the hundreds) stay finite: the
    'epsilon needed' note of `ldpgraph estimate` evaluates them up to epsilon 1e4."""
    from ldpgraph.datasets import resolve_graph
    from ldpgraph.run.method import get_method

    g = resolve_graph("ba:n=200,m=3", rng=3)
    method = get_method("wshuffle-triangles")
    for eps in (1.0, 800.0, 1e4):
        var = method.analytic_variance(g, "triangles", None, eps)
        assert var is None or math.isfinite(var)
