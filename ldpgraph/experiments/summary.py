r"""Per-cell accuracy summary of trial records: RMSE with a confidence interval, bias, analytic RMSE.

For the estimates x_1..x_T of a cell with true value s:

.. math::

    \mathrm{bias} = \bar x - s, \qquad
    \mathrm{RMSE} = \sqrt{\tfrac1T \sum_t (x_t - s)^2}, \qquad
    \mathrm{relative\ RMSE} = \mathrm{RMSE} / |s| ,

the confidence interval of the RMSE comes from the CLT on the mean squared error
(:func:`ldpgraph.metrics.rmse_confidence_interval`), and the analytic RMSE
sqrt(bias^2 + variance) in closed form is supplied by the runner where the method has one.
Relative quantities are NaN when s = 0; all quantities are NaN when an estimate is not finite.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path

import numpy as np

from .._atomic import atomic_write
from ..metrics import bias as _bias
from ..metrics import rmse as _rmse
from ..metrics import rmse_confidence_interval
from .records import CellRecords

__all__ = [
    "SummaryRow",
    "SUMMARY_COLUMNS",
    "summarize",
    "write_summary_csv",
    "read_summary_csv",
    "format_summary",
]


@dataclass(frozen=True)
class SummaryRow:
    """Accuracy of one cell (graph, method, statistic, k, epsilon) over its trials."""

    graph: str
    method: str
    statistic: str
    k: int | None
    epsilon: float
    trials: int
    truth: float
    mean: float
    bias: float
    rmse: float
    rmse_ci_low: float
    rmse_ci_high: float
    analytic_rmse: float
    relative_rmse: float
    relative_rmse_ci_low: float
    relative_rmse_ci_high: float
    relative_analytic_rmse: float

    @property
    def key(self) -> tuple[str, str, str, int | None, float]:
        return (self.graph, self.method, self.statistic, self.k, self.epsilon)


#: column names of the summary CSV, in order
SUMMARY_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(SummaryRow))

_NAN = math.nan


def _summarize_cell(cell: CellRecords, analytic: float | None, level: float) -> SummaryRow:
    est = cell.estimates
    s = float(cell.truth)
    a = _NAN if analytic is None else float(analytic)
    if est.size and np.isfinite(est).all():
        mean = float(np.mean(est))
        b = _bias(est, s)
        r = _rmse(est, s)
        lo, hi = rmse_confidence_interval(est, s, level=level)
    else:
        mean = b = r = lo = hi = _NAN
    scale = abs(s) if s != 0 and math.isfinite(s) else _NAN
    return SummaryRow(
        cell.graph, cell.method, cell.statistic, cell.k, cell.epsilon, cell.n_trials, s,
        mean, b, r, lo, hi, a, r / scale, lo / scale, hi / scale, a / scale,
    )


def summarize(
    records: Iterable[CellRecords],
    analytic_rmse: Mapping[tuple, float | None] | None = None,
    *,
    level: float = 0.95,
) -> list[SummaryRow]:
    """One :class:`SummaryRow` per cell, in the order of the records.

    Parameters
    ----------
    records : iterable of CellRecords
        E.g. :class:`~ldpgraph.experiments.records.Records`.
    analytic_rmse : mapping, optional
        ``(graph, method, statistic, k, epsilon) -> RMSE`` in closed form (None or absent: NaN).
    level : float
        Confidence level of the RMSE interval.

    Examples
    --------
    >>> from ldpgraph.experiments.records import CellRecords
    >>> cell = CellRecords("g", "m", "edges", None, 1.0, 10.0, np.array([9.0, 11.0]), 0, ("0/0",) * 2)
    >>> row = summarize([cell])[0]
    >>> row.bias, row.rmse, row.relative_rmse
    (0.0, 1.0, 0.1)
    """
    analytic_rmse = analytic_rmse or {}
    return [_summarize_cell(c, analytic_rmse.get(c.key), level) for c in records]


def _fmt_csv(v):
    if v is None:
        return ""
    return v


def write_summary_csv(rows: Sequence[SummaryRow], path: str | os.PathLike[str]) -> Path:
    """Write the summary rows as CSV (header :data:`SUMMARY_COLUMNS`; NaN written as ``nan``).

    Written safely (:func:`~ldpgraph._atomic.atomic_write`): a unique temporary file, then an
    atomic rename; a symbolic link at ``path`` is replaced, never followed.
    """
    p = Path(path)
    with atomic_write(p, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(SUMMARY_COLUMNS)
        for r in rows:
            w.writerow([_fmt_csv(v) for v in astuple(r)])
    return p


def read_summary_csv(path: str | os.PathLike[str]) -> list[SummaryRow]:
    """Read a summary CSV written by :func:`write_summary_csv`."""
    p = Path(path)
    out = []
    with open(p, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or tuple(header) != SUMMARY_COLUMNS:
            raise ValueError(f"{p}: expected header {','.join(SUMMARY_COLUMNS)}, got {header!r}")
        for row in reader:
            graph, method, statistic, k, eps, trials, *floats = row
            out.append(
                SummaryRow(graph, method, statistic, None if k == "" else int(k), float(eps), int(trials),
                           *(float(x) for x in floats))
            )
    return out


def _g(x: float, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}g}"


def _lines(table: list[tuple[str, ...]], right: set[int]) -> list[str]:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return ["  ".join(c.rjust(w) if i in right else c.ljust(w)
                      for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip() for row in table]


def format_summary(rows: Sequence[SummaryRow], notes: Sequence[str] = ()) -> str:
    """A plain-text table of the summary (one line per cell), for terminals and logs.

    Columns: graph, statistic (with its parameter), epsilon, method, trials, relative RMSE,
    its confidence interval, the analytic relative RMSE (the closed form at the true graph),
    and the relative bias. A vector statistic
    (:data:`~ldpgraph.protocols.statistics.VECTOR_STATISTICS`) gets its own table: the mean over
    trials of each trial's mean approximation factor (1: exact), its 95% interval and the
    spread over trials; never a truth or a relative error. Each of ``notes`` (cells skipped,
    with the reason) follows the tables as a ``note:`` line.
    """
    from ..protocols.statistics import VECTOR_STATISTICS

    scalar = [r for r in rows if r.statistic not in VECTOR_STATISTICS]
    vector = [r for r in rows if r.statistic in VECTOR_STATISTICS]
    lines: list[str] = []
    if scalar or not vector:
        table = [("graph", "statistic", "epsilon", "method", "trials", "rel_rmse", "rel_rmse_ci", "analytic",
                  "rel_bias")]
        for r in scalar:
            stat = r.statistic if r.k is None else f"{r.statistic} k={r.k}"
            scale = abs(r.truth) if r.truth else _NAN
            table.append((
                r.graph, stat, f"{r.epsilon:g}", r.method, str(r.trials), _g(r.relative_rmse),
                f"[{_g(r.relative_rmse_ci_low, 3)}, {_g(r.relative_rmse_ci_high, 3)}]",
                _g(r.relative_analytic_rmse), _g(r.bias / scale, 3),
            ))
        lines += _lines(table, {2, 4, 5, 7, 8})
        if scalar:
            lines.append("analytic: the closed-form relative RMSE at the true graph (only a simulation knows "
                         "it); a curator's standard error comes from the reports ('ldpgraph estimate' names "
                         "its kind; scripts/interval_coverage.py measures its intervals' coverage)")
    if vector:
        if lines:
            lines.append("")
        table = [("graph", "statistic", "epsilon", "method", "trials", "mean_factor", "mean_factor_ci",
                  "sd_over_trials")]
        for r in vector:
            # each trial's value is its mean approximation factor; truth 1: rmse^2 = bias^2 + variance
            sd = math.sqrt(max(r.rmse * r.rmse - r.bias * r.bias, 0.0) * r.trials / max(r.trials - 1, 1))
            half = 1.959963984540054 * sd / math.sqrt(r.trials)
            table.append((r.graph, r.statistic, f"{r.epsilon:g}", r.method, str(r.trials), _g(r.mean),
                          f"[{_g(r.mean - half, 3)}, {_g(r.mean + half, 3)}]", _g(sd, 3)))
        lines += _lines(table, {2, 4, 5, 7})
        lines.append("mean_factor: per trial, the mean over the nodes of core number >= 1 of "
                     "max(k^_v/k_v, k_v/k^_v) (1: exact), averaged over the trials")
    lines.extend(f"note: {n}" for n in notes)
    return "\n".join(lines)
