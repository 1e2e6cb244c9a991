r"""The one registry: every protocol class registers itself once, under its name, with its presets.

The CLI choices, ``ldpgraph methods``, the experiments and the executors ask this registry;
nothing outside a protocol's module knows its name. Protocols are found in the modules of
:mod:`ldpgraph.protocols` (every one is imported on first use) and in the modules or classes an
installed package names in the entry-point group ``ldpgraph.protocols``, so a separate package
adds a protocol without editing ldpgraph::

    [project.entry-points."ldpgraph.protocols"]
    my-protocol = "my_package.my_protocol"

A *method* is a registered name: a :class:`~ldpgraph.core.protocol.Preset` (a protocol plus
options) from the protocol's ``presets``, or the protocol's own name where it has none.

Examples
--------
>>> from ldpgraph.protocols import registry
>>> "two-round-triangles-dlap" in registry.names()
True
>>> registry.get("rr-triangles").statistics
('triangles', 'transitivity')
>>> p = registry.preset("two-round-triangles-dlap-private")
>>> p.protocol, dict(p.options)
('two-round-triangles-dlap', {'private_bound': True})
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any

from ..core.protocol import Preset as _PresetSpec
from ..core.protocol import Protocol

__all__ = ["register", "unregister", "get", "names", "protocols", "MODULES", "ENTRY_POINT_GROUP", "REMOVED",
           "Preset", "preset", "versions", "method_names", "recommended_methods", "statistic_names",
           "did_you_mean"]

#: the entry-point group through which another package registers protocols
ENTRY_POINT_GROUP = "ldpgraph.protocols"

#: the modules holding the built-in protocols (imported on first use of the registry)
MODULES = (
    "ldpgraph.protocols.degrees.degree",
    "ldpgraph.protocols.degrees.local_kstars",
    "ldpgraph.protocols.triangles.rr_triangles",
    "ldpgraph.protocols.triangles.two_round",
    "ldpgraph.protocols.clustering.avg_clustering",
    "ldpgraph.protocols.four_cycles.protocols",
    "ldpgraph.protocols.kcore.reference",
    "ldpgraph.protocols.kcore.hindex_protocol",
    "ldpgraph.protocols.orientation.edge_orient",
    "ldpgraph.protocols.shuffle.wedge_shuffle",
    "ldpgraph.protocols.shuffle.wedge_shuffle_ignore",
    "ldpgraph.protocols.triangles.arr_protocol",
    "ldpgraph.protocols.clustering.adaptive",
)

#: method names that were removed: name -> why, and what to use instead (the refusal says so)
REMOVED = {
    "kcore-svt": ("removed in issue 33: dominated by kcore-reference on both the mean and the max "
                  "approximation factor at every epsilon", "kcore-hindex"),
}

_PROTOCOLS: dict[str, type[Protocol]] = {}
_loaded = False


def register(cls: type[Protocol]) -> type[Protocol]:
    """Class decorator: register a :class:`Protocol` subclass under ``cls.name`` (once)."""
    if not (isinstance(cls, type) and issubclass(cls, Protocol)) or not cls.name:
        raise TypeError(f"register a Protocol subclass with a name, got {cls!r}")
    old = _PROTOCOLS.get(cls.name)
    if old is not None and old is not cls and (old.__module__, old.__qualname__) != (cls.__module__,
                                                                                   cls.__qualname__):
        raise ValueError(f"protocol name {cls.name!r} is already registered by {old.__module__}")
    _PROTOCOLS[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    """Remove the protocol registered under ``name`` (a test's or a notebook's own protocol)."""
    _load()
    if name not in _PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose from {', '.join(_PROTOCOLS)}")
    del _PROTOCOLS[name]


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in MODULES:
            importlib.import_module(module)
        # the scan is dynamic, as the entry points are: the registry finds the protocols, the
        # protocols (and the report format, for the versions) import the registry
        package = importlib.import_module(__name__.rpartition(".")[0])
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)
        _load_entry_points()


def _load_entry_points() -> None:
    """Import the modules (or register the classes) named in the entry-point group."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plug-in must not break ldpgraph: say which and go on
            import warnings

            warnings.warn(f"ldpgraph: the protocol entry point {ep.name!r} ({ep.value}) failed to load: "
                          f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)
            continue
        if isinstance(obj, type) and issubclass(obj, Protocol) and obj.name not in _PROTOCOLS:
            register(obj)


def get(name: str) -> Protocol:
    """A new instance of the protocol registered under ``name`` (ValueError listing the choices)."""
    _load()
    if name not in _PROTOCOLS:
        hint = f" ({name} was {REMOVED[name][0]}; use {REMOVED[name][1]})" if name in REMOVED else ""
        raise ValueError(f"unknown protocol {name!r}{hint}; choose from {', '.join(_PROTOCOLS)}")
    return _PROTOCOLS[name]()


def _order(item: tuple[int, str]) -> tuple[int, int]:
    """Built-in protocols in the order of :data:`MODULES` (whatever imported them first), then the
    others in registration order."""
    i, name = item
    module = _PROTOCOLS[name].__module__
    return (MODULES.index(module) if module in MODULES else len(MODULES), i)


def names(statistic: str | None = None) -> list[str]:
    """Registered names (those estimating ``statistic`` when given): the built-in ones in the order of
    :data:`MODULES`, then the others in registration order."""
    _load()
    ordered = [n for _, n in sorted(enumerate(_PROTOCOLS), key=_order)]
    return [n for n in ordered if statistic is None or statistic in _PROTOCOLS[n].statistics]


def versions() -> dict[str, int]:
    """Protocol name -> the version of its report rows, for every deployable protocol (what the
    report format reads: :data:`ldpgraph.protocols.reports.PROTOCOLS`)."""
    _load()
    return {n: _PROTOCOLS[n].version for n in names() if _PROTOCOLS[n].deployable}


def protocols() -> list[Protocol]:
    """One instance of every registered protocol."""
    return [get(n) for n in names()]


# ------------------------------------------------------------------------------------ presets


@dataclass(frozen=True)
class Preset:
    """A registered method name resolved: its protocol's name, its options and what it is.

    Built from a protocol's :class:`~ldpgraph.core.protocol.Preset` entries (or its own name),
    with the attributes the entry leaves None taken from the protocol.
    """

    name: str
    protocol: str
    options: dict[str, Any] = field(default_factory=dict)
    statistics: tuple[str, ...] = ()
    model: str = ""
    unbiased: bool = False
    reference: str = ""
    recommended: tuple[str, ...] = ()
    not_deployable: str = ""
    no_std_error: str = ""


def _presets_of(cls: type[Protocol]) -> list[Preset]:
    specs = cls.__dict__.get("presets") or (_PresetSpec(cls.name),)  # a subclass names its own
    out = []
    for spec in specs:
        stats = tuple(cls.statistics if spec.statistics is None else spec.statistics)
        out.append(Preset(spec.name, cls.name, dict(spec.options), stats,
                          cls.model if spec.model is None else spec.model,
                          bool(cls.unbiased if spec.unbiased is None else spec.unbiased),
                          cls.reference if spec.reference is None else spec.reference,
                          tuple(spec.recommended), spec.not_deployable, spec.no_std_error))
    return out


def presets() -> dict[str, Preset]:
    """Every method name -> its :class:`Preset`, in the order of :func:`names`."""
    _load()
    out: dict[str, Preset] = {}
    for proto in names():
        for p in _presets_of(_PROTOCOLS[proto]):
            if p.name in out:
                raise ValueError(f"method name {p.name!r} is given by both {out[p.name].protocol} and "
                                 f"{proto}")
            out[p.name] = p
    return out


def preset(name: str) -> Preset:
    """The :class:`Preset` registered under method ``name`` (ValueError with a suggestion otherwise)."""
    table = presets()
    if not isinstance(name, str) or name not in table:
        raise ValueError(f"unknown method {name!r}{did_you_mean(name, 'method')}; choose from "
                         f"{', '.join(table)}")
    return table[name]


def method_names(statistic: str | None = None) -> list[str]:
    """Registered method names, or those of the methods estimating ``statistic``.

    >>> "local-lap-kstars" in method_names("kstars"), "local-lap-kstars" in method_names("edges")
    (True, False)
    """
    table = presets()
    if statistic is None:
        return list(table)
    if statistic not in statistic_names():
        hint = did_you_mean(statistic, "statistic")
        raise ValueError(f"unknown statistic {statistic!r}{hint}; choose from {', '.join(statistic_names())}")
    return [n for n, p in table.items() if statistic in p.statistics]


def recommended_methods(statistic: str) -> dict[str, str]:
    """The recommended method of each model for ``statistic``, ``{name: model}`` in registry order:
    what ``ldpgraph estimate`` and ``experiment`` run without ``--methods`` (empty: no method is
    recommended, and all of them run). The choice is data on each preset, set where the protocol
    is defined.

    >>> recommended_methods("edges")
    {}
    """
    return {n: p.model for n, p in presets().items()
            if statistic in p.statistics and statistic in p.recommended}


def statistic_names() -> list[str]:
    """Every statistic some registered method estimates: the degree statistics, then the adjacency ones.

    >>> statistic_names()[-5:]
    ['transitivity', 'avg_clustering', 'degree_weighted_triangles', 'four_cycles', 'core_numbers']
    """
    from .statistics import GRAPH_STATISTICS
    from .statistics import statistic_names as degree_stats

    return [*degree_stats(), *GRAPH_STATISTICS]


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
    >>> did_you_mean("kcore-svt", "method")  # doctest: +ELLIPSIS
    ' (kcore-svt was removed in issue 33: ...; use kcore-hindex)'
    """
    import difflib

    if kind not in ("statistic", "method"):
        raise ValueError(f"kind must be 'statistic' or 'method', got {kind!r}")
    if not isinstance(name, str) or not name.strip():
        return ""
    if kind == "method" and name.strip() in REMOVED:
        why, use = REMOVED[name.strip()]
        return f" ({name.strip()} was {why}; use {use})"
    table = presets()
    choices = statistic_names() if kind == "statistic" else list(table)
    key = name.strip().lower().replace("-", "_")
    norm = {c.replace("-", "_"): c for c in choices}
    found = difflib.get_close_matches(key, list(norm), n=1, cutoff=0.75)
    found = [norm[f] for f in found] or [c for k, c in norm.items() if key in k or k in key]
    if not found and kind == "statistic":
        found = list(dict.fromkeys(s for m, p in table.items() if key in m.replace("-", "_")
                                   for s in p.statistics))
    return f" (did you mean {' or '.join(found[:3])}?)" if found else ""
