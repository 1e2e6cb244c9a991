r"""The histogram of one release's noisy reports: a mergeable sufficient statistic for the curator.

Every degree statistic the curator estimates (k-stars, edges, moments, mean, variance, the
degree histogram, the maximum, the entropy) is a symmetric function of the noisy reports, so it
depends on them only through their histogram: the distinct values u and the integer counts
N(u) = #{v : y_v = u}. A :class:`ReportHistogram` holds exactly that, with the release's
epsilon and sensitivity (the noise law), and nothing else.

Stable API (other modules and the streaming curator build on it)
----------------------------------------------------------------
* ``ReportHistogram(values, counts, epsilon, sensitivity=1.0)`` — frozen; ``values`` strictly
  increasing int64, ``counts`` int64 >= 1, same length; ``n``, ``n_distinct``, ``mechanism``.
* ``ReportHistogram.from_reports(y, epsilon, sensitivity=1.0)`` — from an integer array (any
  shape; every entry is one report), at ``numpy.bincount`` speed.
* ``ReportHistogram.from_release(release)`` — from a ``ReleasedValues``.
* ``ReportHistogram.empty(epsilon, sensitivity=1.0)`` — the histogram of no reports.
* ``h1.merge(h2)`` / :func:`merge_histograms` — exact: counts add as integers, so curating
  the merge of per-chunk histograms gives bit for bit the result of curating the whole array,
  whatever the chunking and the merge order.
* ``h.weighted_sum(terms)`` — sum_u N(u) terms[u], correctly rounded (exact products, one
  rounding at the end): the "fsum-grade" sum of a per-report term over all reports.
* ``h.power_sum(j)`` — sum_v y_v^j as an exact Python integer.
* ``h.to_reports()`` — the sorted reports back (for tests and fallbacks).
* :func:`as_report_histogram` — from NodeReports (degree release), ReleasedValues, a histogram,
  or an array with ``epsilon``.

Examples
--------
>>> h = ReportHistogram.from_reports([3, -1, 3, 7], epsilon=1.0)
>>> h.values, h.counts, h.n
(array([-1,  3,  7]), array([1, 2, 1]), 4)
>>> both = h.merge(ReportHistogram.from_reports([7, 8], epsilon=1.0))
>>> both.values, both.counts
(array([-1,  3,  7,  8]), array([1, 2, 2, 1]))
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_integer_reports, check_nonnegative_int, check_sensitivity
from ..mechanisms import DiscreteLaplace
from .randomizer import NodeReports, ReleasedValues

__all__ = ["ReportHistogram", "as_report_histogram", "merge_histograms"]

# Largest report magnitude (as ldpgraph._validation: y +- 1 and small products stay exact).
_MAX_ABS_REPORT = 2**53
# Count with bincount when the value range is at most this (a 128 MiB int64 table) ...
_BINCOUNT_MAX_RANGE = 1 << 24
# ... and at most this many times the number of reports (else sort).
_BINCOUNT_RANGE_PER_REPORT = 4
# Reports per bincount chunk: 2^18 int64 = 2 MiB, the offset copy stays in cache.
_CHUNK = 1 << 18
# Veltkamp splitting constant for exact products (2^27 + 1), and the magnitude below which
# splitting cannot overflow.
_SPLITTER = 134217729.0
_SPLIT_SAFE = 2.0**995
# Up to this many reports (distinct values) counting (summing) takes a path without chunking
# (in Python floats): the same results, less overhead on tiny inputs.
_SMALL = 64


def _check_counts_values(values: Any, counts: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    v = np.asarray(values)
    c = np.asarray(counts)
    for name, arr in (("values", v), ("counts", c)):
        if arr.dtype.kind not in "iu":
            raise TypeError(f"ReportHistogram {name} must be an integer array, got dtype {arr.dtype}")
        if arr.ndim != 1:
            raise ValueError(f"ReportHistogram {name} must be one-dimensional, got shape {arr.shape}")
    if v.shape != c.shape:
        raise ValueError(
            f"ReportHistogram values and counts must have the same length, got {v.size} and {c.size}"
        )
    if v.size:
        if int(v.max()) > _MAX_ABS_REPORT or int(v.min()) < -_MAX_ABS_REPORT:
            raise ValueError("ReportHistogram values must have magnitude <= 2**53")
        if int(c.min()) < 1:
            i = int(np.argmin(c))
            raise ValueError(f"ReportHistogram counts must be >= 1, got counts[{i}] = {c[i]}")
    v = v.astype(np.int64, copy=False)
    c = c.astype(np.int64, copy=False)
    if v.size > 1 and not bool(np.all(v[1:] > v[:-1])):
        i = int(np.flatnonzero(v[1:] <= v[:-1])[0])
        raise ValueError(
            f"ReportHistogram values must be strictly increasing, got values[{i}] = {v[i]} "
            f">= values[{i + 1}] = {v[i + 1]}"
        )
    return v, c


@dataclass(frozen=True, eq=False)
class ReportHistogram:
    r"""Distinct noisy reports and their integer counts, with the release's noise parameters.

    Parameters
    ----------
    values : array_like of int, shape (D,)
        The distinct reports, strictly increasing, magnitude <= 2**53.
    counts : array_like of int, shape (D,)
        counts[i] = number of reports equal to values[i]; each >= 1.
    epsilon : float
        Privacy parameter of every report. Must be in (0, inf).
    sensitivity : float, default 1
        Sensitivity the reports were released with (1 for degrees). Must be in (0, inf).

    Notes
    -----
    A statistic of the form :math:`\sum_v f(y_v)` equals :math:`\sum_u N(u) f(u)` over the D
    distinct values; the curator's symmetric statistics (order statistics, the entropy) are
    functions of the multiset of reports, i.e. of (values, counts) and n. Merging adds integer
    counts, which is exact and associative: the histogram of a concatenation is the merge of
    the histograms of its parts, so nothing computed from it depends on how the reports were
    chunked. Post-processing of the reports, hence no privacy cost.

    Examples
    --------
    >>> h = ReportHistogram([0, 2], [5, 1], epsilon=0.5)
    >>> h.n, h.n_distinct, h.to_reports()
    (6, 2, array([0, 0, 0, 0, 0, 2]))
    """

    values: NDArray[np.int64]
    counts: NDArray[np.int64]
    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        v, c = _check_counts_values(self.values, self.counts)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "counts", c)
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_sensitivity(self.sensitivity))

    # ---- construction --------------------------------------------------------------------

    @classmethod
    def from_reports(cls, y: ArrayLike, epsilon: float, sensitivity: float = 1.0) -> ReportHistogram:
        """Histogram of integer reports ``y`` (every entry of any shape is one report).

        Counting is exact: ``numpy.bincount`` over cache-sized chunks shifted by min(y) when
        the range max - min is moderate (<= 2^24 and <= 4 n), a sort otherwise.

        Raises
        ------
        TypeError, ValueError
            Non-integer reports or reports beyond 2**53 in magnitude (as every estimator).
        """
        eps = check_epsilon(epsilon)
        sens = check_sensitivity(sensitivity)
        values, counts = _count(y)
        return cls._trusted(values, counts, eps, sens)

    @classmethod
    def _trusted(cls, values: NDArray[np.int64], counts: NDArray[np.int64], epsilon: float,
                 sensitivity: float) -> ReportHistogram:  # fmt: skip
        """Construct from arrays known to be valid (skips the checks of __post_init__)."""
        obj = object.__new__(cls)
        fields = {"values": values, "counts": counts, "epsilon": epsilon, "sensitivity": sensitivity}
        for name, val in fields.items():
            object.__setattr__(obj, name, val)
        return obj

    @classmethod
    def from_release(cls, release: ReleasedValues) -> ReportHistogram:
        """Histogram of one released quantity (its values, epsilon and sensitivity)."""
        if not isinstance(release, ReleasedValues):
            raise TypeError(f"release must be ReleasedValues, got {type(release).__name__}")
        return cls.from_reports(release.values, release.epsilon, release.sensitivity)

    @classmethod
    def empty(cls, epsilon: float, sensitivity: float = 1.0) -> ReportHistogram:
        """The histogram of no reports (the neutral element of :meth:`merge`)."""
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z.copy(), epsilon, sensitivity)

    # ---- properties ----------------------------------------------------------------------

    @property
    def n(self) -> int:
        """Number of reports (sum of the counts)."""
        return int(self.counts.sum())

    @property
    def n_distinct(self) -> int:
        """Number of distinct reports D."""
        return int(self.values.size)

    @property
    def mechanism(self) -> DiscreteLaplace:
        """The mechanism the reports were released with."""
        return DiscreteLaplace(epsilon=self.epsilon, sensitivity=self.sensitivity)

    def __repr__(self) -> str:
        return (
            f"ReportHistogram(n={self.n}, n_distinct={self.n_distinct}, epsilon={self.epsilon!r}, "
            f"sensitivity={self.sensitivity!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReportHistogram):
            return NotImplemented
        return (
            self.epsilon == other.epsilon
            and self.sensitivity == other.sensitivity
            and np.array_equal(self.values, other.values)
            and np.array_equal(self.counts, other.counts)
        )

    __hash__ = None  # type: ignore[assignment]

    # ---- operations ----------------------------------------------------------------------

    def merge(self, other: ReportHistogram) -> ReportHistogram:
        """The histogram of the reports of both (integer counts add: exact, order-free).

        Raises
        ------
        TypeError
            ``other`` is not a ReportHistogram.
        ValueError
            The two have different epsilon or sensitivity (reports of different releases).
        """
        return merge_histograms([self, other])

    def to_reports(self) -> NDArray[np.int64]:
        """The reports, sorted (``numpy.repeat(values, counts)``)."""
        return np.repeat(self.values, self.counts)

    def weighted_sum(self, terms: ArrayLike) -> float:
        r"""sum_i counts[i] * terms[i], correctly rounded: the sum of a per-report term over all reports.

        Parameters
        ----------
        terms : array_like of float, shape (D,)
            f(values[i]) for some per-report function f.

        Returns
        -------
        float
            :math:`\sum_v f(y_v)` rounded once. Each product N(u) f(u) is split exactly into
            two floats (Dekker's TwoProduct; N(u) < 2^53 is exact in float64) and the 2D parts
            are added by ``math.fsum``, so the result equals ``math.fsum`` over the n
            per-report terms, bit for bit. Non-finite terms give the float sum (inf/nan).

        Examples
        --------
        >>> ReportHistogram([1, 2], [3, 1], epsilon=1.0).weighted_sum([0.1, 0.7])
        1.0
        """
        t = np.asarray(terms, dtype=np.float64)
        if t.shape != self.values.shape:
            raise ValueError(
                f"terms must have one entry per distinct value ({self.values.size}), got shape {t.shape}"
            )
        return _exact_dot(self.counts, t)

    def power_sum(self, j: int) -> int:
        """sum_v y_v^j over all reports, as an exact Python integer (j >= 0).

        Examples
        --------
        >>> ReportHistogram([-1, 3], [2, 1], epsilon=1.0).power_sum(2)
        11
        """
        j = check_nonnegative_int(j, "j")
        v, c = self.values, self.counts
        if v.size == 0:
            return 0
        top = max(abs(int(v[0])), abs(int(v[-1])))
        if top**j * self.n < 2**62:  # the int64 dot product cannot overflow
            return int(np.dot(c, v**j))
        return sum(int(m) * int(u) ** j for u, m in zip(v.tolist(), c.tolist(), strict=True))


def _exact_dot(counts: NDArray[np.int64], t: NDArray[np.float64]) -> float:
    if t.size == 0:
        return 0.0
    if t.size <= _SMALL:
        return _exact_dot_small(counts.tolist(), t.tolist())
    a = counts.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.all(np.isfinite(t)):
            return float(np.dot(a, t))
        if float(np.max(np.abs(t))) >= _SPLIT_SAFE or int(counts.max()) >= 2**53:
            pairs = zip(t.tolist(), counts.tolist(), strict=True)
            return float(sum((Fraction(x) * int(m) for x, m in pairs), Fraction(0)))
        p = a * t
        # Veltkamp splits: x = xh + xl with 26-bit halves, so every partial product is exact
        ca = _SPLITTER * a
        ah = ca - (ca - a)
        al = a - ah
        ct = _SPLITTER * t
        th = ct - (ct - t)
        tl = t - th
        e = ((ah * th - p) + ah * tl + al * th) + al * tl
    return math.fsum(np.concatenate([p, e]).tolist())


def _exact_dot_small(counts: list[int], terms: list[float]) -> float:
    """_exact_dot for a few values, in Python floats (same TwoProduct, no array overhead)."""
    if not all(math.isfinite(x) for x in terms):
        return math.fsum(m * x for m, x in zip(counts, terms, strict=True))
    parts = []
    for m, x in zip(counts, terms, strict=True):
        if abs(x) >= _SPLIT_SAFE or m >= 2**53:
            return float(sum((Fraction(x) * m for m, x in zip(counts, terms, strict=True)), Fraction(0)))
        a = float(m)
        p = a * x
        ca = _SPLITTER * a
        ah = ca - (ca - a)
        al = a - ah
        cx = _SPLITTER * x
        xh = cx - (cx - x)
        xl = x - xh
        parts.append(p)
        parts.append(((ah * xh - p) + ah * xl + al * xh) + al * xl)
    return math.fsum(parts)


def _count(y: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Distinct values and counts of integer reports (validated as every estimator does)."""
    arr = y if isinstance(y, np.ndarray) and y.dtype.kind in "i" else check_integer_reports(y)
    flat = np.ascontiguousarray(arr).reshape(-1)
    n = flat.size
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z.copy()
    lo, hi = int(flat.min()), int(flat.max())
    if hi > _MAX_ABS_REPORT or lo < -_MAX_ABS_REPORT:
        check_integer_reports(flat)  # raises, naming the first offending report
    R = hi - lo + 1
    if n <= _SMALL:
        return _sort_count(flat)
    if R <= _BINCOUNT_MAX_RANGE and R <= max(_BINCOUNT_RANGE_PER_REPORT * n, 1 << 16):
        counts = _bincount_shifted(flat, lo, R)
        present = np.flatnonzero(counts)
        return (present + lo).astype(np.int64), counts[present]
    return _sort_count(flat)


def _bincount_shifted(flat: NDArray[Any], lo: int, R: int) -> NDArray[np.int64]:
    """counts[j] = #{y = lo + j}, j < R, by bincount over chunks (one shifted copy per chunk)."""
    n = flat.size
    step = max(_CHUNK, 4 * R)  # the per-chunk table of R entries is amortised
    counts = np.zeros(R, dtype=np.int64)
    tmp = np.empty(min(step, n), dtype=np.int64)
    for start in range(0, n, step):
        t = tmp[: min(step, n - start)]
        np.subtract(flat[start : start + t.size], lo, out=t, casting="unsafe")
        counts += np.bincount(t, minlength=R)
    return counts


def _sort_count(flat: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Distinct values and counts by a sort and a neighbour comparison (any range)."""
    s = np.sort(flat.astype(np.int64, copy=False))
    first = np.empty(s.size, dtype=bool)
    first[0] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    idx = np.flatnonzero(first)
    counts = np.diff(np.append(idx, s.size)).astype(np.int64)
    return s[idx], counts


def merge_histograms(histograms: Iterable[ReportHistogram]) -> ReportHistogram:
    """Merge histograms of one release (same epsilon and sensitivity): integer counts add.

    Exact, commutative and associative, so any chunking and merge order give the same result.

    Examples
    --------
    >>> parts = [ReportHistogram.from_reports(c, epsilon=1.0) for c in ([1, 2], [2], [5, 1])]
    >>> merge_histograms(parts) == ReportHistogram.from_reports([1, 2, 2, 5, 1], epsilon=1.0)
    True
    """
    hs = list(histograms)
    if not hs:
        raise ValueError("merge_histograms needs at least one histogram (epsilon is unknown otherwise)")
    for i, h in enumerate(hs):
        if not isinstance(h, ReportHistogram):
            raise TypeError(f"histograms[{i}] must be a ReportHistogram, got {type(h).__name__}")
        if h.epsilon != hs[0].epsilon or h.sensitivity != hs[0].sensitivity:
            raise ValueError(
                "cannot merge histograms of different releases: histograms[0] has "
                f"epsilon={hs[0].epsilon!r}, sensitivity={hs[0].sensitivity!r}, histograms[{i}] has "
                f"epsilon={h.epsilon!r}, sensitivity={h.sensitivity!r}"
            )
    if len(hs) == 1:
        return hs[0]
    vals = np.concatenate([h.values for h in hs])
    cnts = np.concatenate([h.counts for h in hs])
    if vals.size == 0:
        return hs[0]
    order = np.argsort(vals, kind="stable")
    v = vals[order]
    c = cnts[order]
    first = np.empty(v.size, dtype=bool)
    first[0] = True
    np.not_equal(v[1:], v[:-1], out=first[1:])
    idx = np.flatnonzero(first)
    return ReportHistogram._trusted(v[idx], np.add.reduceat(c, idx), hs[0].epsilon, hs[0].sensitivity)


def as_report_histogram(
    source: Any, epsilon: float | None = None, sensitivity: float = 1.0
) -> ReportHistogram:
    """The report histogram of a curator input.

    Parameters
    ----------
    source : NodeReports, ReleasedValues, ReportHistogram or array_like of int
        NodeReports: its degree release. A histogram is returned unchanged. An array needs
        ``epsilon`` (and ``sensitivity``, default 1).
    epsilon : float, optional
        Privacy parameter of array reports; must not be given for the other sources.
    sensitivity : float, default 1
        Sensitivity of array reports.

    Examples
    --------
    >>> as_report_histogram([4, 4, 1], epsilon=2.0).counts
    array([1, 2])
    """
    if isinstance(source, ReportHistogram):
        return source
    if isinstance(source, (NodeReports, ReleasedValues)):
        if epsilon is not None:
            raise ValueError("epsilon must not be given with NodeReports or ReleasedValues (they carry it)")
        rel = source.degrees if isinstance(source, NodeReports) else source
        return ReportHistogram.from_release(rel)
    if epsilon is None:
        raise TypeError(
            "reports given as an array need epsilon (and sensitivity): "
            f"as_report_histogram(y, epsilon=...), got {type(source).__name__} without epsilon"
        )
    return ReportHistogram.from_reports(source, epsilon, sensitivity)
