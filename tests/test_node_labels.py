"""``ldpgraph node --graph``: a graph not numbered 0..n-1 gets a node-label table beside its reports.

Report rows carry integer node numbers (and the triangle protocols number the nodes 0..n-1), so
a graph with text names, or integer ids other than 0..n-1, is simulated under numbers; the table
``<stem>.nodes.csv`` maps them back. Checked against networkx's own reading of the same file:
at epsilon = 60 the DLap noise is 0 except with probability ~1e-26, so each numbered node's
reported degree is its true degree.
"""

from __future__ import annotations

import csv

import networkx as nx
import pytest

from ldpgraph.cli import main
from ldpgraph.run.reportfiles import node_labels_path

EDGES = [("alice", "bob"), ("bob", "carol"), ("carol", "alice"), ("carol", "dave"), ("eve", "dave"),
         ("frank, jr.", "alice")]


def _write_graph(path, edges):
    path.write_text("".join(f"{a}\t{b}\n" for a, b in edges), encoding="utf-8")
    return path


def _labels(table):
    with open(table, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["node", "label"]
    assert [int(r[0]) for r in rows[1:]] == list(range(len(rows) - 1))
    return [r[1] for r in rows[1:]]


def _rows(path):
    """The report rows as dicts (read with pyarrow: an independent reader of the files)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    import pyarrow.csv as pcsv

    return pcsv.read_csv(path).to_pylist()


def _degrees(path):
    return {r["node"]: r["value"] for r in _rows(path) if r["quantity"] == "degree"}


def _node(tmp_path, capsys, graph, out, *extra):
    capsys.readouterr()
    code = main(["node", "--graph", str(graph), "--epsilon", "60", "--simulate", "--seed", "3",
                 "--delimiter", "\t", "--out", str(out), *extra])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    return printed.out


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_text_names_degree_reports_are_named_by_the_table(tmp_path, capsys, suffix):
    graph = _write_graph(tmp_path / "g.tsv", EDGES)
    out = tmp_path / f"deg.{suffix}"
    printed = _node(tmp_path, capsys, graph, out)
    table = node_labels_path(out)
    assert table == tmp_path / "deg.nodes.csv" and f"wrote {table}" in printed
    labels = _labels(table)
    truth = dict(nx.Graph(EDGES).degree())
    assert sorted(labels) == sorted(truth)
    deg = _degrees(out)
    assert sorted(deg) == list(range(len(labels)))
    assert {labels[i]: v for i, v in deg.items()} == truth


def test_integer_ids_keep_their_ids_in_degree_reports(tmp_path, capsys):
    graph = _write_graph(tmp_path / "g.tsv", [(10, 20), (20, 35), (35, 10), (35, 7)])
    out = tmp_path / "deg.csv"
    printed = _node(tmp_path, capsys, graph, out)
    assert not node_labels_path(out).exists() and "nodes.csv" not in printed
    assert _degrees(out) == {7: 1, 10: 2, 20: 2, 35: 3}


@pytest.mark.parametrize("edges, numbered", [
    ([(10, 20), (20, 35), (35, 10), (35, 7)], False),  # integers, not 0..n-1
    (EDGES, False),
    ([(0, 1), (1, 2), (2, 0), (2, 3)], True),
])
def test_triangle_reports_get_a_table_unless_numbered(tmp_path, capsys, edges, numbered):
    graph = _write_graph(tmp_path / "g.tsv", edges)
    out = tmp_path / "r1.csv"
    _node(tmp_path, capsys, graph, out, "--protocol", "rr-triangles")
    table = node_labels_path(out)
    assert table.exists() != numbered
    rows = _rows(out)
    # at epsilon 60 randomized response keeps every bit: node v's rr_edge rows are its true
    # lower neighbours, here named through the table
    nx_graph = nx.Graph([(str(a), str(b)) for a, b in edges])
    labels = _labels(table) if table.exists() else [str(i) for i in range(nx_graph.number_of_nodes())]
    lower = {}
    for r in rows:
        if r["quantity"] == "rr_edge":
            lower.setdefault(labels[int(r["node"])], set()).add(labels[int(r["value"])])
    want = {}
    for v in nx_graph:
        below = {u for u in nx_graph[v] if labels.index(u) < labels.index(v)}
        if below:
            want[v] = below
    assert lower == want
