r"""The local-clustering protocol as protocol-layer methods (avg_clustering, degree_weighted_triangles).

=================================== ============================================================
method                              rounds: budget (defaults)
=================================== ============================================================
``avg-clustering-dlap`` (ours)      rr: 0.3 eps; degree: 0.4 eps (d_v + DLap); local-count:
                                    0.3 eps (2 w_v - C(d_v, 2) + DLap at sensitivity D - 1,
                                    D = the true maximum degree, public as in Imola et al.'s
                                    experiments)
``avg-clustering-dlap-private``     degree-bound: eps/10 (d_v + DLap; D = max(largest release,
                                    2)); the rest split as above, lists longer than D projected
                                    to a uniform D-subset (sensitivity 2(D - 1))
=================================== ============================================================

Both deploy as ``avg-clustering`` (``--no-projection``, resp. ``--private-bound``: round 1 then also
releases the noisy degree, the curator broadcasts D by the rule above,
:func:`~ldpgraph.protocols.clustering.private_degree_bound`). Both estimate the average local
clustering (networkx ``average_clustering``) and
:math:`\sum_v d_v t_v` without bias (:mod:`ldpgraph.protocols.clustering`; the projection keeps
both unbiased, so the private bound does too). The default split gives the degree the largest
share because the variance is dominated by the unbiased debiasing of :math:`1/\binom{d}{2}` at
small noisy degrees: on Facebook at eps = 1 the analytic relative RMSE of the average
clustering is 1.5e3 for (0.4, 0.2, 0.4) and 7.2e2 for (0.3, 0.4, 0.3) (rr, degree, count).

Analytic variance: exact for ``avg-clustering-dlap``
(:func:`~ldpgraph.protocols.clustering.average_clustering_variance`); None for the private
bound (its projection's sampling variance has no closed form here).

Communication (mean bits per node), as for the triangle methods: uploads one bit per reported
lower pair ((n - 1)/2 on average) and 64 bits per released integer; the download is the noisy
graph as an edge list, 2 ceil(log2 n) bits per expected noisy edge, plus 64 bits for a
broadcast bound.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from ..mechanisms import DiscreteLaplace
from .base import FLOAT_BITS, Protocol, Round, require_graph
from .clustering import (
    average_clustering,
    average_clustering_truth,
    average_clustering_variance,
    degree_weighted_triangles,
    degree_weighted_triangles_truth,
    private_degree_bound,
    release_clustering_reports,
)
from .randomized_response import DEFAULT_MAX_BYTES, expected_noisy_edges, noisy_graph_bits

__all__ = ["ClusteringProtocol", "CLUSTERING_METHODS", "CLUSTERING_STATISTICS"]

#: statistics the clustering protocol estimates
CLUSTERING_STATISTICS: tuple[str, ...] = ("avg_clustering", "degree_weighted_triangles")

_ESTIMATORS = {"avg_clustering": average_clustering, "degree_weighted_triangles": degree_weighted_triangles}


class ClusteringProtocol(Protocol):
    """``avg-clustering-dlap[-private]``: RR graph, then (noisy degree, noisy local count) per node.

    Parameters
    ----------
    shares : (float, float, float)
        Fractions of the (remaining) budget spent on round 1 (RR), the degree and the local
        count; positive, summing to 1.
    private_bound : bool
        Spend ``bound_share`` of the budget on a private degree bound instead of taking the
        true maximum (fine for benchmarking, not for deployment).
    bound_share : float
    max_bytes : int or None
        Memory bound of a trial's noisy graph (see
        :func:`~ldpgraph.protocols.clustering.release_clustering_reports`).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> p = ClusteringProtocol()
    >>> {k: round(v, 3) for k, v in p.budget(1.0).items()}
    {'rr': 0.3, 'degree': 0.4, 'local-count': 0.3}
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> p.truth(g, "avg_clustering", None), p.truth(g, "degree_weighted_triangles", None)
    (0.5833333333333334, 7.0)
    >>> p.estimate_trials(g, "avg_clustering", None, 200.0, 2, rng=0).round(6).tolist()
    [0.583333, 0.583333]
    """

    statistics = CLUSTERING_STATISTICS
    option_names = ("shares",)
    needs = "adjacency"
    vectorized = False
    unbiased = True

    def __init__(
        self,
        *,
        shares: tuple[float, float, float] = (0.3, 0.4, 0.3),
        private_bound: bool = False,
        bound_share: float = 0.1,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
    ) -> None:
        s = tuple(float(x) for x in shares)
        if len(s) != 3 or not all(math.isfinite(x) and x > 0 for x in s) or abs(sum(s) - 1.0) > 1e-12:
            raise ValueError(f"shares must be three positive fractions summing to 1, got {shares!r}")
        if not 0.0 < float(bound_share) < 1.0:
            raise ValueError(f"bound_share must be in (0, 1), got {bound_share!r}")
        self.shares = s
        self.private_bound = bool(private_bound)
        self.bound_share = float(bound_share)
        self.max_bytes = max_bytes
        self.name = "avg-clustering-dlap" + ("-private" if self.private_bound else "")
        self.reference = "ours (two rounds: RR, then noisy degree and local count)"
        # deployed: ``avg-clustering`` without projection at a public D, or with the private bound
        # (round 1 also releases the noisy degree; D from them, lists above D projected)
        self.deployed_as = ("avg-clustering", {"private_bound": True} if self.private_bound
                            else {"projection": False})
        self._memo: tuple[Any, ...] | None = None
        #: the public options of the deployed form (non-private): a public degree bound D (None:
        #: the true maximum) and projection of the lists above it (the simulation's default: none)
        self.d_max: int | None = None
        self.projection = False
        if not self.private_bound:
            self.option_names = ("d_max", "projection", "shares")

    def _configured(self, public):
        """``shares`` (the layer's ``rr``, ``degree``, ``local_count``, with ``degree_bound`` for the
        private bound: its ``bound_share``, the others then scaled to the rest) as the constructor's;
        ``d_max`` and ``projection`` as :func:`release_clustering_reports`'s (non-private)."""
        sh = public.get("shares")
        keys = ("rr", "degree", "local_count")
        both = ("degree_bound", *keys) if self.private_bound else keys
        if sh is not None and (not isinstance(sh, dict) or sorted(sh) != sorted(both)):
            raise ValueError(f"shares of {self.name}: {','.join(f'{k}=F' for k in both)}, got {sh!r}")
        shares, bound_share = self.shares, self.bound_share
        if sh is not None:
            bound_share = float(sh["degree_bound"]) if self.private_bound else bound_share
            rest = 1.0 - bound_share if self.private_bound else 1.0
            shares = tuple(float(sh[k]) / rest for k in keys)
        out = ClusteringProtocol(shares=shares, private_bound=self.private_bound, bound_share=bound_share,
                                 max_bytes=self.max_bytes)
        out.d_max, out.projection = self.d_max, bool(public.get("projection", self.projection))
        if public.get("d_max") is not None:
            out.d_max = check_nonnegative_int(public["d_max"], "d_max", minimum=2)
        out.deployed_as = self._deployed_with(public)
        return out

    def _budget(self, epsilon: float) -> tuple[float, float, float, float]:
        """``(bound, rr, degree, count)`` epsilons (bound 0 when public)."""
        eps = check_epsilon(epsilon)
        e0 = self.bound_share * eps if self.private_bound else 0.0
        rest = eps - e0
        return (e0, *(x * rest for x in self.shares))

    def rounds(self, epsilon, statistic=None):
        e0, e_rr, e_d, e_t = self._budget(epsilon)
        out = []
        if self.private_bound:
            out.append(Round("degree-bound", "d_v + DLap(e^-eps0)", "dlap", e0, "1"))
        sens = "2(D - 1)" if self.private_bound else "D - 1"
        return (
            *out,
            Round("rr", "bits a_vj for j < v by randomized response", "randomized-response", e_rr, "1 bit"),
            Round("degree", "d_v + DLap", "dlap", e_d, "1"),
            Round("local-count", "2 w_v - C(m_v, 2) + DLap", "dlap", e_t, sens),
        )

    def estimate_trials(self, data, statistic, param, epsilon, n_trials=1, *, rng=None):
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
        gen = check_rng(rng)
        e0, e_rr, e_d, e_t = self._budget(epsilon)
        estimator = _ESTIMATORS[statistic]
        out = np.empty(n_trials)
        if self.d_max is not None and not self.projection and g.n_nodes and int(g.degrees.max()) > self.d_max:
            v = int(np.argmax(g.degrees))
            raise ValueError(f"{self.name}: node {v} has degree {int(g.degrees[v])} > d_max = {self.d_max} "
                             "and no projection (--no-projection): it cannot release; raise --d-max or "
                             "allow --projection")
        for t in range(n_trials):
            bound = self.d_max
            if self.private_bound:
                noisy = g.degrees + DiscreteLaplace(epsilon=e0).sample(g.n_nodes, rng=gen)
                bound = private_degree_bound(noisy)
            rel = release_clustering_reports(
                g,
                epsilon_rr=e_rr,
                epsilon_degree=e_d,
                epsilon_triangles=e_t,
                d_max=bound,
                projection=self.private_bound or self.projection,
                rng=gen,
                max_bytes=self.max_bytes,
            )
            out[t] = estimator(rel, variance=False).value
        return out

    def truth(self, data, statistic, param):
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        if statistic == "avg_clustering":
            return float(average_clustering_truth(g))
        return float(degree_weighted_triangles_truth(g))

    def analytic_mean(self, data, statistic, param, epsilon):
        return self.truth(data, statistic, param)  # unbiased (also under projection)

    def analytic_variance(self, data, statistic, param, epsilon) -> float | None:
        self._check_statistic(statistic)
        if self.private_bound or self.projection or self.d_max is not None:
            return None  # the closed form is that of the true maximum degree as D, no projection
        g = require_graph(data, self.name)
        _, e_rr, e_d, e_t = self._budget(epsilon)
        key = (statistic, e_rr, e_d, e_t)
        memo = self._memo
        if memo is not None and memo[0] is g and memo[1] == key:
            return memo[2]  # analytic variance and RMSE are asked for one after the other
        var = average_clustering_variance(
            g, epsilon_rr=e_rr, epsilon_degree=e_d, epsilon_triangles=e_t, statistic=statistic
        )
        self._memo = (g, key, var)
        return var

    def communication(self, data, epsilon, statistic=None):
        g = require_graph(data, self.name)
        n = g.n_nodes
        _, e_rr, _, _ = self._budget(epsilon)
        extra = FLOAT_BITS if self.private_bound else 0.0
        up = (n - 1) / 2.0 + 2 * FLOAT_BITS + extra
        down = noisy_graph_bits(n, expected_noisy_edges(n, g.n_edges, e_rr)) + extra
        return up, down


#: registry names -> factories
CLUSTERING_METHODS: dict[str, Any] = {
    "avg-clustering-dlap": lambda: ClusteringProtocol(),
    "avg-clustering-dlap-private": lambda: ClusteringProtocol(private_bound=True),
    "adaptive-clustering": lambda: _adaptive("unbiased"),
    "adaptive-clustering-best": lambda: _adaptive("best"),
}


def _adaptive(estimator: str) -> Any:
    from .adaptive_clustering import AdaptiveClusteringMethod

    return AdaptiveClusteringMethod(estimator)
