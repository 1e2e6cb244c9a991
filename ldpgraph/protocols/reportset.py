r"""Validating a report set chunk by chunk, with memory independent of the number of rows.

:class:`ReportAccumulator` receives the rows of a report set in chunks (:class:`ReportChunk`:
typed columns plus where they came from) and keeps only what the curator needs:

* per released quantity, the **histogram** of its values (distinct value -> integer count),
  the sufficient statistic of every degree estimate;
* per quantity, the set of nodes that reported it (a bitmap over the node-id range, one byte
  per id), to refuse duplicates and, at the end, missing rows and missing nodes;
* the epsilon, sensitivity, protocol, version and round, with the file and row that first
  fixed them, to name the first row that disagrees.

Every check the in-memory :func:`~ldpgraph.protocols.ingest.reports_from_records` makes is
made here too, each error naming the file and row. Accumulators **merge** exactly: counts add
as integers and node sets are disjoint unions, so the summary — and every estimate computed
from it — does not depend on how the rows were chunked or in which order the chunks were
merged (the basis of the Dask path, :mod:`ldpgraph.run.reportdask`). Pure: arrays in, arrays out;
files are read by :mod:`ldpgraph.run.reportfiles`.

Memory: O(number of distinct values + node-id range) per quantity, whatever the number of rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .report_histogram import ReportHistogram, merge_histograms
from .reports import DEGREE_PROTOCOL, MAX_ABS_VALUE, PROTOCOLS, expected_sensitivity
from .screening import PublicBounds, admissible_range

__all__ = [
    "ReportChunk",
    "ReportAccumulator",
    "QuantitySummary",
    "ReportSetSummary",
    "MAX_NODE_ID_RANGE",
    "STATISTICS",
    "estimate_statistic",
]

#: widest range of node ids (max - min + 1) one quantity's node set may span (one byte per id)
MAX_NODE_ID_RANGE = 2**32
_MAX_LISTED = 10


@dataclass(frozen=True)
class ReportChunk:
    """Consecutive rows of one report source, as typed columns.

    Attributes
    ----------
    source : str
        Where the rows come from (a file name), used in error messages.
    first_row : int
        0-based index, within ``source``, of the chunk's first row.
    node, round, value, protocol_version : ndarray of int64
    epsilon, sensitivity : ndarray of float64
    quantity, protocol : ndarray of int
        Codes into ``quantity_names`` / ``protocol_names`` (e.g. Arrow dictionary indices).
    quantity_names, protocol_names : sequence of str
    line_offset : int, optional
        For text files, line number = row + line_offset (2 for CSV with a header, 1 for JSONL).
    """

    source: str
    first_row: int
    node: NDArray[np.int64]
    round: NDArray[np.int64]
    quantity: NDArray[np.integer]
    quantity_names: Sequence[str]
    value: NDArray[np.int64]
    epsilon: NDArray[np.float64]
    sensitivity: NDArray[np.float64]
    protocol: NDArray[np.integer]
    protocol_names: Sequence[str]
    protocol_version: NDArray[np.int64]
    line_offset: int | None = None

    def __len__(self) -> int:
        return int(self.node.size)

    def where(self, i: int) -> str:
        """'FILE row R (line L)' for the chunk's i-th row."""
        row = self.first_row + int(i)
        line = "" if self.line_offset is None else f" (line {row + self.line_offset})"
        return f"{self.source} row {row}{line}"

    def rows_text(self, idx: NDArray[np.integer] | Sequence[int]) -> str:
        idx = [int(i) for i in idx]
        shown = ", ".join(str(self.first_row + i) for i in idx[:_MAX_LISTED])
        more = f" and {len(idx) - _MAX_LISTED} more" if len(idx) > _MAX_LISTED else ""
        first = self.where(idx[0])
        return f"{self.source} row{'s' if len(idx) > 1 else ''} {shown}{more} (first: {first})"


class _Rows:
    """The rows of a chunk one quantity occupies: all of them (no copy) or an index array."""

    __slots__ = ("idx",)

    def __init__(self, idx: NDArray[np.integer] | None = None) -> None:
        self.idx = idx

    def take(self, a: NDArray) -> NDArray:
        return a if self.idx is None else a[self.idx]

    def where(self, mask: NDArray[np.bool_]) -> NDArray[np.integer]:
        return np.flatnonzero(mask) if self.idx is None else self.idx[mask]

    def __getitem__(self, i: int) -> int:
        return int(i) if self.idx is None else int(self.idx[i])


class _NodeSet:
    """A set of node ids as a byte map over [offset, offset + len(bits)), with disjoint merges."""

    __slots__ = ("offset", "bits", "count")

    def __init__(self) -> None:
        self.offset = 0
        self.bits = np.zeros(0, dtype=np.bool_)
        self.count = 0

    @property
    def end(self) -> int:
        return self.offset + self.bits.size

    def _cover(self, lo: int, hi: int, what: str) -> None:
        """Grow the map to hold ids lo..hi (inclusive)."""
        if self.bits.size == 0:
            new_lo, new_end = lo, hi + 1
        else:
            new_lo, new_end = min(lo, self.offset), max(hi + 1, self.end)
            if new_lo == self.offset and new_end == self.end:
                return
            if new_end > self.end:  # ascending ids are the common case: grow geometrically
                new_end = max(new_end, self.end + self.bits.size // 2)
        if new_end - new_lo > MAX_NODE_ID_RANGE:
            raise ValueError(
                f"{what}: node ids span [{new_lo}, {new_end - 1}], wider than 2**32; renumber the nodes "
                "0..n-1 to curate from files"
            )
        bits = np.zeros(new_end - new_lo, dtype=np.bool_)
        if self.bits.size:
            bits[self.offset - new_lo : self.end - new_lo] = self.bits
        self.offset, self.bits = new_lo, bits

    def add(self, ids: NDArray[np.int64], chunk: ReportChunk, rows: _Rows, quantity: str) -> None:
        if ids.size == 0:
            return
        sorted_ids = ids.size == 1 or bool(np.all(ids[1:] > ids[:-1]))
        if not sorted_ids:
            order = np.argsort(ids, kind="stable")
            s = ids[order]
            dup = np.flatnonzero(s[1:] == s[:-1])
            if dup.size:
                later = int(order[dup[0] + 1])
                earlier = int(order[dup[0]])
                raise ValueError(
                    f"duplicate {quantity} reports for node {int(s[dup[0]])}: {chunk.where(rows[later])} "
                    f"repeats {chunk.where(rows[earlier])}"
                )
            lo, hi = int(s[0]), int(s[-1])
        else:
            lo, hi = int(ids[0]), int(ids[-1])
        if lo < 0:
            raise ValueError(
                f"node ids must be non-negative integers: {chunk.rows_text(rows.where(ids < 0))}"
            )
        self._cover(lo, hi, chunk.source)
        if sorted_ids and hi - lo == ids.size - 1:  # consecutive ids (the common case): slices
            window = self.bits[lo - self.offset : hi - self.offset + 1]
            if window.any():
                i = int(np.flatnonzero(window)[0])
                self._repeat(quantity, ids, i, chunk, rows)
            window[:] = True
        else:
            pos = ids - self.offset
            hit = self.bits[pos]
            if hit.any():
                self._repeat(quantity, ids, int(np.flatnonzero(hit)[0]), chunk, rows)
            self.bits[pos] = True
        self.count += int(ids.size)

    @staticmethod
    def _repeat(quantity: str, ids: NDArray[np.int64], i: int, chunk: ReportChunk, rows: _Rows) -> None:
        raise ValueError(
            f"duplicate {quantity} reports for node {int(ids[i])}: {chunk.where(rows[i])} repeats an "
            "earlier report of the file set"
        )

    def merge(self, other: _NodeSet, quantity: str, sources: str) -> None:
        if other.count == 0:
            return
        if self.count == 0:
            self.offset, self.bits, self.count = other.offset, other.bits.copy(), other.count
            return
        lo, hi = max(self.offset, other.offset), min(self.end, other.end)
        if lo < hi:
            both = (
                self.bits[lo - self.offset : hi - self.offset]
                & other.bits[lo - other.offset : hi - other.offset]
            )
            if both.any():
                node = lo + int(np.flatnonzero(both)[0])
                raise ValueError(f"duplicate {quantity} reports for node {node} (in {sources})")
        self._cover(other.offset, other.end - 1, sources)
        self.bits[other.offset - self.offset : other.end - self.offset] |= other.bits
        self.count += other.count


@dataclass
class _Quantity:
    name: str
    epsilon: float
    sensitivity: float
    first: str  # where epsilon was fixed
    lo: int | None = None
    hi: int | None = None
    nodes: _NodeSet = field(default_factory=_NodeSet)
    hist: ReportHistogram | None = None
    n_outside: int = 0
    pending: list[ReportHistogram] = field(default_factory=list)

    def add_values(self, v: NDArray[np.int64]) -> None:
        self.pending.append(ReportHistogram.from_reports(v, self.epsilon, self.sensitivity))
        if len(self.pending) >= 16:
            self.flush()

    def flush(self) -> None:
        parts = self.pending if self.hist is None else [self.hist, *self.pending]
        if parts:
            self.hist = merge_histograms(parts)
        self.pending = []

    def histogram(self) -> ReportHistogram:
        self.flush()
        return ReportHistogram.empty(self.epsilon, self.sensitivity) if self.hist is None else self.hist


@dataclass(frozen=True)
class QuantitySummary:
    """The validated histogram of one released quantity.

    Attributes
    ----------
    name : str
    histogram : ReportHistogram
        Distinct reported values and how many nodes sent each, with epsilon and sensitivity.
    n_outside : int
        Reports outside the admissible range (clipped or rejected; 0 without public bounds).
    admissible : tuple of int, optional
        The admissible range [lo, hi] when public bounds were given.
    """

    name: str
    histogram: ReportHistogram
    n_outside: int
    admissible: tuple[int, int] | None

    @property
    def epsilon(self) -> float:
        return self.histogram.epsilon

    @property
    def sensitivity(self) -> float:
        return self.histogram.sensitivity

    @property
    def n_reports(self) -> int:
        """Number of reports kept (rejected ones excluded)."""
        return self.histogram.n

    def to_reports(self) -> NDArray[np.int64]:
        """The kept reports in increasing order (memory O(n): for tests and small sets)."""
        return self.histogram.to_reports()


@dataclass(frozen=True)
class ReportSetSummary:
    """Everything the curator needs from a validated report set.

    Attributes
    ----------
    quantities : dict of str to QuantitySummary
    n_nodes : int
        Number of distinct nodes that sent at least one report.
    n_rows : int
        Rows read.
    protocol : str
    round : int
    d_max : int, optional
    outliers : str
        ``"none"`` (no public bounds), ``"clip"`` or ``"reject"``.
    """

    quantities: dict[str, QuantitySummary]
    n_nodes: int
    n_rows: int
    protocol: str
    round: int
    d_max: int | None
    outliers: str


class ReportAccumulator:
    r"""Streaming validator of a report set: add chunks, merge accumulators, then summarise.

    Parameters
    ----------
    protocol : str, default ``"degree"``
        The protocol the rows must belong to (with its version from
        :data:`~ldpgraph.protocols.reports.PROTOCOLS`).
    round : int, optional
        The round the rows must belong to; default: the first row's, shared by all.
    d_max : int, optional
        The public degree bound, needed to check the sensitivity of ``kstar_<k>`` rows.
    bounds : PublicBounds, optional
        Public bounds for poisoning screening (:mod:`ldpgraph.protocols.screening`).
    outliers : {"clip", "reject", "raise"}, default "clip"
        What to do with a report outside its admissible range (only with ``bounds``).
    version : int, optional
        The rows' protocol version, given by a layer protocol whose rows are degree releases
        (:mod:`~ldpgraph.protocols.degrees.degree`, :mod:`~ldpgraph.protocols.degrees.local_kstars`): then
        ``protocol`` is its name. Default: the ``degree`` protocol's version.

    Examples
    --------
    >>> import numpy as np
    >>> def chunk(nodes, values):
    ...     n = len(nodes)
    ...     return ReportChunk("a.csv", 0, np.array(nodes), np.ones(n, np.int64), np.zeros(n, np.int8),
    ...                        ["degree"], np.array(values), np.full(n, 1.0), np.full(n, 1.0),
    ...                        np.zeros(n, np.int8), ["degree"], np.ones(n, np.int64))
    >>> acc = ReportAccumulator()
    >>> acc.add(chunk([0, 1, 2], [3, 3, -1]))
    >>> s = acc.summary(expected_nodes=3)
    >>> s.quantities["degree"].histogram.values, s.quantities["degree"].histogram.counts
    (array([-1,  3]), array([1, 2]))
    """

    def __init__(
        self,
        *,
        protocol: str = DEGREE_PROTOCOL,
        round: int | None = None,
        d_max: int | None = None,
        bounds: PublicBounds | None = None,
        outliers: Literal["clip", "reject", "raise"] = "clip",
        version: int | None = None,
    ) -> None:
        if version is None and protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {sorted(PROTOCOLS)}, got {protocol!r}")
        if version is None and protocol != DEGREE_PROTOCOL:
            raise ValueError(
                f"rows of {protocol!r} are curated by their protocol's rounds (ldpgraph.run.files."
                "accumulate_files; ldpgraph curate --protocol), not as degree-protocol reports"
            )
        if outliers not in ("clip", "reject", "raise"):
            raise ValueError(f"outliers must be 'clip', 'reject' or 'raise', got {outliers!r}")
        if bounds is not None and not isinstance(bounds, PublicBounds):
            raise TypeError(f"bounds must be PublicBounds or None, got {type(bounds).__name__}")
        self.protocol = protocol
        self.version = PROTOCOLS[protocol] if version is None else int(version)
        self.round = round
        self._round_where = "the requested round" if round is not None else None
        self.d_max = d_max
        self.bounds = bounds
        self.outliers = outliers
        self.n_rows = 0
        self._q: dict[str, _Quantity] = {}
        self.sources: list[str] = []

    # ---------------------------------------------------------------------------- add

    def add(self, chunk: ReportChunk) -> None:
        """Validate one chunk and fold it in (an error means the whole set is refused)."""
        n = len(chunk)
        if chunk.source not in self.sources:
            self.sources.append(chunk.source)
        if n == 0:
            return
        self._check_protocol(chunk)
        self._check_round(chunk)
        if int(chunk.value.max()) > MAX_ABS_VALUE or int(chunk.value.min()) < -MAX_ABS_VALUE:
            big = (chunk.value > MAX_ABS_VALUE) | (chunk.value < -MAX_ABS_VALUE)
            raise ValueError(
                f"value must have magnitude <= 2**53 (no truthful node sends more): "
                f"{chunk.rows_text(np.flatnonzero(big))}"
            )
        codes = np.asarray(chunk.quantity)
        used = np.unique(codes) if len(chunk.quantity_names) > 1 else np.zeros(1, dtype=np.int64)
        staged = []
        for code in used.tolist():
            name = str(chunk.quantity_names[code])
            rows = _Rows(np.flatnonzero(codes == code) if used.size > 1 else None)
            staged.append(self._stage(chunk, name, rows))
        for q, ids, rows, keep_values in staged:  # commit only after every check passed
            q.nodes.add(ids, chunk, rows, q.name)
            if keep_values is not None:
                q.add_values(keep_values)
        self.n_rows += n

    def _check_protocol(self, chunk: ReportChunk) -> None:
        codes = np.asarray(chunk.protocol)
        for code, name in enumerate(chunk.protocol_names):
            if name != self.protocol:
                rows = np.flatnonzero(codes == code)
                if rows.size:
                    known = PROTOCOLS.get(str(name))
                    what = "an unknown protocol" if known is None else "another protocol"
                    raise ValueError(
                        f"rows of {what} {name!r}, expected {self.protocol!r}: {chunk.rows_text(rows)}"
                    )
        wrong = np.asarray(chunk.protocol_version) != self.version
        if wrong.any():
            rows = np.flatnonzero(wrong)
            got = int(chunk.protocol_version[rows[0]])
            raise ValueError(
                f"protocol {self.protocol!r} version {got} in {chunk.rows_text(rows)}: this package reads "
                f"version {self.version} (a file from another protocol version)"
            )

    def _check_round(self, chunk: ReportChunk) -> None:
        r = np.asarray(chunk.round)
        if self.round is None:
            if int(r[0]) < 1:
                raise ValueError(f"round must be an integer >= 1: {chunk.rows_text([0])}")
            self.round = int(r[0])
            self._round_where = chunk.where(0)
        other = r != self.round
        if other.any():
            rows = np.flatnonzero(other)
            raise ValueError(
                f"reports must all belong to round {self.round} (as {self._round_where}); round "
                f"{int(r[rows[0]])} in {chunk.rows_text(rows)}"
            )

    def _stage(self, chunk: ReportChunk, name: str, rows: _Rows):
        q = self._q.get(name)
        sens = rows.take(chunk.sensitivity)
        eps = rows.take(chunk.epsilon)
        if q is None:
            if not (math.isfinite(float(eps[0])) and eps[0] > 0):
                raise ValueError(f"epsilon must be finite and > 0: {chunk.rows_text([rows[0]])}")
            try:
                want = expected_sensitivity(name, self.d_max)  # raises for unknown quantities
            except ValueError as exc:
                raise ValueError(f"{exc}: {chunk.rows_text([rows[0]])}") from None
            q = _Quantity(name, float(eps[0]), want, chunk.where(rows[0]))
            if self.bounds is not None:
                q.lo, q.hi = admissible_range(
                    name, epsilon=q.epsilon, sensitivity=want, bounds=self.bounds, d_max=self.d_max
                )
            self._q[name] = q
        wrong = sens != q.sensitivity
        if wrong.any():
            raise ValueError(
                f"{name} must be released with sensitivity {q.sensitivity:g}, declared otherwise in "
                f"{chunk.rows_text(rows.where(wrong))}"
            )
        mixed = eps != q.epsilon
        if mixed.any():
            bad = mixed & ~(np.isfinite(eps) & (eps > 0))
            if bad.any():
                raise ValueError(f"epsilon must be finite and > 0: {chunk.rows_text(rows.where(bad))}")
            where = rows.where(mixed)
            odd = float(eps[np.flatnonzero(mixed)[0]])
            raise ValueError(
                f"{name} was released with mixed epsilon ({q.first} has {q.epsilon:g}, "
                f"{chunk.where(where[0])} has {odd:g}): {chunk.rows_text(where)}; every node of a run "
                "must use one budget"
            )
        v = rows.take(chunk.value)
        ids = rows.take(chunk.node)
        if q.lo is not None:
            outside = (v < q.lo) | (v > q.hi)
            n_out = int(np.count_nonzero(outside))
            if n_out:
                if self.outliers == "raise":
                    where = chunk.rows_text(rows.where(outside))
                    raise ValueError(
                        f"{name} outside the admissible range [{q.lo}, {q.hi}] (a truthful node sends such a "
                        f"value with probability <= {self.bounds.alpha:g}): {where}"
                    )
                q.n_outside += n_out
                v = np.clip(v, q.lo, q.hi) if self.outliers == "clip" else v[~outside]
        return q, ids, rows, v

    # ---------------------------------------------------------------------------- merge

    def merge(self, other: ReportAccumulator) -> ReportAccumulator:
        """Fold ``other`` (rows of other chunks) into this accumulator, exactly; returns self."""
        if not isinstance(other, ReportAccumulator):
            raise TypeError(f"can only merge a ReportAccumulator, got {type(other).__name__}")
        for attr in ("protocol", "d_max", "outliers"):
            if getattr(self, attr) != getattr(other, attr):
                raise ValueError(f"cannot merge accumulators with different {attr}")
        if self.bounds != other.bounds:
            raise ValueError("cannot merge accumulators with different public bounds")
        if other.round is not None:
            if self.round is None:
                self.round, self._round_where = other.round, other._round_where
            elif other.round != self.round:
                raise ValueError(
                    f"reports must all belong to round {self.round} (as {self._round_where}); round "
                    f"{other.round} in {other._round_where}"
                )
        where = ", ".join(self.sources + [s for s in other.sources if s not in self.sources])
        for name, oq in other._q.items():
            oq.flush()
            q = self._q.get(name)
            if q is None:
                q = _Quantity(name, oq.epsilon, oq.sensitivity, oq.first, oq.lo, oq.hi)
                self._q[name] = q
            elif q.epsilon != oq.epsilon:
                raise ValueError(
                    f"{name} was released with mixed epsilon: {q.first} has {q.epsilon:g}, "
                    f"{oq.first} has {oq.epsilon:g}"
                )
            q.nodes.merge(oq.nodes, name, where)
            if oq.hist is not None:
                q.pending.append(oq.hist)
            q.flush()
            q.n_outside += oq.n_outside
        self.sources += [s for s in other.sources if s not in self.sources]
        self.n_rows += other.n_rows
        return self

    # ---------------------------------------------------------------------------- summary

    def summary(
        self, *, expected_nodes: int | Sequence[int] | NDArray[np.integer] | None = None
    ) -> ReportSetSummary:
        """Final whole-set checks (missing rows, missing or unexpected nodes) and the histograms.

        Parameters
        ----------
        expected_nodes : int or sequence of int, optional
            The public node set: an int n means the nodes 0..n-1.
        """
        if self.n_rows == 0:
            where = ", ".join(self.sources) if self.sources else "no files"
            raise ValueError(f"no reports received ({where})")
        for q in self._q.values():
            q.flush()
        qs = list(self._q.values())
        if len(qs) == 1:
            union = qs[0].nodes  # no copy: one quantity's node set is the union
        else:
            union = _NodeSet()
            for q in qs:
                union._cover(q.nodes.offset, q.nodes.end - 1, "node ids")
                union.bits[q.nodes.offset - union.offset : q.nodes.end - union.offset] |= q.nodes.bits
        n_union = int(np.count_nonzero(union.bits))
        if expected_nodes is not None:
            exp = _NodeSet()
            if isinstance(expected_nodes, (int, np.integer)) and not isinstance(expected_nodes, bool):
                n_exp = int(expected_nodes)
                if n_exp < 1:
                    raise ValueError(f"expected_nodes must be >= 1, got {n_exp}")
                # nodes 0..n-1: the union must have n ids, all below n (no byte map of the set)
                below = (
                    n_union
                    if union.end <= n_exp
                    else int(np.count_nonzero(union.bits[: max(n_exp - union.offset, 0)]))
                )
                ok = below == n_exp and n_union == n_exp
                if not ok:
                    exp.offset, exp.bits = 0, np.ones(n_exp, dtype=np.bool_)
            else:
                ids = np.asarray(expected_nodes)
                if ids.dtype.kind not in "iu" or ids.ndim != 1 or ids.size == 0:
                    raise TypeError(
                        "expected_nodes must be an int n (nodes 0..n-1) or a 1-d array of node ids"
                    )
                ids = np.unique(ids.astype(np.int64))
                if ids[0] < 0:
                    raise ValueError(f"expected_nodes must be non-negative, got {int(ids[0])}")
                exp._cover(int(ids[0]), int(ids[-1]), "expected_nodes")
                exp.bits[ids - exp.offset] = True
                ok = False
            if not ok:
                absent = _difference(exp, union)
                if absent.size:
                    raise ValueError(f"{absent.size} expected node(s) sent no report: {_ids_text(absent)}")
                extra = _difference(union, exp)
                if extra.size:
                    raise ValueError(
                        f"reports from {extra.size} node(s) outside the expected node set: {_ids_text(extra)}"
                    )
        n_nodes = n_union
        out = {}
        for name, q in self._q.items():
            if q.nodes.count != n_nodes:
                missing = _difference(union, q.nodes)
                raise ValueError(f"{name} is missing for {missing.size} node(s): {_ids_text(missing)}")
            out[name] = QuantitySummary(
                name=name,
                histogram=q.histogram(),
                n_outside=q.n_outside,
                admissible=None if q.lo is None else (q.lo, q.hi),
            )
        outliers = "none" if self.bounds is None else self.outliers
        return ReportSetSummary(
            out, n_nodes, self.n_rows, self.protocol, int(self.round), self.d_max, outliers
        )


def _difference(a: _NodeSet, b: _NodeSet) -> NDArray[np.int64]:
    """Ids in a but not in b (sorted), comparing the byte maps over a's range."""
    mask = a.bits.copy()
    lo, hi = max(a.offset, b.offset), min(a.end, b.end)
    if lo < hi:
        mask[lo - a.offset : hi - a.offset] &= ~b.bits[lo - b.offset : hi - b.offset]
    if not mask.any():
        return np.zeros(0, dtype=np.int64)
    return (np.flatnonzero(mask) + a.offset).astype(np.int64)


def _ids_text(ids: NDArray[np.int64]) -> str:
    shown = ", ".join(str(int(v)) for v in ids[:_MAX_LISTED])
    return shown + (f" and {ids.size - _MAX_LISTED} more" if ids.size > _MAX_LISTED else "")


#: statistics the curator computes from a report-set summary, and whether they take k
STATISTICS = {
    "kstars": True,
    "edges": False,
    "degree_moment": True,
    "degree_mean": False,
    "degree_variance": False,
    "max_degree": False,
    "degree_entropy": False,
    "kstars_from_counts": True,
}


def estimate_statistic(summary: ReportSetSummary, statistic: str, k: int | None = None):
    """The curator's estimate of ``statistic`` from a validated summary (same as in memory).

    Every degree statistic is computed by :mod:`~ldpgraph.protocols.curator` from the degree
    histogram, which is exactly the histogram of the in-memory reports, so the estimate equals
    the in-memory one bit for bit. ``kstars_from_counts`` sums the ``kstar_<k>`` values exactly.

    Examples
    --------
    >>> from ldpgraph.protocols import DegreeRandomizer, kstars, report_columns
    >>> rep = DegreeRandomizer(epsilon=1.0).randomize([3, 1, 2, 2], rng=0)
    >>> cols = report_columns(rep)
    >>> acc = ReportAccumulator()
    >>> n = len(cols["node"])
    >>> acc.add(ReportChunk("mem", 0, cols["node"], cols["round"], np.zeros(n, np.int8), ["degree"],
    ...                     cols["value"], cols["epsilon"], cols["sensitivity"], np.zeros(n, np.int8),
    ...                     ["degree"], cols["protocol_version"]))
    >>> estimate_statistic(acc.summary(), "kstars", 2) == kstars(rep, 2)
    True
    """
    from . import curator
    from .curator import Estimate

    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}; choose from {', '.join(STATISTICS)}")
    if STATISTICS[statistic] and k is None:
        raise ValueError(f"{statistic} needs k (the star size or the power)")
    if statistic == "kstars_from_counts":
        name = f"kstar_{k}"
        if name not in summary.quantities:
            raise ValueError(f"the reports hold no {name} release; released: {sorted(summary.quantities)}")
        h = summary.quantities[name].histogram
        var = h.n * h.mechanism.variance  # as curator.kstars_from_counts: n Var(DLap), exact
        value = float(h.power_sum(1))  # the exact integer sum, rounded once
        return Estimate(value, math.sqrt(var), var, f"kstars_{k}_from_counts", "normal-exact-variance")
    if "degree" not in summary.quantities:
        raise ValueError(f"the reports hold no degree release; released: {sorted(summary.quantities)}")
    h = summary.quantities["degree"].histogram
    fn = getattr(curator, "edge_count" if statistic == "edges" else statistic)
    return fn(h, k) if STATISTICS[statistic] else fn(h)
