r"""The wire side of the randomized-response protocols: their row quantities, broadcast and curator objects.

``rr-triangles`` (one round), ``two-round-triangles-dlap`` and ``avg-clustering`` (two rounds)
are protocols of the protocol layer (:mod:`ldpgraph.protocols.triangles.rr_triangles`,
:mod:`~ldpgraph.protocols.triangles.two_round`, :mod:`~ldpgraph.protocols.clustering.avg_clustering`):
their node releases are written once there, and every executor (in memory, report files,
Dask; :mod:`ldpgraph.run`) feeds their rows to the accumulators of this module, so the
files give exactly the in-memory estimate for one seed.

Rows (protocol ``rr-triangles``, ``two-round-triangles-dlap`` or ``avg-clustering``, version 1)
-----------------------------------------------------------------------------------------------
Nodes are the integers ``0..n-1`` (public); node v randomizes its adjacency bits towards the
lower nodes ``0..v-1`` and, for a deployment, needs no other public input.

============= ===== ============== ================================== ============ ============
quantity      round value          meaning                            epsilon      sensitivity
============= ===== ============== ================================== ============ ============
``rr_count``  1     k >= 0         number of ``rr_edge`` rows of v    eps1         1
``rr_edge``   1     partner j < v  v's noisy bit towards j is 1       eps1         1
``local_count`` 2   integer r_v    rounded w_v plus DLap (below)      eps2         max(D-1, 1)
``run_id``    2     48-bit integer the broadcast's run id             eps2         0
============= ===== ============== ================================== ============ ============

Optionally (``two-round-triangles-dlap``, the private-bound variant) every node also sends a
round-1 ``lower_degree`` row: its lower degree plus DLap(e^-eps0), sensitivity 1; the
curator's bound is then D = max(1, max of them).

``avg-clustering``: the same round 1 (with the private bound, also a ``degree_bound`` row: its
degree plus DLap(e^-eps0), sensitivity 1; D = max(2, max of them),
:func:`~ldpgraph.protocols.clustering.kernels.private_degree_bound`); round 2 sends ``degree`` (d_v +
DLap(e^-eps_d),
sensitivity 1), ``local_count`` (r_v = 2 w_v - C(m_v, 2) + DLap, sensitivity
:func:`~ldpgraph.protocols.clustering.kernels.count_sensitivity`, eps_t) and ``run_id`` (eps_t);
curator: :func:`~ldpgraph.protocols.clustering.kernels.average_clustering`.

One ``rr_count`` row per node (also when k = 0: node 0 has no lower node), then its k
``rr_edge`` rows, one per partner with a noisy 1 (the 0 bits are implied). Checks on read,
each error naming the file and row: protocol name and version, round, quantity, one ε per
quantity, the sensitivity, partner ids lower than the node (``0 <= j < v``), no duplicate
``rr_count`` row and no duplicate (v, j), every ``rr_edge`` with its node's ``rr_count``
row and exactly ``rr_count`` partners per node (a truncated file is caught), the node set
exactly ``0..n-1``; in round 2, every node of the broadcast's round 1 with exactly one
``local_count`` and one ``run_id`` row, no node outside it ("a round-2 row without its
round-1 rows"), and the run id equal to the broadcast's ("a broadcast from another run").

Poisoning: with ``outliers`` ("clip", "reject", "raise"; :class:`Round1Accumulator`,
:class:`Round2Accumulator`) the ``lower_degree``, ``local_count`` and ``degree`` values outside
the range a truthful node sends except with probability 1e-12 are clipped into it, dropped or
refused (the count is in the screening records), and ``influence_bound()`` says how far one
node's rows alone can move the estimate: the ranges in :mod:`ldpgraph.protocols.screening`, the
bounds with their proofs beside their estimators (:mod:`ldpgraph.protocols.triangles.kernels`,
:mod:`ldpgraph.protocols.clustering.kernels`).

Broadcast (after round 1 of ``two-round-triangles-dlap`` and ``avg-clustering``)
--------------------------------------------------------------------------------
:class:`TriangleBroadcast`: the noisy graph (every lower pair whose noisy bit is 1), the
public bound D on the lower degree (on the degree for ``avg-clustering``, with its projection
flag), n, eps1, and a run id: the first 48 bits of the SHA-256
of the canonical header and of the sorted pair indices (:func:`broadcast_run_id`), so an
edited or truncated noisy graph, or one from another run, is detected. Its file form is the
noisy bits packed, or an edge list when shorter (:mod:`ldpgraph.run.trianglefiles`).

Round 2 at node v (:func:`~ldpgraph.protocols.triangles.two_round.local_count_release`):
project the lower neighbour list to a uniform D-subset when longer,
:math:`w_v = \sum_{j<k \text{ kept}} (b_{jk} - q)`, release
:math:`r_v = \lfloor w_v + U\rfloor + \mathrm{DLap}(e^{-\varepsilon_2/(D-1)})`
(:func:`~ldpgraph.protocols.triangles.kernels.two_round_dlap_release`; privacy and unbiasedness
proofs there). Curator: :math:`\hat T = \sum_v r_v / (p - q)`.

Randomness: the sampler of :mod:`ldpgraph.core.sampling` (secure by default: exact Bernoulli on
the OS CSPRNG for RR bits, exact discrete Laplace, OS-random projection and rounding; seeded:
node v of round r draws from ``SeedSequence(seed, spawn_key=(r, v))``, so one node's rows do
not depend on which other nodes are simulated, nor on their order).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_nonnegative_int
from ..mechanisms import DiscreteLaplace
from .curator import Estimate
from .randomized_response import flip_probability, keep_probability, pair_from_index, pair_index
from .reports import PROTOCOLS
from .reportset import ReportChunk

__all__ = [
    "RR_PROTOCOL",
    "DLAP_PROTOCOL",
    "CLUSTERING_PROTOCOL",
    "ADAPTIVE_PROTOCOL",
    "DEGREE",
    "LOWER_DEGREE",
    "DEGREE_BOUND",
    "TriangleWire",
    "triangle_protocols",
    "triangle_wire",
    "RR_COUNT",
    "RR_EDGE",
    "LOCAL_COUNT",
    "RUN_ID",
    "MAX_NODES",
    "TriangleBroadcast",
    "broadcast_run_id",
    "chunk_from_columns",
    "Round1Accumulator",
    "Round1Summary",
    "Round2Accumulator",
    "rr_triangles_estimate",
    "rr_variance_estimate",
    "lower_wedge_square_estimate",
    "dlap_triangles_estimate",
]

RR_PROTOCOL = "rr-triangles"
DLAP_PROTOCOL = "two-round-triangles-dlap"
CLUSTERING_PROTOCOL = "avg-clustering"
#: the 4-cycle protocols (:mod:`ldpgraph.protocols.four_cycles.protocols`), on the same rows
RR_FOUR_CYCLES, FOUR_CYCLE_PROTOCOL = "rr-four-cycles", "two-round-four-cycles-dlap"
ADAPTIVE_PROTOCOL = "adaptive-clustering"
RR_COUNT, RR_EDGE, LOCAL_COUNT, RUN_ID, DEGREE = "rr_count", "rr_edge", "local_count", "run_id", "degree"
LOWER_DEGREE = "lower_degree"
#: ``avg-clustering`` with the private bound: round 1's noisy degree (D from them), not round 2's ``degree``
DEGREE_BOUND = "degree_bound"
# the curator's variance estimate holds n x n float64 matrices up to this many nodes
_DENSE_VARIANCE_MAX_NODES = 8192
#: nodes of a triangle protocol are 0..n-1 with n at most this (pair indices fit in int64)
MAX_NODES = 2**31
_LISTED = 10
#: pair indices per block of the round-1 accumulator (:meth:`Round1Accumulator._coalesce_edges`)
_EDGE_BLOCK = 1 << 23


@dataclass(frozen=True)
class TriangleWire:
    """What this module needs of a protocol on these rows: its class attribute ``wire``.

    Every decision of the broadcast and of the accumulators below comes from here (and from the
    protocol's ``version``), so a new protocol on these rows registers itself with a ``wire`` and
    touches no line of this module.

    Attributes
    ----------
    round1 : tuple of str
        The round-1 quantities a :class:`Round1Accumulator` of the protocol accepts by default
        (each of sensitivity 1): ``rr_count``, ``rr_edge``, optionally ``lower_degree``.
    round2 : callable or None
        ``broadcast -> {quantity: sensitivity}`` of round 2 (with ``run_id``); None: one round,
        no broadcast.
    min_bound : int
        The smallest public bound D of the broadcast.
    projection : bool
        Whether the broadcast carries the ``projection`` flag (in its header too): lists longer
        than D are projected to D, else such nodes refuse.
    averaged : bool
        Round 2 releases a ``degree`` and a ``local_count`` per node and the estimate averages
        each node's pair (:func:`~ldpgraph.protocols.clustering.kernels.average_clustering`; the degree
        rows are screened, ``outliers='reject'`` is refused); else the ``local_count`` rows are
        summed (:func:`dlap_triangles_estimate`).
    bounded : bool
        Whether the broadcast's ``bound`` is a public bound D of the protocol; False for a
        protocol without one (its header holds 1 there, and nothing says "bound D = 1").

    Examples
    --------
    >>> triangle_wire("two-round-triangles-dlap")[1].round1
    ('rr_count', 'rr_edge', 'lower_degree')
    """

    round1: tuple[str, ...] = ("rr_count", "rr_edge")
    round2: Callable[[TriangleBroadcast], dict[str, float]] | None = None
    min_bound: int = 1
    projection: bool = False
    averaged: bool = False
    bounded: bool = True


def triangle_protocols() -> dict[str, int]:
    """The registered protocols on these rows (those with a :class:`TriangleWire`) -> their version.

    In the order of :data:`~ldpgraph.protocols.reports.PROTOCOLS` (the format's version table),
    then registration order.

    >>> triangle_protocols()["avg-clustering"]
    1
    """
    from . import registry

    wired = {}
    for name in registry.names():
        proto = registry.get(name)
        if isinstance(getattr(proto, "wire", None), TriangleWire):
            wired[name] = int(proto.version)
    order = [p for p in PROTOCOLS if p in wired] + [p for p in wired if p not in PROTOCOLS]
    return {p: wired[p] for p in order}


def _registered_wire(protocol: str) -> tuple[Any, TriangleWire | None]:
    """``(protocol object, its TriangleWire)``: ``(None, None)`` for an unregistered name, ``(obj, None)``
    for a protocol without a wire. (A lookup, not a membership test on ``registry.names()``, which sorts
    them all: this runs a few times per run.)"""
    from . import registry

    try:
        proto = registry.get(protocol)
    except (ValueError, TypeError):
        return None, None
    wire = getattr(proto, "wire", None)
    return proto, (wire if isinstance(wire, TriangleWire) else None)


def triangle_wire(protocol: str) -> tuple[int, TriangleWire]:
    """``(version, wire)`` of a registered protocol on these rows; ValueError listing them otherwise."""
    proto, wire = _registered_wire(protocol)
    if wire is None:
        raise ValueError(f"protocol must be one of {sorted(triangle_protocols())}, got {protocol!r}")
    return int(proto.version), wire


def __getattr__(name: str) -> Any:
    # derived from the registry on use (it imports the protocol modules, which import this one)
    if name == "TRIANGLE_PROTOCOLS":
        return triangle_protocols()
    if name == "TWO_ROUND":
        return tuple(p for p in triangle_protocols() if triangle_wire(p)[1].round2 is not None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ------------------------------------------------------------------------------ broadcast


def _header(
    protocol: str, n_nodes: int, epsilon: float, bound: int | None, n_edges: int, projection: bool
) -> dict[str, Any]:
    version, wire = triangle_wire(protocol)
    out = {
        "protocol": protocol,
        "protocol_version": version,
        "round": 1,
        "n_nodes": int(n_nodes),
        "epsilon": float(epsilon),
        "bound": None if bound is None else int(bound),
        "n_edges": int(n_edges),
    }
    if wire.projection:  # whether lists longer than D are projected
        out["projection"] = bool(projection)
    return out


def broadcast_run_id(header: dict[str, Any], index: NDArray[np.int64]) -> int:
    """First 48 bits of SHA-256(canonical JSON header, newline, little-endian int64 pair indices).

    >>> broadcast_run_id({"a": 1}, np.array([0, 2])) == broadcast_run_id({"a": 1}, np.array([0, 2]))
    True
    """
    h = hashlib.sha256(json.dumps(header, sort_keys=True, separators=(",", ":")).encode())
    h.update(b"\n")
    h.update(memoryview(np.ascontiguousarray(index, dtype="<i8")).cast("B"))  # (no copy of the bytes)
    return int.from_bytes(h.digest()[:6], "big")


@dataclass(frozen=True, eq=False)
class TriangleBroadcast:
    """What the curator sends after round 1 of ``two-round-triangles-dlap`` or ``avg-clustering``.

    Attributes
    ----------
    protocol : str
    n_nodes : int
        Round 1's nodes are ``0..n_nodes-1``.
    epsilon : float
        eps1 (round 1): gives p and q.
    bound : int
        D, the public bound on the lower degree (``two-round-triangles-dlap``: round 2
        projects to it) or on the degree (``avg-clustering``, D >= 2).
    index : ndarray of int64
        Sorted :func:`~ldpgraph.protocols.randomized_response.pair_index` of the noisy edges.
    run_id : int
        :func:`broadcast_run_id` of the header and ``index``.
    projection : bool
        ``avg-clustering``: lists longer than D are projected to D (sensitivity 2(D-1));
        else such nodes refuse (sensitivity D-1).
    """

    protocol: str
    n_nodes: int
    epsilon: float
    bound: int
    index: NDArray[np.int64] = field(repr=False)
    run_id: int
    projection: bool = False

    @classmethod
    def build(
        cls,
        protocol: str,
        n_nodes: int,
        epsilon: float,
        bound: int,
        index: ArrayLike,
        *,
        projection: bool = False,
    ) -> TriangleBroadcast:
        """The broadcast with its run id computed (``index`` sorted, distinct)."""
        wire = triangle_wire(protocol)[1]
        if wire.round2 is None:
            two = [p for p in triangle_protocols() if triangle_wire(p)[1].round2 is not None]
            raise ValueError(f"only {' and '.join(two)} have a round 2, got {protocol!r}")
        idx = np.asarray(index, dtype=np.int64)
        bound = check_nonnegative_int(bound, "bound", minimum=wire.min_bound)
        if projection and not wire.projection:
            flagged = [p for p in triangle_protocols() if triangle_wire(p)[1].projection]
            raise ValueError(
                f"{protocol!r} always projects the lower list: projection is for {' and '.join(flagged)}"
            )
        head = _header(protocol, n_nodes, epsilon, bound, idx.size, bool(projection))
        return cls(
            protocol, int(n_nodes), float(epsilon), bound, idx, broadcast_run_id(head, idx), bool(projection)
        )

    @property
    def what(self) -> str:
        """What the broadcast holds, in a sentence (printed by ``ldpgraph curate``)."""
        known = self.protocol in triangle_protocols()  # (arr-triangles' broadcast extends this one)
        if not known or triangle_wire(self.protocol)[1].bounded:
            return f"noisy graph and bound D = {self.bound}"
        return "noisy graph"

    def header(self) -> dict[str, Any]:
        """The JSON header of the broadcast file (with the run id)."""
        out = _header(self.protocol, self.n_nodes, self.epsilon, self.bound, self.index.size, self.projection)
        out["run_id"] = self.run_id
        return out

    def sensitivities(self) -> dict[str, float]:
        """The sensitivity of every round-2 quantity (the protocol's :attr:`TriangleWire.round2`)."""
        rule = triangle_wire(self.protocol)[1].round2
        if rule is None:
            raise ValueError(f"{self.protocol!r} has no round 2")
        return dict(rule(self))

    @property
    def q(self) -> float:
        return flip_probability(self.epsilon)

    @property
    def p(self) -> float:
        return keep_probability(self.epsilon)

    def noisy_bit(self, j: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
        """The noisy bits of the pairs ``j < k`` (vectorized, 0/1 floats)."""
        pid = pair_index(np.asarray(k, dtype=np.int64), np.asarray(j, dtype=np.int64))
        if self.index.size == 0:
            return np.zeros(pid.shape)
        loc = np.minimum(np.searchsorted(self.index, pid), self.index.size - 1)
        return (self.index[loc] == pid).astype(np.float64)


# ------------------------------------------------------------------------------ curator


def chunk_from_columns(cols: dict[str, Any], source: str = "<memory>", first_row: int = 0) -> ReportChunk:
    """Report columns (as a round's release returns them) as one :class:`ReportChunk`."""
    from ..core.rows import name_codes

    def coded(column: Any) -> tuple[Any, list[str]]:
        got = name_codes(column)  # (codes, names) without a string per row; else pyarrow's encoding
        if got is None:
            import pyarrow as pa

            arr = pa.array(np.asarray(column, dtype=object), type=pa.string()).dictionary_encode()
            got = arr.indices.to_numpy(), arr.dictionary.to_pylist()
        return got

    q_codes, q_names = coded(cols["quantity"])
    p_codes, p_names = coded(cols["protocol"])
    return ReportChunk(
        source=source,
        first_row=first_row,
        node=np.asarray(cols["node"], dtype=np.int64),
        round=np.asarray(cols["round"], dtype=np.int64),
        quantity=q_codes,
        quantity_names=[str(s) for s in q_names],
        value=np.asarray(cols["value"], dtype=np.int64),
        epsilon=np.asarray(cols["epsilon"], dtype=np.float64),
        sensitivity=np.asarray(cols["sensitivity"], dtype=np.float64),
        protocol=p_codes,
        protocol_names=[str(s) for s in p_names],
        protocol_version=np.asarray(cols["protocol_version"], dtype=np.int64),
    )


class _Rows:
    """Row locators across chunks: (source, row) packed in one int64, for messages."""

    def __init__(self) -> None:
        self.sources: list[str] = []
        self._where: list[tuple[str, int | None]] = []

    def locate(self, chunk: ReportChunk, idx: NDArray[np.integer]) -> NDArray[np.int64]:
        key = (chunk.source, chunk.line_offset)
        if key not in self._where:
            self._where.append(key)
        s = self._where.index(key)
        return (np.int64(s) << 40) | (chunk.first_row + np.asarray(idx, dtype=np.int64))

    def remap(self, other: _Rows, locs: NDArray[np.int64]) -> NDArray[np.int64]:
        """``other``'s locators as this object's (its sources added here)."""
        for key in other._where:
            if key not in self._where:
                self._where.append(key)
        table = np.array([self._where.index(key) for key in other._where] or [0], dtype=np.int64)
        locs = np.asarray(locs, dtype=np.int64)
        return (table[locs >> 40] << 40) | (locs & ((1 << 40) - 1))

    def locate_compact(self, chunk: ReportChunk, idx: NDArray[np.integer]) -> tuple[int, Any, int | None]:
        """:meth:`locate` of the sorted rows ``idx`` of ``chunk``, compact: ``(the chunk's first locator,
        offsets, None)``, or ``(..., the offsets of the chunk's other rows, the chunk's length)`` when
        those are fewer (a node's rr_edge rows between its few other rows: almost nothing a row),
        offsets as uint32 where they fit; :func:`_expand_locs` gives the locators."""
        base = int(self.locate(chunk, np.zeros(1, dtype=np.int64))[0])
        idx = np.asarray(idx, dtype=np.int64)
        size = len(chunk)
        length = None
        if size - idx.size < idx.size:
            keep = np.ones(size, dtype=np.bool_)
            keep[idx] = False
            idx, length = np.flatnonzero(keep), size
        return base, (idx.astype(np.uint32) if size < 2**32 else idx), length

    def remap_compact(self, other: _Rows, parts: list[tuple[int, Any, int | None]]
                      ) -> list[tuple[int, Any, int | None]]:
        """``other``'s compact locators (:meth:`locate_compact`) as this object's."""
        if not parts:
            return []
        bases = self.remap(other, np.array([p[0] for p in parts], dtype=np.int64))
        return [(int(b), *p[1:]) for b, p in zip(bases.tolist(), parts, strict=True)]

    def text(self, loc: int) -> str:
        source, offset = self._where[int(loc) >> 40]
        row = int(loc) & ((1 << 40) - 1)
        return f"{source} row {row}" + ("" if offset is None else f" (line {row + offset})")


def _concatenate_freeing(parts: list[NDArray[np.int64]]) -> NDArray[np.int64]:
    """``np.concatenate(parts)``, each part dropped from ``parts`` once copied: the memory of the
    parts and of the whole at once is only the whole's and one part's (pages are committed as they
    are written)."""
    out = np.empty(sum(int(a.size) for a in parts), dtype=np.int64)
    at = 0
    for i in range(len(parts)):
        a, parts[i] = parts[i], None  # type: ignore[call-overload]
        out[at:at + a.size] = a
        at += a.size
        del a
    return out


def _expand_locs(parts: list[tuple[int, Any, int | None]]) -> NDArray[np.int64]:
    """The locators of compact parts (:meth:`_Rows.locate_compact`), in order."""
    out = []
    for base, off, length in parts:
        if length is not None:  # the offsets of the other rows: the rows are the rest
            keep = np.ones(length, dtype=np.bool_)
            keep[off] = False
            off = np.flatnonzero(keep)
        out.append(np.int64(base) + off.astype(np.int64))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


class _Base:
    def _merge_base(self, other: _Base) -> None:
        if type(other) is not type(self) or (other.protocol, other.round) != (self.protocol, self.round):
            raise ValueError(
                f"cannot merge accumulators of {other.protocol!r} round {other.round} into "
                f"{self.protocol!r} round {self.round}"
            )
        for name, (eps, where) in other.epsilon.items():
            mine = self.epsilon.setdefault(name, (eps, where))
            if mine[0] != eps:
                raise ValueError(f"mixed epsilon for {name!r}: {eps!r} in {where}, {mine[0]!r} in {mine[1]}")
        self.n_rows += other.n_rows
        self.sources += [x for x in other.sources if x not in self.sources]

    def _locs_of(self, other: _Base, locs: list[NDArray[np.int64]]) -> list[NDArray[np.int64]]:
        return [self.rows.remap(other.rows, a) for a in locs]

    def __init__(self, protocol: str, round: int, version: int | None = None) -> None:
        # a protocol of the layer passes its plan's name and version; else one of triangle_protocols()
        self.protocol = str(protocol)
        self.version = triangle_wire(self.protocol)[0] if version is None else int(version)
        self.round = round
        self.rows = _Rows()
        self.n_rows = 0
        self.epsilon: dict[str, tuple[float, str]] = {}
        self.sources: list[str] = []

    def _check(self, chunk: ReportChunk, sensitivity: dict[str, float]) -> dict[str, NDArray[np.intp]]:
        if chunk.source not in self.sources:
            self.sources.append(chunk.source)
        codes = np.asarray(chunk.protocol)
        for code, name in enumerate(chunk.protocol_names):
            rows = np.flatnonzero(codes == code)
            if rows.size and name != self.protocol:
                what = "protocol" if name in PROTOCOLS else "an unknown protocol"
                raise ValueError(
                    f"rows of {what} {name!r}, expected {self.protocol!r}: {chunk.rows_text(rows)}"
                    + (f" (curate them with --protocol {name})" if name in PROTOCOLS else "")
                )
        wrong = np.flatnonzero(np.asarray(chunk.protocol_version) != self.version)
        if wrong.size:
            raise ValueError(
                f"protocol {self.protocol!r} version {int(chunk.protocol_version[wrong[0]])} in "
                f"{chunk.rows_text(wrong)}: this package reads version {self.version} "
                "(a file from another protocol version)"
            )
        other = np.flatnonzero(np.asarray(chunk.round) != self.round)
        if other.size:
            raise ValueError(
                f"curating round {self.round} of {self.protocol!r}, but {chunk.rows_text(other)} "
                f"belong{'s' if other.size == 1 else ''} to round {int(chunk.round[other[0]])}"
            )
        qcodes = np.asarray(chunk.quantity)
        out = {}
        for code, name in enumerate(chunk.quantity_names):
            rows = np.flatnonzero(qcodes == code)
            if not rows.size:
                continue
            if name not in sensitivity:
                raise ValueError(
                    f"quantity {name!r} is not a round-{self.round} quantity of {self.protocol!r} "
                    f"(expected {', '.join(sensitivity)}): {chunk.rows_text(rows)}"
                )
            eps = np.asarray(chunk.epsilon)[rows]
            if name not in self.epsilon:
                e0 = float(eps[0])
                if not (math.isfinite(e0) and e0 > 0):
                    raise ValueError(f"epsilon must be in (0, inf), got {e0!r}: {chunk.rows_text(rows[:1])}")
                self.epsilon[name] = (e0, chunk.where(rows[0]))
            e0, where = self.epsilon[name]
            bad = np.flatnonzero(eps != e0)
            if bad.size:
                raise ValueError(
                    f"mixed epsilon for {name!r}: {float(eps[bad[0]])!r} in {chunk.rows_text(rows[bad])}, "
                    f"{e0!r} in {where}"
                )
            want = sensitivity[name]
            got = np.asarray(chunk.sensitivity)[rows]
            if np.ndim(want):  # per node (indexed by node id); rows of unknown nodes are refused later
                node = np.asarray(chunk.node)[rows]
                known = (node >= 0) & (node < len(want))
                bad = np.flatnonzero(known & (got != np.asarray(want)[np.where(known, node, 0)]))
                if bad.size:
                    v = int(node[bad[0]])
                    raise ValueError(
                        f"{name!r} rows must have their node's sensitivity (node {v}: {float(want[v]):g}, "
                        f"from the broadcast), got {float(got[bad[0]]):g}: {chunk.rows_text(rows[bad])}"
                    )
            else:
                bad = np.flatnonzero(got != want)
                if bad.size:
                    raise ValueError(
                        f"{name!r} rows must have sensitivity {want:g}, got "
                        f"{float(got[bad[0]]):g}: {chunk.rows_text(rows[bad])}"
                    )
            out[name] = rows
        self.n_rows += len(chunk)
        return out

    def _unique_nodes(
        self, nodes: list, locs: list, what: str
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        ids = np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64)
        loc = np.concatenate(locs) if locs else np.zeros(0, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        ids, loc = ids[order], loc[order]
        dup = np.flatnonzero(ids[1:] == ids[:-1]) if ids.size else ids
        if dup.size:
            i = int(dup[0])
            raise ValueError(
                f"duplicate {what} rows for node {int(ids[i])}: {self.rows.text(loc[i])} and "
                f"{self.rows.text(loc[i + 1])}"
            )
        return ids, loc


def _check_screening(outliers: Any, bounds: Any) -> tuple[str | None, Any]:
    from .screening import PublicBounds

    if outliers not in (None, "clip", "reject", "raise"):
        raise ValueError(f"outliers must be None, 'clip', 'reject' or 'raise', got {outliers!r}")
    if bounds is not None and not isinstance(bounds, PublicBounds):
        raise TypeError(f"bounds must be PublicBounds or None, got {type(bounds).__name__}")
    return outliers, bounds


def _ids_text(ids: NDArray[np.int64]) -> str:
    shown = ", ".join(str(int(v)) for v in ids[:_LISTED])
    return shown + (f" and {ids.size - _LISTED} more" if ids.size > _LISTED else "")


def _missing_text(ids: NDArray[np.int64], n: int) -> str:
    """'K: a, b, ...' for the ids of 0..n-1 absent from the sorted distinct ``ids`` (no O(n) array)."""
    gaps = np.diff(np.r_[-1, ids[ids < n], n]) - 1
    where = np.flatnonzero(gaps)
    starts = np.r_[-1, ids[ids < n]][where] + 1
    first: list[int] = []
    for a, k in zip(starts.tolist(), gaps[where].tolist(), strict=True):
        first.extend(range(a, a + min(k, _LISTED - len(first))))
        if len(first) >= _LISTED:
            break
    total = int(gaps.sum())
    more = f" and {total - len(first)} more" if total > len(first) else ""
    return f"{total}: {', '.join(map(str, first))}{more}"


@dataclass(frozen=True, eq=False)
class Round1Summary:
    """Validated round-1 rows: the noisy graph on nodes 0..n-1.

    Attributes
    ----------
    protocol : str
    n_nodes : int
    epsilon : float
    index : ndarray of int64
        Sorted pair indices of the noisy edges.
    n_rows : int
    sources : list of str
    max_lower_degree : int or None
        The largest ``lower_degree`` release (None without such rows).
    lower_degree_epsilon : float or None
    screening : dict
        ``"lower_degree"`` -> its :class:`~ldpgraph.protocols.screening.Screening` when the
        accumulator screened them (``outliers``).
    """

    protocol: str
    n_nodes: int
    epsilon: float
    index: NDArray[np.int64] = field(repr=False)
    n_rows: int
    sources: list[str]
    max_lower_degree: int | None = None
    lower_degree_epsilon: float | None = None
    screening: dict[str, Any] = field(default_factory=dict)
    #: the (screened) ``lower_degree`` releases of nodes 0..n-1, in node order (None without them, or
    #: when screening rejected some)
    lower_degrees: NDArray[np.int64] | None = field(default=None, repr=False)
    #: the round-1 ``degree`` (``rr-triangles``, for transitivity) or ``degree_bound`` (``avg-clustering``,
    #: its private bound: screened when the accumulator screens, only the kept rows) releases of nodes
    #: 0..n-1, in node order; else None
    degrees: NDArray[np.int64] | None = field(default=None, repr=False)

    def private_bound(self) -> int:
        """D = max(1, largest noisy lower degree): the bound of the private variant."""
        if self.max_lower_degree is None:
            raise ValueError("no lower_degree rows in round 1: pass a public bound D (--d-max)")
        return max(1, self.max_lower_degree)


class Round1Accumulator(_Base):
    """Streaming validation of round-1 rows (``rr_count``, ``rr_edge``) of a triangle protocol.

    Memory: the noisy graph (one int64 per noisy edge) plus O(n); the curator of these
    protocols needs the noisy graph anyway. ``outliers`` (None, "clip", "reject", "raise")
    screens the ``lower_degree`` rows in :meth:`summary` (node v: [-t, min(v, B) + t],
    :func:`~ldpgraph.protocols.screening.lower_degree_range`, B from ``bounds``). A protocol of
    the layer passes its plan's ``version`` and the round's ``quantities`` (name -> sensitivity:
    ``rr_count``, ``rr_edge``, optionally ``lower_degree``); by default those of ``protocol``.

    Examples
    --------
    >>> from ldpgraph.core import Seeded
    >>> from ldpgraph.protocols import registry
    >>> proto = registry.get("rr-triangles")
    >>> lists = [np.array([1, 2]), np.array([0, 2]), np.array([0, 1])]
    >>> rows = proto.rounds()[0].release(proto.plan(50.0), np.arange(3), lists, None, Seeded(0))
    >>> acc = Round1Accumulator("rr-triangles")
    >>> acc.add(chunk_from_columns(rows))
    >>> s = acc.summary()
    >>> s.n_nodes, s.index.tolist()
    (3, [0, 1, 2])
    """

    def __init__(
        self,
        protocol: str,
        *,
        expected_nodes: int | None = None,
        outliers: str | None = None,
        bounds: Any = None,
        quantities: dict[str, float] | None = None,
        version: int | None = None,
    ) -> None:
        super().__init__(protocol, 1, version)
        self.outliers, self.bounds = _check_screening(outliers, bounds)
        if quantities is None:
            quantities = dict.fromkeys(triangle_wire(self.protocol)[1].round1, 1.0)
        elif (not {RR_COUNT, RR_EDGE} <= set(quantities) <= {RR_COUNT, RR_EDGE, LOWER_DEGREE, DEGREE,
                                                               DEGREE_BOUND}
              or {DEGREE, DEGREE_BOUND} <= set(quantities)):
            raise ValueError(f"round-1 quantities are rr_count, rr_edge and optionally lower_degree and "
                             f"degree or degree_bound, got {sorted(quantities)}")
        self.quantities = dict(quantities)
        #: the round's one degree quantity (its rows go to the summary's ``degrees``)
        self._degree_q = DEGREE_BOUND if DEGREE_BOUND in self.quantities else DEGREE
        self.expected_nodes = (
            None
            if expected_nodes is None
            else check_nonnegative_int(expected_nodes, "expected_nodes", minimum=1)
        )
        self._count_nodes: list[NDArray[np.int64]] = []
        self._count_values: list[NDArray[np.int64]] = []
        self._count_locs: list[NDArray[np.int64]] = []
        # the noisy edges as pair indices (8 bytes each) and their rows' locators, compact (at most 4
        # bytes each, nearly none for a node's rows; read only for an error's message)
        self._edge_index: list[NDArray[np.int64]] = []
        self._edge_locs: list[tuple[int, Any, int | None]] = []
        self._summary: Round1Summary | None = None
        self._low_nodes: list[NDArray[np.int64]] = []
        self._low_values: list[NDArray[np.int64]] = []
        self._low_locs: list[NDArray[np.int64]] = []
        self._deg: tuple[list[NDArray[np.int64]], ...] = ([], [], [])  # degree rows: nodes, values, locators
        # rr_edge rows seen per node so far (sorted distinct nodes, their counts): node v has v lower
        # nodes, so more rows are refused as they arrive (memory stays bounded by what truthful nodes
        # send, whatever one node sends); sparse, so that a large id costs nothing (issue 36 finding 6)
        self._edge_nodes = np.zeros(0, dtype=np.int64)
        self._edge_counts = np.zeros(0, dtype=np.int64)

    def add(self, chunk: ReportChunk) -> None:
        """Check one chunk and keep its rows' content (node ids against the public n as they arrive)."""
        self._summary = None
        rows = self._check(chunk, self.quantities)
        node, value = np.asarray(chunk.node), np.asarray(chunk.value)
        big = np.flatnonzero(node >= MAX_NODES)
        if big.size:
            raise ValueError(
                f"node id {int(node[big[0]])} is too large: the nodes of a triangle protocol are "
                f"0..n-1 with n <= 2**31: {chunk.rows_text(big)}"
            )
        if self.expected_nodes is not None:
            extra = np.flatnonzero(node >= self.expected_nodes)
            if extra.size:
                raise ValueError(
                    f"node {int(node[extra[0]])} is not an expected node (nodes are "
                    f"0..{self.expected_nodes - 1}): {chunk.rows_text(extra)}"
                )
        if RR_EDGE in rows:
            r = rows[RR_EDGE]
            u, j = node[r], value[r]
            bad = np.flatnonzero((j < 0) | (j >= u))
            if bad.size:
                i = r[bad[0]]
                raise ValueError(
                    f"rr_edge partner id {int(value[i])} of node {int(node[i])} is not a lower node "
                    f"(0 <= partner < node): {chunk.rows_text(r[bad])}"
                )
            self._count_edges(u, chunk, r)
            self._edge_index.append(pair_index(u, j))
            self._coalesce_edges()
            self._edge_locs.append(self.rows.locate_compact(chunk, r))
        if RR_COUNT in rows:
            r = rows[RR_COUNT]
            bad = np.flatnonzero((value[r] < 0) | (value[r] > node[r]))
            if bad.size:
                i = r[bad[0]]
                raise ValueError(
                    f"rr_count {int(value[i])} of node {int(node[i])} is outside [0, node] (node v has v "
                    f"lower nodes): {chunk.rows_text(r[bad])}"
                )
            self._count_nodes.append(node[r])
            self._count_values.append(value[r])
            self._count_locs.append(self.rows.locate(chunk, r))
        if LOWER_DEGREE in rows:
            r = rows[LOWER_DEGREE]
            self._low_nodes.append(node[r])
            self._low_values.append(value[r])
            self._low_locs.append(self.rows.locate(chunk, r))
        if self._degree_q in rows:
            r = rows[self._degree_q]
            for part, x in zip(self._deg, (node[r], value[r], self.rows.locate(chunk, r)), strict=True):
                part.append(x)

    def _count_edges(self, u: NDArray[np.int64], chunk: ReportChunk, r: Any) -> None:
        """Add ``u``'s rr_edge rows to the per-node counts; refuse a node with more than v of them."""
        if u.size:
            nodes, counts = np.unique(u, return_counts=True)
            self._add_edge_counts(nodes, counts, lambda v: f": {chunk.rows_text(r[u == v][-1:])}")

    def _add_edge_counts(self, nodes: NDArray[np.int64], counts: NDArray[np.int64], where: Any) -> None:
        """Merge (sorted distinct ``nodes``, ``counts``) into the counts so far: memory and time in
        the number of distinct nodes read, never in the largest id."""
        both = np.concatenate([self._edge_nodes, nodes])
        self._edge_nodes, inverse = np.unique(both, return_inverse=True)
        total = np.zeros(self._edge_nodes.size, dtype=np.int64)
        np.add.at(total, inverse, np.concatenate([self._edge_counts, counts]))
        self._edge_counts = total
        over = np.flatnonzero(total > self._edge_nodes)
        if over.size:
            v = int(self._edge_nodes[over[0]])
            raise ValueError(
                f"node {v} sent {int(total[over[0]])} rr_edge rows, more than its {v} lower nodes "
                f"(repeated or forged rows){where(v)}"
            )

    def merge(self, other: Round1Accumulator) -> Round1Accumulator:
        """Add the rows of ``other`` (another partition); the summary does not depend on the order."""
        self._merge_base(other)
        self._summary = None
        self._add_edge_counts(other._edge_nodes, other._edge_counts,
                              lambda v: f" (in {', '.join(other.sources)})")
        if other.expected_nodes != self.expected_nodes:
            raise ValueError("cannot merge accumulators with different expected_nodes")
        self._count_nodes += other._count_nodes
        self._count_values += other._count_values
        self._count_locs += self._locs_of(other, other._count_locs)
        self._edge_index += other._edge_index
        self._edge_locs += self.rows.remap_compact(other.rows, other._edge_locs)
        self._low_nodes += other._low_nodes
        self._low_values += other._low_values
        self._low_locs += self._locs_of(other, other._low_locs)
        self._deg[0].extend(other._deg[0])
        self._deg[1].extend(other._deg[1])
        self._deg[2].extend(self._locs_of(other, other._deg[2]))
        return self

    def summary(self) -> Round1Summary:
        """The validated noisy graph; ValueError (file and row) if the rows do not form one."""
        if self._summary is not None:  # (no row added since)
            return self._summary
        if RR_COUNT not in self.epsilon:
            raise ValueError(f"no rr_count rows of {self.protocol!r} round 1 (every node sends one)")
        nodes = np.concatenate(self._count_nodes)
        counts = np.concatenate(self._count_values)
        order = np.argsort(nodes, kind="stable")
        ids, loc = self._unique_nodes(self._count_nodes, self._count_locs, RR_COUNT)
        counts = counts[order]
        n = self.expected_nodes if self.expected_nodes is not None else int(ids[-1]) + 1
        extra = ids[ids >= n]
        if extra.size:
            raise ValueError(
                f"node {int(extra[0])} is not an expected node (nodes are 0..{n - 1}): "
                f"{self.rows.text(loc[ids >= n][0])}"
            )
        if ids.size != n:
            more = f" and {len(self.sources) - 3} more" if len(self.sources) > 3 else ""
            shown = ", ".join(self.sources[:3]) + more
            raise ValueError(
                f"{shown}: nodes are 0..{n - 1}, but some sent no rr_count row: {_missing_text(ids, n)} "
                "(missing nodes)"
            )
        index = self._sorted_edges()
        first_out = int(np.searchsorted(index, n * (n - 1) // 2))  # pairs of nodes u >= n from here on
        if first_out < index.size:
            u = int(pair_from_index(index[first_out:first_out + 1])[0][0])
            raise ValueError(
                f"rr_edge row of node {u} without its node's rr_count row (nodes are "
                f"0..{n - 1}): {self.rows.text(self._sorted_locs()[first_out])}"
            )
        # rr_edge rows per node: node v's pairs are the indices [v(v-1)/2, v(v+1)/2)
        starts = np.arange(n + 1, dtype=np.int64)
        got = np.diff(np.searchsorted(index, starts * (starts - 1) // 2))
        wrong = np.flatnonzero(got != counts)
        if wrong.size:
            v = int(wrong[0])
            raise ValueError(
                f"node {v}: its rr_count row ({self.rows.text(loc[v])}) says {int(counts[v])} partners, "
                f"the files hold {int(got[v])} rr_edge rows of it (missing, truncated or extra rows; "
                f"{wrong.size} node(s) disagree)"
            )
        eps = self.epsilon[RR_COUNT][0]
        if RR_EDGE in self.epsilon and self.epsilon[RR_EDGE][0] != eps:
            raise ValueError(
                f"rr_edge epsilon {self.epsilon[RR_EDGE][0]!r} ({self.epsilon[RR_EDGE][1]}) differs from "
                f"rr_count epsilon {eps!r} ({self.epsilon[RR_COUNT][1]})"
            )
        top = eps0 = None
        screening: dict[str, Any] = {}
        if self._low_nodes:  # the private bound's inputs: one per node, every node
            low_ids, _ = self._unique_nodes(self._low_nodes, self._low_locs, LOWER_DEGREE)
            if low_ids.size != n or int(low_ids[-1]) != n - 1:
                raise ValueError(
                    f"some nodes sent lower_degree rows, but not all: {_missing_text(low_ids, n)} "
                    "are missing (every node sends one for the private bound)"
                )
            eps0 = self.epsilon[LOWER_DEGREE][0]
            low_order = np.argsort(np.concatenate(self._low_nodes), kind="stable")
            low = np.concatenate(self._low_values)[low_order]
            if self.outliers is not None:  # node v has at most v lower nodes
                from .screening import Screening, lower_degree_range, screen_values

                lo, hi = lower_degree_range(np.arange(n, dtype=np.int64), epsilon=eps0, bounds=self.bounds)
                low, keep, k = screen_values(low, lo, hi, self.outliers, LOWER_DEGREE)
                screening[LOWER_DEGREE] = Screening(LOWER_DEGREE, lo, int(hi.max()), self.outliers, k)
                kept = low[keep]
                top = int(kept.max()) if kept.size else 0
                low = low if kept.size == low.size else None
            else:
                top = int(low.max()) if low.size else 0
        else:
            low = None
        degrees = None
        if self._deg[0]:  # one per node, every node
            deg_ids, _ = self._unique_nodes(self._deg[0], self._deg[2], self._degree_q)
            if deg_ids.size != n or int(deg_ids[-1]) != n - 1:
                raise ValueError(f"some nodes sent {self._degree_q} rows, but not all: "
                                 f"{_missing_text(deg_ids, n)} are missing")
            degrees = np.concatenate(self._deg[1])[np.argsort(np.concatenate(self._deg[0]), kind="stable")]
            if self._degree_q == DEGREE_BOUND and self.outliers is not None:  # a degree is at most n - 1
                from .screening import Screening, degree_row_range, screen_values

                lo, hi = degree_row_range(bound=2, n_nodes=n, projection=True,
                                          epsilon=self.epsilon[DEGREE_BOUND][0], bounds=self.bounds)
                degrees, keep, k = screen_values(degrees, lo, hi, self.outliers, DEGREE_BOUND)
                screening[DEGREE_BOUND] = Screening(DEGREE_BOUND, lo, hi, self.outliers, k)
                degrees = degrees[keep]  # "reject": the bound is the maximum of the kept rows
        self._summary = Round1Summary(
            self.protocol, n, eps, index, self.n_rows, list(self.sources), top, eps0, screening, low, degrees
        )
        return self._summary

    def _coalesce_edges(self) -> None:
        """Join the newest chunks' pair indices into one block once they hold ``_EDGE_BLOCK``: the
        blocks are large allocations, returned to the system when freed, and the chunks' small ones
        are reused by the next chunks (the heap does not keep one freed chunk per chunk read)."""
        small = 0
        for k in range(len(self._edge_index) - 1, -1, -1):
            if self._edge_index[k].size >= _EDGE_BLOCK:
                break
            small += self._edge_index[k].size
        else:
            k = -1
        if small >= _EDGE_BLOCK:
            self._edge_index[k + 1:] = [np.concatenate(self._edge_index[k + 1:])]

    def _sorted_edges(self) -> NDArray[np.int64]:
        """The noisy edges' pair indices, sorted; ValueError naming both rows of a duplicate pair.

        Memory: the indices once more at most (none when they arrive sorted, as a node's rows in
        node order do); the rows' locators are expanded only for an error's message."""
        if len(self._edge_index) > 1:  # one array from here on (the same rows, in the same order)
            self._edge_index = [_concatenate_freeing(self._edge_index)]
        index = self._edge_index[0] if self._edge_index else np.zeros(0, dtype=np.int64)
        if index.size < 2 or bool(np.all(index[1:] > index[:-1])):
            return index
        index = np.sort(index)
        dup = np.flatnonzero(index[1:] == index[:-1])
        if dup.size:
            i = int(dup[0])
            order = np.argsort(self._edge_index[0], kind="stable")
            eloc = _expand_locs(self._edge_locs)[order]
            raise ValueError(
                f"duplicate rr_edge rows: {self.rows.text(eloc[i])} and {self.rows.text(eloc[i + 1])} "
                "report the same pair"
            )
        return index

    def _sorted_locs(self) -> NDArray[np.int64]:
        """The edges' row locators in the order of the sorted pair indices (for messages)."""
        index = self._edge_index[0] if self._edge_index else np.zeros(0, dtype=np.int64)
        return _expand_locs(self._edge_locs)[np.argsort(index, kind="stable")]

    def influence_bound(self) -> float:
        """``rr-triangles``: how far one node's round-1 bits alone move the estimate.

        :func:`~ldpgraph.protocols.triangles.kernels.rr_triangles_influence_bound` of n and eps1.
        """
        from .triangles.kernels import rr_triangles_influence_bound

        s = self.summary()
        return rr_triangles_influence_bound(s.n_nodes, s.epsilon)


class Round2Accumulator(_Base):
    """Streaming validation of round-2 rows against a broadcast (run id, node set, sensitivity).

    A protocol of the layer passes its plan's ``version`` and the round's ``sensitivities``
    (quantity -> a number, or an array over the nodes 0..n-1 where it is per node; with
    ``run_id``), and then any broadcast with ``protocol``, ``n_nodes`` and ``run_id``; by
    default they are the :class:`TriangleBroadcast`'s (:meth:`TriangleBroadcast.sensitivities`).

    ``outliers`` None (no screening), "clip", "reject" (``two-round-triangles-dlap`` only) or
    "raise": the poisoning screening of :meth:`screened_values`, which :meth:`estimate` uses;
    ``bounds`` (:class:`~ldpgraph.protocols.screening.PublicBounds`) tightens the degree range.

    Examples
    --------
    >>> from ldpgraph.core import Seeded
    >>> from ldpgraph.protocols import registry
    >>> proto = registry.get("two-round-triangles-dlap")
    >>> plan = proto.plan(2.0, d_max=1)
    >>> b = TriangleBroadcast.build("two-round-triangles-dlap", 2, 1.0, 1, [])
    >>> empty = [np.zeros(0, dtype=np.int64)] * 2
    >>> acc = Round2Accumulator(b)
    >>> acc.add(chunk_from_columns(proto.rounds()[1].release(plan, np.arange(2), empty, b, Seeded(0))))
    >>> acc.values()["local_count"].shape
    (2,)
    """

    def __init__(
        self,
        broadcast: TriangleBroadcast,
        *,
        outliers: str | None = None,
        bounds: Any = None,
        sensitivities: dict[str, Any] | None = None,
        version: int | None = None,
    ) -> None:
        if sensitivities is None:
            if not isinstance(broadcast, TriangleBroadcast):
                raise TypeError(f"broadcast must be a TriangleBroadcast, got {type(broadcast).__name__}")
            sensitivities = broadcast.sensitivities()
        elif RUN_ID not in sensitivities:
            raise ValueError(f"round-2 quantities include run_id, got {sorted(sensitivities)}")
        super().__init__(broadcast.protocol, 2, version)
        self.outliers, self.bounds = _check_screening(outliers, bounds)
        if self.outliers == "reject" and _averaged(broadcast.protocol):
            raise ValueError(
                f"outliers='reject' is not available for {broadcast.protocol} (its estimate averages every "
                "node's pair of releases): use 'clip' or 'raise'"
            )
        self.broadcast = broadcast
        self.sensitivity = dict(sensitivities)
        self._nodes: dict[str, list[NDArray[np.int64]]] = {q: [] for q in self.sensitivity}
        self._values: dict[str, list[NDArray[np.int64]]] = {q: [] for q in self.sensitivity}
        self._locs: dict[str, list[NDArray[np.int64]]] = {q: [] for q in self.sensitivity}

    def add(self, chunk: ReportChunk) -> None:
        """Check one chunk (run id, node set, sensitivity) and keep its values."""
        b = self.broadcast
        rows = self._check(chunk, self.sensitivity)
        node, value = np.asarray(chunk.node), np.asarray(chunk.value)
        for name, r in rows.items():
            outside = np.flatnonzero(node[r] >= b.n_nodes)
            if outside.size:
                raise ValueError(
                    f"round-2 row of node {int(node[r[outside[0]]])} without its round-1 rows (the "
                    f"broadcast's round 1 has nodes 0..{b.n_nodes - 1}): {chunk.rows_text(r[outside])}"
                )
            if name == RUN_ID:
                bad = np.flatnonzero(value[r] != b.run_id)
                if bad.size:
                    raise ValueError(
                        f"round-2 rows from another run: run id {int(value[r[bad[0]]])}, the broadcast's is "
                        f"{b.run_id}: {chunk.rows_text(r[bad])}"
                    )
            self._values[name].append(value[r])
            self._nodes[name].append(node[r])
            self._locs[name].append(self.rows.locate(chunk, r))

    def merge(self, other: Round2Accumulator) -> Round2Accumulator:
        """Add the rows of ``other`` (another partition, same run); the result is order-free."""
        self._merge_base(other)
        if other.broadcast.run_id != self.broadcast.run_id:
            raise ValueError("cannot merge accumulators of different broadcasts")
        for name in self.sensitivity:
            self._nodes[name] += other._nodes[name]
            self._values[name] += other._values[name]
            self._locs[name] += self._locs_of(other, other._locs[name])
        return self

    def values(self) -> dict[str, NDArray[np.int64]]:
        """Per released quantity, the values of nodes 0..n-1 (in node order), after the whole-set checks."""
        n = self.broadcast.n_nodes
        out = {}
        for name in self.sensitivity:
            ids, _ = self._unique_nodes(self._nodes[name], self._locs[name], name)
            if ids.size != n:
                raise ValueError(
                    f"node(s) of the broadcast's round 1 sent no {name} row in round 2: "
                    f"{_missing_text(ids, n)} (missing nodes)"
                )
            if name != RUN_ID:
                vals = np.empty(n, dtype=np.int64)
                vals[np.concatenate(self._nodes[name])] = np.concatenate(self._values[name])
                out[name] = vals
        return out

    def ranges(self) -> dict[str, tuple[int, int]]:
        """The admissible range of every released quantity (:mod:`~ldpgraph.protocols.screening`)."""
        from .screening import DEFAULT_ALPHA, degree_row_range, local_count_range

        b = self.broadcast
        alpha = DEFAULT_ALPHA if self.bounds is None else self.bounds.alpha
        out = {
            LOCAL_COUNT: local_count_range(
                averaged=_averaged(b.protocol), bound=b.bound, epsilon_rr=b.epsilon,
                epsilon=self.epsilon[LOCAL_COUNT][0], sensitivity=self.sensitivity[LOCAL_COUNT], alpha=alpha,
            )
        }
        if _averaged(b.protocol):
            out[DEGREE] = degree_row_range(
                bound=b.bound, n_nodes=b.n_nodes, projection=b.projection,
                epsilon=self.epsilon[DEGREE][0], bounds=self.bounds,
            )
        return out

    def screened_values(self) -> tuple[dict[str, NDArray[np.int64]], dict[str, Any]]:
        """(values, screening): :meth:`values` clipped / rejected / refused per ``outliers``.

        ``reject`` (``two-round-triangles-dlap``) drops a node's ``local_count`` from the sum.
        """
        from .screening import Screening, screen_values

        values = self.values()
        if self.outliers is None:
            return values, {}
        info = {}
        for name, (lo, hi) in self.ranges().items():
            v, keep, k = screen_values(values[name], lo, hi, self.outliers, name)
            values[name] = v[keep]
            info[name] = Screening(name, lo, hi, self.outliers, k)
        return values, info

    def influence_bound(self) -> float:
        """How far one node's round-2 rows alone move the estimate, once screened (clip / reject).

        :func:`~ldpgraph.protocols.triangles.kernels.dlap_triangles_influence_bound` or
        :func:`~ldpgraph.protocols.clustering.kernels.clustering_influence_bound` of :meth:`ranges`.
        """
        from .clustering.kernels import clustering_influence_bound
        from .triangles.kernels import dlap_triangles_influence_bound

        b, r = self.broadcast, self.ranges()
        if not _averaged(b.protocol):
            return dlap_triangles_influence_bound(*r[LOCAL_COUNT], b.epsilon)
        return clustering_influence_bound(
            r[DEGREE], r[LOCAL_COUNT], bound=b.bound, epsilon_rr=b.epsilon,
            epsilon_degree=self.epsilon[DEGREE][0], n_nodes=b.n_nodes,
        )

    def round1_influence_bound(self) -> float:
        """How far one node's round-1 bits move the other nodes' part of the estimate.

        :func:`~ldpgraph.protocols.triangles.kernels.dlap_round1_influence_bound`, or
        :func:`~ldpgraph.protocols.clustering.kernels.clustering_round1_influence_bound` at the
        (screened) degree releases; add :meth:`influence_bound` for the node's own rows.
        """
        from .clustering.kernels import clustering_round1_influence_bound
        from .triangles.kernels import dlap_round1_influence_bound

        b = self.broadcast
        if not _averaged(b.protocol):
            return dlap_round1_influence_bound(b.n_nodes, b.bound, b.epsilon)
        return clustering_round1_influence_bound(
            self.screened_values()[0][DEGREE], bound=b.bound, epsilon_rr=b.epsilon,
            epsilon_degree=self.epsilon[DEGREE][0],
        )

    def estimate(self) -> Estimate:
        """The protocol's estimate from the validated (and, with ``outliers``, screened) releases.

        ``two-round-triangles-dlap``: :func:`dlap_triangles_estimate`; ``avg-clustering``:
        :func:`~ldpgraph.protocols.clustering.kernels.average_clustering`.
        """
        values, _ = self.screened_values()
        b = self.broadcast
        if not _averaged(b.protocol):
            return dlap_triangles_estimate(values[LOCAL_COUNT], b, self.epsilon[LOCAL_COUNT][0])
        from .clustering.kernels import ClusteringBudget, ClusteringReleases, average_clustering

        budget = ClusteringBudget(
            rr=b.epsilon, degree=self.epsilon[DEGREE][0], triangles=self.epsilon[LOCAL_COUNT][0]
        )
        rel = ClusteringReleases(
            degrees=values[DEGREE],
            counts=values[LOCAL_COUNT],
            noisy_index=b.index,
            n_nodes=b.n_nodes,
            d_max=b.bound,
            projection=b.projection,
            budget=budget,
            sensitivity=int(self.sensitivity[LOCAL_COUNT]),
        )
        return average_clustering(rel)


def _averaged(protocol: str) -> bool:
    """:attr:`TriangleWire.averaged` of ``protocol`` (False for a protocol without a wire)."""
    wire = _registered_wire(protocol)[1]
    return wire is not None and wire.averaged


def _rr_triangle_rows(protocol: str) -> bool:
    """Whether ``protocol``'s round-1 rows are the whole release of a one-round triangle protocol."""
    proto = _registered_wire(protocol)[0]
    if proto is None or triangle_wire(protocol)[1].round2 is not None:
        return False
    return "triangles" in proto.statistics


def rr_triangles_estimate(summary: Round1Summary, *, method: str = "auto") -> Estimate:
    r"""The ``rr-triangles`` estimate from validated round-1 rows, with its standard error.

    :func:`~ldpgraph.protocols.triangles.kernels.rr_triangle_estimate` of the triple classes of the
    noisy graph (:func:`~ldpgraph.protocols.triangles.kernels.noisy_triple_classes`); the variance
    estimate is :func:`rr_variance_estimate` (None beyond 8192 nodes: it is dense).

    Examples
    --------
    >>> from ldpgraph.run import run_in_memory
    >>> from ldpgraph.graph import from_edge_array
    >>> triangle = from_edge_array([[0, 1], [1, 2], [0, 2]])
    >>> est = rr_triangles_estimate(run_in_memory("rr-triangles", triangle, 60.0, sampler=0).results[0])
    >>> round(est.value, 6), round(est.std_error, 6)
    (1.0, 0.0)
    """
    from .triangles.kernels import noisy_triple_classes, rr_triangle_estimate

    if not _rr_triangle_rows(summary.protocol):
        raise ValueError(
            f"rows of {summary.protocol!r}: the rr-triangles estimate needs {RR_PROTOCOL!r} rows"
        )
    classes = noisy_triple_classes(summary.n_nodes, summary.index, method=method)
    value = rr_triangle_estimate(classes, summary.epsilon)
    var = None
    if summary.n_nodes <= _DENSE_VARIANCE_MAX_NODES:
        var = rr_variance_estimate(summary.n_nodes, summary.index, summary.epsilon, classes=classes)
    se = None if var is None else math.sqrt(max(var, 0.0))
    return Estimate(value, se, var, "triangles",
                    note=None if var is not None else _dense_note(summary.n_nodes))


def _dense_note(n: int) -> str:
    return (f"the variance estimate is dense in the nodes and is not computed for {n:,} nodes (beyond "
            f"{_DENSE_VARIANCE_MAX_NODES:,})")


def _dense_z(
    n: int, index: ArrayLike, eps: float, *, lower: bool, pq: tuple[float, float] | None = None
) -> tuple[NDArray[np.float64], float, float]:
    """``(Z, p, q)``: z = (b - q)/(p - q) on the lower pairs (and mirrored unless ``lower``); p, q the
    probabilities of a noisy 1 on an edge and a non-edge (``pq``, default randomized response at ``eps``)."""
    n = check_nonnegative_int(n, "n_nodes")
    if n > _DENSE_VARIANCE_MAX_NODES:
        raise MemoryError(
            f"the variance estimate is dense: at most {_DENSE_VARIANCE_MAX_NODES} nodes, got {n}"
        )
    p, q = (keep_probability(eps), flip_probability(eps)) if pq is None else (float(pq[0]), float(pq[1]))
    u, v = pair_from_index(np.asarray(index, dtype=np.int64))
    z = np.full((n, n), -q / (p - q))
    z[u, v] = p / (p - q)
    z = np.tril(z, k=-1)
    if not lower:
        z += z.T
    return z, p, q


def _row_moments(
    n: int, index: ArrayLike, p: float, q: float, *, lower: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Row sums of z and of z^2, and the sum of z^4, of :func:`_dense_z`'s matrix, from counts.

    A row holds k entries z1 = p/(p-q) (its noisy edges) and c entries z0 = -q/(p-q) (its other
    pairs: c = v - k below the diagonal, or n - 1 - k in the symmetric matrix): no n x n temporary.
    """
    u, v = pair_from_index(np.asarray(index, dtype=np.int64))
    z1, z0 = p / (p - q), -q / (p - q)
    if lower:
        k = np.bincount(u, minlength=n).astype(np.float64)
        c = np.arange(n, dtype=np.float64) - k
    else:
        k = (np.bincount(u, minlength=n) + np.bincount(v, minlength=n)).astype(np.float64)
        c = (n - 1.0) - k
    return k * z1 + c * z0, k * z1**2 + c * z0**2, float(np.sum(k) * z1**4 + np.sum(c) * z0**4)


def _gram_sums(z: NDArray[np.float64]) -> tuple[float, float]:
    r"""``(sum_{j != k} G_jk^2, sum_j G_jj)`` of :math:`G = Z^\top Z` (BLAS syrk: upper triangle)."""
    from scipy.linalg import blas

    g = blas.dsyrk(1.0, z, trans=1)  # upper triangle of z^T z; the strict lower triangle stays 0
    diag = np.diag(g).copy()
    upper = float(np.einsum("ij,ij->", g, g)) - float(np.dot(diag, diag))
    return 2.0 * upper, float(diag.sum())


def rr_variance_estimate(
    n_nodes: int, index: ArrayLike, epsilon: float, *, classes: tuple[int, int, int, int] | None = None
) -> float:
    r"""Unbiased estimate of the variance of the ``rr-triangles`` estimate, from the noisy graph.

    Notes
    -----
    :func:`~ldpgraph.protocols.triangles.kernels.rr_triangle_variance` is
    :math:`\sum_\tau \prod_{e\in\tau}(a_e + \sigma^2) - T + \sigma^2 Q`,
    :math:`Q = \sum_{i<j} c_{ij}(c_{ij} - 1)` (the product form of
    :math:`\sum_k n_k (1+\sigma^2)^k\sigma^{2(3-k)}`, as :math:`E z_e^2 = a_e + \sigma^2`).
    With :math:`z_e = (b_e - q)/(p-q)`, independent across pairs with :math:`E z_e = a_e`:

    - :math:`\prod_{e\in\tau}(z_e + \sigma^2)` is unbiased for :math:`\prod(a_e + \sigma^2)`;
      summed over the triples it is :math:`\sum_l m_l y_1^l y_0^{3-l}` with
      :math:`y_1 = p/(p-q) + \sigma^2`, :math:`y_0 = -q/(p-q) + \sigma^2` and :math:`m_l` the
      noisy triple classes;
    - :math:`\hat T` is unbiased for T;
    - :math:`c_{ij}(c_{ij}-1) = \sum_{k \ne l} a_{ik}a_{jk}a_{il}a_{jl}`, four distinct pairs, so
      :math:`\hat Q = \sum_{i<j}[(Z^2)_{ij}^2 - \sum_k z_{ik}^2 z_{jk}^2]` is unbiased
      (Z the symmetric matrix of the z, zero diagonal).

    Dense: one BLAS syrk of an n x n float64 matrix (at most 8192 nodes). It can be negative.

    Examples
    --------
    >>> rr_variance_estimate(3, [0, 1, 2], 60.0) < 1e-9   # eps -> inf: no noise
    True
    """
    from .triangles.kernels import noisy_triple_classes, rr_triangle_estimate

    eps = check_epsilon(epsilon)
    z, p, q = _dense_z(n_nodes, index, eps, lower=False)
    idx = np.asarray(index, dtype=np.int64)
    m = noisy_triple_classes(z.shape[0], idx) if classes is None else classes
    s2 = math.exp(-eps) / (-math.expm1(-eps)) ** 2  # e^eps / (e^eps - 1)^2, no overflow
    y1, y0 = p / (p - q) + s2, -q / (p - q) + s2
    prod_sum = math.fsum(m[k] * y1**k * y0 ** (3 - k) for k in range(4))
    off_sq, _ = _gram_sums(z)
    del z
    _, row2, fourth = _row_moments(int(n_nodes), idx, p, q, lower=False)
    q_hat = (off_sq - (float(np.dot(row2, row2)) - fourth)) / 2.0
    return prod_sum - rr_triangle_estimate(m, eps) + s2 * q_hat


def lower_wedge_square_estimate(
    n_nodes: int, index: ArrayLike, epsilon: float, *, pq: tuple[float, float] | None = None
) -> float:
    r"""Unbiased estimate of :math:`C = \sum_{j<k} (c^+_{jk})^2` from a randomized-response graph.

    ``pq``: the probabilities (p, q) of a noisy 1 on an edge and on a non-edge when the bits are
    not plain randomized response at ``epsilon`` (ARR: :math:`(\mu p, \mu q)`); the proof below
    needs only independent bits with those means.

    :math:`c^+_{jk} = \sum_{v > \max(j,k)} a_{vj}a_{vk}`. With :math:`z_{vj} = (b_{vj} - q)/(p-q)`
    for ``j < v`` (zero above), :math:`M = Z^\top Z`:

    .. math:: \hat C = \sum_{j<k} \Big[M_{jk}^2 - \sum_v z_{vj}^2 z_{vk}^2 + M_{jk}\Big].

    Notes
    -----
    The bits of distinct pairs are independent, :math:`E z = a` and :math:`E z^2 = a + \sigma^2`.
    :math:`M_{jk}^2 = \sum_{v,v'} z_{vj}z_{vk}z_{v'j}z_{v'k}`: for :math:`v \ne v'` four distinct
    pairs, mean :math:`a_{vj}a_{vk}a_{v'j}a_{v'k}`; for :math:`v = v'` the subtracted term, so
    the first two terms estimate :math:`\sum_{v\ne v'}a_{vj}a_{vk}a_{v'j}a_{v'k}` unbiasedly,
    and :math:`M_{jk}` estimates :math:`\sum_v a_{vj}a_{vk}`; their sum is
    :math:`(c^+_{jk})^2`. Dense: one BLAS syrk of an n x n float64 matrix (at most 8192 nodes).

    Examples
    --------
    >>> round(lower_wedge_square_estimate(3, [0, 1, 2], 60.0), 6)   # triangle, no noise: c+_01 = 1
    1.0
    """
    z, p, q = _dense_z(n_nodes, index, check_epsilon(epsilon), lower=True, pq=pq)
    off_sq, _ = _gram_sums(z)
    del z
    row1, row2, fourth = _row_moments(int(n_nodes), index, p, q, lower=True)
    self_terms = (float(np.dot(row2, row2)) - fourth) / 2.0
    lin = (float(np.dot(row1, row1)) - float(row2.sum())) / 2.0
    return off_sq / 2.0 - self_terms + lin


def dlap_triangles_estimate(values: ArrayLike, broadcast: TriangleBroadcast, epsilon2: float) -> Estimate:
    r"""The ``two-round-triangles-dlap`` estimate :math:`\sum_v r_v / (p-q)` with its standard error.

    Notes
    -----
    The sum of the integer releases is exact (Python integers). Without projection
    (D at least every lower degree), :math:`\operatorname{Var}\hat T = [pq\,C + \sum_v f_v(1-f_v)
    + n\sigma^2_{DLap}] / (p-q)^2` (:func:`~ldpgraph.protocols.triangles.kernels.two_round_variance`).
    The variance estimate uses the unbiased :func:`lower_wedge_square_estimate` of C from the
    broadcast and the bound n/4 for the rounding term (conservative by at most n/4, beside
    :math:`n\sigma^2 \ge n/2`); a public D below some lower degree adds projection terms this
    estimate omits. Up to that bound it is unbiased. None beyond 8192 nodes (dense kernel).

    Examples
    --------
    >>> b = TriangleBroadcast.build("two-round-triangles-dlap", 3, 60.0, 2, [0, 1, 2])
    >>> round(dlap_triangles_estimate([0, 0, 1], b, 1.0).value, 6)
    1.0
    """
    b = broadcast
    eps2 = check_epsilon(epsilon2)
    vals = [int(x) for x in np.asarray(values, dtype=np.int64).tolist()]
    p, q = b.p, b.q
    value = sum(vals) / (p - q)
    var = None
    if b.n_nodes <= _DENSE_VARIANCE_MAX_NODES:
        # C >= 0, so E max(C^, 0) >= C: clipped, the bound stays conservative and is never negative
        c_hat = max(lower_wedge_square_estimate(b.n_nodes, b.index, b.epsilon), 0.0)
        noise = DiscreteLaplace(epsilon=eps2, sensitivity=max(b.bound - 1, 1)).variance
        var = (p * q * c_hat + b.n_nodes / 4.0 + b.n_nodes * noise) / (p - q) ** 2
    se = None if var is None else math.sqrt(max(var, 0.0))
    return Estimate(value, se, var, "triangles", se_kind="upper-bound",  # n/4 bounds the rounding's variance
                    note=None if var is not None else _dense_note(b.n_nodes))
