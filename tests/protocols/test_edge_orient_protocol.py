"""edge-orient-triangles on the protocol layer: the simulator's budget and law, private node releases,
hostile rows refused, the CLI round trip. (memory == files == Dask: tests/run/test_executors.py.)"""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest
from test_arr_protocol import _check_moments  # mean and variance within 4 SE

from ldpgraph.audit import audit_neighbours
from ldpgraph.cli import main
from ldpgraph.core import Sampler, Seeded
from ldpgraph.datasets import resolve_graph
from ldpgraph.graph import from_networkx, triangle_count
from ldpgraph.protocols import registry
from ldpgraph.protocols.orientation.edge_orient import (
    EdgeOrientBroadcast,
    bound_and_count,
    download_bytes,
    ranks,
    relabelled_index,
)
from ldpgraph.protocols.orientation.kernels import (
    MARGIN,
    count_sensitivity,
    edge_orient_budget,
    edge_orient_mean,
    edge_orient_variance,
    orient_relabel,
)
from ldpgraph.protocols.randomized_response import (
    flip_probability,
    keep_probability,
    pair_from_index,
    pair_index,
)
from ldpgraph.protocols.triangles.kernels import lower_wedges, rounding_variance
from ldpgraph.run import accumulate_files, node_lists, run_in_memory
from ldpgraph.run.files import read_broadcast, write_broadcast
from ldpgraph.run.reportfiles import write_report_chunks
from ldpgraph.run.trianglefiles import read_edge_orient_broadcast, write_oriented_broadcast

EO = "edge-orient-triangles"
N_AUDIT = 10_000


class _Shared(Sampler):
    """One stream for every call: an audit repeats one node's release ``size`` times with fresh draws."""

    def __init__(self, rng) -> None:
        self.one = Seeded(int(np.random.default_rng(rng).integers(2**32))).stream(0, 0)

    def stream(self, round, node):
        return self.one


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_plan_spends_the_simulators_split(epsilon):
    plan = registry.get(EO).plan(epsilon)
    sim = edge_orient_budget(epsilon)
    got = {"order": plan.release("degree").epsilon, "rr": plan.release("rr_count").epsilon,
           "bound": plan.release("out_degree").epsilon, "count": plan.release("local_count").epsilon}
    assert got == pytest.approx(sim, rel=1e-12)
    assert math.fsum(plan.budget().values()) == pytest.approx(epsilon, rel=1e-12)
    assert plan.public["margin_c"] == math.ceil(MARGIN / sim["bound"] - 1e-9)


def _pieces(run):
    """(order key per node, bounds D_v per node, estimate from the local_count rows) of one run."""
    b = run.broadcasts[0]
    vals = run.results[-1].values()
    bounds = np.maximum(vals["out_degree"] + run.plan.public["margin_c"], 1)
    return b.degrees, bounds, int(vals["local_count"].sum()) / (b.p - b.q)


def test_monte_carlo_matches_the_simulators_analytic_moments():
    """No node projected (margin 10: P = 1e-5 a node): E T^ = T, and by the law of total variance
    Var T^ = E[edge_orient_variance(order, bounds)] (the conditional mean is T whatever they are), the
    order and bounds read back from each run's broadcast and out_degree rows; the curator's variance
    estimate averages that variance with n/4 for the rounding term."""
    g = from_networkx(nx.gnp_random_graph(18, 0.5, seed=3))
    eps, n = 3.0, 300
    e = edge_orient_budget(eps)
    p, q = keep_probability(e["rr"]), flip_probability(e["rr"])
    x, cond, upper, var_hat = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    for s in range(n):
        run = run_in_memory(EO, g, eps, sampler=s, margin=10.0)
        key, bounds, x[s] = _pieces(run)
        oriented = orient_relabel(g, key)
        order = np.lexsort((-np.arange(g.n_nodes), -key))  # new id i is node order[i]
        cond[s] = edge_orient_variance(oriented, e["rr"], e["count"], bounds[order])
        # what the curator's variance estimate is unbiased for: the rounding term replaced by n/4
        upper[s] = cond[s] + (g.n_nodes / 4 - rounding_variance(oriented, q)) / (p - q) ** 2
        assert x[s] == run.estimate.value
        var_hat[s] = run.estimate.variance_estimate
    assert triangle_count(g) > 50
    _check_moments(x, triangle_count(g), float(cond.mean()))
    assert abs(var_hat.mean() - upper.mean()) <= 4 * (var_hat - upper).std(ddof=1) / math.sqrt(n)


def _scaled_mean(graph, key, bounds):
    """E[T^ | order, bounds] = sum_v alpha_v t_v (edge_orient_mean), the bounds in the order's labels."""
    order = np.lexsort((-np.arange(graph.n_nodes), -key))
    return edge_orient_mean(orient_relabel(graph, key), bounds[order])


def test_with_scaled_nodes_the_mean_is_the_scaled_one_and_the_simulators():
    """margin 0: about a fifth of the nodes scaled down. Each run's estimate minus its exact conditional mean
    (order and bounds read back from its rows) averages 0 within 4 SE, the conditional means sit well
    below T (the bias is tested), and the simulator's estimates have the same mean (two-sample, 4 SE)."""
    g = from_networkx(nx.gnp_random_graph(18, 0.5, seed=3))
    eps, n = 6.0, 300
    x, cm = np.empty(n), np.empty(n)
    for s in range(n):
        key, bounds, x[s] = _pieces(run_in_memory(EO, g, eps, sampler=s, margin=0.0))
        cm[s] = _scaled_mean(g, key, bounds)
    resid = x - cm
    assert abs(resid.mean()) <= 4 * resid.std(ddof=1) / math.sqrt(n)
    assert triangle_count(g) - cm.mean() > 4 * resid.std(ddof=1) / math.sqrt(n)
    proto = registry.get(EO)
    y = proto.simulate(g, proto.plan(eps, margin=0.0), "triangles", n, np.random.default_rng(7))
    assert abs(x.mean() - y.mean()) <= 4 * math.sqrt(x.var(ddof=1) / n + y.var(ddof=1) / n)


def test_order_and_out_degrees_follow_the_rows():
    """The broadcast's order is the degree rows; each out_degree row is the node's out-degree in it plus
    DLap noise (at epsilon 400: exactly), and local_count's sensitivity is Delta_v of D_v."""
    g = resolve_graph("ws:n=120,k=10,p=0.1", rng=0)
    run = run_in_memory(EO, g, 2000.0, sampler=5)
    rows1, rows2 = run.rows
    deg = rows1["quantity"] == "degree"
    assert np.array_equal(run.broadcasts[0].degrees[rows1["node"][deg]], rows1["value"][deg])
    assert np.array_equal(run.broadcasts[0].degrees, g.degrees)
    oriented = orient_relabel(g, g.degrees)
    order = np.lexsort((-np.arange(g.n_nodes), -g.degrees))
    out = run.results[1].values()["out_degree"]
    assert np.array_equal(out[order], lower_wedges(oriented).lower_degrees)
    lc = rows2["quantity"] == "local_count"
    d = np.maximum(out + run.plan.public["margin_c"], 1)
    p = run.broadcasts[0].p
    assert np.array_equal(rows2["sensitivity"][lc], count_sensitivity(d, p)[rows2["node"][lc]].astype(float))
    assert run.estimate.value == pytest.approx(triangle_count(g), abs=1e-6)
    # the curator's variance estimate reads the noisy graph (here the graph) in the order's labels
    e = oriented.edges()
    assert np.array_equal(relabelled_index(run.broadcasts[0]), np.sort(pair_index(e[:, 1], e[:, 0])))


# ------------------------------------------------------------------------ privacy audit


def test_round_two_release_is_private_at_its_epsilon():
    """Node 9's round-2 rows (its noisy out-degree and the count at the sensitivity of the bound drawn
    from it) at epsilon_0 + epsilon_2, on a broadcast where node 9 is last in the order and the noisy
    graph is complete: adding neighbour 3 raises the out-degree by 1 and w_v by 4 (1 - q). Half the count's
    noise is refuted."""
    proto = registry.get(EO)
    plan = proto.plan(4.0, margin=0.0, shares={"order": 0.05, "bound": 0.15, "rr": 0.2, "count": 0.6})
    eps0, eps2 = plan.release("out_degree").epsilon, plan.release("local_count").epsilon
    u, v = np.tril_indices(9, k=-1)
    b = EdgeOrientBroadcast.build_order(10, plan.release("rr_count").epsilon, np.sort(pair_index(u, v)),
                                        [5] * 9 + [0])
    rnd = proto.rounds()[1]

    def node(nb, size, rng):
        rows = rnd.release(plan, np.full(size, 9), [np.array(nb, dtype=np.int64)] * size, b, _Shared(rng))
        return np.stack([rows["value"][rows["quantity"] == q] for q in ("out_degree", "local_count")], axis=1)

    pairs = [((0, 1, 2, 4), (0, 1, 2, 3, 4))]
    assert audit_neighbours(node, pairs, plan.round(2).epsilon, n_samples=12_000, rng=3).passed

    def half_noise(nb, size, rng):
        one = _Shared(rng).stream(2, 9)
        out = [bound_and_count(9, np.array(nb), b, eps0, 2 * eps2, 0, one) for _ in range(size)]
        return np.array([(a, r) for a, _, r in out])

    assert audit_neighbours(half_noise, pairs, plan.round(2).epsilon, n_samples=N_AUDIT, rng=4).violation


# ------------------------------------------------------------------------ hostile rows


def _rows(tmp_path):
    g = resolve_graph("ws:n=60,k=6,p=0.1", rng=0)
    proto = registry.get(EO)
    plan = proto.plan(2.0)
    nodes, lists = node_lists(g)
    r1, r2 = proto.rounds()
    acc = r1.accumulator(plan, None)
    from ldpgraph.protocols.deploy_triangles import chunk_from_columns

    acc.add(chunk_from_columns(r1.release(plan, nodes, lists, None, Seeded(4))))
    b = r1.broadcast(acc.result(), plan)
    return proto, plan, r2.release(plan, nodes, lists, b, Seeded(4)), b


def test_a_count_claiming_another_sensitivity_than_its_bound_is_refused(tmp_path):
    proto, plan, rows2, b = _rows(tmp_path)
    rows2 = {k: v.copy() for k, v in rows2.items()}
    at = np.flatnonzero((rows2["quantity"] == "local_count") & (rows2["node"] == 17))[0]
    want = rows2["sensitivity"][at]
    rows2["sensitivity"][at] += 1  # more noise claimed than its out_degree row allows
    path, _ = write_report_chunks(tmp_path / "r2.csv", [rows2])
    with pytest.raises(ValueError, match=rf"node 17: {want:g}\), got {want + 1:g}: .*r2.csv row {at} \(line"):
        accumulate_files([path], proto.rounds()[1], plan, b)


def test_an_edited_broadcast_and_one_of_another_plan_are_refused(tmp_path):
    proto, plan, _, b = _rows(tmp_path)
    path = write_broadcast(proto, tmp_path / "b.bin", b)
    back = read_broadcast(proto, path, plan)
    assert np.array_equal(back.degrees, b.degrees) and np.array_equal(back.index, b.index)
    with pytest.raises(ValueError, match="use the --epsilon and options of round 1"):
        read_broadcast(proto, path, proto.plan(3.0))
    raw = path.read_bytes()
    tag, head, body = raw.split(b"\n", 2)
    header = json.loads(head[2:])
    header["degrees"][3] += 1  # the order changed after the fact
    path.write_bytes(b"\n".join([tag, b"# " + json.dumps(header, sort_keys=True).encode(), body]))
    with pytest.raises(ValueError, match="do not match the run id"):
        read_broadcast(proto, path, plan)
    flipped = bytearray(body)
    flipped[len(flipped) // 2] ^= 1  # one noisy bit edited (the header's edge count as well)
    header["degrees"][3] -= 1
    header["n_edges"] += 1 if bin(body[len(body) // 2]).count("1") < bin(flipped[len(body) // 2]).count("1") else -1
    path.write_bytes(b"\n".join([tag, b"# " + json.dumps(header, sort_keys=True).encode(), bytes(flipped)]))
    with pytest.raises(ValueError, match="do not match the run id"):
        read_broadcast(proto, path, plan)
    path.write_bytes(b"\n".join([tag, head, body[:-1]]))
    with pytest.raises(ValueError, match="truncated or edited"):
        read_broadcast(proto, path, plan)


def test_a_node_reads_only_its_ranks_prefix_and_releases_the_same():
    """Every node's round-2 release from the prefix of the file its rank needs (download_bytes of it)
    equals its release from the whole broadcast, with the same stream: the bits it reads are those
    among the nodes before it in the order, all its out-neighbours are there, and what it reads is a
    function of its public rank only."""
    import tempfile
    from pathlib import Path

    g = resolve_graph("ws:n=60,k=6,p=0.1", rng=0)
    proto, plan, rows2, b = _rows(None)
    nodes, lists = node_lists(g)
    rnd = proto.rounds()[1]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_oriented_broadcast(Path(tmp) / "b.bin", b)
        size = path.stat().st_size
        rank = ranks(b.degrees)
        down = download_bytes(b)
        assert down.max() <= size and np.all(np.diff(down[np.argsort(rank)]) >= 0)
        for v in nodes.tolist():
            part = read_edge_orient_broadcast(path, node=v)
            u, w = pair_from_index(part.index)
            assert np.all(rank[u] < rank[v]) and np.all(rank[w] < rank[v])
            mine = rnd.release(plan, np.array([v]), [lists[v]], part, Seeded(4))
            full = rows2["node"] == v
            assert np.array_equal(mine["value"], rows2["value"][full])


# ------------------------------------------------------------------------ CLI


def test_cli_node_curate_round_trip_and_the_download(tmp_path, capsys):
    """node -> curate -> node -> curate gives the in-memory estimate; one broadcast, packed bits (as
    two-round-triangles-dlap's, with the order in the header), of which a
    node reads the header and its rank's prefix: under half of it on average here (the header holds the
    order: n numbers), as the curate line says."""
    graph = "ws:n=300,k=10,p=0.1"
    key = ["--curator-key", str(tmp_path / "key")]
    sizes = {}
    for proto, options in ((EO, []), ("two-round-triangles-dlap", ["--d-max", "12"])):
        common = ["--protocol", proto, "--epsilon", "2", *options]
        node = ["node", "--graph", graph, "--simulate", "--seed", "3", *common]
        r1, r2, b = tmp_path / f"{proto}1.jsonl", tmp_path / f"{proto}2.parquet", tmp_path / f"{proto}.b"
        assert main([*node, "--out", str(r1)]) == 0
        assert main(["curate", str(r1), *common, *key, "--broadcast-out", str(b), "--expected-nodes", "300"]) == 0
        said = capsys.readouterr().out
        assert main([*node, "--round", "2", "--broadcast", str(b), "--out", str(r2)]) == 0
        capsys.readouterr()
        assert main(["curate", str(r2), *common, *key, "--broadcast", str(b), "--json"]) == 0
        got = json.loads(capsys.readouterr().out)
        sizes[proto] = b.stat().st_size
        if proto == EO:
            want = run_in_memory(EO, resolve_graph(graph, rng=0), 2.0, sampler=3).estimate
            est = got["estimates"][0]
            assert est["estimate"] == want.value and est["std_error"] == want.std_error > 0
            assert got["epsilon"] == 2.0 and sum(got["budget"].values()) == pytest.approx(2.0)
            mean = float(download_bytes(read_edge_orient_broadcast(b)).mean())
            assert f"{mean:,.0f} bytes on average" in said and mean < 0.55 * sizes[EO]
    # both broadcasts are the packed bits after two header lines (edge-orient's holds the order)
    for proto, path_size in sizes.items():
        with open(tmp_path / f"{proto}.b", "rb") as fh:
            head = len(fh.readline()) + len(fh.readline())
        assert path_size - head == (300 * 299 // 2 + 7) // 8


def test_transitivity_deploys_with_a_degree_share():
    """--stat transitivity implies degree_share 0.1 (as the simulation spends): round 2 carries every
    node's degree, the curator's estimate is 3T/S2 with a delta-method SE; without the degree rows
    curate refuses, naming --degree-share."""
    g = resolve_graph("ws:n=60,k=6,p=0.1", rng=0)
    run = run_in_memory("edge-orient-triangles", g, 6.0, sampler=3, statistic="transitivity")
    assert run.plan.public["degree_share"] == 0.1 and run.plan.release_budget()["degree"] == pytest.approx(0.6)
    assert run.estimate.statistic == "transitivity" and run.estimate.se_kind == "delta"
    assert 0 < run.estimate.value < 1 and run.estimate.std_error > 0
    plain = run_in_memory("edge-orient-triangles", g, 6.0, sampler=3)
    with pytest.raises(ValueError, match="--degree-share"):
        plain.protocol.estimate(plain.results[-1], plain.plan, plain.broadcasts[-1], "transitivity")
