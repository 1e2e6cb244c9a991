r"""Log-log plots of relative RMSE against epsilon, one line per method (matplotlib, Agg).

One figure per (graph, statistic, k): markers with confidence-interval error bars are the
Monte-Carlo relative RMSE, each method with its own colour, marker (filled or hollow) and line
style, so that methods whose curves overlap (unbiased DLap and unbiased Laplace) stay apart; a
thin dashed line of the same colour is the analytic relative RMSE, drawn and listed in the legend
only for the methods that have one. The epsilon axis is ticked at the grid's values. A synthetic
stand-in graph is labelled as such in the title. Each figure is saved as PNG and SVG (by
default). The figures are built on ``matplotlib.figure.Figure`` directly (no pyplot state),
so plotting works headless and in threads; the SVG carries no date and fixed element ids, so
the same summary gives the same file.
"""

from __future__ import annotations

import math
import os
import re
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
_MARKERS = "os^vDPX*<>"
_LINESTYLES = ("-", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)))
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


def relative_rmse_figure(
    rows: Sequence[SummaryRow], *, synthetic: bool = False, title: str | None = None
) -> Any:
    """The log-log figure of relative RMSE vs epsilon of one (graph, statistic, k) group.

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
    from matplotlib.legend_handler import HandlerTuple
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

    graph, statistic, k = rows[0].graph, rows[0].statistic, rows[0].k
    # fixed margins: a constrained layout doubles the drawing time
    fig = Figure(figsize=(8.4, 4.4))
    fig.subplots_adjust(left=0.1, right=0.7, bottom=0.12, top=0.91)  # the legend goes on the right
    ax = fig.add_subplot()
    methods = list(dict.fromkeys(r.method for r in rows))
    any_analytic = False
    handles: list[Any] = []
    labels: list[str] = []
    for i, method in enumerate(methods):
        mrows = sorted((r for r in rows if r.method == method), key=lambda r: r.epsilon)
        eps = np.array([r.epsilon for r in mrows])
        y = np.array([r.relative_rmse for r in mrows])
        lo = np.array([r.relative_rmse_ci_low for r in mrows])
        hi = np.array([r.relative_rmse_ci_high for r in mrows])
        color = f"C{i % 10}"
        err = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
        err = np.where(np.isfinite(err), err, 0.0)
        marker = _MARKERS[i % len(_MARKERS)]
        mc = ax.errorbar(eps, y, yerr=err, marker=marker, color=color, ms=5, lw=1.2, capsize=2,
                         linestyle=_LINESTYLES[i % len(_LINESTYLES)],
                         mfc="none" if i % 2 else color, mew=1.2, label=method)
        analytic = np.array([r.relative_analytic_rmse for r in mrows])
        if _positive(analytic.tolist()):
            any_analytic = True
            (line,) = ax.plot(eps, analytic, linestyle=_ANALYTIC_STYLE, color=color, lw=0.9, alpha=0.8,
                              label=f"{method} (analytic)")
            handles.append((mc, line))  # one legend entry: the simulation and its analytic curve
            labels.append(f"{method} (+ analytic)")
        else:
            handles.append(mc)
            labels.append(method)
    ax.set_xscale("log")
    ax.set_yscale("log")
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
    if title is None:
        what = statistic if k is None else f"{statistic}, k = {k}"
        trials = max(r.trials for r in rows)
        name = f"{graph} (synthetic stand-in)" if synthetic else graph
        extra = "; thin dashed: analytic RMSE" if any_analytic else ""
        title = f"{name}: {what} ({trials} trials{extra})"
    ax.set_title(title, fontsize=10, y=1.01)  # a fixed position: no layout pass over the tick labels
    ax.grid(True, which="major", alpha=0.3)
    # beside the axes (a fixed place: "best" would cost a search); one entry per method, showing its
    # analytic curve beside its markers where it has one
    ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0,
              handler_map={tuple: HandlerTuple(ndivide=None, pad=0.6)}, handlelength=4.0)
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

    ``profile``: a :class:`~ldpgraph.protocols.adaptive_clustering.Profile`; ``truth`` its
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
