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
