"""Issue 26 item 7: every writer of a named output file creates a unique temporary file
exclusively (no symbolic link followed, nothing shared between two writers), then renames it
into place; on an error nothing is left behind and the target is untouched."""

from __future__ import annotations

import stat
import sys

import numpy as np
import pytest

from ldpgraph import _atomic
from ldpgraph._atomic import atomic_write
from ldpgraph.protocols import DegreeRandomizer
from ldpgraph.run import reportfiles
from ldpgraph.run.files import read_broadcast, write_broadcast
from ldpgraph.run.reportfiles import (
    node_labels_path,
    read_reports,
    write_node_labels,
    write_reports,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links and umask are POSIX")

SECRET = b"the victim's own file: must never be written through a planted link\n"


@pytest.fixture
def reports():
    return DegreeRandomizer(epsilon=1.0).randomize([3, 1, 2, 5], rng=0)


def _triangle_broadcast():
    from ldpgraph.protocols.deploy_triangles import TriangleBroadcast

    return TriangleBroadcast.build("two-round-triangles-dlap", 4, 0.5, 3, [1, 5])


def _bound_broadcast():
    """(protocol, plan, its degree-bound broadcast D = 7): the JSON broadcast of local-dlap-kstars-private."""
    from ldpgraph.protocols import registry
    from ldpgraph.protocols.degrees.local_kstars import DegreeBound

    proto = registry.get("local-dlap-kstars-private")
    plan = proto.plan(0.5)
    return proto, plan, DegreeBound.build(proto.name, 4, plan.release("degree").epsilon, 7)


def _writers(reports):
    """(name, write(path)) for every writer of a named file."""
    from ldpgraph.run.trianglefiles import write_triangle_broadcast

    proto, _, bcast = _bound_broadcast()
    out = [(f"reports.{fmt}", lambda p, fmt=fmt: write_reports(p, reports)) for fmt in ("csv", "jsonl", "parquet")]
    out.append(("labels.nodes.csv", lambda p: write_node_labels(p.with_name("labels.csv"), ["a", "b"])))
    out.append(("broadcast.json", lambda p: write_broadcast(proto, p, bcast)))
    out.append(("triangles.txt", lambda p: write_triangle_broadcast(p, _triangle_broadcast())))
    return out


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial") or ".partial" in p.name)


def test_a_link_planted_at_the_old_fixed_temporary_name_is_not_followed(tmp_path, reports):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(SECRET)
    out = tmp_path / "out"
    out.mkdir()
    for name, write in _writers(reports):
        target = out / name
        planted = out / f".{name}.partial"
        planted.symlink_to(victim)
        write(target)
        assert victim.read_bytes() == SECRET, name
        assert planted.is_symlink(), name  # left alone: not ours
        assert target.is_file() and not target.is_symlink()
        planted.unlink()
    assert read_reports(out / "reports.csv").degrees.values.size == 4
    proto, plan, _ = _bound_broadcast()
    assert read_broadcast(proto, out / "broadcast.json", plan).bound == 7
    assert _leftovers(out) == []


def test_a_link_at_the_target_is_replaced_not_followed(tmp_path, reports):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(SECRET)
    out = tmp_path / "out"
    out.mkdir()
    for name, write in _writers(reports):
        target = out / name
        target.symlink_to(victim)
        write(target)
        assert victim.read_bytes() == SECRET, name
        assert target.is_file() and not target.is_symlink(), name


def test_temporary_names_are_not_predictable_and_links_there_are_never_opened(tmp_path, monkeypatch):
    """Whatever name is drawn, an existing entry (a link included) is skipped, never opened."""
    victim = tmp_path / "victim.txt"
    victim.write_bytes(SECRET)
    names = iter(["0" * 16, "0" * 16, "1" * 16])
    monkeypatch.setattr(_atomic.secrets, "token_hex", lambda n: next(names))
    (tmp_path / f".t.txt.{'0' * 16}.partial").symlink_to(victim)
    with atomic_write(tmp_path / "t.txt", "w", encoding="utf-8") as fh:
        assert (tmp_path / f".t.txt.{'1' * 16}.partial").is_file()
        fh.write("new")
    assert victim.read_bytes() == SECRET
    assert (tmp_path / "t.txt").read_text() == "new"


def test_two_writers_of_one_output_do_not_share_a_temporary_file(tmp_path, monkeypatch, reports):
    """A second writer finishing while the first is half-way: both complete, the last rename wins
    and the file is whole (with one shared ``.name.partial`` the first writer's rows ended up in
    the second writer's renamed file and its own rename failed)."""
    target = tmp_path / "r.jsonl"
    other = DegreeRandomizer(epsilon=1.0).randomize([9, 9, 9], rng=1)
    real, create = reportfiles._write_jsonl, _atomic.create_exclusive
    temps, calls = [], []

    def spy(*args, **kwargs):
        fd, path = create(*args, **kwargs)
        temps.append(path)
        return fd, path

    def interleaved(fh, cols):
        calls.append(len(calls))
        if len(calls) == 1:
            real(fh, {c: np.asarray(v)[:2] for c, v in cols.items()})
            write_reports(target, other)  # a second writer of the same output, start to end
            real(fh, {c: np.asarray(v)[2:] for c, v in cols.items()})
        else:
            real(fh, cols)

    monkeypatch.setattr(_atomic, "create_exclusive", spy)
    monkeypatch.setattr(reportfiles, "_write_jsonl", interleaved)
    write_reports(target, reports)
    got = read_reports(target).degrees.values
    assert sorted(got.tolist()) == sorted(reports.degrees.values.tolist())
    assert len(calls) == 2 and len(set(temps)) == 2  # two temporary files
    assert _leftovers(tmp_path) == []


def test_an_error_while_writing_leaves_the_target_and_no_temporary_file(tmp_path, reports):
    target = tmp_path / "r.csv"
    target.write_bytes(SECRET)
    with pytest.raises(RuntimeError, match="boom"), atomic_write(target) as fh:
        fh.write(b"half")
        raise RuntimeError("boom")
    assert target.read_bytes() == SECRET
    assert list(tmp_path.iterdir()) == [target]
    with pytest.raises(ValueError, match="report columns missing"):
        write_reports(target, {"node": [1]})
    assert target.read_bytes() == SECRET and list(tmp_path.iterdir()) == [target]


def test_new_files_get_the_permissions_of_a_plain_open(tmp_path, reports):
    (tmp_path / "plain").write_text("x")
    want = stat.S_IMODE((tmp_path / "plain").stat().st_mode)
    for name, write in _writers(reports):
        target = tmp_path / name
        write(target)
        got = target if name != "labels.nodes.csv" else node_labels_path(tmp_path / "labels.csv")
        assert stat.S_IMODE(got.stat().st_mode) == want, name


def test_atomic_write_checks_its_mode(tmp_path):
    with pytest.raises(ValueError, match="mode must be 'wb' or 'w'"), atomic_write(tmp_path / "x", "a"):
        pass
    with pytest.raises(ValueError, match="text mode"), atomic_write(tmp_path / "x", "wb", encoding="utf-8"):
        pass


def test_experiment_table_writers_replace_a_link_at_the_target(tmp_path):
    from ldpgraph.experiments.records import CellRecords, Records, read_records_csv, write_records_csv
    from ldpgraph.experiments.summary import read_summary_csv, summarize, write_summary_csv

    victim = tmp_path / "victim.txt"
    victim.write_bytes(SECRET)
    records = Records([CellRecords("g", "m", "kstars", 2, 0.5, 3.0, np.array([0.1, 0.2]), 7, ("5/0", "5/1"))])
    for name in ("records.csv", "summary.csv"):
        (tmp_path / name).symlink_to(victim)
    write_records_csv(records, tmp_path / "records.csv")
    write_summary_csv(summarize(records), tmp_path / "summary.csv")
    assert victim.read_bytes() == SECRET
    assert read_records_csv(tmp_path / "records.csv") == records
    assert len(read_summary_csv(tmp_path / "summary.csv")) == 1
    assert _leftovers(tmp_path) == []


def test_a_missing_folder_is_named(tmp_path, reports):
    with pytest.raises(FileNotFoundError, match=r"cannot write .*r\.csv: its folder .*nowhere does not exist"):
        write_reports(tmp_path / "nowhere" / "r.csv", reports)


def test_ldpgraph_node_does_not_follow_a_link_planted_in_its_output_folder(tmp_path, capsys):
    """The reproduction of the finding: ``ldpgraph node --out r.csv`` with ``.r.csv.partial`` a
    link to another file of the user's (it used to be overwritten with the report rows)."""
    from ldpgraph.cli import main

    victim = tmp_path / "victim.txt"
    victim.write_bytes(SECRET)
    out = tmp_path / "r.csv"
    (tmp_path / ".r.csv.partial").symlink_to(victim)
    assert main(["node", "--node-id", "3", "--neighbors", "1,2", "--epsilon", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    assert victim.read_bytes() == SECRET
    assert read_reports(out).degrees.values.size == 1
