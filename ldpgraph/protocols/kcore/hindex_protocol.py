r"""``kcore-hindex`` on the protocol layer: our h-index k-core decomposition, deployable in two rounds.

The deployed form of :func:`~ldpgraph.protocols.kcore.hindex.hindex_kcore` (one h-index step, the
method's default): same budget split (:func:`~ldpgraph.protocols.kcore.hindex.hindex_budget`, the
share h and the read-out power p of :func:`~ldpgraph.protocols.kcore.hindex.hindex_settings` at
the node's ε unless given), same curator (:func:`~ldpgraph.protocols.kcore.hindex.hindex_read_out`),
same law (tested: ``tests/protocols/test_kcore_hindex_law.py``).

================ =============================================================================
round            node v releases
================ =============================================================================
1 ``degree``     ``degree``: :math:`z^0_v = d_v + \mathrm{DLap}(e^{-\varepsilon_0})`,
                 :math:`\varepsilon_0 = (1-h)\varepsilon` (sensitivity 1)
broadcast        every node's :math:`z^0_w`, n, ε₀ and a run id (:class:`HIndexBroadcast`; file
                 form: JSON); the public values are :math:`x_w = \max(z^0_w, 0)`
                 (:func:`~ldpgraph.protocols.kcore.hindex.public_values`)
2 ``h-index``    ``h_index``: :math:`z^1_v = H(\{x_w : w \in N(v)\}) + \mathrm{DLap}(e^{-\varepsilon_1})`,
                 :math:`\varepsilon_1 = h\varepsilon` (sensitivity 1: one neighbour more or less
                 moves H by 0 or 1, proof in :mod:`~ldpgraph.protocols.kcore.hindex`); the
                 broadcast's run id (sensitivity 0)
================ =============================================================================

Curator: pooling of :math:`(z^0_v, z^1_v)` and the empirical-Bayes read-out at power p, every
node's core number (:class:`CoreNumbers`; ``levels`` holds the
pooled values rounded). A node spends ε = ε₀ + ε₁ (sequential composition over the two rounds;
the broadcast is a post-processing of round 1).

Simulation (:class:`~ldpgraph.protocols.kcore.reference.CoreNumbersHooks`): a trial is
:func:`~ldpgraph.protocols.kcore.hindex.hindex_kcore` under the plan, all nodes at once, recorded
by its mean approximation factor.

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> from ldpgraph.run import run_in_memory
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> run = run_in_memory("kcore-hindex", g, 1e4, sampler=1)
>>> run.plan.describe()
'epsilon 10000 = degree 2000 + h-index 8000'
>>> run.estimate.core_numbers.round(3).tolist(), run.n_rounds, run.estimate.rounds
([2.0, 2.0, 2.0, 1.0], 2, 2)
>>> p = HIndexProtocol()
>>> p.simulate(g, p.plan(1e4), "core_numbers", 2, np.random.default_rng(0)).tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon
from ...core.plan import Plan, Release, RoundPlan
from ...core.protocol import Accumulator, Option, Preset, Protocol, Round
from ...core.rows import Rows
from ...core.sampling import Sampler
from ..degrees.degree import degree_quantity_rows
from ..deploy_triangles import RUN_ID, _Base, _missing_text, broadcast_run_id
from ..registry import register
from ..reports import json_int, json_ints, json_number, parse_json
from ..triangles.rr_triangles import check_row_epsilons
from ..triangles.two_round import LocalCountAccumulator, round_two_rows
from .hindex import (
    HINDEX_DEFAULTS,
    h_index,
    hindex_budget,
    hindex_kcore,
    hindex_read_out,
    hindex_settings,
    public_values,
)
from .reference import CoreNumbersHooks, KCoreRun, core_summary

__all__ = ["HINDEX_PROTOCOL", "DEGREE", "H_INDEX", "HIndexBroadcast", "HIndexProtocol", "DegreeValues",
           "CoreNumbers"]

HINDEX_PROTOCOL = "kcore-hindex"
DEGREE = "degree"
H_INDEX = "h_index"
_FORMAT = "ldpgraph-kcore-hindex-broadcast 1"


@dataclass(frozen=True)
class CoreNumbers:
    """The curator's estimate: every node's core number, its level, the rounds run."""

    core_numbers: NDArray[np.float64] = field(repr=False)
    levels: NDArray[np.int64] = field(repr=False)
    rounds: int
    statistic: str = "core_numbers"
    std_error: None = None
    variance_estimate: None = None
    no_std_error_reason: str = ("a vector of core numbers: its error is the approximation factor of each "
                                "node, with no standard error (value: the robust degeneracy)")

    @property
    def value(self) -> float:
        """The robust degeneracy: the largest k with at least k + 1 nodes estimated at k or more
        (:func:`~ldpgraph.protocols.kcore.densest.robust_degeneracy`; the largest estimate runs high)."""
        from .densest import robust_degeneracy

        return robust_degeneracy(self.core_numbers) if self.core_numbers.size else 0.0

    def summary(self, truth: Any) -> dict[str, float]:
        """Approximation factors and degeneracy against the true core numbers."""
        return core_summary(self.core_numbers, truth)



@dataclass(frozen=True, eq=False)
class HIndexBroadcast:
    """What the curator sends after round 1: every node's noisy degree :math:`z^0_w` (the public values
    :attr:`values` are their positive parts), n, the round-1 ε and a run id (a digest of the rest)."""

    n_nodes: int
    epsilon: float
    degrees: NDArray[np.int64] = field(repr=False)
    run_id: int = 0
    protocol: str = HINDEX_PROTOCOL

    @classmethod
    def build(cls, epsilon: float, degrees: Any) -> HIndexBroadcast:
        """The broadcast of round-1 ``epsilon`` and noisy ``degrees`` (nodes 0..n-1), with its run id."""
        deg = np.asarray(degrees, dtype=np.int64)
        b = cls(int(deg.size), float(epsilon), deg)
        object.__setattr__(b, "run_id", b.digest())
        return b

    def header(self) -> dict[str, Any]:
        return {"format": _FORMAT, "protocol": HINDEX_PROTOCOL, "round": 1, "n_nodes": self.n_nodes,
                "epsilon": self.epsilon}

    def digest(self) -> int:
        """:func:`~ldpgraph.protocols.deploy_triangles.broadcast_run_id` of the header and the degrees."""
        return broadcast_run_id(self.header(), self.degrees)

    @cached_property
    def values(self) -> NDArray[np.float64]:
        r"""The public values :math:`x_w = \max(z^0_w, 0)` of round 2."""
        return public_values([self.degrees], [self.epsilon])

    def sensitivities(self) -> dict[str, float]:
        """The sensitivity of each round-2 quantity (none depends on the broadcast)."""
        return {H_INDEX: 1.0, RUN_ID: 0.0}

    @property
    def what(self) -> str:
        """What the broadcast holds, for the CLI's lines."""
        return "every node's noisy degree (the public values of the h-index round)"

    def encode(self) -> bytes:
        """The JSON form: the header, the run id and the degrees."""
        doc = {**self.header(), "run_id": self.run_id, "degrees": self.degrees.tolist()}
        return json.dumps(doc, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, data: bytes, source: str = "broadcast") -> HIndexBroadcast:
        """Decode :meth:`encode`'s bytes; ValueError naming ``source`` if they are not one or the run id
        does not match."""
        path = source
        doc = parse_json(data, source)
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError(f"{path}: not a {HINDEX_PROTOCOL} broadcast (format {_FORMAT!r} expected)")
        n = json_int(doc, "n_nodes", str(path), 1, 2**31)
        deg = json_ints(doc, "degrees", str(path), size=n)  # noisy degrees: any sign, |d| <= 2**53
        eps = json_number(doc, "epsilon", str(path), positive=True)
        b = cls.build(eps, deg)
        if b.run_id != doc.get("run_id"):
            raise ValueError(f"{path}: the run id {doc.get('run_id')} does not match the broadcast's "
                             "contents (edited?)")
        return b


def _check_broadcast(broadcast: Any, plan: Plan) -> HIndexBroadcast:
    """``broadcast`` if it is round 1's of ``plan`` (its ε); else TypeError / ValueError."""
    if not isinstance(broadcast, HIndexBroadcast):
        raise TypeError(f"round 2 of {HINDEX_PROTOCOL} needs its round-1 broadcast (an HIndexBroadcast), got "
                        f"{type(broadcast).__name__}")
    plan.check_broadcast_epsilon(DEGREE, broadcast.epsilon)
    return broadcast


@dataclass(frozen=True)
class DegreeValues:
    """Round 1's result: the noisy degree of every node 0..n-1, at ``epsilon``."""

    n_nodes: int
    epsilon: float
    degrees: NDArray[np.int64] = field(repr=False)
    n_rows: int


class DegreeValuesAccumulator(_Base, Accumulator):
    """Round-1 rows: one ``degree`` row per node 0..n-1 (protocol, version, round, ε, sensitivity 1
    checked row by row; the node set and ε against the plan in :meth:`result`)."""

    def __init__(self, plan: Plan, expected_nodes: int | None = None) -> None:
        super().__init__(plan.protocol, 1, plan.version)
        self.plan, self.expected = plan, expected_nodes
        self._nodes: list[NDArray[np.int64]] = []
        self._values: list[NDArray[np.int64]] = []
        self._locs: list[NDArray[np.int64]] = []

    def add(self, chunk: Any) -> None:
        rows = self._check(chunk, {DEGREE: 1.0}).get(DEGREE)
        if rows is None:
            return
        node = np.asarray(chunk.node)[rows]
        if (node < 0).any():
            i = int(np.flatnonzero(node < 0)[0])
            raise ValueError(f"node {int(node[i])} is negative: {chunk.rows_text(rows[i:i + 1])}")
        self._nodes.append(node)
        self._values.append(np.asarray(chunk.value)[rows])
        self._locs.append(self.rows.locate(chunk, rows))

    def merge(self, other: DegreeValuesAccumulator) -> DegreeValuesAccumulator:
        self._merge_base(other)
        self._nodes += other._nodes
        self._values += other._values
        self._locs += self._locs_of(other, other._locs)
        return self

    def result(self) -> DegreeValues:
        ids, _ = self._unique_nodes(self._nodes, self._locs, DEGREE)
        n = int(ids.max(initial=-1)) + 1 if self.expected is None else int(self.expected)
        if ids.size != n or (n and int(ids[-1]) >= n):
            extra = ids[ids >= n]
            why = (f"node {int(extra[0])} is beyond them" if extra.size
                   else f"missing {_missing_text(ids, n)}")
            raise ValueError(f"round 1 of {HINDEX_PROTOCOL} needs one degree row from each of the nodes "
                             f"0..{n - 1}: {why}")
        eps = self.plan.release(DEGREE).epsilon
        check_row_epsilons(self.plan, {q: e for q, (e, _) in self.epsilon.items()})
        deg = np.empty(n, dtype=np.int64)
        if n:
            deg[np.concatenate(self._nodes)] = np.concatenate(self._values)
        return DegreeValues(n, eps, deg, self.n_rows)


class _DegreeRound(Round):
    """Round 1: every node's noisy degree; the broadcast holds them all."""

    number = 1
    name = "degree"

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        return degree_quantity_rows(plan, 1, nodes, neighbours, sampler, None)

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> DegreeValuesAccumulator:
        return DegreeValuesAccumulator(plan, options.get("expected_nodes"))

    def broadcast(self, result: DegreeValues, plan: Plan) -> HIndexBroadcast:
        return HIndexBroadcast.build(result.epsilon, result.degrees)


def hindex_node_value(neighbours: NDArray[np.int64], broadcast: HIndexBroadcast, epsilon: float,
                      stream: Any) -> int:
    r"""Round 2 at one node, on its stream: :math:`H(\{x_w : w \in N(v)\}) + \mathrm{DLap}(e^{-\varepsilon})`.

    >>> from ldpgraph.core import Seeded
    >>> b = HIndexBroadcast.build(0.5, [3, 2, -1, 4])
    >>> hindex_node_value(np.array([0, 2, 3]), b, 1e6, Seeded(0).stream(2, 1))  # H({3, 0, 4}) = 2
    2
    """
    return h_index(broadcast.values[neighbours]) + int(stream.dlap(epsilon, 1.0, 1)[0])


class _HIndexRound(Round):
    """Round 2: every node's noisy h-index of its neighbours' public values, and the run id."""

    number = 2
    name = "h-index"

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        b = _check_broadcast(broadcast, plan)
        eps1 = plan.release(H_INDEX).epsilon
        return round_two_rows(plan, nodes, neighbours, b, sampler, (H_INDEX,), lambda v, nb, s: (
            hindex_node_value(np.asarray(nb, dtype=np.int64), b, eps1, s),))

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> LocalCountAccumulator:
        options.pop("expected_nodes", None)
        return LocalCountAccumulator(plan, _check_broadcast(broadcast, plan), **options)


@register
class HIndexProtocol(CoreNumbersHooks, Protocol):
    """``kcore-hindex`` (see the module docstring)."""

    name = HINDEX_PROTOCOL
    version = 1
    statistics = ("core_numbers",)
    needs = "adjacency"
    model = "local, two rounds"
    # lower mean and max approximation factors than the reference in all six cells of the docs' table
    # (docs/kcore-edge-orient.md), in 2 rounds against 59-73
    presets = (Preset(HINDEX_PROTOCOL, recommended=("core_numbers",)),)
    reference = ("ours: a noisy degree and a noisy h-index of the neighbours' public values (the h-index "
                 "operator of Lü et al., Nat. Commun. 2016), read by empirical Bayes")
    options = (
        Option("h_share", float, None, "share of the budget on the h-index round (default: the method's "
               "schedule at the node's epsilon, 0.8 to 0.9)"),
        Option("readout_power", float, None, "p of the read-out's posterior risk E[max(x/q, q/x)^p] "
               "(default: the method's schedule, 4.5 to 8)"),
        Option("pool_c", float, HINDEX_DEFAULTS["c"], "the degree joins the h-index in the pooled value "
               "unless it is more than pool_c standard deviations above it (default 3)"),
    )

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        eps = check_epsilon(epsilon)
        chosen = hindex_settings(eps)
        h = chosen["h_share"] if pub["h_share"] is None else float(pub["h_share"])
        p = chosen["power"] if pub["readout_power"] is None else float(pub["readout_power"])
        c = float(pub["pool_c"])
        if not (math.isfinite(p) and p > 0):
            raise ValueError(f"readout_power must be a finite number > 0, got {pub['readout_power']!r}")
        if not c >= 0:
            raise ValueError(f"pool_c must be >= 0, got {pub['pool_c']!r}")
        b = hindex_budget(eps, 1, h)  # validates h
        return Plan(self.name, self.version, epsilon,
                    (RoundPlan(1, "degree", (Release((DEGREE,), "dlap", b["degree"], 1.0),)),
                     RoundPlan(2, "h-index", (Release((H_INDEX, RUN_ID), "dlap", b["h-index 1"],
                                                      {H_INDEX: 1.0, RUN_ID: 0.0}),))),
                    {"h_share": h, "readout_power": p, "pool_c": c})

    def rounds(self) -> tuple[Round, ...]:
        return (_DegreeRound(), _HIndexRound())

    def run(self, graph: Any, plan: Plan, rng: np.random.Generator) -> KCoreRun:
        """One run under ``plan`` (its ε, share, pooling and read-out), all nodes at once: the law of
        the two rounds (``tests/protocols/test_kcore_hindex_law.py``)."""
        pub = plan.public
        return hindex_kcore(graph, plan.epsilon, steps=HINDEX_DEFAULTS["steps"], h_share=pub["h_share"],
                            c=pub["pool_c"], power=pub["readout_power"], rng=rng)

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """Two signed integers up; every node's noisy degree (4 bytes each) down once."""
        n = max(graph.n_nodes, 2)
        return 2 * math.ceil(math.log2(2 * n + 1)) / 8.0, 4.0 * n

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> CoreNumbers:
        self.check_statistic(statistic)
        b = _check_broadcast(broadcast, plan)
        values = result.values()
        eps = [plan.release(DEGREE).epsilon, plan.release(H_INDEX).epsilon]
        pooled, core = hindex_read_out([b.degrees, values[H_INDEX]], eps, float(plan.public["pool_c"]),
                                       float(plan.public["readout_power"]))
        return CoreNumbers(core, pooled, 2)

    def encode_broadcast(self, broadcast: Any) -> bytes:
        if not isinstance(broadcast, HIndexBroadcast):
            raise TypeError(f"not a {HINDEX_PROTOCOL} broadcast: {type(broadcast).__name__}")
        return broadcast.encode()

    def decode_broadcast(self, data: bytes, plan: Plan, *, source: str = "broadcast") -> Any:
        return _check_broadcast(HIndexBroadcast.decode(data, source), plan)

    def describe_result(self, result: Any, round: Round) -> list[str]:
        if round.number == 1:
            return [f"degree     {result.n_nodes:,} noisy degrees at epsilon {result.epsilon:g}: the "
                    "broadcast"]
        return ["h_index    one noisy h-index per node, sensitivity 1; not screened for outliers"]
