"""The statistics of an experiment grid: defined in :mod:`ldpgraph.protocols.statistics`.

Re-exported here, where they were defined before, so that ``ldpgraph.experiments.statistics``
keeps working; the objects are the same. They moved down so that the registry
(:mod:`ldpgraph.protocols.registry`) can read them without importing this package.
"""

from ..protocols.statistics import (
    GRAPH_STATISTICS,
    NAIVE_METHOD,
    STATISTICS,
    UNBIASED_METHOD,
    VECTOR_STATISTICS,
    GraphStatistic,
    get_statistic,
    graph_statistic_truth,
    statistic_names,
)

__all__ = [
    "GraphStatistic",
    "STATISTICS",
    "UNBIASED_METHOD",
    "NAIVE_METHOD",
    "statistic_names",
    "get_statistic",
    "GRAPH_STATISTICS",
    "VECTOR_STATISTICS",
    "graph_statistic_truth",
]
