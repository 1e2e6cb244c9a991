"""Small inputs load without scipy.sparse and pyarrow, into the same Graph as the fast kernels.

Below ``core._SMALL_EDGES`` edges (while scipy.sparse is not imported) the build sorts int64
keys with numpy; below ``edgelist._ARROW_COLD`` bytes a block (while pyarrow is not imported)
is parsed by the numpy SWAR parser. Each route is checked here against the other on both
sides of its crossover (moved by monkeypatching), and in a fresh process ``import ldpgraph``
plus ``load_dataset("facebook")`` (on the serial start-up path of ``ldpgraph experiment``) or
``read_edgelist`` of a small file must leave scipy.sparse and pyarrow unimported and give the
graph built in this process by the counting sorts. The exact values of both routes are
checked against a sets reference in ``test_build_reference`` (every test there runs twice).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ldpgraph.graph import Graph, core, edgelist, from_edge_array, read_edgelist

ROOT = Path(__file__).resolve().parents[2]


def assert_same_graph(a: Graph, b: Graph) -> None:
    for name in ("indptr", "indices", "node_ids"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.report == b.report


def fresh_process(code: str) -> dict:
    """Run ``code`` in a new interpreter (repository root on the path); its last line as JSON."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


# In the fresh process: scipy.sparse if imported at all, pyarrow if imported by the load itself
# (not by ``import ldpgraph``, which is not this test's business)
LOADED = (
    "before = set(sys.modules)\n"
    "def loaded():\n"
    "    return [m for m in ('scipy.sparse', 'pyarrow') if m in sys.modules"
    " and (m == 'scipy.sparse' or m not in before)]\n"
)


def multigraph_file(path: Path, seed: int, m: int, n: int) -> Path:
    """An edge list with a comment, loops, repeats, reverse copies and ids with gaps."""
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, n, size=(m, 2)) * 3 + 5
    pairs[: m // 10, 1] = pairs[: m // 10, 0]  # self-loops
    pairs[m // 10 : m // 5] = pairs[m // 5 : 3 * m // 10, ::-1]  # reverse copies
    pairs[m // 5 : m // 4] = pairs[m // 4 : 3 * m // 10]  # repeats
    rng.shuffle(pairs)
    path.write_text("# a small multigraph\n" + "".join(f"{a}\t{b}\n" for a, b in pairs.tolist()))
    return path


def test_numpy_build_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "scipy.sparse", raising=False)
    small = core._SMALL_EDGES
    assert core._numpy_build(0, 0) and core._numpy_build(small - 1, 2**31 - 1)
    assert not core._numpy_build(small, 10)  # the crossover
    assert not core._numpy_build(10, 2**31)  # 2 n**2 would not fit int64
    monkeypatch.setitem(sys.modules, "scipy.sparse", np)  # imported already: its kernels win
    assert not core._numpy_build(10, 10)


@pytest.mark.parametrize("seed", range(3))
def test_both_sides_of_the_build_crossover(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same edges just below and at the crossover (moved to their count) give the same Graph."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(20_000, 60_000))
    pairs = rng.integers(0, int(rng.integers(50, 20_000)), size=(m, 2))
    pairs[: m // 7, 1] = pairs[: m // 7, 0]
    pairs[m // 7 : m // 3] = pairs[m // 3 : m // 3 + (m // 3 - m // 7), ::-1]
    monkeypatch.delitem(sys.modules, "scipy.sparse", raising=False)  # as in a fresh process
    graphs = []
    for crossover in (m + 1, m):  # numpy sorts, then the counting sorts
        monkeypatch.setattr(core, "_SMALL_EDGES", crossover)
        assert core._numpy_build(m, m) == (crossover > m)
        graphs.append(from_edge_array(pairs))
    assert_same_graph(*graphs)
    g = graphs[0]
    assert g.report.self_loops_dropped == int(np.count_nonzero(pairs[:, 0] == pairs[:, 1]))


def test_both_sides_of_the_parser_crossover(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = multigraph_file(tmp_path / "g.txt", 1, 40_000, 5_000)
    path.write_text(path.read_text().replace("# a small multigraph\n", ""))  # no comment: pyarrow may run
    calls = []
    arrow_block = edgelist._arrow_block
    monkeypatch.setattr(edgelist, "_arrow_block", lambda *a, **kw: calls.append(1) or arrow_block(*a, **kw))
    graphs = []
    for limit in (1 << 40, 0):  # the SWAR parser, then pyarrow
        monkeypatch.setattr(edgelist, "_ARROW_COLD", limit)
        monkeypatch.setattr(edgelist, "_ARROW_MIN", limit)
        graphs.append(read_edgelist(path))
        assert len(calls) == (limit == 0)
    assert_same_graph(*graphs)


def test_small_file_in_a_fresh_process_imports_neither_scipy_sparse_nor_pyarrow(tmp_path: Path) -> None:
    path = multigraph_file(tmp_path / "small.txt", 2, 30_000, 4_000)
    code = (
        "import json, sys\n"
        "import ldpgraph\n"
        "from ldpgraph.graph import read_edgelist\n"
        f"{LOADED}"
        f"g = read_edgelist({str(path)!r})\n"
        "print(json.dumps({'modules': loaded(),"
        " 'indptr': g.indptr.tolist(), 'indices': g.indices.tolist(), 'ids': g.node_ids.tolist(),"
        " 'report': [g.report.self_loops_dropped, g.report.duplicates_dropped,"
        " g.report.reverse_duplicates_dropped, g.report.edges_kept, g.report.lines_read]}))\n"
    )
    out = fresh_process(code)
    assert out["modules"] == []
    import scipy.sparse  # noqa: F401 - here the counting sorts build the reference

    g = read_edgelist(path)
    r = g.report
    assert out["indptr"] == g.indptr.tolist() and out["indices"] == g.indices.tolist()
    assert out["ids"] == g.node_ids.tolist()
    assert out["report"] == [r.self_loops_dropped, r.duplicates_dropped, r.reverse_duplicates_dropped,
                             r.edges_kept, r.lines_read]
    assert r.self_loops_dropped >= 3_000 and r.reverse_duplicates_dropped > 0  # the file is adversarial


def test_facebook_at_start_up_imports_no_scipy_sparse() -> None:
    """``import ldpgraph; load_dataset("facebook")`` in a fresh process: no scipy.sparse, same graph."""
    code = (
        "import hashlib, json, sys\n"
        "import ldpgraph\n"
        "from ldpgraph.datasets import load_dataset\n"
        f"{LOADED}"
        "g = load_dataset('facebook')\n"
        "h = hashlib.sha256(g.indptr.tobytes() + g.indices.tobytes() + g.node_ids.tobytes()).hexdigest()\n"
        "print(json.dumps({'modules': loaded(),"
        " 'hash': h, 'n': [g.n_nodes, g.n_edges]}))\n"
    )
    out = fresh_process(code)
    assert out["modules"] == []
    assert out["n"] == [4039, 88234]
    import hashlib

    import scipy.sparse  # noqa: F401 - the counting sorts build the graph compared with

    from ldpgraph.datasets import load_dataset

    g = load_dataset("facebook")
    assert not core._numpy_build(g.n_edges, g.n_nodes)
    assert out["hash"] == hashlib.sha256(g.indptr.tobytes() + g.indices.tobytes() + g.node_ids.tobytes()).hexdigest()


@pytest.mark.parametrize("seed", range(3))
def test_named_nodes_give_the_same_graph_on_both_routes(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """String ids (positions in the sorted names) with loops, repeats and reverse copies."""
    rng = np.random.default_rng(40 + seed)
    names = [f"node-{i}" for i in rng.permutation(300)]
    pairs = rng.integers(0, 300, size=(2_000, 2))
    pairs[:100, 1] = pairs[:100, 0]
    pairs[100:400] = pairs[400:700, ::-1]
    text = "".join(f"{names[a]} {names[b]}\n" for a, b in pairs.tolist())
    graphs = []
    for numpy_route in (True, False):
        monkeypatch.setattr(core, "_numpy_build", lambda m, n, numpy_route=numpy_route: numpy_route)
        graphs.append(edgelist.parse_edgelist(text))
    assert_same_graph(*graphs)
    g = graphs[0]
    assert g.node_ids.tolist() == sorted({names[x] for x in pairs.ravel().tolist()})
    edges = {frozenset((names[a], names[b])) for a, b in pairs.tolist() if a != b}
    got = {frozenset((g.node_ids[a], g.node_ids[b])) for a, b in g.edges().tolist()}
    assert got == edges and g.report.self_loops_dropped == int(np.count_nonzero(pairs[:, 0] == pairs[:, 1]))
