"""kcore-svt on the protocol layer: a repeating round, the executors, the node's secret, the law."""

from __future__ import annotations

import os

import networkx as nx
import numpy as np
import pytest
from scipy import stats

from ldpgraph.core import ExactSeeded, Secure, Seeded
from ldpgraph.core.registry import get
from ldpgraph.graph import from_edge_array
from ldpgraph.protocols.deploy_triangles import chunk_from_columns
from ldpgraph.protocols.kcore import exact_core_numbers, svt_node_release, svt_thresholds, svt_transcript_pmf
from ldpgraph.protocols.kcore_protocol import LevelBroadcast, level_move_release
from ldpgraph.run import accumulate_files, node_lists, release_to_file, run_in_memory
from ldpgraph.run.files import read_broadcast, write_broadcast


def _karate():
    kg = nx.karate_club_graph()
    return from_edge_array(np.array(kg.edges(), dtype=np.int64), n_nodes=kg.number_of_nodes())


def test_plan_states_the_composition_and_rounds_are_counted():
    g = _karate()
    run = run_in_memory("kcore-svt", g, 1000.0, sampler=1, levels_per_group=8)
    assert run.plan.budget() == {"levels": 1000.0}
    assert "any number of steps" in run.plan.describe()
    assert run.plan.to_dict()["rounds"][0]["repeats"]
    # converged peeling and negligible noise: the exact core numbers
    assert run.estimate.core_numbers.tolist() == exact_core_numbers(g).astype(float).tolist()
    assert run.n_rounds == run.estimate.rounds == len(run.results)
    assert run.broadcasts[-1].done and not any(b.done for b in run.broadcasts[:-1])


def test_file_executor_gives_the_in_memory_bits(tmp_path):
    g = _karate()
    proto = get("kcore-svt")
    mem = run_in_memory(proto, g, 1.0, sampler=Seeded(5), d_max=17)
    plan = proto.plan(1.0, d_max=17)
    nodes, lists = node_lists(g)
    (rnd,) = proto.rounds()
    broadcast, step = None, 0
    while True:
        # two node files per step, the curator reads them through a fresh broadcast file
        half = nodes.size // 2
        files = [release_to_file(tmp_path / f"s{step}-{i}.csv", rnd, plan, nodes[sl], lists[sl], broadcast,
                                 Seeded(5), batch_nodes=7)[0]
                 for i, sl in enumerate((slice(0, half), slice(half, None)))]
        result = accumulate_files(files, rnd, plan, broadcast, chunk_rows=5)
        b = rnd.broadcast(result, plan)
        path = write_broadcast(proto, tmp_path / f"b{step}.json", b)
        broadcast = read_broadcast(proto, path, plan)
        step += 1
        if not rnd.again(broadcast):
            break
    est = proto.estimate(result, plan, broadcast, "core_numbers")
    assert step == mem.n_rounds
    assert est.levels.tolist() == mem.estimate.levels.tolist()
    assert est.core_numbers.tolist() == mem.estimate.core_numbers.tolist()


def test_accumulator_refuses_wrong_rows():
    g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    proto = get("kcore-svt")
    plan = proto.plan(200.0, d_max=3)
    (rnd,) = proto.rounds()
    nodes, lists = node_lists(g)
    first = rnd.accumulator(plan, None)
    first.add(chunk_from_columns(rnd.release(plan, nodes, lists, None, Seeded(0))))
    b = rnd.broadcast(first.result(), plan)
    rows = rnd.release(plan, nodes, lists, b, Seeded(0))
    for edit, match in (("value", "0 or 1"), ("run", "run id"), ("dup", "two level moves")):
        bad = {k: v.copy() for k, v in rows.items()}
        if edit == "value":
            bad["value"][0] = 2
        elif edit == "run":
            bad["value"][1] += 1
        else:
            bad = {k: np.concatenate([v, v[:2]]) for k, v in rows.items()}
        acc = rnd.accumulator(plan, b)
        with pytest.raises(ValueError, match=match):
            acc.add(chunk_from_columns(bad))
            acc.result()
    with pytest.raises(ValueError, match="not made under the plan"):
        rnd.accumulator(proto.plan(100.0, d_max=3), b)
    edited = LevelBroadcast(b.epsilon, b.d_max, b.psi, b.levels_per_group, b.step, b.levels + 1, b.active,
                            b.run_id)
    with pytest.raises(ValueError, match="run id"):
        rnd.release(plan, nodes, lists, edited, Seeded(0))


def test_secure_secret_is_kept_in_a_private_state_file(tmp_path):
    state = tmp_path / "node.state"
    draw = lambda s: int(s.dlap(0.01, 1.0, 1)[0])  # noqa: E731  (wide: a redraw would differ)
    s = Secure(state=state)
    a = s.secret(3, "rho", draw)
    s.flush()  # what a release does before it hands over its rows
    assert Secure(state=state).secret(3, "rho", draw) == a  # another process reads it back
    assert oct(os.stat(state).st_mode & 0o777) == "0o600"
    s = ExactSeeded(4)
    assert s.secret(3, "rho", draw) == s.secret(3, "rho", draw) == ExactSeeded(4).secret(3, "rho", draw)


def test_the_state_file_is_not_followed_and_written_whole(tmp_path, monkeypatch):
    """issue 36 finding 10: the node state file is read without following a symbolic link (a
    link planted at its name is refused, its target untouched) and written atomically (a crash
    while writing leaves the previous state, never a cut file); 7443152 opened it through links
    with O_TRUNC and wrote it in place."""
    draw = lambda s: int(s.dlap(0.01, 1.0, 1)[0])  # noqa: E731
    victim = tmp_path / "victim.txt"
    victim.write_text("not a state file")
    link = tmp_path / "link.state"
    link.symlink_to(victim)
    with pytest.raises(ValueError, match="is a symbolic link"):
        Secure(state=link).secret(3, "rho", draw)
    assert victim.read_text() == "not a state file"
    state = tmp_path / "node.state"
    s = Secure(state=state)
    a = s.secret(3, "rho", draw)
    s.flush()
    before = state.read_bytes()

    def cut(obj, fh):
        fh.write('{"rho:3": ')
        raise KeyboardInterrupt  # killed while writing

    monkeypatch.setattr("ldpgraph.core.sampling.json.dump", cut)
    s = Secure(state=state)
    s.secret(4, "rho", draw)
    with pytest.raises(KeyboardInterrupt):
        s.flush()
    assert state.read_bytes() == before and [p.name for p in tmp_path.iterdir() if ".partial" in p.name] == []
    assert Secure(state=state).secret(3, "rho", draw, kept=True) == a


def test_svt_transcript_law_is_exact():
    counts, ks = [2, 2, 3, 3, 4], [1, 2, 3, 4, 5]
    p = svt_transcript_pmf(counts, ks, 1.0)
    assert abs(p.sum() - 1.0) < 1e-12
    obs = np.bincount(svt_node_release(counts, ks, 1.0, size=200_000, rng=11), minlength=p.size)
    assert stats.chisquare(obs, p * obs.sum()).pvalue > 1e-3


def test_layer_node_release_has_the_svt_law():
    """One node of a star against hand-made broadcasts: the layer's release (per-node streams, the
    secret rho) follows the exact transcript law."""
    d_max, n_leaves = 4, 4
    plan = get("kcore-svt").plan(1.0, d_max=d_max, levels_per_group=1)
    ks = svt_thresholds(0.25, d_max)
    # the leaves stay at level 0 except leaf 1, which climbs: node 0 counts 4, then 1, 1, ...
    steps = len(ks)
    counts = [n_leaves] + [1] * (steps - 1)
    broadcasts = [None] + [
        LevelBroadcast.build(plan, r, np.array([r, r, 0, 0, 0]), np.array([True, True, False, False, False]))
        for r in range(1, steps)]
    nb = np.arange(1, n_leaves + 1)
    n = 3000
    moves = np.empty(n, dtype=np.int64)
    for seed in range(n):
        smp = Seeded(seed)
        m = 0
        while m < steps and level_move_release(0, nb, broadcasts[m], plan, smp):
            m += 1
        moves[seed] = m
    p = svt_transcript_pmf(counts, ks[:steps], 1.0)
    obs = np.bincount(moves, minlength=p.size)
    keep = p * n >= 5
    exp, got = p[keep] * n, obs[keep]
    if not keep.all():
        exp, got = np.append(exp, p[~keep].sum() * n), np.append(got, obs[~keep].sum())
    assert stats.chisquare(got, exp).pvalue > 1e-3
