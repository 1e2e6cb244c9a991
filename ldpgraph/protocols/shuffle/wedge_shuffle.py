r"""Wedge shuffling: triangles and 4-cycles in the shuffle model (Imola, Murakami, Chaudhuri, CCS 2022).

The nodes are paired by a public random matching :math:`M` of :math:`P = \lfloor n/2 \rfloor`
pairs (:func:`public_pairing`; an odd n leaves one node unpaired). For each pair
:math:`\{i, j\}` every other node k (``m = n - 2`` of them) holds the **wedge bit**
:math:`w_k = a_{ki} a_{kj}` and sends it through Warner's randomized response at the local
:math:`\varepsilon_0` (kept with probability :math:`p_1 = e^{\varepsilon_0}/(1 + e^{\varepsilon_0})`).
For triangles, i and j also send their bit :math:`a_{ij}` through randomized response at ε
(:math:`p_2 = e^{\varepsilon}/(1 + e^{\varepsilon})`), not amplified. A **shuffler**
(:mod:`ldpgraph.run.shuffler`) drops the node ids and permutes the rows, so that the curator
sees, per pair p, only :math:`W_p` (how many wedge bits are 1) and :math:`E_p` (how many of the
two edge bits are 1).

Rows (report format, version 2; round 1, ``shuffled``): a node sends one ``wedge`` row per pair
whose noisy wedge bit is 1 (value: the pair's index; a bijection of its bit vector since the
pairing is public; ``epsilon``: the local ε₀ it was randomized at), for triangles one
``pair_edge`` row (value: its own pair's index; ``epsilon`` ε) if its noisy bit on its partner is
1, and one ``sender`` row (value: a fresh random 53-bit token, ``epsilon`` 0): the shuffler and
the curator count the distinct tokens, i.e. the users whose rows were shuffled, without learning
who they are (:class:`~ldpgraph.core.protocol.Senders`). The amplification holds only if all
``n_users`` users' rows are shuffled together: both refuse fewer (the curator says what (ε, δ)
the users it received would give), and the curator refuses rows at another ε₀ (nodes run with
another ``--delta``, ``--n-users`` or ``--accounting``). A node's upload length (its number of
rows) is a function of its own ε₀-LDP report: to whoever sees per-node traffic it reveals at
most ε₀ per adjacency bit, not the central ε (``docs``: "What traffic sizes reveal").

Privacy (element DP, as the reference: the neighbouring graphs differ in one adjacency bit
:math:`a_{ki}` held by k). The bit enters exactly one report of k: its ``pair_edge`` bit when i is
k's partner (ε-LDP randomized response), otherwise its wedge bit for the pair of i (ε₀-LDP).
Per pair, the wedge bits of the m other nodes are shuffled: (ε, δ)-DP by amplification,
:func:`~ldpgraph.privacy.shuffle_amplification.local_epsilon_for` giving the largest ε₀ with
central (ε, δ) for m users; every other output is independent of the bit. So a run is (ε, δ)-DP
per adjacency bit, and (2ε, 2δ) per edge (both its bits); each node's own rows are
max(ε₀, ε) = ε₀-LDP for one bit. Accountings (``accounting``): ``"numerical"`` (Feldman et al.,
the reference's choice), ``"closed-form"`` (their Theorem 3.1), ``"binary-rr"`` (ours: the same
numerical bound with the randomized-response clone probability 2/(e^ε₀ + 1), a larger ε₀ for
the same (ε, δ)), ``"local"`` (WLocal: no shuffler, ε₀ = ε).

Estimators (unbiased, over the randomized response and the random matching). With
:math:`u_p = (E_p - 2q_2)/(2(p_2 - q_2))` (mean :math:`a_{ij}`) and
:math:`v_p = (W_p - m q_1)/(p_1 - q_1)` (mean the codegree :math:`t_{ij}`), independent,

.. math::
    \hat T = \frac{n(n-1)}{6P} \sum_{p \in M} u_p v_p,\qquad
    \hat C_4 = \frac{n(n-1)}{4P} \sum_{p \in M} \Bigl(\binom{v_p}{2} - \frac{\sigma_v^2}{2}\Bigr),
    \quad \sigma_v^2 = \frac{m p_1 q_1}{(p_1 - q_1)^2}:

a pair of M is a uniform random pair, :math:`\sum_{i<j} a_{ij} t_{ij} = 3T` and
:math:`\sum_{i<j} \binom{t_{ij}}{2} = 2 C_4`, and :math:`E[v(v-1)/2] = \binom{t}{2} + \sigma_v^2/2`.
The variances are in :meth:`WedgeShuffleTriangles.moments` (exact, from the codegrees).

``wshuffle-triangles-ignore`` (the reference's WShuffle with a noisy-degree threshold) is not
here: its pairs of low-degree users are dropped by the curator, a biased estimator.

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> from ldpgraph.run import run_in_memory
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> run = run_in_memory("wshuffle-triangles", g, 1.0, sampler=0)
>>> run.plan.public["local_epsilon"] >= 1.0, run.plan.public["delta"]
(True, 1e-08)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon, check_nonnegative_int, check_rng
from ...core.plan import Plan, Release, RoundPlan, ShuffleGuarantee
from ...core.protocol import Accumulator, Option, Preset, Protocol, Round, Senders
from ...core.rows import Rows, check_plan_rows, empty_rows, quantity_rows, running_counts
from ...core.sampling import Sampler
from ...privacy.shuffle_amplification import amplified_epsilon, local_epsilon_for
from ..curator import Estimate
from ..randomized_response import flip_probability
from ..registry import register

__all__ = [
    "WEDGE",
    "PAIR_EDGE",
    "SENDER",
    "central_epsilon",
    "wedge_round_plan",
    "received_line",
    "ACCOUNTINGS",
    "public_pairing",
    "pair_lookup",
    "WedgeCounts",
    "WedgeShuffleRound",
    "WedgeShuffleTriangles",
    "WedgeShuffleFourCycles",
    "pair_terms",
    "codegree_sums",
]

WEDGE = "wedge"
PAIR_EDGE = "pair_edge"
#: the one row per sender whose value is a random token (counting the users without naming them)
SENDER = "sender"
ACCOUNTINGS = ("numerical", "closed-form", "binary-rr", "local")
#: δ of the reference implementation
DEFAULT_DELTA = 1e-8


def public_pairing(n: int, seed: int) -> NDArray[np.int64]:
    """The public matching: ``(P, 2)`` node pairs, ``P = n // 2``, from a uniform permutation of
    ``0..n-1`` drawn from ``SeedSequence(seed)`` (consecutive elements are paired).

    >>> public_pairing(5, 1).shape
    (2, 2)
    """
    n = check_nonnegative_int(n, "n")
    perm = np.random.default_rng(np.random.SeedSequence(int(seed))).permutation(n)
    return perm[: 2 * (n // 2)].reshape(-1, 2).astype(np.int64)


def _matching_constants(n: int, local_epsilon: float) -> tuple[int, float, float, float, float, float]:
    r"""``(m, pi, pi2, p1, q1, var_v)`` of the wedge-shuffle moments on ``n`` users.

    m = n - 2 wedge bits per pair; :math:`\pi` and :math:`\pi_2`, the probabilities that a given
    pair, and two given disjoint pairs, are in the random matching of :math:`\lfloor n/2\rfloor`
    pairs; :math:`p_1 = 1 - q_1`, :math:`q_1 = 1/(1 + e^{\varepsilon_0})`; and
    :math:`m p_1 q_1/(p_1 - q_1)^2`, the variance of one pair's debiased wedge-bit sum.
    """
    big_p = n // 2
    m = n - 2
    pi = 2.0 * big_p / (n * (n - 1))
    pi2 = 4.0 * big_p * (big_p - 1) / (n * (n - 1) * (n - 2) * (n - 3))
    q1 = flip_probability(local_epsilon)
    p1 = 1.0 - q1
    return m, pi, pi2, p1, q1, m * p1 * q1 / (p1 - q1) ** 2


@functools.lru_cache(maxsize=256)
def _local_epsilon(epsilon: float, n: int, delta: float, accounting: str) -> float:
    if accounting == "local":
        return epsilon
    method = "closed-form" if accounting == "closed-form" else "numerical"
    randomizer = "binary-rr" if accounting == "binary-rr" else "generic"
    return local_epsilon_for(epsilon, n - 2, delta, method, randomizer)


def _bound(accounting: str) -> tuple[str, str]:
    """(method, randomizer) of the amplification bound of ``accounting``."""
    return ("closed-form" if accounting == "closed-form" else "numerical",
            "binary-rr" if accounting == "binary-rr" else "generic")


def central_epsilon(plan: Plan, users: int) -> float:
    r"""The central ε (at the plan's δ) of the plan's ε₀ reports when only ``users`` users' rows are
    shuffled: each pair's wedge bits then hide among at most ``users - 2`` (ε₀ itself below 4 users,
    or without amplification).

    >>> from ldpgraph.protocols import registry
    >>> plan = registry.get("wshuffle-four-cycles").plan(1.0, n_users=500)
    >>> eps50 = central_epsilon(plan, 50)  # 48 shuffled users: no amplification left
    >>> round(central_epsilon(plan, 500), 6), round(eps50, 2), round(plan.public["local_epsilon"], 2)
    (1.0, 1.96, 1.96)
    """
    eps0, accounting = plan.public["local_epsilon"], plan.public["accounting"]
    if accounting == "local" or users - 2 < 2:
        return float(eps0)
    method, randomizer = _bound(accounting)
    return amplified_epsilon(eps0, users - 2, plan.public["delta"], method, randomizer)


def wedge_round_plan(number: int, quantities: tuple[str, ...], epsilon: float, local_epsilon: float,
                     shuffled: bool) -> RoundPlan:
    """The wedge-shuffle round's release: the randomized response (wedge rows at ε₀, pair_edge rows at
    ε; the plan accounts ε) and the sender token riding along (ε 0, sensitivity 0: it spends nothing)."""
    mechanism = "shuffled-randomized-response" if shuffled else "randomized-response"
    row_eps = {WEDGE: local_epsilon, PAIR_EDGE: epsilon, SENDER: 0.0}
    sens = {WEDGE: 1.0, PAIR_EDGE: 1.0, SENDER: 0.0}
    quantities = (*quantities, SENDER)
    return RoundPlan(number, "wedge-shuffle", (
        Release(quantities, mechanism, epsilon, {q: sens[q] for q in quantities},
                {q: row_eps[q] for q in quantities}),))


def _token(stream: Any) -> int:
    """A fresh random 53-bit sender token from the node's stream (report values are at most 2**53): two
    of n honest users collide, and the curator refuses the run, with probability below n^2 / 2^54
    (5.6e-7 at 10^5 users)."""
    return int(stream.uniform(1)[0] * 2.0**53)


def _pairing_of(plan: Plan, sampler: Sampler) -> NDArray[np.int64]:
    n, seed = plan.public["n_users"], plan.public["pairing_seed"]
    if seed is None:
        sseed = getattr(sampler, "seed", None)
        if sseed is None:
            raise ValueError(f"{plan.protocol}: every node must pair the users the same way: give the public "
                             "--pairing-seed (a simulation draws it from its seed)")
        seed = int(np.random.SeedSequence(sseed, spawn_key=(0,)).generate_state(1, np.uint64)[0])
    return public_pairing(n, seed)


@dataclass(frozen=True)
class WedgeCounts:
    """What the curator keeps of a wedge-shuffle round: per pair, the wedge and edge counts."""

    n_nodes: int
    wedge: NDArray[np.int64]
    edge: NDArray[np.int64]
    n_rows: int
    #: how many distinct senders' rows were received (their tokens)
    n_senders: int = 0

    @property
    def n_pairs(self) -> int:
        return int(self.wedge.size)


def pair_terms(counts: WedgeCounts | tuple, plan: Plan, statistic: str) -> NDArray[np.float64]:
    r"""Each pair's unbiased term: :math:`u_p v_p` (triangles) or :math:`\binom{v_p}{2} - \sigma_v^2/2`
    (four_cycles); ``counts`` a :class:`WedgeCounts` or ``(wedge, edge)`` arrays (any shape)."""
    wedge, edge = (counts.wedge, counts.edge) if isinstance(counts, WedgeCounts) else counts
    n = plan.public["n_users"]
    m = n - 2
    q1 = flip_probability(plan.public["local_epsilon"])
    p1 = 1.0 - q1
    v = (np.asarray(wedge, dtype=np.float64) - m * q1) / (p1 - q1)
    if statistic == "four_cycles":
        return v * (v - 1.0) / 2.0 - m * p1 * q1 / (p1 - q1) ** 2 / 2.0
    q2 = flip_probability(plan.public["edge_epsilon"])
    p2 = 1.0 - q2
    u = (np.asarray(edge, dtype=np.float64) - 2.0 * q2) / (2.0 * (p2 - q2))
    return u * v


def _scale(n: int, statistic: str) -> float:
    """n(n-1)/(6P) (triangles) or n(n-1)/(4P) (4-cycles)."""
    return n * (n - 1) / ((6.0 if statistic == "triangles" else 4.0) * (n // 2))


class WedgeCountAccumulator(Accumulator):
    """Shuffled rows counted per pair, and the senders' tokens; refuses rows that carry node ids (not
    shuffled) when the round is shuffled, rows of another protocol, plan, round or ε₀, more rows per
    pair than users (as soon as a chunk shows it), and in :meth:`result` any number of senders but the
    plan's ``n_users`` (``expected_nodes``, from ``--expected-nodes`` or ``--roster``, must agree)."""

    def __init__(self, plan: Plan, shuffled: bool, round_number: int = 1, expected_nodes: int | None = None
                 ) -> None:
        self.plan, self.shuffled, self.round_number = plan, shuffled, round_number
        n = plan.public["n_users"]
        if expected_nodes is not None and int(expected_nodes) != n:
            raise ValueError(f"{expected_nodes:,} participants expected (--expected-nodes / --roster), "
                             f"but the plan of {plan.protocol} is for n_users {n:,}: every participant sends "
                             "through the shuffler, so the two must agree (--n-users)")
        self.wedge = np.zeros(n // 2, dtype=np.int64)
        self.edge = np.zeros(n // 2, dtype=np.int64)
        self.tokens: list[NDArray[np.int64]] = []
        self.n_tokens = 0
        self.n_rows = 0

    def add(self, chunk: Any) -> None:
        if len(chunk) == 0:
            return
        plan = self.plan
        if self.shuffled and np.any(chunk.node != 0):
            i = int(np.flatnonzero(chunk.node != 0)[0])
            raise ValueError(f"{chunk.where(i)} carries node id {int(chunk.node[i])}: the rows of "
                             f"{plan.protocol} reach the curator through the shuffler (ldpgraph shuffle)")
        n = plan.public["n_users"]
        for name, at in check_plan_rows(chunk, plan, self.round_number).items():
            vals = chunk.value[at]
            if name == SENDER:
                room = n - self.n_tokens
                if vals.size > room:
                    raise ValueError(f"{chunk.where(at[room])}: more than {n:,} sender rows, one per user of "
                                     "the plan: duplicated or forged uploads")
                self.tokens.append(vals.copy())
                self.n_tokens += vals.size
                continue
            out = np.flatnonzero((vals < 0) | (vals >= self.wedge.size))
            if out.size:
                raise ValueError(f"{chunk.where(at[out[0]])}: pair index {int(vals[out[0]])} "
                                 f"outside 0..{self.wedge.size - 1}")
            target, most = (self.wedge, n - 2) if name == WEDGE else (self.edge, 2)
            sent = running_counts(target, vals)
            over = np.flatnonzero(sent > most)  # refused at the row that breaks it, not after reading all
            if over.size:
                raise ValueError(f"{chunk.where(at[over[0]])}: pair {int(vals[over[0]])} has "
                                 f"{int(sent[over[0]]):,} {name} rows so far, more than its {most:,} senders "
                                 "can send: duplicated or forged rows")
            target += np.bincount(vals, minlength=target.size)
        self.n_rows += len(chunk)

    def merge(self, other: WedgeCountAccumulator) -> WedgeCountAccumulator:
        self.wedge += other.wedge
        self.edge += other.edge
        self.tokens += other.tokens
        self.n_tokens += other.n_tokens
        self.n_rows += other.n_rows
        return self

    def result(self) -> WedgeCounts:
        plan = self.plan
        n = plan.public["n_users"]
        for name, arr, most in ((WEDGE, self.wedge, n - 2), (PAIR_EDGE, self.edge, 2)):
            over = np.flatnonzero(arr > most)
            if over.size:
                raise ValueError(f"pair {int(over[0])} has {int(arr[over[0]])} {name} rows, more than its "
                                 f"{most} senders can send: duplicated or forged rows")
        tokens = np.concatenate(self.tokens) if self.tokens else np.zeros(0, dtype=np.int64)
        distinct, counts = np.unique(tokens, return_counts=True)
        if np.any(counts > 1):
            raise ValueError(f"sender token {int(distinct[np.argmax(counts)])} appears "
                             f"{int(counts.max())} times: an upload was counted twice (a file given twice, "
                             "or a node's rows sent twice)")
        senders = int(distinct.size)
        if senders != n:
            raise ValueError(_senders_refusal(plan, self.round_number, senders))
        return WedgeCounts(n, self.wedge.copy(), self.edge.copy(), self.n_rows, senders)


def _senders_refusal(plan: Plan, round_number: int, senders: int) -> str:
    """Why ``senders`` senders' rows are refused under ``plan`` (more or fewer than its n_users)."""
    n = plan.public["n_users"]
    if senders > n:
        return (f"{senders:,} distinct senders, more than the plan's {n:,} users: rows of another run or "
                "forged uploads")
    want = plan.round(round_number).epsilon
    got = central_epsilon(plan, senders)
    return (f"the rows of {senders:,} users were received, the plan assumes all {n:,}: each pair's wedge "
            f"bits were shuffled among at most {max(senders - 2, 0):,} users, whose epsilon0 "
            f"{plan.public['local_epsilon']:.6g} reports are (epsilon {got:.4g}, delta "
            f"{plan.public['delta']:.3g})-DP, not the planned epsilon {want:.6g}; and the estimate needs "
            "every user's bits. Refused: have all users send through the shuffler, or plan for those who "
            "take part (every node reruns with --n-users)")


def received_line(result: WedgeCounts) -> str:
    """The curator's line on the users it received (distinct sender tokens)."""
    return (f"received   the rows of {result.n_senders:,} users (distinct sender tokens), all the plan's "
            f"{result.n_nodes:,}")


class WedgeShuffleRound(Round):
    """The one round: wedge bits at ε₀ (and, for triangles, the partner's bit at ε), shuffled."""

    number = 1
    name = "wedge-shuffle"

    def __init__(self, shuffled: bool = True) -> None:
        self.shuffled = shuffled

    def senders(self, plan: Plan) -> Senders:
        """n_users senders; one sends at most P = n // 2 wedge rows (P - 1 if paired), one pair_edge row
        and exactly one sender row."""
        n = plan.public["n_users"]
        most = {WEDGE: n // 2, PAIR_EDGE: 1, SENDER: 1}
        return Senders(n, SENDER, {q: most[q] for rel in plan.round(self.number).releases
                                   for q in rel.quantities})

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        nodes = np.asarray(nodes, dtype=np.int64)
        if nodes.size == 0:
            return empty_rows(plan, self.number)
        n = plan.public["n_users"]
        if int(nodes.max()) >= n or int(nodes.min()) < 0:
            raise ValueError(f"node ids must be in 0..{n - 1} (the plan's n_users {n})")
        pairs = _pairing_of(plan, sampler)
        own = np.full(n, -1, dtype=np.int64)
        own[pairs.ravel()] = np.repeat(np.arange(pairs.shape[0]), 2)
        partner = np.full(n, -1, dtype=np.int64)
        partner[pairs[:, 0]], partner[pairs[:, 1]] = pairs[:, 1], pairs[:, 0]
        eps0 = plan.public["local_epsilon"]
        with_edge = PAIR_EDGE in plan.round(self.number).releases[0].quantities
        eps_edge = plan.public["edge_epsilon"]
        ind = np.zeros(n, dtype=np.bool_)
        node_parts, q_parts, v_parts = [], [], []
        for v, nb in zip(nodes.tolist(), neighbours, strict=True):
            nb = np.asarray(nb, dtype=np.int64)
            ind[nb] = True
            stream = sampler.stream(1, v)
            bits = ind[pairs[:, 0]] & ind[pairs[:, 1]]
            noisy = bits == stream.keep(eps0, bits.size)
            if own[v] >= 0:
                noisy[own[v]] = False  # a pair's own nodes send no wedge bit for it
            vals = np.flatnonzero(noisy).astype(np.int64)
            quantity = [WEDGE] * vals.size
            if with_edge and own[v] >= 0 and bool(ind[partner[v]]) == bool(stream.keep(eps_edge, 1)[0]):
                vals = np.r_[vals, own[v]]
                quantity.append(PAIR_EDGE)
            vals = np.r_[vals, _token(stream)]  # drawn last: the other draws are those of version 1
            quantity.append(SENDER)
            ind[nb] = False
            node_parts.append(np.full(vals.size, v, dtype=np.int64))
            q_parts.append(quantity)
            v_parts.append(vals)
        quantity_col = np.array([q for part in q_parts for q in part], dtype=object)
        return quantity_rows(plan, self.number, np.concatenate(node_parts), quantity_col,
                             np.concatenate(v_parts))

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> WedgeCountAccumulator:
        return WedgeCountAccumulator(plan, self.shuffled, self.number, options.get("expected_nodes"))


#: up to this many nodes the fast simulation tabulates every pair's codegree (n^2 int32: 16 MB at 2000)
_DENSE_CODEGREES = 2000


def pair_lookup(graph: Any) -> Any:
    """``lookup(pairs) -> (t, a)``: the codegrees :math:`t_{uw} = |N(u) \\cap N(w)|` and the adjacency bits of
    the rows ``(u, w)`` of ``pairs``, as int64 (a fast simulation's per-trial pairing).

    Up to :data:`_DENSE_CODEGREES` nodes both come from dense tables computed once (a trial looks its pairs
    up instead of slicing the sparse adjacency); above, from the sparse matrix: the same numbers.

    >>> from ldpgraph.graph import from_edge_array
    >>> t, a = pair_lookup(from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]]))(np.array([[0, 1], [1, 3]]))
    >>> t.tolist(), a.tolist()
    ([1, 1], [1, 0])
    """
    import scipy.sparse as sp

    n = graph.n_nodes
    a = sp.csr_matrix((np.ones(graph.indices.size, dtype=np.int8), graph.indices, graph.indptr), shape=(n, n))
    if n <= _DENSE_CODEGREES:
        a32 = a.astype(np.int32)
        codegree, adjacent = (a32 @ a32).toarray(), a.toarray()

        def dense(pairs: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
            u, w = pairs[:, 0], pairs[:, 1]
            return codegree[u, w].astype(np.int64), adjacent[u, w].astype(np.int64)

        return dense

    def sparse(pairs: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        u, w = pairs[:, 0], pairs[:, 1]
        t = np.asarray(a[u].multiply(a[w]).sum(axis=1)).ravel().astype(np.int64)
        return t, np.asarray(a[u, w]).ravel().astype(np.int64)

    return sparse

def codegree_sums(graph: Any, weights: Any = None) -> dict[str, float]:
    r"""Sums over node pairs of functions of the codegrees :math:`t_{uw} = |N(u) \cap N(w)|`.

    Keys: ``pairs`` (C(n, 2)), ``t1`` = Σ t, ``t2`` = Σ t², ``c2sq`` = Σ C(t, 2)² over all pairs
    u < w; ``edge_t2`` = Σ t² over the edges; ``tri_local_sq`` = Σ_v T_v² (local triangle counts);
    ``c4_local_sq`` = Σ_v (Σ_w C(t_vw, 2))²; ``triangles``, ``four_cycles``, ``edges``. With node
    ``weights`` s (default 1) and :math:`s_e = s_u s_w`: ``w_edges`` = Σ_edges s_e, ``w_t2`` = Σ_pairs
    s_e t², ``w_triangles`` = Σ_edges s_e t / 3, ``w_edge_t2`` = Σ_edges s_e t², ``w2_edge_t2`` =
    Σ_edges s_e² t², ``w2_tri_local_sq`` = Σ_v (s_v Σ_u s_u a_uv t_uv / 2)². From sparse products
    :math:`A_R A` over blocks R of rows (memory bounded by the block's 2-paths).
    """
    import scipy.sparse as sp

    n = graph.n_nodes
    a = sp.csr_matrix((np.ones(graph.indices.size, dtype=np.int64), graph.indices, graph.indptr),
                      shape=(n, n))
    deg = np.diff(graph.indptr)
    work = np.cumsum(np.asarray(a @ deg.astype(np.int64)).ravel())  # 2-paths from rows 0..v
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    keys = ("t1", "t2", "c2sq", "edge_t2", "tri_local_sq", "c4_local_sq", "w_edges", "w_t2", "w_triangles",
            "w_edge_t2", "w2_edge_t2", "w2_tri_local_sq")
    out = dict.fromkeys(keys, 0.0)
    tri3 = 0.0
    c4_total = 0.0
    start, block = 0, 1 << 22
    while start < n:
        stop = int(np.searchsorted(work, (work[start - 1] if start else 0) + block, side="right"))
        stop = min(max(stop, start + 1), n)
        b = (a[start:stop] @ a).tocoo()
        rows = b.row + start
        off = rows != b.col
        t = b.data[off].astype(np.float64)
        r, c = rows[off], b.col[off]
        upper = r < c
        out["t1"] += float(t[upper].sum())
        out["t2"] += float((t[upper] ** 2).sum())
        ch2 = t * (t - 1.0) / 2.0
        out["c2sq"] += float((ch2[upper] ** 2).sum())
        c4_v = np.bincount(r - start, weights=ch2, minlength=stop - start)
        out["c4_local_sq"] += float((c4_v**2).sum())
        c4_total += float(c4_v.sum())
        edge = np.asarray(a[r, c]).ravel() > 0
        out["edge_t2"] += float((t[upper & edge] ** 2).sum())
        tri_v = np.bincount(r[edge] - start, weights=t[edge], minlength=stop - start) / 2.0
        out["tri_local_sq"] += float((tri_v**2).sum())
        se = w[r] * w[c]
        ue = upper & edge
        out["w_edges"] += float(se[ue].sum())
        out["w_t2"] += float((se[upper] * t[upper] ** 2).sum())
        out["w_triangles"] += float((se[ue] * t[ue]).sum()) / 3.0
        out["w_edge_t2"] += float((se[ue] * t[ue] ** 2).sum())
        out["w2_edge_t2"] += float((se[ue] ** 2 * t[ue] ** 2).sum())
        wt_v = w[start:stop] * np.bincount(r[edge] - start, weights=w[c[edge]] * t[edge],
                                           minlength=stop - start)
        out["w2_tri_local_sq"] += float(((wt_v / 2.0) ** 2).sum())
        tri3 += float(tri_v.sum())
        start = stop
    out.update(pairs=n * (n - 1) / 2.0, triangles=tri3 / 3.0, four_cycles=c4_total / 4.0,
               edges=float(graph.indices.size // 2))
    return out


class _WedgeShuffleBase(Protocol):
    """Shared by the triangle and 4-cycle protocols (plan, round, estimate, moments, fast simulation)."""

    #: 2: wedge rows carry ε₀, and every sender adds a token row (issue 36)
    version = 2
    needs = "adjacency"
    unbiased = True
    model = "shuffle"
    #: a simulation takes n from the graph and draws a fresh pairing per trial
    simulation_draws = ("n_users", "pairing_seed")
    default_accounting = "numerical"
    options = (
        Option("n_users", int, None, "public number of users n (simulation default: the graph's nodes); "
               "each pair's wedge bits are shuffled among n - 2"),
        Option("pairing_seed", int, None, "public seed of the random pairing of the users (every node must "
               "use the same; a simulation draws it from its seed)"),
        Option("delta", float, DEFAULT_DELTA, "central delta of the shuffle-model guarantee (default 1e-8)"),
        Option("accounting", str, None, "amplification bound: numerical, closed-form, binary-rr (ours), or "
               "local (no shuffler)"),
    )

    def default_public(self, graph: Any, public: Any) -> dict[str, Any]:
        return {"n_users": graph.n_nodes}

    def placeholder_public(self, public: Any = None) -> dict[str, Any]:
        return {"n_users": 10_000}  # n moves epsilon0, not the split

    def _quantities(self) -> tuple[str, ...]:
        raise NotImplementedError

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        eps = check_epsilon(epsilon)
        if pub["n_users"] is None:
            raise ValueError(f"{self.name} needs the public number of users n_users (--n-users)")
        n = check_nonnegative_int(pub["n_users"], "n_users", minimum=4)
        delta = float(pub.get("delta", DEFAULT_DELTA))  # wlocal-* have no delta option
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        accounting = pub["accounting"] or self.default_accounting
        if accounting not in ACCOUNTINGS:
            raise ValueError(f"accounting must be one of {', '.join(ACCOUNTINGS)}, got {accounting!r}")
        shuffled = self.rounds()[0].shuffled
        if accounting != "local" and not shuffled:
            raise ValueError(f"{self.name}'s round is not shuffled (its rows keep their node ids): "
                             f"accounting {accounting!r} claims the shuffler's amplification, which it does "
                             "not get; only 'local' (epsilon0 = epsilon)")
        local = accounting == "local"
        if local and public.get("delta") is not None:
            raise ValueError(f"{self.name} with accounting 'local' is pure epsilon-LDP (epsilon0 = epsilon): "
                             "it has no delta to set; --delta is the shuffle model's")
        seed = pub["pairing_seed"]
        if seed is not None:
            seed = check_nonnegative_int(seed, "pairing_seed")
        eps0 = _local_epsilon(eps, n, delta, accounting)
        guarantee = None if local else ShuffleGuarantee(eps, delta, eps0, n, accounting)
        rounds = (wedge_round_plan(1, self._quantities(), eps, eps0, shuffled),)
        return Plan(self.name, self.version, eps, rounds, shuffle=guarantee, public={
            "n_users": n, "pairing_seed": seed, "accounting": accounting, "local_epsilon": eps0,
            "edge_epsilon": eps, "delta": 0.0 if local else delta, "central_epsilon": eps,
            "central_delta": 0.0 if local else delta, "edge_dp_epsilon": 2 * eps,
            "edge_dp_delta": 0.0 if local else 2 * delta, "shuffled_users": n - 2,
        })

    def rounds(self) -> tuple[Round, ...]:
        return (WedgeShuffleRound(shuffled=self.default_accounting != "local"),)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Estimate:
        stat = self.check_statistic(statistic)
        terms = pair_terms(result, plan, stat)
        k = _scale(result.n_nodes, stat)
        var = k * k * terms.size * float(np.var(terms, ddof=1)) if terms.size > 1 else None
        return Estimate(k * math.fsum(terms.tolist()), None if var is None else math.sqrt(max(var, 0.0)), var,
                        stat, "normal", se_kind="sample")

    def describe_result(self, result: Any, round: Round) -> list[str]:
        return [f"pairs      {result.n_pairs:,} ({result.n_nodes:,} users); {int(result.wedge.sum()):,} "
                f"wedge rows, {int(result.edge.sum()):,} pair_edge rows",
                received_line(result)]

    # ---------------------------------------------------------------- simulation hooks

    def prepare(self, graph: Any) -> None:
        self._codegree_sums(graph)

    def _codegree_sums(self, graph: Any) -> dict[str, float]:
        """:func:`codegree_sums` of ``graph``, cached for the last graph (the trials of a cell reuse it)."""
        return self.per_graph("codegree_sums", graph, codegree_sums)

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """A bit per pair of the matching and the 53-bit sender token up; nothing down."""
        return (graph.n_nodes // 2 + 53) / 8.0, 0.0

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: Any = None, *,
                 param: int | None = None) -> NDArray[np.float64]:
        """``n_trials`` estimates, each with a fresh uniform pairing (the plan's ``pairing_seed`` is the
        deployment's; the estimator is unbiased over the pairing, so a simulation draws it), the counts
        drawn from their binomial laws given the pairs' codegrees (the same law as the rows)."""
        stat = self.check_statistic(statistic)
        gen = check_rng(rng)
        n = graph.n_nodes
        if n != plan.public["n_users"]:
            raise ValueError(f"the plan is for {plan.public['n_users']} users, the graph has {n} nodes")
        lookup = pair_lookup(graph)
        m = n - 2
        q1 = flip_probability(plan.public["local_epsilon"])
        q2 = flip_probability(plan.public["edge_epsilon"])
        out = np.empty(int(n_trials))
        for trial in range(int(n_trials)):
            pairs = public_pairing(n, int(gen.integers(2**63)))
            t, adj = lookup(pairs)
            wedge = gen.binomial(t, 1.0 - q1) + gen.binomial(m - t, q1)
            edge = np.zeros_like(wedge)
            if stat == "triangles":
                edge = gen.binomial(2 * adj, 1.0 - q2) + gen.binomial(2 - 2 * adj, q2)
            out[trial] = _scale(n, stat) * float(pair_terms((wedge, edge), plan, stat).sum())
        return out

    def moments(self, graph: Any, plan: Plan, statistic: str, param: int | None = None
                ) -> tuple[float, float]:
        r"""Exact mean and variance of the estimate over the randomized response and the pairing.

        With :math:`c_p` a pair's term, :math:`f_e = E[c_p \mid e]`, :math:`s_e = \mathrm{Var}(c_p \mid e)`,
        K the scale, :math:`\pi = 2P/(n(n-1))` the probability that a given pair is in M and
        :math:`\pi_2 = 4P(P-1)/(n(n-1)(n-2)(n-3))` that two given disjoint pairs are,

        .. math:: \mathrm{Var} = K^2\Bigl[\pi \sum_e s_e + \pi F_2 + \pi_2 (F_1^2 + F_2 - G_2)
                  - \pi^2 F_1^2\Bigr],

        :math:`F_1 = \sum_e f_e`, :math:`F_2 = \sum_e f_e^2`, :math:`G_2 = \sum_v (\sum_{e \ni v} f_e)^2`
        (pairs sharing a node are never both in M). Triangles: :math:`f = a t`,
        :math:`s = a\sigma_v^2 + t^2\sigma_u^2 + \sigma_u^2\sigma_v^2`; 4-cycles: :math:`f = \binom t2`,
        s from the binomial cumulants of :math:`W_p` (see the code).
        """
        stat = self.check_statistic(statistic)
        cs = self._codegree_sums(graph)
        n = graph.n_nodes
        m, pi, pi2, p1, q1, var_v = _matching_constants(n, plan.public["local_epsilon"])
        d = p1 - q1
        if stat == "triangles":
            q2 = flip_probability(plan.public["edge_epsilon"])
            p2 = 1.0 - q2
            var_u = p2 * q2 / (2.0 * (p2 - q2) ** 2)
            f1, f2, g2 = 3.0 * cs["triangles"], cs["edge_t2"], 4.0 * cs["tri_local_sq"]
            s = var_v * cs["edges"] + var_u * cs["t2"] + var_u * var_v * cs["pairs"]
        else:
            f1, f2, g2 = 2.0 * cs["four_cycles"], cs["c2sq"], cs["c4_local_sq"]
            k2 = m * p1 * q1
            mu4 = (m * p1 * q1 * (1.0 - 6.0 * p1 * q1) + 3.0 * k2 * k2) / d**4
            k3 = p1 * q1 * (1.0 - 2.0 * q1) / d**3  # mu3(t) = k3 (m - 2t)
            n_pairs, t1, t2 = cs["pairs"], cs["t1"], cs["t2"]
            sum_sq = 4.0 * t2 - 4.0 * t1 + n_pairs  # sum (2t - 1)^2
            sum_cross = (2.0 * m + 2.0) * t1 - 4.0 * t2 - m * n_pairs  # sum (2t - 1)(m - 2t)
            s = (sum_sq * var_v + n_pairs * (mu4 - var_v**2) + 2.0 * k3 * sum_cross) / 4.0
        k = _scale(n, stat)
        mean = k * pi * f1
        var = k * k * (pi * s + pi * f2 + pi2 * (f1 * f1 + f2 - g2) - (pi * f1) ** 2)
        return mean, var


@register
class WedgeShuffleTriangles(_WedgeShuffleBase):
    """``wshuffle-triangles``: WShuffle (the reference's numerical bound, δ = 1e-8)."""

    name = "wshuffle-triangles"
    statistics = ("triangles",)
    reference = "Imola, Murakami, Chaudhuri, CCS 2022 (WShuffle; Feldman et al. numerical amplification)"

    def _quantities(self) -> tuple[str, ...]:
        return (PAIR_EDGE, WEDGE)


@register
class WedgeShuffleTrianglesRR(WedgeShuffleTriangles):
    """``wshuffle-triangles-rr``: WShuffle with the binary-randomized-response amplification (ours)."""

    name = "wshuffle-triangles-rr"
    default_accounting = "binary-rr"
    # accounted as the randomized response it is: a smaller eps0 for the same central epsilon, hence
    # a smaller error (README: 0.40 against 0.446 for triangles at epsilon 1)
    presets = (Preset("wshuffle-triangles-rr", recommended=("triangles",)),)
    reference = "ours; WShuffle with the clone probability 2/(e^eps0 + 1) of randomized response"


@register
class WedgeLocalTriangles(WedgeShuffleTriangles):
    """``wlocal-triangles``: the same estimator without a shuffler (WLocal, ε₀ = ε)."""

    name = "wlocal-triangles"
    default_accounting = "local"
    model = "local, one round"
    options = tuple(o for o in _WedgeShuffleBase.options if o.name != "delta")  # no shuffler, no delta
    reference = "Imola, Murakami, Chaudhuri, CCS 2022 (WLocal)"


@register
class WedgeShuffleFourCycles(_WedgeShuffleBase):
    """``wshuffle-four-cycles``: the reference's 4-cycle WShuffle."""

    name = "wshuffle-four-cycles"
    statistics = ("four_cycles",)
    reference = "Imola, Murakami, Chaudhuri, CCS 2022 (WShuffle 4-cycles; numerical amplification)"

    def _quantities(self) -> tuple[str, ...]:
        return (WEDGE,)


@register
class WedgeShuffleFourCyclesRR(WedgeShuffleFourCycles):
    """``wshuffle-four-cycles-rr``: with the binary-randomized-response amplification (ours)."""

    name = "wshuffle-four-cycles-rr"
    default_accounting = "binary-rr"
    presets = (Preset("wshuffle-four-cycles-rr", recommended=("four_cycles",)),)
    reference = "ours; 4-cycle WShuffle with the clone probability 2/(e^eps0 + 1) of randomized response"


@register
class WedgeLocalFourCycles(WedgeShuffleFourCycles):
    """``wlocal-four-cycles``: without a shuffler (WLocal, ε₀ = ε)."""

    name = "wlocal-four-cycles"
    default_accounting = "local"
    model = "local, one round"
    options = tuple(o for o in _WedgeShuffleBase.options if o.name != "delta")  # no shuffler, no delta
    reference = "Imola, Murakami, Chaudhuri, CCS 2022 (WLocal 4-cycles)"
