"""``ldpgraph node`` / ``curate`` over a repeating round: kcore-svt step by step, as in memory."""

from __future__ import annotations

import json

import numpy as np

from ldpgraph.cli import main
from ldpgraph.graph import from_edge_array
from ldpgraph.run import run_in_memory

EDGES = [[0, 1], [1, 2], [0, 2], [2, 3], [3, 4], [2, 4], [1, 3]]


def test_kcore_svt_steps_through_signed_broadcasts(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LDPGRAPH_CURATOR_KEY", str(tmp_path / "key"))
    graph = tmp_path / "g.txt"
    graph.write_text("".join(f"{a} {b}\n" for a, b in EDGES))
    opts = ["--protocol", "kcore-svt", "--epsilon", "2", "--d-max", "4"]
    mem = run_in_memory("kcore-svt", from_edge_array(EDGES), 2.0, sampler=9, d_max=4)
    broadcast, doc = None, None
    for step in range(50):
        rows = tmp_path / f"r{step}.csv"
        node = ["node", *opts, "--graph", str(graph), "--simulate", "--seed", "9", "--out", str(rows), "--round", "1"]
        assert main(node + ([] if broadcast is None else ["--broadcast", str(broadcast)])) == 0
        nxt = tmp_path / f"b{step + 1}.json"
        cur = ["curate", str(rows), *opts, "--round", "1", "--stat", "core_numbers", "--json",
               "--broadcast-out", str(nxt)]
        capsys.readouterr()
        assert main(cur + ([] if broadcast is None else ["--broadcast", str(broadcast)])) == 0
        doc = json.loads(capsys.readouterr().out)
        if "estimates" in doc:
            break
        assert doc["step"] == step + 1 and nxt.exists()
        broadcast = nxt
    assert doc["rounds"] == mem.n_rounds == step + 1
    assert doc["core_numbers"] == mem.estimate.core_numbers.tolist()
    # an edited broadcast is refused (signature), and the round runs again only with --broadcast-out
    if broadcast is not None:
        text = json.loads(broadcast.read_text())
        text["levels"][0] += 1
        broadcast.write_text(json.dumps(text))
        capsys.readouterr()
        rows = tmp_path / f"r{step}.csv"
        status = main(["curate", str(rows), *opts, "--round", "1", "--broadcast", str(broadcast)])
        assert status != 0
        assert "signature" in capsys.readouterr().err
    assert np.all(np.asarray(doc["core_numbers"]) >= 1)


def test_estimate_core_numbers_json_carries_the_papers_measures(capsys):
    capsys.readouterr()
    assert main(["estimate", "ba:n=200,m=3", "--stat", "core_numbers", "--epsilon", "2", "--seed", "4",
                 "--json", "--methods", "all"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = {e["method"]: e for e in doc["estimates"]}
    # a vector: no scalar truth, estimate, error or standard error; the summary instead
    assert set(got) == {"kcore-svt", "kcore-reference", "kcore-hindex"} and doc["truth"] is None
    for e in got.values():
        assert e["estimate"] is None and e["error"] is None and e["std_error"] is None
        assert e["std_error_kind"].startswith("none: ")
        assert e["mean_approximation_factor"] >= 1.0
        assert sum(e["approximation_factor_histogram"].values()) == 200  # every node has core number >= 1
        assert e["max_approximation_factor"] >= e["mean_approximation_factor"]
        assert e["degeneracy"] == 3.0 and e["rounds"] >= 1
        assert e["true_kcore_sizes"] == {"1": 200, "2": 200, "3": 200}


def test_secure_node_keeps_its_threshold_noise_in_a_state_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LDPGRAPH_CURATOR_KEY", str(tmp_path / "key"))
    graph = tmp_path / "g.txt"
    graph.write_text("".join(f"{a} {b}\n" for a, b in EDGES))
    opts = ["--protocol", "kcore-svt", "--epsilon", "2", "--d-max", "4"]
    node = ["node", *opts, "--graph", str(graph), "--round", "1"]
    assert main([*node, "--out", str(tmp_path / "x.csv")]) == 2  # secure and repeating: needs --state
    assert "--state" in capsys.readouterr().err
    state = tmp_path / "node.state"
    assert main([*node, "--out", str(tmp_path / "r0.csv"), "--state", str(state)]) == 0
    kept = state.read_text()
    assert oct(state.stat().st_mode & 0o777) == "0o600" and len(json.loads(kept)) == len({v for e in EDGES for v in e})
    b1 = tmp_path / "b1.json"
    assert main(["curate", str(tmp_path / "r0.csv"), *opts, "--round", "1", "--broadcast-out", str(b1)]) == 0
    assert main([*node, "--out", str(tmp_path / "r1.csv"), "--state", str(state), "--broadcast", str(b1)]) == 0
    assert state.read_text() == kept  # step 1 used the same secrets, drew none anew


def test_a_later_step_without_the_state_file_is_refused(tmp_path, capsys, monkeypatch):
    """issue 36 finding 8: step >= 1 of kcore-svt with its --state file missing (moved, a typo,
    another machine) or holding none of the node's secrets refuses (exit 1, naming the file)
    instead of drawing the threshold noise rho again (7443152 redrew it silently, exit 0)."""
    monkeypatch.setenv("LDPGRAPH_CURATOR_KEY", str(tmp_path / "key"))
    graph = tmp_path / "g.txt"
    graph.write_text("".join(f"{a} {b}\n" for a, b in EDGES))
    opts = ["--protocol", "kcore-svt", "--epsilon", "2", "--d-max", "4"]
    node = ["node", *opts, "--graph", str(graph), "--round", "1"]
    state, b1 = tmp_path / "node.state", tmp_path / "b1.json"
    assert main([*node, "--out", str(tmp_path / "r0.csv"), "--state", str(state)]) == 0
    assert main(["curate", str(tmp_path / "r0.csv"), *opts, "--round", "1", "--broadcast-out", str(b1)]) == 0
    capsys.readouterr()
    moved = tmp_path / "elsewhere.state"
    assert main([*node, "--out", str(tmp_path / "r1.csv"), "--state", str(moved), "--broadcast", str(b1)]) == 1
    err = capsys.readouterr().err
    assert f"its state file {moved} does not exist" in err and "--state file of its first step" in err
    assert not moved.exists() and not (tmp_path / "r1.csv").exists()
    moved.write_text("{}")  # a state file, but not this node's
    assert main([*node, "--out", str(tmp_path / "r1.csv"), "--state", str(moved), "--broadcast", str(b1)]) == 1
    assert f"its state file {moved} does not hold it" in capsys.readouterr().err
    assert moved.read_text() == "{}"
    assert main([*node, "--out", str(tmp_path / "r1.csv"), "--state", str(state), "--broadcast", str(b1)]) == 0
