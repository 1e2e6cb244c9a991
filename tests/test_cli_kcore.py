"""``ldpgraph estimate --stat core_numbers``: the k-core methods' records; a removed method name refuses."""

from __future__ import annotations

import json

from ldpgraph.cli import main


def test_estimate_core_numbers_json_carries_the_papers_measures(capsys):
    capsys.readouterr()
    assert main(["estimate", "ba:n=200,m=3", "--stat", "core_numbers", "--epsilon", "2", "--seed", "4",
                 "--json", "--methods", "all"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = {e["method"]: e for e in doc["estimates"]}
    # a vector: no scalar truth, estimate, error or standard error; the summary instead
    assert set(got) == {"kcore-reference", "kcore-hindex"} and doc["truth"] is None
    for e in got.values():
        assert e["estimate"] is None and e["error"] is None and e["std_error"] is None
        assert e["std_error_kind"].startswith("none: ")
        assert e["mean_approximation_factor"] >= 1.0
        assert sum(e["approximation_factor_histogram"].values()) == 200  # every node has core number >= 1
        assert e["max_approximation_factor"] >= e["mean_approximation_factor"]
        assert e["degeneracy"] == 3.0 and e["rounds"] >= 1
        assert e["true_kcore_sizes"] == {"1": 200, "2": 200, "3": 200}


def test_the_removed_kcore_svt_names_its_replacement(capsys):
    capsys.readouterr()
    status = main(["estimate", "ba:n=50,m=3", "--stat", "core_numbers", "--epsilon", "2", "--methods", "kcore-svt"])
    err = capsys.readouterr().err
    assert status == 2 and "kcore-svt was removed in issue 33" in err and "use kcore-hindex" in err
