"""Tests of the empirical privacy audit (ldpgraph.audit).

Every randomizer of the package passes at its claimed epsilon (and the estimate sits at the
claimed epsilon, so passing is not for lack of power); deliberately broken randomizers are
caught. The Clopper-Pearson bounds are checked against scipy's exact intervals and the event
counts against a brute-force recount of the recorded outputs.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats

from ldpgraph import audit
from ldpgraph.audit import AuditResult, as_randomizer, audit_neighbours, audit_randomizer
from ldpgraph.mechanisms import DiscreteLaplace, Laplace, Staircase, secure, to_laplace, to_staircase
from ldpgraph.mechanisms.secure import SecureDiscreteLaplace

N = 10**6


def repeat(mech):
    """randomize(x, size, rng) for a mechanism object, written out (not via as_randomizer)."""
    return lambda x, size, rng: mech.randomize(np.full(size, x), rng=rng)


# ------------------------------------------------------------------ correct randomizers pass


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("family", [DiscreteLaplace, Laplace, Staircase])
def test_package_randomizers_pass_at_their_epsilon(family, epsilon):
    mech = family(epsilon=epsilon)
    res = audit_randomizer(repeat(mech), 3, 4, epsilon, n_samples=N, rng=10)
    assert res.passed and not res.violation, res.summary()
    # Laplace-type mechanisms attain e^eps on half-lines: the audit sees it (power)
    assert abs(res.epsilon_hat - epsilon) < 0.05 * epsilon + 0.02, res.summary()
    assert res.epsilon_lower > 0.9 * epsilon


def test_discrete_laplace_sensitivity_three():
    mech = DiscreteLaplace(epsilon=1.0, sensitivity=3)
    res = audit_neighbours(mech, [(0, 3), (10, 8)], 1.0, n_samples=N, rng=11)
    assert res.passed, res.worst.summary()
    assert res.epsilon_lower > 0.9


@pytest.mark.parametrize("convert", [to_laplace, to_staircase])
def test_post_processed_discrete_laplace_passes(convert):
    dlap = DiscreteLaplace(epsilon=1.0)

    def randomize(x, size, rng):
        return convert(dlap.randomize(np.full(size, x), rng=rng), 1.0, rng=rng)

    res = audit_randomizer(randomize, 5, 6, 1.0, n_samples=N, rng=12)
    assert res.passed, res.summary()
    assert abs(res.epsilon_hat - 1.0) < 0.07


def test_secure_discrete_laplace_passes(monkeypatch):
    monkeypatch.setattr(secure, "_os_randbytes", np.random.default_rng(13).bytes)
    mech = SecureDiscreteLaplace(epsilon="0.5")
    res = audit_randomizer(mech, 2, 3, 0.5, n_samples=10**5, rng=13)  # as_randomizer: no rng
    assert res.passed, res.summary()
    assert res.epsilon_lower > 0.4


def test_vector_staircase_passes_and_projection():
    mech = Staircase(epsilon=1.0, dim=2)  # l1 sensitivity 1
    x, xn = np.zeros(2), np.array([0.5, -0.5])
    res = audit_randomizer(mech, x, xn, 1.0, n_samples=300_000, rng=14)
    assert res.passed, res.summary()
    assert res.epsilon_lower > 0.85
    proj = audit_randomizer(mech, x, xn, 1.0, n_samples=300_000, rng=14, projection=[1.0, -1.0])
    assert proj.passed and proj.events[0].startswith("proj(Y)")


def _budget_split_node(eps_each: float, d_max: int):
    """A node releasing (degree + DLap, projected 2-star count + DLap), eps_each for each."""
    m1 = DiscreteLaplace(epsilon=eps_each)
    m2 = DiscreteLaplace(epsilon=eps_each, sensitivity=d_max - 1)

    def randomize(d, size, rng):
        dp = min(d, d_max)
        return np.stack([d + m1.sample(size, rng=rng), dp * (dp - 1) // 2 + m2.sample(size, rng=rng)], axis=1)

    return randomize


def test_budget_split_composition():
    node = _budget_split_node(0.5, d_max=5)
    pairs = [(4, 5), (5, 6)]  # the projected 2-star count moves by d_max - 1 = 4, then by 0
    ok = audit_neighbours(node, pairs, 1.0, n_samples=300_000, rng=15)
    assert ok.passed, ok.worst.summary()
    # each coordinate alone leaks only 0.5: claiming one part's budget is caught by joint events
    bad = audit_neighbours(node, pairs, 0.6, n_samples=300_000, rng=15)
    assert bad.violation
    assert " & " in bad.worst.witness
    # the orthant events see nearly all of the composed epsilon (grid cells alone: ~0.90 here)
    assert audit_neighbours(node, pairs, 0.93, n_samples=300_000, rng=15).violation


# ------------------------------------------------------------------ broken randomizers are caught


def test_wrong_epsilon_is_caught():
    res = audit_randomizer(repeat(DiscreteLaplace(epsilon=2.0)), 3, 4, 1.0, n_samples=N, rng=20)
    assert res.violation and not res.passed
    assert res.epsilon_lower > 1.9


def test_small_excess_is_caught():
    # true epsilon 1.05, claimed 1
    for mech in (DiscreteLaplace(epsilon=1.05), Laplace(epsilon=1.05)):
        res = audit_randomizer(repeat(mech), 3, 4, 1.0, n_samples=N, rng=21)
        assert res.violation, res.summary()


def test_wrong_sensitivity_is_caught():
    # a DLap calibrated to sensitivity 1 on inputs that differ by 2 has epsilon 2
    res = audit_randomizer(repeat(DiscreteLaplace(epsilon=1.0)), 3, 5, 1.0, n_samples=N, rng=22)
    assert res.violation and res.epsilon_lower > 1.9


def test_parity_leak_is_caught_scalar_and_vector():
    dlap = DiscreteLaplace(epsilon=1.0)

    def scalar(x, size, rng):
        return 2 * (x + dlap.sample(size, rng=rng)) + x % 2

    def vector(x, size, rng):
        return np.stack([x + dlap.sample(size, rng=rng), np.full(size, x % 2)], axis=1)

    for fn in (scalar, vector):
        res = audit_randomizer(fn, 3, 4, 1.0, n_samples=N, rng=23)
        assert res.violation and res.epsilon_hat == np.inf
        assert res.epsilon_lower > 10


def test_leak_in_a_rare_event_is_caught():
    # Laplace except that x = 4 releases exactly 100.0 with probability 1e-3
    lap = Laplace(epsilon=1.0)

    def leaky(x, size, rng):
        out = lap.randomize(np.full(size, float(x)), rng=rng)
        if x == 4:
            out[rng.random(size) < 1e-3] = 100.0
        return out

    res = audit_randomizer(leaky, 3, 4, 1.0, n_samples=N, rng=24)
    assert res.violation, res.summary()


def test_vector_staircase_with_too_small_epsilon_claim():
    res = audit_randomizer(Staircase(epsilon=1.3, dim=2), np.zeros(2), np.array([0.5, 0.5]), 1.0,
                           n_samples=300_000, rng=25)
    assert res.violation


# ------------------------------------------------------------------ exactness of the machinery


@pytest.mark.parametrize(("k", "n", "a"), [(0, 1000, 1e-4), (7, 1000, 1e-4), (500, 1000, 1e-6),
                                           (1000, 1000, 1e-4), (123456, 10**6, 1e-7)])
def test_clopper_pearson_matches_scipy(k, n, a):
    low, high = stats.binomtest(k, n).proportion_ci(confidence_level=1 - 2 * a, method="exact")
    assert np.exp(audit._log_cp_lower(np.array([k]), n, a))[0] == pytest.approx(low, rel=1e-9, abs=1e-300)
    assert np.exp(audit._log_cp_upper(np.array([k]), n, a))[0] == pytest.approx(high, rel=1e-9)
    if k == 0:
        assert np.exp(audit._log_cp_upper(np.array([0]), n, a))[0] == pytest.approx(1 - a ** (1 / n))


def _in_event(label: str, y: np.ndarray) -> np.ndarray:
    """Brute-force membership of 1-D outputs in an event from its label."""
    if m := re.fullmatch(r"Y = (\S+)", label):
        return y == float(m[1])
    if m := re.fullmatch(r"Y < (\S+)", label):
        return y < float(m[1])
    if m := re.fullmatch(r"Y >= (\S+)", label):
        return y >= float(m[1])
    if m := re.fullmatch(r"(\S+) <= Y < (\S+)", label):
        return (y >= float(m[1])) & (y < float(m[2]))
    raise AssertionError(f"unexpected label {label!r}")


def test_counts_match_a_recount_of_the_outputs():
    calls = []

    def recorder(x, size, rng):
        out = x + rng.integers(-3, 4, size) * rng.integers(0, 3, size)
        calls.append(out)
        return out

    res = audit_randomizer(recorder, 0, 1, 1.0, n_samples=5000, rng=30, bins=8, margin=math.inf)
    assert len(calls) == 4  # pilot x, pilot x', counts x, counts x'
    p_x, p_xn, y_x, y_xn = calls
    assert res.n_events == len(res.events) == res.counts.shape[0]
    n_lr = 0
    for label, (c_x, c_xn) in zip(res.events, res.counts, strict=True):
        if label.startswith("LR["):
            # brute force: rank the pilot's distinct values by (a + 1/2) / (b + 1/2), take the top j
            n_lr += 1
            j = int(re.search(r"the (\d+) exact", label)[1])
            values = np.unique(np.concatenate([p_x, p_xn]))
            a = np.array([np.count_nonzero(p_x == v) for v in values])
            b = np.array([np.count_nonzero(p_xn == v) for v in values])
            ratio = (a + 0.5) / (b + 0.5)
            order = np.argsort(-ratio if "[x over" in label else ratio, kind="stable")
            top = values[order[:j]]
            assert c_x == np.count_nonzero(np.isin(y_x, top)), label
            assert c_xn == np.count_nonzero(np.isin(y_xn, top)), label
            continue
        assert c_x == np.count_nonzero(_in_event(label, y_x)), label
        assert c_xn == np.count_nonzero(_in_event(label, y_xn)), label
    assert n_lr >= 6 and any("likelihood-ratio" in f for f in res.families)
    # the bound is the maximum of the per-event bounds, computed from those counts
    m = res.n_events
    a = (1 - res.confidence) / (4 * m)
    i = res.events.index(res.witness.rsplit(" (", 1)[0])
    lo = audit._log_cp_lower(res.counts[i], 5000, a)
    up = audit._log_cp_upper(res.counts[i], 5000, a)
    assert res.epsilon_lower == pytest.approx(max(lo[0] - up[1], lo[1] - up[0]))
    assert res.epsilon_lower == pytest.approx(res.log_ratio_lower.max())


@pytest.mark.filterwarnings("ignore::ldpgraph.audit.AuditPowerWarning")
def test_false_alarm_rate_is_controlled():
    # 200 audits of a correct mechanism at confidence 0.8: at most 20% flagged in expectation
    mech = repeat(DiscreteLaplace(epsilon=1.0))
    children = np.random.SeedSequence(31).spawn(200)
    flagged = sum(
        audit_randomizer(mech, 0, 1, 1.0, n_samples=2000, rng=np.random.default_rng(c), confidence=0.8).violation
        for c in children
    )
    assert stats.binom.sf(flagged - 1, 200, 0.2) > 1e-3  # P[X >= flagged] under rate 0.2


def test_explicit_bins_and_discrete_flag():
    lap = repeat(Laplace(epsilon=1.0))
    res = audit_randomizer(lap, 0.0, 1.0, 1.0, n_samples=200_000, rng=32, bins=[0.0, 1.0, 2.0])
    assert res.passed
    cells = ["Y < 0", "0 <= Y < 1", "1 <= Y < 2", "Y >= 2"]
    assert list(res.events[:8]) == cells + ["Y < 1", "Y < 2", "Y >= 0", "Y >= 1"]
    assert all(e.startswith("LR[") for e in res.events[8:])
    forced = audit_randomizer(repeat(DiscreteLaplace(epsilon=1.0)), 0, 1, 1.0, n_samples=50_000, rng=33,
                              discrete=False, bins=4)
    assert forced.passed and all(" = " not in e for e in forced.events)


def test_same_seed_same_result_and_neighbour_bookkeeping():
    mech = DiscreteLaplace(epsilon=1.0)
    a = audit_randomizer(mech, 0, 1, 1.0, n_samples=10_000, rng=40)
    b = audit_randomizer(mech, 0, 1, 1.0, n_samples=10_000, rng=40)
    assert a.epsilon_lower == b.epsilon_lower and np.array_equal(a.counts, b.counts)
    rep = audit_neighbours(mech, [(0, 1), (1, 2), (7, 6), (3, 2)], 1.0, n_samples=10_000, rng=41,
                           confidence=0.99)
    assert len(rep.results) == 4
    assert all(r.confidence == pytest.approx(1 - 0.01 / 4) for r in rep.results)
    assert rep.worst.epsilon_lower == rep.epsilon_lower == max(r.epsilon_lower for r in rep.results)
    assert rep.results[2].x == 7 and rep.results[2].x_neighbour == 6
    assert isinstance(rep.worst, AuditResult) and "passed" in rep.worst.summary()


def test_as_randomizer():
    f = as_randomizer(Staircase(epsilon=1.0, dim=3))
    assert f(np.zeros(3), 5, np.random.default_rng(0)).shape == (5, 3)
    g = as_randomizer(lambda v: v * 2)  # no rng parameter
    assert np.array_equal(g(4, 3, np.random.default_rng(0)), [8, 8, 8])
    with pytest.raises(TypeError, match="mechanism"):
        as_randomizer(3)


# ------------------------------------------------------------------ validation


def test_bad_inputs():
    mech = DiscreteLaplace(epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        audit_randomizer(mech, 0, 1, 0.0)
    with pytest.raises(ValueError, match="n_samples"):
        audit_randomizer(mech, 0, 1, 1.0, n_samples=5)
    with pytest.raises(ValueError, match="confidence"):
        audit_randomizer(mech, 0, 1, 1.0, n_samples=100, confidence=1.0)
    with pytest.raises(ValueError, match="shape"):
        audit_randomizer(lambda x, n, g: np.zeros(n + 1), 0, 1, 1.0, n_samples=100)
    with pytest.raises(ValueError, match="NaN"):
        audit_randomizer(lambda x, n, g: np.full(n, np.nan), 0, 1, 1.0, n_samples=100)
    with pytest.raises(TypeError, match="numeric"):
        audit_randomizer(lambda x, n, g: np.array(["a"] * n), 0, 1, 1.0, n_samples=100)
    vec = as_randomizer(Staircase(epsilon=1.0, dim=2))
    with pytest.raises(ValueError, match="projection"):
        audit_randomizer(vec, np.zeros(2), np.ones(2) / 2, 1.0, n_samples=100, projection=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="bins"):
        audit_randomizer(vec, np.zeros(2), np.ones(2) / 2, 1.0, n_samples=100, bins=[0.0, 1.0])
    with pytest.raises(ValueError, match="pairs"):
        audit_neighbours(mech, [], 1.0)
