r"""Report files: write and read the report format as CSV, JSON Lines and Parquet, in chunks.

The format (columns, types, versions) is :mod:`ldpgraph.protocols.reports`; this module only
moves rows between files and :class:`~ldpgraph.protocols.reportset.ReportChunk` s:

* :func:`write_reports` — NodeReports (or report columns) to ``.csv``, ``.jsonl`` / ``.ndjson``
  or ``.parquet``; Parquet files are written in row groups (the partitions of the Dask path).
* :func:`iter_report_chunks` — a file's rows as typed chunks of at most ``chunk_rows`` rows,
  streaming (CSV through pyarrow's incremental reader, JSON Lines line by line, Parquet by
  record batches), each cell checked and canonicalised (node ids, exact integer values), every
  problem raised as ``ValueError`` naming the file and the row (and line, for text files).
  A JSON Lines line longer than :data:`MAX_JSONL_LINE` (1 MiB) is refused after reading at most
  that much of it, and a JSON object with a key the format does not define is refused.
* :func:`read_report_set` — validate one or many files as one report set
  (:class:`~ldpgraph.protocols.reportset.ReportAccumulator`) with memory independent of the
  number of rows, returning its :class:`~ldpgraph.protocols.reportset.ReportSetSummary`.
* :func:`read_reports` — a small report set as in-memory :class:`NodeReports`.

Row numbers in messages are 0-based data rows (the CSV header is not a row); text files also
give the 1-based line number.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write
from ..protocols.randomizer import NodeReports
from ..protocols.reports import (
    COLUMNS,
    DEGREE_PROTOCOL,
    FORMAT_VERSION,
    canonical_node_id,
    canonical_value,
    parse_json,
    report_columns,
)
from ..protocols.reportset import ReportAccumulator, ReportChunk, ReportSetSummary
from ..protocols.screening import PublicBounds

__all__ = [
    "FORMATS",
    "DEFAULT_CHUNK_ROWS",
    "MAX_JSONL_LINE",
    "report_format",
    "write_reports",
    "write_report_chunks",
    "node_labels_path",
    "write_node_labels",
    "iter_report_chunks",
    "read_report_set",
    "read_reports",
    "parquet_row_groups",
    "parquet_write_options",
    "iter_parquet_row_group",
    "CurationResult",
    "curate_summary",
    "curate_files",
]

#: file formats and the suffixes that select them
FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}
#: rows per chunk when streaming
DEFAULT_CHUNK_ROWS = 1 << 20
_PARQUET_ROW_GROUP = 1 << 20
_META_KEY = b"ldpgraph.report_format"
_MAX_LISTED = 10
#: longest line of a JSON Lines report file, in bytes (without its line break); a row is ~150
MAX_JSONL_LINE = 1 << 20
_INT_RE = r"^[+-]?[0-9]{1,17}$"  # at most 17 digits: |v| < 10**17, checked against 2**53 later
_NODE_RE = r"^(0|[1-9][0-9]{0,18})$"


def report_format(path: str | os.PathLike, format: str | None = None) -> str:
    """The format of ``path``: ``format`` if given, else from its suffix (.csv, .jsonl, .parquet)."""
    if format is not None:
        if format not in ("csv", "jsonl", "parquet"):
            raise ValueError(f"format must be 'csv', 'jsonl' or 'parquet', got {format!r}")
        return format
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(
            f"cannot tell the report format of {os.fspath(path)!r} from its suffix {suffix!r}; "
            f"use one of {sorted(FORMATS)} or pass format="
        )
    return FORMATS[suffix]


# ------------------------------------------------------------------------------ writing


def _dictionary_column(column: Any):
    """A column of names as an Arrow dictionary array (int32 codes, the names in order of first
    appearance: what ``dictionary_encode`` of the strings gives, without one string per row)."""
    import pyarrow as pa

    from ..core.rows import name_codes

    coded = name_codes(column)
    if coded is None:  # not all strings: the generic conversion (and its error)
        return pa.array(np.asarray(column, dtype=object), type=pa.string()).dictionary_encode()
    codes, names = coded
    return pa.DictionaryArray.from_arrays(pa.array(codes, type=pa.int32()), pa.array(names, type=pa.string()))


def _arrow_table(cols: dict[str, Any]):
    import pyarrow as pa

    arrays = {
        "node": pa.array(np.asarray(cols["node"], dtype=np.int64)),
        "round": pa.array(np.asarray(cols["round"], dtype=np.int64)),
        "quantity": _dictionary_column(cols["quantity"]),
        "value": pa.array(np.asarray(cols["value"], dtype=np.int64)),
        "epsilon": pa.array(np.asarray(cols["epsilon"], dtype=np.float64)),
        "sensitivity": pa.array(np.asarray(cols["sensitivity"], dtype=np.float64)),
        "protocol": _dictionary_column(cols["protocol"]),
        "protocol_version": pa.array(np.asarray(cols["protocol_version"], dtype=np.int64)),
    }
    table = pa.table(arrays)
    return table.replace_schema_metadata({_META_KEY: str(FORMAT_VERSION).encode()})


def parquet_write_options(row_group_size: int = _PARQUET_ROW_GROUP) -> dict[str, Any]:
    """Keyword arguments of ``pyarrow.parquet.write_table`` / ``ParquetWriter`` for report files.

    Node ids delta-encoded (consecutive ids cost almost nothing and decode fast), every other
    column dictionary-encoded (constants and small integers), row groups of ``row_group_size``.
    """
    return {
        "row_group_size": max(int(row_group_size), 1),
        "use_dictionary": [c for c in COLUMNS if c != "node"],
        "column_encoding": {"node": "DELTA_BINARY_PACKED"},
    }


def write_reports(
    path: str | os.PathLike,
    reports: NodeReports | dict[str, Any],
    *,
    format: Literal["csv", "jsonl", "parquet"] | None = None,
    node_ids: Sequence[int] | NDArray[np.integer] | None = None,
    round: int = 1,
    protocol: str = DEGREE_PROTOCOL,
    row_group_size: int = _PARQUET_ROW_GROUP,
) -> Path:
    """Write report rows to ``path`` (format from the suffix unless ``format`` is given).

    Parameters
    ----------
    path : path
    reports : NodeReports or dict of columns
        What to write; a dict must hold every column of
        :data:`~ldpgraph.protocols.reports.COLUMNS` (as :func:`report_columns` returns).
    node_ids, round, protocol
        Passed to :func:`~ldpgraph.protocols.reports.report_columns` for NodeReports.
    row_group_size : int
        Rows per Parquet row group (the unit of parallel reading).

    Returns
    -------
    Path
        The file written (written to a temporary name first, then moved into place).

    Examples
    --------
    >>> import tempfile
    >>> from ldpgraph.protocols import DegreeRandomizer
    >>> rep = DegreeRandomizer(epsilon=1.0).randomize([3, 1, 2], rng=0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_reports(Path(tmp) / "reports.csv", rep)
    ...     print(path.read_text().splitlines()[0])
    ...     read_reports(path).degrees.values.tolist() == sorted(rep.degrees.values.tolist())
    node,round,quantity,value,epsilon,sensitivity,protocol,protocol_version
    True
    """
    fmt = report_format(path, format)
    if isinstance(reports, NodeReports):
        cols = report_columns(reports, node_ids=node_ids, round=round, protocol=protocol)
    elif isinstance(reports, dict):
        missing = [c for c in COLUMNS if c not in reports]
        if missing:
            raise ValueError(f"report columns missing: {missing}; expected {list(COLUMNS)}")
        cols = reports
    else:
        raise TypeError(
            f"reports must be NodeReports or a dict of report columns, got {type(reports).__name__}"
        )
    return write_report_chunks(path, [cols], format=fmt, row_group_size=row_group_size)[0]


def write_report_chunks(
    path: str | os.PathLike,
    chunks: Iterable[dict[str, Any]],
    *,
    format: Literal["csv", "jsonl", "parquet"] | None = None,
    row_group_size: int = _PARQUET_ROW_GROUP,
) -> tuple[Path, int]:
    """Write report rows given as a stream of column chunks; ``(path, number of rows)``.

    Each chunk (a dict of the :data:`COLUMNS`) is written as it arrives, so memory is bounded by
    one chunk whatever the number of rows: CSV and JSON Lines append, Parquet adds row groups
    (at least one per chunk). The file appears only once complete (:func:`atomic_write`).

    Examples
    --------
    >>> import tempfile
    >>> from ldpgraph.protocols import DegreeRandomizer
    >>> rand = DegreeRandomizer(epsilon=1.0)
    >>> parts = [report_columns(rand.randomize([3, 1], rng=s), node_ids=[2 * s, 2 * s + 1]) for s in range(3)]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path, n = write_report_chunks(Path(tmp) / "r.parquet", iter(parts))
    ...     n, [c.node.tolist() for c in iter_report_chunks(path)]  # a row group per chunk
    (6, [[0, 1], [2, 3], [4, 5]])
    """
    fmt = report_format(path, format)
    n_rows = 0
    with atomic_write(path, "wb") as fh:
        writer = None
        if fmt == "csv":
            import pyarrow.csv as pcsv

            opts = pcsv.WriteOptions(include_header=False, quoting_style="none")
            fh.write((",".join(COLUMNS) + "\n").encode())
        for cols in chunks:
            missing = [c for c in COLUMNS if c not in cols]
            if missing:
                raise ValueError(f"report columns missing: {missing}; expected {list(COLUMNS)}")
            m = len(cols["node"])
            n_rows += m
            if fmt == "jsonl":
                _write_jsonl(fh, cols)
                continue
            table = _arrow_table(cols)
            if fmt == "csv":
                if m:
                    pcsv.write_csv(table, fh, write_options=opts)
                continue
            writer = _parquet_writer(writer, fh, table, row_group_size)
            if m:
                writer.write_table(table, row_group_size=max(int(row_group_size), 1))
        if fmt == "parquet":  # (no chunk at all: the schema of an empty table)
            _parquet_writer(writer, fh, _arrow_table({c: [] for c in COLUMNS}), row_group_size).close()
    return Path(path), n_rows


def _parquet_writer(writer: Any, fh: IO[bytes], table: Any, row_group_size: int) -> Any:
    """The Parquet writer of a report file (created on the first chunk, with its schema)."""
    if writer is not None:
        return writer
    import pyarrow.parquet as pq

    opts = parquet_write_options(row_group_size)
    opts.pop("row_group_size")
    return pq.ParquetWriter(fh, table.schema, **opts)


def _write_jsonl(fh: IO[bytes], cols: dict[str, Any]) -> None:
    n = len(cols["node"])
    for start in range(0, n, 1 << 16):
        stop = min(n, start + (1 << 16))
        parts = {c: np.asarray(cols[c])[start:stop].tolist() for c in COLUMNS}
        lines = [
            json.dumps({c: parts[c][i] for c in COLUMNS}, separators=(",", ":"), allow_nan=False)
            for i in range(stop - start)
        ]
        fh.write(("\n".join(lines) + "\n").encode("utf-8"))


# ------------------------------------------------------------------------------ reading: cells


class _Ctx:
    """Where a batch sits: file, first row, line offset (for messages)."""

    def __init__(self, source: str, first_row: int, line_offset: int | None) -> None:
        self.source, self.first_row, self.line_offset = source, first_row, line_offset

    def where(self, i: int) -> str:
        row = self.first_row + int(i)
        line = "" if self.line_offset is None else f" (line {row + self.line_offset})"
        return f"{self.source} row {row}{line}"

    def rows(self, idx: Iterable[int]) -> str:
        idx = [int(i) for i in idx]
        shown = ", ".join(str(self.first_row + i) for i in idx[:_MAX_LISTED])
        more = f" and {len(idx) - _MAX_LISTED} more" if len(idx) > _MAX_LISTED else ""
        return f"{self.source} row{'s' if len(idx) > 1 else ''} {shown}{more} (first: {self.where(idx[0])})"


def _no_nulls(arr, name: str, ctx: _Ctx) -> None:
    if arr.null_count:
        import pyarrow.compute as pc

        idx = np.flatnonzero(pc.is_null(arr).to_numpy(zero_copy_only=False))
        raise ValueError(f"{name} is missing (empty or null) in {ctx.rows(idx)}")


def _decoded(arr):
    import pyarrow as pa

    return arr.dictionary_decode() if pa.types.is_dictionary(arr.type) else arr


def _in_value_range(x: NDArray[np.int64], name: str, ctx: _Ctx, rows: Any = None) -> NDArray[np.int64]:
    """``x``, or ValueError when a ``value`` cell exceeds 2**53 in magnitude (what floats and decimal
    strings are held to as well: no truthful node sends more). ``rows``: the cells' row numbers."""
    if name == "value":
        big = np.flatnonzero((x > 2**53) | (x < -(2**53)))
        if big.size:
            at = big if rows is None else np.asarray(rows)[big]
            raise ValueError(
                f"{name} must have magnitude <= 2**53 (no truthful node sends more): {ctx.rows(at)}"
            )
    return x


def _int_cells(arr, name: str, ctx: _Ctx, *, node: bool = False) -> NDArray[np.int64]:
    """An integer column (node, round, value, protocol_version) as int64, checked cell by cell."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = _decoded(arr)
    _no_nulls(arr, name, ctx)
    t = arr.type
    what = "node ids" if node else name
    if pa.types.is_boolean(t):
        raise ValueError(f"{what} must be integers, got booleans: {ctx.rows(range(len(arr)))}")
    if pa.types.is_integer(t):
        if pa.types.is_unsigned_integer(t) and len(arr) and pc.max(arr).as_py() >= 2**63:
            idx = np.flatnonzero(arr.to_numpy() >= 2**63)
            raise ValueError(f"{what} beyond int64: {ctx.rows(idx)}")
        return _in_value_range(arr.to_numpy().astype(np.int64, copy=False), name, ctx)
    if pa.types.is_floating(t):
        x = arr.to_numpy()
        if node:
            raise ValueError(
                f"node ids must be integers, got floats (type-confused ids): {ctx.rows(range(x.size))}"
            )
        bad = np.flatnonzero(~np.isfinite(x) | (x != np.round(x)))
        if bad.size:
            raise ValueError(f"{name} must be an integer (discrete Laplace output): {ctx.rows(bad)}")
        big = np.flatnonzero(np.abs(x) > 2**53)
        if big.size:
            raise ValueError(
                f"{name} must have magnitude <= 2**53 (no truthful node sends more): {ctx.rows(big)}"
            )
        return x.astype(np.int64)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        ok = pc.match_substring_regex(arr, _NODE_RE if node else _INT_RE)
        if node:  # 19 digits beyond int64's largest: not for the fast cast (the slow path names them)
            ok = pc.and_(ok, pc.invert(pc.and_(pc.equal(pc.utf8_length(arr), 19),
                                               pc.greater(arr, "9223372036854775807"))))
        ok = ok.to_numpy(zero_copy_only=False)
        out = np.zeros(len(arr), dtype=np.int64)
        good = np.flatnonzero(ok)
        if good.size == len(arr):
            return _in_value_range(pc.cast(arr, pa.int64()).to_numpy(), name, ctx)
        if good.size:
            out[good] = pc.cast(arr.take(pa.array(good)), pa.int64()).to_numpy()
            _in_value_range(out[good], name, ctx, good)
        bad = np.flatnonzero(~ok)
        texts = arr.take(pa.array(bad)).to_pylist()
        if node:
            for i, text in zip(bad.tolist(), texts, strict=True):
                try:
                    v = canonical_node_id(text)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"node id {text!r} in {ctx.where(i)}: {exc}") from None
                raise ValueError(
                    f"node id {v!r} in {ctx.where(i)}: report files hold integer node ids below 2**63 "
                    "(map labels to integers)"
                )
        errors: dict[str, list[int]] = {}
        for i, text in zip(bad.tolist(), texts, strict=True):
            try:
                out[i] = canonical_value(text)
            except (TypeError, ValueError) as exc:
                key = "magnitude" if "magnitude" in str(exc) else "integer"
                errors.setdefault(key, []).append(i)
        if errors:
            key, rows = min(errors.items(), key=lambda kv: kv[1][0])
            msg = (
                f"{name} must have magnitude <= 2**53 (no truthful node sends more)"
                if key == "magnitude"
                else f"{name} must be an integer (discrete Laplace output)"
            )
            first = arr[rows[0]].as_py()
            raise ValueError(f"{msg}: {ctx.rows(rows)}, got {first[:30]!r}")
        return out
    raise ValueError(f"{what} must be integers, got column type {t} in {ctx.source}")


def _float_cells(arr, name: str, ctx: _Ctx) -> NDArray[np.float64]:
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = _decoded(arr)
    _no_nulls(arr, name, ctx)
    t = arr.type
    if pa.types.is_boolean(t):
        raise ValueError(f"{name} must be numbers, got booleans: {ctx.rows(range(len(arr)))}")
    if pa.types.is_floating(t) or pa.types.is_integer(t):
        return arr.to_numpy().astype(np.float64, copy=False)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        try:
            return pc.cast(arr, pa.float64()).to_numpy()
        except pa.ArrowInvalid:
            bad = []
            for i, text in enumerate(arr.to_pylist()):
                try:
                    float(text)
                except ValueError:
                    bad.append(i)
            raise ValueError(f"{name} must be numeric: {ctx.rows(bad)}") from None
    raise ValueError(f"{name} must be numbers, got column type {t} in {ctx.source}")


def _codes(arr, name: str, ctx: _Ctx) -> tuple[NDArray[np.int32], list[str]]:
    import pyarrow as pa

    if not pa.types.is_dictionary(arr.type):
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            raise ValueError(f"{name} must be strings, got column type {arr.type} in {ctx.source}")
        arr = arr.dictionary_encode()
    _no_nulls(arr, name, ctx)
    return arr.indices.to_numpy().astype(np.int32, copy=False), [str(s) for s in arr.dictionary.to_pylist()]


def _valid_text(arr, name: str, ctx: _Ctx) -> None:
    """ValueError naming the file unless a string column is valid UTF-8 (Parquet does not check)."""
    import pyarrow as pa

    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        try:
            arr.validate(full=True)
        except pa.ArrowInvalid as exc:
            raise ValueError(f"{name} in {ctx.source} (rows from {ctx.first_row}): not valid text, a damaged "
                             f"file? ({exc})") from None


def _chunk_from_arrow(batch, ctx: _Ctx) -> ReportChunk:
    import pyarrow as pa

    names = batch.schema.names
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise ValueError(f"{ctx.source}: report columns missing: {missing}; expected {list(COLUMNS)}")
    col = {c: batch.column(names.index(c)) for c in COLUMNS}
    for c, arr in col.items():  # Parquet does not check its strings are UTF-8: a damaged file's may not be
        _valid_text(arr.dictionary if pa.types.is_dictionary(arr.type) else arr, c, ctx)
    q_codes, q_names = _codes(col["quantity"], "quantity", ctx)
    p_codes, p_names = _codes(col["protocol"], "protocol", ctx)
    return ReportChunk(
        source=ctx.source,
        first_row=ctx.first_row,
        node=_int_cells(col["node"], "node", ctx, node=True),
        round=_int_cells(col["round"], "round", ctx),
        quantity=q_codes,
        quantity_names=q_names,
        value=_int_cells(col["value"], "value", ctx),
        epsilon=_float_cells(col["epsilon"], "epsilon", ctx),
        sensitivity=_float_cells(col["sensitivity"], "sensitivity", ctx),
        protocol=p_codes,
        protocol_names=p_names,
        protocol_version=_int_cells(col["protocol_version"], "protocol_version", ctx),
        line_offset=ctx.line_offset,
    )


# ------------------------------------------------------------------------------ reading: files


def _arrow_errors() -> tuple[type[BaseException], ...]:
    """What pyarrow raises on a damaged file: its own errors (ArrowKeyError is a KeyError), I/O
    errors, and, from metadata it decodes, UnicodeDecodeError and KeyError."""
    import pyarrow as pa

    return (pa.ArrowException, OSError, KeyError, UnicodeError, IndexError, TypeError)


def _parquet_file(path: Path):
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, read_dictionary=["quantity", "protocol"])
        pf.schema_arrow  # noqa: B018 - decoded now, so that a damaged schema fails here
        return pf
    except _arrow_errors() as exc:
        raise ValueError(
            f"{path}: not a readable Parquet report file (truncated or corrupt?): {type(exc).__name__}: {exc}"
        ) from None


def _check_parquet_schema(pf, path: Path) -> None:
    names = pf.schema_arrow.names
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise ValueError(f"{path}: report columns missing: {missing}; expected {list(COLUMNS)}")
    _exact_columns(names, path, "")
    meta = pf.schema_arrow.metadata or {}
    version = meta.get(_META_KEY)
    if version is not None and version != str(FORMAT_VERSION).encode():
        raise ValueError(
            f"{path}: report format version {version.decode(errors='replace')}; this package reads version "
            f"{FORMAT_VERSION}"
        )


def parquet_row_groups(path: str | os.PathLike) -> list[tuple[int, int]]:
    """(first row, number of rows) of every row group of a Parquet report file."""
    path = Path(path)
    pf = _parquet_file(path)
    _check_parquet_schema(pf, path)
    out, start = [], 0
    for i in range(pf.metadata.num_row_groups):
        rows = pf.metadata.row_group(i).num_rows
        out.append((start, rows))
        start += rows
    return out


def iter_parquet_row_group(
    path: str | os.PathLike, index: int, first_row: int, *, chunk_rows: int = DEFAULT_CHUNK_ROWS
) -> Iterator[ReportChunk]:
    """The chunks of one row group of a Parquet report file (the unit of the Dask path)."""
    path = Path(path)
    pf = _parquet_file(path)
    start = first_row
    try:
        for batch in pf.iter_batches(batch_size=chunk_rows, row_groups=[index], columns=list(COLUMNS)):
            yield _chunk_from_arrow(batch, _Ctx(str(path), start, None))
            start += batch.num_rows
    except _arrow_errors() as exc:
        raise ValueError(
            f"{path}: row group {index} unreadable after row {start} (truncated or corrupt?): "
            f"{type(exc).__name__}: {exc}"
        ) from None


def _iter_parquet(path: Path, chunk_rows: int) -> Iterator[ReportChunk]:
    pf = _parquet_file(path)
    _check_parquet_schema(pf, path)
    start = 0
    for i in range(pf.metadata.num_row_groups):
        try:
            rows = pf.metadata.row_group(i).num_rows
            if rows <= 4 * chunk_rows:  # one read per row group (faster than batch iteration)
                table = pf.read_row_group(i, columns=list(COLUMNS))
                batches = iter(table.to_batches(max_chunksize=chunk_rows))
            else:  # a huge row group: stream it
                batches = pf.iter_batches(batch_size=chunk_rows, row_groups=[i], columns=list(COLUMNS))
        except _arrow_errors() as exc:
            raise ValueError(f"{path}: unreadable after row {start} (truncated or corrupt?): "
                             f"{type(exc).__name__}: {exc}") from None
        while True:
            try:
                batch = next(batches, None)
            except _arrow_errors() as exc:
                raise ValueError(f"{path}: unreadable after row {start} (truncated or corrupt?): "
                                 f"{type(exc).__name__}: {exc}") from None
            if batch is None:
                break
            yield _chunk_from_arrow(batch, _Ctx(str(path), start, None))
            start += batch.num_rows


def _iter_csv(path: Path, chunk_rows: int) -> Iterator[ReportChunk]:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    header = _csv_header(path)
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ValueError(
            f"{path}: report columns missing from the CSV header: {missing}; expected {list(COLUMNS)}"
        )
    _exact_columns(header, path, " line 1")
    # ~40 bytes per row: blocks of about chunk_rows rows
    read = pcsv.ReadOptions(block_size=max(1 << 16, min(chunk_rows * 48, 1 << 30)))
    convert = pcsv.ConvertOptions(
        column_types={c: pa.string() for c in header},
        include_columns=list(COLUMNS),
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    parse = pcsv.ParseOptions(newlines_in_values=False)
    start = 0
    try:
        reader = pcsv.open_csv(path, read_options=read, convert_options=convert, parse_options=parse)
    except (pa.ArrowException, KeyError) as exc:
        raise ValueError(_csv_parse_error(path, exc)) from None
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except (pa.ArrowException, KeyError) as exc:
            raise ValueError(_csv_parse_error(path, exc)) from None
        for off in range(0, batch.num_rows, chunk_rows):
            part = batch.slice(off, chunk_rows)
            yield _chunk_from_arrow(_blank_to_null(part), _Ctx(str(path), start, 2))
            start += part.num_rows


def _exact_columns(names: list[str], path: Path, where: str) -> None:
    """ValueError unless ``names`` holds each report column once and nothing else (which of two
    'value' columns would hold? and a column of no meaning may hide a mistake)."""
    twice = sorted({c for c in names if names.count(c) > 1})
    extra = [c for c in names if c not in COLUMNS]
    if twice or extra:
        what = f"column {twice[0]!r} appears {names.count(twice[0])} times" if twice else (
            f"column{'s' if len(extra) > 1 else ''} {', '.join(repr(c[:40]) for c in extra[:_MAX_LISTED])} "
            "not of the format")
        raise ValueError(f"{path}{where}: {what}; a report file has exactly the columns {list(COLUMNS)}")


def _csv_header(path: Path) -> list[str]:
    """The column names of a CSV report file's first line (quotes as CSV reads them)."""
    import csv

    with open(path, "rb") as fh:
        first = fh.readline(MAX_JSONL_LINE + 1)
    if len(first) > MAX_JSONL_LINE:
        raise ValueError(f"{path} line 1: a header longer than {MAX_JSONL_LINE:,} bytes: not a report file")
    # utf-8-sig: a byte-order mark (Excel's "CSV UTF-8") is not part of a name; pyarrow skips it
    try:
        text = first.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} line 1: not UTF-8 text (byte {exc.start}); CSV report files are "
                         "UTF-8") from None
    try:
        return next(csv.reader([text.rstrip("\r\n")]), [])
    except csv.Error as exc:
        raise ValueError(f"{path} line 1: malformed CSV header ({exc})") from None


def _csv_parse_error(path: Path, exc: Exception) -> str:
    """Name the first malformed CSV line (a slow scan, on the error path only)."""
    import csv

    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        reader = csv.reader(fh)
        width = len(next(reader, []))
        for row, fields in enumerate(reader):
            if len(fields) != width:
                return (
                    f"{path} row {row} (line {row + 2}): malformed CSV, {len(fields)} fields where "
                    f"the header has {width} (truncated file?)"
                )
    return f"{path}: malformed CSV (truncated file?): {exc}"


def _blank_to_null(batch):
    """Empty CSV cells become nulls, so that they are reported as missing."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = []
    for arr in batch.columns:
        empty = pc.equal(pc.utf8_length(arr), 0)
        cols.append(pc.if_else(empty, pa.scalar(None, arr.type), arr) if pc.any(empty).as_py() else arr)
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def _json_int(v: Any, name: str, where: str, *, node: bool = False) -> int:
    if isinstance(v, bool):
        raise ValueError(f"{name} must be an integer, got {v!r} in {where}")
    if node:
        if isinstance(v, float):
            raise ValueError(f"node id {v!r} in {where}: node ids must be integers (type-confused id)")
        try:
            out = canonical_node_id(v)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"node id {v!r} in {where}: {exc}") from None
        if not isinstance(out, int) or not 0 <= out < 2**63:
            raise ValueError(f"node id {v!r} in {where}: report files hold integer node ids in [0, 2**63)")
        return out
    try:
        return canonical_value(v)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} in {where}: {exc}") from None


def _json_float(v: Any, name: str, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{name} must be a number, got {type(v).__name__} {str(v)[:40]} in {where}")
    try:
        return float(v)
    except OverflowError:  # an integer beyond the floats
        raise ValueError(f"{name} {str(v)[:30]}... in {where}: beyond the largest float") from None


#: longest quantity or protocol name in a JSON Lines row (the package's are under 40 characters)
_MAX_NAME = 128


def _iter_jsonl(path: Path, chunk_rows: int) -> Iterator[ReportChunk]:
    """The rows of a JSON Lines file, read line by line with at most ``MAX_JSONL_LINE + 1`` bytes
    held per line: a longer line is refused before the rest of it is read. Each row is checked
    and converted to typed cells as soon as its line is read (a chunk holds numbers and short
    names, never the lines), so nothing is read past the first bad line."""
    start = 0
    cells: list[tuple[int, int, int, int, float, float, str, str]] = []
    with open(path, "rb") as fh:
        line_no = 0
        while raw := fh.readline(MAX_JSONL_LINE + 1):
            line_no += 1
            body = raw[:-1] if raw.endswith(b"\n") else raw
            row = start + len(cells)
            where = f"{path} row {row} (line {line_no})"
            if len(body) > MAX_JSONL_LINE:
                raise ValueError(
                    f"{where}: line longer than {MAX_JSONL_LINE} bytes (1 MiB); a report row is about "
                    "150 bytes, so this is not a report file, or the file is damaged (a missing line "
                    "break?); refused without reading the rest of the line"
                )
            if not body.strip():
                continue
            obj = parse_json(body, where)
            if not isinstance(obj, dict):
                raise ValueError(f"{where}: each line must be a JSON object, got {type(obj).__name__}")
            missing = [c for c in COLUMNS if c not in obj]
            if missing:
                raise ValueError(f"{where}: lacks {missing}; expected keys {list(COLUMNS)}")
            if len(obj) != len(COLUMNS):
                unknown = [k for k in obj if k not in COLUMNS]
                raise ValueError(
                    f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
                    f"{', '.join(repr(k[:40]) for k in unknown[:_MAX_LISTED])}; a report row has exactly "
                    f"the keys {list(COLUMNS)} (remove the others)"
                )
            cells.append(_json_cells(obj, where))
            if len(cells) == chunk_rows:
                yield _chunk_from_json(cells, str(path), start)
                start += len(cells)
                cells = []
    if cells:
        yield _chunk_from_json(cells, str(path), start)


def _json_cells(r: dict[str, Any], w: str) -> tuple[int, int, int, int, float, float, str, str]:
    """One JSON row's cells, checked: (node, round, value, protocol_version, epsilon, sensitivity,
    quantity, protocol); ValueError naming ``w`` (file, row and line)."""
    names = []
    for key in ("quantity", "protocol"):
        s = r[key]
        if not isinstance(s, str):
            raise ValueError(f"{key} must be a string, got {type(s).__name__} {str(s)[:40]} in {w}")
        if len(s) > _MAX_NAME:
            raise ValueError(f"{key} of {len(s):,} characters in {w}: not a name of this format")
        names.append(s)
    return (_json_int(r["node"], "node", w, node=True), _json_int(r["round"], "round", w),
            _json_int(r["value"], "value", w), _json_int(r["protocol_version"], "protocol_version", w),
            _json_float(r["epsilon"], "epsilon", w), _json_float(r["sensitivity"], "sensitivity", w), *names)


def _chunk_from_json(cells: list[tuple[int, int, int, int, float, float, str, str]], source: str,
                     first_row: int) -> ReportChunk:
    n = len(cells)
    node, rnd, value, version, eps, sens, qs, ps = zip(*cells, strict=True) if n else ([],) * 8
    q_names: dict[str, int] = {}
    p_names: dict[str, int] = {}
    q = np.fromiter((q_names.setdefault(x, len(q_names)) for x in qs), dtype=np.int32, count=n)
    p = np.fromiter((p_names.setdefault(x, len(p_names)) for x in ps), dtype=np.int32, count=n)
    return ReportChunk(
        source,
        first_row,
        np.array(node, dtype=np.int64),
        np.array(rnd, dtype=np.int64),
        q,
        list(q_names),
        np.array(value, dtype=np.int64),
        np.array(eps, dtype=np.float64),
        np.array(sens, dtype=np.float64),
        p,
        list(p_names),
        np.array(version, dtype=np.int64),
        line_offset=1,
    )


def node_labels_path(reports_path: str | os.PathLike) -> Path:
    """Where :func:`write_node_labels` puts the label table of a report file.

    >>> node_labels_path("run/r1.parquet").as_posix()
    'run/r1.nodes.csv'
    """
    p = Path(reports_path)
    return p.with_name(f"{p.stem}.nodes.csv")


def write_node_labels(reports_path: str | os.PathLike, labels: Sequence[Any]) -> Path:
    """Write the table ``node,label`` that names the node numbers of a report file; the table
    already there (any ``*.nodes.csv`` beside it with the same content: the same graph's, from an
    earlier round) is returned instead of writing another.

    Report rows carry non-negative integer node ids, and the triangle protocols number the
    nodes ``0..n-1`` (a node randomizes its pairs with every lower number). A graph whose nodes
    are named otherwise (text names, or integers other than ``0..n-1``) is simulated under the
    numbers ``0..n-1``; this table, beside the report file (:func:`node_labels_path`), maps each
    number back to the graph's own label. CSV with a header; labels are quoted where needed.

    Parameters
    ----------
    reports_path : path
        The report file the table belongs to.
    labels : sequence
        ``labels[i]`` is the label of node ``i``.

    Returns
    -------
    Path
        The table written (to a temporary name first, then moved into place).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     print(write_node_labels(Path(tmp) / "r1.csv", ["alice", "bob, jr."]).read_text(), end="")
    ...     write_node_labels(Path(tmp) / "r2.csv", ["alice", "bob, jr."]).name  # round 2: the same table
    node,label
    0,alice
    1,"bob, jr."
    'r1.nodes.csv'
    """
    import csv
    import io

    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(("node", "label"))
    out.writerows(enumerate(labels))
    data = buf.getvalue().encode("utf-8")
    path = node_labels_path(reports_path)
    for other in sorted(path.parent.glob("*.nodes.csv")):
        try:
            if other.is_file() and other.stat().st_size == len(data) and other.read_bytes() == data:
                return other
        except OSError:
            continue
    with atomic_write(path, "wb") as fh:
        fh.write(data)
    return path


def iter_report_chunks(
    path: str | os.PathLike, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, format: str | None = None
) -> Iterator[ReportChunk]:
    """The rows of one report file as typed, checked chunks of at most ``chunk_rows`` rows.

    Raises ``ValueError`` naming the file and row for any unreadable or ill-typed cell: a
    truncated file, a missing column, an empty cell, a non-canonical or float node id, a
    boolean or non-integer value, a decimal string beyond 2**53; in JSON Lines also a line
    longer than :data:`MAX_JSONL_LINE` bytes or an object with a key other than
    :data:`~ldpgraph.protocols.reports.COLUMNS`.
    """
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be an integer >= 1, got {chunk_rows!r}")
    fmt = report_format(path, format)
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"report file not found: {p}")
    if p.stat().st_size == 0:
        what = "the header line" if fmt == "csv" else "a row" if fmt == "jsonl" else "a Parquet footer"
        raise ValueError(f"{p}: empty file (0 bytes): a report file holds at least {what}; was it written "
                         "completely?")
    if fmt == "parquet":
        return _iter_parquet(p, chunk_rows)
    if fmt == "csv":
        return _iter_csv(p, chunk_rows)
    return _iter_jsonl(p, chunk_rows)


def read_report_set(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    d_max: int | None = None,
    round: int | None = None,
    protocol: str = DEGREE_PROTOCOL,
    bounds: PublicBounds | None = None,
    outliers: Literal["clip", "reject", "raise"] = "clip",
    expected_nodes: int | Sequence[int] | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    format: str | None = None,
) -> ReportSetSummary:
    """Validate one or many report files as one report set, streaming; return its summary.

    Memory is independent of the number of rows (chunks of ``chunk_rows`` rows, histograms of
    the values, node bitmaps). Every check of
    :func:`~ldpgraph.protocols.ingest.reports_from_records` is made across the whole file set,
    and no summary is returned unless all of them pass.

    Parameters
    ----------
    paths : path or sequence of paths
    d_max : int, optional
        Public degree bound (for ``kstar_<k>`` rows).
    round : int, optional
        The round to curate; default: the first row's, shared by all rows.
    protocol : str
    bounds : PublicBounds, optional
        Public bounds for poisoning screening; ``outliers`` says what happens outside them.
    outliers : {"clip", "reject", "raise"}
    expected_nodes : int or sequence of int, optional
        The public node set (n means 0..n-1): missing and unexpected nodes are errors.
    chunk_rows : int
    format : str, optional
        Force one format for every file.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise ValueError("no report files given")
    acc = ReportAccumulator(protocol=protocol, round=round, d_max=d_max, bounds=bounds, outliers=outliers)
    for path in paths:
        for chunk in iter_report_chunks(path, chunk_rows=chunk_rows, format=format):
            acc.add(chunk)
        if str(path) not in acc.sources:
            acc.sources.append(str(path))
    return acc.summary(expected_nodes=expected_nodes)


def read_reports(
    paths: str | os.PathLike | Sequence[str | os.PathLike], *, d_max: int | None = None, **kwargs: Any
) -> NodeReports:
    """A (small) report set as in-memory :class:`NodeReports`, values in increasing order.

    Validated as :func:`read_report_set` does; the values of each quantity are returned sorted
    (every curator statistic is symmetric in the nodes), so memory is O(number of nodes).
    """
    from ..protocols.randomizer import ReleasedValues

    summary = read_report_set(paths, d_max=d_max, **kwargs)
    released = {
        name: ReleasedValues(name, q.to_reports(), q.epsilon, q.sensitivity)
        for name, q in summary.quantities.items()
    }
    return NodeReports(
        released=released, d_max=d_max, metadata={"n_rows": summary.n_rows, "round": summary.round}
    )


# ---------------------------------------------------------------------------------------------
# the Dask path: one task per partition, merged exactly (public home: ldpgraph.run.reportdask)
#
# It lives in this module, beside the readers it calls, so that curate_files can dispatch to it
# without reportfiles and reportdask importing each other; ldpgraph.run.reportdask re-exports it.


_LOCAL_SCHEDULERS = ("sync", "synchronous", "threads", "processes")


def report_partitions(paths: Sequence[str | os.PathLike], *, format: str | None = None) -> list[tuple]:
    """The partitions of a report set: (path, format, row group or None, first row).

    >>> report_partitions([])
    []
    """
    parts = []
    for path in paths:
        fmt = report_format(path, format)
        if fmt == "parquet":
            for i, (first, _rows) in enumerate(parquet_row_groups(path)):
                parts.append((os.fspath(path), fmt, i, first))
        else:
            parts.append((os.fspath(path), fmt, None, 0))
    return parts


def partition_chunks(part: tuple, chunk_rows: int) -> Iterator[ReportChunk]:
    """The chunks of one partition ``(path, format, row group or None, first row)``."""
    path, fmt, group, first = part
    if group is None:
        return iter_report_chunks(path, chunk_rows=chunk_rows, format=fmt)
    return iter_parquet_row_group(path, group, first, chunk_rows=chunk_rows)


def _partition(part: tuple, chunk_rows: int, acc_kwargs: dict[str, Any]) -> ReportAccumulator:
    path = part[0]
    acc = ReportAccumulator(**acc_kwargs)
    for chunk in partition_chunks(part, chunk_rows):
        acc.add(chunk)
    if path not in acc.sources:
        acc.sources.append(path)
    return acc


def _merge(a: ReportAccumulator, b: ReportAccumulator) -> ReportAccumulator:
    return a.merge(b)


def read_report_set_dask(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    scheduler: Any = None,
    d_max: int | None = None,
    round: int | None = None,
    protocol: str = "degree",
    bounds: Any = None,
    outliers: str = "clip",
    expected_nodes: Any = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    format: str | None = None,
) -> ReportSetSummary:
    """:func:`ldpgraph.run.reportfiles.read_report_set` on Dask: one task per partition, exact merges.

    Parameters
    ----------
    paths : path or sequence of paths
    scheduler : dask.distributed.Client, address string, or a local scheduler name
        A ``Client`` runs the tasks on its cluster; an address (``tcp://10.0.0.1:8786``)
        connects a client for the call; ``"threads"``, ``"processes"`` or ``"sync"`` use a
        local Dask scheduler; None uses Dask's default (a running client, else threads).
    d_max, round, protocol, bounds, outliers, expected_nodes, chunk_rows, format
        As for :func:`~ldpgraph.run.reportfiles.read_report_set`.

    Returns
    -------
    ReportSetSummary
        Identical to the streaming pass's.
    """
    import dask

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("no report files given")
    acc_kwargs = {
        "protocol": protocol,
        "round": round,
        "d_max": d_max,
        "bounds": bounds,
        "outliers": outliers,
    }
    ReportAccumulator(**acc_kwargs)  # check the arguments here, not in a worker
    parts = report_partitions(paths, format=format)
    if not parts:
        raise ValueError("the report files hold no partitions")
    tasks = [dask.delayed(_partition)(p, chunk_rows, acc_kwargs) for p in parts]
    while len(tasks) > 1:  # pairwise tree reduction
        nxt = [dask.delayed(_merge)(tasks[i], tasks[i + 1]) for i in range(0, len(tasks) - 1, 2)]
        if len(tasks) % 2:
            nxt.append(tasks[-1])
        tasks = nxt
    acc = _compute(tasks[0], scheduler)
    return acc.summary(expected_nodes=expected_nodes)


def _compute(task: Any, scheduler: Any) -> ReportAccumulator:
    import dask

    if scheduler is None:
        return dask.compute(task)[0]
    if isinstance(scheduler, str):
        if scheduler in _LOCAL_SCHEDULERS:
            return dask.compute(task, scheduler=scheduler)[0]
        from ..dask_connect import connect

        with connect(scheduler) as client:  # one timeout and one message, as experiment's
            return client.compute(task).result()
    if hasattr(scheduler, "compute") and hasattr(scheduler, "submit"):
        return scheduler.compute(task).result()
    raise TypeError(
        f"scheduler must be a dask.distributed Client, an address or one of {_LOCAL_SCHEDULERS}, "
        f"got {type(scheduler).__name__}"
    )


@dataclass(frozen=True)
class CurationResult:
    """Estimates curated from report files, with what validation and screening found.

    Attributes
    ----------
    estimates : list of (statistic, k, Estimate, influence bound or None)
        The influence bound (:func:`~ldpgraph.protocols.curator.influence_bound`) is given
        when public bounds were: how far one malicious node can have moved the estimate.
    summary : ReportSetSummary
        Validated histograms, node and row counts, screening counts per quantity.
    files : list of str
    """

    estimates: list[tuple[str, int | None, Any, float | None]]
    summary: ReportSetSummary
    files: list[str]

    def _table_columns(self) -> dict[str, list[Any]]:
        est = [(stat, k, e, b) for stat, k, e, b in self.estimates]
        return {
            "statistic": [e.statistic for _, _, e, _ in est],
            "k": [k for _, k, _, _ in est],
            "value": [float(e.value) for _, _, e, _ in est],
            "std_error": [e.std_error for _, _, e, _ in est],
            "variance_estimate": [e.variance_estimate for _, _, e, _ in est],
            "influence_bound": [b for _, _, _, b in est],
        }

    def to_pandas(self) -> Any:
        """The estimates as a pandas DataFrame, one row per statistic, with the columns of
        ``ldpgraph curate --json``'s estimates (``statistic, k, value, std_error,
        variance_estimate, influence_bound``); pandas is imported only here."""
        from ..tables import to_frame

        return to_frame(self._table_columns(), integers=("k",))

    def _repr_html_(self) -> str:
        from ..tables import html_table

        s = self.summary
        caption = (f"{len(self.files)} file(s), {s.n_rows:,} rows, {s.n_nodes:,} nodes; protocol "
                   f"{s.protocol}, round {s.round}")
        return html_table(self._table_columns(), caption=caption)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``ldpgraph curate --json`` prints)."""
        s = self.summary
        return {
            "files": self.files,
            "n_rows": s.n_rows,
            "n_nodes": s.n_nodes,
            "protocol": s.protocol,
            "round": s.round,
            "outliers": s.outliers,
            "quantities": {
                name: {
                    "epsilon": q.epsilon,
                    "sensitivity": q.sensitivity,
                    "n_reports": q.n_reports,
                    "n_outside": q.n_outside,
                    "admissible": None if q.admissible is None else list(q.admissible),
                }
                for name, q in s.quantities.items()
            },
            "estimates": [
                {
                    "statistic": est.statistic,
                    "value": est.value,
                    "std_error": est.std_error,
                    "variance_estimate": est.variance_estimate,
                    "influence_bound": bound,
                }
                for _, _, est, bound in self.estimates
            ],
        }


def curate_summary(
    summary: ReportSetSummary,
    statistics: Sequence[tuple[str, int | None]],
    *,
    bounds: PublicBounds | None = None,
    files: Sequence[str] = (),
) -> CurationResult:
    """Estimates of ``statistics`` ((name, k) pairs) from a validated summary."""
    from ..protocols.curator import influence_bound
    from ..protocols.reportset import estimate_statistic

    out = []
    for stat, k in statistics:
        est = estimate_statistic(summary, stat, k)
        bound = None
        if bounds is not None:
            name = f"kstar_{k}" if stat == "kstars_from_counts" else "degree"
            q = summary.quantities[name]
            if q.admissible is not None:
                bound = influence_bound(
                    stat, *q.admissible, epsilon=q.epsilon, n_nodes=max(q.n_reports, 1), k=k
                )
        out.append((stat, k, est, bound))
    return CurationResult(out, summary, list(files))


def curate_files(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    statistics: Sequence[tuple[str, int | None]] = (("kstars", 2),),
    *,
    bounds: PublicBounds | None = None,
    scheduler: Any = None,
    **kwargs: Any,
) -> CurationResult:
    """Validate report files (streaming, or on Dask) and estimate ``statistics`` from them.

    Parameters
    ----------
    paths : path or sequence of paths
    statistics : sequence of (name, k)
        Names of :data:`~ldpgraph.protocols.reportset.STATISTICS`; k for kstars,
        degree_moment and kstars_from_counts, else None.
    bounds : PublicBounds, optional
        Public bounds for poisoning screening (and the influence bounds of the result).
    scheduler : None, str or dask.distributed.Client
        None: one streaming pass in this process. Otherwise the Dask path
        (:func:`~ldpgraph.run.reportdask.read_report_set_dask`), whose summary is identical.
    **kwargs
        Passed to :func:`read_report_set` (d_max, round, outliers, expected_nodes, chunk_rows,
        format, protocol).

    Examples
    --------
    >>> import tempfile
    >>> from ldpgraph.protocols import DegreeRandomizer, kstars
    >>> rep = DegreeRandomizer(epsilon=1.0).randomize([3, 1, 2, 2], rng=0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_reports(Path(tmp) / "r.parquet", rep)
    ...     result = curate_files(path, [("kstars", 2)])
    >>> result.estimates[0][2] == kstars(rep, 2)
    True
    """
    files = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    if scheduler is None:
        summary = read_report_set(files, bounds=bounds, **kwargs)
    else:
        summary = read_report_set_dask(files, scheduler=scheduler, bounds=bounds, **kwargs)
    return curate_summary(summary, statistics, bounds=bounds, files=files)
