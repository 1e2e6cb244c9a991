"""Privacy audit of the package's protocol-level node randomizers (budget split, LocalLapKStars)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.audit import audit_neighbours
from ldpgraph.protocols import DegreeRandomizer
from ldpgraph.protocols.degrees.kernels import local_count_release

N = 200_000


def _degree_randomizer_node(**kwargs):
    rand = DegreeRandomizer(**kwargs)

    def randomize(d, size, rng):
        rep = rand.randomize(np.full(size, d), rng=rng)
        return np.stack([rep.released[q].values for q in rand.shares], axis=1).squeeze()

    return randomize


def test_degree_randomizer_with_budget_split_is_private_at_total_epsilon():
    node = _degree_randomizer_node(epsilon=1.0, kstar_counts=[2], d_max=4, shares={"degree": 0.4, "kstar_2": 0.6})
    pairs = [(3, 4), (4, 5), (0, 1)]
    assert audit_neighbours(node, pairs, 1.0, n_samples=N, rng=1).passed
    # claiming less than the total is refuted: the release composes both shares
    assert audit_neighbours(node, pairs, 0.75, n_samples=N, rng=2).violation


def test_degree_only_release_is_tight():
    node = _degree_randomizer_node(epsilon=0.8)
    res = audit_neighbours(node, [(10, 11)], 0.8, n_samples=N, rng=3)
    assert res.passed
    assert res.epsilon_lower > 0.7  # the audit has power: the bound is nearly attained


@pytest.mark.parametrize("noise", ["laplace", "dlap"])  # local-lap-kstars, local-dlap-kstars
def test_local_kstar_randomizers_with_projection(noise):
    k, eps = 3, 1.0

    def node(d, size, rng):
        return local_count_release(np.array([d]), k, eps, 6, size, rng, noise)[:, 0]

    pairs = [(5, 6), (6, 7), (2, 3)]  # below, at and above the projection bound
    assert audit_neighbours(node, pairs, eps, n_samples=N, rng=4).passed


def test_audit_catches_a_projection_bound_that_is_not_enforced():
    # a LocalLapKStars-like node that forgets to project: C(d, 2) moves by d - 1 = 8 between
    # degrees 8 and 9, while the noise is calibrated to the bound's sensitivity C(4, 1) = 4
    eps = 1.0

    def leaky(d, size, rng):
        return d * (d - 1) / 2 + rng.laplace(0.0, 4 / eps, size=size)

    assert audit_neighbours(leaky, [(8, 9)], eps, n_samples=N, rng=5).violation
    # the real one projects, and passes on the same pair
    def node(d, size, rng):
        return local_count_release(np.array([d]), 2, eps, 4, size, rng, "laplace")[:, 0]

    assert audit_neighbours(node, [(8, 9)], eps, n_samples=N, rng=5).passed
