"""What networkx reads of the ldpgraph backend at its own import (entry point ``networkx.backend_info``).

A separate, dependency-free package (as nx-parallel's ``_nx_parallel``): networkx calls
:func:`get_info` of every installed backend while ``import networkx`` runs, so this must not
import ldpgraph (0.4 s, and ldpgraph itself imports networkx). The backend's functions are in
:mod:`ldpgraph.nx_backend`, loaded only when a call asks for ``backend="ldpgraph"``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FUNCTIONS", "get_info"]

#: networkx function -> (ldpgraph statistic, default protocol, the protocol's default options)
FUNCTIONS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "average_clustering": ("avg_clustering", "adaptive-clustering", {}),
    "transitivity": ("transitivity", "two-round-triangles-dlap", {"private_bound": True}),
    "core_number": ("core_numbers", "kcore-hindex", {}),
}

#: the backend keyword arguments every function takes
PARAMETERS = {
    "epsilon : float": "Required. Each node's total privacy budget (edge-LDP), in (0, inf).",
    "method : str, optional": "The ldpgraph protocol (``ldpgraph methods`` lists them).",
    "seed : int, optional": "A seed makes the run reproducible (a simulation); None, the default, draws "
                            "every noise from the OS CSPRNG (a deployment).",
    "**options": "The protocol's public options (``d_max``, ``private_bound``, ``shares``, ...).",
}


def get_info() -> dict[str, Any]:
    """The backend's description for networkx (its docs and ``nx.utils.backends.backend_info``)."""
    functions: dict[str, Any] = {
        name: {"additional_docs": f"A private estimate under edge-LDP by the ldpgraph protocol {method} "
                                  "(default); the value returned carries std_error and interval().",
               "additional_parameters": PARAMETERS}
        for name, (_, method, _) in FUNCTIONS.items()
    }
    functions["triangles"] = {"additional_docs": "Refused with a ValueError: ldpgraph estimates the total "
                                                 "triangle count, not each node's."}
    return {
        "backend_name": "ldpgraph",
        "project": "ldpgraph",
        "package": "ldpgraph",
        "short_summary": "Private estimates under edge local differential privacy.",
        "functions": functions,
        "default_config": {},
    }
