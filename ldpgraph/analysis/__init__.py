"""Analysis tools used before or beside a run, not by the protocols themselves: accuracy
planning (:mod:`.planning`: the epsilon a target accuracy needs, the split of a budget).

The poisoning bounds and screening (:mod:`ldpgraph.protocols.poisoning`) stay in
``protocols``: the curators call them while estimating.
"""

from . import planning

__all__ = ["planning"]
