r"""``arr-triangles``: communication-efficient two-round triangle counting (ARR, double clipping).

After Imola, Murakami, Chaudhuri (USENIX Security 2022), "ARROneNS" with double clipping, with
our second round (an integer released with the discrete Laplace mechanism, randomized rounding,
a proven per-node sensitivity).

================ ===============================================================================
round            node v (``d^-_v`` lower degree: neighbours of smaller index)
================ ===============================================================================
``degree-bound`` (clipping only) releases :math:`\tilde d_v = d^-_v + \mathrm{DLap}(e^{-\varepsilon_0})`;
                 its bound is :math:`D_v = \max(\tilde d_v + \alpha, 1)` (public)
``arr``          asymmetric randomized response on the bits :math:`a_{vj}`, j < v: RR at
                 :math:`\varepsilon_1`, then every reported 1 is kept with probability
                 :math:`\mu` (sampling): :math:`P[b = 1 \mid a = 1] = \mu p`,
                 :math:`P[b = 1 \mid a = 0] = \mu q`
``local-count``  v keeps a uniform :math:`D_v`-subset :math:`N_v` of its lower neighbours (edge
                 clipping), counts the noisy edges among them clipped at :math:`\kappa_v` per
                 neighbour (noisy-triangle clipping, :func:`clipped_triangle_count`), and
                 releases :math:`\lfloor f_v - \mu q\binom{|N_v|}2 + U\rfloor + \mathrm{DLap}`
                 at sensitivity :math:`\Delta_v = \max(\min(\kappa_v, D_v - 1), 1)` (and at
                 least :math:`\lceil \mu q (D_v - 1)\rceil`, which does not bind in practice:
                 :func:`arr_sensitivity`; proof: :func:`arr_count_release`)
curator          :math:`\hat T = \sum_v r_v / (\mu (p - q))`
================ ===============================================================================

Here :math:`p = e^{\varepsilon_1}/(1+e^{\varepsilon_1})`, :math:`q = 1 - p`, and
:math:`\kappa_v = \kappa(D_v)` is the smallest integer with
:math:`P[\mathrm{Bin}(D_v - 1, \mu p) > \kappa_v] \le \beta` (:func:`triangle_clip_bound`): a
neighbour's number of noisy edges into :math:`N_v` is a sum of at most :math:`D_v - 1`
independent bits of mean at most :math:`\mu p`, so it exceeds :math:`\kappa_v` with
probability at most β. The default margin α is the smallest with
:math:`P[\mathrm{DLap} < -\alpha] \le \beta` (:func:`degree_margin`).

Without clipping (``clipping=False``) the bound is public, D = the true maximum lower degree,
nothing is clipped and the sensitivity is D - 1: with :math:`\mu = 1` this is
``two-round-triangles-dlap`` exactly (same budget split, same law).

Differences from the paper, each for a proof: DLap and randomized rounding instead of Laplace
noise (an integer release, exactly unbiased where nothing clips); the exact binomial tail for κ
instead of a Chernoff bound; the noisy triangles clipped through a maximum flow (a κ-Lipschitz
extension of the count, :func:`clipped_triangle_count`) instead of deleting surplus triangles
neighbour by neighbour (a new neighbour raises the counts of all the neighbours it is noisily
joined to, so a per-neighbour truncation is not κ-Lipschitz in general); the lower degree
(not the degree) bounds the lower list, as in ``two-round-triangles-dlap``.

Communication: a node downloads the ARR graph (the curator's noisy lower pairs), about
:math:`\mu` times the RR graph of the unsampled protocol: the point of sampling.

Every function takes the true graph (an ldpgraph :class:`~ldpgraph.graph.Graph`): the
simulation is what the nodes would compute from their own neighbour lists.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import check_epsilon, check_nonnegative_int, check_rng
from ...graph.core import Graph
from ...mechanisms import DiscreteLaplace
from ..randomized_response import DEFAULT_MAX_BYTES, flip_probability, keep_probability
from .kernels import (
    LowerWedges,
    WedgePatterns,
    _projected_lower,
    lower_wedges,
    streamed_wedge_bits,
    wedge_memory_check,
    wedge_patterns,
)

__all__ = [
    "DEFAULT_BETA",
    "DEFAULT_MU",
    "arr_probabilities",
    "arr_bits",
    "degree_margin",
    "triangle_clip_bound",
    "arr_sensitivity",
    "clipped_triangle_count",
    "arr_count_release",
    "arr_moments",
    "arr_nonbinding_variance",
    "arr_clipping_bias_bound",
    "arr_memory_check",
    "simulate_arr",
    "simulate_arr_scaled",
    "ARR_BYTES_PER_WEDGE",
]

#: Default sampling probability of the ARR round (the download is about mu times the RR graph).
DEFAULT_MU = 0.25
#: Default clipping failure probability (per node for the degree, per neighbour for kappa).
#: Measured on Facebook and Email-Enron (mu = 0.25, scripts/bench_arr.py): 1e-3 costs a bias
#: below 1e-3 of the count and has 1.1-2x less RMSE than 1e-6 (smaller alpha and kappa).
DEFAULT_BETA = 1e-3

#: bytes held per lower wedge by a trial (wedge arrays, masks and temporaries)
ARR_BYTES_PER_WEDGE = 72


# ============================================================================ round 1: ARR


def _check_mu(mu: Any) -> float:
    try:
        m = float(mu)
    except (TypeError, ValueError):
        raise TypeError(f"mu must be a real number in (0, 1], got {type(mu).__name__}") from None
    if not 0.0 < m <= 1.0:
        raise ValueError(f"mu must be in (0, 1], got {mu!r}")
    return m


def _check_beta(beta: Any) -> float:
    try:
        b = float(beta)
    except (TypeError, ValueError):
        raise TypeError(f"beta must be a real number in (0, 1), got {type(beta).__name__}") from None
    if not 0.0 < b < 1.0:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}")
    return b


def arr_probabilities(epsilon1: float, mu: float) -> tuple[float, float]:
    r"""``(mu p, mu q)``: probabilities that ARR reports 1 for an edge and for a non-edge.

    Notes
    -----
    **Privacy.** ARR is RR at :math:`\varepsilon_1` followed by a data-independent thinning of
    the reported 1s, a post-processing, so it is :math:`\varepsilon_1`-DP per bit (directly:
    :math:`\mu p / \mu q = e^{\varepsilon_1}` and :math:`(1-\mu q)/(1-\mu p) \le p/q`). A node's
    bits are independent and one edge changes one bit of one node: the release is
    :math:`\varepsilon_1`-edge-LDP. :math:`E[b] = \mu q + \mu(p - q) a`, so
    :math:`(b - \mu q)/(\mu(p-q))` is unbiased for the bit a.

    Examples
    --------
    >>> [round(x, 6) for x in arr_probabilities(1.0, 0.5)]
    [0.36553, 0.13447]
    """
    eps = check_epsilon(epsilon1, "epsilon1")
    m = _check_mu(mu)
    return m * keep_probability(eps), m * flip_probability(eps)


def arr_bits(
    bits: ArrayLike, epsilon1: float, mu: float, *, size: int = 1, rng: Any = None
) -> NDArray[np.int64]:
    """Round 1 at one node, ``size`` runs: its ARR reports of the true lower bits ``bits``.

    Returns an int64 array of shape ``(size, len(bits))``.

    Examples
    --------
    >>> arr_bits([1, 0, 1], 1.0, 0.5, size=2, rng=0).shape
    (2, 3)
    """
    b = np.asarray(bits)
    if b.ndim != 1 or not np.isin(b, (0, 1)).all():
        raise ValueError(f"bits must be a 1-D array of 0/1, got {np.asarray(bits).tolist()!r}")
    pe, pn = arr_probabilities(epsilon1, mu)
    size = check_nonnegative_int(size, "size", minimum=1)
    gen = check_rng(rng)
    return (gen.random((size, b.size)) < np.where(b == 1, pe, pn)).astype(np.int64)


# ============================================================================ the clipping bounds


def degree_margin(epsilon0: float, beta: float = DEFAULT_BETA) -> int:
    r"""Smallest integer α >= 0 with :math:`P[\eta < -\alpha] \le \beta`, η ~ DLap(e^{-ε0}).

    Notes
    -----
    :math:`P[\eta \le -k] = p_0^k/(1+p_0)` for k >= 1, :math:`p_0 = e^{-\varepsilon_0}`. With
    :math:`D_v = \tilde d_v + \alpha`, a node's lower list is clipped (projected) with
    probability :math:`P[\eta < -\alpha] \le \beta`.

    Examples
    --------
    >>> degree_margin(0.1), degree_margin(0.1, 1e-6)
    (62, 131)
    """
    e0 = check_epsilon(epsilon0, "epsilon0")
    b = _check_beta(beta)
    p0 = math.exp(-e0)
    a = max(math.ceil(math.log(b * (1.0 + p0)) / math.log(p0)) - 1, 0)
    while a > 0 and p0**a / (1.0 + p0) <= b:  # float safety: smallest such a
        a -= 1
    while p0 ** (a + 1) / (1.0 + p0) > b:
        a += 1
    return a


def triangle_clip_bound(bound: ArrayLike, mu_p: float, beta: float = DEFAULT_BETA) -> NDArray[np.int64]:
    r""":math:`\kappa(D)`: the smallest integer with :math:`P[\mathrm{Bin}(D-1, \mu p) > \kappa] \le \beta`.

    Vectorized over the bounds D (>= 1).

    Notes
    -----
    Given the kept lower list :math:`N_v` (:math:`|N_v| \le D`), neighbour x has
    :math:`c_x = \sum_{y \in N_v \setminus x} b_{xy}` noisy edges into it, independent bits of
    mean :math:`\mu p` (edges) or :math:`\mu q` (non-edges), so :math:`c_x` is stochastically
    below :math:`\mathrm{Bin}(D-1, \mu p)` and :math:`P[c_x > \kappa(D)] \le \beta`.
    (Imola et al. use a Chernoff bound; the exact binomial tail is tighter.)

    Examples
    --------
    >>> triangle_clip_bound([1, 2, 100, 1000], 0.2).tolist()
    [0, 1, 33, 240]
    """
    from scipy.stats import binom  # deferred: slow to import

    d = np.asarray(bound, dtype=np.int64)
    if d.size and d.min() < 1:
        raise ValueError(f"bound must be >= 1, got {int(d.min())}")
    mp = float(mu_p)
    if not 0.0 < mp <= 1.0:
        raise ValueError(f"mu_p must be in (0, 1], got {mu_p!r}")
    b = _check_beta(beta)
    uniq, inv = np.unique(d, return_inverse=True)
    trials = uniq - 1
    k = np.asarray(binom.isf(b, trials, mp), dtype=np.float64)
    k = np.where(np.isfinite(k), k, trials).astype(np.int64)
    k = np.clip(k, 0, trials)
    # exact smallest k: step down while sf(k - 1) <= beta, up while sf(k) > beta
    for _ in range(4):
        down = (k > 0) & (binom.sf(k - 1, trials, mp) <= b)
        up = (k < trials) & (binom.sf(k, trials, mp) > b)
        if not (down.any() or up.any()):
            break
        k = k - down + up
    return k[inv].reshape(d.shape)


def arr_sensitivity(bound: ArrayLike, kappa: ArrayLike | None, mu_q: float = 0.0) -> NDArray[np.int64]:
    r"""Sensitivity of the rounded round-2 count: :math:`\max(\min(\kappa, D-1), \lceil\mu q(D-1)\rceil, 1)`.

    ``kappa=None``: no noisy-triangle clipping, :math:`\Delta = \max(D - 1, 1)`.

    Notes
    -----
    See :func:`arr_count_release` for the proof. The middle term never binds for the κ of
    :func:`triangle_clip_bound` when :math:`\mu(p-q)(D-1) \ge 1` (κ is at least the median
    of :math:`\mathrm{Bin}(D-1, \mu p)`, at least :math:`\lfloor \mu p (D-1) \rfloor`), but
    it is kept so that the bound holds for every κ. (It is rounded up with a relative margin
    of 1e-12: a float product below the exact value cannot lower it.)

    Examples
    --------
    >>> arr_sensitivity([1, 5, 50], [0, 2, 60], 0.1).tolist()
    [1, 2, 49]
    >>> arr_sensitivity([50], [2], 0.2).tolist()  # ceil(0.2 * 49) = 10
    [10]
    """
    d = np.asarray(bound, dtype=np.int64)
    top = d - 1
    if kappa is not None:
        top = np.minimum(np.asarray(kappa, dtype=np.int64), top)
    mq = float(mu_q)
    if not 0.0 <= mq < 1.0:
        raise ValueError(f"mu_q must be in [0, 1), got {mu_q!r}")
    down = np.ceil(mq * (d - 1) * (1.0 + 1e-12)).astype(np.int64)
    return np.maximum(np.maximum(top, down), 1)


# ============================================================================ round 2


def clipped_triangle_count(n_vertices: int, u: ArrayLike, v: ArrayLike, kappa: int | None) -> float:
    r"""Noisy-triangle count of a node clipped at κ per neighbour: a κ-Lipschitz extension.

    Parameters
    ----------
    n_vertices : int
        Number of kept lower neighbours (the vertices of the node's noisy neighbourhood H).
    u, v : array_like of int
        The noisy edges of H (local vertex ids in ``[0, n_vertices)``, no repeats): one per
        noisy triangle of the node.
    kappa : int or None
        The clipping bound; None: no clipping (the number of edges).

    Returns
    -------
    float
        :math:`f_\kappa(H) = \max\{\sum_e w_e : 0 \le w_e \le 1,\ \sum_{e \ni x} w_e \le
        \kappa\ \forall x\}` (a half-integer).

    Notes
    -----
    **Equals the count when clipping does not bind:** if every vertex has at most κ noisy
    edges, :math:`w \equiv 1` is feasible and :math:`f_\kappa(H) = |E(H)|`.

    **Node sensitivity κ.** Adding a vertex l (a new lower neighbour) with its edges to H:
    (a) the old optimum, with weight 0 on the new edges, stays feasible, so f does not
    decrease; (b) the new optimum restricted to the old edges is feasible for H and loses at
    most :math:`\sum_{e \ni l} w_e \le \min(\kappa, c_l)`, so f grows by at most
    :math:`\min(\kappa, \deg_H l)`. Hence :math:`0 \le f_\kappa(H + l) - f_\kappa(H) \le \kappa`.
    (Truncating each vertex's count instead is not Lipschitz: a new vertex can raise the
    counts of all its neighbours.)

    **Computed exactly** as half the maximum flow of the bipartite double cover (source ->
    :math:`x_L` capacity κ, :math:`x_L \to y_R` and :math:`y_L \to x_R` capacity 1 per edge xy,
    :math:`x_R` -> sink capacity κ): a flow gives :math:`w_{xy} = (f_{x_L y_R} + f_{y_L x_R})/2`,
    and a feasible w gives a flow of twice its value. Integer capacities: no LP tolerance.

    **Bias.** Deleting :math:`(c_x - \kappa)_+` edges at every vertex leaves a feasible
    integral solution, so :math:`|E(H)| - f_\kappa(H) \le \sum_x (c_x - \kappa)_+`.

    Examples
    --------
    >>> clipped_triangle_count(4, [0, 0, 0], [1, 2, 3], 1)  # a star with 3 leaves, kappa = 1
    1.0
    >>> clipped_triangle_count(3, [0, 1, 0], [1, 2, 2], 1)  # a triangle: w = 1/2 on each edge
    1.5
    >>> clipped_triangle_count(3, [0, 1, 0], [1, 2, 2], None)
    3.0
    """
    n = check_nonnegative_int(n_vertices, "n_vertices")
    a = np.asarray(u, dtype=np.int64).ravel()
    b = np.asarray(v, dtype=np.int64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"u and v must have the same length, got {a.size} and {b.size}")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n or np.any(a == b)):
        raise ValueError(f"edges must join distinct vertices in [0, {n}), got u={a.tolist()}, v={b.tolist()}")
    if kappa is None:
        return float(a.size)
    k = check_nonnegative_int(kappa, "kappa")
    deg = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
    if a.size == 0 or deg.max() <= k:
        return float(a.size)
    if k == 0:
        return 0.0
    return _flow_half(n, a, b, k) / 2.0


def _flow_half(n: int, a: NDArray[np.int64], b: NDArray[np.int64], k: int) -> int:
    """Maximum flow of the bipartite double cover of the graph (a, b) with vertex capacities k."""
    import scipy.sparse as sp  # deferred: slow to import
    from scipy.sparse.csgraph import maximum_flow

    src, sink = 2 * n, 2 * n + 1
    left = np.arange(n, dtype=np.int64)
    rows = np.concatenate([np.full(n, src), a, b, n + left])
    cols = np.concatenate([left, n + b, n + a, np.full(n, sink)])
    caps = np.concatenate([np.full(n, k), np.ones(2 * a.size, dtype=np.int64), np.full(n, k)])
    graph = sp.csr_array((caps.astype(np.int32), (rows, cols)), shape=(2 * n + 2, 2 * n + 2))
    return int(maximum_flow(graph, src, sink).flow_value)


def arr_count_release(
    node: int,
    neighbours: ArrayLike,
    noisy_bit: Any,
    epsilon2: float,
    bound: int,
    mu_q: float,
    *,
    kappa: int | None = None,
    size: int = 1,
    rng: Any = None,
) -> NDArray[np.int64]:
    r"""Round 2 of ``arr-triangles`` at one node, ``size`` runs: an integer, eps2-edge-LDP.

    Parameters
    ----------
    node : int
        The node's index v.
    neighbours : array_like of int
        Its neighbour list (only the lower ones, < v, enter).
    noisy_bit : callable
        ``noisy_bit(j, k)``: the broadcast ARR bits of the pairs ``j < k`` (vectorized, 0/1).
    epsilon2 : float
        Budget of this round.
    bound : int
        D (>= 1), public: the node's noisy degree bound (or the public bound without clipping).
    mu_q : float
        :math:`\mu q`, the probability that ARR reports a non-edge.
    kappa : int or None
        The noisy-triangle clipping bound (:func:`triangle_clip_bound`); None: no clipping.

    Returns
    -------
    ndarray of int64, shape (size,)
        :math:`r_v = \lfloor f_\kappa(H_v) - \mu q \binom{L}{2} + U \rfloor + \eta`,
        :math:`U \sim U[0, 1)`, η ~ DLap at sensitivity
        :math:`\Delta = \max(\min(\kappa, D-1), \lceil \mu q (D-1)\rceil, 1)`
        (:func:`arr_sensitivity`), with :math:`N_v` a uniform random subset of at most D lower
        neighbours, L = :math:`|N_v|` and :math:`H_v` the ARR graph on :math:`N_v`.

    Notes
    -----
    **Unbiased without clipping.** :math:`E\lfloor x + U\rfloor = x`, E η = 0, and without
    clipping :math:`f = \sum_{j<k \in N_v} b_{jk}` has mean
    :math:`\mu q \binom L2 + \mu(p-q) T^-(N_v)`: the release has mean
    :math:`\mu(p - q)\,T^-(N_v)`.

    **Sensitivity (the proof).** Neighbouring lists differ in one lower neighbour l (an edge to
    a higher node changes nothing here; D and κ are fixed: they are public, a function of the
    round-0 release). Write :math:`w = f - \mu q \binom L2` and :math:`m = \min(\kappa, D-1)`
    (:math:`m = D - 1` without clipping). Couple the projections through one random order of
    the ids (keep the first D): either

    (i) the list without l has :math:`L \le D - 1` kept entries and l is added: f grows by
        :math:`\delta \in [0, \min(\kappa, L)]` (:func:`clipped_triangle_count`: node
        sensitivity κ, and at most L new edges) and :math:`\mu q\binom L2` by
        :math:`\mu q L`, so :math:`w' - w \in [-\mu q (D-1), m]`; or
    (ii) l takes the place of one l' (L = D on both sides, :math:`\binom L2` unchanged):
         :math:`f(N - l' + l) - f(N) = [f(N - l' + l) - f(N - l')] - [f(N) - f(N - l')]`, a
         difference of two numbers in [0, m]: in [-m, m]; or
    (iii) l is not kept: nothing changes.

    So :math:`|w - w'| \le \max(m, \mu q(D-1))` and, with a shared U,
    :math:`|\lfloor w + U\rfloor - \lfloor w' + U\rfloor| \le \lceil |w - w'| \rceil \le \Delta`
    (:func:`arr_sensitivity`, an integer), so for each fixed order and U the two releases are
    DLap laws shifted by at most Δ: ratio at most :math:`e^{\varepsilon_2}`; the releases are
    mixtures with the same weights over the order and U, which keeps the bound. With rounds 0
    and 1 the node is :math:`(\varepsilon_0 + \varepsilon_1 + \varepsilon_2)`-edge-LDP (sequential
    composition; round 2 reads other nodes' ARR bits, auxiliary input, and its own public D).

    Examples
    --------
    >>> rel = arr_count_release(3, [0, 1, 2], lambda j, k: np.ones(j.shape), 1.0, 3, 0.1,
    ...                         kappa=1, size=4, rng=0)
    >>> rel.dtype, rel.shape
    (dtype('int64'), (4,))
    """
    gen = check_rng(rng)
    d = check_nonnegative_int(bound, "bound", minimum=1)
    mq = float(mu_q)
    if not 0.0 <= mq < 1.0:
        raise ValueError(f"mu_q must be in [0, 1), got {mu_q!r}")
    kap = None if kappa is None else check_nonnegative_int(kappa, "kappa")
    kept, lower = _projected_lower(node, neighbours, d, size, gen, lower_only=True)
    w = np.zeros(kept.shape[0])
    if lower.size >= 2:
        ia, ib = np.triu_indices(lower.size, k=1)
        bits = np.asarray(noisy_bit(lower[ia], lower[ib]), dtype=bool)
        masks, inv = np.unique(kept, axis=0, return_inverse=True)
        vals = np.empty(masks.shape[0])
        for i, mask in enumerate(masks):
            local = np.cumsum(mask) - 1
            on = mask[ia] & mask[ib] & bits
            ell = int(mask.sum())
            f = clipped_triangle_count(ell, local[ia[on]], local[ib[on]], kap)
            vals[i] = f - mq * (ell * (ell - 1) / 2)
        w = vals[np.asarray(inv).ravel()]
    rounded = np.floor(w + gen.random(kept.shape[0])).astype(np.int64)
    sens = int(arr_sensitivity(d, kap, mq))
    return rounded + DiscreteLaplace(epsilon=epsilon2, sensitivity=sens).sample(kept.shape[0], rng=gen)


# ============================================================================ whole protocol


def arr_memory_check(graph: Graph, max_bytes: int | None) -> None:
    """Refuse (MemoryError) when a trial's lower wedges would not fit in ``max_bytes``.

    A trial holds :math:`\\sum_v \\binom{d^-_v}{2}` lower wedges (about 72 bytes each) and 64
    bytes per adjacency entry (:func:`~ldpgraph.protocols.triangles.kernels.wedge_memory_check`).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> arr_memory_check(from_edge_array([[0, 1], [1, 2], [0, 2]]), 10**6)
    >>> try:
    ...     arr_memory_check(from_edge_array([[0, 1], [1, 2], [0, 2]]), 10)
    ... except MemoryError as err:
    ...     print(str(err)[:65])
    arr-triangles on 3 nodes: its 1 lower wedges need about 456 bytes
    """
    wedge_memory_check(graph, max_bytes, method="arr-triangles", bytes_per_wedge=ARR_BYTES_PER_WEDGE)


def simulate_arr(
    graph: Graph,
    eps1: float,
    eps2: float,
    n_trials: int = 1,
    *,
    eps0: float | None = None,
    mu: float = DEFAULT_MU,
    beta: float = DEFAULT_BETA,
    alpha: int | None = None,
    bound: int | None = None,
    rng: Any = None,
    wedges: LowerWedges | None = None,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    return_loss: bool = False,
) -> NDArray[np.float64] | tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Estimates of ``n_trials`` runs of ``arr-triangles`` (vectorized per trial).

    Parameters
    ----------
    graph : Graph
    eps1, eps2 : float
        The budgets of the ARR round and of the local count, as the plan of
        :class:`~ldpgraph.protocols.triangles.arr_protocol.ARRTrianglesProtocol` gives them.
    eps0 : float, optional
        The degree bound's budget: double clipping (noisy degree bound per node, noisy
        triangles clipped at κ). None: no clipping, the public bound ``bound`` (default the true
        maximum lower degree; longer lower lists are projected to a uniform ``bound``-subset).
    mu : float
        ARR sampling probability, in (0, 1].
    beta : float
        Clipping failure probability (of the degree bound per node, of κ per neighbour).
    alpha : int, optional
        Margin added to the noisy lower degree; default :func:`degree_margin` (eps0, beta).
    wedges : LowerWedges, optional
        :func:`~ldpgraph.protocols.triangles.kernels.lower_wedges` of the graph, if already computed.
    max_bytes : int or None
        Memory limit of a trial (:func:`arr_memory_check`).
    return_loss : bool
        Also return, per trial, the clipping loss
        :math:`\ell = \sum_v [(t_v - \mu q\binom{d^-_v}2) - (f_v - \mu q\binom{L_v}2)] / (\mu(p-q))`
        (t the unclipped noisy count on the whole lower list, same bits): :math:`E\ell` is
        exactly the clipping bias :math:`T - E\hat T`, measured without the noise of the
        estimate (0 without clipping).

    Notes
    -----
    Round 1 is simulated only on the pairs that close a lower wedge: the releases depend on no
    other ARR bit, so this has exactly the law of the full protocol's estimate. The clipped
    count is computed by maximum flow only at nodes where some neighbour has more than κ noisy
    edges (probability at most β per neighbour); elsewhere it is the plain count.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> simulate_arr(g, 30.0, 30.0, 2, mu=1.0, rng=0).tolist()
    [1.0, 1.0]
    """
    g = _check_graph(graph)
    eps1, eps2 = check_epsilon(eps1), check_epsilon(eps2)
    clipping = eps0 is not None
    if clipping and bound is not None:
        raise ValueError("bound is the public bound without clipping: pass it or eps0, not both")
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    m_ = _check_mu(mu)
    b_ = _check_beta(beta)
    if wedges is None:
        arr_memory_check(g, max_bytes)
        w = lower_wedges(g)
    else:
        w = wedges
    gen = check_rng(rng)
    pe, pn = arr_probabilities(eps1, m_)
    n = g.n_nodes
    dl = w.lower_degrees
    prob = np.where(w.pair_is_edge, pe, pn)
    out = np.empty(n_trials)
    loss = np.zeros(n_trials)
    if not clipping:
        top = max(int(dl.max()) if n else 1, 1)
        d = top if bound is None else check_nonnegative_int(bound, "bound", minimum=1)
        kept = np.minimum(dl, d)
        s = kept * (kept - 1) / 2.0
        mech = DiscreteLaplace(epsilon=eps2, sensitivity=int(arr_sensitivity(d, None, pn)))
        for t in range(n_trials):
            keep = _edge_clipping(g, dl, np.full(n, d), gen) if d < top else None
            bits = gen.random(w.pairs.size) < prob
            alive = bits[w.pair] if keep is None else bits[w.pair] & keep[w.pos_j] & keep[w.pos_k]
            t_v = np.bincount(w.node, weights=alive, minlength=n)
            rel = np.floor(t_v - pn * s + gen.random(n)) + mech.sample(n, rng=gen)
            out[t] = math.fsum(rel) / (pe - pn)
        return (out, loss) if return_loss else out
    eps0 = check_epsilon(eps0)
    a_ = degree_margin(eps0, b_) if alpha is None else check_nonnegative_int(alpha, "alpha")
    row_of = np.repeat(np.arange(n, dtype=np.int64), g.degrees)
    starts = np.searchsorted(w.node, np.arange(n + 1))
    deg_mech = DiscreteLaplace(epsilon=eps0)
    for t in range(n_trials):
        bound = np.maximum(dl + deg_mech.sample(n, rng=gen) + a_, 1)
        kappa = triangle_clip_bound(bound, pe, b_)
        keep = _edge_clipping(g, dl, bound, gen)
        bits = gen.random(w.pairs.size) < prob
        tri = bits[w.pair]
        full = math.fsum(np.bincount(w.node[tri], minlength=n) - pn * (dl * (dl - 1) / 2.0))
        if keep is not None:
            tri &= keep[w.pos_j] & keep[w.pos_k]
        t_v = np.bincount(w.node[tri], minlength=n).astype(np.float64)
        c = np.bincount(np.concatenate([w.pos_j[tri], w.pos_k[tri]]), minlength=g.indices.size)
        over = np.flatnonzero(c > kappa[row_of])
        for v in np.unique(row_of[over]).tolist():
            sel = np.flatnonzero(tri[starts[v] : starts[v + 1]]) + starts[v]
            base = int(g.indptr[v])
            ell = int(dl[v])
            t_v[v] = clipped_triangle_count(ell, w.pos_j[sel] - base, w.pos_k[sel] - base, int(kappa[v]))
        kept = np.minimum(dl, bound)
        wv = t_v - pn * (kept * (kept - 1) / 2.0)
        rel = np.floor(wv + gen.random(n))
        sens = arr_sensitivity(bound, kappa, pn)
        uniq, inv = np.unique(sens, return_inverse=True)
        noise = np.empty(n, dtype=np.int64)
        order = np.argsort(inv, kind="stable")
        cuts = np.searchsorted(inv[order], np.arange(uniq.size + 1))
        for i, s_i in enumerate(uniq.tolist()):
            idx = order[cuts[i] : cuts[i + 1]]
            noise[idx] = DiscreteLaplace(epsilon=eps2, sensitivity=s_i).sample(idx.size, rng=gen)
        out[t] = math.fsum(rel + noise) / (pe - pn)
        loss[t] = (full - math.fsum(wv)) / (pe - pn)
    return (out, loss) if return_loss else out


def simulate_arr_scaled(
    graph: Graph,
    eps1: float,
    eps2: float,
    n_trials: int = 1,
    *,
    eps0: float | None = None,
    mu: float = DEFAULT_MU,
    beta: float = DEFAULT_BETA,
    alpha: int | None = None,
    bound: int | None = None,
    rng: Any = None,
    patterns: WedgePatterns | None = None,
    return_loss: bool = False,
) -> NDArray[np.float64] | tuple[NDArray[np.float64], NDArray[np.float64]]:
    r""":func:`simulate_arr` (same parameters and law) without the table of lower wedges.

    Notes
    -----
    **Without clipping and nothing projected** (the public bound at or above every lower list):
    :math:`\sum_v\lfloor t_v - \mu q s_v + U_v\rfloor = \sum_{j<k} c^+_{jk} b_{jk} + \sum_v
    \lfloor U_v - \mu q s_v\rfloor` (:math:`t_v` an integer), the bits independent
    (Bernoulli(μp) on edges, μq else): a sum of :math:`c\,\mathrm{Bin}(N, \cdot)` over the groups
    of the cached :class:`~ldpgraph.protocols.triangles.kernels.WedgePatterns`, as
    :func:`~ldpgraph.protocols.triangles.kernels.simulate_two_round_scaled`.

    **Otherwise** (double clipping, the default; or projected lists): the per-node bounds
    :math:`D_v`, :math:`\kappa_v` and projections are drawn as in :func:`simulate_arr`, then the lower
    wedges are streamed by blocks of centres with the ARR bit of each closing pair drawn once per
    pair and trial (:func:`~ldpgraph.protocols.triangles.kernels.streamed_wedge_bits`: shared by the
    wedges of every centre closing the pair, independent across pairs). A centre's clipping reads
    only its own wedges (the noisy triangles per kept neighbour), so each block computes its
    centres' counts -- by maximum flow where some neighbour exceeds :math:`\kappa_v` -- as
    :func:`simulate_arr` does for all centres at once. Memory: one block of wedges and O(n + m).
    """
    g = _check_graph(graph)
    eps1, eps2 = check_epsilon(eps1), check_epsilon(eps2)
    clipping = eps0 is not None
    if clipping and bound is not None:
        raise ValueError("bound is the public bound without clipping: pass it or eps0, not both")
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    m_ = _check_mu(mu)
    b_ = _check_beta(beta)
    pt = wedge_patterns(g) if patterns is None else patterns
    gen = check_rng(rng)
    pe, pn = arr_probabilities(eps1, m_)
    n = g.n_nodes
    dl = pt.lower_degrees
    out = np.empty(n_trials)
    loss = np.zeros(n_trials)
    if not clipping:
        top = max(int(dl.max()) if n else 1, 1)
        d = top if bound is None else check_nonnegative_int(bound, "bound", minimum=1)
        kept = np.minimum(dl, d)
        offset = -pn * (kept * (kept - 1) / 2.0)  # floor(t_v - mu q s_v + U) = t_v + floor(U - mu q s_v)
        group_p = np.where(pt.group_edge, pe, pn)
        mech = DiscreteLaplace(epsilon=eps2, sensitivity=int(arr_sensitivity(d, None, pn)))
        for t in range(n_trials):
            if d >= top:
                t_sum = float(np.dot(pt.group_c, gen.binomial(pt.group_size, group_p)))
            else:
                keep = _edge_clipping(g, dl, np.full(n, d), gen)
                t_sum = 0.0
                for _, _, _, pj, pk, bit in streamed_wedge_bits(g, pt, pe, pn, gen):
                    t_sum += float(np.count_nonzero(bit & keep[pj] & keep[pk]))
            parts = [t_sum, float(np.floor(gen.random(n) + offset).sum()),
                     float(mech.sample(n, rng=gen).sum())]
            out[t] = math.fsum(parts) / (pe - pn)
        return (out, loss) if return_loss else out
    eps0 = check_epsilon(eps0)
    a_ = degree_margin(eps0, b_) if alpha is None else check_nonnegative_int(alpha, "alpha")
    deg_mech = DiscreteLaplace(epsilon=eps0)
    all_pairs = float(np.sum(dl * (dl - 1) / 2.0))
    for t in range(n_trials):
        bound_v = np.maximum(dl + deg_mech.sample(n, rng=gen) + a_, 1)
        kappa = triangle_clip_bound(bound_v, pe, b_)
        keep = _edge_clipping(g, dl, bound_v, gen)
        t_v = np.zeros(n)
        n_full = 0
        for v0, v1, node, pj, pk, bit in streamed_wedge_bits(g, pt, pe, pn, gen):
            n_full += int(np.count_nonzero(bit))
            tri = bit if keep is None else bit & keep[pj] & keep[pk]
            t_v[v0:v1] = np.bincount(node[tri] - v0, minlength=v1 - v0)
            p0, p1 = int(g.indptr[v0]), int(g.indptr[v1])
            c = np.bincount(np.concatenate([pj[tri], pk[tri]]) - p0, minlength=p1 - p0)
            row_of = np.repeat(np.arange(v0, v1, dtype=np.int64), g.degrees[v0:v1])
            over = np.flatnonzero(c > kappa[row_of])
            for v in np.unique(row_of[over]).tolist():
                a, b = np.searchsorted(node, [v, v + 1])
                sel = np.flatnonzero(tri[a:b]) + a
                base = int(g.indptr[v])
                t_v[v] = clipped_triangle_count(int(dl[v]), pj[sel] - base, pk[sel] - base, int(kappa[v]))
        kept = np.minimum(dl, bound_v)
        wv = t_v - pn * (kept * (kept - 1) / 2.0)
        rel = np.floor(wv + gen.random(n))
        out[t] = math.fsum(np.r_[rel, _sensitivity_noise(arr_sensitivity(bound_v, kappa, pn), eps2, gen)])
        out[t] /= pe - pn
        loss[t] = (n_full - pn * all_pairs - math.fsum(wv)) / (pe - pn)
    return (out, loss) if return_loss else out


def _sensitivity_noise(sens: NDArray[np.int64], eps2: float, gen: np.random.Generator) -> NDArray[np.int64]:
    """Per node, DLap at ``eps2`` and its sensitivity ``sens[v]`` (one sampler per distinct value)."""
    uniq, inv = np.unique(sens, return_inverse=True)
    noise = np.empty(sens.size, dtype=np.int64)
    order = np.argsort(inv, kind="stable")
    cuts = np.searchsorted(inv[order], np.arange(uniq.size + 1))
    for i, s_i in enumerate(uniq.tolist()):
        idx = order[cuts[i] : cuts[i + 1]]
        noise[idx] = DiscreteLaplace(epsilon=eps2, sensitivity=s_i).sample(idx.size, rng=gen)
    return noise


def _edge_clipping(
    g: Graph, dl: NDArray[np.int64], bound: NDArray[np.int64], gen: np.random.Generator
) -> NDArray[np.bool_] | None:
    """Mask over ``g.indices``: a uniform ``bound[v]``-subset of each over-long lower list (None: none)."""
    over = np.flatnonzero(dl > bound)
    if over.size == 0:
        return None
    keep = np.ones(g.indices.size, dtype=bool)
    lens = dl[over]
    rows = np.repeat(np.arange(over.size), lens)
    first = np.cumsum(lens) - lens
    # lower neighbours come first in each sorted row
    pos = np.repeat(g.indptr[:-1][over] - first, lens) + np.arange(int(lens.sum()))
    order = np.lexsort((gen.random(pos.size), rows))
    rank = np.arange(pos.size) - np.repeat(first, lens)
    keep[pos[order][rank >= np.repeat(bound[over], lens)]] = False
    return keep


def arr_moments(
    graph: Graph,
    eps1: float,
    eps2: float,
    *,
    mu: float = DEFAULT_MU,
    bound: int | None = None,
    wedges: LowerWedges | None = None,
) -> tuple[float, float]:
    r"""Exact mean and variance of the unclipped ``arr-triangles`` estimate (``clipping=False``, the
    public bound D = ``bound``, default the true maximum lower degree; ValueError below it, where
    lists are projected; budgets as :func:`simulate_arr`'s).

    Notes
    -----
    With the public bound D = the true maximum lower degree nothing is clipped, and
    :math:`\sum_v w_v = \sum_{j<k} c^+_{jk}(b_{jk} - \mu q)`, :math:`c^+_{jk}` the common
    neighbours above both. The bits are independent with variance :math:`\mu p(1-\mu p)` on
    edges and :math:`\mu q (1 - \mu q)` on non-edges (with :math:`\mu = 1` both are pq), so

    .. math:: E\hat T = T,\qquad \operatorname{Var}\hat T = \frac{\sum_{j<k}(c^+_{jk})^2\,
              \mu\pi_{jk}(1 - \mu\pi_{jk}) + \sum_v f_v(1 - f_v) + n\sigma^2_{D-1}}
              {\mu^2 (p-q)^2},

    :math:`\pi_{jk} = p` or q, :math:`f_v = \{-\mu q \binom{d^-_v}2\}` the rounding's
    fractional part (variance :math:`f_v(1-f_v)`), :math:`\sigma^2_{D-1}` the DLap variance
    at :math:`\varepsilon_2` and sensitivity D - 1; the rounding and the noises are independent
    of the bits and of each other (law of total variance). With :math:`\mu = 1` this is
    :func:`~ldpgraph.protocols.triangles.kernels.two_round_moments` with a public bound.

    **With clipping** the estimate is biased downward (both clippings only remove noisy
    triangles); :func:`arr_clipping_bias_bound` bounds the bias.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> mean, var = arr_moments(g, 0.5, 0.5, mu=0.5)
    >>> mean, var > 0
    (1.0, True)
    """
    g = _check_graph(graph)
    eps1, eps2 = check_epsilon(eps1), check_epsilon(eps2)
    m_ = _check_mu(mu)
    w = lower_wedges(g) if wedges is None else wedges
    pe, pn = arr_probabilities(eps1, m_)
    n = g.n_nodes
    bits_var, rounding = _bits_and_rounding_variance(w, pe, pn)
    top = max(int(w.lower_degrees.max()) if n else 1, 1)
    bound = top if bound is None else check_nonnegative_int(bound, "bound", minimum=1)
    if bound < top:
        raise ValueError(f"no closed form with projected lists: bound {bound} < the maximum lower "
                         f"degree {top}")
    sigma2 = DiscreteLaplace(epsilon=eps2, sensitivity=int(arr_sensitivity(bound, None, pn))).variance
    total_t = float(np.count_nonzero(w.pair_is_edge[w.pair]))
    return total_t, (bits_var + rounding + n * sigma2) / (pe - pn) ** 2


def arr_nonbinding_variance(
    graph: Graph,
    eps0: float,
    eps1: float,
    eps2: float,
    *,
    mu: float = DEFAULT_MU,
    beta: float = DEFAULT_BETA,
    alpha: int | None = None,
    wedges: LowerWedges | None = None,
) -> float:
    r"""Exact variance of the clipped estimate on the event that no clipping binds.

    More precisely: of the protocol in which the private bounds :math:`D_v` (and
    :math:`\kappa_v`) are drawn and set each node's noise, but never clip. The clipped
    protocol differs from it only where a list is projected (probability
    :math:`P[\eta < -\alpha]` per node) or a neighbour has more than :math:`\kappa_v` noisy
    edges (at most β per neighbour), and its mean is T minus the clipping loss
    (:func:`arr_clipping_bias_bound`). A reference for the Monte-Carlo variance.

    Notes
    -----
    As in :func:`arr_moments`, with the noise term :math:`\sum_v E\,\sigma^2(\Delta(D_v))`:
    :math:`D_v = \max(d^-_v + \eta_v + \alpha, 1)`, :math:`\Delta` from
    :func:`arr_sensitivity` with :math:`\kappa(D_v)`, the law of :math:`\eta_v` summed where its
    mass exceeds 1e-17 (independent of the bits and the rounding, so the terms add).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> arr_nonbinding_variance(g, 0.1, 0.45, 0.45) > arr_nonbinding_variance(g, 0.2, 0.9, 0.9)
    True
    """
    g = _check_graph(graph)
    eps0, eps1, eps2 = check_epsilon(eps0), check_epsilon(eps1), check_epsilon(eps2)
    m_ = _check_mu(mu)
    b_ = _check_beta(beta)
    w = lower_wedges(g) if wedges is None else wedges
    pe, pn = arr_probabilities(eps1, m_)
    a_ = degree_margin(eps0, b_) if alpha is None else check_nonnegative_int(alpha, "alpha")
    bits_var, rounding = _bits_and_rounding_variance(w, pe, pn)
    deg_mech = DiscreteLaplace(epsilon=eps0)
    k_max = int(math.ceil(math.log(1e-17) / -eps0)) + 1
    eta = np.arange(-k_max, k_max + 1, dtype=np.int64)
    pmf = deg_mech.pmf(eta)
    values, counts = np.unique(w.lower_degrees, return_counts=True)
    bounds = np.maximum(values[:, None] + eta[None, :] + a_, 1)
    sens = arr_sensitivity(bounds, triangle_clip_bound(bounds, pe, b_), pn)
    p2 = np.exp(-eps2 / sens)
    sigma2 = 2.0 * p2 / (1.0 - p2) ** 2
    noise = math.fsum((counts[:, None] * sigma2 * pmf[None, :]).ravel())
    return (bits_var + rounding + noise) / (pe - pn) ** 2


def _bits_and_rounding_variance(w: LowerWedges, pe: float, pn: float) -> tuple[float, float]:
    """Variance of the sum of the w_v over the ARR bits, and of the rounding (no clipping)."""
    c_plus = np.bincount(w.pair, minlength=w.pairs.size).astype(np.float64)
    var_bit = np.where(w.pair_is_edge, pe * (1.0 - pe), pn * (1.0 - pn))
    dl = w.lower_degrees.astype(np.float64)
    x = -pn * (dl * (dl - 1) / 2)
    f = x - np.floor(x)
    return math.fsum(c_plus * c_plus * var_bit), math.fsum(f * (1 - f))


def arr_clipping_bias_bound(
    graph: Graph,
    eps0: float,
    eps1: float,
    *,
    mu: float = DEFAULT_MU,
    beta: float = DEFAULT_BETA,
    alpha: int | None = None,
    wedges: LowerWedges | None = None,
) -> tuple[float, float]:
    r"""Bounds on the downward bias of the clipped estimate: ``(edge part, triangle part)``.

    :math:`T - (\text{edge} + \text{triangle}) \le E\hat T \le T`.

    Notes
    -----
    Given the kept list N of node v, :math:`E[r_v \mid N] = \mu(p-q) T^-(N) - E[|E(H)| -
    f_\kappa(H)]`, and :math:`|E(H)| - f_\kappa(H) \ge 0`: the bias is downward.

    - **Edge clipping** (projection when :math:`D_v < d^-_v`, probability
      :math:`P[\eta < -\alpha] = p_0^{\alpha+1}/(1+p_0)`) loses at most :math:`T^-_v`
      triangles: edge part :math:`= P[\eta < -\alpha]\sum_v T^-_v`.
    - **Noisy-triangle clipping** loses at most :math:`\sum_{x \in N}(c_x - \kappa)_+`
      (:func:`clipped_triangle_count`); :math:`c_x` is stochastically below
      :math:`\mathrm{Bin}(L-1, \mu p)`, L = |N| <= min(d^-_v, D), and
      :math:`\kappa(D) \ge \kappa(L)` (κ grows with D), so the loss has mean at most
      :math:`e(L) = L\,E(\mathrm{Bin}(L-1,\mu p) - \kappa(L))_+`; the triangle part is
      :math:`\sum_v \max_{L \le d^-_v} e(L) / (\mu(p - q))`, computed exactly from the binomial law.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> [round(x, 6) for x in arr_clipping_bias_bound(g, 0.1, 0.45)]  # 1 triangle, P[projected] < 1e-3
    [0.000964, 0.0]
    """
    from scipy.stats import binom  # deferred: slow to import

    g = _check_graph(graph)
    eps0, eps1 = check_epsilon(eps0), check_epsilon(eps1)
    m_ = _check_mu(mu)
    b_ = _check_beta(beta)
    w = lower_wedges(g) if wedges is None else wedges
    pe, pn = arr_probabilities(eps1, m_)
    a_ = degree_margin(eps0, b_) if alpha is None else check_nonnegative_int(alpha, "alpha")
    p0 = math.exp(-eps0)
    total_t = float(np.count_nonzero(w.pair_is_edge[w.pair]))
    edge = total_t * p0 ** (a_ + 1) / (1.0 + p0)
    dl = w.lower_degrees
    top = int(dl.max()) if dl.size else 0
    e_l = np.zeros(top + 1)
    if top >= 2:
        ell = np.arange(2, top + 1)
        kap = triangle_clip_bound(ell, pe, b_)
        for i, (L, k) in enumerate(zip(ell.tolist(), kap.tolist(), strict=True)):
            j = np.arange(k + 1, L)
            e_l[i + 2] = L * float(np.dot(j - k, binom.pmf(j, L - 1, pe))) if j.size else 0.0
    e_max = np.maximum.accumulate(e_l)
    tri = math.fsum(e_max[dl]) / (pe - pn)
    return edge, tri


def _check_graph(graph: Any) -> Graph:
    if not isinstance(graph, Graph):
        raise TypeError(
            f"graph must be an ldpgraph Graph (arr-triangles needs the adjacency), got {type(graph).__name__}"
        )
    return graph
