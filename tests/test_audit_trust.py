"""The audit against structured leaks, huge integers and its own power statement (issue 13).

* a leak spread over many values with an input-dependent parity, which no interval sees, is
  caught by the likelihood-ratio events at 4e6 samples (and missed without them);
* outputs near 2**60 are compared as exact integers, not collapsed by float64;
* honest randomizers of the package pass across 20 seeds (false-alarm rate within 1 - confidence);
* the recorded resolution and smallest detectable excess mean what they say;
* worst_neighbour_pairs finds the pair where an under-calibrated projection leaks.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import special, stats

from ldpgraph import audit
from ldpgraph.audit import (
    AuditPowerWarning,
    audit_neighbours,
    audit_randomizer,
    package_randomizers,
    worst_neighbour_pairs,
)
from ldpgraph.mechanisms import DiscreteLaplace, secure

pytestmark = pytest.mark.filterwarnings("ignore::ldpgraph.audit.AuditPowerWarning")

DLAP1 = DiscreteLaplace(epsilon=1.0)
DLAP005 = DiscreteLaplace(epsilon=0.05)


def parity_leak(d, size, rng):
    """d + DLap(1) (1-DP), except that with probability 1e-3 it releases 2 DLap(0.05) + (d mod 2)."""
    out = d + DLAP1.sample(size, rng=rng)
    leak = rng.random(size) < 1e-3
    out[leak] = 2 * DLAP005.sample(int(leak.sum()), rng=rng) + d % 2
    return out


def test_parity_leak_log_ratio_is_unbounded():
    # exact law: at v = 61 (odd) the leak gives P_3 >= 1e-3 P[2 DLap(0.05) = 60] while P_4(61) is
    # the honest e^-57-ish term only: the log-ratio exceeds 40, so the claim eps = 1 is false
    p_leak = 1e-3 * DLAP005.pmf(30)
    p_honest_4 = (1 - 1e-3) * DLAP1.pmf(61 - 4)
    assert math.log((p_leak + (1 - 1e-3) * DLAP1.pmf(61 - 3)) / p_honest_4) > 40


def test_parity_leak_is_caught_at_4e6_samples():
    res = audit_randomizer(parity_leak, 3, 4, 1.0, n_samples=4 * 10**6, rng=1)
    assert res.violation, res.summary()
    assert res.epsilon_lower > 3
    assert res.witness.startswith("LR[")
    assert any(f.startswith("likelihood-ratio") for f in res.families)


def test_parity_leak_needs_the_likelihood_ratio_events():
    with_lr = audit_randomizer(parity_leak, 3, 4, 1.0, n_samples=10**6, rng=2)
    without = audit_randomizer(parity_leak, 3, 4, 1.0, n_samples=10**6, rng=2, likelihood_events=False)
    assert with_lr.violation and without.passed  # intervals mix both parities
    assert with_lr.n_events > without.n_events


def test_outputs_near_2_60_are_exact_integers():
    dlap5 = DiscreteLaplace(epsilon=5.0)

    def node(x, size, rng):
        return x + dlap5.sample(size, rng=rng)  # int64: exact at 2**60

    x = 2**60
    assert float(x) == float(x + 1)  # float64 would merge the two inputs' outputs
    res = audit_randomizer(node, x, x + 1, 1.0, n_samples=10**5, rng=3)
    assert res.violation and res.epsilon_lower > 4, res.summary()
    assert str(x) in res.witness or str(x + 1) in res.witness
    ok = audit_randomizer(node, x, x + 1, 5.0, n_samples=10**5, rng=3)
    assert ok.passed, ok.summary()


# ------------------------------------------------------------------ honest randomizers, 20 seeds


def test_every_package_randomizer_passes_across_20_seeds():
    # 12 randomizers x 20 seeds at confidence 0.99: under the null each is flagged with
    # probability <= 0.01; the count must be plausible under that rate
    conf, seeds = 0.99, np.random.SeedSequence(2026).spawn(20)
    flagged, total = [], 0
    for name, (fn, eps, (x, xn)) in package_randomizers().items():
        for s in seeds:
            res = audit_randomizer(fn, x, xn, eps, n_samples=4000, rng=np.random.default_rng(s),
                                   confidence=conf)
            total += 1
            if res.violation:
                flagged.append((name, res.summary()))
    assert total == len(package_randomizers()) * 20
    assert stats.binom.sf(len(flagged) - 1, total, 1 - conf) > 1e-3, flagged  # P[X >= flagged]


def test_secure_sampler_passes(monkeypatch):
    monkeypatch.setattr(secure, "_os_randbytes", np.random.default_rng(5).bytes)
    res = audit_randomizer(secure.SecureDiscreteLaplace(epsilon="1/2"), 3, 4, 0.5, n_samples=50_000, rng=5)
    assert res.passed, res.summary()


# ------------------------------------------------------------------ the power statement


def test_resolution_and_detectable_excess_against_scipy():
    n, a, eps = 10**5, 1e-5, 1.0
    q = audit._resolution(n, a, eps)
    # at q, Clopper-Pearson lower bound of n q successes over the upper bound of 0 is e^eps
    lower = stats.beta.ppf(a, n * q, n - n * q + 1)
    upper = 1 - a ** (1 / n)
    assert math.log(lower / upper) == pytest.approx(eps, abs=1e-4)
    qq = 0.05
    delta = audit._detectable_excess(qq, n, a, eps)
    k, k0 = n * qq * math.exp(eps + delta), n * qq
    lo = special.betaincinv(k, n - k + 1, a)
    up = special.betaincinv(k0 + 1, n - k0, 1 - a)
    assert math.log(lo / up) == pytest.approx(eps, abs=1e-6)
    # normal approximation: log L(k) ~ log(k/n) - z/sqrt(k), log U(k0) ~ log(k0/n) + z/sqrt(k0)
    z = stats.norm.isf(a)
    assert delta == pytest.approx(z * (1 / math.sqrt(k) + 1 / math.sqrt(k0)), rel=0.1)


def test_power_statement_is_honest():
    base = audit_randomizer(DLAP1, 3, 4, 1.0, n_samples=10**5, rng=6)
    assert base.passed
    assert 0 < base.min_detectable_excess < 0.1
    assert base.resolution < 1e-3
    assert base.detectable_excess(1e-3) > base.min_detectable_excess  # rarer events: less power
    # a true excess of twice the stated detectable one is caught (in every one of 5 seeds)
    bad = DiscreteLaplace(epsilon=1.0 + 2 * base.min_detectable_excess)
    caught = [audit_randomizer(bad, 3, 4, 1.0, n_samples=10**5, rng=s).violation for s in range(5)]
    assert all(caught)


def test_power_warning_when_the_sample_is_too_small():
    with pytest.warns(AuditPowerWarning, match="smallest detectable excess"):
        small = audit_randomizer(DLAP1, 3, 4, 1.0, n_samples=1000, rng=7)
    assert small.passed and small.min_detectable_excess > small.margin == pytest.approx(0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AuditPowerWarning)
        big = audit_randomizer(DLAP1, 3, 4, 1.0, n_samples=10**5, rng=7)
        audit_randomizer(DLAP1, 3, 4, 1.0, n_samples=1000, rng=7, margin=math.inf)
    assert big.min_detectable_excess < big.margin


def test_fast_sampler_tail_bound_is_reported():
    res = audit_randomizer(DLAP1, 3, 4, 1.0, n_samples=10**4, rng=8, margin=math.inf)
    assert any("|eta| <= 44" in note for note in res.notes), res.notes
    # the bound is an event far below the run's resolution: no sample can see it
    assert DLAP1.fast_tail_mass < 1e-18 < res.resolution


# ------------------------------------------------------------------ neighbouring pairs


def test_worst_neighbour_pairs():
    from ldpgraph.run.method import get_method

    method = get_method("local-lap-kstars").with_options(d_max=6)
    assert worst_neighbour_pairs(method) == worst_neighbour_pairs(d_max=6)
    pairs = worst_neighbour_pairs(d_max=6, max_degree=40)
    for p in [(0, 1), (5, 6), (6, 7), (7, 8), (39, 40)]:
        assert p in pairs
    assert all(b == a + 1 for a, b in pairs)
    assert worst_neighbour_pairs() == [(0, 1), (1, 2), (2, 3)]
    with pytest.raises(ValueError, match="d_max"):
        worst_neighbour_pairs(d_max=0)


def test_worst_pairs_catch_an_off_by_one_sensitivity():
    # projected 2-star count C(min(d, 6), 2) moves by up to 5 (from d = 5 to 6), but the noise
    # is calibrated to 4 = C(5, 1) - 1: only the pair (5, 6) shows it
    d_max, eps = 6, 1.0

    def node(d, size, rng):
        dp = min(d, d_max)
        return dp * (dp - 1) / 2 + rng.laplace(0.0, (d_max - 2) / eps, size=size)

    naive = [(2, 3), (10, 11)]
    assert audit_neighbours(node, naive, eps, n_samples=200_000, rng=9).passed
    rep = audit_neighbours(node, worst_neighbour_pairs(d_max=d_max), eps, n_samples=200_000, rng=9)
    assert rep.violation
    assert (rep.worst.x, rep.worst.x_neighbour) == (5, 6)
