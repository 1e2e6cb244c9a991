"""Node side: budget split, sensitivities, projection, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpgraph.protocols import DegreeRandomizer, projected_kstar_counts


def test_default_releases_degree_with_whole_budget():
    rand = DegreeRandomizer(epsilon=0.7)
    reports = rand.randomize([1, 2, 3], rng=0)
    assert list(reports.released) == ["degree"]
    assert reports.total_epsilon == 0.7
    assert reports.degrees.sensitivity == 1.0
    assert reports.degrees.values.dtype == np.int64


@pytest.mark.parametrize(
    "shares",
    [None, {"degree": 0.2, "kstar_2": 0.3, "kstar_3": 0.5}, {"degree": 0.1, "kstar_2": 0.1, "kstar_3": 0.8}],
)
def test_budget_split_is_honoured(shares):
    eps = 1.3
    rand = DegreeRandomizer(epsilon=eps, kstar_counts=[2, 3], d_max=20, shares=shares)
    reports = rand.randomize(np.arange(30), rng=1)
    assert reports.total_epsilon == pytest.approx(eps, rel=1e-15)
    expected = shares or {"degree": 1 / 3, "kstar_2": 1 / 3, "kstar_3": 1 / 3}
    for name, share in expected.items():
        assert reports.released[name].epsilon == pytest.approx(eps * share, rel=1e-15)
    assert reports.kstar_counts(2).sensitivity == math.comb(20, 1)
    assert reports.kstar_counts(3).sensitivity == math.comb(20, 2)


def test_noise_scale_matches_share():
    # the variance of released counts must be that of DLap(exp(-eps_q / Delta_q))
    d = np.full(200_000, 10)
    rand = DegreeRandomizer(epsilon=2.0, kstar_counts=[2], d_max=4, shares={"degree": 0.25, "kstar_2": 0.75})
    rep = rand.randomize(d, rng=2)
    for name in ("degree", "kstar_2"):
        rel = rep.released[name]
        truth = 10 if name == "degree" else math.comb(4, 2)
        noise = rel.values - truth
        var = rel.mechanism.variance
        p = math.exp(-rel.epsilon / rel.sensitivity)
        assert var == pytest.approx(2 * p / (1 - p) ** 2, rel=1e-12)
        # sample variance within 5 standard errors (4th moment of DLap bounded by 3 var^2 + var)
        se = math.sqrt((noise.astype(float) ** 4).mean() / d.size)
        assert abs(noise.var() - var) < 5 * se


def test_projection_is_exact_integer_binomial():
    d = np.array([0, 1, 2, 5, 9, 100])
    got = projected_kstar_counts(d, 3, 9)
    assert got.tolist() == [math.comb(min(int(v), 9), 3) for v in d]


def test_same_seed_same_reports_different_seed_different():
    rand = DegreeRandomizer(epsilon=1.0, kstar_counts=[2], d_max=10)
    a = rand.randomize(np.arange(50), rng=5)
    b = rand.randomize(np.arange(50), rng=5)
    c = rand.randomize(np.arange(50), rng=6)
    for name in a.released:
        assert np.array_equal(a.released[name].values, b.released[name].values)
    assert not np.array_equal(a.degrees.values, c.degrees.values)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": 1, "kstar_counts": [2]}, "d_max"),
        ({"epsilon": 1, "kstar_counts": [2, 2], "d_max": 3}, "repeat"),
        ({"epsilon": 1, "kstar_counts": [2], "d_max": 3, "shares": {"degree": 0.5}}, "missing"),
        ({"epsilon": 1, "kstar_counts": [2], "d_max": 3, "shares": {"degree": 0.5, "kstar_2": 0.6}}, "sum to 1"),
        ({"epsilon": 1, "kstar_counts": [2], "d_max": 3, "shares": {"degree": -0.5, "kstar_2": 1.5}}, "> 0"),
        ({"epsilon": 1, "release_degree": False}, "nothing to release"),
    ],
)
def test_bad_configuration(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DegreeRandomizer(**kwargs)


@pytest.mark.parametrize("degrees, match", [([1, -2], r"degrees\[1\] = -2"), ([1.5], "integers"), ([[1, 2]], "one-dimensional")])
def test_bad_degrees(degrees, match):
    with pytest.raises(ValueError, match=match):
        DegreeRandomizer(epsilon=1.0).randomize(degrees, rng=0)


# --- secure by default (deployment) ---------------------------------------------------------


def test_without_rng_the_secure_exact_sampler_on_os_randomness_is_used(monkeypatch):
    from ldpgraph.mechanisms import secure

    calls = []
    stream = np.random.default_rng(0)

    def fake_urandom(n):
        calls.append(n)
        return stream.bytes(n)

    monkeypatch.setattr(secure, "_os_randbytes", fake_urandom)
    rep = DegreeRandomizer(epsilon=1.0, kstar_counts=[2], d_max=5).randomize([3, 1, 4])
    assert calls, "the secure path must draw its bits from the OS byte source"
    assert rep.metadata["sampler"] == "secure-exact"
    # the same bytes give the same exact draws as the secure sampler itself
    stream = np.random.default_rng(0)
    monkeypatch.setattr(secure, "_os_randbytes", lambda n: stream.bytes(n))
    noise = secure.sample_dlap_exact(2, 1, 3)  # degree share: epsilon 0.5, sensitivity 1: scale 2
    assert rep.degrees.values.tolist() == (np.array([3, 1, 4]) + noise).tolist()


def test_seeded_simulation_is_the_fast_path_and_secure_refuses_a_seed():
    rand = DegreeRandomizer(epsilon=1.0)
    assert rand.randomize([1, 2], rng=3).metadata["sampler"] == "simulation"
    assert rand.randomize([1, 2], secure=False).metadata["sampler"] == "simulation"
    with pytest.raises(ValueError, match="cannot be seeded"):
        rand.randomize([1, 2], rng=3, secure=True)
    with pytest.raises(TypeError, match="secure"):
        rand.randomize([1, 2], secure="yes")


def test_secure_release_passes_the_privacy_audit():
    from ldpgraph.audit import audit_neighbours

    rand = DegreeRandomizer(epsilon=1.0, kstar_counts=[2], d_max=4, shares={"degree": 0.4, "kstar_2": 0.6})

    def node(d, size, rng):  # rng unused: the secure path is unseedable
        rep = rand.randomize(np.full(size, d))
        return np.stack([rep.released[q].values for q in rand.shares], axis=1)

    pairs = [(3, 4), (0, 1)]
    assert audit_neighbours(node, pairs, 1.0, n_samples=100_000, rng=1).passed
    assert audit_neighbours(node, pairs, 0.75, n_samples=100_000, rng=2).violation


# --- randomized response bits (secure by default) --------------------------------------------


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_secure_rr_keep_probability(monkeypatch, eps):
    from ldpgraph.mechanisms import secure
    from ldpgraph.protocols.randomizer import randomized_response_keep

    stream = np.random.default_rng(int(eps * 10))  # a reproducible stand-in for os.urandom
    monkeypatch.setattr(secure, "_os_randbytes", lambda n: stream.bytes(n))
    n = 200_000
    keep = randomized_response_keep(eps, n)
    p = math.exp(eps) / (1 + math.exp(eps))
    assert abs(keep.mean() - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_secure_rr_passes_the_audit_and_a_miscalibrated_claim_fails():
    from ldpgraph.audit import audit_neighbours
    from ldpgraph.protocols.randomizer import randomized_response_bits

    def node(x, size, rng):  # rng unused: secure
        return randomized_response_bits(np.full(size, bool(x)), 1.0).astype(np.int64)

    assert audit_neighbours(node, [(0, 1)], 1.0, n_samples=100_000, rng=1).passed
    assert audit_neighbours(node, [(0, 1)], 0.8, n_samples=100_000, rng=2).violation


def test_rr_flips_exactly_the_bits_not_kept_and_validates():
    from ldpgraph.protocols.randomizer import randomized_response_bits, randomized_response_keep

    bits = np.array([True, False, True, False] * 50)
    out = randomized_response_bits(bits, 0.5, rng=4)
    keep = randomized_response_keep(0.5, bits.size, rng=4)
    assert np.array_equal(out, np.where(keep, bits, ~bits))
    assert randomized_response_bits([1, 0], 1.0, rng=0).dtype == np.bool_
    with pytest.raises(TypeError, match="bits"):
        randomized_response_bits([2, 0], 1.0, rng=0)
    with pytest.raises(ValueError, match="cannot be seeded"):
        randomized_response_keep(1.0, 3, rng=0, secure=True)
