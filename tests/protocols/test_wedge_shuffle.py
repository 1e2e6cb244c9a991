"""Wedge shuffling (triangles, 4-cycles): exact unbiasedness and variance, the release, the shuffler."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpgraph.audit import audit_neighbours
from ldpgraph.core import NodeStream, Sampler
from ldpgraph.graph import from_edge_array
from ldpgraph.graph.cycles import four_cycle_count
from ldpgraph.graph.statistics import triangle_count
from ldpgraph.protocols import registry
from ldpgraph.protocols.shuffle.wedge_shuffle import (
    PAIR_EDGE,
    WEDGE,
    WedgeShuffleRound,
    codegree_sums,
    pair_terms,
)
from ldpgraph.run import accumulate_files, node_lists, release_to_file, run_in_memory
from ldpgraph.run.shuffler import read_rows, secure_permutation, shuffle_files

# two triangles sharing an edge, a 4-cycle and a pendant path: triangles 2, 4-cycles 2 (0-1-3-2 and 3-4-5-6)
TINY = from_edge_array([[0, 1], [0, 2], [1, 2], [1, 3], [2, 3], [3, 4], [4, 5], [5, 6], [6, 3], [6, 7]])


def _matchings(nodes):
    """Every matching of floor(len/2) pairs (one node left out when the count is odd)."""
    nodes = list(nodes)
    if len(nodes) < 2:
        yield []
        return
    if len(nodes) % 2:
        for skip in nodes:
            yield from _matchings([v for v in nodes if v != skip])
        return
    first, rest = nodes[0], nodes[1:]
    for j in rest:
        for m in _matchings([v for v in rest if v != j]):
            yield [(first, j), *m]


def _binomial_sum_pmf(k1, p1, k2, p2):
    return np.convolve(stats.binom.pmf(np.arange(k1 + 1), k1, p1), stats.binom.pmf(np.arange(k2 + 1), k2, p2))


@pytest.mark.parametrize(("name", "n_extra"), [  # n = 8 (even) and 9 (odd: one node unpaired)
    ("wshuffle-triangles", 0), ("wlocal-triangles", 0), ("wshuffle-four-cycles-rr", 0),
    ("wshuffle-triangles", 1), ("wshuffle-four-cycles", 1)])
def test_unbiased_and_variance_exactly_by_enumeration(name, n_extra):
    """Mean and variance of the estimate summed exactly over every matching and every count outcome."""
    edges = np.array([[0, 1], [0, 2], [1, 2], [1, 3], [2, 3], [3, 4], [4, 5], [5, 6], [6, 3], [6, 7]])
    g = from_edge_array(edges, n_nodes=8 + n_extra)
    n = g.n_nodes
    proto = registry.get(name)
    stat = proto.statistics[0]
    plan = proto.plan(3.0, n_users=n)
    adj = np.zeros((n, n), dtype=np.int64)
    adj[edges[:, 0], edges[:, 1]] = adj[edges[:, 1], edges[:, 0]] = 1
    codeg = adj @ adj
    p1 = 1 / (1 + math.exp(-plan.public["local_epsilon"]))
    p2 = 1 / (1 + math.exp(-plan.public["edge_epsilon"]))
    m = n - 2
    k = n * (n - 1) / ((6 if stat == "triangles" else 4) * (n // 2))
    means, variances = [], []
    for match in _matchings(range(n)):
        mean = var = 0.0
        for i, j in match:
            t, a = int(codeg[i, j]), int(adj[i, j])
            pw = _binomial_sum_pmf(t, p1, m - t, 1 - p1)
            pe = _binomial_sum_pmf(2 * a, p2, 2 - 2 * a, 1 - p2)
            w, e = np.meshgrid(np.arange(m + 1), np.arange(3), indexing="ij")
            terms = pair_terms((w, e), plan, stat)
            prob = np.outer(pw, pe)
            mu = float((prob * terms).sum())
            mean += mu
            var += float((prob * terms**2).sum()) - mu * mu
        means.append(k * mean)
        variances.append(k * k * var)
    means = np.array(means)
    exact_mean = means.mean()
    exact_var = np.mean(variances) + means.var()
    truth = triangle_count(g) if stat == "triangles" else four_cycle_count(g)
    assert exact_mean == pytest.approx(truth, rel=1e-10)
    mean, var = proto.moments(g, plan, stat)
    assert mean == pytest.approx(truth, rel=1e-12)
    assert var == pytest.approx(exact_var, rel=1e-9)


def test_codegree_sums_by_brute_force():
    rng = np.random.default_rng(3)
    n = 12
    upper = np.triu(rng.random((n, n)) < 0.4, 1)
    adj = (upper | upper.T).astype(np.int64)
    g = from_edge_array(np.argwhere(upper), n_nodes=n)
    c = adj @ adj
    iu = np.triu_indices(n, 1)
    t = c[iu]
    ch2 = c * (c - 1) / 2
    np.fill_diagonal(ch2, 0)
    tri_v = (adj * c).sum(axis=1) / 2
    s = codegree_sums(g)
    assert s["t1"] == t.sum() and s["t2"] == (t**2).sum()
    assert s["c2sq"] == ((t * (t - 1) / 2) ** 2).sum()
    assert s["edge_t2"] == ((t**2) * adj[iu]).sum()
    assert s["tri_local_sq"] == (tri_v**2).sum() and s["c4_local_sq"] == (ch2.sum(axis=1) ** 2).sum()
    assert s["triangles"] == triangle_count(g) and s["four_cycles"] == four_cycle_count(g)


@pytest.mark.parametrize("name", ["wshuffle-triangles-rr", "wshuffle-four-cycles"])
def test_fast_simulation_monte_carlo_matches_moments(name):
    from ldpgraph.datasets import resolve_graph

    g = resolve_graph("ws:n=400,k=12,p=0.1", rng=0)
    proto = registry.get(name)
    stat = proto.statistics[0]
    plan = proto.plan(2.0, n_users=g.n_nodes)
    est = proto.simulate(g, plan, stat, 2000, rng=11)
    mean, var = proto.moments(g, plan, stat)
    se = math.sqrt(var / est.size)
    assert abs(est.mean() - mean) < 4 * se
    assert est.var(ddof=1) / var == pytest.approx(1.0, abs=0.1)



@pytest.mark.parametrize("name", ["wshuffle-triangles", "wshuffle-four-cycles", "wshuffle-triangles-ignore"])
def test_fast_simulation_dense_tables_give_the_sparse_path_numbers(name, monkeypatch):
    """Up to _DENSE_CODEGREES nodes the pairs' codegrees and adjacency are looked up in dense tables;
    above, sliced from the sparse matrix: the same draws, the same estimates."""
    import ldpgraph.protocols.shuffle.wedge_shuffle as ws

    proto = registry.get(name)
    plan = proto.plan(2.0, n_users=TINY.n_nodes, **({"pairing_seed": 1} if "ignore" in name else {}))
    stat = proto.statistics[0]
    dense = proto.simulate(TINY, plan, stat, 50, rng=3)
    monkeypatch.setattr(ws, "_DENSE_CODEGREES", 0)
    assert np.array_equal(proto.simulate(TINY, plan, stat, 50, rng=3), dense)

def test_node_release_law_matches_moments():
    """The rows path (release -> shuffle -> accumulate -> estimate), 400 seeds on a small graph."""
    from ldpgraph.datasets import resolve_graph

    g = resolve_graph("ws:n=40,k=6,p=0.2", rng=1)
    proto = registry.get("wshuffle-triangles")
    est = np.array([run_in_memory(proto, g, 2.0, sampler=s).estimate.value for s in range(400)])
    mean, var = proto.moments(g, proto.plan(2.0, n_users=g.n_nodes), "triangles")
    assert abs(est.mean() - mean) < 4 * math.sqrt(var / est.size)
    assert est.var(ddof=1) / var == pytest.approx(1.0, abs=0.2)


def test_files_through_the_shuffler_equal_memory(tmp_path):
    from ldpgraph.core import Seeded

    g = TINY
    for name in ("wshuffle-triangles", "wshuffle-four-cycles"):
        run = run_in_memory(name, g, 1.5, sampler=5)
        proto, plan = run.protocol, run.plan
        nodes, lists = node_lists(g)
        raw, n_rows = release_to_file(tmp_path / f"{name}.csv", proto.rounds()[0], plan, nodes, lists, None,
                                      Seeded(5), batch_nodes=3)
        done = shuffle_files([raw], tmp_path / f"{name}.shuffled.parquet", plan, proto.rounds()[0],
                             chunk_rows=7)
        shuffled = done.path
        assert (done.n_rows, done.n_senders) == (n_rows, g.n_nodes)
        rows = read_rows([shuffled])
        assert np.all(rows["node"] == 0)  # no node id reaches the curator
        before = read_rows([raw])
        assert sorted(zip(before["quantity"], before["value"], strict=True)) == sorted(
            zip(rows["quantity"], rows["value"], strict=True))
        result = accumulate_files([shuffled], proto.rounds()[0], plan)
        assert proto.estimate(result, plan, None, proto.statistics[0]).value == run.estimate.value
        with pytest.raises(ValueError, match="shuffler"):
            accumulate_files([raw], proto.rounds()[0], plan)
        with pytest.raises(ValueError, match="one of the inputs"):
            shuffle_files([raw], raw, plan, proto.rounds()[0])


class _SharedStream(NodeStream):
    def __init__(self, gen):
        self.gen = gen

    def dlap(self, epsilon, sensitivity, size):
        raise NotImplementedError

    def keep(self, epsilon, size):
        return self.gen.random(int(size)) < 1.0 / (1.0 + math.exp(-epsilon))

    def uniform(self, size):
        return self.gen.random(int(size))

    def subset(self, items, k):
        raise NotImplementedError


class _SharedSampler(Sampler):
    """Every node stream draws from one generator (many independent releases of one node)."""

    def __init__(self, gen):
        self._stream = _SharedStream(gen)

    def stream(self, round, node):
        return self._stream


@pytest.mark.filterwarnings("ignore::ldpgraph.audit.AuditPowerWarning")
def test_node_release_passes_the_audit_at_its_local_epsilon():
    """The release code path (pairing, own pair skipped, partner bit) at its claimed ε₀, on both kinds of
    neighbouring inputs. 5,000 samples per input keep the suite fast: the audit then detects an excess
    over ε₀ of about 0.19 or more (its power warning says so; the randomized response itself is exact)."""
    g = TINY
    proto = registry.get("wshuffle-triangles")
    plan = proto.plan(1.0, n_users=g.n_nodes, pairing_seed=4)
    pairs = np.random.default_rng(np.random.SeedSequence(4)).permutation(8).reshape(-1, 2)
    eps0 = plan.public["local_epsilon"]
    rnd = WedgeShuffleRound()
    k = int(pairs[0, 0])
    partner = int(pairs[0, 1])
    i, j = (int(x) for x in pairs[1])

    def node(nb, size, rng):
        smp = _SharedSampler(np.random.default_rng(rng))
        codes = np.empty(size, dtype=np.int64)
        for s in range(size):
            rows = rnd.release(plan, np.array([k]), [np.array(sorted(nb), dtype=np.int64)], None, smp)
            bits = np.zeros(pairs.shape[0] + 1, dtype=np.int64)
            bits[rows["value"][rows["quantity"] == WEDGE]] = 1
            bits[-1] = np.any(rows["quantity"] == PAIR_EDGE)
            codes[s] = int((bits << np.arange(bits.size)).sum())
        return codes

    neighbours = [((j,), (i, j)), ((), (partner,))]  # one wedge bit flips; the partner's edge bit flips
    assert audit_neighbours(node, neighbours, eps0, n_samples=5_000, rng=7).passed


def test_secure_permutation_is_uniform_and_cli(tmp_path, capsys):
    for method in ("sort", "fisher-yates"):
        counts = {}
        for _ in range(20_000):  # the OS CSPRNG cannot be seeded: a false alarm at most 1e-7 a run
            key = tuple(secure_permutation(3, method).tolist())
            counts[key] = counts.get(key, 0) + 1
        assert len(counts) == 6
        assert stats.chisquare(list(counts.values())).pvalue > 5e-8
        assert sorted(secure_permutation(50, method).tolist()) == list(range(50))
    assert secure_permutation(0).size == 0 and secure_permutation(1).tolist() == [0]

    from ldpgraph.cli import main
    from ldpgraph.core import Seeded

    proto = registry.get("wshuffle-four-cycles")
    plan = proto.plan(1.0, n_users=TINY.n_nodes)
    nodes, lists = node_lists(TINY)
    raw, _ = release_to_file(tmp_path / "n.jsonl", proto.rounds()[0], plan, nodes, lists, None, Seeded(1))
    n = str(TINY.n_nodes)
    assert main(["shuffle", str(raw), "--out", str(tmp_path / "s.csv"), "--epsilon", "1", "--n-users", n]) == 0
    assert "node ids dropped" in capsys.readouterr().out
    assert np.all(read_rows([tmp_path / "s.csv"])["node"] == 0)
    assert main(["shuffle", str(raw), "--out", str(tmp_path / "t.csv"), "--seed", "3"]) == 2
    assert main(["curate", str(tmp_path / "s.csv"), "--epsilon", "1", "--n-users", str(TINY.n_nodes),
                 "--stat", "four_cycles"]) == 0
    assert "four_cycles" in capsys.readouterr().out


def test_plan_carries_the_central_guarantee():
    plan = registry.get("wshuffle-triangles").plan(1.0, n_users=4039)
    pub = plan.public
    assert (pub["central_epsilon"], pub["central_delta"]) == (1.0, 1e-8)
    assert (pub["edge_dp_epsilon"], pub["edge_dp_delta"]) == (2.0, 2e-8)
    from ldpgraph.privacy import numerical_epsilon

    assert numerical_epsilon(pub["local_epsilon"], 4037, 1e-8) <= 1.0 + 1e-8
    ours = registry.get("wshuffle-triangles-rr").plan(1.0, n_users=4039).public["local_epsilon"]
    assert ours > pub["local_epsilon"] + 0.5  # about twice as many clones: e^eps0 about doubles
    assert registry.get("wlocal-triangles").plan(1.0, n_users=4039).public["local_epsilon"] == 1.0
    with pytest.raises(ValueError, match="n_users"):
        registry.get("wshuffle-triangles").plan(1.0)
    with pytest.raises(ValueError, match="accounting"):
        registry.get("wshuffle-triangles").plan(1.0, n_users=10, accounting="renyi")
    with pytest.raises(ValueError, match="pairing-seed"):
        from ldpgraph.core import Secure

        WedgeShuffleRound().release(plan, np.array([0]), [np.array([1])], None, Secure())


@pytest.mark.parametrize("name", ["wshuffle-triangles-ignore", "wshuffle-triangles-ignore-rr"])
def test_ignore_variant_monte_carlo_matches_its_moments(name):
    """Mean (biased: the dropped pairs' triangles) and variance, mixed over the others' degree noise (an
    approximation of order 1/n)."""
    from ldpgraph.datasets import resolve_graph

    g = resolve_graph("ba:n=1000,m=8", rng=2)
    proto = registry.get(name)
    plan = proto.plan(2.0, n_users=g.n_nodes, pairing_seed=0)
    est = proto.simulate(g, plan, "triangles", 1500, rng=12)
    mean, var = proto.moments(g, plan, "triangles")
    assert mean < triangle_count(g)  # it drops the triangles of the pairs it ignores
    assert abs(est.mean() - mean) < 4 * math.sqrt(var / est.size)
    assert est.var(ddof=1) / var == pytest.approx(1.0, abs=0.12)


def test_ignore_variant_moments_where_the_threshold_sits_on_a_degree():
    """30 users of mean degree exactly 6, the degrees nearly exact (eps_D = 10): whether a user of degree
    6 is dense turns on its own noise inside the threshold. Taking the threshold at its mean put the
    mean at 9.0 against 13.5 simulated; the mixture over the others' noise gets it."""
    from ldpgraph.datasets import resolve_graph

    g = resolve_graph("ws:n=30,k=6,p=0.2", rng=0)
    assert g.degrees.mean() == 6.0
    proto = registry.get("wshuffle-triangles-ignore")
    plan = proto.plan(20.0, n_users=g.n_nodes, pairing_seed=0, degree_share=0.5)
    est = proto.simulate(g, plan, "triangles", 3000, rng=5)
    mean, var = proto.moments(g, plan, "triangles")
    assert abs(est.mean() - mean) < 4 * math.sqrt(var / est.size)
    assert est.var(ddof=1) / var == pytest.approx(1.0, abs=0.1)


def test_ignore_variant_keep_probabilities_exact():
    from ldpgraph.mechanisms import DiscreteLaplace
    from ldpgraph.protocols.shuffle.wedge_shuffle_ignore import keep_probabilities

    d = np.array([3, 10, 17])
    s = keep_probabilities(d, 9.5, 0.7)
    ks = np.arange(-200, 201)
    pmf = DiscreteLaplace(epsilon=0.7).pmf(ks)
    assert s == pytest.approx([pmf[(x + ks) > 9.5].sum() for x in d], rel=1e-12)


def test_experiment_records_carry_the_central_guarantee():
    from ldpgraph.experiments import run_experiment

    res = run_experiment({"tiny": TINY}, epsilons=[1.0], methods=["wshuffle-four-cycles", "wlocal-triangles"],
                         statistics=["four_cycles", "triangles"], n_trials=3, seed=1)
    priv = {c["method"]: c["privacy"] for c in res.config["cell_costs"]}
    assert priv["wshuffle-four-cycles"]["central_epsilon"] == 1.0
    assert priv["wshuffle-four-cycles"]["central_delta"] == 1e-8
    assert priv["wshuffle-four-cycles"]["edge_dp_delta"] == 2e-8
    assert priv["wlocal-triangles"]["central_delta"] == 0.0 and priv["wlocal-triangles"]["local_epsilon"] == 1.0
