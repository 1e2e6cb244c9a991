"""Transitivity deployed: two-round-triangles-dlap (and arr-triangles) with a degree release
(``degree_share``).

memory == files (CSV, JSON Lines, Parquet) == Dask; the simulator's budget split and law; the
unbiased variance estimate of the two-star count (exact, by summing the DLap mass); a private node
release; the CLI round trip."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.audit import audit_neighbours
from ldpgraph.cli import main
from ldpgraph.core import Sampler, Seeded
from ldpgraph.datasets import resolve_graph
from ldpgraph.graph import from_networkx
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols import registry
from ldpgraph.protocols.triangles.transitivity import two_star_variance, two_star_variance_estimate
from ldpgraph.run import accumulate_files, node_lists, release_to_file, run_in_memory
from ldpgraph.run.files import read_broadcast, write_broadcast
from ldpgraph.run.memory import resolve_public
from ldpgraph.run.method import get_method

NAME = "two-round-triangles-dlap"
SMALL = "ws:n=300,k=10,p=0.1"


def _through_files(tmp_path, graph, epsilon, options, *, fmt, scheduler=None, name=NAME):
    proto = registry.get(name)
    plan = proto.plan(epsilon, **resolve_public(proto, graph, {"degree_share": 0.1, **options}))
    nodes, lists = node_lists(graph)
    broadcast = result = None
    for rnd in proto.rounds():
        paths = []
        for i, cut in enumerate(np.array_split(np.arange(nodes.size), 3)):
            paths.append(tmp_path / f"r{rnd.number}-{i}.{fmt}")
            release_to_file(paths[-1], rnd, plan, nodes[cut], [lists[j] for j in cut], broadcast, Seeded(5))
        result = accumulate_files(paths, rnd, plan, broadcast, chunk_rows=211, scheduler=scheduler)
        nxt = rnd.broadcast(result, plan)
        if nxt is not None:
            write_broadcast(proto, tmp_path / "b.txt", nxt)
            broadcast = read_broadcast(proto, tmp_path / "b.txt", plan)
    return proto.estimate(result, plan, broadcast, "transitivity")


@pytest.mark.parametrize(("name", "options"), [(NAME, {}), (NAME, {"private_bound": True}), ("arr-triangles", {}),
                                               ("rr-triangles", {})])
def test_files_and_dask_equal_memory(tmp_path, name, options):
    g = resolve_graph(SMALL, rng=0)
    want = run_in_memory(name, g, 3.0, sampler=5, statistic="transitivity", **options).estimate
    assert want.statistic == "transitivity" and np.isfinite(want.value)
    assert (want.std_error is None) == (name == "arr-triangles")  # arr-triangles clips: none
    for fmt in ("csv", "jsonl", "parquet") if name == NAME else ("jsonl",):  # (the formats: test_executors)
        got = _through_files(tmp_path, g, 3.0, options, fmt=fmt, name=name)
        assert (got.value, got.std_error) == (want.value, want.std_error), fmt
    got = _through_files(tmp_path, g, 3.0, options, fmt="parquet", scheduler="sync", name=name)
    assert (got.value, got.std_error) == (want.value, want.std_error)


@pytest.mark.parametrize("private", [False, True])
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_the_plan_spends_the_simulators_split(private, epsilon):
    proto = registry.get(NAME)
    plan = proto.plan(epsilon, degree_share=0.1, **({"private_bound": True} if private else {"d_max": 6}))
    released = sorted(rel.epsilon for r in plan.rounds for rel in r.releases)
    sim = get_method(NAME + ("-private" if private else "")).budget(epsilon, "transitivity")
    # the simulation's split: 0.1 on the degree, the rest as the triangles' (0.1 of it on the bound)
    want = {"degree": 0.1, "rr": 0.405, "degree-bound": 0.09, "local-count": 0.405} if private else {
        "degree": 0.1, "rr": 0.45, "local-count": 0.45}
    assert sim == pytest.approx({k: v * epsilon for k, v in want.items()}, rel=1e-12)
    assert released == pytest.approx(sorted(sim.values()), rel=1e-12)
    assert plan.release("degree").epsilon == pytest.approx(0.1 * epsilon, rel=1e-12)
    # the statistic selects the degree release in memory; the triangles alone spend nothing on it
    g = resolve_graph("ws:n=30,k=4,p=0.1", rng=0)
    assert "degree" in run_in_memory(NAME, g, epsilon, sampler=0, statistic="transitivity").rows[1]["quantity"]
    assert "degree" not in run_in_memory(NAME, g, epsilon, sampler=0).rows[1]["quantity"]


def test_rr_plan_spends_the_simulators_split():
    plan = registry.get("rr-triangles").plan(2.0, degree_share=0.1)
    released = sorted(rel.epsilon for r in plan.rounds for rel in r.releases)
    sim = get_method("rr-triangles").budget(2.0, "transitivity")
    assert sim == pytest.approx({"degree": 0.2, "rr": 1.8}, rel=1e-12)
    assert released == pytest.approx(sorted(sim.values()), rel=1e-12)
    assert registry.get("rr-triangles").plan(2.0).describe() == "epsilon 2 = rr 2"


@pytest.mark.parametrize("clipping", [True, False])
def test_arr_plan_spends_the_simulators_split(clipping):
    plan = registry.get("arr-triangles").plan(2.0, degree_share=0.1, clipping=clipping,
                                              **({} if clipping else {"d_max": 5}))
    released = sorted(rel.epsilon for r in plan.rounds for rel in r.releases)
    sim = get_method("arr-triangles").with_options(clipping=clipping).budget(2.0, "transitivity")
    want = {"degree": 0.2, "degree-bound": 0.18, "arr": 0.81, "local-count": 0.81} if clipping else {
        "degree": 0.2, "arr": 0.9, "local-count": 0.9}
    assert sim == pytest.approx(want, rel=1e-12)
    assert released == pytest.approx(sorted(sim.values()), rel=1e-12)


@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_two_star_variance_estimate_is_unbiased_exactly(eps):
    """E over the DLap law (mass summed to 1e-16 of its tail) equals two_star_variance."""
    p = math.exp(-eps)
    k_max = int(math.log(1e-17) / math.log(p)) + 5
    eta = np.arange(-k_max, k_max + 1)
    pmf = DiscreteLaplace(epsilon=eps).pmf(eta)
    assert 1.0 - pmf.sum() < 1e-14
    for d in (0, 1, 2, 5, 13):
        mean = math.fsum((pmf * np.array([two_star_variance_estimate([d + e], eps) for e in eta])).tolist())
        assert mean == pytest.approx(two_star_variance([d], eps), rel=1e-9, abs=1e-9)


def test_degree_rows_have_the_simulators_law():
    """Every node's degree row is d_v + DLap(e^-eps_d): mean 0 and the DLap variance (within 4 SE)."""
    g = resolve_graph("ws:n=200,k=6,p=0.1", rng=0)
    noise = []
    for s in range(15):
        run = run_in_memory(NAME, g, 2.0, sampler=s, statistic="transitivity")
        rows = run.rows[1]
        at = rows["quantity"] == "degree"
        noise.append(rows["value"][at] - g.degrees[rows["node"][at]])
    x = np.concatenate(noise).astype(float)
    mech = DiscreteLaplace(epsilon=run.plan.release("degree").epsilon)
    var = mech.variance
    assert abs(x.mean()) <= 4 * math.sqrt(var / x.size)
    p = math.exp(-run.plan.release("degree").epsilon)
    m4 = 2 * p * (1 + 10 * p + p * p) / (1 - p) ** 4  # E eta^4 of DLap(p)
    assert abs(x.var() - var) <= 4 * math.sqrt((m4 - var * var) / x.size)


def test_deployed_ratio_has_the_simulators_law():
    """Two samples, deployed and simulated: their means agree within 4 SE, and the delta-method
    standard error the curator reports is the spread of the deployed estimates (within 25%)."""
    g = from_networkx(nx.gnp_random_graph(40, 0.3, seed=7))
    eps, n_dep = 4.0, 100
    est = [run_in_memory(NAME, g, eps, sampler=s, statistic="transitivity").estimate for s in range(n_dep)]
    dep = np.array([e.value for e in est])
    sim = get_method(NAME).estimate_trials(g, "transitivity", None, eps, 3000, rng=1)
    se = math.sqrt(dep.var(ddof=1) / n_dep + sim.var(ddof=1) / sim.size)
    assert abs(dep.mean() - sim.mean()) <= 4 * se
    reported = math.sqrt(np.mean([e.variance_estimate for e in est]))
    assert reported == pytest.approx(sim.std(ddof=1), rel=0.25)


class _Shared(Sampler):
    def __init__(self, rng):
        self.one = Seeded(int(np.random.default_rng(rng).integers(2**32))).stream(0, 0)

    def stream(self, round, node):
        return self.one


def test_round_two_release_with_the_degree_is_private():
    """(local count, degree) of node 6 at eps_2 + eps_d; eps_2 alone is refuted (the degree leaks)."""
    proto = registry.get(NAME)
    plan = proto.plan(4.0, d_max=4, degree_share=0.25)
    g = resolve_graph("ws:n=8,k=4,p=0.0", rng=0)
    run = run_in_memory(NAME, g, 4.0, sampler=0, d_max=4, degree_share=0.25)
    b, rnd = run.broadcasts[0], proto.rounds()[1]

    def node(nb, size, rng):
        rows = rnd.release(plan, np.full(size, 6), [np.array(nb)] * size, b, _Shared(rng))
        q = rows["quantity"]
        return np.column_stack([rows["value"][q == "local_count"], rows["value"][q == "degree"]])

    pairs = [((2, 4, 5), (2, 3, 4, 5))]
    eps = plan.round(2).epsilon
    assert audit_neighbours(node, pairs, eps, n_samples=8000, rng=1).passed
    assert audit_neighbours(node, [((2, 4, 5, 7), (2, 4, 5))], plan.release("local_count").epsilon / 4,
                            n_samples=8000, rng=2).violation  # a higher neighbour: the degree alone


def test_cli_node_and_curate(tmp_path, capsys):
    g = resolve_graph(SMALL, rng=0)
    common = ["--protocol", NAME, "--epsilon", "2", "--d-max", "12", "--degree-share", "0.1"]
    key = ["--curator-key", str(tmp_path / "key")]
    node = ["node", "--graph", SMALL, "--simulate", "--seed", "3", *common]
    r1, r2, b = tmp_path / "r1.csv", tmp_path / "r2.csv", tmp_path / "b.txt"
    assert main([*node, "--out", str(r1)]) == 0
    assert main(["curate", str(r1), *common, *key, "--broadcast-out", str(b)]) == 0
    assert main([*node, "--round", "2", "--broadcast", str(b), "--out", str(r2)]) == 0
    capsys.readouterr()
    assert main(["curate", str(r2), *common, *key, "--broadcast", str(b), "--stat", "transitivity", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = run_in_memory(NAME, g, 2.0, sampler=3, statistic="transitivity", d_max=12).estimate
    assert got["estimates"][0]["estimate"] == want.value and got["estimates"][0]["std_error"] == want.std_error
    assert got["epsilon"] == 2.0 and got["plan"]["public"]["degree_share"] == 0.1
    # rows without the degree: the curator says what to pass
    plain = [c for c in common if c not in ("--degree-share", "0.1")]
    assert main([*node[:-len(common)], *plain, "--out", str(tmp_path / "p1.csv")]) == 0
    assert main(["curate", str(tmp_path / "p1.csv"), *plain, *key, "--broadcast-out", str(tmp_path / "pb")]) == 0
    assert main([*node[:-len(common)], *plain, "--round", "2", "--broadcast", str(tmp_path / "pb"), "--out",
                 str(tmp_path / "p2.csv")]) == 0
    capsys.readouterr()
    assert main(["curate", str(tmp_path / "p2.csv"), *plain, *key, "--broadcast", str(tmp_path / "pb"),
                 "--stat", "transitivity"]) == 1
    assert "--degree-share" in capsys.readouterr().err




def test_rr_round_one_with_the_degree_is_private():
    """rr-triangles with the degree: node 3's bits and degree at eps_rr + eps_d; an edge to a higher
    node moves the degree only, which eps_d / 3 cannot cover."""
    proto = registry.get("rr-triangles")
    plan = proto.plan(2.0, degree_share=0.25)
    rnd = proto.rounds()[0]

    def node(nb, size, rng):
        rows = rnd.release(plan, np.full(size, 3), [np.array(nb)] * size, None, _Shared(rng))
        q, v = rows["quantity"], rows["value"]
        out = np.zeros((size, 4), dtype=np.int64)
        for i, a in enumerate(np.flatnonzero(q == "rr_count")):
            out[i, v[a + 1:a + 1 + int(v[a])]] = 1
        out[:, 3] = v[q == "degree"]
        return out

    assert audit_neighbours(node, [((0, 2), (0, 1, 2))], 2.0, n_samples=8000, rng=1).passed
    assert audit_neighbours(node, [((0, 2), (0, 2, 5))], plan.release("degree").epsilon / 3, n_samples=8000,
                            rng=2).violation
