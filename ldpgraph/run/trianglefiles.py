r"""Files of the deployed triangle protocols (and ``avg-clustering``): rows in, broadcast edge lists.

The rows are the report format (:mod:`ldpgraph.protocols.reports`; CSV, JSON Lines, Parquet,
read by :func:`ldpgraph.run.reportfiles.iter_report_chunks`), with the quantities of
:mod:`ldpgraph.protocols.deploy_triangles`. The broadcast after round 1 of
``two-round-triangles-dlap`` is a text edge list with a JSON header::

    # ldpgraph-broadcast-edges 1
    # {"bound": 3, "epsilon": 0.5, "n_edges": 2, "n_nodes": 4, "protocol": "two-round-triangles-dlap", ...}
    1 0
    3 2

two comment lines (format tag and version; the header with ``run_id``), then one line
``u v`` (``u > v``) per noisy edge in increasing (u, v) order. Reading checks the tag, the
version, the protocol, every line (two canonical integers, ``0 <= v < u < n``, increasing: no
duplicates), the count against ``n_edges`` and the run id against the SHA-256 of header and
edges (an edited or truncated file is refused), naming the file and line.

The rows are curated by the file executor (:func:`ldpgraph.run.files.accumulate_files`: one
streaming pass, or Dask with one task per Parquet row group or text file, merged pairwise).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import atomic_write
from ..protocols.deploy_triangles import (
    TriangleBroadcast,
    broadcast_run_id,
    triangle_protocols,
    triangle_wire,
)
from ..protocols.randomized_response import pair_from_index, pair_index
from .reportfiles import iter_report_chunks

__all__ = [
    "BROADCAST_EDGES_FORMAT",
    "BROADCAST_EDGES_VERSION",
    "write_triangle_broadcast",
    "read_triangle_broadcast",
    "read_edge_broadcast",
    "is_edge_broadcast",
    "report_protocol",
]

BROADCAST_EDGES_FORMAT = "ldpgraph-broadcast-edges"
BROADCAST_EDGES_VERSION = 1


def _paths(paths: Any) -> list[str]:
    out = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    if not out:
        raise ValueError("no report files given")
    return out


def write_triangle_broadcast(path: str | os.PathLike, broadcast: TriangleBroadcast) -> Path:
    """Write ``broadcast`` as an edge list with its JSON header (:func:`~ldpgraph._atomic.atomic_write`)."""
    path = Path(path)
    import pyarrow as pa
    import pyarrow.csv as pcsv

    u, v = pair_from_index(broadcast.index)
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with atomic_write(path, "wb") as fh:
        fh.write(f"# {BROADCAST_EDGES_FORMAT} {BROADCAST_EDGES_VERSION}\n".encode())
        fh.write(("# " + json.dumps(broadcast.header(), sort_keys=True) + "\n").encode())
        if u.size:
            pcsv.write_csv(pa.table({"u": u, "v": v}), fh, write_options=opts)
    return path


def is_edge_broadcast(path: str | os.PathLike) -> bool:
    """Whether ``path`` starts like a triangle-protocol broadcast (else: a JSON broadcast)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(BROADCAST_EDGES_FORMAT) + 2) == f"# {BROADCAST_EDGES_FORMAT}".encode()
    except FileNotFoundError:
        raise FileNotFoundError(f"broadcast file not found: {path}") from None


def read_triangle_broadcast(path: str | os.PathLike) -> TriangleBroadcast:
    """Read and fully check a broadcast edge list (see the module docstring)."""
    path = Path(path)
    header, index, run_id = read_edge_broadcast(path, triangle_protocols())
    bound = header.get("bound")
    if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
        raise ValueError(f"{path} line 2: bound must be a non-negative integer, got {bound!r}")
    projection = header.get("projection", False)
    if not isinstance(projection, bool):
        raise ValueError(f"{path} line 2: projection must be true or false, got {projection!r}")
    low = triangle_wire(header["protocol"])[1].min_bound
    if bound < low:
        raise ValueError(f"{path} line 2: {header['protocol']} needs a degree bound >= {low}, got {bound}")
    return TriangleBroadcast(header["protocol"], header["n_nodes"], float(header["epsilon"]), bound, index,
                             run_id, projection)


def read_edge_broadcast(path: str | os.PathLike, versions: dict[str, int]) -> tuple[dict[str, Any], Any, int]:
    """``(header without run_id, sorted pair indices, run id)`` of a broadcast edge list of one of the
    protocols ``versions`` (name -> version), after every check of the module docstring but those of
    the protocol's own header keys (the caller's)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    path = Path(path)
    try:
        with open(path, "rb") as fh:
            tag = fh.readline().decode("utf-8", "replace").strip()
            head = fh.readline().decode("utf-8", "replace").strip()
    except FileNotFoundError:
        raise FileNotFoundError(f"broadcast file not found: {path}") from None
    want = f"# {BROADCAST_EDGES_FORMAT} {BROADCAST_EDGES_VERSION}"
    if tag != want:
        raise ValueError(
            f"{path} line 1: not an {BROADCAST_EDGES_FORMAT} version {BROADCAST_EDGES_VERSION} "
            f"file (got {tag[:60]!r}, expected {want!r})"
        )
    try:
        header = json.loads(head[1:]) if head.startswith("#") else None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} line 2: unreadable JSON header: {exc.msg}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path} line 2: expected '# {{...}}' (the broadcast's JSON header)")
    proto = header.get("protocol")
    if proto not in versions or header.get("protocol_version") != versions[proto]:
        raise ValueError(
            f"{path} line 2: protocol {proto!r} version {header.get('protocol_version')!r}; this package "
            "reads " + ", ".join(f"{k} version {v}" for k, v in versions.items())
        )
    for key in ("n_nodes", "n_edges", "run_id"):
        val = header.get(key)
        if (
            isinstance(val, bool)
            or not isinstance(val, int)
            or val < (1 if key == "n_nodes" else 0)
        ):
            raise ValueError(f"{path} line 2: {key} must be a non-negative integer, got {val!r}")
    eps = header.get("epsilon")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < float("inf"):
        raise ValueError(f"{path} line 2: epsilon must be a number in (0, inf), got {eps!r}")
    if header.get("round") != 1:
        raise ValueError(
            f"{path} line 2: a broadcast after round {header.get('round')!r}; round 2 needs round 1's"
        )
    n = header["n_nodes"]
    _check_not_cut(path, header["n_edges"])
    _check_canonical_edges(path)
    try:
        table = pcsv.read_csv(
            path,
            # the two header lines must fit in the first block (arr-triangles: n noisy lower degrees)
            read_options=pcsv.ReadOptions(skip_rows=2, column_names=["u", "v"],
                                          block_size=max(1 << 20, len(tag) + len(head) + (1 << 20))),
            parse_options=pcsv.ParseOptions(delimiter=" "),
            convert_options=pcsv.ConvertOptions(column_types={"u": pa.int64(), "v": pa.int64()}),
        )
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{path}: edge lines must be two integers 'u v' (u > v): {exc}") from None
    if table.num_rows and (table.column("u").null_count or table.column("v").null_count):
        raise ValueError(f"{path}: an edge line lacks a node id")
    u = table.column("u").to_numpy().astype(np.int64) if table.num_rows else np.zeros(0, dtype=np.int64)
    v = table.column("v").to_numpy().astype(np.int64) if table.num_rows else np.zeros(0, dtype=np.int64)
    bad = np.flatnonzero((v < 0) | (v >= u) | (u >= n))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{path} line {i + 3}: edge '{u[i]} {v[i]}' must have 0 <= v < u < n_nodes = {n}")
    index = pair_index(u, v)
    bad = np.flatnonzero(index[1:] <= index[:-1])
    if bad.size:
        i = int(bad[0]) + 1
        raise ValueError(
            f"{path} line {i + 3}: edge '{u[i]} {v[i]}' repeats or is out of order "
            "(edges are distinct, in increasing (u, v) order)"
        )
    if index.size != header["n_edges"]:
        raise ValueError(
            f"{path}: the header says {header['n_edges']} edges, the file holds {index.size} (truncated?)"
        )
    run_id = header.pop("run_id")
    if broadcast_run_id(header, index) != run_id:
        raise ValueError(f"{path}: the edges and header do not match the run id {run_id} (edited or corrupt)")
    return header, index, run_id


def _check_not_cut(path: Path, n_edges: int) -> None:
    """ValueError when the file does not end with a newline: it was cut mid-line (truncated)."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(size - 1, 0))
        last = fh.read(1)
    if last != b"\n":
        raise ValueError(f"{path}: truncated: the file ends mid-line ({size:,} bytes, no final newline); the "
                         f"header announces {n_edges:,} edges: copy the whole broadcast again")


def _check_canonical_edges(path: Path) -> None:
    """ValueError (file and line) unless every edge line is two canonical decimal integers: only
    ASCII digits, a space and a line end (LF or CRLF), no sign, prefix or leading zero (pyarrow's
    integer reader, which parses the lines, would take ``0x1``, ``01`` or ``-0``)."""
    data = np.fromfile(path, dtype=np.uint8)
    newlines = np.flatnonzero(data[: 1 << 20] == ord("\n"))[:2]  # the two header lines end there
    if newlines.size < 2:  # a header line longer than 1 MiB (arr-triangles: n noisy lower degrees)
        newlines = np.flatnonzero(data == ord("\n"))[:2]
    body = data[int(newlines[-1]) + 1:] if newlines.size == 2 else data[:0]
    digit = (body >= ord("0")) & (body <= ord("9"))
    newline = body == ord("\n")
    crlf = (body == ord("\r")) & np.r_[newline[1:], False]  # a CRLF line end (a file moved through Windows)
    sep = (body == ord(" ")) | newline | crlf
    bad = ~(digit | sep)
    start = np.r_[True, sep[:-1]] if body.size else np.zeros(0, dtype=bool)
    nxt_digit = np.r_[digit[1:], False] if body.size else np.zeros(0, dtype=bool)
    bad |= start & (body == ord("0")) & nxt_digit  # a leading zero
    at = np.flatnonzero(bad)
    if at.size:
        line = 3 + int(np.count_nonzero(body[: at[0]] == ord("\n")))
        raise ValueError(f"{path} line {line}: an edge line holds two canonical integers 'u v' (digits "
                         "only, no sign, prefix or leading zero)")


def report_protocol(path: str | os.PathLike, *, format: str | None = None) -> str:
    """The protocol named in the first row of a report file ('' when it has no row)."""
    for chunk in iter_report_chunks(path, chunk_rows=1, format=format):
        if len(chunk):
            return str(chunk.protocol_names[int(chunk.protocol[0])])
    return ""
