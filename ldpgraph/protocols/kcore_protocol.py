r"""``kcore-svt``: our k-core decomposition as a deployable multi-round protocol.

One round, ``levels``, that repeats while some node is active (:meth:`~ldpgraph.core.
protocol.Round.again`): a data-dependent number of rounds, at most L per group of the
thresholds :func:`~ldpgraph.protocols.kcore.svt_thresholds` (psi, up to the public degree
bound ``d_max``). The law is :func:`~ldpgraph.protocols.kcore.svt_kcore`'s (privacy proof
there); here each node's release is written once against the sampler.

================ =============================================================================
step r           an *active* node v (it moved in every step so far: level r) releases
================ =============================================================================
``level_move``   1 iff :math:`U_v(r) + \nu \ge k_{\lfloor r/L\rfloor} + \rho_v`, with
                 :math:`U_v(r)` its neighbours at level r (from the broadcast),
                 :math:`\nu \sim \mathrm{DLap}(e^{-\varepsilon_\nu})` fresh and
                 :math:`\rho_v \sim \mathrm{DLap}(e^{-\varepsilon_\rho})` drawn once and kept
                 secret (:meth:`~ldpgraph.core.sampling.Sampler.secret`); a node that sends 0
                 stops for good
``run_id``       the broadcast's run id (after step 0)
broadcast        every node's level, the active nodes, the step and a run id
                 (:class:`LevelBroadcast`; file form: JSON)
================ =============================================================================

Budget: ε = ε_ρ + ε_ν per node (``rho_share`` of it on ρ, default 1/2) for the whole run,
whatever the number of steps (sparse vector technique). Curator: the core number of v from
its final level (:func:`~ldpgraph.protocols.kcore.svt_core_estimate`).

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> from ldpgraph.run import run_in_memory
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> run = run_in_memory("kcore-svt", g, 200.0, sampler=1)
>>> run.plan.describe()[:61]
'epsilon 200 = svt-threshold 100 + svt-levels 100 (sparse vect'
>>> run.estimate.core_numbers.tolist(), run.n_rounds
([2.0, 2.0, 2.0, 1.0], 5)
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon, check_nonnegative_int
from ..core.plan import Plan, Release, RoundPlan, split_budget
from ..core.protocol import Accumulator, Option, Protocol, Round
from ..core.registry import register
from ..core.rows import Rows, empty_rows, quantity_rows
from ..core.sampling import Sampler
from .kcore import core_summary, svt_core_estimate, svt_rounds, svt_thresholds
from .reports import json_int, json_ints, json_number, parse_json

__all__ = ["KCoreSVT", "LevelBroadcast", "LevelRound", "CoreNumbers", "PROTOCOL"]

PROTOCOL = "kcore-svt"
LEVEL_MOVE = "level_move"
LEVEL_THRESHOLD = "level_threshold"  # the threshold noise: spends budget, never a row
RUN_ID = "level_run_id"
_FORMAT = "ldpgraph-kcore-broadcast 1"


@dataclass(frozen=True, eq=False)
class LevelBroadcast:
    """The public state after a step: levels, active nodes, the next step, a run id."""

    epsilon: float
    d_max: int
    psi: float
    levels_per_group: int
    step: int
    levels: NDArray[np.int64] = field(repr=False)
    active: NDArray[np.bool_] = field(repr=False)
    run_id: int = 0

    @property
    def n_nodes(self) -> int:
        return int(self.levels.size)

    @property
    def done(self) -> bool:
        """No node active, or the last threshold passed: the run is over."""
        ks = svt_thresholds(self.psi, self.d_max)
        return not bool(self.active.any()) or self.step >= svt_rounds(ks, self.levels_per_group)

    def header(self) -> dict[str, Any]:
        return {"format": _FORMAT, "protocol": PROTOCOL, "epsilon": self.epsilon, "d_max": self.d_max,
                "psi": self.psi, "levels_per_group": self.levels_per_group, "step": self.step,
                "n_nodes": self.n_nodes}

    @classmethod
    def build(cls, plan: Plan, step: int, levels: NDArray[np.int64], active: NDArray[np.bool_]
              ) -> LevelBroadcast:
        pub = plan.public
        b = cls(plan.epsilon, int(pub["d_max"]), float(pub["psi"]), int(pub["levels_per_group"]), int(step),
                np.asarray(levels, dtype=np.int64), np.asarray(active, dtype=bool))
        object.__setattr__(b, "run_id", b.digest())
        return b

    def digest(self) -> int:
        """First 48 bits of the SHA-256 of the header, the levels and the active flags."""
        h = hashlib.sha256(json.dumps(self.header(), sort_keys=True).encode())
        h.update(self.levels.astype("<i8").tobytes())
        h.update(np.packbits(self.active).tobytes())
        return int.from_bytes(h.digest()[:6], "big")

    def check(self, plan: Plan) -> LevelBroadcast:
        """self, if made under ``plan`` and intact; else ValueError."""
        pub = plan.public
        want = (plan.epsilon, pub["d_max"], pub["psi"], pub["levels_per_group"])
        have = (self.epsilon, self.d_max, self.psi, self.levels_per_group)
        if want != have:
            raise ValueError(f"the broadcast (epsilon, d_max, psi, levels_per_group = {have}) was not made "
                             f"under the plan ({want}): use the --epsilon and options of step 0")
        if self.digest() != self.run_id:
            raise ValueError(f"the broadcast's run id {self.run_id} does not match its contents (edited?)")
        return self

    def encode(self) -> bytes:
        """The JSON form: the header, the run id, the levels and the active nodes."""
        doc = {**self.header(), "run_id": self.run_id, "levels": self.levels.tolist(),
               "active": np.flatnonzero(self.active).tolist()}
        return json.dumps(doc).encode()

    @classmethod
    def decode(cls, data: bytes, source: str = "broadcast") -> LevelBroadcast:
        """Decode :meth:`encode`'s bytes; ValueError naming ``source`` if they are not one (every field
        checked) or the run id does not match."""
        path = source
        doc = parse_json(data, source)
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError(f"{path}: not a kcore-svt broadcast (format {_FORMAT!r} expected)")
        where = str(path)
        n = json_int(doc, "n_nodes", where, 1, 2**31)
        levels = json_ints(doc, "levels", where, 0, 2**31, size=n)
        idx = json_ints(doc, "active", where, 0, n - 1)
        active = np.zeros(n, dtype=bool)
        active[idx] = True
        b = cls(json_number(doc, "epsilon", where, positive=True), json_int(doc, "d_max", where, 1, 2**31),
                json_number(doc, "psi", where, positive=True),
                json_int(doc, "levels_per_group", where, 1, 2**31), json_int(doc, "step", where, 0, 2**31),
                levels, active, json_int(doc, "run_id", where))
        if b.digest() != b.run_id:
            raise ValueError(f"{path}: the run id {b.run_id} does not match the broadcast's contents")
        return b


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
        (:func:`~ldpgraph.protocols.densest.robust_degeneracy`; the largest estimate runs high)."""
        from .densest import robust_degeneracy

        return robust_degeneracy(self.core_numbers) if self.core_numbers.size else 0.0

    def summary(self, truth: Any) -> dict[str, float]:
        """Approximation factors and degeneracy against the true core numbers."""
        return core_summary(self.core_numbers, truth)


def _split(plan: Plan) -> tuple[float, float]:
    return plan.release(LEVEL_THRESHOLD).epsilon, plan.release(LEVEL_MOVE).epsilon


@functools.lru_cache(maxsize=1024)
def _threshold(psi: float, d_max: int, group: int) -> int:
    """The threshold :math:`k_g` of a step's group (one computation per (psi, d_max, g), not one per node)."""
    return int(svt_thresholds(psi, d_max)[group])


def level_move_release(node: int, neighbours: NDArray[np.int64], b: LevelBroadcast | None, plan: Plan,
                       sampler: Sampler) -> int:
    """Step r at an active node v: 1 iff :math:`U_v(r) + \\nu \\ge k_g + \\rho_v` (module docstring)."""
    eps_rho, eps_nu = _split(plan)
    step = 0 if b is None else b.step
    count = neighbours.size if b is None else int(np.count_nonzero(b.levels[neighbours] == step))
    pub = plan.public
    k = _threshold(float(pub["psi"]), int(pub["d_max"]), step // int(pub["levels_per_group"]))
    rho = sampler.secret(node, f"{PROTOCOL}-rho-{eps_rho!r}", lambda s: int(s.dlap(eps_rho, 1.0, 1)[0]),
                         kept=step > 0)  # drawn at step 0 only: a later step without it is refused
    nu = int(sampler.stream(step + 1, node).dlap(eps_nu, 1.0, 1)[0])
    return int(count + nu >= k + rho)


class LevelRound(Round):
    """The level moves: one step per run, repeated while a node is active."""

    number = 1
    name = "levels"
    repeating = True

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        b = None if broadcast is None else _as_broadcast(broadcast).check(plan)
        nodes = np.asarray(nodes, dtype=np.int64)
        if b is not None and nodes.size and int(nodes.max()) >= b.n_nodes:
            raise ValueError(f"node {int(nodes.max())} is not a node of step 0 (nodes 0..{b.n_nodes - 1})")
        out_nodes, values = [], []
        for v, nb in zip(nodes.tolist(), neighbours, strict=True):
            if b is not None and not b.active[v]:
                continue  # stopped: nothing more to send
            out_nodes.append(v)
            values.append(level_move_release(v, np.asarray(nb, dtype=np.int64), b, plan, sampler))
        sampler.flush()  # the secrets drawn are kept before any row leaves
        if not out_nodes:
            return empty_rows(plan, 1)
        if b is None:
            return quantity_rows(plan, 1, out_nodes, LEVEL_MOVE, values)
        k = len(out_nodes)
        quantity = np.tile(np.array([LEVEL_MOVE, RUN_ID], dtype=object), k)
        vals = np.column_stack([values, np.full(k, b.run_id)]).ravel()
        return quantity_rows(plan, 1, np.repeat(out_nodes, 2), quantity, vals)

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> Accumulator:
        b = None if broadcast is None else _as_broadcast(broadcast).check(plan)
        return LevelAccumulator(plan, b, options.get("expected_nodes"))

    def broadcast(self, result: Any, plan: Plan) -> LevelBroadcast:
        return LevelBroadcast.build(plan, result.step + 1, result.levels, result.moved)

    def again(self, broadcast: Any) -> bool:
        return not broadcast.done


@dataclass(frozen=True)
class LevelStep:
    """A step's result: the levels after it and the nodes that moved (and stay active)."""

    step: int
    levels: NDArray[np.int64]
    moved: NDArray[np.bool_]
    n_rows: int

    @property
    def n_nodes(self) -> int:
        return int(self.levels.size)


class LevelAccumulator(Accumulator):
    """The rows of one step, checked against the plan and the broadcast (order-free)."""

    def __init__(self, plan: Plan, broadcast: LevelBroadcast | None,
                 expected_nodes: int | None = None) -> None:
        self.plan, self.b, self.expected = plan, broadcast, expected_nodes
        self.nodes: list[NDArray[np.int64]] = []
        self.moves: list[NDArray[np.int64]] = []
        self.id_nodes: list[NDArray[np.int64]] = []
        self.n_rows = 0

    def add(self, chunk: Any) -> None:
        n = len(chunk)
        self.n_rows += n
        if n == 0:
            return
        names = np.asarray(chunk.quantity_names, dtype=object)[chunk.quantity]
        protos = np.asarray(chunk.protocol_names, dtype=object)[chunk.protocol]
        version = KCoreSVT.version
        bad = np.flatnonzero((protos != PROTOCOL) | (chunk.protocol_version != version) | (chunk.round != 1))
        if bad.size:
            raise ValueError(f"{chunk.where(bad[0])}: not a {PROTOCOL} version {version} row of round 1")
        allowed = (LEVEL_MOVE,) if self.b is None else (LEVEL_MOVE, RUN_ID)
        bad = np.flatnonzero(~np.isin(names, allowed))
        if bad.size:
            raise ValueError(f"{chunk.where(bad[0])}: quantity {names[bad[0]]!r} is not one of {allowed}")
        mv = names == LEVEL_MOVE
        eps = self.plan.release(LEVEL_MOVE).epsilon
        bad = np.flatnonzero(chunk.epsilon != eps)
        if bad.size:
            raise ValueError(f"{chunk.where(bad[0])}: epsilon {chunk.epsilon[bad[0]]!r}, plan {eps!r}")
        bad = np.flatnonzero(mv & ((chunk.value < 0) | (chunk.value > 1)))
        if bad.size:
            raise ValueError(f"{chunk.where(bad[0])}: a level move is 0 or 1, got {chunk.value[bad[0]]}")
        if self.b is not None:
            bad = np.flatnonzero(~mv & (chunk.value != self.b.run_id))
            if bad.size:
                raise ValueError(f"{chunk.where(bad[0])}: run id {chunk.value[bad[0]]} is not the broadcast's"
                                 " "
                                 f"{self.b.run_id} (rows of another step or run)")
            inside = (chunk.node >= 0) & (chunk.node < self.b.n_nodes)
            ok = np.zeros(n, dtype=bool)
            ok[inside] = self.b.active[chunk.node[inside]]
            bad = np.flatnonzero(~ok)
            if bad.size:
                raise ValueError(f"{chunk.where(bad[0])}: node {chunk.node[bad[0]]} is not active in step "
                                 f"{self.b.step}")
            self.id_nodes.append(chunk.node[~mv])
        elif (chunk.node < 0).any():
            i = int(np.flatnonzero(chunk.node < 0)[0])
            raise ValueError(f"{chunk.where(i)}: node {chunk.node[i]} is negative")
        self.nodes.append(chunk.node[mv])
        self.moves.append(chunk.value[mv])

    def merge(self, other: LevelAccumulator) -> LevelAccumulator:
        self.nodes += other.nodes
        self.moves += other.moves
        self.id_nodes += other.id_nodes
        self.n_rows += other.n_rows
        return self

    def result(self) -> LevelStep:
        nodes = np.concatenate(self.nodes) if self.nodes else np.zeros(0, dtype=np.int64)
        moves = np.concatenate(self.moves) if self.moves else np.zeros(0, dtype=np.int64)
        if np.unique(nodes).size != nodes.size:
            raise ValueError("a node sent two level moves in one step")
        if self.b is None:
            n = int(nodes.max(initial=-1)) + 1 if self.expected is None else int(self.expected)
            if nodes.size != n or (n and int(nodes.max()) >= n):
                raise ValueError(f"step 0 needs one level move from each of the nodes 0..{n - 1}; "
                                 f"got {nodes.size}")
            levels = np.zeros(n, dtype=np.int64)
            step = 0
        else:
            want = int(self.b.active.sum())
            ids = np.concatenate(self.id_nodes) if self.id_nodes else np.zeros(0, dtype=np.int64)
            if nodes.size != want or ids.size != want or np.unique(ids).size != want:
                raise ValueError(f"step {self.b.step}: {want} active nodes, {nodes.size} level moves and "
                                 f"{ids.size} run ids (each active node sends one of each)")
            levels, step = self.b.levels.copy(), self.b.step
        moved = np.zeros(levels.size, dtype=bool)
        moved[nodes[moves == 1]] = True
        levels[moved] += 1
        return LevelStep(step, levels, moved, self.n_rows)


def _as_broadcast(b: Any) -> LevelBroadcast:
    if not isinstance(b, LevelBroadcast):
        raise TypeError(f"a step of {PROTOCOL} after the first needs a LevelBroadcast, got "
                        f"{type(b).__name__}")
    return b


@register
class KCoreSVT(Protocol):
    """``kcore-svt`` (see the module docstring)."""

    name = PROTOCOL
    version = 1
    statistics = ("core_numbers",)
    needs = "adjacency"
    reference = ("ours: the level data structure of Dhulipala et al. (FOCS 2022) and Mundra et al. (PVLDB), "
                 "level moves by the sparse vector technique")
    options = (
        Option("d_max", int, None, "public bound on the degree: the level thresholds go up to it (simulation "
               "default: the true maximum degree)"),
        Option("psi", float, 0.25, "growth of the level thresholds k_g ~ (1 + psi)^g (default 0.25)"),
        Option("levels_per_group", int, 2, "levels (steps) per threshold (default 2)"),
        Option("rho_share", float, 0.5, "share of the budget on the threshold noise (default 0.5)"),
    )

    def default_public(self, graph: Any, public: Any) -> dict[str, Any]:
        return {"d_max": max(int(graph.degrees.max(initial=1)), 1)}

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        if pub["d_max"] is None:
            raise ValueError(f"{self.name} needs the public degree bound d_max (--d-max)")
        d = check_nonnegative_int(pub["d_max"], "d_max", minimum=1)
        big_l = check_nonnegative_int(pub["levels_per_group"], "levels_per_group", minimum=1)
        psi = float(pub["psi"])
        svt_thresholds(psi, d)  # validates psi
        share = float(pub["rho_share"])
        if not 0 < share < 1:
            raise ValueError(f"rho_share must be in (0, 1), got {share!r}")
        eps = split_budget(check_epsilon(epsilon), {"rho": share, "nu": 1.0 - share})
        rel = (Release((LEVEL_THRESHOLD,), "dlap", eps["rho"], 1.0, name="svt-threshold"),
               Release((LEVEL_MOVE, RUN_ID), "dlap", eps["nu"], {LEVEL_MOVE: 1.0, RUN_ID: 0.0},
                       name="svt-levels"))
        note = "sparse vector: threshold noise once, a fresh query noise per step; any number of steps"
        return Plan(self.name, self.version, epsilon, (RoundPlan(1, "levels", rel, repeats=note),),
                    {"d_max": d, "psi": psi, "levels_per_group": big_l, "rho_share": share})

    def rounds(self) -> tuple[Round, ...]:
        return (LevelRound(),)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> CoreNumbers:
        self.check_statistic(statistic)
        pub = plan.public
        ks = svt_thresholds(float(pub["psi"]), int(pub["d_max"]))
        return CoreNumbers(svt_core_estimate(result.levels, ks, int(pub["levels_per_group"])), result.levels,
                           int(result.step) + 1)

    def encode_broadcast(self, broadcast: Any) -> bytes:
        return _as_broadcast(broadcast).encode()

    def decode_broadcast(self, data: bytes, plan: Plan, *, source: str = "broadcast") -> Any:
        return LevelBroadcast.decode(data, source).check(plan)
