"""The noisy-graph broadcast of the two-round protocols packed (ldpgraph-broadcast-edges 2), and the
edge-list version 1 still read: the same noisy graph, run id and header from either."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ldpgraph.datasets import resolve_graph
from ldpgraph.protocols import registry
from ldpgraph.protocols.deploy_triangles import DLAP_PROTOCOL, TriangleBroadcast
from ldpgraph.run import run_in_memory
from ldpgraph.run.files import read_broadcast, write_broadcast
from ldpgraph.run.trianglefiles import edge_list_bytes, read_triangle_broadcast, write_triangle_broadcast

CASES = [
    ("two-round-triangles-dlap", {}),
    ("two-round-triangles-dlap", {"private_bound": True}),
    ("arr-triangles", {}),
    ("avg-clustering", {}),
    ("adaptive-clustering", {}),
    ("two-round-four-cycles-dlap", {}),
]


def _split(path):
    tag, head, body = path.read_bytes().split(b"\n", 2)
    return tag.decode(), json.loads(head[2:]), body


@pytest.mark.parametrize(("name", "options"), CASES)
def test_packed_and_edge_list_files_give_the_same_noisy_graph(tmp_path, name, options):
    g = resolve_graph("er:n=45,p=0.2", rng=1)
    run = run_in_memory(name, g, 2.0, sampler=3, **options)
    proto, b = registry.get(name), run.broadcasts[0]
    n = b.n_nodes
    packed = write_broadcast(proto, tmp_path / "p.txt", b)
    text = write_triangle_broadcast(tmp_path / "t.txt", b, version=1)
    tag, head, body = _split(packed)
    assert tag == "# ldpgraph-broadcast-edges 2" and _split(text)[0] == "# ldpgraph-broadcast-edges 1"
    assert head == _split(text)[1] == json.loads(json.dumps(b.header()))  # the header as before
    # the body by enumeration: pair (j, k), j < k, at bit C(k, 2) + j, most significant bit first
    assert len(body) == (n * (n - 1) // 2 + 7) // 8
    edges = set()
    for k in range(n):
        for j in range(k):
            pos = k * (k - 1) // 2 + j
            if body[pos // 8] >> (7 - pos % 8) & 1:
                edges.add((k, j))
    lines = text.read_text().splitlines()[2:]
    assert edges == {tuple(int(t) for t in line.split()) for line in lines}
    assert len(edges) == b.index.size > 0
    plan = run.plan
    a, c = read_broadcast(proto, packed, plan), read_broadcast(proto, text, plan)
    for back in (a, c):
        assert np.array_equal(back.index, b.index) and back.run_id == b.run_id
        assert back.header() == b.header()
    assert packed.stat().st_size < text.stat().st_size


def test_a_hand_written_edge_list_of_version_1_still_reads(tmp_path):
    b = TriangleBroadcast.build(DLAP_PROTOCOL, 4, 0.5, 3, [0, 5])  # pairs (1, 0) and (3, 2)
    path = tmp_path / "old.txt"
    path.write_text("# ldpgraph-broadcast-edges 1\n# " + json.dumps(b.header(), sort_keys=True) + "\n1 0\n3 2\n")
    back = read_triangle_broadcast(path)
    assert back.index.tolist() == [0, 5] and back.run_id == b.run_id
    new = write_triangle_broadcast(tmp_path / "new.txt", b)
    # C(4, 2) = 6 bits in one byte: pair 0 and pair 5 set, the two padding bits 0
    assert _split(new)[2] == bytes([0b10000100])
    assert read_triangle_broadcast(new).index.tolist() == [0, 5]


def test_packed_files_that_are_cut_padded_or_of_an_unknown_version_are_refused(tmp_path):
    b = TriangleBroadcast.build(DLAP_PROTOCOL, 4, 0.5, 3, [0, 5])
    path = write_triangle_broadcast(tmp_path / "b.txt", b)
    tag, head, body = path.read_bytes().split(b"\n", 2)
    bad = tmp_path / "bad.txt"
    for forged, msg in [
        (body[:0], "a packed body of 1 bytes expected for 4 nodes, got 0"),
        (body + b"\0", "got more"),
        (bytes([body[0] | 1]), "padding bits"),
        (bytes([body[0] ^ 0b10000000]), "header says 2 edges, the file holds 1"),
    ]:
        bad.write_bytes(b"\n".join([tag, head, forged]))
        with pytest.raises(ValueError, match=msg):
            read_triangle_broadcast(bad)
    bad.write_bytes(b"\n".join([b"# ldpgraph-broadcast-edges 3", head, body]))
    with pytest.raises(ValueError, match="line 1: not an ldpgraph-broadcast-edges version 2"):
        read_triangle_broadcast(bad)
    bad.write_bytes(tag + b"\n" + head)
    with pytest.raises(ValueError, match="line 2: truncated"):
        read_triangle_broadcast(bad)
    with pytest.raises(ValueError, match="versions are 1 .edge list. and 2"):
        write_triangle_broadcast(bad, b, version=3)


def test_the_writer_packs_unless_the_edge_list_is_shorter(tmp_path):
    """By default the smaller body: one noisy edge among 100 nodes is an edge list (version 1, as long
    as edge_list_bytes says), a dense noisy graph the packed bits."""
    sparse = TriangleBroadcast.build(DLAP_PROTOCOL, 100, 1.0, 3, [4000])  # pair (89, 84)
    path = write_triangle_broadcast(tmp_path / "s.txt", sparse)
    tag, _, body = _split(path)
    assert tag == "# ldpgraph-broadcast-edges 1" and body == b"89 84\n"
    assert edge_list_bytes(sparse.index) == len(body) < (100 * 99 // 2 + 7) // 8
    assert read_triangle_broadcast(path).index.tolist() == [4000]
    dense = TriangleBroadcast.build(DLAP_PROTOCOL, 100, 1.0, 3, np.arange(0, 4950, 7))
    tag, _, body = _split(write_triangle_broadcast(tmp_path / "d.txt", dense))
    assert tag == "# ldpgraph-broadcast-edges 2" and len(body) == 619
    assert len(body) < edge_list_bytes(dense.index)
