r"""Curating report sets on Dask: the same partial sums, one task per partition, merged exactly.

A report set is cut into partitions — every row group of a Parquet file (the unit Parquet
readers and ``dask.dataframe.read_parquet`` parallelise over), every CSV or JSON Lines file as
a whole — and one task per partition validates its rows into a
:class:`~ldpgraph.protocols.reportset.ReportAccumulator` (value histograms with integer
counts, node bitmaps over the partition's id range). The accumulators are merged pairwise in a
tree of tasks; merging adds integer counts and takes disjoint unions of node sets (refusing a
node that reported one quantity in two partitions), so the final summary is **identical** to
the one-process streaming pass of :func:`ldpgraph.reportfiles.read_report_set`, whatever the
partitioning and the order of the merges — and so is every estimate computed from it.

Dask is imported only when this module's functions run (``pip install "ldpgraph[distributed]"``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from .protocols.reportset import ReportAccumulator, ReportChunk, ReportSetSummary
from .reportfiles import (
    DEFAULT_CHUNK_ROWS,
    iter_parquet_row_group,
    iter_report_chunks,
    parquet_row_groups,
    report_format,
)

__all__ = ["report_partitions", "partition_chunks", "read_report_set_dask"]

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
    """:func:`ldpgraph.reportfiles.read_report_set` on Dask: one task per partition, exact merges.

    Parameters
    ----------
    paths : path or sequence of paths
    scheduler : dask.distributed.Client, address string, or a local scheduler name
        A ``Client`` runs the tasks on its cluster; an address (``tcp://10.0.0.1:8786``)
        connects a client for the call; ``"threads"``, ``"processes"`` or ``"sync"`` use a
        local Dask scheduler; None uses Dask's default (a running client, else threads).
    d_max, round, protocol, bounds, outliers, expected_nodes, chunk_rows, format
        As for :func:`~ldpgraph.reportfiles.read_report_set`.

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
        from distributed import Client

        with Client(scheduler) as client:
            return client.compute(task).result()
    if hasattr(scheduler, "compute") and hasattr(scheduler, "submit"):
        return scheduler.compute(task).result()
    raise TypeError(
        f"scheduler must be a dask.distributed Client, an address or one of {_LOCAL_SCHEDULERS}, "
        f"got {type(scheduler).__name__}"
    )
