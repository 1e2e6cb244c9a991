"""Graph input and exact (non-private) ground-truth statistics.

- :func:`load_graph` reads any supported input into a :class:`Graph` (a simple undirected
  graph in CSR form with a :class:`LoadReport`); :class:`Degrees` says explicitly that an
  array is a degree sequence;
- :mod:`~ldpgraph.graph.edgelist`: edge lists as users have them (integer ids or names,
  whitespace, CSV or tab separated, a header, extra columns; plain, gzip, bzip2 or xz), read
  in bounded blocks (:func:`read_edgelist`, :func:`parse_edgelist`, and the raw
  :func:`parse_edge_pairs`);
- :mod:`~ldpgraph.graph.tables`: pandas DataFrames and Parquet edge tables
  (:func:`from_dataframe`, :func:`read_parquet_edges`);
- :mod:`~ldpgraph.graph.convert`: :func:`from_networkx`, :func:`from_igraph`,
  :func:`from_scipy_sparse`;
- :mod:`~ldpgraph.graph.statistics`: exact degrees statistics, k-stars and triangles;
- :mod:`~ldpgraph.graph.cycles`: exact 4-cycle counts (:func:`four_cycle_count`,
  :func:`local_four_cycle_counts`).
"""

from ldpgraph.graph.convert import from_igraph, from_networkx, from_scipy_sparse
from ldpgraph.graph.core import Graph, LoadReport, from_edge_array
from ldpgraph.graph.cycles import four_cycle_count, local_four_cycle_counts
from ldpgraph.graph.degrees import Degrees
from ldpgraph.graph.edgelist import (
    ParsedEdges,
    parse_edge_pairs,
    parse_edgelist,
    read_edge_pairs,
    read_edgelist,
)
from ldpgraph.graph.load import graph_name, load_graph
from ldpgraph.graph.statistics import (
    degree_histogram,
    degree_moments,
    degree_power_sum,
    degree_variance,
    kstar_counts,
    local_triangle_counts,
    max_degree,
    transitivity,
    triangle_count,
    triple_class_counts,
    two_star_count,
)
from ldpgraph.graph.tables import from_dataframe, read_parquet_edges

__all__ = [
    "Degrees",
    "Graph",
    "LoadReport",
    "ParsedEdges",
    "load_graph",
    "graph_name",
    "read_edgelist",
    "parse_edgelist",
    "read_edge_pairs",
    "parse_edge_pairs",
    "from_edge_array",
    "from_networkx",
    "from_igraph",
    "from_scipy_sparse",
    "from_dataframe",
    "read_parquet_edges",
    "degree_histogram",
    "max_degree",
    "kstar_counts",
    "degree_power_sum",
    "degree_moments",
    "degree_variance",
    "triangle_count",
    "local_triangle_counts",
    "two_star_count",
    "transitivity",
    "triple_class_counts",
    "four_cycle_count",
    "local_four_cycle_counts",
]
