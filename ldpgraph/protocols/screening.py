r"""Poisoning screening: where a truthful node's report lies, and the screen that applies it.

A malicious node can send any integer. Given public bounds — the number of nodes n (so a degree
is at most n - 1) or a public degree bound D — a truthful report y = x + eta has x in a known
range [0, top] and eta ~ DLap(p), p = exp(-epsilon / sensitivity). With t the exact
(1 - alpha) quantile of |eta| (:func:`noise_quantile`), a truthful report lies in the
**admissible range** [-t, top + t] except with probability at most alpha (default 1e-12).
Reports outside it are clipped to it or rejected (:func:`screen_reports`, :func:`screen_values`;
the curator from files does the same while streaming), and the result says how many.

How far one malicious node can then move an estimate is the protocol's one-node bound
(``Protocol.statistic_bound`` / ``one_node_bounds``), computed beside the estimator it bounds,
with its proof: :func:`ldpgraph.protocols.curator.influence_bound` (the degree statistics),
:func:`~ldpgraph.protocols.triangles.kernels.rr_triangles_influence_bound`,
:func:`~ldpgraph.protocols.triangles.kernels.dlap_triangles_influence_bound`,
:func:`~ldpgraph.protocols.triangles.kernels.dlap_round1_influence_bound`,
:func:`~ldpgraph.protocols.clustering.kernels.clustering_influence_bound` and
:func:`~ldpgraph.protocols.clustering.kernels.clustering_round1_influence_bound`.

**Triangle protocols** (the rows of :mod:`ldpgraph.protocols.deploy_triangles`). Their ranges
need no extra public input: n, D (the broadcast's bound), q = 1/(1+e^eps1) and the node ids
are public; a :class:`PublicBounds` only tightens them. t_s = :func:`noise_quantile` (eps_s,
sensitivity_s, alpha), C = C(D, 2), p = 1 - q, B the public degree bound (n - 1 without one):

=================== ========================================== ==========================================
row                 admissible range (but w.p. <= alpha)       one node's rows alone move the estimate by
=================== ========================================== ==========================================
rr_count, rr_edge   structural (0/1 bits: partners 0 <= j < v) rr-triangles: C(n-1, 2) p^2 / (p-q)^3
local_count (dlap)  [floor(-qC) - 1 - t, ceil(pC) + 1 + t]     triangles: (U - L) / (p - q), tight
local_count, degree [-C - t, C + t]; degree [-t, D + t]        avg_clustering: (max g - min g) / n over
(avg-clustering)    (projection: [-t, min(n-1, B) + t])        the box of the two rows, attained
lower_degree        node v: [-t, min(v, B) + t]                the private D: to at most
                                                               max(1, min(n-1, B) + t)
degree_bound        [-t, min(n-1, B) + t]                      avg-clustering's private D: to at
(avg-clustering)    (:func:`degree_row_range`, projection)     most max(2, min(n-1, B) + t)
=================== ========================================== ==========================================

g(d, r) = a_hat(d) r + b_hat(d) is the node-wise term of the clustering estimate. Proofs:
:func:`local_count_range` and the bound functions above. A larger D only widens the noise and
the local_count range (D is a bound, not an estimate). A malicious node's round-1 bits also
enter the other nodes' round-2 counts: in the two-round triangle protocol they move the
estimate by at most (D - 1)(n - 1)/(p - q) more (``dlap_round1_influence_bound``); in
avg-clustering by at most 2(D - 1)/n sum_u |a_hat(d_u)| at the released degrees
(``clustering_round1_influence_bound``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .._validation import check_epsilon, check_nonnegative_int, check_sensitivity
from .randomizer import NodeReports, ReleasedValues

__all__ = [
    "DEFAULT_ALPHA",
    "PublicBounds",
    "Screening",
    "noise_quantile",
    "noise_tail",
    "admissible_range",
    "screen_reports",
    "local_count_range",
    "degree_row_range",
    "lower_degree_range",
    "screen_values",
]

#: probability that a truthful report falls outside the admissible range
DEFAULT_ALPHA = 1e-12
_MP_DIGITS = 60


def noise_tail(t: int, epsilon: float, sensitivity: float = 1.0) -> float:
    """P[|eta| > t] = 2 p^(t+1) / (1 + p) for eta ~ DLap(exp(-epsilon/sensitivity)), t >= 0.

    >>> round(noise_tail(0, 1.0), 12)
    0.537882842739
    """
    t = check_nonnegative_int(t, "t")
    return float(_tail_mp(t, check_epsilon(epsilon), check_sensitivity(sensitivity)))


def _tail_mp(t: int, epsilon: float, sensitivity: float):
    import mpmath

    with mpmath.workdps(_MP_DIGITS):
        lnp = -mpmath.mpf(epsilon) / mpmath.mpf(sensitivity)  # exact binary floats, high precision
        return 2 * mpmath.exp((t + 1) * lnp) / (1 + mpmath.exp(lnp))


def noise_quantile(epsilon: float, sensitivity: float = 1.0, alpha: float = DEFAULT_ALPHA) -> int:
    r"""The smallest integer t >= 0 with P[|eta| > t] <= alpha, eta ~ DLap(exp(-epsilon/sensitivity)).

    Parameters
    ----------
    epsilon, sensitivity : float
        The release's parameters; must be finite and > 0.
    alpha : float, default 1e-12
        Tail probability; must be in (0, 1).

    Notes
    -----
    P[|eta| > t] = 2 (1-p)/(1+p) sum_{k > t} p^k = 2 p^(t+1)/(1+p), so t is the smallest
    integer >= ln(alpha (1+p)/2) / ln p - 1. That candidate is computed at 60 significant
    digits (mpmath) and then certified: the tail at t is <= alpha and the tail at t - 1 is
    > alpha, both evaluated at 60 digits, far beyond the float rounding of any input. The
    quantile is exact for the exact binary values of ``epsilon``, ``sensitivity`` and ``alpha``.

    Examples
    --------
    >>> noise_quantile(1.0)
    28
    >>> noise_tail(28, 1.0) <= 1e-12 < noise_tail(27, 1.0)
    True
    """
    import mpmath

    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    if not (isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    with mpmath.workdps(_MP_DIGITS):
        lnp = -mpmath.mpf(epsilon) / mpmath.mpf(sensitivity)
        a = mpmath.mpf(alpha)
        x = mpmath.log(a * (1 + mpmath.exp(lnp)) / 2) / lnp - 1
        t = max(0, int(mpmath.ceil(x)))
        while _tail_mp(t, epsilon, sensitivity) > a:
            t += 1
        while t > 0 and _tail_mp(t - 1, epsilon, sensitivity) <= a:
            t -= 1
    return t


@dataclass(frozen=True)
class PublicBounds:
    """Public information bounding what a truthful node can hold.

    Attributes
    ----------
    n_nodes : int, optional
        The number of nodes: a degree is at most n - 1.
    degree_bound : int, optional
        A public bound on every degree (the tighter of the two is used).
    alpha : float
        A truthful report leaves its admissible range with probability at most alpha.
    """

    n_nodes: int | None = None
    degree_bound: int | None = None
    alpha: float = DEFAULT_ALPHA

    def __post_init__(self) -> None:
        if self.n_nodes is None and self.degree_bound is None:
            raise ValueError("PublicBounds needs n_nodes or degree_bound (a public bound on the degrees)")
        if self.n_nodes is not None:
            check_nonnegative_int(self.n_nodes, "n_nodes", minimum=1)
        if self.degree_bound is not None:
            check_nonnegative_int(self.degree_bound, "degree_bound")
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}")

    @property
    def max_degree(self) -> int:
        """The largest degree a truthful node can have."""
        bounds = [
            b
            for b in (self.degree_bound, None if self.n_nodes is None else self.n_nodes - 1)
            if b is not None
        ]
        return int(min(bounds))


def _truth_top(quantity: str, bounds: PublicBounds, d_max: int | None) -> int:
    top = bounds.max_degree
    if quantity == "degree":
        return top
    if quantity.startswith("kstar_") and quantity[6:].isdigit():
        k = int(quantity[6:])
        proj = top if d_max is None else min(top, d_max)
        return math.comb(proj, k)
    raise ValueError(f"unknown quantity {quantity!r}; expected 'degree' or 'kstar_<k>'")


def admissible_range(
    quantity: str, *, epsilon: float, sensitivity: float, bounds: PublicBounds, d_max: int | None = None
) -> tuple[int, int]:
    """[L, U] = [-t, top + t]: where a truthful report of ``quantity`` lies but with probability <= alpha.

    top is the largest true value (max degree, or C(min(max degree, d_max), k) for ``kstar_<k>``)
    and t = :func:`noise_quantile` (epsilon, sensitivity, alpha).

    >>> admissible_range("degree", epsilon=1.0, sensitivity=1.0, bounds=PublicBounds(n_nodes=100))
    (-28, 127)
    """
    if not isinstance(bounds, PublicBounds):
        raise TypeError(f"bounds must be PublicBounds, got {type(bounds).__name__}")
    t = noise_quantile(epsilon, sensitivity, bounds.alpha)
    return -t, _truth_top(quantity, bounds, d_max) + t


@dataclass(frozen=True)
class Screening:
    """What screening did to one released quantity.

    Attributes
    ----------
    quantity : str
    lo, hi : int
        The admissible range.
    mode : {"clip", "reject"}
    n_outside : int
        Reports found outside [lo, hi] (clipped into it, or rejected).
    """

    quantity: str
    lo: int
    hi: int
    mode: str
    n_outside: int


def screen_reports(
    reports: NodeReports,
    bounds: PublicBounds,
    *,
    mode: Literal["clip", "reject"] = "clip",
) -> tuple[NodeReports, dict[str, Screening]]:
    """Clip (or reject) every report outside its quantity's admissible range.

    ``reject`` drops the report from its quantity (so that quantity has fewer values; node ids
    in ``metadata`` are kept per quantity under ``"node_ids_by_quantity"``). Returns the new
    reports and one :class:`Screening` per quantity.

    Examples
    --------
    >>> from ldpgraph.protocols import ReleasedValues
    >>> rep = NodeReports({"degree": ReleasedValues("degree", np.array([3, 10**12]), 1.0, 1.0)})
    >>> clean, info = screen_reports(rep, PublicBounds(n_nodes=2))
    >>> clean.degrees.values.tolist(), info["degree"].n_outside
    ([3, 29], 1)
    """
    if not isinstance(reports, NodeReports):
        raise TypeError(f"reports must be NodeReports, got {type(reports).__name__}")
    if not isinstance(bounds, PublicBounds):
        raise TypeError(f"bounds must be PublicBounds, got {type(bounds).__name__}")
    if mode not in ("clip", "reject"):
        raise ValueError(f"mode must be 'clip' or 'reject', got {mode!r}")
    released = {}
    info = {}
    kept_ids = {}
    node_ids = reports.metadata.get("node_ids") if isinstance(reports.metadata, dict) else None
    for name, rel in reports.released.items():
        lo, hi = admissible_range(
            name, epsilon=rel.epsilon, sensitivity=rel.sensitivity, bounds=bounds, d_max=reports.d_max
        )
        v = rel.values
        outside = (v < lo) | (v > hi)
        n_out = int(np.count_nonzero(outside))
        if mode == "clip":
            new = np.clip(v, lo, hi)
            if node_ids is not None:
                kept_ids[name] = list(node_ids)
        else:
            new = v[~outside]
            if node_ids is not None:
                kept_ids[name] = [i for i, o in zip(node_ids, outside.tolist(), strict=True) if not o]
        released[name] = ReleasedValues(
            name=name, values=new, epsilon=rel.epsilon, sensitivity=rel.sensitivity
        )
        info[name] = Screening(quantity=name, lo=lo, hi=hi, mode=mode, n_outside=n_out)
    meta = dict(reports.metadata)
    if kept_ids:
        meta["node_ids_by_quantity"] = kept_ids
    return NodeReports(released=released, d_max=reports.d_max, metadata=meta), info


# ------------------------------------------------------------------------------ triangle protocols


def _pairs_bound(bound: int) -> int:
    return math.comb(check_nonnegative_int(bound, "bound", minimum=1), 2)


def local_count_range(
    *,
    averaged: bool,
    bound: int,
    epsilon_rr: float,
    epsilon: float,
    sensitivity: float,
    alpha: float = DEFAULT_ALPHA,
) -> tuple[int, int]:
    r"""[L, U]: where a truthful ``local_count`` row lies but with probability <= alpha.

    Parameters
    ----------
    averaged : bool
        The protocol's :attr:`TriangleWire.averaged <ldpgraph.protocols.deploy_triangles.TriangleWire>`:
        False for a summed local count (``two-round-triangles-dlap``), True for the signed pair
        count averaged with a degree (``avg-clustering``).
    bound : int
        D, the broadcast's bound (on the lower degree, or on the degree when averaged).
    epsilon_rr : float
        eps1 of round 1: q = 1/(1 + e^eps1).
    epsilon, sensitivity : float
        The ``local_count`` release's (eps2 and max(D-1, 1); or eps_t and
        :func:`~ldpgraph.protocols.clustering.kernels.count_sensitivity`).
    alpha : float, default 1e-12

    Notes
    -----
    Summed (``two-round-triangles-dlap``): node v keeps m <= D lower neighbours (projection), so
    :math:`w_v = \sum_{j<k \text{ kept}} (b_{jk} - q)` sums at most C = C(D, 2) terms, each
    :math:`-q` or :math:`1 - q = p`: :math:`-qC \le w_v \le pC`. The rounding
    :math:`\lfloor w_v + U\rfloor`, U in [0, 1), is :math:`\lfloor w_v\rfloor` or
    :math:`\lceil w_v\rceil`, so the pre-noise integer lies in
    :math:`[\lfloor -qC\rfloor, \lceil pC\rceil]`; one unit of margin on each side covers the
    node's floating-point evaluation of w (its errors are far below 1 for C < 2**50). The
    noise exceeds t in magnitude with probability <= alpha (:func:`noise_quantile`, exact), so
    a truthful row lies in :math:`[\lfloor -qC\rfloor - 1 - t, \lceil pC\rceil + 1 + t]` but with
    probability <= alpha.

    Averaged (``avg-clustering``): :math:`r_v = 2w_v - \binom{m}2` with :math:`0 \le w_v \le \binom m2`
    (an integer count of noisy edges among the m <= D kept neighbours' pairs), so
    :math:`|r_v| \le C` and the row lies in [-C - t, C + t] but with probability <= alpha.

    Examples
    --------
    >>> noise_quantile(1.0, 2.0), noise_quantile(1.0, 3.0)
    (55, 83)
    >>> local_count_range(averaged=True, bound=3, epsilon_rr=1.0, epsilon=1.0, sensitivity=2.0)
    (-58, 58)
    >>> local_count_range(averaged=False, bound=4, epsilon_rr=1.0, epsilon=1.0, sensitivity=3.0)
    (-86, 89)
    """
    from .randomized_response import flip_probability

    if not isinstance(averaged, (bool, np.bool_)):
        raise TypeError(f"averaged must be a bool (the protocol's TriangleWire.averaged), got {averaged!r}")
    c = _pairs_bound(bound)
    t = noise_quantile(epsilon, sensitivity, alpha)
    if averaged:
        return -c - t, c + t
    q = flip_probability(check_epsilon(epsilon_rr, "epsilon_rr"))
    return math.floor(-q * c) - 1 - t, math.ceil(c - q * c) + 1 + t


def degree_row_range(
    *,
    bound: int,
    n_nodes: int,
    projection: bool,
    epsilon: float,
    bounds: PublicBounds | None = None,
) -> tuple[int, int]:
    """[L, U] of the ``degree`` row of ``avg-clustering``: [-t, top + t].

    top = D without projection (a node of degree > D refuses, it sends no row), else the
    largest degree n - 1 (or the public bound of ``bounds``, when tighter); t at sensitivity 1.

    >>> degree_row_range(bound=5, n_nodes=100, projection=False, epsilon=1.0)
    (-28, 33)
    """
    alpha = DEFAULT_ALPHA if bounds is None else bounds.alpha
    top = check_nonnegative_int(n_nodes, "n_nodes", minimum=1) - 1
    if bounds is not None:
        top = min(top, bounds.max_degree)
    if not projection:
        top = min(top, check_nonnegative_int(bound, "bound", minimum=1))
    t = noise_quantile(epsilon, 1.0, alpha)
    return -t, top + t


def lower_degree_range(
    nodes: np.ndarray, *, epsilon: float, bounds: PublicBounds | None = None
) -> tuple[int, np.ndarray]:
    """Per row, [L, U_v] of the ``lower_degree`` row of node v: [-t, min(v, max degree) + t].

    Node v has at most v lower nodes (0..v-1): the range needs no public bound; ``bounds``
    tightens it. t at sensitivity 1.

    >>> lo, hi = lower_degree_range(np.array([0, 5, 90]), epsilon=1.0, bounds=PublicBounds(degree_bound=10))
    >>> lo, hi.tolist()
    (-28, [28, 33, 38])
    """
    alpha = DEFAULT_ALPHA if bounds is None else bounds.alpha
    t = noise_quantile(epsilon, 1.0, alpha)
    top = np.asarray(nodes, dtype=np.int64)
    if bounds is not None:
        top = np.minimum(top, bounds.max_degree)
    return -t, top + t


def screen_values(
    values: np.ndarray, lo: int | np.ndarray, hi: int | np.ndarray, mode: str, what: str
) -> tuple[np.ndarray, np.ndarray, int]:
    """(screened values, mask of kept rows, number outside [lo, hi]) for one quantity's values.

    ``mode`` "clip" (values moved into the range, all rows kept), "reject" (rows outside dropped
    from the mask) or "raise" (ValueError naming ``what`` and the count).

    >>> v, keep, k = screen_values(np.array([1, 99, -5]), 0, 10, "clip", "x")
    >>> v.tolist(), keep.tolist(), k
    ([1, 10, 0], [True, True, True], 2)
    """
    if mode not in ("clip", "reject", "raise"):
        raise ValueError(f"outliers must be 'clip', 'reject' or 'raise', got {mode!r}")
    v = np.asarray(values, dtype=np.int64)
    outside = (v < lo) | (v > hi)
    k = int(np.count_nonzero(outside))
    if k and mode == "raise":
        i = int(np.flatnonzero(outside)[0])
        lo_i = int(np.broadcast_to(lo, v.shape)[i])
        hi_i = int(np.broadcast_to(hi, v.shape)[i])
        raise ValueError(
            f"{k} {what} report(s) outside the admissible range (a truthful node sends them with "
            f"probability <= 1e-12), first: value {int(v[i])} at position {i}, range [{lo_i}, {hi_i}] "
            "(poisoning? pass outliers='clip' or 'reject')"
        )
    if mode == "clip":
        return np.clip(v, lo, hi), np.ones(v.shape, dtype=bool), k
    return v, ~outside if mode == "reject" else np.ones(v.shape, dtype=bool), k
