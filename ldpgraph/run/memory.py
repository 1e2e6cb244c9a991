r"""The in-memory executor: every round of a protocol on a whole graph, node side then curator side.

For each round it releases the rows of all nodes (the protocol's release, with the given
sampler), feeds them to the round's accumulator as one chunk of the report format, takes the
result and the broadcast, and finally asks the protocol for the estimate. It contains no
protocol-specific code. With a seeded sampler it gives the same bits as ``ldpgraph node
--simulate --seed S`` → ``ldpgraph curate`` over files (:mod:`ldpgraph.run.files`).

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> run = run_in_memory("two-round-triangles-dlap", g, 80.0, sampler=1)
>>> run.plan.budget()
{'rr': 40.0, 'local-count': 40.0}
>>> round(run.estimate.value)
1
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.plan import Plan
from ..core.protocol import Protocol
from ..core.sampling import as_sampler
from ..protocols import registry
from ..protocols.deploy_triangles import chunk_from_columns
from .shuffler import shuffle_rows

__all__ = ["Run", "as_adjacency", "run_in_memory", "node_lists", "release_nodes", "resolve_public",
           "as_protocol"]


@dataclass(eq=False)
class Run:
    """One run: the plan, each round's rows, results and broadcasts, and the estimate.

    ``rows`` and ``results`` hold one entry per round. The estimate is computed on first access
    (a curator's variance estimate can cost more than the run itself)."""

    protocol: Protocol
    plan: Plan
    statistic: str
    rows: list[dict[str, NDArray[Any]]] = field(repr=False)
    results: list[Any] = field(repr=False)
    broadcasts: list[Any] = field(repr=False)

    @property
    def n_rounds(self) -> int:
        """Rounds of communication run."""
        return len(self.results)

    @cached_property
    def estimate(self) -> Any:
        """The protocol's estimate of :attr:`statistic` from the last round's result."""
        last = self.broadcasts[-1] if self.broadcasts else None
        return self.protocol.estimate(self.results[-1], self.plan, last, self.statistic)


def as_protocol(protocol: str | Protocol) -> Protocol:
    """A registered protocol by name, or the object itself."""
    return protocol if isinstance(protocol, Protocol) else registry.get(protocol)


def node_lists(graph: Any) -> tuple[NDArray[np.int64], list[NDArray[np.int64]]]:
    """The nodes ``0..n-1`` of a graph (see :func:`as_adjacency`) and each one's sorted neighbour ids."""
    from ..graph.core import Graph

    if not isinstance(graph, Graph):
        graph = as_adjacency(graph)
    ptr, idx = graph.indptr, graph.indices.astype(np.int64, copy=False)
    return np.arange(graph.n_nodes, dtype=np.int64), [idx[ptr[v]:ptr[v + 1]] for v in range(graph.n_nodes)]


def release_nodes(graph: Any, needs: str) -> tuple[NDArray[np.int64], list[NDArray[np.int64]], Any]:
    """The node ids, neighbour lists and labels of every node of ``graph``, as ``ldpgraph node
    --graph`` releases them (the node ids key each node's random stream: the same ids, the same bits).

    A protocol whose nodes hold only their degree (``needs == "degrees"``) keeps a graph's own
    non-negative integer ids (labels None); any other numbers the nodes ``0..n-1`` (labels: the
    graph's own labels where they are not those numbers, else None).

    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[10, 20], [20, 30]])
    >>> release_nodes(g, "degrees")[0].tolist(), release_nodes(g, "adjacency")[0].tolist()
    ([10, 20, 30], [0, 1, 2])
    """
    nodes, lists = node_lists(graph)
    ids = np.asarray(graph.node_ids)
    if needs == "degrees" and ids.dtype.kind in "iu" and (ids.size == 0 or ids.min() >= 0):
        return ids.astype(np.int64), lists, None
    numbered = ids.dtype.kind in "iu" and np.array_equal(ids, nodes)
    return nodes, lists, None if numbered else graph.node_ids


def as_adjacency(graph: Any) -> Any:
    """``graph`` as an ldpgraph Graph, converted by :func:`~ldpgraph.datasets.as_graph` (a
    networkx, igraph, scipy.sparse or DataFrame graph, a dataset name, a synthetic spec drawn
    with seed 0, an edge-list path); a TypeError for what has no adjacency (a degree sequence)."""
    from ..datasets import as_graph
    from ..graph.core import Graph

    converted = as_graph(graph)
    if not isinstance(converted, Graph):
        raise TypeError(f"graph must be a graph with its edges (the protocol needs the adjacency), got "
                        f"{type(graph).__name__}")
    return converted


def resolve_public(protocol: Protocol, graph: Any, public: dict[str, Any]) -> dict[str, Any]:
    """``public`` with the options left None filled from the graph where the protocol says how
    (a simulation's benchmark bounds, :meth:`~ldpgraph.core.protocol.Protocol.default_public`)."""
    out = {k: v for k, v in public.items() if v is not None}
    for name, value in protocol.default_public(graph, out).items():
        out.setdefault(name, value)
    return out


def run_in_memory(
    protocol: str | Protocol,
    graph: Any,
    epsilon: float,
    *,
    sampler: Any = None,
    statistic: str | None = None,
    **public: Any,
) -> Run:
    """Run ``protocol`` on ``graph`` at total budget ``epsilon`` per node.

    Parameters
    ----------
    protocol : str or Protocol
        A registered name (``ldpgraph methods``) or a protocol object.
    graph : Graph, networkx graph, igraph graph, scipy.sparse matrix, DataFrame, name, spec or path
        Converted by :func:`~ldpgraph.datasets.as_graph`; nodes are numbered as ``ldpgraph node
        --graph`` numbers them (:func:`release_nodes`).
    epsilon : float
        Each node's total budget, split by the protocol's plan.
    sampler : Sampler, int or None
        A seed (:class:`~ldpgraph.core.sampling.Seeded`), a sampler, or None for the secure one.
    statistic : str, optional
        Default: the protocol's first statistic.
    **public
        The protocol's options (``ldpgraph methods`` lists them); None means its default.
    """
    proto = as_protocol(protocol)
    graph = as_adjacency(graph)
    nodes, lists, _ = release_nodes(graph, proto.needs)
    stat = proto.check_statistic(statistic)
    for name, value in proto.statistic_public(stat).items():
        if public.get(name) is None:
            public[name] = value
    plan = proto.plan(epsilon, **resolve_public(proto, graph, public))
    smp = as_sampler(sampler)
    rows_by_round, results, broadcasts = [], [], []
    broadcast = None
    for rnd in proto.rounds():
        rows = rnd.release(plan, nodes, lists, broadcast, smp)
        if rnd.shuffled:  # the shuffler: seeded in simulation, the OS CSPRNG with the secure sampler
            seed = getattr(smp, "seed", None)
            rng = None if seed is None else np.random.SeedSequence(seed, spawn_key=(rnd.number,))
            rows = shuffle_rows(rows, rng)
        acc = rnd.accumulator(plan, broadcast)
        acc.add(chunk_from_columns(rows))
        result = acc.result()
        rows_by_round.append(rows)
        results.append(result)
        nxt = rnd.broadcast(result, plan)
        if nxt is not None:
            broadcast = nxt
            broadcasts.append(nxt)
    return Run(proto, plan, stat, rows_by_round, results, broadcasts)
