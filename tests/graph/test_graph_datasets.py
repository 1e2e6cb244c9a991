"""Real SNAP graphs (skipped unless LDPGRAPH_DATA is set): sizes, degrees and triangles.

Expected values are the published / independently verified ones of
``shared/datasets/SOURCES.md``; the Wiki-Vote reverse-duplicate count is recomputed here
with plain Python sets.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from conftest import data_file

from ldpgraph.graph import (
    kstar_counts,
    load_graph,
    max_degree,
    read_edge_pairs,
    read_edgelist,
    triangle_count,
)


def test_facebook(facebook_path: Path) -> None:
    g = read_edgelist(facebook_path)
    assert (g.n_nodes, g.n_edges) == (4039, 88234)
    assert max_degree(g) == 1045
    assert triangle_count(g) == 1_612_010
    r = g.report
    assert (r.edges_read, r.lines_read, r.lines_skipped) == (88234, 88234, 0)
    assert (r.self_loops_dropped, r.duplicates_dropped) == (0, 0)
    assert not r.relabelled
    assert kstar_counts(g, 1) == 2 * 88234
    deg = g.degrees.tolist()
    assert kstar_counts(g, 3) == sum(d * (d - 1) * (d - 2) // 6 for d in deg)


def test_wiki_vote_directed_crlf_noncontiguous() -> None:
    path = data_file("Wiki-Vote.txt.gz")
    g = load_graph(path)
    assert (g.n_nodes, g.n_edges) == (7115, 100_762)
    assert max_degree(g) == 1065
    assert triangle_count(g) == 608_389
    r = g.report
    assert r.edges_read == 103_689  # edge lines
    assert (r.lines_read, r.lines_skipped) == (103_693, 4)  # all lines, header lines
    assert r.self_loops_dropped == 0
    assert r.reverse_duplicates_dropped == r.duplicates_dropped == 2927
    assert r.relabelled
    assert (g.node_ids[0], g.node_ids[-1]) == (3, 8297)

    # independent count of arcs whose reverse arc is also present
    arcs = set()
    with gzip.open(path, "rt", newline="") as f:
        for line in f:
            if not line.startswith("#"):
                a, b = line.split()
                arcs.add((int(a), int(b)))
    assert len(arcs) == 103_689
    mutual = sum(1 for a, b in arcs if a < b and (b, a) in arcs)
    assert mutual == 2927


def test_email_enron_both_directions() -> None:
    path = data_file("Email-Enron.txt.gz")
    g = read_edgelist(path)
    assert (g.n_nodes, g.n_edges) == (36_692, 183_831)
    assert max_degree(g) == 1383
    assert triangle_count(g) == 727_044
    r = g.report
    assert r.edges_read == 367_662
    assert r.reverse_duplicates_dropped == r.duplicates_dropped == 183_831
    assert not r.relabelled


def test_plain_and_gzip_real_file_agree(facebook_path: Path, tmp_path: Path) -> None:
    plain = tmp_path / "facebook.txt"
    plain.write_bytes(gzip.decompress(facebook_path.read_bytes()))
    a, b = read_edge_pairs(plain), read_edge_pairs(facebook_path)
    np.testing.assert_array_equal(a.pairs, b.pairs)
    ref = np.loadtxt(plain, dtype=np.int64)
    np.testing.assert_array_equal(a.pairs, ref)


@pytest.mark.parametrize("name", ["t8.shakespeare.txt.gz"])
def test_non_edge_list_file_is_rejected_with_line(name: str) -> None:
    path = data_file(name)
    # Line 1 has a comma, so the fields are taken as comma-separated names (two of them: a
    # valid edge); line 2 has three fields, and is where the file stops being an edge list.
    with pytest.raises(ValueError, match=f"{name}, line 2: expected 2 columns .*got 3; the line is 'is presented"):
        read_edgelist(path)
