r"""``avg-clustering``: the average local clustering coefficient from two rounds of releases.

================ =============================================================================
round            node v releases
================ =============================================================================
1 ``rr``         RR at ε_rr on its lower adjacency bits (:class:`~ldpgraph.protocols.
                 rr_triangles.RandomizedResponseRound`); with ``private_bound`` also
                 ``degree_bound``: :math:`d_v + \mathrm{DLap}(e^{-\varepsilon_0})` (sensitivity 1,
                 drawn after the bits)
broadcast        the noisy graph, n, ε_rr, the bound D on the degree (public, or with
                 ``private_bound`` D = max(2, max of the ``degree_bound`` rows):
                 :func:`~ldpgraph.protocols.clustering.kernels.private_degree_bound`), the projection
                 flag and a run id (:class:`~ldpgraph.protocols.deploy_triangles.TriangleBroadcast`)
2 ``local``      ``degree``: :math:`d_v + \mathrm{DLap}(e^{-\varepsilon_d})` (sensitivity 1);
                 ``local_count``: :math:`r_v = 2 w_v - \binom{m_v}{2} + \mathrm{DLap}` at
                 sensitivity :func:`~ldpgraph.protocols.clustering.kernels.count_sensitivity` (2(D - 1): lists
                 longer than D are projected to a uniform D-subset; D - 1 without projection), with
                 :math:`w_v` the noisy edges among the m_v kept neighbours; and the run id
================ =============================================================================

Curator: :func:`~ldpgraph.protocols.clustering.kernels.average_clustering` (unbiased; proofs of the
sensitivity and of unbiasedness in :mod:`ldpgraph.protocols.clustering.kernels`). A node spends
ε_rr + ε_d + ε_t = ε; default split 0.3 / 0.4 / 0.3, as the simulation ``avg-clustering-dlap``.
With ``private_bound`` it spends ε₀ + ε_rr + ε_d + ε_t = ε, default 0.1 / 0.27 / 0.36 / 0.27 (ε₀ =
ε/10, the rest split 0.3 / 0.4 / 0.3), as the simulation ``avg-clustering-dlap-private``; D is then
noisy, so the lists above it are always projected (sensitivity 2(D - 1)): the projection keeps the
estimate unbiased.
Projection is the default, so that no node refuses to report because of its private degree (a
refusal would be seen by the curator); ``projection=False`` halves the sensitivity when D is
known to bound every degree (the simulation's setting), and then a node above D raises.

Examples
--------
>>> AvgClustering().plan(1.0, d_max=10).release("local_count").sensitivity_of("local_count")
18.0
>>> AvgClustering().plan(1.0, d_max=10).describe()
'epsilon 1 = rr 0.3 + degree 0.4 + local-count 0.3'
>>> AvgClustering().plan(1.0, private_bound=True).describe()
'epsilon 1 = rr 0.27 + degree-bound 0.1 + degree 0.36 + local-count 0.27'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon, check_nonnegative_int
from ...core.plan import Plan, Release, RoundPlan, split_budget
from ...core.protocol import Accumulator, Option, Preset, Round
from ...core.rows import Rows
from ...core.sampling import Sampler
from ..deploy_triangles import (
    CLUSTERING_PROTOCOL,
    DEGREE,
    DEGREE_BOUND,
    LOCAL_COUNT,
    RR_COUNT,
    RR_EDGE,
    RUN_ID,
    TriangleBroadcast,
    TriangleWire,
)
from ..randomized_response import expected_noisy_edges, noisy_graph_bits, upper_pairs
from ..registry import register
from ..triangles.rr_triangles import RandomizedResponseRound
from ..triangles.two_round import (
    LocalCountAccumulator,
    RRBroadcastProtocol,
    round_two_rows,
    screened_bound_text,
)
from .kernels import (
    OrientedGraph,
    average_clustering,
    average_clustering_variance,
    count_sensitivity,
    degree_weighted_triangles,
    oriented_graph,
    private_degree_bound,
    release_clustering_reports,
)

__all__ = ["AvgClustering", "clustering_release", "SIMULATED_STATISTICS"]

#: what the simulation estimates: the average clustering (deployed) and :math:`\sum_v d_v t_v` (from the
#: same releases, :func:`~ldpgraph.protocols.clustering.kernels.degree_weighted_triangles`; simulation only)
SIMULATED_STATISTICS = ("avg_clustering", "degree_weighted_triangles")
_ESTIMATORS = {"avg_clustering": average_clustering, "degree_weighted_triangles": degree_weighted_triangles}


def clustering_release(node: int, neighbours: NDArray[np.int64], broadcast: TriangleBroadcast,
                       epsilon_degree: float, epsilon_count: float, stream: Any) -> tuple[int, int]:
    """Round 2 at node v: ``(noisy degree, noisy local count)`` (see the module docstring)."""
    d, bound = neighbours.size, broadcast.bound
    kept = neighbours
    if d > bound:
        if not broadcast.projection:
            raise ValueError(f"node {node} has degree {d} > d_max = {bound} and the broadcast allows no "
                             "projection")
        kept = stream.subset(neighbours, bound)
    jj, kk = upper_pairs(kept.size)
    w = int(broadcast.noisy_bit(kept[jj], kept[kk]).sum())
    r = 2 * w - kept.size * (kept.size - 1) // 2
    d_noise = int(stream.dlap(epsilon_degree, 1.0, 1)[0])
    r_noise = int(stream.dlap(epsilon_count, float(count_sensitivity(bound, broadcast.projection)), 1)[0])
    return d + d_noise, r + r_noise


def _check_broadcast(broadcast: Any, plan: Plan) -> TriangleBroadcast:
    if not isinstance(broadcast, TriangleBroadcast) or broadcast.protocol != CLUSTERING_PROTOCOL:
        raise TypeError(f"round 2 needs the round-1 broadcast of {CLUSTERING_PROTOCOL!r}")
    pub, eps = plan.public, plan.release(RR_COUNT).epsilon
    bound = broadcast.bound if pub["private_bound"] else pub["d_max"]  # private: D from round 1
    if (broadcast.epsilon, broadcast.bound, broadcast.projection) != (eps, bound, pub["projection"]):
        raise ValueError(
            f"the broadcast (epsilon_rr {broadcast.epsilon!r}, D = {broadcast.bound}, projection "
            f"{broadcast.projection}) was not made under the plan ({plan.describe()}, D = {bound}, "
            f"projection {pub['projection']}): use the --epsilon and options of round 1"
        )
    return broadcast


class _FirstRound(RandomizedResponseRound):
    def broadcast(self, result: Any, plan: Plan) -> TriangleBroadcast:
        pub = plan.public
        bound = private_degree_bound(result.degrees) if pub["private_bound"] else pub["d_max"]
        return TriangleBroadcast.build(CLUSTERING_PROTOCOL, result.n_nodes, result.epsilon, bound,
                                       result.index, projection=pub["projection"])


class _LocalRound(Round):
    number = 2
    name = "local"

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        b = _check_broadcast(broadcast, plan)
        eps_d, eps_t = plan.release(DEGREE).epsilon, plan.release(LOCAL_COUNT).epsilon
        rows = round_two_rows(plan, nodes, neighbours, b, sampler, (DEGREE, LOCAL_COUNT),
                              lambda v, nb, s: clustering_release(v, nb, b, eps_d, eps_t, s))
        at = rows["quantity"] == LOCAL_COUNT
        rows["sensitivity"][at] = b.sensitivities()[LOCAL_COUNT]  # of the broadcast's D (private: noisy)
        return rows

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> Accumulator:
        return LocalCountAccumulator(plan, _check_broadcast(broadcast, plan), **options)


def round_two_sensitivities(broadcast: TriangleBroadcast) -> dict[str, float]:
    """Round 2's sensitivities: ``degree`` 1, ``local_count``
    :func:`~ldpgraph.protocols.clustering.kernels.count_sensitivity` of D and the projection, ``run_id`` 0.

    >>> round_two_sensitivities(TriangleBroadcast.build(CLUSTERING_PROTOCOL, 3, 1.0, 4, []))
    {'degree': 1.0, 'local_count': 3.0, 'run_id': 0.0}
    """
    return {DEGREE: 1.0, LOCAL_COUNT: float(count_sensitivity(broadcast.bound, broadcast.projection)),
            RUN_ID: 0.0}


@register
class AvgClustering(RRBroadcastProtocol):
    """``avg-clustering`` (see the module docstring)."""

    name = CLUSTERING_PROTOCOL
    version = 1
    wire = TriangleWire(round2=round_two_sensitivities, min_bound=2, projection=True, averaged=True)
    statistics = ("avg_clustering",)
    needs = "adjacency"
    reference = "ours (two rounds: RR, then noisy degree and local count)"
    unbiased = True  # also under projection, so with the private bound too
    presets = (
        # D = the true maximum degree (public, as in Imola et al.'s experiments), no projection
        Preset("avg-clustering-dlap", {"projection": False}, statistics=SIMULATED_STATISTICS),
        Preset("avg-clustering-dlap-private", {"private_bound": True}, statistics=SIMULATED_STATISTICS,
               no_std_error="the noisy degree bound (epsilon/10) makes the projection of the neighbour lists "
               "random, and no closed form of the variance over it is implemented; 'ldpgraph experiment' "
               "measures its RMSE over trials"),
    )
    options = (
        Option("d_max", int, None, "public bound D >= 2 on every node's degree (simulation default: the true "
               "maximum degree)"),
        Option("private_bound", bool, False, "D = max(2, max of the nodes' noisy degrees), released in "
               "round 1 at the degree_bound share; lists above D projected (the simulation's "
               "avg-clustering-dlap-private)"),
        Option("projection", bool, True, "nodes above D project their neighbour list to a uniform D-subset "
               "(sensitivity 2(D-1)), so no node refuses because of its degree (default); without it "
               "the sensitivity is D-1 and a node above D cannot release"),
        Option("shares", dict, None, "budget split rr=F,degree=F,local_count=F (default 0.3, 0.4, 0.3), with "
               "degree_bound=F for the private bound (default 0.1, 0.27, 0.36, 0.27)"),
    )

    def default_public(self, graph: Any, public: Any) -> dict[str, Any]:
        """The benchmark's public bound: the true maximum degree (at least 2); none with the private
        bound."""
        return {} if public.get("private_bound") else {"d_max": max(int(graph.degrees.max(initial=0)), 2)}

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        private, projection = bool(pub["private_bound"]), bool(pub["projection"])
        if private:
            default = {"degree_bound": 0.1, "rr": 0.27, "degree": 0.36, "local_count": 0.27}
            if pub["d_max"] is not None:
                raise ValueError(f"{self.name}: the private bound comes from round 1; a public d_max "
                                 f"({pub['d_max']}) is not used with private_bound")
            if not projection:
                raise ValueError(f"{self.name}: the private bound D is noisy, so the lists above it are "
                                 "projected: private_bound needs projection (drop --no-projection)")
            d = None
        else:
            default = {"rr": 0.3, "degree": 0.4, "local_count": 0.3}
            if pub["d_max"] is None:
                raise ValueError(f"{self.name} needs the public degree bound d_max (--d-max), or "
                                 "private_bound (--private-bound)")
            d = check_nonnegative_int(pub["d_max"], "d_max", minimum=2)
        shares = pub["shares"] or default
        if sorted(shares) != sorted(default):
            raise ValueError(f"shares of {self.name}{' (private bound)' if private else ''}: "
                             f"{','.join(f'{k}=F' for k in default)}, got {shares}")
        eps = split_budget(check_epsilon(epsilon), shares)
        first = [Release((RR_COUNT, RR_EDGE), "randomized-response", eps["rr"], 1.0, name="rr")]
        if private:
            first.append(Release((DEGREE_BOUND,), "dlap", eps["degree_bound"], 1.0, name="degree-bound"))
        # the local count's sensitivity follows the broadcast's D (NaN here when D is private)
        sens = float(count_sensitivity(d, projection)) if d else math.nan
        return Plan(self.name, self.version, epsilon, (
            RoundPlan(1, "rr", tuple(first)),
            RoundPlan(2, "local", (Release((DEGREE,), "dlap", eps["degree"], 1.0, name="degree"),
                                   Release((LOCAL_COUNT, RUN_ID), "dlap", eps["local_count"],
                                           {LOCAL_COUNT: sens, RUN_ID: 0.0}, name="local-count"))),
        ), {"d_max": d, "projection": projection, "private_bound": private})

    def rounds(self) -> tuple[Round, ...]:
        return (_FirstRound(), _LocalRound())

    def check_broadcast(self, broadcast: Any, plan: Plan) -> TriangleBroadcast:
        return _check_broadcast(broadcast, plan)

    # ---------------------------------------------------------------- simulation hooks

    def placeholder_public(self, public: Any = None) -> dict[str, Any]:
        return {} if (public or {}).get("private_bound") else {"d_max": 2}  # D moves no epsilon

    def simulation_options(self, public: Any) -> tuple[str, ...]:
        """The split; with a public bound also D and the projection (a private bound draws D, projects)."""
        return ("shares",) if public.get("private_bound") else ("d_max", "projection", "shares")

    @staticmethod
    def _epsilons(plan: Plan) -> dict[str, float]:
        """The plan's ε of the RR bits, the degree, the local count (and the private bound's)."""
        out = {"epsilon_rr": plan.release(RR_EDGE).epsilon, "epsilon_degree": plan.release(DEGREE).epsilon,
               "epsilon_triangles": plan.release(LOCAL_COUNT).epsilon}
        if plan.public["private_bound"]:
            out["epsilon_bound"] = plan.release(DEGREE_BOUND).epsilon
        return out

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: Any = None, *,
                 param: int | None = None) -> NDArray[np.float64]:
        """``n_trials`` estimates, each of a whole run at once
        (:func:`~ldpgraph.protocols.clustering.kernels.release_clustering_reports`, the deployed releases
        in law:
        ``tests/protocols/test_clustering.py``; with the private bound, the noisy degrees of round 1 and
        D drawn first, as :func:`~ldpgraph.protocols.clustering.kernels.private_degree_bound`). Also estimates
        ``degree_weighted_triangles`` from the same releases (simulation only).

        Examples
        --------
        >>> from ldpgraph.graph import from_edge_array
        >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
        >>> p = AvgClustering()
        >>> p.simulate(g, p.plan(600.0, d_max=3, projection=False), "avg_clustering", 2, 0).round(6).tolist()
        [0.583333, 0.583333]
        """
        if statistic not in SIMULATED_STATISTICS:
            raise ValueError(f"{self.name} simulates {', '.join(SIMULATED_STATISTICS)}, not {statistic!r}")
        from ...mechanisms import DiscreteLaplace

        pub, eps = plan.public, self._epsilons(plan)
        e0 = eps.pop("epsilon_bound", None)
        if not pub["projection"] and graph.n_nodes and int(graph.degrees.max()) > pub["d_max"]:
            v = int(np.argmax(graph.degrees))
            raise ValueError(f"{self.name}: node {v} has degree {int(graph.degrees[v])} > d_max = "
                             f"{pub['d_max']} and no projection (--no-projection): it cannot release; raise "
                             "--d-max or allow --projection")
        estimator = _ESTIMATORS[statistic]
        out = np.empty(n_trials)
        for t in range(n_trials):
            bound = pub["d_max"]
            if e0 is not None:
                bound = private_degree_bound(graph.degrees + DiscreteLaplace(epsilon=e0).sample(graph.n_nodes,
                                                                                                  rng=rng))
            rel = release_clustering_reports(graph, d_max=bound, projection=pub["projection"], rng=rng,
                                             oriented=self._oriented(graph), **eps)
            out[t] = estimator(rel, variance=False).value
        return out

    def prepare(self, graph: Any) -> None:
        self._oriented(graph)

    def _oriented(self, graph: Any) -> OrientedGraph:
        """:func:`~ldpgraph.protocols.clustering.kernels.oriented_graph` of ``graph`` (with its triangle
        counts), cached for the last graph (the trials of a cell reuse it)."""
        return self.per_graph("oriented", graph, oriented_graph)

    def moments(self, graph: Any, plan: Plan, statistic: str,
                param: int | None = None) -> tuple[float | None, float | None]:
        """The truth (unbiased, also under projection) and, without projection (every degree at most the
        public D), the exact variance
        (:func:`~ldpgraph.protocols.clustering.kernels.average_clustering_variance`); None with projection
        (its sampling variance has no closed form here) and so with the private bound."""
        from ..statistics import statistic_truth

        mean = statistic_truth(graph, statistic)
        pub = plan.public
        if pub["projection"] or (graph.n_nodes and int(graph.degrees.max()) > pub["d_max"]):
            return mean, None
        key = (statistic, pub["d_max"], tuple(self._epsilons(plan).values()))
        memo = getattr(self, "_memo", None)
        if memo is None or memo[0] is not graph or memo[1] != key:  # mean, then variance: one computation
            var = average_clustering_variance(graph, d_max=pub["d_max"], statistic=statistic,
                                              **self._epsilons(plan))
            self._memo = memo = (graph, key, var)
        return mean, memo[2]

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """Up: a bit per lower pair ((n - 1)/2 on average) and 8 bytes per released integer (three with the
        private bound); down: the noisy graph as an edge list (2 ceil(log2 n) bits per expected noisy edge)
        and 8 bytes for a broadcast private bound."""
        n, extra = graph.n_nodes, (8.0 if plan.public["private_bound"] else 0.0)
        up = (n - 1) / 16.0 + 16.0 + extra
        down = noisy_graph_bits(n, expected_noisy_edges(n, graph.n_edges, plan.release(RR_EDGE).epsilon))
        return up, down / 8.0 + extra

    def describe_result(self, result: Any, round: Round) -> list[str]:
        lines = super().describe_result(result, round)
        if round.number == 1 and result.degrees is not None:
            line = (f"degree_bound private bound D = {private_degree_bound(result.degrees)} (max(2, their "
                    "maximum))")
            sc = result.screening.get(DEGREE_BOUND)
            if sc is not None:
                line += screened_bound_text(sc, f"[{sc.lo:,}, {sc.hi:,}]", 2)
            lines.append(line)
        return lines
