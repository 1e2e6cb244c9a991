"""Graphs from what users name: a dataset, a synthetic spec or an edge-list file (:func:`resolve_graph`),
and any graph a user holds (:func:`as_graph`: the one conversion of the entry points)."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

from ..graph import Degrees, Graph, load_graph
from ..graph.load import graph_kind
from . import _files, lookup
from ._files import _graph_from_igraph, _read_graph
from .registry import _REGISTRY, list_datasets
from .synthetic import _GRAMMAR, _MODELS, _SPEC_RE, synthetic_graph

__all__ = ["as_graph", "resolve_graph"]

# The hooks _read_graph and _graph_from_igraph live in ._files (tests replace them there); they
# are imported here too so that their old import path still works.
_HOOKS = (_graph_from_igraph, _read_graph)


def _is_file(p: Path) -> tuple[bool, str]:
    """(whether p is an existing file, why it could not be checked: "" if it could)."""
    try:
        return p.is_file(), ""
    except (OSError, ValueError) as exc:  # name too long, embedded NUL byte, ...
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return False, f"not a usable path: {reason}"


def resolve_graph(source: str | os.PathLike[str], *, rng: Any = None) -> Any:
    """A graph from a dataset name, a synthetic spec, or an edge-list file path.

    Parameters
    ----------
    source : str or path-like
        Tried in this order: a registered graph dataset name (``"facebook"``, loaded with
        :func:`load_dataset`); a synthetic spec (``"ba:n=1000,m=3"``, see :func:`synthetic_graph`);
        an existing edge-list file (gzip or plain). A path-like object is always a file path.
    rng : numpy.random.Generator, int seed, SeedSequence or None
        Used for synthetic specs only.

    Raises
    ------
    ValueError
        If ``source`` is a histogram dataset, a malformed spec, or none of the three forms
        (including strings that cannot be a path: too long, ``~user`` for an unknown user).
    FileNotFoundError
        If a path-like ``source`` is not an existing file.

    Examples
    --------
    >>> resolve_graph("ws:n=20,k=4,p=0", rng=0).degrees.tolist() == [4] * 20
    True
    >>> resolve_graph("facebook").n_edges  # doctest: +SKIP
    88234
    """
    if isinstance(source, os.PathLike):
        p = Path(source)
        is_file, why = _is_file(p)
        if not is_file:
            if why:
                raise ValueError(f"cannot use {str(p)!r} as an edge-list file: {why}")
            raise FileNotFoundError(f"edge-list file not found: {p}")
        return _files._read_graph(p)
    if not isinstance(source, str):
        raise TypeError(f"source must be a str or path-like, got {type(source).__name__} {source!r}")
    key = source.strip().lower()
    if key in _REGISTRY:
        info = _REGISTRY[key]
        if info.kind != "graph":
            raise ValueError(f"dataset {info.name!r} is a {info.kind}, not a graph")
        return lookup.load_dataset(info.name)
    m = _SPEC_RE.match(source)
    if m is not None and m.group(1).lower() in _MODELS:
        return synthetic_graph(source, rng=rng)
    try:
        p = Path(source).expanduser()
    except RuntimeError as exc:  # "~user/..." for an unknown user
        p, why = None, f"cannot expand the path ({exc})"
    else:
        is_file, why = _is_file(p)
        if is_file:
            return _files._read_graph(p)
    graphs = list_datasets("graph")
    shown = source if len(source) <= 200 else source[:200] + f"...<{len(source)} characters>"
    msg = (
        f"cannot resolve graph {shown!r}: not a graph dataset ({', '.join(graphs)}), not a synthetic "
        f"spec ({_GRAMMAR}), and not an existing file" + (f" ({why})" if why else "")
    )
    close = difflib.get_close_matches(key, graphs, n=1, cutoff=0.5)
    if close:
        msg += f". Did you mean {close[0]!r}?"
    if m is not None and m.group(1).lower() not in _MODELS and len(m.group(1)) > 1:
        msg += f". Unknown synthetic model {m.group(1)!r} (known: {', '.join(_MODELS)})"
    raise ValueError(msg)


#: how a user says that an array is a degree sequence or an edge array (in the refusal of a bare one)
_SPELLING = ("ldpgraph.Degrees(values) if these are degrees, or ldpgraph.load_graph(edges) "
             "if it is an (m, 2) edge array")


def as_graph(obj: Any, *, label: str = "graph", graph_seed: int = 0) -> Any:
    """The one conversion of a graph as users name it: a :class:`~ldpgraph.graph.Graph` (or the
    :class:`~ldpgraph.graph.Degrees` given, or an object with ``degrees``).

    A dataset name, synthetic spec or edge-list path (str or path-like) is resolved by
    :func:`~ldpgraph.datasets.resolve_graph` (synthetic graphs drawn with ``graph_seed``); a
    networkx or igraph graph, a scipy.sparse adjacency matrix or a pandas edge table is read by
    :func:`~ldpgraph.graph.load_graph`; a bare list or array is refused, naming the explicit
    spellings (:class:`~ldpgraph.graph.Degrees` for a degree sequence, ``load_graph`` for an
    edge array).

    Examples
    --------
    >>> import networkx as nx
    >>> as_graph(nx.karate_club_graph()).n_edges
    78
    >>> as_graph([3, 1, 2, 2], label="toy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: graph 'toy' is a bare list: say what it is, ldpgraph.Degrees(values) if these are ...
    """
    if isinstance(obj, (Graph, Degrees)):
        return obj
    kind = graph_kind(obj)
    if kind == "path":
        return resolve_graph(obj, rng=graph_seed)
    if kind == "array":
        raise TypeError(f"graph {label!r} is a bare {type(obj).__name__}: say what it is, {_SPELLING}")
    if kind is not None:
        return load_graph(obj)
    if hasattr(obj, "degrees"):  # a graph-like object of the caller's
        return obj
    raise TypeError(
        f"graph {label!r} must be a dataset name, synthetic spec or edge-list path, a networkx or "
        "igraph graph, a scipy.sparse adjacency matrix, a pandas edge table, an ldpgraph Graph or "
        f"Degrees, got {type(obj).__name__}"
    )
