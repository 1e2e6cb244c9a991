"""What a newcomer trips on (issue 27): honest output notes, refusals and error wording.

Each test is one item of the issue, run in-process through ``ldpgraph.cli.main``.
"""

from __future__ import annotations

import json
import math

import pytest

from ldpgraph.cli import main
from ldpgraph.notes import epsilon_for_relative_se, estimate_notes, statistic_range

SMALL = "ba:n=120,m=4"  # a synthetic graph: small, seeded, with triangles


def _run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


# ------------------------------------------------------------------ 1. output notes


@pytest.mark.parametrize("stat, eps", [("avg_clustering", "1"), ("transitivity", "0.3"), ("triangles", "0.3")])
def test_every_estimate_gets_the_notes_the_rule_asks_for(stat, eps, capsys):
    """Out of range -> a note with the interval; no SE -> the reason; SE > |truth| -> a warning."""
    code, out, _ = _run(["estimate", SMALL, "--stat", stat, "--epsilon", eps, "--seed", "4", "--json",
                         "--methods", "all"], capsys)
    assert code == 0
    doc = json.loads(out)
    lo, hi = statistic_range(stat)
    notes = doc["notes"]
    seen = {"range": 0, "no_se": 0, "noise": 0}
    for e in doc["estimates"]:
        mine = [n for n in notes if n.split(": ")[0] == e["method"] or n.startswith(f"warning: {e['method']}:")]
        if e["estimate"] is None:  # NaN: transitivity with a noisy 2-star count <= 0
            assert any("no estimate (nan)" in n for n in mine), (e, mine)
        elif not lo <= e["estimate"] <= hi:
            seen["range"] += 1
            assert any("is outside" in n and "interval" in n for n in mine), (e, mine)
        if e["std_error"] is None:
            seen["no_se"] += 1
            assert any("no standard error: " in n for n in mine), (e, mine)
        elif e["std_error"] > abs(doc["truth"]):
            seen["noise"] += 1
            assert any(n.startswith("warning:") and "is noise" in n for n in mine), (e, mine)
        else:
            assert not any(n.startswith("warning:") for n in mine), (e, mine)
    assert len(notes) >= sum(seen.values())
    if stat != "avg_clustering":  # every clustering method has a standard error from its reports
        assert seen["no_se"] >= 1  # arr-triangles (clipping) reports none
    if stat == "avg_clustering":
        assert seen["range"] >= 1 and seen["noise"] >= 1  # at epsilon 1 it is far outside [0, 1]


def test_the_epsilon_named_by_the_warning_makes_the_standard_error_the_truth(capsys):
    """The ε the warning names: there the method's exact standard error equals |truth| (2%)."""
    from ldpgraph.datasets import resolve_graph
    from ldpgraph.run.method import get_method

    code, out, _ = _run(["estimate", SMALL, "--stat", "avg_clustering", "--epsilon", "1", "--seed", "4",
                         "--methods", "avg-clustering-dlap"], capsys)
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("warning: avg-clustering-dlap"))
    need = float(line.split("about epsilon ")[1].split()[0])
    g = resolve_graph(SMALL, rng=0)
    p = get_method("avg-clustering-dlap")
    truth = p.truth(g, "avg_clustering", None)
    sd = math.sqrt(p.analytic_variance(g, "avg_clustering", None, need))
    assert abs(math.log(sd / truth)) < 0.06  # the ε is printed to 2 significant digits


def test_epsilon_for_relative_se_solves_a_known_variance():
    # sd = 3 / e^2: sd = 0.5 at e = sqrt(6)
    e = epsilon_for_relative_se(lambda e: 9 / e**4, reference=0.5, epsilon=0.1)
    assert e == pytest.approx(math.sqrt(6), rel=0.02)
    assert epsilon_for_relative_se(lambda e: 9 / e**4, 0.5, 0.1, epsilon_max=1.0) is None  # not reachable


def test_an_accurate_estimate_gets_no_note():
    assert estimate_notes("kstars_2", 9.3e6, 5.8e3, method="unbiased-dlap", epsilon=1.0) == []
    assert estimate_notes("triangles", -5.0, 2.0)[0].startswith("the estimate -5 is outside [0, inf)")


def test_curate_notes_from_the_rows(tmp_path, capsys):
    rows = tmp_path / "r.csv"
    assert main(["node", "--graph", SMALL, "--epsilon", "0.01", "--simulate", "--seed", "1",
                 "--out", str(rows)]) == 0
    capsys.readouterr()
    code, out, _ = _run(["curate", str(rows), "--stat", "kstars", "edges", "--json"], capsys)
    assert code == 0
    import numpy as np

    from ldpgraph.analysis.planning import DegreeModel, estimator_variance
    from ldpgraph.run.reportfiles import read_report_set

    noisy_degrees = np.clip(read_report_set([rows]).quantities["degree"].histogram.values, 0, None)
    n_warned = 0
    for e in json.loads(out)["estimates"]:
        noisy = e["std_error"] > abs(e["estimate"])
        warned = [n for n in e["notes"] if n.startswith("warning:")]
        assert bool(warned) == noisy
        assert any("is outside" in n for n in e["notes"]) == (e["estimate"] < 0)
        if warned:  # the planner's epsilon: there its RMSE under the noisy degrees is |estimate|
            n_warned += 1
            need = float(warned[0].split("about epsilon ")[1].split()[0])
            counts = read_report_set([rows]).quantities["degree"].histogram.counts
            model = DegreeModel.from_degrees(np.repeat(noisy_degrees, counts))
            name = "kstars_2" if e["statistic"].startswith("kstars") else e["statistic"]
            rmse = math.sqrt(estimator_variance(name, model, need))
            assert abs(math.log(rmse / abs(e["estimate"]))) < 0.1  # epsilon printed to 2 digits
    assert n_warned >= 1


# ------------------------------------------------------------------ 2. refusals


@pytest.mark.parametrize("stat, method", [("kstars", "rr-triangles"), ("triangles", "unbiased-dlap"),
                                          ("avg_clustering", "arr-triangles")])
def test_methods_of_another_statistic_are_refused(stat, method, capsys):
    code, out, err = _run(["estimate", SMALL, "--stat", stat, "--methods", method, "--epsilon", "1"], capsys)
    assert code == 2 and out == ""
    assert f"statistic {stat!r} is estimated by" in err and f"--methods {method}" in err


def test_a_method_of_another_statistic_among_others_is_left_out_with_a_note(capsys):
    code, out, err = _run(["estimate", SMALL, "--methods", "unbiased-dlap", "rr-triangles", "--epsilon", "1",
                           "--seed", "0"], capsys)
    assert code == 0 and "unbiased-dlap" in out and "rr-triangles" not in out
    assert "--methods: rr-triangles does not estimate kstars: left out" in err


# ------------------------------------------------------------------ 3. epsilon too small


@pytest.mark.parametrize("argv", [
    ["estimate", SMALL, "--epsilon", "1e-20"],
    ["experiment", SMALL, "--epsilons", "1,1e-20", "--out", "{tmp}/x"],
    ["node", "--node-id", "1", "--neighbors", "2,3", "--epsilon", "1e-20", "--out", "{tmp}/n.csv"],
])
def test_too_small_epsilon_is_a_usage_error(argv, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, _, err = _run(argv, capsys)
    assert code == 2
    assert "too small" in err and "smallest supported epsilon is 1e-13" in err and "Warning" not in err
    assert not (tmp_path / "x").exists() and not (tmp_path / "n.csv").exists()


def test_the_smallest_supported_epsilon_releases_and_curates(tmp_path, capsys):
    """At the floor itself a release fits the report format: node writes it, curate reads it."""
    rows = tmp_path / "r.csv"
    for flags in (["--simulate", "--seed", "0"], []):  # fast and exact samplers
        assert main(["node", "--node-id", "1", "--neighbors", "2,3", "--epsilon", "1e-13",
                     "--out", str(rows), *flags]) == 0
        assert main(["curate", str(rows), "--stat", "edges"]) == 0
    capsys.readouterr()


# ------------------------------------------------------------------ 4. what is dropped is said


def test_self_loops_and_repeated_edges_are_noted(tmp_path, capsys):
    loops = tmp_path / "loops.txt"
    loops.write_text("0 0\n1 1\n")
    code, _, err = _run(["estimate", str(loops), "--epsilon", "1"], capsys)
    assert code == 1 and "2 self-loops dropped" in err
    dup = tmp_path / "dup.txt"
    dup.write_text("0 1\n0 1\n1 2\n2 2\n0 2\n")
    code, _, err = _run(["estimate", str(dup), "--epsilon", "1", "--seed", "0"], capsys)
    assert code == 0
    assert "1 self-loop (v v) dropped" in err and "1 repeated edge dropped" in err


def test_node_says_what_it_drops_from_its_neighbours(tmp_path, capsys):
    out = tmp_path / "n.csv"
    code, _, err = _run(["node", "--node-id", "1", "--neighbors", "1,2,2,5", "--epsilon", "1", "--simulate",
                         "--seed", "0", "--out", str(out)], capsys)
    assert code == 0
    assert "the node itself (1, a self-loop) and 1 repeated id dropped: node 1 releases degree 2" in err


# ------------------------------------------------------------------ 5. error wording


def test_mixed_epsilon_names_the_offending_budget(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["node", "--graph", "ba:n=20,m=2", "--epsilon", "1", "--simulate", "--seed", "0",
                 "--out", str(a)]) == 0
    assert main(["node", "--node-id", "20", "--neighbors", "1", "--epsilon", "2", "--simulate", "--seed", "0",
                 "--out", str(b)]) == 0
    capsys.readouterr()
    code, _, err = _run(["curate", str(a), str(b)], capsys)
    assert code == 1
    assert "a.csv row 0 (line 2) has 1" in err and "b.csv row 0 (line 2) has 2" in err


def test_a_broadcast_cut_mid_line_is_truncated(tmp_path, capsys):
    r1, bc = tmp_path / "r1.csv", tmp_path / "b.txt"
    opts = ["--epsilon", "2", "--d-max", "20"]
    assert main(["node", "--protocol", "two-round-triangles-dlap", "--graph", "ba:n=60,m=3", "--simulate",
                 "--seed", "0", "--out", str(r1), *opts]) == 0
    assert main(["curate", str(r1), "--broadcast-out", str(bc), *opts]) == 0
    data = bc.read_bytes()
    cut = tmp_path / "cut.txt"
    cut.write_bytes(data[:-3])  # inside the last edge line
    capsys.readouterr()
    code, _, err = _run(["node", "--protocol", "two-round-triangles-dlap", "--graph", "ba:n=60,m=3", "--simulate",
                         "--round", "2", "--broadcast", str(cut), "--out", str(tmp_path / "r2.csv"), *opts],
                        capsys)
    assert code == 1 and "truncated" in err and "out of order" not in err


@pytest.mark.parametrize("argv", [
    ["node", "--node-id", "1", "--neighbors", "2", "--epsilon", "1", "--out", "{tmp}/rows.txt"],
    ["curate", "{tmp}/rows.tsv"],
])
def test_cli_errors_do_not_suggest_api_keywords(argv, tmp_path, capsys):
    code, _, err = _run([a.replace("{tmp}", str(tmp_path)) for a in argv], capsys)
    assert code == 2 and "format=" not in err and ".csv" in err and ".parquet" in err


def test_an_edge_list_hint_names_the_cli_flag(tmp_path, capsys):
    path = tmp_path / "g.txt"
    path.write_text("1 2\nalice bob\n")
    code, _, err = _run(["estimate", str(path), "--epsilon", "1"], capsys)
    assert code == 1 and "--node-type str" in err


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_an_empty_report_file_is_said_to_be_empty(suffix, tmp_path, capsys):
    empty = tmp_path / f"r{suffix}"
    empty.write_bytes(b"")
    code, _, err = _run(["curate", str(empty)], capsys)
    assert code == 1 and "empty file (0 bytes)" in err and "missing" not in err


def test_a_binary_edge_list_shows_a_few_bytes_and_the_line(tmp_path, capsys):
    import numpy as np

    path = tmp_path / "g.txt"
    path.write_bytes(b"0 1\n" + np.random.default_rng(0).bytes(2000).replace(b"\n", b"") + b"\x00")
    code, _, err = _run(["estimate", str(path), "--epsilon", "1"], capsys)
    assert code == 1 and "binary data" in err and "line 2" in err
    assert len(err.replace(str(path), "")) < 400  # a few bytes, not ~2,000 escaped ones
    ctrl = tmp_path / "c.txt"
    ctrl.write_bytes(bytes(range(1, 256)) * 3)  # control bytes, no NUL: the line shown stays short
    code, _, err = _run(["estimate", str(ctrl), "--epsilon", "1"], capsys)
    assert code == 1 and len(err.replace(str(ctrl), "")) < 400


def test_experiment_notes_follow_the_same_rule(tmp_path, capsys):
    """Cells with estimates out of range are counted, a relative RMSE > 1 warned of with the ε the
    analytic variance says is needed, and a method without an analytic RMSE says why."""
    from ldpgraph.datasets import resolve_graph
    from ldpgraph.run.method import get_method

    out = tmp_path / "res"
    code, text, _ = _run(["experiment", SMALL, "--stat", "avg_clustering", "--epsilons", "1,2", "--trials", "4",
                          "--seed", "0", "--no-plots", "--out", str(out), "--json", "--methods", "all"], capsys)
    assert code == 0
    doc = json.loads(text)
    notes = doc["accuracy_notes"]
    import csv

    with open(out / "records.csv", newline="") as fh:
        records = list(csv.DictReader(fh))
    for method in ("avg-clustering-dlap", "avg-clustering-dlap-private"):
        mine = [n for n in notes if f"{method} on" in n.split(":")[0] or n.startswith(f"warning: {method} on")]
        for eps in ("1", "2"):
            est = [float(r["estimate"]) for r in records if r["method"] == method and float(r["epsilon"]) == float(eps)]
            n_out = sum(not 0 <= e <= 1 for e in est)
            if n_out:
                assert any(f"{n_out} of {len(est)} trials at epsilon {eps}" in n for n in mine), (method, mine)
        row = [r for r in doc["summary"] if r["method"] == method]
        if any(r["relative_rmse"] > 1 for r in row):
            assert any(n.startswith("warning:") for n in mine)
    assert any("avg-clustering-dlap-private" in n and "no analytic RMSE: " in n for n in notes)
    warn = next(n for n in notes if n.startswith("warning: avg-clustering-dlap on"))
    need = float(warn.split("about epsilon ")[1].split()[0])
    g = resolve_graph(SMALL, rng=0)
    p = get_method("avg-clustering-dlap")
    rel = math.sqrt(p.analytic_variance(g, "avg_clustering", None, need)) / p.truth(g, "avg_clustering", None)
    assert abs(math.log(rel)) < 0.06


# ------------------------------------------------------------------ 6. a failed experiment leaves no --out


def test_a_failed_experiment_leaves_no_empty_out_folder(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("0 0\n")
    out = tmp_path / "new"
    assert main(["experiment", str(bad), "--out", str(out)]) == 1
    assert not out.exists()
    kept = tmp_path / "mine"
    kept.mkdir()  # a folder the user made is left alone
    assert main(["experiment", str(bad), "--out", str(kept)]) == 1
    assert kept.is_dir()
    capsys.readouterr()


# ------------------------------------------------------------------ 7. one scheduler timeout


def test_an_unreachable_scheduler_is_one_message_with_one_option(tmp_path, capsys):
    pytest.importorskip("distributed")
    rows = tmp_path / "r.csv"
    assert main(["node", "--graph", "ba:n=20,m=2", "--epsilon", "1", "--simulate", "--seed", "0",
                 "--out", str(rows)]) == 0
    capsys.readouterr()
    addr = "tcp://127.0.0.1:9"  # the discard port: nothing listens
    errors = []
    for argv in (["experiment", "ba:n=20,m=2", "--epsilons", "1", "--trials", "2", "--out", str(tmp_path / "o")],
                 ["curate", str(rows)]):
        code, _, err = _run([*argv, "--scheduler", addr, "--scheduler-timeout", "0.5"], capsys)
        assert code == 1
        errors.append(err.split("error: ", 1)[1].split(" (")[0])
        assert "within 0.5 s" in err and "--scheduler-timeout SECONDS" in err
    assert errors[0] == errors[1] == f"cannot connect to the Dask scheduler at {addr} within 0.5 s"
    assert not (tmp_path / "o").exists()
