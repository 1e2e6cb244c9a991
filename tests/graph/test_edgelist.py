"""Edge-list parsing: format, errors with line numbers, chunking, gzip."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest
from edgelist_reference import outcome_of, reference_outcome

from ldpgraph.graph import edgelist
from ldpgraph.graph.edgelist import (
    parse_edge_pairs,
    parse_edgelist,
    read_edge_pairs,
    read_edgelist,
)

MAX_ID = 2**63 - 1


def reference_pairs(text: bytes) -> list[tuple[int, int]]:
    """Independent, obviously-correct parser of the documented format (valid input only)."""
    out = []
    for line in text.split(b"\n"):
        body = line.split(b"#")[0]
        tokens = re.split(rb"[ \t\r]+", body.strip(b" \t\r"))
        if tokens == [b""]:
            continue
        assert len(tokens) == 2
        out.append((int(tokens[0]), int(tokens[1])))
    return out


def random_edgelist(rng: np.random.Generator, n_lines: int) -> bytes:
    """Valid text exercising every legal variation: separators, CRLF, comments, long ids."""
    lines = []
    for _ in range(n_lines):
        kind = rng.random()
        if kind < 0.05:
            lines.append(b"# comment \xff\x00 with 1 2 3 junk")
        elif kind < 0.08:
            lines.append(rng.choice([b"", b"   ", b"\t", b"\r", b" \t "]))
        else:
            ids = []
            for _ in range(2):
                digits = int(rng.choice([1, 2, 3, 7, 8, 9, 15, 16, 17, 19]))
                hi = min(10**digits - 1, MAX_ID)
                ids.append(int(rng.integers(10 ** (digits - 1) if digits > 1 else 0, hi + 1)))
            if rng.random() < 0.05:
                ids[0] = MAX_ID
            seps = [b" ", b"\t", b"  ", b" \t ", b"\r"]
            lead = rng.choice([b"", b" ", b"\t"])
            mid = seps[int(rng.integers(len(seps)))]
            trail = rng.choice([b"", b" ", b"\r", b" # trailing", b"\t#x"])
            zeros = b"0" * int(rng.integers(0, 2)) if ids[1] < 10**17 else b""
            lines.append(lead + str(ids[0]).encode() + mid + zeros + str(ids[1]).encode() + trail)
    ending = rng.choice([b"\n", b"\r\n"])
    text = ending.join(lines)
    if rng.random() < 0.5:
        text += ending
    return text


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny chunks: many chunks, the threaded path, and lines across chunk limits."""
    monkeypatch.setattr(edgelist, "_CHUNK", 97)


# -- format -------------------------------------------------------------------------------------


def test_basic_format_variations() -> None:
    text = b"# header\n# Nodes: 3\n\n0 1\r\n1\t2\n  2    0  \n3 4 # note\n007 8"
    p = parse_edge_pairs(text)
    assert p.pairs.tolist() == [[0, 1], [1, 2], [2, 0], [3, 4], [7, 8]]
    assert p.pairs.dtype == np.int64
    assert p.lines_read == 8
    g = parse_edgelist(text)
    assert (g.report.lines_read, g.report.lines_skipped, g.report.edges_read) == (8, 3, 5)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [1 << 20, 97, 8])
def test_random_valid_text_matches_reference(
    seed: int, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edgelist, "_CHUNK", chunk)
    text = random_edgelist(np.random.default_rng(seed), 400)
    got = parse_edge_pairs(text).pairs
    assert [tuple(r) for r in got.tolist()] == reference_pairs(text)


def test_fast_and_slow_paths_agree() -> None:
    text = random_edgelist(np.random.default_rng(11), 300) + b"\n"
    buf = np.full(edgelist._PAD + len(text), 32, dtype=np.uint8)
    words = np.ndarray((buf.size - 7,), dtype="<u8", buffer=buf, strides=(1,))
    fast = edgelist._parse_chunk_fast(text, buf, words)
    assert fast is not None
    dialect = edgelist._Dialect(None, 2, (0, 1), False, 1)
    u, v = edgelist._parse_lines(text, 1, dialect, "x")
    np.testing.assert_array_equal(fast[0::2], u)
    np.testing.assert_array_equal(fast[1::2], v)


def test_long_ids_and_boundaries() -> None:
    ids = [0, 9, 10**8 - 1, 10**8, 12345678901, 10**16 - 1, 10**16, 10**18, MAX_ID]
    text = "".join(f"{a} {b}\n" for a, b in zip(ids, ids[::-1], strict=True))
    assert parse_edge_pairs(text).pairs.tolist() == [[a, b] for a, b in zip(ids, ids[::-1], strict=True)]


def test_zero_padded_id_longer_than_19_digits_is_accepted() -> None:
    # legal but unusual: the fast path gives up, the exact pass accepts it
    assert parse_edge_pairs("0000000000000000000000042 7\n").pairs.tolist() == [[42, 7]]


def test_empty_and_comment_only_inputs() -> None:
    for text in (b"", b"\n\n", b"# only a comment", b"# a\n\r\n   \n"):
        p = parse_edge_pairs(text)
        assert p.pairs.shape == (0, 2)
    assert parse_edge_pairs(b"").lines_read == 0
    assert parse_edge_pairs(b"# a\n\r\n   \n").lines_read == 3
    g = parse_edgelist(b"# nothing\n")
    assert (g.n_nodes, g.n_edges) == (0, 0)


def test_input_kinds_agree() -> None:
    text = "# c\n1 2\n2 3\r\n\n3 1\n"
    ref = parse_edge_pairs(text.encode()).pairs
    for data in (text, bytearray(text.encode()), memoryview(text.encode()), text.splitlines(),
                 text.splitlines(keepends=True), [s.encode() for s in text.splitlines()],
                 iter(text.splitlines())):
        np.testing.assert_array_equal(parse_edge_pairs(data).pairs, ref)


def test_input_type_errors(tmp_path) -> None:
    with pytest.raises(TypeError, match="data must be"):
        parse_edge_pairs(12)
    with pytest.raises(TypeError, match="read_edgelist"):
        parse_edge_pairs(tmp_path / "x.txt")
    with pytest.raises(TypeError, match="line 2 must be str or bytes"):
        parse_edge_pairs(["1 2", 3])
    with pytest.raises(TypeError, match="path must be"):
        read_edgelist(b"file.txt")


# -- errors -------------------------------------------------------------------------------------

BAD_LINES = [
    (b"1 x", "node id 'x' is not a non-negative integer \\(the ids of line 3 are integers"),
    (b"1.5 2", "node id '1.5' is not a non-negative integer"),
    (b"+1 2", "node id '\\+1' is not a non-negative integer"),
    (b"-3 2", "node id -3 is negative"),
    (b"5", "expected 2 columns \\(two node ids\\), got 1"),
    (b"1 2 3", "expected 2 columns \\(two node ids\\), got 3"),
    (b"1 2 0.5", "expected 2 columns \\(two node ids\\), got 3"),
    (b"9223372036854775808 1", "node id 9223372036854775808 exceeds 2\\*\\*63 - 1"),
    (b"1 99999999999999999999", "node id 99999999999999999999 exceeds 2\\*\\*63 - 1"),
    (b"\x00\xff\xfe garbage", "node id '.x00\ufffd\ufffd' is not a non-negative integer"),
    (b"1\x0b2", "node id '1.x0b2' is not a non-negative integer"),
    (b"1,2", "node id '1,2' is not a non-negative integer"),
]


@pytest.mark.parametrize(("bad", "reason"), BAD_LINES)
@pytest.mark.parametrize("chunk", [1 << 20, 97])
def test_malformed_line_names_source_and_line(
    bad: bytes, reason: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edgelist, "_CHUNK", chunk)
    monkeypatch.setattr(edgelist, "_BLOCK", 4 * chunk)
    lines = [b"# header", b""] + [f"{i} {i + 1}".encode() for i in range(60)]
    lines.insert(41, bad)  # line 42
    lines.append(b"1 x")  # a later error must not be the one reported
    with pytest.raises(ValueError, match=f"^my.txt, line 42: {reason}") as info:
        parse_edge_pairs(b"\r\n".join(lines), source_name="my.txt")
    shown = repr(bad.decode("utf-8", "replace"))
    assert str(info.value).endswith(f"the line is {shown}")  # as text, without its CR


def test_error_on_first_and_last_line() -> None:
    with pytest.raises(ValueError, match="^<input>, line 1: expected 2 columns"):
        parse_edge_pairs(b"7\n1 2\n")
    with pytest.raises(ValueError, match="^<input>, line 3: node id -1 is negative"):
        parse_edge_pairs(b"1 2\n3 4\n-1 5")


def test_error_in_file_names_file(tmp_path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"0 1\n1 2\n2 two\n")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}, line 3: node id 'two'"):
        read_edgelist(path)


# -- files --------------------------------------------------------------------------------------


def test_gzip_and_plain_give_the_same_graph(tmp_path) -> None:
    text = random_edgelist(np.random.default_rng(5), 500)
    plain = tmp_path / "g.txt"
    plain.write_bytes(text)
    packed = tmp_path / "g.whatever"  # detected by magic bytes, not by name
    packed.write_bytes(gzip.compress(text))
    a, b = read_edgelist(plain), read_edgelist(str(packed))
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.node_ids, b.node_ids)
    assert a.report.lines_read == b.report.lines_read
    assert a.report.lines_skipped == b.report.lines_skipped
    assert a.report.lines_read - a.report.lines_skipped == a.report.edges_read
    assert a.report.source == str(plain)
    np.testing.assert_array_equal(read_edge_pairs(packed).pairs, read_edge_pairs(plain).pairs)


def test_truncated_and_corrupt_gzip_fail_cleanly(tmp_path) -> None:
    data = gzip.compress(b"".join(f"{i} {i + 1}\n".encode() for i in range(2000)))
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=f"^{re.escape(str(cut))}: corrupt or truncated gzip"):
        read_edgelist(cut)
    bad = tmp_path / "bad.txt.gz"
    bad.write_bytes(data[:20] + bytes(b ^ 0x55 for b in data[20:40]) + data[40:])
    with pytest.raises(ValueError, match="corrupt or truncated gzip"):
        read_edgelist(bad)


def test_missing_file_raises_oserror(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        read_edgelist(tmp_path / "absent.txt")


# -- graph building from text -------------------------------------------------------------------


def test_self_loops_and_duplicates_are_counted(small_chunks: None) -> None:
    text = b"\n".join(
        [b"# directed, messy", b"5 7", b"7 5", b"5 7", b"5 5", b"9 9", b"7 9", b"9 7", b"9 7"]
    )
    g = parse_edgelist(text, source_name="messy")
    r = g.report
    assert (g.n_nodes, g.n_edges) == (3, 2)
    assert g.node_ids.tolist() == [5, 7, 9]
    assert g.degrees.tolist() == [1, 2, 1]
    assert r.edges_read == 8
    assert r.self_loops_dropped == 2
    assert r.duplicates_dropped == 4  # 7 5, 5 7 (again), 9 7, 9 7
    assert r.reverse_duplicates_dropped == 2  # {5,7} and {7,9} each given both ways
    assert r.repeated_duplicates_dropped == 2
    assert r.edges_kept == 2 and r.relabelled and r.source == "messy"
    assert (r.lines_read, r.lines_skipped) == (9, 1)
    assert r.edges_read == r.edges_kept + r.self_loops_dropped + r.duplicates_dropped


def test_node_only_in_a_self_loop_is_kept_isolated() -> None:
    g = parse_edgelist(b"0 1\n2 2\n")
    assert g.n_nodes == 3 and g.degrees.tolist() == [1, 1, 0]


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (b"1 2 3\n4\n", 2, "got 1"),  # 3 columns on line 1 (ignored, noted), 1 on line 2
        (b"1\n2\n", 1, "got 1"),
        (b"1 2\n3\n4 5 6\n", 2, "got 1"),
        (b"1 2\n\n\n3 4 5\n6\n", 4, "got 3"),
    ],
)
def test_column_errors_not_hidden_by_balanced_counts(text: bytes, line: int, reason: str) -> None:
    with pytest.raises(ValueError, match=f"line {line}: expected [23] columns .*{reason}"):
        parse_edge_pairs(text)


def test_fuzz_same_outcome_as_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random bytes and perturbed edge lists: same pairs, or an error on the same line."""
    rng = np.random.default_rng(2024)
    alphabet = list(b"0123456789") * 6 + list(b" \t\r\n") * 6 + list(b"#-+x.\x00\x0b\xff,")
    for _ in range(1500):
        chunk = int(rng.choice([8, 16, 64, 1 << 19]))
        monkeypatch.setattr(edgelist, "_CHUNK", chunk)
        monkeypatch.setattr(edgelist, "_BLOCK", int(rng.choice([chunk, 4 * chunk])))
        if rng.random() < 0.5:
            text = bytes(rng.choice(alphabet, size=int(rng.integers(0, 120))).astype(np.uint8))
        else:
            lines = []
            for _ in range(int(rng.integers(0, 12))):
                a, b = (int(rng.integers(0, 10 ** int(rng.integers(1, 19)))) for _ in range(2))
                line = f"{a}{rng.choice([' ', chr(9), '  ', chr(13)])}{b}"
                if rng.random() < 0.1:
                    i = int(rng.integers(0, len(line) + 1))
                    line = line[:i] + chr(int(rng.choice(alphabet))) + line[i:]
                if rng.random() < 0.05:
                    line = f"{MAX_ID - 4 + int(rng.integers(0, 10))} 1"
                lines.append(line.encode("latin-1"))
            text = rng.choice([b"\n", b"\r\n"]).join(lines)
        assert outcome_of(parse_edge_pairs, text) == reference_outcome(text), text
