"""DiscreteLaplace(secure=True) routes to the exact sampler with the OS CSPRNG."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpgraph.mechanisms import DiscreteLaplace


def test_secure_randomize_has_the_dlap_law():
    mech = DiscreteLaplace(epsilon=1.0)
    noise = mech.randomize(np.zeros(100_000, dtype=int), secure=True)
    assert noise.dtype == np.int64
    # P[eta = 0] = (1-p)/(1+p): binomial standard error sqrt(q(1-q)/n)
    q = math.tanh(0.5)
    assert abs((noise == 0).mean() - q) < 5 * math.sqrt(q * (1 - q) / noise.size)
    assert abs(noise.var() - mech.variance) < 5 * math.sqrt(3 * mech.variance**2 / noise.size) + 0.05


def test_secure_is_not_seedable():
    with pytest.raises(ValueError, match="rng must be None"):
        DiscreteLaplace(epsilon=1.0).sample(3, rng=0, secure=True)
    a = DiscreteLaplace(epsilon=0.5).sample(50, secure=True)
    b = DiscreteLaplace(epsilon=0.5).sample(50, secure=True)
    assert a.shape == (50,) and not np.array_equal(a, b)
    assert isinstance(DiscreteLaplace(epsilon=0.5).sample(secure=True), np.integer)


# ------------------------------------------------------------------ issue 26 item 11: secure by default


@pytest.fixture
def spies(monkeypatch):
    """Count calls of the exact sampler and of the fast one; numpy's generators must not be made."""
    from ldpgraph.mechanisms import discrete_laplace as dl

    calls = {"exact": 0, "fast": 0}
    exact, fast = dl.sample_dlap_exact, dl.sample_dlap

    def spy_exact(*a, **k):
        calls["exact"] += 1
        return exact(*a, **k)

    def spy_fast(*a, **k):
        calls["fast"] += 1
        return fast(*a, **k)

    monkeypatch.setattr(dl, "sample_dlap_exact", spy_exact)
    monkeypatch.setattr(dl, "sample_dlap", spy_fast)
    return calls


def test_no_rng_means_the_secure_exact_sampler(spies, monkeypatch):
    def no_numpy(*a, **k):
        raise AssertionError("the secure default must not draw from a numpy generator")

    monkeypatch.setattr(np.random, "default_rng", no_numpy)
    mech = DiscreteLaplace(epsilon=1.0)
    out = mech.randomize(np.array([3, 10, 0]))
    assert out.dtype == np.int64 and out.shape == (3,)
    assert isinstance(mech.sample(), np.integer)
    assert mech.sample((2, 2)).shape == (2, 2)
    assert spies == {"exact": 3, "fast": 0}


def test_a_seed_still_means_the_fast_seeded_sampler(spies):
    mech = DiscreteLaplace(epsilon=1.0, sensitivity=2.0)
    a = mech.randomize([3, 10, 0], rng=7)
    b = mech.randomize([3, 10, 0], rng=np.random.default_rng(7))
    assert np.array_equal(a, b)
    assert mech.sample(5, rng=1).shape == (5,)
    assert spies == {"exact": 0, "fast": 3}
    mech.sample(4, secure=False)  # explicitly fast, unseeded
    assert spies == {"exact": 0, "fast": 4}


def test_secure_must_be_a_bool_or_none():
    with pytest.raises(TypeError, match="secure must be a bool or None, got str"):
        DiscreteLaplace(epsilon=1.0).sample(3, secure="yes")


def test_every_discrete_randomizer_is_secure_without_rng(spies, monkeypatch):
    """DegreeRandomizer and randomized response follow the same rule as DiscreteLaplace."""
    from ldpgraph.mechanisms import secure as sec
    from ldpgraph.protocols import DegreeRandomizer
    from ldpgraph.protocols.randomizer import randomized_response_bits

    rep = DegreeRandomizer(epsilon=1.0, kstar_counts=[2], d_max=5).randomize([3, 1, 2])
    assert rep.metadata["sampler"] == "secure-exact"
    assert spies["exact"] == 2 and spies["fast"] == 0
    assert DegreeRandomizer(epsilon=1.0).randomize([3], rng=0).metadata["sampler"] == "simulation"
    bern = {"n": 0}
    real = sec.sample_bernoulli_exp

    def spy(*a, **k):
        bern["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(sec, "sample_bernoulli_exp", spy)
    import ldpgraph.mechanisms as mechs

    monkeypatch.setattr(mechs, "sample_bernoulli_exp", spy)
    randomized_response_bits([True, False, True], 1.0)
    assert bern["n"] >= 1
