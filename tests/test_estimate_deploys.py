"""``ldpgraph estimate --seed S`` runs what deploys: for every deployable method, its number is the one
``ldpgraph node --simulate --seed S`` → (``shuffle``) → ``curate`` prints, bit for bit (issue 33)."""

from __future__ import annotations

import json

import pytest

from ldpgraph.cli import main
from ldpgraph.protocols import registry
from ldpgraph.run.method import get_method, method_names

#: a tiny graph whose node ids are not 0..n-1 (a degree protocol's rows keep them, the others number
#: the nodes): triangles, 4-cycles, a pendant node and a k-core of 3
EDGES = [(1, 2), (1, 3), (2, 3), (3, 4), (4, 5), (5, 6), (6, 3), (2, 7), (7, 8), (8, 9), (9, 7),
         (7, 10), (10, 11), (11, 12), (12, 10), (10, 13), (13, 11), (12, 13), (2, 11), (5, 9), (14, 1)]
SEED = 11
EPSILON = "4"


def _json(capsys, argv):
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _flags(proto, public):
    """The CLI flags of a plan's public options (those the protocol takes), as node / curate take them."""
    out = []
    for o in proto.options:
        value = public.get(o.name)
        if value is None or value == o.default or (o.name == "kstar_counts" and not value):
            continue
        if isinstance(value, bool):
            out.append(o.flag if value else "--no-" + o.flag[2:])
        elif isinstance(value, dict):
            out += [o.flag, ",".join(f"{q}={float(f)!r}" for q, f in value.items())]
        elif isinstance(value, (list, tuple)):
            out += [o.flag, ",".join(map(str, value))]
        else:
            out += [o.flag, repr(value) if isinstance(value, float) else str(value)]
    return out


def deploy(tmp_path, capsys, graph, entry, statistic, epsilon, seed, k=()):
    """``node`` (each round, against the previous broadcast) → ``shuffle`` (a shuffled round) →
    ``curate`` of the protocol and plan options an ``estimate --json`` entry names: the last JSON."""
    proto = registry.get(entry["protocol"])
    opts = ["--protocol", proto.name, "--epsilon", epsilon, *_flags(proto, entry["plan"]["public"])]
    rounds = proto.rounds()
    broadcast = None
    for rnd in rounds:
        rows = tmp_path / f"{proto.name}-{rnd.number}.csv"
        prev = [] if broadcast is None else ["--broadcast", str(broadcast)]
        assert main(["node", "--graph", str(graph), *opts, "--round", str(rnd.number), *prev, "--simulate",
                     "--seed", str(seed), "--out", str(rows)]) == 0, capsys.readouterr().err
        if rnd.shuffled:
            shuffled = tmp_path / f"{proto.name}-{rnd.number}-shuffled.csv"
            assert main(["shuffle", str(rows), *opts, "--out", str(shuffled)]) == 0, capsys.readouterr().err
            rows = shuffled
        if rnd.number < len(rounds):
            broadcast = tmp_path / f"{proto.name}-{rnd.number}.broadcast"
            assert main(["curate", str(rows), *opts, "--round", str(rnd.number), *prev,
                         "--broadcast-out", str(broadcast)]) == 0, capsys.readouterr().err
    return _json(capsys, ["curate", str(rows), *opts, *prev, "--round", str(len(rounds)), "--stat", statistic,
                         *k])


def _deployable():
    """(method, statistic) for every statistic a deployable method estimates as deployed (the scalar ones)."""
    out = []
    for name in method_names():
        m = get_method(name)
        if m.deployed_as is not None:
            proto = registry.get(m.deployed_as[0])
            out += [(name, st) for st in m.statistics if st in proto.statistics and st != "core_numbers"]
    return out


CASES = _deployable()


def test_every_deployable_method_is_listed():
    assert len(CASES) >= 20
    assert {"unbiased-dlap", "naive-dlap", "two-round-triangles-dlap", "wshuffle-triangles"} <= {n for n, _ in CASES}


@pytest.mark.parametrize("method, statistic", CASES)
def test_estimate_equals_node_curate_on_a_tiny_graph(tmp_path, capsys, monkeypatch, method, statistic):
    monkeypatch.setenv("LDPGRAPH_CURATOR_KEY", str(tmp_path / "key"))
    graph = tmp_path / "tiny.txt"
    graph.write_text("".join(f"{u} {v}\n" for u, v in EDGES))
    k = ["--k", "2"] if statistic == "kstars" else []
    doc = _json(capsys, ["estimate", str(graph), "--stat", statistic, *k, "--methods", method, "--epsilon", EPSILON,
                         "--seed", str(SEED)])
    entry, = doc["estimates"]
    assert entry["protocol"] == get_method(method).deployed_as[0]
    got = deploy(tmp_path, capsys, graph, entry, statistic, EPSILON, SEED, k)
    curated, = got["estimates"]
    assert curated["estimate"] == entry["estimate"]  # bit for bit (JSON floats round-trip)
    assert curated["std_error"] == entry["std_error"] and curated["std_error_kind"] == entry["std_error_kind"]
    assert got["plan"] == entry["plan"]


@pytest.mark.parametrize("argv, deployed, value", [
    # the two examples: estimate printed 9,304,170.4 and 1,984,781 before it ran the deployment
    (["--stat", "kstars", "--k", "2", "--methods", "unbiased-dlap"], "degree", 9311838.4),
    (["--stat", "triangles", "--methods", "two-round-triangles-dlap", "--d-max", "251"],
     "two-round-triangles-dlap", 1505422.2),
])
def test_estimate_equals_node_curate_on_facebook(tmp_path, capsys, monkeypatch, facebook_path, argv, deployed,
                                                 value):
    monkeypatch.setenv("LDPGRAPH_CURATOR_KEY", str(tmp_path / "key"))
    doc = _json(capsys, ["estimate", str(facebook_path), *argv, "--epsilon", "1", "--seed", "7"])
    entry, = doc["estimates"]
    assert entry["protocol"] == deployed and round(entry["estimate"], 1) == value
    k = argv[argv.index("--k"):argv.index("--k") + 2] if "--k" in argv else []
    got = deploy(tmp_path, capsys, facebook_path, entry, argv[1], "1", 7, k)
    curated, = got["estimates"]
    assert (curated["estimate"], curated["std_error"]) == (entry["estimate"], entry["std_error"])
    assert got["plan"] == entry["plan"]


def test_a_vector_statistic_deploys_too(tmp_path, capsys, monkeypatch):
    """kcore-hindex (core numbers): estimate's summary is that of the deployed run, whose per-node
    core numbers are those node -> curate writes."""
    from ldpgraph.experiments.single import estimate_once
    from ldpgraph.protocols.kcore.reference import core_sizes

    monkeypatch.setenv("LDPGRAPH_CURATOR_KEY", str(tmp_path / "key"))
    graph = tmp_path / "tiny.txt"
    graph.write_text("".join(f"{u} {v}\n" for u, v in EDGES))
    doc = _json(capsys, ["estimate", str(graph), "--stat", "core_numbers", "--methods", "kcore-hindex",
                         "--epsilon", EPSILON, "--seed", str(SEED)])
    entry, = doc["estimates"]
    assert entry["protocol"] == "kcore-hindex"
    got = deploy(tmp_path, capsys, graph, entry, "core_numbers", EPSILON, SEED)
    cores = got["core_numbers"]
    assert entry["kcore_sizes"] == {str(k): v for k, v in core_sizes(cores).items()}
    assert entry["rounds"] == got["rounds"] and got["plan"] == entry["plan"]
    run = estimate_once(str(graph), epsilon=float(EPSILON), statistic="core_numbers", methods=["kcore-hindex"],
                        seed=SEED)
    per_node = run.estimates[0].per_node  # by the file's labels, numbered in the order curate numbers them
    assert list(per_node.values()) == cores
