"""The ``ldpgraph`` command line: end to end in subprocesses, and its error paths in-process."""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ldpgraph
import ldpgraph.datasets
from ldpgraph.cli import FALLBACK_GRAPH, main
from ldpgraph.experiments import DEFAULT_METHODS

ROOT = Path(ldpgraph.__file__).resolve().parent.parent


def _env(cmd=None, *, no_data=False):
    """Environment of a subprocess: ``python -m`` runs the package under test (PYTHONPATH); the
    console script runs whatever install it belongs to (in CI: the fresh non-editable one).
    ``no_data``: as on a fresh machine, without LDPGRAPH_DATA."""
    env = dict(os.environ)
    if no_data:
        env.pop("LDPGRAPH_DATA", None)
    if cmd is None or cmd[0] == sys.executable:
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["MPLBACKEND"] = "Agg"
    return env


def _commands():
    cmds = [pytest.param([sys.executable, "-m", "ldpgraph"], id="python-m")]
    script = shutil.which("ldpgraph")
    cmds.append(pytest.param([script] if script else None, id="console-script",
                             marks=pytest.mark.skipif(script is None, reason="console script not installed")))
    return cmds


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# ------------------------------------------------------------------ end to end (subprocess)


@pytest.mark.parametrize("cmd", _commands())
def test_experiment_on_default_data_writes_the_promised_files(cmd, tmp_path):
    """Without LDPGRAPH_DATA and with an empty cache the real Facebook graph (shipped) is used."""
    out = tmp_path / "res"
    env = _env(cmd, no_data=True)
    env["LDPGRAPH_CACHE"] = str(tmp_path / "empty-cache")
    proc = subprocess.run(
        [*cmd, "experiment", "--epsilons", "0.5,2", "--k", "2", "--trials", "8", "--jobs", "1", "--seed", "0",
         "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == ""  # no notice: nothing is substituted
    graph = "facebook"
    assert "wrote" in proc.stdout and "records.csv" in proc.stdout
    with open(out / "records.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 5 * 2 * 8  # default methods x epsilons x trials
    assert {r["graph"] for r in rows} == {graph} and {r["k"] for r in rows} == {"2"}
    summary = list(csv.DictReader(open(out / "summary.csv", newline="")))
    assert len(summary) == 10
    assert (out / "summary.txt").read_text().startswith("graph")
    assert json.loads((out / "experiment.json").read_text())["seed"] == 0
    plots = sorted(p.name for p in (out / "plots").iterdir())
    stem = "relative_rmse_facebook_kstars_k2"
    assert plots == [f"{stem}.png"]


@pytest.mark.parametrize("cmd", _commands())
def test_estimate_json_in_subprocess(cmd):
    proc = subprocess.run([*cmd, "estimate", "ba:n=500,m=4", "--epsilon", "1", "--k", "3", "--seed", "5", "--json"],
                          capture_output=True, text=True, env=_env(cmd), timeout=300)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    g = ldpgraph.datasets.synthetic_graph("ba:n=500,m=4", rng=0)
    assert d["truth"] == sum(math.comb(int(x), 3) for x in g.degrees)
    assert [e["method"] for e in d["estimates"]] == list(DEFAULT_METHODS) and d["seed"] == 5


@pytest.mark.parametrize("cmd", _commands())
def test_error_in_subprocess_is_one_line(cmd):
    proc = subprocess.run([*cmd, "estimate", "facebok", "--epsilon", "1"], capture_output=True, text=True,
                          env=_env(cmd), timeout=300)
    assert proc.returncode == 1
    line = _one_error_line(proc.stderr)
    assert line.startswith("ldpgraph: error: cannot resolve graph 'facebok'") and "Did you mean 'facebook'" in line


# ------------------------------------------------------------------ in-process


def test_estimate_table(capsys):
    assert main(["estimate", "ba:n=300,m=3", "--epsilon", "2", "--seed", "1", "--methods", "unbiased-dlap,naive-dlap"]) == 0
    out = capsys.readouterr().out
    g = ldpgraph.datasets.synthetic_graph("ba:n=300,m=3", rng=0)
    truth = sum(math.comb(int(x), 2) for x in g.degrees)
    assert f"truth      {truth:,}" in out
    assert "unbiased-dlap" in out and "naive-dlap" in out and "local-lap-kstars" not in out


def test_default_graph_is_the_shipped_facebook_graph(capsys, monkeypatch, tmp_path):
    """No data folder, an empty cache: the real graph shipped with the package, no substitute."""
    monkeypatch.delenv("LDPGRAPH_DATA", raising=False)
    monkeypatch.setenv("LDPGRAPH_CACHE", str(tmp_path))
    assert main(["estimate", "--epsilon", "1", "--seed", "0", "--json", "--methods", "unbiased-dlap"]) == 0
    cap = capsys.readouterr()
    assert cap.err == ""
    d = json.loads(cap.out)
    assert (d["graph"], d["n_nodes"], d["n_edges"]) == ("facebook", 4039, 88234)
    assert ldpgraph.datasets.locate_dataset("facebook") == ldpgraph.datasets.bundled_data_dir() / "facebook_combined.txt.gz"


def test_synthetic_stand_in_is_an_explicit_option(capsys):
    assert main(["estimate", FALLBACK_GRAPH, "--epsilon", "1", "--seed", "0", "--json", "--methods",
                 "unbiased-dlap"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["graph"] == FALLBACK_GRAPH and d["n_nodes"] == 4039 and 80_000 < d["n_edges"] < 95_000


def test_experiment_in_process(capsys, tmp_path):
    args = ["experiment", "ba:n=200,m=3", "er:n=100,p=0.1", "--epsilons", "1", "2", "--k", "2,3", "--methods",
            "unbiased-dlap", "--stat", "kstars", "degree_mean", "--trials", "4", "--jobs", "1", "--seed", "3",
            "--no-plots", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "wrote" in out and "plots" not in out.split("wrote")[-1]
    rows = list(csv.DictReader(open(tmp_path / "o" / "records.csv", newline="")))
    # 2 graphs x 2 eps x (2 kstars cells + 1 degree_mean cell) x 4 trials
    assert len(rows) == 2 * 2 * 3 * 4
    assert {r["statistic"] for r in rows} == {"kstars", "degree_mean"}
    assert not (tmp_path / "o" / "plots").exists()
    # quiet: nothing on stdout
    assert main([*args[:-1], str(tmp_path / "q"), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    a = (tmp_path / "o" / "records.csv").read_bytes()
    assert (tmp_path / "q" / "records.csv").read_bytes() == a


@pytest.mark.parametrize(
    ("argv", "code", "needle"),
    [
        (["estimate", "facebok", "--epsilon", "1"], 1, "cannot resolve graph 'facebok'"),
        (["experiment", "ba:n=50,m=2", "--epsilons", "0.5,abc"], 2, "invalid epsilon 'abc'"),
        (["experiment", "ba:n=50,m=2", "--epsilons", "1,-2"], 2, "invalid epsilon '-2'"),
        (["estimate", "--epsilon", "0"], 2, "invalid epsilon '0'"),
        (["estimate", "ba:n=50,m=2"], 2, "--epsilon"),
        (["experiment", "ba:n=50,m=2", "--methods", "magic"], 2, "unknown method 'magic'"),
        (["experiment", "ba:n=50,m=2", "--stat", "squares"], 2, "unknown statistic 'squares'"),
        (["experiment", "ba:n=50,m=2", "--k", "0"], 2, "invalid k '0'"),
        (["experiment", "ba:n=50,m=2", "--jobs", "0"], 2, "jobs"),
        (["estimate", "ba:n=50,m=2", "--epsilon", "1", "--stat", "nope"], 2, "unknown statistic 'nope'"),
        (["estimate", "ba:n=oops", "--epsilon", "1"], 1, "bad synthetic graph spec"),
        (["datasets", "path", "nope"], 1, "unknown dataset 'nope'"),
        (["datasets", "fetch", "nope"], 1, "unknown dataset 'nope'"),
        (["bogus"], 2, "invalid choice"),
    ],
)
def test_errors_are_one_line(argv, code, needle, capsys):
    assert main(argv) == code
    cap = capsys.readouterr()
    line = _one_error_line(cap.err)
    assert needle in line and line.startswith("ldpgraph")


def test_unwritable_out(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    argv = ["experiment", "ba:n=50,m=2", "--trials", "1", "--out", str(blocker / "sub")]
    assert main(argv) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"ldpgraph: error: cannot write to --out {blocker / 'sub'}")
    assert not (blocker.parent / "sub").exists()


def test_missing_dataset_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LDPGRAPH_DATA", str(tmp_path))
    monkeypatch.setenv("LDPGRAPH_CACHE", str(tmp_path))
    assert main(["datasets", "path", "wiki-vote"]) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "not found" in line and "ldpgraph datasets fetch wiki-vote" in line


def test_debug_shows_the_exception():
    with pytest.raises(ValueError, match="facebok"):
        main(["estimate", "facebok", "--epsilon", "1", "--debug"])
    with pytest.raises(ValueError, match="facebok"):
        main(["--debug", "estimate", "facebok", "--epsilon", "1"])


def test_datasets_list_and_path(capsys):
    assert main(["datasets", "list", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in entries] == ldpgraph.datasets.list_datasets()
    assert main(["datasets", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "kind", "file", "local", "copy"] and len(lines) == 6
    found = ldpgraph.datasets.locate_dataset("facebook")
    if found is None:
        pytest.skip("facebook not available (set LDPGRAPH_DATA)")
    assert main(["datasets", "path", "facebook"]) == 0
    assert capsys.readouterr().out.strip() == str(found)


def test_datasets_fetch_from_local_file(tmp_path, capsys):
    src = ldpgraph.datasets.locate_dataset("exac-sfs")
    if src is None:
        pytest.skip("exac-sfs not available (set LDPGRAPH_DATA)")
    cache = tmp_path / "cache"
    assert main(["datasets", "fetch", "exac-sfs", "--url", str(src), "--cache-dir", str(cache)]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.parent == cache and path.read_bytes() == src.read_bytes()
    sfs = ldpgraph.datasets.load_dataset("exac-sfs", path=path)
    assert isinstance(sfs, np.ndarray) and sfs.size == 1200


def test_help_and_version(capsys):
    assert main(["--help"]) == 0
    assert "experiment" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert ldpgraph.__version__ in capsys.readouterr().out


# ------------------------------------------------------------------ issue 12 §3: the CLI agrees with itself


@pytest.mark.parametrize("argv", [
    ["estimate", "ba:n=200,m=3", "--epsilon", "1", "--seed", "0", "--methods", "unbiased-dlap"],
    ["experiment", "ba:n=200,m=3", "--epsilons", "1", "--k", "2", "--trials", "2", "--methods", "unbiased-dlap",
     "--no-plots", "--seed", "0"],
    ["datasets", "list"],
    ["datasets", "path", "facebook"],
    ["datasets", "fetch", "facebook"],
])
def test_json_and_quiet_on_every_subcommand(argv, capsys, tmp_path):
    extra = ["--out", str(tmp_path / "o")] if argv[0] == "experiment" else []
    assert main([*argv, *extra, "--json"]) == 0
    cap = capsys.readouterr()
    json.loads(cap.out)  # one JSON document, nothing else on stdout
    assert main([*argv, *extra, "--quiet"]) == 0
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err == ""
    # --debug and --cache-dir are accepted by every subcommand too
    assert main([*argv, *extra, "--quiet", "--debug", "--cache-dir", str(tmp_path / "c")]) == 0
    assert capsys.readouterr().out == ""


def test_estimate_takes_several_k(capsys):
    assert main(["estimate", "ba:n=300,m=3", "--epsilon", "1", "--seed", "4", "--k", "2", "3", "--json",
                 "--methods", "unbiased-dlap"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [r["k"] for r in runs] == [2, 3] and {r["seed"] for r in runs} == {4}
    g = ldpgraph.datasets.synthetic_graph("ba:n=300,m=3", rng=0)
    assert [r["truth"] for r in runs] == [sum(math.comb(int(d), k) for d in g.degrees) for k in (2, 3)]


@pytest.mark.parametrize(("argv", "needle"), [
    (["experiment", "ba:n=50,m=2", "--epsilons", "-1,1"], "invalid epsilon '-1': must be finite and > 0"),
    (["experiment", "ba:n=50,m=2", "--epsilons", "-0.5"], "invalid epsilon '-0.5'"),
    (["estimate", "ba:n=50,m=2", "--epsilon", "-1"], "invalid epsilon '-1'"),
    (["experiment", "ba:n=50,m=2", "--trials", "-3"], "invalid trials '-3'"),
    (["experiment", "ba:n=50,m=2", "--scheduler", "nonsense"], "scheduler must be a Dask scheduler address"),
    (["experiment", "ba:n=50,m=2", "--label", "a", "b"], "2 labels for 1 graphs"),
    (["experiment", "ba:n=50,m=2", "--plot-formats", "gif"], "unknown format 'gif'"),
    (["datasets", "fetch", "exac-sfs", "--timeout", "0"], "invalid timeout '0'"),
])
def test_bad_values_are_usage_errors(argv, needle, capsys, tmp_path):
    t0 = time.perf_counter()
    assert main([*argv, "--out", str(tmp_path / "o")] if argv[0] == "experiment" else argv) == 2
    assert time.perf_counter() - t0 < 5
    line = _one_error_line(capsys.readouterr().err)
    assert needle in line


def test_scheduler_nonsense_in_a_subprocess_is_refused_before_any_work_in_one_line(tmp_path):
    # Refused at parse time: no output folder made, no connection tried (a connection attempt would wait out
    # Dask's timeout). No wall-clock bound: speed is measured in scripts/, and a loaded machine is slow.
    proc = subprocess.run([sys.executable, "-m", "ldpgraph", "experiment", "ba:n=50,m=2", "--scheduler", "nonsense",
                           "--out", str(tmp_path / "o")], capture_output=True, text=True, env=_env(), timeout=60)
    assert not (tmp_path / "o").exists()
    assert proc.returncode == 2 and "scheduler must be a Dask scheduler address" in _one_error_line(proc.stderr)


def test_empty_graph_is_a_clear_error(tmp_path, capsys):
    empty = tmp_path / "edges.txt"
    empty.write_text("# only a comment\n")
    for argv in (["estimate", str(empty), "--epsilon", "1"],
                 ["experiment", "er:n=10,m=0", "--trials", "1", "--out", str(tmp_path / "o")]):
        assert main(argv) == 1
        line = _one_error_line(capsys.readouterr().err)
        assert "has no nodes" in line or "has 10 nodes but no edges" in line
        assert "numpy" not in line.lower()


def test_label_names_the_graph_and_keys_its_streams(tmp_path, capsys):
    base = ["experiment", "--epsilons", "1", "--k", "2", "--trials", "3", "--methods", "unbiased-dlap", "--seed",
            "1", "--no-plots", "--quiet"]
    assert main([*base, "facebook", "--out", str(tmp_path / "a")]) == 0
    fb = ldpgraph.datasets.locate_dataset("facebook")
    assert main([*base, str(fb), "--out", str(tmp_path / "b")]) == 0
    assert main([*base, "facebook", "--label", "fb", "--out", str(tmp_path / "c")]) == 0
    rows = {d: list(csv.DictReader(open(tmp_path / d / "records.csv", newline=""))) for d in "abc"}
    est = {d: [r["estimate"] for r in rows[d]] for d in "abc"}
    assert est["a"] == est["b"] != est["c"]  # name or path: same numbers; an explicit label: its own
    assert {r["graph"] for r in rows["c"]} == {"fb"}


def test_cache_dir_is_honoured_by_the_other_commands(tmp_path, monkeypatch, capsys):
    src = ldpgraph.datasets.locate_dataset("exac-sfs")
    if src is None:
        pytest.skip("exac-sfs not available (set LDPGRAPH_DATA)")
    cache = tmp_path / "mycache"
    cache.mkdir()
    shutil.copy(src, cache / src.name)
    monkeypatch.delenv("LDPGRAPH_DATA", raising=False)
    monkeypatch.setenv("LDPGRAPH_CACHE", str(tmp_path / "other"))
    assert main(["datasets", "path", "exac-sfs", "--cache-dir", str(cache)]) == 0
    assert capsys.readouterr().out.strip() == str(cache / src.name)
    assert main(["datasets", "list", "--json", "--cache-dir", str(cache)]) == 0
    listed = {e["name"]: e["path"] for e in json.loads(capsys.readouterr().out)}
    assert listed["exac-sfs"] == str(cache / src.name)
    assert main(["datasets", "fetch", "exac-sfs", "--cache-dir", str(cache), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"name": "exac-sfs", "path": str(cache / src.name),
                                                   "downloaded": False}
    assert os.environ["LDPGRAPH_CACHE"] == str(tmp_path / "other")  # restored after the command
    assert main(["datasets", "path", "exac-sfs"]) == 1  # without it: not found
    capsys.readouterr()
