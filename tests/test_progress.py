"""Progress on stderr (issue 38, item 4): a line every ~10 s when stderr is not a terminal, a tqdm
bar on one, nothing with --quiet; never a change to stdout or to a result."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ldpgraph
from ldpgraph._progress import INTERVAL_ENV, Progress, progress_interval, progress_line
from ldpgraph.cli import main

ROOT = Path(ldpgraph.__file__).resolve().parent.parent
LINE = re.compile(r"^ldpgraph: (?P<desc>[a-z ]+) (?P<done>[\d,]+)/(?P<total>[\d,]+) \(\d+%\), \d+ (s|min).*$")


def _env(interval: float) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["MPLBACKEND"] = "Agg"
    env[INTERVAL_ENV] = repr(interval)
    return env


def _run(args: list[str], cwd: Path, interval: float) -> tuple[str, str]:
    """``ldpgraph ARGS`` with stdout and stderr redirected to files (not terminals); their texts."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    with open(out, "w") as fo, open(err, "w") as fe:
        rc = subprocess.run([sys.executable, "-m", "ldpgraph", *args], cwd=cwd, env=_env(interval), stdout=fo,
                            stderr=fe, timeout=300).returncode
    assert rc == 0, err.read_text()
    return out.read_text(), err.read_text()


def _progress_lines(err: str, desc: str) -> list[re.Match]:
    lines = [LINE.match(ln) for ln in err.splitlines()]
    assert all(lines), err  # nothing else on stderr
    assert {m["desc"] for m in lines} == {desc}
    return lines


# ------------------------------------------------------------------ the object


def test_lines_come_while_nothing_arrives_and_a_last_one_at_the_end():
    err = io.StringIO()
    bar = Progress(4, unit="trial", stream=err, interval=0.01)
    bar.update(1, note="running x")
    deadline = time.monotonic() + 30
    while err.getvalue().count("\n") < 2 and time.monotonic() < deadline:  # no update: lines still come
        time.sleep(0.01)
    bar.update(3)
    bar.close()
    lines = err.getvalue().splitlines()
    assert len(lines) >= 3
    assert lines[0].startswith("ldpgraph: trials 1/4 (25%), ") and lines[0].endswith("; running x")
    assert lines[-1].startswith("ldpgraph: trials 4/4 (100%), ") and lines[-1].endswith("; done")


def test_a_failure_says_stopped_not_done():
    err = io.StringIO()
    with pytest.raises(KeyError), Progress(4, unit="file", stream=err, interval=0.005):
        time.sleep(0.05)
        raise KeyError("x")
    assert err.getvalue().splitlines()[-1].endswith("; stopped")


def test_short_work_and_quiet_print_nothing():
    err = io.StringIO()
    with Progress(2, unit="method", stream=err, interval=60.0) as bar:
        bar.update(2)
    with Progress(2, unit="method", stream=err, interval=0.001, quiet=True) as bar:
        time.sleep(0.05)
        bar.update(2)
    assert err.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_tqdm_bar_and_no_lines():
    err = _Terminal()
    with Progress(3, unit="trial", stream=err, interval=0.001) as bar:
        assert type(bar._bar).__module__.startswith("tqdm")
        time.sleep(0.05)
        bar.update(3)
    assert "ldpgraph: trials" not in err.getvalue()  # tqdm's delay (1 s) not reached: nothing at all
    assert err.getvalue().strip() == ""


def test_the_line_counts_elapsed_and_left():
    assert progress_line("trials", 40, 200, 65.0) == (
        "ldpgraph: trials 40/200 (20%), 1 min 05 s elapsed, about 4 min 20 s left")
    assert progress_line("trials", 0, 200, 3.0) == "ldpgraph: trials 0/200 (0%), 3 s elapsed"
    assert progress_line("files", 3, 3, 7300.0, "done") == "ldpgraph: files 3/3 (100%), 2 h 01 min elapsed; done"


@pytest.mark.parametrize("bad", ["0", "-1", "soon", "nan", "inf"])
def test_a_bad_interval_is_refused_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv(INTERVAL_ENV, bad)
    with pytest.raises(ValueError, match=f"{INTERVAL_ENV} must be a number of seconds > 0, got '{bad}'"):
        progress_interval()
    monkeypatch.setenv(INTERVAL_ENV, "2.5")
    assert progress_interval() == 2.5


# ------------------------------------------------------------------ the commands, redirected to files


def test_a_redirected_experiment_shows_progress_on_stderr_and_the_same_results(tmp_path):
    args = ["experiment", "ba:n=2000,m=5", "--epsilons", "1", "--k", "2", "--trials", "300", "--block-size",
            "10", "--jobs", "2", "--seed", "3", "--no-plots", "--out", "res"]
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    fast.mkdir()
    slow.mkdir()
    out_fast, err_fast = _run(args, fast, 0.02)
    out_slow, err_slow = _run(args, slow, 1e6)  # no line: the same run without progress
    lines = _progress_lines(err_fast, "trials")
    assert len(lines) >= 2 and lines[-1].string.endswith("; done")
    total = int(lines[-1]["total"].replace(",", ""))
    assert total == 5 * 300 and int(lines[-1]["done"].replace(",", "")) == total
    done = [int(m["done"].replace(",", "")) for m in lines]
    assert done == sorted(done)  # counted in the parent as results arrive
    assert err_slow == ""
    timing = re.compile(r"in [\d.]+ s \(")  # stdout and every result file are untouched
    assert timing.sub("", out_fast) == timing.sub("", out_slow)
    for name in ("records.csv", "summary.csv", "summary.txt"):
        assert (fast / "res" / name).read_bytes() == (slow / "res" / name).read_bytes()


def test_a_redirected_estimate_reports_methods_and_quiet_silences_it(tmp_path):
    args = ["estimate", "ws:n=150,k=6,p=0.2", "--stat", "four_cycles", "--epsilon", "2", "--seed", "1",
            "--methods", "all"]
    out, err = _run(args, tmp_path, 0.001)
    lines = _progress_lines(err, "methods")
    assert lines[-1].string.endswith("; done") and lines[-1]["done"] == lines[-1]["total"]
    assert any("; running " in m.string for m in lines) and out.startswith("graph ")
    assert _run([*args, "--quiet"], tmp_path, 0.001) == ("", "")


def test_a_redirected_curate_over_many_files_reports_files(tmp_path):
    paths = []
    for v in range(40):
        paths.append(str(tmp_path / f"n{v}.csv"))
        assert main(["node", "--node-id", str(v), "--neighbors", str((v + 1) % 40), "--epsilon", "1",
                     "--simulate", "--seed", str(v), "--out", paths[-1]]) == 0
    out, err = _run(["curate", *paths, "--expected-nodes", "40"], tmp_path, 0.001)
    lines = _progress_lines(err, "report files")
    assert lines[-1]["done"] == lines[-1]["total"] == "40"
    out_slow, err_slow = _run(["curate", *paths, "--expected-nodes", "40"], tmp_path, 1e6)
    assert (out, err_slow) == (out_slow, "")
    assert _run(["curate", *paths, "--expected-nodes", "40", "--quiet"], tmp_path, 0.001) == (out, "")
