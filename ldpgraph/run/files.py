r"""The file executor: nodes write the rows of a round to report files; the curator streams them back.

``ldpgraph node`` calls :func:`release_to_file`, ``ldpgraph curate`` calls
:func:`accumulate_files` then the round's broadcast or the protocol's estimate. Nothing here
knows a protocol: the release, the accumulator, the broadcast's file form and the estimate
are the protocol's (:mod:`ldpgraph.core.protocol`). The accumulators are order-free, so the
files give the same bits as the in-memory executor (:mod:`ldpgraph.run.memory`) for one seed,
whatever the chunk size, the number of files or the Dask partitioning.

Dask (``scheduler``): one task per partition of the report set (a Parquet row group or a text
file) builds an accumulator; the accumulators are merged pairwise in a tree.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.plan import Plan
from ..core.protocol import Accumulator, Round
from ..core.sampling import Sampler

__all__ = ["release_to_file", "accumulate_files", "write_broadcast", "read_broadcast", "DEFAULT_BATCH_NODES",
           "DEFAULT_BATCH_ROWS"]

#: the largest broadcast file read (a longer one is refused before it is read)
BROADCAST_LIMIT = 1 << 34

#: nodes released per batch before their rows are handed to the writer
DEFAULT_BATCH_NODES = 4096

#: rows a batch aims at: a batch whose rows would pass it (predicted from the nodes released
#: before) is released in pieces of about this many rows
DEFAULT_BATCH_ROWS = 1 << 20


def release_to_file(
    path: str | os.PathLike,
    round: Round,
    plan: Plan,
    nodes: Sequence[int],
    neighbours: Sequence[Any],
    broadcast: Any,
    sampler: Sampler,
    *,
    batch_nodes: int = DEFAULT_BATCH_NODES,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> tuple[Path, int]:
    """Release ``nodes`` in batches and write each batch's rows as it is produced; ``(path, number
    of rows)``. Memory: one batch, cut by rows, whatever the number of nodes and of their rows.

    Batches are ``batch_nodes`` nodes, in order (each node's rows depend on its own stream only:
    the rows are the same however the nodes are batched). A batch whose rows, predicted from the
    rows per node released so far (twice the largest rate of a piece, for rounds whose rows grow
    with the node id; before any, the rows of the first batch's last node, released alone and
    dropped), would pass ``batch_rows`` is released in pieces of about ``batch_rows`` rows, each
    written as it comes; the file then holds the same rows, and the same bytes whenever no batch
    is cut (a release that lists some quantity per batch, after its nodes' other rows, lists it
    per piece; a Parquet file has a row group per piece)."""
    from .reportfiles import write_report_chunks

    return write_report_chunks(path, _batches(round, plan, nodes, neighbours, broadcast, sampler,
                                              max(int(batch_nodes), 1), max(int(batch_rows), 1)))


def _batches(round: Round, plan: Plan, nodes: Sequence[int], neighbours: Sequence[Any], broadcast: Any,
             sampler: Sampler, batch_nodes: int, batch_rows: int) -> Any:
    """The rows of ``nodes``, a chunk per batch (or per piece of a batch cut by rows)."""
    from ..core.rows import n_rows

    n = len(nodes)
    if n == 0:
        yield round.release(plan, nodes[0:0], neighbours[0:0], broadcast, sampler)
        return
    # rows per node predicted for the next nodes; at first, those of the first batch's last node
    # (released on its own and dropped: a node's rows do not depend on the batch, and a dropped
    # release publishes nothing; for rounds whose rows grow with the node id it is the largest)
    last = min(n, batch_nodes) - 1
    rate = float(n_rows(round.release(plan, nodes[last:last + 1], neighbours[last:last + 1], broadcast,
                                      sampler)))
    for lo in range(0, n, batch_nodes):
        hi = min(n, lo + batch_nodes)
        step = hi - lo
        if rate * (hi - lo) > batch_rows:
            step = max(1, int(batch_rows / rate))
        a = lo
        while a < hi:
            b = min(hi, a + step)
            rows = round.release(plan, nodes[a:b], neighbours[a:b], broadcast, sampler)
            # twice the piece's rate: rows that grow with the node id stay near the aim
            rate = max(rate, 2.0 * n_rows(rows) / (b - a))
            yield rows
            del rows
            a = b
            if step < hi - lo:  # a cut batch: its next pieces by the newest rate
                step = max(1, int(batch_rows / rate))


def _partition_accumulator(part: Any, chunk_rows: int, round: Round, plan: Plan, broadcast: Any,
                           options: dict[str, Any]) -> Accumulator:
    acc = round.accumulator(plan, broadcast, **options)
    _add_partition(acc, part, chunk_rows)
    return acc


def _add_partition(acc: Accumulator, part: Any, chunk_rows: int) -> None:
    from .reportdask import partition_chunks

    for chunk in partition_chunks(part, chunk_rows):
        acc.add(chunk)


def _merge(a: Accumulator, b: Accumulator) -> Accumulator:
    return a.merge(b)


def accumulate_files(
    paths: Sequence[str | os.PathLike],
    round: Round,
    plan: Plan,
    broadcast: Any = None,
    *,
    chunk_rows: int = 1 << 20,
    format: str | None = None,
    scheduler: Any = None,
    progress: Any = None,
    **options: Any,
) -> Any:
    """Stream the report files through the round's accumulator (or a Dask tree of them); its result.

    ``progress``: an object whose ``update(n)`` is called after each file is read (in this
    process, without ``scheduler``), such as :class:`ldpgraph._progress.Progress`.
    """
    files = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    if not files:
        raise ValueError("no report files given")
    if scheduler is None:
        acc = round.accumulator(plan, broadcast, **options)
        for path in files:
            _add_partition(acc, (path, format, None, 0), chunk_rows)
            if progress is not None:
                progress.update(1)
        return acc.result()
    import dask

    from .reportdask import _compute, report_partitions

    parts = report_partitions(files, format=format)
    if not parts:
        raise ValueError("the report files hold no partitions")
    tasks = [dask.delayed(_partition_accumulator)(p, chunk_rows, round, plan, broadcast, options)
             for p in parts]
    while len(tasks) > 1:  # pairwise tree reduction
        nxt = [dask.delayed(_merge)(tasks[i], tasks[i + 1]) for i in range(0, len(tasks) - 1, 2)]
        if len(tasks) % 2:
            nxt.append(tasks[-1])
        tasks = nxt
    return _compute(tasks[0], scheduler).result()


def write_broadcast(protocol: Any, path: str | os.PathLike, broadcast: Any) -> Path:
    """Write ``broadcast`` to ``path``: the protocol's bytes
    (:meth:`~ldpgraph.core.protocol.Protocol.encode_broadcast`), written atomically
    (:func:`~ldpgraph._atomic.atomic_write`: a reader sees the old file or the whole new one).

    >>> import tempfile, pathlib
    >>> from ldpgraph.run import run_in_memory
    >>> run = run_in_memory("two-round-triangles-dlap", "ws:n=30,k=4,p=0.2", 2.0, sampler=1)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_broadcast(run.protocol, pathlib.Path(tmp) / "b.txt", run.broadcasts[0])
    ...     read_broadcast(run.protocol, path, run.plan).run_id == run.broadcasts[0].run_id
    True
    """
    from .._atomic import atomic_write
    from ..protocols.registry import get

    proto = get(protocol) if isinstance(protocol, str) else protocol
    data = proto.encode_broadcast(broadcast)
    path = Path(path)
    with atomic_write(path, "wb") as fh:
        fh.write(data)
    return path


def read_broadcast(protocol: Any, path: str | os.PathLike, plan: Plan) -> Any:
    """The broadcast in the file ``path``, decoded and checked against ``plan`` by the protocol
    (:meth:`~ldpgraph.core.protocol.Protocol.decode_broadcast`); errors name the file. The file is
    read once (what was checked is what is decoded: :func:`~ldpgraph.run.authenticate.read_broadcast_once`
    checks a signature first)."""
    from ..protocols.registry import get

    proto = get(protocol) if isinstance(protocol, str) else protocol
    try:
        with open(path, "rb") as fh:
            # (read(n) reserves n bytes first: ask for the file's length, not the limit)
            data = fh.read(min(os.fstat(fh.fileno()).st_size, BROADCAST_LIMIT) + 1)
    except FileNotFoundError:
        raise FileNotFoundError(f"broadcast file not found: {path}") from None
    if len(data) > BROADCAST_LIMIT:
        raise ValueError(f"{path}: longer than {BROADCAST_LIMIT:,} bytes: not a broadcast of this package")
    return proto.decode_broadcast(data, plan, source=str(path))

