"""Low-level file helpers shared by the dataset modules: gzip detection, hashing, graph hooks.

:func:`_read_graph` and :func:`_graph_from_igraph` are the two places where the dataset modules
build a :class:`~ldpgraph.graph.Graph`; their callers look them up on this module at call time,
so that a test can replace them here (``monkeypatch.setattr(datasets._files, "_read_graph", ...)``).
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path
from typing import IO, Any

__all__: list[str] = []

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


def _open_binary(path: Path) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing if it is gzip (by magic bytes, not name)."""
    if _is_gzip(path):
        return gzip.open(path, "rb")
    return open(path, "rb")


def _hash_stream(fh: IO[bytes], limit: int | None = None) -> tuple[str, int]:
    """(sha256 hex digest, number of bytes) of ``fh``; stop reading after ``limit + 1`` bytes.

    With a ``limit`` the count tells whether the stream is longer than ``limit`` (it is then
    ``limit + 1`` and the digest is of that prefix), so a decompression bomb is never read out.
    """
    h = hashlib.sha256()
    n = 0
    cap = None if limit is None else limit + 1
    while True:
        want = _CHUNK if cap is None else min(_CHUNK, cap - n)
        if want <= 0:
            break
        chunk = fh.read(want)
        if not chunk:
            break
        h.update(chunk)
        n += len(chunk)
    return h.hexdigest(), n


def _read_graph(path: Path) -> Any:
    """Edge-list file (gzip or plain; '#' comments; directed edges symmetrized) -> Graph."""
    from ..graph import read_edgelist

    return read_edgelist(path)


def _graph_from_igraph(g: Any) -> Any:
    """igraph.Graph -> Graph."""
    from ..graph import from_igraph

    return from_igraph(g)
