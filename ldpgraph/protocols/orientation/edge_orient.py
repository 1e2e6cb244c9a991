r"""``edge-orient-triangles`` on the protocol layer: our EdgeOrientΔ, deployable in two rounds.

The deployed form of :func:`~ldpgraph.protocols.orientation.kernels.edge_orient_trial` with local
bounds (``bounds="local"``): same budget split (:func:`~ldpgraph.protocols.orientation.kernels.
edge_orient_budget`), same law (tested).

================ =============================================================================
round            node v releases
================ =============================================================================
1 ``order+rr``   ``degree``: :math:`\tilde d_v = d_v + \mathrm{DLap}(e^{-\varepsilon_o})` (the public
                 order, sensitivity 1); ``rr_count``/``rr_edge``: randomized response at ε₁ on its
                 lower adjacency bits (the draws of ``two-round-triangles-dlap``'s round 1)
broadcast        the noisy graph, every node's noisy degree (the order: rank by descending
                 :math:`(\tilde d, \text{id})`), n, ε₁ and a run id (:class:`EdgeOrientBroadcast`;
                 file form: the edge list of :mod:`ldpgraph.run.trianglefiles`, the noisy degrees in
                 its header)
2 ``bound+count`` ``out_degree``: :math:`\tilde m_v = m_v + \mathrm{DLap}(e^{-\varepsilon_0})`, m_v its
                 out-degree (neighbours before it in the order; sensitivity 1); then its bound
                 :math:`D_v = \max(\tilde m_v + c, 1)`, :math:`c = \lceil\text{margin}/\varepsilon_0\rceil`
                 (:func:`~ldpgraph.protocols.orientation.kernels.local_bounds`), and ``local_count``:
                 :math:`r_v = \lfloor \alpha_v w_v + U\rfloor + \mathrm{DLap}(e^{-\varepsilon_2/\Delta_v})`,
                 :math:`w_v = \sum_{j<k \in O_v}(b_{jk} - q)` over its out-list, scaled by
                 :math:`\alpha_v = \min(1, (D_v-1)/(m_v-1))`, the row's sensitivity
                 :math:`\Delta_v = \max(\lceil\frac{1+p}2(D_v - 1)\rceil, 1)`
                 (:func:`~ldpgraph.protocols.orientation.kernels.count_sensitivity`); the run id
================ =============================================================================

Why the bound is not in the broadcast: :math:`m_v` is defined by the order, which is public only
after round 1, and :math:`D_v` is a function of node v's own release :math:`\tilde m_v` alone. So
v releases :math:`\tilde m_v` and the count calibrated to it in one round (adaptive sequential
composition: for every value of :math:`\tilde m_v` the count is ε₂-DP at sensitivity
:math:`\Delta_v`, proof in :func:`~ldpgraph.protocols.orientation.kernels.count_sensitivity`), and
the curator checks every row's sensitivity against the node's ``out_degree`` row. The bound is
public all the same (its rows), the law is the simulator's, and a node downloads one broadcast
(a third round to broadcast the bounds would make every node download the noisy graph twice).
The global variant (one bound from every node's noisy out-degree) needs that third round and is
simulated only.

Curator: :math:`\hat T = \sum_v r_v / (p - q)` (exact integer sum). Given the order, unbiased
when every :math:`D_v \ge m_v` (each node is scaled down with probability
:func:`~ldpgraph.protocols.orientation.kernels.projection_probability`: a downward bias); its variance
given order and bounds is :func:`~ldpgraph.protocols.orientation.kernels.edge_orient_variance`, estimated
conservatively from the broadcast and the rows (:func:`edge_orient_estimate`).

Privacy: ε_o + ε₁ in round 1 and ε₀ + ε₂ in round 2; a node spends
ε = ε_o + ε₁ + ε₀ + ε₂ (default split 0.01, 0.46, 0.15, 0.38).

Transitivity (``degree_share`` s, 0.1 where ``--stat transitivity`` leaves it open): round 2 also
releases ``transitivity_degree`` :math:`d_v + \mathrm{DLap}(e^{-s\varepsilon})` (after the count's
draws), the rest (1 - s) ε is split as above, and the curator's
:math:`\hat\tau = 3\hat T/\hat S_2` has a delta-method standard error.

Simulation (:meth:`EdgeOrientProtocol.simulate`): :func:`~ldpgraph.protocols.orientation.kernels.
edge_orient_trial` under the plan (the same law, tested). Two protocols beside it are simulated
only: ``edge-orient-triangles-global`` (:class:`EdgeOrientGlobal`: one bound for all, the maximum
of the noisy out-degrees, which needs a third round) and ``edge-orient-reference``
(:class:`EdgeOrientReference`: the authors' code,
:func:`~ldpgraph.protocols.orientation.kernels.reference_edge_orient`).

Examples
--------
>>> EdgeOrientProtocol().plan(1.0).describe()
'epsilon 1 = rr 0.46 + order 0.01 + out-degree 0.15 + local-count 0.38'
>>> from ldpgraph.graph import from_edge_array
>>> from ldpgraph.run import run_in_memory
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> run = run_in_memory("edge-orient-triangles", g, 400.0, sampler=0)
>>> round(run.estimate.value, 6), run.estimate.std_error > 0
(1.0, True)
>>> p = EdgeOrientProtocol()
>>> p.simulate(g, p.plan(400.0), "triangles", 2, np.random.default_rng(0)).tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon
from ...core.plan import Plan, Release, RoundPlan
from ...core.protocol import Accumulator, Option, Preset, Protocol, Round
from ...core.rows import Rows
from ...core.sampling import Sampler
from ..curator import Estimate
from ..deploy_triangles import (
    DEGREE,
    LOCAL_COUNT,
    MAX_NODES,
    RR_COUNT,
    RR_EDGE,
    RUN_ID,
    Round2Accumulator,
    TriangleBroadcast,
    broadcast_run_id,
)
from ..randomized_response import pack_pairs, pair_from_index, pair_index, unpack_pairs, upper_pairs
from ..registry import register
from ..reports import PROTOCOLS, broadcast_header
from ..triangles.rr_triangles import (
    DEFAULT_DEGREE_SHARE,
    DEGREE_SHARE,
    RandomizedResponseRound,
    check_row_epsilons,
)
from ..triangles.two_round import round_two_rows
from .kernels import (
    MARGIN,
    count_sensitivity,
    edge_orient_budget,
    edge_orient_trial,
    reference_edge_orient,
    scale_factors,
)

__all__ = ["EDGE_ORIENT_PROTOCOL", "OUT_DEGREE", "TRANSITIVITY_DEGREE", "EdgeOrientBroadcast",
           "EdgeOrientProtocol", "EdgeOrientGlobal", "EdgeOrientReference", "EDGE_ORIENT_VS_REFERENCE",
           "out_neighbours", "bound_and_count", "bound_margin", "ranks", "prefix_bytes", "download_bytes",
           "encode_oriented_broadcast", "decode_edge_orient_broadcast"]

EDGE_ORIENT_PROTOCOL = "edge-orient-triangles"
OUT_DEGREE = "out_degree"
#: round 2's degree release for transitivity (``degree`` is round 1's: the order)
TRANSITIVITY_DEGREE = "transitivity_degree"
#: ``edge-orient-triangles`` against the reference at the same per-node total (mean |relative error|,
#: ``scripts/edge_orient_node_budget.py``)
EDGE_ORIENT_VS_REFERENCE = ("worse at eps_paper 0.5 (a node's 0.375): 0.199 vs 0.133 on Facebook, 0.545 vs "
                            "0.342 on Wiki-Vote (1.5-1.6x); better at eps_paper 1 (0.050 vs 0.062; Wiki-Vote "
                            "0.106 vs 0.115, within noise) and 2 (Facebook 0.013 vs 0.075); mean |relative "
                            "error|, 20 runs")
# written by the accumulator in place of the per-node local_count sensitivities it checks itself
_CHECKED_LATER = -1.0
# the curator's variance estimate is dense in the nodes (as the two-round protocol's)
_DENSE_MAX_NODES = 8192


def bound_margin(epsilon_bound: float, margin: float) -> int:
    """:math:`c = \\lceil \\text{margin}/\\varepsilon_0\\rceil`, as
    :func:`~ldpgraph.protocols.orientation.kernels.local_bounds`.

    >>> bound_margin(0.2, 1.5)
    8
    """
    return int(math.ceil(float(margin) / check_epsilon(epsilon_bound) - 1e-9))


@dataclass(frozen=True, eq=False)
class EdgeOrientBroadcast(TriangleBroadcast):
    """What the curator sends after round 1: the noisy graph and the order (every node's noisy degree).

    ``bound`` (shown by the CLI) is the largest noisy degree; the bounds :math:`D_v` come with
    round 2's rows.
    """

    degrees: NDArray[np.int64] | None = field(default=None, repr=False)

    @classmethod
    def build_order(cls, n_nodes: int, epsilon: float, index: Any, degrees: Any) -> EdgeOrientBroadcast:
        """The broadcast with its run id (``index`` sorted, distinct pair indices of the noisy graph)."""
        idx = np.asarray(index, dtype=np.int64)
        deg = np.asarray(degrees, dtype=np.int64)
        if deg.shape != (int(n_nodes),):
            raise ValueError(f"the order is one noisy degree per node ({n_nodes}), got shape {deg.shape}")
        head = _header(n_nodes, epsilon, idx.size, deg)
        return cls(EDGE_ORIENT_PROTOCOL, int(n_nodes), float(epsilon), max(int(deg.max(initial=1)), 1), idx,
                   broadcast_run_id(head, idx), False, deg)

    @property
    def what(self) -> str:
        """What the broadcast holds, for the CLI's lines."""
        return f"noisy graph and the order: noisy degrees up to {self.bound}"

    def node_download(self, nodes: Any) -> float:
        """The mean bytes ``nodes`` download of the file form (:func:`download_bytes`)."""
        return float(np.mean(download_bytes(self)[np.asarray(nodes, dtype=np.int64)]))

    def download(self, file_size: int) -> str:
        """The CLI's download line: a node reads the header and its rank's prefix (:func:`download_bytes`)."""
        d = download_bytes(self)
        return (f"a node downloads the header and the prefix its rank needs: {d.mean():,.0f} bytes on "
                f"average, at most {int(d.max()):,} (file {file_size:,})")

    def header(self) -> dict[str, Any]:
        out = _header(self.n_nodes, self.epsilon, self.index.size, self.degrees)
        out["run_id"] = self.run_id
        return out


def _header(n: int, epsilon: float, n_edges: int, degrees: NDArray[np.int64]) -> dict[str, Any]:
    return {
        "protocol": EDGE_ORIENT_PROTOCOL,
        "protocol_version": PROTOCOLS[EDGE_ORIENT_PROTOCOL],
        "round": 1,
        "n_nodes": int(n),
        "epsilon": float(epsilon),
        "n_edges": int(n_edges),
        "degrees": [int(x) for x in degrees.tolist()],
    }


#: the broadcast file of ``edge-orient-triangles``: noisy bits packed in the order's labels
BROADCAST_ORIENTED_FORMAT = "ldpgraph-broadcast-oriented"
BROADCAST_ORIENTED_VERSION = 1


def ranks(degrees: Any) -> NDArray[np.int64]:
    """Each node's rank in the public order: 0 for the highest noisy degree, ties by the higher id
    (:func:`~ldpgraph.protocols.orientation.kernels.orient_relabel`'s new ids).

    >>> ranks(np.array([0, 5, 3, 5])).tolist()
    [3, 1, 2, 0]
    """
    deg = np.asarray(degrees, dtype=np.int64)
    order = np.lexsort((-np.arange(deg.size), -deg))
    out = np.empty(deg.size, dtype=np.int64)
    out[order] = np.arange(deg.size)
    return out


def prefix_bytes(rank: Any) -> NDArray[np.int64]:
    r"""The bytes of packed bits a node of rank r reads: :math:`\lceil\binom r2/8\rceil` (the pairs among
    the nodes before it, where all its out-neighbours are).

    >>> prefix_bytes([0, 1, 2, 5, 100]).tolist()
    [0, 0, 1, 2, 619]
    """
    r = np.asarray(rank, dtype=np.int64)
    return (r * (r - 1) // 2 + 7) // 8


def encode_oriented_broadcast(broadcast: EdgeOrientBroadcast) -> bytes:
    r"""The bytes of ``broadcast``: two header lines and the noisy bits packed in the order's labels.

    ``# ldpgraph-broadcast-oriented 1``, ``# {JSON header}`` (with the noisy degrees, the order,
    and the run id), then :math:`\lceil\binom n2/8\rceil` bytes: bit i (most significant first in
    each byte) is the noisy bit of the pair with index i of :func:`~ldpgraph.protocols.
    randomized_response.pair_index` in rank labels (:func:`ranks`), i.e. the lower triangle of the
    noisy adjacency matrix row by row in the order. A node of rank r needs the bits of pairs among
    ranks below r only (its out-neighbours are there), the first :math:`\binom r2` bits: it
    downloads the header lines and :func:`prefix_bytes` of the body, a range chosen by its rank,
    which is public (round 1's noisy degrees), so the request does not depend on its neighbours.
    """
    n = broadcast.n_nodes
    body = pack_pairs(relabelled_index(broadcast), n * (n - 1) // 2)
    return _head_lines(broadcast) + body.tobytes()


def _head_lines(broadcast: EdgeOrientBroadcast) -> bytes:
    return (f"# {BROADCAST_ORIENTED_FORMAT} {BROADCAST_ORIENTED_VERSION}\n# "
            + json.dumps(broadcast.header(), sort_keys=True) + "\n").encode()


def download_bytes(broadcast: EdgeOrientBroadcast) -> NDArray[np.int64]:
    """What each node downloads of the file form: the header lines and its :func:`prefix_bytes`."""
    return len(_head_lines(broadcast)) + prefix_bytes(ranks(broadcast.degrees))


def decode_edge_orient_broadcast(data: bytes, source: str = "broadcast", *,
                                 node: int | None = None) -> EdgeOrientBroadcast:
    """Decode and check the bytes of an ``edge-orient-triangles`` broadcast
    (:func:`encode_oriented_broadcast`; errors name ``source``, the file).

    ``node``: read only what that node downloads (the header and its :func:`prefix_bytes`): a
    broadcast that knows the bits among the nodes before it in the order and nothing else (the run
    id is the header's: it cannot be checked without the rest). Without ``node`` all of it is
    decoded, its length and the run id against the SHA-256 of header and pairs checked.
    """
    import io

    path = source
    with io.BytesIO(data) as fh:
        tag = fh.readline().decode("utf-8", "replace").strip()
        want = f"# {BROADCAST_ORIENTED_FORMAT} {BROADCAST_ORIENTED_VERSION}"
        if tag != want:
            raise ValueError(f"{path} line 1: not an {BROADCAST_ORIENTED_FORMAT} version "
                             f"{BROADCAST_ORIENTED_VERSION} file (got {tag[:60]!r}, expected {want!r})")
        header = broadcast_header(path, fh.readline().decode("utf-8", "replace").strip())
        _check_header(path, header)
        n, deg = header["n_nodes"], np.asarray(header["degrees"], dtype=np.int64)
        full = (n * (n - 1) // 2 + 7) // 8
        if node is None:
            want_bytes, limit = full, n * (n - 1) // 2
        else:
            if not 0 <= int(node) < n:
                raise ValueError(f"node {node} is not one of the broadcast's {n} nodes")
            r = int(ranks(deg)[int(node)])
            want_bytes, limit = int(prefix_bytes(r)), r * (r - 1) // 2  # the last byte's tail: not its own
        body = np.frombuffer(fh.read(want_bytes), dtype=np.uint8)
        extra = fh.read(1) if node is None else b""
    if body.size != want_bytes or extra:
        raise ValueError(f"{path}: {BROADCAST_ORIENTED_FORMAT} body of {full:,} bytes expected for {n} "
                         f"nodes, got {'more' if extra else f'{body.size:,}'} (truncated or edited)")
    idx = unpack_pairs(body, limit)
    order = np.argsort(ranks(deg))  # rank -> node
    hi, lo = pair_from_index(idx)
    u, v = order[hi], order[lo]
    index = np.sort(pair_index(np.maximum(u, v), np.minimum(u, v)))
    if index.size != header["n_edges"] and node is None:
        raise ValueError(f"{path}: {index.size:,} noisy edges, the header says {header['n_edges']:,}")
    if node is None:
        b = EdgeOrientBroadcast.build_order(n, header["epsilon"], index, deg)
        if b.run_id != header["run_id"]:
            raise ValueError(f"{path}: the noisy graph and header do not match the run id {header['run_id']} "
                             "(edited or corrupted)")
        return b
    b = EdgeOrientBroadcast.build_order(n, header["epsilon"], index, deg)
    return dataclasses.replace(b, run_id=int(header["run_id"]))


def _check_header(path: str, header: dict[str, Any]) -> None:
    proto, version = header.get("protocol"), header.get("protocol_version")
    if proto != EDGE_ORIENT_PROTOCOL or version != PROTOCOLS[EDGE_ORIENT_PROTOCOL]:
        raise ValueError(f"{path} line 2: protocol {str(proto)[:40]} version {str(version)[:40]}; this "
                         f"package reads {EDGE_ORIENT_PROTOCOL} version {PROTOCOLS[EDGE_ORIENT_PROTOCOL]}")
    for key, hi in (("n_nodes", MAX_NODES), ("n_edges", MAX_NODES**2), ("run_id", 2**63 - 1)):
        val = header.get(key)
        low = 1 if key == "n_nodes" else 0
        if isinstance(val, bool) or not isinstance(val, int) or not low <= val <= hi:
            raise ValueError(f"{path} line 2: {key} must be a non-negative integer up to {hi}, got "
                             f"{str(val)[:40]}")
    eps = header.get("epsilon")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"{path} line 2: epsilon must be a positive number, got {eps!r}")
    n, deg = header["n_nodes"], header.get("degrees")
    if (not isinstance(deg, list) or len(deg) != n
            or not all(isinstance(x, int) and not isinstance(x, bool) and abs(x) <= 2**53 for x in deg)):
        raise ValueError(f"{path} line 2: degrees must be a list of {n} integers (the order)")


def out_neighbours(node: int, neighbours: NDArray[np.int64], degrees: NDArray[np.int64]) -> NDArray[np.int64]:
    """The neighbours before ``node`` in the public order (a higher noisy degree, ties by a higher id),
    sorted: its out-neighbours (:func:`~ldpgraph.protocols.orientation.kernels.orient_relabel`'s lower ids).

    >>> out_neighbours(1, np.array([0, 2, 3]), np.array([5, 4, 4, 9])).tolist()
    [0, 2, 3]
    >>> out_neighbours(2, np.array([0, 1, 3]), np.array([5, 4, 4, 1])).tolist()
    [0]
    """
    dn, dv = degrees[neighbours], degrees[node]
    return neighbours[(dn > dv) | ((dn == dv) & (neighbours > node))]


def bound_and_count(node: int, neighbours: NDArray[np.int64], broadcast: EdgeOrientBroadcast,
                    epsilon_bound: float, epsilon_count: float, margin: int,
                    stream: Any) -> tuple[int, int, int]:
    """Round 2 at node v, on its stream: ``(noisy out-degree, D_v, r_v)`` (module docstring)."""
    out = out_neighbours(node, neighbours, broadcast.degrees)
    noisy = int(out.size) + int(stream.dlap(epsilon_bound, 1.0, 1)[0])
    d = max(noisy + int(margin), 1)
    a, b = upper_pairs(out.size)
    w = math.fsum(broadcast.noisy_bit(out[a], out[b]).tolist()) - broadcast.q * a.size
    alpha = float(scale_factors([out.size], [d])[0])
    rounded = math.floor(alpha * w + float(stream.uniform(1)[0]))
    sens = float(count_sensitivity([d], broadcast.p)[0])
    return noisy, d, rounded + int(stream.dlap(epsilon_count, sens, 1)[0])


class _OrderRound(RandomizedResponseRound):
    """Round 1: RR on the lower bits and the noisy degree (the order)."""

    name = "order+rr"

    def broadcast(self, result: Any, plan: Plan) -> EdgeOrientBroadcast:
        if result.degrees is None:
            raise ValueError("edge-orient-triangles needs every node's degree row (the public order)")
        return EdgeOrientBroadcast.build_order(result.n_nodes, result.epsilon, result.index, result.degrees)


class _BoundCountRound(Round):
    number = 2
    name = "bound+count"

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        b = _check_broadcast(broadcast, plan)
        eps0, eps2 = plan.release(OUT_DEGREE).epsilon, plan.release(LOCAL_COUNT).epsilon
        c = plan.public["margin_c"]
        if _has_degree(plan):  # transitivity: the degree too, after the count's draws
            eps_d = plan.release(TRANSITIVITY_DEGREE).epsilon
            quantities = (OUT_DEGREE, LOCAL_COUNT, TRANSITIVITY_DEGREE)
            rows = round_two_rows(plan, nodes, neighbours, b, sampler, quantities,
                                  lambda v, nb, s: (*bound_and_count(v, nb, b, eps0, eps2, c, s)[::2],
                                                    nb.size + int(s.dlap(eps_d, 1.0, 1)[0])))
        else:
            rows = round_two_rows(plan, nodes, neighbours, b, sampler, (OUT_DEGREE, LOCAL_COUNT),
                                  lambda v, nb, s: bound_and_count(v, nb, b, eps0, eps2, c, s)[::2])
        # node after node: out_degree, local_count[, transitivity_degree], run_id; the count's
        # sensitivity from D_v
        k = 4 if _has_degree(plan) else 3
        rows["sensitivity"][1::k] = _sensitivities(rows["value"][0::k], c, b)
        return rows

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> Accumulator:
        return BoundCountAccumulator(plan, _check_broadcast(broadcast, plan), **options)


class BoundCountAccumulator(Accumulator):
    """Round-2 rows against the broadcast (run id, node set, ε) and each ``local_count`` row's
    sensitivity against its node's ``out_degree`` row: :math:`\\Delta_v` of its bound :math:`D_v`
    (:func:`~ldpgraph.protocols.orientation.kernels.count_sensitivity`)."""

    def __init__(self, plan: Plan, broadcast: EdgeOrientBroadcast, **options: Any) -> None:
        self.plan = plan
        self.broadcast = broadcast
        options.pop("expected_nodes", None)
        sens = {OUT_DEGREE: 1.0, LOCAL_COUNT: _CHECKED_LATER, RUN_ID: 0.0}
        if _has_degree(plan):
            sens[TRANSITIVITY_DEGREE] = 1.0
        self.acc = Round2Accumulator(broadcast, sensitivities=sens, version=plan.version, **options)
        self._claimed: list[NDArray[np.float64]] = []  # the local_count rows' sensitivities
        self._claim_nodes: list[NDArray[np.int64]] = []
        self._claim_where: list[tuple[str, int | None]] = []  # (source, line offset)
        self._claim_rows: list[NDArray[np.int64]] = []

    def add(self, chunk: Any) -> None:
        names = list(chunk.quantity_names)
        if LOCAL_COUNT in names:
            at = np.flatnonzero(np.asarray(chunk.quantity) == names.index(LOCAL_COUNT))
            self._claimed.append(np.asarray(chunk.sensitivity)[at].copy())
            self._claim_nodes.append(np.asarray(chunk.node)[at].copy())
            self._claim_rows.append(at + chunk.first_row)
            self._claim_where.append((chunk.source, chunk.line_offset))
            sens = np.asarray(chunk.sensitivity).copy()
            sens[at] = _CHECKED_LATER
            chunk = dataclasses.replace(chunk, sensitivity=sens)
        self.acc.add(chunk)

    def merge(self, other: BoundCountAccumulator) -> BoundCountAccumulator:
        self.acc.merge(other.acc)
        self._claimed += other._claimed
        self._claim_nodes += other._claim_nodes
        self._claim_rows += other._claim_rows
        self._claim_where += other._claim_where
        return self

    def result(self) -> Round2Accumulator:
        values = self.acc.values()  # the whole-set checks (every node, once)
        check_row_epsilons(self.plan, {q: e for q, (e, _) in self.acc.epsilon.items()})
        want = _sensitivities(values[OUT_DEGREE], self.plan.public["margin_c"], self.broadcast)
        claims = zip(self._claimed, self._claim_nodes, self._claim_rows, self._claim_where, strict=True)
        for claimed, nodes, rows, (source, offset) in claims:
            bad = np.flatnonzero(claimed != want[nodes])
            if bad.size:
                i, v = int(bad[0]), int(nodes[bad[0]])
                line = "" if offset is None else f" (line {int(rows[i]) + offset})"
                raise ValueError(
                    f"local_count rows must have their node's sensitivity ceil((1+p)/2 (D_v - 1)) from its "
                    f"out_degree row (node {v}: {float(want[v]):g}), got {float(claimed[i]):g}: {source} row "
                    f"{int(rows[i])}{line}")
        return self.acc


def _sensitivities(noisy_out_degrees: Any, margin_c: int,
                   broadcast: EdgeOrientBroadcast) -> NDArray[np.float64]:
    """Each node's local_count sensitivity from its out_degree row: Δ of D_v = max(noisy + c, 1)."""
    d = np.maximum(np.asarray(noisy_out_degrees, dtype=np.int64) + int(margin_c), 1)
    return count_sensitivity(d, broadcast.p).astype(np.float64)


def _has_degree(plan: Plan) -> bool:
    """Whether the plan releases the degree for transitivity (``degree_share`` given)."""
    return plan.public.get("degree_share") is not None


def _check_broadcast(broadcast: Any, plan: Plan) -> EdgeOrientBroadcast:
    if not isinstance(broadcast, EdgeOrientBroadcast):
        raise TypeError(f"round 2 of {EDGE_ORIENT_PROTOCOL} needs its round-1 broadcast, got "
                        f"{type(broadcast).__name__}")
    plan.check_broadcast_epsilon(RR_COUNT, broadcast.epsilon)
    return broadcast


def relabelled_index(broadcast: EdgeOrientBroadcast) -> NDArray[np.int64]:
    """The noisy graph's pair indices in the order's labels (:func:`~ldpgraph.protocols.orientation.kernels.
    orient_relabel`: new id = rank in descending (noisy degree, id); out-neighbours are lower ids), sorted.

    >>> b = EdgeOrientBroadcast.build_order(3, 1.0, [0], [0, 5, 3])   # the edge {1, 0}
    >>> relabelled_index(b).tolist()                                   # nodes 1, 2, 0 -> 0, 1, 2
    [1]
    """
    new = ranks(broadcast.degrees)
    u, v = pair_from_index(broadcast.index)
    a, b = new[u], new[v]
    return np.sort(pair_index(np.maximum(a, b), np.minimum(a, b)))


def edge_orient_estimate(values: Any, sensitivities: Any, broadcast: EdgeOrientBroadcast,
                         epsilon_count: float) -> Estimate:
    r""":math:`\hat T = \sum_v r_v/(p-q)` (exact integer sum) with a conservative standard error.

    Given the order and bounds at or above every out-degree,
    :func:`~ldpgraph.protocols.orientation.kernels.edge_orient_variance` is
    :math:`[pq\,C + \sum_v f_v(1-f_v) + \sum_v \sigma^2(D_v-1)]/(p-q)^2`, C the sum of the squared
    common in-neighbour counts of the orientation; its estimate takes the unbiased
    :func:`~ldpgraph.protocols.deploy_triangles.lower_wedge_square_estimate` of C from the noisy graph
    in the order's labels (:func:`relabelled_index`), n/4 for the rounding and the exact noise
    variances at each node's sensitivity (the rows'). The conditional mean is then T whatever the
    order and bounds, so the estimate is unbiased for an upper bound of the variance (up to n/4 - the
    rounding term); a projected node (probability :func:`~ldpgraph.protocols.orientation.kernels.
    projection_probability`) adds a bias it omits. None beyond 8192 nodes (dense kernel).

    >>> b = EdgeOrientBroadcast.build_order(3, 60.0, [0, 1, 2], [2, 2, 2])
    >>> est = edge_orient_estimate([1, 0, 0], [1.0, 1.0, 1.0], b, 60.0)
    >>> round(est.value, 6), est.std_error < 1
    (1.0, True)
    """
    from ...mechanisms import DiscreteLaplace
    from ..deploy_triangles import lower_wedge_square_estimate

    b = broadcast
    total = sum(int(x) for x in np.asarray(values, dtype=np.int64).tolist())
    value = total / (b.p - b.q)
    if b.n_nodes > _DENSE_MAX_NODES:
        return Estimate(value, None, None, "triangles", note=(
            f"the variance estimate is dense in the nodes and is not computed for {b.n_nodes:,} nodes "
            f"(beyond {_DENSE_MAX_NODES:,})"))
    sens, count = np.unique(np.asarray(sensitivities, dtype=np.float64), return_counts=True)
    noise = math.fsum(float(k) * DiscreteLaplace(epsilon=float(epsilon_count), sensitivity=float(s)).variance
                      for s, k in zip(sens.tolist(), count.tolist(), strict=True))
    # C >= 0, so E max(C^, 0) >= C: clipped, the bound stays conservative and is never negative
    c_hat = max(lower_wedge_square_estimate(b.n_nodes, relabelled_index(b), b.epsilon), 0.0)
    var = (b.p * b.q * c_hat + b.n_nodes / 4.0 + noise) / (b.p - b.q) ** 2
    return Estimate(value, math.sqrt(max(var, 0.0)), var, "triangles", note=(
        "the standard error is unbiased for an upper bound of the variance given bounds above the "
        "out-degrees; a node whose bound falls below its out-degree biases the estimate down"),
        se_kind="upper-bound")


def _triangle_split(epsilon: float, public: Any) -> tuple[float | None, float]:
    """``(degree ε or None, the triangles' ε)``: ``degree_share`` of ``epsilon`` on the degree for
    transitivity when given (:func:`~ldpgraph.protocols.triangles.transitivity.transitivity_budget`)."""
    from ..triangles.transitivity import transitivity_budget

    eps = check_epsilon(epsilon)
    if public["degree_share"] is None:
        return None, eps
    return transitivity_budget(eps, public["degree_share"])


def _with_transitivity(graph: Any, plan: Plan, statistic: str, triangles: NDArray[np.float64],
                       gen: np.random.Generator) -> NDArray[np.float64]:
    r"""``triangles`` (the trials' estimates), or for transitivity :math:`3\hat T/\hat S_2` with each
    trial's :math:`\hat S_2` from fresh DLap degrees at the plan's ``transitivity_degree`` ε."""
    if statistic == "triangles":
        return triangles
    from ...mechanisms import DiscreteLaplace
    from ..triangles.transitivity import transitivity_estimate, two_star_estimate

    eps_s = plan.release(TRANSITIVITY_DEGREE).epsilon
    mech = DiscreteLaplace(epsilon=eps_s)
    s_hat = np.array([two_star_estimate(graph.degrees + mech.sample(graph.n_nodes, rng=gen), eps_s)
                      for _ in range(triangles.size)])
    return np.asarray(transitivity_estimate(triangles, s_hat, clip=False), dtype=np.float64)


class _TriangleSimulation(Protocol):
    """What the edge-orient protocols share: triangles and transitivity, a degree release for the
    latter (``degree_share``), per-trial simulation."""

    statistics = ("triangles", "transitivity")
    needs = "adjacency"
    unbiased = False  # unbiased given bounds above the out-degrees; a projected node biases down
    model = "local, two rounds"

    def statistic_public(self, statistic: str) -> dict[str, Any]:
        """Transitivity needs the degree release: ``degree_share`` 0.1 where it is not given."""
        return {"degree_share": DEFAULT_DEGREE_SHARE} if statistic == "transitivity" else {}

    def _triangles(self, graph: Any, plan: Plan, n_trials: int, gen: np.random.Generator
                   ) -> NDArray[np.float64]:
        raise NotImplementedError

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: np.random.Generator, *,
                 param: int | None = None) -> NDArray[np.float64]:
        """``n_trials`` estimates; for transitivity the triangle trials first, then the degrees'."""
        stat = self.check_statistic(statistic)
        return _with_transitivity(graph, plan, stat, self._triangles(graph, plan, n_trials, rng), rng)


@register
class EdgeOrientProtocol(_TriangleSimulation):
    """``edge-orient-triangles`` (see the module docstring)."""

    name = EDGE_ORIENT_PROTOCOL
    version = 2  # 2: counts scaled down (not projected) beyond the bound, sensitivity (1+p)/2 (D - 1)
    reference = ("ours, after EdgeOrient (Mundra, Papamanthou, Shun, Liu, PVLDB): noisy-degree order, DLap "
                 "local counts at per-node out-degree bounds")
    # the most accurate two-round triangle method measured (docs/kcore-edge-orient.md: 0.073 on
    # Email-Enron at epsilon 1, against arr-triangles' 0.32 and two-round-triangles-dlap's 0.57)
    presets = (Preset(EDGE_ORIENT_PROTOCOL, recommended=("triangles", "transitivity")),)
    options = (
        Option("margin", float, MARGIN, "each node's bound D_v = its noisy out-degree + ceil(margin / eps0)"),
        Option("shares", dict, None, "budget split order=F,bound=F,rr=F,count=F (default 0.01, 0.15, 0.46, "
               "0.38)"),
        DEGREE_SHARE,
    )
    #: how the bounds D_v are drawn (:func:`~ldpgraph.protocols.orientation.kernels.local_bounds`)
    bounds = "local"

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        margin = float(pub["margin"])
        if not (math.isfinite(margin) and margin >= 0):
            raise ValueError(f"margin must be a finite number >= 0, got {pub['margin']!r}")
        eps_d, eps_t = _triangle_split(epsilon, pub)
        e = edge_orient_budget(eps_t, pub["shares"])
        first = (Release((RR_COUNT, RR_EDGE), "randomized-response", e["rr"], 1.0, name="rr"),
                 Release((DEGREE,), "dlap", e["order"], 1.0, name="order"))
        second = (Release((OUT_DEGREE,), "dlap", e["bound"], 1.0, name="out-degree"),
                  Release((LOCAL_COUNT, RUN_ID), "dlap", e["count"], {LOCAL_COUNT: math.nan, RUN_ID: 0.0},
                          name="local-count"))
        if eps_d is not None:
            second += (Release((TRANSITIVITY_DEGREE,), "dlap", eps_d, 1.0, name="degree"),)
        return Plan(self.name, self.version, epsilon,
                    (RoundPlan(1, "order+rr", first), RoundPlan(2, "bound+count", second)),
                    {"margin": margin, "margin_c": bound_margin(e["bound"], margin), "shares": pub["shares"],
                     "degree_share": pub["degree_share"]})

    def rounds(self) -> tuple[Round, ...]:
        return (_OrderRound(), _BoundCountRound())

    def encode_broadcast(self, broadcast: Any) -> bytes:
        return encode_oriented_broadcast(broadcast)

    def decode_broadcast(self, data: bytes, plan: Plan, *, source: str = "broadcast") -> Any:
        return _check_broadcast(decode_edge_orient_broadcast(data, source), plan)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Estimate:
        stat = self.check_statistic(statistic)
        b = _check_broadcast(broadcast, plan)
        values = result.values()
        sens = _sensitivities(values[OUT_DEGREE], plan.public["margin_c"], b)
        tri = edge_orient_estimate(values[LOCAL_COUNT], sens, b, plan.release(LOCAL_COUNT).epsilon)
        if stat == "triangles":
            return tri
        if not _has_degree(plan):
            raise ValueError(f"transitivity needs the nodes' degree releases: run {self.name} node and "
                             f"curate with --degree-share F (the simulation spends {DEFAULT_DEGREE_SHARE})")
        from ..triangles.transitivity import transitivity_from_estimates

        tau, var = transitivity_from_estimates(tri.value, tri.variance_estimate, values[TRANSITIVITY_DEGREE],
                                               plan.release(TRANSITIVITY_DEGREE).epsilon)
        note = tri.note if var is not None or tri.note else "the two-star estimate is <= 0: no ratio"
        se = None if var is None else math.sqrt(max(var, 0.0))
        return Estimate(tau, se, var, "transitivity", note=note, se_kind="delta")

    def describe_result(self, result: Any, round: Round) -> list[str]:
        if round.number == 1:
            return [f"rr_edge    epsilon {result.epsilon:g}; noisy graph of {result.index.size:,} edges",
                    "degree     every node's noisy degree: the public order (broadcast)"]
        return ["local_count sensitivity per node, ceil((1+p)/2 (D_v - 1)) from its out_degree row; not "
                "screened for outliers (no admissible range for edge-orient-triangles yet)"]

    # ---------------------------------------------------------------- simulation hooks

    def _triangles(self, graph: Any, plan: Plan, n_trials: int, gen: np.random.Generator
                   ) -> NDArray[np.float64]:
        budget = {"order": plan.release(DEGREE).epsilon, "bound": plan.release(OUT_DEGREE).epsilon,
                  "rr": plan.release(RR_COUNT).epsilon, "count": plan.release(LOCAL_COUNT).epsilon}
        return np.array([edge_orient_trial(graph, plan.epsilon, budget=budget, bounds=self.bounds,
                                           margin=plan.public["margin"], rng=gen).estimate
                         for _ in range(n_trials)])

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """Up: the RR bits of the lower pairs ((n - 1)/2 bits on average) and three integers (a fourth
        for transitivity); down: the broadcast's prefix a node of rank r reads (C(r, 2) bits,
        (n - 1)(n - 2)/6 on average: :func:`download_bytes`) and the order (an integer per node)."""
        n = graph.n_nodes
        up = (n - 1) / 16.0 + 8.0 * (4 if _has_degree(plan) else 3)
        return up, (n - 1) * (n - 2) / 48.0 + 8.0 * n

    def edge_budget(self, epsilon: float, public: Any) -> str:
        # the releases both endpoints of an edge make: the order's noisy degree (and, for
        # transitivity, the degree); every other release is the edge's lower end's only
        budget = self.plan(epsilon, **public).release_budget()
        both = sum(v for k, v in budget.items() if k in ("order", "degree"))
        text = f"per edge {epsilon + both:.4g} (the paper's LEDP)"
        if self.bounds != "local":  # measured for the per-node bounds only
            return text
        return f"{text}; against edge-orient-reference at the same node total: {EDGE_ORIENT_VS_REFERENCE}"


@register
class EdgeOrientGlobal(EdgeOrientProtocol):
    """``edge-orient-triangles-global``: every bound D the maximum of the noisy out-degrees (no node
    projected unless the maximum falls below its out-degree); simulated only."""

    name = "edge-orient-triangles-global"
    reference = ("ours, after EdgeOrient (Mundra, Papamanthou, Shun, Liu, PVLDB): noisy-degree order, DLap "
                 "local counts at one bound, the largest noisy out-degree")
    bounds = "global"
    deployable = False
    not_deployable = ("one bound from every node's noisy out-degree needs a third round (the deployed "
                      "edge-orient-triangles has per-node bounds)")
    options = (DEGREE_SHARE,)  # no margin (the bound is the maximum); the default split

    def check_public(self, public: Any) -> dict[str, Any]:
        return {**super().check_public(public), "margin": MARGIN, "shares": None}  # (margin: unused)

    def rounds(self) -> tuple[Round, ...]:
        return ()


@register
class EdgeOrientReference(_TriangleSimulation):
    """``edge-orient-reference``: EdgeOrientΔ as the authors' code runs it
    (:func:`~ldpgraph.protocols.orientation.kernels.reference_edge_orient`), simulated only.

    A node spends ε = 3/4 ε_paper by the code's own accounting: k-core ε_paper/8, RR ε_paper/4,
    out-degree ε_paper/4, the count ε_paper/8 (whose Laplace is under-calibrated: see
    :mod:`~ldpgraph.protocols.orientation.kernels`).

    >>> EdgeOrientReference().plan(0.75).describe()
    'epsilon 0.75 = k-core 0.125 + rr 0.25 + out-degree 0.25 + local-count 0.125'
    """

    name = "edge-orient-reference"
    reference = ("Mundra, Papamanthou, Shun, Liu, PVLDB (arXiv 2506.20828), EdgeOrientΔ as in "
                 "algorithms/triangle-counting-ldp.go")
    model = "local, multi-round"
    deployable = False
    not_deployable = "the reference algorithm is simulated only"
    options = (DEGREE_SHARE,)

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        eps_d, eps_t = _triangle_split(epsilon, pub)
        ep = 4.0 * eps_t / 3.0
        rounds = [RoundPlan(1, "k-core", (Release(("kcore_level",), "dlap", ep / 8, 1.0, name="k-core"),)),
                  RoundPlan(2, "rr", (Release((RR_EDGE,), "randomized-response", ep / 4, 1.0),)),
                  RoundPlan(3, "out-degree", (Release((OUT_DEGREE,), "dlap", ep / 4, 1.0),)),
                  RoundPlan(4, "local-count", (Release((LOCAL_COUNT,), "laplace", ep / 8, math.nan),))]
        if eps_d is not None:
            degree = Release((TRANSITIVITY_DEGREE,), "dlap", eps_d, 1.0, name="degree")
            rounds[0] = RoundPlan(1, "k-core", (degree, *rounds[0].releases))
        return Plan(self.name, self.version, epsilon, tuple(rounds),
                    {"epsilon_paper": ep, "degree_share": pub["degree_share"]})

    def rounds(self) -> tuple[Round, ...]:
        return ()

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Any:
        raise NotImplementedError(self.not_deployable)

    def _triangles(self, graph: Any, plan: Plan, n_trials: int, gen: np.random.Generator
                   ) -> NDArray[np.float64]:
        ep = plan.public["epsilon_paper"]
        return np.array([reference_edge_orient(graph, ep, rng=gen) for _ in range(n_trials)])

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """Up: the RR bits of the pairs ((n - 1)/2 bits on average) and two integers (a third for
        transitivity); down: the code publishes the n x n bit matrix."""
        n = graph.n_nodes
        return (n - 1) / 16.0 + 8.0 * (3 if _has_degree(plan) else 2), n * (n - 1) / 16.0

    def edge_budget(self, epsilon: float, public: Any) -> str:
        return (f"per edge: eps_paper {4.0 * epsilon / 3.0:.4g} (the paper's LEDP, its own accounting; its "
                "count release spends about 4 times its stated share at eps' = 1/4)")
