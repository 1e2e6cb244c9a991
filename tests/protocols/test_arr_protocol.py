"""arr-triangles on the protocol layer: the simulator's budget and law, private node releases, hostile
rows refused, the CLI round trip. (memory == files == Dask: tests/run/test_executors.py.)"""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.audit import audit_neighbours
from ldpgraph.cli import main
from ldpgraph.core import ExactSeeded, Sampler, Seeded
from ldpgraph.datasets import resolve_graph
from ldpgraph.graph import from_networkx, triangle_count
from ldpgraph.protocols import registry
from ldpgraph.protocols.triangles.arr_kernels import (
    arr_moments,
    arr_nonbinding_variance,
    arr_probabilities,
    arr_sensitivity,
    degree_margin,
    triangle_clip_bound,
)
from ldpgraph.protocols.triangles.arr_protocol import ARRBroadcast, arr_local_count, decode_arr_broadcast
from ldpgraph.run import accumulate_files, node_lists, run_in_memory
from ldpgraph.run.files import read_broadcast, write_broadcast
from ldpgraph.run.reportfiles import write_report_chunks
from ldpgraph.run.trianglefiles import edge_list_bytes, read_triangle_broadcast

ARR = "arr-triangles"
N_AUDIT = 10_000


class _Shared(Sampler):
    """One stream for every call: an audit repeats one node's release ``size`` times, each with fresh
    draws of the same generator (the seeded stream's code, without a SeedSequence per call)."""

    def __init__(self, rng, exact: bool = False) -> None:
        seed = int(np.random.default_rng(rng).integers(2**32))
        self.one = (ExactSeeded if exact else Seeded)(seed).stream(0, 0)

    def stream(self, round, node):
        return self.one


@pytest.mark.parametrize("clipping", [True, False])
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_plan_spends_the_simulators_split(clipping, epsilon):
    proto = registry.get(ARR)
    plan = proto.plan(epsilon, clipping=clipping, **({} if clipping else {"d_max": 7}))
    # the documented split (0.1 on the bound with clipping, the rest halved)
    sim = ({"degree-bound": 0.1 * epsilon, "arr": 0.45 * epsilon, "local-count": 0.45 * epsilon} if clipping
           else {"arr": 0.5 * epsilon, "local-count": 0.5 * epsilon})
    released = {q: plan.release(q).epsilon for q in ("lower_degree", "rr_count", "local_count") if clipping
                or q != "lower_degree"}
    want = {"lower_degree": sim.get("degree-bound"), "rr_count": sim["arr"], "local_count": sim["local-count"]}
    assert released == pytest.approx({q: want[q] for q in released}, rel=1e-12)
    assert math.fsum(rel.epsilon for r in plan.rounds for rel in r.releases) == pytest.approx(epsilon, rel=1e-12)
    if clipping:  # the margin of the simulator
        assert plan.public["alpha"] == degree_margin(sim["degree-bound"], 1e-3)


def test_bounds_kappas_and_sensitivities_follow_the_rows():
    """D_v, kappa_v and Delta_v recomputed from the round-1 rows (the noisy lower degrees) by the
    simulator's formulas, and written in every local_count row."""
    g = resolve_graph("ws:n=120,k=10,p=0.1", rng=0)
    run = run_in_memory(ARR, g, 2.0, sampler=5)
    rows1, rows2 = run.rows
    low = rows1["quantity"] == "lower_degree"
    noisy = np.empty(120, dtype=np.int64)
    noisy[rows1["node"][low]] = rows1["value"][low]
    alpha = run.plan.public["alpha"]
    bound = np.maximum(noisy + alpha, 1)
    pe, pn = arr_probabilities(run.plan.release("rr_count").epsilon, 0.25)
    sens = arr_sensitivity(bound, triangle_clip_bound(bound, pe, 1e-3), pn)
    lc = rows2["quantity"] == "local_count"
    assert np.array_equal(rows2["sensitivity"][lc], sens[rows2["node"][lc]].astype(float))
    assert run.broadcasts[0].bound == int(bound.max())


def test_at_mu_one_without_clipping_it_is_the_two_round_protocol_bit_for_bit():
    """mu = 1, no clipping: the same draws in the same order as two-round-triangles-dlap, the same w_v:
    the same estimate for one seed (whose law is the simulator's: tests/protocols/test_triangles.py)."""
    g = resolve_graph("ws:n=300,k=10,p=0.1", rng=0)
    for d_max in (None, 4):  # the true bound, and a projection
        arr = run_in_memory(ARR, g, 1.5, sampler=21, mu=1.0, clipping=False, d_max=d_max)
        two = run_in_memory("two-round-triangles-dlap", g, 1.5, sampler=21, d_max=d_max)
        assert arr.estimate.value == two.estimate.value
        assert np.array_equal(arr.results[0].index, two.results[0].index)
    assert arr.estimate.std_error == two.estimate.std_error  # the variance estimate too, at mu = 1


def test_arr_bits_have_the_simulators_law():
    """P[reported 1] is mu p on an edge and mu q on a non-edge (binomial, within 4 SE)."""
    nxg = nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)])
    g = from_networkx(nxg)
    proto, mu = registry.get(ARR), 0.4
    plan = proto.plan(2.0, mu=mu, clipping=False, d_max=3)
    pe, pn = arr_probabilities(plan.release("rr_count").epsilon, mu)
    nodes, lists = node_lists(g)
    n = 2000
    hits = np.zeros(6)
    for s in range(n):  # the 6 lower pairs of the 4 nodes, one run each
        rows = proto.rounds()[0].release(plan, nodes, lists, None, Seeded(s))
        edge = rows["quantity"] == "rr_edge"
        for u, j in zip(rows["node"][edge], rows["value"][edge], strict=True):
            hits[u * (u - 1) // 2 + j] += 1
    is_edge = np.array([nxg.has_edge(u, j) for u in range(4) for j in range(u)])
    prob = np.where(is_edge, pe, pn)
    assert np.all(np.abs(hits / n - prob) <= 4 * np.sqrt(prob * (1 - prob) / n))


def _local_counts(run):
    """The curator's estimate recomputed from the local_count rows (no variance estimate: fast)."""
    b = run.broadcasts[0]
    pe, pn = arr_probabilities(b.epsilon, b.mu)
    return int(run.results[-1].values()["local_count"].sum()) / (pe - pn)


def _check_moments(x, mean, var):
    n = x.size
    assert abs(x.mean() - mean) <= 4 * math.sqrt(var / n)
    s2 = x.var(ddof=1)
    m4 = float(np.mean((x - x.mean()) ** 4))
    assert abs(s2 - var) <= 4 * math.sqrt(max(m4 - s2 * s2, 0.0) / n)


def test_unclipped_monte_carlo_matches_the_exact_moments():
    """mu < 1, no clipping: mean T and the variance of arr_moments (exact, itself checked by enumeration
    in tests/protocols/test_arr_triangles.py)."""
    g = from_networkx(nx.gnp_random_graph(18, 0.5, seed=3))
    eps, mu = 3.0, 0.5
    x = np.array([_local_counts(run_in_memory(ARR, g, eps, sampler=s, mu=mu, clipping=False))
                  for s in range(200)])
    mean, var = arr_moments(g, eps / 2, eps / 2, mu=mu)
    assert mean == triangle_count(g) > 20
    _check_moments(x, mean, var)
    run = run_in_memory(ARR, g, eps, sampler=0, mu=mu, clipping=False)
    assert run.estimate.value == _local_counts(run) and run.estimate.std_error > 0


def test_clipped_monte_carlo_when_nothing_binds():
    """Per-node private bounds and sensitivities (beta tiny: no clipping binds): mean T and the variance
    arr_nonbinding_variance of the simulator."""
    g = from_networkx(nx.gnp_random_graph(18, 0.5, seed=3))
    eps, mu = 3.0, 0.5
    x = np.array([_local_counts(run_in_memory(ARR, g, eps, sampler=s, mu=mu, beta=1e-9)) for s in range(200)])
    plan = registry.get(ARR).plan(eps, mu=mu, beta=1e-9)
    eps012 = (plan.release(q).epsilon for q in ("lower_degree", "rr_count", "local_count"))
    _check_moments(x, triangle_count(g), arr_nonbinding_variance(g, *eps012, mu=mu, beta=1e-9))


def test_clipped_estimate_says_why_it_has_no_standard_error():
    g = resolve_graph("ws:n=300,k=10,p=0.1", rng=0)
    est = run_in_memory(ARR, g, 2.0, sampler=1).estimate
    assert est.std_error is None and "no unbiased variance estimate" in est.note


# ------------------------------------------------------------------------ privacy audits


def test_round_one_release_is_private_at_its_epsilon():
    """Node 3's rows (its 3 ARR bits and the noisy lower degree) through the layer's release at
    epsilon_arr + epsilon_0; half of epsilon_arr is refuted. (The exact samplers run the same code:
    tests/run/test_executors.py.)"""
    proto = registry.get(ARR)
    plan = proto.plan(1.5, mu=0.5)
    rnd = proto.rounds()[0]
    eps = plan.round(1).epsilon

    def node(nb, size, rng):
        rows = rnd.release(plan, np.full(size, 3), [np.array(nb, dtype=np.int64)] * size, None, _Shared(rng))
        out = np.zeros((size, 4), dtype=np.int64)
        q, v = rows["quantity"], rows["value"]
        starts = np.flatnonzero(q == "rr_count")
        for i, a in enumerate(starts):  # rows of one release: rr_count, its rr_edge rows, (lower_degree)
            k = int(v[a])
            out[i, v[a + 1:a + 1 + k]] = 1
        out[:, 3] = v[q == "lower_degree"]
        return out

    pairs = [((0, 2), (0, 1, 2))]
    assert audit_neighbours(node, pairs, eps, n_samples=N_AUDIT, rng=1).passed
    assert audit_neighbours(node, pairs, plan.release("rr_count").epsilon / 2, n_samples=N_AUDIT,
                            rng=2).violation


def test_round_two_release_is_private_at_its_per_node_sensitivity():
    """Node 9's local count at epsilon_2 with Delta_v = kappa_v from the broadcast, on an ARR graph (a
    path through its candidate neighbours) where adding neighbour 3 adds kappa_v = 2 noisy triangles;
    half the noise is refuted. (A clipping that binds, through the maximum flow, is audited by
    scripts/validate_arr_protocol.py: 1.6 ms a release.)"""
    proto = registry.get(ARR)
    plan = proto.plan(3.0, mu=0.5, beta=0.2)
    eps1, eps2 = plan.release("rr_count").epsilon, plan.release("local_count").epsilon
    from ldpgraph.protocols.randomized_response import pair_index

    path = np.arange(1, 9)
    low = np.full(10, 5) - plan.public["alpha"]  # D_v = 5 for every node
    b = ARRBroadcast.build_arr(10, eps1, np.sort(pair_index(path, path - 1)), mu=0.5, beta=0.2, clipping=True,
                               alpha=plan.public["alpha"], lower_degrees=low)
    assert int(b.bounds[9]) == 5 and int(b.kappas[9]) == 2 == int(b.node_sensitivities[9])
    rnd = proto.rounds()[1]

    def node(nb, size, rng):
        rows = rnd.release(plan, np.full(size, 9), [np.array(nb, dtype=np.int64)] * size, b, _Shared(rng))
        return rows["value"][rows["quantity"] == "local_count"]

    pairs = [((0, 1, 2, 4), (0, 1, 2, 3, 4))]  # f: 2 -> 4 noisy triangles
    assert audit_neighbours(node, pairs, eps2, n_samples=N_AUDIT, rng=3).passed

    def half_noise(nb, size, rng):  # the round's node function with DLap at Delta_v / 2 (twice epsilon_2)
        one = _Shared(rng).stream(2, 9)
        return np.array([arr_local_count(9, np.array(nb), b, 2 * eps2, one) for _ in range(size)])

    assert audit_neighbours(half_noise, pairs, eps2, n_samples=N_AUDIT, rng=4).violation


# ------------------------------------------------------------------------ hostile rows


def _round_rows(tmp_path, clipping=True):
    g = resolve_graph("ws:n=60,k=6,p=0.1", rng=0)
    proto = registry.get(ARR)
    plan = proto.plan(2.0, **({} if clipping else {"clipping": False, "d_max": 8}))
    nodes, lists = node_lists(g)
    r1, r2 = proto.rounds()
    rows1 = r1.release(plan, nodes, lists, None, Seeded(4))
    acc = r1.accumulator(plan, None)
    from ldpgraph.protocols.deploy_triangles import chunk_from_columns

    acc.add(chunk_from_columns(rows1))
    b = r1.broadcast(acc.result(), plan)
    return proto, plan, rows1, r2.release(plan, nodes, lists, b, Seeded(4)), b


def test_wrong_per_node_sensitivity_is_refused_with_file_and_row(tmp_path):
    proto, plan, _, rows2, b = _round_rows(tmp_path)
    rows2 = {k: v.copy() for k, v in rows2.items()}
    at = np.flatnonzero((rows2["quantity"] == "local_count") & (rows2["node"] == 17))[0]
    rows2["sensitivity"][at] = b.node_sensitivities[17] + 1  # a node claiming more noise than its Delta_v
    path, _ = write_report_chunks(tmp_path / "r2.csv", [rows2])
    with pytest.raises(ValueError, match=rf"node 17: {b.node_sensitivities[17]:g}.*r2.csv row {at}"):
        accumulate_files([path], proto.rounds()[1], plan, b)


def test_partner_id_not_below_the_node_is_refused_with_file_and_row(tmp_path):
    proto, plan, rows1, _, _ = _round_rows(tmp_path)
    rows1 = {k: v.copy() for k, v in rows1.items()}
    at = np.flatnonzero((rows1["quantity"] == "rr_edge") & (rows1["node"] == 30))[0]
    rows1["value"][at] = 30
    path, _ = write_report_chunks(tmp_path / "r1.jsonl", [rows1])
    with pytest.raises(ValueError, match=rf"partner id 30 of node 30 is not a lower node.*r1.jsonl row {at}"):
        accumulate_files([path], proto.rounds()[0], plan)


def test_broadcast_of_another_plan_and_an_edited_broadcast_are_refused(tmp_path):
    proto, plan, _, _, b = _round_rows(tmp_path)
    path = write_broadcast(proto, tmp_path / "b.txt", b)
    assert read_broadcast(proto, path, plan).run_id == b.run_id
    with pytest.raises(ValueError, match="was not made under the plan"):
        read_broadcast(proto, path, proto.plan(2.0, mu=0.5))
    tag, head_line, body = path.read_bytes().split(b"\n", 2)
    head = json.loads(head_line[2:])
    head["lower_degrees"][3] += 1  # a node's bound changed after the fact
    path.write_bytes(b"\n".join([tag, ("# " + json.dumps(head, sort_keys=True)).encode(), body]))
    with pytest.raises(ValueError, match="do not match the run id"):
        read_broadcast(proto, path, plan)


# ------------------------------------------------------------------------ CLI


def _cli_round_trip(tmp_path, capsys, proto, options, graph="ws:n=300,k=10,p=0.1", stat=None):
    """node -> curate -> node -> curate; the curator's JSON of round 2 and the broadcast's size."""
    common = ["--protocol", proto, "--epsilon", "2", *options]
    key = ["--curator-key", str(tmp_path / "key")]
    node = ["node", "--graph", graph, "--simulate", "--seed", "3", *common]
    r1, r2, b = tmp_path / f"{proto}1.csv", tmp_path / f"{proto}2.parquet", tmp_path / f"{proto}.b"
    assert main([*node, "--out", str(r1)]) == 0
    assert main(["curate", str(r1), *common, *key, "--broadcast-out", str(b), "--expected-nodes", "300"]) == 0
    assert main([*node, "--round", "2", "--broadcast", str(b), "--out", str(r2)]) == 0
    capsys.readouterr()
    assert main(["curate", str(r2), *common, *key, "--broadcast", str(b), "--json",
                 *([] if stat is None else ["--stat", stat])]) == 0
    return json.loads(capsys.readouterr().out), b.stat().st_size


def test_cli_round_trip_and_a_quarter_of_the_download(tmp_path, capsys):
    g = resolve_graph("ws:n=300,k=10,p=0.1", rng=0)
    got, arr_bytes = _cli_round_trip(tmp_path, capsys, ARR, [])
    est = got["estimates"][0]
    want = run_in_memory(ARR, g, 2.0, sampler=3).estimate
    assert est["estimate"] == want.value and est["std_error"] is None
    assert "no unbiased variance estimate" in est["no_std_error_reason"]
    assert got["epsilon"] == 2.0 and sum(got["budget"].values()) == pytest.approx(2.0)
    got, _ = _cli_round_trip(tmp_path, capsys, ARR, ["--no-clipping", "--d-max", "12"])
    assert got["estimates"][0]["std_error"] > 0
    _, two_bytes = _cli_round_trip(tmp_path, capsys, "two-round-triangles-dlap", ["--d-max", "12"])
    # the ARR graph holds mu = 1/4 of the noisy edges; both files are the packed bits after their header
    # (ARR's: the noisy lower degrees): ARR's download is no longer a quarter (a packed bit matrix does
    # not shrink with sampling), the edge list (version 1) is written only when shorter
    paths = tmp_path / f"{ARR}.b", tmp_path / "two-round-triangles-dlap.b"
    arr, two = decode_arr_broadcast(paths[0].read_bytes(), str(paths[0])), read_triangle_broadcast(paths[1])
    assert 0.2 < arr.index.size / two.index.size < 0.35
    for path, b in zip(paths, (arr, two), strict=True):
        tag, _, body = path.read_bytes().split(b"\n", 2)
        assert tag == b"# ldpgraph-broadcast-edges 2" and len(body) == (300 * 299 // 2 + 7) // 8
        assert len(body) < edge_list_bytes(b.index)
    assert two_bytes == paths[1].stat().st_size and arr_bytes > len(body)


def test_a_header_longer_than_a_mebibyte_still_gets_its_edge_lines_checked(tmp_path):
    """200,000 noisy lower degrees make a 1.6 MB header line; '05 1' (5 read as 5: same run id) is
    still refused as a non-canonical edge line."""
    from ldpgraph.protocols.randomized_response import pair_index
    from ldpgraph.run.trianglefiles import write_triangle_broadcast

    n = 200_000
    b = ARRBroadcast.build_arr(n, 1.0, pair_index(np.array([5]), np.array([1])), mu=0.25, beta=1e-3,
                               clipping=True, alpha=3, lower_degrees=np.full(n, 123_456))
    path = write_triangle_broadcast(tmp_path / "b.txt", b)
    assert path.stat().st_size > 1 << 20 and decode_arr_broadcast(path.read_bytes(), str(path)).run_id == b.run_id
    text = path.read_text()
    path.write_text(text[: text.rindex("5 1")] + "05 1\n")
    with pytest.raises(ValueError, match="line 3: an edge line holds two canonical integers"):
        decode_arr_broadcast(path.read_bytes(), str(path))
