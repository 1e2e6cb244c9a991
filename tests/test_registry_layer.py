"""One registry: a protocol of the layer (``ldpgraph.core``) is a method of the experiments.

A protocol registered with ``@register`` and no simulator of its own is simulated through
:class:`ldpgraph.run.method.Method` (each trial a ``run_in_memory`` run, the code a
deployment runs), so ``estimate``/``experiment`` see it with no wiring.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpgraph.core import Plan, Protocol, Release, Round, RoundPlan
from ldpgraph.core.rows import quantity_rows
from ldpgraph.datasets import resolve_graph
from ldpgraph.experiments import run_experiment
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols import Estimate
from ldpgraph.protocols import registry as layer
from ldpgraph.run.method import Method, get_method, method_names


class _Sum:
    def __init__(self):
        self.total = 0
        self.nodes = 0

    def add(self, chunk):
        self.total += int(np.asarray(chunk.value).sum())
        self.nodes += len(chunk)

    def merge(self, other):
        self.total += other.total
        self.nodes += other.nodes
        return self

    def result(self):
        return self.total, self.nodes


class _Degrees(Round):
    number, name = 1, "degree"

    def release(self, plan, nodes, neighbours, broadcast, sampler):
        eps = plan.release("degree").epsilon
        noisy = [len(nb) + int(sampler.stream(1, v).dlap(eps, 1.0, 1)[0]) for v, nb in zip(nodes, neighbours, strict=True)]
        return quantity_rows(plan, 1, nodes, "degree", noisy)

    def accumulator(self, plan, broadcast, **options):
        return _Sum()


class _HalfDegreeSum(Protocol):
    """Edges = half the sum of the noisy degrees; exact variance n Var(DLap) / 4."""

    name, statistics, reference = "test-half-degree-sum", ("edges",), "tests"
    unbiased = True

    def plan(self, epsilon, **public):
        self.check_public(public)
        return Plan(self.name, 1, epsilon, (RoundPlan(1, "degree", (Release(("degree",), "dlap", epsilon),)),))

    def rounds(self):
        return (_Degrees(),)

    def estimate(self, result, plan, broadcast, statistic):
        total, n = result
        var = n * DiscreteLaplace(epsilon=plan.epsilon).variance / 4
        return Estimate(total / 2, math.sqrt(var), var, "edges", "normal-exact-variance")

    def moments(self, graph, plan, statistic, param=None):
        return float(graph.n_edges), graph.n_nodes * DiscreteLaplace(epsilon=plan.epsilon).variance / 4


@pytest.fixture
def toy():
    layer.register(_HalfDegreeSum)
    yield _HalfDegreeSum.name
    layer.unregister(_HalfDegreeSum.name)


def test_layer_protocol_is_an_experiment_method(toy):
    assert toy in method_names("edges")
    sim = get_method(toy)
    assert isinstance(sim, Method) and not sim.protocol.has_simulator
    assert sim.budget(2.0) == {"degree": 2.0}
    assert sim.deployed_as == (toy, {})
    g = resolve_graph("ws:n=200,k=6,p=0.1", rng=0)
    assert sim.truth(g, "edges", None) == g.n_edges == 600
    assert sim.analytic_rmse(g, "edges", None, 1.0) == pytest.approx(
        math.sqrt(200 * DiscreteLaplace(epsilon=1.0).variance / 4))


def test_unregistered_protocol_leaves_the_methods(toy):
    assert toy in method_names()
    layer.unregister(toy)
    try:
        assert toy not in method_names()
    finally:
        layer.register(_HalfDegreeSum)


def test_experiment_runs_a_layer_protocol_unbiased(toy):
    """Monte-Carlo mean within 4 SE of the truth and variance within 4 SE of the exact one."""
    g = resolve_graph("ws:n=100,k=6,p=0.1", rng=0)
    n = 200
    res = run_experiment({"ws": g}, epsilons=[1.0], methods=[toy], statistics=["edges"], n_trials=n,
                         seed=3, n_jobs=1, quiet=True)
    (cell,) = res.records
    assert (cell.method, cell.statistic, cell.truth) == (toy, "edges", 300.0)
    est = cell.estimates
    assert est.size == n
    var = 100 * DiscreteLaplace(epsilon=1.0).variance / 4
    assert abs(est.mean() - 300) <= 4 * math.sqrt(var / n)
    # sample variance of a near-normal sum: relative SE sqrt(2 / (n - 1))
    assert abs(est.var(ddof=1) / var - 1) <= 4 * math.sqrt(2 / (n - 1))


def test_same_draws_as_run_in_memory(toy):
    """Trial t is run_in_memory with the t-th seed drawn from rng: the deployment's code path."""
    from ldpgraph.run import run_in_memory

    g = resolve_graph("ws:n=50,k=4,p=0.1", rng=1)
    got = get_method(toy).estimate_trials(g, "edges", None, 1.0, 3, rng=5)
    seeds = np.random.default_rng(5).integers(0, 2**63 - 1, size=3)
    want = [run_in_memory(toy, g, 1.0, sampler=int(s)).estimate.value for s in seeds]
    assert got.tolist() == want


def test_rr_triangles_layer_run_matches_the_analytic_variance():
    """The layer's rr-triangles run has the simulator's analytic mean and variance (within 4 SE)."""
    g = resolve_graph("ws:n=40,k=6,p=0.2", rng=0)
    from ldpgraph.run import run_in_memory

    old = get_method("rr-triangles")
    n = 300
    seeds = np.random.default_rng(11).integers(0, 2**63 - 1, size=n)
    est = np.array([run_in_memory("rr-triangles", g, 2.0, sampler=int(s)).estimate.value for s in seeds])
    mean, var = old.analytic_mean(g, "triangles", None, 2.0), old.analytic_variance(g, "triangles", None, 2.0)
    assert abs(est.mean() - mean) <= 4 * math.sqrt(var / n)
    assert abs(est.var(ddof=1) / var - 1) <= 4 * math.sqrt(2 / (n - 1))


def test_rounds_from_the_plan():
    (rnd,) = get_method("rr-triangles").plan(1.5).rounds
    assert (rnd.name, rnd.releases[0].mechanism, rnd.epsilon) == ("rr", "randomized-response", 1.5)
    # a plan that needs the graph's bound: placeholders that do not move the split
    assert get_method("two-round-triangles-dlap").budget(1.0) == layer.get("two-round-triangles-dlap").plan(
        1.0, d_max=7).release_budget()


def test_names_keep_the_modules_order_whatever_was_imported_first():
    """The order of ``names()`` (CLI choices, ``ldpgraph methods``, curate's default) must not depend on which
    protocol module a process happened to import first (it did: curate fell back to wshuffle-triangles)."""
    import subprocess
    import sys

    code = ("import ldpgraph.protocols.shuffle.wedge_shuffle, ldpgraph.protocols.orientation.edge_orient\n"
            "from ldpgraph.protocols import registry\nprint(','.join(registry.names()))")
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    plain = subprocess.run([sys.executable, "-c", code.split("\n", 1)[1]], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert first == plain and first.split(",")[0] == "degree"
