"""The graphs of an experiment: what users name (a dataset, a spec, a file, a graph object) as
labelled graphs (:class:`GraphInput`, :func:`resolve_graph_inputs`), through one conversion
(:func:`~ldpgraph.datasets.as_graph`).

Used by :mod:`ldpgraph.experiments.runner` (which re-exports :class:`GraphInput`,
:func:`content_id` and :func:`resolve_graph_inputs`) and by the command line, which reads files
with its own options and wraps them with :func:`as_graph_input`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_nonnegative_int
from ..datasets.graphs import as_graph
from ..graph.load import graph_name

__all__ = ["GraphInput", "content_id", "graph_origin", "as_graph_input", "file_label",
           "resolve_graph_inputs"]


@dataclass(frozen=True, eq=False)
class GraphInput:
    """A graph of the grid, reduced to what the protocols need: its label and degrees."""

    label: str
    degrees: NDArray[np.int64]
    n_edges: int
    #: what the random streams of the graph's cells are keyed on: ``"sha256:<digest>"`` of the
    #: degree sequence (the content: the same for a dataset name, a path or a copy elsewhere),
    #: or the label itself where it was given explicitly (a mapping key, ``--label``)
    stream_id: str = ""
    #: where the graph came from: ``"dataset"``, ``"synthetic"``, ``"file"`` or ``"object"``
    origin: str = "object"
    #: the graph itself (an ldpgraph Graph) where the input had one: for adjacency protocols
    graph: Any = None

    @property
    def n_nodes(self) -> int:
        return int(self.degrees.size)

    @property
    def synthetic(self) -> bool:
        """Whether the graph is a synthetic stand-in generated from a spec."""
        return self.origin == "synthetic"


def _is_bare_array(x: Any) -> bool:
    """Whether ``x`` (a list, tuple or array) holds numbers rather than graphs: one bare array."""
    if isinstance(x, np.ndarray):
        return x.dtype != object
    return len(x) > 0 and all(isinstance(v, (int, float, np.number, list, tuple, np.ndarray)) for v in x)


def content_id(degrees: NDArray[np.int64]) -> str:
    """The content identity of a graph for seeding: SHA-256 of its degree sequence (int64, LE).

    Examples
    --------
    >>> content_id(np.array([1, 2, 1])) == content_id([1, 2, 1])
    True
    >>> content_id([1, 2, 1])[:7]
    'sha256:'
    """
    import hashlib

    d = np.ascontiguousarray(np.asarray(degrees, dtype="<i8"))
    return "sha256:" + hashlib.sha256(d.tobytes()).hexdigest()[:32]


def graph_origin(source: str | os.PathLike[str]) -> str:
    if isinstance(source, os.PathLike):
        return "file"
    from ..datasets import is_synthetic_spec, list_datasets

    if source.strip().lower() in list_datasets("graph"):
        return "dataset"
    return "synthetic" if is_synthetic_spec(source) else "file"


def as_graph_input(
    label: str, obj: Any, graph_seed: int, explicit: bool = False, origin: str = "object"
) -> GraphInput:
    from ..protocols.randomizer import as_degrees

    if isinstance(obj, GraphInput):  # resolved already (the CLI reads files with its options)
        return replace(obj, label=label, stream_id=label) if explicit else obj
    if isinstance(obj, (str, os.PathLike)):
        origin = graph_origin(obj)
    obj = as_graph(obj, label=label, graph_seed=graph_seed)
    d = as_degrees(obj, name=f"degrees of graph {label!r}")
    n_edges = getattr(obj, "n_edges", None)
    n_edges = int(n_edges) if n_edges is not None else int(d.sum()) // 2
    if d.size == 0 or n_edges == 0:
        what = "no nodes" if d.size == 0 else f"{d.size:,} node{'' if d.size == 1 else 's'} but no edges"
        hint = "; check the file (are the edges commented out or in other columns?)"
        loops = getattr(getattr(obj, "report", None), "self_loops_dropped", 0)
        if loops:
            what += f" ({loops:,} self-loop{'' if loops == 1 else 's'} dropped: a simple graph has none)"
        raise ValueError(f"graph {label!r} has {what}: every statistic is 0 and no relative error exists"
                         + (hint if origin == "file" else ""))
    d.setflags(write=False)
    from ..graph.core import Graph

    return GraphInput(label, d, n_edges, label if explicit else content_id(d), origin,
                      obj if isinstance(obj, Graph) else None)


def file_label(path: str | os.PathLike[str]) -> str:
    """A short label for an edge-list file: its name without compression and text suffixes."""
    name = Path(os.fspath(path)).name
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    for suffix in (".txt", ".csv", ".tsv", ".edges", ".edgelist", ".el", ".parquet"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or os.fspath(path)


def resolve_graph_inputs(graphs: Any, *, graph_seed: int = 0) -> list[GraphInput]:
    """Turn the ``graphs`` argument of :func:`run_experiment` into labelled degree sequences.

    Accepted: a dataset name, synthetic spec or edge-list path (str, resolved with
    :func:`ldpgraph.datasets.resolve_graph`; a name or spec is its own label, a file is labelled
    by its name without suffixes, e.g. ``edges`` for ``/data/edges.txt.gz``, or by its path where
    two files would share a name); a networkx or igraph graph, a scipy.sparse adjacency matrix, a
    pandas edge table, an ldpgraph :class:`~ldpgraph.graph.Graph`, or a degree sequence said
    explicitly, :class:`~ldpgraph.graph.Degrees` (each converted by
    :func:`~ldpgraph.datasets.as_graph`, labelled by
    the name its user gave it, :func:`~ldpgraph.graph.graph_name`: ``G.name``, ..., else
    ``graph<i>``); a :class:`GraphInput` (kept as it is); a mapping ``label -> any of those``; or
    a sequence of the above. A bare list or array is refused (degrees or edges? say which).

    The random streams of a graph's cells are keyed on its content (:func:`content_id`), so the
    same seed gives the same numbers however the graph is named; a mapping's keys are explicit
    labels and key the streams themselves (as ``--label`` does on the command line).

    Examples
    --------
    >>> from ldpgraph.graph import Degrees
    >>> [g.label for g in resolve_graph_inputs({"toy": Degrees([1, 2, 1])})]
    ['toy']
    >>> import networkx as nx
    >>> [(g.label, g.n_edges) for g in resolve_graph_inputs(nx.karate_club_graph())]
    [("Zachary's Karate Club", 78)]
    """
    graph_seed = check_nonnegative_int(graph_seed, "graph_seed")
    explicit = isinstance(graphs, Mapping)
    if isinstance(graphs, Mapping):
        items = [(str(label), obj) for label, obj in graphs.items()]
    else:
        if not isinstance(graphs, (list, tuple, np.ndarray)) or _is_bare_array(graphs):
            graphs = [graphs]  # one graph (a bare array is refused by as_graph, naming the spelling)
        items = []
        for i, obj in enumerate(graphs):
            if isinstance(obj, (str, os.PathLike)):
                label = os.fspath(obj).strip() if isinstance(obj, str) else os.fspath(obj)
                if graph_origin(obj) == "file":
                    label = file_label(label)
            elif isinstance(obj, GraphInput):
                label = obj.label
            else:
                label = graph_name(obj) or f"graph{i}"
            items.append((str(label), obj))
        labels = [label for label, _ in items]
        items = [  # two files with the same name: label them by their paths
            (os.fspath(obj).strip() if labels.count(label) > 1 and isinstance(obj, (str, os.PathLike))
             and graph_origin(obj) == "file" else label, obj)
            for label, obj in items
        ]
    if not items:
        raise ValueError("graphs must name at least one graph")
    labels = [label for label, _ in items]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"graph labels must be distinct, got {dup} more than once")
    return [as_graph_input(label, obj, graph_seed, explicit) for label, obj in items]
