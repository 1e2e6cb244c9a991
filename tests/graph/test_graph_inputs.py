"""Graphs as users have them: names, CSV, headers, weights, directed lists, compressed files,
DataFrames, Parquet and scipy.sparse give the same graph as networkx's reading of the same data;
limits (decompression bombs, FIFOs, sizes) fail cleanly; the pyarrow fast paths agree with the
exact line parser."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import subprocess
import sys
import textwrap

import networkx as nx
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ldpgraph.graph import (
    Graph,
    edgelist,
    from_dataframe,
    load_graph,
    parse_edge_pairs,
    parse_edgelist,
    read_edgelist,
    read_parquet_edges,
)

NAMES = ["alice", "bob", "carol", "dave", "Émile", "zoë", "x-ray", "42b", "node 9"]


def labelled_edges(g: Graph) -> set[frozenset]:
    ids = g.node_ids.tolist()
    return {frozenset((ids[a], ids[b])) for a, b in g.edges().tolist()}


def assert_same_as_networkx(g: Graph, ref: nx.Graph) -> None:
    """Same nodes (labels, sorted) and same undirected edges, self-loops dropped."""
    assert g.node_ids.tolist() == sorted(ref.nodes)
    assert labelled_edges(g) == {frozenset(e) for e in ref.edges() if e[0] != e[1]}
    assert g.n_edges == ref.number_of_edges() - nx.number_of_selfloops(ref)


def random_named_edges(seed: int, m: int = 120, spaces: bool = False) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    names = [n for n in NAMES if spaces or " " not in n]
    return [(names[a], names[b]) for a, b in rng.integers(0, len(names), size=(m, 2))]


# -- the same graph as networkx ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_string_names_whitespace(seed: int, tmp_path) -> None:
    edges = random_named_edges(seed)
    path = tmp_path / "names.txt"
    path.write_text("# named\n" + "".join(f"{a} {b}\n" for a, b in edges), encoding="utf-8")
    g = read_edgelist(path)
    assert_same_as_networkx(g, nx.read_edgelist(path, nodetype=str))
    assert any("names" in note for note in g.report.notes)


@pytest.mark.parametrize("seed", range(3))
def test_csv_with_header_and_weights(seed: int, tmp_path) -> None:
    rng = np.random.default_rng(seed)
    edges = random_named_edges(seed, spaces=True)
    lines = ["source,target,weight"] + [f"{a},{b},{rng.random():.3f}" for a, b in edges]
    path = tmp_path / "edges.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    g = read_edgelist(path)
    ref = nx.parse_edgelist(lines[1:], delimiter=",", nodetype=str, data=False)
    assert_same_as_networkx(g, ref)
    notes = " | ".join(g.report.notes)
    assert "comma-separated" in notes and "header" in notes and "ignored ('weight')" not in notes
    assert "ignored (weight)" in notes
    assert g.report.lines_read == len(lines) and g.report.lines_skipped == 1
    with pytest.raises(ValueError, match=r"3 columns found, expected 2 \(strict\); pass columns=\(0, 1\)"):
        read_edgelist(path, strict=True)
    assert read_edgelist(path, strict=True, columns=(0, 1)).n_edges == g.n_edges


def test_tab_separated_names_with_spaces(tmp_path) -> None:
    edges = random_named_edges(4, spaces=True)
    path = tmp_path / "t.tsv"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in edges), encoding="utf-8")
    g = read_edgelist(path)
    assert_same_as_networkx(g, nx.read_edgelist(path, delimiter="\t", nodetype=str))


@pytest.mark.parametrize("seed", range(3))
def test_directed_weighted_integer_list(seed: int, tmp_path) -> None:
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, 40, size=(300, 2)) * 1000
    path = tmp_path / "w.txt"
    path.write_text("".join(f"{a}\t{b}\t{rng.random():.2f}\t{i}\n" for i, (a, b) in enumerate(pairs)))
    g = read_edgelist(path)
    ref = nx.read_edgelist(path, nodetype=int, data=False)
    assert_same_as_networkx(g, ref)
    assert g.node_ids.dtype == np.int64
    notes = " | ".join(g.report.notes)
    assert "4 columns per line" in notes and "both directions" in notes
    directed = nx.read_edgelist(path, nodetype=int, data=False, create_using=nx.DiGraph)
    h = load_graph(directed)
    both = sum(1 for u, v in directed.edges() if u < v and directed.has_edge(v, u))
    undirected = nx.Graph(directed)
    undirected.remove_edges_from(nx.selfloop_edges(undirected))
    assert h.report.notes[0] == (  # the counts networkx gives
        f"directed input symmetrised: {directed.number_of_edges():,} directed edges -> "
        f"{undirected.number_of_edges():,} undirected edges ({both:,} given in both directions)")
    assert h.report.reverse_duplicates_dropped == both
    np.testing.assert_array_equal(h.indices, g.indices)


def test_explicit_columns_and_delimiter() -> None:
    text = "t,a,b\n1,10,20\n2,20,30\n"
    g = parse_edgelist(text, columns=(1, 2), header=True)
    assert g.node_ids.tolist() == [10, 20, 30] and g.n_edges == 2
    assert parse_edge_pairs("1 2\n3 4\n", node_type="str").names.tolist() == ["1", "2", "3", "4"]
    with pytest.raises(ValueError, match="delimiter must be"):
        parse_edge_pairs("1 2", delimiter=";")
    with pytest.raises(ValueError, match="columns must be two different"):
        parse_edge_pairs("1 2", columns=(0, 0))
    with pytest.raises(ValueError, match="node_type must be"):
        parse_edge_pairs("1 2", node_type="float")
    with pytest.raises(ValueError, match=r"line 1: columns=\(0, 5\) asks for column 5"):
        parse_edge_pairs("1 2 3\n", columns=(0, 5))
    # " " is runs of blanks, not "detect": a comma in the first line then stays in the names
    assert parse_edge_pairs("a,b c,d\n", delimiter=" ").names.tolist() == ["a,b", "c,d"]
    assert parse_edge_pairs("a,b c,d\n").names.tolist() == ["a", "b c"]
    assert parse_edge_pairs("a,b\tc d\n", delimiter="\t").names.tolist() == ["a,b", "c d"]


def test_error_messages_say_what_was_expected() -> None:
    with pytest.raises(ValueError, match=r"^f, line 3: expected 3 columns \(as on line 2\), got 2; the line is 'c d'$"):
        parse_edge_pairs("# x\na b 1\nc d\n", source_name="f")
    with pytest.raises(ValueError, match=r"line 2: node id 'Émile' is not a non-negative integer \(the ids of line 1"):
        parse_edge_pairs("1 2\nÉmile 3\n")
    with pytest.raises(ValueError, match=r"line 2: node id '\\x00' is not a non-negative integer, nor a valid name"):
        parse_edge_pairs("alice bob\n\x00 bob\n")
    with pytest.raises(ValueError, match="'3 \ufffd'"):  # invalid UTF-8 shown as text
        parse_edge_pairs(b"1 2\n3 \xff\n")


def test_dataframe_inputs_match_networkx() -> None:
    edges = random_named_edges(7)
    df = pd.DataFrame(edges, columns=["source", "target"])
    df["weight"] = np.arange(len(df), dtype=float)
    ref = nx.from_pandas_edgelist(df)
    g = load_graph(df)
    assert_same_as_networkx(g, ref)
    assert g.report.notes[0] == "node ids from columns 'source' and 'target'; the other column ignored ('weight')"
    two = pd.DataFrame({"a": [3, 1, 2], "b": [1, 2, 5]})
    assert_same_as_networkx(from_dataframe(two), nx.from_pandas_edgelist(two, "a", "b"))
    assert from_dataframe(two).report.notes == ()
    with pytest.raises(ValueError, match="strict=True refuses extra columns"):
        load_graph(df.rename(columns={"source": "x", "target": "y"}), strict=True)
    assert load_graph(df, columns=("target", "source"), strict=True).n_edges == g.n_edges
    with pytest.raises(ValueError, match="column 'b' has a missing node id at row 1"):
        from_dataframe(pd.DataFrame({"a": [1, 2], "b": pd.array([1, None], dtype="Int64")}))
    with pytest.raises(TypeError, match="type double; node ids must be integers or strings"):
        from_dataframe(pd.DataFrame({"a": [1.0, 2.0], "b": [1.0, 3.0]}))
    with pytest.raises(TypeError, match="neither integers nor strings"):
        from_dataframe(pd.DataFrame({"a": [1, "x"], "b": [2, 3]}))
    with pytest.raises(ValueError, match="apply to edge-list files only"):
        load_graph(df, delimiter=",")


def test_parquet_edge_tables(tmp_path) -> None:
    edges = random_named_edges(9)
    table = pa.table({"src": [a for a, _ in edges], "dst": [b for _, b in edges],
                      "ts": np.arange(len(edges))})
    path = tmp_path / "edges.data"  # recognised by its magic bytes
    pq.write_table(table, path)
    g = load_graph(path)
    assert_same_as_networkx(g, nx.Graph(edges))
    assert_same_as_networkx(g, nx.from_pandas_edgelist(pd.read_parquet(path), "src", "dst"))
    assert g.report.source == str(path)
    dictionary = tmp_path / "dict.parquet"
    pq.write_table(table.set_column(0, "src", table.column("src").dictionary_encode()), dictionary)
    np.testing.assert_array_equal(read_parquet_edges(dictionary).indices, g.indices)
    ints = tmp_path / "ints.parquet"
    pq.write_table(pa.table({"u": [1, 2, 3], "v": [2, 3, 1]}), ints)
    assert read_edgelist(ints).degrees.tolist() == [2, 2, 2]
    assert read_edgelist(path, columns=("dst", "src")).n_edges == g.n_edges  # names, not positions
    with pytest.raises(ValueError, match="header apply to text edge lists, not to the Parquet file"):
        load_graph(ints, header=True)


def test_scipy_sparse_matches_networkx() -> None:
    ref = nx.gnm_random_graph(50, 200, seed=3)
    ref.add_edge(4, 4)
    g = load_graph(nx.to_scipy_sparse_array(ref, nodelist=range(50), format="coo"))
    assert_same_as_networkx(g, ref)
    assert g.report.self_loops_dropped == 1


# -- compressed files, limits, streams -----------------------------------------------------------


def test_compressions_by_magic_bytes(tmp_path) -> None:
    text = "".join(f"{a} {b}\n" for a, b in random_named_edges(1)).encode()
    plain = read_edgelist(_write(tmp_path / "p", text))
    for name, pack in (("g", gzip.compress), ("b", bz2.compress), ("x", lzma.compress)):
        g = read_edgelist(_write(tmp_path / name, pack(text)))
        np.testing.assert_array_equal(g.indices, plain.indices)
        assert g.node_ids.tolist() == plain.node_ids.tolist()
    cut = _write(tmp_path / "cut", lzma.compress(text)[:-20])
    with pytest.raises(ValueError, match=f"^{re.escape(str(cut))}: corrupt or truncated xz data"):
        read_edgelist(cut)
    zst = _write(tmp_path / "z", b"\x28\xb5\x2f\xfd" + b"\0" * 20)
    with pytest.raises(ValueError, match="zstd data is not read as an edge-list text; decompress"):
        read_edgelist(zst)


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def _bomb(path, pack, mib: int):
    """``mib`` MiB of "0 0\\n" as ``mib`` concatenated compressed members of 1 MiB each."""
    member = pack(b"0 0\n" * (1 << 18))
    path.write_bytes(member * mib)
    return path


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz"])
def test_bombs_are_refused_within_a_memory_bound(tmp_path, kind) -> None:
    # the bomb: 256 MiB of text in 261 KB of gzip (ratio ~1000), which peaked at 4.9 GB.
    # Text is decompressed 1 MiB at a time and the ratio checked after each MiB once 8 MiB are
    # out, so the bomb is refused before any parsing: the peak is a few MiB of buffers, whatever
    # the bomb's size (a 16 MiB parse block of "0 0" lines alone costs ~200 MB in pyarrow)
    pack = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}[kind]
    small = _bomb(tmp_path / "small", pack, 16)
    big = _bomb(tmp_path / "big", pack, 256 if kind == "gzip" else 64)
    script = textwrap.dedent(f"""
        import resource, sys
        sys.path.insert(0, {os.getcwd()!r})
        import numpy, pyarrow.csv, pyarrow.compute  # libraries loaded before the baseline
        from ldpgraph.graph import read_edgelist
        def kib(field):
            with open("/proc/self/status") as f:
                return next(int(ln.split()[1]) for ln in f if ln.startswith(field))
        try:  # Linux: reset the peak (VmHWM) to the resident size now, after the imports
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            before, peak = kib("VmRSS:"), lambda: kib("VmHWM:")
        except OSError:  # elsewhere: the peak since the start, imports included (a bound)
            before, peak = 0, lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for path in ({str(small)!r}, {str(big)!r}):
            try:
                read_edgelist(path)
            except ValueError as exc:
                print("refused:", exc)
            print("peak_mb", (peak() - before) / 1024)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.stdout.count("refused:") == 2, out.stdout + out.stderr
    assert out.stdout.count(f"{kind} data expands more than max_ratio = 100 times (9,437,184 bytes") == 2
    assert "decompression bomb? Pass max_ratio=None (--max-ratio 0)" in out.stdout
    peaks = [float(x.split()[0]) for x in out.stdout.split("peak_mb")[1:]]
    assert max(peaks) < 48, out.stdout  # MB above the size after the imports: measured 10-12 MB
    with pytest.raises(ValueError, match="more than max_bytes"):  # the absolute limit, alone
        read_edgelist(small, max_ratio=None, max_bytes=1 << 20)
    assert read_edgelist(small, max_ratio=None).n_edges == 0  # genuine after all: all self-loops


def test_size_limits_and_their_messages(tmp_path) -> None:
    path = _write(tmp_path / "e.txt", b"1 2\n" * 1000)
    with pytest.raises(ValueError, match="more than max_bytes = 100 bytes of text"):
        read_edgelist(path, max_bytes=100)
    assert read_edgelist(path, max_bytes=4000).n_edges == 1
    with pytest.raises(ValueError, match="max_ratio must be"):
        read_edgelist(path, max_ratio=0.5)
    long_line = _write(tmp_path / "long.txt", b"1" * 200)
    with pytest.raises(ValueError, match="exceeds 2"):
        read_edgelist(long_line)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_and_devices_are_refused_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is a FIFO, not a regular file"):
        read_edgelist(fifo)  # no writer: opening it would block forever
    if os.path.exists("/dev/zero"):
        with pytest.raises(ValueError, match="is a device"):
            load_graph("/dev/zero")
    with pytest.raises(ValueError, match="is a directory"):
        read_edgelist(tmp_path)


# -- the fast paths agree with the exact parser ------------------------------------------------


def set_arrow_min(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """Blocks of ``size`` bytes and more go to pyarrow, whether it is imported yet or not."""
    monkeypatch.setattr(edgelist, "_ARROW_MIN", size)
    monkeypatch.setattr(edgelist, "_ARROW_COLD", size)


def _big_text(rng: np.random.Generator, sep: bytes, n: int = 30_000) -> bytes:
    pairs = rng.integers(0, 10**12, size=(n, 2))
    return b"".join(b"%d%s%d\n" % (a, sep, b) for a, b in pairs.tolist())


@pytest.mark.parametrize("sep", [b"\t", b" "])
def test_pyarrow_numeric_blocks_agree_with_the_swar_parser(sep: bytes, monkeypatch) -> None:
    rng = np.random.default_rng(0)
    text = _big_text(rng, sep)
    assert len(text) > edgelist._ARROW_MIN
    monkeypatch.setattr(edgelist, "_ARROW_COLD", edgelist._ARROW_MIN)  # pyarrow imported or not
    fast = parse_edge_pairs(text).pairs
    set_arrow_min(monkeypatch, len(text) + 1)
    np.testing.assert_array_equal(fast, parse_edge_pairs(text).pairs)
    lines = text.split(b"\n")
    for bad, reason in ((b"-5" + sep + b"3", "is negative"), (b"5", "expected 2"),
                        (b"99999999999999999999" + sep + b"1", "exceeds"), (b"+5" + sep + b"1", "not a non")):
        broken = b"\n".join(lines[:20000] + [bad] + lines[20000:])
        for arrow_min in (1, len(broken) + 1):
            set_arrow_min(monkeypatch, arrow_min)
            with pytest.raises(ValueError, match=f"line 20001: .*{reason}"):
                parse_edge_pairs(broken)


@pytest.mark.parametrize("kind", ["csv-names", "ws-weights", "tsv-ints"])
def test_pyarrow_general_blocks_agree_with_the_line_parser(kind: str, monkeypatch) -> None:
    rng = np.random.default_rng(1)
    n = 20_000
    a, b = rng.integers(0, 500, n), rng.integers(0, 500, n)
    w = rng.random(n)
    if kind == "csv-names":
        lines = [f"n{x} {NAMES[x % 9]},m{y},{z:.3f}" for x, y, z in zip(a, b, w, strict=True)]
    elif kind == "ws-weights":
        lines = [f" {x}  {y}\t{z:.3f} # c\r" if i % 7 == 0 else f"{x} {y} {z:.3f}"
                 for i, (x, y, z) in enumerate(zip(a, b, w, strict=True))]
    else:
        lines = [f"{x}\t{y}\t{z:.3f}" for x, y, z in zip(a, b, w, strict=True)]
    text = ("\n".join(lines) + "\n").encode()
    fast = parse_edge_pairs(text)
    set_arrow_min(monkeypatch, len(text) + 1)
    slow = parse_edge_pairs(text)
    np.testing.assert_array_equal(fast.pairs, slow.pairs)
    assert (fast.names is None) == (slow.names is None)
    if fast.names is not None:
        assert fast.names.tolist() == slow.names.tolist() == sorted(set(fast.names.tolist()))
    broken = text.replace(lines[12345].encode(), lines[12345].encode() + b",x" if kind == "csv-names"
                          else b"7 \x00 1.0")
    for arrow_min in (1, len(broken) + 1):
        set_arrow_min(monkeypatch, arrow_min)
        with pytest.raises(ValueError, match="line 12346: "):
            parse_edge_pairs(broken)
