r"""Curating report sets on Dask: the same partial sums, one task per partition, merged exactly.

A report set is cut into partitions — every row group of a Parquet file (the unit Parquet
readers and ``dask.dataframe.read_parquet`` parallelise over), every CSV or JSON Lines file as
a whole — and one task per partition validates its rows into a
:class:`~ldpgraph.protocols.reportset.ReportAccumulator` (value histograms with integer
counts, node bitmaps over the partition's id range). The accumulators are merged pairwise in a
tree of tasks; merging adds integer counts and takes disjoint unions of node sets (refusing a
node that reported one quantity in two partitions), so the final summary is **identical** to
the one-process streaming pass of :func:`ldpgraph.run.reportfiles.read_report_set`, whatever the
partitioning and the order of the merges — and so is every estimate computed from it.

Dask is imported only when this module's functions run (``pip install "ldpgraph[distributed]"``).

The functions are defined in :mod:`ldpgraph.run.reportfiles`, beside the readers they call (so that
:func:`~ldpgraph.run.reportfiles.curate_files` can dispatch to them without the two modules
importing each other), and are re-exported here, their public home.
"""

from __future__ import annotations

from .reportfiles import (
    _LOCAL_SCHEDULERS,
    _compute,
    _merge,
    _partition,
    partition_chunks,
    read_report_set_dask,
    report_partitions,
)

__all__ = ["report_partitions", "partition_chunks", "read_report_set_dask"]

# Private names kept importable from here (ldpgraph.run.trianglefiles and ldpgraph.run.files use _compute).
_PRIVATE = (_LOCAL_SCHEDULERS, _compute, _merge, _partition)
