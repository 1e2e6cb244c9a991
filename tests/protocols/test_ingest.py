"""Curator ingestion: hostile or inconsistent report sets are rejected, naming rows."""

from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.protocols import DegreeRandomizer
from ldpgraph.protocols.ingest import reports_from_records


def _rows(reports):
    rows = []
    for q, rel in reports.released.items():
        for node, v in enumerate(rel.values):
            rows.append({"node": node, "quantity": q, "value": int(v), "epsilon": rel.epsilon,
                         "sensitivity": rel.sensitivity})
    return rows


@pytest.fixture
def good_rows():
    rep = DegreeRandomizer(epsilon=1.0, kstar_counts=[2], d_max=6).randomize(np.arange(5), rng=3)
    return rep, _rows(rep)


def test_round_trip(good_rows):
    rep, rows = good_rows
    back = reports_from_records(list(reversed(rows)), d_max=6)
    for q in rep.released:
        assert np.array_equal(back.released[q].values, rep.released[q].values)
        assert back.released[q].epsilon == rep.released[q].epsilon
    assert back.total_epsilon == pytest.approx(1.0)


def test_columns_form(good_rows):
    _, rows = good_rows
    cols = {k: [r[k] for r in rows] for k in rows[0]}
    assert reports_from_records(cols, d_max=6).n_nodes == 5


def test_duplicate_node(good_rows):
    _, rows = good_rows
    rows.append(dict(rows[2]))
    with pytest.raises(ValueError, match=r"duplicate .* row 10 \(row 10 repeats row 2\)"):
        reports_from_records(rows, d_max=6)


def test_missing_node(good_rows):
    _, rows = good_rows
    del rows[7]  # node 2's kstar_2
    with pytest.raises(ValueError, match=r"kstar_2 is missing for 1 node\(s\): 2"):
        reports_from_records(rows, d_max=6)


def test_mixed_epsilon(good_rows):
    _, rows = good_rows
    rows[3]["epsilon"] = 0.9
    with pytest.raises(ValueError, match=r"mixed epsilon .*row 3"):
        reports_from_records(rows, d_max=6)


def test_missing_epsilon(good_rows):
    _, rows = good_rows
    rows[4]["epsilon"] = None
    with pytest.raises(ValueError, match=r"epsilon must be numeric: row 4"):
        reports_from_records(rows, d_max=6)


def test_non_integer_value(good_rows):
    _, rows = good_rows
    rows[6]["value"] = 3.25
    rows[8]["value"] = float("nan")
    with pytest.raises(ValueError, match=r"integer .*rows 6, 8"):
        reports_from_records(rows, d_max=6)


def test_wrong_sensitivity(good_rows):
    _, rows = good_rows
    rows[9]["sensitivity"] = 1
    with pytest.raises(ValueError, match=r"kstar_2 must be released with sensitivity 6, .*row 9"):
        reports_from_records(rows, d_max=6)


def test_unknown_quantity_and_missing_bound(good_rows):
    _, rows = good_rows
    with pytest.raises(ValueError, match="d_max"):
        reports_from_records(rows)
    rows[0]["quantity"] = "triangles"
    with pytest.raises(ValueError, match="unknown quantity"):
        reports_from_records(rows, d_max=6)


def test_empty_and_malformed():
    with pytest.raises(ValueError, match="no reports"):
        reports_from_records([])
    with pytest.raises(ValueError, match="lacks"):
        reports_from_records([{"node": 0, "value": 1}])
    with pytest.raises(TypeError, match="row 0"):
        reports_from_records([(0, "degree", 1, 1.0, 1)])
