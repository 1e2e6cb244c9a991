"""Report files: round trips in every format equal the in-memory curator exactly, chunk-size
independence, whole-set validation, and hostile files (each error names the file and row)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ldpgraph.estimators.order_statistics import HighVarianceWarning
from ldpgraph.protocols import DegreeRandomizer, PublicBounds, curator, screen_reports
from ldpgraph.protocols.reports import COLUMNS, report_columns
from ldpgraph.protocols.reportset import STATISTICS, estimate_statistic
from ldpgraph.run.reportfiles import (
    curate_files,
    iter_report_chunks,
    read_report_set,
    read_reports,
    write_reports,
)

FORMATS = ("csv", "jsonl", "parquet")
N = 3000
D_MAX = 60


@pytest.fixture(scope="module")
def reports():
    d = np.random.default_rng(11).integers(0, 70, N)
    return DegreeRandomizer(epsilon=1.0, kstar_counts=[2, 3], d_max=D_MAX).randomize(d, rng=12)


def _in_memory(reports, stat, k):
    fn = getattr(curator, "edge_count" if stat == "edges" else stat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        return fn(reports, k) if STATISTICS[stat] else fn(reports)


def _all_stats():
    return [(s, (2 if s == "kstars_from_counts" else 3 if s == "kstars" else 2) if t else None)
            for s, t in STATISTICS.items()]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_round_trips_to_the_in_memory_estimates_exactly(tmp_path, reports, fmt):
    path = write_reports(tmp_path / f"r.{fmt}", reports, row_group_size=700)
    summary = read_report_set(path, d_max=D_MAX, chunk_rows=999)
    assert summary.n_rows == 3 * N and summary.n_nodes == N
    for stat, k in _all_stats():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HighVarianceWarning)
            got = estimate_statistic(summary, stat, k)
        assert got == _in_memory(reports, stat, k), (fmt, stat)  # bit for bit


def test_results_do_not_depend_on_chunking_or_on_splitting_into_files(tmp_path, reports):
    cols = report_columns(reports)
    whole = write_reports(tmp_path / "all.parquet", reports)
    parts = []
    order = np.random.default_rng(0).permutation(len(cols["node"]))  # rows shuffled across 4 files
    for i, idx in enumerate(np.array_split(order, 4)):
        part = {c: np.asarray(v)[idx] for c, v in cols.items()}
        parts.append(write_reports(tmp_path / f"part{i}.{FORMATS[i % 3]}", part))
    ref = read_report_set(whole, d_max=D_MAX)
    for chunk_rows in (1, 7, 1000, 10**7):
        s = read_report_set(parts, d_max=D_MAX, chunk_rows=chunk_rows)
        for name, q in ref.quantities.items():
            assert q.histogram == s.quantities[name].histogram
        assert estimate_statistic(s, "kstars", 2) == estimate_statistic(ref, "kstars", 2)


def test_screening_while_streaming_equals_screen_reports_in_memory(tmp_path, reports):
    cols = report_columns(reports)
    cols["value"] = cols["value"].copy()
    cols["value"][0] = 10**12  # node 0's degree: a liar
    cols["value"][3] = -(10**9)  # node 1's degree
    path = write_reports(tmp_path / "r.parquet", cols)
    bounds = PublicBounds(n_nodes=N)
    res = curate_files(path, [("kstars", 2), ("edges", None)], bounds=bounds, d_max=D_MAX)
    q = res.summary.quantities["degree"]
    assert q.n_outside == 2 and res.summary.outliers == "clip"
    poisoned = read_reports(path, d_max=D_MAX)  # unscreened, in memory
    clean, info = screen_reports(poisoned, bounds)
    assert info["degree"].n_outside == 2 and (info["degree"].lo, info["degree"].hi) == q.admissible
    assert res.estimates[0][2] == curator.kstars(clean, 2)
    assert res.estimates[0][3] is not None and res.estimates[1][3] == (q.admissible[1] - q.admissible[0]) / 2
    rejected = read_report_set(path, d_max=D_MAX, bounds=bounds, outliers="reject")
    assert rejected.quantities["degree"].n_reports == N - 2
    with pytest.raises(ValueError, match=r"outside the admissible range .*r.parquet rows 0, 3"):
        read_report_set(path, d_max=D_MAX, bounds=bounds, outliers="raise")


# --- whole-set validation ---------------------------------------------------------------------


def _write(tmp_path, name, cols):
    return write_reports(tmp_path / name, cols)


def _cols(n=5, **changes):
    rep = DegreeRandomizer(epsilon=1.0).randomize(np.arange(n), rng=0)
    cols = {c: np.asarray(v).copy() for c, v in report_columns(rep).items()}
    for c, v in changes.items():
        cols[c] = np.asarray(v, dtype=cols[c].dtype)
    return cols


@pytest.mark.parametrize("fmt", FORMATS)
def test_duplicates_across_files_name_file_and_row(tmp_path, fmt):
    a = _write(tmp_path, f"a.{fmt}", _cols(5))
    b = _write(tmp_path, f"b.{fmt}", _cols(3, node=[7, 2, 8]))
    with pytest.raises(ValueError, match=rf"duplicate degree reports for node 2: .*b\.{fmt} row 1"):
        read_report_set([a, b])


def test_within_chunk_duplicate_names_both_rows(tmp_path):
    path = _write(tmp_path, "a.csv", _cols(4, node=[0, 3, 1, 3]))
    with pytest.raises(ValueError, match=r"node 3: .*a\.csv row 3 \(line 5\) repeats .*a\.csv row 1 \(line 3\)"):
        read_report_set(path)


def test_mixed_epsilon_wrong_sensitivity_missing_rows_and_nodes(tmp_path):
    with pytest.raises(ValueError, match=r"mixed epsilon .*a\.parquet row 2"):
        read_report_set(_write(tmp_path, "a.parquet", _cols(epsilon=[1, 1, 0.5, 1, 1])))
    with pytest.raises(ValueError, match=r"sensitivity 1, declared otherwise in .*b\.parquet row 4"):
        read_report_set(_write(tmp_path, "b.parquet", _cols(sensitivity=[1, 1, 1, 1, 2])))
    rep = DegreeRandomizer(epsilon=1.0, kstar_counts=[2], d_max=4).randomize(np.arange(4), rng=0)
    cols = report_columns(rep)
    keep = np.arange(len(cols["node"])) != 5  # node 2's kstar_2
    path = write_reports(tmp_path / "c.parquet", {c: np.asarray(v)[keep] for c, v in cols.items()})
    with pytest.raises(ValueError, match=r"kstar_2 is missing for 1 node\(s\): 2"):
        read_report_set(path, d_max=4)
    full = write_reports(tmp_path / "d.parquet", rep)
    with pytest.raises(ValueError, match=r"2 expected node\(s\) sent no report: 4, 5"):
        read_report_set(full, d_max=4, expected_nodes=6)
    with pytest.raises(ValueError, match=r"outside the expected node set: 3"):
        read_report_set(full, d_max=4, expected_nodes=[0, 1, 2])
    assert read_report_set(full, d_max=4, expected_nodes=4).n_nodes == 4


def test_protocol_version_and_round_are_checked(tmp_path):
    path = _write(tmp_path, "v2.jsonl", _cols(protocol_version=[1, 1, 1, 2, 1]))
    with pytest.raises(ValueError, match=r"version 2 in .*v2\.jsonl row 3 \(line 4\).*another protocol version"):
        read_report_set(path)
    cols = _cols()
    cols["protocol"] = np.array(["degree"] * 4 + ["rr-triangles"], dtype=object)
    with pytest.raises(ValueError, match=r"another protocol 'rr-triangles'.*p\.csv row 4"):
        read_report_set(_write(tmp_path, "p.csv", cols))
    path = _write(tmp_path, "r.csv", _cols(round=[2, 2, 2, 2, 2]))
    with pytest.raises(ValueError, match=r"round 1 .*round 2 in .*r\.csv rows 0, 1"):
        read_report_set(path, round=1)
    assert read_report_set(path).round == 2


# --- hostile files ---------------------------------------------------------------------------

HEADER = ",".join(COLUMNS)


def _csv(tmp_path, *lines, name="h.csv"):
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


GOOD = "0,1,degree,3,1.0,1,degree,1"


@pytest.mark.parametrize("line, match", [
    ("1.0,1,degree,3,1.0,1,degree,1", r"node id '1\.0' in .*h\.csv row 1 \(line 3\)"),       # type-confused id
    ("01,1,degree,3,1.0,1,degree,1", r"node id '01' in .*row 1"),
    ("alice,1,degree,3,1.0,1,degree,1", r"node id 'alice' in .*row 1.*integer node ids"),
    ("1,1,degree,true,1.0,1,degree,1", r"value must be an integer .*row 1"),                  # bool value
    ("1,1,degree,9007199254740993,1.0,1,degree,1", r"magnitude <= 2\*\*53.*row 1"),          # 2**53 + 1
    ("1,1,degree," + "9" * 500 + ",1.0,1,degree,1", r"magnitude <= 2\*\*53.*row 1"),          # huge decimal
    ("1,1,degree,2.5,1.0,1,degree,1", r"value must be an integer .*row 1"),
    ("1,1,degree,,1.0,1,degree,1", r"value is missing .*row 1"),
    ("1,1,degree,3,one,1,degree,1", r"epsilon must be numeric: .*row 1"),
    ("1,1,degree,3,1.0,1,degree,2", r"version 2 in .*row 1"),                                  # other version
    ("1,1,degree,3,1.0,1", r"malformed CSV"),                                                  # truncated row
])
def test_hostile_csv_rows(tmp_path, line, match):
    with pytest.raises(ValueError, match=match):
        read_report_set(_csv(tmp_path, GOOD, line))


def test_truncated_files(tmp_path):
    # a CSV cut in the middle of its last line
    path = tmp_path / "cut.csv"
    path.write_text(HEADER + "\n" + GOOD + "\n" + "1,1,deg")
    with pytest.raises(ValueError, match=r"cut\.csv row 1 \(line 3\): malformed CSV, 3 fields where the header has 8 \(truncated"):
        read_report_set(path)
    # a JSON Lines file cut inside an object
    rows = [json.dumps({c: v for c, v in zip(COLUMNS, [i, 1, "degree", 3, 1.0, 1.0, "degree", 1], strict=True)})
            for i in range(3)]
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(rows)[:-9])
    with pytest.raises(ValueError, match=r"cut\.jsonl row 2 \(line 3\): not valid JSON \(.*truncated"):
        read_report_set(path)
    # a Parquet file missing its tail
    full = write_reports(tmp_path / "full.parquet", _cols(50))
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(full.read_bytes()[:-100])
    with pytest.raises(ValueError, match=r"cut\.parquet: not a readable Parquet report file \(truncated"):
        read_report_set(cut)


@pytest.mark.parametrize("obj, match", [
    ({"node": True}, r"node must be an integer, got True in .*row 1 \(line 2\)"),
    ({"node": 1.0}, r"node id 1\.0 in .*row 1.*type-confused"),
    ({"node": "1"}, r"duplicate degree reports for node 1"),  # "1" is node 1 (canonical): a duplicate
    ({"value": True}, r"value must be an integer, got True in .*row 1"),
    ({"value": "123456789012345678901234567890"}, r"value in .*row 1.*magnitude"),
    ({"epsilon": "1.0"}, r"epsilon must be a number, got str"),
    ({"quantity": 7}, r"quantity must be a string"),
])
def test_hostile_jsonl_rows(tmp_path, obj, match):
    base = dict(zip(COLUMNS, [1, 1, "degree", 3, 1.0, 1.0, "degree", 1], strict=True))
    bad = {**base, **obj}
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(base) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(ValueError, match=match):
        read_report_set(path)


def test_hostile_parquet_types(tmp_path):
    cols = _cols(3)
    table = pa.table({c: pa.array(np.asarray(v).tolist()) for c, v in cols.items()})
    for col, arr, match in [
        ("value", pa.array([True, False, True]), r"value must be integers, got booleans"),
        ("node", pa.array([0.0, 1.0, 2.0]), r"node ids must be integers, got floats"),
        ("node", pa.array(["0", "1", "x"]), r"node id 'x' in .*t\.parquet row 2"),
        ("value", pa.array([1.0, 2.5, 3.0]), r"value must be an integer .*t\.parquet row 1"),
    ]:
        t = table.set_column(table.schema.get_field_index(col), col, arr)
        pq.write_table(t, tmp_path / "t.parquet")
        with pytest.raises(ValueError, match=match):
            read_report_set(tmp_path / "t.parquet")
    pq.write_table(table.drop_columns(["protocol_version"]), tmp_path / "t.parquet")
    with pytest.raises(ValueError, match=r"t\.parquet: report columns missing: \['protocol_version'\]"):
        read_report_set(tmp_path / "t.parquet")


def test_reader_errors(tmp_path):
    with pytest.raises(ValueError, match="suffix"):
        read_report_set(tmp_path / "r.txt")
    with pytest.raises(FileNotFoundError, match="not found"):
        read_report_set(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="chunk_rows"):
        list(iter_report_chunks(tmp_path / "r.csv", chunk_rows=0))
    with pytest.raises(ValueError, match="no report files"):
        read_report_set([])


@pytest.mark.parametrize("chunk_rows, match", [
    (5, r"node 2: .*c\.parquet row 5 repeats an earlier report"),   # consecutive runs: the slice path
    (100, r"node 2: .*c\.parquet row 5 repeats .*c\.parquet row 2"),  # one unsorted chunk
    (1, r"node 2: .*c\.parquet row 5 repeats an earlier report"),
])
def test_duplicates_are_found_whatever_the_chunking(tmp_path, chunk_rows, match):
    path = _write(tmp_path, "c.parquet", _cols(7, node=[0, 1, 2, 3, 4, 2, 3]))
    with pytest.raises(ValueError, match=match):
        read_report_set(path, chunk_rows=chunk_rows)


# ------------------------------------------------------------------ issue 26 item 8: bounded JSON Lines


def _jsonl_row(node=1, **extra):
    return json.dumps({**dict(zip(COLUMNS, [node, 1, "degree", 3, 1.0, 1.0, "degree", 1], strict=True)),
                       **extra})


def test_a_jsonl_line_past_one_mib_is_refused_naming_the_line_without_reading_it_whole(tmp_path, monkeypatch):
    from ldpgraph.run import reportfiles

    long = _jsonl_row(2, node_note="x" * (reportfiles.MAX_JSONL_LINE + 10))
    path = tmp_path / "long.jsonl"
    path.write_text(_jsonl_row(0) + "\n\n" + long + "\n" + _jsonl_row(3) + "\n")
    read_sizes = []
    real_open = open

    class Spy:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def readline(self, limit=-1):
            read_sizes.append(limit)
            out = self.fh.readline(limit)
            read_sizes.append(len(out))
            return out

    monkeypatch.setattr("builtins.open", lambda *a, **k: Spy(real_open(*a, **k)) if str(a[0]) == str(path)
                        else real_open(*a, **k))
    with pytest.raises(ValueError, match=r"long\.jsonl row 1 \(line 3\): line longer than 1048576 bytes"):
        read_report_set(path)
    monkeypatch.undo()
    assert max(read_sizes) <= reportfiles.MAX_JSONL_LINE + 1  # bounded reads, never the whole line
    assert -1 not in read_sizes
    # a line of exactly the limit is read (and then judged on its content)
    pad = reportfiles.MAX_JSONL_LINE - len(_jsonl_row(2))
    exact = _jsonl_row(2)[:-1] + " " * pad + "}"
    assert len(exact) == reportfiles.MAX_JSONL_LINE
    path.write_text(_jsonl_row(0) + "\n" + exact + "\n")
    assert read_report_set(path).n_rows == 2


@pytest.mark.parametrize("extra, match", [
    ({"note": "hi"}, r"x\.jsonl row 1 \(line 2\): unknown key 'note'; a report row has exactly the keys"),
    ({"b": 1, "a": 2}, r"row 1 \(line 2\): unknown keys 'b', 'a'"),
    ({"_where": "forged"}, r"unknown key '_where'"),
])
def test_a_jsonl_row_with_an_unknown_key_is_refused(tmp_path, extra, match):
    path = tmp_path / "x.jsonl"
    path.write_text(_jsonl_row(0) + "\n" + _jsonl_row(1, **extra) + "\n")
    with pytest.raises(ValueError, match=match):
        read_report_set(path)


def test_a_jsonl_line_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "bin.jsonl"
    path.write_bytes(_jsonl_row(0).encode() + b"\n" + _jsonl_row(1).encode()[:-3] + b"\xff\xfe}\n")
    with pytest.raises(ValueError, match=r"bin\.jsonl row 1 \(line 2\): not UTF-8 text"):
        read_report_set(path)
