"""ReportHistogram: exact counts on every path, exact merging, fsum-grade weighted sums."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import ldpgraph.protocols.report_histogram as rh
from ldpgraph.protocols import (
    DegreeRandomizer,
    NodeReports,
    ReleasedValues,
    ReportHistogram,
    as_report_histogram,
    curator,
    merge_histograms,
)


def _unique(y):
    v, c = np.unique(np.asarray(y, dtype=np.int64).ravel(), return_counts=True)
    return v, c


@pytest.mark.parametrize(
    "y",
    [
        np.array([5]),
        np.full(1000, -7),
        np.array([0, 0, 1, -3, 2**53, -(2**53)]),  # huge range: the sort path
        np.arange(-500, 500).repeat(3),
        np.random.default_rng(0).integers(-(10**6), 10**6, size=10**5),  # many distinct values
        np.random.default_rng(1).geometric(0.1, size=(30, 40)) - 5,  # 2-D: every entry a report
    ],
)
def test_counts_equal_numpy_unique(y):
    h = ReportHistogram.from_reports(y, epsilon=1.0)
    v, c = _unique(y)
    np.testing.assert_array_equal(h.values, v)
    np.testing.assert_array_equal(h.counts, c)
    assert h.values.dtype == h.counts.dtype == np.int64
    assert h.n == np.asarray(y).size
    np.testing.assert_array_equal(h.to_reports(), np.sort(np.ravel(y)))


def test_bincount_and_sort_paths_agree(monkeypatch):
    y = np.random.default_rng(2).integers(-40, 900, size=50_000)
    fast = ReportHistogram.from_reports(y, 1.0)
    monkeypatch.setattr(rh, "_BINCOUNT_MAX_RANGE", 0)  # force the sort path
    assert ReportHistogram.from_reports(y, 1.0) == fast
    monkeypatch.setattr(rh, "_CHUNK", 1000)
    monkeypatch.setattr(rh, "_BINCOUNT_MAX_RANGE", 1 << 24)
    assert ReportHistogram.from_reports(y, 1.0) == fast  # many chunks


def test_other_dtypes_and_lists():
    for y in ([3, 1, 3], np.array([3, 1, 3], dtype=np.int32), np.array([3, 1, 3], dtype=np.uint8),
              np.array([3.0, 1.0, 3.0])):  # fmt: skip
        h = ReportHistogram.from_reports(y, 2.0)
        np.testing.assert_array_equal(h.values, [1, 3])
        np.testing.assert_array_equal(h.counts, [1, 2])


def test_empty():
    h = ReportHistogram.from_reports(np.array([], dtype=np.int64), 1.0)
    assert h.n == 0 and h.n_distinct == 0
    assert h == ReportHistogram.empty(1.0)
    assert h.weighted_sum([]) == 0.0 and h.power_sum(3) == 0


def test_merge_is_exact_and_chunking_free():
    rng = np.random.default_rng(3)
    y = rng.geometric(0.02, size=20_000) + rng.integers(-3, 3, size=20_000)
    whole = ReportHistogram.from_reports(y, 0.5)
    for n_chunks in (1, 2, 7, 100):
        parts = [ReportHistogram.from_reports(c, 0.5) for c in np.array_split(y, n_chunks)]
        rng.shuffle(parts)
        assert merge_histograms(parts) == whole
        est = curator.kstars(merge_histograms(parts), 2)
        assert est == curator.kstars(whole, 2)  # bit for bit
    assert whole.merge(ReportHistogram.empty(0.5)) == whole


def test_merge_refuses_other_releases():
    a = ReportHistogram.from_reports([1], 1.0)
    with pytest.raises(ValueError, match="different releases.*epsilon=2.0"):
        a.merge(ReportHistogram.from_reports([1], 2.0))
    with pytest.raises(ValueError, match="sensitivity"):
        a.merge(ReportHistogram.from_reports([1], 1.0, sensitivity=3.0))
    with pytest.raises(TypeError, match=r"histograms\[1\] must be a ReportHistogram"):
        merge_histograms([a, [1, 2]])
    with pytest.raises(ValueError, match="at least one"):
        merge_histograms([])


@pytest.mark.parametrize(
    ("values", "counts", "exc", "match"),
    [
        ([1, 1], [1, 1], ValueError, "strictly increasing"),
        ([2, 1], [1, 1], ValueError, "strictly increasing"),
        ([1, 2], [1, 0], ValueError, r"counts\[1\] = 0"),
        ([1, 2], [1], ValueError, "same length"),
        ([1.0, 2.0], [1, 1], TypeError, "values must be an integer array"),
        ([[1, 2]], [[1, 1]], ValueError, "one-dimensional"),
        ([2**60], [1], ValueError, "2\\*\\*53"),
    ],
)
def test_constructor_validation(values, counts, exc, match):
    with pytest.raises(exc, match=match):
        ReportHistogram(np.array(values), np.array(counts), 1.0)


def test_report_validation():
    with pytest.raises(ValueError, match="too large"):
        ReportHistogram.from_reports(np.array([0, 2**60]), 1.0)
    with pytest.raises(ValueError, match="not an integer"):
        ReportHistogram.from_reports([0.5], 1.0)
    with pytest.raises(TypeError, match="booleans"):
        ReportHistogram.from_reports(np.array([True]), 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        ReportHistogram.from_reports([1], -1.0)
    with pytest.raises(TypeError, match="need epsilon"):
        as_report_histogram([1, 2])
    with pytest.raises(ValueError, match="must not be given"):
        as_report_histogram(DegreeRandomizer(epsilon=1.0).randomize([1], rng=0), epsilon=1.0)


def test_weighted_sum_is_the_correctly_rounded_exact_sum():
    rng = np.random.default_rng(4)
    for _ in range(50):
        D = int(rng.integers(1, 40))
        terms = rng.standard_normal(D) * 10.0 ** rng.integers(-20, 20, size=D)
        counts = rng.integers(1, 2**40, size=D)
        h = ReportHistogram(np.arange(D), counts, 1.0)
        exact = sum((Fraction(float(t)) * int(m) for t, m in zip(terms, counts, strict=True)), Fraction(0))
        assert h.weighted_sum(terms) == float(exact)
    # equals math.fsum over the expanded per-report terms, bit for bit
    y = rng.integers(-5, 50, size=3000)
    h = ReportHistogram.from_reports(y, 1.0)
    f = np.sqrt(np.abs(h.values) + 0.1) * np.where(h.values % 2, -1.0, 1.0)
    per_report = np.repeat(f, h.counts)
    assert h.weighted_sum(f) == math.fsum(per_report)


def test_weighted_sum_huge_and_nonfinite_terms():
    h = ReportHistogram(np.array([0, 1]), np.array([3, 2]), 1.0)
    assert h.weighted_sum([1e300, -1e300]) == float(Fraction(1e300) * 3 - Fraction(1e300) * 2)
    assert math.isinf(h.weighted_sum([np.inf, 1.0]))
    with pytest.raises(ValueError, match="one entry per distinct value"):
        h.weighted_sum([1.0])


def test_power_sum_exact():
    v = np.array([-(2**53), -3, 7, 2**53])
    c = np.array([2, 1, 5, 1])
    h = ReportHistogram(v, c, 1.0)
    for j in range(4):
        assert h.power_sum(j) == sum(int(m) * int(u) ** j for u, m in zip(v, c, strict=True))


def test_sources():
    rep = DegreeRandomizer(epsilon=1.0).randomize([3, 1, 2], rng=0)
    h = as_report_histogram(rep)
    assert h == as_report_histogram(rep.degrees) == ReportHistogram.from_release(rep.degrees)
    assert as_report_histogram(h) is h
    assert h.mechanism.epsilon == 1.0
    assert "n=3" in repr(h)
    rel = ReleasedValues("degree", np.array([1, 2]), 1.0, 2.0)
    assert as_report_histogram(NodeReports(released={"degree": rel})).sensitivity == 2.0
    with pytest.raises(TypeError, match="ReleasedValues"):
        ReportHistogram.from_release([1, 2])
