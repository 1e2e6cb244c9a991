"""Deployed triangle protocols: node command -> report files -> curate, exactly; law; hostile files.

Every run goes through the protocol layer (:mod:`ldpgraph.core`, :mod:`ldpgraph.run`): the
command line's files are compared with :func:`ldpgraph.run.run_in_memory` at the same total
budget, options and seed (``--epsilon`` is each node's total, split by the protocol's plan).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.core import ExactSeeded, NodeStream, Secure, Seeded
from ldpgraph.core.rows import concat_rows, quantity_rows
from ldpgraph.datasets import resolve_graph
from ldpgraph.graph import from_edge_array, triangle_count
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols import deploy_triangles as dt
from ldpgraph.protocols import registry
from ldpgraph.protocols.clustering.avg_clustering import clustering_release
from ldpgraph.protocols.randomized_response import flip_probability, keep_probability, pair_index
from ldpgraph.protocols.triangles.kernels import (
    lower_common_neighbour_square_sum,
    lower_wedges,
    rounding_variance,
    rr_triangle_estimate,
    rr_triangle_variance,
    two_round_moments,
    two_round_variance,
)
from ldpgraph.protocols.triangles.two_round import local_count_release
from ldpgraph.run import accumulate_files, node_lists, release_to_file, run_in_memory
from ldpgraph.run.authenticate import curator_key, sign_broadcast
from ldpgraph.run.files import read_broadcast, write_broadcast
from ldpgraph.run.reportfiles import iter_report_chunks, write_reports
from ldpgraph.run.trianglefiles import read_triangle_broadcast, write_triangle_broadcast

GRAPH = "ws:n=60,k=6,p=0.2"
DLAP = "two-round-triangles-dlap"
CLUST = "avg-clustering"


def _run(capsys, *args):
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _curate_json(capsys, *args):
    return json.loads(_run(capsys, "curate", *args, "--json"))


def _fail(capsys, *args, code=1) -> str:
    capsys.readouterr()
    assert main([str(a) for a in args]) == code
    return capsys.readouterr().err


def _plan_args(eps, bound):
    """The plan's command-line options, the same for node and curate: total epsilon and D."""
    return ["--epsilon", eps, "--d-max", bound]


def _two_rounds(tmp_path, capsys, fmt, *, seed=5, bound=8, eps=0.8, name=""):
    """Total eps (each round eps / 2, the default split), public D = ``bound``."""
    r1, r2, b = tmp_path / f"r1{name}.{fmt}", tmp_path / f"r2{name}.{fmt}", tmp_path / f"b{name}.txt"
    common = ["--protocol", DLAP, "--graph", GRAPH, "--simulate", "--seed", seed, *_plan_args(eps, bound)]
    _run(capsys, "node", *common, "--out", r1)
    _run(capsys, "curate", r1, "--round", 1, "--broadcast-out", b, *_plan_args(eps, bound), "--chunk-rows", 13)
    out = _run(capsys, "node", *common, "--round", 2, "--broadcast", b, "--out", r2)
    return r1, r2, b, out


def _file_rows(*paths, chunk_rows=1 << 20):
    """The rows of report files as columns (quantity and protocol as names)."""
    parts = []
    for path in paths:
        for c in iter_report_chunks(path, chunk_rows=chunk_rows):
            parts.append({
                "node": c.node, "round": c.round, "value": c.value, "epsilon": c.epsilon,
                "sensitivity": c.sensitivity, "protocol_version": c.protocol_version,
                "quantity": np.asarray(c.quantity_names, dtype=object)[c.quantity],
                "protocol": np.asarray(c.protocol_names, dtype=object)[c.protocol],
            })
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _same_rows(a, b):
    assert set(a) >= {"node", "round", "quantity", "value", "epsilon", "sensitivity", "protocol"}
    for col in ("node", "round", "quantity", "value", "epsilon", "sensitivity", "protocol", "protocol_version"):
        assert np.array_equal(np.asarray(a[col]), np.asarray(b[col])), col


# ------------------------------------------------------------------------------ exact round trip


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_two_round_files_equal_the_in_memory_deployment(tmp_path, capsys, fmt):
    g = resolve_graph(GRAPH, rng=0)
    bound = 4  # below the largest lower degree (9 on this graph): projection is exercised
    assert max(lower_wedges(g).lower_degrees) > bound
    r1, r2, b, out = _two_rounds(tmp_path, capsys, fmt, bound=bound)
    want = run_in_memory(DLAP, g, 0.8, sampler=5, d_max=bound)
    assert want.plan.budget() == {"rr": 0.4, "local-count": 0.4}  # the old per-round 0.4
    bc = read_triangle_broadcast(b)
    assert f"run id {bc.run_id}" in out
    wb = want.broadcasts[0]
    assert np.array_equal(bc.index, wb.index) and bc.run_id == wb.run_id and bc.bound == bound
    # the nodes' files hold exactly the in-memory rows, round by round
    _same_rows(_file_rows(r1, chunk_rows=29), want.rows[0])
    _same_rows(_file_rows(r2), want.rows[1])
    got = _curate_json(capsys, r2, "--round", 2, "--broadcast", b, *_plan_args(0.8, bound), "--chunk-rows", 7)
    e = got["estimates"][0]
    assert (e["estimate"], e["std_error"]) == (want.estimate.value, want.estimate.std_error)
    assert e["variance_estimate"] == want.estimate.variance_estimate
    assert got["n_nodes"] == 60 and got["run_id"] == bc.run_id
    assert got["plan"]["rounds"] == json.loads(json.dumps(want.plan.to_dict()))["rounds"]
    # the same in one chunk: no dependence on chunking
    one = _curate_json(capsys, r2, "--broadcast", b, *_plan_args(0.8, bound))["estimates"][0]
    assert one["estimate"] == e["estimate"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_rr_triangle_files_equal_the_in_memory_deployment(tmp_path, capsys, fmt):
    g = resolve_graph(GRAPH, rng=0)
    r1 = tmp_path / f"rr.{fmt}"
    _run(capsys, "node", "--protocol", "rr-triangles", "--graph", GRAPH, "--epsilon", 1.5, "--simulate",
         "--seed", 2, "--out", r1)
    got = _curate_json(capsys, r1, "--epsilon", 1.5, "--chunk-rows", 11, "--expected-nodes", 60)
    run = run_in_memory("rr-triangles", g, 1.5, sampler=2)
    want = run.estimate
    assert got["estimates"][0]["estimate"] == want.value and got["protocol"] == "rr-triangles"
    assert got["estimates"][0]["std_error"] == want.std_error
    _same_rows(_file_rows(r1), run.rows[0])
    # the rows are the nodes' RR bits: the curator's estimate is Imola et al.'s on that noisy graph
    cols = run.rows[0]
    edge = cols["quantity"] == dt.RR_EDGE
    noisy = from_edge_array(np.column_stack([cols["node"][edge], cols["value"][edge]]), n_nodes=60)
    from ldpgraph.graph import triple_class_counts

    assert want.value == rr_triangle_estimate(triple_class_counts(noisy), 1.5)


def test_single_nodes_write_the_rows_of_the_whole_graph_run(tmp_path, capsys):
    """Node v's stream is keyed on (seed, round, v): a node alone writes its rows of the full run,
    in both rounds."""
    g = resolve_graph(GRAPH, rng=0)
    nodes, lists = node_lists(g)
    run = run_in_memory(DLAP, g, 0.8, sampler=9, d_max=5)
    b = tmp_path / "b.txt"
    write_broadcast(registry.get(DLAP), b, run.broadcasts[0])
    for v in (0, 17, 59):
        for rnd in (1, 2):
            path = tmp_path / f"n{v}r{rnd}.csv"
            extra = ["--round", 2, "--broadcast", b] if rnd == 2 else []
            _run(capsys, "node", "--protocol", DLAP, "--node-id", v, "--neighbors", ",".join(map(str, lists[v])),
                 *_plan_args(0.8, 5), *extra, "--simulate", "--seed", 9, "--out", path)
            full = run.rows[rnd - 1]
            mine = {c: x[full["node"] == v] for c, x in full.items()}
            assert mine["node"].size > 0
            _same_rows(_file_rows(path), mine)
    # secure by default: unseedable, and still a valid report
    path = tmp_path / "secure.jsonl"
    out = _run(capsys, "node", "--protocol", "rr-triangles", "--node-id", 3, "--neighbors", "0,2,9",
               "--epsilon", 1, "--out", path)
    assert "secure exact sampler" in out
    assert "rr_count" in path.read_text()
    rows = _file_rows(path)
    assert rows["quantity"][0] == "rr_count" and rows["value"][0] == rows["node"].size - 1
    assert set(rows["value"][1:].tolist()) <= {0, 1, 2}
    # a seed without --simulate is refused: the secure sampler cannot be seeded
    err = _fail(capsys, "node", "--protocol", DLAP, "--node-id", 3, "--neighbors", "0,1", "--seed", 3,
                *_plan_args(0.8, 4), "--out", tmp_path / "x.csv", code=2)
    assert "--seed needs --simulate (the secure sampler cannot be seeded)" in err
    assert not (tmp_path / "x.csv").exists()


# ------------------------------------------------------------------------------ the secure release path


class _Pinned(NodeStream):
    """No noise, the rounding uniform pinned at 0.3, projection to the first k: the arithmetic alone."""

    def dlap(self, epsilon, sensitivity, size):
        return np.zeros(int(size), dtype=np.int64)

    def keep(self, epsilon, size):
        return np.ones(int(size), dtype=np.bool_)

    def uniform(self, size):
        return np.full(int(size), 0.3)

    def subset(self, items, k):
        return np.sort(np.asarray(items, dtype=np.int64)[: int(k)])


def _noisy_pairs(n, seed=0):
    rng = np.random.default_rng(seed)
    return sorted(int(pair_index(np.array([u]), np.array([v]))[0]) for u in range(n) for v in range(u)
                  if rng.random() < 0.5)


NB = np.array([0, 2, 3, 5, 7, 8, 13], dtype=np.int64)  # node 11's neighbours: 6 lower, degree 7


def _bits(b, nodes):
    return sum(b.noisy_bit([j], [k])[0] for j, k in itertools.combinations(sorted(nodes), 2))


def test_round_two_releases_compute_the_protocol_release():
    """With the noise at 0 and the rounding uniform pinned, the per-node releases every sampler
    goes through give r_v = floor(w_v + u) for w_v counted by brute force (dlap, with and without
    projection), and (d_v, 2 w_v - C(m, 2)) (clustering)."""
    noisy = _noisy_pairs(14)
    b = dt.TriangleBroadcast.build(DLAP, 14, 0.7, 6, noisy)
    w = _bits(b, NB[:6]) - b.q * math.comb(6, 2)
    assert local_count_release(11, NB, b, 1.0, _Pinned()) == math.floor(w + 0.3)
    b4 = dt.TriangleBroadcast.build(DLAP, 14, 0.7, 4, noisy)  # 6 lower neighbours > D = 4: projected
    w4 = _bits(b4, NB[:4]) - b4.q * math.comb(4, 2)
    assert local_count_release(11, NB, b4, 1.0, _Pinned()) == math.floor(w4 + 0.3)
    assert w4 != w  # the projection changed the count
    c = dt.TriangleBroadcast.build(CLUST, 14, 0.7, 8, noisy)
    assert clustering_release(11, NB, c, 1.0, 1.0, _Pinned()) == (7, int(2 * _bits(c, NB)) - math.comb(7, 2))
    cp = dt.TriangleBroadcast.build(CLUST, 14, 0.7, 4, noisy, projection=True)
    assert clustering_release(11, NB, cp, 1.0, 1.0, _Pinned()) == (7, int(2 * _bits(cp, NB[:4])) - 6)
    with pytest.raises(ValueError, match="allows no projection"):
        clustering_release(11, NB, dt.TriangleBroadcast.build(CLUST, 14, 0.7, 4, noisy), 1.0, 1.0, _Pinned())


def _dlap_pmf(alpha, k):
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(k)


def _fit_pvalue(draws, support, probs):
    """Chi-square p-value of integer ``draws`` against the pmf ``probs`` on ``support`` (the tails
    merged into the end bins until each expects at least 5 draws)."""
    from scipy import stats

    draws, probs = np.asarray(draws), np.asarray(probs, dtype=np.float64)
    assert probs.sum() == pytest.approx(1.0, abs=1e-9)
    n = draws.size
    lo, hi = 0, len(support) - 1
    while n * probs[: lo + 1].sum() < 5:
        lo += 1
    while n * probs[hi:].sum() < 5:
        hi -= 1
    exp = n * np.r_[probs[: lo + 1].sum(), probs[lo + 1 : hi], probs[hi:].sum()]
    obs = np.r_[(draws <= support[lo]).sum(), [(draws == k).sum() for k in support[lo + 1 : hi]],
                (draws >= support[hi]).sum()]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


def _mixture(values_with_weights, alpha, support):
    """pmf of X + DLap(alpha) on ``support``, X an integer with the given law {value: weight}."""
    out = np.zeros(len(support))
    for x, wgt in values_with_weights.items():
        out += wgt * _dlap_pmf(alpha, np.asarray(support) - x)
    return out


def test_secure_releases_are_integers_of_the_protocol_law():
    """The deployment's sampler (exact samplers on the OS CSPRNG) through the same per-node releases:
    r_v = floor(w_S + U) + DLap(e^(-eps2/(D-1))), S a uniform D-subset of the lower list, and
    (d_v + DLap(e^-eps_d), 2 w_S - C(D, 2) + DLap(e^(-eps_t/(2(D-1))))) for avg-clustering with
    projection: chi-square against the exact mixtures (and a shifted law is rejected)."""
    assert type(Secure().stream(2, 11)) is type(ExactSeeded(0).stream(2, 11))  # one exact code path
    assert Secure().secure and not ExactSeeded(0).secure
    noisy = _noisy_pairs(14)
    trials = 3000
    # two-round-triangles-dlap, D = 4 < 6 lower neighbours: projection through the secure subset
    b = dt.TriangleBroadcast.build(DLAP, 14, 0.7, 4, noisy)
    law: dict[int, float] = {}
    subsets = list(itertools.combinations(NB[:6].tolist(), 4))
    for s in subsets:
        w = _bits(b, s) - b.q * 6
        f = math.floor(w)
        law[f] = law.get(f, 0.0) + (1 - (w - f)) / len(subsets)
        law[f + 1] = law.get(f + 1, 0.0) + (w - f) / len(subsets)
    draws = [local_count_release(11, NB, b, 3.0, Secure().stream(2, 11)) for _ in range(trials)]
    assert all(isinstance(r, int) for r in draws)
    support = np.arange(-40, 41)
    probs = _mixture(law, math.exp(-3.0 / 3), support)
    assert _fit_pvalue(draws, support, probs) > 1e-6
    assert _fit_pvalue(np.asarray(draws) + 1, support, probs) < 1e-6  # the test sees a unit shift
    # avg-clustering, degree 7 > D = 4 with projection: sensitivity 2(D - 1) = 6
    c = dt.TriangleBroadcast.build(CLUST, 14, 0.7, 4, noisy, projection=True)
    r_law: dict[int, float] = {}
    subsets = list(itertools.combinations(NB.tolist(), 4))
    for s in subsets:
        r = int(2 * _bits(c, s)) - 6
        r_law[r] = r_law.get(r, 0.0) + 1 / len(subsets)
    assert len(r_law) > 1  # the projection matters
    pairs = [clustering_release(11, NB, c, 1.0, 6.0, Secure().stream(2, 11)) for _ in range(trials)]
    assert all(isinstance(d, int) and isinstance(r, int) for d, r in pairs)
    d_draws, r_draws = np.array(pairs).T
    support = np.arange(-60, 61)
    assert _fit_pvalue(d_draws, support, _mixture({7: 1.0}, math.exp(-1.0), support)) > 1e-6
    assert _fit_pvalue(r_draws, support, _mixture(r_law, math.exp(-1.0), support)) > 1e-6
    assert _fit_pvalue(d_draws - 1, support, _mixture({7: 1.0}, math.exp(-1.0), support)) < 1e-6


@pytest.mark.parametrize("name, options", [(DLAP, {"d_max": 4}), (CLUST, {"d_max": 8, "projection": True})])
def test_exact_seeded_sampler_gives_the_same_rows_in_memory_and_through_files(tmp_path, name, options):
    """ExactSeeded: the secure code path (exact samplers) on seeded streams. The file executor
    (two files of round 1, the broadcast through its file, round 2 in batches) writes the rows of
    the in-memory run and gives its estimate bit for bit; the rounds' releases are the per-node
    functions on each node's stream; the draws are not the float sampler's."""
    g = resolve_graph(GRAPH, rng=0)
    eps = 2.0
    run = run_in_memory(name, g, eps, sampler=ExactSeeded(3), **options)
    again = run_in_memory(name, g, eps, sampler=ExactSeeded(3), **options)
    for r in (0, 1):
        _same_rows(again.rows[r], run.rows[r])
    assert again.estimate.value == run.estimate.value
    seeded = run_in_memory(name, g, eps, sampler=Seeded(3), **options)
    assert not np.array_equal(seeded.rows[0]["value"], run.rows[0]["value"])
    proto = registry.get(name)
    plan = proto.plan(eps, **options)
    first, second = proto.rounds()
    nodes, lists = node_lists(g)
    paths = [release_to_file(tmp_path / "a.parquet", first, plan, nodes[:25], lists[:25], None, ExactSeeded(3))[0],
             release_to_file(tmp_path / "b.csv", first, plan, nodes[25:], lists[25:], None, ExactSeeded(3),
                             batch_nodes=6)[0]]
    _same_rows(_file_rows(*paths), run.rows[0])
    summary = accumulate_files(paths, first, plan, chunk_rows=17, expected_nodes=60)
    write_broadcast(proto, tmp_path / "b.txt", first.broadcast(summary, plan))
    bc = read_broadcast(proto, tmp_path / "b.txt", plan)
    assert bc.run_id == run.broadcasts[0].run_id and np.array_equal(bc.index, run.broadcasts[0].index)
    r2, n2 = release_to_file(tmp_path / "r2.jsonl", second, plan, nodes, lists, bc, ExactSeeded(3), batch_nodes=7)
    assert n2 == run.rows[1]["node"].size
    _same_rows(_file_rows(r2), run.rows[1])
    result = accumulate_files([r2], second, plan, bc, chunk_rows=13)
    est = proto.estimate(result, plan, bc, proto.statistics[0])
    assert (est.value, est.variance_estimate) == (run.estimate.value, run.estimate.variance_estimate)
    # the round's release is the per-node function on the node's exact stream
    rows = run.rows[1]
    for v in (0, 31, 59):
        stream = ExactSeeded(3).stream(2, v)
        if name == DLAP:
            want = [local_count_release(v, lists[v], bc, plan.release(dt.LOCAL_COUNT).epsilon, stream)]
        else:
            want = list(clustering_release(v, lists[v], bc, plan.release(dt.DEGREE).epsilon,
                                           plan.release(dt.LOCAL_COUNT).epsilon, stream))
        mine = (rows["node"] == v) & (rows["quantity"] != dt.RUN_ID)
        assert rows["value"][mine].tolist() == want


def test_secure_sampler_runs_the_whole_protocol():
    """The default sampler (None: Secure) end to end in memory: valid rows, every node once."""
    g = resolve_graph(GRAPH, rng=0)
    run = run_in_memory(DLAP, g, 4.0, sampler=None, d_max=4)
    local = run.rows[1]["quantity"] == dt.LOCAL_COUNT
    assert sorted(run.rows[1]["node"][local].tolist()) == list(range(60))
    assert math.isfinite(run.estimate.value)
    c = run_in_memory(CLUST, g, 4.0, sampler=Secure(), d_max=8, projection=True)
    assert math.isfinite(c.estimate.value) and c.rows[1]["node"].size == 3 * 60


# ------------------------------------------------------------------------------ the law


def _all_outcomes(n):
    """Every RR outcome of the lower pairs of n nodes: (pair indices, noisy bits) per outcome."""
    pairs = [(u, v) for u in range(n) for v in range(u)]
    for bits in itertools.product((0, 1), repeat=len(pairs)):
        yield pairs, bits


@pytest.mark.parametrize(
    "edges",
    [
        [[0, 1], [1, 2], [0, 2], [2, 3], [1, 3], [3, 4]],
        [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3], [2, 4], [3, 4]],
    ],
)
def test_rows_to_estimates_are_unbiased_by_enumeration(edges):
    """All 2^10 RR outcomes on 5 nodes: the curator's rr estimate from rows (the protocol's round-1
    accumulator and estimate) is unbiased for T, so is its variance estimate for
    rr_triangle_variance, and the two-round variance estimate's C-hat for sum (c+_jk)^2."""
    g = from_edge_array(edges, n_nodes=5)
    eps = 0.7
    proto = registry.get("rr-triangles")
    plan = proto.plan(eps)
    (first,) = proto.rounds()
    p, q = keep_probability(eps), flip_probability(eps)
    true = {(max(a, b), min(a, b)) for a, b in edges}
    mean_t = mean_c = mean_v = total = 0.0
    for pairs, bits in _all_outcomes(5):
        prob = math.prod(p if (b == ((u, v) in true)) else q for (u, v), b in zip(pairs, bits, strict=True))
        lists = [[v for (u, v), b in zip(pairs, bits, strict=True) if u == node and b] for node in range(5)]
        rows = concat_rows([
            quantity_rows(plan, 1, [node] * (len(ls) + 1), [dt.RR_COUNT] + [dt.RR_EDGE] * len(ls), [len(ls), *ls])
            for node, ls in enumerate(lists)
        ])
        acc = first.accumulator(plan, None)
        acc.add(dt.chunk_from_columns(rows))
        s = acc.result()
        est = proto.estimate(s, plan, None, "triangles")
        mean_t += prob * est.value
        mean_v += prob * est.variance_estimate
        mean_c += prob * dt.lower_wedge_square_estimate(5, s.index, eps)
        total += prob
    assert total == pytest.approx(1.0, abs=1e-12)
    assert mean_t == pytest.approx(triangle_count(g), abs=1e-9)
    assert mean_c == pytest.approx(lower_common_neighbour_square_sum(g), abs=1e-9)
    assert mean_v == pytest.approx(rr_triangle_variance(g, eps), rel=1e-10)


def test_variance_estimate_is_the_analytic_variance_at_the_true_c(monkeypatch):
    """With C-hat replaced by the true C, the curator's variance is two_round_variance with the
    rounding term replaced by its bound n/4 (so E[variance estimate] is that, by the test above)."""
    g = resolve_graph(GRAPH, rng=0)
    shares = {"rr": 0.375, "local_count": 0.625}
    run = run_in_memory(DLAP, g, 0.8, sampler=1, d_max=6, shares=shares)  # D = 6: sensitivity 5
    eps1, eps2 = run.plan.release(dt.RR_COUNT).epsilon, run.plan.release(dt.LOCAL_COUNT).epsilon
    assert (eps1, eps2) == pytest.approx((0.3, 0.5), rel=1e-14)
    c = lower_common_neighbour_square_sum(g)
    monkeypatch.setattr(dt, "lower_wedge_square_estimate", lambda n, idx, eps: float(c))
    est = dt.dlap_triangles_estimate(run.rows[1]["value"][::2], run.broadcasts[0], eps2)
    noise = DiscreteLaplace(epsilon=eps2, sensitivity=5).variance
    p, q = keep_probability(eps1), flip_probability(eps1)
    want = (
        two_round_variance(g, eps1, noise, rounding=True) + (60 / 4 - rounding_variance(g, q)) / (p - q) ** 2
    )
    assert est.variance_estimate == pytest.approx(want, rel=1e-12)
    assert est.value == run.estimate.value
    # the curator's round-2 result estimates through the same function
    assert run.results[1].estimate().variance_estimate == est.variance_estimate


def test_deployed_two_round_has_the_protocol_law():
    """Monte-Carlo over seeds: mean and variance of the deployed estimate agree with the exact
    moments of the benchmark protocol (two_round_moments), projection active (bound 3 < 6)."""
    g = resolve_graph("ws:n=30,k=6,p=0.2", rng=0)
    assert max(lower_wedges(g).lower_degrees) == 6
    eps, trials, bound = 2.0, 250, 3
    est = np.array([run_in_memory(DLAP, g, eps, sampler=s, d_max=bound).estimate.value for s in range(trials)])
    mean, var = two_round_moments(g, eps / 2, eps / 2, bound=bound)
    assert abs(est.mean() - mean) < 4 * math.sqrt(var / trials)
    # sample variance: standard error about var sqrt(2 / (trials - 1)) (near-normal sums)
    assert abs(est.var(ddof=1) - var) < 4 * var * math.sqrt(2 / (trials - 1))


# ------------------------------------------------------------------------------ hostile inputs


def _csv_rows(path):
    lines = path.read_text().splitlines()
    return lines[0], lines[1:]


def _write(path, header, rows):
    path.write_text("\n".join([header, *rows]) + "\n")


@pytest.fixture
def round1_csv(tmp_path, capsys):
    path = tmp_path / "r1.csv"
    _run(capsys, "node", "--protocol", DLAP, "--graph", GRAPH, *_plan_args(1.0, 5), "--simulate", "--seed", 0,
         "--out", path)
    return path


def test_round_one_hostile_rows_name_file_and_row(tmp_path, capsys, round1_csv):
    header, rows = _csv_rows(round1_csv)
    assert all(",0.5," in r for r in rows)  # round 1 spends half of the total 1.0
    edge_rows = [i for i, r in enumerate(rows) if ",rr_edge," in r]
    i = edge_rows[5]
    node = rows[i].split(",")[0]

    def curate(rows_, *extra):
        bad = tmp_path / "bad.csv"
        _write(bad, header, rows_)
        return _fail(capsys, "curate", bad, "--round", 1, "--broadcast-out", tmp_path / "b.txt", *_plan_args(1.0, 5),
                     *extra)

    # partner id not lower than the node
    cells = rows[i].split(",")
    cells[3] = node
    err = curate(rows[:i] + [",".join(cells)] + rows[i + 1 :])
    assert "not a lower node" in err and f"bad.csv row {i} (line {i + 2})" in err
    # a duplicated rr_edge row (and the count check cannot hide it)
    err = curate(rows[: i + 1] + [rows[i]] + rows[i + 1 :])
    assert "duplicate rr_edge rows" in err and f"row {i}" in err and f"row {i + 1}" in err
    # a duplicated rr_count row
    j = next(k for k, r in enumerate(rows) if ",rr_count," in r)
    assert "duplicate rr_count rows for node 0" in curate(rows + [rows[j]])
    # a lost rr_edge row (truncated upload)
    err = curate(rows[:i] + rows[i + 1 :])
    assert f"node {node}: its rr_count row" in err and "bad.csv row" in err and "missing" in err
    # a file from another protocol version
    cells = rows[3].split(",")
    cells[-1] = "2"
    err = curate(rows[:3] + [",".join(cells)] + rows[4:])
    assert "version 2" in err and "bad.csv row 3" in err and "another protocol version" in err
    # mixed epsilon
    cells = rows[4].split(",")
    cells[4] = "0.25"
    assert "mixed epsilon" in curate(rows[:4] + [",".join(cells)] + rows[5:])
    # every row at another epsilon than the plan's share: named, with the plan
    err = curate([r.replace(",0.5,", ",0.25,") for r in rows])
    assert "released at epsilon 0.25, but the plan (epsilon 1 = rr 0.5 + local-count 0.5) gives 0.5" in err
    # missing node
    err = curate([r for r in rows if not r.startswith("7,")])
    assert "sent no rr_count row: 1: 7 (missing" in err
    # a hostile id far above the others: named, and no array of 2**31 - 1 entries is built
    cells = rows[0].split(",")
    cells[0] = str(2**31 - 2)
    err = curate(rows + [",".join(cells)])
    assert f"nodes are 0..{2**31 - 2}, but some sent no rr_count row: {2**31 - 1 - 61}: 60, 61" in err
    cells[0] = str(2**40)
    assert "node id 1099511627776 is too large" in curate(rows + [",".join(cells)])
    # rows of another protocol
    other = [r.replace(DLAP, "rr-triangles") if k == 2 else r for k, r in enumerate(rows)]
    assert "rows of protocol 'rr-triangles'" in curate(other) and "bad.csv row 2" in curate(other)


def test_round_two_hostile_rows_and_broadcasts(tmp_path, capsys):
    r1, r2, b, _ = _two_rounds(tmp_path, capsys, "csv")
    plan = _plan_args(0.8, 8)
    header, rows = _csv_rows(r2)
    # a broadcast from another run (other seed): every round-2 row carries the run id
    _, _, b_other, _ = _two_rounds(tmp_path, capsys, "csv", seed=6, name="x")
    err = _fail(capsys, "curate", r2, "--round", 2, "--broadcast", b_other, *plan)
    assert "from another run" in err and "r2.csv row 1 (line 3)" in err
    # a round-2 row of a node without round-1 rows
    cells = rows[0].split(",")
    cells[0] = "60"
    bad = tmp_path / "bad2.csv"
    _write(bad, header, rows + [",".join(cells)])
    err = _fail(capsys, "curate", bad, "--round", 2, "--broadcast", b, *plan)
    assert "node 60 without its round-1 rows" in err and "bad2.csv row 120" in err
    # a duplicated round-2 release; a missing one
    _write(bad, header, rows + [rows[10]])
    assert "duplicate local_count rows for node 5" in _fail(capsys, "curate", bad, "--broadcast", b, *plan)
    _write(bad, header, rows[2:])
    assert "sent no local_count row in round 2: 1: 0 (missing" in _fail(
        capsys, "curate", bad, "--broadcast", b, *plan
    )
    # round-1 rows given to the round-2 curator
    err = _fail(capsys, "curate", r1, "--round", 2, "--broadcast", b, *plan)
    assert "curating round 2" in err and "r1.csv row 0" in err
    # a broadcast made under another plan: another total epsilon, another public D
    err = _fail(capsys, "curate", r2, "--broadcast", b, *_plan_args(1.0, 8))
    assert "the broadcast was made for round-1 epsilon 0.4" in err
    err = _fail(capsys, "node", "--protocol", DLAP, "--graph", GRAPH, *_plan_args(0.8, 5), "--round", 2,
                "--broadcast", b, "--simulate", "--seed", 1, "--out", tmp_path / "y.csv")
    assert "the broadcast's bound D = 8 differs from the plan's d_max 5" in err
    # an edited broadcast: the run id no longer matches its edges (the node refuses to use it)
    # (the packed body: one noisy bit cleared, so the header's count still holds)
    tag, head_line, body = b.read_bytes().split(b"\n", 2)
    bits = np.unpackbits(np.frombuffer(body, dtype=np.uint8))
    bits[np.flatnonzero(bits)[0]] = 0
    head = json.loads(head_line[2:])
    head["n_edges"] -= 1
    forged = tmp_path / "forged.txt"
    forged.write_bytes(b"\n".join([tag, ("# " + json.dumps(head)).encode(), np.packbits(bits).tobytes()]))
    err = _fail(capsys, "node", "--protocol", DLAP, "--graph", GRAPH, *plan, "--round", 2, "--broadcast", forged,
                "--simulate", "--seed", 1, "--out", tmp_path / "x.csv")
    assert "do not match the run id" in err
    # the curator accepts only the broadcast it signed; a node reads any, and checks it: a packed body
    # cut short, a padding bit set; in the edge list (version 1) line by line: duplicate / unordered
    # edge lines, an edge not below; another format
    assert "no signature forged.txt.hmac" in _fail(capsys, "curate", r2, "--broadcast", forged, *plan)
    node2 = ["node", "--protocol", DLAP, "--graph", GRAPH, *plan, "--round", 2, "--broadcast", forged,
             "--out", tmp_path / "x.csv"]
    forged.write_bytes(b"\n".join([tag, head_line, body[:-1]]))
    assert "a packed body of" in _fail(capsys, *node2)
    assert (head["n_nodes"] * (head["n_nodes"] - 1) // 2) % 8  # a padding bit to set
    forged.write_bytes(b"\n".join([tag, head_line, body[:-1] + bytes([body[-1] | 1])]))
    assert "padding bits" in _fail(capsys, *node2)
    write_triangle_broadcast(forged, read_triangle_broadcast(b), version=1)
    lines = forged.read_text().splitlines()
    assert lines[0] == "# ldpgraph-broadcast-edges 1"
    forged.write_text("\n".join(lines[:3] + [lines[2]] + lines[3:]) + "\n")
    assert "forged.txt line 4" in _fail(capsys, *node2)
    forged.write_text("\n".join(lines[:2] + ["3 7"] + lines[2:]) + "\n")
    assert "forged.txt line 3: edge '3 7'" in _fail(capsys, *node2)
    forged.write_text(json.dumps({"format": "ldpgraph-broadcast"}))
    assert "forged.txt line 1: not an ldpgraph-broadcast-edges" in _fail(capsys, *node2)


def test_usage_errors_of_the_triangle_commands(tmp_path, capsys):
    r1, r2, b, _ = _two_rounds(tmp_path, capsys, "parquet")
    # curate needs the plan: the nodes' total epsilon and options
    err = _fail(capsys, "curate", r1, "--round", 1, code=2)
    assert "needs the plan: --epsilon (each node's total budget)" in err
    err = _fail(capsys, "curate", r1, "--round", 1, *_plan_args(0.8, 8), code=2)
    assert "round 1 of two-round-triangles-dlap writes the broadcast of round 2: pass --broadcast-out FILE" in err
    err = _fail(capsys, "curate", r1, "--round", 1, "--epsilon", 0.8, "--broadcast-out", tmp_path / "n.txt",
                code=2)
    assert "needs the public bound d_max (--d-max)" in err and not (tmp_path / "n.txt").exists()
    err = _fail(capsys, "node", "--protocol", DLAP, "--graph", GRAPH, "--epsilon", 0.8, "--out", tmp_path / "n.csv",
                code=2)
    assert "needs the public bound d_max (--d-max) on the lower degree, or private_bound (--private-bound)" in err
    err = _fail(capsys, "curate", r2, "--broadcast", b, *_plan_args(0.8, 8), "--broadcast-out", tmp_path / "z.txt",
                code=2)
    assert "round 2 is the last round of two-round-triangles-dlap: no broadcast" in err
    err = _fail(capsys, "curate", r2, "--broadcast", b, *_plan_args(0.8, 8), "--stat", "kstars", code=2)
    assert "estimate --stat triangles" in err
    err = _fail(capsys, "node", "--protocol", "rr-triangles", "--graph", GRAPH, "--epsilon", "1", "--round", "2",
                "--broadcast", b, "--out", tmp_path / "x.csv", code=2)
    assert "rr-triangles has no round 2" in err
    # another protocol's option; the removed per-round flag; shares that do not sum to 1
    err = _fail(capsys, "curate", r1, "--round", 1, *_plan_args(0.8, 8), "--projection", "--broadcast-out",
                tmp_path / "p.txt", code=2)
    assert "--projection is not an option of two-round-triangles-dlap" in err
    _fail(capsys, "node", "--protocol", DLAP, "--graph", GRAPH, *_plan_args(0.8, 8), "--lower-degree-epsilon", 0.1,
          "--out", tmp_path / "l.csv", code=2)
    err = _fail(capsys, "node", "--protocol", DLAP, "--graph", GRAPH, *_plan_args(0.8, 8), "--shares",
                "rr=0.7,local_count=0.4", "--out", tmp_path / "s.csv", code=2)
    assert "budget shares must be > 0 and sum to 1" in err
    assert not any((tmp_path / f).exists() for f in ("n.csv", "x.csv", "l.csv", "s.csv", "p.txt", "z.txt"))


# ------------------------------------------------------------------------------ avg-clustering

CLUST_SHARES = "rr=0.25,degree=0.3,local_count=0.45"


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_avg_clustering_files_equal_the_in_memory_deployment(tmp_path, capsys, fmt):
    g = resolve_graph(GRAPH, rng=0)
    r1, r2, b = tmp_path / f"c1.{fmt}", tmp_path / f"c2.{fmt}", tmp_path / "cb.txt"
    plan = ["--epsilon", 4.0, "--d-max", 8, "--projection", "--shares", CLUST_SHARES]
    common = ["--protocol", CLUST, "--graph", GRAPH, "--simulate", "--seed", 4, *plan]
    _run(capsys, "node", *common, "--out", r1)
    _run(capsys, "curate", r1, "--round", 1, "--broadcast-out", b, *plan)
    _run(capsys, "node", *common, "--round", 2, "--broadcast", b, "--out", r2)
    got = _curate_json(capsys, r2, "--broadcast", b, *plan, "--chunk-rows", 17)
    want = run_in_memory(CLUST, g, 4.0, sampler=4, d_max=8, projection=True,
                         shares={"rr": 0.25, "degree": 0.3, "local_count": 0.45})
    assert read_triangle_broadcast(b).projection and max(g.degrees) > 8  # projection exercised
    assert read_triangle_broadcast(b).run_id == want.broadcasts[0].run_id
    _same_rows(_file_rows(r1), want.rows[0])
    _same_rows(_file_rows(r2), want.rows[1])
    e = got["estimates"][0]
    assert (e["statistic"], e["estimate"], e["variance_estimate"]) == (
        "avg_clustering",
        want.estimate.value,
        want.estimate.variance_estimate,
    )
    released = {q: rel["epsilon"] for r in got["plan"]["rounds"] for rel in r["releases"] for q in rel["quantities"]}
    assert released == {q: want.plan.release(q).epsilon for q in released}
    assert [released[q] for q in ("rr_edge", "degree", "local_count")] == pytest.approx([1.0, 1.2, 1.8], rel=1e-14)
    assert got["epsilon"] == 4.0 and got["budget"] == pytest.approx({"rr": 1.0, "local": 3.0}, rel=1e-14)


def test_deployed_avg_clustering_has_the_protocol_law():
    """Monte-Carlo over seeds: unbiased for the average clustering, with the exact variance of
    average_clustering_variance (unprojected: D = the maximum degree, the simulation's default)."""
    from ldpgraph.protocols.clustering.kernels import average_clustering_truth, average_clustering_variance

    g = resolve_graph("ws:n=30,k=6,p=0.2", rng=0)
    shares, trials = {"rr": 0.25, "degree": 0.375, "local_count": 0.375}, 200
    plan = registry.get(CLUST).plan(8.0, d_max=int(max(g.degrees)), shares=shares, projection=False)
    assert [plan.release(q).epsilon for q in ("rr_edge", "degree", "local_count")] == [2.0, 3.0, 3.0]
    est = np.array([run_in_memory(CLUST, g, 8.0, sampler=s, shares=shares, projection=False).estimate.value
                    for s in range(trials)])
    var = average_clustering_variance(
        g, epsilon_rr=2.0, epsilon_degree=3.0, epsilon_triangles=3.0, d_max=int(max(g.degrees))
    )
    assert abs(est.mean() - average_clustering_truth(g)) < 4 * math.sqrt(var / trials)
    assert abs(est.var(ddof=1) - var) < 4 * var * math.sqrt(2 / (trials - 1))


def test_avg_clustering_nodes_above_the_bound_refuse_without_projection(tmp_path, capsys):
    """Projection is the default (no node refuses because of its degree); --no-projection asks for
    the smaller sensitivity, and then a node above D cannot release."""
    r1, b = tmp_path / "c1.csv", tmp_path / "cb.txt"
    projected = ["--graph", GRAPH, *_plan_args(1, 5), "--simulate", "--seed", 0]
    _run(capsys, "node", "--protocol", CLUST, *projected, "--out", r1)
    _run(capsys, "curate", r1, "--broadcast-out", b, *_plan_args(1, 5))
    _run(capsys, "node", "--protocol", CLUST, "--round", 2, "--broadcast", b, *projected, "--out", tmp_path / "p.csv")
    sim = [*projected, "--no-projection"]
    _run(capsys, "node", "--protocol", CLUST, *sim, "--out", r1)
    _run(capsys, "curate", r1, "--broadcast-out", b, *_plan_args(1, 5), "--no-projection")
    round2 = ["--round", 2, "--broadcast", b, *sim, "--out", tmp_path / "c2.csv"]
    err = _fail(capsys, "node", "--protocol", CLUST, *round2)
    assert "d_max = 5" in err and "projection" in err
    assert not (tmp_path / "c2.csv").exists()
    # a dlap node refuses the clustering broadcast
    assert "a broadcast of 'avg-clustering'" in _fail(capsys, "node", "--protocol", DLAP, *round2)
    # and a clustering node refuses a broadcast made under another plan (with projection)
    err = _fail(capsys, "node", "--protocol", CLUST, *round2, "--projection")
    assert "was not made under the plan" in err


def test_dask_local_cluster_equals_the_streaming_curator(tmp_path, capsys):
    """One task per Parquet row group (and per text file), merged pairwise: the same noisy graph,
    the same estimates, bit for bit; a hostile row is still named by file and row."""
    distributed = pytest.importorskip("distributed")

    g = resolve_graph(GRAPH, rng=0)
    proto = registry.get(DLAP)
    plan = proto.plan(1.0, d_max=5)
    first, second = proto.rounds()
    run = run_in_memory(DLAP, g, 1.0, sampler=3, d_max=5)
    cols1 = run.rows[0]
    half = len(cols1["node"]) // 2
    r1a = write_reports(tmp_path / "a.parquet", {c: v[:half] for c, v in cols1.items()}, row_group_size=97)
    r1b = write_reports(tmp_path / "b.csv", {c: v[half:] for c, v in cols1.items()})
    stream = accumulate_files([r1a, r1b], first, plan, chunk_rows=31)
    b = first.broadcast(stream, plan)
    assert b.run_id == run.broadcasts[0].run_id
    r2 = write_reports(tmp_path / "r2.parquet", run.rows[1], row_group_size=16)
    want = run.estimate
    with (
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            processes=False,
            protocol="tcp://",
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        s = accumulate_files([r1a, r1b], first, plan, scheduler=client)
        est = proto.estimate(accumulate_files([r2], second, plan, b, scheduler=client), plan, b, "triangles")
        header, rows = _csv_rows(r1b)
        bad = tmp_path / "bad.csv"
        _write(bad, header, rows + [rows[3]])
        with pytest.raises(ValueError, match=r"duplicate .*bad.csv row 3 .*bad.csv row"):
            accumulate_files([r1a, bad], first, plan, scheduler=client)
    assert np.array_equal(s.index, stream.index) and s.n_rows == stream.n_rows == half + len(rows)
    assert (est.value, est.std_error) == (want.value, want.std_error)
    # the command line takes a Dask scheduler too (on a broadcast this curator signed)
    sign_broadcast(write_broadcast(proto, tmp_path / "b.txt", b), curator_key())
    got = _curate_json(capsys, r2, "--broadcast", tmp_path / "b.txt", *_plan_args(1.0, 5), "--scheduler", "sync")
    assert got["estimates"][0]["estimate"] == want.value


PRIVATE = ["--epsilon", 1.0, "--private-bound"]


def test_private_bound_round_trip_law_and_hostile_rows(tmp_path, capsys):
    """two-round-triangles-dlap --private-bound deployed: lower_degree rows in round 1, D = their max.
    The default split is 0.1, 0.45, 0.45; files equal the in-memory run; Monte-Carlo agrees with
    the exact mixture moments over D of two_round_moments(eps0=...); a node without its
    lower_degree row is named."""
    g = resolve_graph(GRAPH, rng=0)
    want = run_in_memory(DLAP, g, 1.0, sampler=8, private_bound=True)
    split = [want.plan.release(q).epsilon for q in (dt.LOWER_DEGREE, dt.RR_EDGE, dt.LOCAL_COUNT)]
    assert split == [0.1, 0.45, 0.45]
    r1, r2, b = tmp_path / "p1.csv", tmp_path / "p2.csv", tmp_path / "pb.txt"
    sim = ["--protocol", DLAP, "--graph", GRAPH, "--simulate", "--seed", 8, *PRIVATE]
    _run(capsys, "node", *sim, "--out", r1)
    assert "private bound D" in _run(capsys, "curate", r1, "--broadcast-out", b, *PRIVATE)
    _run(capsys, "node", *sim, "--round", 2, "--broadcast", b, "--out", r2)
    got = _curate_json(capsys, r2, "--broadcast", b, *PRIVATE)["estimates"][0]
    assert (got["estimate"], got["std_error"]) == (want.estimate.value, want.estimate.std_error)
    assert read_triangle_broadcast(b).bound == want.broadcasts[0].bound
    assert want.broadcasts[0].bound == want.results[0].private_bound()
    _same_rows(_file_rows(r1), want.rows[0])
    assert np.count_nonzero(want.rows[0]["quantity"] == dt.LOWER_DEGREE) == 60
    _same_rows(_file_rows(r2), want.rows[1])
    # hostile: a node's lower_degree row missing
    header, rows = _csv_rows(r1)
    bad = tmp_path / "bad.csv"
    _write(bad, header, [r for r in rows if not (r.startswith("9,") and ",lower_degree," in r)])
    err = _fail(capsys, "curate", bad, "--broadcast-out", b, *PRIVATE)
    assert "lower_degree rows, but not all: 1: 9 are missing" in err
    # the law (projection active whenever D falls below the largest lower degree, 6)
    g = resolve_graph("ws:n=30,k=6,p=0.2", rng=0)
    trials = 150
    est = np.array([run_in_memory(DLAP, g, 3.0, sampler=s, private_bound=True).estimate.value
                    for s in range(trials)])
    mean, var = two_round_moments(g, 0.45 * 3.0, 0.45 * 3.0, eps0=0.1 * 3.0)
    assert abs(est.mean() - mean) < 4 * math.sqrt(var / trials)
    assert abs(est.var(ddof=1) - var) < 4 * var * math.sqrt(2 / (trials - 1))


def test_a_public_bound_beside_the_private_one_is_refused(tmp_path, capsys):
    """--d-max and --private-bound contradict each other (D public, or D from round 1): refused."""
    r1 = tmp_path / "p1.csv"
    _run(capsys, "node", "--protocol", DLAP, "--graph", GRAPH, "--simulate", "--seed", 8, *PRIVATE, "--out", r1)
    capsys.readouterr()
    assert main(["curate", str(r1), "--broadcast-out", str(tmp_path / "b.txt"), *map(str, PRIVATE),
                 "--d-max", "5"]) == 2
    assert not (tmp_path / "b.txt").exists()
    assert main(["node", "--protocol", DLAP, "--graph", GRAPH, *map(str, PRIVATE), "--d-max", "5",
                 "--out", str(tmp_path / "n.csv")]) == 2


def test_a_new_protocol_on_these_rows_needs_no_edit_of_deploy_triangles(tmp_path):
    """A protocol declares its wire (round-1 quantities, round-2 sensitivities, bound, projection flag);
    the broadcast, its file and the accumulators take everything from it, nothing from its name."""
    from ldpgraph.protocols.triangles.two_round import TwoRoundTrianglesDLap
    from ldpgraph.run.trianglefiles import write_triangle_broadcast

    def sens(b):
        return {"local_count": float(3 * b.bound), "run_id": 0.0}

    @registry.register
    class Wired(TwoRoundTrianglesDLap):
        name = "toy-wired-triangles"
        version = 7
        wire = dt.TriangleWire(round1=("rr_count", "rr_edge"), round2=sens, min_bound=3, projection=True)

    try:
        assert dt.triangle_protocols()["toy-wired-triangles"] == 7
        assert "toy-wired-triangles" in dt.TWO_ROUND
        with pytest.raises(ValueError, match="bound must be"):
            dt.TriangleBroadcast.build(Wired.name, 3, 1.0, 2, [0])
        b = dt.TriangleBroadcast.build(Wired.name, 3, 1.0, 4, [0], projection=True)
        assert list(b.header()) == ["protocol", "protocol_version", "round", "n_nodes", "epsilon", "bound",
                                    "n_edges", "projection", "run_id"]
        assert b.header()["protocol_version"] == 7 and b.sensitivities() == {"local_count": 12.0, "run_id": 0.0}
        back = read_triangle_broadcast(write_triangle_broadcast(tmp_path / "b.txt", b))
        assert (back.run_id, back.projection, back.bound) == (b.run_id, True, 4)
        acc = dt.Round1Accumulator(Wired.name)
        assert acc.version == 7 and set(acc.quantities) == {"rr_count", "rr_edge"}
        assert dt.Round2Accumulator(b).sensitivity == {"local_count": 12.0, "run_id": 0.0}
        with pytest.raises(ValueError, match="projection is for avg-clustering and toy-wired-triangles"):
            dt.TriangleBroadcast.build(DLAP, 3, 1.0, 4, [0], projection=True)
    finally:
        registry.unregister(Wired.name)
    with pytest.raises(ValueError, match="protocol must be one of"):
        dt.Round1Accumulator(Wired.name)


def test_a_large_node_id_allocates_nothing_by_it():
    """issue 36 finding 6: a few rows naming node 2**26 (n inferred from the rows) cost memory in
    the rows read, not in the largest id: 7443152 counted rr_edge rows in a dense array by node
    id (~17.5 bytes x the id: 1.1 GB here, 38 GB at 2**31 - 1). Peak traced memory < 16 MiB."""
    import tracemalloc

    big = 1 << 26
    cols = {"node": [big, big, 1, 1], "round": [1] * 4, "quantity": [dt.RR_COUNT, dt.RR_EDGE, dt.RR_COUNT, dt.RR_EDGE],
            "value": [1, 0, 1, 0], "epsilon": [1.0] * 4, "sensitivity": [1.0] * 4,
            "protocol": ["rr-triangles"] * 4, "protocol_version": [1] * 4}
    chunk = dt.chunk_from_columns(cols)
    acc = dt.Round1Accumulator("rr-triangles")
    tracemalloc.start()
    try:
        acc.add(chunk)
        with pytest.raises(ValueError) as info:
            acc.summary()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak
    assert str(info.value).startswith(f"<memory>: nodes are 0..{big}, but some sent no rr_count row")
    with pytest.raises(ValueError, match="node 1 sent 2 rr_edge rows, more than its 1 lower nodes"):
        acc.add(chunk)  # the same rows again: still counted per node


def test_the_two_round_variance_bound_is_never_negative():
    """C-hat is unbiased for C >= 0 but often negative at small epsilon; the curator's bound clips it
    at 0 (E max(C-hat, 0) >= C: still conservative), so every run has a standard error at least the
    noise-and-rounding part (before: a negative variance, no standard error, in a third of the runs)."""
    g = resolve_graph("ba:n=120,m=3", rng=0)
    negative = 0
    for seed in range(12):
        run = run_in_memory(DLAP, g, 1.0, sampler=seed)
        b, est = run.broadcasts[0], run.estimate
        negative += dt.lower_wedge_square_estimate(b.n_nodes, b.index, b.epsilon) < 0
        eps2 = run.plan.release(dt.LOCAL_COUNT).epsilon
        noise = DiscreteLaplace(epsilon=eps2, sensitivity=max(b.bound - 1, 1)).variance
        floor = (g.n_nodes / 4 + g.n_nodes * noise) / (b.p - b.q) ** 2
        assert est.variance_estimate >= floor * (1 - 1e-12) and est.std_error_kind == "upper-bound"
    assert negative >= 2  # the case the clipping is for occurs here
