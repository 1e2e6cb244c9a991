r"""Files of the deployed triangle protocols (and ``avg-clustering``): rows in, broadcast edge lists.

The rows are the report format (:mod:`ldpgraph.protocols.reports`; CSV, JSON Lines, Parquet,
read by :func:`ldpgraph.reportfiles.iter_report_chunks`), with the quantities of
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

:func:`read_round1_files` and :func:`read_round2_files` stream the files through one
accumulator, or run on Dask (``scheduler=``: one task per Parquet row group or text file, the
accumulators merged pairwise), with identical results.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._atomic import atomic_write
from .protocols.curator import Estimate
from .protocols.deploy_triangles import (
    CLUSTERING_PROTOCOL,
    TRIANGLE_PROTOCOLS,
    Round1Accumulator,
    Round1Summary,
    Round2Accumulator,
    TriangleBroadcast,
    broadcast_run_id,
)
from .protocols.randomized_response import pair_from_index, pair_index
from .reportfiles import DEFAULT_CHUNK_ROWS, iter_report_chunks

__all__ = [
    "BROADCAST_EDGES_FORMAT",
    "BROADCAST_EDGES_VERSION",
    "write_triangle_broadcast",
    "read_triangle_broadcast",
    "is_edge_broadcast",
    "report_protocol",
    "read_round1_files",
    "read_round2_files",
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
    if proto not in TRIANGLE_PROTOCOLS or header.get("protocol_version") != TRIANGLE_PROTOCOLS[proto]:
        raise ValueError(
            f"{path} line 2: protocol {proto!r} version {header.get('protocol_version')!r}; this package "
            "reads " + ", ".join(f"{k} version {v}" for k, v in TRIANGLE_PROTOCOLS.items())
        )
    for key in ("n_nodes", "n_edges", "bound", "run_id"):
        val = header.get(key)
        if (
            isinstance(val, bool)
            or not isinstance(val, int)
            or val < (1 if key in ("n_nodes", "bound") else 0)
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
    try:
        table = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(skip_rows=2, column_names=["u", "v"]),
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
    projection = header.get("projection", False)
    if not isinstance(projection, bool):
        raise ValueError(f"{path} line 2: projection must be true or false, got {projection!r}")
    if proto == CLUSTERING_PROTOCOL and header["bound"] < 2:
        raise ValueError(f"{path} line 2: avg-clustering needs a degree bound >= 2, got {header['bound']}")
    run_id = header.pop("run_id")
    if broadcast_run_id(header, index) != run_id:
        raise ValueError(f"{path}: the edges and header do not match the run id {run_id} (edited or corrupt)")
    return TriangleBroadcast(proto, n, float(eps), header["bound"], index, run_id, projection)


def report_protocol(path: str | os.PathLike, *, format: str | None = None) -> str:
    """The protocol named in the first row of a report file ('' when it has no row)."""
    for chunk in iter_report_chunks(path, chunk_rows=1, format=format):
        if len(chunk):
            return str(chunk.protocol_names[int(chunk.protocol[0])])
    return ""


def _accumulate(part: tuple | list[tuple], chunk_rows: int, kind: str, arg: Any) -> Any:
    """The accumulator of one partition (a Dask task) or of a list of them.

    ``kind`` "r1" (``arg`` = (protocol, expected nodes)) or "r2" (``arg`` = the broadcast).
    """
    from .reportdask import partition_chunks

    acc = Round1Accumulator(arg[0], expected_nodes=arg[1]) if kind == "r1" else Round2Accumulator(arg)
    for one in [part] if isinstance(part, tuple) else part:
        for chunk in partition_chunks(one, chunk_rows):
            acc.add(chunk)
    return acc


def _merge(a: Any, b: Any) -> Any:
    return a.merge(b)


def _run(paths: Any, chunk_rows: int, format: str | None, scheduler: Any, kind: str, arg: Any) -> Any:
    """All partitions accumulated: in this process (scheduler None) or on Dask (tree of merges)."""
    files = _paths(paths)
    if scheduler is None:  # one accumulator, every file streamed through it
        return _accumulate([(p, format, None, 0) for p in files], chunk_rows, kind, arg)
    import dask

    from .reportdask import _compute, report_partitions

    parts = report_partitions(files, format=format)
    if not parts:
        raise ValueError("the report files hold no partitions")
    tasks = [dask.delayed(_accumulate)(p, chunk_rows, kind, arg) for p in parts]
    while len(tasks) > 1:  # pairwise tree reduction
        nxt = [dask.delayed(_merge)(tasks[i], tasks[i + 1]) for i in range(0, len(tasks) - 1, 2)]
        if len(tasks) % 2:
            nxt.append(tasks[-1])
        tasks = nxt
    return _compute(tasks[0], scheduler)


def read_round1_files(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    protocol: str,
    *,
    expected_nodes: int | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    format: str | None = None,
    scheduler: Any = None,
    outliers: str | None = None,
    bounds: Any = None,
) -> Round1Summary:
    """Validate round-1 report files of a triangle protocol; the noisy graph.

    ``scheduler`` None: one streaming pass per file in this process. Otherwise Dask (as
    :func:`ldpgraph.reportdask.read_report_set_dask`: one task per Parquet row group or text
    file, merged pairwise); the summary is identical (the noisy graph is sorted).
    ``outliers`` ("clip", "reject", "raise") screens the ``lower_degree`` rows (tightened by
    the :class:`~ldpgraph.protocols.poisoning.PublicBounds` ``bounds``), as
    :class:`~ldpgraph.protocols.deploy_triangles.Round1Accumulator`.
    """
    Round1Accumulator(protocol, expected_nodes=expected_nodes, outliers=outliers, bounds=bounds)
    acc = _run(paths, chunk_rows, format, scheduler, "r1", (protocol, expected_nodes))
    acc.outliers, acc.bounds = outliers, bounds  # applied by summary(), after every partition
    return acc.summary()


def read_round2_files(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    broadcast: TriangleBroadcast,
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    format: str | None = None,
    scheduler: Any = None,
    outliers: str | None = None,
    bounds: Any = None,
) -> tuple[Estimate, Round2Accumulator]:
    """Validate round-2 report files against ``broadcast``; the estimate and the accumulator.

    ``scheduler`` as for :func:`read_round1_files`; the workers get the broadcast without its
    edge list (they check run id, node set and sensitivities), the estimate uses it whole.
    ``outliers`` screens the releases (:meth:`Round2Accumulator.screened_values`).
    """
    Round2Accumulator(broadcast, outliers=outliers, bounds=bounds)  # check the arguments here
    light = dataclasses.replace(broadcast, index=np.zeros(0, dtype=np.int64))
    acc = _run(paths, chunk_rows, format, scheduler, "r2", light if scheduler is not None else broadcast)
    acc.broadcast = broadcast
    acc.outliers, acc.bounds = outliers, bounds
    return acc.estimate(), acc
