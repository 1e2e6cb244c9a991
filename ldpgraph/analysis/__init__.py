"""Analysis tools used before or beside a run, not by the protocols themselves: accuracy
planning (:mod:`.planning`: the epsilon a target accuracy needs, the split of a budget).

Poisoning is not here: the screening (:mod:`ldpgraph.protocols.screening`, the admissible
ranges and the screen) and the one-node influence bounds, each beside the estimator it bounds
(:func:`ldpgraph.protocols.curator.influence_bound`, :mod:`ldpgraph.protocols.triangles.kernels`,
:mod:`ldpgraph.protocols.clustering.kernels`), are all called by the curators and by
``Protocol.statistic_bound`` / ``one_node_bounds`` while estimating, and ``protocols`` imports
nothing from ``analysis``.
"""

from . import planning

__all__ = ["planning"]
