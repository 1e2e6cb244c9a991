r"""Empirical privacy audit of a node-side randomizer on neighbouring inputs.

A randomizer M is epsilon-LDP (pure, delta = 0) when, for neighbouring inputs x, x' and
*every* set S of outputs, P[M(x) in S] <= e^epsilon P[M(x') in S]. The audit draws many
outputs on x and on x', estimates both probabilities for a family of events S, and puts
Clopper--Pearson confidence bounds on them. If, for some event, even the lower confidence
bound on log(P[M(x) in S] / P[M(x') in S]) exceeds the claimed epsilon, the claim is refuted
at the chosen confidence. Passing an audit shows only that no violation was *detected*; it
is not a proof of privacy.

How to audit a new randomizer
-----------------------------
All that is needed is a callable ``randomize(x, size, rng) -> outputs`` returning ``size``
independent releases of one node holding ``x``, as an array of shape ``(size,)`` (one
released number) or ``(size, d)`` (a node releasing d numbers, e.g. a degree and a local
count under a budget split), drawn with the numpy Generator ``rng``. For a mechanism object
with a vectorized ``randomize(values, rng=...)`` method, :func:`as_randomizer` builds it; a
protocol whose node-side step is a function of the node's private data (LocalLapKStars: a
degree projected to d_max, then ``C(d, k) + Lap(C(d_max, k-1)/epsilon)``; a budget split
releasing ``(d + DLap, count + DLap)``) is wrapped in a small function of (x, size, rng)
that repeats the node's release ``size`` times. Then choose pairs of neighbouring private
inputs -- for edge-LDP, the data of one node with and without one incident edge, including
the extreme ones (degree at and above d_max for a projection; :func:`worst_neighbour_pairs`
lists them) -- and call :func:`audit_neighbours`.

What a run tests, and what it could have seen
---------------------------------------------
Three families of events are chosen on a pilot sample and tested on fresh samples: cells
(single values, or pilot-quantile intervals when there are many values), half-lines (and
orthants for vector outputs), and likelihood-ratio events -- unions of the pilot's cells whose
empirical ratio P_x / P_x' is most extreme in either direction -- which catch leaks that no
interval sees (e.g. an output parity that depends on the input). Integer outputs are
compared as exact integers (never binned through float64). Every result records the
families, the resolution (the smallest event probability at which even an infinite
likelihood ratio would have been detected) and the smallest excess over epsilon the run
could have detected on an event as large as its witness; it warns
(:class:`AuditPowerWarning`) when that excess exceeds the margin asked for.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ._validation import check_epsilon, check_nonnegative_int, check_rng

__all__ = [
    "AuditResult",
    "AuditPowerWarning",
    "NeighbourAudit",
    "audit_randomizer",
    "audit_neighbours",
    "as_randomizer",
    "worst_neighbour_pairs",
    "package_randomizers",
]


class AuditPowerWarning(UserWarning):
    """The audit's sample was too small to detect a violation of the size asked for."""

Randomizer = Callable[[Any, int, np.random.Generator], ArrayLike]


@dataclass(frozen=True)
class AuditResult:
    r"""Outcome of :func:`audit_randomizer` for one neighbouring pair.

    Attributes
    ----------
    epsilon : float
        The claimed privacy parameter.
    epsilon_lower : float
        Lower confidence bound, at level ``confidence``, on the worst log-ratio
        max_S |log(P[M(x) in S] / P[M(x') in S])| over the events tested (simultaneous over
        all events, so valid for the maximum). The claim is refuted when it exceeds epsilon.
    epsilon_hat : float
        Point estimate |log(k_x / k_x')| of the log-ratio at the witness event, from the
        counts k_x, k_x' (``inf`` when one side never hit it). For a mechanism that attains
        its bound (Laplace-type mechanisms do, on half-lines) it estimates the true epsilon.
    confidence : float
        Confidence level of ``epsilon_lower``.
    n_samples : int
        Releases drawn on each input for the counts (plus a separate pilot sample).
    witness : str
        The event (and direction) attaining ``epsilon_lower``.
    events : tuple of str
        Descriptions of the events tested (Y is the output; ``Y[j]`` its coordinate j).
    counts : ndarray of int64, shape (n_events, 2)
        How many of the releases on x (column 0) and on x' (column 1) fell in each event.
    log_ratio_lower : ndarray of float64, shape (n_events, 2)
        Per event, the simultaneous lower bounds on log(P_x/P_x') (column 0) and
        log(P_x'/P_x) (column 1).
    x, x_neighbour : object
        The neighbouring inputs.
    families : tuple of str
        The event families tested, each with its number of events (e.g.
        ``"cells: 64 pilot-quantile intervals of Y"``, ``"likelihood-ratio: 22 unions of
        ... exact pilot values"``).
    alpha : float
        Level of each one-sided Clopper-Pearson bound, (1 - confidence) / (4 n_events).
    resolution : float
        Smallest probability an event needs, on the input where it is likely, for this run to
        detect an infinite likelihood ratio on it (expected counts n * q against 0): events
        rarer than this are invisible at this sample size.
    min_detectable_excess : float
        Smallest delta such that an event with the witness's probability q on the unlikely
        side and q e^(epsilon + delta) on the other would be flagged at the expected counts
        (``detectable_excess(q)`` for other q); ``inf`` if none.
    margin : float
        The excess over epsilon the caller wanted to be able to see; an
        :class:`AuditPowerWarning` was issued when the run passed with
        ``min_detectable_excess > margin``.
    notes : tuple of str
        Remarks, e.g. the tail bound of a fast sampler, which no sample of this size can see.
    """

    epsilon: float
    epsilon_lower: float
    epsilon_hat: float
    confidence: float
    n_samples: int
    witness: str
    events: tuple[str, ...] = field(repr=False)
    counts: NDArray[np.int64] = field(repr=False)
    log_ratio_lower: NDArray[np.float64] = field(repr=False)
    x: Any = None
    x_neighbour: Any = None
    families: tuple[str, ...] = ()
    alpha: float = math.nan
    resolution: float = math.nan
    min_detectable_excess: float = math.nan
    margin: float = math.nan
    notes: tuple[str, ...] = ()

    def detectable_excess(self, q: float) -> float:
        """Smallest delta detectable on an event of probability q (and q e^(epsilon+delta)).

        At the expected counts k' = n q, k = n q e^(epsilon + delta), the delta for which the
        audit's lower bound log L(k) - log U(k') reaches epsilon (bisection); ``inf`` when no
        delta with q e^(epsilon + delta) <= 1 suffices.
        """
        return _detectable_excess(q, self.n_samples, self.alpha, self.epsilon)

    @property
    def violation(self) -> bool:
        """True when the lower confidence bound on the worst log-ratio exceeds epsilon."""
        return bool(self.epsilon_lower > self.epsilon)

    @property
    def passed(self) -> bool:
        """True when no violation of epsilon-LDP was detected."""
        return not self.violation

    @property
    def n_events(self) -> int:
        """Number of events tested."""
        return len(self.events)

    def summary(self) -> str:
        """One line: verdict, claimed epsilon, lower bound, estimate, witness event."""
        verdict = "VIOLATION" if self.violation else "passed"
        return (
            f"{verdict}: claimed epsilon {self.epsilon:.4g}, lower bound {self.epsilon_lower:.4g} "
            f"(confidence {self.confidence}), estimate {self.epsilon_hat:.4g}, "
            f"{self.n_events} events, witness {self.witness}; could detect an excess of "
            f"{self.min_detectable_excess:.3g} there, events of probability >= {self.resolution:.2g}"
        )


@dataclass(frozen=True)
class NeighbourAudit:
    """Outcome of :func:`audit_neighbours`: one :class:`AuditResult` per pair.

    ``passed`` is True when no pair shows a violation; the per-pair confidence levels are
    Bonferroni-adjusted so that ``confidence`` holds for all pairs at once.
    """

    results: tuple[AuditResult, ...]
    epsilon: float
    confidence: float

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def violation(self) -> bool:
        return not self.passed

    @property
    def worst(self) -> AuditResult:
        """The result with the largest lower bound."""
        return max(self.results, key=lambda r: r.epsilon_lower)

    @property
    def epsilon_lower(self) -> float:
        return self.worst.epsilon_lower


# --------------------------------------------------------------------------------------------
# Adapters
# --------------------------------------------------------------------------------------------


def as_randomizer(mechanism: Any) -> Randomizer:
    """Turn a vectorized value randomizer into the ``randomize(x, size, rng)`` form.

    Parameters
    ----------
    mechanism : object with a ``randomize`` method, or callable
        ``randomize(values, rng=...)`` (or ``randomize(values)`` when it takes no ``rng``,
        like :class:`~ldpgraph.mechanisms.SecureDiscreteLaplace`), acting on an array of
        independent inputs.

    Returns
    -------
    callable
        ``f(x, size, rng)`` = ``randomize(x repeated size times along a new first axis)``.

    Examples
    --------
    >>> from ldpgraph.mechanisms import DiscreteLaplace
    >>> f = as_randomizer(DiscreteLaplace(epsilon=1.0))
    >>> f(5, 4, np.random.default_rng(0)).shape
    (4,)
    """
    fn = mechanism.randomize if hasattr(mechanism, "randomize") else mechanism
    if not callable(fn):
        raise TypeError(
            f"mechanism must be callable or have a randomize method, got {type(mechanism).__name__}"
        )
    try:
        takes_rng = "rng" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes_rng = True

    def randomize(x: Any, size: int, rng: np.random.Generator) -> ArrayLike:
        xa = np.asarray(x)
        values = np.broadcast_to(xa, (size, *xa.shape)).copy()
        return fn(values, rng=rng) if takes_rng else fn(values)

    return randomize


# --------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------


@dataclass
class _Partition:
    """Cells of the output space and the events built from them.

    ``cell(y)`` maps outputs to cell indices in [0, n_cells); each event is a union of cells,
    given as a row of the 0/1 matrix ``events`` (events x cells) with a label.
    """

    cell: Callable[[NDArray], NDArray[np.intp]]
    n_cells: int
    events: NDArray[np.int64]
    labels: list[str]


def _is_discrete(column: NDArray) -> bool:
    if column.dtype.kind in "iub":
        return True
    return bool(np.all(column == np.round(column)))


def _exact(y: NDArray) -> NDArray:
    """Outputs in the dtype they are compared in: int64 for integers (exact), else float64."""
    if y.dtype.kind in "iub":
        if y.dtype == np.uint64 and y.size and int(y.max()) > np.iinfo(np.int64).max:
            raise ValueError("integer outputs must fit in int64")
        return y.astype(np.int64, copy=False)
    return y.astype(np.float64, copy=False)


def _edges_1d(pilot: NDArray, discrete: bool, bins: int, tails: bool = True) -> NDArray:
    """Cut points from the pooled pilot sample: distinct values (discrete) or quantiles.

    Discrete outputs with at most ``bins`` distinct pilot values get every value as a cut
    point (cells are then single values); otherwise the cut points are pilot quantiles at
    levels j / bins and, with ``tails``, 1e-2, 1e-3, ... and their complements while at least
    20 pilot points lie beyond them. Integer outputs keep their dtype: cut points are pilot
    values (order statistics), compared exactly.
    """
    if discrete:
        values = np.unique(pilot)
        if values.size <= bins:
            return values
    levels = [np.linspace(0.0, 1.0, bins + 1)[1:-1]]
    k = 2
    while tails and 10.0**-k * pilot.size >= 20:
        levels.append(np.array([10.0**-k, 1 - 10.0**-k]))
        k += 1
    lv = np.concatenate(levels)
    if pilot.dtype.kind == "i" or discrete:
        # inverted-cdf quantiles: the smallest pilot value whose empirical cdf reaches the level
        ordered = np.sort(pilot)
        idx = np.clip(np.ceil(lv * ordered.size).astype(np.int64) - 1, 0, ordered.size - 1)
        return np.unique(ordered[idx])
    return np.unique(np.quantile(pilot, lv, method="linear"))


def _fmt(v: Any, discrete: bool) -> str:
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return str(int(v)) if discrete and float(v).is_integer() else f"{v:.6g}"


def _interval_partition(edges: NDArray[np.float64], discrete: bool, name: str, getter) -> _Partition:
    """Cells (-inf, e_0), [e_0, e_1), ..., [e_last, inf) of one coordinate, and half-lines.

    With b cells, the events are the cells and the half-lines {Y < e_j} (cells 0..j,
    j = 1..b-2) and {Y >= e_j} (cells j+1..b-1, j = 0..b-3); the other half-lines are cells.
    """
    b = edges.size + 1
    labels = [f"{name} < {_fmt(edges[0], discrete)}"] if edges.size else [f"{name} anything"]
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if discrete and hi == lo + 1:
            labels.append(f"{name} = {_fmt(lo, discrete)}")
        else:
            labels.append(f"{_fmt(lo, discrete)} <= {name} < {_fmt(hi, discrete)}")
    if edges.size:
        labels.append(f"{name} >= {_fmt(edges[-1], discrete)}")
    rows = [np.eye(b, dtype=np.int64)]
    if b >= 3:
        tri = np.tril(np.ones((b, b), dtype=np.int64))
        rows += [tri[1 : b - 1], 1 - tri[0 : b - 2]]
        labels += [f"{name} < {_fmt(edges[j], discrete)}" for j in range(1, b - 1)]
        labels += [f"{name} >= {_fmt(edges[j], discrete)}" for j in range(0, b - 2)]

    def cell(y: NDArray) -> NDArray[np.intp]:
        return np.searchsorted(edges, getter(y), side="right")

    return _Partition(cell, b, np.concatenate(rows), labels)


def _product_partition(edge_list: list[NDArray[np.float64]], discrete: list[bool]) -> _Partition:
    """Grid cells of per-coordinate intervals, and the orthants {Y[j] < a_j or >= a_j, all j}.

    Cells are numbered in C order (``numpy.ravel_multi_index``); an orthant is the Kronecker
    product over coordinates of lower (``tril``) or upper (``triu``) triangular indicator rows.
    """
    sizes = tuple(e.size + 1 for e in edge_list)
    d = len(sizes)
    cell_labels = []
    for idx in np.ndindex(*sizes):
        parts = []
        for j, (i, e) in enumerate(zip(idx, edge_list, strict=True)):
            lo = "-inf" if i == 0 else _fmt(e[i - 1], discrete[j])
            hi = "inf" if i == e.size else _fmt(e[i], discrete[j])
            parts.append(f"Y[{j}] in [{lo}, {hi})")
        cell_labels.append(" & ".join(parts))
    rows, labels = [np.eye(math.prod(sizes), dtype=np.int64)], cell_labels
    for orient in itertools.product((0, 1), repeat=d):
        ones = [np.ones((k, k), dtype=np.int64) for k in sizes]
        mats = [np.tril(a) if o == 0 else np.triu(a) for a, o in zip(ones, orient, strict=True)]
        rows.append(functools.reduce(np.kron, mats))
        for idx in np.ndindex(*sizes):
            parts = []
            for j, (i, o) in enumerate(zip(idx, orient, strict=True)):
                e = edge_list[j]
                if o == 0 and i < e.size:
                    parts.append(f"Y[{j}] < {_fmt(e[i], discrete[j])}")
                elif o == 1 and i > 0:
                    parts.append(f"Y[{j}] >= {_fmt(e[i - 1], discrete[j])}")
            labels.append(" & ".join(parts) if parts else "Y anything")
    matrix = np.concatenate(rows)
    _, first = np.unique(matrix, axis=0, return_index=True)
    first.sort()

    def cell(y: NDArray) -> NDArray[np.intp]:
        idx = [np.searchsorted(e, y[:, j], side="right") for j, e in enumerate(edge_list)]
        return np.ravel_multi_index(idx, sizes)

    return _Partition(cell, math.prod(sizes), matrix[first], [labels[i] for i in first])


def _partitions(
    pilot: NDArray, discrete: bool | None, bins: int | ArrayLike, has_projection: bool
) -> list[_Partition]:
    """Event partitions chosen from the pooled pilot sample (never from the test sample)."""
    if pilot.ndim == 1:
        disc = _is_discrete(pilot) if discrete is None else bool(discrete)
        name = "proj(Y)" if has_projection else "Y"
        if np.ndim(bins) == 1:
            edges = np.unique(np.asarray(bins))
            if edges.dtype.kind not in "iu":
                edges = edges.astype(np.float64)
        else:
            edges = _edges_1d(pilot, disc, int(bins))
        return [_interval_partition(edges, disc, name, lambda y: y)]
    d = pilot.shape[1]
    parts = []
    edge_list, disc_list = [], []
    for j in range(d):
        col = pilot[:, j]
        disc = _is_discrete(col) if discrete is None else bool(discrete)
        edges = _edges_1d(col, disc, int(bins))
        parts.append(_interval_partition(edges, disc, f"Y[{j}]", lambda y, j=j: y[:, j]))
        per_coord = int(math.floor(int(bins) ** (1.0 / d) + 1e-9))
        if per_coord >= 2:
            edge_list.append(_edges_1d(col, disc, per_coord, tails=False))
        disc_list.append(disc)
    if d >= 2 and len(edge_list) == d and all(e.size for e in edge_list):
        parts.append(_product_partition(edge_list, disc_list))
    return parts


def _describe(part: _Partition, n_tested: int) -> str:
    """One line naming a partition's family: its cells (values or intervals) and derived events."""
    singles = sum(" = " in lab for lab in part.labels[: part.n_cells])
    kind = "single values" if singles >= part.n_cells - 2 else "pilot-quantile intervals"
    name = part.labels[0].split(" ")[0] if part.labels else "Y"
    if " & " in "".join(part.labels[: part.n_cells]):
        return f"grid cells and orthants of Y ({part.n_cells} cells, {n_tested} events tested)"
    return f"cells of {name} ({part.n_cells} {kind}) and half-lines ({n_tested} events tested)"


# --------------------------------------------------------------------------------------------
# Likelihood-ratio events
# --------------------------------------------------------------------------------------------

# Cells of continuous outputs for the likelihood-ratio family: pilot quantiles, at most this
# many, with at least _LR_PER_CELL pilot points per cell on average.
_LR_MAX_CELLS = 1024
_LR_PER_CELL = 20


@dataclass
class _Coder:
    """Maps outputs to the cells of the likelihood-ratio family: exact values or fine bins.

    ``code(y)`` gives each output an int64 (or exact float) key; the cells are the distinct
    keys of the pilot (``keys``), and ``cell(y)`` is the index of y's key among them, or
    ``len(keys)`` for keys the pilot never produced (an "other" cell in no event).
    """

    code: Callable[[NDArray], NDArray]
    keys: NDArray
    what: str

    def cell(self, y: NDArray) -> NDArray[np.intp]:
        c = self.code(y)
        idx = np.searchsorted(self.keys, c)
        idx_c = np.minimum(idx, self.keys.size - 1)
        return np.where((idx < self.keys.size) & (self.keys[idx_c] == c), idx, self.keys.size)


def _column_coder(col: NDArray, discrete: bool, bins: int) -> tuple[Callable[[NDArray], NDArray], int]:
    """Per-coordinate codes 0..size-1 (and size for a value unseen by the pilot)."""
    if discrete:
        values = np.unique(col)

        def code(v: NDArray) -> NDArray[np.int64]:
            idx = np.searchsorted(values, v)
            hit = (idx < values.size) & (values[np.minimum(idx, values.size - 1)] == v)
            return np.where(hit, idx, values.size).astype(np.int64)

        return code, values.size + 1
    edges = _edges_1d(col, False, bins, tails=False)
    return (lambda v: np.searchsorted(edges, v, side="right").astype(np.int64)), edges.size + 1


def _lr_coder(pilot: NDArray, discrete: bool | None) -> _Coder:
    """The cells of the likelihood-ratio family, chosen from the pooled pilot."""
    n = pilot.shape[0]
    if pilot.ndim == 1:
        disc = _is_discrete(pilot) if discrete is None else bool(discrete)
        if disc:
            return _Coder(lambda y: y, np.unique(pilot), "exact pilot values")
        bins = int(max(2, min(_LR_MAX_CELLS, n // _LR_PER_CELL)))
        code, _ = _column_coder(pilot, False, bins)
        return _Coder(code, np.unique(code(pilot)), "pilot-quantile intervals")
    d = pilot.shape[1]
    discs = [_is_discrete(pilot[:, j]) if discrete is None else bool(discrete) for j in range(d)]
    per = int(max(2, math.floor(min(_LR_MAX_CELLS, n // _LR_PER_CELL) ** (1.0 / d))))
    coders = [_column_coder(pilot[:, j], discs[j], per) for j in range(d)]
    sizes = [size for _, size in coders]
    if math.prod(sizes) >= 2**62:  # too many distinct rows to number: fall back to bins
        coders = [_column_coder(pilot[:, j], False, per) for j in range(d)]
        sizes = [size for _, size in coders]
        discs = [False] * d

    def code(y: NDArray) -> NDArray[np.int64]:
        out = np.zeros(y.shape[0], dtype=np.int64)
        for j, (c, size) in enumerate(coders):
            out *= size
            out += c(y[:, j])
        return out

    what = "exact pilot rows" if all(discs) else "cells of a pilot-quantile grid"
    return _Coder(code, np.unique(code(pilot)), what)


def _lr_events(
    coder: _Coder, pilot_x: NDArray, pilot_xn: NDArray, y_x: NDArray, y_xn: NDArray
) -> tuple[list[str], NDArray[np.int64]]:
    """Unions of the cells with the most extreme pilot likelihood ratio, and their test counts.

    Cells are ranked by the smoothed pilot log-ratio log((a + 1/2) / (b + 1/2)) (a, b the
    pilot counts on x and x'); the events are the top-j cells for j = 1, 2, 4, ..., and
    j = the number of cells with a > b, in each direction. Only the pilot chooses them.
    """
    k = coder.keys.size
    a = np.bincount(coder.cell(pilot_x), minlength=k + 1)[:k]
    b = np.bincount(coder.cell(pilot_xn), minlength=k + 1)[:k]
    score = np.log((a + 0.5) / (b + 0.5))
    t_x = np.bincount(coder.cell(y_x), minlength=k + 1)[:k]
    t_xn = np.bincount(coder.cell(y_xn), minlength=k + 1)[:k]
    labels, rows = [], []
    for sign, arrow, ahead in ((1, "x over x_neighbour", a > b), (-1, "x_neighbour over x", b > a)):
        order = np.argsort(-sign * score, kind="stable")
        cum_x, cum_xn = np.cumsum(t_x[order]), np.cumsum(t_xn[order])
        n_ahead = int(np.count_nonzero(ahead))
        sizes = {1 << i for i in range(max(k - 1, 1).bit_length()) if (1 << i) < k}
        if 0 < n_ahead < k:
            sizes.add(n_ahead)
        for j in sorted(sizes):
            labels.append(f"LR[{arrow}]: the {j} {coder.what} of highest pilot ratio")
            rows.append((cum_x[j - 1], cum_xn[j - 1]))
    counts = np.array(rows, dtype=np.int64).reshape(-1, 2)
    return labels, counts


# --------------------------------------------------------------------------------------------
# Clopper-Pearson bounds
# --------------------------------------------------------------------------------------------


def _log_cp_lower(k: NDArray[np.int64], n: int, a: float) -> NDArray[np.float64]:
    """log of the one-sided Clopper-Pearson lower bound (level 1 - a) on a binomial p."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(divide="ignore"):
        lo = np.where(k > 0, special.betaincinv(np.maximum(k, 1), n - k + 1, a), 0.0)
        return np.log(lo)


def _log_cp_upper(k: NDArray[np.int64], n: int, a: float) -> NDArray[np.float64]:
    """log of the one-sided Clopper-Pearson upper bound (level 1 - a) on a binomial p."""
    k = np.asarray(k, dtype=np.float64)
    up = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1), 1.0 - a), 1.0)
    return np.log(up)


def _bound_at(k_num: float, k_den: float, n: int, a: float) -> float:
    """The audit's lower bound log L(k_num) - log U(k_den) at (possibly fractional) counts."""
    lo = float(special.betaincinv(max(k_num, 1e-300), n - k_num + 1, a)) if k_num > 0 else 0.0
    up = float(special.betaincinv(k_den + 1, max(n - k_den, 1e-300), 1.0 - a)) if k_den < n else 1.0
    return math.log(lo) - math.log(up) if lo > 0 else -math.inf


def _resolution(n: int, a: float, epsilon: float) -> float:
    """Smallest q with bound(n q, 0) > epsilon: rarer events cannot show even an infinite ratio."""
    lo, hi = 0.0, 1.0
    if _bound_at(n, 0.0, n, a) <= epsilon:
        return math.inf
    for _ in range(200):
        mid = math.sqrt(lo * hi) if lo > 0 else hi / 2 ** 20
        if _bound_at(n * mid, 0.0, n, a) > epsilon:
            hi = mid
        else:
            lo = mid
        if lo > 0 and hi / lo < 1 + 1e-6:
            break
    return hi


def _detectable_excess(q: float, n: int, a: float, epsilon: float) -> float:
    """Smallest delta with bound(n q e^(epsilon+delta), n q) > epsilon (inf if none)."""
    if not (q > 0 and math.isfinite(q)):
        return math.inf
    top = -math.log(q) - epsilon  # q e^(epsilon + delta) <= 1
    if top <= 0 or _bound_at(n * q * math.exp(epsilon + top), n * q, n, a) <= epsilon:
        return math.inf
    lo, hi = 0.0, top
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _bound_at(n * q * math.exp(epsilon + mid), n * q, n, a) > epsilon:
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------------------------
# Neighbouring pairs
# --------------------------------------------------------------------------------------------


def worst_neighbour_pairs(
    protocol: Any = None, *, d_max: int | None = None, max_degree: int | None = None
) -> list[tuple[int, int]]:
    """Neighbouring degrees (d, d + 1) where an edge-LDP node randomizer most likely breaks.

    Under edge-LDP one incident edge changes a node's degree by one, so the neighbouring
    inputs of a degree-based node randomizer are d and d + 1. A randomizer's privacy loss is
    largest where its release moves most: at the projection bound (C(min(d, d_max), k) moves
    by C(d_max - 1, k - 1) from d_max - 1 to d_max, and not at all above it), at the smallest
    degrees (0 and 1: C(d, k) starts at 0; a log or a division may misbehave), and at the
    largest degree considered.

    Parameters
    ----------
    protocol : object with a ``d_max`` attribute, int, or None
        A protocol or method with a public bound (a ``d_max`` attribute, or ``public["d_max"]``:
        ``get_method("local-lap-kstars").with_options(d_max=6)``), or d_max itself.
    d_max : int, optional
        The projection bound (overrides ``protocol``).
    max_degree : int, optional
        The largest degree of interest (e.g. the graph's maximum degree).

    Returns
    -------
    list of (int, int)
        Sorted pairs: (0, 1), (1, 2), (2, 3) and, with d_max, (d_max - 2, d_max - 1),
        (d_max - 1, d_max), (d_max, d_max + 1), (d_max + 1, d_max + 2) and
        (2 d_max, 2 d_max + 1); with max_degree, (max_degree - 1, max_degree).

    Examples
    --------
    >>> worst_neighbour_pairs(d_max=5)
    [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (10, 11)]
    """
    if d_max is None and protocol is not None:
        d_max = (protocol if isinstance(protocol, (int, np.integer)) else getattr(protocol, "d_max", None)
                 or (getattr(protocol, "public", None) or {}).get("d_max"))
    pairs = {(0, 1), (1, 2), (2, 3)}
    if d_max is not None:
        dm = check_nonnegative_int(d_max, "d_max", minimum=1)
        pairs |= {(d, d + 1) for d in (dm - 2, dm - 1, dm, dm + 1, 2 * dm) if d >= 0}
    if max_degree is not None:
        md = check_nonnegative_int(max_degree, "max_degree", minimum=1)
        pairs.add((md - 1, md))
    return sorted(pairs)


def _repeat(mech: Any, cast: Any) -> Randomizer:
    return lambda x, size, rng: mech.randomize(np.full(size, cast(x)), rng=rng)


def package_randomizers() -> dict[str, tuple[Randomizer, float, tuple[Any, Any]]]:
    """Every node randomizer of the package, as ``name -> (randomize, epsilon, (x, x'))``.

    For auditing them all (tests, ``scripts/audit_power.py``): the discrete Laplace fast and
    exact samplers, Laplace, staircase, discrete Laplace post-processed to Laplace and to
    staircase, the protocol's DegreeRandomizer with a budget split, the LocalLapKStars /
    LocalDLapKStars node releases, and Warner's randomized response on one adjacency bit (the
    first round of the triangle protocols; its seeded sampler), each with its claimed epsilon
    and one neighbouring pair.
    (SecureDiscreteLaplace runs the exact sampler on OS randomness: the exact sampler is
    audited here with seeded bytes.)

    Examples
    --------
    >>> sorted(package_randomizers())[:3]
    ['LocalDLapKStars', 'LocalLapKStars', 'degree-randomizer']
    """
    from .mechanisms import DiscreteLaplace, Laplace, Staircase, to_laplace, to_staircase
    from .mechanisms.secure import sample_dlap_exact
    from .protocols import DegreeRandomizer
    from .protocols.degrees.kernels import local_count_release
    from .protocols.randomizer import randomized_response_bits

    out: dict[str, tuple[Randomizer, float, tuple[Any, Any]]] = {}
    for eps in (0.5, 2.0):
        out[f"dlap-{eps}"] = (_repeat(DiscreteLaplace(epsilon=eps), int), eps, (3, 4))
        out[f"laplace-{eps}"] = (_repeat(Laplace(epsilon=eps), float), eps, (3, 4))
        out[f"staircase-{eps}"] = (_repeat(Staircase(epsilon=eps), float), eps, (3, 4))
    out["exact-dlap"] = (lambda x, size, rng: x + sample_dlap_exact(2, 1, size, rng=rng), 0.5, (3, 4))
    dlap = DiscreteLaplace(epsilon=1.0)
    for name, convert in (("dlap-to-laplace", to_laplace), ("dlap-to-staircase", to_staircase)):
        out[name] = (
            lambda x, size, rng, f=convert: f(dlap.randomize(np.full(size, x), rng=rng), 1.0, rng=rng),
            1.0,
            (5, 6),
        )
    rand = DegreeRandomizer(epsilon=1.0, kstar_counts=[2], d_max=4, shares={"degree": 0.4, "kstar_2": 0.6})

    def degree_randomizer(d: Any, size: int, rng: np.random.Generator) -> NDArray:
        rep = rand.randomize(np.full(size, d), rng=rng)
        return np.stack([rep.released[q].values for q in rand.shares], axis=1)

    out["degree-randomizer"] = (degree_randomizer, 1.0, (3, 4))
    for name, noise in (("LocalLapKStars", "laplace"), ("LocalDLapKStars", "dlap")):
        out[name] = (  # the node release of local-lap-kstars / local-dlap-kstars at D = 4, k = 2
            lambda d, size, rng, noise=noise: local_count_release(np.array([d]), 2, 1.0, 4, size, rng,
                                                                  noise)[:, 0],
            1.0,
            (3, 4),
        )
    out["rr-bit"] = (
        lambda b, size, rng: randomized_response_bits(np.full(size, bool(b)), 1.0, rng=rng, secure=False)
        .astype(np.int64),
        1.0,
        (0, 1),
    )
    return out


# --------------------------------------------------------------------------------------------
# The audit
# --------------------------------------------------------------------------------------------


def _draw(randomize: Randomizer, x: Any, size: int, gen: np.random.Generator, name: str) -> NDArray:
    out = np.asarray(randomize(x, size, gen))
    if out.dtype.kind not in "iufb":
        raise TypeError(f"randomize({name}, size, rng) must return a numeric array, got dtype {out.dtype}")
    if out.ndim not in (1, 2) or out.shape[0] != size:
        raise ValueError(
            f"randomize({name}, size, rng) must return shape (size,) or (size, d) with size={size}, "
            f"got shape {out.shape}"
        )
    if out.dtype.kind == "f" and np.isnan(out).any():
        raise ValueError(f"randomize({name}, size, rng) returned NaN")
    return _exact(out)


def _project(y: NDArray, projection: Any) -> NDArray:
    if projection is None:
        return y
    if callable(projection):
        out = np.asarray(projection(y))
        if out.shape != (y.shape[0],):
            raise ValueError(f"projection must map shape {y.shape} to ({y.shape[0]},), got {out.shape}")
        return _exact(out)
    w = np.asarray(projection)
    if w.dtype.kind not in "iu":
        w = w.astype(np.float64)
    if y.ndim != 2 or w.shape != (y.shape[1],):
        raise ValueError(
            f"projection weights must have shape ({y.shape[-1]},) for outputs of shape {y.shape}, "
            f"got {w.shape}"
        )
    return _exact(y @ w)  # integer outputs and weights: an exact integer projection


def audit_randomizer(
    randomize: Randomizer | Any,
    x: Any,
    x_neighbour: Any,
    epsilon: float,
    *,
    n_samples: int = 10**6,
    rng=None,
    confidence: float = 0.999,
    discrete: bool | None = None,
    bins: int | ArrayLike = 64,
    projection: ArrayLike | Callable[[NDArray], ArrayLike] | None = None,
    n_pilot: int | None = None,
    likelihood_events: bool = True,
    margin: float | None = None,
) -> AuditResult:
    r"""Test the epsilon-LDP claim of a randomizer on one pair of neighbouring inputs.

    Parameters
    ----------
    randomize : callable or mechanism
        ``randomize(x, size, rng)`` returning ``size`` independent releases on input ``x``,
        shape ``(size,)`` or ``(size, d)``, drawn with the numpy Generator ``rng``; or an
        object with a vectorized ``randomize(values, rng=...)`` method (see
        :func:`as_randomizer`).
    x, x_neighbour : object
        Neighbouring private inputs (passed to ``randomize`` unchanged).
    epsilon : float
        The claimed privacy parameter. Must be in (0, inf).
    n_samples : int, default 10**6
        Releases per input used for the counts.
    rng : numpy.random.Generator, int, SeedSequence or None
        Randomness; four independent children drive the pilot and test draws on x and x'.
    confidence : float, default 0.999
        Probability that a truly epsilon-LDP randomizer passes (in (0, 1)).
    discrete : bool or None
        Treat outputs as discrete (each value a cell) or continuous (quantile bins). None:
        integer outputs, or float outputs whose pilot values are all whole numbers, are
        discrete.
    bins : int or array_like, default 64
        Continuous: number of quantile bins per coordinate (plus tail quantiles
        1e-2, 1e-3, ... where the pilot reaches them). Discrete: largest number of distinct
        values used as cells before falling back to quantile cells. For 1-D outputs an array
        gives the cut points explicitly.
    projection : array_like, callable or None
        For vector outputs, audit the 1-D statistic ``y @ w`` (weights) or ``projection(y)``
        instead of the default event family (see Notes).
    n_pilot : int or None
        Releases per input in the pilot sample that chooses the events (default
        ``max(n_samples // 10, 100)``); they are not reused for the counts.
    likelihood_events : bool, default True
        Also test the likelihood-ratio family (see Notes).
    margin : float or None
        The smallest excess over epsilon the run should be able to detect (default
        0.1 epsilon); an :class:`AuditPowerWarning` is issued when the run passes but
        ``min_detectable_excess`` exceeds it. Pass ``math.inf`` to silence the warning.

    Returns
    -------
    AuditResult
        ``passed`` / ``violation``, ``epsilon_lower``, ``epsilon_hat``, the witness event,
        the per-event counts and bounds, the families tested and the run's power.

    Notes
    -----
    **Events.** An epsilon-DP randomizer satisfies
    :math:`P[M(x)\in S] \le e^{\epsilon} P[M(x')\in S]` for every event S, so any family of
    events is sound; a good one has power. Cut points are chosen from a separate pilot
    sample (pooled over x and x'): for discrete outputs each observed value (so the events
    are the values), for continuous outputs quantiles of the pilot, with extra tail
    quantiles. The events are the resulting cells and all half-lines {Y < e}, {Y >= e}: the
    half-lines are where Laplace-type mechanisms attain the ratio e^epsilon with the most
    mass. For vector outputs of dimension d the family is the union, over coordinates, of
    these 1-D events of each coordinate, plus, when k = floor(bins^(1/d)) >= 2, the cells of
    a product grid with k quantile intervals per coordinate and the orthants
    {Y[j] < a_j or Y[j] >= a_j for every j} at its grid points (an orthant is where a node
    releasing several Laplace-type values under a budget split attains the full, composed,
    epsilon); or, with ``projection``, the 1-D events of the projection ``y @ w``.

    **Bound.** For each event S and each input, one-sided Clopper--Pearson bounds at level
    a = (1 - confidence) / (4m) (m events; lower and upper bounds on both probabilities, a
    Bonferroni correction) hold simultaneously with probability >= confidence, so

    .. math::

        \underline{\epsilon} = \max_{S} \max\big(\log L_x(S) - \log U_{x'}(S),\
                                               \log L_{x'}(S) - \log U_x(S)\big)

    is a lower confidence bound on max_S |log(P_x(S)/P_{x'}(S))|, which is <= epsilon for an
    epsilon-LDP randomizer. Hence a randomizer that meets its claim is flagged with
    probability <= 1 - confidence, whatever its law (up to the accuracy of its own sampler).
    Because the events come from an independent pilot, this holds although the events are
    data-driven: given the pilot, the m events are fixed, and the fresh samples are
    independent of it. m counts every event of every family (Bonferroni).

    **Likelihood-ratio events.** Intervals and half-lines have no power against leaks
    spread over many values with a structure they cut across (a parity that depends on the
    input, say). The pilot's cells -- each distinct output, compared as an exact integer (or
    exact float); for continuous outputs up to 1024 pilot-quantile intervals; for vectors the
    distinct rows or a quantile grid -- are ranked by the smoothed pilot log-ratio
    log((a + 1/2)/(b + 1/2)) of their counts a on x and b on x', and the unions of the j
    highest-ranked cells, j = 1, 2, 4, ... and j = #{a > b}, are tested in each direction.
    The union of the outputs with the largest ratio is the most powerful event for its mass
    (Neyman-Pearson), so the family adapts to any structure the pilot can see, at a cost of
    only 2 log2(#cells) events in the Bonferroni count.

    **Power.** ``resolution`` is the smallest q such that expected counts n q against 0
    give a lower bound above epsilon: events rarer than that (a sampler's tail truncated
    at probability 1e-19, say) are invisible to the run. ``min_detectable_excess`` is the
    smallest delta that expected counts n q e^(epsilon+delta) against n q would reveal, at
    the witness's probability q (for other q: ``result.detectable_excess(q)``); with
    Clopper-Pearson bounds it is about z_a (1/sqrt(n q) + 1/sqrt(n q e^(epsilon+delta))) (z_a
    the normal quantile at level a), so a tenfold sample buys a ~3-fold smaller delta.

    Only pure epsilon-DP (delta = 0) is checked, on the pair given: an audit can refute a
    claim, never prove it.

    Examples
    --------
    >>> from ldpgraph.mechanisms import DiscreteLaplace
    >>> res = audit_randomizer(DiscreteLaplace(epsilon=1.0), 3, 4, 1.0, n_samples=10**5, rng=0)
    >>> res.passed
    True
    >>> res.families[-1].startswith("likelihood-ratio"), res.min_detectable_excess < 0.1
    (True, True)
    >>> leaky = audit_randomizer(DiscreteLaplace(epsilon=2.0), 3, 4, 1.0, n_samples=10**5, rng=0)
    >>> leaky.violation
    True
    """
    notes: list[str] = []
    if hasattr(randomize, "fast_noise_bound"):
        notes.append(
            f"fast sampler: |eta| <= {randomize.fast_noise_bound} always, so pure epsilon-DP fails "
            f"on outputs beyond it, an event of probability ~{randomize.fast_tail_mass:.1e} (a delta); "
            "use the exact sampler where that matters"
        )
    if not callable(randomize) or hasattr(randomize, "randomize"):
        randomize = as_randomizer(randomize)
    eps = check_epsilon(epsilon)
    margin_ = 0.1 * eps if margin is None else float(margin)
    if not margin_ > 0:
        raise ValueError(f"margin must be > 0, got {margin!r}")
    n = check_nonnegative_int(n_samples, "n_samples", minimum=10)
    n_pilot = max(n // 10, 100) if n_pilot is None else check_nonnegative_int(n_pilot, "n_pilot", minimum=10)
    conf = float(confidence)
    if not 0.0 < conf < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if np.ndim(bins) == 0:
        check_nonnegative_int(bins, "bins", minimum=1)
    gen = check_rng(rng)
    g_pilot_x, g_pilot_xn, g_x, g_xn = gen.spawn(4)

    pilot_x = _project(_draw(randomize, x, n_pilot, g_pilot_x, "x"), projection)
    pilot_xn = _project(_draw(randomize, x_neighbour, n_pilot, g_pilot_xn, "x_neighbour"), projection)
    if pilot_x.dtype != pilot_xn.dtype:  # e.g. int on one input, float on the other
        pilot_x, pilot_xn = pilot_x.astype(np.float64), pilot_xn.astype(np.float64)
    pilot = np.concatenate([pilot_x, pilot_xn])
    if np.ndim(bins) == 1 and pilot.ndim != 1:
        raise ValueError("explicit bins (cut points) need 1-D outputs or a projection")
    parts = _partitions(pilot, discrete, bins, projection is not None)
    # (compared with the pilot's cut points as they are: int64 against int64 stays exact)
    y_x = _project(_draw(randomize, x, n, g_x, "x"), projection)
    y_xn = _project(_draw(randomize, x_neighbour, n, g_xn, "x_neighbour"), projection)
    if y_x.shape[1:] != pilot.shape[1:] or y_xn.shape[1:] != pilot.shape[1:]:
        raise ValueError("randomize must return outputs of the same dimension on every call")

    labels: list[str] = []
    counts_list = []
    families: list[str] = []
    for part in parts:
        matrix, lab = part.events, part.labels
        c_x = np.bincount(part.cell(y_x), minlength=part.n_cells)
        c_xn = np.bincount(part.cell(y_xn), minlength=part.n_cells)
        c_p = np.bincount(part.cell(pilot), minlength=part.n_cells)
        keep = (matrix @ c_p) > 0  # events the pilot never hit are not tested
        counts_list.append(np.stack([matrix @ c_x, matrix @ c_xn], axis=1)[keep])
        labels += [lab_i for lab_i, k in zip(lab, keep, strict=True) if k]
        families.append(_describe(part, int(np.count_nonzero(keep))))
    if likelihood_events:
        coder = _lr_coder(pilot, discrete)
        lr_labels, lr_counts = _lr_events(coder, pilot_x, pilot_xn, y_x, y_xn)
        if lr_labels:
            labels += lr_labels
            counts_list.append(lr_counts)
            families.append(
                f"likelihood-ratio: {len(lr_labels)} unions of the {coder.what} ({coder.keys.size}) "
                "of highest pilot ratio, each direction"
            )
    counts = np.concatenate(counts_list)
    m = counts.shape[0]  # >= 1: some cell holds pilot points
    a = (1.0 - conf) / (4.0 * m)
    lo = np.stack([_log_cp_lower(counts[:, 0], n, a), _log_cp_lower(counts[:, 1], n, a)], axis=1)
    up = np.stack([_log_cp_upper(counts[:, 0], n, a), _log_cp_upper(counts[:, 1], n, a)], axis=1)
    bound = np.stack([lo[:, 0] - up[:, 1], lo[:, 1] - up[:, 0]], axis=1)
    flat = int(np.argmax(bound))
    i, direction = divmod(flat, 2)
    eps_lower = float(bound[i, direction])
    witness = f"{labels[i]} ({'x over x_neighbour' if direction == 0 else 'x_neighbour over x'})"

    with np.errstate(divide="ignore"):
        k_x, k_xn = np.log(counts[i].astype(np.float64))
        eps_hat = abs(float(k_x - k_xn)) if max(k_x, k_xn) > -np.inf else 0.0

    resolution = _resolution(n, a, eps)
    # the witness's probability where it is unlikely, kept where a ratio e^(eps + ln 2) fits
    q_witness = float(counts[i, 1 - direction]) / n
    min_excess = _detectable_excess(min(max(q_witness, resolution), 0.5 * math.exp(-eps)), n, a, eps)
    if min_excess > margin_ and eps_lower <= eps:  # a pass that says little: say so
        warnings.warn(
            AuditPowerWarning(
                f"audit of epsilon = {eps:g} with n_samples = {n}: the smallest detectable excess at "
                f"the witness ({min_excess:.3g}) exceeds the margin {margin_:.3g}; a violation "
                f"smaller than that would pass. Increase n_samples (about "
                f"{(min_excess / margin_) ** 2:.2g}-fold)."
            ),
            stacklevel=2,
        )
    return AuditResult(
        eps, eps_lower, eps_hat, conf, n, witness, tuple(labels), counts, bound, x, x_neighbour,
        tuple(families), a, resolution, min_excess, margin_, tuple(notes),
    )


def audit_neighbours(
    randomize: Randomizer | Any,
    pairs: Sequence[tuple[Any, Any]],
    epsilon: float,
    *,
    n_samples: int = 10**6,
    rng=None,
    confidence: float = 0.999,
    **kwargs: Any,
) -> NeighbourAudit:
    """Audit a randomizer on several neighbouring pairs, with a joint confidence level.

    Each pair is audited by :func:`audit_randomizer` at confidence
    1 - (1 - confidence) / len(pairs) (Bonferroni), with an independent child of ``rng``;
    other keyword arguments are passed on.

    Examples
    --------
    >>> from ldpgraph.mechanisms import DiscreteLaplace
    >>> rep = audit_neighbours(DiscreteLaplace(epsilon=1.0), [(0, 1), (5, 4)], 1.0,
    ...                        n_samples=10**5, rng=1)
    >>> rep.passed, len(rep.results)
    (True, 2)
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must contain at least one (x, x_neighbour) pair, got none")
    conf = float(confidence)
    if not 0.0 < conf < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    per_pair = 1.0 - (1.0 - conf) / len(pairs)
    children = check_rng(rng).spawn(len(pairs))
    results = tuple(
        audit_randomizer(
            randomize, x, xn, epsilon, n_samples=n_samples, rng=child, confidence=per_pair, **kwargs
        )
        for (x, xn), child in zip(pairs, children, strict=True)
    )
    return NeighbourAudit(results, check_epsilon(epsilon), conf)
