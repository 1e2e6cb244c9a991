from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpgraph.experiments.records import CellRecords
from ldpgraph.experiments.summary import (
    SUMMARY_COLUMNS,
    format_summary,
    read_summary_csv,
    summarize,
    write_summary_csv,
)


def _cell(est, truth=10.0, k=2, method="m", statistic="kstars"):
    est = np.asarray(est, dtype=float)
    return CellRecords("g", method, statistic, k, 1.0, truth, est, 0, ("0/0",) * est.size)


def test_numbers_from_first_principles():
    est = [8.0, 13.0, 9.0, 12.0, 10.5]
    row = summarize([_cell(est)], {("g", "m", "kstars", 2, 1.0): 2.0})[0]
    err = [e - 10.0 for e in est]
    mse = sum(x * x for x in err) / 5
    assert row.trials == 5 and row.truth == 10.0
    assert row.mean == pytest.approx(sum(est) / 5, rel=1e-15)
    assert row.bias == pytest.approx(sum(err) / 5, abs=1e-14)
    assert row.rmse == pytest.approx(math.sqrt(mse), rel=1e-14)
    assert row.relative_rmse == pytest.approx(math.sqrt(mse) / 10.0, rel=1e-14)
    sq = np.square(err)
    half = stats.norm.ppf(0.975) * sq.std(ddof=1) / math.sqrt(5)
    assert row.rmse_ci_low == pytest.approx(math.sqrt(max(mse - half, 0)), rel=1e-12)
    assert row.rmse_ci_high == pytest.approx(math.sqrt(mse + half), rel=1e-12)
    assert row.relative_rmse_ci_high == pytest.approx(row.rmse_ci_high / 10.0, rel=1e-14)
    assert row.analytic_rmse == 2.0 and row.relative_analytic_rmse == 0.2


def test_negative_truth_uses_absolute_value_and_missing_analytic_is_nan():
    row = summarize([_cell([-9.0, -11.0], truth=-10.0)])[0]
    assert row.relative_rmse == pytest.approx(0.1)
    assert math.isnan(row.analytic_rmse) and math.isnan(row.relative_analytic_rmse)


def test_zero_truth_and_non_finite_estimates_give_nan():
    row = summarize([_cell([1.0, -1.0], truth=0.0)])[0]
    assert row.rmse == 1.0 and math.isnan(row.relative_rmse)
    row = summarize([_cell([1.0, np.nan], truth=1.0)])[0]
    assert math.isnan(row.rmse) and math.isnan(row.bias)


def test_csv_round_trip_and_table(tmp_path):
    rows = summarize([_cell([9.0, 11.0]), _cell([9.5, 10.0], k=None, method="n")], {("g", "m", "kstars", 2, 1.0): 1.5})
    p = write_summary_csv(rows, tmp_path / "s.csv")
    assert p.read_text().splitlines()[0] == ",".join(SUMMARY_COLUMNS)
    back = read_summary_csv(p)
    assert [r.key for r in back] == [r.key for r in rows]
    for a, b in zip(back, rows, strict=True):
        for name in SUMMARY_COLUMNS:
            x, y = getattr(a, name), getattr(b, name)
            assert x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
    text = format_summary(rows)
    lines = text.splitlines()
    assert len(lines) == 4 and lines[0].split()[:4] == ["graph", "statistic", "epsilon", "method"]
    assert "kstars k=2" in lines[1] and "0.1" in lines[1]
    assert lines[3].startswith("analytic: the closed-form relative RMSE at the true graph")


def test_a_vector_statistic_gets_its_summary_not_a_relative_error():
    # core numbers: each trial records its mean approximation factor (truth 1); the table gives
    # the factor's mean over trials, its interval and spread, never rel_rmse or rel_bias
    cells = [_cell([1.5, 1.7, 1.6], k=None, method="kcore-hindex", statistic="core_numbers", truth=1.0)]
    text = format_summary(summarize(cells))
    lines = text.splitlines()
    assert lines[0].split() == ["graph", "statistic", "epsilon", "method", "trials", "mean_factor",
                                "mean_factor_ci", "sd_over_trials"]
    assert "rel_rmse" not in text and "rel_bias" not in text and "analytic:" not in text
    row = lines[1].split()
    assert row[5] == "1.6" and row[-1] == "0.1"  # mean of 1.5, 1.7, 1.6; sample sd 0.1
