r"""The registry of deployable protocols: every protocol class registers itself once, under its name.

The CLI choices, ``ldpgraph methods`` and the executors ask this registry; nothing outside a
protocol's module knows its name.

Examples
--------
>>> from ldpgraph.core import registry
>>> "two-round-triangles-dlap" in registry.names()
True
>>> registry.get("rr-triangles").statistics
('triangles', 'transitivity')
"""

from __future__ import annotations

import importlib

from .protocol import Protocol

__all__ = ["register", "unregister", "get", "names", "protocols", "MODULES"]

#: the modules holding the built-in protocols (imported on first use of the registry)
MODULES = (
    "ldpgraph.protocols.degree",
    "ldpgraph.protocols.local_kstars",
    "ldpgraph.protocols.rr_triangles",
    "ldpgraph.protocols.two_round_triangles",
    "ldpgraph.protocols.avg_clustering",
    "ldpgraph.protocols.two_round_four_cycles",
    "ldpgraph.protocols.kcore_protocol",
    "ldpgraph.protocols.kcore_hindex_protocol",
    "ldpgraph.protocols.wedge_shuffle",
    "ldpgraph.protocols.wedge_shuffle_ignore",
    "ldpgraph.protocols.arr_protocol",
    "ldpgraph.protocols.adaptive_clustering",
    "ldpgraph.protocols.edge_orient_protocol",
)

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
        for module in MODULES:
            importlib.import_module(module)
        _loaded = True


def get(name: str) -> Protocol:
    """A new instance of the protocol registered under ``name`` (ValueError listing the choices)."""
    _load()
    if name not in _PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose from {', '.join(_PROTOCOLS)}")
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


def protocols() -> list[Protocol]:
    """One instance of every registered protocol."""
    return [get(n) for n in names()]
