r"""The deployable 4-cycle protocols: ``rr-four-cycles`` (one round) and ``two-round-four-cycles-dlap``.

================ =============================================================================
round            node v releases
================ =============================================================================
1 ``rr``         RR at ε₁ on its lower adjacency bits (:class:`~ldpgraph.protocols.triangles.rr_triangles.
                 RandomizedResponseRound`; ``rr-four-cycles`` stops here, ε₁ = ε)
broadcast        the noisy graph, n, ε₁, the public degree bound d_max and a run id
                 (:class:`~ldpgraph.protocols.deploy_triangles.TriangleBroadcast`; file form: the
                 packed bits). The sensitivity S is a function of it (:func:`broadcast_sensitivity`):
                 every party computes it from the broadcast
2 ``local-count`` :math:`r_v = \lfloor f_v + U\rfloor + \mathrm{DLap}(e^{-\varepsilon_2/S})`,
                 :math:`f_v = \sum_{u<w \in N_v} (Z_{uw} - 1)` over the neighbour list projected
                 to a uniform d_max-subset when longer; and the run id
================ =============================================================================

Curator: ``rr-four-cycles``: :func:`~ldpgraph.protocols.four_cycles.kernels.rr_four_cycle_estimate`;
``two-round-four-cycles-dlap``: :math:`\hat C_4 = \frac14 \sum_v r_v`, unbiased (without
projection), without a standard error (the RR part of its exact variance needs the true
graph; :func:`~ldpgraph.protocols.four_cycles.kernels.two_round_noise_variance` is the DLap part).
Proofs (unbiasedness, sensitivity S, variance) in :mod:`ldpgraph.protocols.four_cycles.kernels`.
Default split ε₁ = 2ε/3, ε₂ = ε/3 (``shares``).

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> from ldpgraph.run import run_in_memory
>>> g = from_edge_array([[0, 1], [1, 2], [2, 3], [3, 0]])
>>> round(run_in_memory("rr-four-cycles", g, 60.0, sampler=0).estimate.value, 6)
1.0
>>> TwoRoundFourCycles().plan(1.0, d_max=3).describe()
'epsilon 1 = rr 0.6667 + local-count 0.3333'
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
from ..curator import Estimate
from ..deploy_triangles import (
    FOUR_CYCLE_PROTOCOL,
    LOCAL_COUNT,
    RR_COUNT,
    RR_EDGE,
    RR_FOUR_CYCLES,
    RUN_ID,
    TriangleBroadcast,
    TriangleWire,
)
from ..randomized_response import flip_probability, keep_probability, noisy_lower_pairs, upper_pairs
from ..registry import register
from ..triangles.rr_triangles import RandomizedResponseRound, RRTrianglesProtocol
from ..triangles.two_round import LocalCountAccumulator, RRBroadcastProtocol, round_two_rows
from .kernels import (
    cached_z_and_sensitivity,
    four_cycle_sensitivity,
    rr_four_cycle_estimate_and_variance,
    rr_four_cycle_variance,
    simulate_rr_four_cycles,
    simulate_two_round_four_cycles,
    simulation_limit_text,
    two_round_noise_variance,
    two_round_rr_variance,
    z_matrix,
)

__all__ = ["RRFourCyclesProtocol", "TwoRoundFourCycles", "broadcast_sensitivity", "four_cycle_release"]


def _z(b: TriangleBroadcast) -> tuple[NDArray[np.float64], int]:
    return cached_z_and_sensitivity(b.run_id, b.n_nodes, b.epsilon, b.bound, b.index)


def broadcast_sensitivity(broadcast: TriangleBroadcast) -> int:
    """S of the broadcast (:func:`~ldpgraph.protocols.four_cycles.kernels.four_cycle_sensitivity` of its Z).

    >>> b = TriangleBroadcast.build(FOUR_CYCLE_PROTOCOL, 3, 50.0, 2, np.array([0, 2]))  # path 0-1-2
    >>> broadcast_sensitivity(b)   # |Z_01 - 1| = |Z_12 - 1| = 1: S = 1 + 1
    2
    """
    return _z(broadcast)[1]


def four_cycle_release(node: int, neighbours: NDArray[np.int64], broadcast: TriangleBroadcast,
                       epsilon: float, stream: Any, size: int | None = None) -> Any:
    """Round 2 at node v: the integer :math:`r_v` (see the module docstring); with ``size``, that
    many independent releases (an int64 array; the draws of ``size=None`` in the same order)."""
    z, s = _z(broadcast)
    runs = 1 if size is None else int(size)
    f = np.empty(runs)
    for t in range(runs if neighbours.size > broadcast.bound else 1):
        kept = neighbours
        if kept.size > broadcast.bound:
            kept = stream.subset(kept, broadcast.bound)
        i, j = upper_pairs(kept.size)
        f[t:] = math.fsum((z[kept[i], kept[j]] - 1.0).tolist())
    rounded = np.floor(f + stream.uniform(runs)).astype(np.int64)
    out = rounded + stream.dlap(epsilon, float(s), runs)
    return int(out[0]) if size is None else out


def _check_broadcast(broadcast: Any, plan: Plan) -> TriangleBroadcast:
    if not isinstance(broadcast, TriangleBroadcast) or broadcast.protocol != FOUR_CYCLE_PROTOCOL:
        raise TypeError(f"round 2 needs the round-1 broadcast of {FOUR_CYCLE_PROTOCOL!r}")
    eps, d = plan.release(RR_COUNT).epsilon, plan.public["d_max"]
    if (broadcast.epsilon, broadcast.bound) != (eps, d):
        raise ValueError(
            f"the broadcast (epsilon_rr {broadcast.epsilon!r}, d_max {broadcast.bound}) was not made "
            f"under the plan ({plan.describe()}, d_max {d}): use the --epsilon and options of round 1"
        )
    return broadcast


class _FirstRound(RandomizedResponseRound):
    def broadcast(self, result: Any, plan: Plan) -> TriangleBroadcast:
        return TriangleBroadcast.build(FOUR_CYCLE_PROTOCOL, result.n_nodes, result.epsilon,
                                       plan.public["d_max"], result.index)


class _LocalRound(Round):
    number = 2
    name = "local-count"

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        b = _check_broadcast(broadcast, plan)
        eps = plan.release(LOCAL_COUNT).epsilon
        rows = round_two_rows(plan, nodes, neighbours, b, sampler, (LOCAL_COUNT,),
                              lambda v, nb, s: (four_cycle_release(v, nb, b, eps, s),))
        rows["sensitivity"][0::2] = float(broadcast_sensitivity(b))
        return rows

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> Accumulator:
        return LocalCountAccumulator(plan, _check_broadcast(broadcast, plan), **options)


def round_two_sensitivities(broadcast: TriangleBroadcast) -> dict[str, float]:
    """Round 2's sensitivities: ``local_count`` S, a function of the noisy graph
    (:func:`~ldpgraph.protocols.four_cycles.kernels.cached_z_and_sensitivity`), ``run_id`` 0."""
    b = broadcast
    s = cached_z_and_sensitivity(b.run_id, b.n_nodes, b.epsilon, b.bound, b.index)[1]
    return {LOCAL_COUNT: float(s), RUN_ID: 0.0}


@register
class RRFourCyclesProtocol(RRTrianglesProtocol):
    """``rr-four-cycles``: one round of RR (as ``rr-triangles``), the curator's unbiased 4-cycle inversion."""

    name = RR_FOUR_CYCLES
    statistics = ("four_cycles",)
    reference = "ours (RR as Imola et al. USENIX 2021; unbiased 4-cycle inversion)"
    model = "local, one round"
    unbiased = True
    vectorized = False
    #: the largest graph it simulates or estimates on, and why (``ldpgraph methods``)
    size_limit = simulation_limit_text(RR_FOUR_CYCLES)
    #: README: 0.043 on Facebook at epsilon 1, ~40 times more accurate than WLocal
    presets = (Preset(RR_FOUR_CYCLES, recommended=("four_cycles",)),)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Estimate:
        self.check_statistic(statistic)
        value, var = rr_four_cycle_estimate_and_variance(result.n_nodes, result.index, result.epsilon)
        return Estimate(value, math.sqrt(max(var, 0.0)), var, "four_cycles")

    def one_node_bounds(self, result: Any, plan: Plan, round: Round) -> dict[str, float]:
        return {}

    # ---------------------------------------------------------------- simulation hooks

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: Any = None, *,
                 param: int | None = None) -> NDArray[np.float64]:
        """``n_trials`` estimates
        (:func:`~ldpgraph.protocols.four_cycles.kernels.simulate_rr_four_cycles` at the
        plan's RR epsilon).

        Examples
        --------
        >>> from ldpgraph.graph import from_edge_array
        >>> g = from_edge_array([[0, 1], [1, 2], [2, 3], [3, 0]])
        >>> p = RRFourCyclesProtocol()
        >>> p.simulate(g, p.plan(40.0), "four_cycles", 2, np.random.default_rng(0)).round(6).tolist()
        [1.0, 1.0]
        """
        self.check_statistic(statistic)
        return simulate_rr_four_cycles(graph, plan.release(RR_EDGE).epsilon, n_trials, rng=rng)

    def moments(self, graph: Any, plan: Plan, statistic: str,
                param: int | None = None) -> tuple[float | None, float | None]:
        """The truth (unbiased) and the exact variance
        (:func:`~ldpgraph.protocols.four_cycles.kernels.rr_four_cycle_variance`)."""
        from ...graph.cycles import four_cycle_count

        self.check_statistic(statistic)
        eps = plan.release(RR_EDGE).epsilon
        memo = getattr(self, "_memo", None)
        if memo is None or memo[0] is not graph or memo[1] != eps:
            moments = (float(four_cycle_count(graph)), rr_four_cycle_variance(graph, eps))
            self._memo = memo = (graph, eps, moments)
        return memo[2]

    def truth(self, graph: Any, statistic: str, param: int | None = None) -> float:
        from ...graph.cycles import four_cycle_count

        self.check_statistic(statistic)
        return float(four_cycle_count(graph))

    def edge_budget(self, epsilon: float, public: Any) -> str:
        return ""

    def simulation_options(self, public: Any) -> tuple[str, ...]:
        return ()  # degree_share releases a degree the 4-cycle estimate does not read

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """A bit per lower pair ((n - 1)/2 on average) up; nothing down."""
        return (graph.n_nodes - 1) / 16.0, 0.0


@register
class TwoRoundFourCycles(RRBroadcastProtocol):
    """``two-round-four-cycles-dlap`` (see the module docstring)."""

    name = FOUR_CYCLE_PROTOCOL
    version = 1
    wire = TriangleWire(round2=round_two_sensitivities)
    statistics = ("four_cycles",)
    needs = "adjacency"
    reference = "ours; two rounds after Local2Rounds (Imola, Murakami, Chaudhuri, USENIX Security 2021)"
    model = "local, two rounds"
    unbiased = True
    #: the largest graph it simulates or estimates on, and why (``ldpgraph methods``)
    size_limit = simulation_limit_text(FOUR_CYCLE_PROTOCOL)
    #: the only two-round 4-cycle method (README: 0.24 on Facebook at epsilon 1)
    presets = (Preset(FOUR_CYCLE_PROTOCOL, recommended=("four_cycles",)),)
    options = (
        Option("d_max", int, None, "public bound on every node's degree; longer lists are projected to a "
               "uniform d_max-subset (simulation default: the true maximum degree)"),
        Option("shares", dict, None, "budget split rr=F,local_count=F (default 2/3, 1/3)"),
    )

    def default_public(self, graph: Any, public: Any) -> dict[str, Any]:
        return {"d_max": max(int(graph.degrees.max(initial=0)), 1)}

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        if pub["d_max"] is None:
            raise ValueError(f"{self.name} needs the public degree bound d_max (--d-max)")
        d = check_nonnegative_int(pub["d_max"], "d_max", minimum=1)
        default = {"rr": 2.0 / 3.0, "local_count": 1.0 / 3.0}
        shares = pub["shares"] or default
        if sorted(shares) != sorted(default):
            raise ValueError(f"shares of {self.name}: rr=F,local_count=F, got {shares}")
        eps = split_budget(check_epsilon(epsilon), shares)
        # the local count's sensitivity S follows the broadcast (a function of the noisy graph)
        second = Release((LOCAL_COUNT, RUN_ID), "dlap", eps["local_count"],
                         {LOCAL_COUNT: math.nan, RUN_ID: 0.0})
        return Plan(self.name, self.version, epsilon, (
            RoundPlan(1, "rr", (Release((RR_COUNT, RR_EDGE), "randomized-response", eps["rr"], 1.0),)),
            RoundPlan(2, "local-count", (second,)),
        ), {"d_max": d})

    def rounds(self) -> tuple[Round, ...]:
        return (_FirstRound(), _LocalRound())

    def check_broadcast(self, broadcast: Any, plan: Plan) -> TriangleBroadcast:
        return _check_broadcast(broadcast, plan)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Estimate:
        self.check_statistic(statistic)
        r = result.values()[LOCAL_COUNT]
        # no standard error: the DLap part, n 2a/(1-a)^2 / 16, is known, but the RR part of the
        # variance needs the true graph (an interval from the noise alone would be too narrow)
        return Estimate(float(r.sum(dtype=np.int64)) / 4.0, None, None, "four_cycles", note=(
            "the RR part of its variance is a polynomial in the true graph's bits (module "
            "four_cycles) whose unbiased estimate from the broadcast is not implemented, and the "
            "projection to d_max biases it; 'ldpgraph experiment' measures its RMSE"))

    def screening(self, result: Any, round: Round) -> dict[str, Any]:
        return dict(result.screening) if round.number == 1 else {}

    def one_node_bounds(self, result: Any, plan: Plan, round: Round) -> dict[str, float]:
        return {}

    # ---------------------------------------------------------------- simulation hooks

    def placeholder_public(self, public: Any = None) -> dict[str, Any]:
        return {"d_max": 1}  # d_max moves S, not the split

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: Any = None, *,
                 param: int | None = None) -> NDArray[np.float64]:
        """``n_trials`` estimates
        (:func:`~ldpgraph.protocols.four_cycles.kernels.simulate_two_round_four_cycles`: the noisy graph,
        S and the local counts of every node at once; ``tests/test_fast_simulator_laws.py`` tests its law
        against the rows).

        Examples
        --------
        >>> from ldpgraph.graph import from_edge_array
        >>> g = from_edge_array([[0, 1], [1, 2], [2, 3], [3, 0]])
        >>> p = TwoRoundFourCycles()
        >>> p.simulate(g, p.plan(200.0, d_max=2), "four_cycles", 2, np.random.default_rng(0)).round(6)
        array([1., 1.])
        """
        self.check_statistic(statistic)
        e1, e2 = plan.release(RR_EDGE).epsilon, plan.release(LOCAL_COUNT).epsilon
        return simulate_two_round_four_cycles(graph, e1, e2, plan.public["d_max"], n_trials, rng=rng)

    def moments(self, graph: Any, plan: Plan, statistic: str,
                param: int | None = None) -> tuple[float | None, float | None]:
        """The truth (unbiased: the simulation projects no list) and the exact RR variance plus the noise's
        at the S of a reference draw of the noisy graph (S is random: an approximation)."""
        from ...graph.cycles import four_cycle_count

        self.check_statistic(statistic)
        e1, e2, d = plan.release(RR_EDGE).epsilon, plan.release(LOCAL_COUNT).epsilon, plan.public["d_max"]
        memo = getattr(self, "_memo", None)
        if memo is None or memo[0] is not graph or memo[1] != (e1, e2, d):
            _, index = noisy_lower_pairs(graph, keep_probability(e1), flip_probability(e1), rng=0)
            s = four_cycle_sensitivity(z_matrix(graph.n_nodes, index, e1), d)
            var = (two_round_rr_variance(graph, e1) + two_round_noise_variance(graph.n_nodes, e2, s)) / 16.0
            self._memo = memo = (graph, (e1, e2, d), (float(four_cycle_count(graph)), var))
        return memo[2]

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """A bit per lower pair ((n - 1)/2 on average) and the 8-byte count up; nothing counted down."""
        return (graph.n_nodes - 1) / 16.0 + 8.0, 0.0
