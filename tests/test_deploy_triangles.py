"""Deployed triangle protocols: node command -> report files -> curate, exactly; law; hostile files."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.datasets import resolve_graph
from ldpgraph.graph import from_edge_array, triangle_count
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols import deploy_triangles as dt
from ldpgraph.protocols.randomized_response import flip_probability, keep_probability, pair_index
from ldpgraph.protocols.triangles import (
    lower_common_neighbour_square_sum,
    lower_wedges,
    rounding_variance,
    rr_triangle_estimate,
    rr_triangle_variance,
    two_round_moments,
    two_round_variance,
)
from ldpgraph.trianglefiles import read_triangle_broadcast

GRAPH = "ws:n=60,k=6,p=0.2"
DLAP = "two-round-triangles-dlap"


def _run(capsys, *args):
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _curate_json(capsys, *args):
    return json.loads(_run(capsys, "curate", *args, "--json"))


def _fail(capsys, *args) -> str:
    capsys.readouterr()
    assert main([str(a) for a in args]) == 1
    return capsys.readouterr().err


def _two_rounds(tmp_path, capsys, fmt, *, seed=5, bound=8, eps=0.8, name=""):
    r1, r2, b = tmp_path / f"r1{name}.{fmt}", tmp_path / f"r2{name}.{fmt}", tmp_path / f"b{name}.txt"
    common = ["--protocol", DLAP, "--graph", GRAPH, "--simulate", "--seed", seed]
    _run(capsys, "node", *common, "--epsilon", eps / 2, "--out", r1)
    _run(capsys, "curate", r1, "--round", 1, "--broadcast-out", b, "--d-max", bound, "--chunk-rows", 13)
    out = _run(capsys, "node", *common, "--epsilon", eps / 2, "--round", 2, "--broadcast", b, "--out", r2)
    return r1, r2, b, out


# ------------------------------------------------------------------------------ exact round trip


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_two_round_files_equal_the_in_memory_deployment(tmp_path, capsys, fmt):
    g = resolve_graph(GRAPH, rng=0)
    bound = 4  # below the largest lower degree (6 on this graph): projection is exercised
    r1, r2, b, out = _two_rounds(tmp_path, capsys, fmt, bound=bound)
    want = dt.simulate_deployment(g, DLAP, 0.8, seed=5, bound=bound)
    bc = read_triangle_broadcast(b)
    assert f"run id {bc.run_id}" in out
    assert np.array_equal(bc.index, want.broadcast.index) and bc.run_id == want.broadcast.run_id
    got = _curate_json(capsys, r2, "--round", 2, "--broadcast", b, "--chunk-rows", 7)
    e = got["estimates"][0]
    assert (e["value"], e["std_error"]) == (want.estimate.value, want.estimate.std_error)
    assert got["n_nodes"] == 60 and got["run_id"] == bc.run_id
    # the same in one chunk: no dependence on chunking
    assert _curate_json(capsys, r2, "--broadcast", b)["estimates"][0]["value"] == e["value"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_rr_triangle_files_equal_the_in_memory_deployment(tmp_path, capsys, fmt):
    g = resolve_graph(GRAPH, rng=0)
    r1 = tmp_path / f"rr.{fmt}"
    _run(
        capsys,
        "node",
        "--protocol",
        "rr-triangles",
        "--graph",
        GRAPH,
        "--epsilon",
        1.5,
        "--simulate",
        "--seed",
        2,
        "--out",
        r1,
    )
    got = _curate_json(capsys, r1, "--chunk-rows", 11, "--expected-nodes", 60)
    want = dt.simulate_deployment(g, "rr-triangles", 1.5, seed=2).estimate
    assert got["estimates"][0]["value"] == want.value and got["protocol"] == "rr-triangles"
    # the rows are the nodes' RR bits: the curator's estimate is Imola et al.'s on that noisy graph
    cols = dt.round1_columns("rr-triangles", *_lists(g), 1.5, seed=2)
    edge = cols["quantity"] == dt.RR_EDGE
    noisy = from_edge_array(np.column_stack([cols["node"][edge], cols["value"][edge]]), n_nodes=60)
    from ldpgraph.graph import triple_class_counts

    assert want.value == rr_triangle_estimate(triple_class_counts(noisy), 1.5)


def _lists(g):
    n = g.n_nodes
    return list(range(n)), [g.indices[g.indptr[v] : g.indptr[v + 1]] for v in range(n)]


def test_single_nodes_write_the_rows_of_the_whole_graph_run(tmp_path, capsys):
    """Node v's stream is keyed on (seed, round, v): a node alone writes its rows of the full run."""
    g = resolve_graph(GRAPH, rng=0)
    nodes, lists = _lists(g)
    full = dt.round1_columns(DLAP, nodes, lists, 0.4, seed=9)
    for v in (0, 17, 59):
        path = tmp_path / f"n{v}.csv"
        _run(
            capsys,
            "node",
            "--protocol",
            DLAP,
            "--node-id",
            v,
            "--neighbors",
            ",".join(map(str, lists[v])),
            "--epsilon",
            0.4,
            "--simulate",
            "--seed",
            9,
            "--out",
            path,
        )
        mine = full["node"] == v
        from ldpgraph.reportfiles import iter_report_chunks

        chunk = next(iter_report_chunks(path))
        assert chunk.value.tolist() == full["value"][mine].tolist()
    # secure by default: unseedable, and still a valid report
    path = tmp_path / "secure.jsonl"
    assert "secure exact sampler" in _run(
        capsys,
        "node",
        "--protocol",
        "rr-triangles",
        "--node-id",
        3,
        "--neighbors",
        "0,2,9",
        "--epsilon",
        1,
        "--out",
        path,
    )
    assert "rr_count" in path.read_text()


def test_secure_round_two_release_is_an_integer_and_refuses_a_seed():
    b = dt.TriangleBroadcast.build(DLAP, 5, 1.0, 2, pair_index(np.array([2, 3]), np.array([1, 0])))
    r = dt.dlap_local_count(4, [0, 1, 2, 3], b, 1.0)  # projected to 2 of its 4 lower neighbours
    assert isinstance(r, int)
    with pytest.raises(ValueError, match="cannot be seeded"):
        dt.dlap_local_count(4, [0, 1], b, 1.0, rng=0, secure=True)


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
    """All 2^10 RR outcomes on 5 nodes: the curator's rr estimate from rows is unbiased for T,
    so is its variance estimate for rr_triangle_variance, and the two-round variance estimate's
    C-hat for sum (c+_jk)^2."""
    g = from_edge_array(edges, n_nodes=5)
    eps = 0.7
    p, q = keep_probability(eps), flip_probability(eps)
    true = {(max(a, b), min(a, b)) for a, b in edges}
    mean_t = mean_c = mean_v = total = 0.0
    for pairs, bits in _all_outcomes(5):
        prob = math.prod(p if (b == ((u, v) in true)) else q for (u, v), b in zip(pairs, bits, strict=True))
        lists = [[v for (u, v), b in zip(pairs, bits, strict=True) if u == node and b] for node in range(5)]
        cols = dt._concat(
            [
                dt._columns(
                    [node] * (len(ls) + 1),
                    1,
                    [dt.RR_COUNT] + [dt.RR_EDGE] * len(ls),
                    [len(ls), *ls],
                    eps,
                    [1.0] * (len(ls) + 1),
                    "rr-triangles",
                )
                for node, ls in enumerate(lists)
            ]
        )
        acc = dt.Round1Accumulator("rr-triangles")
        acc.add(dt.chunk_from_columns(cols))
        s = acc.summary()
        est = dt.rr_triangles_estimate(s)
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
    run = dt.simulate_deployment(g, DLAP, (0.3, 0.5), seed=1, bound=6)  # 6 = the max lower degree
    c = lower_common_neighbour_square_sum(g)
    monkeypatch.setattr(dt, "lower_wedge_square_estimate", lambda n, idx, eps: float(c))
    est = dt.dlap_triangles_estimate(run.rounds[1]["value"][::2], run.broadcast, 0.5)
    noise = DiscreteLaplace(epsilon=0.5, sensitivity=5).variance
    p, q = keep_probability(0.3), flip_probability(0.3)
    want = (
        two_round_variance(g, 0.3, noise, rounding=True) + (60 / 4 - rounding_variance(g, q)) / (p - q) ** 2
    )
    assert est.variance_estimate == pytest.approx(want, rel=1e-12)
    assert est.value == run.estimate.value


def test_deployed_two_round_has_the_protocol_law():
    """Monte-Carlo over seeds: mean and variance of the deployed estimate agree with the exact
    moments of the benchmark protocol (two_round_moments), projection active (bound 3 < 6)."""
    g = resolve_graph("ws:n=30,k=6,p=0.2", rng=0)
    assert max(lower_wedges(g).lower_degrees) == 6
    eps, trials, bound = 2.0, 250, 3
    est = np.array(
        [dt.simulate_deployment(g, DLAP, eps, seed=s, bound=bound).estimate.value for s in range(trials)]
    )
    mean, var = two_round_moments(g, eps, bound=bound)
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
    _run(
        capsys,
        "node",
        "--protocol",
        DLAP,
        "--graph",
        GRAPH,
        "--epsilon",
        0.5,
        "--simulate",
        "--seed",
        0,
        "--out",
        path,
    )
    return path


def test_round_one_hostile_rows_name_file_and_row(tmp_path, capsys, round1_csv):
    header, rows = _csv_rows(round1_csv)
    edge_rows = [i for i, r in enumerate(rows) if ",rr_edge," in r]
    i = edge_rows[5]
    node = rows[i].split(",")[0]

    def curate(rows_, *extra):
        bad = tmp_path / "bad.csv"
        _write(bad, header, rows_)
        return _fail(
            capsys, "curate", bad, "--round", 1, "--broadcast-out", tmp_path / "b.txt", "--d-max", 5, *extra
        )

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
    header, rows = _csv_rows(r2)
    # a broadcast from another run (other seed): every round-2 row carries the run id
    _, _, b_other, _ = _two_rounds(tmp_path, capsys, "csv", seed=6, name="x")
    err = _fail(capsys, "curate", r2, "--round", 2, "--broadcast", b_other)
    assert "from another run" in err and "r2.csv row 1 (line 3)" in err
    # a round-2 row of a node without round-1 rows
    cells = rows[0].split(",")
    cells[0] = "60"
    bad = tmp_path / "bad2.csv"
    _write(bad, header, rows + [",".join(cells)])
    err = _fail(capsys, "curate", bad, "--round", 2, "--broadcast", b)
    assert "node 60 without its round-1 rows" in err and "bad2.csv row 120" in err
    # a duplicated round-2 release; a missing one
    _write(bad, header, rows + [rows[10]])
    assert "duplicate local_count rows for node 5" in _fail(capsys, "curate", bad, "--broadcast", b)
    _write(bad, header, rows[2:])
    assert "sent no local_count row in round 2: 1: 0 (missing" in _fail(
        capsys, "curate", bad, "--broadcast", b
    )
    # round-1 rows given to the round-2 curator
    err = _fail(capsys, "curate", r1, "--round", 2, "--broadcast", b)
    assert "curating round 2" in err and "r1.csv row 0" in err
    # an edited broadcast: the run id no longer matches its edges (the node refuses to use it)
    lines = b.read_text().splitlines()
    forged = tmp_path / "forged.txt"
    head = json.loads(lines[1][2:])
    head["n_edges"] -= 1
    forged.write_text("\n".join([lines[0], "# " + json.dumps(head)] + lines[3:]) + "\n")
    err = _fail(
        capsys,
        "node",
        "--protocol",
        DLAP,
        "--graph",
        GRAPH,
        "--epsilon",
        0.4,
        "--round",
        2,
        "--broadcast",
        forged,
        "--simulate",
        "--seed",
        1,
        "--out",
        tmp_path / "x.csv",
    )
    assert "do not match the run id" in err
    # duplicate / unordered edge lines, an edge not below, another format
    forged.write_text("\n".join(lines[:3] + [lines[2]] + lines[3:]) + "\n")
    assert "forged.txt line 4" in _fail(capsys, "curate", r2, "--broadcast", forged)
    forged.write_text("\n".join(lines[:2] + ["3 7"] + lines[2:]) + "\n")
    assert "forged.txt line 3: edge '3 7'" in _fail(capsys, "curate", r2, "--broadcast", forged)
    forged.write_text(json.dumps({"format": "ldpgraph-broadcast"}))
    assert "forged.txt line 1: not an ldpgraph-broadcast-edges" in _fail(
        capsys, "curate", r2, "--round", 2, "--broadcast", forged, "--protocol", DLAP
    )


def test_usage_errors_of_the_triangle_commands(tmp_path, capsys):
    r1, r2, b, _ = _two_rounds(tmp_path, capsys, "parquet")
    capsys.readouterr()
    assert main(["curate", str(r1), "--round", "1"]) == 2
    assert "--broadcast-out FILE and --d-max D" in capsys.readouterr().err
    assert main(["curate", str(r2), "--broadcast", str(b), "--stat", "kstars"]) == 2
    assert "estimate --stat triangles" in capsys.readouterr().err
    assert (
        main(
            [
                "node",
                "--protocol",
                "rr-triangles",
                "--graph",
                GRAPH,
                "--epsilon",
                "1",
                "--round",
                "2",
                "--broadcast",
                str(b),
                "--out",
                str(tmp_path / "x.csv"),
            ]
        )
        == 2
    )
    assert "rr-triangles has no round 2" in capsys.readouterr().err


# ------------------------------------------------------------------------------ avg-clustering

CLUST = "avg-clustering"


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_avg_clustering_files_equal_the_in_memory_deployment(tmp_path, capsys, fmt):
    g = resolve_graph(GRAPH, rng=0)
    r1, r2, b = tmp_path / f"c1.{fmt}", tmp_path / f"c2.{fmt}", tmp_path / "cb.txt"
    common = ["--protocol", CLUST, "--graph", GRAPH, "--simulate", "--seed", 4]
    _run(capsys, "node", *common, "--epsilon", 1.0, "--out", r1)
    _run(capsys, "curate", r1, "--round", 1, "--broadcast-out", b, "--d-max", 8, "--projection")
    _run(
        capsys,
        "node",
        *common,
        "--round",
        2,
        "--epsilon",
        3.0,
        "--shares",
        "degree=0.4,local_count=0.6",
        "--broadcast",
        b,
        "--out",
        r2,
    )
    got = _curate_json(capsys, r2, "--broadcast", b, "--chunk-rows", 17)
    want = dt.simulate_deployment(g, CLUST, (1.0, 3.0 * 0.4, 3.0 * 0.6), seed=4, bound=8, projection=True)
    assert read_triangle_broadcast(b).projection and max(g.degrees) > 8  # projection exercised
    e = got["estimates"][0]
    assert (e["statistic"], e["value"], e["variance_estimate"]) == (
        "avg_clustering",
        want.estimate.value,
        want.estimate.variance_estimate,
    )
    assert got["epsilon"] == {"rr": 1.0, "degree": 3.0 * 0.4, "local_count": 3.0 * 0.6}


def test_deployed_avg_clustering_has_the_protocol_law():
    """Monte-Carlo over seeds: unbiased for the average clustering, with the exact variance of
    average_clustering_variance (unprojected: D = the maximum degree)."""
    from ldpgraph.protocols.clustering import average_clustering_truth, average_clustering_variance

    g = resolve_graph("ws:n=30,k=6,p=0.2", rng=0)
    eps, trials = (2.0, 3.0, 3.0), 200
    est = np.array([dt.simulate_deployment(g, CLUST, eps, seed=s).estimate.value for s in range(trials)])
    var = average_clustering_variance(
        g, epsilon_rr=2.0, epsilon_degree=3.0, epsilon_triangles=3.0, d_max=int(max(g.degrees))
    )
    assert abs(est.mean() - average_clustering_truth(g)) < 4 * math.sqrt(var / trials)
    assert abs(est.var(ddof=1) - var) < 4 * var * math.sqrt(2 / (trials - 1))


def test_avg_clustering_nodes_above_the_bound_refuse_without_projection(tmp_path, capsys):
    r1, b = tmp_path / "c1.csv", tmp_path / "cb.txt"
    sim = ["--graph", GRAPH, "--epsilon", 1, "--simulate", "--seed", 0]
    _run(capsys, "node", "--protocol", CLUST, *sim, "--out", r1)
    _run(capsys, "curate", r1, "--broadcast-out", b, "--d-max", 5)
    round2 = ["--round", 2, "--broadcast", b, *sim, "--out", tmp_path / "c2.csv"]
    err = _fail(capsys, "node", "--protocol", CLUST, *round2)
    assert "d_max = 5" in err and "projection" in err
    # a dlap node refuses the clustering broadcast
    assert "a broadcast of 'avg-clustering'" in _fail(capsys, "node", "--protocol", DLAP, *round2)


def test_secure_round_two_paths_compute_the_protocol_release(monkeypatch):
    """The secure node paths (OS randomness, exact DLap) compute the same release as the
    protocol's node functions: with the noise at 0 and the rounding uniform pinned, r_v is
    floor(w_v + u) for w_v counted by brute force (dlap), and 2 w_v - C(d, 2) (clustering)."""
    from ldpgraph.mechanisms import discrete_laplace

    monkeypatch.setattr(discrete_laplace.DiscreteLaplace, "sample", lambda self, size=None, **kw: np.int64(0))
    monkeypatch.setattr(dt, "_secure_uniform", lambda size: np.full(size, 0.3))
    rng = np.random.default_rng(0)
    noisy = sorted(
        int(pair_index(np.array([u]), np.array([v]))[0])
        for u in range(12)
        for v in range(u)
        if rng.random() < 0.5
    )
    nb = [0, 2, 3, 5, 7, 8, 13]
    b = dt.TriangleBroadcast.build(DLAP, 12, 0.7, 6, noisy)
    lower = [j for j in nb if j < 11]
    w = sum(b.noisy_bit([j], [k])[0] for j, k in itertools.combinations(lower, 2)) - b.q * math.comb(6, 2)
    assert dt.dlap_local_count(11, nb, b, 1.0) == math.floor(w + 0.3)
    c = dt.TriangleBroadcast.build(CLUST, 12, 0.7, 8, noisy)
    w2 = sum(c.noisy_bit([j], [k])[0] for j, k in itertools.combinations(sorted(nb), 2))
    assert dt.clustering_release(11, nb, c, 1.0, 1.0) == (7, int(2 * w2) - math.comb(7, 2))
    with pytest.raises(ValueError, match="allows no projection"):
        dt.clustering_release(11, nb, dt.TriangleBroadcast.build(CLUST, 12, 0.7, 4, noisy), 1.0, 1.0)


def test_dask_local_cluster_equals_the_streaming_curator(tmp_path, capsys):
    """One task per Parquet row group (and per text file), merged pairwise: the same noisy graph,
    the same estimates, bit for bit; a hostile row is still named by file and row."""
    distributed = pytest.importorskip("distributed")
    from ldpgraph.reportfiles import write_reports
    from ldpgraph.trianglefiles import read_round1_files, read_round2_files

    g = resolve_graph(GRAPH, rng=0)
    nodes, lists = _lists(g)
    cols1 = dt.round1_columns(DLAP, nodes, lists, 0.5, seed=3)
    half = len(cols1["node"]) // 2
    r1a = write_reports(tmp_path / "a.parquet", {c: v[:half] for c, v in cols1.items()}, row_group_size=97)
    r1b = write_reports(tmp_path / "b.csv", {c: v[half:] for c, v in cols1.items()})
    stream = read_round1_files([r1a, r1b], DLAP)
    b = dt.TriangleBroadcast.build(DLAP, stream.n_nodes, stream.epsilon, 5, stream.index)
    r2 = write_reports(
        tmp_path / "r2.parquet", dt.round2_columns(nodes, lists, b, 0.5, seed=3), row_group_size=16
    )
    want = dt.simulate_deployment(g, DLAP, 1.0, seed=3, bound=5).estimate
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
        s = read_round1_files([r1a, r1b], DLAP, scheduler=client)
        est, _ = read_round2_files(r2, b, scheduler=client)
        header, rows = _csv_rows(r1b)
        bad = tmp_path / "bad.csv"
        _write(bad, header, rows + [rows[3]])
        with pytest.raises(ValueError, match=r"duplicate .*bad.csv row 3 .*bad.csv row"):
            read_round1_files([r1a, bad], DLAP, scheduler=client)
    assert np.array_equal(s.index, stream.index) and s.n_rows == stream.n_rows
    assert (est.value, est.std_error) == (want.value, want.std_error)
    # the command line takes a Dask scheduler too
    from ldpgraph.trianglefiles import write_triangle_broadcast

    write_triangle_broadcast(tmp_path / "b.txt", b)
    got = _curate_json(capsys, r2, "--broadcast", tmp_path / "b.txt", "--scheduler", "sync")
    assert got["estimates"][0]["value"] == want.value


def test_private_bound_round_trip_law_and_hostile_rows(tmp_path, capsys):
    """two-round-triangles-dlap-private deployed: lower_degree rows in round 1, D = their max.
    Files equal the in-memory run; Monte-Carlo agrees with the exact mixture moments over D of
    two_round_moments(private_bound=True); a node without its lower_degree row is named."""
    from ldpgraph.protocols.triangles import two_round_budget

    eps0, eps1, eps2 = two_round_budget(1.0, private_bound=True)
    r1, r2, b = tmp_path / "p1.csv", tmp_path / "p2.csv", tmp_path / "pb.txt"
    sim = ["--protocol", DLAP, "--graph", GRAPH, "--simulate", "--seed", 8]
    _run(capsys, "node", *sim, "--epsilon", repr(eps1), "--lower-degree-epsilon", repr(eps0), "--out", r1)
    assert "private bound D" in _run(capsys, "curate", r1, "--broadcast-out", b)
    _run(capsys, "node", *sim, "--round", 2, "--epsilon", repr(eps2), "--broadcast", b, "--out", r2)
    got = _curate_json(capsys, r2, "--broadcast", b)["estimates"][0]
    want = dt.simulate_deployment(resolve_graph(GRAPH, rng=0), DLAP, 1.0, seed=8, private_bound=True)
    assert (got["value"], got["std_error"]) == (want.estimate.value, want.estimate.std_error)
    assert read_triangle_broadcast(b).bound == want.broadcast.bound
    # hostile: a node's lower_degree row missing; a public bound given beside the private one
    header, rows = _csv_rows(r1)
    bad = tmp_path / "bad.csv"
    _write(bad, header, [r for r in rows if not (r.startswith("9,") and ",lower_degree," in r)])
    err = _fail(capsys, "curate", bad, "--broadcast-out", b)
    assert "lower_degree rows, but not all: 1: 9 are missing" in err
    capsys.readouterr()
    assert main(["curate", str(r1), "--broadcast-out", str(b), "--d-max", "5"]) == 2
    # the law (projection active whenever D falls below the largest lower degree, 6)
    g = resolve_graph("ws:n=30,k=6,p=0.2", rng=0)
    trials = 150
    est = np.array(
        [
            dt.simulate_deployment(g, DLAP, 3.0, seed=s, private_bound=True).estimate.value
            for s in range(trials)
        ]
    )
    mean, var = two_round_moments(g, 3.0, private_bound=True)
    assert abs(est.mean() - mean) < 4 * math.sqrt(var / trials)
    assert abs(est.var(ddof=1) - var) < 4 * var * math.sqrt(2 / (trials - 1))
