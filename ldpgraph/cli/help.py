"""The command line's help texts that name choices and defaults, generated from the code.

Every list of statistics, methods, protocols and plot formats the help shows comes from the
registries (:mod:`ldpgraph.protocols.registry`,
:mod:`ldpgraph.protocols.statistics`, :mod:`ldpgraph.protocols.reportset`), so the help cannot
promise what the tool does not do; ``tests/test_cli_help.py`` checks every option and default
the help names against the parser and the tool's behaviour.

Examples
--------
>>> "avg_clustering" in estimate_statistics()
True
>>> curate_statistics()["rr-triangles"]
['triangles', 'transitivity']
"""

from __future__ import annotations

__all__ = [
    "degree_statistics",
    "graph_statistics",
    "estimate_statistics",
    "curate_statistics",
    "stat_help",
    "curate_stat_help",
    "methods_help",
    "or_list",
]


def degree_statistics() -> list[str]:
    """The statistics estimated from degree reports (``estimate`` / ``experiment`` ``--stat``)."""
    from ..experiments import statistic_names

    return list(statistic_names())


def graph_statistics() -> list[str]:
    """The statistics that need the graph's edges (the triangle and clustering protocols)."""
    from ..protocols.statistics import GRAPH_STATISTICS

    return list(GRAPH_STATISTICS)


def estimate_statistics() -> list[str]:
    """Every ``--stat`` of ``estimate`` and ``experiment``."""
    return [*degree_statistics(), *graph_statistics()]


def curate_statistics() -> dict[str, list[str]]:
    """``{protocol: the --stat names curate accepts for its rows}`` (``degree`` first)."""
    from ..protocols import registry

    return {proto.name: list(proto.statistics) for proto in registry.protocols() if proto.deployable}


def stat_help(many: bool) -> str:
    """Help of ``--stat`` for ``estimate`` (one) and ``experiment`` (``many``)."""
    head = "statistics, or 'all' (the degree statistics)" if many else "statistic"
    tail = "; NAME:P pins a parameter" if many else ""
    return (f"{head}: {', '.join(degree_statistics())} (from the degrees; default kstars); "
            f"{', '.join(graph_statistics())} (need an edge list; default methods: every protocol "
            f"estimating them){tail}")


def curate_stat_help() -> str:
    """Help of ``curate --stat``: the statistics of each protocol's rows."""
    parts = []
    for proto, stats in curate_statistics().items():
        default = f" (default {stats[0]})" if len(stats) > 1 else ""
        parts.append(f"{proto} rows: {', '.join(stats)}{default}")
    return "statistics to estimate; " + "; ".join(parts) + "; NAME:K pins k"


def methods_help(extra: str = "") -> str:
    """Help of ``--methods``: the defaults and where every method is listed."""
    from ..experiments.runner import DEFAULT_METHODS
    from ..run.method import method_names

    return (f"methods, or 'all' (default: {' '.join(DEFAULT_METHODS)}{extra}); any of the "
            f"{len(method_names())} methods of 'ldpgraph methods' that estimate --stat: "
            f"{', '.join(method_names())}")


def or_list(names: list[str], word: str = "or") -> str:
    """``a, b or c``.

    Examples
    --------
    >>> or_list(["a", "b", "c"]), or_list(["a"], "and")
    ('a, b or c', 'a')
    """
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {word} {names[-1]}"
