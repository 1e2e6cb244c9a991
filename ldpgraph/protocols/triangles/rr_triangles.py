r"""``rr-triangles``: one round of randomized response on the lower adjacency bits; the curator counts.

Node v holds the bits :math:`a_{vj}` towards its lower nodes ``j = 0..v-1`` and sends each
through Warner's randomized response at ε (kept with probability
:math:`p = e^\varepsilon/(1+e^\varepsilon)`, else flipped). Rows (report format, version 1):
one ``rr_count`` row (k, the number of noisy 1 bits) then k ``rr_edge`` rows (the partners
j < v whose noisy bit is 1, sorted). ε-edge-LDP: one edge {v, j} changes one bit of the higher
endpoint only, each bit's likelihood ratio is :math:`e^{\pm\varepsilon}`, and listing the 1 bits
is a bijection of the bit vector (v is public).

Curator: the noisy graph (:class:`RandomizedResponseRound`'s accumulator), then the unbiased
estimate of Imola, Murakami and Chaudhuri (USENIX Security 2021) from its triple classes,
with its variance estimate (:func:`~ldpgraph.protocols.deploy_triangles.rr_triangles_estimate`).

:class:`RandomizedResponseRound` is also round 1 of the two-round protocols
(:mod:`ldpgraph.protocols.triangles.two_round`), optionally with a ``lower_degree`` release.

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> from ldpgraph.run import run_in_memory
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> round(run_in_memory("rr-triangles", g, 60.0, sampler=0).estimate.value, 6)
1.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon
from ...core.plan import Plan, Release, RoundPlan, split_budget
from ...core.protocol import Accumulator, Option, Preset, Protocol, Round
from ...core.rows import Rows, concat_rows, empty_rows, quantity_rows
from ...core.sampling import Sampler
from ..deploy_triangles import (
    DEGREE,
    DEGREE_BOUND,
    LOWER_DEGREE,
    RR_COUNT,
    RR_EDGE,
    Round1Accumulator,
    TriangleWire,
    rr_triangles_estimate,
)
from ..randomized_response import DEFAULT_MAX_BYTES
from ..registry import register

__all__ = ["RandomizedResponseRound", "RoundOneAccumulator", "RRTrianglesProtocol", "rr_release",
           "DEGREE_SHARE", "split_with_degree", "transitivity_release_estimate", "TriangleSimulation"]

#: the simulation's share of the degree release under ``--stat transitivity``
DEFAULT_DEGREE_SHARE = 0.1
DEGREE_SHARE = Option("degree_share", float, None, "also release the degree d_v + DLap at this share of the "
                      "budget (the rest split by the shares), for the transitivity statistic "
                      "(the simulation's 0.1; estimate and experiment take it from the statistic, "
                      "node and curate need it given)")


def split_with_degree(epsilon: float, shares: dict[str, float], degree_share: Any) -> dict[str, float]:
    """``epsilon`` split by ``shares``, after ``degree_share`` of it (when not None) on ``degree``.

    >>> split_with_degree(1.0, {"rr": 0.5, "local_count": 0.5}, 0.1)
    {'degree': 0.1, 'rr': 0.45, 'local_count': 0.45}
    """
    if degree_share is None:
        return split_budget(epsilon, shares)
    s = float(degree_share)
    if not 0.0 < s < 1.0:
        raise ValueError(f"degree_share must be in (0, 1), got {degree_share!r}")
    return split_budget(epsilon, {"degree": s, **{k: v * (1.0 - s) for k, v in shares.items()}})


def transitivity_release_estimate(triangles: Any, degrees: Any, plan: Plan) -> Any:
    r""":math:`\hat\tau = 3\hat T/\hat S_2` from the triangle estimate and the nodes' ``degree`` releases
    (in node order), with the delta-method standard error (:func:`~ldpgraph.protocols.triangles.transitivity.
    transitivity_from_estimates`); ValueError when the nodes released no degree (``degrees`` None)."""
    from ..curator import Estimate
    from .transitivity import transitivity_from_estimates

    if degrees is None:
        raise ValueError(f"transitivity needs the nodes' degree releases: run {plan.protocol} node and "
                         f"curate with --degree-share F (the simulation spends {DEFAULT_DEGREE_SHARE})")
    eps_d = plan.release(DEGREE).epsilon
    tau, var = transitivity_from_estimates(triangles.value, triangles.variance_estimate, degrees, eps_d)
    note = triangles.note
    if var is None and note is None:
        note = ("the triangle estimate has no variance estimate" if triangles.variance_estimate is None else
                "the two-star estimate is <= 0: no ratio")
    se = None if var is None else math.sqrt(max(var, 0.0))
    return Estimate(tau, se, var, "transitivity", note=note, se_kind="delta")


class TriangleSimulation:
    r"""The simulation hooks the triangle protocols share (a mix-in before :class:`Protocol`).

    A protocol gives ``simulate_triangles(graph, plan, n_trials, rng)``, ``triangle_moments(graph,
    plan)`` (``(mean, variance)`` or ``(None, None)``) and ``triangle_bytes(plan, graph)``, each
    reading its ε from ``plan``. Transitivity composes them with the plan's ``degree`` release (the
    ``degree_share`` the statistic implies, :meth:`statistic_public`): per trial the degrees plus
    DLap at that release's ε, the ratio :math:`3\hat T/\hat S_2` and its delta-method variance
    (:mod:`ldpgraph.protocols.triangles.transitivity`). ``bytes_per_wedge`` > 0: the protocol sums over the
    lower wedges: a table of them on a small graph (:meth:`lower_wedges`), else their
    :meth:`wedge_patterns` and the scaled simulators (:meth:`uses_table`).
    """

    unbiased = True
    #: the degree share comes with the statistic (transitivity), not from the user
    simulation_draws: tuple[str, ...] = ("degree_share",)
    #: peak bytes per lower wedge of a trial (0: the protocol enumerates none)
    bytes_per_wedge = 0
    #: memory bound of the table of wedges (beyond it the scaled simulators); None: no bound
    max_bytes: int | None = DEFAULT_MAX_BYTES
    #: the most lower wedges a table is built for (beyond: :meth:`wedge_patterns` and streamed bits, whose
    #: prepare costs more on a small graph and whose trials cost less on a large one)
    table_max_wedges: int = 1 << 21

    def statistic_public(self, statistic: str) -> dict[str, Any]:
        """Transitivity needs the degree release: ``degree_share`` 0.1 as the simulation's."""
        return {"degree_share": DEFAULT_DEGREE_SHARE} if statistic == "transitivity" else {}

    def simulate_triangles(self, graph: Any, plan: Plan, n_trials: int, rng: Any) -> NDArray[np.float64]:
        raise NotImplementedError

    def triangle_moments(self, graph: Any, plan: Plan) -> tuple[float | None, float | None]:
        raise NotImplementedError

    def triangle_bytes(self, plan: Plan, graph: Any) -> tuple[float, float]:
        raise NotImplementedError

    def lower_wedges(self, graph: Any) -> Any:
        """:func:`~ldpgraph.protocols.triangles.kernels.lower_wedges` of ``graph``, cached for the last two
        graphs (the trials of a cell reuse them)."""
        from .kernels import lower_wedges, wedge_memory_check

        cache = self.__dict__.setdefault("_wedge_cache", [])
        for g, w in cache:
            if g is graph:
                return w
        wedge_memory_check(graph, self.max_bytes, method=self.name, bytes_per_wedge=self.bytes_per_wedge)
        w = lower_wedges(graph)
        self._wedge_cache = [(graph, w), *cache[:1]]
        return w

    def uses_table(self, graph: Any) -> bool:
        """Whether the trials on ``graph`` read the table of its lower wedges (:meth:`lower_wedges`: at most
        ``table_max_wedges`` of them, within ``max_bytes``) rather than its :meth:`wedge_patterns` and the
        streamed bits (the scaled simulators: same law, memory bounded whatever the graph)."""
        memo = self.__dict__.get("_wedge_count")
        if memo is None or memo[0] is not graph:
            memo = self._wedge_count = (graph, _lower_wedge_count(graph))
        return memo[1] <= self.table_max_wedges and self.table_fits(graph)

    def table_fits(self, graph: Any) -> bool:
        """Whether the table of ``graph``'s lower wedges fits in ``max_bytes`` (the exact moments of the
        projected and private cases read it, even where the trials stream)."""
        memo = self.__dict__.get("_wedge_count")
        if memo is None or memo[0] is not graph:
            memo = self._wedge_count = (graph, _lower_wedge_count(graph))
        need = self.bytes_per_wedge * memo[1] + 64 * graph.indices.size
        return self.max_bytes is None or need <= self.max_bytes

    def wedge_patterns(self, graph: Any) -> Any:
        """:func:`~ldpgraph.protocols.triangles.kernels.wedge_patterns` of ``graph``, cached for the last two
        graphs."""
        from .kernels import wedge_patterns

        cache = self.__dict__.setdefault("_pattern_cache", [])
        for g, pt in cache:
            if g is graph:
                return pt
        pt = wedge_patterns(graph, groups=False)
        self._pattern_cache = [(graph, pt), *cache[:1]]
        return pt

    def prepare(self, graph: Any) -> None:
        if self.bytes_per_wedge:
            if self.uses_table(graph):
                self.lower_wedges(graph)
            else:
                self.prepare_patterns(graph, self.wedge_patterns(graph))

    def prepare_patterns(self, graph: Any, patterns: Any) -> None:
        """What the scaled simulator's trials read of :meth:`wedge_patterns`, computed once: the groups
        of the closing pairs (a protocol whose trials stream the wedges computes their edge flags)."""
        patterns.group_c  # noqa: B018 (computes and caches the groups)

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: Any, *,
                 param: int | None = None) -> NDArray[np.float64]:
        """``n_trials`` estimates: the triangle simulation, for transitivity with a degree release."""
        from .transitivity import simulate_transitivity

        stat = self.check_statistic(statistic)
        t_hat = self.simulate_triangles(graph, plan, n_trials, rng)
        if stat == "triangles":
            return t_hat
        return simulate_transitivity(graph, t_hat, _degree_epsilon(plan), rng)

    def moments(self, graph: Any, plan: Plan, statistic: str,
                param: int | None = None) -> tuple[float | None, float | None]:
        """The triangle estimate's exact moments; for transitivity the ratio's delta-method ones."""
        from .transitivity import transitivity_moments

        stat = self.check_statistic(statistic)
        memo = self.__dict__.get("_moments_memo")
        key = [rp for rp in plan.rounds], dict(plan.public)
        if memo is not None and memo[0] is graph and memo[1] == key:
            mean_t, var_t = memo[2]
        else:  # the analytic mean, variance and RMSE are asked for one after the other
            mean_t, var_t = self.triangle_moments(graph, plan)
            self._moments_memo = (graph, key, (mean_t, var_t))
        if stat == "triangles" or mean_t is None or var_t is None:
            return mean_t, var_t
        return transitivity_moments(graph, mean_t, var_t, _degree_epsilon(plan))

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """Up: one bit per lower pair (node v reports v bits, (n - 1)/2 on average) and 8 bytes per
        released number; down: a two-round protocol's noisy graph as an edge list (2 ceil(log2 n)
        bits per expected noisy edge) and 8 bytes per broadcast bound."""
        up, down = self.triangle_bytes(plan, graph)
        return up + (8.0 if _has_degree(plan) else 0.0), down


def _lower_wedge_count(graph: Any) -> int:
    """:math:`\\sum_v \\binom{d^-_v}2` of ``graph``."""
    rows = np.repeat(np.arange(graph.n_nodes, dtype=np.int64), np.diff(graph.indptr))
    dl = np.bincount(rows[graph.indices < rows], minlength=graph.n_nodes).astype(np.int64)
    return int(np.dot(dl, dl - 1)) // 2


def _has_degree(plan: Plan) -> bool:
    return any(DEGREE in rel.quantities for rp in plan.rounds for rel in rp.releases)


def _degree_epsilon(plan: Plan) -> float:
    if not _has_degree(plan):
        raise ValueError(f"transitivity needs the degree release: a plan of {plan.protocol} with "
                         "degree_share")
    return plan.release(DEGREE).epsilon


def rr_release(node: int, neighbours: NDArray[np.int64], epsilon: float, stream: Any) -> NDArray[np.int64]:
    """The lower nodes j < ``node`` whose randomized-response bit is 1 (sorted)."""
    bits = np.zeros(int(node), dtype=np.bool_)
    bits[neighbours[neighbours < node]] = True
    return np.flatnonzero(bits == stream.keep(epsilon, int(node))).astype(np.int64)


class RoundOneAccumulator(Accumulator):
    """Round-1 rows validated into the noisy graph (a :class:`Round1Summary`), checked against the plan."""

    def __init__(self, plan: Plan, **options: Any) -> None:
        self.plan = plan
        sens = {q: plan.release(q).sensitivity_of(q) for q in _quantities(plan, 1)}
        self.acc = Round1Accumulator(plan.protocol, quantities=sens, version=plan.version, **options)

    def add(self, chunk: Any) -> None:
        self.acc.add(chunk)

    def merge(self, other: RoundOneAccumulator) -> RoundOneAccumulator:
        self.acc.merge(other.acc)
        return self

    def result(self) -> Any:
        summary = self.acc.summary()
        check_row_epsilons(self.plan, {q: e for q, (e, _) in self.acc.epsilon.items()})
        return summary


def check_row_epsilons(plan: Plan, seen: dict[str, float]) -> None:
    """ValueError when the rows' ε of a quantity is not the plan's (the printed budget is the plan's)."""
    for q, eps in seen.items():
        want = plan.release(q).epsilon
        if eps != want:
            raise ValueError(
                f"the {q} rows were released at epsilon {eps!r}, but the plan ({plan.describe()}) gives "
                f"{want!r}: curate with the nodes' --epsilon and options"
            )


class RandomizedResponseRound(Round):
    """Round 1: RR on the lower adjacency bits (``rr_count``, ``rr_edge``), optionally a noisy lower
    degree and a noisy degree (``degree`` or ``degree_bound``; DLap at sensitivity 1, drawn after the
    bits on the node's round-1 stream)."""

    number = 1
    name = "rr"

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        eps = plan.release(RR_COUNT).epsilon
        low_eps = plan.release(LOWER_DEGREE).epsilon if LOWER_DEGREE in _quantities(plan, 1) else None
        # rr-triangles (transitivity): ``degree``; avg-clustering's private bound: ``degree_bound``
        deg_q = next((q for q in (DEGREE, DEGREE_BOUND) if q in _quantities(plan, 1)), None)
        deg_eps = None if deg_q is None else plan.release(deg_q).epsilon
        partner_lists, lower, degree = [], [], []
        for v, nb in zip(nodes, neighbours, strict=True):
            v = int(v)
            stream = sampler.stream(1, v)
            partner_lists.append(self.thin(plan, rr_release(v, nb, eps, stream), stream))
            if low_eps is not None:
                lower.append(int(np.count_nonzero(nb < v)) + int(stream.dlap(low_eps, 1.0, 1)[0]))
            if deg_eps is not None:  # the degree, after the bits' draws
                degree.append(int(nb.size) + int(stream.dlap(deg_eps, 1.0, 1)[0]))
        if not partner_lists:
            return empty_rows(plan, 1)
        # per node: its count row, then one row per partner
        counts = np.array([x.size for x in partner_lists], dtype=np.int64)
        node_col = np.repeat(np.asarray(nodes, dtype=np.int64), counts + 1)
        starts = np.cumsum(counts + 1) - (counts + 1)
        value = np.empty(node_col.size, dtype=np.int64)
        is_edge = np.ones(node_col.size, dtype=np.bool_)
        is_edge[starts] = False
        value[starts] = counts
        value[is_edge] = np.concatenate(partner_lists)
        quantity = np.full(node_col.size, RR_EDGE, dtype=object)
        quantity[starts] = RR_COUNT
        parts = [quantity_rows(plan, 1, node_col, quantity, value)]
        for q, vals in ((LOWER_DEGREE, lower), (deg_q, degree)):
            if vals:
                parts.append(quantity_rows(plan, 1, np.asarray(nodes), q, vals))
        return concat_rows(parts)

    def thin(self, plan: Plan, partners: NDArray[np.int64], stream: Any) -> NDArray[np.int64]:
        """The reported partners among the randomized-response 1s (all of them here; a subclass
        may sample them, a post-processing drawn after the bits from the same stream)."""
        return partners

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> RoundOneAccumulator:
        return RoundOneAccumulator(plan, **options)


def _quantities(plan: Plan, round: int) -> set[str]:
    return {q for rel in plan.round(round).releases for q in rel.quantities}


def rr_round_plan(epsilon: float) -> RoundPlan:
    """Round 1's plan: one randomized-response release of the bit vector at ``epsilon``."""
    return RoundPlan(1, "rr", (Release((RR_COUNT, RR_EDGE), "randomized-response", epsilon, 1.0, name="rr"),))


@register
class RRTrianglesProtocol(TriangleSimulation, Protocol):
    """``rr-triangles`` (see the module docstring).

    The simulation draws one noisy graph per trial
    (:func:`~ldpgraph.protocols.triangles.kernels.simulate_rr_triangles`; MemoryError naming the two-round
    protocols where it would not fit in ``max_bytes``).

    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> p = RRTrianglesProtocol()
    >>> p.simulate(g, p.plan(40.0), "triangles", 2, np.random.default_rng(0)).round(6).tolist()
    [1.0, 1.0]
    >>> p.moments(g, p.plan(40.0), "triangles")[0], p.communication(p.plan(1.0), g)
    (1.0, (0.1875, 0.0))
    """

    name = "rr-triangles"
    version = 1
    wire = TriangleWire()
    statistics = ("triangles", "transitivity")
    needs = "adjacency"
    reference = "Imola, Murakami, Chaudhuri, USENIX Security 2021 (RR, empirical estimation)"
    model = "local, one round"
    #: the most accurate one-round method (README: 0.060 on Facebook at epsilon 1, against WLocal's
    #: ~0.5 scale errors); it holds the noisy graph, so it refuses graphs whose noisy graph would not fit
    presets = (Preset("rr-triangles", recommended=("triangles", "transitivity")),)
    options = (DEGREE_SHARE,)

    @property
    def size_limit(self) -> str:
        """What ``ldpgraph methods`` says of the graphs it simulates (and why)."""
        from .kernels import RR_SIZE_LIMIT_WHY, rr_max_nodes

        return (f"simulated up to about {rr_max_nodes(1.0, self.max_bytes or 2**62):,} nodes at epsilon 1 "
                f"(more at larger epsilon), because {RR_SIZE_LIMIT_WHY}")

    def simulate_triangles(self, graph: Any, plan: Plan, n_trials: int, rng: Any) -> NDArray[np.float64]:
        from .kernels import simulate_rr_triangles

        return simulate_rr_triangles(graph, plan.release(RR_COUNT).epsilon, n_trials, rng=rng,
                                     max_bytes=self.max_bytes)

    def triangle_moments(self, graph: Any, plan: Plan) -> tuple[float, float]:
        from ...graph.statistics import triangle_count
        from .kernels import rr_triangle_variance

        return float(triangle_count(graph)), rr_triangle_variance(graph, plan.release(RR_COUNT).epsilon)

    def triangle_bytes(self, plan: Plan, graph: Any) -> tuple[float, float]:
        return (graph.n_nodes - 1) / 16.0, 0.0

    def plan(self, epsilon: float, **public: Any) -> Plan:
        share = self.check_public(public)["degree_share"]
        eps = check_epsilon(epsilon)
        if share is None:
            return Plan(self.name, self.version, eps, (rr_round_plan(eps),))
        split = split_with_degree(eps, {"rr": 1.0}, share)
        rnd = rr_round_plan(split["rr"])
        degree = Release((DEGREE,), "dlap", split["degree"], 1.0, name="degree")
        rnd = RoundPlan(1, rnd.name, (*rnd.releases, degree))
        return Plan(self.name, self.version, eps, (rnd,), {"degree_share": share})

    def rounds(self) -> tuple[Round, ...]:
        return (RandomizedResponseRound(),)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Any:
        self.check_statistic(statistic)
        if statistic == "transitivity":
            return transitivity_release_estimate(rr_triangles_estimate(result), result.degrees, plan)
        return rr_triangles_estimate(result)

    def describe_result(self, result: Any, round: Round) -> list[str]:
        return [f"rr_edge    epsilon {result.epsilon:g}; noisy graph of {result.index.size:,} edges"]

    def one_node_bounds(self, result: Any, plan: Plan, round: Round) -> dict[str, float]:
        from .kernels import rr_triangles_influence_bound

        if DEGREE in _quantities(plan, 1):
            return {}  # the bound is of the triangle estimate; transitivity has none yet
        return {"one_node_bound": rr_triangles_influence_bound(result.n_nodes, result.epsilon)}
