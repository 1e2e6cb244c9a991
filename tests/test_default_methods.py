"""Sensible defaults (issue 38, item 5): without --methods, a statistic with many methods runs the
recommended method of each model (data on the methods, read through the registry), and the output
says which ran and how to get the rest."""

from __future__ import annotations

import json

import pytest

from ldpgraph.cli import main
from ldpgraph.experiments import estimate_once
from ldpgraph.run.method import (
    MODELS,
    get_method,
    method_names,
    methods_for,
    recommended_methods,
    statistic_names,
)

SMALL = "ws:n=120,k=6,p=0.2"


@pytest.mark.parametrize("stat", statistic_names())
def test_the_recommendation_is_one_method_per_model_of_the_statistic(stat):
    rec = recommended_methods(stat)
    assert list(rec) == [p.name for p in methods_for(stat) if stat in p.recommended]  # registry order
    assert set(rec.values()) <= set(MODELS)
    assert len(set(rec.values())) == len(rec)  # one per model
    for name, model in rec.items():
        p = get_method(name)
        assert p.supports(stat) and p.model == model and p.deployed_as is not None  # deployable, too
    adjacency = all(p.needs == "adjacency" for p in methods_for(stat))  # (kstars: DEFAULT_METHODS)
    if adjacency and len(method_names(stat)) > 4:  # those with many methods all have a recommendation
        assert len(rec) >= 2


def test_the_slow_statistics_run_far_fewer_methods_by_default():
    assert len(recommended_methods("triangles")) == 3 < len(method_names("triangles")) == 14
    assert {"local, one round", "local, two rounds", "shuffle"} == set(recommended_methods("triangles").values())
    assert len(recommended_methods("four_cycles")) == 3 < len(method_names("four_cycles"))


def test_estimate_once_runs_the_recommended_methods():
    run = estimate_once(SMALL, epsilon=2.0, statistic="four_cycles", seed=0)
    assert [e.method for e in run.estimates] == list(recommended_methods("four_cycles"))
    run = estimate_once(SMALL, epsilon=2.0, statistic="degree_weighted_triangles", seed=0)  # none recommended
    assert [e.method for e in run.estimates] == method_names("degree_weighted_triangles")


def test_run_experiment_runs_the_recommended_methods_too():
    from ldpgraph.experiments import run_experiment

    res = run_experiment({"g": SMALL}, epsilons=[2.0], statistics=["four_cycles"], n_trials=2, seed=0, quiet=True)
    assert [r.method for r in res.summary] == list(recommended_methods("four_cycles"))


def test_estimate_says_which_ran_and_how_to_get_the_rest(capsys):
    assert main(["estimate", SMALL, "--stat", "triangles", "--epsilon", "2", "--seed", "1"]) == 0
    cap = capsys.readouterr()
    rec = recommended_methods("triangles")
    rows = [ln.split()[0] for ln in cap.out.split("method", 1)[1].split("\n\n")[0].splitlines()[1:]]
    assert rows == list(rec)
    last = cap.out.strip().splitlines()[-1]
    assert last.startswith("triangles: ran the recommended method of each model: rr-triangles (local, one round); ")
    assert "--methods all adds the other 11 ('ldpgraph methods --stat triangles'" in last
    assert cap.err == ""

    assert main(["estimate", SMALL, "--stat", "triangles", "--epsilon", "2", "--seed", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["methods_left_out"] == [m for m in method_names("triangles") if m not in rec]


def test_methods_all_runs_every_method_of_the_statistic_without_notices(capsys):
    assert main(["estimate", SMALL, "--stat", "four_cycles", "--epsilon", "2", "--seed", "1", "--json",
                 "--methods", "all"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert [e["method"] for e in doc["estimates"]] == method_names("four_cycles")
    assert doc["methods_left_out"] == [] and cap.err == ""  # (the k-star methods are not "left out")


def test_the_default_kstar_methods_say_what_the_others_are(capsys):
    assert main(["estimate", SMALL, "--epsilon", "1", "--seed", "0"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == ("kstars: ran the default methods. --methods all adds local-lap-kstars-private, "
                    "local-dlap-kstars, local-dlap-kstars-private ('ldpgraph methods --stat kstars' lists them "
                    "all, with their references).")
    assert main(["estimate", SMALL, "--epsilon", "1", "--seed", "0", "--stat", "edges"]) == 0
    cap = capsys.readouterr()
    assert "--methods all" not in cap.out and cap.err == ""  # both methods of edges ran; no notice


def test_methods_lists_the_recommended_ones(capsys):
    assert main(["methods", "--stat", "four_cycles", "--json"]) == 0
    rows = {r["method"]: r for r in json.loads(capsys.readouterr().out)["methods"]}
    assert {m for m, r in rows.items() if "four_cycles" in r["recommended_for"]} == set(recommended_methods("four_cycles"))
    assert main(["methods", "--stat", "four_cycles"]) == 0
    assert "run by default (the recommended method of each model): rr-four-cycles (four_cycles; local, one round)" in (
        capsys.readouterr().out)


def test_experiment_runs_the_recommended_methods_and_says_so(tmp_path, capsys):
    assert main(["experiment", SMALL, "--stat", "four_cycles", "--epsilons", "2", "--trials", "2", "--seed", "0",
                 "--no-plots", "--out", str(tmp_path / "r"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted({r["method"] for r in doc["summary"]}) == sorted(recommended_methods("four_cycles"))
    assert doc["methods_left_out"] == {"four_cycles": [m for m in method_names("four_cycles")
                                                       if m not in recommended_methods("four_cycles")]}
