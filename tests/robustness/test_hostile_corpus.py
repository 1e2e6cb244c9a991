"""Every reader runs over a corpus of small hostile files (issue 26, "How it is checked").

The corpus is ``tests/hostile/`` (edge lists, report rows, triangle broadcasts, rosters; each
file < 100 KB, the textual ones readable in a diff); the files that are awkward to commit (a
JSON Lines line > 1 MiB, Parquet files, edge lists large enough for the fast block readers) are
generated here into a temporary folder. Every (file, reader) pair has one expected outcome:

* ``OK``: the file is valid after all (the tables say why), and the reader succeeds;
* ``ERR``: the API raises ``ValueError`` or ``OSError`` (nothing else) whose message names the
  file (and the line or row where the tables give one), and the CLI exits 1 or 2 with one line
  ``ldpgraph[ cmd]: error: ...`` on stderr naming the file; re-run with ``--debug`` the CLI's
  exception is a ``ValueError`` or ``OSError`` (so that no ``KeyError``, ``IndexError`` ... is
  hidden behind the one-line message).

Readers: edge lists through ``read_edgelist`` and ``ldpgraph estimate FILE --epsilon 1``;
report rows through ``iter_report_chunks`` (consumed), ``read_report_set`` and ``ldpgraph curate
FILE`` (``--epsilon 1`` for the rr-triangles rows); broadcasts through ``read_triangle_broadcast``;
rosters through ``read_roster`` and ``ldpgraph curate valid.csv --roster FILE``. The nastiest
files also run in a child process, which must exit 0 or 1 (never a signal, never another
exception type), and the edge-list tokens are replayed in blocks large enough for the fast
readers (pyarrow, the SWAR parser) and at the start of a later block: the outcome must be the
small file's, with the line number shifted (one grammar at every size).

Known defects are ``xfail(strict=True)`` with the reason (``KNOWN``): they pass as expected
failures until fixed, then fail as XPASS so that the marker is removed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow  # noqa: F401 - imported first so that the edge-list reader takes its pyarrow path
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ldpgraph.cli import main
from ldpgraph.graph import edgelist, read_edgelist
from ldpgraph.run.files import read_broadcast
from ldpgraph.run.reportfiles import iter_report_chunks, read_report_set
from ldpgraph.run.roster import read_roster
from ldpgraph.run.trianglefiles import read_triangle_broadcast

HOSTILE = Path(__file__).resolve().parent.parent / "hostile"
OK, ERR = "ok", "error"

# ------------------------------------------------------------------------------ expectations
# edge lists: name -> (read_edgelist, ldpgraph estimate, where the API error points, why)
EDGELISTS: dict[str, tuple[str, str, str | None, str]] = {
    "hex_id.txt": (ERR, ERR, "line 3", "0x10 after integer ids: not a decimal id"),
    "hex_first_line.txt": (OK, OK, None, "first line not integers: every id is a name ('0x10')"),
    "negative_id.txt": (ERR, ERR, "line 2", "-1"),
    "plus_sign.txt": (ERR, ERR, "line 2", "+3"),
    "bom_start.txt": (OK, OK, None, "a BOM at the start is dropped (documented)"),
    "bom_mid.txt": (ERR, ERR, "line 2", "a BOM inside the file is a character of the id"),
    "bom_mid_names.txt": (OK, OK, None, "names: '\\ufeffalice' is a name distinct from 'alice'"),
    "arabic_indic_digits.txt": (ERR, ERR, "line 2", "Unicode digits are not ASCII digits"),
    "arabic_indic_only.txt": (OK, OK, None, "first line not ASCII integers: the ids are names"),
    "fullwidth_digits.txt": (ERR, ERR, "line 2", "fullwidth digits"),
    "nul_byte.txt": (ERR, ERR, "line 2", "NUL inside an id"),
    "nul_only.txt": (ERR, ERR, "line 1", "NUL bytes only"),
    "cr_only.txt": (ERR, ERR, "line 1", "CR-only line ends: one line of 6 fields, refused"),
    "binary.bin": (ERR, ERR, "line 1", "random bytes"),
    "truncated.gz": (ERR, ERR, "truncated gzip", "gzip cut in half"),
    "bomb.gz": (ERR, ERR, "decompression bomb", "32 MiB of '1 2' in 32 KB: refused by max_ratio"),
    "bomb_no_newline.gz": (ERR, ERR, "decompression bomb", "32 MiB without a line break"),
    "id_2_63.txt": (ERR, ERR, "line 2", "2**63 exceeds int64"),
    "id_2_64_first_line.txt": (ERR, ERR, "line 1", "2**64 on the first line"),
    "id_10_40.txt": (ERR, ERR, "line 2", "a 41-digit id"),
    "header_only.txt": (OK, ERR, None, "a header and no edge: the empty graph; estimate refuses it"),
    "empty.txt": (OK, ERR, None, "the empty graph (documented); estimate refuses it"),
    "quoted.csv": (OK, OK, None, "CSV with quoted fields is documented"),
    "unbalanced_quote.csv": (ERR, ERR, "line 2", "an unclosed quote"),
    "nan_weight.txt": (OK, OK, None, "a third column (weight, NaN or not) is ignored with a note"),
    "float_ids.txt": (ERR, ERR, "line 2", "1.0 is not an integer id"),
}

# report rows: name -> (iter_report_chunks, read_report_set, ldpgraph curate, where, why)
REPORTS: dict[str, tuple[str, str, str, str | None, str]] = {
    "valid.csv": (OK, OK, OK, None, "control"),
    "valid.jsonl": (OK, OK, OK, None, "control"),
    "crlf.csv": (OK, OK, OK, None, "CRLF line ends are CSV"),
    "missing_column.csv": (ERR, ERR, ERR, "missing", "no sensitivity column"),
    "missing_column.jsonl": (ERR, ERR, ERR, r"row 0 \(line 1\)", "no sensitivity key"),
    "extra_column.csv": (ERR, ERR, ERR, "line 1: column 'comment' not of the format", "issue 36: refused, as a JSON key"),
    "extra_key.jsonl": (ERR, ERR, ERR, "unknown key", "unknown key 'comment'"),
    "float_value.csv": (ERR, ERR, ERR, r"row 2 \(line 4\)", "value 1.5"),
    "float_value.jsonl": (ERR, ERR, ERR, r"row 2 \(line 3\)", "value 1.5"),
    "value_2_53.csv": (OK, OK, OK, None, "|value| = 2**53 is the largest allowed"),
    "value_2_53.jsonl": (OK, OK, OK, None, "|value| = 2**53 is the largest allowed"),
    "value_beyond_2_53.csv": (ERR, ERR, ERR, r"row 2 \(line 4\)", "2**53 + 1"),
    "value_beyond_2_53.jsonl": (ERR, ERR, ERR, r"row 2 \(line 3\)", "2**53 + 1"),
    "node_01.csv": (ERR, ERR, ERR, r"row 1 \(line 3\)", "node id 01"),
    "node_01.jsonl": (ERR, ERR, ERR, r"row 1 \(line 2\)", "node id '01'"),
    "node_int_string.jsonl": (OK, OK, OK, None, "node id '1' is the integer 1 (canonical, documented)"),
    "bool_value.csv": (ERR, ERR, ERR, r"row 2 \(line 4\)", "value true"),
    "bool_value.jsonl": (ERR, ERR, ERR, r"row 2 \(line 3\)", "value true"),
    "truncated_last_line.csv": (ERR, ERR, ERR, r"row 5 \(line 7\)", "cut inside the last row"),
    "truncated_last_line.jsonl": (ERR, ERR, ERR, r"row 5 \(line 6\)", "cut inside the last object"),
    "mixed_epsilon.csv": (OK, ERR, ERR, "mixed epsilon", "cells are fine; the set is not"),
    "mixed_epsilon.jsonl": (OK, ERR, ERR, "mixed epsilon", "cells are fine; the set is not"),
    "unknown_protocol.csv": (OK, ERR, ERR, "unknown protocol", "protocol degree-v9"),
    "unknown_protocol.jsonl": (OK, ERR, ERR, "unknown protocol", "protocol degree-v9"),
    "wrong_protocol_version.csv": (OK, ERR, ERR, "version 2", "protocol_version 2"),
    "wrong_protocol_version.jsonl": (OK, ERR, ERR, "version 2", "protocol_version 2"),
    "nan_epsilon.csv": (OK, ERR, ERR, r"row 2 \(line 4\)", "epsilon nan"),
    "nan_epsilon.jsonl": (OK, ERR, ERR, r"row 2 \(line 3\)", "epsilon NaN (JSON extension)"),
    "bom_header.csv": (OK, OK, OK, None, "a BOM before the header (Excel's CSV UTF-8) is not part of 'node'"),
    "binary.csv": (ERR, ERR, ERR, None, "random bytes"),
    "binary.jsonl": (ERR, ERR, ERR, r"line 1", "random bytes"),
    "empty.csv": (ERR, ERR, ERR, r"empty file \(0 bytes\)", "no header: said to be empty"),
    "header_only.csv": (OK, ERR, ERR, None, "no row: nothing to curate"),
    "deep_nesting.jsonl": (ERR, ERR, ERR, r"line 1", "5,000 nested arrays on one short line"),
    "deep_nesting_value.jsonl": (ERR, ERR, ERR, r"line 1", "a value nested 5,000 deep"),
    # issue 36 finding 11 (7443152: the first 'value' won, ArrowKeyError, the last key won, a
    # ValueError naming neither file nor row)
    "duplicate_column.csv": (ERR, ERR, ERR, "line 1: column 'value' appears 2 times", "'value' twice"),
    "quoted_header.csv": (ERR, ERR, ERR, "missing", "'node,round' is one quoted column name"),
    "duplicate_key.jsonl": (ERR, ERR, ERR, r"row 1 \(line 2\): the key 'value' appears twice", "'value' twice"),
    "digits_5000.jsonl": (ERR, ERR, ERR, r"row 1 \(line 2\): a number too long", "a 5,000-digit value"),
    # rr-triangles rows: read_report_set reads the degree protocol, so it refuses them all
    "rr_valid.csv": (OK, ERR, OK, None, "control (curate --epsilon 1)"),
    "rr_edge_beyond_node.csv": (OK, ERR, ERR, None, "rr_edge partner 7 of node 1"),
    "rr_count_mismatch.csv": (OK, ERR, ERR, None, "rr_count 1 without its rr_edge row"),
    "rr_mixed_protocols.csv": (OK, ERR, ERR, None, "a degree row among rr-triangles rows"),
    "rr_node_2_27.csv": (OK, ERR, ERR, None, "155 bytes naming node 2**27: no allocation by it"),
}

# generated at run time (name -> same tuple as REPORTS); built by _generated_reports
GENERATED_REPORTS: dict[str, tuple[str, str, str, str | None, str]] = {
    "long_line.jsonl": (ERR, ERR, ERR, r"row 1 \(line 2\).*1 MiB", "a 1.5 MiB line"),
    "long_line_no_newline.jsonl": (ERR, ERR, ERR, r"line 1\).*1 MiB", "2 MiB and no line break"),
    "valid.parquet": (OK, OK, OK, None, "control"),
    "missing_column.parquet": (ERR, ERR, ERR, "missing", "no sensitivity column"),
    "extra_column.parquet": (ERR, ERR, ERR, "column 'comment' not of the format", "issue 36: as in CSV"),
    "duplicate_column.parquet": (ERR, ERR, ERR, "column 'value' appears 2 times", "issue 36: first won"),
    "float_value.parquet": (ERR, ERR, ERR, "row 2", "float64 value 1.5"),
    "value_beyond_2_53.parquet": (ERR, ERR, ERR, "row 2", "int64 2**53 + 1: refused cell by cell"),
    "node_01.parquet": (ERR, ERR, ERR, "row 1", "string node id '01'"),
    "node_uint64_beyond.parquet": (ERR, ERR, ERR, "row 1", "uint64 node id 2**63"),
    "node_float.parquet": (ERR, ERR, ERR, None, "float64 node ids"),
    "bool_value.parquet": (ERR, ERR, ERR, None, "boolean value column"),
    "mixed_epsilon.parquet": (OK, ERR, ERR, "mixed epsilon", "cells are fine; the set is not"),
    "unknown_protocol.parquet": (OK, ERR, ERR, "unknown protocol", "protocol degree-v9"),
    "wrong_protocol_version.parquet": (OK, ERR, ERR, "version 2", "protocol_version 2"),
    "nan_epsilon.parquet": (OK, ERR, ERR, "row 2", "epsilon NaN"),
    "format_version_2.parquet": (ERR, ERR, ERR, "format version 2", "schema metadata says version 2"),
    "truncated.parquet": (ERR, ERR, ERR, None, "cut in half"),
    "binary.parquet": (ERR, ERR, ERR, None, "PAR1 + random bytes + PAR1"),
}

# broadcasts: name -> (read_triangle_broadcast, where, why)
BROADCASTS: dict[str, tuple[str, str | None, str]] = {
    "valid.txt": (OK, None, "control (written by ldpgraph curate)"),
    "crlf.txt": (OK, None, "CRLF line ends: same edges, same run id (the CLI's HMAC covers bytes)"),
    "edited_header.txt": (ERR, "run id", "epsilon edited in the header"),
    "out_of_order.txt": (ERR, "line 4", "two edges swapped"),
    "duplicate_edge.txt": (ERR, "line 4", "an edge twice"),
    "edge_beyond_n.txt": (ERR, "line 6", "9 >= n_nodes"),
    "truncated_edges.txt": (ERR, "truncated", "last edge line dropped"),
    "truncated_line.txt": (ERR, None, "cut inside the last edge line"),
    "truncated_header.txt": (ERR, "line 2", "cut inside the JSON header"),
    "empty.txt": (ERR, "line 1", "empty"),
    "plus_edge.txt": (ERR, None, "+1"),
    "hex_edge.txt": (ERR, None, "0x1: not a canonical integer"),
    "leading_zero_edge.txt": (ERR, None, "01: not a canonical integer"),
    "negative_zero_edge.txt": (ERR, None, "-0: not a canonical integer"),
    "valid_packed.txt": (OK, None, "control: valid.txt packed (ldpgraph-broadcast-edges 2)"),
    "packed_truncated.txt": (ERR, "packed body of 2 bytes", "the packed body cut to 1 byte"),
    "packed_extra_byte.txt": (ERR, "got more", "a byte after the packed body"),
    "packed_padding_bit.txt": (ERR, "padding bits", "the padding bit after pair 14 set"),
    "packed_bit_cleared.txt": (ERR, "header says 4 edges", "the bit of pair 0 cleared"),
}

# rosters: name -> (read_roster, ldpgraph curate valid.csv --roster, where, why)
ROSTERS: dict[str, tuple[str, str, str | None, str]] = {
    "valid.csv": (OK, OK, None, "control: the 6 nodes of reports/valid.csv"),
    "duplicate_labels.csv": (ERR, ERR, "alice", "alice names nodes 0 and 4"),
    "out_of_order.csv": (ERR, ERR, "line 4", "nodes 0, 1, 3, 2, ..."),
    "node_01.csv": (ERR, ERR, "line 3", "node 01"),
    "three_fields.csv": (ERR, ERR, "line 3", "a row with 3 fields"),
    "bom_header.csv": (OK, OK, None, "a BOM before the header (Excel's CSV UTF-8) is not part of it"),
    "header_only.csv": (ERR, ERR, None, "no participant"),
    "empty.csv": (ERR, ERR, "line 1", "no header"),
    "binary.csv": (ERR, ERR, None, "random bytes after the header (not UTF-8)"),
}

# (kind, name, reader) -> reason: contract violations found by this corpus, xfail(strict=True)
# JSON broadcasts: name -> (protocol, read_broadcast, where, why); the plan: --epsilon 2 (and
# n_users 12 for wshuffle). issue 36 finding 11: 7443152 accepted the edited threshold and the
# negative id (it wrapped to node 10: the same flags, so the same run id), let the last of two
# keys win, and raised errors naming no file (or KeyError, TypeError) on the others.
JSON_BROADCASTS: dict[str, tuple[str, str, str | None, str]] = {
    "wshuffle_ignore_valid.json": ("wshuffle-triangles-ignore", OK, None, "control (written by the curator)"),
    "wshuffle_ignore_negative_dense.json": ("wshuffle-triangles-ignore", ERR, r"dense\[7\]", "-2 for 10"),
    "wshuffle_ignore_edited_threshold.json": ("wshuffle-triangles-ignore", ERR, "run id", "threshold 0.5"),
    "wshuffle_ignore_duplicate_key.json": ("wshuffle-triangles-ignore", ERR, "'threshold' appears twice", ""),
    "wshuffle_ignore_digits_5000.json": ("wshuffle-triangles-ignore", ERR, "a number too long", "run id"),
    "wshuffle_ignore_dense_string.json": ("wshuffle-triangles-ignore", ERR, "dense must be a list", ""),
    "wshuffle_ignore_missing_key.json": ("wshuffle-triangles-ignore", ERR, "not a wshuffle", "no run id"),
    "kcore_hindex_valid.json": ("kcore-hindex", OK, None, "control (written by the curator)"),
    "kcore_hindex_duplicate_key.json": ("kcore-hindex", ERR, "'degrees' appears twice", "forged, then true"),
    "kcore_hindex_not_utf8.json": ("kcore-hindex", ERR, "not UTF-8", "a 0xff byte"),
    "kcore_hindex_huge_degree.json": ("kcore-hindex", ERR, r"degrees\[11\]", "a 30-digit degree"),
}

# planted experiment manifests (``manifest.json`` in an --out folder that also holds a user's
# file): name -> why. Whatever it lists, a run deletes no file but the earlier run's proven
# outputs (issue 36 finding 3): here, nothing.
MANIFESTS: dict[str, str] = {
    "dotdot.json": "'../victim', the victim's size and SHA-256",
    "dotdot_inside.json": "'plots/../../victim'",
    "absolute.json": "an absolute path to a file outside (/ABS is replaced by the test)",
    "through_link.json": "'linked/victim' where linked is a link to the folder above",
    "listed_user_file.json": "the user's notes.txt, with another file's digest",
    "no_digest.json": "paths without size or digest, a number, bare strings, null",
    "files_not_a_list.json": "'files' is an object",
    "odd_spellings.json": "'./notes.txt', 'notes.txt/', '..\\victim'",
}

KNOWN: dict[tuple[str, str, str], str] = {
    # none open: deep nesting, non-canonical broadcast edges, a CSV value beyond 2**53 and a binary
    # roster were found by this corpus and fixed (their cases now pass as plain errors)
}

_ERROR_LINE = re.compile(r"^ldpgraph(?: [a-z-]+)?: error: ")


def _names_file(message: str, path: Path) -> bool:
    return path.name in message or path.stem in message


def _check_api(call, path: Path, expected: str, where: str | None):
    if expected == OK:
        return call(path)
    with pytest.raises((ValueError, OSError)) as info:
        call(path)
    message = str(info.value)
    assert _names_file(message, path), f"the error does not name {path.name}: {message[:300]}"
    if where is not None:
        assert re.search(where, message), f"expected {where!r} in: {message[:300]}"
    return None


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _check_cli(argv: list[str], path: Path, expected: str) -> None:
    rc, _, err = _run_cli(argv)
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("ldpgraph: note:")]
    if expected == OK:
        assert rc == 0, f"exit {rc}: {err[-500:]}"
        assert not lines, err
        return
    assert rc in (1, 2), f"exit {rc} (expected 1 or 2): {err[-500:]}"
    assert len(lines) == 1 and _ERROR_LINE.match(lines[0]), f"not one error line: {err[-800:]!r}"
    assert _names_file(lines[0], path), f"the error does not name {path.name}: {lines[0][:300]}"
    if rc == 1:  # the exception behind the line is a clean one
        with pytest.raises(Exception) as info:  # noqa: PT011 - its type is checked below
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                main([*argv, "--debug"])
        assert isinstance(info.value, (ValueError, OSError)), repr(info.value)[:300]


def _cases(kind: str, table: dict, readers: tuple[str, ...]) -> list:
    out = []
    for name, row in table.items():
        for reader, expected in zip(readers, row, strict=False):
            marks = []
            if (kind, name, reader) in KNOWN:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[kind, name, reader]))
            out.append(pytest.param(name, reader, expected, id=f"{kind}/{name}/{reader}", marks=marks))
    return out


# ------------------------------------------------------------------------------ the corpus


def test_corpus_is_small_and_listed():
    """Every committed file is < 100 KB and has an expected outcome here (and vice versa)."""
    tables = {"edgelists": EDGELISTS, "reports": REPORTS, "broadcasts": BROADCASTS, "rosters": ROSTERS,
              "manifests": MANIFESTS, "json_broadcasts": JSON_BROADCASTS}
    for kind, table in tables.items():
        present = {p.name for p in (HOSTILE / kind).iterdir() if p.is_file()}
        assert present == set(table), (kind, present ^ set(table))
        for name in present:
            assert (HOSTILE / kind / name).stat().st_size < 100_000, name


# ------------------------------------------------------------------------------ edge lists


def _graph(path: Path):
    g = read_edgelist(path)
    return g.n_nodes, g.n_edges, [str(x) for x in g.node_ids]


@pytest.mark.parametrize(("name", "reader", "expected"),
                         _cases("edgelists", EDGELISTS, ("read_edgelist", "cli_estimate")))
def test_edgelist(name, reader, expected):
    path = HOSTILE / "edgelists" / name
    where = EDGELISTS[name][2]
    if reader == "read_edgelist":
        result = _check_api(_graph, path, expected, where)
        if name == "bom_start.txt":
            assert result == (3, 2, ["1", "2", "3"])
        if name == "bom_mid_names.txt":  # the BOM is kept: a name of its own, never merged
            assert result == (4, 2, ["alice", "bob", "carol", "\ufeffalice"])
        if name == "nan_weight.txt":
            assert result == (3, 3, ["1", "2", "3"])
        if name in ("empty.txt", "header_only.txt"):
            assert result == (0, 0, [])
    else:
        _check_cli(["estimate", str(path), "--epsilon", "1", "--seed", "1"], path, expected)


def test_bomb_limits():
    """The bomb is refused by the ratio limit, and with it disabled by ``max_bytes``."""
    bomb = HOSTILE / "edgelists" / "bomb.gz"
    with pytest.raises(ValueError, match="max_bytes"):
        read_edgelist(bomb, max_ratio=None, max_bytes=1 << 20)


_INT_LINE = b"1 2\n"
_NAME_LINE = b"al bo\n"


def _filler(target: int, names: bool) -> bytes:
    """Edge lines of exactly ``target`` bytes (integer ids or names), ending with a newline."""
    line = _NAME_LINE if names else _INT_LINE
    count, rest = divmod(target, len(line))
    if rest:  # widen one line by ``rest`` bytes
        first = (b"al" + b"x" * rest + b" bo\n") if names else (b"1" + b"0" * rest + b" 2\n")
        return first + line * (count - 1)
    return line * count


# small files whose first line only sets the format, replayed after big fillers
_GROWN = ["hex_id.txt", "negative_id.txt", "plus_sign.txt", "bom_mid.txt", "bom_mid_names.txt",
          "arabic_indic_digits.txt", "fullwidth_digits.txt", "nul_byte.txt", "id_2_63.txt",
          "id_10_40.txt", "float_ids.txt"]


@pytest.mark.parametrize("boundary", [False, True], ids=["big-block", "block-start"])
@pytest.mark.parametrize("name", _GROWN)
def test_edgelist_same_grammar_at_every_size(name, boundary, tmp_path, monkeypatch):
    """The small file with a filler after its first line, so that the rest starts at byte 128 Ki:
    in one big block (pyarrow / SWAR size) or, with the block size set to 128 KiB, first in the
    second block. Same outcome as the small file, the line shifted by the filler's lines."""
    small = (HOSTILE / "edgelists" / name).read_bytes()
    names = name == "bom_mid_names.txt"
    target = 1 << 17
    first = small[: small.index(b"\n") + 1]
    fill = _filler(target - len(first), names)
    shift = fill.count(b"\n")  # lines inserted after the small file's first line
    big = tmp_path / name
    big.write_bytes(first + fill + small[len(first):])
    assert big.read_bytes()[target - 1: target] == b"\n"  # the rest starts at byte 128 Ki
    if boundary:
        monkeypatch.setattr(edgelist, "_BLOCK", target)
    try:
        want = _graph(HOSTILE / "edgelists" / name)
    except ValueError as exc:
        line = int(re.search(r", line (\d+): ", str(exc)).group(1))
        with pytest.raises(ValueError, match=rf"^{re.escape(str(big))}, line {line + shift}: "):
            read_edgelist(big)
        return
    got = _graph(big)
    filler_names = {x.decode() for x in fill.split()}
    assert set(got[2]) == set(want[2]) | filler_names
    assert ("\ufeffalice" in got[2]) == ("\ufeffalice" in want[2])


# ------------------------------------------------------------------------------ report rows

_COLS = ["node", "round", "quantity", "value", "epsilon", "sensitivity", "protocol", "protocol_version"]


def _rows(**change):
    n = 6
    cols = {"node": pa.array(range(n), pa.int64()), "round": pa.array([1] * n, pa.int64()),
            "quantity": pa.array(["degree"] * n), "value": pa.array([3, 2, -2, 3, 2, 1], pa.int64()),
            "epsilon": pa.array([1.0] * n), "sensitivity": pa.array([1.0] * n),
            "protocol": pa.array(["degree"] * n), "protocol_version": pa.array([1] * n, pa.int64())}
    cols.update(change)
    return pa.table({k: v for k, v in cols.items() if v is not None})


def _generate(name: str, path: Path) -> None:
    row = {"node": 0, "round": 1, "quantity": "degree", "value": 3, "epsilon": 1.0,
           "sensitivity": 1.0, "protocol": "degree", "protocol_version": 1}
    if name == "long_line.jsonl":
        pad = json.dumps({**row, "node": 1, "pad": "x" * (3 << 19)})
        path.write_text(json.dumps(row) + "\n" + pad + "\n")
        return
    if name == "long_line_no_newline.jsonl":
        path.write_bytes(b'{"node": 0, "pad": "' + b"y" * (2 << 20))
        return
    tables = {
        "valid.parquet": _rows(),
        "missing_column.parquet": _rows(sensitivity=None),
        "extra_column.parquet": _rows(comment=pa.array(["hi"] * 6)),
        "float_value.parquet": _rows(value=pa.array([3, 2, 1.5, 3, 2, 1])),
        "value_beyond_2_53.parquet": _rows(value=pa.array([3, 2, 2**53 + 1, 3, 2, 1], pa.int64())),
        "node_01.parquet": _rows(node=pa.array(["0", "01", "2", "3", "4", "5"])),
        "node_uint64_beyond.parquet": _rows(node=pa.array([0, 2**63, 2, 3, 4, 5], pa.uint64())),
        "node_float.parquet": _rows(node=pa.array([0.0, 1, 2, 3, 4, 5])),
        "bool_value.parquet": _rows(value=pa.array([True, False] * 3)),
        "mixed_epsilon.parquet": _rows(epsilon=pa.array([1.0] * 3 + [0.5] * 3)),
        "unknown_protocol.parquet": _rows(protocol=pa.array(["degree-v9"] * 6)),
        "wrong_protocol_version.parquet": _rows(protocol_version=pa.array([2] * 6, pa.int64())),
        "nan_epsilon.parquet": _rows(epsilon=pa.array([1.0, 1.0, float("nan"), 1.0, 1.0, 1.0])),
    }
    if name in tables:
        pq.write_table(tables[name], path)
        return
    if name == "duplicate_column.parquet":  # 'value' twice (7443152 read the first)
        t = _rows()
        pq.write_table(pa.Table.from_arrays([*t.columns, pa.array([99] * 6, pa.int64())],
                                            names=[*t.column_names, "value"]), path)
        return
    if name == "format_version_2.parquet":
        pq.write_table(_rows().replace_schema_metadata({b"ldpgraph.report_format": b"2"}), path)
        return
    pq.write_table(_rows(), path)
    data = path.read_bytes()
    if name == "truncated.parquet":
        path.write_bytes(data[: len(data) // 2])
    elif name == "binary.parquet":
        path.write_bytes(b"PAR1" + np.random.default_rng(30).bytes(len(data)) + b"PAR1")
    else:
        raise AssertionError(name)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile-generated")
    for name in GENERATED_REPORTS:
        _generate(name, folder / name)
    return folder


def _consume(path: Path) -> int:
    return sum(len(chunk) for chunk in iter_report_chunks(path))


def _report_case(path: Path, row, reader: str, expected: str) -> None:
    where = row[3]
    if reader == "iter_report_chunks":
        n = _check_api(_consume, path, expected, where)
        assert n is None or n >= 0
    elif reader == "read_report_set":
        _check_api(read_report_set, path, expected, where)
    else:
        extra = ["--epsilon", "1"] if path.name.startswith("rr_") else []
        _check_cli(["curate", str(path), *extra], path, expected)


_REPORT_READERS = ("iter_report_chunks", "read_report_set", "cli_curate")


@pytest.mark.parametrize(("name", "reader", "expected"), _cases("reports", REPORTS, _REPORT_READERS))
def test_report_file(name, reader, expected):
    _report_case(HOSTILE / "reports" / name, REPORTS[name], reader, expected)


@pytest.mark.parametrize(("name", "reader", "expected"),
                         _cases("reports", GENERATED_REPORTS, _REPORT_READERS))
def test_generated_report_file(name, reader, expected, generated):
    _report_case(generated / name, GENERATED_REPORTS[name], reader, expected)


# ------------------------------------------------------------------------------ broadcasts, rosters


@pytest.mark.parametrize(("name", "reader", "expected"),
                         _cases("broadcasts", BROADCASTS, ("read_triangle_broadcast",)))
def test_broadcast(name, reader, expected):
    path = HOSTILE / "broadcasts" / name
    b = _check_api(read_triangle_broadcast, path, expected, BROADCASTS[name][1])
    if b is not None:
        assert (b.n_nodes, b.epsilon, b.bound, b.index.size) == (6, 0.5, 3, 4)


@pytest.mark.parametrize(("name", "reader", "expected"),
                         _cases("rosters", ROSTERS, ("read_roster", "cli_curate_roster")))
def test_roster(name, reader, expected):
    path = HOSTILE / "rosters" / name
    if reader == "read_roster":
        roster = _check_api(read_roster, path, expected, ROSTERS[name][2])
        if roster is not None:
            assert len(roster) == 6
    else:
        reports = HOSTILE / "reports" / "valid.csv"
        _check_cli(["curate", str(reports), "--roster", str(path)], path, expected)


@pytest.mark.parametrize("name", sorted(JSON_BROADCASTS))
def test_json_broadcast(name):
    """issue 36 finding 11: the JSON broadcast readers (wshuffle-*-ignore's now with the run-id
    check) refuse duplicated keys, negative ids, edits, over-long numbers with a ValueError
    naming the file."""
    from ldpgraph.protocols import registry

    protocol, expected, where, _ = JSON_BROADCASTS[name]
    proto = registry.get(protocol)
    plan = proto.plan(2.0, **({"n_users": 12, "pairing_seed": 0} if protocol.startswith("wshuffle") else {}))
    b = _check_api(lambda p: read_broadcast(proto, p, plan), HOSTILE / "json_broadcasts" / name, expected, where)
    if b is not None:
        assert b.n_nodes == 12


def test_jsonl_checks_each_line_before_reading_the_next(tmp_path):
    """issue 36 finding 11: a JSON Lines file whose first row is bad is refused on that row,
    before the next lines are read: 7443152 held up to a chunk of lines (1,024 x 1 MiB) before
    checking a cell. Here 40 lines of ~1 MiB follow: the traced peak stays under 4 MiB."""
    import tracemalloc

    row = {"node": 0, "round": 1, "quantity": "degree", "value": 1.5, "epsilon": 1, "sensitivity": 1,
           "protocol": "degree", "protocol_version": 1}
    pad = json.dumps({**row, "value": 1, "quantity": "q" * ((1 << 20) - 200)})
    path = tmp_path / "bad_first.jsonl"
    path.write_text(json.dumps(row) + "\n" + (pad + "\n") * 40)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as info:
            for _ in iter_report_chunks(path, chunk_rows=1024):
                pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, peak
    assert re.search(r"bad_first.jsonl row 0 \(line 1\)", str(info.value)), info.value


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_broadcast_not_a_regular_file(kind, tmp_path):
    """issue 36 finding 4: a broadcast that is not a regular file (a named pipe, which can serve
    other bytes at each opening, a device, a folder) is refused before a byte is read, naming it."""
    from ldpgraph.run.authenticate import read_broadcast_once

    path = {"fifo": tmp_path / "b.txt", "device": Path("/dev/zero"), "folder": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)  # no writer: an ordinary open would block forever
    with pytest.raises(ValueError, match=rf"^the broadcast {re.escape(str(path))} is a .*only a regular file"):
        with read_broadcast_once(path, b"k" * 32):
            pass


# ------------------------------------------------------------------------------ planted manifests


@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_planted_manifest_deletes_nothing(name, tmp_path):
    """issue 36 finding 3: ``experiment --out`` (:func:`write_atomically`) on a folder holding a
    planted manifest, a user's file and a link deletes nothing it did not write (on 7443152 the
    listed paths were deleted, inside the folder or not)."""
    from ldpgraph.experiments.outputs import write_atomically

    victims = [tmp_path / "victim", tmp_path / "abs" / "victim"]
    for v in victims:
        v.parent.mkdir(exist_ok=True)
        v.write_text("victim\n")  # the size and SHA-256 the manifests give
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    (out / "plots").mkdir()
    (out / "linked").symlink_to(tmp_path, target_is_directory=True)
    text = (HOSTILE / "manifests" / name).read_text().replace("/ABS", str(tmp_path / "abs"))
    (out / "manifest.json").write_text(text)

    def produce(tmp):
        (tmp / "summary.txt").write_text("new")
        return {}

    write_atomically(out, produce, config={})
    assert [v.read_text() for v in victims] == ["victim\n"] * 2
    assert (out / "notes.txt").read_text() == "mine\n" and (out / "linked").is_symlink()
    assert (out / "summary.txt").read_text() == "new"


# ------------------------------------------------------------------------------ in a child process

_CHILD = r"""
import resource, sys, traceback


def _peak_kib():
    # this process's own peak RSS: VmHWM is per address space, fresh after exec (ru_maxrss is
    # not: Linux carries the parent's high-water mark into a forked-and-exec'd child, so under a
    # big pytest process every child would report the parent's peak)
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


reader, path = sys.argv[1], sys.argv[2]
try:
    if reader == "read_edgelist":
        from ldpgraph.graph import read_edgelist
        read_edgelist(path)
    elif reader == "iter_report_chunks":
        from ldpgraph.run.reportfiles import iter_report_chunks
        for _ in iter_report_chunks(path):
            pass
    elif reader == "cli":
        from ldpgraph.cli import main
        rc = main(sys.argv[3:])
        print("peak", _peak_kib())
        sys.exit(rc)
    else:
        raise SystemExit(f"unknown reader {reader}")
except (ValueError, OSError) as exc:
    print("peak", _peak_kib())
    print(type(exc).__name__, exc, file=sys.stderr)
    sys.exit(1)
except Exception:
    traceback.print_exc()
    sys.exit(3)
print("peak", _peak_kib())
"""

_NASTY = [
    ("edgelists", "binary.bin", "read_edgelist", None),
    ("edgelists", "bomb.gz", "cli", ["estimate", "{path}", "--epsilon", "1"]),
    ("generated", "long_line.jsonl", "iter_report_chunks", None),
    ("generated", "binary.parquet", "iter_report_chunks", None),  # into pyarrow's C++ reader
    ("reports", "deep_nesting.jsonl", "iter_report_chunks", None),
    # issue 36 finding 6: 7443152 allocated 2.3 GB by the largest node id (peak < 1 GiB here)
    ("reports", "rr_node_2_27.csv", "cli", ["curate", "{path}", "--epsilon", "1"]),
]


def _nasty_params() -> list:
    out = []
    for folder, name, reader, argv in _NASTY:
        key = ("reports", name, "subprocess")
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[key])] if key in KNOWN else []
        out.append(pytest.param(folder, name, reader, argv, id=f"{name}/{reader}", marks=marks))
    return out


def _child_args(folder: str, name: str, reader: str, argv: list[str] | None, generated: Path) -> list[str]:
    path = generated / name if folder == "generated" else HOSTILE / folder / name
    return [reader, str(path)] + [a.format(path=path) for a in (argv or [])]


@pytest.fixture(scope="module")
def children(generated) -> dict[tuple[str, str], subprocess.CompletedProcess]:
    """All the children at once (they are independent): (name, reader) -> the finished process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "MPLBACKEND": "Agg"}
    running = {}
    for folder, name, reader, argv in _NASTY:
        args = [sys.executable, "-c", _CHILD, *_child_args(folder, name, reader, argv, generated)]
        running[name, reader] = (args, subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                        text=True, env=env))
    done = {}
    for key, (args, proc) in running.items():
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            err += "\n(timed out after 60 s)"
        done[key] = subprocess.CompletedProcess(args, proc.returncode, out, err)
    return done


@pytest.mark.parametrize(("folder", "name", "reader", "argv"), _nasty_params())
def test_nastiest_in_a_child(folder, name, reader, argv, children):
    """The child exits 0 or 1 (a clean error), never by a signal, another exception (3) or a
    timeout, and stays under 1 GiB of memory. The children run in parallel (the fixture)."""
    proc = children[name, reader]
    assert "timed out" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr[-2000:]}"
    assert proc.returncode in (0, 1), f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    peak = [int(ln.split()[1]) for ln in proc.stdout.splitlines() if ln.startswith("peak ")]
    assert peak and peak[-1] < (1 << 20), f"peak RSS {peak} KiB"  # ru_maxrss is in KiB on Linux
    if proc.returncode == 1:
        assert name in proc.stderr, proc.stderr[-1000:]
