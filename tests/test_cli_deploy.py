"""ldpgraph node -> report files (each format) -> ldpgraph curate equals the in-memory estimate."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.core import Seeded
from ldpgraph.datasets import resolve_graph
from ldpgraph.protocols import registry
from ldpgraph.protocols.deploy_triangles import DEGREE_BOUND, chunk_from_columns
from ldpgraph.protocols.kcore.hindex import HINDEX_SCHEDULE
from ldpgraph.protocols.screening import noise_quantile
from ldpgraph.run import run_in_memory
from ldpgraph.run.method import get_method
from ldpgraph.run.reportfiles import read_report_set
from ldpgraph.run.trianglefiles import read_triangle_broadcast

GRAPH = "ws:n=300,k=6,p=0.2"


def _curate_json(capsys, *args):
    capsys.readouterr()
    assert main(["curate", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_node_files_curate_round_trip_is_exact(tmp_path, capsys, fmt):
    out = tmp_path / f"r.{fmt}"
    assert main(["node", "--graph", GRAPH, "--epsilon", "1.5", "--kstar-counts", "2", "--d-max", "12",
                 "--simulate", "--seed", "7", "--out", str(out)]) == 0
    assert "simulation, seed 7" in capsys.readouterr().out
    got = _curate_json(capsys, out, "--stat", "kstars", "degree_variance", "kstars_from_counts:2", "--d-max", 12,
                       "--expected-nodes", 300, "--chunk-rows", 97)
    g = resolve_graph(GRAPH, rng=0)  # the same bits as the layer's in-memory run of the same seed
    want = [run_in_memory("degree", g, 1.5, sampler=7, statistic=st, kstar_counts=(2,), d_max=12).estimate
            for st in ("kstars", "degree_variance", "kstars_from_counts:2")]
    assert got["n_nodes"] == 300 and got["n_rows"] == 600
    for e, w in zip(got["estimates"], want, strict=True):
        assert (e["statistic"], e["estimate"], e["std_error"]) == (w.statistic, w.value, w.std_error)


def test_single_nodes_write_their_own_files_securely(tmp_path, capsys):
    nbrs = {0: "1,2", 1: "0", 2: "0,2,0"}  # node 2 lists itself and node 0 twice: degree 1
    paths = []
    for v, text in nbrs.items():
        paths.append(tmp_path / f"node{v}.jsonl")
        assert main(["node", "--node-id", str(v), "--neighbors", text, "--epsilon", "2", "--out", str(paths[-1])]) == 0
        assert "secure exact sampler" in capsys.readouterr().out
    s = read_report_set(paths, expected_nodes=3)
    assert s.n_nodes == 3 and s.quantities["degree"].epsilon == 2.0
    nfile = tmp_path / "nbrs.txt"
    nfile.write_text("5 6\n7\n")
    assert main(["node", "--node-id", "4", "--neighbors-file", str(nfile), "--epsilon", "1", "--simulate",
                 "--seed", "0", "--out", str(tmp_path / "n4.csv")]) == 0
    noise = int(Seeded(0).stream(1, 4).dlap(1.0, 1.0, 1)[0])  # node 4's own stream of round 1
    assert read_report_set(tmp_path / "n4.csv").quantities["degree"].histogram.values.tolist() == [3 + noise]


ONE_ROUND = ("the degree protocol has one round; for a public bound from noisy degrees use --protocol "
             "local-dlap-kstars-private (--epsilon is the node's total: 0.1 of it on the degree, 0.9 on the counts)")


@pytest.mark.parametrize("argv", [
    ["node", "--graph", GRAPH, "--round", "2", "--broadcast", "b.json", "--no-degree", "--kstar-counts", "2"],
    ["node", "--graph", GRAPH, "--broadcast", "b.json"],
    ["node", "--protocol", "degree", "--graph", GRAPH, "--round", "2", "--kstar-counts", "2", "--d-max", "9"],
    ["curate", "r1.csv", "--round", "1", "--stat", "degree_mean", "--broadcast-out", "b.json"],
    ["curate", "r1.csv", "--round", "2", "--broadcast", "b.json", "--stat", "kstars_from_counts:2"],
    ["curate", "r1.csv", "--protocol", "degree", "--round", "2", "--d-max", "9"],
])
def test_the_degree_protocol_has_one_round(tmp_path, monkeypatch, capsys, argv):
    """Its former two-round form (a d_max broadcast between rounds at a per-round --epsilon) is refused,
    naming the protocol that runs it at one total budget; nothing is written."""
    monkeypatch.chdir(tmp_path)
    assert main(["node", "--graph", GRAPH, "--epsilon", "0.2", "--simulate", "--seed", "1", "--out", "r1.csv"]) == 0
    (tmp_path / "b.json").write_text("{}")
    before = sorted(p.name for p in tmp_path.iterdir())
    capsys.readouterr()
    tail = ["--epsilon", "1", "--simulate", "--out", "r2.csv"] if argv[0] == "node" else []
    assert main([*argv, *tail]) == 2
    err = capsys.readouterr().err
    assert err == f"ldpgraph {argv[0]}: error: {ONE_ROUND} (see 'ldpgraph {argv[0]} --help')\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_curate_table_reports_screening(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["node", "--graph", GRAPH, "--epsilon", "1", "--simulate", "--seed", "3", "--out", str(out)]) == 0
    text = out.read_text().splitlines()
    fields = text[1].split(",")
    fields[3] = "100000"  # the first node's value: a liar far beyond n
    text[1] = ",".join(fields)
    out.write_text("\n".join(text) + "\n")
    capsys.readouterr()
    assert main(["curate", str(out), "--stat", "edges", "--n-nodes", "300"]) == 0
    table = capsys.readouterr().out
    assert "1 outside [-28, 327] clipped" in table and "one-node bound" in table


@pytest.mark.parametrize("argv, status, err", [
    (["node", "--graph", GRAPH, "--epsilon", "1", "--seed", "3", "--out", "x.csv"], 2, "--seed needs --simulate"),
    (["node", "--neighbors", "1,2", "--epsilon", "1", "--out", "x.csv"], 2, "--node-id is required"),
    (["node", "--node-id", "1", "--neighbors", "1,01", "--epsilon", "1", "--out", "x.csv"], 2, "canonical"),
    (["node", "--node-id", "1", "--neighbors", "2", "--epsilon", "1", "--out", "x.txt"], 2, "suffix"),
    (["curate", "missing.parquet"], 1, "not found"),
    (["curate", "x.csv", "--stat", "triangles"], 2, "unknown statistic"),
])
def test_usage_errors(tmp_path, monkeypatch, capsys, argv, status, err):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == status
    assert err in capsys.readouterr().err


@pytest.mark.parametrize("eps, k, shares, budget", [
    # the defaults: 0.1 of the total on the degree, 0.9 on the counts
    ("2", 3, [], "epsilon 2 = degree-bound 0.2 + kstar-count 1.8"),
    # the degree protocol's former two-round run (0.2 on the degrees, then 0.8 on the counts), as one total
    ("1", 2, ["--shares", "degree=0.2,kstar_2=0.8"], "epsilon 1 = degree-bound 0.2 + kstar-count 0.8"),
])
def test_local_kstars_private_bound_through_files_equals_memory(tmp_path, capsys, monkeypatch, eps, k, shares,
                                                                 budget):
    """local-dlap-kstars-private: round 1 (noisy degrees) -> the signed bound D -> round 2 (counts):
    the same bits as the in-memory run of the same seed, and one total --epsilon split by the plan."""
    monkeypatch.setenv("LDPGRAPH_CURATOR_KEY", str(tmp_path / "key"))
    r1, r2, b = tmp_path / "r1.csv", tmp_path / "r2.parquet", tmp_path / "b.json"
    opts = ["--protocol", "local-dlap-kstars-private", "--epsilon", eps, "--kstar-counts", str(k), *shares]
    assert main(["node", "--graph", GRAPH, *opts, "--simulate", "--seed", "5", "--out", str(r1)]) == 0
    assert budget in capsys.readouterr().out
    assert main(["curate", str(r1), *opts, "--broadcast-out", str(b)]) == 0
    with r1.open(newline="") as fh:  # D: the largest noisy degree of the round-1 file
        bound = max(1, max(int(row["value"]) for row in csv.DictReader(fh) if row["quantity"] == "degree"))
    assert f"degree bound D = {bound}" in capsys.readouterr().out
    assert main(["node", "--graph", GRAPH, *opts, "--round", "2", "--broadcast", str(b), "--simulate", "--seed", "5",
                 "--out", str(r2)]) == 0
    assert budget in capsys.readouterr().out
    got = _curate_json(capsys, r2, *opts, "--broadcast", b)
    public = {"kstar_counts": (k,)}
    if shares:
        public["shares"] = {"degree": 0.2, f"kstar_{k}": 0.8}
    want = run_in_memory("local-dlap-kstars-private", resolve_graph(GRAPH, rng=0), float(eps), sampler=5, **public)
    est = got["estimates"][0]
    assert (est["statistic"], est["estimate"], est["std_error"]) == (want.estimate.statistic, want.estimate.value,
                                                                  want.estimate.std_error)
    assert got["bound"] == want.broadcasts[0].bound == bound and got["epsilon"] == float(eps)
    # round-2 rows curated as round 1, or against a round that does not exist: refused
    capsys.readouterr()
    assert main(["curate", str(r2), *opts, "--round", "1", "--broadcast-out", str(tmp_path / "x.json")]) == 1
    assert "round 1" in capsys.readouterr().err
    assert main(["node", "--graph", GRAPH, *opts, "--round", "3", "--broadcast", str(b), "--simulate",
                 "--out", str(tmp_path / "r3.csv")]) == 2
    assert "local-dlap-kstars-private has no round 3" in capsys.readouterr().err


def test_curate_reads_the_degree_plan_from_the_rows_or_checks_the_given_one(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["node", "--graph", GRAPH, "--epsilon", "1", "--simulate", "--seed", "4", "--out", str(out)]) == 0
    g = resolve_graph(GRAPH, rng=0)
    naive = _curate_json(capsys, out, "--stat", "kstars:3", "--estimator", "naive")["estimates"][0]
    want = run_in_memory("degree", g, 1.0, sampler=4, statistic="kstars:3", estimator="naive").estimate
    assert naive["estimate"] == want.value and naive["std_error"] is None
    given = _curate_json(capsys, out, "--epsilon", 1, "--stat", "edges")["estimates"][0]
    assert given["estimate"] == run_in_memory("degree", g, 1.0, sampler=4, statistic="edges").estimate.value
    assert main(["curate", str(out), "--epsilon", "2"]) == 1  # rows of another plan
    assert "released at epsilon 1.0, but the plan" in capsys.readouterr().err


def test_kcore_hindex_through_files_equals_memory(tmp_path, capsys, monkeypatch):
    """kcore-hindex: round 1 (noisy degrees) -> the signed broadcast of every node's noisy degree ->
    round 2 (noisy h-indices) -> every node's core number, the bits of the in-memory run of the same
    seed; one total --epsilon split by the plan, and ``ldpgraph methods`` names the deployment."""
    monkeypatch.setenv("LDPGRAPH_CURATOR_KEY", str(tmp_path / "key"))
    r1, r2, b = tmp_path / "r1.csv", tmp_path / "r2.jsonl", tmp_path / "b.json"
    opts = ["--protocol", "kcore-hindex", "--epsilon", "2", "--h-share", "0.75"]
    budget = "epsilon 2 = degree 0.5 + h-index 1.5"
    assert main(["node", "--graph", GRAPH, *opts, "--simulate", "--seed", "3", "--out", str(r1)]) == 0
    assert budget in capsys.readouterr().out
    assert main(["curate", str(r1), *opts, "--broadcast-out", str(b)]) == 0
    assert "every node's noisy degree" in capsys.readouterr().out
    with r1.open(newline="") as fh:  # the broadcast holds round 1's rows, node by node
        sent = {int(row["node"]): int(row["value"]) for row in csv.DictReader(fh)}
    assert json.loads(b.read_text())["degrees"] == [sent[v] for v in range(300)]
    assert main(["node", "--graph", GRAPH, *opts, "--round", "2", "--broadcast", str(b), "--simulate", "--seed", "3",
                 "--out", str(r2)]) == 0
    assert budget in capsys.readouterr().out
    got = _curate_json(capsys, r2, *opts, "--broadcast", b, "--stat", "core_numbers")
    want = run_in_memory("kcore-hindex", resolve_graph(GRAPH, rng=0), 2.0, sampler=3, h_share=0.75).estimate
    assert got["core_numbers"] == want.core_numbers.tolist() and got["rounds"] == want.rounds == 2
    assert got["estimates"][0]["estimate"] == want.value and got["budget"] == {"degree": 0.5, "h-index": 1.5}
    # another plan's broadcast (the default split) is refused; an edited one fails its signature
    capsys.readouterr()
    assert main(["node", "--graph", GRAPH, "--protocol", "kcore-hindex", "--epsilon", "2", "--round", "2",
                 "--broadcast", str(b), "--simulate", "--out", str(tmp_path / "x.csv")]) == 1
    assert "round-1 epsilon 0.5" in capsys.readouterr().err
    doc = json.loads(b.read_text())
    doc["degrees"][0] += 1
    b.write_text(json.dumps(doc))
    assert main(["curate", str(r2), *opts, "--broadcast", str(b)]) != 0
    assert "signature" in capsys.readouterr().err
    assert main(["methods", "--stat", "core_numbers", "--epsilon", "2", "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["methods"] if r["method"] == "kcore-hindex")
    assert row["deployable"] and row["deploy"] == "--protocol kcore-hindex"
    h = HINDEX_SCHEDULE[1.0][0]  # per-node epsilon 2: the schedule's last point
    assert row["budget"] == {"degree": pytest.approx(2 * (1 - h)), "h-index": pytest.approx(2 * h)}
    assert row["rounds"] == 2


AVG_PRIVATE = ["--protocol", "avg-clustering", "--epsilon", "2", "--private-bound"]


def test_avg_clustering_private_bound_through_files_equals_memory(tmp_path, capsys, monkeypatch):
    """avg-clustering --private-bound (the simulation's avg-clustering-dlap-private): round 1 sends the
    RR bits and a degree_bound row per node, the signed broadcast carries D = max(2, their maximum), round 2
    projects to it; the files give the bits of the in-memory run of the same seed, the printed budget is
    what a node spends (0.1 / 0.27 / 0.36 / 0.27 of the total), and hostile or contradicting input is
    refused."""
    monkeypatch.setenv("LDPGRAPH_CURATOR_KEY", str(tmp_path / "key"))
    r1, r2, b = tmp_path / "c1.csv", tmp_path / "c2.parquet", tmp_path / "cb.txt"
    sim = ["--graph", GRAPH, *AVG_PRIVATE, "--simulate", "--seed", "6"]
    assert main(["node", *sim, "--out", str(r1)]) == 0
    budget = "epsilon 2 = rr 0.54 + degree-bound 0.2 + degree 0.72 + local-count 0.54"  # every release
    assert budget in capsys.readouterr().out
    assert main(["curate", str(r1), *AVG_PRIVATE, "--broadcast-out", str(b)]) == 0
    with r1.open(newline="") as fh:  # D: the largest noisy degree of the round-1 file (at least 2)
        released = [int(r["value"]) for r in csv.DictReader(fh) if r["quantity"] == DEGREE_BOUND]
    bound = max(2, max(released))
    assert len(released) == 300 and f"private bound D = {bound} " in capsys.readouterr().out
    assert main(["node", *sim, "--round", "2", "--broadcast", str(b), "--out", str(r2)]) == 0
    assert budget in capsys.readouterr().out
    got = _curate_json(capsys, r2, *AVG_PRIVATE, "--broadcast", b)
    g = resolve_graph(GRAPH, rng=0)
    want = run_in_memory("avg-clustering", g, 2.0, sampler=6, private_bound=True)
    est = got["estimates"][0]
    assert (est["statistic"], est["estimate"], est["std_error"]) == ("avg_clustering", want.estimate.value,
                                                                  want.estimate.std_error)
    assert read_triangle_broadcast(b).bound == want.broadcasts[0].bound == bound
    # the plan spends what the simulation's budget says, and a node spends the plan's total
    plan = want.plan
    eps = {q: plan.release(q).epsilon for q in (DEGREE_BOUND, "rr_edge", "degree", "local_count")}
    assert list(eps.values()) == pytest.approx([0.2, 0.54, 0.72, 0.54], rel=1e-14)
    assert sum(rp.epsilon for rp in plan.rounds) == pytest.approx(2.0, rel=1e-15)
    sim_budget = sorted(get_method("avg-clustering-dlap-private").budget(2.0).values())
    assert sorted(eps.values()) == pytest.approx(sim_budget, rel=1e-12)
    local = want.rows[1]["quantity"] == "local_count"  # sensitivity 2(D - 1): the lists above D projected
    assert np.all(want.rows[1]["sensitivity"][local] == 2 * (bound - 1))
    # hostile: a node's degree_bound row missing
    lines = r1.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(r for r in lines if not (r.startswith("9,") and f",{DEGREE_BOUND}," in r)) + "\n")
    capsys.readouterr()
    assert main(["curate", str(bad), *AVG_PRIVATE, "--broadcast-out", str(tmp_path / "x.txt")]) == 1
    assert "degree_bound rows, but not all: 1: 9 are missing" in capsys.readouterr().err
    # contradictions: a public D, or no projection under a noisy D
    for extra in (["--d-max", "9"], ["--no-projection"]):
        assert main(["curate", str(r1), *AVG_PRIVATE, *extra, "--broadcast-out", str(tmp_path / "y.txt")]) == 2
        assert main(["node", *sim, *extra, "--out", str(tmp_path / "n.csv")]) == 2
    assert not (tmp_path / "y.txt").exists() and not (tmp_path / "n.csv").exists()


def test_avg_clustering_private_bound_screens_a_lying_degree():
    """A node that sends a huge degree_bound cannot push the private D past the truthful range: clipped
    to [-t, n - 1 + t] (t the exact 1e-12 noise quantile at eps0, sensitivity 1), so D is at most
    n - 1 + t; rejected, D is the maximum of the others; 'raise' refuses the rows."""
    g = resolve_graph(GRAPH, rng=0)
    run = run_in_memory("avg-clustering", g, 2.0, sampler=6, private_bound=True)
    proto, plan = registry.get("avg-clustering"), run.plan
    first = proto.rounds()[0]
    rows = {c: v.copy() for c, v in run.rows[0].items()}
    at = np.flatnonzero(rows["quantity"] == DEGREE_BOUND)
    truthful = rows["value"][at].copy()
    rows["value"][at[5]] = 10**6  # node 5 lies
    t = noise_quantile(0.2, 1.0)
    a = math.exp(-0.2)  # P(|DLap(a)| > s) = 2 a^(s+1) / (1 + a): t = 138 is the least s with it <= 1e-12
    assert t == 138 and 2 * a ** 139 / (1 + a) <= 1e-12 < 2 * a ** 138 / (1 + a)

    def bound(outliers):
        acc = first.accumulator(plan, None, outliers=outliers)
        acc.add(chunk_from_columns(rows))
        result = acc.result()
        return first.broadcast(result, plan).bound, result

    clipped, result = bound("clip")
    assert clipped == g.n_nodes - 1 + t == 437
    sc = result.screening[DEGREE_BOUND]
    assert (sc.lo, sc.hi, sc.n_outside) == (-t, 437, 1)
    assert proto.one_node_bounds(result, plan, first) == {"D": 437.0}
    assert "1 outside [-138, 437] clipped: one node raises D to at most 437" in "\n".join(
        proto.describe_result(result, first))
    others = np.delete(truthful, 5)
    assert bound("reject")[0] == max(2, int(others.max()))
    with pytest.raises(ValueError, match="1 degree_bound report"):
        bound("raise")
    assert bound(None)[0] == 10**6  # unscreened: the liar sets D
