r"""Graph statistics of an experiment grid besides k-stars: truth, unbiased and naive estimates.

It lives beside the registry (:mod:`ldpgraph.protocols.registry`), which reads the statistics.

k-star counts are estimated by the k-star methods (presets of :mod:`ldpgraph.protocols.degrees.degree` and
:mod:`ldpgraph.protocols.degrees.local_kstars`). The other degree statistics of the curator
(:mod:`ldpgraph.protocols.curator`) are estimated from noisy degrees y_v = d_v + DLap(e^{-eps})
two ways (each method its own draws in an experiment):

* ``unbiased-dlap``: the curator's unbiased estimate from the reports;
* ``naive-dlap``: the plug-in, the statistic of the noisy degrees taken as if they were true.

=================== ========= ================================= ================================
statistic           parameter truth                             naive plug-in
=================== ========= ================================= ================================
``edges``                     \|E\| = sum_v d_v / 2             sum_v y_v / 2 (already unbiased)
``degree_moment``   j >= 1    sum_v d_v^j                       sum_v y_v^j
``degree_mean``               (1/n) sum_v d_v                   (1/n) sum_v y_v (unbiased)
``degree_variance``           (1/n) sum_v (d_v - mean)^2        same of y
``max_degree``                max_v d_v                         max_v y_v
``degree_entropy``            -sum_v p_v ln p_v, p = d / sum d  same with y clipped at 0
=================== ========= ================================= ================================

The degree histogram is vector-valued and is left out of the grid (one scalar per trial), as
is the degree-clustering profile (:func:`ldpgraph.protocols.clustering.kernels.clustering_profile`).

Adjacency statistics (:data:`GRAPH_STATISTICS`) are estimated by protocols that need the
graph itself; their exact values come from :func:`graph_statistic_truth`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

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
    "statistic_truth",
]

#: statistics of the graph's adjacency, estimated by the protocols of
#: :mod:`ldpgraph.protocols.triangles.rr_triangles` and its siblings (triangles, transitivity) and
#: :mod:`ldpgraph.protocols.clustering.avg_clustering` (average local clustering, sum of d_v t_v),
#: :mod:`ldpgraph.protocols.rr_four_cycles` and :mod:`ldpgraph.protocols.four_cycles.protocols`
#: (4-cycles), per trial, from the graph itself
GRAPH_STATISTICS: tuple[str, ...] = (
    "triangles",
    "transitivity",
    "avg_clustering",
    "degree_weighted_triangles",
    "four_cycles",
    "core_numbers",
)

#: the statistics whose value is a vector (one per node): an experiment records each trial by a
#: summary (the mean approximation factor of the core numbers, 1 when exact), not an estimate of
#: a count, and the outputs print that summary, never a truth and a relative error
VECTOR_STATISTICS: tuple[str, ...] = ("core_numbers",)

#: method names under which the non-k-star statistics are recorded
UNBIASED_METHOD = "unbiased-dlap"
NAIVE_METHOD = "naive-dlap"


def _entropy_of(weights: NDArray[np.float64]) -> float:
    w = weights[weights > 0]
    total = float(np.sum(w))
    if total <= 0:
        return math.nan
    p = w / total
    return float(-np.sum(p * np.log(p)))


def _moment_truth(d: NDArray[np.int64], j: int) -> float:
    values, counts = np.unique(d, return_counts=True)
    return float(sum(int(v) ** j * int(c) for v, c in zip(values, counts, strict=True)))


def _curator():
    from . import curator

    return curator


@dataclass(frozen=True)
class GraphStatistic:
    """A scalar statistic of the degree sequence with its two estimates from noisy degrees.

    Attributes
    ----------
    name : str
        Registry name, the ``statistic`` column of the records.
    parameter : str or None
        Name of the integer parameter (``"j"`` for ``degree_moment``), None if there is none.
    truth : callable (degrees, param) -> float
        The exact value on the true degrees.
    unbiased : callable (NodeReports, param) -> Estimate
        The curator's unbiased estimate (:class:`~ldpgraph.protocols.curator.Estimate`, with
        its standard error estimated from the reports where the curator gives one).
    naive : callable (noisy degrees, param) -> float
        The plug-in on the noisy degrees.
    analytic_sd : callable (degrees, param, epsilon) -> float or None
        Standard deviation of the unbiased (and here equal naive) estimate where it is known
        in closed form; None otherwise.
    """

    name: str
    parameter: str | None
    truth: Callable[[NDArray[np.int64], int | None], float]
    unbiased: Callable[[object, int | None], object]
    naive: Callable[[NDArray[np.int64], int | None], float]
    analytic_sd: Callable[[NDArray[np.int64], int | None, float], float | None] = lambda d, p, e: None
    #: True when the plug-in equals the unbiased estimate (linear statistics)
    naive_is_unbiased: bool = False


def _dlap_variance(epsilon: float) -> float:
    from ..mechanisms import DiscreteLaplace

    return float(DiscreteLaplace(epsilon=epsilon).variance)


def _edges_sd(d, _p, eps):
    return math.sqrt(d.size * _dlap_variance(eps)) / 2.0


def _mean_sd(d, _p, eps):
    return math.sqrt(_dlap_variance(eps) / d.size)


def _moment_sd(d, j, eps):
    from ..estimators.polynomials import power_variance

    values, counts = np.unique(d, return_counts=True)
    var = power_variance(values.astype(np.float64), j, eps)
    return math.sqrt(max(math.fsum(var * counts), 0.0))


STATISTICS: dict[str, GraphStatistic] = {
    s.name: s
    for s in (
        GraphStatistic(
            "edges",
            None,
            truth=lambda d, _p: float(int(np.sum(d)) // 2),
            unbiased=lambda r, _p: _curator().edge_count(r),
            naive=lambda y, _p: float(np.sum(y, dtype=np.float64)) / 2.0,
            analytic_sd=_edges_sd,
            naive_is_unbiased=True,
        ),
        GraphStatistic(
            "degree_moment",
            "j",
            truth=_moment_truth,
            unbiased=lambda r, j: _curator().degree_moment(r, j),
            naive=lambda y, j: float(np.sum(y.astype(np.float64) ** j)),
            analytic_sd=_moment_sd,
        ),
        GraphStatistic(
            "degree_mean",
            None,
            truth=lambda d, _p: float(np.mean(d, dtype=np.float64)),
            unbiased=lambda r, _p: _curator().degree_mean(r),
            naive=lambda y, _p: float(np.mean(y, dtype=np.float64)),
            analytic_sd=_mean_sd,
            naive_is_unbiased=True,
        ),
        GraphStatistic(
            "degree_variance",
            None,
            truth=lambda d, _p: float(np.var(d.astype(np.float64))),
            unbiased=lambda r, _p: _curator().degree_variance(r),
            naive=lambda y, _p: float(np.var(y.astype(np.float64))),
        ),
        GraphStatistic(
            "max_degree",
            None,
            truth=lambda d, _p: float(np.max(d)),
            unbiased=lambda r, _p: _curator().max_degree(r),
            naive=lambda y, _p: float(np.max(y)),
        ),
        GraphStatistic(
            "degree_entropy",
            None,
            truth=lambda d, _p: _entropy_of(d.astype(np.float64)),
            unbiased=lambda r, _p: _curator().degree_entropy(r),
            naive=lambda y, _p: _entropy_of(np.maximum(y, 0).astype(np.float64)),
        ),
    )
}


def graph_statistic_truth(name: str, graph: object) -> float:
    """Exact value of the adjacency statistic ``name`` on ``graph`` (an ldpgraph Graph).

    ``triangles`` and ``transitivity`` from :mod:`ldpgraph.graph`; ``avg_clustering`` (equal to
    networkx ``average_clustering``) and ``degree_weighted_triangles`` (sum of d_v t_v) from
    :mod:`ldpgraph.protocols.clustering.kernels`.

    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> [round(graph_statistic_truth(s, g), 6) for s in GRAPH_STATISTICS]
    [1.0, 0.6, 0.583333, 7.0, 0.0, 1.0]
    """
    from ..graph.cycles import four_cycle_count
    from ..graph.statistics import transitivity, triangle_count
    from .clustering import kernels as clustering

    truths = {
        "triangles": triangle_count,
        "transitivity": transitivity,
        "avg_clustering": clustering.average_clustering_truth,
        "degree_weighted_triangles": clustering.degree_weighted_triangles_truth,
        "four_cycles": four_cycle_count,
        "core_numbers": lambda g: 1.0,  # a trial records its mean approximation factor (kcore.py)
    }
    if name not in truths:
        raise ValueError(f"unknown adjacency statistic {name!r}; choose from {', '.join(GRAPH_STATISTICS)}")
    return float(truths[name](graph))


def statistic_truth(data: object, statistic: str, param: int | None = None) -> float:
    """The exact value of any statistic on ``data`` (a Graph; degrees for the degree statistics):
    the k-star count for ``kstars`` (k = ``param``), :meth:`GraphStatistic.truth` for a degree
    statistic, :func:`graph_statistic_truth` for an adjacency one.

    >>> statistic_truth(np.array([1, 2, 1]), "kstars", 2), statistic_truth(np.array([1, 2, 1]), "edges")
    (1.0, 2.0)
    """
    if statistic in GRAPH_STATISTICS:
        return graph_statistic_truth(statistic, data)
    from .randomizer import as_degrees

    degrees = as_degrees(data)
    if statistic == "kstars":
        from ..graph.statistics import kstar_counts

        return float(kstar_counts(degrees, param))
    return float(get_statistic(statistic).truth(degrees, param))


def statistic_names() -> list[str]:
    """All statistic names an experiment accepts: ``kstars`` and the curator statistics.

    >>> statistic_names()
    ['kstars', 'edges', 'degree_moment', 'degree_mean', 'degree_variance', 'max_degree', 'degree_entropy']
    """
    return ["kstars", *STATISTICS]


def get_statistic(name: str) -> GraphStatistic:
    """The non-k-star statistic registered under ``name`` (ValueError listing the choices).

    >>> get_statistic("edges").truth(np.array([1, 2, 1]), None)
    2.0
    """
    if not isinstance(name, str) or name not in STATISTICS:
        raise ValueError(f"unknown statistic {name!r}; choose from {', '.join(statistic_names())}")
    return STATISTICS[name]
