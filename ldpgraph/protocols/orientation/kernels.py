r"""Triangle counting through a low out-degree orientation (EdgeOrientΔ), as published and ours.

Orient every edge from the lower to the higher node of a public total order; every triangle
then has exactly one *source* (the node both others are out-neighbours of), and node v counts
the noisy edges among the pairs of its out-neighbours. With an order in which out-degrees are
small (a low out-degree orientation: by core number or by degree), the noise a node adds,
calibrated to the out-degree bound, is far below that of counting over all (or all lower)
neighbours.

``reference`` (Mundra, Papamanthou, Shun, Liu, PVLDB, arXiv 2506.20828,
``algorithms/triangle-counting-ldp.go``), what the code does, at ε_paper (the paper's LEDP
accounting, an edge's two endpoints together): levels from k-CoreD at ε_paper/4
(:func:`~ldpgraph.protocols.kcore.reference.reference_kcore`); RR at ε' = ε_paper/4 on every pair
(reported by its lower id); each node's out-neighbours are those at a higher level, and
those at its *own* level each with a fresh fair coin (in each round anew; the paper orders
ties by id); :math:`\tilde d_{max} = \max_v(d^+_v + \mathrm{DLap}(e^{-\varepsilon'}))` (the paper
adds 12 log n / ε; the code does not); node v sums
:math:`(X_{jk}(e^{\varepsilon'}+1) - 1)/(e^{\varepsilon'}-1)` over the pairs of its first
:math:`\min(\tilde d_{max}, d^+_v)` out-neighbours by id and adds
:math:`\mathrm{Lap}(\tilde d_{max}/(\varepsilon'/2))`; the estimate is the sum. Two findings:
the ties by coin make the orientation inconsistent between rounds and endpoints (an edge at
equal levels is outgoing for both, one or neither end), so a triangle is counted 0 to 3
times; and each term lies in :math:`[-1/(e^{\varepsilon'}-1), e^{\varepsilon'}/(e^{\varepsilon'}-1)]`,
so one neighbour moves the local count by up to
:math:`(\tilde d_{max}-1)(e^{\varepsilon'}+1)/(e^{\varepsilon'}-1)`, not the
:math:`2\tilde d_{max}` the paper's proof assumes (terms in [0, 1]): at ε' = 1/4 the release
spends about 4 times its stated ε'/2.

``ours`` (:func:`edge_orient_trial`): round 1, each node releases its degree plus
:math:`\mathrm{DLap}(e^{-\varepsilon_o})` (the public order: noisy degree, ties by id, which
measured better than k-core levels at the same budget; nodes are relabelled so that
out-neighbours are the *lower* ids) and randomizes its pairs (RR at ε₁, as
``two-round-triangles-dlap``); round 2, its out-degree :math:`m_v` plus
:math:`\mathrm{DLap}(e^{-\varepsilon_0})`, from which the public bound :math:`D_v` of every node
(:func:`local_bounds`: its own noisy out-degree plus a margin, or the global maximum); round
3, the local count

.. math:: r_v = \lfloor \alpha_v w_v + U\rfloor + \mathrm{DLap}(e^{-\varepsilon_2/\Delta_v}),\quad
          w_v = \sum_{j<k \in O_v}(b_{jk} - q),\quad
          \alpha_v = \min\Bigl(1, \frac{D_v - 1}{m_v - 1}\Bigr),\quad
          \Delta_v = \max\Bigl(\Bigl\lceil \tfrac{1+p}{2}(D_v - 1)\Bigr\rceil, 1\Bigr)

over its whole out-list :math:`O_v` (:func:`count_sensitivity`, :func:`scale_factors`);
:math:`\hat T = \sum_v r_v / (p - q)`. A node whose out-degree exceeds its bound *scales* its
sum down by :math:`\alpha_v` instead of projecting its out-list to a :math:`D_v`-subset
(``two-round-triangles-dlap``'s projection, sensitivity :math:`D - 1`): the sensitivity falls
to :math:`\frac{1+p}{2}(D_v-1)` (:func:`count_sensitivity` proves it; 0.8 (D - 1) at
p = 0.6, a third less noise variance) and the loss to :math:`(1-\alpha_v)t_v`,
:math:`\alpha_v \approx D_v/m_v` rather than the projection's :math:`(D_v/m_v)^2`.
Given the order and bounds, :math:`E\hat T = \sum_v \alpha_v t_v` (:func:`edge_orient_mean`;
:math:`= T` exactly when every :math:`D_v \ge m_v`: the RR correction and the release noise
are unbiased) and the variance is :func:`edge_orient_variance` (exact, scaled nodes
included); a node is scaled with probability :func:`projection_probability` for local bounds
(a downward bias, counted in each trial: ``n_scaled``). Per-node bounds cut the noise from
:math:`n D^2` to :math:`\sum_v \Delta_v^2`: most nodes have small out-degrees. An edge
{u, v} enters the degree releases of both ends and, given the public order, the out-degree,
RR bit and local count of one end only: ε_o + ε₀ + ε₁ + ε₂ per node, 2ε_o + ε₀ + ε₁ + ε₂ per
edge (the paper's accounting). The default split (:func:`edge_orient_budget`) minimises the
analytic mean squared error on Wiki-Vote, a graph outside the comparison (``scripts/
bench_kcore_edge_orient.py``).

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> h = orient_relabel(g, g.degrees)
>>> h.edges().tolist()  # node 2 (degree 3) is first, the pendant 3 last
[[0, 1], [0, 2], [0, 3], [1, 2]]
>>> edge_orient_trial(g, 400.0, rng=0).estimate
1.0
>>> h.n_nodes, edge_orient_trial(g, 400.0, rng=0).n_scaled
(4, 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import check_epsilon, check_rng
from ...graph.core import Graph, from_edge_array
from ..kcore.reference import dlap_noise, dlap_noise_per_node, reference_kcore
from ..randomized_response import flip_probability, keep_probability
from ..triangles.kernels import lower_wedges

__all__ = [
    "orient_relabel",
    "edge_orient_budget",
    "edge_orient_trial",
    "EdgeOrientTrial",
    "local_bounds",
    "projection_probability",
    "count_sensitivity",
    "scale_factors",
    "edge_orient_mean",
    "edge_orient_variance",
    "reference_edge_orient",
    "order_ranks",
    "OutLists",
    "out_wedge_ones",
    "row_pair_blocks",
]


#: the default margin of the local bounds, :math:`c = \lceil \text{margin}/\varepsilon_0\rceil`
#: (:func:`local_bounds`; chosen with the split, :func:`edge_orient_budget`)
MARGIN = 1.5


def orient_relabel(graph: Graph, key: ArrayLike) -> Graph:
    """``graph`` relabelled by the public order: new id = rank in descending (key, id).

    A node's out-neighbours (higher key, ties by higher id) get lower new ids, so counting over
    the *lower* neighbours of the relabelled graph counts over the out-neighbours.
    """
    n = graph.n_nodes
    k = np.asarray(key)
    if k.shape != (n,):
        raise ValueError(f"key must have one value per node ({n}), got shape {k.shape}")
    return from_edge_array(order_ranks(k)[graph.edges()], n_nodes=n)


def edge_orient_budget(epsilon: float, shares: dict[str, float] | None = None) -> dict[str, float]:
    """Per-node ε of each release: ``order`` (noisy degree), ``bound`` (out-degree), ``rr``, ``count``.

    The default minimises the analytic relative mean squared error (bias from scaled nodes
    included; summed in logs over ε ∈ {1, 2}) on Wiki-Vote, a graph outside the comparisons, over
    a grid (order 0.01-0.03, bound 0.1-0.18, RR 40-65 % of the rest, margin 1-2.5: the
    minimum at margin 1.5; ``scripts/bench_kcore_edge_orient.py --split``).

    >>> edge_orient_budget(1.0)
    {'order': 0.01, 'bound': 0.15, 'rr': 0.46, 'count': 0.38}
    """
    from ...core.plan import split_budget

    default = {"order": 0.01, "bound": 0.15, "rr": 0.46, "count": 0.38}
    s = default if shares is None else dict(shares)
    if sorted(s) != sorted(default):
        raise ValueError(f"shares of edge-orient: order=F,bound=F,rr=F,count=F, got {s}")
    return split_budget(check_epsilon(epsilon), s)


def local_bounds(out_degrees: ArrayLike, epsilon_bound: float, *, bounds: str = "local",
                 margin: float = MARGIN, rng: Any = None) -> NDArray[np.int64]:
    r"""The public out-degree bounds from the noisy out-degrees
    :math:`\tilde m_v = m_v + \mathrm{DLap}(e^{-\varepsilon_0})`.

    ``"local"``: :math:`D_v = \max(1, \tilde m_v + c)`,
    :math:`c = \lceil \text{margin}/\varepsilon_0\rceil`;
    a node is projected (:math:`m_v > D_v`) with probability
    :math:`P[\eta \le -c-1] = e^{-\varepsilon_0(c+1)}/(1+e^{-\varepsilon_0})`
    (:func:`projection_probability`).
    ``"global"``: every :math:`D_v = D = \max(1, \max_v \tilde m_v)`, as ``two-round-triangles-dlap``'s
    private bound.

    >>> local_bounds([0, 3, 10], 100.0, margin=3.0, rng=0).tolist()  # c = 1 at eps0 = 100
    [1, 4, 11]
    """
    m = np.asarray(out_degrees, dtype=np.int64)
    eps0 = check_epsilon(epsilon_bound)
    noisy = m + dlap_noise(check_rng(rng), eps0, m.size)
    if bounds == "global":
        return np.full(m.size, max(int(noisy.max(initial=1)), 1), dtype=np.int64)
    if bounds != "local":
        raise ValueError(f"bounds must be 'local' or 'global', got {bounds!r}")
    return np.maximum(noisy + int(math.ceil(margin / eps0 - 1e-9)), 1)


def projection_probability(epsilon_bound: float, margin: float = 3.0) -> float:
    r""":math:`P[m_v > D_v]` for a local bound: :math:`e^{-\varepsilon_0(c+1)}/(1+e^{-\varepsilon_0})`.

    >>> round(projection_probability(0.2, 3.0), 5)  # c = 15
    0.02241
    """
    eps0 = check_epsilon(epsilon_bound)
    c = int(math.ceil(margin / eps0 - 1e-9))
    return math.exp(-eps0 * (c + 1)) / (1.0 + math.exp(-eps0))


def count_sensitivity(bounds: ArrayLike, p: float) -> NDArray[np.int64]:
    r"""The local count's sensitivity at bound :math:`D`:
    :math:`\Delta = \max(\lceil \tfrac{1+p}{2}(D-1)\rceil, 1)`, p the RR keep probability (> 1/2).

    Notes
    -----
    Node v's count is :math:`f(N) = \alpha(|N|) W(N)`, :math:`W(N) = \sum_{j<k\in N}(b_{jk}-q)`
    over its out-list N, :math:`\alpha(m) = \min(1, (D-1)/(m-1))`; the bits :math:`b_{jk}`
    (j, k ≠ v) are public. Neighbouring out-lists differ in one node l: N and N ∪ {l}, |N| = m.
    Write :math:`Y = \sum_{j \in N}(b_{jl}-q) \in [-qm, pm]`; W ranges over
    :math:`[-q\binom m2, p\binom m2]` independently (other pairs).

    * :math:`m + 1 \le D`: :math:`f' - f = Y \in [-q(D-1), p(D-1)]`.
    * :math:`m \ge D`: :math:`f = \frac{D-1}{m-1}W`, so
      :math:`f' - f = (D-1)\bigl[\frac{W+Y}{m} - \frac{W}{m-1}\bigr]
      = \frac{D-1}{m}\bigl[Y - \frac{W}{m-1}\bigr]` with
      :math:`\frac{W}{m-1} \in [-\frac{qm}2, \frac{pm}2]`: in
      :math:`[-(D-1)(q + \frac p2), (D-1)(p + \frac q2)]`.

    So :math:`|f'-f| \le \frac{1+p}{2}(D-1)` (p ≥ q; the extremes are attained), and
    randomized rounding with a shared U moves the integer by at most
    :math:`\lceil |f'-f| \rceil \le \Delta` (as in
    :func:`~ldpgraph.protocols.triangles.kernels.two_round_dlap_release`): DLap(e^{-ε₂/Δ}) makes the release
    ε₂-DP. At m = D the bound is met with equality, so a smaller :math:`\alpha(D+1)` breaks it
    once :math:`(D-1)q > 2p`. Among counts :math:`\alpha(m)W` that are unbiased up to D
    (:math:`\alpha = 1`), :math:`(1+p)/2` was the least factor a numerical search found (greedy
    smallest decay, D up to 100, p from 1/2 to 0.7); it is not proved optimal. A projection to a
    uniform D-subset has sensitivity D - 1.

    >>> count_sensitivity([1, 2, 11, 101], 0.6).tolist()
    [1, 1, 8, 80]
    """
    d = np.asarray(bounds, dtype=np.int64)
    if not 0.5 <= float(p) <= 1.0:
        raise ValueError(f"p must be the RR keep probability, in [1/2, 1], got {p!r}")
    # ceil of a float: a value that rounds just above an integer costs one unit, never less privacy
    return np.maximum(np.ceil((1.0 + float(p)) / 2.0 * (d - 1)).astype(np.int64), 1)


def scale_factors(out_degrees: ArrayLike, bounds: ArrayLike) -> NDArray[np.float64]:
    r""":math:`\alpha_v = \min(1, (D_v - 1)/(m_v - 1))` (1 when :math:`m_v \le D_v`).

    >>> scale_factors([3, 11, 5], [4, 6, 1]).tolist()
    [1.0, 0.5, 0.0]
    """
    m = np.asarray(out_degrees, dtype=np.int64)
    d = np.asarray(bounds, dtype=np.int64)
    return np.where(m > d, (d - 1) / np.maximum(m - 1, 1), 1.0)


@dataclass(frozen=True)
class EdgeOrientTrial:
    """One run: the estimate, the bounds, and how many nodes were scaled down (biased: 0 is exact).

    ``signal`` is the estimate without the count releases' DLap noise and ``noise_variance`` that
    noise's variance given the bounds, on the estimate's scale: E[(estimate - T)^2 | signal] =
    (signal - T)^2 + noise_variance, an estimate of the mean squared error with less
    Monte-Carlo variance (``scripts/bench_kcore_edge_orient.py``). ``ranks``: every node's new id
    in the order (:func:`orient_relabel`'s); :attr:`oriented` builds the relabelled graph from them.
    """

    estimate: float
    bounds: NDArray[np.int64]
    n_scaled: int
    ranks: NDArray[np.int64] = field(repr=False)
    signal: float = math.nan
    noise_variance: float = math.nan
    graph: Graph | None = field(default=None, repr=False, compare=False)

    @property
    def oriented(self) -> Graph:
        """The graph relabelled by the order (:func:`orient_relabel`), built on demand."""
        if self.graph is None:
            raise ValueError("no graph kept with this trial")
        return from_edge_array(self.ranks[self.graph.edges()], n_nodes=self.graph.n_nodes)


#: wedges enumerated (and pairs sampled) per block by :func:`out_wedge_ones`: 2^16, 512 KB per array
#: (blocks of 2^22 ran 2-3 times slower: fresh pages for every temporary, out of the cache)
_WEDGE_BLOCK = 1 << 16
#: the owners of one bits gathered before one bincount over the nodes (4 M entries)
_OWNER_BUFFER = 1 << 22
#: the bits a packed wedge word (pair index, owner) may use (n up to ~2.9 M)
_PACK_BITS = 62


def order_ranks(key: ArrayLike) -> NDArray[np.int64]:
    """Every node's new id in the public order: its rank in descending (key, id) (:func:`orient_relabel`).

    >>> order_ranks([0, 5, 3, 5]).tolist()
    [3, 1, 2, 0]
    """
    k = np.asarray(key)
    n = k.size
    order = np.lexsort((-np.arange(n), -k))
    new = np.empty(n, dtype=np.int64)
    new[order] = np.arange(n)
    return new


@dataclass(frozen=True)
class OutLists:
    """Every node's out-list in the order given by ``ranks`` (the neighbours of lower rank), in rank
    labels, row by row in the graph's node order: row v is ``nbr[ptr[v]:ptr[v + 1]]``, its owner's
    label ``ranks[v]``. ``out_degrees`` is by rank label (the relabelled graph's lower degrees)."""

    ranks: NDArray[np.int64]
    ptr: NDArray[np.int64]
    nbr: NDArray[np.int64]
    out_degrees: NDArray[np.int64]

    @classmethod
    def build(cls, graph: Graph, ranks: NDArray[np.int64] | None = None) -> OutLists:
        """The out-lists of ``graph`` under ``ranks`` (None: the identity, ``graph`` already relabelled)."""
        n = graph.n_nodes
        ptr = np.asarray(graph.indptr, dtype=np.int64)
        deg = np.diff(ptr)
        r = np.arange(n, dtype=np.int64) if ranks is None else np.asarray(ranks, dtype=np.int64)
        small = np.int32 if n < 2**31 else np.int64
        nbr = r[graph.indices].astype(small, copy=False)
        keep = nbr < np.repeat(r, deg)
        cum = np.zeros(keep.size + 1, dtype=np.int64)
        np.cumsum(keep, out=cum[1:])
        optr = cum[ptr]
        del cum
        nbr = nbr[keep]
        m = np.empty(n, dtype=np.int64)
        m[r] = np.diff(optr)
        return cls(r, optr, nbr, m)

    def edge_keys(self) -> NDArray[np.int64]:
        """The sorted :func:`~ldpgraph.protocols.randomized_response.pair_index` of every edge (each is in
        one out-list: its higher end's)."""
        hi = np.repeat(self.ranks, np.diff(self.ptr))
        keys = hi * (hi - 1) // 2 + self.nbr
        keys.sort()
        return keys

    def wedge_keys(self, shift: int | None) -> NDArray[np.int64]:
        """Every out-wedge (v; j, k), j and k in v's out-list, row by row, as
        ``pair_index(k, j) << shift | ranks[v]`` (k > j; ``shift`` None: the pair index alone), built in
        blocks of about :data:`_WEDGE_BLOCK` wedges."""
        m = np.diff(self.ptr)
        per = m * (m - 1) // 2
        out = np.empty(int(per.sum()), dtype=np.int64)
        done = 0
        for a, b, j, k in row_pair_blocks(self.ptr, self.nbr):
            hi = np.maximum(j, k)
            np.minimum(j, k, out=j)
            del k
            hi *= hi - 1
            hi //= 2
            hi += j  # pair_index(hi, lo)
            del j
            if shift is not None:
                hi <<= shift
                hi |= np.repeat(self.ranks[a:b], per[a:b])
            out[done:done + hi.size] = hi
            done += hi.size
        return out

    def wedge_owners(self) -> NDArray[np.int64]:
        """The rank label of every out-wedge's source, in :meth:`wedge_keys`' order."""
        m = np.diff(self.ptr)
        return np.repeat(self.ranks, m * (m - 1) // 2)


def row_pair_blocks(ptr: NDArray[np.int64], nbr: NDArray[Any], block: int | None = None) -> Any:
    """Yield ``(a, b, j, k)`` for blocks of rows a..b-1 of the lists ``nbr[ptr[v]:ptr[v + 1]]``: the
    entries j = row[i], k = row[i'] (int64) of every pair of positions i < i' of those rows, row by row
    (in each row i, then i', ascending), about ``block`` (:data:`_WEDGE_BLOCK`) pairs a block (a
    longer row alone)."""
    block = _WEDGE_BLOCK if block is None else block
    m = np.diff(ptr)
    cum = np.cumsum(m * (m - 1) // 2)
    n = m.size
    a = 0
    while a < n:
        done = int(cum[a - 1]) if a else 0
        b = min(max(int(np.searchsorted(cum, done + block, side="right")), a + 1), n)
        p0, p1 = int(ptr[a]), int(ptr[b])
        pos = np.arange(p0, p1, dtype=np.int64)
        after = np.repeat(ptr[a + 1:b + 1], m[a:b]) - pos - 1  # later entries of the same row
        count = int(after.sum())
        if count:
            first = np.repeat(pos, after)
            second = np.arange(count, dtype=np.int64) - np.repeat(np.cumsum(after) - after, after)
            second += first + 1
            j = nbr[first].astype(np.int64)
            del first
            k = nbr[second].astype(np.int64)
            del second
            yield a, b, j, k
        a = b


def out_wedge_ones(lists: OutLists, p: float, q: float, gen: np.random.Generator) -> NDArray[np.int64]:
    r"""For every node (by rank label), how many of its out-wedges' closing pairs have a noisy bit 1:
    each distinct pair closing an out-wedge gets one bit, 1 with probability p if it is an edge and q
    if not, drawn in the order of the pairs' :func:`~ldpgraph.protocols.randomized_response.pair_index`
    (one ``gen.random`` value per pair: the draws of ``lower_wedges`` and the RR round's bits on
    those pairs), and counts at every node whose out-list holds both ends.

    Memory: one int64 per wedge (pair index and owner packed in one word, sorted in place) and a
    block's temporaries; no table of distinct pairs or inverse map.
    """
    n = lists.out_degrees.size
    shift = max((n - 1).bit_length(), 1)
    if (max(n * (n - 1) // 2, 1)).bit_length() + shift > _PACK_BITS:
        return _out_wedge_ones_wide(lists, p, q, gen)
    packed = lists.wedge_keys(shift)
    packed.sort()
    edges = lists.edge_keys()
    mask = (1 << shift) - 1
    ones = _Tally(n)
    for pos, end in _whole_key_blocks(packed, shift):
        chunk = packed[pos:end]
        ones.add(_one_owners(chunk >> shift, chunk, edges, p, q, gen) & mask)
    return ones.counts()


class _Tally:
    """Counts per node of owner labels added in pieces: gathered in a buffer, one bincount per
    :data:`_OWNER_BUFFER` of them (a bincount over the n nodes per block would cost O(n) a block)."""

    def __init__(self, n: int) -> None:
        self.n, self.fill = n, 0
        self.total = np.zeros(n, dtype=np.int64)
        self.buf = np.empty(_OWNER_BUFFER, dtype=np.int32 if n < 2**31 else np.int64)

    def add(self, owners: NDArray[np.int64]) -> None:
        if self.fill + owners.size > self.buf.size:
            self._flush()
        if owners.size > self.buf.size:
            self.total += np.bincount(owners, minlength=self.n)
            return
        self.buf[self.fill:self.fill + owners.size] = owners
        self.fill += owners.size

    def _flush(self) -> None:
        if self.fill:
            self.total += np.bincount(self.buf[:self.fill], minlength=self.n)
            self.fill = 0

    def counts(self) -> NDArray[np.int64]:
        self._flush()
        return self.total


def _whole_key_blocks(words: NDArray[np.int64], shift: int) -> Any:
    """``(start, end)`` of consecutive blocks of about :data:`_WEDGE_BLOCK` of the sorted ``words``, each
    ending where the key ``word >> shift`` changes (a key's words in one block)."""
    pos, total = 0, words.size
    while pos < total:
        end = min(pos + _WEDGE_BLOCK, total)
        if end < total:
            end = int(np.searchsorted(words, ((int(words[end - 1]) >> shift) + 1) << shift, side="left"))
        yield pos, end
        pos = end


def _groups(keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The distinct values of the sorted ``keys`` and how many times each occurs."""
    new = np.empty(keys.size, dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    del new
    return keys[starts], np.diff(np.append(starts, keys.size))


def _members(values: NDArray[np.int64], table: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Which of the sorted distinct ``values`` are in the sorted ``table``: the table's entries in the
    values' range looked up among the values (the fewer lookups when the values are the many)."""
    out = np.zeros(values.size, dtype=bool)
    if not values.size or not table.size:
        return out
    lo, hi = np.searchsorted(table, values[[0, -1]], side="left")
    sub = table[int(lo):int(hi) + 1]  # up to the first entry >= the last value
    at = np.searchsorted(values, sub)
    hit = at < values.size
    hit[hit] = values[at[hit]] == sub[hit]
    out[at[hit]] = True
    return out


def _one_owners(keys: NDArray[np.int64], owner: NDArray[np.int64], edges: NDArray[np.int64], p: float,
                q: float, gen: np.random.Generator) -> NDArray[np.int64]:
    """The ``owner`` entries of the wedges whose pair's bit is 1, for a block of wedges sorted by pair
    ``keys`` (whole pairs only): one bit per distinct pair, in key order."""
    uk, counts = _groups(keys)
    bit = gen.random(uk.size) < np.where(_members(uk, edges), p, q)
    return owner[np.repeat(bit, counts)]


def _out_wedge_ones_wide(lists: OutLists, p: float, q: float, gen: np.random.Generator) -> NDArray[np.int64]:
    """:func:`out_wedge_ones` where pair index and owner do not fit one word together (n > ~2.9 M): the
    pair indices sorted with their owners by an argsort (three words per wedge)."""
    n = lists.out_degrees.size
    keys = lists.wedge_keys(None)
    order = np.argsort(keys)
    keys = keys[order]
    owner = lists.wedge_owners()[order]
    del order
    edges = lists.edge_keys()
    ones = _Tally(n)
    for pos, end in _whole_key_blocks(keys, 0):
        ones.add(_one_owners(keys[pos:end], owner[pos:end], edges, p, q, gen))
    return ones.counts()


def edge_orient_trial(graph: Graph, epsilon: float, *, shares: dict[str, float] | None = None,
                      bounds: str = "local", margin: float = MARGIN, oriented: Graph | None = None,
                      bound_values: ArrayLike | None = None, budget: dict[str, float] | None = None,
                      rng: Any = None) -> EdgeOrientTrial:
    r"""One run of our EdgeOrientΔ (module docstring) at per-node budget ``epsilon``.

    ``oriented`` / ``bound_values``: a fixed order (the relabelled graph) and fixed bounds, to
    study the estimate given them (the tests' exact checks); by default both are drawn.
    ``budget``: the ε of each release (``order``, ``bound``, ``rr``, ``count``: a plan's) in place
    of :func:`edge_orient_budget` of ``epsilon`` and ``shares``.
    Only the pairs that close an out-wedge get an RR bit: no other bit enters the estimate,
    so the law is that of the full protocol. The out-wedges are counted by
    :func:`out_wedge_ones` (one word per wedge; the relabelled graph is not built):
    :math:`w_v` = its ones - q times its wedges.
    """
    eps = edge_orient_budget(epsilon, shares) if budget is None else budget
    gen = check_rng(rng)
    n = graph.n_nodes
    if oriented is None:
        ranks = order_ranks(graph.degrees + dlap_noise(gen, eps["order"], n))
        lists = OutLists.build(graph, ranks)
        kept = graph
    else:
        lists = OutLists.build(oriented)
        kept = oriented
    m = lists.out_degrees
    if bound_values is None:
        bound = local_bounds(m, eps["bound"], bounds=bounds, margin=margin, rng=gen)
    else:
        bound = np.asarray(bound_values, dtype=np.int64)
    p, q = keep_probability(eps["rr"]), flip_probability(eps["rr"])
    wv = out_wedge_ones(lists, p, q, gen) - q * (m * (m - 1) // 2)
    a = eps["count"] / count_sensitivity(bound, p)
    noise = dlap_noise_per_node(gen, a)
    rounded = np.floor(scale_factors(m, bound) * wv + gen.random(n))
    pn = np.exp(-a)
    return EdgeOrientTrial(math.fsum((rounded + noise).tolist()) / (p - q), bound,
                           int(np.count_nonzero(m > bound)), lists.ranks,
                           math.fsum(rounded.tolist()) / (p - q),
                           math.fsum((2.0 * pn / (1.0 - pn) ** 2).tolist()) / (p - q) ** 2, kept)


def _given_order(oriented: Graph, bounds: ArrayLike) -> tuple[Any, NDArray[np.int64], NDArray[np.float64]]:
    w = lower_wedges(oriented)
    d = np.asarray(bounds, dtype=np.int64)
    if d.shape != w.lower_degrees.shape or np.any(d < 1):
        raise ValueError(f"bounds must be one integer >= 1 per node ({w.lower_degrees.size}), got shape "
                         f"{d.shape}")
    return w, d, scale_factors(w.lower_degrees, d)


def edge_orient_mean(oriented: Graph, bounds: ArrayLike) -> float:
    r""":math:`E\hat T = \sum_v \alpha_v t_v` given the order (``oriented``, relabelled by
    :func:`orient_relabel`) and the bounds: :math:`t_v` the triangles node v is the source of,
    :math:`\alpha_v` from :func:`scale_factors`. It is T when every bound is at or above its
    out-degree.

    >>> from ldpgraph.graph import from_edge_array
    >>> h = from_edge_array([[0, 1], [0, 2], [1, 2], [0, 3], [1, 3], [2, 3]])  # K4: node 3 sources 3
    >>> edge_orient_mean(h, [1, 1, 2, 3]), edge_orient_mean(h, [1, 1, 2, 2])  # alpha_3 = 1/2
    (4.0, 2.5)
    """
    w, _, alpha = _given_order(oriented, bounds)
    t = np.bincount(w.node[w.pair_is_edge[w.pair]], minlength=alpha.size)
    return math.fsum((alpha * t).tolist())


def _rounding_terms(w: Any, alpha: NDArray[np.float64], p: float, q: float) -> float:
    r""":math:`\sum_v E[g(\alpha_v w_v)]`, :math:`g(x) = \{x\}(1 - \{x\})`: the variance randomized
    rounding adds. For :math:`\alpha_v = 1` the fractional part of :math:`w_v` is that of
    :math:`-q\binom{m_v}2` (fixed); for :math:`\alpha_v < 1` the expectation runs over the law of
    :math:`w_v + q\binom{m_v}2 = X + Y`, :math:`X \sim \mathrm{Bin}(t_v, p)`,
    :math:`Y \sim \mathrm{Bin}(\binom{m_v}2 - t_v, q)` (the bits of distinct pairs are independent).
    """
    from scipy.signal import fftconvolve  # deferred: slow to import
    from scipy.stats import binom

    m = w.lower_degrees.astype(np.float64)
    s = m * (m - 1) / 2
    t = np.bincount(w.node[w.pair_is_edge[w.pair]], minlength=alpha.size)

    def g(x: NDArray[np.float64]) -> NDArray[np.float64]:
        f = x - np.floor(x)
        return f * (1 - f)

    whole = alpha == 1.0
    total = [float(g(-q * s[whole]).sum())]
    for v in np.flatnonzero(~whole).tolist():
        tv, sv = int(t[v]), int(s[v])
        pmf = fftconvolve(binom.pmf(np.arange(tv + 1), tv, p), binom.pmf(np.arange(sv - tv + 1), sv - tv, q))
        pmf = np.clip(pmf, 0.0, None)
        total.append(float(np.dot(pmf / pmf.sum(), g(alpha[v] * (np.arange(pmf.size) - q * sv)))))
    return math.fsum(total)


def edge_orient_variance(oriented: Graph, epsilon_rr: float, epsilon_count: float,
                         bounds: ArrayLike) -> float:
    r"""Exact variance of :math:`\hat T` given the order (``oriented``: relabelled by
    :func:`orient_relabel`) and the bounds :math:`D_v`.

    .. math:: \operatorname{Var}\hat T = \frac{pq\sum_{j<k} \tilde c_{jk}^2
              + \sum_v E[g(\alpha_v w_v)] + \sum_v \sigma^2(\Delta_v)}{(p-q)^2}

    with :math:`\tilde c_{jk} = \sum_{v:\, j,k \in O_v} \alpha_v` (the sources of the pair, each
    weighted by its scale factor; the plain count when no node is scaled),
    :math:`g(x) = \{x\}(1-\{x\})` the variance of randomized rounding at x
    (:func:`_rounding_terms`: a constant per unscaled node), :math:`\Delta_v` from
    :func:`count_sensitivity` and :math:`\sigma^2(\Delta)` the variance of DLap(e^{-ε₂/Δ}): the
    bits are independent with variance pq whatever the true bit; the rounding (its conditional
    mean is its input) and the noises are independent of them and of each other. The mean is
    :func:`edge_orient_mean`.
    """
    w, d, alpha = _given_order(oriented, bounds)
    p, q = keep_probability(epsilon_rr), flip_probability(epsilon_rr)
    pn = np.exp(-check_epsilon(epsilon_count) / count_sensitivity(d, p))
    noise = math.fsum((2.0 * pn / (1.0 - pn) ** 2).tolist())  # Var DLap(p) = 2p / (1 - p)^2
    c = np.bincount(w.pair, weights=alpha[w.node], minlength=w.pairs.size)
    var = p * q * math.fsum((c * c).tolist()) + _rounding_terms(w, alpha, p, q) + noise
    return var / (p - q) ** 2


# ---------------------------------------------------------------------------- reference


def _pair_keys(n: int, j: NDArray[np.int64], k: NDArray[np.int64]) -> NDArray[np.int64]:
    lo, hi = np.minimum(j, k), np.maximum(j, k)
    return lo * n + hi


def reference_edge_orient(graph: Graph, epsilon_paper: float, *, psi: float = 0.5, rng: Any = None,
                          parts: bool = False) -> Any:
    """One run of EdgeOrientΔ as the authors' code runs it (module docstring), at ε_paper.

    ``parts``: ``(estimate, signal, noise variance)`` instead, the signal without the Laplace
    noise and that noise's variance 2 n scale^2 given the noisy maximum (as
    :class:`EdgeOrientTrial`'s).
    """
    eps = check_epsilon(epsilon_paper)
    gen = check_rng(rng)
    n = graph.n_nodes
    e4 = eps / 4.0
    # k-CoreD(eps/4): a node spends (eps/4)/2, reference_kcore takes that per-node budget
    levels = reference_kcore(graph, e4 / 2.0, psi=psi, rng=gen).levels
    ptr = np.asarray(graph.indptr, dtype=np.int64)
    nbr = np.asarray(graph.indices, dtype=np.int64)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))

    def out_mask() -> NDArray[np.bool_]:  # higher level, or the same level and a fresh fair coin
        lv_s, lv_d = levels[src], levels[nbr]
        return (lv_d > lv_s) | ((lv_d == lv_s) & (gen.random(src.size) <= 0.5))

    out_deg = np.bincount(src[out_mask()], minlength=n)
    noisy_max = float(np.max(out_deg + dlap_noise(gen, e4, n), initial=0))
    keep = out_mask()  # the counting round flips its own coins
    # each node's out-list sorted by id (CSR rows are), truncated to its first min(d~max, d+_v)
    rank = np.cumsum(keep) - 1
    first = np.concatenate([[0], np.cumsum(np.bincount(src[keep], minlength=n))])[:-1]
    pos_in_row = rank - first[src]
    cut = int(math.floor(min(max(noisy_max, 0.0), float(n))))
    sel = keep & (pos_in_row < cut)
    lists_src, lists_dst = src[sel], nbr[sel]
    # every pair of each truncated list, as the key lo * n + hi, sorted in place: a distinct pair's
    # flip is drawn once, in key order, and its term counts once per list holding it
    ptr2 = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(lists_src, minlength=n), out=ptr2[1:])
    del lists_src
    lens = np.diff(ptr2)
    keys = np.empty(int((lens * (lens - 1) // 2).sum()), dtype=np.int64)
    done = 0
    for _, _, j, k in row_pair_blocks(ptr2, lists_dst):
        keys[done:done + j.size] = _pair_keys(n, j, k)
        done += j.size
    del lists_dst
    keys.sort()
    edges = graph.edges()
    edge_keys = np.sort(_pair_keys(n, edges[:, 0], edges[:, 1]))
    del edges
    sums = []
    for pos, end in _whole_key_blocks(keys, 0):
        uniq, count = _groups(keys[pos:end])
        flip = gen.random(uniq.size) < 1.0 / (math.exp(e4) + 1.0)
        x = (_members(uniq, edge_keys) ^ flip).astype(np.float64)
        term = (x * (math.exp(e4) + 1.0) - 1.0) / (math.exp(e4) - 1.0)
        sums.append(float(np.dot(count, term)))
    total = math.fsum(sums)
    scale = max(noisy_max, 0.0) / (e4 / 2.0)  # Laplace at (eps/4)/2 with sensitivity d~max (the code)
    noise = gen.laplace(0.0, scale, n) if scale > 0 else np.zeros(n)
    value = total + math.fsum(noise.tolist())
    return (value, total, 2.0 * n * scale**2) if parts else value

