"""The CSR build (relabel, dedupe, symmetric CSR) against a plain reference build from Python sets.

The reference knows nothing of the kernels: it collects the undirected edges of the input in a
set, the directions seen per edge in a dict, and writes every sorted neighbour list out. The
fast build must give the same arrays (dtype int64) and the same load-report counts, on random
multigraphs with self-loops, repeated edges and both directions, on ids at the int32/int64
boundaries, on empty and one-edge inputs, and on the int64 branch (forced by a low threshold).
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.graph import core, from_edge_array


@pytest.fixture(autouse=True, params=["counting sorts", "numpy sorts"])
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The build under test: the crossover ``core._numpy_build`` forced one way or the other."""
    numpy_route = request.param == "numpy sorts"
    monkeypatch.setattr(core, "_numpy_build", lambda m, n: numpy_route)
    return str(request.param)


def reference(pairs: list[tuple[int, int]], n_nodes: int | None = None) -> dict:
    """Node ids, CSR arrays and report counts of the simple undirected graph, from sets."""
    ids = sorted({x for p in pairs for x in p}) if n_nodes is None else list(range(n_nodes))
    index = {x: i for i, x in enumerate(ids)}
    loops = sum(1 for a, b in pairs if a == b)
    directions: dict[tuple[int, int], set[bool]] = {}
    for a, b in pairs:
        if a != b:
            directions.setdefault((min(a, b), max(a, b)), set()).add(a < b)
    nbrs: list[list[int]] = [[] for _ in ids]
    for a, b in directions:
        nbrs[index[a]].append(index[b])
        nbrs[index[b]].append(index[a])
    indptr = [0]
    for row in nbrs:
        indptr.append(indptr[-1] + len(row))
    return {
        "node_ids": ids,
        "indptr": indptr,
        "indices": [j for row in nbrs for j in sorted(row)],
        "self_loops_dropped": loops,
        "duplicates_dropped": len(pairs) - loops - len(directions),
        "reverse_duplicates_dropped": sum(1 for d in directions.values() if len(d) == 2),
        "edges_kept": len(directions),
        "relabelled": ids != list(range(len(ids))),
    }


def assert_same(pairs: list[tuple[int, int]], n_nodes: int | None = None) -> None:
    arr = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    g = from_edge_array(arr, n_nodes=n_nodes)
    ref = reference(pairs, n_nodes)
    assert g.indptr.dtype == g.indices.dtype == g.degrees.dtype == np.int64
    assert g.node_ids.tolist() == ref["node_ids"]
    assert g.indptr.tolist() == ref["indptr"]
    assert g.indices.tolist() == ref["indices"]
    assert g.degrees.tolist() == np.diff(ref["indptr"]).tolist()
    r = g.report
    assert r.edges_read == len(pairs)
    assert r.n_nodes == len(ref["node_ids"])
    for field in ("self_loops_dropped", "duplicates_dropped", "reverse_duplicates_dropped", "edges_kept"):
        assert getattr(r, field) == ref[field], field
    if n_nodes is None:
        assert r.relabelled == ref["relabelled"]
    both = ref["reverse_duplicates_dropped"]
    assert any(f"{both:,} edges are given in both directions" in note for note in r.notes) == (both > 0)


def random_multigraph(rng: np.random.Generator, n: int, m: int) -> list[tuple[int, int]]:
    """m edges on n ids: loops, repeats and reverse copies of earlier edges mixed in."""
    pairs = rng.integers(0, n, size=(m, 2)).tolist()
    for i in range(1, m):
        kind = rng.integers(4)
        if kind == 0:  # a repeat of an earlier edge
            pairs[i] = list(pairs[rng.integers(i)])
        elif kind == 1:  # a reverse copy
            pairs[i] = pairs[rng.integers(i)][::-1]
        elif kind == 2 and rng.random() < 0.3:
            pairs[i] = [pairs[i][0], pairs[i][0]]
    return [(int(a), int(b)) for a, b in pairs]


@pytest.mark.parametrize("seed", range(40))
def test_random_multigraphs_match_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    m = int(rng.integers(0, 4 * n + 2))
    pairs = random_multigraph(rng, n, m)
    assert_same(pairs)
    assert_same(pairs, n_nodes=n + int(rng.integers(0, 3)))  # isolated nodes at the end


def test_larger_multigraph_matches_the_reference() -> None:
    rng = np.random.default_rng(123)
    pairs = random_multigraph(rng, 3_000, 60_000)
    assert_same(pairs)
    assert_same(pairs, n_nodes=3_001)


BOUNDARY_IDS = [
    0, 1, 2**30 - 1, 2**30, 2**31 - 2, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1, 2**32,
    -1, -(2**31), -(2**31) - 1, 2**63 - 1, -(2**63),
]


@pytest.mark.parametrize("seed", range(10))
def test_ids_at_the_int32_and_int64_boundaries(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    ids = rng.choice(BOUNDARY_IDS, size=int(rng.integers(2, len(BOUNDARY_IDS))), replace=False)
    pairs = [(int(rng.choice(ids)), int(rng.choice(ids))) for _ in range(int(rng.integers(1, 40)))]
    assert_same(pairs)


@pytest.mark.parametrize(
    "pairs",
    [
        [],
        [(0, 1)],
        [(1, 0)],
        [(5, 5)],
        [(2**31 - 1, 2**31)],
        [(-(2**63), 2**63 - 1), (2**63 - 1, -(2**63))],
        [(3, 3), (3, 3)],
        [(0, 1), (1, 0), (0, 1), (1, 0)],
        [(7, 9)] * 5,
    ],
)
def test_empty_and_tiny_inputs(pairs: list[tuple[int, int]]) -> None:
    assert_same(pairs)
    if all(0 <= x < 2**20 for p in pairs for x in p):
        top = max((x for p in pairs for x in p), default=-1) + 1
        assert_same(pairs, n_nodes=top)
        assert_same(pairs, n_nodes=top + 2)


def test_no_nodes() -> None:
    assert_same([], n_nodes=0)


@pytest.mark.parametrize("seed", range(8))
def test_int64_branch_matches_the_reference(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The int64 kernels (used from 2**30 nodes) checked on small graphs by lowering the threshold."""
    monkeypatch.setattr(core, "_INT32_NODES", 1)
    rng = np.random.default_rng(2000 + seed)
    n = int(rng.integers(1, 40))
    pairs = random_multigraph(rng, n, int(rng.integers(0, 3 * n + 2)))
    assert_same(pairs)
    assert_same(pairs, n_nodes=n)


@pytest.mark.parametrize("seed", range(12))
def test_undirected_igraph_matches_the_reference(seed: int) -> None:
    """igraph graphs with loops, parallel edges and isolated vertices give the reference CSR."""
    ig = pytest.importorskip("igraph")
    from ldpgraph.graph import from_igraph

    rng = np.random.default_rng(3000 + seed)
    n = int(rng.integers(1, 50))
    pairs = random_multigraph(rng, n, int(rng.integers(0, 4 * n + 2)))
    h = ig.Graph(n=n + 2, edges=pairs, directed=False)
    # igraph keeps no direction of an undirected edge: the reference sees each pair as (min, max)
    ref = reference([(min(a, b), max(a, b)) for a, b in pairs], n + 2)
    g = from_igraph(h)
    assert g.indptr.dtype == g.indices.dtype == np.int64
    assert g.indptr.tolist() == ref["indptr"] and g.indices.tolist() == ref["indices"]
    for field in ("self_loops_dropped", "duplicates_dropped", "reverse_duplicates_dropped", "edges_kept"):
        assert getattr(g.report, field) == ref[field], field


def test_widen_in_place_matches_astype() -> None:
    """The in-place int32 -> int64 widening of the build, on every size up to 300 and a large one."""
    rng = np.random.default_rng(4000)
    for k in [*range(301), 100_003]:
        values = rng.integers(-(2**31), 2**31, size=k, dtype=np.int64).astype(np.int32)
        buf = np.empty(k, dtype=np.int64)
        buf.view(np.int32)[k:] = values
        out = core._widen_in_place(buf)
        assert out is buf and out.dtype == np.int64
        assert np.array_equal(out, values.astype(np.int64)), k


@pytest.mark.parametrize(
    "pairs",
    [[], [(0, 0)], [(1, 1), (1, 1), (1, 1)], [(0, 0), (0, 1), (1, 1), (1, 0), (2, 2), (0, 2), (2, 2)],
     [(3, 3), (0, 3), (3, 3), (3, 0), (3, 1), (1, 3), (3, 3)]],
)
def test_igraph_loops_and_parallel_edges(pairs: list[tuple[int, int]]) -> None:
    ig = pytest.importorskip("igraph")
    from ldpgraph.graph import from_igraph

    g = from_igraph(ig.Graph(n=5, edges=pairs, directed=False))
    ref = reference([(min(a, b), max(a, b)) for a, b in pairs], 5)
    assert g.indptr.tolist() == ref["indptr"] and g.indices.tolist() == ref["indices"]
    assert (g.report.self_loops_dropped, g.report.duplicates_dropped) == (
        ref["self_loops_dropped"], ref["duplicates_dropped"])


def thread_the_second_pass(monkeypatch: pytest.MonkeyPatch, threaded: bool) -> None:
    """Make the second pass of every two-pass counting sort run in two threads (or in one)."""
    monkeypatch.setattr(core, "_PARALLEL_SORT", 0 if threaded else 2**62)
    monkeypatch.setattr(core, "_usable_cores", lambda: 2)


@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize("bits", [1, 2, 3])
@pytest.mark.parametrize("narrow", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_two_pass_counting_sorts_match_the_reference(
    bits: int, narrow: bool, seed: int, threaded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two-pass counting sorts (used above 2**16 keys) on small graphs, by lowering the threshold.

    With ``2**bits`` buckets at most, the buckets hold several keys each, the last one fewer
    than the others, and some none. ``threaded``: the buckets split between two threads (as
    above ``_PARALLEL_SORT`` entries on two cores).
    """
    thread_the_second_pass(monkeypatch, threaded)
    monkeypatch.setattr(core, "_SORT_DIRECT", 1)
    monkeypatch.setattr(core, "_SORT_BUCKET_BITS", bits)
    monkeypatch.setattr(core, "_numpy_build", lambda m, n: False)
    if not narrow:
        monkeypatch.setattr(core, "_INT32_NODES", 1)
    rng = np.random.default_rng(5000 + seed)
    n = int(rng.integers(2, 70))
    pairs = random_multigraph(rng, n, int(rng.integers(1, 5 * n)))
    assert_same(pairs)
    assert_same(pairs, n_nodes=n + 3)  # isolated nodes: empty buckets at the end
    assert_same([(0, 0)] * 3 + [(1, 0)], n_nodes=n)  # loops and one edge


@pytest.mark.parametrize("threaded", [False, True])
def test_two_pass_sort_by_key_is_stable(threaded: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_sort_by_key`` and ``_transpose`` against numpy's stable argsort, in one and two passes
    (the second in one thread or two)."""
    thread_the_second_pass(monkeypatch, threaded)
    rng = np.random.default_rng(6000)
    for direct in (1, 2**16):
        monkeypatch.setattr(core, "_SORT_DIRECT", direct)
        for n_keys in (1, 2, 5, 64, 1000):
            m = int(rng.integers(0, 3000))
            keys = rng.integers(0, n_keys, m).astype(np.int32)
            values = np.arange(m, dtype=np.int32)
            ptr, out = core._sort_by_key([keys, values], n_keys, np.int32)
            order = np.argsort(keys, kind="stable")
            assert out.tolist() == order.tolist()
            assert ptr.tolist() == [0, *np.cumsum(np.bincount(keys, minlength=n_keys)).tolist()]
            # its transpose: row i (a position) holds the one column keys[i]
            t_ptr, t_ind = core._transpose(ptr, out, max(m, 1), np.int32)
            assert t_ptr.tolist() == list(range(m + 1)) + [m] * (max(m, 1) - m)
            assert t_ind.tolist() == keys.tolist()
