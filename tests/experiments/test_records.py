from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.experiments.records import COLUMNS, CellRecords, Records, read_records_csv, write_records_csv


def _cells():
    tricky = np.array([0.1 + 0.2, 1e-300, -2.5e17, 123456789.12345678, np.nan, np.inf])
    return [
        CellRecords("facebook", "unbiased-dlap", "kstars", 2, 0.1, 9314849.0, tricky, 2**100 + 1,
                    tuple(f"17/{t // 4}" for t in range(tricky.size))),
        CellRecords("ba:n=10,m=2", "naive-dlap", "degree_entropy", None, 1.5, 2.25, np.array([2.0]), 2**100 + 1,
                    ("9/0",)),
    ]


def test_header_and_rows(tmp_path):
    p = write_records_csv(Records(_cells()), tmp_path / "r.csv")
    lines = p.read_text().splitlines()
    assert lines[0] == "graph,method,statistic,k,epsilon,trial,estimate,truth,seed,spawn_key"
    assert tuple(lines[0].split(",")) == COLUMNS
    assert len(lines) == 1 + 7
    # spec string with a comma is quoted; missing parameter is an empty field
    assert lines[-1] == '"ba:n=10,m=2",naive-dlap,degree_entropy,,1.5,0,2.0,2.25,1267650600228229401496703205377,9/0'


def test_round_trip_is_bit_exact(tmp_path):
    rec = Records(_cells())
    back = read_records_csv(write_records_csv(rec, tmp_path / "r.csv"))
    assert back == rec
    assert back[0].estimates[0] == 0.1 + 0.2  # shortest repr round-trips exactly
    assert back[1].k is None


def test_columns():
    cols = Records(_cells()).columns()
    assert list(cols) == list(COLUMNS)
    assert all(len(v) == 7 for v in cols.values())
    assert cols["trial"].tolist() == [0, 1, 2, 3, 4, 5, 0]
    assert cols["k"].tolist() == [2] * 6 + [-1]


def test_read_rejects_bad_files(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n")
    with pytest.raises(ValueError, match="expected header"):
        read_records_csv(p)
    p.write_text(",".join(COLUMNS) + "\ng,m,kstars,2,1.0,1,3.0,4.0,0,1/0\n")
    with pytest.raises(ValueError, match="line 2: trial 1 out of order"):
        read_records_csv(p)
    p.write_text(",".join(COLUMNS) + "\ng,m,kstars,2,one,0,3.0,4.0,0,1/0\n")
    with pytest.raises(ValueError, match="line 2"):
        read_records_csv(p)


def test_equality_detects_differences():
    a = _cells()[1]
    b = CellRecords(a.graph, a.method, a.statistic, a.k, a.epsilon, a.truth, a.estimates + 1e-12, a.seed, a.spawn_keys)
    assert a != b
    assert Records([a]) != Records([b])


def test_writer_matches_the_csv_module_byte_for_byte(tmp_path):
    """The per-cell fast writer gives exactly csv.writer's bytes, quoting included."""
    import csv

    odd = ['a,b', 'say "hi"', "line\nbreak", "cr\rhere", " lead", "", "x;y", "tab\tin", "ünï"]
    rng = np.random.default_rng(5)
    cells = [
        CellRecords(g, m, s, k, eps, truth, est, seed, keys)
        for i, (g, m, s) in enumerate(zip(odd, reversed(odd), odd[3:] + odd[:3], strict=True))
        for k, eps, truth, seed in [(None if i % 3 == 0 else i, 10.0 ** (i - 4), [np.nan, -0.0, 1e308][i % 3], 2**64 + i)]
        for est in [np.concatenate([rng.normal(size=5) * 10.0 ** rng.integers(-300, 300, 5), [np.nan, np.inf, -np.inf, 0.0]])]
        for keys in [tuple(f"{i}/{t // 2}" if t % 4 else odd[t % len(odd)] for t in range(est.size))]
    ]
    rec = Records(cells)
    expected = tmp_path / "expected.csv"
    with open(expected, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rec.rows())
    got = write_records_csv(rec, tmp_path / "got.csv")
    assert got.read_bytes() == expected.read_bytes()
