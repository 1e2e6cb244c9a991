"""Corrupt and hostile edge-list files: every one fails with the file name and the line.

The format is the one documented in :mod:`ldpgraph.graph.edgelist`: the first edge line sets
the format (delimiter, number of columns, integer ids or names), and every later line must
follow it: when the first line holds two non-negative integer ids (<= 2**63 - 1) separated by
spaces/tabs (a stray ``\\r`` counts as a space), every line must, with ``#`` comments and blank
lines skipped and *nothing else* skipped. So every malformed file below must raise
``ValueError`` whose message names the file and the 1-based line number, for plain and gzip
files alike, through every public reader (``read_edgelist``, ``read_edge_pairs``,
``load_graph``, ``datasets.resolve_graph``). The line soup is checked against an independent
reading of the grammar (``tests/edgelist_reference.py``).

Decided from the module's documentation (it says blank and comment lines are skipped and
nothing else is): an empty file, a file of blank lines and a comments-only file are *valid* and
give the empty graph (0 nodes, 0 edges), with ``report.lines_read`` counting what was read so a
caller can tell an empty input from a failed one. Corrupt gzip data cannot be attributed to a
line: the error names the file and says the gzip data is corrupt or truncated.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from edgelist_reference import outcome_of, reference_outcome
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ldpgraph.datasets import resolve_graph
from ldpgraph.graph import edgelist, load_graph, parse_edge_pairs, read_edge_pairs, read_edgelist

MAX_ID = 2**63 - 1

# Hypothesis: bounded, reproducible (derandomized) runs by default; set LDPGRAPH_HYPOTHESIS_RANDOM=1
# to explore new examples. No global profile is registered.
_RANDOM = bool(os.environ.get("LDPGRAPH_HYPOTHESIS_RANDOM"))
_SCALE = float(os.environ.get("LDPGRAPH_HYPOTHESIS_SCALE", "1"))  # more examples for exploration


def _settings(max_examples: int) -> settings:
    return settings(
        max_examples=max(1, int(max_examples * _SCALE)),
        deadline=None,
        database=None,
        derandomize=not _RANDOM,
        suppress_health_check=[HealthCheck.too_slow],
    )

GOOD = b"".join(b"%d %d\n" % (i, i + 1) for i in range(50))  # 50 valid lines


def _write(path: Path, data: bytes, compress: bool) -> Path:
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return path


def _line_error(path: Path | str, line: int) -> str:
    return rf"^{re.escape(str(path))}, line {line}: "


# ---------------------------------------------------------------------------------------------
# malformed lines: (label, file content, 1-based line of the first error, reason fragment)

_RNG_GARBAGE = np.random.default_rng(20240611).bytes(4096)

CORRUPT = [
    ("binary-garbage", bytes(range(256)) * 4, 1, "not a non-negative integer"),
    ("random-bytes", _RNG_GARBAGE, 1, None),
    ("garbage-after-good-lines", GOOD + b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 51, "not a non-negative integer"),
    ("huge-id-2^64", GOOD + b"3 18446744073709551616\n", 51, "exceeds 2**63 - 1"),
    ("huge-id-2^63", b"1 2\n9223372036854775808 4\n", 2, "exceeds 2**63 - 1"),
    ("huge-id-19-nines", b"1 2\n3 9999999999999999999\n", 2, "exceeds 2**63 - 1"),
    ("huge-id-10^40", b"1 2\n3 1" + b"0" * 40 + b"\n", 2, "exceeds 2**63 - 1"),
    ("negative-id", b"1 2\n\n-3 4\n", 3, "is negative"),
    ("negative-second-id", b"1 2\n3 -4\n", 2, "is negative"),
    ("negative-zero", b"1 2\n-0 4\n", 2, "is negative"),
    ("third-column", b"1 2\n3 4 5\n", 2, "expected 2 columns"),
    ("third-column-tabs", b"1\t2\n3\t4\t5\n", 2, "expected 2 columns"),
    ("lone-id", b"1 2\n3\n", 2, "expected 2 columns"),
    ("lone-id-last-line-no-newline", b"1 2\n3 4\n5", 3, "expected 2 columns"),
    ("lone-id-before-comment", b"1 2\n3 # 4\n", 2, "expected 2 columns"),
    ("arabic-indic-digit", "1 2\n3 \u0664\n".encode(), 2, "not a non-negative integer"),
    ("fullwidth-digit", "1 2\n\uff13 4\n".encode(), 2, "not a non-negative integer"),
    ("no-break-space", "1 2\n3\u00a04\n".encode(), 2, "not a non-negative integer"),
    ("byte-order-mark-inside", "1 2\n\ufeff3 4\n".encode(), 2, "not a non-negative integer"),
    ("emoji", "1 2\n3 4\n\U0001f4a9 1\n".encode(), 3, "not a non-negative integer"),
    ("latin1-byte", b"1 2\n3 4\xe9\n", 2, "not a non-negative integer"),
    ("utf16", "1 2\n3 4\n".encode("utf-16"), 1, None),
    ("nul-inside-id", b"1 2\n3\x004\n", 2, "not a non-negative integer"),
    ("nul-after-id", b"1 2\n3 4\x00\n", 2, "not a non-negative integer"),
    ("nul-line", b"1 2\n\x00\n3 4\n", 2, "not a non-negative integer"),
    ("float-id", b"1 2\n3.0 4\n", 2, "not a non-negative integer"),
    ("exponent-id", b"1 2\n1e3 4\n", 2, "not a non-negative integer"),
    ("plus-sign", b"1 2\n+3 4\n", 2, "not a non-negative integer"),
    ("hex-id", b"1 2\n0x3 4\n", 2, "not a non-negative integer"),
    ("comma-separated", b"1 2\n3,4\n", 2, "not a non-negative integer"),
    ("vertical-tab", b"1 2\n3\x0b4\n", 2, "not a non-negative integer"),
    ("form-feed", b"1 2\n3\x0c4\n", 2, "not a non-negative integer"),
    ("old-mac-line-ends", b"1 2\r3 4\r", 1, "expected 2 columns"),
    ("letters", b"1 2\nfoo bar\n", 2, "not a non-negative integer"),
]


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize(("label", "data", "line", "reason"), CORRUPT, ids=[c[0] for c in CORRUPT])
def test_malformed_file_names_file_and_line(tmp_path, label, data, line, reason, compress) -> None:
    path = _write(tmp_path / f"{label}.txt", data, compress)
    pattern = _line_error(path, line) + (".*" + re.escape(reason) if reason else "")
    with pytest.raises(ValueError, match=pattern):
        read_edgelist(path)
    with pytest.raises(ValueError, match=pattern):
        read_edge_pairs(str(path))
    with pytest.raises(ValueError, match=pattern):
        load_graph(path)


def test_resolve_graph_reports_the_file_and_line(tmp_path) -> None:
    path = _write(tmp_path / "bad.txt", GOOD + b"7 -1\n", compress=False)
    with pytest.raises(ValueError, match=_line_error(path, 51) + "node id -1 is negative"):
        resolve_graph(str(path))


@pytest.mark.parametrize(("label", "data", "line", "reason"), CORRUPT, ids=[c[0] for c in CORRUPT])
def test_pure_parser_agrees_on_the_line(label, data, line, reason) -> None:
    with pytest.raises(ValueError, match=_line_error("src.txt", line)):
        parse_edge_pairs(data, source_name="src.txt")


def test_error_message_shows_the_offending_line(tmp_path) -> None:
    path = _write(tmp_path / "x.txt", b"1 2\n3 4 5\n", compress=False)
    with pytest.raises(ValueError, match=r"got 3; the line is '3 4 5'$"):
        read_edgelist(path)


def test_boundary_ids_are_exact(tmp_path) -> None:
    path = _write(tmp_path / "ok.txt", b"9223372036854775807 0\n0000000000000000000000042 7\n", False)
    g = read_edgelist(path)
    assert g.node_ids.tolist() == [0, 7, 42, MAX_ID]
    assert g.n_edges == 2


# ---------------------------------------------------------------------------------------------
# corrupt gzip containers: no line to blame, but the file is named and nothing is returned


def _gzip_cases() -> list[tuple[str, bytes]]:
    blob = gzip.compress(GOOD * 40, mtime=0)
    crc_flipped = blob[:-8] + bytes([blob[-8] ^ 0xFF]) + blob[-7:]
    size_flipped = blob[:-4] + bytes([blob[-4] ^ 0x01]) + blob[-3:]
    mid = len(blob) // 2
    body_flipped = blob[:mid] + bytes([blob[mid] ^ 0x55]) + blob[mid + 1 :]
    return [
        ("magic-only", b"\x1f\x8b"),
        ("header-only", blob[:10]),
        ("truncated-10-bytes-in", blob[:20]),
        ("truncated-in-the-middle", blob[:mid]),
        ("truncated-before-trailer", blob[:-8]),
        ("truncated-in-trailer", blob[:-3]),
        ("bad-compression-method", b"\x1f\x8b" + b"garbage" * 10),
        ("crc-mismatch", crc_flipped),
        ("size-mismatch", size_flipped),
        ("flipped-byte-in-body", body_flipped),
        ("trailing-garbage", blob + b"garbage"),
        ("second-member-truncated", blob + blob[:25]),
    ]


@pytest.mark.parametrize(("label", "data"), _gzip_cases(), ids=[c[0] for c in _gzip_cases()])
def test_corrupt_gzip_fails_with_the_file_name(tmp_path, label, data) -> None:
    path = tmp_path / f"{label}.gz"
    path.write_bytes(data)
    pattern = rf"^{re.escape(str(path))}[:,]"
    with pytest.raises(ValueError, match=pattern) as info:
        read_edgelist(path)
    msg = str(info.value)
    assert "gzip" in msg or re.search(r", line \d+: ", msg), msg
    with pytest.raises(ValueError, match=pattern):
        read_edge_pairs(path)


def test_gzip_detection_is_by_content_not_name(tmp_path) -> None:
    # gzip data under a .txt name is still decompressed; a plain file named .gz is read as text
    a = _write(tmp_path / "looks_plain.txt", GOOD, compress=True)
    b = _write(tmp_path / "looks_gzip.gz", GOOD, compress=False)
    assert read_edgelist(a).n_edges == read_edgelist(b).n_edges == 50


def test_gzip_of_gzip_is_reported_as_bad_line(tmp_path) -> None:
    # only one layer is decompressed: the inner gzip stream is binary garbage on line 1
    path = tmp_path / "double.gz"
    path.write_bytes(gzip.compress(gzip.compress(GOOD, mtime=0), mtime=0))
    with pytest.raises(ValueError, match=_line_error(path, 1)):
        read_edgelist(path)


# ---------------------------------------------------------------------------------------------
# empty and comment-only files: a documented, empty result


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"", 0),
        (b"\n", 1),
        (b"\n\n  \n\t\r\n", 4),
        (b"# only a comment", 1),
        (b"# SNAP header\n# Nodes: 0 Edges: 0\n", 2),
        (b"# a\n\n# b \x00 \xff junk inside a comment is fine\n", 3),
    ],
    ids=["empty", "one-newline", "blank-lines", "comment-no-newline", "snap-header", "junk-comments"],
)
def test_empty_or_comment_only_file_is_the_empty_graph(tmp_path, data, lines, compress) -> None:
    path = _write(tmp_path / "e.txt", data, compress)
    g = read_edgelist(path)
    assert (g.n_nodes, g.n_edges) == (0, 0)
    assert g.degrees.shape == (0,)
    r = g.report
    assert (r.edges_read, r.edges_kept, r.lines_read) == (0, 0, lines)
    assert r.source == str(path)
    p = read_edge_pairs(path)
    assert p.pairs.shape == (0, 2) and p.pairs.dtype == np.int64
    assert p.lines_read == lines


def test_nothing_but_comments_and_blanks_is_skipped(tmp_path) -> None:
    text = b"# header\n1 2\n\n2 3 # trailing\n  \n3\t1\r\n# end"
    g = read_edgelist(_write(tmp_path / "t.txt", text, compress=False))
    assert g.report.edges_read == 3
    assert g.report.lines_read == 7
    assert g.n_edges == 3


# ---------------------------------------------------------------------------------------------
# large files: the chunked, threaded parser still names the first bad line


def test_first_error_in_a_large_file_is_reported_exactly(tmp_path) -> None:
    # > 8 MiB so that the default 1 MiB chunks are parsed by several threads
    block = b"".join(b"%d %d\n" % (i, 10**9 + i) for i in range(100_000))  # ~1.7 MB
    n_block = block.count(b"\n")
    data = block * 3 + b"12 34 56\n" + block * 2 + b"7 x\n" + block
    path = _write(tmp_path / "big.txt", data, compress=False)
    with pytest.raises(ValueError, match=_line_error(path, 3 * n_block + 1) + "expected 2 columns"):
        read_edgelist(path)


@_settings(30)
@given(
    good=st.integers(1, 60),
    bad=st.sampled_from([b"1 2 3", b"4", b"-5 6", b"7 8.0", b"9 \x00", "1 \u0663".encode(), b"2 99999999999999999999"]),
    chunk=st.sampled_from([8, 13, 64, 1 << 20]),
    crlf=st.booleans(),
)
@example(good=1, bad=b"4", chunk=8, crlf=False)
def test_error_line_is_exact_whatever_the_chunking(good, bad, chunk, crlf) -> None:
    # the first edge line sets the format (two integer ids); a later bad line is an error
    end = b"\r\n" if crlf else b"\n"
    lines = [b"%d %d" % (i, i + 3) for i in range(good)] + [bad] + [b"1 2"] * 5
    data = end.join(lines) + end
    with mock.patch.object(edgelist, "_CHUNK", chunk), mock.patch.object(edgelist, "_BLOCK", 2 * chunk):
        with pytest.raises(ValueError, match=_line_error("f", good + 1)):
            parse_edge_pairs(data, source_name="f")


# ---------------------------------------------------------------------------------------------
# property: arbitrary line soup against an independent reading of the documented grammar

_FRAGMENTS = st.sampled_from(
    [b"0", b"7", b"42", b"007", b"9223372036854775807", b"9223372036854775808", b"-1", b"1.5", b"x",
     b"\x00", b"\xff", "\u0661".encode(), b"#", b" ", b"\t", b"\r", b"  ", b"1e3", b"+2"]
)
_LINE = st.one_of(
    st.tuples(st.integers(0, MAX_ID), st.integers(0, MAX_ID)).map(lambda t: b"%d %d" % t),
    st.lists(_FRAGMENTS, max_size=6).map(b"".join),
    st.binary(max_size=12).filter(lambda b: b"\n" not in b),
    st.text(max_size=8).map(lambda s: s.encode("utf-8")).filter(lambda b: b"\n" not in b),
)


@_settings(60)
@given(lines=st.lists(_LINE, max_size=25), trailing_newline=st.booleans(), chunk=st.sampled_from([8, 64, 1 << 20]))
@example(lines=[b"1 2", b"\x00"], trailing_newline=False, chunk=8)
@example(lines=[b"# c", b"9223372036854775807 0", b"3 4 # x"], trailing_newline=True, chunk=8)
def test_parser_matches_the_documented_grammar(lines, trailing_newline, chunk) -> None:
    data = b"\n".join(lines) + (b"\n" if trailing_newline and lines else b"")
    expected = reference_outcome(data)
    with mock.patch.object(edgelist, "_CHUNK", chunk), mock.patch.object(edgelist, "_BLOCK", 2 * chunk):
        assert outcome_of(parse_edge_pairs, data, "soup") == expected
        if expected[0] == "ok":
            parsed = parse_edge_pairs(data, source_name="soup")
            assert parsed.pairs.dtype == np.int64 and parsed.pairs.shape == (len(expected[1]), 2)
            assert parsed.lines_read == data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
