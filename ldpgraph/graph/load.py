"""One entry point for every graph input: :func:`load_graph`."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ldpgraph.graph.convert import from_igraph, from_networkx, from_scipy_sparse
from ldpgraph.graph.core import Graph, from_edge_array
from ldpgraph.graph.edgelist import read_edgelist
from ldpgraph.graph.tables import from_dataframe

__all__ = ["graph_kind", "graph_name", "load_graph"]

_FILE_OPTIONS = ("delimiter", "header", "node_type", "max_bytes", "max_ratio")


def load_graph(
    source: Any,
    *,
    n_nodes: int | None = None,
    columns: tuple[Any, Any] | None = None,
    strict: bool | None = None,
    **file_options: Any,
) -> Graph:
    """Load a graph from a file, a table, a graph object, a sparse matrix or an edge array.

    Whatever the input, the result is a simple undirected :class:`~ldpgraph.graph.Graph`:
    directed input is symmetrised (with a note giving the edges before and after), self-loops
    and duplicate edges are dropped, node ids are relabelled to ``0..n-1``, and
    ``graph.report`` says what was read, dropped and decided (``graph.report.notes``).

    Parameters
    ----------
    source : str, os.PathLike, DataFrame, networkx graph, igraph.Graph, scipy.sparse, Graph or array_like
        - path: an edge list (plain, gzip, bzip2 or xz; see :func:`read_edgelist`) or a
          Parquet edge table (see :func:`~ldpgraph.graph.read_parquet_edges`), told apart by
          their magic bytes;
        - ``pandas.DataFrame``: see :func:`~ldpgraph.graph.from_dataframe`;
        - networkx graph (any of the four classes): see :func:`from_networkx`;
        - ``igraph.Graph``: see :func:`from_igraph`;
        - scipy.sparse adjacency matrix: see :func:`~ldpgraph.graph.from_scipy_sparse`;
        - a :class:`Graph`: returned as it is;
        - an ``(m, 2)`` integer array: see :func:`from_edge_array`.
    n_nodes : int, optional
        Only for edge arrays: the number of nodes, ids then being used as node indices.
    columns, strict
        For files and tables: the two node columns, and whether extra columns are refused.
    **file_options
        For edge-list files only: ``delimiter``, ``header``, ``node_type``, ``max_bytes``,
        ``max_ratio`` (see :func:`read_edgelist`).

    Returns
    -------
    Graph

    Examples
    --------
    >>> import numpy as np
    >>> load_graph(np.array([[0, 1], [1, 2]])).degrees.tolist()
    [1, 2, 1]
    """
    unknown = sorted(set(file_options) - set(_FILE_OPTIONS))
    if unknown:
        raise TypeError(f"load_graph() got unexpected keyword argument(s) {', '.join(unknown)}")
    kind = graph_kind(source)
    if kind is None:
        raise TypeError(
            "source must be a path, a pandas DataFrame, a networkx or igraph graph, a "
            f"scipy.sparse matrix, a Graph or an (m, 2) edge array, got {type(source).__name__}"
        )
    if n_nodes is not None and kind != "array":
        raise ValueError(f"n_nodes applies to edge arrays only, got a {kind} source")
    if (columns is not None or strict is not None) and kind not in ("path", "DataFrame"):
        raise ValueError(f"columns and strict apply to files and DataFrames only, got a {kind} source")
    if file_options and kind != "path":
        raise ValueError(
            f"{', '.join(sorted(file_options))} apply to edge-list files only, got a {kind} source"
        )
    if kind == "Graph":
        return source
    if kind == "path":
        return read_edgelist(source, columns=columns, strict=bool(strict), **file_options)
    if kind == "DataFrame":
        return from_dataframe(source, columns=columns, strict=bool(strict))
    if kind == "networkx":
        return from_networkx(source)
    if kind == "igraph":
        return from_igraph(source)
    if kind == "scipy.sparse":
        return from_scipy_sparse(source)
    return from_edge_array(source, n_nodes=n_nodes)


def graph_kind(source: Any) -> str | None:
    """What :func:`load_graph` would read ``source`` as: ``"Graph"``, ``"path"``, ``"DataFrame"``,
    ``"networkx"``, ``"igraph"``, ``"scipy.sparse"``, ``"array"`` (a list, tuple or ndarray), or
    None (none of these). Optional libraries are recognised without being imported.

    >>> import networkx as nx
    >>> graph_kind(nx.path_graph(3)), graph_kind("edges.txt"), graph_kind([[0, 1]]), graph_kind(3)
    ('networkx', 'path', 'array', None)
    """
    module = type(source).__module__.split(".")[0]
    if isinstance(source, Graph):
        return "Graph"
    if isinstance(source, (str, os.PathLike)):
        return "path"
    if module == "pandas" and _is_dataframe(source):
        return "DataFrame"
    if module == "networkx":
        return "networkx"
    if module == "igraph":
        return "igraph"
    if module == "scipy" and _is_sparse(source):
        return "scipy.sparse"
    if isinstance(source, (np.ndarray, list, tuple)):
        return "array"
    return None


def graph_name(source: Any) -> str | None:
    """The name a user gave a graph object, or None: ``G.name`` of a networkx graph, the ``name``
    attribute of an igraph graph, ``df.attrs["name"]`` of a DataFrame, the ``name`` of a
    :class:`~ldpgraph.graph.Degrees`; a path's name is its file's (see the experiments' labels).

    >>> import networkx as nx
    >>> graph_name(nx.karate_club_graph()), graph_name(nx.path_graph(3))
    ("Zachary's Karate Club", None)
    """
    kind = graph_kind(source)
    if kind == "networkx":
        name = source.graph.get("name")
    elif kind == "igraph":
        name = source["name"] if "name" in source.attributes() else None
    elif kind == "DataFrame":
        name = source.attrs.get("name")
    elif kind in ("path", "array", "scipy.sparse"):
        name = None
    else:  # a Graph, a Degrees, an object with a name
        name = getattr(source, "name", None)
    return str(name) if isinstance(name, (str, int)) and str(name) else None


def _is_sparse(x: Any) -> bool:
    import scipy.sparse as sp

    return bool(sp.issparse(x))


def _is_dataframe(x: Any) -> bool:
    import pandas as pd

    return isinstance(x, pd.DataFrame)
