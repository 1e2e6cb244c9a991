from __future__ import annotations

import math

from ldpgraph.experiments.plots import plot_file_stem, plot_relative_rmse
from ldpgraph.experiments.summary import SummaryRow


def _row(method, eps, rel, graph="g", statistic="kstars", k=2, analytic=math.nan):
    t = 100.0
    return SummaryRow(graph, method, statistic, k, eps, 10, t, t, 0.0, rel * t, rel * t * 0.9, rel * t * 1.1,
                      analytic * t, rel, rel * 0.9, rel * 1.1, analytic)


def test_file_stem():
    assert plot_file_stem("facebook", "kstars", 3) == "relative_rmse_facebook_kstars_k3"
    assert plot_file_stem("/data/x y.txt", "degree_entropy", None) == "relative_rmse_data_x_y.txt_degree_entropy"


def test_one_png_and_svg_per_group_and_svg_is_deterministic(tmp_path):
    rows = [_row(m, e, 1 / e, analytic=1.1 / e) for m in ("a", "b") for e in (0.5, 1.0, 2.0)]
    rows += [_row("a", e, 0.0, statistic="edges", k=None) for e in (0.5, 1.0)]  # nothing positive: skipped
    rows += [_row("a", 1.0, 0.3, graph="h")]
    files = plot_relative_rmse(rows, tmp_path / "p1")
    assert [f.name for f in files] == [
        "relative_rmse_g_kstars_k2.png", "relative_rmse_g_kstars_k2.svg",
        "relative_rmse_h_kstars_k2.png", "relative_rmse_h_kstars_k2.svg"]
    assert files[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = files[1].read_text()
    assert "<svg" in svg and "relative RMSE" in svg
    again = plot_relative_rmse(rows, tmp_path / "p2")
    assert again[1].read_bytes() == files[1].read_bytes()


def test_colliding_stems_get_a_suffix(tmp_path):
    rows = [_row("a", 1.0, 0.5, graph="x:y"), _row("a", 1.0, 0.5, graph="x_y")]
    files = plot_relative_rmse(rows, tmp_path, formats=("png",))
    assert [f.name for f in files] == ["relative_rmse_x_y_kstars_k2.png", "relative_rmse_x_y_kstars_k2_2.png"]
