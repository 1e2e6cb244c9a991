"""The shuffle model's guarantee holds only as planned (issue 36, findings 1, 2, 5, 7 and 9).

Each test names its finding; each fails on 7443152 (the shuffler and curator counted no senders,
``wlocal-*`` took amplified accountings, rows carried no ε₀, budget lines printed neither δ nor ε₀,
the curator refused excess rows only after reading them all, a node said nothing of its upload).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.privacy.shuffle_amplification import amplified_epsilon
from ldpgraph.protocols import registry
from ldpgraph.run.reportfiles import write_report_chunks
from ldpgraph.run.shuffler import read_rows, shuffle_rows

SMALL = "ba:n=20,m=3"  # 20 users: a plan for them has little amplification, but every check applies


def _node(out, graph=SMALL, n_users=20, *extra):
    return main(["node", "--graph", graph, "--protocol", "wshuffle-triangles", "--epsilon", "1", "--n-users",
                 str(n_users), "--pairing-seed", "1", "--simulate", "--seed", "1", "--out", str(out), *extra])


def _run(argv, capsys):
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out + err


def test_finding1_fifty_of_five_hundred_users_refused_by_shuffler_and_curator(tmp_path, capsys):
    """issue 36 finding 1: nodes planned for 500 users, only 50 users' rows: the shuffler refuses (also with
    --expected-nodes 500), and so does a curator given the 50 users' rows shuffled without the checks, saying
    what (epsilon, delta) 50 users give: epsilon0 itself, 48 shuffled users amplify nothing."""
    raw = tmp_path / "n50.csv"
    assert _node(raw, "ba:n=50,m=5", 500) == 0
    plan_args = ["--epsilon", "1", "--n-users", "500", "--pairing-seed", "1"]
    for extra in ([], ["--expected-nodes", "500"]):
        code, text = _run(["shuffle", str(raw), "--out", str(tmp_path / "s.csv"), *plan_args, *extra], capsys)
        assert code == 1 and "only 50 of the 500 users of the plan sent rows" in text, text
        assert not (tmp_path / "s.csv").exists()
    from ldpgraph.protocols.shuffle.wedge_shuffle import central_epsilon

    bypass = tmp_path / "bypass.csv"  # what the old shuffler wrote: every row, ids dropped, permuted
    write_report_chunks(bypass, [shuffle_rows(read_rows([raw]), rng=0)])
    plan = registry.get("wshuffle-triangles").plan(1.0, n_users=500, pairing_seed=1)
    eps0 = plan.public["local_epsilon"]
    got = central_epsilon(plan, 50)
    assert got == amplified_epsilon(eps0, 48, 1e-8) == pytest.approx(eps0, abs=1e-6)
    for extra in ([], ["--expected-nodes", "500"]):
        code, text = _run(["curate", str(bypass), *plan_args, "--protocol", "wshuffle-triangles", *extra],
                          capsys)
        assert code == 1, text
        assert "the rows of 50 users were received, the plan assumes all 500" in text
        assert f"(epsilon {got:.4g}, delta 1e-08)-DP, not the planned epsilon 1" in text


def test_finding1_the_recomputed_epsilon_is_the_bound_at_the_users_received():
    """issue 36 finding 1: central_epsilon(plan, n) is the plan's epsilon at the planned n (the inverse of
    local_epsilon_for), and grows as fewer users are shuffled, up to epsilon0."""
    from ldpgraph.protocols.shuffle.wedge_shuffle import central_epsilon

    for name in ("wshuffle-triangles", "wshuffle-four-cycles-rr"):
        plan = registry.get(name).plan(1.0, n_users=2000)
        eps0 = plan.public["local_epsilon"]
        assert central_epsilon(plan, 2000) == pytest.approx(1.0, abs=1e-6)
        values = [central_epsilon(plan, s) for s in (2000, 1000, 300, 50, 3)]
        assert all(a < b for a, b in zip(values[:-2], values[1:-1], strict=True))
        assert 1.0 < values[2] < eps0 and values[-1] == eps0


def test_finding1_expected_nodes_and_roster_must_be_the_plans_users(tmp_path, capsys):
    """issue 36 finding 1: --expected-nodes / --roster are honoured: a count other than the plan's n_users is
    refused by the shuffler and the curator."""
    raw = tmp_path / "n.csv"
    assert _node(raw) == 0
    roster = tmp_path / "roster.csv"
    roster.write_text("node,label\n" + "".join(f"{i},u{i}\n" for i in range(19)))
    plan_args = ["--epsilon", "1", "--n-users", "20"]
    code, text = _run(["shuffle", str(raw), "--out", str(tmp_path / "s.csv"), *plan_args, "--roster", str(roster)],
                      capsys)
    assert code == 1 and "19 participants expected" in text
    assert main(["shuffle", str(raw), "--out", str(tmp_path / "s.csv"), *plan_args, "--expected-nodes", "20"]) == 0
    code, text = _run(["curate", str(tmp_path / "s.csv"), *plan_args, "--expected-nodes", "19"], capsys)
    assert code == 1 and "19 participants expected" in text
    code, text = _run(["curate", str(tmp_path / "s.csv"), *plan_args, "--json"], capsys)
    assert code == 0 and json.loads(text)["n_senders"] == 20


def test_finding1_an_upload_counted_twice_is_refused(tmp_path, capsys):
    """issue 36 finding 1: the curator counts distinct tokens: the same shuffled file twice, or one user's
    token twice in place of another's, is refused."""
    raw = tmp_path / "n.csv"
    assert _node(raw) == 0
    shuffled = tmp_path / "s.csv"
    assert main(["shuffle", str(raw), "--out", str(shuffled), "--epsilon", "1", "--n-users", "20"]) == 0
    code, text = _run(["curate", str(shuffled), str(shuffled), "--epsilon", "1", "--n-users", "20"], capsys)
    assert code == 1 and "duplicated or forged" in text
    rows = read_rows([shuffled])
    tokens = np.flatnonzero(rows["quantity"] == "sender")
    rows["value"][tokens[1]] = rows["value"][tokens[0]]
    write_report_chunks(tmp_path / "forged.csv", [rows])
    code, text = _run(["curate", str(tmp_path / "forged.csv"), "--epsilon", "1", "--n-users", "20"], capsys)
    assert code == 1 and "appears 2 times" in text


@pytest.mark.parametrize("name", ["wlocal-triangles", "wlocal-four-cycles"])
def test_finding2_an_unshuffled_round_refuses_amplified_accounting(name, tmp_path, capsys):
    """issue 36 finding 2: wlocal-* (no shuffler) refuse --accounting binary-rr / numerical / closed-form, in
    the plan (the rule reads the round's ``shuffled``), hence in node and curate; 'local' stays."""
    proto = registry.get(name)
    assert not proto.rounds()[0].shuffled
    for accounting in ("binary-rr", "numerical", "closed-form"):
        with pytest.raises(ValueError, match="not shuffled"):
            proto.plan(1.0, n_users=500, accounting=accounting)
        code, text = _run(["node", "--graph", SMALL, "--protocol", name, "--epsilon", "1", "--n-users", "20",
                           "--pairing-seed", "1", "--accounting", accounting, "--out", str(tmp_path / "n.csv")],
                          capsys)
        assert code == 2 and "not shuffled" in text and not (tmp_path / "n.csv").exists()
    plan = proto.plan(1.0, n_users=500, accounting="local")
    assert plan.public["local_epsilon"] == 1.0 and plan.shuffle is None
    with pytest.raises(ValueError, match="no option delta"):  # nor a delta it does not have
        proto.plan(1.0, n_users=500, delta=1e-6)
    with pytest.raises(ValueError, match="no delta"):
        registry.get(name.replace("wlocal", "wshuffle")).plan(1.0, n_users=500, accounting="local", delta=1e-6)
    # the shuffled protocols keep every accounting
    shuffled = registry.get(name.replace("wlocal", "wshuffle"))
    assert shuffled.plan(1.0, n_users=500, accounting="binary-rr").shuffle.accounting == "binary-rr"


def test_finding5_nodes_at_another_delta_are_refused(tmp_path, capsys):
    """issue 36 finding 5: nodes run at --delta 0.3 (another epsilon0) are refused by a shuffler and a curator
    at delta 1e-8; with --delta 0.3 both accept. The wedge rows carry epsilon0."""
    raw = tmp_path / "n.csv"
    assert _node(raw, SMALL, 20, "--delta", "0.3") == 0
    eps0 = registry.get("wshuffle-triangles").plan(1.0, n_users=20, delta=0.3).public["local_epsilon"]
    rows = read_rows([raw])
    assert set(rows["epsilon"][rows["quantity"] == "wedge"].tolist()) == {eps0}
    base = ["--epsilon", "1", "--n-users", "20"]
    code, text = _run(["shuffle", str(raw), "--out", str(tmp_path / "s.csv"), *base], capsys)
    assert code == 1 and "wedge row at epsilon" in text and "--delta" in text
    assert main(["shuffle", str(raw), "--out", str(tmp_path / "s.csv"), *base, "--delta", "0.3"]) == 0
    code, text = _run(["curate", str(tmp_path / "s.csv"), *base], capsys)
    assert code == 1 and "wedge row at epsilon" in text and "--delta" in text
    assert main(["curate", str(tmp_path / "s.csv"), *base, "--delta", "0.3"]) == 0


def test_finding5_every_budget_line_shows_epsilon_delta_epsilon0_and_the_users(tmp_path, capsys):
    """issue 36 finding 5: node, shuffle, curate and methods print (epsilon, delta), epsilon0 and the number
    of users the guarantee assumes; the curator prints the number of users it received."""
    plan = registry.get("wshuffle-triangles").plan(1.0, n_users=20)
    eps0 = f"epsilon0 {plan.public['local_epsilon']:.6g}-LDP"
    claim = "central (epsilon 1, delta 1e-08) if all 20 users are shuffled (numerical amplification)"
    raw, shuffled = tmp_path / "n.csv", tmp_path / "s.csv"
    code, text = _run(["node", "--graph", SMALL, "--protocol", "wshuffle-triangles", "--epsilon", "1",
                       "--n-users", "20", "--pairing-seed", "1", "--simulate", "--seed", "1", "--out", str(raw)],
                      capsys)
    assert code == 0 and claim in text and eps0 in text
    code, text = _run(["shuffle", str(raw), "--out", str(shuffled), "--epsilon", "1", "--n-users", "20"], capsys)
    assert code == 0 and claim in text and eps0 in text and "the rows of 20 users" in text
    code, text = _run(["curate", str(shuffled), "--epsilon", "1", "--n-users", "20"], capsys)
    assert code == 0 and claim in text and eps0 in text
    assert "received   the rows of 20 users (distinct sender tokens)" in text
    assert "inferred from the rows" not in text  # the senders were counted against the plan
    code, text = _run(["curate", str(shuffled), "--epsilon", "1", "--n-users", "20", "--json"], capsys)
    shown = json.loads(text)["plan"]["shuffle"]
    assert shown == {"epsilon": 1.0, "delta": 1e-8, "local_epsilon": plan.public["local_epsilon"], "users": 20,
                     "accounting": "numerical"}
    code, text = _run(["methods", "--stat", "four_cycles", "--n-users", "20"], capsys)
    assert code == 0 and "wshuffle-four-cycles: central (epsilon 1, delta 1e-08) if all 20 users" in text
    assert "wlocal-four-cycles: central" not in text  # no shuffle-model guarantee to print
    code, text = _run(["methods", "--stat", "four_cycles", "--json"], capsys)
    rows = {r["method"]: r for r in json.loads(text)["methods"]}
    assert rows["wshuffle-four-cycles"]["shuffle"]["users"] == 10_000
    assert rows["wlocal-four-cycles"]["shuffle"] is None


def test_finding7_the_shuffler_output_is_the_multiset(tmp_path):
    """issue 36 finding 7: the streaming shuffler's output depends on the multiset of the rows only: the same
    bytes whatever the files' order, their split and the chunk size (so nothing of the order of arrival, and
    so of who sent what, reaches the curator), and the rows are those sent, without node ids."""
    from ldpgraph.core import Seeded
    from ldpgraph.graph import from_edge_array
    from ldpgraph.run import node_lists, release_to_file, shuffle_files

    g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3], [3, 4], [4, 5], [1, 5], [0, 6], [6, 7], [2, 7]])
    proto = registry.get("wshuffle-triangles")
    plan = proto.plan(1.0, n_users=g.n_nodes, pairing_seed=3)
    rnd = proto.rounds()[0]
    nodes, lists = node_lists(g)
    parts = []
    for i, cut in enumerate((slice(0, 3), slice(3, 8))):
        parts.append(release_to_file(tmp_path / f"p{i}.csv", rnd, plan, nodes[cut], lists[cut], None,
                                     Seeded(2))[0])
    whole = release_to_file(tmp_path / "all.csv", rnd, plan, nodes, lists, None, Seeded(2))[0]
    outs = [shuffle_files(parts, tmp_path / "a.csv", plan, rnd).path,
            shuffle_files(parts[::-1], tmp_path / "b.csv", plan, rnd, chunk_rows=1).path,
            shuffle_files([whole], tmp_path / "c.csv", plan, rnd, chunk_rows=5).path]
    assert outs[0].read_bytes() == outs[1].read_bytes() == outs[2].read_bytes()
    sent, got = read_rows([whole]), read_rows([outs[0]])
    assert np.all(got["node"] == 0)
    assert sorted(zip(sent["quantity"], sent["value"], strict=True)) == list(
        zip(got["quantity"], got["value"], strict=True))


def test_finding9_a_node_says_what_its_upload_size_reveals(tmp_path, capsys):
    """issue 36 finding 9: a node's row count is its number of noisy 1-bits (plus its pair_edge bit and its
    token); one adjacency bit moves one wedge bit's law from Bernoulli(q1) to Bernoulli(p1), so the
    count's law moves by at most e^epsilon0, and exactly e^epsilon0 at the largest count (computed exactly
    below): traffic sizes reveal epsilon0 per adjacency bit, not the central epsilon. The node says so."""
    eps0 = registry.get("wshuffle-four-cycles").plan(1.0, n_users=2000).public["local_epsilon"]
    q1 = 1.0 / (1.0 + math.exp(eps0))
    pairs = 19  # a paired node's wedge bits, P - 1 (a small P: the bound does not depend on it)
    for ones in (0, 7, 18):  # how many of the other pairs are both its neighbours
        rest = np.array([1.0])
        for b in range(pairs - 1):
            p = 1.0 - q1 if b < ones else q1
            rest = np.convolve(rest, [1.0 - p, p])
        law = np.convolve(rest, [1.0 - q1, q1])       # the changed bit's wedge bit is 0 ...
        law2 = np.convolve(rest, [q1, 1.0 - q1])      # ... or 1 (one more neighbour)
        ratio = np.maximum(law / law2, law2 / law)
        assert ratio.max() == pytest.approx(math.exp(eps0), rel=1e-9)
        assert ratio.max() > math.exp(1.0) * 1.5
    code, text = _run(["node", "--graph", SMALL, "--protocol", "wshuffle-four-cycles", "--epsilon", "1",
                       "--n-users", "20", "--simulate", "--seed", "1", "--out", str(tmp_path / "n.csv")], capsys)
    assert code == 0
    small = registry.get("wshuffle-four-cycles").plan(1.0, n_users=20).public["local_epsilon"]
    assert f"is a function of this node's epsilon0 {small:.6g}-LDP rows" in text
    assert "not the central epsilon" in text


def test_finding7_running_counts_by_brute_force():
    """issue 36 finding 7: the count at which each row arrives (the shuffler's and the curator's quotas
    refuse at the row that breaks them) equals a row-by-row count, whatever the keys' order."""
    from ldpgraph.core.rows import running_counts

    gen = np.random.default_rng(3)
    for size in (0, 1, 7, 200):
        before = gen.integers(0, 5, 6)
        keys = gen.integers(0, 6, size)
        seen = before.copy()
        want = []
        for k in keys.tolist():
            seen[k] += 1
            want.append(int(seen[k]))
        assert running_counts(before, keys).tolist() == want
