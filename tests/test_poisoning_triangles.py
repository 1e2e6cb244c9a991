"""Poisoning screening of the triangle protocols' rows, and the protocol registry of report files."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.core import Seeded
from ldpgraph.core.rows import quantity_rows
from ldpgraph.graph import from_edge_array
from ldpgraph.protocols import deploy_triangles as dt
from ldpgraph.protocols import registry
from ldpgraph.protocols import screening as sc
from ldpgraph.protocols.randomized_response import flip_probability, keep_probability
from ldpgraph.protocols.reports import PROTOCOLS, report_columns
from ldpgraph.protocols.triangles.kernels import dlap_round1_influence_bound
from ldpgraph.run import node_lists, run_in_memory
from ldpgraph.run.files import read_broadcast
from ldpgraph.run.reportfiles import read_report_set, write_reports

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
    """The report format's version table is the registry's: every deployable protocol at the version
    of its rows, with no hand-kept copy (a new protocol is known without an edit)."""
    expected = {n: registry.get(n).version for n in registry.names() if registry.get(n).deployable}
    assert dict(PROTOCOLS) == expected
    assert {"degree": 1, "local-dlap-kstars": 1, "local-dlap-kstars-private": 1, "arr-triangles": 1,
            "edge-orient-triangles": 2, **dt.TRIANGLE_PROTOCOLS}.items() <= PROTOCOLS.items()
    assert set(dt.TRIANGLE_PROTOCOLS) == {dt.RR_PROTOCOL, DLAP, dt.CLUSTERING_PROTOCOL, dt.RR_FOUR_CYCLES,
                                          dt.FOUR_CYCLE_PROTOCOL, dt.ADAPTIVE_PROTOCOL}
    assert "two-round-triangles-laplace" not in PROTOCOLS  # not deployable: no rows


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` (``module.attribute``, relative to ldpgraph or ldpgraph.protocols) exists."""
    import importlib

    mod, _, attr = dotted.rpartition(".")
    for prefix in ("ldpgraph.protocols.", "ldpgraph.", ""):
        try:
            return hasattr(importlib.import_module(prefix + mod), attr)
        except ImportError:
            continue
    return False


def test_degree_only_entry_points_refuse_triangle_protocols(tmp_path):
    from ldpgraph.protocols import DegreeRandomizer

    rep = DegreeRandomizer(epsilon=1.0).randomize([1, 2], rng=0)
    with pytest.raises(ValueError, match=r"protocol must be 'degree'.*got 'rr-triangles' \(its rows come from ") as e:
        report_columns(rep, protocol="rr-triangles")
    named = str(e.value).rsplit("come from ", 1)[1].rstrip(")").strip()
    assert _resolves(named), f"the hint names {named!r}, which does not exist"
    # the JSON broadcast (a degree bound) names its protocol: one of a triangle protocol is refused
    fake = {"format": "ldpgraph-broadcast", "format_version": 1, "protocol": DLAP, "protocol_version": 1,
            "round": 1, "values": {"d_max": 3}, "n_nodes": 4, "epsilon": 0.1}
    (tmp_path / "b.json").write_text(json.dumps(fake))
    proto = registry.get("local-dlap-kstars-private")
    with pytest.raises(ValueError, match=f"broadcast of '{DLAP}' version 1, not of local-dlap-kstars-private"):
        read_broadcast(proto, tmp_path / "b.json", proto.plan(1.0))


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
    assert "triangles" in _run(capsys, "curate", tri, "--protocol", "rr-triangles", "--epsilon", 1)


def test_rows_of_another_protocol_inside_a_file_are_named(files, tmp_path):
    tri, deg = files
    proto = registry.get("rr-triangles")
    plan = proto.plan(1.0)
    (first,) = proto.rounds()
    cols = first.release(plan, np.arange(3), [np.array([1]), np.array([0, 2]), np.array([1])], None, Seeded(0))
    cols["protocol"][-1] = "degree"
    bad = write_reports(tmp_path / "mixed.csv", cols)
    acc = first.accumulator(plan, None)
    from ldpgraph.run.reportfiles import iter_report_chunks

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
    lo, hi = sc.local_count_range(averaged=False, bound=bound, epsilon_rr=eps1, epsilon=200.0,
                                  sensitivity=max(bound - 1, 1))
    assert sc.noise_quantile(200.0, max(bound - 1, 1)) == 0
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
    lo, hi = sc.local_count_range(averaged=True, bound=bound, epsilon_rr=1.0, epsilon=1.0, sensitivity=sens)
    t = sc.noise_quantile(1.0, sens)
    seen = {2 * sum(bits) - math.comb(m, 2)
            for m in range(bound + 1) for bits in itertools.product((0, 1), repeat=math.comb(m, 2))}
    assert (min(seen) - t, max(seen) + t) == (lo, hi)
    # a truthful row leaves the range only through the noise tail, at most alpha
    assert sc.noise_tail(t, 1.0, sens) <= sc.DEFAULT_ALPHA < sc.noise_tail(t - 1, 1.0, sens)


def test_degree_and_lower_degree_ranges():
    t = sc.noise_quantile(0.5)
    assert sc.degree_row_range(bound=7, n_nodes=50, projection=False, epsilon=0.5) == (-t, 7 + t)
    assert sc.degree_row_range(bound=7, n_nodes=50, projection=True, epsilon=0.5) == (-t, 49 + t)
    tight = sc.PublicBounds(degree_bound=20)
    assert sc.degree_row_range(bound=7, n_nodes=50, projection=True, epsilon=0.5, bounds=tight) == (-t, 20 + t)
    lo, hi = sc.lower_degree_range(np.array([0, 3, 40]), epsilon=0.5, bounds=tight)
    assert lo == -t and hi.tolist() == [t, 3 + t, 20 + t]
    with pytest.raises(ValueError, match="outliers must be"):
        sc.screen_values(np.array([1]), 0, 1, "drop", "x")
    with pytest.raises(ValueError, match=r"1 x report\(s\) outside .*value 5 at position 1, range \[0, 2\]"):
        sc.screen_values(np.array([1, 5]), 0, 2, "raise", "x")
    v, keep, k = sc.screen_values(np.array([1, 5, -3]), 0, 2, "reject", "x")
    assert v.tolist() == [1, 5, -3] and keep.tolist() == [True, False, False] and k == 2


# ------------------------------------------------------------------------------ seeded runs


def _graph():
    from ldpgraph.datasets import resolve_graph

    return resolve_graph(GRAPH, rng=0)   # the CLI's --graph-seed default


#: avg-clustering's budget in equal thirds
THIRDS = {"rr": 1 / 3, "degree": 1 / 3, "local_count": 1 / 3}


def _round2(protocol, eps, *, seed, **options):
    """The in-memory run at total ``eps`` (seeded as ``ldpgraph node --simulate --seed``)."""
    g = _graph()
    return g, run_in_memory(protocol, g, eps, sampler=seed, **options)


def _rounds(run):
    return run.protocol.rounds()


@pytest.mark.parametrize("seed", range(6))
def test_truthful_reports_are_never_screened(seed):
    g, run = _round2(DLAP, 0.6, seed=seed, private_bound=True)
    first, second = _rounds(run)
    acc1 = first.accumulator(run.plan, None, outliers="raise")
    acc1.add(dt.chunk_from_columns(run.rows[0]))
    s = acc1.result()
    b = run.broadcasts[0]
    assert s.screening["lower_degree"].n_outside == 0 and s.private_bound() == b.bound
    acc2 = second.accumulator(run.plan, b, outliers="raise")
    acc2.add(dt.chunk_from_columns(run.rows[1]))
    assert acc2.result().estimate().value == run.estimate.value
    g, run = _round2("avg-clustering", 1.5, seed=seed, d_max=6, projection=True, shares=THIRDS)
    assert [run.plan.release(q).epsilon for q in ("rr_edge", "degree", "local_count")] == pytest.approx([0.5] * 3)
    first, second = _rounds(run)
    acc2 = second.accumulator(run.plan, run.broadcasts[0], outliers="raise")
    acc2.add(dt.chunk_from_columns(run.rows[1]))
    res = acc2.result()
    assert res.estimate().value == run.estimate.value
    assert all(sc.n_outside == 0 for sc in res.screened_values()[1].values())


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
    g, run = _round2(DLAP, 1.0, seed=1, d_max=8)   # 0.5 per round
    b, cols = run.broadcasts[0], run.rows[1]
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
    g, run = _round2("avg-clustering", 5.0, seed=2, d_max=10, projection=False,
                     shares={"rr": 0.2, "degree": 0.4, "local_count": 0.4})   # 1.0, 2.0, 2.0
    assert [run.plan.release(q).epsilon for q in ("rr_edge", "degree", "local_count")] == [1.0, 2.0, 2.0]
    b, cols = run.broadcasts[0], run.rows[1]
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
    run = run_in_memory("rr-triangles", g, eps, sampler=4)
    base_cols, plan = run.rows[0], run.plan
    (first,) = _rounds(run)

    def est(cols):
        acc = first.accumulator(plan, None)
        acc.add(dt.chunk_from_columns(cols))
        return run.protocol.estimate(acc.result(), plan, None, "triangles").value, acc.acc

    base, acc = est(base_cols)
    assert base == run.estimate.value
    bound = acc.influence_bound()
    assert bound == pytest.approx(math.comb(n - 1, 2) * keep_probability(eps) ** 2
                                  / (keep_probability(eps) - flip_probability(eps)) ** 3)
    v = n - 1
    keep = base_cols["node"] != v
    for partners in itertools.chain.from_iterable(itertools.combinations(range(v), k) for k in range(v + 1)):
        mine = _liar_rows(plan, v, partners)
        cols = {c: np.r_[base_cols[c][keep], mine[c]] for c in base_cols}
        assert abs(est(cols)[0] - base) <= bound


def _liar_rows(plan, v, partners):
    """Node v's round-1 rows claiming exactly the noisy bits ``partners`` (at the plan's epsilon)."""
    partners = np.asarray(partners, dtype=np.int64)
    k = partners.size
    return quantity_rows(plan, 1, np.full(k + 1, v), ["rr_count"] + ["rr_edge"] * k, np.r_[k, partners])


def test_lower_degree_liar_moves_the_private_bound_at_most_to_its_range():
    g, run = _round2(DLAP, 0.6, seed=3, private_bound=True)
    cols = _with_value(run.rows[0], 30, "lower_degree", 10**12)
    for bounds, top in ((None, 30), (sc.PublicBounds(degree_bound=12), 12)):
        acc = dt.Round1Accumulator(DLAP, outliers="clip", bounds=bounds)
        acc.add(dt.chunk_from_columns(cols))
        s = acc.summary()
        t = sc.noise_quantile(s.lower_degree_epsilon)
        assert s.screening["lower_degree"].n_outside == 1
        assert s.private_bound() == top + t          # the liar's clipped value is the maximum
    acc = dt.Round1Accumulator(DLAP, outliers="reject")
    acc.add(dt.chunk_from_columns(cols))
    assert acc.summary().private_bound() == run.broadcasts[0].bound   # its row dropped: the honest maximum
    acc = dt.Round1Accumulator(DLAP)                           # unscreened: the liar sets D
    acc.add(dt.chunk_from_columns(cols))
    assert acc.summary().private_bound() == 10**12


# ------------------------------------------------------------------------------ curate command


def _poisoned_two_rounds(tmp_path, capsys, *, private=False):
    import json

    # total 1.0: rr 0.5 and local_count 0.5 (public D = 8), or lower_degree 0.3, rr 0.35, local_count 0.35
    plan = (["--epsilon", 1.0, "--private-bound", "--shares", PRIVATE_SHARES] if private
            else ["--epsilon", 1.0, "--d-max", 8])
    common = ["--protocol", DLAP, "--graph", GRAPH, "--simulate", "--seed", 7, *plan]
    r1, b, r2 = tmp_path / "r1.csv", tmp_path / "b.txt", tmp_path / "r2.parquet"
    _run(capsys, "node", *common, "--out", r1)
    if private:
        import pyarrow.csv as pcsv

        t = pcsv.read_csv(r1).to_pandas()
        t.loc[(t["quantity"] == "lower_degree") & (t["node"] == 9), "value"] = 10**9
        t.to_csv(r1, index=False)
    _run(capsys, "curate", r1, "--broadcast-out", b, *plan)
    _run(capsys, "node", *common, "--round", 2, "--broadcast", b, "--out", r2)
    import pyarrow.parquet as pq

    t = pq.read_table(r2).to_pandas()
    honest = json.loads(_run(capsys, "curate", r2, "--broadcast", b, *plan, "--json"))
    t.loc[(t["quantity"] == "local_count") & (t["node"] == 3), "value"] = -(10**13)
    t.to_csv(tmp_path / "bad.csv", index=False)
    return r1, b, tmp_path / "bad.csv", honest, plan


PRIVATE_SHARES = "lower_degree=0.3,rr=0.35,local_count=0.35"


def test_curate_prints_the_screening_and_the_one_node_bound(tmp_path, capsys):
    import json

    r1, b, bad, honest, plan = _poisoned_two_rounds(tmp_path, capsys)
    assert honest["screening"]["local_count"]["n_outside"] == 0
    assert honest["budget"] == {"rr": 0.5, "local-count": 0.5}
    out = _run(capsys, "curate", bad, "--broadcast", b, *plan)
    lo, hi = honest["screening"]["local_count"]["lo"], honest["screening"]["local_count"]["hi"]
    assert f"local_count  1 outside [{lo:,}, {hi:,}] clipped" in out
    assert "one-node bound" in out
    got = json.loads(_run(capsys, "curate", bad, "--broadcast", b, *plan, "--json"))
    est, ref = got["estimates"][0], honest["estimates"][0]
    assert got["screening"]["local_count"]["n_outside"] == 1
    assert est["one_node_bound"] == ref["one_node_bound"]
    assert got["one_node_round1_bound"] == dlap_round1_influence_bound(40, 8, 0.5)
    assert abs(est["estimate"] - ref["estimate"]) <= ref["one_node_bound"]
    dask = json.loads(_run(capsys, "curate", bad, "--broadcast", b, *plan, "--json", "--scheduler", "sync"))
    assert dask["estimates"][0]["estimate"] == est["estimate"] and dask["screening"] == got["screening"]
    rej = json.loads(_run(capsys, "curate", bad, "--broadcast", b, *plan, "--json", "--outliers", "reject"))
    assert rej["screening"]["local_count"]["mode"] == "reject"
    assert abs(rej["estimates"][0]["estimate"] - ref["estimate"]) <= ref["one_node_bound"]
    err = _err(capsys, 1, "curate", bad, "--broadcast", b, *plan, "--outliers", "raise")
    assert "1 local_count report(s) outside the admissible range" in err


def test_curate_screens_the_private_bound(tmp_path, capsys):
    r1, b, bad, honest, plan = _poisoned_two_rounds(tmp_path, capsys, private=True)
    out = _run(capsys, "curate", r1, "--broadcast-out", tmp_path / "b2.txt", *plan)
    assert "lower_degree epsilon 0.3;" in out
    t = sc.noise_quantile(0.3)
    assert f"private bound D = {9 + t}" in out and "1 outside [" in out and "clipped" in out
    assert f"one node raises D to at most {39 + t}" in out
    out = _run(capsys, "curate", r1, "--broadcast-out", tmp_path / "b3.txt", *plan, "--degree-bound", 6)
    assert f"private bound D = {6 + t}" in out and f"at most {6 + t}" in out
    import json

    got = json.loads(_run(capsys, "curate", r1, "--broadcast-out", tmp_path / "b4.txt", *plan, "--json",
                          "--scheduler", "sync", "--chunk-rows", 50))
    assert got["bound"] == 9 + t and got["screening"]["lower_degree"]["n_outside"] == 1
    assert got["one_node_bound"] == {"D": 39 + t}
    err = _err(capsys, 1, "curate", r1, "--broadcast-out", tmp_path / "b5.txt", *plan, "--outliers", "raise")
    assert "1 lower_degree report(s) outside the admissible range" in err


def test_one_liars_round1_bits_and_round2_row_move_the_dlap_estimate_by_at_most_the_sum():
    g = _graph()
    n, bound, seed = g.n_nodes, 8, 11
    nodes, lists = node_lists(g)
    honest = run_in_memory(DLAP, g, 1.2, sampler=seed, d_max=bound)   # 0.6 per round
    plan = honest.plan
    eps1 = plan.release(dt.RR_EDGE).epsilon
    assert eps1 == 0.6
    first, second = _rounds(honest)
    acc = _estimate(honest.broadcasts[0], honest.rows[1])
    lo, hi = acc.ranges()["local_count"]
    total = acc.influence_bound() + dlap_round1_influence_bound(n, bound, eps1)
    liar = 25
    r1 = honest.rows[0]
    others = r1["node"] != liar
    shifts = []
    for partners in (np.arange(liar), np.zeros(0, dtype=np.int64), np.arange(0, liar, 3)):
        mine = _liar_rows(plan, liar, partners)
        cols1 = {c: np.r_[r1[c][others], mine[c]] for c in r1}
        a1 = first.accumulator(plan, None)
        a1.add(dt.chunk_from_columns(cols1))
        b = first.broadcast(a1.result(), plan)
        assert b.bound == bound
        cols2 = second.release(plan, nodes, lists, b, Seeded(seed))
        mask = (cols2["quantity"] == "local_count") & (cols2["node"] != liar)
        ref = honest.rows[1]
        shifts.append(int(np.abs(cols2["value"][mask] - ref["value"][mask]).sum()))
        for own in (lo, hi):
            est = _estimate(b, _with_value(cols2, liar, "local_count", own)).estimate().value
            assert abs(est - honest.estimate.value) <= total * (1 + 1e-12)
    # the other nodes' counts shift by integers summing to at most (D - 1)(n - 1 - v)
    assert 0 < max(shifts) <= (bound - 1) * (n - 1 - liar)


@pytest.mark.parametrize("projection", [False, True])
def test_one_liars_round1_bits_move_avg_clustering_by_at_most_the_bound(projection):
    g = _graph()
    bound, seed = (10 if not projection else 5), 13
    nodes, lists = node_lists(g)
    honest = run_in_memory("avg-clustering", g, 2.8, sampler=seed, d_max=bound, projection=projection,
                           shares={"rr": 2 / 7, "degree": 2.5 / 7, "local_count": 2.5 / 7})   # ~0.8, 1, 1
    plan = honest.plan
    assert [plan.release(q).epsilon for q in ("rr_edge", "degree", "local_count")] == pytest.approx([0.8, 1, 1])
    first, second = _rounds(honest)
    ref = _estimate(honest.broadcasts[0], honest.rows[1])
    r1 = honest.rows[0]
    liar = 30
    others = r1["node"] != liar
    moved = []
    for partners in (np.arange(liar), np.zeros(0, dtype=np.int64), np.arange(1, liar, 2)):
        mine = _liar_rows(plan, liar, partners)
        cols1 = {c: np.r_[r1[c][others], mine[c]] for c in r1}
        a1 = first.accumulator(plan, None)
        a1.add(dt.chunk_from_columns(cols1))
        b = first.broadcast(a1.result(), plan)
        assert (b.bound, b.projection) == (bound, projection)
        cols2 = second.release(plan, nodes, lists, b, Seeded(seed))
        acc = _estimate(b, cols2)
        assert acc.round1_influence_bound() == ref.round1_influence_bound()   # same degree rows
        moved.append(abs(acc.estimate().value - ref.estimate().value))
        assert moved[-1] <= ref.round1_influence_bound() * (1 + 1e-12)
    assert max(moved) > 0


def test_degree_readers_name_the_triangle_readers(files):
    from ldpgraph.protocols.ingest import reports_from_records

    tri, _ = files
    with pytest.raises(ValueError, match=r"rows of 'rr-triangles' are curated by their protocol's rounds \(ldpgraph.run.files.accumulate_files"):
        read_report_set(tri, protocol="rr-triangles")
    row = {"node": 0, "quantity": "rr_count", "value": 0, "epsilon": 1.0, "sensitivity": 1.0,
           "protocol": "rr-triangles", "protocol_version": 1, "round": 1}
    with pytest.raises(ValueError, match=r"rows of protocol 'rr-triangles'.*Round1Accumulator"):
        reports_from_records([row])
