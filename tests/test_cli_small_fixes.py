"""The smaller things of issue 38 (item 7), one test each: budgets, wire epsilons, k-core output,
broadcast and standard-error wording, lock files, the epsilon floor, exit codes, suggestions,
help texts, the footer and the node-label table."""

from __future__ import annotations

import csv
import json
import math
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.core.plan import split_budget
from ldpgraph.limits import SMALLEST_EPSILON
from ldpgraph.protocols import registry as layer
from ldpgraph.protocols.kcore.densest import robust_degeneracy
from ldpgraph.run.method import get_method

ROOT = Path(__file__).resolve().parents[1]
#: the README and the documentation pages its long sections moved to
DOCS = "\n".join(f.read_text(encoding="utf-8") for f in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
NAMED = "a b\nb c\nc a\nc d\nd e\ne c\nd a\nb d\n"  # a small graph whose nodes have text names


def _cli(capsys, *args):
    capsys.readouterr()
    code = main([str(a) for a in args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


# ------------------------------------------------------------------ budgets and the wire


def test_node_names_every_release_as_methods_does(tmp_path, capsys):
    code, out, _ = _cli(capsys, "node", "--protocol", "arr-triangles", "--graph", "ws:n=60,k=4,p=0.2", "--epsilon",
                        "1", "--simulate", "--seed", "0", "--out", tmp_path / "a.csv")
    assert code == 0
    assert "budget     epsilon 1 = arr 0.45 + degree-bound 0.1 + local-count 0.45 per node" in out
    assert get_method("arr-triangles").budget(1.0) == {"degree-bound": 0.1, "arr": 0.45, "local-count": 0.45}


def test_the_wire_carries_the_plans_decimal_epsilon(tmp_path, capsys):
    g = "ws:n=60,k=4,p=0.2"
    opts = ["--protocol", "two-round-triangles-dlap", "--private-bound", "--epsilon", "2"]
    assert _cli(capsys, "node", *opts, "--graph", g, "--simulate", "--seed", "0", "--out", tmp_path / "r1.csv")[0] == 0
    assert _cli(capsys, "curate", tmp_path / "r1.csv", *opts, "--broadcast-out", tmp_path / "b.txt")[0] == 0
    assert _cli(capsys, "node", *opts, "--round", "2", "--broadcast", tmp_path / "b.txt", "--graph", g, "--simulate",
                "--seed", "0", "--out", tmp_path / "r2.csv")[0] == 0
    seen = {}
    for name in ("r1.csv", "r2.csv"):
        with open(tmp_path / name, newline="") as fh:
            for row in csv.DictReader(fh):
                seen[row["quantity"]] = row["epsilon"]
    assert seen == {"rr_count": "0.9", "rr_edge": "0.9", "lower_degree": "0.2", "local_count": "0.9",
                    "run_id": "0.9"}  # not 0.8999999999999999


@pytest.mark.parametrize("shares", [(0.1, 0.45, 0.45), (0.3, 0.4, 0.3), (0.4, 0.2, 0.4), (0.01, 0.15, 0.46, 0.38),
                                    (2 / 3, 1 / 3), (0.1, 0.27, 0.36, 0.27)])
def test_a_split_adds_up_to_epsilon_exactly(shares):
    """Every split sums to epsilon: as the decimals it prints (then each part is epsilon * share to 12
    digits), or in floating point (fsum) where no such decimals exist."""
    named = dict(zip("abcd", shares, strict=False))
    for eps in [*(k / 100 for k in range(1, 1001, 7)), 1 / 3, math.pi, 1e-6, 123.456]:
        parts = split_budget(eps, named)
        decimal = sum(Decimal(repr(p)) for p in parts.values()) == Decimal(repr(eps))
        assert decimal or math.fsum(parts.values()) == eps, (eps, parts)
        for k, p in list(parts.items())[:-1]:  # all but the last (which may take the remainder)
            assert p == pytest.approx(eps * named[k], rel=1e-14)


# ------------------------------------------------------------------ k-core output


def test_robust_degeneracy_is_its_definition():
    """The largest x with at least x + 1 estimates >= x, by brute force over the points where that
    count can change (the estimates) or meet x + 1 (the integers)."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        k = rng.exponential(3.0, size=rng.integers(1, 12)).round(rng.integers(0, 3))
        candidates = [*k.tolist(), *range(k.size)]
        brute = max(float(x) for x in candidates if np.sum(k >= x) >= x + 1)
        assert robust_degeneracy(k) == brute, k


def test_kcore_hindex_curate_prints_the_robust_degeneracy_and_a_table_by_label(tmp_path, capsys):
    graph = tmp_path / "g.txt"
    graph.write_text(NAMED)
    opts = ["--protocol", "kcore-hindex", "--epsilon", "4"]
    assert _cli(capsys, "node", *opts, "--graph", graph, "--simulate", "--seed", "0", "--out", tmp_path / "h1.csv")[0] == 0
    assert _cli(capsys, "curate", tmp_path / "h1.csv", *opts, "--broadcast-out", tmp_path / "hb.json")[0] == 0
    assert _cli(capsys, "node", *opts, "--round", "2", "--broadcast", tmp_path / "hb.json", "--graph", graph,
                "--simulate", "--seed", "0", "--out", tmp_path / "h2.csv")[0] == 0
    code, out, _ = _cli(capsys, "curate", tmp_path / "h2.csv", *opts, "--broadcast", tmp_path / "hb.json", "--json")
    doc = json.loads(out)
    cores = np.array(doc["core_numbers"])
    assert doc["estimates"][0]["estimate"] == robust_degeneracy(cores)
    with open(doc["core_numbers_table"], newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["label"] for r in rows] == ["a", "b", "c", "d", "e"]  # the graph's labels (node's table)
    assert [float(r["core_number"]) for r in rows] == cores.tolist()
    assert [int(r["core_number_rounded"]) for r in rows] == np.rint(cores).astype(int).tolist()
    code, out, _ = _cli(capsys, "curate", tmp_path / "h2.csv", *opts, "--broadcast", tmp_path / "hb.json")
    assert f"cores      robust degeneracy {robust_degeneracy(cores):g} (the largest k with at least" in out
    assert "core_number_rounded holds the nearest integers" in out and "by label (from " in out


# ------------------------------------------------------------------ curate wording


def test_the_adaptive_clustering_broadcast_names_no_bound(tmp_path, capsys):
    opts = ["--protocol", "adaptive-clustering", "--epsilon", "4"]
    assert _cli(capsys, "node", *opts, "--graph", "ws:n=60,k=4,p=0.2", "--simulate", "--seed", "0", "--out",
                tmp_path / "c1.csv")[0] == 0
    code, out, _ = _cli(capsys, "curate", tmp_path / "c1.csv", *opts, "--broadcast-out", tmp_path / "cb.txt")
    assert code == 0 and "(noisy graph for round 2;" in out and "bound D" not in out


def test_rr_four_cycles_curate_gives_a_standard_error_from_the_noisy_graph(tmp_path, capsys):
    """Issue 38 item 7 found curate saying "not computed for 400 nodes (beyond 8,192)"; since issue 37
    the curator estimates the variance from the noisy graph alone (unbiased: tests/protocols/
    test_four_cycle_estimators.py), so there is no reason to give."""
    opts = ["--protocol", "rr-four-cycles", "--epsilon", "1"]
    assert _cli(capsys, "node", *opts, "--graph", "ws:n=400,k=4,p=0.2", "--simulate", "--seed", "0", "--out",
                tmp_path / "f.csv")[0] == 0
    code, out, _ = _cli(capsys, "curate", tmp_path / "f.csv", *opts, "--json")
    est = json.loads(out)["estimates"][0]
    assert est["std_error"] > 0 and est["std_error_kind"] == "unbiased" and est["no_std_error_reason"] is None


def test_readme_four_cycle_table_says_which_methods_deploy():
    table = DOCS.split("# 4-cycles (edge-LDP", 1)[1].split("\n\n| ε |", 1)[0]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z0-9-]+)`.*$", table, re.M)}
    assert set(rows) >= {"rr-four-cycles", "two-round-four-cycles-dlap", "wlocal-four-cycles"}
    for name, row in rows.items():
        assert ("simulation only" in row) == (get_method(name).deployed_as is None), name


def test_estimate_and_curate_agree_that_adaptive_clustering_best_has_a_standard_error(tmp_path, capsys):
    code, out, _ = _cli(capsys, "estimate", "ws:n=200,k=8,p=0.1", "--stat", "avg_clustering", "--epsilon", "4",
                        "--seed", "1", "--methods", "adaptive-clustering-best", "--json")
    est = json.loads(out)["estimates"][0]
    assert est["std_error"] > 0 and est["std_error_kind"] == "bootstrap"  # the kind curate names too
    opts = ["--protocol", "adaptive-clustering", "--estimator", "best", "--epsilon", "4"]
    g = "ws:n=200,k=8,p=0.1"
    assert _cli(capsys, "node", *opts, "--graph", g, "--simulate", "--seed", "0", "--out", tmp_path / "c1.csv")[0] == 0
    assert _cli(capsys, "curate", tmp_path / "c1.csv", *opts, "--broadcast-out", tmp_path / "cb.txt")[0] == 0
    assert _cli(capsys, "node", *opts, "--round", "2", "--broadcast", tmp_path / "cb.txt", "--graph", g, "--simulate",
                "--seed", "0", "--out", tmp_path / "c2.csv")[0] == 0
    code, out, _ = _cli(capsys, "curate", tmp_path / "c2.csv", *opts, "--broadcast", tmp_path / "cb.txt", "--json")
    cur = json.loads(out)["estimates"][0]
    assert cur["std_error"] > 0 and cur["std_error_kind"] == est["std_error_kind"]


# ------------------------------------------------------------------ the command line


def test_no_lock_file_is_left_beside_out_after_success_or_failure(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    common = ["experiment", "--epsilons", "1", "--k", "2", "--trials", "2", "--no-plots", "--quiet"]
    assert _cli(capsys, *common, "ws:n=50,k=4,p=0.2", "--out", "ok")[0] == 0
    assert _cli(capsys, *common, "no-such-graph.txt", "--out", "bad")[0] == 1  # fails after taking the lock
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok"]


def test_the_epsilon_floor_is_the_same_in_the_message_and_the_readme(capsys):
    code, _, err = _cli(capsys, "estimate", "--epsilon", "1e-20")
    assert code == 2 and f"the smallest supported epsilon is {SMALLEST_EPSILON:g}" in err
    assert f"refuses ε below {SMALLEST_EPSILON:g} per unit of sensitivity" in DOCS.replace("\n", " ")


def test_the_same_bad_input_exits_2_in_estimate_and_experiment(tmp_path, capsys):
    bad = ["--stat", "triangles", "--methods", "unbiased-dlap"]
    est = _cli(capsys, "estimate", "ws:n=50,k=4,p=0.2", "--epsilon", "1", *bad)
    exp = _cli(capsys, "experiment", "ws:n=50,k=4,p=0.2", "--epsilons", "1", *bad, "--out", tmp_path / "o")
    assert est[0] == exp[0] == 2
    assert est[2].split("error: ", 1)[1] == exp[2].split("error: ", 1)[1].replace("experiment --help", "estimate --help")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args, hint", [
    (["estimate", "--epsilon", "1", "--stat", "kcore"], "(did you mean core_numbers?)"),
    (["experiment", "--stat", "kcore"], "(did you mean core_numbers?)"),
    (["methods", "--stat", "kcore"], "(did you mean core_numbers?)"),
    (["estimate", "--epsilon", "1", "--stat", "triangle"], "(did you mean triangles?)"),
    (["estimate", "--epsilon", "1", "--stat", "triangles", "--methods", "rr-triangle"], "(did you mean rr-triangles?)"),
])
def test_an_unknown_name_gets_a_suggestion(capsys, args, hint):
    code, _, err = _cli(capsys, *args)
    assert code == 2 and hint in err and len(err.strip().splitlines()) == 1


def test_shares_help_states_each_protocols_own_default(capsys):
    code, out, _ = _cli(capsys, "curate", "--help")
    text = " ".join(re.search(r"\n  --shares Q=F,\.\.\.\s(.*?)\n  --", out, re.S).group(1).split())
    text = re.sub(r"(?<=[a-z])- (?=[a-z])", "-", text)  # a name argparse wrapped at its hyphen
    assert "(default equal)" in text  # the degree protocol's, and
    for proto in layer.protocols():
        for o in proto.options if proto.deployable else ():  # (curate's: the deployable protocols')
            if o.name == "shares":  # every other protocol's own split and default
                assert f"{proto.name}" in text and " ".join(o.help.split()) in text, proto.name


@pytest.mark.parametrize("stat, footer", [("kstars", "at the true graph"), ("triangles", "at the true graph"),
                                          ("core_numbers", None)])
def test_the_standard_error_footer_says_what_it_is_a_function_of(capsys, stat, footer):
    """The standard error is the curator's (from the reports); the closed form at the truth is its own
    column, sd_at_truth, and the footer says so; a vector statistic prints no such footer."""
    code, out, _ = _cli(capsys, "estimate", "ws:n=60,k=4,p=0.2", "--epsilon", "2", "--stat", stat, "--seed", "0")
    lines = [ln for ln in out.splitlines() if ln.startswith("std_error: ")]
    if footer is None:  # a vector statistic: its own summary, no standard error
        assert lines == []
    else:
        assert len(lines) == 1 and lines[0].startswith("std_error: the curator's, from the reports")
        assert f"sd_at_truth: the closed-form standard deviation {footer}" in lines[0]


def test_node_graph_writes_one_label_table_for_all_rounds(tmp_path, capsys):
    graph = tmp_path / "g.txt"
    graph.write_text(NAMED)
    opts = ["--protocol", "kcore-hindex", "--epsilon", "4", "--graph", graph, "--simulate", "--seed", "0"]
    assert _cli(capsys, "node", *opts, "--out", tmp_path / "h1.csv")[0] == 0
    assert _cli(capsys, "curate", tmp_path / "h1.csv", "--protocol", "kcore-hindex", "--epsilon", "4",
                "--broadcast-out", tmp_path / "hb.json")[0] == 0
    code, out, _ = _cli(capsys, "node", *opts, "--round", "2", "--broadcast", tmp_path / "hb.json",
                        "--out", tmp_path / "h2.csv")
    assert code == 0 and "node labels: " in out and "unchanged" in out
    code, out, _ = _cli(capsys, "node", *opts, "--out", tmp_path / "again.csv")
    assert sorted(p.name for p in tmp_path.glob("*.nodes.csv")) == ["h1.nodes.csv"]
    graph.write_text(NAMED.replace("e", "f"))  # another graph: its own table
    assert _cli(capsys, "node", *opts, "--out", tmp_path / "other.csv")[0] == 0
    assert sorted(p.name for p in tmp_path.glob("*.nodes.csv")) == ["h1.nodes.csv", "other.nodes.csv"]
