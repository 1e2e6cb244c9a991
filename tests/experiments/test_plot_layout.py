"""The plots read on their own (issue 27, item 9): no text leaves the figure, the legend does not
cover the axes, one style per meaning, bars off the log axis end at its edge with a caret.

An image-level check: every figure is drawn with the Agg renderer and the window extent of
every text (title, axis labels, tick labels, legend entries) must lie inside the figure.
"""

from __future__ import annotations

import math

import pytest

from ldpgraph.experiments.plots import relative_rmse_figure
from ldpgraph.experiments.summary import SummaryRow
from ldpgraph.run.method import method_names

pytest.importorskip("matplotlib")


def _rows(methods, graph="facebook", statistic="triangles", k=None, eps=(0.5, 1.0, 2.0, 4.0), trials=3,
          analytic_every=2, ci_low_zero=True):
    out = []
    for i, m in enumerate(methods):
        for e in eps:
            rel = (1 + i) / e ** 2
            a = rel * 0.9 if i % analytic_every == 0 else math.nan
            lo = 0.0 if ci_low_zero and e < 2 else rel * 0.5
            out.append(SummaryRow(graph, m, statistic, k, e, trials, 100.0, 100.0, 0.0, rel * 100, lo * 100,
                                  rel * 150, a * 100, rel, lo, rel * 1.5, a))
    return out


CASES = {
    "triangles": _rows(method_names("triangles")),
    "transitivity": _rows(method_names("transitivity"), statistic="transitivity"),
    "clustering": _rows(method_names("avg_clustering"), statistic="avg_clustering"),
    "kstars": _rows(method_names("kstars"), statistic="kstars", k=2, trials=200, ci_low_zero=False,
                    analytic_every=1),
    "every method": _rows(method_names()),
    "one method": _rows(["unbiased-dlap"], statistic="kstars", k=3),
    "long graph path": _rows(method_names("triangles"),
                             graph="/home/someone/projects/data/social/networks/2026/an-edge-list-with-a-"
                             "long-name-that-goes-on_and_on_and_on.txt.gz"),
}


def _extents(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    x_lo, x_hi = ax.get_xlim()
    # tick labels of ticks outside the view are not drawn (their positions are stale): skip them
    hidden = {id(t) for t, v in zip(ax.get_yticklabels(), ax.get_yticks(), strict=True) if not lo <= v <= hi}
    hidden |= {id(t) for t, v in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True) if not x_lo <= v <= x_hi}
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]
    return renderer, texts


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_text_leaves_the_figure_and_the_legend_leaves_the_axes_free(case):
    fig = relative_rmse_figure(CASES[case])
    renderer, texts = _extents(fig)
    box = fig.bbox
    assert len(texts) > 8
    for t in texts:
        e = t.get_window_extent(renderer)
        assert e.x0 >= box.x0 - 0.5 and e.x1 <= box.x1 + 0.5 and e.y0 >= box.y0 - 0.5 and e.y1 <= box.y1 + 0.5, (
            f"{case}: text {t.get_text()!r} at {e.bounds} leaves the figure {box.bounds}")
    tight = fig.get_tightbbox(renderer)  # everything drawn, in inches
    assert tight.x0 >= -0.01 and tight.y0 >= -0.01, (case, tight.bounds)
    assert tight.x1 <= fig.get_figwidth() + 0.01 and tight.y1 <= fig.get_figheight() + 0.01, (case, tight.bounds)
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    axes = ax.get_window_extent(renderer)
    assert not legend.overlaps(axes), f"{case}: the legend covers the axes"
    xlabel = ax.xaxis.label.get_window_extent(renderer)
    assert not legend.overlaps(xlabel), f"{case}: the legend covers the x label"
    for tick in ax.get_xticklabels():
        assert not legend.overlaps(tick.get_window_extent(renderer))


def test_one_style_per_meaning_stated_once():
    rows = CASES["triangles"]
    fig = relative_rmse_figure(rows)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    methods = method_names("triangles")
    assert labels == ["simulated (bars: confidence interval)", "analytic RMSE (dashed)", *methods]
    assert not any("analytic" in label for label in labels[2:])  # said once, not per method
    simulated = [c.lines[0] for c in ax.containers]
    assert {str(ln.get_linestyle()) for ln in simulated} == {"-"}  # every simulated curve: solid
    analytic = [ln for ln in ax.lines if ln.get_label().endswith("(analytic)")]
    assert len(analytic) == len(methods[::2]) and all(ln.get_linestyle() == "--" for ln in analytic)
    markers = [(ln.get_marker(), ln.get_markerfacecolor() == "none") for ln in simulated]
    assert len(set(markers)) == len(markers)  # each method its own marker
    title = ax.get_title()
    assert "facebook" in title and "triangles" in title and "3 trials" in title


def test_a_bar_off_the_log_axis_ends_at_its_edge_with_a_caret():
    rows = CASES["triangles"]
    fig = relative_rmse_figure(rows)
    ax = fig.axes[0]
    bottom = ax.get_ylim()[0]
    assert bottom > 0
    carets = [ln for ln in ax.lines if ln.get_gid() == "off-axis-caret"]
    assert all(ln.get_marker() == "v" for ln in carets)
    assert not any(c.lines[0].get_marker() == "v" for c in ax.containers)  # the caret's shape is its own
    n_cut = sum(1 for r in rows if r.relative_rmse_ci_low <= 0)
    assert sum(len(ln.get_xdata()) for ln in carets) == n_cut
    for ln in carets:
        assert all(y == bottom for y in ln.get_ydata())
    for c in ax.containers:  # the bars: every lower end at or above the axis bottom
        for seg in c.lines[2][0].get_segments():
            assert min(seg[:, 1]) >= bottom * (1 - 1e-12)
