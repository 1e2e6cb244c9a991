r"""Synthetic graphs from spec strings (``ba:n=1000,m=3``), generated with igraph, reproducibly.

::

    ba:n=<int>,m=<int>            Barabasi-Albert, n nodes, m edges attached per new node
    er:n=<int>,p=<float>          Erdos-Renyi G(n, p)
    er:n=<int>,m=<int>            Erdos-Renyi G(n, m)
    ws:n=<int>,k=<even int>,p=<float>   Watts-Strogatz ring, degree k, rewiring probability p
"""

from __future__ import annotations

import math
import random
import re
import threading
from typing import Any

import numpy as np

from .._validation import check_rng
from . import _files

__all__ = ["parse_synthetic_spec", "synthetic_graph", "is_synthetic_spec"]


_GRAMMAR = (
    "expected '<model>:<key>=<value>,...' with one of "
    "'ba:n=<int>,m=<int>', 'er:n=<int>,p=<float>', 'er:n=<int>,m=<int>', "
    "'ws:n=<int>,k=<even int>,p=<float>' (e.g. 'ba:n=1000000,m=10')"
)
_MODELS: dict[str, tuple[frozenset[str], ...]] = {
    "ba": (frozenset({"n", "m"}),),
    "er": (frozenset({"n", "p"}), frozenset({"n", "m"})),
    "ws": (frozenset({"n", "k", "p"}),),
}
_SPEC_RE = re.compile(r"^\s*([A-Za-z]+)\s*:(.*)$", re.DOTALL)

# igraph's C integers are 64-bit: larger sizes overflow when passed to it.
_IGRAPH_INT_MAX = 2**63 - 1

# igraph draws from one process-wide Python RNG object; serialize swaps of it.
_IGRAPH_RNG_LOCK = threading.Lock()


def _spec_error(spec: str, problem: str) -> ValueError:
    return ValueError(f"bad synthetic graph spec {spec!r}: {problem}; {_GRAMMAR}")


def _spec_int(spec: str, key: str, s: str) -> int:
    t = s.replace("_", "")
    try:
        return int(t)
    except ValueError:
        pass
    try:
        f = float(t)
    except ValueError:
        f = math.nan
    if math.isfinite(f) and f.is_integer():
        return int(f)
    raise _spec_error(spec, f"{key} must be an integer, got {s!r}")


def _spec_prob(spec: str, key: str, s: str) -> float:
    try:
        f = float(s.replace("_", ""))
    except ValueError:
        raise _spec_error(spec, f"{key} must be a number in [0, 1], got {s!r}") from None
    if not (0.0 <= f <= 1.0):
        raise _spec_error(spec, f"{key} must be in [0, 1], got {s!r}")
    return f


def parse_synthetic_spec(spec: str) -> tuple[str, dict[str, int | float]]:
    """Parse a synthetic graph spec into ``(model, params)``; see :func:`synthetic_graph`.

    Raises
    ------
    ValueError
        For an unknown model, unknown/missing/duplicate keys or out-of-range values; the message
        states the expected grammar.

    Examples
    --------
    >>> parse_synthetic_spec("ba:n=1000,m=3")
    ('ba', {'n': 1000, 'm': 3})
    >>> parse_synthetic_spec("er: n=1e4, p=0.001")
    ('er', {'n': 10000, 'p': 0.001})
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str, got {type(spec).__name__} {spec!r}")
    m = _SPEC_RE.match(spec)
    if m is None:
        raise _spec_error(spec, "missing '<model>:' prefix")
    model = m.group(1).lower()
    if model not in _MODELS:
        raise _spec_error(spec, f"unknown model {m.group(1)!r} (known: {', '.join(_MODELS)})")
    raw: dict[str, str] = {}
    body = m.group(2).strip()
    for item in body.split(",") if body else []:
        key, eq, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or not key or not value:
            raise _spec_error(spec, f"item {item.strip()!r} is not <key>=<value>")
        if key in raw:
            raise _spec_error(spec, f"duplicate key {key!r}")
        raw[key] = value
    keys = frozenset(raw)
    allowed = _MODELS[model]
    if keys not in allowed:
        want = " or ".join("{" + ", ".join(sorted(a)) + "}" for a in allowed)
        raise _spec_error(spec, f"model {model!r} takes keys {want}, got {{{', '.join(sorted(keys))}}}")

    params: dict[str, int | float] = {}
    n = _spec_int(spec, "n", raw["n"])
    if not 1 <= n <= _IGRAPH_INT_MAX:
        raise _spec_error(spec, f"n must be in [1, 2**63 - 1] (igraph's integers), got {n}")
    params["n"] = n
    if model == "ba":
        mm = _spec_int(spec, "m", raw["m"])
        max_m = max(1, n - 1)  # each new node attaches to m distinct earlier nodes
        if not 1 <= mm <= max_m:
            raise _spec_error(spec, f"m must be in [1, max(1, n-1) = {max_m}], got {mm}")
        params["m"] = mm
    elif model == "er":
        if "p" in raw:
            params["p"] = _spec_prob(spec, "p", raw["p"])
        else:
            mm = _spec_int(spec, "m", raw["m"])
            max_m = min(n * (n - 1) // 2, _IGRAPH_INT_MAX)
            if not 0 <= mm <= max_m:
                raise _spec_error(spec, f"m must be in [0, min(n(n-1)/2, 2**63 - 1) = {max_m}], got {mm}")
            params["m"] = mm
    else:  # ws
        k = _spec_int(spec, "k", raw["k"])
        if k < 2 or k % 2 or k >= n:
            raise _spec_error(spec, f"k must be an even integer with 2 <= k < n = {n}, got {k}")
        params["k"] = k
        params["p"] = _spec_prob(spec, "p", raw["p"])
    return model, params


def _igraph_generate(model: str, params: dict[str, Any], seed: int) -> Any:
    import igraph

    with _IGRAPH_RNG_LOCK:
        igraph.set_random_number_generator(random.Random(seed))
        try:
            if model == "ba":
                return igraph.Graph.Barabasi(params["n"], params["m"], directed=False)
            if model == "er":
                if "p" in params:
                    return igraph.Graph.Erdos_Renyi(n=params["n"], p=params["p"], directed=False, loops=False)
                return igraph.Graph.Erdos_Renyi(n=params["n"], m=params["m"], directed=False, loops=False)
            return igraph.Graph.Watts_Strogatz(
                1, params["n"], params["k"] // 2, params["p"], allowed_edge_types="simple"
            )
        finally:
            # igraph's documented default generator is the ``random`` module.
            igraph.set_random_number_generator(random)


def synthetic_graph(spec: str, *, rng: Any = None) -> Any:
    r"""Random graph from a spec string, generated with igraph, reproducible from ``rng``.

    Parameters
    ----------
    spec : str
        ``ba:n=<int>,m=<int>`` (Barabasi-Albert: each new node attaches to m distinct earlier
        nodes), ``er:n=<int>,p=<float>`` (G(n, p)), ``er:n=<int>,m=<int>`` (G(n, m)),
        ``ws:n=<int>,k=<even int>,p=<float>`` (Watts-Strogatz: ring where each node links to its
        k nearest neighbours, both endpoints of each edge rewired with probability p, simple).
        Integers may be written ``1000000``, ``1_000_000`` or ``1e6``; keys in any order.
        Sizes must fit igraph's 64-bit integers (n, m <= 2**63 - 1) and, for ``ba``,
        m <= max(1, n - 1); otherwise ``ValueError`` (memory is not checked).
    rng : numpy.random.Generator, int seed, SeedSequence or None
        Randomness; the same seed gives the same graph.

    Returns
    -------
    ldpgraph.graph.Graph
        A simple undirected graph on nodes 0..n-1.

    Notes
    -----
    igraph draws from a process-wide Python generator. One integer
    :math:`s \sim U\{0, \dots, 2^{63}-1\}` is drawn from ``rng``; igraph is pointed at a dedicated
    ``random.Random(s)`` for the call (under a lock) and then restored to its default, the
    ``random`` module. No global random state is read or modified.

    Examples
    --------
    >>> g = synthetic_graph("er:n=100,m=250", rng=0)
    >>> g.n_nodes, g.n_edges
    (100, 250)
    >>> synthetic_graph("ba:n=1000,m=3", rng=7).n_edges == synthetic_graph("ba:n=1000,m=3", rng=7).n_edges
    True
    """
    model, params = parse_synthetic_spec(spec)
    seed = int(check_rng(rng).integers(0, 2**63, dtype=np.int64))
    # _graph_from_igraph is looked up on ._files at call time, where a test can replace it
    return _files._graph_from_igraph(_igraph_generate(model, params, seed))


def is_synthetic_spec(source: str) -> bool:
    """Whether ``source`` names a synthetic model (``ba:``, ``er:``, ``ws:``), well-formed or not.

    Examples
    --------
    >>> is_synthetic_spec("ba:n=10,m=2"), is_synthetic_spec("facebook")
    (True, False)
    """
    m = _SPEC_RE.match(source) if isinstance(source, str) else None
    return m is not None and m.group(1).lower() in _MODELS
