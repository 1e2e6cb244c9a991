r"""One registry of every compared method, across all statistics.

:func:`get_method` returns a :class:`~ldpgraph.protocols.base.Protocol` by name;
:func:`method_names` lists the names, optionally those estimating one statistic;
:func:`methods_for` returns those protocols.

- The k-star and degree methods (``unbiased-dlap``, ``naive-dlap``, ``local-lap-kstars``, ...) are
  presets of the protocols of :mod:`ldpgraph.protocols.degree` and
  :mod:`ldpgraph.protocols.local_kstars`, and the triangle methods (``triangles``, ``transitivity``)
  of :mod:`ldpgraph.protocols.rr_triangles`, :mod:`~ldpgraph.protocols.two_round_triangles` and
  :mod:`~ldpgraph.protocols.arr_protocol`, served by :class:`~ldpgraph.run.method.Method`.

This module sits above protocols and the experiment statistics (it imports them
lazily), so that those keep their one-way dependencies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._validation import check_epsilon, check_nonnegative_int, check_rng
from .protocols.base import Protocol, Round

__all__ = [
    "LayerSimulation",
    "did_you_mean",
    "get_method",
    "method_names",
    "methods_for",
    "recommended_methods",
    "register",
    "statistic_names",
]

_FACTORIES: dict[str, Callable[[], Protocol]] = {}
#: names registered through :class:`LayerSimulation` (the layer protocols without a simulator)
_FROM_LAYER: set[str] = set()


def register(name: str, factory: Callable[[], Protocol]) -> None:
    """Register ``factory`` (no arguments, returns a Protocol) under ``name``."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    _FACTORIES[name] = factory


def _ensure() -> None:
    if not _FACTORIES:
        _register_built_in()
    from .core import registry as layer
    from .run.method import Method

    table = layer.presets()
    for name in _FROM_LAYER - set(table):  # unregistered from the layer since
        del _FACTORIES[name]
        _FROM_LAYER.discard(name)
    simulated = {m.deployed_as[0] for n, m in ((n, f()) for n, f in _FACTORIES.items())
                 if n not in _FROM_LAYER and m.deployed_as is not None}
    # TRANSITION (issue 33): a preset of the one registry, unless an old simulation class still
    # holds its name or stands for its protocol
    for name, preset in table.items():
        if name not in _FACTORIES and preset.protocol not in simulated:
            register(name, lambda preset=preset: Method(preset))
            _FROM_LAYER.add(name)


def _register_built_in() -> None:
    """No old simulation class is left (issue 33): every name is a preset of the one registry."""


def get_method(name: str) -> Protocol:
    """The protocol registered under ``name`` (ValueError listing the choices otherwise).

    Examples
    --------
    >>> get_method("two-round-triangles-dlap").budget(1.0)
    {'rr': 0.5, 'local-count': 0.5}
    >>> get_method("unbiased-dlap").budget(2.0)
    {'degree': 2.0}
    """
    _ensure()
    if not isinstance(name, str) or name not in _FACTORIES:
        raise ValueError(f"unknown method {name!r}{did_you_mean(name, 'method')}; choose from "
                         f"{', '.join(_FACTORIES)}")
    return _FACTORIES[name]()


def method_names(statistic: str | None = None) -> list[str]:
    """Registered names, or those of the methods that estimate ``statistic``.

    Examples
    --------
    >>> "two-round-triangles-laplace" in method_names("triangles")
    True
    >>> "local-lap-kstars" in method_names("kstars"), "local-lap-kstars" in method_names("edges")
    (True, False)
    """
    _ensure()
    if statistic is None:
        return list(_FACTORIES)
    if statistic not in statistic_names():
        hint = did_you_mean(statistic, "statistic")
        raise ValueError(f"unknown statistic {statistic!r}{hint}; choose from {', '.join(statistic_names())}")
    return [m.name for m in methods_for(statistic)]


def methods_for(statistic: str) -> list[Protocol]:
    """The protocols that estimate ``statistic``."""
    _ensure()
    return [p for p in (f() for f in _FACTORIES.values()) if p.supports(statistic)]


def recommended_methods(statistic: str) -> dict[str, str]:
    """The recommended method of each model for ``statistic``, ``{name: model}`` in registry order:
    what ``ldpgraph estimate`` and ``experiment`` run without ``--methods`` (empty: no method is
    recommended, and all of them run). The choice is data on each method
    (:attr:`~ldpgraph.protocols.base.Protocol.recommended`, set where the method is defined).

    Examples
    --------
    >>> recommended_methods("four_cycles")  # doctest: +NORMALIZE_WHITESPACE
    {'rr-four-cycles': 'local, one round', 'two-round-four-cycles-dlap': 'local, two rounds',
     'wshuffle-four-cycles-rr': 'shuffle'}
    >>> recommended_methods("edges")
    {}
    """
    return {p.name: p.model for p in methods_for(statistic) if statistic in p.recommended}


def did_you_mean(name: Any, kind: str) -> str:
    """``" (did you mean X?)"`` for an unknown statistic or method name (``kind``), or "".

    A close spelling first, then a name that contains it; for a statistic, also the statistic of
    the methods whose names contain it (``kcore``: the ``kcore-*`` methods estimate core_numbers).

    Examples
    --------
    >>> did_you_mean("kcore", "statistic")
    ' (did you mean core_numbers?)'
    >>> did_you_mean("triangle", "statistic"), did_you_mean("rr-triangle", "method")
    (' (did you mean triangles?)', ' (did you mean rr-triangles?)')
    >>> did_you_mean("zzz", "method")
    ''
    """
    import difflib

    if kind not in ("statistic", "method"):
        raise ValueError(f"kind must be 'statistic' or 'method', got {kind!r}")
    if not isinstance(name, str) or not name.strip():
        return ""
    from .core.registry import REMOVED
    from .core.registry import did_you_mean as layer_did_you_mean

    if kind == "method" and name.strip() in REMOVED:  # a removed name says what replaces it
        return layer_did_you_mean(name, kind)
    choices = statistic_names() if kind == "statistic" else method_names()
    key = name.strip().lower().replace("-", "_")
    norm = {c.replace("-", "_"): c for c in choices}
    found = difflib.get_close_matches(key, list(norm), n=1, cutoff=0.75)
    found = [norm[f] for f in found] or [c for k, c in norm.items() if key in k or k in key]
    if not found and kind == "statistic":
        found = list(dict.fromkeys(s for m in method_names() if key in m.replace("-", "_")
                                   for s in get_method(m).statistics))
    return f" (did you mean {' or '.join(found[:3])}?)" if found else ""


def statistic_names() -> list[str]:
    """Every statistic some registered method estimates.

    >>> statistic_names()[-5:]
    ['transitivity', 'avg_clustering', 'degree_weighted_triangles', 'four_cycles', 'core_numbers']
    """
    from .protocols.statistics import GRAPH_STATISTICS
    from .protocols.statistics import statistic_names as degree_stats

    return [*degree_stats(), *GRAPH_STATISTICS]


# ------------------------------------------------------------------------------- adapters

class LayerSimulation(Protocol):
    """A protocol of the protocol layer (:mod:`ldpgraph.core`) seen by the experiment runner.

    Every trial is one :func:`~ldpgraph.run.run_in_memory` run with a seeded sampler whose seed is
    drawn from ``rng``: the same code a deployment runs. A protocol may add, as optional methods,
    ``truth(graph, statistic)`` (default: :func:`~ldpgraph.protocols.statistics.graph_statistic_truth`)
    and ``analytic_variance(graph, statistic, plan)`` / ``analytic_mean(...)``; ``public`` holds
    the options every trial uses (the protocol's defaults otherwise).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> from ldpgraph.core import registry as layer
    >>> sim = LayerSimulation(layer.get("rr-triangles"))
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> sim.estimate_trials(g, "triangles", None, 60.0, 2, rng=0).round(6).tolist()
    [1.0, 1.0]
    >>> sim.budget(1.0)
    {'rr': 1.0}
    """

    needs = "adjacency"
    vectorized = False

    def __init__(self, protocol: Any, **public: Any) -> None:
        self.protocol = protocol
        self.public = dict(public)
        self.option_names = tuple(o.name for o in protocol.options)
        self.name = protocol.name
        self.statistics = tuple(protocol.statistics)
        self.needs = protocol.needs
        self.unbiased = bool(getattr(protocol, "unbiased", False))
        self.reference = protocol.reference
        if protocol.deployable:
            self.deployed_as = (protocol.name, {})
        else:
            self.not_deployable = (getattr(protocol, "not_deployable", "")
                                   or "its releases are not integer report rows")

    def _configured(self, public):
        """Every trial's :func:`~ldpgraph.run.run_in_memory` takes these options (``public``)."""
        merged = {**self.public, **public}
        self.protocol.check_public(merged)  # unknown names (their values: the plan checks them)
        out = LayerSimulation(self.protocol, **merged)
        out.deployed_as = self._deployed_with(public)
        return out

    def _plan(self, graph: Any, epsilon: float) -> Any:
        from .run.memory import resolve_public

        return self.protocol.plan(epsilon, **resolve_public(self.protocol, graph, self.public))

    def rounds(self, epsilon, statistic=None):
        eps = check_epsilon(epsilon)
        try:
            plan = self.protocol.plan(eps, **self.public)
        except ValueError:  # a public bound the simulation takes from the graph
            return (Round("all", "see `ldpgraph methods`", "-", eps, "from the graph"),)
        return tuple(
            Round(rp.name, ", ".join(q for rel in rp.releases for q in rel.quantities),
                  "+".join(rel.mechanism for rel in rp.releases),
                  rp.epsilon, "see the plan")
            for rp in plan.rounds
        )

    def estimate_trials(self, data, statistic, param, epsilon, n_trials=1, *, rng=None):
        from .core.sampling import Seeded
        from .protocols.base import require_graph
        from .run.memory import run_in_memory

        self._check_statistic(statistic)
        graph = require_graph(data, self.name)
        gen = check_rng(rng)
        n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
        seeds = gen.integers(0, 2**63 - 1, size=n_trials)
        out = np.empty(n_trials)
        for t, seed in enumerate(seeds.tolist()):
            run = run_in_memory(self.protocol, graph, epsilon, sampler=Seeded(seed), statistic=statistic,
                                **self.public)
            out[t] = float(run.estimate.value)
        return out

    def truth(self, data, statistic, param):
        from .protocols.base import require_graph
        from .protocols.statistics import GRAPH_STATISTICS, get_statistic, graph_statistic_truth

        self._check_statistic(statistic)
        graph = require_graph(data, self.name)
        own = getattr(self.protocol, "truth", None)
        if own is not None:
            return float(own(graph, statistic))
        if statistic in GRAPH_STATISTICS:
            return graph_statistic_truth(statistic, graph)
        return float(get_statistic(statistic).truth(graph.degrees, param))

    def analytic_mean(self, data, statistic, param, epsilon):
        return self._analytic("analytic_mean", data, statistic, epsilon)

    def analytic_variance(self, data, statistic, param, epsilon):
        return self._analytic("analytic_variance", data, statistic, epsilon)

    def _analytic(self, hook, data, statistic, epsilon):
        from .protocols.base import require_graph

        fn = getattr(self.protocol, hook, None)
        if fn is None:
            return None
        graph = require_graph(data, self.name)
        return fn(graph, statistic, self._plan(graph, epsilon))
