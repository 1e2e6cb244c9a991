r"""Densest subgraph from the k-core levels: the density estimate that falls out of core numbers.

The densest subgraph S* maximises :math:`\rho(S) = |E(S)|/|S|`. With :math:`k_{max}` the
degeneracy (the largest core number),

.. math:: k_{max}/2 \le \rho^* \le k_{max}:

the :math:`k_{max}`-core has minimum degree :math:`k_{max}`, so density at least
:math:`k_{max}/2`; and every node of S* has at least :math:`\rho^*` neighbours in S* (removing
one with fewer would raise the density), so S* lies in the :math:`\lceil\rho^*\rceil`-core.
So any estimate of the degeneracy gives one of :math:`\rho^*`, by post-processing: no budget,
no round. :func:`densest_from_cores` takes the geometric middle of that interval,
:math:`\hat\rho = \hat k_{max}/\sqrt 2`, off by at most a factor :math:`\sqrt 2` when
:math:`\hat k_{max}` is exact (either end of the interval: up to 2), and by at most
:math:`\sqrt 2` times the error of :math:`\hat k_{max}` otherwise. Its
:math:`\hat k_{max}` is not the largest estimate (a maximum over noisy nodes runs high: on
Email-Enron ``kcore-hindex``'s is about 4 k_max) but the largest k with at least k + 1 nodes
estimated at k or more, :math:`\max_i \min(\hat k_{(i)}, i - 1)` over the estimates in
decreasing order: a k-core has at least k + 1 nodes, so this is the degeneracy exactly for
exact core numbers, and a few over-estimated nodes do not move it. This is the density, not the
subgraph. The nodes of the top estimated core are free as well, but a certified density for
that set would need another round: each member's noisy degree into it. That is not built.

:func:`exact_densest_subgraph` is the truth (Goldberg's reduction to minimum cuts, iterated
as Dinkelbach's method on the :math:`\lceil k_{max}/2\rceil`-core, igraph's max-flow).

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> g = from_edge_array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3], [3, 4]])  # K4 + a tail
>>> exact_densest_subgraph(g)
(1.5, [0, 1, 2, 3])
>>> est = densest_from_cores([3, 3, 3, 3, 1])
>>> round(est.density, 4), est.lower, est.upper
(2.1213, 1.5, 3.0)
>>> densest_from_cores([3, 3, 3, 3, 1, 40]).upper  # one node over-estimated
3.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["DensestEstimate", "densest_from_cores", "exact_densest_subgraph", "robust_degeneracy"]


@dataclass(frozen=True)
class DensestEstimate:
    """:math:`\\hat\\rho = \\hat k_{max}/\\sqrt 2` (:math:`\\hat k_{max}` the robust degeneracy of
    the module docstring) and the interval :math:`[\\hat k_{max}/2, \\hat k_{max}]`
    (which holds :math:`\\rho^*` when :math:`\\hat k_{max}` is the degeneracy)."""

    density: float
    lower: float
    upper: float


def robust_degeneracy(core_numbers: ArrayLike) -> float:
    r"""The largest k such that at least k + 1 nodes are estimated at k or more:
    :math:`\max_i \min(\hat k_{(i)}, i - 1)` over the estimates in decreasing order (module
    docstring). It is the degeneracy for exact core numbers, and a few over-estimated nodes do
    not move it.

    >>> robust_degeneracy([3, 3, 3, 3, 1]), robust_degeneracy([3, 3, 3, 3, 1, 40])
    (3.0, 3.0)
    >>> robust_degeneracy([2.5, 2.4, 2.9, 0.7])  # three nodes at 2 or more, not four at 2.4
    2.0

    Raises
    ------
    ValueError
        If ``core_numbers`` is empty or holds a negative or non-finite value.
    """
    k = np.asarray(core_numbers, dtype=np.float64)
    if k.size == 0 or not np.all(np.isfinite(k)) or np.any(k < 0):
        raise ValueError("core_numbers must be a non-empty array of finite numbers >= 0")
    desc = np.sort(k)[::-1]
    return float(np.max(np.minimum(desc, np.arange(desc.size, dtype=np.float64))))


def densest_from_cores(core_numbers: ArrayLike) -> DensestEstimate:
    """The densest subgraph's density from (estimated) core numbers (module docstring).

    Raises
    ------
    ValueError
        If ``core_numbers`` is empty or holds a negative or non-finite value.
    """
    top = robust_degeneracy(core_numbers)
    return DensestEstimate(top / math.sqrt(2.0), top / 2.0, top)


def exact_densest_subgraph(graph: Any) -> tuple[float, list[int]]:
    r"""``(ρ*, the nodes of a densest subgraph)``, exactly (up to floating point in the cut).

    Dinkelbach's iteration: from g = the density of the :math:`\lceil k_{max}/2\rceil`-core H
    (which holds S*), find S maximising :math:`|E(S)| - g|S|` by a minimum s-t cut (arcs s → v
    of capacity :math:`d_H(v)`, v → t of capacity 2g, both directions of each edge capacity 1:
    the cut around {s} ∪ S is :math:`2|E(H)| - 2(|E(S)| - g|S|)`); stop when the best gain is
    0, else set g = ρ(S). Each step raises g strictly and there are finitely many subsets.
    """
    import igraph as ig

    from .reference import exact_core_numbers

    n = graph.n_nodes
    edges = graph.edges()
    if edges.size == 0:
        return 0.0, []
    core = exact_core_numbers(graph)
    keep = np.flatnonzero(core >= math.ceil(core.max() / 2))
    inside = np.isin(edges[:, 0], keep) & np.isin(edges[:, 1], keep)
    local = np.full(n, -1, dtype=np.int64)
    local[keep] = np.arange(keep.size)
    e = local[edges[inside]]
    h, m = keep.size, e.shape[0]
    deg = np.bincount(e.ravel(), minlength=h).astype(np.float64)
    s, t = h, h + 1
    arcs = np.concatenate([e, e[:, ::-1], np.column_stack([np.full(h, s), np.arange(h)]),
                           np.column_stack([np.arange(h), np.full(h, t)])])
    best, nodes = m / h, np.arange(h)
    while True:
        cap = np.concatenate([np.ones(2 * m), deg, np.full(h, 2.0 * best)])
        d = ig.Graph(n=h + 2, edges=arcs.tolist(), directed=True)
        side = np.array(d.mincut(s, t, capacity=cap.tolist()).partition[0], dtype=np.int64)
        chosen = side[side < h]
        if chosen.size == 0:
            break
        mask = np.zeros(h, dtype=bool)
        mask[chosen] = True
        e_s = int(np.count_nonzero(mask[e[:, 0]] & mask[e[:, 1]]))
        if e_s - best * chosen.size <= 1e-9 * max(m, 1):
            break
        best, nodes = e_s / chosen.size, chosen
    return best, sorted(keep[nodes].tolist())
