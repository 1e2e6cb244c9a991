r"""Log-log plots of relative RMSE against epsilon, one line per method (matplotlib, Agg).

One figure per (graph, statistic, k): markers with confidence-interval error bars are the
Monte-Carlo relative RMSE; a dashed line of the same colour is the analytic relative RMSE where
the method has one. Each figure is saved as PNG and SVG. The figures are built on
``matplotlib.figure.Figure`` directly (no pyplot state), so plotting works headless and in
threads; the SVG carries no date and fixed element ids, so the same summary gives the same file.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .summary import SummaryRow

__all__ = ["plot_relative_rmse", "plot_file_stem"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MARKERS = "os^vDPX*<>"


def plot_file_stem(graph: str, statistic: str, k: int | None) -> str:
    """File name (without extension) of the plot of one (graph, statistic, k).

    >>> plot_file_stem("ba:n=4039,m=22", "kstars", 2)
    'relative_rmse_ba_n_4039_m_22_kstars_k2'
    """
    parts = [graph, statistic] + ([] if k is None else [f"k{k}"])
    return "relative_rmse_" + "_".join(_UNSAFE.sub("_", p).strip("_") or "x" for p in parts)


def _positive(values: Sequence[float]) -> bool:
    return any(math.isfinite(v) and v > 0 for v in values)


def plot_relative_rmse(
    rows: Sequence[SummaryRow],
    out_dir: str | os.PathLike[str],
    *,
    formats: Sequence[str] = ("png", "svg"),
    dpi: int = 120,
) -> list[Path]:
    """Write one log-log plot of relative RMSE vs epsilon per (graph, statistic, k).

    Parameters
    ----------
    rows : sequence of SummaryRow
        From :func:`~ldpgraph.experiments.summary.summarize`.
    out_dir : path-like
        Folder for the files (created if needed).
    formats : sequence of str
        File formats, each written for every figure.
    dpi : int
        Resolution of raster formats.

    Returns
    -------
    list of pathlib.Path
        The files written, in order. Groups with no positive finite relative RMSE are skipped.
    """
    from matplotlib import rc_context
    from matplotlib.figure import Figure

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
        fig = Figure(figsize=(6.4, 4.4), layout="constrained")
        ax = fig.add_subplot()
        methods = list(dict.fromkeys(r.method for r in group))
        for i, method in enumerate(methods):
            mrows = sorted((r for r in group if r.method == method), key=lambda r: r.epsilon)
            eps = np.array([r.epsilon for r in mrows])
            y = np.array([r.relative_rmse for r in mrows])
            lo = np.array([r.relative_rmse_ci_low for r in mrows])
            hi = np.array([r.relative_rmse_ci_high for r in mrows])
            color = f"C{i % 10}"
            err = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
            err = np.where(np.isfinite(err), err, 0.0)
            marker = _MARKERS[i % len(_MARKERS)]
            ax.errorbar(eps, y, yerr=err, fmt="-", marker=marker, color=color, ms=4, lw=1.2, capsize=2,
                        label=method)
            analytic = np.array([r.relative_analytic_rmse for r in mrows])
            if _positive(analytic.tolist()):
                ax.plot(eps, analytic, "--", color=color, lw=1, alpha=0.7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("relative RMSE")
        what = statistic if k is None else f"{statistic}, k = {k}"
        trials = max(r.trials for r in group)
        ax.set_title(f"{graph}: {what} ({trials} trials; dashed: analytic)", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        stem = plot_file_stem(graph, statistic, k)
        base, n = stem, 1
        while stem in used:
            n += 1
            stem = f"{base}_{n}"
        used.add(stem)
        for fmt in formats:
            path = out / f"{stem}.{fmt}"
            metadata = {"Date": None} if fmt == "svg" else None
            with rc_context({"svg.hashsalt": stem}):  # fixed element ids: reproducible SVG
                fig.savefig(path, format=fmt, dpi=dpi, metadata=metadata)
            written.append(path)
    return written
