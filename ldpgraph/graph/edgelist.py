r"""Edge lists as users have them: a pure parser on bytes or lines, and a thin streaming reader.

Format (decided here, checked strictly, every choice reported in ``graph.report.notes``):

- one edge per line; lines end with ``\n`` (a ``\r`` before it is tolerated, and so is a
  ``\r`` anywhere a space could be); the last line may lack its ``\n``; a UTF-8 byte-order
  mark at the start is dropped;
- ``#`` starts a comment that runs to the end of the line (a whole line or after the ids, as
  in networkx); blank and comment-only lines are skipped;
- fields are separated by runs of spaces and tabs, by commas (CSV, ``"``-quoted fields
  allowed) or by single tabs: detected from the first edge line (a comma there means CSV; a
  tab with spaces inside its fields means tab-separated; else whitespace), or given
  (``delimiter=``);
- a header line (column names) is recognised as the first edge line when its fields are
  known column names (``source target``, ``from,to``, ``src dst``, ...) or when they are not
  integers while those of the next line are; ``header=True``/``False`` decides it;
- the two node columns are ``columns=(i, j)`` (default the first two, or the ``source`` /
  ``target`` columns named in a header). Every line has the number of fields of the first
  edge line; extra columns (weights, timestamps) are ignored with a note, or refused with
  ``strict=True``;
- node ids are non-negative integers (at most ``2**63 - 1``, leading zeros allowed) when the
  first edge line has integer ids in both node columns, and any later non-integer id is then
  an error; otherwise (or with ``node_type="str"``) every id is a name: UTF-8 text without
  control characters, node ids sorted as Python sorts strings;
- anything else is an error: ``ValueError`` naming the source, the 1-based line number,
  what was found and what was expected, and showing the line as text. Nothing but
  comments, blank lines and a header line is ever skipped, and nothing silently.

Files may be gzip, bzip2 or xz compressed, detected by their magic bytes (not their name);
they are read and parsed in bounded blocks (never the whole file at once). A decompressed
size beyond ``max_ratio`` times the compressed size (after the first 8 MiB, checked every MiB,
so before anything is parsed) is refused as a likely decompression bomb, and so is text beyond
``max_bytes``; FIFOs, devices and sockets are refused (a stream may not end). Parquet files
are read by :func:`read_parquet_edges`.

Speed: one grammar at every size. A block of integer ids separated by tabs or by spaces
(not both), with only bytes from tab to ``9`` in it and no CR, minus sign or comment (two
numpy reductions and a few memchr passes: pyarrow's integer reader would accept hexadecimal,
``-0``, a byte-order mark at the start of its buffer and blanks around a value, where the
format does not, and it refuses every other byte of that range) and no blank line (so
that its rows are its lines), is parsed by pyarrow's multi-threaded CSV reader into int32
columns (int64 from the first block whose ids do not fit), kept as pyarrow's buffers until
one concatenation at the end; other blocks of the numeric two-column format by the numpy
SWAR parser (``_parse_chunk_fast``), two chunks at a time in threads; a chunk in which either
sees anything unusual is re-parsed line by line (``_parse_lines``), which raises the exact
error or returns the ids. Other formats (CSV, extra columns, names) go through pyarrow's CSV
reader block by block (integer ids by its integer reader where the block holds no ``x``,
``X`` or ``-``, else as text checked to be ASCII digits before they are converted), except
a block that starts with a byte-order mark, with the same exact
line-by-line fallback (tests/graph/test_edgelist_grammar.py compares the two). See
``scripts/bench_graph_io.py``.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import lzma
import os
import re
import stat
import sys
import threading
import zlib
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ldpgraph._cores import usable_cores
from ldpgraph._validation import digit_count_text
from ldpgraph.graph.core import Graph, _build_owned, _graph_from_owned_ids
from ldpgraph.graph.tables import _name_positions

__all__ = ["ParsedEdges", "parse_edge_pairs", "parse_edgelist", "read_edge_pairs", "read_edgelist"]

EdgeListInput = bytes | bytearray | memoryview | str | Iterable[str | bytes]
NodeType = Literal["auto", "int", "str"]

_MAX_ID = 2**63 - 1
_CHUNK = 1 << 19  # bytes per SWAR chunk: keeps the temporaries of one chunk in cache
_BLOCK = 1 << 24  # bytes of text read and parsed at a time
_ARROW_MIN = 1 << 16  # blocks smaller than this skip pyarrow (its fixed cost dominates)
# ... and below this while pyarrow is not imported (~0.1 s; numpy's SWAR parser is as fast on
# blocks of a few MiB): a small file (the Facebook graph, 0.85 MB) loads without pyarrow
_ARROW_COLD = 1 << 23
_MAX_LINE = 1 << 24  # a line longer than this is refused (no edge line is that long)
_RATIO_FLOOR = 1 << 23  # the ratio limit applies once this much text was decompressed (< _BLOCK)
_READ = 1 << 20  # bytes decompressed at a time (the limits are checked after each)
_SNIFF_LINES = 3  # edge lines looked at to decide the format
_MAX_THREADS = 2  # chunks are parsed by up to this many threads
_PAD = 24  # whitespace before each chunk in the work buffer: three 8-byte windows of a 19-digit id
_ALLOWED = b"0123456789 \t\r\n"  # the only bytes outside comments
_NOT_FOR_ARROW = (b"#", b"\r", b"-")  # a numeric block holding one of these is not given to pyarrow
# ... and in other formats, ids are not read by pyarrow's integer reader (hexadecimal, "-0")
_NOT_FOR_ARROW_INTS = (b"x", b"X", b"-")
_DIGITS = re.compile(r"[0-9]+")
_NEGATIVE = re.compile(r"-[0-9]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NUMBER_LIKE = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
_WS = re.compile(r"[ \t\r]+")
_BOM = b"\xef\xbb\xbf"
_KNOWN_NAMES = [
    ("source", "target"), ("src", "dst"), ("from", "to"), ("u", "v"), ("node1", "node2"),
    ("node_1", "node_2"), ("fromnodeid", "tonodeid"), ("id1", "id2"), ("source_id", "target_id"),
    ("head", "tail"),
]
_MAGIC = [
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PAR1", "parquet"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PK\x03\x04", "zip"),
]

_U = np.uint64
_LOW_NIBBLES = _U(0x0F0F0F0F0F0F0F0F)
_BIT4 = _U(0x1010101010101010)  # bit 4 is set in '0'..'9' (0x30-0x39), clear in \t \n \r ' '


class ParsedEdges(NamedTuple):
    """Raw result of parsing an edge list, before any graph is built.

    Attributes
    ----------
    pairs : ndarray of int64, shape (m, 2)
        The two node ids of every edge line, in file order, as written (no relabelling); for
        named nodes, positions in ``names``.
    lines_read : int
        Lines in the input, comment, blank and header lines included.
    source : str
        The name used in error messages.
    names : ndarray of str objects or None
        For named nodes (``node_type="str"``, or detected), the sorted distinct names.
    notes : tuple of str
        What the reader decided (delimiter, header, ignored columns, names).
    """

    pairs: NDArray[np.int64]
    lines_read: int
    source: str
    names: NDArray[Any] | None = None
    notes: tuple[str, ...] = ()


@dataclass
class _Dialect:
    """The format of one input, decided from its first edge lines (see :func:`_sniff`)."""

    delimiter: str | None  # None: runs of spaces and tabs
    n_fields: int
    columns: tuple[int, int]
    names: bool  # node ids are names, not integers
    first_line: int  # line number of the first edge line (mode and field count taken from it)
    header: tuple[str, ...] | None = None
    header_line: int = 0
    notes: list[str] = field(default_factory=list)
    auto: bool = True  # node type detected, not given
    wide: bool = False  # a block had an id beyond int32: pyarrow reads the next ones as int64

    @property
    def numeric_pairs(self) -> bool:
        """The SNAP case: whitespace, two integer columns (the fast parsers)."""
        return (
            self.delimiter is None
            and self.n_fields == 2
            and not self.names
            and set(self.columns) == {0, 1}
        )


def parse_edge_pairs(
    data: EdgeListInput,
    *,
    source_name: str = "<input>",
    delimiter: str | None = None,
    columns: tuple[int, int] | None = None,
    header: bool | None = None,
    strict: bool = False,
    node_type: NodeType = "auto",
) -> ParsedEdges:
    r"""Parse edge-list text into an ``(m, 2)`` int64 array of node ids.

    Parameters
    ----------
    data : bytes, bytearray, memoryview, str, or iterable of str/bytes lines
        The whole text, or its lines (with or without their ``\n``). A ``str`` is the
        text itself, not a file name: use :func:`read_edge_pairs` for files.
    source_name : str
        Name used in error messages.
    delimiter : {None, ",", "\t", " "}, optional
        Field separator; None detects it from the first edge line (see the module notes).
        ``" "`` means runs of spaces and tabs.
    columns : tuple of two ints, optional
        The 0-based columns holding the two node ids (default: the ``source``/``target``
        columns of a header, else the first two). Other columns are then ignored, with a note.
    header : bool, optional
        Whether the first edge line holds column names; None detects it.
    strict : bool
        Refuse extra columns unless ``columns`` says which two to use.
    node_type : {"auto", "int", "str"}
        Integer ids, names, or decided by the first edge line.

    Returns
    -------
    ParsedEdges

    Raises
    ------
    ValueError
        On the first malformed line, naming ``source_name`` and the 1-based line number,
        showing the line and saying what was expected.

    Examples
    --------
    >>> p = parse_edge_pairs(b"# a comment\n1 2\r\n\n3\t\t4  # trailing comment\n")
    >>> p.pairs.tolist(), p.lines_read
    ([[1, 2], [3, 4]], 4)
    >>> parse_edge_pairs("1 2\n3 x\n", source_name="toy.txt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: toy.txt, line 2: node id 'x' is not a non-negative integer (...); the line is '3 x'
    >>> p = parse_edge_pairs("source,target,weight\nalice,bob,0.5\nbob,carol,2\n")
    >>> p.names.tolist(), p.pairs.tolist()
    (['alice', 'bob', 'carol'], [[0, 1], [1, 2]])
    """
    if not isinstance(source_name, str):
        raise TypeError(f"source_name must be a str, got {type(source_name).__name__}")
    options = _options(delimiter, columns, header, strict, node_type)
    raw = _as_bytes(data)
    return _pairs(_parse_stream(_memory_blocks(raw), source_name, options), source_name)


def parse_edgelist(
    data: EdgeListInput,
    *,
    source_name: str = "<input>",
    delimiter: str | None = None,
    columns: tuple[int, int] | None = None,
    header: bool | None = None,
    strict: bool = False,
    node_type: NodeType = "auto",
) -> Graph:
    r"""Parse edge-list text into a :class:`~ldpgraph.graph.Graph`.

    The edges are taken as undirected (a directed list is symmetrised, with a note when some
    edge is given in both directions), self-loops and duplicates are dropped, and node ids
    are relabelled to ``0..n-1`` in increasing order; ``graph.report`` counts all of it and
    ``graph.node_ids`` keeps the original ids (or names).

    Parameters
    ----------
    data : bytes, bytearray, memoryview, str, or iterable of str/bytes lines
        See :func:`parse_edge_pairs`, and there for the other parameters.
    source_name : str
        Name used in error messages and in the load report.

    Returns
    -------
    Graph

    Examples
    --------
    >>> g = parse_edgelist(["# directed", "5 7", "7 5", "5 9", "9 9"])
    >>> g.n_nodes, g.n_edges, g.node_ids.tolist()
    (3, 2, [5, 7, 9])
    >>> r = g.report
    >>> r.edges_read, r.reverse_duplicates_dropped, r.self_loops_dropped, r.lines_skipped
    (4, 1, 1, 1)
    >>> g = parse_edgelist("alice bob 1.5\nbob carol 2\n")
    >>> g.node_ids.tolist(), g.degrees.tolist()
    (['alice', 'bob', 'carol'], [1, 2, 1])
    >>> g.report.notes[1]
    'node ids read as names (text): line 1 has ids that are not numbers'
    >>> g.report.notes[0].split(":")[0]
    '3 columns per line'
    """
    options = _options(delimiter, columns, header, strict, node_type)
    raw = _as_bytes(data)
    return _graph([_parse_stream(_memory_blocks(raw), source_name, options)], source_name)


def read_edge_pairs(
    path: str | os.PathLike[str],
    *,
    delimiter: str | None = None,
    columns: tuple[int, int] | None = None,
    header: bool | None = None,
    strict: bool = False,
    node_type: NodeType = "auto",
    max_bytes: int | None = None,
    max_ratio: float | None = 100.0,
) -> ParsedEdges:
    """Read an edge-list file (plain, gzip, bzip2 or xz) into raw id pairs.

    See :func:`parse_edge_pairs` for the format options and :func:`read_edgelist` for the
    file options.

    Raises
    ------
    ValueError
        On a malformed line (file name and line number in the message), on corrupt or
        truncated compressed data, past the size limits, or for a FIFO, device or socket.
    """
    name = _path_name(path)
    options = _options(delimiter, columns, header, strict, node_type)
    return _pairs(_parse_stream(_file_blocks(name, max_bytes, max_ratio), name, options), name)


def read_edgelist(
    path: str | os.PathLike[str],
    *,
    delimiter: str | None = None,
    columns: tuple[int, int] | None = None,
    header: bool | None = None,
    strict: bool = False,
    node_type: NodeType = "auto",
    max_bytes: int | None = None,
    max_ratio: float | None = 100.0,
) -> Graph:
    """Read an edge-list file into a :class:`~ldpgraph.graph.Graph`, in bounded blocks.

    See the module docstring for the format, :func:`parse_edge_pairs` for the format
    options, and :func:`parse_edgelist` for what is done with the edges. A Parquet file
    (recognised by its magic bytes) is read by :func:`~ldpgraph.graph.read_parquet_edges`.

    Parameters
    ----------
    path : str or os.PathLike
        File name. gzip, bzip2 and xz data are recognised by their magic bytes, whatever
        the extension.
    delimiter, columns, header, strict, node_type
        See :func:`parse_edge_pairs`.
    max_bytes : int, optional
        Refuse more than this many bytes of (decompressed) text.
    max_ratio : float or None
        Refuse compressed input that expands beyond this many times its compressed size
        once 8 MiB of text have been decompressed (a decompression bomb); None disables it.

    Returns
    -------
    Graph

    Raises
    ------
    ValueError
        On a malformed line (file name and 1-based line number in the message), on corrupt
        or truncated compressed data, past the size limits, or for a FIFO, device or socket.
    """
    name = _path_name(path)
    if _file_kind(name) == "parquet":  # its columns may be names; the text options do not apply
        from ldpgraph.graph.tables import read_parquet_edges

        given = [k for k, v in (("delimiter", delimiter), ("header", header)) if v is not None]
        given += ["node_type"] if node_type != "auto" else []
        if given:
            raise ValueError(f"{', '.join(given)} apply to text edge lists, not to the Parquet file {name} "
                             "(its column types decide the node ids)")
        return read_parquet_edges(name, columns=columns, strict=strict)
    options = _options(delimiter, columns, header, strict, node_type)
    return _graph([_parse_stream(_file_blocks(name, max_bytes, max_ratio), name, options)], name)


# ---------------------------------------------------------------------------------------------
# options and results


@dataclass(frozen=True)
class _Options:
    delimiter: str | None
    columns: tuple[int, int] | None
    header: bool | None
    strict: bool
    node_type: str


def _options(
    delimiter: object, columns: object, header: object, strict: object, node_type: object
) -> _Options:
    if delimiter is not None and delimiter not in (",", "\t", " "):
        raise ValueError(f"delimiter must be None, ',', '\\t' or ' ', got {delimiter!r}")
    if columns is not None:
        ok = (
            isinstance(columns, (tuple, list))
            and len(columns) == 2
            and all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in columns)
        )
        if not ok or min(columns) < 0 or columns[0] == columns[1]:
            raise ValueError(
                f"columns must be two different non-negative column indices, got {columns!r}"
            )
        columns = (int(columns[0]), int(columns[1]))
    if header is not None and not isinstance(header, bool):
        raise TypeError(f"header must be None, True or False, got {header!r}")
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be a bool, got {strict!r}")
    if node_type not in ("auto", "int", "str"):
        raise ValueError(f"node_type must be 'auto', 'int' or 'str', got {node_type!r}")
    return _Options(delimiter, columns, header, strict, node_type)  # " ": whitespace, not detected


class _Parsed(NamedTuple):
    u: NDArray[np.integer]  # ids, or positions in names
    v: NDArray[np.integer]
    lines: int
    names: NDArray[Any] | None
    notes: tuple[str, ...]


def _pairs(p: _Parsed, source: str) -> ParsedEdges:
    pairs = np.empty((p.u.size, 2), dtype=np.int64)
    pairs[:, 0] = p.u
    pairs[:, 1] = p.v
    return ParsedEdges(pairs, p.lines, source, p.names, p.notes)


def _graph(parsed: list[_Parsed], source: str) -> Graph:
    """The graph of the one parsed input in ``parsed``, which is emptied.

    The parsed columns are handed to the build with their only references, so that they are
    freed once it has read them (the peak is then the build's, not the build's plus theirs).
    """
    p = parsed.pop()
    cols = [p.u, p.v]
    lines, names, notes = p.lines, p.names, p.notes
    del p
    if names is None:
        return _graph_from_owned_ids(cols, source=source, lines_total=lines, notes=notes)
    return _build_owned(
        cols,
        names.size,
        names,
        source=source,
        relabelled=True,
        lines_total=lines,
        notes=notes,
    )


# ---------------------------------------------------------------------------------------------
# input handling


def _path_name(path: object) -> str:
    if isinstance(path, (bytes, bytearray)) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    return os.fspath(path)


def _file_kind(name: str) -> str:
    """``"plain"``, a compression, or ``"parquet"``, by magic bytes; refuses non-regular files."""
    mode = os.stat(name).st_mode  # FileNotFoundError for a missing file
    if not stat.S_ISREG(mode):
        what = (
            "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
        )
        raise ValueError(
            f"{name}: is {what}, not a regular file; edge lists are read from files (a stream "
            "may never end): write the data to a file first"
        )
    with open(name, "rb") as f:
        head = f.read(8)
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return "plain"


def _file_blocks(name: str, max_bytes: int | None, max_ratio: float | None) -> Iterator[bytes | bytearray]:
    """Blocks of about ``_BLOCK`` bytes of decompressed text, each ending with a newline."""
    bad = isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0
    if max_bytes is not None and bad:
        raise ValueError(f"max_bytes must be None or a non-negative int, got {max_bytes!r}")
    if max_ratio is not None and not (isinstance(max_ratio, (int, float)) and max_ratio >= 1):
        raise ValueError(f"max_ratio must be None or a number >= 1, got {max_ratio!r}")
    kind = _file_kind(name)
    if kind in ("zstd", "zip", "parquet"):
        fix = {
            "zstd": "decompress it first (zstd -d)",
            "zip": "extract the edge list first (unzip)",
            "parquet": "use read_parquet_edges or load_graph",
        }[kind]
        raise ValueError(f"{name}: {kind} data is not read as an edge-list text; {fix}")
    return _blocks_of(name, kind, max_bytes, max_ratio)


def _blocks_of(
    name: str, kind: str, max_bytes: int | None, max_ratio: float | None
) -> Iterator[bytes | bytearray]:
    if kind == "plain":
        yield from _plain_blocks(name, max_bytes)
        return
    errors: tuple[type[BaseException], ...] = (EOFError, OSError, zlib.error, lzma.LZMAError)
    with open(name, "rb") as raw:
        stream = _text_stream(raw, kind)
        # compressed data is decompressed in pieces of _READ bytes and the limits checked after
        # each, so that a bomb is refused after _RATIO_FLOOR + _READ bytes, before any parsing
        step = _BLOCK if kind == "plain" else min(_READ, _BLOCK)
        total = 0
        offset = 0  # bytes yielded
        carry = b""
        eof = False
        while not eof:
            parts: list[bytes] = []
            pending = 0
            while pending < _BLOCK:
                try:
                    piece = stream.read(step)
                except errors as exc:
                    raise ValueError(
                        f"{name}: corrupt or truncated {kind} data ({type(exc).__name__}: {exc})"
                    ) from exc
                if not piece:
                    eof = True
                    break
                total += len(piece)
                _check_limits(name, kind, total, raw.tell(), max_bytes, max_ratio)
                parts.append(piece)
                pending += len(piece)
            if not parts:
                break
            chunk = parts[0] if len(parts) == 1 else b"".join(parts)
            del parts
            data = carry + chunk if carry else chunk
            del chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) > _MAX_LINE:
                    line = _newlines_before(name, kind, offset) + 1  # counted only here
                    raise ValueError(
                        f"{name}, line {line}: longer than {_MAX_LINE:,} bytes without a line "
                        "break; this is not an edge list"
                    )
                carry = data
                continue
            carry = data[cut:]
            block = data[:cut] if carry else data
            offset += len(block)
            yield block
        if carry:
            yield carry


def _plain_blocks(name: str, max_bytes: int | None) -> Iterator[bytearray]:
    """:func:`_blocks_of` for a plain file: each block read straight into its own bytearray.

    The tail after the block's last newline is copied to the start of the next block (one
    partial line); the block is then shortened in place. No other copy is made (reading
    into pieces, joining them to the tail and cutting the result measured 0.07 s for a
    138 MB file, against 0.03 s).
    """
    with open(name, "rb") as f:
        size = os.fstat(f.fileno()).st_size  # a hint: the file may still grow or shrink
        total = 0
        offset = 0  # bytes yielded
        carry = bytearray()
        eof = False
        while not eof:
            # the rest of the file (+ 1 byte: its end is seen without another block), or a block
            want = _BLOCK if size <= total else min(_BLOCK, size - total + 1)
            block = bytearray(len(carry) + want)
            block[: len(carry)] = carry
            filled = len(carry)
            with memoryview(block) as view:
                while filled < len(block):
                    try:
                        k = f.readinto(view[filled:])
                    except OSError as exc:
                        raise ValueError(f"{name}: cannot read ({type(exc).__name__}: {exc})") from exc
                    if not k:
                        eof = True
                        break
                    filled += k
                    total += k
                    _check_limits(name, "plain", total, total, max_bytes, None)
            if filled == len(carry):  # nothing more
                break
            del block[filled:]
            cut = block.rfind(b"\n") + 1
            if cut == 0:
                if len(block) > _MAX_LINE:
                    line = _newlines_before(name, "plain", offset) + 1  # counted only here
                    raise ValueError(
                        f"{name}, line {line}: longer than {_MAX_LINE:,} bytes without a line "
                        "break; this is not an edge list"
                    )
                carry = block
                continue
            carry = block[cut:]
            del block[cut:]
            offset += len(block)
            yield block
            del block
        if carry:
            yield carry


def _text_stream(raw: Any, kind: str) -> Any:
    """The decompressed stream of an open binary file of the given kind (itself when plain)."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "bzip2":
        return bz2.BZ2File(raw, mode="rb")
    if kind == "xz":
        return lzma.LZMAFile(raw, mode="rb")
    return raw


def _newlines_before(name: str, kind: str, offset: int) -> int:
    """Newlines in the first ``offset`` bytes of text of the file (for an error message)."""
    count = 0
    with open(name, "rb") as raw:
        stream = _text_stream(raw, kind)
        while offset > 0:
            piece = stream.read(min(offset, _READ))
            if not piece:
                break
            count += piece.count(b"\n")
            offset -= len(piece)
    return count


def _check_limits(
    name: str, kind: str, total: int, packed: int, max_bytes: int | None, max_ratio: float | None
) -> None:
    if max_bytes is not None and total > max_bytes:
        raise ValueError(
            f"{name}: more than max_bytes = {max_bytes:,} bytes of text; raise max_bytes "
            "(--max-bytes) if the file is genuine"
        )
    if kind != "plain" and max_ratio is not None and total > _RATIO_FLOOR:
        packed = max(packed, 1)
        if total > max_ratio * packed:
            raise ValueError(
                f"{name}: {kind} data expands more than max_ratio = {max_ratio:g} times "
                f"({total:,} bytes of text from {packed:,} compressed bytes so far): a "
                "decompression bomb? Pass max_ratio=None (--max-ratio 0) if the file "
                "is genuine"
            )


def _memory_blocks(raw: bytes) -> Iterator[bytes]:
    """``raw`` cut into blocks of about ``_BLOCK`` bytes, each ending after a newline."""
    start, n = 0, len(raw)
    while start < n:
        end = min(start + _BLOCK, n)
        if end < n:
            j = raw.rfind(b"\n", start, end)
            if j < 0:
                j = raw.find(b"\n", end)
            end = n if j < 0 else j + 1
        yield raw[start:end]
        start = end


def _as_bytes(data: object) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, str):
        return data.encode("utf-8", "surrogateescape")
    if isinstance(data, (os.PathLike, np.ndarray)) or not isinstance(data, Iterable):
        raise TypeError(
            "data must be bytes, str or an iterable of lines (use read_edgelist for files), "
            f"got {type(data).__name__}"
        )
    parts = []
    for i, line in enumerate(data):
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogateescape")
        elif not isinstance(line, (bytes, bytearray)):
            raise TypeError(f"line {i + 1} must be str or bytes, got {type(line).__name__}")
        parts.append(line[:-1] if line.endswith(b"\n") else line)
    return b"\n".join(parts)


# ---------------------------------------------------------------------------------------------
# the stream: decide the format from the head, then parse block by block


def _parse_stream(blocks: Iterator[bytes | bytearray], source: str, options: _Options) -> _Parsed:
    blocks = iter(blocks)
    head = b""
    for block in blocks:  # enough text to decide the format
        head += block
        if len(_edge_lines(head, _SNIFF_LINES)) >= _SNIFF_LINES:
            break
    notes: list[str] = []
    if head.startswith(_BOM):
        head = b" " * len(_BOM) + head[len(_BOM):]  # same line numbers, same offsets
        notes.append("a UTF-8 byte-order mark at the start was dropped")
    dialect = _sniff(head, source, options)
    if dialect is None:  # nothing but comments and blank lines
        empty = np.zeros(0, dtype=np.int64)
        return _Parsed(empty, empty, _count_lines(head), None, tuple(notes))
    notes.extend(dialect.notes)
    if dialect.header is not None:
        head = _blank_line(head, dialect.header_line - 1)
    us: list[Any] = []
    vs: list[Any] = []
    line = 1
    open_end = False  # the last block does not end with a newline
    first = [head]
    del head  # the first block is freed once parsed, as every other
    for block in _chain_first(first, blocks):
        if block:
            u, v, n_lines = _parse_block(block, line, dialect, source)
            us.extend(u)
            vs.extend(v)
            line += n_lines
            open_end = not block.endswith(b"\n")
            del u, v, block
            _release_freed()  # pyarrow's buffers
    lines = line - 1 + open_end
    _release_freed()  # the blocks' text: holes between the columns
    if dialect.names:
        u, v, names = _name_positions(us, vs)
        return _Parsed(u, v, lines, names, tuple(notes))
    u, v = _concat(us), _concat(vs)
    _release_freed()  # the per-block columns, before the build
    return _Parsed(u, v, lines, None, tuple(notes))


def _release_freed() -> None:
    """Return pyarrow's freed buffers to the system (its memory pool's ``release_unused``).

    The blocks' text, pyarrow's buffers and the per-block columns are freed while later ones
    are live. glibc's own heap is not trimmed: that needs ``malloc_trim``, a C call outside
    any Python API, which ldpgraph does not make.
    """
    pa = sys.modules.get("pyarrow")
    release = getattr(pa.default_memory_pool(), "release_unused", None) if pa is not None else None
    if release is not None:
        release()


def _chain_first(
    first: list[bytes], rest: Iterator[bytes | bytearray]
) -> Iterator[bytes | bytearray]:
    """The block in ``first`` (taken out of the list), then the others."""
    yield first.pop()
    yield from rest


def _concat(parts: list[NDArray[np.integer]]) -> NDArray[np.integer]:
    """One array of the parts (int32 when every part is), freeing each part once copied."""
    if not parts:
        return np.zeros(0, dtype=np.int64)
    dtype = np.int32 if all(p.dtype == np.int32 for p in parts) else np.int64
    out = np.empty(sum(p.size for p in parts), dtype=dtype)
    pos = 0
    parts.reverse()
    while parts:
        p = parts.pop()
        out[pos : pos + p.size] = p
        pos += p.size
    return out


def _small(x: NDArray[np.integer]) -> NDArray[np.integer]:
    """int32 copy of non-negative ids when they fit (half the memory of the edge arrays)."""
    if x.size and int(x.max()) < 2**31:
        return x.astype(np.int32)
    return x.astype(np.int64, copy=False)


def _count_lines(raw: bytes) -> int:
    return raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)


def _edge_lines(head: bytes, limit: int) -> list[tuple[int, bytes, bytes]]:
    """The first ``limit`` edge lines of ``head`` (complete lines only): number, line, body."""
    found: list[tuple[int, bytes, bytes]] = []
    pos, number = 0, 0
    while len(found) < limit:
        end = head.find(b"\n", pos)
        if end < 0:
            break
        number += 1
        line = head[pos:end]
        body = line.split(b"#", 1)[0].strip(b" \t\r")
        if body:
            found.append((number, line, body))
        pos = end + 1
    return found


def _blank_line(text: bytes, index: int) -> bytes:
    """``text`` with line ``index`` (0-based) emptied, its newline kept."""
    start = 0
    for _ in range(index):
        start = text.index(b"\n", start) + 1
    end = text.find(b"\n", start)
    end = len(text) if end < 0 else end
    return text[:start] + text[end:]


# ---------------------------------------------------------------------------------------------
# deciding the format


def _fields(body: bytes, delimiter: str | None) -> list[str]:
    """Fields of a line body (comment removed, stripped), decoded with surrogateescape."""
    text = body.decode("utf-8", "surrogateescape")
    if delimiter is None:
        return _WS.split(text)
    if delimiter == ",":  # a CR is a blank, as everywhere
        row = next(csv.reader([text.replace("\r", " ")], delimiter=",", quotechar='"'))
        return [f.strip(" \t") for f in row]
    return [f.strip(" \r") for f in text.split(delimiter)]


def _names_with_spaces(body: bytes) -> bool:
    """A tab-separated field holds a space between words that are not all numbers."""
    for f in body.decode("utf-8", "surrogateescape").split("\t"):
        words = f.split()
        if len(words) > 1 and not all(_NUMBER_LIKE.fullmatch(w) for w in words):
            return True
    return False


def _is_int(tok: str) -> bool:
    return bool(_DIGITS.fullmatch(tok)) and int(tok) <= _MAX_ID


def _sniff(head: bytes, source: str, options: _Options) -> _Dialect | None:
    """The format, from the first edge lines of ``head`` (see the module docstring)."""
    found = _edge_lines(head if head.endswith(b"\n") else head + b"\n", _SNIFF_LINES)
    if not found:
        return None
    notes: list[str] = []
    delimiter = None if options.delimiter == " " else options.delimiter  # None: runs of blanks
    first_body = found[0][2]
    if options.delimiter is None:
        if b"," in first_body:
            delimiter = ","
            notes.append("comma-separated fields (detected; delimiter= or --delimiter overrides)")
        elif b"\t" in first_body and _names_with_spaces(first_body):
            delimiter = "\t"
            notes.append("tab-separated fields with spaces inside (detected; delimiter= or --delimiter "
                         "overrides)")
    columns = options.columns
    header = options.header
    names0 = _fields(first_body, delimiter)
    lower = [x.lower() for x in names0]
    known = next(((a, b) for a, b in _KNOWN_NAMES if a in lower and b in lower), None)
    if header is None:
        header = known is not None
        if not header and len(found) > 1:  # names above integer ids
            sel = columns or (0, 1)
            later = _fields(found[1][2], delimiter)
            header = (
                all(c < len(names0) for c in sel)
                and all(c < len(later) for c in sel)
                and not any(_NUMBER_LIKE.fullmatch(names0[c]) for c in sel)
                and all(_is_int(later[c]) for c in sel)
            )
    header_names: tuple[str, ...] | None = None
    header_line = 0
    if header:
        header_names = tuple(names0)
        header_line = found[0][0]
        if columns is None and known is not None:
            columns = (lower.index(known[0]), lower.index(known[1]))
        notes.append(f"line {header_line} taken as a header (column names {', '.join(names0)})")
        found = found[1:]
    if not found:  # a header and nothing else
        return _Dialect(delimiter, len(names0), columns or (0, 1), False, header_line + 1,
                        header_names, header_line, notes)
    number, line, body = found[0]
    fields = _fields(body, delimiter)
    nf = len(fields)
    chosen = columns or (0, 1)
    if options.node_type == "auto":  # names unless the ids look like numbers
        names = any(not _NUMBER_LIKE.fullmatch(fields[c]) for c in chosen if c < nf)
    else:
        names = options.node_type == "str"
    d = _Dialect(delimiter, nf, chosen, names, number, header_names, header_line, notes,
                 options.node_type == "auto")
    for c in chosen:
        if c < nf:
            _check_id(fields[c], d, source, number, line)
    if nf < 2:
        _fail(source, number, line, f"expected 2 columns (two node ids), got {nf}")
    if delimiter is None and nf > 2 and re.search(rb"\r[^\r\n]", line.rstrip(b"\r")):
        _fail(source, number, line, f"expected 2 columns (two node ids), got {nf}: a carriage "
              "return inside the line (old Mac line ends?); convert the line ends to \\n")
    if max(chosen) >= nf:
        _fail(source, number, line, f"columns={chosen} asks for column {max(chosen)} (0-based), "
              f"but the line has {nf} columns")
    if nf > 2:
        label = (lambda c: header_names[c]) if header_names and len(header_names) == nf else (
            lambda c: str(c + 1))
        others = [label(c) for c in range(nf) if c not in chosen]
        if options.columns is None and options.strict:
            _fail(source, number, line, f"{nf} columns found, expected 2 (strict); pass "
                  f"columns=(0, 1) (--columns 0,1) to use the first two")
        which = "column" if len(others) == 1 else "columns"
        notes.append(
            f"{nf} columns per line: node ids from columns {label(chosen[0])} and "
            f"{label(chosen[1])}, the other {which} ignored"
            + (f" ({', '.join(others)})" if header_names else " (weights or timestamps?)")
            + ("" if options.columns is not None else "; strict=True (--strict) refuses extra columns")
        )
    if names and options.node_type == "auto":
        notes.append(f"node ids read as names (text): line {number} has ids that are not numbers")
    return d


# ---------------------------------------------------------------------------------------------
# parsing one block


def _parse_block(
    block: bytes | bytearray, first_line: int, d: _Dialect, source: str
) -> tuple[list[Any], list[Any], int]:
    """Node ids (or names) of the two node columns of a block of whole lines, and its newlines.

    The ids come as lists of arrays (pieces of the columns, to be concatenated once at the end).
    """
    if d.numeric_pairs:
        out = None
        arrow = len(block) >= (_ARROW_MIN if "pyarrow" in sys.modules else _ARROW_COLD)
        # pyarrow's integer reader accepts more than the format: spaces around a value, a lone
        # CR as a line end, a minus sign ("-0" is 0), hexadecimal ("0x10" is 16), and a UTF-8
        # byte-order mark at the start of its buffer. A block goes to it only when its grammar
        # is the format's there (see _arrow_grammar_is_exact); anything else in such a block
        # makes pyarrow fail (then the exact parser decides).
        # Blank lines are not skipped there (a block with one goes to the exact parser), so
        # that every line is a row: the row count is the line count (counting the newlines
        # would cost ~0.05 s per 10^7 edges).
        if arrow and _arrow_grammar_is_exact(block):
            sep = " " if b" " in block else "\t"
            out = _arrow_block(block, sep, d, blank_lines=False, exact_ints=True)
        if out is None:
            flat = _parse_bytes(block, source, first_line, d)
            pairs = flat.view(np.int64).reshape(-1, 2)
            return [_small(pairs[:, d.columns[0]])], [_small(pairs[:, d.columns[1]])], block.count(b"\n")
        return out[0], out[1], out[2] - (not block.endswith(b"\n"))
    out = None
    # pyarrow drops a UTF-8 byte-order mark at the start of its buffer: only the file's first
    # one is dropped (by _parse_stream), so a block starting with one goes to the exact parser
    if (
        len(block) >= _ARROW_MIN
        and not block.startswith(_BOM)
        and not (d.delimiter == "," and b'"' in block)
        and not (d.delimiter is not None and re.search(rb"\r[^\n]", block))
    ):
        text = _blank_comments(block) if b"#" in block else block
        delimiter = d.delimiter
        if delimiter is None:  # runs of blanks -> one tab, none at the ends of a line
            text = re.sub(rb"(?m)^\t|\t$", b"", re.sub(rb"[ \t\r]+", b"\t", text))
            delimiter = "\t"
        # integer ids by pyarrow's integer reader only where it cannot read "0x10" or "-0"
        exact_ints = not any(c in text for c in _NOT_FOR_ARROW_INTS)
        out = _arrow_block(text, delimiter, d, exact_ints=exact_ints)
    lines = block.count(b"\n")
    if out is None:
        u, v = _parse_lines(block, first_line, d, source)
        if d.names:
            import pyarrow as pa

            return [pa.array(u, type=pa.string())], [pa.array(v, type=pa.string())], lines
        return [_small(np.array(u, dtype=np.uint64).view(np.int64))], [_small(
            np.array(v, dtype=np.uint64).view(np.int64))], lines
    return out[0], out[1], lines


def _arrow_grammar_is_exact(block: bytes | bytearray) -> bool:
    r"""Whether pyarrow's integer reader parses this numeric block exactly as the format does.

    The format's numeric two-column lines hold only the bytes ``0-9``, space, tab, CR and LF
    outside comments. pyarrow reads an integer field as ``[-]digits`` or ``0x``/``0X`` and hex
    digits, with spaces and tabs around it trimmed, and refuses anything else. So the block
    must hold only bytes from ``\t`` (9) to ``9`` (57): no letter (no ``x``, no hex digit),
    nothing beyond ASCII (no byte-order mark, no Unicode digit), no NUL. Of those, ``#``
    (comments), CR (a lone one is a line end there) and ``-`` are refused here too, and so is
    a block holding both separators (a space beside a tab would be trimmed); every other
    byte of that range (``+``, ``.``, ``,``, the controls from 11 to 31, ...) makes pyarrow
    fail, so that the exact parser decides the block (tests/graph/test_edgelist_grammar.py
    checks every such byte against the installed pyarrow). Cost: two numpy reductions and
    four memchr passes (~3 ms per 16 MiB block).

    Parameters
    ----------
    block : bytes or bytearray
        Whole lines of text.

    Returns
    -------
    bool
        True when pyarrow may read the block: then its ids are those of the exact parser, and
        where they are not (a byte it refuses), it fails.
    """
    if not block:
        return False
    b = np.frombuffer(block, dtype=np.uint8)
    if int(b.max()) > ord("9") or int(b.min()) < ord("\t"):
        return False
    if any(c in block for c in _NOT_FOR_ARROW):
        return False
    return not (b" " in block and b"\t" in block)


def _arrow_block(
    text: bytes | bytearray,
    delimiter: str,
    d: _Dialect,
    *,
    blank_lines: bool = True,
    exact_ints: bool = False,
) -> tuple[list[Any], list[Any], int] | None:
    """The two node columns by pyarrow's CSV reader (lists of pieces) and the number of rows,
    or None when anything is off (with ``blank_lines=False``, also on a blank line).

    None (then the exact line parser runs) on any pyarrow error (column count, a value that
    is not an int64, invalid UTF-8), on negative ids, and on names that are empty or hold
    control characters: the exact parser decides those cases, with the line number.

    Integer ids: with ``exact_ints`` (the caller checked that pyarrow's integer grammar is the
    format's for this text: :func:`_arrow_grammar_is_exact` for the numeric two-column
    format, no ``x``, ``X`` or ``-`` anywhere for the others, since pyarrow refuses ``+``,
    Unicode digits and everything else that is not ``[-]digits`` or hexadecimal) they are
    read as int32 (the pieces of pyarrow's buffers are the columns, no copy) until a block
    fails that and passes as int64; later blocks of the input then go as int64 at once.
    Without it (say negative weights in a third column) they are read as text, trimmed as the
    exact parser trims, checked to be ASCII digits only (pyarrow's integer reader would take
    ``0x10`` and ``-0``) and then converted (about 2.5 times slower).
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pv
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return None
    names = [f"c{i}" for i in range(d.n_fields)]
    a, b = names[d.columns[0]], names[d.columns[1]]

    def read(kind: Any) -> Any:
        try:
            return pv.read_csv(
                pa.py_buffer(text),
                read_options=pv.ReadOptions(column_names=names, use_threads=True, block_size=1 << 20),
                parse_options=pv.ParseOptions(
                    delimiter=delimiter, quote_char='"' if delimiter == "," else False,
                    ignore_empty_lines=blank_lines,
                ),
                convert_options=pv.ConvertOptions(
                    include_columns=[a, b], column_types={a: kind, b: kind}, null_values=[],
                    strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=True,
                ),
            )
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return None

    if d.names or not exact_ints:
        table = read(pa.string())
    else:
        table = read(pa.int64() if d.wide else pa.int32())
        if table is None and not d.wide:  # an id beyond int32 (or a bad line: then None again)
            table = read(pa.int64())
            d.wide = table is not None
    if table is None:
        return None
    cols: list[Any] = []
    for name in (a, b):
        col = table.column(name)
        if d.names:
            import pyarrow.compute as pc  # deferred: slow to import, and only names need it

            col = pc.utf8_trim(col, characters=" \t\r")
            if pc.any(pc.equal(pc.utf8_length(col), 0)).as_py() or pc.any(
                pc.match_substring_regex(col, r"[\x00-\x1f\x7f]")
            ).as_py():
                return None
            cols.append(col.combine_chunks())
        elif not exact_ints:
            ints = _digit_ids(col, d)
            if ints is None:
                return None
            cols.append(ints)
        else:
            parts = _int_pieces(col)
            if any(p.size and int(p.min()) < 0 for p in parts):
                return None
            cols.append(parts)
    if d.names:
        return [cols[0]], [cols[1]], table.num_rows
    return cols[0], cols[1], table.num_rows


def _digit_ids(col: Any, d: _Dialect) -> list[NDArray[np.integer]] | None:
    """A text column of pyarrow as ids (pieces, as :func:`_int_pieces`), or None.

    None (the exact parser then decides) unless every value, trimmed of spaces, tabs and CRs
    as the exact parser trims, is one or more ASCII digits (RE2's ``[0-9]``) and at most
    ``2**63 - 1``: the format's grammar of an id, and nothing of pyarrow's own (no sign, no
    hexadecimal). int32 until an id does not fit (``d.wide``), as for the integer reader.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    col = pc.utf8_trim(col, characters=" \t\r")
    if len(col) and not pc.all(pc.match_substring_regex(col, "^[0-9]+$")).as_py():
        return None
    try:
        if not d.wide:
            try:
                return _int_pieces(pc.cast(col, pa.int32()))
            except pa.ArrowInvalid:  # an id beyond int32 (or beyond int64: then again below)
                pass
        ints = pc.cast(col, pa.int64())
    except pa.ArrowInvalid:
        return None
    d.wide = True
    return _int_pieces(ints)


def _int_pieces(col: Any) -> list[NDArray[np.integer]]:
    """An int32 or int64 column of pyarrow (no nulls) as numpy views of its chunks' buffers.

    ``ChunkedArray.to_numpy`` imports pandas (about 0.2 s) on every first use, and copies; the
    buffers give the same values without either.
    """
    dtype = np.int32 if col.type.bit_width == 32 else np.int64
    parts = []
    for x in col.chunks:
        if x.null_count:  # pragma: no cover - the reader is told there are no nulls
            return [col.to_numpy()]
        if len(x):
            parts.append(np.frombuffer(x.buffers()[1], dtype=dtype)[x.offset : x.offset + len(x)])
    return parts


def _parse_lines(
    chunk: bytes, first_line: int, d: _Dialect, source: str
) -> tuple[list[Any], list[Any]]:
    """Line-by-line parse of a chunk; raises ValueError at the first malformed line."""
    us: list[Any] = []
    vs: list[Any] = []
    i, j = d.columns
    for number, line in enumerate(chunk.split(b"\n"), start=first_line):
        body = line.split(b"#", 1)[0].strip(b" \t\r")
        if not body:
            continue
        fields = _fields(body, d.delimiter)
        for c in (i, j):
            if c < len(fields):
                _check_id(fields[c], d, source, number, line)
        if len(fields) != d.n_fields:
            what = "two node ids" if d.n_fields == 2 else f"as on line {d.first_line}"
            _fail(source, number, line, f"expected {d.n_fields} columns ({what}), got {len(fields)}")
        a, b = fields[i], fields[j]
        if d.names:
            us.append(a)
            vs.append(b)
        else:
            us.append(int(a))
            vs.append(int(b))
    return us, vs


def _check_id(tok: str, d: _Dialect, source: str, number: int, line: bytes) -> None:
    if d.names:
        if not tok or _CONTROL.search(tok) or re.search("[\udc80-\udcff]", tok):
            _fail(source, number, line, f"node id {_show(tok)} is not a non-negative integer, "
                  "nor a valid name (UTF-8 text without control characters)")
        return
    if _DIGITS.fullmatch(tok):
        if len(tok.lstrip("0")) > 19 or int(tok) > _MAX_ID:  # never int() of 5000 digits
            _fail(source, number, line, f"node id {digit_count_text(tok)} exceeds 2**63 - 1 (too large)")
    elif _NEGATIVE.fullmatch(tok):
        _fail(source, number, line, f"node id {digit_count_text(tok)} is negative")
    else:
        hint = ""
        if d.auto:
            names = "node_type='str' (--node-type str) reads ids as names"
            hint = (f" ({names})" if d.first_line == number else
                    f" (the ids of line {d.first_line} are integers; {names})")
        _fail(source, number, line, f"node id {_show(tok)} is not a non-negative integer{hint}")


def _show(text: str | bytes, limit: int = 60) -> str:
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogateescape")
    text = text.decode("utf-8", "replace")  # bytes that are not UTF-8 show as U+FFFD
    shown = repr(text[:limit])
    if len(shown) > limit + 2:  # escapes (control bytes) count: a few, not a screenful
        return shown[:limit] + "'..."
    return shown + ("..." if len(text) > limit else "")


def _fail(source: str, number: int, line: bytes, reason: str) -> None:
    raw = bytes(line.rstrip(b"\r"))
    shown = _show(raw, limit=80)
    if b"\x00" in raw or not _is_utf8(raw):  # binary data: a few bytes in hex, not a screenful of escapes
        first = " ".join(f"{b:02x}" for b in raw[:8])
        reason += (f" (binary data, not a text edge list? the line holds NUL or non-UTF-8 bytes: "
                   f"{len(raw):,} bytes, the first {min(len(raw), 8)} {first})")
        shown = _show(raw, limit=24)
    raise ValueError(f"{source}, line {number}: {reason}; the line is {shown}")


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# the numeric two-column format: SWAR chunks in threads


def _parse_bytes(data: bytes, source: str, first_line: int, d: _Dialect) -> NDArray[np.uint64]:
    """All id pairs of ``data`` (flat), parsed chunk by chunk (in threads when there are many)."""
    n = len(data)
    bounds = []
    start = 0
    while start < n:  # chunks end just after a newline, so no line is split
        end = min(start + _CHUNK, n)
        if end < n:
            j = data.rfind(b"\n", start, end)
            if j < 0:  # a line longer than a chunk
                j = data.find(b"\n", end)
            end = n if j < 0 else j + 1
        bounds.append((start, end))
        start = end
    if not bounds:
        return np.zeros(0, dtype=np.uint64)
    local = threading.local()

    def work(bound: tuple[int, int]) -> NDArray[np.uint64]:
        lo, hi = bound
        chunk = data[lo:hi]
        buf = getattr(local, "buf", None)
        if buf is None or buf.size < _PAD + len(chunk):
            buf = local.buf = np.full(_PAD + len(chunk), ord(" "), dtype=np.uint8)
            # overlapping little-endian 8-byte windows: words[i] holds buf[i:i + 8]
            local.words = np.ndarray((buf.size - 7,), dtype="<u8", buffer=buf, strides=(1,))
        vals = _parse_chunk_fast(chunk, buf, local.words)
        if vals is None:
            u, v = _parse_lines(chunk, first_line + data.count(b"\n", 0, lo), d, source)
            vals = np.empty(2 * len(u), dtype=np.uint64)
            vals[0::2] = u
            vals[1::2] = v
        return vals

    workers = min(_MAX_THREADS, usable_cores(), len(bounds) // 4)
    if workers > 1:  # numpy releases the GIL in the vector operations
        with ThreadPoolExecutor(workers) as pool:
            try:
                out = list(pool.map(work, bounds))  # in order: the first bad line is reported
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    else:
        out = [work(b) for b in bounds]
    return np.concatenate(out)


def _parse_chunk_fast(
    chunk: bytes, buf: NDArray[np.uint8], words: NDArray[np.uint64]
) -> NDArray[np.uint64] | None:
    """Ids of a chunk of whole lines by numpy vector operations, or None if anything is odd.

    1. Bytes: after blanking comments, only digits, space, tab, CR and LF may occur
       (``bytes.translate`` with a delete table is one C pass).
    2. Tokens: a byte ``c[i]`` ends an id when it is a digit and ``c[i+1]`` is not. Merging
       id ends and newlines in position order gives an event stream; every line holds 0 or 2
       ids iff, numbering the id-end events ``t_0 < t_1 < ...`` by their place in the
       stream, ``t_{2j+1} = t_{2j} + 1`` (no newline inside a pair) and
       ``t_{2j+2} > t_{2j+1} + 1`` (a newline between pairs), with an even number of ids.
    3. Values: the 8 bytes ending at the last digit of each id are read as one little-endian
       uint64 (one gather). Bytes that are not part of the id are masked to 0 (the highest
       non-digit byte is found by smearing bit 4 downwards) and the 8 digits are combined
       by three multiply-shift-mask steps (the SWAR method used by simdjson). Ids of 9 to
       19 digits take one or two more windows; longer ids, or values above 2**63 - 1, make
       the chunk odd.
    """
    if b"#" in chunk:
        chunk = _blank_comments(chunk)
    if chunk.translate(None, _ALLOWED):
        return None
    size = len(chunk)
    c = buf[_PAD : _PAD + size]
    c[:] = np.frombuffer(chunk, dtype=np.uint8)
    is_digit = np.empty(size + 1, dtype=bool)
    np.greater_equal(c, ord("0"), out=is_digit[:size])  # only digits are >= '0' here
    is_digit[size] = False
    newline = c == ord("\n")
    event = np.greater(is_digit[:size], is_digit[1:])  # last digit of an id
    event |= newline
    pos = np.flatnonzero(event)
    at_id = newline[pos]
    np.logical_not(at_id, out=at_id)
    place = np.flatnonzero(at_id)
    if place.size % 2:
        return None
    if place.size == 0:
        return np.zeros(0, dtype=np.uint64)
    step = np.diff(place)
    if not (step[0::2] == 1).all() or not (step[1::2] > 1).all():
        return None
    start = pos[place]
    start += _PAD - 7  # window buf[start:start + 8] ends at the last digit
    vals, smear = _digits8(words[start])
    full = smear == 0  # all 8 window bytes are digits: the id may be longer
    if full.any() and not _long_ids(vals, np.flatnonzero(full), start, words):
        return None
    return vals


def _digits8(w: NDArray[np.uint64]) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """Value of the digits at the top of each 8-byte window, and the smeared non-digit mask.

    Windows hold only digits and whitespace. ``smear`` has bit 4 set in every byte at or
    below the highest non-digit byte (0 when all 8 bytes are digits); those bytes are
    cleared before the digits are combined.
    """
    smear = np.bitwise_not(w)
    smear &= _BIT4
    v = np.right_shift(smear, _U(8))
    smear |= v
    np.right_shift(smear, _U(16), out=v)
    smear |= v
    np.right_shift(smear, _U(32), out=v)
    smear |= v
    np.right_shift(smear, _U(4), out=v)
    v *= _U(0xFF)  # 0xFF in every byte to clear
    np.bitwise_not(v, out=v)
    v &= w
    v &= _LOW_NIBBLES
    v *= _U(10 * 256 + 1)
    v >>= _U(8)
    v &= _U(0x00FF00FF00FF00FF)
    v *= _U(100 * 65536 + 1)
    v >>= _U(16)
    v &= _U(0x0000FFFF0000FFFF)
    v *= _U(10000 * 2**32 + 1)
    v >>= _U(32)
    return v, smear


def _long_ids(
    vals: NDArray[np.uint64],
    idx: NDArray[np.intp],
    start: NDArray[np.int64],
    words: NDArray[np.uint64],
) -> bool:
    """Complete ids longer than 8 digits in place; False if one is too long or too large."""
    s = start[idx]
    mid, smear = _digits8(words[s - 8])
    vals[idx] += mid * _U(10**8)
    full = smear == 0
    if not full.any():
        return True
    idx, s = idx[full], s[full]
    top, smear = _digits8(words[s - 16])
    if (smear & _U(0x10 << 32) == 0).any():  # more than 3 digits in the third window
        return False
    total = vals[idx] + top * _U(10**16)  # < 1000 * 10**16 < 2**64: no wrap-around
    if (total > _U(_MAX_ID)).any():
        return False
    vals[idx] = total
    return True


def _blank_comments(chunk: bytes) -> bytes:
    """Replace every byte from a ``#`` to the end of its line by a space."""
    b = np.frombuffer(chunk, dtype=np.uint8)
    hashes = np.flatnonzero(b == ord("#"))
    newlines = np.flatnonzero(b == ord("\n"))
    k = np.searchsorted(newlines, hashes)
    line_end = np.append(newlines, b.size)[k]
    first = np.ones(hashes.size, dtype=bool)
    first[1:] = line_end[1:] != line_end[:-1]
    lo, hi = int(hashes[0]), int(line_end[-1])
    delta = np.zeros(hi - lo + 1, dtype=np.int8)
    delta[hashes[first] - lo] = 1
    delta[line_end[first] - lo] = -1
    out = b.copy()
    out[lo:hi][np.cumsum(delta[:-1], dtype=np.int8) > 0] = ord(" ")
    return out.tobytes()
