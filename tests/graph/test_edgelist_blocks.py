"""Edge lists read in many blocks: line numbers, int32 and int64 ids from pyarrow, long lines.

The blocks are made small (``_BLOCK``) so that a short text spans many of them, and pyarrow
is made to take every block (``_ARROW_MIN``, ``_ARROW_COLD``) or none. The line numbers of
errors in later blocks and ``lines_read`` are checked here on texts with blank lines, the ids
against a plain Python parse, across a switch from int32 to int64 ids in mid-stream, and every
byte value anywhere in a line against the exact parsers.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ldpgraph.graph import edgelist
from ldpgraph.graph.edgelist import parse_edge_pairs, read_edge_pairs


def plain_pairs(text: bytes) -> list[list[int]]:
    return [[int(x) for x in line.split()] for line in text.split(b"\n") if line.strip()]


def blocky_text(rng: np.random.Generator, sep: bytes, n: int, wide_from: int | None,
                blank: float = 0.05) -> bytes:
    """``n`` edge lines with blank lines between (each with probability ``blank``); ids beyond
    int32 from line ``wide_from`` on."""
    lines = []
    for i in range(n):
        top = 2**40 if wide_from is not None and i >= wide_from else 2**31
        a, b = rng.integers(0, top, 2).tolist()
        if i % 3 == 0:  # the largest int32 value, and above it where wide
            a = top - 1
        lines.append(b"%d%s%d" % (a, sep, b))
        if rng.random() < blank:
            lines.append(b"")
    return b"\n".join(lines) + b"\n"


@pytest.fixture(params=["pyarrow", "numpy"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    limit = 0 if request.param == "pyarrow" else 1 << 40
    monkeypatch.setattr(edgelist, "_ARROW_MIN", limit)
    monkeypatch.setattr(edgelist, "_ARROW_COLD", limit)
    monkeypatch.setattr(edgelist, "_BLOCK", 4096)
    return str(request.param)


@pytest.mark.parametrize("blank", [0.0, 0.05])
@pytest.mark.parametrize("sep", [b"\t", b" "])
@pytest.mark.parametrize("wide_from", [None, 0, 700, 1999])
def test_many_blocks_match_a_plain_parse(parser: str, sep: bytes, wide_from: int | None, blank: float,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Blank lines (``blank`` > 0: in nearly every block) send a block from pyarrow to the exact
    parsers, which count its lines; without them pyarrow reads every block, and its rows are
    the lines."""
    rng = np.random.default_rng(7 + (wide_from or 0))
    text = blocky_text(rng, sep, 2000, wide_from, blank)
    calls = []  # whether the stream reads int64 after each pyarrow block

    def arrow_block(*args: Any, **kwargs: Any) -> Any:
        out = edgelist_arrow_block(*args, **kwargs)
        calls.append(args[2].wide)
        return out

    edgelist_arrow_block = edgelist._arrow_block
    monkeypatch.setattr(edgelist, "_arrow_block", arrow_block)
    p = parse_edge_pairs(text)
    assert p.pairs.tolist() == plain_pairs(text)
    assert p.lines_read == text.count(b"\n")
    if parser == "numpy":
        assert calls == []
    elif blank:
        assert len(calls) > 10  # offered, refused for their blank lines
    else:  # every block through pyarrow: int32 up to the first block beyond it, int64 from there
        assert len(calls) > 10
        first_wide = calls.index(True) if True in calls else len(calls)
        assert all(calls[first_wide:]) and not any(calls[:first_wide])
        assert (first_wide < len(calls)) == (wide_from is not None)
        assert (first_wide == 0) == (wide_from == 0) and (first_wide == len(calls) - 1) == (wide_from == 1999)


@pytest.mark.parametrize("sep", [b"\t", b" "])
def test_error_line_numbers_in_later_blocks(parser: str, sep: bytes) -> None:
    rng = np.random.default_rng(11)
    text = blocky_text(rng, sep, 3000, 1500)
    lines = text.split(b"\n")
    for at in (5, 1200, 2900):
        broken = b"\n".join(lines[:at] + [b"1" + sep + b"x"] + lines[at:])
        with pytest.raises(ValueError, match=f"line {at + 1}: node id 'x'"):
            parse_edge_pairs(broken)


@pytest.mark.parametrize("blank", [0.0, 0.05])
def test_last_line_without_newline(parser: str, blank: float) -> None:
    text = blocky_text(np.random.default_rng(3), b"\t", 1500, None, blank).rstrip(b"\n")
    p = parse_edge_pairs(text)
    assert p.pairs.tolist() == plain_pairs(text)
    assert p.lines_read == text.count(b"\n") + 1


@pytest.mark.parametrize("kind", ["plain", "gzip"])
def test_line_longer_than_the_limit_names_its_line(kind: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edgelist, "_BLOCK", 4096)
    monkeypatch.setattr(edgelist, "_READ", 1024)
    monkeypatch.setattr(edgelist, "_MAX_LINE", 10_000)
    head = b"".join(b"%d %d\n" % (i, i + 1) for i in range(3000))  # several blocks
    text = head + b"\n" + b"7" * 20_000 + b"\n1 2\n"
    path = tmp_path / "long.txt"
    path.write_bytes(gzip.compress(text) if kind == "gzip" else text)
    with pytest.raises(ValueError, match=r"line 3002: longer than 10,000 bytes without a line break"):
        read_edge_pairs(path, max_ratio=None)


@pytest.mark.parametrize("block", [64, 100, 4096])
def test_file_blocks_equal_the_text(block: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain files read in blocks of a few lines, lines across every block limit, ends with or
    without a newline: the blocks put together are the file, each ends with a newline but the
    last, and the parse equals the parse of the same bytes in memory."""
    monkeypatch.setattr(edgelist, "_BLOCK", block)
    rng = np.random.default_rng(block)
    text = blocky_text(rng, b"\t", 400, 200)
    whole = [text[: text.rfind(b"\n", 0, k) + 1] for k in (block - 1, block, block + 1, block + 2)]
    for data in (text, text.rstrip(b"\n"), b"", b"\n", b"1 2", *whole, *(w[:-1] for w in whole)):
        path = tmp_path / "g.txt"
        path.write_bytes(data)
        blocks = list(edgelist._file_blocks(str(path), None, None))
        assert b"".join(blocks) == data
        assert all(b.endswith(b"\n") for b in blocks[:-1]) and all(blocks)
        if data.strip():
            a, b = read_edge_pairs(path), parse_edge_pairs(data)
            assert a.pairs.tolist() == b.pairs.tolist()
            assert a.lines_read == b.lines_read == data.count(b"\n") + (not data.endswith(b"\n"))


def _parse_or_error(text: bytes) -> Any:
    try:
        p = parse_edge_pairs(text)
    except ValueError as exc:
        return ("error", str(exc))
    return (p.pairs.tolist(), p.lines_read)


@pytest.mark.parametrize("sep", [b"\t", b" "])
@pytest.mark.parametrize("fields", [2, 3])
def test_every_byte_anywhere_parses_as_the_exact_parser_does(sep: bytes, fields: int,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Each of the 256 byte values put before, inside, between and after the ids of one line of a
    block: the block's parse (pairs and line count, or the error) when pyarrow takes every block
    equals the parse when the exact numpy/line parsers take every block. pyarrow's integer
    reader accepts more than the format (spaces around a value, a lone CR as a line end, a minus
    sign): the blocks it is given must not hold those."""
    monkeypatch.setattr(edgelist, "_BLOCK", 1 << 12)
    rng = np.random.default_rng(fields)
    base = [sep.join(b"%d" % x for x in rng.integers(0, 10**6, fields)) for _ in range(300)]
    at = 150
    line = base[at]
    cut = line.index(sep)
    variants = []
    for b in range(256):
        ch = bytes([b])
        for edited in (ch + line, line[:2] + ch + line[2:], line[:cut] + ch + line[cut:],
                       line[:cut + 1] + ch + line[cut + 1:], line + ch):
            variants.append(b"\n".join(base[:at] + [edited] + base[at + 1:]) + b"\n")
    results = {}
    for limit in (0, 1 << 40):  # pyarrow takes every block / none
        monkeypatch.setattr(edgelist, "_ARROW_MIN", limit)
        monkeypatch.setattr(edgelist, "_ARROW_COLD", limit)
        results[limit] = [_parse_or_error(t) for t in variants]
    for text, fast, exact in zip(variants, results[0], results[1 << 40], strict=True):
        assert fast == exact, text[text.index(line[:2]) - 20: text.index(line[:2]) + 40]
