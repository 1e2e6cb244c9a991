r"""Public protocol options in simulation: the same names as ``ldpgraph node`` / ``curate``.

A protocol of the layer (:mod:`ldpgraph.core`) declares its public parameters as
:class:`~ldpgraph.core.protocol.Option`\ s (``d_max``, ``shares``, ``mu``, ``projection``, ...).
:func:`configure_methods` applies a mapping ``{option name: value}`` to the methods of an
experiment: every method whose simulation takes that option is replaced by its configured copy
(:meth:`~ldpgraph.run.method.Method.with_options`); an option no selected method takes is
refused, naming the methods that take it. So a simulated configuration is rerun as a deployment
with the same flags.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["check_options", "configure_methods", "option_takers"]


def _layer_options() -> dict[str, Any]:
    """``{name: Option}`` over every registered protocol of the layer (one definition per name)."""
    from ..protocols import registry as layer

    out: dict[str, Any] = {}
    for proto in layer.protocols():
        for o in proto.options:
            out.setdefault(o.name, o)
    return out


#: why no simulation takes an option, and what to do instead
_NO_SIMULATION = {
    "private_bound": "the private bound is a method of its own: two-round-triangles-dlap-private",
    "degree_share": "the simulations take it from the statistic: 0.1 for transitivity",
    "n_users": "a simulation's users are the graph's nodes",
    "pairing_seed": "a simulation draws a fresh public pairing per trial",
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def option_takers(name: str) -> list[str]:
    """The registered methods whose simulation takes option ``name``.

    >>> option_takers("mu")
    ['arr-triangles']
    """
    from ..run.method import get_method, method_names

    return [m for m in method_names() if name in getattr(get_method(m), "option_names", ())]


def check_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` as a plain dict, None values dropped; ValueError on a name no protocol declares
    or a value of the wrong type (bool options take bools, int options ints, ``shares`` a dict).

    >>> check_options({"d_max": 8, "mu": None})
    {'d_max': 8}
    >>> check_options({"dmax": 8})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: unknown option 'dmax'; the protocols' options are accounting, beta, clipping, d_max, ...
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping of option name to value, got {type(options).__name__}")
    known = _layer_options()
    out: dict[str, Any] = {}
    for name, value in options.items():
        if name not in known:
            raise ValueError(f"unknown option {name!r}; the protocols' options are "
                             f"{', '.join(sorted(known))}")
        if value is None:
            continue
        kind = known[name].type
        ok = (isinstance(value, bool) if kind is bool
              else isinstance(value, int) and not isinstance(value, bool) if kind is int
              else isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float
              else isinstance(value, kind))
        if not ok:
            article = "an" if kind is int else "a"
            raise ValueError(f"option {name} ({_flag(name)}) takes {article} {kind.__name__}, got {value!r}")
        out[name] = float(value) if kind is float else value
    return out


def configure_methods(methods: Sequence[Any], options: Mapping[str, Any] | None) -> list[Any]:
    """``methods`` with each one that takes some of ``options`` configured with those.

    Methods that take none of them are returned as they are; with no option the list is
    unchanged. ValueError on an option none of ``methods`` takes (naming who takes it).

    Examples
    --------
    >>> from ldpgraph.experiments.runner import resolve_methods
    >>> ms = configure_methods(resolve_methods(["rr-triangles", "arr-triangles"]), {"mu": 0.5})
    >>> [m.public.get("mu") for m in ms]
    [None, 0.5]
    >>> configure_methods(resolve_methods(["rr-triangles"]), {"mu": 0.5})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: option --mu is taken by none of the simulations of rr-triangles (...: arr-triangles)
    """
    opts = check_options(options)
    methods = list(methods)
    if not opts:
        return methods
    takes = [set(getattr(m, "option_names", ())) for m in methods]
    for name in opts:
        if not any(name in t for t in takes):
            who = option_takers(name)
            whom = (f"the methods that take it: {', '.join(who)}" if who
                    else _NO_SIMULATION.get(name, "no simulation takes it, only deployed protocols (ldpgraph "
                                            "node / curate)"))
            raise ValueError(f"option {_flag(name)} is taken by none of the simulations of "
                             f"{', '.join(m.name for m in methods)} ({whom})")
    out = []
    for m, t in zip(methods, takes, strict=True):
        mine = {k: v for k, v in opts.items() if k in t}
        out.append(m.with_options(**mine) if mine else m)
    return out
