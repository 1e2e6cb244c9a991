"""ldpgraph: graph analytics under local differential privacy.

Nodes release their degrees (and optionally local counts) with the discrete Laplace mechanism;
the curator post-processes the noisy integers into exactly unbiased, minimum-variance
estimates. Subpackages:

* :mod:`ldpgraph.mechanisms` — DiscreteLaplace, Laplace, Staircase, exact secure sampler,
  conversions of DLap output into Laplace / staircase output;
* :mod:`ldpgraph.estimators` — the unbiased operator and its fast forms;
* :mod:`ldpgraph.graph` — edge lists and exact graph statistics;
* :mod:`ldpgraph.protocols` — node-side randomizer, report ingestion, curator estimates;
* :mod:`ldpgraph.experiments`, :mod:`ldpgraph.datasets`, :mod:`ldpgraph.audit`,
  :mod:`ldpgraph.metrics`.
"""

from . import estimators, graph, mechanisms, metrics, protocols
from ._version import __version__
from .estimators import binomial, debias, debias_nd
from .graph import Degrees, Graph, load_graph, read_edgelist
from .mechanisms import DiscreteLaplace, Laplace, SecureDiscreteLaplace, Staircase, to_laplace, to_staircase
from .protocols import DegreeRandomizer, NodeReports

__all__ = [
    "DegreeRandomizer",
    "Degrees",
    "DiscreteLaplace",
    "Graph",
    "Laplace",
    "NodeReports",
    "SecureDiscreteLaplace",
    "Staircase",
    "__version__",
    "binomial",
    "debias",
    "debias_nd",
    "estimators",
    "graph",
    "load_graph",
    "mechanisms",
    "metrics",
    "protocols",
    "read_edgelist",
    "to_laplace",
    "to_staircase",
]
