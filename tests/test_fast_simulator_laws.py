r"""Every fast simulator of the experiments is equal in law to the reference run (issue 22, item 2).

The *fast simulator* of a method is its experiment path, ``get_method(name).estimate_trials``
(grouped binomials, a vectorised noisy graph, counts drawn from their binomial laws...). The
*reference run* is :func:`ldpgraph.run.run_in_memory` of the protocol it deploys as
(``deployed_as``), with a seeded sampler: the code a deployment runs.

Two kinds of check, at α = 1e-3 two-sided (z = 3.29) throughout:

(a) **exact moments** (the module's closed form: ``two_round_moments``, ``rr_triangle_variance``,
    ``arr_moments``, ``average_clustering_variance``, ``analytic_moments``,
    ``rr_four_cycle_variance``, the wedge-shuffle ``moments``): the fast simulator's mean within
    z σ/√N of the exact mean and its sample variance s² within z·SE of the exact σ², with the
    fourth-moment standard error :math:`\mathrm{SE}(s^2/\sigma^2) = \sqrt{(\hat\kappa - (N-3)/(N-1))/N}`
    (:math:`\hat\kappa` the sample kurtosis); and the reference run against the same moments at
    the N its cost allows.
(b) **no exact moments**: a two-sample test between the fast simulator and the reference runs:
    Welch's z on the means, Layard's test on the variances (:math:`\log(s_1^2/s_2^2)` over
    :math:`\sqrt{(\hat\kappa-1)(1/N_1 + 1/N_2)}`, κ pooled) and the two-sample
    Kolmogorov–Smirnov test.

**Can fail.** Every case also applies its test statistic to the fast simulator's own output
scaled by :math:`\sqrt{1+\delta}` around its mean (a variance error δ) and asserts that it rejects:
the power shown on the data at hand, fixed seeds. δ = 5% where the fast simulator's N sees it with
90% power (``five_percent``: two-round-dlap, rr-triangles, arr-unclipped); elsewhere δ is the variance
error that N sees with 99.9% power (so that the check does not hang on the sample's own deviation).

**Power.** The relative standard error of a sample variance is :math:`\sqrt{(\kappa-1)/N}`, so a 5%
variance error is seen at α = 1e-3 with 50% power from :math:`N = (\kappa-1)(3.29/0.05)^2
\approx 4330(\kappa-1)` trials and with 90% from :math:`(\kappa-1)(4.57/0.05)^2 \approx
8350(\kappa-1)`; with κ ≈ 3 that is 8.7k and 16.7k. A reference run costs 3–80 ms on this graph
(one Python release per node), so in the ≤ 40 s (one core) this file may take, three fast simulators
are run at 90% power for a 5% error (``five_percent``, asserted), the others and the reference runs
at the N below. "det" is the variance error seen with 90% power at α = 1e-3 (two-sample: the
variance ratio, Layard's test); measured CPU seconds on the 2-core CI machine under load:

=============================  ======  =====  ======  =====  =======  ====================
case                           fast N  det    ref N   det    CPU s    note
=============================  ======  =====  ======  =====  =======  ====================
two-round-dlap                 18500   4.9%   50      91%    3.1+1.3  grouped binomial
two-round-dlap-projected       4000    11%    50      80%    1.1+0.7  d_max 3 < 6, ε 1
two-round-dlap-private         3000    17%    30      119%   0.6+0.5  κ 4.9
rr-triangles                   20000   4.9%   15      230%   4.2+0.1
arr-unclipped                  21000   4.6%   30      112%   1.3+0.5  clipping=False
avg-clustering                 400     62%    50      156%   1.0+0.9  κ 8.4
adaptive-clustering            800     23%    30      85%    0.7+0.5
rr-four-cycles                 4000    13%    150     60%    1.0+0.5
wshuffle-triangles             500     34%    80      87%    0.4+0.3
wshuffle-four-cycles           1200    28%    120     84%    0.7+0.5
(-rr and wlocal variants)      150     46-60% 30      85-126% 0.1+0.1 same code, ε₀ ≈ ε at n 30
two-round-dlap-transitivity    1000           60      144%   0.4+1.2  two-sample, ε 8
arr-clipped                    300            50      176%   0.5+1.0  two-sample
edge-orient                    400            60      169%   0.5+1.2  two-sample
adaptive-clustering-best       40             15      336%   0.6+0.4  two-sample
two-round-four-cycles          400            60      188%   0.3+0.7  two-sample (S random)
wshuffle-triangles-ignore[-rr] 600            100     120%   0.6+1.0  two-sample, ε 20
=============================  ======  =====  ======  =====  =======  ====================

Screened once at larger N (not part of the file; seeds offset by 100–300): the reference runs of
rr-four-cycles (600 runs) against the exact moments, and edge-orient (1500), arr-clipped (600),
two-round-four-cycles (600), two-round-dlap-transitivity (600), wshuffle-triangles-ignore-rr (1500, ε 2)
against their fast simulators: no rejection. ``LDPGRAPH_LAW_POWER=full`` runs every case, fast
simulator and reference, at 90% power for a 5% variance error (hours: not for CI); run so once for
rr-four-cycles (fast 28.7k, reference 28.7k runs, 122 s; z of mean/variance: fast +0.73/+0.04,
reference -1.98/-0.11) and wshuffle-triangles (fast 23.3k, reference 21.5k runs, 81 s; fast
+0.59/-0.84, reference -1.17/-0.55): both pass, and both samples scaled by 1.05 in variance reject.

The wedge-shuffle *ignore* variants are two-sample cases: their ``moments`` are an approximation of
order 1/n (mixed over the others' degree noise), not exact. This file found that the fast simulator of
``wshuffle-triangles-ignore`` drew continuous Laplace degrees while its deployment releases DLap ones
(at ε 20, degree share 0.5: mean 14.9 against 7.4); it now simulates what it deploys.

Graph: the Watts–Strogatz graph ``ws:n=30,k=6,p=0.2`` (seed 0) of the existing law tests: 30 nodes,
90 edges, 45 triangles, maximum lower degree 6.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from scipy import stats

from ldpgraph.core.sampling import Seeded
from ldpgraph.datasets.graphs import resolve_graph
from ldpgraph.protocols.kcore import core_summary, exact_core_numbers
from ldpgraph.registry import get_method
from ldpgraph.run import run_in_memory

ALPHA = 1e-3
Z = float(stats.norm.isf(ALPHA / 2))  # 3.2905
Z_POWER = float(stats.norm.isf(0.10))  # 90% power
Z_DEMO = float(stats.norm.isf(0.001))  # the can-fail checks below the 5% target: 99.9% power
TARGET = 0.05  # the variance error the issue asks to see
FULL = os.environ.get("LDPGRAPH_LAW_POWER", "") == "full"


@dataclass(frozen=True)
class Case:
    """One fast simulator against its reference run.

    ``options``: the method's ``with_options`` (its ``deployed_as`` carries them to ``run_in_memory``);
    :data:`REFERENCE_OPTIONS` adds per-run options of the reference (a public pairing seed drawn per run
    where the fast simulator draws a fresh pairing per trial).
    """

    id: str
    method: str
    statistic: str
    epsilon: float
    n_fast: int
    n_ref: int
    exact: bool
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    #: a known difference in law (the test is xfail(strict=True) with this reason)
    xfail: str = ""
    #: the fast simulator's N sees a 5% variance error with 90% power (asserted)
    five_percent: bool = False


def _pairing_seed(i: int) -> dict[str, Any]:
    return {"pairing_seed": int(np.random.default_rng([7, i]).integers(2**31))}


#: per-run options of the reference (ignore variants: a uniform public pairing per run, as the fast
#: simulator's fresh pairing per trial)
REFERENCE_OPTIONS = {
    "wshuffle-triangles-ignore": _pairing_seed,
    "wshuffle-triangles-ignore-rr": _pairing_seed,
}

CASES = [
    # (a) exact moments
    Case("two-round-dlap", "two-round-triangles-dlap", "triangles", 2.0, 18_500, 150, True, seed=1,
         five_percent=True),
    Case("two-round-dlap-projected", "two-round-triangles-dlap", "triangles", 1.0, 18_500, 120, True,
         {"d_max": 3}, seed=2, five_percent=True),
    Case("two-round-dlap-private", "two-round-triangles-dlap-private", "triangles", 2.0, 34_000, 100, True,
         seed=3, five_percent=True),
    Case("rr-triangles", "rr-triangles", "triangles", 2.0, 21_000, 250, True, seed=4,
         five_percent=True),
    Case("arr-unclipped", "arr-triangles", "triangles", 2.0, 21_000, 150, True, {"clipping": False},
         seed=5, five_percent=True),
    Case("avg-clustering", "avg-clustering-dlap", "avg_clustering", 2.0, 600, 100, True, seed=6),
    Case("adaptive-clustering", "adaptive-clustering", "avg_clustering", 2.0, 19_000, 100, True, seed=7,
         five_percent=True),
    Case("rr-four-cycles", "rr-four-cycles", "four_cycles", 2.0, 31_000, 500, True, seed=8, five_percent=True),
    Case("wshuffle-triangles", "wshuffle-triangles", "triangles", 2.0, 25_000, 400, True, seed=9,
         five_percent=True),
    Case("wshuffle-triangles-rr", "wshuffle-triangles-rr", "triangles", 2.0, 1_000, 100, True, seed=10),
    Case("wlocal-triangles", "wlocal-triangles", "triangles", 2.0, 1_000, 100, True, seed=11),
    Case("wshuffle-four-cycles", "wshuffle-four-cycles", "four_cycles", 2.0, 33_000, 500, True, seed=12,
         five_percent=True),
    Case("wshuffle-four-cycles-rr", "wshuffle-four-cycles-rr", "four_cycles", 2.0, 1_000, 100, True, seed=13),
    Case("wlocal-four-cycles", "wlocal-four-cycles", "four_cycles", 2.0, 1_000, 200, True, seed=14),
    # (b) two-sample
    # transitivity: the triangle simulator and DLap degrees composed (the delta-method variance is not exact)
    Case("two-round-dlap-transitivity", "two-round-triangles-dlap", "transitivity", 8.0, 2_000, 150, False,
         seed=21),
    Case("arr-clipped", "arr-triangles", "triangles", 2.0, 800, 120, False, seed=15),
    Case("edge-orient", "edge-orient-triangles", "triangles", 2.0, 800, 150, False, seed=16),
    Case("adaptive-clustering-best", "adaptive-clustering-best", "avg_clustering", 2.0, 60, 25, False, seed=17),
    Case("two-round-four-cycles", "two-round-four-cycles-dlap", "four_cycles", 2.0, 1_200, 150, False, seed=18),
    # ε = 20 with half of it on the degree: the noisy degrees nearly exact, so that the dense set, and the
    # degree noise's law, decide the estimate's (at the defaults the two noises differ by < 0.1 σ)
    Case("wshuffle-triangles-ignore", "wshuffle-triangles-ignore", "triangles", 20.0, 1_500, 250, False,
         {"degree_share": 0.5}, seed=19),
    Case("wshuffle-triangles-ignore-rr", "wshuffle-triangles-ignore-rr", "triangles", 20.0, 1_500, 250, False,
         {"degree_share": 0.5}, seed=20),
]


@functools.lru_cache(maxsize=1)
def _graph() -> Any:
    return resolve_graph("ws:n=30,k=6,p=0.2", rng=0)


def _method(case: Case) -> Any:
    m = get_method(case.method)
    return m.with_options(**case.options) if case.options else m


def _full_trials(kappa: float) -> int:
    """Trials that see a 5% variance error at α = 1e-3 with 90% power (one sample)."""
    return math.ceil((kappa - 1.0) * ((Z + Z_POWER) / TARGET) ** 2)


@functools.cache
def _fast(case_id: str) -> np.ndarray:
    case = _case(case_id)
    method, g = _method(case), _graph()
    method.prepare(g)
    x = np.asarray(method.estimate_trials(g, case.statistic, None, case.epsilon, case.n_fast, rng=case.seed))
    extension = 0
    while FULL:  # two samples: each twice the one-sample count (the SE has 1/N1 + 1/N2)
        more = (1 if case.exact else 2) * _full_trials(_kurtosis(x)) - x.size
        if more <= 0:  # (the kurtosis of the grown sample decides: a small first sample underestimates it)
            break
        extension += 1
        extra = method.estimate_trials(g, case.statistic, None, case.epsilon, more + x.size // 10,
                                       rng=case.seed + 10_000 * extension)
        x = np.concatenate([x, extra])
    return x


@functools.cache
def _reference(case_id: str) -> np.ndarray:
    case = _case(case_id)
    g = _graph()
    name, opts = _method(case).deployed_as
    per_run = REFERENCE_OPTIONS.get(case.method)
    n = case.n_ref
    if FULL:
        n = max(n, (1 if case.exact else 2) * _full_trials(_kurtosis(_fast(case_id))))
    out = np.empty(n)
    for i in range(n):
        extra = per_run(i) if per_run is not None else {}
        run = run_in_memory(name, g, case.epsilon, sampler=Seeded(1_000_000 * case.seed + i),
                            statistic=case.statistic, **{**opts, **extra})
        out[i] = run.estimate.value
    return out


def _case(case_id: str) -> Case:
    return next(c for c in CASES if c.id == case_id)


def _kurtosis(x: np.ndarray) -> float:
    return float(stats.kurtosis(x, fisher=False, bias=False))


# --------------------------------------------------------------------------------- the tests' statistics


def one_sample(x: np.ndarray, mean: float, var: float) -> dict[str, float]:
    """z of the mean against the exact one, z of s²/σ² - 1 with the fourth-moment SE."""
    n = x.size
    kappa = _kurtosis(x)
    se_rel = math.sqrt(max(kappa - (n - 3) / (n - 1), 0.0) / n)
    return {"z_mean": (float(x.mean()) - mean) / math.sqrt(var / n),
            "z_var": (float(x.var(ddof=1)) / var - 1.0) / se_rel,
            "se_var": se_rel, "kappa": kappa}


def two_sample(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Welch's z (means), Layard's z (log variance ratio, kurtosis pooled), and the KS p-value."""
    vx, vy = float(x.var(ddof=1)), float(y.var(ddof=1))
    z_mean = (float(x.mean()) - float(y.mean())) / math.sqrt(vx / x.size + vy / y.size)
    dx, dy = x - x.mean(), y - y.mean()
    pooled = np.concatenate([dx, dy])
    kappa = float(np.mean(pooled**4) / np.mean(pooled**2) ** 2)
    se = math.sqrt(max(kappa - 1.0, 0.0) * (1.0 / x.size + 1.0 / y.size))
    return {"z_mean": z_mean, "z_var": math.log(vx / vy) / se, "se_var": se, "kappa": kappa,
            "p_ks": float(stats.ks_2samp(x, y).pvalue)}


def rejects(result: dict[str, float]) -> bool:
    return abs(result["z_mean"]) > Z or abs(result["z_var"]) > Z or result.get("p_ks", 1.0) < ALPHA


def scaled(x: np.ndarray, delta: float) -> np.ndarray:
    """``x`` with its variance multiplied by 1 + delta (around its mean)."""
    return x.mean() + math.sqrt(1.0 + delta) * (x - x.mean())


def min_detectable(se: float, log: bool = False) -> float:
    """The variance error seen with 90% power at α = 1e-3 by a test of (relative or log) SE ``se``."""
    return math.expm1((Z + Z_POWER) * se) if log else (Z + Z_POWER) * se


def demo_delta(se: float, log: bool = False) -> float:
    """The variance error a can-fail check applies: 5% where the trials see it with 90% power, else
    the error seen with 99.9% power (so that the check does not hang on the sample's own deviation)."""
    if min_detectable(se, log) <= TARGET:
        return TARGET
    return math.expm1((Z + Z_DEMO) * se) if log else (Z + Z_DEMO) * se


def _exact(case: Case) -> tuple[float, float]:
    m, g = _method(case), _graph()
    mean = m.analytic_mean(g, case.statistic, None, case.epsilon)
    var = m.analytic_variance(g, case.statistic, None, case.epsilon)
    assert mean is not None and var is not None, f"{case.id}: no exact moments"
    return float(mean), float(var)


def _params(exact: bool) -> list[Any]:
    return [pytest.param(c.id, marks=pytest.mark.xfail(strict=True, reason=c.xfail)) if c.xfail else c.id
            for c in CASES if c.exact == exact]


EXACT = _params(True)
TWO_SAMPLE = _params(False)


def _describe(case: Case, which: str, x: np.ndarray, res: dict[str, float]) -> str:
    return (f"{case.id} ({case.method}, {case.statistic}, eps {case.epsilon}, {case.options or 'defaults'}): "
            f"{which} N={x.size}, z_mean={res['z_mean']:.2f}, z_var={res['z_var']:.2f}, kappa={res['kappa']:.2f}, "
            f"p_ks={res.get('p_ks', float('nan')):.2g}; min detectable variance error "
            f"{min_detectable(res['se_var'], 'p_ks' in res):.1%}; seed {case.seed}")


@pytest.mark.parametrize("case_id", EXACT)
def test_fast_simulator_has_the_exact_moments(case_id):
    case = _case(case_id)
    mean, var = _exact(case)
    x = _fast(case_id)
    res = one_sample(x, mean, var)
    assert not rejects(res), _describe(case, "fast", x, res)
    if case.five_percent:
        assert min_detectable(res["se_var"]) <= TARGET, _describe(case, "fast (power below 5%)", x, res)
    # can fail: a 5% variance error (or the smallest this N sees) is rejected on the same data
    delta = demo_delta(res["se_var"])
    assert rejects(one_sample(scaled(x, delta), mean, var)), _describe(case, f"fast x(1+{delta:.3f})", x, res)


@pytest.mark.parametrize("case_id", EXACT)
def test_reference_run_has_the_exact_moments(case_id):
    case = _case(case_id)
    mean, var = _exact(case)
    y = _reference(case_id)
    res = one_sample(y, mean, var)
    assert not rejects(res), _describe(case, "reference", y, res)


@pytest.mark.parametrize("case_id", TWO_SAMPLE)
def test_fast_simulator_and_reference_run_agree(case_id):
    case = _case(case_id)
    x, y = _fast(case_id), _reference(case_id)
    res = two_sample(x, y)
    assert not rejects(res), _describe(case, "fast vs reference", x, res)
    delta = demo_delta(res["se_var"], log=True)
    assert rejects(two_sample(scaled(x, delta), y)), _describe(case, f"fast x(1+{delta:.3f}) vs reference", x, res)


# ------------------------------------------------------------------------- kcore-svt: a vector statistic
#
# The fast path of ``kcore-svt`` (``KCoreMethod.estimate_trials``: :func:`~ldpgraph.protocols.kcore.svt_kcore`,
# vectorised over the nodes of a step, one generator for the whole run) against the layer's run
# (``run_in_memory("kcore-svt")``: per-node streams, the secret threshold noise, the repeating round).
# The statistic is the vector of final levels (the core estimates are a function of it). No exact law of
# the whole run (the counts depend on the neighbours' moves): two samples, compared on
#   - each node's mean level: Welch's z per node, Bonferroni over the nodes (|z| > z_{α/2n});
#   - the mean approximation factor (what ``estimate_trials`` returns): Welch, Layard, KS;
#   - the sum of the levels and the number of steps run: Welch, Layard (both discrete).
# Can fail: the same tests reject the fast path run with the wrong split of the budget (rho_share 0.65
# for 0.5) and the approximation factors scaled in variance (``demo_delta``).
#
# kcore-svt-degree and kcore-svt-gate have no layer protocol (simulation only: ``not_deployable``), so
# no reference run to test against; kcore-reference likewise.

#: K5 (core 4), a triangle hung off it (core 2), a path (core 1): three core numbers, nodes that stop at
#: different steps, thresholds [1, 2, 3, 4, 5, 6] up to d_max 5 (psi 0.25), 12 steps at most
KCORE_EDGES = [(i, j) for i in range(5) for j in range(i + 1, 5)] + [(0, 5), (5, 6), (6, 7), (7, 5), (7, 8),
                                                                      (8, 9)]


KCORE_CASES = [
    Case("kcore-svt", "kcore-svt", "core_numbers", 2.0, 2_500, 400, False, seed=31),
    # every option through ``with_options`` / ``deployed_as``: a d_max above the true 5, one level per group
    Case("kcore-svt-options", "kcore-svt", "core_numbers", 1.0, 1_500, 200, False,
         {"psi": 0.5, "levels_per_group": 1, "rho_share": 0.3, "d_max": 7}, seed=32),
]
#: the budget split of each case's can-fail fast path (a wrong law)
WRONG_RHO_SHARE = {"kcore-svt": 0.6, "kcore-svt-options": 0.5}


def _kcore_case(case_id: str) -> Case:
    return next(c for c in KCORE_CASES if c.id == case_id)


@functools.lru_cache(maxsize=1)
def _kcore_graph() -> Any:
    from ldpgraph.graph import from_edge_array

    return from_edge_array(np.array(KCORE_EDGES, dtype=np.int64))


def _kcore_method(case: Case, **override: Any) -> Any:
    opts = {**case.options, **override}
    m = get_method("kcore-svt")
    return m.with_options(**opts) if opts else m


@functools.cache
def _kcore_fast(case_id: str, rho_share: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fast path's levels (trials x nodes), steps run and mean approximation factors."""
    case, g = _kcore_case(case_id), _kcore_graph()
    method = _kcore_method(case, **({} if rho_share is None else {"rho_share": rho_share}))
    n = case.n_fast if rho_share is None else case.n_fast // 3  # the wrong law: a third is plenty
    if FULL:
        n = max(n, 2 * _full_trials(3.0))
    gen = np.random.default_rng(case.seed)
    runs = [method.run(g, case.epsilon, gen) for _ in range(n)]  # what estimate_trials runs, trial by trial
    truth = exact_core_numbers(g)
    factors = np.array([core_summary(r.core_numbers, truth)["mean_approximation_factor"] for r in runs])
    # the levels are estimate_trials's: the same generator gives the same trials
    head = method.estimate_trials(g, "core_numbers", None, case.epsilon, 20, rng=case.seed)
    assert np.array_equal(head, factors[:20])
    return np.array([r.levels for r in runs]), np.array([r.rounds for r in runs]), factors


@functools.cache
def _kcore_reference(case_id: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    case, g = _kcore_case(case_id), _kcore_graph()
    name, opts = _kcore_method(case).deployed_as
    n = case.n_ref
    if FULL:
        n = max(n, 2 * _full_trials(3.0))
    truth = exact_core_numbers(g)
    levels, steps, factors = np.empty((n, g.n_nodes), dtype=np.int64), np.empty(n), np.empty(n)
    for i in range(n):
        run = run_in_memory(name, g, case.epsilon, sampler=Seeded(1_000_000 * case.seed + i),
                            statistic="core_numbers", **opts)
        levels[i], steps[i] = run.estimate.levels, run.n_rounds
        factors[i] = run.estimate.summary(truth)["mean_approximation_factor"]
    return levels, steps, factors


def kcore_tests(fast: tuple[np.ndarray, ...], ref: tuple[np.ndarray, ...]) -> dict[str, Any]:
    """The statistics above: per-node level z (max |z| and its Bonferroni bound), and the two-sample tests of
    the approximation factor, the level sum and the steps."""
    (lx, sx, fx), (ly, sy, fy) = fast, ref
    vx, vy = lx.var(axis=0, ddof=1), ly.var(axis=0, ddof=1)
    se = np.sqrt(vx / lx.shape[0] + vy / ly.shape[0])
    z_node = np.divide(lx.mean(axis=0) - ly.mean(axis=0), se, out=np.zeros(se.size), where=se > 0)
    return {"z_node": z_node, "z_node_bound": float(stats.norm.isf(ALPHA / (2 * z_node.size))),
            "factor": two_sample(fx, fy),
            "level_sum": {k: v for k, v in two_sample(lx.sum(axis=1).astype(float), ly.sum(axis=1).astype(float))
                          .items() if k != "p_ks"},
            "steps": {k: v for k, v in two_sample(sx.astype(float), sy.astype(float)).items() if k != "p_ks"}}


def kcore_rejects(res: dict[str, Any]) -> bool:
    return (bool(np.abs(res["z_node"]).max() > res["z_node_bound"]) or rejects(res["factor"])
            or rejects(res["level_sum"]) or rejects(res["steps"]))


def _kcore_describe(case: Case, which: str, res: dict[str, Any]) -> str:
    f = res["factor"]
    return (f"{case.id} (eps {case.epsilon}, {case.options or 'defaults'}) {which}: per-node z "
            f"{np.round(res['z_node'], 2).tolist()} (bound {res['z_node_bound']:.2f}); factor z_mean={f['z_mean']:.2f} "
            f"z_var={f['z_var']:.2f} p_ks={f['p_ks']:.2g}; level sum z=({res['level_sum']['z_mean']:.2f}, "
            f"{res['level_sum']['z_var']:.2f}); steps z=({res['steps']['z_mean']:.2f}, {res['steps']['z_var']:.2f}); "
            f"seed {case.seed}")


@pytest.mark.parametrize("case_id", [c.id for c in KCORE_CASES])
def test_kcore_fast_path_and_layer_run_agree(case_id):
    case = _kcore_case(case_id)
    fast, ref = _kcore_fast(case_id), _kcore_reference(case_id)
    res = kcore_tests(fast, ref)
    assert not kcore_rejects(res), _kcore_describe(case, "fast vs reference", res)
    # can fail: the fast path at the wrong budget split, and the factors scaled in variance, are rejected
    share = WRONG_RHO_SHARE[case_id]
    wrong = kcore_tests(_kcore_fast(case_id, share), ref)
    assert kcore_rejects(wrong), _kcore_describe(case, f"fast at rho_share {share} vs reference", wrong)
    delta = demo_delta(res["factor"]["se_var"], log=True)
    assert rejects(two_sample(scaled(fast[2], delta), ref[2])), _kcore_describe(case, f"factor x(1+{delta:.3f})",
                                                                                res)


if __name__ == "__main__":  # the power table: python tests/test_fast_simulator_laws.py
    import time

    for case in CASES:
        t0 = time.process_time()
        x = _fast(case.id)
        t1 = time.process_time()
        y = _reference(case.id)
        t2 = time.process_time()
        if case.exact:
            mean, var = _exact(case)
            fx, ry = one_sample(x, mean, var), one_sample(y, mean, var)
            print(f"{case.id:30s} exact  fast N={x.size:6d} det {min_detectable(fx['se_var']):6.1%} "
                  f"k={fx['kappa']:5.2f} z=({fx['z_mean']:+.2f},{fx['z_var']:+.2f}) {t1 - t0:5.2f}s | "
                  f"ref N={y.size:5d} det {min_detectable(ry['se_var']):6.1%} "
                  f"z=({ry['z_mean']:+.2f},{ry['z_var']:+.2f}) {t2 - t1:5.2f}s", flush=True)
        else:
            r = two_sample(x, y)
            print(f"{case.id:30s} 2-smp  fast N={x.size:6d} ref N={y.size:5d} "
                  f"det {min_detectable(r['se_var'], True):6.1%} "
                  f"k={r['kappa']:5.2f} z=({r['z_mean']:+.2f},{r['z_var']:+.2f}) p_ks={r['p_ks']:.3g} "
                  f"{t1 - t0:5.2f}s + {t2 - t1:5.2f}s", flush=True)
    for case in KCORE_CASES:
        t0 = time.process_time()
        fast = _kcore_fast(case.id)
        t1 = time.process_time()
        ref = _kcore_reference(case.id)
        t2 = time.process_time()
        r = kcore_tests(fast, ref)
        print(f"{case.id:30s} 2-smp  fast N={fast[2].size:6d} ref N={ref[2].size:5d} "
              f"det {min_detectable(r['factor']['se_var'], True):6.1%} (factor) max|z| node "
              f"{np.abs(r['z_node']).max():.2f} {t1 - t0:5.2f}s + {t2 - t1:5.2f}s", flush=True)
