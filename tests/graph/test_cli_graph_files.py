"""The edge-list options of the command line (--delimiter, --columns, --header/--no-header,
--strict, --node-type) on every command that reads a GRAPH, and the load notes they print.

The graphs read are compared with networkx's reading of the same file: the k-star truth that
``ldpgraph estimate`` prints is ``sum_v C(d_v, 2)`` over networkx's degrees.
"""

from __future__ import annotations

import csv
import gzip
import json
import math

import networkx as nx
import pyarrow as pa
import pyarrow.parquet as pq

from ldpgraph.cli import main

EDGES = [("alice", "bob"), ("bob", "carol"), ("carol", "alice"), ("carol", "dave"), ("dave", "erin"),
         ("erin", "bob"), ("frank", "alice")]


def _two_stars(g: nx.Graph) -> int:
    return sum(math.comb(d, 2) for _, d in g.degree())


def _estimate(capsys, *argv: str) -> tuple[dict, str]:
    """``ldpgraph estimate ... --json``: the JSON document and stderr."""
    assert main(["estimate", *argv, "--epsilon", "1", "--seed", "3", "--json"]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def _fails(capsys, code: int, *argv: str) -> str:
    assert main(list(argv)) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_delimiter_tab_keeps_commas_inside_names(tmp_path, capsys):
    # "Smith, J<TAB>Doe, A": a comma in the first line means CSV unless --delimiter says tab
    names = [(f"{u.title()}, J", f"{v.title()}, A") for u, v in EDGES]
    path = _write(tmp_path / "people.tsv", [f"{u}\t{v}" for u, v in names])
    ref = nx.read_edgelist(path, delimiter="\t")
    doc, err = _estimate(capsys, path, "--delimiter", "tab")
    assert (doc["n_nodes"], doc["n_edges"], doc["truth"]) == (
        ref.number_of_nodes(), ref.number_of_edges(), _two_stars(ref))
    assert "node ids read as names" in " ".join(doc["graph_notes"])
    assert err == ""  # --json: the notes are in the document, not on stderr
    # detected as CSV instead: the field ' J<TAB>Bob' is no name (a control character in it)
    err = _fails(capsys, 1, "estimate", path, "--epsilon", "1")
    assert "people.tsv, line 1: node id 'J\\tBob' is not a non-negative integer, nor a valid name" in err
    for spelling in ("\t", "\\t", "TAB"):
        assert _estimate(capsys, path, "--delimiter", spelling)[0]["truth"] == doc["truth"]


def test_delimiter_comma_and_space(tmp_path, capsys):
    path = _write(tmp_path / "e.txt", [f"{u} x,{v} y" for u, v in EDGES])  # names with spaces, CSV
    ref = nx.read_edgelist(path, delimiter=",")
    assert _estimate(capsys, path)[0]["truth"] == _two_stars(ref)  # detected
    assert _estimate(capsys, path, "--delimiter", ",")[0]["truth"] == _two_stars(ref)
    # --delimiter space: runs of blanks, no detection: 'alice x,bob y' has 3 fields, the first two used
    ref_space = nx.Graph((a, b) for a, b, _ in (line.split() for line in open(path, encoding="utf-8")))
    doc, _ = _estimate(capsys, path, "--delimiter", "space")
    assert doc["truth"] == _two_stars(ref_space) and doc["n_nodes"] == ref_space.number_of_nodes()
    err = _fails(capsys, 2, "estimate", path, "--epsilon", "1", "--delimiter", ";")
    assert "invalid delimiter ';'" in err


def test_columns_pick_the_node_columns(tmp_path, capsys):
    rows = [f"{t} {u} {v} 0.5" for t, (u, v) in enumerate(EDGES)]  # time, u, v, weight
    path = _write(tmp_path / "timed.txt", rows)
    ref = nx.Graph((r.split()[1], r.split()[2]) for r in rows)
    doc, _ = _estimate(capsys, path, "--columns", "1,2")
    assert (doc["n_nodes"], doc["truth"]) == (ref.number_of_nodes(), _two_stars(ref))
    assert any("node ids from columns 2 and 3, the other columns ignored" in n for n in doc["graph_notes"])
    # the default (first two columns) is another graph: time and u
    assert _estimate(capsys, path)[0]["n_nodes"] == len(EDGES) + len({u for u, _ in EDGES})
    err = _fails(capsys, 2, "estimate", path, "--epsilon", "1", "--columns", "1")
    assert "invalid columns '1'" in err
    err = _fails(capsys, 1, "estimate", path, "--epsilon", "1", "--columns", "1,7")
    assert "timed.txt, line 1" in err and "column 7" in err


def test_columns_name_parquet_columns(tmp_path, capsys):
    path = str(tmp_path / "edges.parquet")
    u, v = zip(*EDGES, strict=True)
    pq.write_table(pa.table({"when": list(range(len(u))), "to": list(v), "from": list(u)}), path)
    ref = nx.Graph(EDGES)
    doc, _ = _estimate(capsys, path, "--columns", "from,to")
    assert (doc["n_nodes"], doc["n_edges"], doc["truth"]) == (
        ref.number_of_nodes(), ref.number_of_edges(), _two_stars(ref))
    err = _fails(capsys, 1, "estimate", path, "--epsilon", "1", "--strict")
    assert "--columns A,B" in err
    err = _fails(capsys, 1, "estimate", path, "--epsilon", "1", "--delimiter", ",", "--node-type", "str")
    assert "delimiter, node_type apply to text edge lists, not to the Parquet file" in err


def test_header_and_no_header(tmp_path, capsys):
    # a names file whose first edge is 'source target' (two people so named): detected as a header
    path = _write(tmp_path / "names.txt", ["source target", *(f"{u} {v}" for u, v in EDGES)])
    ref = nx.read_edgelist(path)
    doc, _ = _estimate(capsys, path, "--no-header")
    assert (doc["n_edges"], doc["truth"]) == (ref.number_of_edges(), _two_stars(ref))
    auto, _ = _estimate(capsys, path)
    assert auto["n_edges"] == ref.number_of_edges() - 1
    assert "line 1 taken as a header (column names source, target)" in auto["graph_notes"]
    # integer ids with a first line of integers that is a header all the same
    path2 = _write(tmp_path / "ints.txt", ["10 20", "1 2", "2 3", "3 1"])
    doc2, _ = _estimate(capsys, path2, "--header")
    assert (doc2["n_nodes"], doc2["n_edges"], doc2["truth"]) == (3, 3, 3)
    assert _estimate(capsys, path2)[0]["n_nodes"] == 5


def test_strict_refuses_extra_columns_and_says_how_to_choose(tmp_path, capsys):
    path = _write(tmp_path / "w.csv", ["u,v,weight", *(f"{u},{v},1.5" for u, v in EDGES)])
    err = _fails(capsys, 1, "estimate", path, "--epsilon", "1", "--strict")
    assert "w.csv, line 2: 3 columns found, expected 2 (strict)" in err and "--columns 0,1" in err
    assert "the line is 'alice,bob,1.5'" in err
    ref = nx.Graph(EDGES)
    doc, _ = _estimate(capsys, path, "--strict", "--columns", "0,1")
    assert doc["truth"] == _two_stars(ref)
    # without --strict: read, with the note (printed on stderr without --json)
    assert main(["estimate", path, "--epsilon", "1", "--seed", "3"]) == 0
    out = capsys.readouterr()
    assert ("ldpgraph: note: w: 3 columns per line: node ids from columns u and v, the other column "
            "ignored (weight); strict=True (--strict) refuses extra columns") in out.err.splitlines()
    assert "ldpgraph: note: w: line 1 taken as a header (column names u, v, weight)" in out.err.splitlines()
    assert "note" not in out.out and out.out.startswith("graph      w (6 nodes, 7 edges)")


def test_node_type(tmp_path, capsys):
    # '01' and '1' are one integer id (a self-loop, dropped) but two names
    path = _write(tmp_path / "ids.txt", ["01 1", "1 2", "2 3"])
    as_int, _ = _estimate(capsys, path)
    assert (as_int["n_nodes"], as_int["n_edges"]) == (3, 2)
    as_str, _ = _estimate(capsys, path, "--node-type", "str")
    ref = nx.read_edgelist(path)  # networkx reads names
    assert (as_str["n_nodes"], as_str["n_edges"], as_str["truth"]) == (4, 3, _two_stars(ref))
    names = _write(tmp_path / "names.txt", ["1 2", "2 bob"])
    err = _fails(capsys, 1, "estimate", names, "--epsilon", "1", "--node-type", "int")
    assert "names.txt, line 1" in err and "'bob'" in err or "line 2" in err
    err = _fails(capsys, 2, "estimate", path, "--epsilon", "1", "--node-type", "float")
    assert "invalid choice: 'float'" in err


def test_directed_file_note_and_quiet(tmp_path, capsys):
    path = _write(tmp_path / "both.txt", ["1 2", "2 1", "2 3"])
    assert main(["estimate", path, "--epsilon", "1", "--seed", "0"]) == 0
    err = capsys.readouterr().err
    assert ("ldpgraph: note: both: 1 edges are given in both directions (u v and v u): the input is read as "
            "undirected, 3 edges in -> 2 undirected edges") in err
    assert main(["estimate", path, "--epsilon", "1", "--seed", "0", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


def test_same_numbers_however_the_file_is_written(tmp_path, capsys):
    """Seeds follow the content: a CSV with a header and weights, read with options, gives the numbers
    of the plain file (same label from the file name, same streams)."""
    ids = {name: i for i, name in enumerate(sorted({x for e in EDGES for x in e}))}
    plain = _write(tmp_path / "edges.txt", [f"{ids[u]} {ids[v]}" for u, v in EDGES])
    (tmp_path / "csv").mkdir()
    fancy = _write(tmp_path / "csv" / "edges.csv",
                   ["weight;target;source".replace(";", ","), *(f"0.5,{ids[v]},{ids[u]}" for u, v in EDGES)])
    a, _ = _estimate(capsys, plain)
    b, _ = _estimate(capsys, fancy, "--delimiter", ",", "--header", "--columns", "2,1", "--strict",
                     "--node-type", "int")
    assert b.pop("graph_notes") and a.pop("graph_notes") == []
    assert a == b


def test_options_refused_where_no_file_is_read(tmp_path, capsys):
    err = _fails(capsys, 2, "estimate", "facebook", "--epsilon", "1", "--delimiter", ",")
    assert "--delimiter applies to edge-list files; GRAPH 'facebook' is a registered dataset" in err
    err = _fails(capsys, 2, "experiment", "ba:n=50,m=2", "--strict", "--no-header", "--out", str(tmp_path))
    assert "--header/--no-header, --strict apply to edge-list files; GRAPH 'ba:n=50,m=2' is a synthetic" in err
    err = _fails(capsys, 2, "node", "--node-id", "1", "--neighbors", "2,3", "--epsilon", "1", "--strict",
                 "--out", str(tmp_path / "r.csv"))
    assert "--strict applies to --graph FILE, not to --neighbors" in err
    err = _fails(capsys, 1, "estimate", str(tmp_path / "missing.txt"), "--epsilon", "1", "--strict")
    assert "missing.txt" in err


def test_experiment_reads_files_with_the_options(tmp_path, capsys):
    path = _write(tmp_path / "w.csv", ["from,to,weight", *(f"{u},{v},2" for u, v in EDGES)])
    out = tmp_path / "res"
    argv = ["experiment", path, "--epsilons", "1", "--k", "2", "--trials", "3", "--methods", "unbiased-dlap",
            "--seed", "1", "--no-plots", "--jobs", "1", "--out", str(out)]
    assert main([*argv, "--strict"]) == 1
    assert "--columns 0,1" in capsys.readouterr().err
    assert main([*argv, "--json"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert "note" not in cap.err
    assert doc["graph_notes"]["w"][0] == "comma-separated fields (detected; delimiter= or --delimiter overrides)"
    ref = nx.Graph(EDGES)
    with open(out / "summary.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["graph"] for r in rows] == ["w"] and float(rows[0]["truth"]) == _two_stars(ref)
    assert main([*argv, "--quiet", "--columns", "1,0"]) == 0
    assert capsys.readouterr() == ("", "")
    assert main([*argv, "--label", "mine"]) == 0
    err = capsys.readouterr().err
    assert "ldpgraph: note: mine: line 1 taken as a header (column names from, to, weight)" in err


def test_node_simulates_a_file_read_with_the_options(tmp_path, capsys):
    path = _write(tmp_path / "ids.txt", ["# time u v", *(f"{t} {2 * t} {2 * t + 1}" for t in range(5))])
    out = tmp_path / "r.csv"
    assert main(["node", "--graph", path, "--columns", "1,2", "--epsilon", "1", "--simulate", "--seed", "0",
                 "--out", str(out)]) == 0
    cap = capsys.readouterr()
    assert "wrote" in cap.out and "(10 rows: 10 node(s)" in cap.out
    assert "columns 2 and 3, the other column ignored" in cap.err
    with open(out, encoding="utf-8") as fh:
        assert sorted(int(r["node"]) for r in csv.DictReader(fh)) == list(range(10))


def test_size_limits(tmp_path, capsys):
    member = gzip.compress(b"0 0\n" * (1 << 18))  # 1 MiB of text in ~1 KB
    bomb = tmp_path / "bomb.txt.gz"
    bomb.write_bytes(member * 12)
    err = _fails(capsys, 1, "estimate", str(bomb), "--epsilon", "1")
    assert "gzip data expands more than max_ratio = 100 times" in err and "(--max-ratio 0)" in err
    err = _fails(capsys, 1, "estimate", str(bomb), "--epsilon", "1", "--max-ratio", "200")
    assert "expands more than max_ratio = 200 times" in err
    err = _fails(capsys, 1, "estimate", str(bomb), "--epsilon", "1", "--max-ratio", "0")
    assert "has 1 node but no edges" in err  # read to the end: all self-loops
    err = _fails(capsys, 1, "estimate", str(bomb), "--epsilon", "1", "--max-ratio", "0", "--max-bytes", "1000")
    assert "more than max_bytes = 1,000 bytes of text; raise max_bytes (--max-bytes)" in err
    err = _fails(capsys, 2, "estimate", str(bomb), "--epsilon", "1", "--max-ratio", "0.5")
    assert "invalid max ratio '0.5'" in err
