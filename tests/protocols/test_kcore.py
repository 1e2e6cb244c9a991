"""k-core decomposition under LEDP: truth, the level structures (reference and ours), privacy audit."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.audit import audit_neighbours
from ldpgraph.datasets import load_dataset
from ldpgraph.graph import from_edge_array
from ldpgraph.protocols.kcore import (
    approximation_factors,
    core_summary,
    exact_core_numbers,
    reference_degree_bias,
    reference_kcore,
    reference_parameters,
    svt_core_estimate,
    svt_kcore,
    svt_node_release,
    svt_thresholds,
)
from ldpgraph.protocols.kcore_methods import KCoreMethod, core_sizes


def _karate():
    kg = nx.karate_club_graph()
    return from_edge_array(np.array(kg.edges(), dtype=np.int64), n_nodes=kg.number_of_nodes()), kg


@pytest.fixture(scope="module")
def facebook():
    return load_dataset("facebook")


def test_truth_is_networkx_core_number():
    g, kg = _karate()
    want = nx.core_number(kg)
    assert exact_core_numbers(g).tolist() == [want[v] for v in range(kg.number_of_nodes())]


def test_core_sizes_match_networkx_k_cores():
    g, kg = _karate()
    sizes = core_sizes(exact_core_numbers(g))
    assert sizes == {k: nx.k_core(kg, k).number_of_nodes() for k in range(1, 5)}


def test_approximation_factor_is_symmetric_and_skips_core_zero():
    assert approximation_factors([4.0, 0.5, 7.0], [2, 2, 0]).tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="shape"):
        approximation_factors([1.0], [1, 2])


def test_svt_estimate_brackets_the_core_number_without_noise():
    # a node failing in group g has its core number in [k_{g-1}, k_g - 1] once peeling converged
    ks = svt_thresholds(0.25, 200)
    assert np.all(np.diff(ks) >= 1) and ks[0] == 1
    levels = np.arange(0, 2 * len(ks))
    est = svt_core_estimate(levels, ks, 2)
    g = levels // 2
    lo = np.where(g > 0, ks[np.maximum(g - 1, 0)], 1)
    assert np.all(est >= lo - 1e-12) and np.all(est <= np.maximum(ks[g] - 1, 1) + 1e-12)


def test_svt_at_high_epsilon_returns_exact_core_numbers_on_karate():
    g, _ = _karate()
    truth = exact_core_numbers(g)
    # two levels per group: peeling may not converge, an overshoot of one group (within 2 + eta)
    assert core_summary(svt_kcore(g, 50.0, rng=3).core_numbers, truth)["max_approximation_factor"] <= 1.25
    # enough levels per group for the peeling to converge: exact (the thresholds 1, 2, 3, 4, 5 are
    # consecutive integers there)
    run = svt_kcore(g, 50.0, levels_per_group=8, rng=3)
    assert run.core_numbers.tolist() == truth.astype(float).tolist()


def test_svt_at_high_epsilon_is_within_the_papers_factor_on_facebook(facebook):
    truth = exact_core_numbers(facebook)
    run = svt_kcore(facebook, 50.0, rng=4)
    s = core_summary(run.core_numbers, truth)
    # the paper's guarantee is a 2 + eta factor; with eps = 50 the noise is negligible and what is
    # left is the rounding of the level structure (psi = 1/4, two levels per group)
    assert s["max_approximation_factor"] <= 2.0
    assert s["mean_approximation_factor"] <= 1.15
    # the noise-free run of the same structure: the same levels
    quiet = svt_kcore(facebook, 50.0, noise=False)
    assert np.mean(run.levels == quiet.levels) > 0.99


def test_reference_levels_and_estimates_follow_the_code(facebook):
    run = reference_kcore(facebook, 50.0, rng=5)
    par = reference_parameters(facebook.n_nodes)
    assert run.rounds == min(par["max_rounds"], int(run.caps.max()))
    assert np.all(run.levels <= np.minimum(run.caps, run.rounds))  # a node stops at its cap
    power = np.log(run.core_numbers / 2.5) / math.log(1.5)  # (2 + 1/2) 1.5^j, j integer >= 0
    assert np.allclose(power, np.round(power)) and power.min() >= 0


def test_reference_bias_sends_every_node_to_its_cap_at_small_epsilon(facebook):
    # the code's bias B = floor(6 e^s / (e^{2s} - 1)^3) is ~10^6 for s ~ 1e-2: no node ever fails
    run = reference_kcore(facebook, 0.5, rng=6)
    assert np.all(run.levels == np.minimum(run.caps, run.rounds))


def test_seeded_runs_repeat():
    g, _ = _karate()
    a, b = svt_kcore(g, 1.0, rng=7), svt_kcore(g, 1.0, rng=7)
    assert a.levels.tolist() == b.levels.tolist() and a.rounds == b.rounds
    with pytest.raises(ValueError, match="rho_share"):
        svt_kcore(g, 1.0, rho_share=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        svt_kcore(g, -1.0)


def test_svt_node_transcript_is_private_at_its_total_epsilon():
    """The whole transcript (moves until the first failure) over neighbouring lists: adding a
    neighbour raises the counts by 0 or 1 in every round (monotone)."""
    ks = np.array([1, 2, 3, 4, 5])
    eps = 1.0

    def node(counts, size, rng):
        return svt_node_release(np.array(counts), ks, eps, size=size, rng=rng)

    pairs = [((2, 2, 3, 3, 4), (3, 3, 4, 4, 5)), ((2, 2, 3, 3, 4), (2, 3, 3, 4, 4)),
             ((0, 0, 0, 0, 0), (1, 0, 0, 0, 0))]
    assert audit_neighbours(node, pairs, eps, n_samples=100_000, rng=8).passed
    # one round at a time it would spend eps per round: the audit sees more than eps/2 leak
    assert audit_neighbours(node, pairs[:1], eps / 3, n_samples=100_000, rng=9).violation


def test_method_records_and_details():
    g, _ = _karate()
    m = KCoreMethod("kcore-svt", levels_per_group=8)
    est = m.estimate_trials(g, "core_numbers", None, 50.0, 2, rng=0)
    assert est.tolist() == [1.0, 1.0]
    d = m.trial_details(g, 50.0, rng=0)
    assert d["max_approximation_factor"] == 1.0 and d["degeneracy"] == 4.0 and d["rounds"] >= 8
    assert d["kcore_sizes"] == d["true_kcore_sizes"]
    ref = KCoreMethod("kcore-reference")
    assert math.isclose(sum(ref.budget(1.0).values()), 1.0)
    with pytest.raises(ValueError, match="k-core method"):
        KCoreMethod("kcore-x")


def test_reference_level_move_is_private_at_its_per_round_epsilon():
    """One round of the reference at a node: U + DLap(e^-s) + B > threshold, s = eps2 / (2 t_v)."""
    from ldpgraph.protocols.kcore import _dlap_vector

    s, bias, thr = 0.3, 2, 5

    def node(u, size, rng):
        return (u + _dlap_vector(rng, np.full(size, s)) + bias > thr).astype(np.int64)

    assert audit_neighbours(node, [(3, 4), (4, 5)], s, n_samples=300_000, rng=16).passed
    assert audit_neighbours(node, [(3, 4)], s / 2, n_samples=100_000, rng=17).violation


def test_reference_degree_bias_uses_eps1_as_the_go_code_does():
    """kcore-ldp.go: ``bias_factor * 2e^lambda / (e^{2 lambda} - 1)`` with lambda = eps * factor
    (the noise alone takes lambda / 2). At eps_paper = 1, f = 4/5, b = 8: 16 e^0.8 / (e^1.6 - 1)."""
    e08, e16 = 2.225540928492468, 4.953032424395115
    assert reference_degree_bias(0.8, 8) == pytest.approx(16 * e08 / (e16 - 1), rel=1e-12)
    assert reference_degree_bias(0.8, 8) == pytest.approx(9.0079, abs=1e-4)
