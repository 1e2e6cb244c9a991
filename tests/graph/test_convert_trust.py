"""Converters trust no graph object: lying subclasses, edited arrays and concurrent edits.

Issue 26, findings 1-3. Each case that crashed the old converters (segfault in scipy's raw
kernels or in reads of igraph's memory) runs in a child process: the child must end with a
Python exception (return code 1, a traceback naming the error) or a correct graph (return code
0), never a signal (a negative return code).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_child(code: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter importing this checkout of ldpgraph."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("MPLBACKEND", "Agg")
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def assert_no_signal(out: subprocess.CompletedProcess[str]) -> None:
    assert out.returncode >= 0, f"child killed by signal {-out.returncode}:\n{out.stderr[-2000:]}"


def assert_python_error(out: subprocess.CompletedProcess[str], error: str, *words: str) -> None:
    """The child ended with an uncaught ``error`` whose message holds ``words``."""
    assert_no_signal(out)
    assert out.returncode == 1, f"expected a Python exception, got rc {out.returncode}:\n{out.stdout}\n{out.stderr}"
    assert "Traceback" in out.stderr and error in out.stderr, out.stderr[-2000:]
    for word in words:
        assert word in out.stderr, out.stderr[-2000:]


def assert_ok(out: subprocess.CompletedProcess[str]) -> None:
    assert_no_signal(out)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok"), out.stdout


# --- finding 1: networkx ---------------------------------------------------------------------

LYING_NETWORKX = """
    import networkx as nx
    import numpy as np
    from ldpgraph.graph import from_networkx

    class Lying(dict):
        def __len__(self):
            real = dict.__len__(self)
            return {"more": real + 1, "huge": 1 << 20, "zero": 0}[{mode!r}]

    class LyingGraph(nx.Graph):
        adjlist_inner_dict_factory = Lying

    g = LyingGraph()
    g.add_edges_from((i, (i * 7 + 3) % 50) for i in range(50))
    g.add_edges_from((i, (i * 11 + 5) % 50) for i in range(50))
    out = from_networkx(g)
    ref = from_networkx(nx.Graph(list(g.edges())))
    assert out.n_nodes == ref.n_nodes and out.n_edges == ref.n_edges, (out.n_edges, ref.n_edges)
    assert np.array_equal(out.indptr, ref.indptr) and np.array_equal(out.indices, ref.indices)
    print("ok")
"""


@pytest.mark.parametrize("mode", ["more", "huge", "zero"])
def test_networkx_inner_dict_lying_about_len(mode: str) -> None:
    """An inner dict whose len() lies: the old code crashed (more, huge) or lost every edge (zero)."""
    assert_ok(run_child(LYING_NETWORKX.replace("{mode!r}", repr(mode))))


def test_networkx_neighbour_that_is_not_a_node() -> None:
    """A subclass whose inner dict yields a key that is not a node: a clear ValueError."""
    out = run_child("""
        import networkx as nx
        from ldpgraph.graph import from_networkx

        class Extra(dict):
            def __iter__(self):
                yield from dict.__iter__(self)
                yield 10**6

        class G(nx.Graph):
            adjlist_inner_dict_factory = Extra

        g = G()
        g.add_edges_from([(0, 1), (1, 2)])
        from_networkx(g)
    """)
    assert_python_error(out, "ValueError", "not a node")


def test_networkx_asymmetric_edit_in_process() -> None:
    """An undirected graph whose internal dicts were edited by hand: ValueError, in process."""
    nx = pytest.importorskip("networkx")
    from ldpgraph.graph import from_networkx

    g = nx.Graph([(0, 1), (1, 2)])
    g._adj[0][2] = {}  # one end only
    with pytest.raises(ValueError, match="not symmetric"):
        from_networkx(g)


def test_networkx_repeated_node_label() -> None:
    nx = pytest.importorskip("networkx")
    from ldpgraph.graph import from_networkx

    class Twice(dict):
        def items(self):  # every node listed twice
            return list(dict.items(self)) * 2

    class G(nx.Graph):
        adjlist_outer_dict_factory = Twice

        def adjacency(self):
            return iter(self._adj.items())

    g = G()
    g.add_edges_from([(0, 1), (1, 2)])
    with pytest.raises(ValueError, match="lists a node twice"):
        from_networkx(g)


CONCURRENT_NETWORKX = """
    import threading
    import networkx as nx
    import numpy as np
    from ldpgraph.graph import from_networkx
    from ldpgraph.graph.core import _check_csr

    rng = np.random.default_rng({seed})
    n = 1000
    g = nx.{cls}()
    g.add_nodes_from(range(n))
    g.add_edges_from(rng.integers(0, n, (5000, 2)).tolist())
    stop = threading.Event()

    def mutate():
        r = np.random.default_rng({seed} + 1)
        while not stop.is_set():
            pairs = r.integers(0, n + 200, (100, 2)).tolist()
            for u, v in pairs:
                g.add_edge(u, v)
            for u, v in pairs:  # every edge added is removed again: the graph does not grow (a
                if g.has_edge(u, v):  # MultiGraph kept half its parallel edges and grew without bound,
                    g.remove_edge(u, v)  # and the conversions slowed until the child timed out)
            extra = int(r.integers(n, n + 200))
            if extra in g:
                g.remove_node(extra)

    t = threading.Thread(target=mutate, daemon=True)
    t.start()
    built = errors = 0
    try:
        for _ in range(25):
            try:
                out = from_networkx(g)
            except (ValueError, RuntimeError) as exc:
                assert "changed" in str(exc) or "not a node" in str(exc) or "symmetric" in str(exc), exc
                errors += 1
                continue
            _check_csr(out.indptr, out.indices)  # a valid simple undirected graph
            assert out.node_ids.size == out.n_nodes
            built += 1
    finally:
        stop.set()
        t.join()
    print(built, errors, "ok")
"""


@pytest.mark.parametrize(("cls", "seed"), [("Graph", 1), ("Graph", 2), ("DiGraph", 3), ("MultiGraph", 4)])
def test_networkx_edited_by_another_thread(cls: str, seed: int) -> None:
    """A thread edits the graph during 25 conversions: valid graphs or clear errors, never a crash."""
    code = CONCURRENT_NETWORKX.replace("{seed}", str(seed)).replace("{cls}", cls)
    assert_ok(run_child(code))


# --- finding 2: igraph -----------------------------------------------------------------------


def test_igraph_raw_pointer_is_never_used() -> None:
    """A subclass whose _raw_pointer() returns a bad address: the old code crashed at once."""
    pytest.importorskip("igraph")
    out = run_child("""
        import igraph as ig
        from ldpgraph.graph import from_igraph, from_edge_array

        class Bad(ig.Graph):
            def _raw_pointer(self):
                return 0xDEADBEEF000

        edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (0, 1)]
        for directed in (False, True):
            g = from_igraph(Bad(n=6, edges=edges, directed=directed))
            ref = from_edge_array(edges, n_nodes=6)
            assert g.indptr.tolist() == ref.indptr.tolist()
            assert g.indices.tolist() == ref.indices.tolist()
            assert g.report.self_loops_dropped == 1
        print("ok")
    """)
    assert_ok(out)


def test_igraph_lying_edge_list() -> None:
    """A subclass whose get_edgelist() names a vertex beyond vcount(): a clear ValueError."""
    ig = pytest.importorskip("igraph")
    from ldpgraph.graph import from_igraph

    class Lying(ig.Graph):
        def get_edgelist(self):
            return [(0, 1), (1, 99)]

    with pytest.raises(ValueError, match="outside 0..2"):
        from_igraph(Lying(n=3, edges=[(0, 1)]))

    class NotPairs(ig.Graph):
        def get_edgelist(self):
            return [(0, 1, 2)]

    with pytest.raises(ValueError, match="pairs of integers"):
        from_igraph(NotPairs(n=3, edges=[(0, 1)]))

    class Short(ig.Graph):
        def get_edgelist(self):
            return [(0, 1), (2,)]

    class Huge(ig.Graph):
        def get_edgelist(self):
            return [(0, 2**40)]

    for lying in (Short, Huge):  # too few values; a value beyond the index type (read as int32)
        with pytest.raises(ValueError, match="pairs of integers"):
            from_igraph(lying(n=3, edges=[(0, 1)]))


CONCURRENT_IGRAPH = """
    import threading
    import igraph as ig
    import numpy as np
    from ldpgraph.graph import from_igraph
    from ldpgraph.graph.core import _check_csr

    rng = np.random.default_rng({seed})
    n = 1000
    g = ig.Graph(n=n, edges=rng.integers(0, n, (10000, 2)).tolist(), directed={directed})
    stop = threading.Event()

    def mutate():
        r = np.random.default_rng({seed} + 1)
        while not stop.is_set():
            g.add_vertices(5)
            g.add_edges(r.integers(0, g.vcount(), (500, 2)).tolist())
            g.delete_edges(r.choice(g.ecount(), 500, replace=False).tolist())
            g.delete_vertices(list(range(g.vcount() - 5, g.vcount())))

    t = threading.Thread(target=mutate, daemon=True)
    t.start()
    built = errors = 0
    try:
        for _ in range(25):
            try:
                out = from_igraph(g)
            except ValueError as exc:
                errors += 1
                continue
            _check_csr(out.indptr, out.indices)
            built += 1
    finally:
        stop.set()
        t.join()
    print(built, errors, "ok")
"""


@pytest.mark.parametrize(("directed", "seed"), [(False, 5), (True, 6)])
def test_igraph_edited_by_another_thread(directed: bool, seed: int) -> None:
    """The old code read igraph's vectors while another thread freed them: heap addresses as nodes."""
    pytest.importorskip("igraph")
    code = CONCURRENT_IGRAPH.replace("{seed}", str(seed)).replace("{directed}", str(directed))
    assert_ok(run_child(code))


# --- finding 3: scipy.sparse -----------------------------------------------------------------

EDITED_SCIPY = """
    import numpy as np
    import scipy.sparse as sp
    from ldpgraph.graph import from_scipy_sparse

    rng = np.random.default_rng(0)
    n = 200
    r, c = rng.integers(0, n, 2000), rng.integers(0, n, 2000)
    a = sp.coo_array((np.ones(2000), (r, c)), shape=(n, n))
    a = sp.{fmt}_array(a + a.T)
    {edit}
    from_scipy_sparse(a)
"""

SCIPY_EDITS = {
    "csr-index-huge": ("csr", "a.indices[::7] = 1337293376"),
    "csr-index-negative": ("csr", "a.indices[5] = -3"),
    "csr-index-just-out": ("csr", "a.indices[-1] = n"),
    "csr-indptr-decreasing": ("csr", "a.indptr[50] = a.indptr[60] + 10"),
    "csr-indptr-past-end": ("csr", "a.indptr[-1] = a.indptr[-1] + 1000"),
    "csc-index-huge": ("csc", "a.indices[3] = 2**31 - 1"),
    "coo-row-huge": ("coo", "a.coords[0][4] = 10**9"),
    "coo-col-negative": ("coo", "a.coords[1][4] = -1"),
    "bsr-index-huge": ("bsr", "a.indices[2] = 10**6"),
}


@pytest.mark.parametrize("case", sorted(SCIPY_EDITS))
def test_scipy_matrix_edited_after_construction(case: str) -> None:
    """Indices edited after construction: the old code crashed or kept garbage indices silently."""
    pytest.importorskip("scipy")
    fmt, edit = SCIPY_EDITS[case]
    code = EDITED_SCIPY.replace("{fmt}", fmt).replace("{edit}", edit)
    assert_python_error(run_child(code), "ValueError", "scipy.sparse", "not valid")


def test_scipy_edited_lil_and_dok_and_dia() -> None:
    """Formats without index arrays are read through their own public structures, checked."""
    sp = pytest.importorskip("scipy.sparse")
    from ldpgraph.graph import from_scipy_sparse

    a = sp.lil_array((4, 4))
    a[0, 1] = a[1, 0] = 1
    a.rows[0][0] = 9  # edited by hand
    with pytest.raises(ValueError, match="outside 0..3"):
        from_scipy_sparse(a)
    d = sp.dok_array((4, 4))
    d[0, 1] = d[1, 0] = 1
    d._dict[(0, 7)] = 1.0  # past the shape, behind dok's back
    with pytest.raises(ValueError, match="outside 0..3"):
        from_scipy_sparse(d)
    dia = sp.dia_array(np.ones((4, 4)) - np.eye(4))
    dia.offsets = dia.offsets[:1]  # fewer offsets than data rows
    with pytest.raises(ValueError, match="offsets"):
        from_scipy_sparse(dia)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "bsr", "lil", "dok", "dia"])
def test_scipy_every_format_gives_the_same_graph(fmt: str) -> None:
    """The checked readers of every format agree with the edge-array build."""
    sp = pytest.importorskip("scipy.sparse")
    from ldpgraph.graph import from_edge_array, from_scipy_sparse

    rng = np.random.default_rng(7)
    n = 30
    r, c = rng.integers(0, n, 120), rng.integers(0, n, 120)
    w = rng.choice([0.0, 1.0, 2.0], 120)
    a = sp.coo_array((w, (r, c)), shape=(n, n))
    keep = w != 0
    ref = from_edge_array(np.column_stack([r[keep], c[keep]]), n_nodes=n)
    g = from_scipy_sparse(a.asformat(fmt))
    assert g.indptr.tolist() == ref.indptr.tolist() and g.indices.tolist() == ref.indices.tolist()


def test_no_private_kernels_or_raw_memory_in_the_package() -> None:
    """No module of ldpgraph reads raw memory or calls scipy's private kernels. One use of ctypes is
    allowed, by name: the experiment outputs call libc's public ``renameat2`` (RENAME_EXCHANGE) with
    two paths, for the gap-free swap of --out; it reads no memory of another library."""
    package = ROOT / "ldpgraph"
    words = ("_raw_pointer", "from_address", "_sparsetools", "csr_tocsc", "ctypes")
    allowed = {("ldpgraph/experiments/outputs.py", "ctypes")}
    found = [
        f"{path.relative_to(ROOT)}: {word}"
        for path in package.rglob("*.py")
        for word in words
        if word in path.read_text(encoding="utf-8")
        and (path.relative_to(ROOT).as_posix(), word) not in allowed
    ]
    assert not found, found
    outputs = (package / "experiments" / "outputs.py").read_text(encoding="utf-8")
    assert "from_address" not in outputs and outputs.count("ctypes.CDLL(") == 1


def test_the_garbage_collector_is_paused_only_during_a_conversion():
    """from_networkx / from_igraph pause the cyclic collector while they read, and restore its state."""
    import gc

    import igraph as ig
    import networkx as nx

    from ldpgraph.graph import from_igraph, from_networkx

    seen = []

    class Spy(nx.Graph):
        def adjacency(self):
            seen.append(gc.isenabled())
            return super().adjacency()

    assert gc.isenabled()
    from_networkx(Spy([(0, 1), (1, 2)]))
    from_igraph(ig.Graph(n=3, edges=[(0, 1)]))
    assert seen == [False] and gc.isenabled()

    class Broken(nx.Graph):
        def adjacency(self):
            raise RuntimeError("dictionary changed size during iteration")

    with pytest.raises(RuntimeError, match="changed while ldpgraph read it"):
        from_networkx(Broken([(0, 1)]))
    assert gc.isenabled()  # restored on error too
    gc.disable()
    try:
        from_networkx(Spy([(0, 1)]))
        assert not gc.isenabled()  # a caller's disabled collector stays disabled
    finally:
        gc.enable()
