"""The report wire format: canonical node ids and values, rows <-> NodeReports, hostile rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ldpgraph.protocols import DegreeRandomizer, reports_from_records
from ldpgraph.protocols.reports import (
    COLUMNS,
    PROTOCOLS,
    canonical_node_id,
    canonical_value,
    report_columns,
)


def _row(node, value=3, quantity="degree", **extra):
    return {"node": node, "quantity": quantity, "value": value, "epsilon": 1.0, "sensitivity": 1, **extra}


@pytest.mark.parametrize("node, expected", [(1, 1), ("1", 1), (np.int32(7), 7), ("0", 0), ("alice", "alice")])
def test_canonical_node_ids(node, expected):
    assert canonical_node_id(node) == expected
    assert type(canonical_node_id(node)) is type(expected)


@pytest.mark.parametrize("node, exc", [(True, TypeError), (np.True_, TypeError), (1.0, TypeError), (np.float64(2), TypeError),
                                       ("01", ValueError), ("1.0", ValueError), (" 1", ValueError), ("-3", ValueError),
                                       ("", ValueError), (None, TypeError), ((1,), TypeError)])
def test_type_confused_node_ids_are_refused(node, exc):
    with pytest.raises(exc, match="node id"):
        canonical_node_id(node)


def test_string_and_integer_ids_are_one_node():
    # "1" and 1 are the same node: its two rows are one duplicate pair, never two nodes
    with pytest.raises(ValueError, match=r"duplicate .*row 1 \(row 1 repeats row 0\)"):
        reports_from_records([_row(1), _row("1")])
    rep = reports_from_records([_row("1", 4), _row(0, 2)])
    assert rep.metadata["node_ids"] == [0, 1]
    assert rep.degrees.values.tolist() == [2, 4]


def test_hostile_node_ids_name_the_row():
    with pytest.raises(ValueError, match=r"node ids must be canonical: row 1 .*float"):
        reports_from_records([_row(0), _row(1.0)])
    with pytest.raises(ValueError, match=r"node ids must be canonical: row 2 .*bool"):
        reports_from_records([_row(0), _row(1), _row(True)])


@pytest.mark.parametrize("value, expected", [("-12", -12), ("+5", 5), (7.0, 7), (np.int64(-3), -3), (b"3", 3),
                                             ("2e3", 2000), (2**53, 2**53), ("9007199254740992", 2**53)])
def test_canonical_values(value, expected):
    assert canonical_value(value) == expected


@pytest.mark.parametrize("value, exc, match", [
    (True, TypeError, "bool"), (np.True_, TypeError, "bool"), (None, TypeError, "integer"),
    ("9007199254740993", ValueError, "magnitude"),   # 2**53 + 1: float() would round it to 2**53
    ("1" * 400, ValueError, "magnitude"),           # huge decimal string
    ("1e999999999", ValueError, "magnitude"),        # must not be expanded to an integer
    (2.5, ValueError, "integer"), ("2.5", ValueError, "integer"), ("nan", ValueError, "finite"),
    (float("inf"), ValueError, "finite"), ("x", ValueError, "integer"), (2**60, ValueError, "magnitude"),
])
def test_hostile_values(value, exc, match):
    with pytest.raises(exc, match=match):
        canonical_value(value)


def test_hostile_values_in_rows_name_the_row():
    with pytest.raises(ValueError, match=r"magnitude <= 2\*\*53.*row 1"):
        reports_from_records([_row(0), _row(1, "9007199254740993")])
    with pytest.raises(ValueError, match=r"value must be numeric: row 0"):
        reports_from_records([_row(0, np.True_), _row(1)])


def _sample_reports():
    return DegreeRandomizer(epsilon=1.0, kstar_counts=[2], d_max=6).randomize(np.arange(7), rng=5)


def test_report_columns_round_trip_through_a_dataframe():
    rep = _sample_reports()
    ids = np.array([40, 10, 30, 20, 70, 60, 50])
    cols = report_columns(rep, node_ids=ids)
    assert list(cols) == list(COLUMNS)
    assert len(cols["node"]) == 14
    df = pd.DataFrame(cols).sample(frac=1.0, random_state=0)  # any row order
    back = reports_from_records(df, d_max=6)
    order = np.argsort(ids)
    assert back.metadata["node_ids"] == sorted(ids.tolist())
    for q, rel in rep.released.items():
        assert np.array_equal(back.released[q].values, rel.values[order])
        assert back.released[q].epsilon == rel.epsilon
        assert back.released[q].sensitivity == rel.sensitivity


def test_dataframe_with_string_columns():
    df = pd.DataFrame({"node": ["0", "1"], "quantity": ["degree"] * 2, "value": ["3", "-1"],
                       "epsilon": ["0.5", "0.5"], "sensitivity": ["1", "1"]})
    assert reports_from_records(df).degrees.values.tolist() == [3, -1]
    df.loc[1, "node"] = "1.0"
    with pytest.raises(ValueError, match="row 1"):
        reports_from_records(df)


def test_expected_nodes_refuse_a_missing_node_and_a_stranger():
    rows = [_row(0), _row(1), _row(3)]
    assert reports_from_records(rows, expected_nodes=[0, 1, 3]).n_nodes == 3
    with pytest.raises(ValueError, match=r"1 expected node\(s\) sent no report: 2"):
        reports_from_records(rows, expected_nodes=range(4))
    with pytest.raises(ValueError, match=r"outside expected_nodes .*row 2"):
        reports_from_records(rows, expected_nodes=["0", "1"])


def test_protocol_version_and_round_columns():
    rows = [_row(i, protocol="degree", protocol_version=1, round=1) for i in range(3)]
    assert reports_from_records(rows).n_nodes == 3
    rows[2]["protocol_version"] = 2
    with pytest.raises(ValueError, match=r"version 2 in row 2: this package reads version 1"):
        reports_from_records(rows)
    rows[2]["protocol_version"] = 1
    rows[1]["protocol"] = "rr-triangles-v9"
    with pytest.raises(ValueError, match=r"unknown protocol 'rr-triangles-v9' in row 1"):
        reports_from_records(rows)
    rows[1]["protocol"] = "degree"
    rows[0]["round"] = 2
    with pytest.raises(ValueError, match=r"round 2: rows 1, 2"):
        reports_from_records(rows)
    with pytest.raises(ValueError, match=r"round 1: row 0"):
        reports_from_records(rows, round=1)
    del rows[1]["round"]
    with pytest.raises(ValueError, match=r"round is given in some rows but missing in row 1"):
        reports_from_records(rows)


def test_report_columns_validation():
    rep = _sample_reports()
    with pytest.raises(ValueError, match="one id per node"):
        report_columns(rep, node_ids=[1, 2])
    with pytest.raises(ValueError, match="distinct"):
        report_columns(rep, node_ids=[1] * 7)
    with pytest.raises(ValueError, match="non-negative"):
        report_columns(rep, node_ids=["a"] * 7)
    with pytest.raises(ValueError, match="protocol"):
        report_columns(rep, protocol="nope")
    with pytest.raises(ValueError, match="round"):
        report_columns(rep, round=0)
    assert PROTOCOLS["degree"] == 1
