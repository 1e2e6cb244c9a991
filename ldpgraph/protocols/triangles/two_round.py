r"""``two-round-triangles-dlap`` (public bound D) and ``two-round-triangles-dlap-private`` (private D);
``two-round-triangles-laplace[-private]``, Local2Rounds as published (continuous Laplace: simulated only).

================ =============================================================================
round            node v releases
================ =============================================================================
1 ``rr``         RR at ε₁ on its lower adjacency bits (:class:`~ldpgraph.protocols.triangles.rr_triangles.
                 RandomizedResponseRound`); the private variant also its lower degree plus
                 DLap(e^-ε₀) (sensitivity 1), and the curator sets D = max(1, their maximum)
broadcast        the noisy graph, n, ε₁, D and a run id (:class:`~ldpgraph.protocols.
                 deploy_triangles.TriangleBroadcast`; file form: packed bits)
2 ``local-count`` :math:`r_v = \lfloor w_v + U\rfloor + \mathrm{DLap}(e^{-\varepsilon_2/\max(D-1,1)})`,
                 :math:`w_v = \sum_{j<k \in L_v} (b_{jk} - q)` over the lower neighbour list
                 :math:`L_v` projected to a uniform D-subset when longer; and the run id
================ =============================================================================

Curator: :math:`\hat T = \sum_v r_v / (p - q)` with its variance estimate
(:func:`~ldpgraph.protocols.deploy_triangles.dlap_triangles_estimate`). Sensitivity D - 1 of
:math:`r_v` under one edge and the unbiasedness: :func:`~ldpgraph.protocols.triangles.kernels.
two_round_dlap_release` (the proofs); the release here draws the same law through the
sampler interface. A node spends ε₀ + ε₁ + ε₂ = ε (sequential composition): default split
ε₁ = ε₂ = ε/2 (public D), and ε₀ = ε/10, ε₁ = ε₂ = 0.45 ε (private D); ``shares`` changes it. For
transitivity (``degree_share``, 0.1 in a simulation) the degree release takes its share first.

The fast simulator (:meth:`TwoRoundTrianglesDLap.simulate`, the law of a run:
:func:`~ldpgraph.protocols.triangles.kernels.simulate_two_round`) and the exact moments
(:func:`~ldpgraph.protocols.triangles.kernels.two_round_moments`) read every ε and the bound from the plan.
:class:`TwoRoundTrianglesLaplace` is Local2Rounds (Imola, Murakami, Chaudhuri, USENIX Security
2021): the bound d_max on the whole degree, :math:`w_v + \mathrm{Lap}(d_{\max}/\varepsilon_2)`;
its releases are continuous, so it has the plan and the simulation only.

Examples
--------
>>> TwoRoundTrianglesDLap().plan(1.0, d_max=5).budget()
{'rr': 0.5, 'local-count': 0.5}
>>> TwoRoundTrianglesDLap().plan(1.0, private_bound=True).describe()
'epsilon 1 = rr 0.45 + degree-bound 0.1 + local-count 0.45'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon, check_nonnegative_int
from ...core.plan import Plan, Release, RoundPlan
from ...core.protocol import Accumulator, Option, Preset, Protocol, Round
from ...core.rows import Rows, empty_rows, quantity_rows
from ...core.sampling import Sampler
from ..degrees.degree import CONTINUOUS, NotDeployableRound
from ..deploy_triangles import (
    DEGREE,
    DEGREE_BOUND,
    DLAP_PROTOCOL,
    LOCAL_COUNT,
    LOWER_DEGREE,
    RR_COUNT,
    RR_EDGE,
    RUN_ID,
    Round2Accumulator,
    TriangleBroadcast,
    TriangleWire,
)
from ..randomized_response import expected_noisy_edges, noisy_graph_bits, upper_pairs
from ..registry import register
from .kernels import BYTES_PER_WEDGE
from .rr_triangles import (
    DEGREE_SHARE,
    RandomizedResponseRound,
    TriangleSimulation,
    check_row_epsilons,
    split_with_degree,
    transitivity_release_estimate,
)

__all__ = ["RRBroadcastProtocol", "TwoRoundTrianglesDLap", "TwoRoundTrianglesLaplace", "LocalCountRound",
           "local_count_release", "max_lower_degree", "screened_bound_text"]


def local_count_release(node: int, neighbours: NDArray[np.int64], broadcast: TriangleBroadcast,
                        epsilon: float, stream: Any) -> int:
    """Round 2 at node v: the integer :math:`r_v` (see the module docstring)."""
    d, q = broadcast.bound, broadcast.q
    lower = neighbours[neighbours < node]
    if lower.size > d:
        lower = stream.subset(lower, d)
    a, b = upper_pairs(lower.size)
    w = math.fsum(broadcast.noisy_bit(lower[a], lower[b]).tolist()) - q * a.size
    rounded = math.floor(w + float(stream.uniform(1)[0]))
    return rounded + int(stream.dlap(epsilon, float(max(d - 1, 1)), 1)[0])


def round_two_rows(plan: Plan, nodes: Any, neighbours: Any, broadcast: TriangleBroadcast, sampler: Sampler,
                   quantities: tuple[str, ...], release_one: Any) -> Rows:
    """Round-2 rows against the broadcast: per node, ``release_one(v, neighbours, stream)`` (one
    value per quantity, on the node's round-2 stream), then the broadcast's run id."""
    nodes = np.asarray(nodes, dtype=np.int64)
    if nodes.size == 0:
        return empty_rows(plan, 2)
    if int(nodes.max()) >= broadcast.n_nodes:
        raise ValueError(f"node {int(nodes.max())} is not a node of the broadcast's round 1 "
                         f"(nodes 0..{broadcast.n_nodes - 1})")
    k = len(quantities)
    values = np.empty((nodes.size, k + 1), dtype=np.int64)
    for i, (v, nb) in enumerate(zip(nodes.tolist(), neighbours, strict=True)):
        values[i, :k] = release_one(v, nb, sampler.stream(2, v))
    values[:, k] = broadcast.run_id
    quantity = np.tile(np.array([*quantities, RUN_ID], dtype=object), nodes.size)
    return quantity_rows(plan, 2, np.repeat(nodes, k + 1), quantity, values.ravel())


class LocalCountRound(Round):
    """Round 2: each node's noisy local count against the broadcast, and the broadcast's run id."""

    number = 2
    name = "local-count"

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        check_broadcast_plan(broadcast, plan)
        eps2 = plan.release(LOCAL_COUNT).epsilon
        if DEGREE in _round_quantities(plan, 2):  # transitivity: the degree too, after the count's draws
            eps_d = plan.release(DEGREE).epsilon
            rows = round_two_rows(plan, nodes, neighbours, broadcast, sampler, (LOCAL_COUNT, DEGREE),
                                  lambda v, nb, s: (local_count_release(v, nb, broadcast, eps2, s),
                                                    nb.size + int(s.dlap(eps_d, 1.0, 1)[0])))
        else:
            rows = round_two_rows(plan, nodes, neighbours, broadcast, sampler, (LOCAL_COUNT,),
                                  lambda v, nb, s: (local_count_release(v, nb, broadcast, eps2, s),))
        at = rows["quantity"] == LOCAL_COUNT
        rows["sensitivity"][at] = broadcast.sensitivities()[LOCAL_COUNT]  # max(D - 1, 1), D broadcast
        return rows

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> Accumulator:
        check_broadcast_plan(broadcast, plan)
        return LocalCountAccumulator(plan, broadcast, **options)


class LocalCountAccumulator(Accumulator):
    """Round-2 rows validated against the broadcast (run id, node set) and the plan (ε, sensitivity)."""

    def __init__(self, plan: Plan, broadcast: TriangleBroadcast, **options: Any) -> None:
        self.plan = plan
        # the round's quantities from the plan, their sensitivities from the broadcast's bound
        sens = broadcast.sensitivities()
        sens = {q: sens[q] if q in sens else plan.release(q).sensitivity_of(q)
                for rel in plan.round(2).releases for q in rel.quantities}
        self.acc = Round2Accumulator(broadcast, sensitivities=sens, version=plan.version, **options)

    def add(self, chunk: Any) -> None:
        self.acc.add(chunk)

    def merge(self, other: LocalCountAccumulator) -> LocalCountAccumulator:
        self.acc.merge(other.acc)
        return self

    def result(self) -> Round2Accumulator:
        self.acc.values()  # the whole-set checks (every node, once)
        check_row_epsilons(self.plan, {q: e for q, (e, _) in self.acc.epsilon.items()})
        return self.acc


def max_lower_degree(graph: Any) -> int:
    """The benchmark's public bound D: the largest lower degree of ``graph`` (at least 1)."""
    rows = np.repeat(np.arange(graph.n_nodes), np.diff(graph.indptr))
    lower = np.bincount(rows[graph.indices < rows], minlength=graph.n_nodes)
    return max(int(lower.max(initial=0)), 1)


def _round_quantities(plan: Plan, number: int) -> set[str]:
    return {q for rel in plan.round(number).releases for q in rel.quantities}


def check_broadcast_plan(broadcast: Any, plan: Plan) -> None:
    """ValueError unless ``broadcast`` is a round-1 broadcast made under ``plan``."""
    if not isinstance(broadcast, TriangleBroadcast):
        raise TypeError("round 2 needs the round-1 broadcast (a TriangleBroadcast), got "
                        f"{type(broadcast).__name__}")
    if broadcast.protocol != DLAP_PROTOCOL:
        raise ValueError(f"a broadcast of {broadcast.protocol!r}, not of {DLAP_PROTOCOL!r}")
    plan.check_broadcast_epsilon(RR_COUNT, broadcast.epsilon)
    d_max = plan.public.get("d_max")
    if plan.public.get("private_bound") is False and broadcast.bound != d_max:
        raise ValueError(f"the broadcast's bound D = {broadcast.bound} differs from the plan's d_max {d_max}")


def screened_bound_text(sc: Any, range_text: str, least: int) -> str:
    """``"; k outside RANGE clipped: one node raises D to at most max(least, hi)"`` of a private
    bound's screening ``sc`` (a :class:`~ldpgraph.protocols.screening.Screening`)."""
    verb = {"clip": "clipped", "reject": "rejected", "raise": "refused"}[sc.mode]
    return (f"; {sc.n_outside:,} outside {range_text} {verb}: one node raises D to at most "
            f"{max(least, sc.hi):,}")


class RRBroadcastProtocol(Protocol):
    """Shared by the protocols whose round 1 is randomized response and whose broadcast is the noisy
    graph (:class:`TriangleBroadcast`): its file form, the round-2 estimate, screening and bounds."""

    needs = "adjacency"
    #: a ``degree`` row of round 2 is transitivity's (not screened, no one-node bound yet) rather
    #: than one of the protocol's own quantities (the clustering protocols')
    degree_for_transitivity = False

    def check_broadcast(self, broadcast: Any, plan: Plan) -> TriangleBroadcast:
        """``broadcast`` if it was made under ``plan``, else ValueError."""
        raise NotImplementedError

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Any:
        self.check_statistic(statistic)
        if statistic == "transitivity":
            return transitivity_release_estimate(result.estimate(), result.values().get(DEGREE), plan)
        return result.estimate()

    def encode_broadcast(self, broadcast: Any) -> bytes:
        from ..edge_broadcast import encode_edge_broadcast

        return encode_edge_broadcast(broadcast)

    def decode_broadcast(self, data: bytes, plan: Plan, *, source: str = "broadcast") -> Any:
        from ..edge_broadcast import decode_triangle_broadcast

        return self.check_broadcast(decode_triangle_broadcast(data, source), plan)

    def describe_result(self, result: Any, round: Round) -> list[str]:
        if round.number == 1:
            lines = [f"rr_edge    epsilon {result.epsilon:g}; noisy graph of {result.index.size:,} edges"]
            if result.max_lower_degree is not None:
                line = (f"lower_degree epsilon {result.lower_degree_epsilon:g}; private bound D = "
                        f"{result.private_bound()} (their maximum)")
                sc = result.screening.get(LOWER_DEGREE)
                if sc is not None:
                    line += screened_bound_text(sc, f"[{sc.lo:,}, v + {-sc.lo:,}]", 1)
                lines.append(line)
            return lines
        if self.degree_for_transitivity and DEGREE in result.sensitivity:
            return ["degree     rows (for transitivity) not screened for outliers; no one-node bound"]
        return []

    def screening(self, result: Any, round: Round) -> dict[str, Any]:
        return dict(result.screening) if round.number == 1 else result.screened_values()[1]

    def one_node_bounds(self, result: Any, plan: Plan, round: Round) -> dict[str, float]:
        if round.number == 1:  # a private bound: one node raises it to at most the screen's top
            for q, least in ((LOWER_DEGREE, 1), (DEGREE_BOUND, 2)):
                sc = result.screening.get(q)
                if sc is not None:
                    return {"D": float(max(least, sc.hi))}
            return {}
        if self.degree_for_transitivity and DEGREE in _round_quantities(plan, 2):
            return {}  # the bounds are of the triangle estimate; transitivity has none yet
        return {"one_node_bound": result.influence_bound(),
                "one_node_round1_bound": result.round1_influence_bound()}


def local_count_sensitivities(broadcast: TriangleBroadcast) -> dict[str, float]:
    """Round 2's sensitivities: ``local_count`` max(D - 1, 1) (D the broadcast's bound), ``run_id`` 0.

    >>> local_count_sensitivities(TriangleBroadcast.build(DLAP_PROTOCOL, 3, 1.0, 4, []))
    {'local_count': 3.0, 'run_id': 0.0}
    """
    return {LOCAL_COUNT: float(max(broadcast.bound - 1, 1)), RUN_ID: 0.0}


@register
class TwoRoundTrianglesDLap(TriangleSimulation, RRBroadcastProtocol):
    """``two-round-triangles-dlap``: a public bound D on the lower degree (``d_max``), or a private
    one from round-1 noisy lower degrees (``private_bound``: the preset ``two-round-triangles-dlap-private``).

    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> p = TwoRoundTrianglesDLap()
    >>> plan = p.plan(2.0, d_max=2)
    >>> p.simulate(g, plan, "triangles", 3, np.random.default_rng(0)).shape
    (3,)
    >>> p.moments(g, plan, "triangles")[0]
    1.0
    """

    name = DLAP_PROTOCOL
    version = 1
    wire = TriangleWire(round1=(RR_COUNT, RR_EDGE, LOWER_DEGREE), round2=local_count_sensitivities)
    degree_for_transitivity = True
    statistics = ("triangles", "transitivity")
    needs = "adjacency"
    reference = "ours; after Local2Rounds (Imola, Murakami, Chaudhuri, USENIX Security 2021)"
    presets = (Preset(DLAP_PROTOCOL),
               Preset("two-round-triangles-dlap-private", {"private_bound": True}, unbiased=False))
    #: the degree share comes with the statistic; the private bound is a method of its own (a preset)
    simulation_draws = ("degree_share", "private_bound")
    #: the noise of the local count (and of the private bound's degrees)
    noise = "dlap"
    #: the private bound's quantity: the lower degree (DLap: D bounds the lower list)
    bound_quantity = LOWER_DEGREE
    #: peak bytes per lower wedge of a simulated trial
    bytes_per_wedge = BYTES_PER_WEDGE
    options = (
        Option("d_max", int, None, "public bound D on every node's lower degree (simulation default: the "
               "true maximum lower degree)"),
        Option("private_bound", bool, False, "D = max(1, max of the nodes' noisy lower degrees), released "
               "in round 1 at the lower_degree share"),
        Option("shares", dict, None, "budget split rr=F,local_count=F (default 0.5 each), with "
               "lower_degree=F for the private bound (default 0.1, 0.45, 0.45)"),
        DEGREE_SHARE,
    )

    def default_public(self, graph: Any, public: Any) -> dict[str, Any]:
        """The benchmark's public bound: the true maximum lower degree (at least 1); none with the
        private bound."""
        return {} if public.get("private_bound") else {"d_max": max_lower_degree(graph)}

    def placeholder_public(self, public: Any = None) -> dict[str, Any]:
        """A public D (it does not move the split); none with the private bound."""
        return {} if (public or {}).get("private_bound") else {"d_max": 2}

    def simulation_options(self, public: Any) -> tuple[str, ...]:
        """The split; with a public bound also D (a private bound draws D)."""
        taken = super().simulation_options(public)
        return tuple(o for o in taken if o != "d_max") if public.get("private_bound") else taken

    def simulate_triangles(self, graph: Any, plan: Plan, n_trials: int, rng: Any) -> NDArray[np.float64]:
        from .kernels import simulate_two_round, simulate_two_round_scaled

        if self.uses_table(graph):
            return simulate_two_round(graph, n_trials=n_trials, rng=rng, wedges=self.lower_wedges(graph),
                                      **self._kernel_args(plan))
        return simulate_two_round_scaled(graph, n_trials=n_trials, rng=rng,
                                         patterns=self.wedge_patterns(graph), **self._kernel_args(plan))

    def triangle_moments(self, graph: Any, plan: Plan) -> tuple[float | None, float | None]:
        """Exact; from the wedge table where it fits in memory, else (a large graph) only for a public
        bound with nothing projected."""
        from .kernels import two_round_moments, two_round_moments_scaled

        args = self._kernel_args(plan)
        if self.uses_table(graph) or (self.table_fits(graph) and (args["eps0"] is not None or args["bound"] <
                                                                  int(graph.degrees.max(initial=0)))):
            return two_round_moments(graph, wedges=self.lower_wedges(graph), **args)
        lengths = graph.degrees if self.noise == "laplace" else self.wedge_patterns(graph).lower_degrees
        if args["eps0"] is not None or args["bound"] < max(int(lengths.max(initial=0)), 1):
            return None, None
        del args["eps0"]
        return two_round_moments_scaled(graph, patterns=self.wedge_patterns(graph), **args)

    def _kernel_args(self, plan: Plan) -> dict[str, Any]:
        """The kernels' budgets and bound, from ``plan``."""
        private = plan.public["private_bound"]
        return {"eps1": plan.release(RR_COUNT).epsilon, "eps2": plan.release(LOCAL_COUNT).epsilon,
                "eps0": plan.release(self.bound_quantity).epsilon if private else None,
                "bound": None if private else plan.public["d_max"], "noise": self.noise}

    def triangle_bytes(self, plan: Plan, graph: Any) -> tuple[float, float]:
        n, bound = graph.n_nodes, 8.0 if plan.public["private_bound"] else 0.0
        noisy = expected_noisy_edges(n, graph.n_edges, plan.release(RR_COUNT).epsilon)
        return (n - 1) / 16.0 + 8.0 + bound, noisy_graph_bits(n, noisy) / 8.0 + bound

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        private = bool(pub["private_bound"])
        if private:
            default = {"lower_degree": 0.1, "rr": 0.45, "local_count": 0.45}
            if pub["d_max"] is not None:
                raise ValueError(f"{self.name}: the private bound comes from round 1; a public d_max "
                                 f"({pub['d_max']}) is not used with private_bound")
        else:
            default = {"rr": 0.5, "local_count": 0.5}
            if pub["d_max"] is None:
                raise ValueError(f"{self.name} needs the public bound d_max (--d-max) on the lower degree, "
                                 "or private_bound (--private-bound)")
        shares = pub["shares"] or default
        if sorted(shares) != sorted(default):
            raise ValueError(f"shares of {self.name}{' (private bound)' if private else ''}: "
                             f"{', '.join(f'{k}=F' for k in default)}, got {shares}")
        eps = split_with_degree(check_epsilon(epsilon), shares, pub["degree_share"])
        first = [Release((RR_COUNT, RR_EDGE), "randomized-response", eps["rr"], 1.0, name="rr")]
        if private:
            first.append(Release((self.bound_quantity,), self.noise, eps["lower_degree"], 1.0,
                                 name="degree-bound"))
            d = None
        else:
            d = check_nonnegative_int(pub["d_max"], "d_max", minimum=1)
        # the local count's sensitivity max(D - 1, 1) follows the broadcast's D (d_max for Laplace)
        sens = (float(max(d - 1, 1)) if self.noise == "dlap" else float(d)) if d else math.nan
        second = Release((LOCAL_COUNT, RUN_ID), self.noise, eps["local_count"],
                         {LOCAL_COUNT: sens, RUN_ID: 0.0}, name="local-count")
        last = (second,) if "degree" not in eps else (second, Release((DEGREE,), "dlap", eps["degree"], 1.0,
                                                                      name="degree"))
        return Plan(self.name, self.version, epsilon,
                    (RoundPlan(1, "rr", tuple(first)), RoundPlan(2, "local-count", last)),
                    {"d_max": d, "private_bound": private, "degree_share": pub["degree_share"]})

    def rounds(self) -> tuple[Round, ...]:
        return (_FirstRound(), LocalCountRound())

    def check_broadcast(self, broadcast: Any, plan: Plan) -> TriangleBroadcast:
        check_broadcast_plan(broadcast, plan)
        return broadcast


class _FirstRound(RandomizedResponseRound):
    def broadcast(self, result: Any, plan: Plan) -> TriangleBroadcast:
        bound = result.private_bound() if plan.public["private_bound"] else plan.public["d_max"]
        return TriangleBroadcast.build(DLAP_PROTOCOL, result.n_nodes, result.epsilon, bound, result.index)


@register
class TwoRoundTrianglesLaplace(TwoRoundTrianglesDLap):
    """``two-round-triangles-laplace[-private]``: Local2Rounds as published (Imola, Murakami,
    Chaudhuri, USENIX Security 2021): the public bound ``d_max`` on the whole degree (a simulation
    takes the true maximum), :math:`w_v + \\mathrm{Lap}(d_{\\max}/\varepsilon_2)` over the projected
    list; or the private bound (``private_bound``): :math:`\\lfloor\\max_v (d_v +
    \\mathrm{Lap}(1/\varepsilon_0))\rfloor`. Continuous releases: simulated only.

    >>> TwoRoundTrianglesLaplace().plan(1.0, private_bound=True).describe()
    'epsilon 1 = rr 0.45 + degree-bound 0.1 + local-count 0.45'
    """

    name = "two-round-triangles-laplace"
    deployable = False
    not_deployable = CONTINUOUS
    reference = "Local2Rounds (Imola, Murakami, Chaudhuri, USENIX Security 2021)"
    presets = (Preset("two-round-triangles-laplace"),
               Preset("two-round-triangles-laplace-private", {"private_bound": True}, unbiased=False))
    noise = "laplace"
    bound_quantity = DEGREE_BOUND
    wire = None  # no report rows
    options = (
        Option("d_max", int, None, "public bound on every node's degree (simulation default: the true "
               "maximum degree)"),
        Option("private_bound", bool, False, "d_max = floor(max of the nodes' d_v + Lap(1/eps0)), at the "
               "lower_degree share"),
        Option("shares", dict, None, "budget split rr=F,local_count=F (default 0.5 each), with "
               "lower_degree=F for the private bound (default 0.1, 0.45, 0.45)"),
        DEGREE_SHARE,
    )

    def default_public(self, graph: Any, public: Any) -> dict[str, Any]:
        """The public bound of Imola et al.'s experiments: the true maximum degree (at least 1)."""
        return {} if public.get("private_bound") else {"d_max": max(int(graph.degrees.max(initial=0)), 1)}

    def rounds(self) -> tuple[Round, ...]:
        return (NotDeployableRound(1, "rr", CONTINUOUS), NotDeployableRound(2, "local-count", CONTINUOUS))

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Any:
        raise ValueError(f"{self.name} has no report rows to curate: {CONTINUOUS}")
