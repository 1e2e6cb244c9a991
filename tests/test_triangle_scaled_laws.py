r"""The triangle protocols' scaled simulators (issue 34) are equal in law to the wedge-table ones and to
the deployed protocol.

On large graphs ``two-round-triangles-dlap[-private]``, ``two-round-triangles-laplace[-private]`` and
``arr-triangles`` simulate from the graph's :class:`~ldpgraph.protocols.triangles.kernels.WedgePatterns`
(grouped binomials when nothing is projected) or from streamed wedges with one bit per closing pair
and trial (projection, clipping): :func:`~ldpgraph.protocols.triangles.kernels.simulate_two_round_scaled`,
:func:`~ldpgraph.protocols.triangles.arr_kernels.simulate_arr_scaled`. Here the protocols are forced onto
that path (``table_max_wedges = 0``) on the law tests' graph, and checked

(a) structurally: the patterns are the histogram of the wedge table's closing pairs; the streamed
    wedges are the table's wedges (several blocks); a pair's bit is the same for every wedge closing it;
(b) against the exact moments (``two_round_moments``, ``arr_moments``) where they exist (one-sample z of
    the mean and of s²/σ² at α = 1e-3, as ``tests/test_fast_simulator_laws.py``), with the can-fail check;
(c) elsewhere (ARR clipping, projected ARR) two-sample against the wedge-table simulator (itself tested
    equal in law to the deployed protocol there) and against ``run_in_memory`` of the deployed protocol.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from test_fast_simulator_laws import Z_DEMO, Z, one_sample, rejects, scaled, two_sample

from ldpgraph.core.sampling import Seeded
from ldpgraph.datasets import resolve_graph
from ldpgraph.protocols.triangles import kernels as K
from ldpgraph.protocols.triangles.arr_kernels import arr_moments, simulate_arr, simulate_arr_scaled
from ldpgraph.run import get_method, run_in_memory


@functools.lru_cache(maxsize=1)
def _graph():
    return resolve_graph("ws:n=30,k=6,p=0.2", rng=0)


def _scaled_method(name: str, **options):
    m = get_method(name)
    m = m.with_options(**options) if options else m
    m.protocol.table_max_wedges = 0  # the scaled path whatever the graph
    return m


def test_patterns_are_the_histogram_of_the_wedge_table():
    for spec in ("ws:n=30,k=6,p=0.2", "ba:n=400,m=4", "er:n=200,p=0.08"):
        g = resolve_graph(spec, rng=1)
        w = K.lower_wedges(g)
        pt = K.wedge_patterns(g)
        c = np.bincount(w.pair, minlength=w.pairs.size)
        want = sorted(zip(*np.unique(np.c_[c, w.pair_is_edge], axis=0, return_counts=True)[0].T.tolist(),
                          np.unique(np.c_[c, w.pair_is_edge], axis=0, return_counts=True)[1].tolist(),
                          strict=True))
        got = sorted(zip(pt.group_c.astype(int).tolist(), pt.group_edge.astype(int).tolist(),
                         pt.group_size.tolist(), strict=True))
        assert got == want
        assert pt.n_wedges == w.node.size and pt.triangles == float(w.pair_is_edge[w.pair].sum())
        assert np.array_equal(pt.lower_degrees, w.lower_degrees)


def test_streamed_wedges_are_the_table_and_share_each_pair_bit(monkeypatch):
    monkeypatch.setattr(K, "_STREAM_BLOCK_WEDGES", 50)
    g = resolve_graph("ba:n=300,m=4", rng=2)
    w = K.lower_wedges(g)
    pt = K.wedge_patterns(g)
    gen = np.random.default_rng(3)
    blocks = list(K.streamed_wedge_bits(g, pt, 0.7, 0.3, gen))
    assert len(blocks) > 5
    node = np.concatenate([b[2] for b in blocks])
    pj = np.concatenate([b[3] for b in blocks])
    pk = np.concatenate([b[4] for b in blocks])
    bit = np.concatenate([b[5] for b in blocks])
    assert np.array_equal(node, w.node) and np.array_equal(pj, w.pos_j) and np.array_equal(pk, w.pos_k)
    # one bit per pair: equal on every wedge closing it
    per_pair_max = np.zeros(w.pairs.size, dtype=bool)
    per_pair_min = np.ones(w.pairs.size, dtype=bool)
    np.logical_or.at(per_pair_max, w.pair, bit)
    np.logical_and.at(per_pair_min, w.pair, bit)
    assert np.array_equal(per_pair_max, per_pair_min)
    assert (w.pair_is_edge & per_pair_max).any()
    # the bits' frequencies: p on edges, q on non-edges, over trials (binomial z < Z)
    ones = np.zeros(2)
    seen = np.zeros(2)
    for _ in range(40):
        bit = np.concatenate([b[5] for b in K.streamed_wedge_bits(g, pt, 0.7, 0.3, gen)])
        first = np.unique(w.pair, return_index=True)[1]
        b, e = bit[first], w.pair_is_edge
        for i, sel in enumerate((e, ~e)):
            ones[i] += b[sel].sum()
            seen[i] += sel.sum()
    for i, p in enumerate((0.7, 0.3)):
        assert abs(ones[i] - p * seen[i]) < Z * math.sqrt(seen[i] * p * (1 - p))


# (method, options, eps, trials, seed, kernel args for the exact moments)
EXACT = [
    ("two-round-triangles-dlap", {}, 2.0, 18_500, 1, {"noise": "dlap"}),
    ("two-round-triangles-dlap", {"d_max": 3}, 1.0, 6_000, 2, {"noise": "dlap", "bound": 3}),
    ("two-round-triangles-dlap-private", {}, 2.0, 6_000, 3, {"noise": "dlap", "private": True}),
    ("two-round-triangles-laplace", {"d_max": 5}, 2.0, 6_000, 4, {"noise": "laplace", "bound": 5}),
    ("two-round-triangles-laplace-private", {}, 2.0, 6_000, 5, {"noise": "laplace", "private": True}),
    ("arr-triangles", {"clipping": False}, 2.0, 18_500, 6, None),
]


# projected: the few projected nodes' pairs one by one (the default here), or every wedge streamed
EXACT.append(("two-round-triangles-dlap", {"d_max": 3}, 1.0, 6_000, 7, {"noise": "dlap", "bound": 3,
                                                                       "stream": True}))


@pytest.mark.parametrize("case", EXACT, ids=[f"{c[0]}{c[1]}{'-stream' if (c[5] or {}).get('stream') else ''}"
                                             for c in EXACT])
def test_scaled_simulator_has_the_exact_moments(case, monkeypatch):
    name, options, eps, n, seed, kernel = case
    if (kernel or {}).get("stream"):
        monkeypatch.setattr(K, "_FEW_PROJECTED_WEDGES", -1)
    g = _graph()
    m = _scaled_method(name, **options)
    m.prepare(g)
    assert not m.protocol.uses_table(g) and m.protocol.__dict__.get("_pattern_cache")
    x = np.asarray(m.estimate_trials(g, "triangles", None, eps, n, rng=seed))
    opts = {k: v for k, v in m.public.items() if v is not None}  # the preset's options too
    plan = m.protocol.plan(eps, **{**m.protocol.default_public(g, opts), **opts})
    if kernel is None:
        mean, var = arr_moments(g, plan.release("rr_count").epsilon, plan.release("local_count").epsilon,
                                mu=plan.public["mu"])
    else:
        args = m.protocol._kernel_args(plan)
        mean, var = K.two_round_moments(g, **args)
        if args["eps0"] is None and args["bound"] >= (max(g.degrees) if kernel["noise"] == "laplace"
                                                      else max(K.lower_wedges(g).lower_degrees)):
            assert m.protocol.moments(g, plan, "triangles") == pytest.approx((mean, var), rel=1e-9)
    res = one_sample(x, mean, var)
    assert abs(res["z_mean"]) < Z and abs(res["z_var"]) < Z, res
    delta = (Z + Z_DEMO) * res["se_var"]  # the variance error seen with 99.9% power (can fail)
    assert rejects(one_sample(scaled(x, delta), mean, var))


@pytest.mark.parametrize("kw", [{"bound": 3, "mu": 0.5}, {"eps0": 0.5, "mu": 1.0, "beta": 0.3},
                                {"eps0": 0.3, "mu": 0.5}], ids=["projected", "clipping-binds", "clipping"])
def test_scaled_arr_equals_the_table_simulator(kw):
    g = _graph()
    n = 1_500
    x = simulate_arr_scaled(g, 2.0, 2.0, n, rng=11, **kw)
    y = simulate_arr(g, 2.0, 2.0, n, rng=12, **kw)
    res = two_sample(x, y)
    assert not rejects(res), res
    if "beta" in kw:  # clipping binds often here (beta 0.3): the losses agree too
        _, lx = simulate_arr_scaled(g, 2.0, 2.0, 500, rng=13, return_loss=True, **kw)
        _, ly = simulate_arr(g, 2.0, 2.0, 500, rng=14, return_loss=True, **kw)
        assert lx.mean() > 0 and abs(lx.mean() - ly.mean()) < Z * math.sqrt((lx.var() + ly.var()) / 500)


@pytest.mark.parametrize("case", [("arr-triangles", {}, 2.0, 800, 80, 15),
                                  ("two-round-triangles-dlap", {"d_max": 3}, 1.0, 3_000, 120, 16)],
                         ids=["arr-clipped", "two-round-projected"])
def test_scaled_simulator_against_the_deployed_protocol(case):
    name, options, eps, n_fast, n_ref, seed = case
    g = _graph()
    m = _scaled_method(name, **options)
    x = np.asarray(m.estimate_trials(g, "triangles", None, eps, n_fast, rng=seed))
    dep, opts = m.deployed_as
    y = np.array([run_in_memory(dep, g, eps, sampler=Seeded(1_000_000 * seed + i), statistic="triangles",
                                **opts).estimate.value for i in range(n_ref)])
    res = two_sample(x, y)
    assert not rejects(res), res
