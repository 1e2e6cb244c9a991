"""One edge-list grammar at every size: pyarrow's fast path against the exact parsers.

Blocks of at least ``_ARROW_MIN`` bytes (64 KiB) may go to pyarrow's CSV reader, smaller ones
never do, so before issue 26 the same line could be an error in a small file and a decimal id
in a large one (pyarrow reads ``0x10`` as 16 and ``-0`` as 0), and a UTF-8 byte-order mark at
the start of a later block was dropped. Here texts of several blocks of 128 KiB (each above
``_ARROW_MIN``, so that pyarrow is offered every plain block) get lines built from tricky
tokens (signs, ``0x``/``0o``/``0b`` prefixes, byte-order marks, Unicode digits, mixed
separators, CR, NUL, quotes, leading zeros, exponents, floats, ids beyond int64) put at block
starts, block ends and inside blocks; the parse with pyarrow allowed must equal, byte for
byte, the parse with pyarrow disabled (ids, line count, names and notes, or the same error
message), and agree with the independent reference reading of tests/edgelist_reference.py.
Hypothesis runs derandomized, without shrinking (a 400 KiB text shrinks slowly; the failing
case is printed as a short recipe, ``Case``); ``GRAMMAR_EXAMPLES`` (default 15) sets the
number of texts (200 passed on 8c15c03's parser, 100 on 7d4c335's; 897268b's fails at the
first csv case).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ldpgraph.graph import edgelist
from ldpgraph.graph.edgelist import parse_edge_pairs, read_edge_pairs, read_edgelist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from edgelist_reference import outcome_of, reference_outcome  # noqa: E402

pa = pytest.importorskip("pyarrow")  # imported: the stream offers blocks >= _ARROW_MIN to it

BLOCK = 1 << 17  # bytes per block in these tests (above _ARROW_MIN = 64 KiB)
N_BLOCKS = 3
BOM = "\ufeff"

# node-id tokens that are not plain decimal ids, or are on the edge of the grammar
TRICKY_IDS = [
    "0x10", "0X1F", "0x", "0xg", "0o7", "0O17", "0b1", "0B11", "+5", "+0", "-0", "-3", "--1",
    "1e3", "1E3", "1.0", "1.", ".5", "5.", "1_000", "nan", "inf", "x", "X", "a", "F",
    "007", "0" * 25 + "7", "0" * 30, "2147483647", "2147483648", "9223372036854775807",
    "9223372036854775808", "18446744073709551616", "9" * 40,
    BOM + "5", "5" + BOM, BOM, "\u0661", "\u0661\u0662", "\uff11", "\uff15\uff10", "\u00b2",
    "\u0966", "5\x00", "\x00", "\x00" + "5", '"5"', "'5'", '"', "", "5 ", " 5", "\t5", "5\r",
    "\r5", "\u00a05", "5\u2003", "\x0b5", "\x0c", "\x1f5", "\x7f", "5#", "#5", "\xe9",
    "caf\u00e9", "a,b", "1;2",
]
# the tokens a fast reader is most likely to read otherwise than the format (drawn half the time)
SHARP_IDS = ["0x10", "0X1F", "-0", "+0", "+7", BOM + "5", "0b1", "0o7", "1e3", "\uff11", "\u0661"]
SEPARATORS = [" ", "\t", ",", "  ", " \t", "\t\t", "\r", ";", "\x0b", "\x0c", "\x00", ", ", "\u00a0",
              BOM, "\u3000"]
PREFIXES = ["", "", "", BOM, " ", "\t", "\r", "\x00", "#c ", '"']
SUFFIXES = ["", "", "", "\r", " ", "\t", " # comment 0x10", "#", ",", "\x00", BOM, "\r\r", '"']

# base line formats: (template of a plain line, its separator); ids are fixed-width decimals
FORMATS = {
    "tab": "{a}\t{b}",
    "space": "{a} {b}",
    "csv": "{a},{b}",
    "csv3": "{a},{b},{w}",
    "tab3": "{a}\t{b}\t-{w}",  # a minus sign: ids read by pyarrow as text, then checked
    "names": "n{a} m{b}",
    "names_csv": "n{a},m{b}",
}


def _outcome(text: bytes, *, fast: bool) -> Any:
    """The whole parse of ``text`` (ids, lines, names, notes) or its error message, in blocks of
    ``BLOCK`` bytes, with pyarrow offered every block of at least ``_ARROW_MIN`` bytes
    (``fast``) or none."""
    saved = edgelist._BLOCK, edgelist._ARROW_MIN, edgelist._ARROW_COLD
    edgelist._BLOCK = BLOCK
    edgelist._ARROW_COLD = edgelist._ARROW_MIN if fast else 1 << 40
    if not fast:
        edgelist._ARROW_MIN = 1 << 40
    try:
        p = parse_edge_pairs(text)
    except ValueError as exc:
        return ("error", str(exc))
    finally:
        edgelist._BLOCK, edgelist._ARROW_MIN, edgelist._ARROW_COLD = saved
    names = None if p.names is None else p.names.tolist()
    return (p.pairs.tolist(), p.lines_read, names, p.notes)


def _base_lines(fmt: str, seed: int) -> list[str]:
    """Plain lines of one format, filling a bit more than ``N_BLOCKS`` blocks."""
    rng = np.random.default_rng(seed)
    template = FORMATS[fmt]
    width = len(template.format(a="000000", b="000000", w="0.25")) + 1
    n = int((N_BLOCKS + 0.6) * BLOCK) // width
    ids = rng.integers(0, 10**6, size=(n, 2))
    return [template.format(a=f"{a:06d}", b=f"{b:06d}", w="0.25") for a, b in ids.tolist()]


def _blocks(text: bytes) -> list[bytes]:
    """The blocks of ``text`` as the stream cuts them, ``BLOCK`` bytes at most (whole lines)."""
    saved = edgelist._BLOCK
    edgelist._BLOCK = BLOCK
    try:
        return list(edgelist._memory_blocks(text))
    finally:
        edgelist._BLOCK = saved


def _block_starts(text: bytes) -> list[int]:
    """Byte offsets at which the blocks of ``text`` start."""
    return np.cumsum([0] + [len(b) for b in _blocks(text)])[:-1].tolist()


def tricky_id() -> st.SearchStrategy[str]:
    """A tricky id token, from the short list of sharp ones half the time."""
    return st.one_of(st.sampled_from(SHARP_IDS), st.sampled_from(TRICKY_IDS))


def maybe(options: list[str]) -> st.SearchStrategy[str]:
    """Nothing two times in three, else one of ``options``."""
    return st.one_of(st.just(""), st.just(""), st.sampled_from(options))


class Tricky(NamedTuple):
    """How one plain line is made tricky (a short repr for hypothesis' report)."""

    k: int  # the node column changed
    token: str  # a tricky id
    how: str  # "replace" the id by the token, or glue it "before" or "after" the id
    other: str | None  # a tricky id for the other node column
    sep: str | None  # a separator put after the first field
    prefix: str
    suffix: str

    def apply(self, fmt: str, plain: str) -> str:
        sep = "," if "csv" in fmt else " " if fmt in ("space", "names") else "\t"
        fields = plain.split(sep)
        fields[self.k] = {"replace": self.token, "before": self.token + fields[self.k],
                          "after": fields[self.k] + self.token}[self.how]
        if self.other is not None:
            fields[1 - self.k] = self.other
        line = sep.join(fields)
        if self.sep is not None:
            line = fields[0] + self.sep + sep.join(fields[1:])
        return self.prefix + line + self.suffix


tricky = st.builds(
    Tricky,
    k=st.integers(0, 1),
    token=tricky_id(),
    how=st.sampled_from(["replace", "replace", "before", "after"]),
    other=st.one_of(st.none(), st.none(), st.none(), tricky_id()),
    sep=st.one_of(st.none(), st.none(), st.sampled_from(SEPARATORS)),
    prefix=maybe(PREFIXES),
    suffix=maybe(SUFFIXES),
)


class Case(NamedTuple):
    """A text of several blocks with tricky lines at block starts, ends or inside blocks."""

    fmt: str
    seed: int
    places: tuple[tuple[int, str, int, Tricky], ...]  # block, where, offset inside, line
    open_end: bool  # no newline at the end

    def text(self) -> bytes:
        lines = _base_lines(self.fmt, self.seed)
        base = list(lines)
        # placed in increasing order: a line changes the cuts after it only, so the cut a line
        # was put at (computed on the text so far) stays where it is
        for block, where, salt, spec in sorted(self.places, key=lambda p: p[:3]):
            text = _join(lines)
            starts = _block_starts(text)
            if block >= len(starts):
                continue
            offsets = np.cumsum([0] + [len(x.encode("utf-8")) + 1 for x in lines])
            first = int(np.searchsorted(offsets, starts[block]))  # the line starting the block
            index = {"start": first, "end": first - 1}.get(where, first + 1 + salt)
            index = min(max(index, 1), len(lines) - 1)  # line 1 decides the format: keep it
            lines[index] = spec.apply(self.fmt, base[index])
        text = _join(lines)
        return text[:-1] if self.open_end else text


def _join(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


cases = st.builds(
    Case,
    fmt=st.sampled_from(sorted(FORMATS)),
    seed=st.integers(0, 2**16),
    places=st.lists(
        st.tuples(st.integers(1, N_BLOCKS), st.sampled_from(["start", "end", "inside"]),
                  st.integers(0, 2000), tricky),
        min_size=1, max_size=3,
    ).map(tuple),
    open_end=st.booleans(),
)


@pytest.fixture
def blocks_of_128k(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Blocks of ``BLOCK`` bytes; records, per pyarrow call, whether pyarrow took the block."""
    monkeypatch.setattr(edgelist, "_BLOCK", BLOCK)
    taken: list[bool] = []
    arrow_block = edgelist._arrow_block

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = arrow_block(*args, **kwargs)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(edgelist, "_arrow_block", spy)
    return taken


@settings(max_examples=int(os.environ.get("GRAMMAR_EXAMPLES", "15")), derandomize=True, deadline=None, database=None,
          phases=[Phase.explicit, Phase.generate],  # no shrinking: a 400 KiB text shrinks slowly
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.large_base_example])
@given(case=cases)
def test_fast_path_parses_as_the_exact_parser(case: Case) -> None:
    """The parse with pyarrow offered every block equals the parse with the exact parsers only
    (the same ids, line count, names and notes, or the same error message), and both agree with
    the reference reading (the ids, or the line of the first error)."""
    text, fmt = case.text(), case.fmt
    fast = _outcome(text, fast=True)
    exact = _outcome(text, fast=False)
    assert fast == exact, fmt
    ref_kind, ref = reference_outcome(text)
    if fast[0] == "error":
        assert ref_kind == "err", (fmt, fast[1][:200])
        assert fast[1].startswith(f"<input>, line {ref}: "), (fmt, fast[1][:200], ref)
    else:
        assert ref_kind == "ok", (fmt, ref)
        assert outcome_of(parse_edge_pairs, text) == (ref_kind, ref)


def test_the_fast_path_is_taken_for_plain_blocks(blocks_of_128k: list[bool]) -> None:
    """The texts above are made of blocks that pyarrow takes when they hold no tricky line:
    the differential test compares two different parsers, not the exact one with itself."""
    for fmt in sorted(FORMATS):
        del blocks_of_128k[:]
        text = ("\n".join(_base_lines(fmt, 1)) + "\n").encode()
        assert len(_block_starts(text)) == N_BLOCKS + 1
        assert min(len(b) for b in _blocks(text)) >= edgelist._ARROW_MIN
        parse_edge_pairs(text)
        assert blocks_of_128k == [True] * (N_BLOCKS + 1), fmt


@pytest.mark.parametrize("sep", ["\t", " ", ","])
@pytest.mark.parametrize("token", ["0x10", "0X10", "-0", "+16", "\uff11\uff16", "\u0661\u0666"])
def test_hex_and_signs_are_an_error_in_a_small_and_a_large_file(sep: str, token: str,
                                                               tmp_path: Path) -> None:
    """Issue 26, item 4: ``0x10`` was an error in a small file and 16 in a file of 64 KiB or more
    (pyarrow's integer reader); ``-0`` was 0 in a large CSV file. Both sizes now refuse it, with
    the same message."""
    rng = np.random.default_rng(26)
    plain = "".join(f"{a}{sep}{b}\n" for a, b in rng.integers(0, 1000, (20_000, 2)).tolist())
    assert len(plain) >= 2 * edgelist._ARROW_MIN
    bad = f"5{sep}{token}\n"
    errors = []
    for text in (f"1{sep}2\n" + bad, plain + bad):
        path = tmp_path / "edges.txt"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=r"edges\.txt, line \d+: node id") as err:
            read_edgelist(path)
        errors.append(str(err.value).split(": ", 1)[1])
        with pytest.raises(ValueError):
            read_edge_pairs(path)
    assert errors[0] == errors[1]


@pytest.mark.parametrize("kind", ["names", "ints"])
def test_a_bom_at_a_later_block_start_is_kept(kind: str, blocks_of_128k: list[bool],
                                             tmp_path: Path) -> None:
    """Only the file's first byte-order mark is dropped: one at the start of a later block
    (pyarrow drops one at the start of its buffer) is part of a name, or an error for ids."""
    rng = np.random.default_rng(5)
    if kind == "names":
        line = "{a:06d},{b:06d}\n".replace("{a", "n{a").replace("{b", "m{b")
    else:
        line = "{a:06d},{b:06d}\n"
    lines = [line.format(a=a, b=b) for a, b in rng.integers(0, 10**6, (30_000, 2)).tolist()]
    first, later = ("alice,carol\n", "alice,bob\n") if kind == "names" else ("1,2\n", "000001,2\n")
    head = first + "".join(lines)[: BLOCK - 3 - len(first)]
    head = head[: head.rindex("\n") + 1]
    n_head = head.count("\n")
    # the first block is the file's BOM and ``head``; the second starts with a BOM
    text = BOM + head + BOM + later + "".join(lines[n_head:])
    raw = text.encode()
    starts = _block_starts(raw)
    assert raw[starts[1]:].startswith(BOM.encode())
    path = tmp_path / "bom.csv"
    path.write_bytes(raw)
    if kind == "names":
        p = parse_edge_pairs(raw)
        assert {BOM + "alice", "alice"} <= set(p.names.tolist())
        assert read_edge_pairs(path).names.tolist() == p.names.tolist()
        assert p.notes[0] == "a UTF-8 byte-order mark at the start was dropped"
    else:
        with pytest.raises(ValueError, match=rf"line {n_head + 1}: node id '\\ufeff000001'"):
            parse_edge_pairs(raw)
        with pytest.raises(ValueError, match=rf"bom\.csv, line {n_head + 1}: node id"):
            read_edge_pairs(path)
    assert True in blocks_of_128k or kind == "ints"  # pyarrow read the other blocks


def test_pyarrow_refuses_every_other_byte_the_numeric_check_lets_through() -> None:
    """``_arrow_grammar_is_exact`` lets bytes 9-57 through; of those the format allows only
    digits, tab, LF and space (CR, ``#`` and ``-`` are refused by the check). For each other
    one, pyarrow's integer reader (the installed version) must refuse a block holding it
    anywhere in a line, so that the exact parser decides that block."""
    d = edgelist._Dialect(None, 2, (0, 1), False, 1)
    allowed = set(b"0123456789\t\n ") | set(b"\r#-")
    for byte in range(9, 58):
        if byte in allowed:
            continue
        ch = bytes([byte])
        for line in (ch + b"12\t34", b"1" + ch + b"2\t34", b"12" + ch + b"\t34", b"12\t" + ch + b"34",
                     b"12\t34" + ch):
            block = b"1\t2\n" * 20 + line + b"\n" + b"3\t4\n" * 20
            if not edgelist._arrow_grammar_is_exact(block):
                continue
            assert edgelist._arrow_block(block, "\t", d, blank_lines=False, exact_ints=True) is None, line
