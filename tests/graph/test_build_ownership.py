"""The build by ownership (``core._graph_from_owned_ids``, the route of ``read_edgelist``).

The columns are handed over in a list the build empties, may be int32 or int64, and go
through the three relabellings (ids exactly ``lo..hi``, a dense range with gaps, a sparse
sort): the graph must equal the plain sets reference of ``test_build_reference`` (imported),
the input arrays must be left unchanged, and the list emptied.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.graph import core
from tests.graph.test_build_reference import random_multigraph, reference


def check(u: np.ndarray, v: np.ndarray) -> None:
    pairs = [(int(a), int(b)) for a, b in zip(u.tolist(), v.tolist(), strict=True)]
    u0, v0 = u.copy(), v.copy()
    cols = [u, v]
    g = core._graph_from_owned_ids(cols, source="cols")
    assert cols == []
    assert np.array_equal(u, u0) and np.array_equal(v, v0) and u.dtype == u0.dtype
    ref = reference(pairs)
    assert g.indptr.dtype == g.indices.dtype == np.int64
    assert g.node_ids.tolist() == ref["node_ids"]
    assert g.indptr.tolist() == ref["indptr"]
    assert g.indices.tolist() == ref["indices"]
    r = g.report
    assert r.edges_read == len(pairs) and r.relabelled == ref["relabelled"]
    for field in ("self_loops_dropped", "duplicates_dropped", "reverse_duplicates_dropped", "edges_kept"):
        assert getattr(r, field) == ref[field], field


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize(
    ("n", "offset", "scale"),
    [
        (30, 0, 1),  # ids 0..n-1 (most present)
        (30, 1_000, 1),  # an offset range
        (30, 7, 997),  # a dense range with gaps (mapping table)
        (30, 0, 2**26 + 1),  # sparse ids (sort + binary search)
        (30, 2**31 - 31, 1),  # up to the int32 maximum
    ],
)
@pytest.mark.parametrize("seed", range(4))
def test_owned_build_equals_the_reference(dtype: type, n: int, offset: int, scale: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    pairs = np.array(random_multigraph(rng, n, 120), dtype=np.int64) * scale + offset
    if dtype is np.int32 and pairs.max() >= 2**31:
        pytest.skip("ids beyond int32")
    check(pairs[:, 0].astype(dtype), pairs[:, 1].astype(dtype))


def test_owned_build_of_int64_ids_beyond_int32() -> None:
    rng = np.random.default_rng(9)
    pairs = np.array(random_multigraph(rng, 40, 150), dtype=np.int64) * (2**40 + 3) + 2**31
    check(pairs[:, 0].copy(), pairs[:, 1].copy())


def test_owned_build_of_no_edges() -> None:
    check(np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))


@pytest.mark.parametrize("numpy_route", [False, True])
@pytest.mark.parametrize("offset", [0, 5, 2**31 - 200, -(2**31) - 5, 2**40, -(2**40)])
@pytest.mark.parametrize("seed", range(3))
def test_range_build_with_gaps_and_loop_only_ids(
    numpy_route: bool, offset: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids of a range no longer than the edge count (built on the range, absent ids dropped after).

    The lowest and highest ids occur only in self-loops (kept, isolated), some ids in between
    occur nowhere (dropped), and offsets put the range inside and outside int32. The graph must
    equal the sets reference and the relabel-first route (``_relabel_columns`` + ``_build_owned``).
    """
    monkeypatch.setattr(core, "_numpy_build", lambda m, n: numpy_route)
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(20, 80))
    pairs = np.array(random_multigraph(rng, n, 6 * n), dtype=np.int64)
    pairs = pairs[(pairs % 7 != 3).all(axis=1)]  # ids = 3 mod 7 occur nowhere
    pairs += 1
    pairs = np.concatenate((pairs, [[0, 0], [n + 1, n + 1], [n + 1, n + 1]]))  # loop-only ends
    rng.shuffle(pairs)
    pairs += offset
    u, v = pairs[:, 0].copy(), pairs[:, 1].copy()
    assert int(pairs.max() - pairs.min()) < len(pairs)  # the range route is taken
    check(u, v)
    g = core._graph_from_owned_ids([u.copy(), v.copy()], source="cols")
    cols = [u.copy(), v.copy()]
    ids, relabelled = core._relabel_columns(cols)
    h = core._build_owned(cols, ids.size, ids, source="cols", relabelled=relabelled)
    assert g.report == h.report
    for name in ("indptr", "indices", "node_ids"):
        assert np.array_equal(getattr(g, name), getattr(h, name)), name
    assert g.degrees[0] == g.degrees[-1] == 0 and g.report.self_loops_dropped >= 3
