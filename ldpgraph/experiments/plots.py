r"""Log-log plots of relative RMSE against epsilon, one line per method (matplotlib, Agg).

One figure per (graph, statistic, k): markers on solid lines with confidence-interval error
bars are the Monte-Carlo relative RMSE, each method with its own colour and marker (filled or
hollow), so that methods whose curves overlap (unbiased DLap and unbiased Laplace) stay apart;
a thin dashed line of the same colour is the analytic relative RMSE, drawn only for the methods
that have one; the legend, below the axes, states the two styles once. Bars whose lower end is
off the log axis stop at its edge with a caret. The epsilon axis is ticked at the grid's values.
The title names graph, statistic and trials; a synthetic stand-in graph is labelled as such.
:func:`plot_relative_rmse` saves each figure in the formats asked for (PNG and SVG by default;
``ldpgraph experiment`` writes PNG unless ``--plot-formats`` says otherwise). The figures are
built on ``matplotlib.figure.Figure`` directly (no pyplot state),
so plotting works headless and in threads; the SVG carries no date and fixed element ids, so
the same summary gives the same file.
"""

from __future__ import annotations

import math
import os
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .summary import SummaryRow

__all__ = [
    "plot_relative_rmse", "plot_file_stem", "relative_rmse_figure", "preload_matplotlib", "import_matplotlib",
    "clustering_profile_figure",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MARKERS = "os^DPX*<>ph"  # not "v": the caret of a bar off the axis
_ANALYTIC_STYLE = (0, (4, 2))


def plot_file_stem(graph: str, statistic: str, k: int | None) -> str:
    """File name (without extension) of the plot of one (graph, statistic, k).

    >>> plot_file_stem("ba:n=4039,m=22", "kstars", 2)
    'relative_rmse_ba_n_4039_m_22_kstars_k2'
    """
    parts = [graph, statistic] + ([] if k is None else [f"k{k}"])
    return "relative_rmse_" + "_".join(_UNSAFE.sub("_", p).strip("_") or "x" for p in parts)


def _positive(values: Sequence[float]) -> bool:
    return any(math.isfinite(v) and v > 0 for v in values)


def _legend_columns(labels: Sequence[str]) -> int:
    """Columns of the legend below the axes: as many as fit across the figure (8.4 in at 8 pt,
    about 125 characters of DejaVu Sans with ~9 for each handle and gap)."""
    longest = max((len(t) for t in labels), default=1)
    return max(1, min(3, 125 // (longest + 9)))


def _y_limits(values: Sequence[float]) -> tuple[float, float]:
    """Log-axis limits around the positive finite values, with a margin of a fifth of a decade."""
    pos = [v for v in values if math.isfinite(v) and v > 0]
    lo, hi = min(pos), max(pos)
    if hi <= lo:
        lo, hi = lo / 3.0, hi * 3.0
    return lo / 10 ** 0.2, hi * 10 ** 0.2


def relative_rmse_figure(
    rows: Sequence[SummaryRow], *, synthetic: bool = False, title: str | None = None
) -> Any:
    """The log-log figure of relative RMSE vs epsilon of one (graph, statistic, k) group.

    One style per meaning, stated once in the legend's first two entries: markers joined by
    solid lines with confidence-interval bars are the Monte-Carlo relative RMSE (each method
    its own colour and marker, filled or hollow, so that overlapping curves stay apart); a thin
    dashed line in the method's colour is its analytic relative RMSE, where a closed form
    exists. An interval whose lower end is not positive (few trials) cannot be drawn on a log
    axis: its bar stops at the bottom of the axes, which a downward caret marks. The legend
    sits below the axes, in as many columns as the names allow, and the bottom margin grows
    with its rows, so no text leaves the figure. The title names the graph, the statistic and
    the trials per point.

    Parameters
    ----------
    rows : sequence of SummaryRow
        The rows of one group (same graph, statistic and k).
    synthetic : bool
        Whether the graph is a synthetic stand-in (said so in the title).
    title : str, optional
        Replaces the generated title.

    Returns
    -------
    matplotlib.figure.Figure
        Not attached to pyplot; save it with ``fig.savefig``.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

    graph, statistic, k = rows[0].graph, rows[0].statistic, rows[0].k
    methods = list(dict.fromkeys(r.method for r in rows))
    by_method = {m: sorted((r for r in rows if r.method == m), key=lambda r: r.epsilon) for m in methods}
    every = [v for r in rows for v in (r.relative_rmse, r.relative_rmse_ci_low, r.relative_rmse_ci_high,
                                        r.relative_analytic_rmse)]
    y_lo, y_hi = _y_limits(every)
    any_analytic = _positive([r.relative_analytic_rmse for r in rows])
    key = [Line2D([], [], color="0.3", marker="o", lw=1.2, ms=5),
           Line2D([], [], color="0.3", linestyle=_ANALYTIC_STYLE, lw=0.9)]
    key_labels = ["simulated (bars: confidence interval)", "analytic RMSE (dashed)"]
    if not any_analytic:
        key, key_labels = key[:1], key_labels[:1]
    n_entries = len(key) + len(methods)
    ncol = _legend_columns([*key_labels, *methods])
    legend_rows = -(-n_entries // ncol)
    # fixed margins (a constrained layout doubles the drawing time): the title 0.45 in, the axes
    # 3.3 in, the tick labels and x label 0.6 in, the legend 0.17 in per row and 0.15 in of edge
    if title is None:
        what = statistic if k is None else f"{statistic}, k = {k}"
        trials = sorted({r.trials for r in rows})
        per = f"{trials[0]}" if len(trials) == 1 else f"{trials[0]}-{trials[-1]}"
        name = f"{graph} (synthetic stand-in)" if synthetic else graph
        title = f"{name}: relative RMSE of {what}, {per} trials per point"
    title = "\n".join(textwrap.wrap(title, 96, break_on_hyphens=False)) or title  # a long path: 2+ lines
    above = 0.3 + 0.17 * (title.count("\n") + 1)
    below = 0.6 + 0.17 * legend_rows + 0.15
    height = above + 3.3 + below
    fig = Figure(figsize=(8.4, height))
    fig.subplots_adjust(left=0.1, right=0.97, bottom=below / height, top=1 - above / height)
    ax = fig.add_subplot()
    handles: list[Any] = []
    for i, method in enumerate(methods):
        mrows = by_method[method]
        eps = np.array([r.epsilon for r in mrows])
        y = np.array([r.relative_rmse for r in mrows])
        lo = np.array([r.relative_rmse_ci_low for r in mrows])
        hi = np.array([r.relative_rmse_ci_high for r in mrows])
        color = f"C{i % 10}"
        cut = ~(np.isfinite(lo) & (lo >= y_lo))  # the lower end is off the axis (<= 0 or below it)
        lo_drawn = np.where(cut, y_lo, lo)
        hi_drawn = np.where(np.isfinite(hi), np.minimum(hi, y_hi), y)
        err = np.vstack([np.clip(y - lo_drawn, 0, None), np.clip(hi_drawn - y, 0, None)])
        err = np.where(np.isfinite(err), err, 0.0)
        marker = _MARKERS[i % len(_MARKERS)]
        mc = ax.errorbar(eps, y, yerr=err, marker=marker, color=color, ms=5, lw=1.2, capsize=2,
                         linestyle="-", mfc="none" if i % 2 else color, mew=1.2, label=method)
        shown = cut & np.isfinite(y) & (y > y_lo)
        if shown.any():  # the bar runs off the log axis: a caret at the bottom edge says so
            ax.plot(eps[shown], np.full(int(shown.sum()), y_lo), linestyle="none", marker="v", ms=5,
                    color=color, clip_on=False, label="_nolegend_", gid="off-axis-caret")
        analytic = np.array([r.relative_analytic_rmse for r in mrows])
        if _positive(analytic.tolist()):
            ax.plot(eps, analytic, linestyle=_ANALYTIC_STYLE, color=color, lw=0.9, alpha=0.85,
                    label=f"{method} (analytic)")
        handles.append(mc)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(y_lo, y_hi)
    grid_eps = sorted({r.epsilon for r in rows})
    ax.xaxis.set_major_locator(FixedLocator(grid_eps))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([f"{e:g}" for e in grid_eps])
    # major ticks only, labelled as plain numbers (no mathtext): most of the drawing time is
    # spent on ticks and their labels
    ax.yaxis.set_major_locator(LogLocator(base=10.0, numticks=8))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.set_xlabel("epsilon")
    ax.set_ylabel("relative RMSE")
    ax.set_title(title, fontsize=10, y=1.01)  # a fixed position: no layout pass over the tick labels
    ax.grid(True, which="major", alpha=0.3)
    # below the axes (a fixed place: "best" would cost a search); the style key first
    ax.legend([*key, *handles], [*key_labels, *methods], fontsize=8, loc="lower center",
              bbox_to_anchor=(0.5, 0.06 / height), bbox_transform=fig.transFigure, borderaxespad=0,
              ncol=ncol, handlelength=2.6, frameon=False, columnspacing=1.5, labelspacing=0.3)
    return fig


def plot_relative_rmse(
    rows: Sequence[SummaryRow],
    out_dir: str | os.PathLike[str],
    *,
    formats: Sequence[str] = ("png", "svg"),
    dpi: int = 100,
    synthetic: Sequence[str] | set[str] = (),
) -> list[Path]:
    """Write one log-log plot of relative RMSE vs epsilon per (graph, statistic, k).

    Parameters
    ----------
    rows : sequence of SummaryRow
        From :func:`~ldpgraph.experiments.summary.summarize`.
    out_dir : path-like
        Folder for the files (created if needed).
    formats : sequence of str
        File formats, each written for every figure (each costs one rendering).
    dpi : int
        Resolution of raster formats.
    synthetic : collection of str
        Labels of graphs that are synthetic stand-ins (said so in their titles).

    Returns
    -------
    list of pathlib.Path
        The files written, in order. Groups with no positive finite relative RMSE are skipped.
    """
    from matplotlib import rc_context

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple, list[SummaryRow]] = {}
    for r in rows:
        groups.setdefault((r.graph, r.statistic, r.k), []).append(r)
    written: list[Path] = []
    used: set[str] = set()
    for (graph, statistic, k), group in groups.items():
        if not _positive([r.relative_rmse for r in group]):
            continue
        fig = relative_rmse_figure(group, synthetic=graph in synthetic)
        stem = plot_file_stem(graph, statistic, k)
        base, n = stem, 1
        while stem in used:
            n += 1
            stem = f"{base}_{n}"
        used.add(stem)
        for fmt in formats:
            path = out / f"{stem}.{fmt}"
            metadata = {"Date": None} if fmt == "svg" else None
            # PNG: zlib level 1 (about 10% larger files, a sixth less time than the default 6)
            extra = {"pil_kwargs": {"compress_level": 1}} if fmt == "png" else {}
            with rc_context({"svg.hashsalt": stem}):  # fixed element ids: reproducible SVG
                fig.savefig(path, format=fmt, dpi=dpi, metadata=metadata, **extra)
            written.append(path)
    return written


def clustering_profile_figure(profile: Any, truth: Sequence[float], edges: Sequence[float],
                              fractions: Sequence[float], true_fractions: Sequence[float], title: str) -> Any:
    """Two panels: the clustering profile C(k) with 95% error bars against the truth (log degree
    axis), and the estimated distribution of the local coefficients against the true one.

    ``profile``: a :class:`~ldpgraph.protocols.clustering.adaptive.Profile`; ``truth`` its
    buckets' true means; ``edges``/``fractions``/``true_fractions``: the histograms over [0, 1].
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4))
    ax, bx = fig.subplots(1, 2)
    lo, hi = np.asarray(profile.edges[:-1], float), np.asarray(profile.edges[1:], float) - 1
    mid = np.sqrt(np.maximum(lo, 1) * np.maximum(hi, 1))
    ax.errorbar(mid, profile.mean, yerr=1.96 * np.asarray(profile.std_error), fmt="o", capsize=3,
                label="estimate (95%)")
    ax.plot(mid, truth, "s--", mfc="none", label="truth")
    ax.set(xscale="log", xlabel="degree k (bucket)", ylabel="mean local clustering C(k)", ylim=(-0.1, 1.1))
    ax.legend()
    e = np.asarray(edges, float)
    bx.bar(e[:-1], fractions, width=np.diff(e), align="edge", alpha=0.6, label="estimate")
    bx.step(e, np.r_[true_fractions, true_fractions[-1]], where="post", color="k", label="truth")
    bx.set(xlabel="local clustering coefficient", ylabel="fraction of nodes")
    bx.legend()
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def import_matplotlib() -> None:
    """Import what :func:`plot_relative_rmse` needs of matplotlib (about 0.3 s of CPU, once)."""
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.legend_handler  # noqa: F401
    import matplotlib.ticker  # noqa: F401


def preload_matplotlib() -> Any:
    """Import matplotlib's figure machinery in a background thread (returns the thread).

    Started before a simulation that runs in this process, the import is off the critical path
    where this process waits; :func:`~ldpgraph.experiments.run_experiment` with
    ``preload_plots=True`` does this itself.
    """
    import threading

    t = threading.Thread(target=import_matplotlib, name="ldpgraph-preload-matplotlib", daemon=True)
    t.start()
    return t
