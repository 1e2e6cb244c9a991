"""The roster: labels for node numbers, in ``node --roster`` and ``curate --roster``."""

from __future__ import annotations

import pyarrow.csv as pcsv
import pytest

from ldpgraph.cli import main
from ldpgraph.run.reportfiles import node_labels_path, write_node_labels
from ldpgraph.run.roster import Roster, read_roster

EDGES = [("alice", "bob"), ("bob", "carol"), ("carol", "alice"), ("carol", "dave"), ("eve", "dave"),
         ("user5", "alice"), ("user5", "carol")]


def _run(capsys, *args, code=0):
    capsys.readouterr()
    assert main([str(a) for a in args]) == code
    return capsys.readouterr()


def test_read_checks_the_table(tmp_path):
    good = write_node_labels(tmp_path / "r.csv", ["a", "b"])
    assert read_roster(good).labels == ("a", "b")
    for text, msg in [("id,label\n0,a\n", "header 'node,label'"), ("node,label\n1,a\n", "where node 0 was expected"),
                      ("node,label\n0,a,b\n", "expected 'node,label'"), ("node,label\n", "no participant")]:
        bad = tmp_path / "bad.csv"
        bad.write_text(text)
        with pytest.raises(ValueError, match=msg):
            read_roster(bad)
    with pytest.raises(ValueError, match="names nodes 0 and 1"):
        Roster(("a", "a"))
    with pytest.raises(ValueError, match="'zed' is not a participant"):
        Roster(("a",)).index("zed")


def test_a_node_named_in_the_roster_writes_its_rows_of_the_whole_run(tmp_path, capsys):
    """``node --roster R --node-id user5 --neighbors alice,carol`` = user5's rows of the graph run."""
    graph = tmp_path / "g.tsv"
    graph.write_text("".join(f"{a}\t{b}\n" for a, b in EDGES), encoding="utf-8")
    whole = tmp_path / "all.csv"
    common = ["--protocol", "rr-triangles", "--epsilon", 1.5, "--simulate", "--seed", 4]
    _run(capsys, "node", "--graph", graph, *common, "--out", whole)
    roster = node_labels_path(whole)
    labels = read_roster(roster).labels
    me = labels.index("user5")
    one = tmp_path / "one.csv"
    out = _run(capsys, "node", "--roster", roster, "--node-id", "user5", "--neighbors", "alice,carol", *common,
               "--out", one)
    assert "1 node(s)" in out.out
    mine = [r for r in pcsv.read_csv(whole).to_pylist() if r["node"] == me]
    assert pcsv.read_csv(one).to_pylist() == mine
    # a label not in the roster, and a label without a roster, are refused
    err = _run(capsys, "node", "--roster", roster, "--node-id", "mallory", "--neighbors", "alice", *common,
               "--out", tmp_path / "x.csv", code=1).err
    assert "'mallory' is not a participant" in err
    err = _run(capsys, "node", "--node-id", "user5", "--neighbors", "1", *common, "--out", tmp_path / "x.csv",
               code=2).err
    assert "--roster FILE" in err


def test_curate_checks_the_participants_against_the_roster(tmp_path, capsys):
    rows = tmp_path / "r.csv"
    _run(capsys, "node", "--protocol", "rr-triangles", "--graph", "ws:n=12,k=4,p=0.1", "--epsilon", 2,
         "--simulate", "--seed", 0, "--out", rows)
    short = write_node_labels(tmp_path / "short.csv", [f"n{i}" for i in range(11)])
    long = write_node_labels(tmp_path / "long.csv", [f"n{i}" for i in range(13)])
    full = write_node_labels(tmp_path / "full.csv", [f"n{i}" for i in range(12)])
    _run(capsys, "curate", rows, "--epsilon", 2, "--roster", full)
    assert "node 11 is not an expected node" in _run(capsys, "curate", rows, "--epsilon", 2, "--roster", short,
                                                     code=1).err
    assert "missing nodes" in _run(capsys, "curate", rows, "--epsilon", 2, "--roster", long, code=1).err
    err = _run(capsys, "curate", rows, "--epsilon", 2, "--roster", full, "--expected-nodes", 5, code=2).err
    assert "contradicts the roster's 12 participants" in err


def test_a_byte_order_mark_is_not_part_of_the_header(tmp_path):
    """Excel's "CSV UTF-8" starts with a BOM: the roster and a report CSV read as without it."""
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbfnode,label\r\n0,alice\r\n1,bob\r\n")
    assert read_roster(bom).labels == ("alice", "bob")

    from ldpgraph.protocols import DegreeRandomizer
    from ldpgraph.run.reportfiles import iter_report_chunks, write_reports

    plain = write_reports(tmp_path / "r.csv", DegreeRandomizer(epsilon=1.0).randomize([3, 1, 2], rng=0))
    marked = tmp_path / "r_bom.csv"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    want = [c.value.tolist() for c in iter_report_chunks(plain)]
    assert [c.value.tolist() for c in iter_report_chunks(marked)] == want
