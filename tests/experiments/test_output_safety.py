"""Issue 26 item 12: experiment output folders get a plain mkdir's permissions, stale temporary
folders of killed runs are removed, the swap leaves no moment without --out, and a second run
on one --out refuses (a lock) instead of racing."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest

from ldpgraph.experiments import outputs
from ldpgraph.experiments.outputs import (
    OutputLockedError,
    claim_output,
    lock_path,
    output_lock,
    write_atomically,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and flock")


def _produce(text):
    def produce(tmp):
        (tmp / "summary.txt").write_text(text)
        (tmp / "plots").mkdir()
        (tmp / "plots" / "a.png").write_bytes(b"png")
        return {"table": tmp / "summary.txt"}

    return produce


@pytest.fixture
def holder(tmp_path):
    """Another process holding the lock of a folder until the test ends."""
    procs = []

    def hold(out):
        code = ("import sys\nfrom ldpgraph.experiments.outputs import output_lock\n"
                "with output_lock(sys.argv[1]):\n    print('locked', flush=True)\n    sys.stdin.read()\n")
        proc = subprocess.Popen([sys.executable, "-c", code, str(out)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)
        procs.append(proc)
        assert proc.stdout.readline() == b"locked\n"
        return proc

    yield hold
    for proc in procs:
        proc.stdin.close()
        proc.wait(timeout=30)


def _release(proc):
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0


# ------------------------------------------------------------------ permissions


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o027])
def test_result_folders_get_the_permissions_of_a_plain_mkdir(tmp_path, umask):
    old = os.umask(umask)
    try:
        os.mkdir(tmp_path / "plain")
        want = stat.S_IMODE((tmp_path / "plain").stat().st_mode)
        out = tmp_path / "out"
        write_atomically(out, _produce("1"), config={})  # out absent: renamed into place
        assert stat.S_IMODE(out.stat().st_mode) == want
        write_atomically(out, _produce("2"), config={})  # an earlier result: swapped
        assert stat.S_IMODE(out.stat().st_mode) == want
        assert stat.S_IMODE((out / "plots").stat().st_mode) == want
        assert (out / "summary.txt").read_text() == "2"
    finally:
        os.umask(old)
    assert want != 0o700


# ------------------------------------------------------------------ stale temporary folders


def test_stale_temporary_folders_of_killed_runs_are_removed(tmp_path):
    out = tmp_path / "out"
    hour_ago = time.time() - 3600
    made = {}
    for name in (".out.partial-abc12345", ".out.old-zz_9x7y6", ".out.partial-fresh001", ".other.partial-abc12345",
                 ".out.partial-keep", ".out.partial-notadir"):
        p = tmp_path / name
        if name.endswith("notadir"):
            p.write_text("x")
        else:
            p.mkdir()
            (p / "records.csv").write_text("half")
        when = time.time() + 3600 if "fresh" in name else hour_ago  # fresh: begun after this run
        os.utime(p, (when, when))
        made[name] = p
    write_atomically(out, _produce("1"), config={})
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".other.partial-abc12345", ".out.partial-fresh001", ".out.partial-keep",
                    ".out.partial-notadir", "out"]


def test_a_temporary_folder_of_a_live_run_is_never_removed(tmp_path, holder):
    out = tmp_path / "out"
    live = tmp_path / ".out.partial-live0001"
    live.mkdir()
    os.utime(live, (time.time() - 3600, time.time() - 3600))
    proc = holder(out)  # the live run holds the lock: this one refuses and removes nothing
    with pytest.raises(OutputLockedError):
        write_atomically(out, _produce("1"), config={})
    assert live.is_dir()
    _release(proc)


# ------------------------------------------------------------------ the swap


def test_out_exists_at_every_moment_of_the_swap(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_atomically(out, _produce("1"), config={})
    real = os.replace
    seen = []

    def watched(src, dst, **kw):
        seen.append(out.exists())
        real(src, dst, **kw)
        seen.append(out.exists())

    monkeypatch.setattr(os, "replace", watched)
    write_atomically(out, _produce("2"), config={})
    assert all(seen)
    assert (out / "summary.txt").read_text() == "2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_without_an_atomic_exchange_the_swap_still_completes(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "_exchange", lambda a, b: False)
    out = tmp_path / "out"
    write_atomically(out, _produce("1"), config={})
    write_atomically(out, _produce("2"), config={})
    assert (out / "summary.txt").read_text() == "2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# ------------------------------------------------------------------ one writer at a time


def test_a_second_run_on_the_same_out_refuses(tmp_path, holder):
    out = tmp_path / "out"
    write_atomically(out, _produce("first"), config={})
    proc = holder(out)
    called = []

    def produce(tmp):
        called.append(tmp)
        return {}

    with pytest.raises(OutputLockedError, match=rf"another run is writing the output folder {out} .*choose "
                       r"another --out"):
        write_atomically(out, produce, config={})
    assert not called and (out / "summary.txt").read_text() == "first"
    with pytest.raises(OutputLockedError):
        claim_output(out)
    _release(proc)
    write_atomically(out, _produce("second"), config={})  # free again
    assert (out / "summary.txt").read_text() == "second"
    assert not lock_path(out).exists()  # the lock file goes with the lock


def test_the_command_line_refuses_before_any_work(tmp_path, holder, monkeypatch, capsys):
    from ldpgraph import experiments
    from ldpgraph.cli import main

    out = tmp_path / "out"
    out.mkdir()
    proc = holder(out)

    def no_work(*a, **k):
        raise AssertionError("the run must be refused before it computes anything")

    monkeypatch.setattr(experiments, "run_experiment", no_work)
    assert main(["experiment", "ba:n=50,m=2", "--trials", "1", "--jobs", "1", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"another run is writing the output folder {out}" in err
    _release(proc)


def test_claims_and_nested_locks_are_released_after_the_write(tmp_path):
    out = tmp_path / "out"
    claim_output(out)
    assert lock_path(out).is_file()
    write_atomically(out, _produce("1"), config={})
    assert not lock_path(out).exists()  # the claim ended with its write
    with output_lock(out):
        write_atomically(out, _produce("2"), config={})
        assert lock_path(out).is_file()  # still held by the outer block
    assert not lock_path(out).exists()


def test_a_link_planted_at_the_lock_file_is_refused(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    out = tmp_path / "out"
    lock_path(out).symlink_to(victim)
    with pytest.raises(OSError, match=r"cannot create the lock file .*\.out\.lock.*symbolic link"):
        write_atomically(out, _produce("1"), config={})
    assert victim.read_text() == "mine" and not out.exists()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_hold_or_release_the_parents_lock(tmp_path):
    out = tmp_path / "out"
    with output_lock(out):
        pid = os.fork()
        if pid == 0:  # the child: it holds nothing, and cannot take the parent's lock
            try:
                ok = not outputs._HELD
                try:
                    claim_output(out)
                    ok = False
                except OutputLockedError:
                    pass
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert lock_path(out).is_file()
    assert not lock_path(out).exists()


# ------------------------------------------------------------------ what a run may delete


def test_a_planted_manifest_does_not_make_a_users_folder_swappable(tmp_path):
    """issue 36 finding 3: a folder holding only a user's file and a manifest listing it (the
    wrong digest) is not an earlier run's: the file stays (7443152 swapped the folder and deleted
    it); an earlier output the user edited stays too, an unchanged one is replaced."""
    out = tmp_path / "out"
    write_atomically(out, _produce("first"), config={})
    (out / "plots" / "a.png").write_bytes(b"edited by hand")

    def no_plots(tmp):
        (tmp / "summary.txt").write_text("second")
        return {}

    write_atomically(out, no_plots, config={})  # a.png is not the listed output any more: kept
    assert (out / "plots" / "a.png").read_bytes() == b"edited by hand"
    assert (out / "summary.txt").read_text() == "second"
    manifest = (out / "manifest.json").read_text()
    for p in (out / "summary.txt", out / "plots" / "a.png", out / "manifest.json"):
        p.unlink()
    (out / "plots").rmdir()
    (out / "summary.txt").write_text("the user's own summary")
    (out / "manifest.json").write_text(manifest)  # lists summary.txt with another digest
    write_atomically(out, lambda tmp: (tmp / "records.csv").write_text("r") and {}, config={})
    assert (out / "summary.txt").read_text() == "the user's own summary"
    assert (out / "records.csv").read_text() == "r"
