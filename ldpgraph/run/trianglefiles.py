r"""Files of the deployed triangle protocols (and ``avg-clustering``): rows in, the broadcast noisy graph.

The rows are the report format (:mod:`ldpgraph.protocols.reports`; CSV, JSON Lines, Parquet,
read by :func:`ldpgraph.run.reportfiles.iter_report_chunks`), with the quantities of
:mod:`ldpgraph.protocols.deploy_triangles`. The broadcast after round 1 of
``two-round-triangles-dlap`` (and of the other protocols whose broadcast is the noisy graph:
``arr-triangles``, the clustering and 4-cycle protocols) is the noisy lower adjacency bits,
packed, after a JSON header: its bytes are :mod:`ldpgraph.protocols.edge_broadcast`'s (the
protocol encodes and decodes them); this module writes them atomically and reads them back.

The rows are curated by the file executor (:func:`ldpgraph.run.files.accumulate_files`: one
streaming pass, or Dask with one task per Parquet row group or text file, merged pairwise).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .._atomic import atomic_write
from ..protocols.deploy_triangles import TriangleBroadcast
from ..protocols.edge_broadcast import decode_triangle_broadcast, edge_list_bytes, encode_edge_broadcast
from .reportfiles import iter_report_chunks

__all__ = [
    "write_triangle_broadcast",
    "read_triangle_broadcast",
    "edge_list_bytes",
    "report_protocol",
    "write_oriented_broadcast",
    "read_edge_orient_broadcast",
]


def write_triangle_broadcast(path: str | os.PathLike, broadcast: TriangleBroadcast, *,
                             version: int | None = None) -> Path:
    """Write ``broadcast`` (:func:`~ldpgraph.protocols.edge_broadcast.encode_edge_broadcast`,
    ``version`` as there) atomically (:func:`~ldpgraph._atomic.atomic_write`).

    >>> import tempfile, pathlib
    >>> from ldpgraph.protocols.deploy_triangles import DLAP_PROTOCOL
    >>> b = TriangleBroadcast.build(DLAP_PROTOCOL, 4, 0.5, 3, [0, 5])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = write_triangle_broadcast(pathlib.Path(tmp) / "b.txt", b)
    ...     back = read_triangle_broadcast(p)
    >>> back.index.tolist(), back.run_id == b.run_id
    ([0, 5], True)
    """
    path = Path(path)
    data = encode_edge_broadcast(broadcast, version=version)
    with atomic_write(path, "wb") as fh:
        fh.write(data)
    return path


def _read(path: str | os.PathLike) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"broadcast file not found: {path}") from None


def read_triangle_broadcast(path: str | os.PathLike) -> TriangleBroadcast:
    """Read and fully check a broadcast noisy graph, either version
    (:func:`~ldpgraph.protocols.edge_broadcast.decode_triangle_broadcast`)."""
    return decode_triangle_broadcast(_read(path), str(path))


def write_oriented_broadcast(path: str | os.PathLike, broadcast: Any) -> Path:
    """Write an ``edge-orient-triangles`` broadcast
    (:func:`~ldpgraph.protocols.orientation.edge_orient.encode_oriented_broadcast`) atomically."""
    from ..protocols.orientation.edge_orient import encode_oriented_broadcast

    path = Path(path)
    data = encode_oriented_broadcast(broadcast)
    with atomic_write(path, "wb") as fh:
        fh.write(data)
    return path


def read_edge_orient_broadcast(path: str | os.PathLike, *, node: int | None = None) -> Any:
    """Read and check an ``edge-orient-triangles`` broadcast file; ``node``: what that node downloads
    only (:func:`~ldpgraph.protocols.orientation.edge_orient.decode_edge_orient_broadcast`)."""
    from ..protocols.orientation.edge_orient import decode_edge_orient_broadcast

    return decode_edge_orient_broadcast(_read(path), str(path), node=node)


def report_protocol(path: str | os.PathLike, *, format: str | None = None) -> str:
    """The protocol named in the first row of a report file ('' when it has no row)."""
    for chunk in iter_report_chunks(path, chunk_rows=1, format=format):
        if len(chunk):
            return str(chunk.protocol_names[int(chunk.protocol[0])])
    return ""
