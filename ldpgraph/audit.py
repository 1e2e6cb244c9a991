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
the extreme ones (degree at and above d_max for a projection) -- and call
:func:`audit_neighbours`.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ._validation import check_epsilon, check_nonnegative_int, check_rng

__all__ = ["AuditResult", "NeighbourAudit", "audit_randomizer", "audit_neighbours", "as_randomizer"]

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
            f"{self.n_events} events, witness {self.witness}"
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


def _edges_1d(
    pilot: NDArray[np.float64], discrete: bool, bins: int, tails: bool = True
) -> NDArray[np.float64]:
    """Cut points from the pooled pilot sample: distinct values (discrete) or quantiles.

    Discrete outputs with at most ``bins`` distinct pilot values get every value as a cut
    point (cells are then single values); otherwise the cut points are pilot quantiles at
    levels j / bins and, with ``tails``, 1e-2, 1e-3, ... and their complements while at least
    20 pilot points lie beyond them.
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
    method = "inverted_cdf" if discrete else "linear"
    return np.unique(np.quantile(pilot, np.concatenate(levels), method=method))


def _fmt(v: float, discrete: bool) -> str:
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
            edges = np.unique(np.asarray(bins, dtype=np.float64))
        else:
            edges = _edges_1d(pilot.astype(np.float64), disc, int(bins))
        return [_interval_partition(edges, disc, name, lambda y: y)]
    d = pilot.shape[1]
    parts = []
    edge_list, disc_list = [], []
    for j in range(d):
        col = pilot[:, j]
        disc = _is_discrete(col) if discrete is None else bool(discrete)
        edges = _edges_1d(col.astype(np.float64), disc, int(bins))
        parts.append(_interval_partition(edges, disc, f"Y[{j}]", lambda y, j=j: y[:, j]))
        per_coord = int(math.floor(int(bins) ** (1.0 / d) + 1e-9))
        if per_coord >= 2:
            edge_list.append(_edges_1d(col.astype(np.float64), disc, per_coord, tails=False))
        disc_list.append(disc)
    if d >= 2 and len(edge_list) == d and all(e.size for e in edge_list):
        parts.append(_product_partition(edge_list, disc_list))
    return parts


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
    return out


def _project(y: NDArray, projection: Any) -> NDArray:
    if projection is None:
        return y
    if callable(projection):
        out = np.asarray(projection(y))
        if out.shape != (y.shape[0],):
            raise ValueError(f"projection must map shape {y.shape} to ({y.shape[0]},), got {out.shape}")
        return out
    w = np.asarray(projection, dtype=np.float64)
    if y.ndim != 2 or w.shape != (y.shape[1],):
        raise ValueError(
            f"projection weights must have shape ({y.shape[-1]},) for outputs of shape {y.shape}, "
            f"got {w.shape}"
        )
    return y @ w


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

    Returns
    -------
    AuditResult
        ``passed`` / ``violation``, ``epsilon_lower``, ``epsilon_hat``, the witness event and
        the per-event counts and bounds.

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
    data-driven.

    Only pure epsilon-DP (delta = 0) is checked, on the pair given: an audit can refute a
    claim, never prove it.

    Examples
    --------
    >>> from ldpgraph.mechanisms import DiscreteLaplace
    >>> res = audit_randomizer(DiscreteLaplace(epsilon=1.0), 3, 4, 1.0, n_samples=10**5, rng=0)
    >>> res.passed
    True
    >>> leaky = audit_randomizer(DiscreteLaplace(epsilon=2.0), 3, 4, 1.0, n_samples=10**5, rng=0)
    >>> leaky.violation
    True
    """
    if not callable(randomize) or hasattr(randomize, "randomize"):
        randomize = as_randomizer(randomize)
    eps = check_epsilon(epsilon)
    n = check_nonnegative_int(n_samples, "n_samples", minimum=10)
    n_pilot = max(n // 10, 100) if n_pilot is None else check_nonnegative_int(n_pilot, "n_pilot", minimum=10)
    conf = float(confidence)
    if not 0.0 < conf < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if np.ndim(bins) == 0:
        check_nonnegative_int(bins, "bins", minimum=1)
    gen = check_rng(rng)
    g_pilot_x, g_pilot_xn, g_x, g_xn = gen.spawn(4)

    pilot = np.concatenate(
        [
            _project(_draw(randomize, x, n_pilot, g_pilot_x, "x"), projection),
            _project(_draw(randomize, x_neighbour, n_pilot, g_pilot_xn, "x_neighbour"), projection),
        ]
    )
    if np.ndim(bins) == 1 and pilot.ndim != 1:
        raise ValueError("explicit bins (cut points) need 1-D outputs or a projection")
    parts = _partitions(pilot, discrete, bins, projection is not None)
    y_x = _project(_draw(randomize, x, n, g_x, "x"), projection)
    y_xn = _project(_draw(randomize, x_neighbour, n, g_xn, "x_neighbour"), projection)
    if y_x.shape[1:] != pilot.shape[1:] or y_xn.shape[1:] != pilot.shape[1:]:
        raise ValueError("randomize must return outputs of the same dimension on every call")

    labels: list[str] = []
    counts_list = []
    for part in parts:
        matrix, lab = part.events, part.labels
        c_x = np.bincount(part.cell(y_x), minlength=part.n_cells)
        c_xn = np.bincount(part.cell(y_xn), minlength=part.n_cells)
        c_p = np.bincount(part.cell(pilot), minlength=part.n_cells)
        keep = (matrix @ c_p) > 0  # events the pilot never hit are not tested
        counts_list.append(np.stack([matrix @ c_x, matrix @ c_xn], axis=1)[keep])
        labels += [lab_i for lab_i, k in zip(lab, keep, strict=True) if k]
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
    return AuditResult(
        eps, eps_lower, eps_hat, conf, n, witness, tuple(labels), counts, bound, x, x_neighbour
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
