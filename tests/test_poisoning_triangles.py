"""Poisoning screening of the triangle protocols' rows, and the protocol registry of report files."""

from __future__ import annotations

import pytest

from ldpgraph.cli import main
from ldpgraph.protocols import deploy_triangles as dt
from ldpgraph.protocols.reports import PROTOCOLS, check_broadcast, report_columns
from ldpgraph.reportfiles import read_report_set, write_reports

GRAPH = "ws:n=40,k=6,p=0.2"
DLAP = "two-round-triangles-dlap"


def _run(capsys, *args) -> str:
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _err(capsys, code, *args) -> str:
    capsys.readouterr()
    assert main([str(a) for a in args]) == code
    return capsys.readouterr().err


# ------------------------------------------------------------------------------ protocol registry


def test_every_deployed_protocol_is_registered_with_its_version():
    assert PROTOCOLS == {"degree": 1, **dt.TRIANGLE_PROTOCOLS}
    assert set(dt.TRIANGLE_PROTOCOLS) == {dt.RR_PROTOCOL, DLAP, dt.CLUSTERING_PROTOCOL}


def test_degree_only_entry_points_refuse_triangle_protocols():
    from ldpgraph.protocols import DegreeRandomizer

    rep = DegreeRandomizer(epsilon=1.0).randomize([1, 2], rng=0)
    with pytest.raises(ValueError, match=r"protocol must be 'degree'.*got 'rr-triangles'.*round1_columns"):
        report_columns(rep, protocol="rr-triangles")
    fake = {"format": "ldpgraph-broadcast", "format_version": 1, "protocol": DLAP, "protocol_version": 1,
            "round": 1, "values": {}}
    with pytest.raises(ValueError, match=r"JSON broadcast of 'two-round-triangles-dlap'.*edge list"):
        check_broadcast(fake, next_round=2)


@pytest.fixture()
def files(tmp_path, capsys):
    tri = tmp_path / "tri.csv"
    deg = tmp_path / "deg.csv"
    _run(capsys, "node", "--protocol", "rr-triangles", "--graph", GRAPH, "--epsilon", 1, "--simulate",
         "--seed", 1, "--out", tri)
    _run(capsys, "node", "--graph", GRAPH, "--epsilon", 1, "--simulate", "--seed", 1, "--out", deg)
    return tri, deg


def test_curate_names_the_protocol_of_a_mislabelled_file(files, capsys):
    tri, deg = files
    err = _err(capsys, 2, "curate", tri, "--protocol", "degree")
    assert f"{tri} holds protocol 'rr-triangles' rows, not 'degree': pass --protocol rr-triangles" in err
    err = _err(capsys, 2, "curate", deg, "--protocol", "avg-clustering")
    assert "holds protocol 'degree' rows, not 'avg-clustering': pass --protocol degree" in err
    err = _err(capsys, 2, "curate", deg, tri)
    assert "mix protocols" in err and "deg.csv holds protocol 'degree'" in err
    assert "tri.csv holds protocol 'rr-triangles'" in err
    assert "triangles" in _run(capsys, "curate", tri, "--protocol", "rr-triangles")


def test_rows_of_another_protocol_inside_a_file_are_named(files, tmp_path):
    tri, deg = files
    cols = dt.round1_columns("rr-triangles", [0, 1, 2], [[1], [0, 2], [1]], 1.0, seed=0)
    cols["protocol"][-1] = "degree"
    bad = write_reports(tmp_path / "mixed.csv", cols)
    acc = dt.Round1Accumulator("rr-triangles")
    from ldpgraph.reportfiles import iter_report_chunks

    with pytest.raises(ValueError, match=r"rows of protocol 'degree', expected 'rr-triangles'.*mixed\.csv row"
                       r".*curate them with --protocol degree"):
        for chunk in iter_report_chunks(bad):
            acc.add(chunk)
    with pytest.raises(ValueError, match=r"rows of another protocol 'rr-triangles', expected 'degree'"):
        read_report_set(tri)
