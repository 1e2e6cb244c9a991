"""Poisoning screening of the triangle protocols' rows, and the protocol registry of report files."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.graph import from_edge_array
from ldpgraph.protocols import deploy_triangles as dt
from ldpgraph.protocols import poisoning as po
from ldpgraph.protocols.randomized_response import flip_probability, keep_probability
from ldpgraph.protocols.reports import PROTOCOLS, check_broadcast, report_columns
from ldpgraph.reportfiles import read_report_set, write_reports

GRAPH = "ws:n=40,k=6,p=0.2"
DLAP = "two-round-triangles-dlap"


def _run(capsys, *args) -> str:
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _err(capsys, code, *args) -> str:
    capsys.readouterr()
    assert main([str(a) for a in args]) == code
    return capsys.readouterr().err


# ------------------------------------------------------------------------------ protocol registry


def test_every_deployed_protocol_is_registered_with_its_version():
    assert PROTOCOLS == {"degree": 1, **dt.TRIANGLE_PROTOCOLS}
    assert set(dt.TRIANGLE_PROTOCOLS) == {dt.RR_PROTOCOL, DLAP, dt.CLUSTERING_PROTOCOL}


def test_degree_only_entry_points_refuse_triangle_protocols():
    from ldpgraph.protocols import DegreeRandomizer

    rep = DegreeRandomizer(epsilon=1.0).randomize([1, 2], rng=0)
    with pytest.raises(ValueError, match=r"protocol must be 'degree'.*got 'rr-triangles'.*round1_columns"):
        report_columns(rep, protocol="rr-triangles")
    fake = {"format": "ldpgraph-broadcast", "format_version": 1, "protocol": DLAP, "protocol_version": 1,
            "round": 1, "values": {}}
    with pytest.raises(ValueError, match=r"JSON broadcast of 'two-round-triangles-dlap'.*edge list"):
        check_broadcast(fake, next_round=2)


@pytest.fixture()
def files(tmp_path, capsys):
    tri = tmp_path / "tri.csv"
    deg = tmp_path / "deg.csv"
    _run(capsys, "node", "--protocol", "rr-triangles", "--graph", GRAPH, "--epsilon", 1, "--simulate",
         "--seed", 1, "--out", tri)
    _run(capsys, "node", "--graph", GRAPH, "--epsilon", 1, "--simulate", "--seed", 1, "--out", deg)
    return tri, deg


def test_curate_names_the_protocol_of_a_mislabelled_file(files, capsys):
    tri, deg = files
    err = _err(capsys, 2, "curate", tri, "--protocol", "degree")
    assert f"{tri} holds protocol 'rr-triangles' rows, not 'degree': pass --protocol rr-triangles" in err
    err = _err(capsys, 2, "curate", deg, "--protocol", "avg-clustering")
    assert "holds protocol 'degree' rows, not 'avg-clustering': pass --protocol degree" in err
    err = _err(capsys, 2, "curate", deg, tri)
    assert "mix protocols" in err and "deg.csv holds protocol 'degree'" in err
    assert "tri.csv holds protocol 'rr-triangles'" in err
    assert "triangles" in _run(capsys, "curate", tri, "--protocol", "rr-triangles")


def test_rows_of_another_protocol_inside_a_file_are_named(files, tmp_path):
    tri, deg = files
    cols = dt.round1_columns("rr-triangles", [0, 1, 2], [[1], [0, 2], [1]], 1.0, seed=0)
    cols["protocol"][-1] = "degree"
    bad = write_reports(tmp_path / "mixed.csv", cols)
    acc = dt.Round1Accumulator("rr-triangles")
    from ldpgraph.reportfiles import iter_report_chunks

    with pytest.raises(ValueError, match=r"rows of protocol 'degree', expected 'rr-triangles'.*mixed\.csv row"
                       r".*curate them with --protocol degree"):
        for chunk in iter_report_chunks(bad):
            acc.add(chunk)
    with pytest.raises(ValueError, match=r"rows of another protocol 'rr-triangles', expected 'degree'"):
        read_report_set(tri)


# ------------------------------------------------------------------------------ admissible ranges


@pytest.mark.parametrize("eps1", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("bound", [1, 2, 4])
def test_dlap_pre_noise_range_by_enumeration(eps1, bound):
    """Every (m <= D kept, bit pattern, rounding) gives an integer inside the range minus its margins."""
    q = flip_probability(eps1)
    lo, hi = po.local_count_range(DLAP, bound=bound, epsilon_rr=eps1, epsilon=200.0,
                                  sensitivity=max(bound - 1, 1))
    assert po.noise_quantile(200.0, max(bound - 1, 1)) == 0
    seen = set()
    for m in range(bound + 1):
        pairs = math.comb(m, 2)
        for bits in itertools.product((0, 1), repeat=pairs):
            w = sum(bits) - q * pairs
            seen |= {math.floor(w), math.ceil(w)}
    assert lo + 1 == min(seen) and hi - 1 == max(seen)   # tight up to the documented unit margin


@pytest.mark.parametrize("bound", [2, 3, 4])
def test_clustering_pre_noise_range_by_enumeration(bound):
    sens = 2.0 * (bound - 1)
    lo, hi = po.local_count_range("avg-clustering", bound=bound, epsilon_rr=1.0, epsilon=1.0, sensitivity=sens)
    t = po.noise_quantile(1.0, sens)
    seen = {2 * sum(bits) - math.comb(m, 2)
            for m in range(bound + 1) for bits in itertools.product((0, 1), repeat=math.comb(m, 2))}
    assert (min(seen) - t, max(seen) + t) == (lo, hi)
    # a truthful row leaves the range only through the noise tail, at most alpha
    assert po.noise_tail(t, 1.0, sens) <= po.DEFAULT_ALPHA < po.noise_tail(t - 1, 1.0, sens)


def test_degree_and_lower_degree_ranges():
    t = po.noise_quantile(0.5)
    assert po.degree_row_range(bound=7, n_nodes=50, projection=False, epsilon=0.5) == (-t, 7 + t)
    assert po.degree_row_range(bound=7, n_nodes=50, projection=True, epsilon=0.5) == (-t, 49 + t)
    tight = po.PublicBounds(degree_bound=20)
    assert po.degree_row_range(bound=7, n_nodes=50, projection=True, epsilon=0.5, bounds=tight) == (-t, 20 + t)
    lo, hi = po.lower_degree_range(np.array([0, 3, 40]), epsilon=0.5, bounds=tight)
    assert lo == -t and hi.tolist() == [t, 3 + t, 20 + t]
    with pytest.raises(ValueError, match="outliers must be"):
        po.screen_values(np.array([1]), 0, 1, "drop", "x")
    with pytest.raises(ValueError, match=r"1 x report\(s\) outside .*value 5 at position 1, range \[0, 2\]"):
        po.screen_values(np.array([1, 5]), 0, 2, "raise", "x")
    v, keep, k = po.screen_values(np.array([1, 5, -3]), 0, 2, "reject", "x")
    assert v.tolist() == [1, 5, -3] and keep.tolist() == [True, False, False] and k == 2


# ------------------------------------------------------------------------------ seeded runs


def _graph():
    from ldpgraph.datasets import resolve_graph

    return resolve_graph(GRAPH, rng=0)   # the CLI's --graph-seed default


def _round2(protocol, eps, *, seed, bound=None, private=False, projection=False):
    g = _graph()
    run = dt.simulate_deployment(g, protocol, eps, seed=seed, bound=bound, private_bound=private,
                                 projection=projection)
    return g, run


@pytest.mark.parametrize("seed", range(6))
def test_truthful_reports_are_never_screened(seed):
    g, run = _round2(DLAP, 0.6, seed=seed, private=True)
    acc1 = dt.Round1Accumulator(DLAP, outliers="raise")
    acc1.add(dt.chunk_from_columns(run.rounds[0]))
    s = acc1.summary()
    assert s.screening["lower_degree"].n_outside == 0 and s.private_bound() == run.broadcast.bound
    acc2 = dt.Round2Accumulator(run.broadcast, outliers="raise")
    acc2.add(dt.chunk_from_columns(run.rounds[1]))
    assert acc2.estimate().value == run.estimate.value
    g, run = _round2("avg-clustering", (0.5, 0.5, 0.5), seed=seed, bound=6, projection=True)
    acc2 = dt.Round2Accumulator(run.broadcast, outliers="raise")
    acc2.add(dt.chunk_from_columns(run.rounds[1]))
    assert acc2.estimate().value == run.estimate.value
    assert all(sc.n_outside == 0 for sc in acc2.screened_values()[1].values())


def _with_value(cols, node, quantity, value):
    out = {c: np.array(v, copy=True) for c, v in cols.items()}
    row = np.flatnonzero((out["node"] == node) & (out["quantity"] == quantity))
    out["value"][row] = value
    return out


def _estimate(broadcast, cols, outliers="clip"):
    acc = dt.Round2Accumulator(broadcast, outliers=outliers)
    acc.add(dt.chunk_from_columns(cols))
    return acc


def test_one_liar_moves_the_dlap_estimate_by_at_most_the_bound():
    g, run = _round2(DLAP, (0.5, 0.5), seed=1, bound=8)
    b, cols = run.broadcast, run.rounds[1]
    honest = _estimate(b, cols)
    bound = honest.influence_bound()
    lo, hi = honest.ranges()["local_count"]
    assert bound == pytest.approx((hi - lo) / (b.p - b.q), rel=1e-15)
    base = honest.estimate().value
    for node in (0, 17, 39):
        for value in (-10**15, lo, hi, 10**15):
            acc = _estimate(b, _with_value(cols, node, "local_count", value))
            assert acc.screened_values()[1]["local_count"].n_outside == (abs(value) == 10**15)
            assert abs(acc.estimate().value - base) <= bound * (1 + 1e-12)
    # tight: the liar at one end, then at the other
    spread = (_estimate(b, _with_value(cols, 5, "local_count", 10**15)).estimate().value
              - _estimate(b, _with_value(cols, 5, "local_count", -10**15)).estimate().value)
    assert spread == pytest.approx(bound, rel=1e-12)
    # reject drops the report: the sum over the others
    acc = _estimate(b, _with_value(cols, 5, "local_count", 10**15), outliers="reject")
    r = honest.values()["local_count"]
    assert acc.estimate().value == pytest.approx((int(r.sum()) - int(r[5])) / (b.p - b.q), rel=1e-13)
    with pytest.raises(ValueError, match=r"1 local_count report\(s\) outside the admissible range"):
        _estimate(b, _with_value(cols, 5, "local_count", 10**15), outliers="raise").estimate()


def test_one_liar_moves_the_clustering_estimate_by_at_most_the_bound():
    g, run = _round2("avg-clustering", (1.0, 2.0, 2.0), seed=2, bound=10, projection=False)
    b, cols = run.broadcast, run.rounds[1]
    honest = _estimate(b, cols)
    bound = honest.influence_bound()
    (dl, du), (rl, ru) = honest.ranges()["degree"], honest.ranges()["local_count"]
    base = honest.estimate().value
    node = 11
    worst = []
    for d in range(dl - 1, du + 2):   # one beyond each end: clipped
        for r in (rl, ru):
            lied = _with_value(_with_value(cols, node, "degree", d), node, "local_count", r)
            worst.append(_estimate(b, lied).estimate().value)
    assert max(abs(w - base) for w in worst) <= bound * (1 + 1e-12)
    assert max(worst) - min(worst) == pytest.approx(bound, rel=1e-9)   # attained
    with pytest.raises(ValueError, match="reject' is not available for avg-clustering"):
        dt.Round2Accumulator(b, outliers="reject")


def test_one_liar_moves_rr_triangles_by_at_most_the_bound():
    g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3], [3, 4], [1, 4], [0, 5]])
    n, eps = g.n_nodes, 0.7
    lists = [g.indices[g.indptr[v]:g.indptr[v + 1]] for v in range(n)]
    base_cols = dt.round1_columns("rr-triangles", range(n), lists, eps, seed=4)

    def est(cols):
        acc = dt.Round1Accumulator("rr-triangles")
        acc.add(dt.chunk_from_columns(cols))
        return dt.rr_triangles_estimate(acc.summary()).value, acc

    base, acc = est(base_cols)
    bound = acc.influence_bound()
    assert bound == pytest.approx(math.comb(n - 1, 2) * keep_probability(eps) ** 2
                                  / (keep_probability(eps) - flip_probability(eps)) ** 3)
    v = n - 1
    keep = base_cols["node"] != v
    for partners in itertools.chain.from_iterable(itertools.combinations(range(v), k) for k in range(v + 1)):
        mine = dt.round1_columns("rr-triangles", [v], [[]], eps, seed=0)
        mine = {c: np.r_[mine[c][:1], np.repeat(mine[c][:1], len(partners))] for c in mine}
        mine["value"] = np.r_[len(partners), partners].astype(np.int64)
        mine["quantity"] = np.array(["rr_count"] + ["rr_edge"] * len(partners), dtype=object)
        cols = {c: np.r_[base_cols[c][keep], mine[c]] for c in base_cols}
        assert abs(est(cols)[0] - base) <= bound


def test_lower_degree_liar_moves_the_private_bound_at_most_to_its_range():
    g, run = _round2(DLAP, 0.6, seed=3, private=True)
    cols = _with_value(run.rounds[0], 30, "lower_degree", 10**12)
    for bounds, top in ((None, 30), (po.PublicBounds(degree_bound=12), 12)):
        acc = dt.Round1Accumulator(DLAP, outliers="clip", bounds=bounds)
        acc.add(dt.chunk_from_columns(cols))
        s = acc.summary()
        t = po.noise_quantile(s.lower_degree_epsilon)
        assert s.screening["lower_degree"].n_outside == 1
        assert s.private_bound() == top + t          # the liar's clipped value is the maximum
    acc = dt.Round1Accumulator(DLAP, outliers="reject")
    acc.add(dt.chunk_from_columns(cols))
    assert acc.summary().private_bound() == run.broadcast.bound   # its row dropped: the honest maximum
    acc = dt.Round1Accumulator(DLAP)                           # unscreened: the liar sets D
    acc.add(dt.chunk_from_columns(cols))
    assert acc.summary().private_bound() == 10**12


# ------------------------------------------------------------------------------ curate command


def _poisoned_two_rounds(tmp_path, capsys, *, private=False):
    import json

    common = ["--protocol", DLAP, "--graph", GRAPH, "--simulate", "--seed", 7]
    r1, b, r2 = tmp_path / "r1.csv", tmp_path / "b.txt", tmp_path / "r2.parquet"
    extra = ["--lower-degree-epsilon", 0.3] if private else []
    _run(capsys, "node", *common, "--epsilon", 0.5, *extra, "--out", r1)
    if private:
        import pyarrow.csv as pcsv

        t = pcsv.read_csv(r1).to_pandas()
        t.loc[(t["quantity"] == "lower_degree") & (t["node"] == 9), "value"] = 10**9
        t.to_csv(r1, index=False)
    _run(capsys, "curate", r1, "--broadcast-out", b, *([] if private else ["--d-max", 8]))
    _run(capsys, "node", *common, "--epsilon", 0.5, "--round", 2, "--broadcast", b, "--out", r2)
    import pyarrow.parquet as pq

    t = pq.read_table(r2).to_pandas()
    honest = json.loads(_run(capsys, "curate", r2, "--broadcast", b, "--json"))
    t.loc[(t["quantity"] == "local_count") & (t["node"] == 3), "value"] = -(10**13)
    t.to_csv(tmp_path / "bad.csv", index=False)
    return r1, b, tmp_path / "bad.csv", honest


def test_curate_prints_the_screening_and_the_one_node_bound(tmp_path, capsys):
    import json

    r1, b, bad, honest = _poisoned_two_rounds(tmp_path, capsys)
    assert honest["screening"]["local_count"]["n_outside"] == 0
    out = _run(capsys, "curate", bad, "--broadcast", b)
    lo, hi = honest["screening"]["local_count"]["lo"], honest["screening"]["local_count"]["hi"]
    assert f"local_count  1 outside [{lo:,}, {hi:,}] clipped" in out
    assert "one-node bound" in out
    got = json.loads(_run(capsys, "curate", bad, "--broadcast", b, "--json"))
    est, ref = got["estimates"][0], honest["estimates"][0]
    assert got["screening"]["local_count"]["n_outside"] == 1
    assert est["one_node_bound"] == ref["one_node_bound"]
    assert got["one_node_round1_bound"] == po.dlap_round1_influence_bound(40, 8, 0.5)
    assert abs(est["value"] - ref["value"]) <= ref["one_node_bound"]
    dask = json.loads(_run(capsys, "curate", bad, "--broadcast", b, "--json", "--scheduler", "sync"))
    assert dask["estimates"][0]["value"] == est["value"] and dask["screening"] == got["screening"]
    rej = json.loads(_run(capsys, "curate", bad, "--broadcast", b, "--json", "--outliers", "reject"))
    assert rej["screening"]["local_count"]["mode"] == "reject"
    assert abs(rej["estimates"][0]["value"] - ref["value"]) <= ref["one_node_bound"]
    err = _err(capsys, 1, "curate", bad, "--broadcast", b, "--outliers", "raise")
    assert "1 local_count report(s) outside the admissible range" in err


def test_curate_screens_the_private_bound(tmp_path, capsys):
    r1, b, bad, honest = _poisoned_two_rounds(tmp_path, capsys, private=True)
    out = _run(capsys, "curate", r1, "--broadcast-out", tmp_path / "b2.txt")
    t = po.noise_quantile(0.3)
    assert f"private bound D = {9 + t}" in out and "1 outside [" in out and "clipped" in out
    assert f"one node raises D to at most {39 + t}" in out
    out = _run(capsys, "curate", r1, "--broadcast-out", tmp_path / "b3.txt", "--degree-bound", 6)
    assert f"private bound D = {6 + t}" in out and f"at most {6 + t}" in out
    import json

    got = json.loads(_run(capsys, "curate", r1, "--broadcast-out", tmp_path / "b4.txt", "--json",
                          "--scheduler", "sync", "--chunk-rows", 50))
    assert got["bound"] == 9 + t and got["screening"]["lower_degree"]["n_outside"] == 1
    assert got["one_node_bound"] == {"D": 39 + t}
    err = _err(capsys, 1, "curate", r1, "--broadcast-out", tmp_path / "b5.txt", "--outliers", "raise")
    assert "1 lower_degree report(s) outside the admissible range" in err


def test_one_liars_round1_bits_and_round2_row_move_the_dlap_estimate_by_at_most_the_sum():
    g = _graph()
    n, bound, seed, eps = g.n_nodes, 8, 11, (0.6, 0.6)
    nodes = list(range(n))
    lists = [g.indices[g.indptr[v]:g.indptr[v + 1]] for v in nodes]
    honest = dt.simulate_deployment(g, DLAP, eps, seed=seed, bound=bound)
    acc = _estimate(honest.broadcast, honest.rounds[1])
    lo, hi = acc.ranges()["local_count"]
    total = acc.influence_bound() + po.dlap_round1_influence_bound(n, bound, eps[0])
    liar = 25
    r1 = honest.rounds[0]
    others = r1["node"] != liar
    shifts = []
    for partners in (np.arange(liar), np.zeros(0, dtype=np.int64), np.arange(0, liar, 3)):
        mine = dt.round1_columns(dt.DLAP_PROTOCOL, [liar], [partners], 200.0, seed=0)  # eps 200: bits = truth
        mine["epsilon"][:] = eps[0]
        cols1 = {c: np.r_[r1[c][others], mine[c]] for c in r1}
        a1 = dt.Round1Accumulator(DLAP)
        a1.add(dt.chunk_from_columns(cols1))
        s = a1.summary()
        b = dt.TriangleBroadcast.build(DLAP, s.n_nodes, s.epsilon, bound, s.index)
        cols2 = dt.round2_columns(nodes, lists, b, eps[1], seed=seed)
        mask = (cols2["quantity"] == "local_count") & (cols2["node"] != liar)
        ref = honest.rounds[1]
        shifts.append(int(np.abs(cols2["value"][mask] - ref["value"][mask]).sum()))
        for own in (lo, hi):
            est = _estimate(b, _with_value(cols2, liar, "local_count", own)).estimate().value
            assert abs(est - honest.estimate.value) <= total * (1 + 1e-12)
    # the other nodes' counts shift by integers summing to at most (D - 1)(n - 1 - v)
    assert 0 < max(shifts) <= (bound - 1) * (n - 1 - liar)


@pytest.mark.parametrize("projection", [False, True])
def test_one_liars_round1_bits_move_avg_clustering_by_at_most_the_bound(projection):
    g = _graph()
    n, bound, seed, eps = g.n_nodes, (10 if not projection else 5), 13, (0.8, 1.0, 1.0)
    nodes = list(range(n))
    lists = [g.indices[g.indptr[v]:g.indptr[v + 1]] for v in nodes]
    honest = dt.simulate_deployment(g, "avg-clustering", eps, seed=seed, bound=bound, projection=projection)
    ref = _estimate(honest.broadcast, honest.rounds[1])
    r1 = honest.rounds[0]
    liar = 30
    others = r1["node"] != liar
    moved = []
    for partners in (np.arange(liar), np.zeros(0, dtype=np.int64), np.arange(1, liar, 2)):
        mine = dt.round1_columns("avg-clustering", [liar], [partners], 200.0, seed=0)
        mine["epsilon"][:] = eps[0]
        cols1 = {c: np.r_[r1[c][others], mine[c]] for c in r1}
        a1 = dt.Round1Accumulator("avg-clustering")
        a1.add(dt.chunk_from_columns(cols1))
        s = a1.summary()
        b = dt.TriangleBroadcast.build("avg-clustering", s.n_nodes, s.epsilon, bound, s.index,
                                       projection=projection)
        cols2 = dt.round2_columns(nodes, lists, b, eps[1:], seed=seed)
        acc = _estimate(b, cols2)
        assert acc.round1_influence_bound() == ref.round1_influence_bound()   # same degree rows
        moved.append(abs(acc.estimate().value - ref.estimate().value))
        assert moved[-1] <= ref.round1_influence_bound() * (1 + 1e-12)
    assert max(moved) > 0


def test_degree_readers_name_the_triangle_readers(files):
    from ldpgraph.protocols.ingest import reports_from_records

    tri, _ = files
    with pytest.raises(ValueError, match=r"rows of 'rr-triangles' are curated by ldpgraph.trianglefiles"):
        read_report_set(tri, protocol="rr-triangles")
    row = {"node": 0, "quantity": "rr_count", "value": 0, "epsilon": 1.0, "sensitivity": 1.0,
           "protocol": "rr-triangles", "protocol_version": 1, "round": 1}
    with pytest.raises(ValueError, match=r"rows of protocol 'rr-triangles'.*Round1Accumulator"):
        reports_from_records([row])
