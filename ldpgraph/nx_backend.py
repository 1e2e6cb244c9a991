r"""ldpgraph as a networkx backend: a private estimate with one keyword.

Once ldpgraph is installed, networkx finds it through the entry points ``networkx.backends``
and ``networkx.backend_info`` (``pyproject.toml``), and a networkx call with
``backend="ldpgraph"`` runs the ldpgraph protocol that estimates the same statistic under
edge local differential privacy, in memory (:func:`~ldpgraph.run.run_in_memory`: every node's
release, then the curator's estimate from the reports alone)::

    >>> import networkx as nx                                          # doctest: +SKIP
    >>> c = nx.average_clustering(G, backend="ldpgraph", epsilon=2)    # doctest: +SKIP
    >>> float(c), c.std_error, c.interval(0.95)                        # doctest: +SKIP

* ``average_clustering``: a float, by ``adaptive-clustering`` (the default ``method``);
* ``transitivity``: a float, by ``two-round-triangles-dlap`` with ``private_bound=True``;
* ``core_number``: a dict node -> float, by ``kcore-hindex``;
* ``triangles``: refused (a ValueError saying why): ldpgraph estimates the total count, not
  each node's.

Backend keyword arguments: ``epsilon`` (required: each node's total budget), ``method`` (a
protocol estimating the statistic, ``ldpgraph methods`` lists them), ``seed`` (an int makes the
run reproducible: a simulation; None, the default, draws every noise from the operating
system's CSPRNG, as a deployment does) and the protocol's options (``d_max=40``,
``private_bound=True``, ``shares={...}``: ``ldpgraph methods`` lists them). A protocol option
that a simulation would take from the true graph (a degree bound) must be given: the backend
never reads a bound from the private graph.

The value returned is what networkx returns (a float, a dict per node) carrying the estimate:
``std_error`` (None where the protocol has none), ``interval(level=0.95)``, ``method``,
``epsilon``, ``budget`` (the plan's split) and ``estimate`` (the protocol's own estimate
object). Arithmetic on it gives plain floats. A bad keyword raises a one-line TypeError or
ValueError; an argument ldpgraph cannot honour (``nodes=``, ``weight=``, ``count_zeros=False``)
is refused, never silently answered by networkx's exact (non-private) code.
"""

from __future__ import annotations

from typing import Any

from _ldpgraph_nx import FUNCTIONS, get_info

from ._validation import check_epsilon, check_nonnegative_int

__all__ = ["BackendInterface", "EstimateDict", "EstimateFloat", "get_info"]

class _Carrier:
    """What the returned value carries besides its networkx type."""

    estimate: Any
    method: str
    epsilon: float
    budget: dict[str, float]

    @property
    def std_error(self) -> float | None:
        """The curator's standard error (from the reports), None where the protocol has none."""
        return getattr(self.estimate, "std_error", None)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """A confidence interval at coverage ``level`` (the protocol's own, see
        :meth:`ldpgraph.protocols.curator.Estimate.interval`)."""
        method = getattr(self.estimate, "interval", None)
        if method is None or self.std_error is None:
            why = getattr(self.estimate, "no_std_error_reason", None) or "no standard error"
            raise ValueError(f"{self.method} gives no interval for {self.estimate.statistic}: {why}")
        return method(level)

    def _carry(self, estimate: Any, method: str, epsilon: float, budget: dict[str, float]) -> Any:
        self.estimate, self.method, self.epsilon, self.budget = estimate, method, epsilon, budget
        return self


class EstimateFloat(_Carrier, float):
    """A float (the estimate) with ``std_error``, ``interval()``, ``method``, ``epsilon``,
    ``budget`` and ``estimate``.

    >>> from ldpgraph.protocols.curator import Estimate
    >>> x = EstimateFloat(0.5)._carry(Estimate(0.5, 0.1, 0.01, "transitivity"), "m", 2.0, {})
    >>> x + 1, x.std_error, [round(v, 3) for v in x.interval(0.95)]
    (1.5, 0.1, [0.304, 0.696])
    """

    def __repr__(self) -> str:
        se = "" if self.std_error is None else f", std_error={self.std_error:.4g}"
        return f"EstimateFloat({float(self)!r}{se}, method={self.method!r}, epsilon={self.epsilon:g})"


class EstimateDict(_Carrier, dict):
    """A dict ``node -> estimate`` (by the graph's own node labels) with the attributes of
    :class:`EstimateFloat`; ``to_series()`` gives a pandas Series."""

    def to_series(self) -> Any:
        from .tables import node_series

        return node_series(self, self.method)


def _estimate(name: str, G: Any, kwargs: dict[str, Any]) -> Any:
    """Run the protocol of networkx function ``name`` on the converted graph ``G``."""
    from .graph import Graph
    from .protocols import registry
    from .run import run_in_memory

    statistic, default_method, default_options = FUNCTIONS[name]
    call = f"nx.{name}(..., backend='ldpgraph')"
    if "epsilon" not in kwargs:
        raise TypeError(f"{call} needs epsilon=, each node's privacy budget (e.g. epsilon=2)")
    eps = check_epsilon(kwargs.pop("epsilon"))
    method = kwargs.pop("method", None)
    seed = kwargs.pop("seed", None)
    if seed is not None:
        seed = check_nonnegative_int(seed, "seed")
    names = [m for m in registry.names() if statistic in registry.get(m).statistics]
    if method is None:
        method, options = default_method, {**default_options, **kwargs}
    elif not isinstance(method, str) or method not in names:
        raise ValueError(f"method for {call} must be one of {', '.join(names)}, got {method!r}")
    else:
        options = dict(kwargs)
    proto = registry.get(method)
    known = {o.name for o in proto.options}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"{call}: {method} has no option {', '.join(unknown)} (its options: "
                        f"{', '.join(sorted(known)) or 'none'})")
    if not isinstance(G, Graph):  # called on an ldpgraph graph without conversion
        raise TypeError(f"{call} takes a networkx graph, got {type(G).__name__}")
    read = sorted(set(proto.default_public(G, options)) - {k for k, v in options.items() if v is not None})
    if read:
        raise ValueError(f"{call}: {method} would take {', '.join(read)} from the graph itself, which is "
                         f"not private: give a public bound ({read[0]}=...)"
                         + (" or private_bound=True" if "private_bound" in known else ""))
    run = run_in_memory(proto, G, eps, sampler=seed, statistic=statistic, **options)
    return run.estimate, method, eps, run.plan.budget()


def average_clustering(G: Any, nodes: Any = None, weight: Any = None, count_zeros: bool = True,
                       **kwargs: Any) -> EstimateFloat:
    """The average local clustering coefficient, estimated under edge-LDP (module docstring).

    networkx calls it on the converted graph (``nx.average_clustering(G, backend="ldpgraph",
    epsilon=8, seed=0)``); called directly:

    >>> import networkx as nx
    >>> from ldpgraph.graph import from_networkx
    >>> c = average_clustering(from_networkx(nx.karate_club_graph()), epsilon=8, seed=0)
    >>> c.method, c.epsilon, c.std_error > 0, isinstance(c, float)
    ('adaptive-clustering', 8.0, True, True)
    """
    if nodes is not None or weight is not None or count_zeros is not True:
        raise ValueError("nx.average_clustering(..., backend='ldpgraph') estimates the unweighted average "
                         "over all nodes, zeros counted: nodes=, weight= and count_zeros=False are not "
                         "supported")
    est, method, eps, budget = _estimate("average_clustering", G, kwargs)
    return EstimateFloat(est.value)._carry(est, method, eps, budget)


def transitivity(G: Any, **kwargs: Any) -> EstimateFloat:
    """The transitivity (global clustering), estimated under edge-LDP (module docstring)."""
    est, method, eps, budget = _estimate("transitivity", G, kwargs)
    return EstimateFloat(est.value)._carry(est, method, eps, budget)


def core_number(G: Any, **kwargs: Any) -> EstimateDict:
    """Every node's core number, estimated under edge-LDP, by node label (module docstring).
    The estimates are real numbers (round them for integers); ``std_error`` is None.

    >>> import networkx as nx
    >>> from ldpgraph.graph import from_networkx
    >>> cores = core_number(from_networkx(nx.Graph([("a", "b"), ("b", "c"), ("c", "a")])), epsilon=8, seed=0)
    >>> sorted(cores), cores.method
    (['a', 'b', 'c'], 'kcore-hindex')
    """
    est, method, eps, budget = _estimate("core_number", G, kwargs)
    return EstimateDict(G.by_label(est.core_numbers))._carry(est, method, eps, budget)


def triangles(G: Any, nodes: Any = None, **kwargs: Any) -> dict[Any, int]:
    """Refused: networkx's ``triangles`` is a count per node, ldpgraph estimates the total."""
    raise ValueError("nx.triangles gives each node's triangle count; ldpgraph estimates the graph's total "
                     "under edge-LDP, not each node's: use nx.transitivity(G, backend='ldpgraph', "
                     "epsilon=...) or ldpgraph.experiments.estimate_once(G, statistic='triangles', ...)")


class BackendInterface:
    """The object networkx loads from the ``networkx.backends`` entry point."""

    average_clustering = staticmethod(average_clustering)
    transitivity = staticmethod(transitivity)
    core_number = staticmethod(core_number)
    triangles = staticmethod(triangles)

    @staticmethod
    def convert_from_nx(G: Any, *args: Any, **kwargs: Any) -> Any:
        """A networkx graph as an ldpgraph Graph (:func:`~ldpgraph.graph.from_networkx`); a directed
        graph or a multigraph is refused (networkx's statistics of those are other statistics)."""
        from .graph import from_networkx

        if G.is_directed() or G.is_multigraph():
            raise TypeError(f"backend='ldpgraph' estimates statistics of simple undirected graphs, got a "
                            f"{type(G).__name__}: pass nx.Graph(G) (for a directed graph networkx computes "
                            "directed statistics, which ldpgraph does not estimate)")
        return from_networkx(G)

    @staticmethod
    def convert_to_nx(obj: Any, *, name: str | None = None) -> Any:
        """Results are networkx's own types already; an ldpgraph Graph becomes a networkx graph."""
        from .graph import Graph

        return obj.to_networkx(original_labels=True) if isinstance(obj, Graph) else obj

    @staticmethod
    def can_run(name: str, args: Any, kwargs: Any) -> bool:
        """Every function listed runs; bad arguments are refused by the function itself, with a message
        saying why (networkx would only log a refusal from here)."""
        return name in (*FUNCTIONS, "triangles")

    @staticmethod
    def should_run(name: str, args: Any, kwargs: Any) -> bool | str:
        """Only when asked for with ``backend="ldpgraph"`` and ``epsilon`` (an automatic dispatch
        without a budget is left to networkx)."""
        return True if "epsilon" in kwargs else "ldpgraph needs epsilon= (a privacy budget)"
