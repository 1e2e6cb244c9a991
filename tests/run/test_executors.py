"""Every deployable protocol gives the same bits in memory, over files (CSV, JSON Lines, Parquet) and on Dask.

For a fixed seed, the in-memory executor and node → files → curate run the same release and the
same accumulator: the estimate (value and standard error), every round's result and broadcast
must agree exactly, whatever the file format, the number of files, the chunk size or the Dask
partitioning. The exact (deployment) samplers, seeded for the test, go through the same release
code and must agree the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.core import ExactSeeded, Secure, Seeded
from ldpgraph.datasets import load_dataset, resolve_graph
from ldpgraph.protocols import registry
from ldpgraph.run import accumulate_files, node_lists, release_to_file, run_in_memory, shuffle_files
from ldpgraph.run.files import read_broadcast, write_broadcast
from ldpgraph.run.memory import resolve_public

SMALL = "ws:n=300,k=10,p=0.1"

#: option variants beyond the registered methods (projection, private bounds, shares, ...): the
#: registry gives every method (:func:`_registered_cases`); these add what its options select
VARIANTS = [
    ("degree", {"kstar_counts": (2, 3), "d_max": 8}),  # below the largest degree: projection
    ("degree", {"kstar_counts": (2,), "d_max": 12, "no_degree": True}),
    ("local-dlap-kstars", {"d_max": 5, "kstar_counts": (3,)}),  # projection
    ("two-round-triangles-dlap", {"d_max": 4}),  # below the largest lower degree: projection
    ("avg-clustering", {}),  # the default: projection at the true maximum
    ("avg-clustering", {"d_max": 8, "projection": True}),  # below the largest degree: projection
    ("two-round-four-cycles-dlap", {"d_max": 8}),  # below the largest degree: projection
    ("kcore-hindex", {"h_share": 0.5, "readout_power": 1.0, "pool_c": 0.0}),
    ("wshuffle-triangles-ignore-rr", {"threshold": 0.5}),
    ("arr-triangles", {"clipping": False}),  # public bound, unbiased, a variance estimate
    ("arr-triangles", {"clipping": False, "d_max": 4, "mu": 0.5}),  # projection
    ("edge-orient-triangles", {"margin": 0.0}),  # bounds below some out-degrees: scaled counts
    ("edge-orient-triangles", {"degree_share": 0.2}),  # transitivity: round 2 carries the degree too
]


def _registered_cases() -> list[tuple[str, dict]]:
    """(protocol, options) of every deployable method of the registry (built in or from a plug-in),
    then the :data:`VARIANTS`; a protocol with a public pairing gets a common one (the secure
    sampler cannot draw it)."""
    out: list[tuple[str, dict]] = []
    for preset in registry.presets().values():
        if registry.get(preset.protocol).deployable and not preset.not_deployable:
            out.append((preset.protocol, dict(preset.options)))
    out += VARIANTS
    cases = []
    for name, options in out:
        if "pairing_seed" in {o.name for o in registry.get(name).options}:
            options = {"pairing_seed": 5, **options}
        if (name, options) not in cases:
            cases.append((name, options))
    return cases


#: (protocol, options): every deployable method of the registry, and the variants its options select
CASES = _registered_cases()


def test_every_deployable_protocol_is_covered():
    deployable = [n for n in registry.names() if registry.get(n).deployable]
    assert sorted({name for name, _ in CASES}) == sorted(deployable)
    assert {name for name, _ in VARIANTS} <= set(deployable)


def _same(a, b):
    assert a.value == b.value and a.std_error == b.std_error and a.statistic == b.statistic
    if hasattr(a, "core_numbers"):  # a vector estimate: every node's value
        assert np.array_equal(a.core_numbers, b.core_numbers) and a.rounds == b.rounds


def _through_files(tmp_path, name, graph, epsilon, sampler, options, *, fmt, parts, chunk_rows, scheduler=None,
                   results=None):
    """node → files → curate, round after round: each round's rows in ``parts`` files (node batches).

    The estimate (None with ``results``, a list that receives every round's result instead)."""
    proto = registry.get(name)
    plan = proto.plan(epsilon, **resolve_public(proto, graph, options))
    nodes, lists = node_lists(graph)
    cuts = np.array_split(np.arange(nodes.size), parts)
    broadcast, result, broadcasts = None, None, []
    step = 0
    for rnd in proto.rounds():
        step += 1
        paths = []
        for i, cut in enumerate(cuts):
            path = tmp_path / f"r{rnd.number}-{step}-{i}.{fmt}"
            release_to_file(path, rnd, plan, nodes[cut], [lists[j] for j in cut], broadcast, sampler)
            paths.append(path)
        if rnd.shuffled:  # the shuffler between nodes and curator: one file of id-less, permuted rows
            paths = [shuffle_files(paths, tmp_path / f"r{rnd.number}-{step}-shuffled.{fmt}", plan, rnd).path]
        result = accumulate_files(paths, rnd, plan, broadcast, chunk_rows=chunk_rows, scheduler=scheduler)
        if results is not None:
            results.append(result)
        nxt = rnd.broadcast(result, plan)
        if nxt is not None:  # through its file form, as a node downloads it
            bpath = tmp_path / f"b{step}.txt"
            write_broadcast(proto, bpath, nxt)
            broadcast = read_broadcast(proto, bpath, plan)
            same = getattr(nxt, "index", getattr(nxt, "levels", None))
            assert broadcast.run_id == nxt.run_id
            assert np.array_equal(getattr(broadcast, "index", getattr(broadcast, "levels", None)), same)
            broadcasts.append(broadcast)
    if results is not None:
        return None, broadcasts
    return proto.estimate(result, plan, broadcast, proto.statistics[0]), broadcasts


@pytest.mark.parametrize(("name", "options"), CASES)
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_files_equal_memory_on_a_300_node_graph(tmp_path, name, options, fmt):
    g = resolve_graph(SMALL, rng=0)
    want = run_in_memory(name, g, 2.0, sampler=11, **options)
    got, broadcasts = _through_files(tmp_path, name, g, 2.0, Seeded(11), options, fmt=fmt, parts=3,
                                     chunk_rows=257)
    _same(got, want.estimate)
    assert [b.run_id for b in broadcasts] == [b.run_id for b in want.broadcasts]


@pytest.mark.parametrize(("name", "options"), CASES)
def test_dask_equals_memory(tmp_path, name, options):
    g = resolve_graph(SMALL, rng=0)
    want = run_in_memory(name, g, 1.0, sampler=3, **options)
    got, _ = _through_files(tmp_path, name, g, 1.0, Seeded(3), options, fmt="parquet", parts=4,
                            chunk_rows=100, scheduler="sync")
    _same(got, want.estimate)


@pytest.mark.parametrize(("name", "options"), CASES)
def test_exact_samplers_run_the_same_release(tmp_path, name, options):
    """The deployment's exact samplers (seeded here) through the same code: memory == files."""
    g = resolve_graph("ws:n=120,k=8,p=0.1", rng=1)
    want = run_in_memory(name, g, 1.5, sampler=ExactSeeded(7), **options)
    got, _ = _through_files(tmp_path, name, g, 1.5, ExactSeeded(7), options, fmt="csv", parts=2,
                            chunk_rows=1000)
    _same(got, want.estimate)
    # and the secure sampler runs the protocol end to end
    run = run_in_memory(name, g, 1.5, sampler=Secure(), **options)
    assert np.isfinite(run.estimate.value)


@pytest.mark.parametrize(("name", "options"), [c for c in CASES if not c[1]])
def test_files_equal_memory_on_facebook(tmp_path, name, options):
    """Every round's result (the curator's whole input to the estimate) is the same bits. (The
    estimates themselves are compared on the 300-node graph: on Facebook the curators' dense
    variance estimates cost up to 30 s each.)"""
    g = load_dataset("facebook")
    eps = 8.0  # a small noisy graph keeps the files small; the code path is the same at every epsilon
    want = run_in_memory(name, g, eps, sampler=2026, **options)
    got: list = []
    _, broadcasts = _through_files(tmp_path, name, g, eps, Seeded(2026), options, fmt="parquet", parts=2,
                                   chunk_rows=1 << 16, results=got)
    assert [b.run_id for b in broadcasts] == [b.run_id for b in want.broadcasts]
    # round 1: a noisy graph (index), every node's noisy degree (kcore-hindex), else degree histograms
    key = next((k for k in ("index", "degrees") if hasattr(got[0], k)), None)
    if key is None:  # degree releases: the validated histograms of every round
        assert got == want.results and got[0].n_nodes == g.n_nodes == 4039
        return
    assert np.array_equal(getattr(got[0], key), getattr(want.results[0], key)) and got[0].n_nodes == g.n_nodes == 4039
    if len(got) > 1:
        mine, theirs = got[1].values(), want.results[1].values()
        assert mine.keys() == theirs.keys()
        for q in mine:
            assert np.array_equal(mine[q], theirs[q]), q


def test_a_node_alone_writes_its_rows_of_the_whole_run():
    """Node v's stream is keyed on (seed, round, v): released alone, it gives its rows of the full run."""
    g = resolve_graph(SMALL, rng=0)
    run = run_in_memory("two-round-triangles-dlap", g, 1.0, sampler=9)
    proto = run.protocol
    nodes, lists = node_lists(g)
    for rnd, rows, broadcast in zip(proto.rounds(), run.rows, [None, *run.broadcasts], strict=True):
        for v in (0, 17, 299):
            alone = rnd.release(run.plan, nodes[v:v + 1], [lists[v]], broadcast, Seeded(9))
            mine = rows["node"] == v
            for col, values in alone.items():
                assert np.array_equal(values, rows[col][mine]), col


def test_rows_carry_the_plan_and_the_plan_adds_up():
    g = resolve_graph(SMALL, rng=0)
    for name, options in CASES:
        run = run_in_memory(name, g, 1.3, sampler=1, **options)
        plan = run.plan
        assert sum(plan.budget().values()) == pytest.approx(1.3, rel=1e-12)
        for rows in run.rows:
            for q in set(rows["quantity"].tolist()):
                at = rows["quantity"] == q
                assert set(rows["epsilon"][at].tolist()) == {plan.release(q).epsilon_of(q)}
            assert set(rows["protocol"].tolist()) == {plan.protocol}


def test_curator_refuses_rows_released_under_another_plan(tmp_path):
    g = resolve_graph(SMALL, rng=0)
    proto = registry.get("rr-triangles")
    nodes, lists = node_lists(g)
    rnd = proto.rounds()[0]
    path = tmp_path / "r.csv"
    release_to_file(path, rnd, proto.plan(1.0), nodes, lists, None, Seeded(0))
    with pytest.raises(ValueError, match="released at epsilon 1.0, but the plan"):
        accumulate_files([path], rnd, proto.plan(2.0))


def test_round_one_refuses_hostile_rows_as_they_arrive():
    """Node ids beyond the public n, and more rr_edge rows than a node has lower nodes, are refused
    in ``add`` (memory bounded by what truthful nodes send), not after the whole set is held."""
    from ldpgraph.core.rows import quantity_rows
    from ldpgraph.protocols.deploy_triangles import chunk_from_columns

    proto = registry.get("rr-triangles")
    plan = proto.plan(1.0)
    rnd = proto.rounds()[0]
    acc = rnd.accumulator(plan, None, expected_nodes=10)
    with pytest.raises(ValueError, match="node 12 is not an expected node"):
        acc.add(chunk_from_columns(quantity_rows(plan, 1, [12], "rr_count", [0])))
    acc = rnd.accumulator(plan, None)
    flood = quantity_rows(plan, 1, [3] * 4, "rr_edge", [0, 1, 2, 0])  # node 3 has 3 lower nodes
    with pytest.raises(ValueError, match="node 3 sent 4 rr_edge rows, more than its 3 lower nodes"):
        acc.add(chunk_from_columns(flood))
    # across chunks and across merged partitions too
    a, b = rnd.accumulator(plan, None), rnd.accumulator(plan, None)
    a.add(chunk_from_columns(quantity_rows(plan, 1, [3, 3], "rr_edge", [0, 1])))
    b.add(chunk_from_columns(quantity_rows(plan, 1, [3, 3], "rr_edge", [2, 0])))
    with pytest.raises(ValueError, match="node 3 sent 4 rr_edge rows"):
        a.merge(b)


def test_node_batches_are_written_as_they_are_released(tmp_path):
    """release_to_file streams: each batch of nodes becomes its own row group (memory: one batch),
    and the rows are those of one whole batch."""
    from ldpgraph.run.reportfiles import iter_report_chunks, parquet_row_groups

    g = resolve_graph(SMALL, rng=0)
    proto = registry.get("rr-triangles")
    plan, rnd = proto.plan(3.0), proto.rounds()[0]
    nodes, lists = node_lists(g)
    _, n_small = release_to_file(tmp_path / "b.parquet", rnd, plan, nodes, lists, None, Seeded(1), batch_nodes=50)
    _, n_whole = release_to_file(tmp_path / "w.parquet", rnd, plan, nodes, lists, None, Seeded(1))
    assert n_small == n_whole > 0
    assert len(parquet_row_groups(tmp_path / "b.parquet")) >= 6 > len(parquet_row_groups(tmp_path / "w.parquet"))
    cols = [np.concatenate([c.node for c in iter_report_chunks(tmp_path / f)]) for f in ("b.parquet", "w.parquet")]
    assert np.array_equal(*cols)
