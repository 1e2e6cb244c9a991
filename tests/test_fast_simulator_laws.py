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
90% power (``five_percent``, asserted: the thirteen rows of 4.6–4.9% below); elsewhere δ is the variance
error that N sees with 99.9% power (so that the check does not hang on the sample's own deviation).

**Power.** The relative standard error of a sample variance is :math:`\sqrt{(\kappa-1)/N}`, so a 5%
variance error is seen at α = 1e-3 with 50% power from :math:`N = (\kappa-1)(3.29/0.05)^2
\approx 4330(\kappa-1)` trials and with 90% from :math:`(\kappa-1)(4.57/0.05)^2 \approx
8350(\kappa-1)`; with κ ≈ 3 that is 8.7k and 16.7k (a two-sample test needs twice that in each
sample). A reference run costs 0.6–7 ms on this graph (one Python release per node and round: a
node's seeded stream alone is ~13 µs; the per-round executor and curator work is ~0.4 ms), so
at 5% a reference sample costs 15–250 s: not for CI. In the ≤ 60 s (one core, the CI machine)
this file may take, the fast simulators of thirteen exact cases (all but avg-clustering) run at 90% power for a 5%
error, the others and the reference runs at the N below (adaptive-clustering and rr-four-cycles at 18.5k and
31k trials add ~3.5 s here: the suite, ~3 min on 2 cores, has the room). "det" is the variance error seen with 90% power at α = 1e-3 (two-sample: the variance
ratio, Layard's test; kcore: of the mean approximation factor); CPU seconds (fast + reference) measured on a 2-core machine shared with other jobs
(the whole file: 18.6 s there, where the previous version of this file took 10.0 s, measured
back to back; it was ~31 s on the CI machine):

=============================  ======  =====  ======  =====  =========  ========================
case                           fast N  det    ref N   det    CPU s      note
=============================  ======  =====  ======  =====  =========  ========================
two-round-dlap                 18500   4.9%   100     65%    0.9+0.4    grouped binomial
two-round-dlap-projected       18500   4.8%   120     54%    1.3+0.3    d_max 3 < 6, ε 1
two-round-dlap-private         34000   4.9%   100     96%    1.4+0.2    κ 5.0
rr-triangles                   21000   4.8%   250     50%    1.1+0.2
arr-unclipped                  21000   4.6%   150     63%    0.4+0.3    clipping=False
wshuffle-triangles             25000   4.6%   300     45%    1.2+0.3
wshuffle-four-cycles           33000   4.8%   300     49%    1.1+0.2    κ 4.6
adaptive-clustering            18500   4.9%   100     68%    3.0+0.7    κ 3.1
rr-four-cycles                 31000   4.9%   300     39%    2.1+0.3    κ 4.6
avg-clustering                 600     53%    100     115%   0.4+0.3    κ 9; 1 ms a trial
wshuffle-triangles-rr          25000   4.6%   100     56%    1.5+0.4    same code as wshuffle-*,
wlocal-triangles               25000   4.6%   100     90%    1.2+0.1    ε₀ ≈ ε at n 30
wshuffle-four-cycles-rr        33000   4.6%   100     69%    1.1+0.1
wlocal-four-cycles             33000   4.6%   200     47%    1.1+0.1
two-round-dlap-transitivity    2000           100     100%   0.1+0.3    two-sample, ε 8
arr-clipped                    500            80      121%   0.2+0.2    two-sample
edge-orient                    500            100     104%   0.2+0.3    two-sample
edge-orient-transitivity       500            100     (new)  0.2+0.3    two-sample, ε 8
adaptive-clustering-best       50             20      269%   0.2+0.1    two-sample, 5 ms a trial
two-round-four-cycles          1000           120     98%    0.2+0.2    two-sample (S random)
wshuffle-triangles-ignore[-rr] 800            150     112-6% 0.1+0.2    two-sample, ε 20
=============================  ======  =====  ======  =====  =========  ========================

``LDPGRAPH_LAW_POWER=full`` runs every case, fast simulator and reference, at 90% power for a 5%
variance error, each sample grown until its own kurtosis says so (hours: not for CI). Run so once
(2026-12-02, this graph and these seeds; N, and z of the mean and of the variance; "det" the
variance error seen with 90% power): every case passes, and every sample scaled by 1.05 in
variance is rejected where det ≤ 5%, but two: avg-clustering's fast sample, whose own variance sits
1.72 SE low (scaled by 1.05 it reaches z 3.1; by 1.06, 4.1), and kcore-svt-options (a protocol
removed since, issue 33) -- the 10% that 90% power misses:

=============================  ==============================  ==============================
case                           fast: N, det, z                 reference: N, det, z
=============================  ==============================  ==============================
two-round-dlap                 18500, 4.9%, -1.06 / -0.23      17916, 5.0%, -1.41 / +0.00
two-round-dlap-projected       17866, 5.0%, -0.48 / -0.66      17796, 4.9%, +0.28 / +1.22
two-round-dlap-private         32934, 5.1%, +0.64 / +0.33      33734, 4.9%, +1.50 / -0.40
rr-triangles                   20000, 4.9%, +1.46 / +1.17      19507, 4.8%, -0.15 / +1.03
arr-unclipped                  21000, 4.6%, +0.42 / -0.69      17978, 5.1%, +0.53 / +0.26
avg-clustering                 82467, 4.7%, +0.34 / -1.72      75904, 4.9%, +0.44 / +1.03
adaptive-clustering            16996, 5.1%, +0.63 / -1.30      17722, 5.0%, +1.73 / +0.35
rr-four-cycles                 28.7k (earlier), +0.73 / +0.04  28.7k (earlier), -1.98 / -0.11
wshuffle-triangles             23.3k (earlier), +0.59 / -0.84  21.5k (earlier), -1.17 / -0.55
wshuffle-triangles-rr          21788, 4.9%, -0.70 / -1.10      20729, 5.0%, -0.28 / -0.42
wlocal-triangles               22903, 4.9%, +0.39 / +0.36      21684, 5.1%, -0.51 / -1.40
wshuffle-four-cycles           37964, 4.4%, -0.37 / -1.06      29354, 5.0%, -0.77 / +0.20
wshuffle-four-cycles-rr        31596, 4.8%, -1.04 / +0.14      29429, 5.1%, -2.77 / -0.06
wlocal-four-cycles             30871, 4.8%, +1.19 / -0.64      27827, 4.9%, +0.34 / -0.36
=============================  ==============================  ==============================

Two-sample (fast N / reference N, det, z of the means (Welch) / of the variances (Layard), KS p;
det 4.8–5.4%: the reference N was set from the fast sample's kurtosis, not the pooled one):
two-round-dlap-transitivity 35204 / 38938, 5.2%, +2.33 / -0.59, 0.029; arr-clipped 35690 / 35446,
5.2%, +1.94 / -0.73, 0.13; edge-orient 32940 / 37840, 5.4%, +0.34 / -0.26, 1.0;
two-round-four-cycles 46886 / 37836, 4.8%, -0.68 / -0.33, 0.71; wshuffle-triangles-ignore
53534 / 61722, 5.3%, +0.81 / +0.67, 0.39; wshuffle-triangles-ignore-rr 57300 / 60730, 5.2%,
-0.22 / -0.03, 0.16; adaptive-clustering-best 21390 / 24408, 5.3%, +2.03 / +1.06, 0.022.
(The ignore variants at ε 2 were screened earlier, 1500 runs: no rejection.)

The wedge-shuffle *ignore* variants are two-sample cases: their ``moments`` are an approximation of
order 1/n (mixed over the others' degree noise), not exact. This file found that the fast simulator of
``wshuffle-triangles-ignore`` drew continuous Laplace degrees while its deployment releases DLap ones
(at ε 20, degree share 0.5: mean 14.9 against 7.4); it now simulates what it deploys.

Graph: the Watts–Strogatz graph ``ws:n=30,k=6,p=0.2`` (seed 0) of the existing law tests: 30 nodes,
90 edges, 45 triangles, maximum lower degree 6. (A smaller graph saves little: at n 10 a reference
run still costs half of its n-30 cost, the per-round work of the executor and the curator.)

The k-core methods: ``kcore-reference`` is simulated only (no reference run to compare with);
``kcore-hindex``'s law is tested in ``tests/protocols/test_kcore_hindex_law.py``.
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
from ldpgraph.run import run_in_memory
from ldpgraph.run.method import get_method

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
    Case("two-round-dlap", "two-round-triangles-dlap", "triangles", 2.0, 18_500, 100, True, seed=1,
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
    Case("adaptive-clustering", "adaptive-clustering", "avg_clustering", 2.0, 18_500, 100, True, seed=7,
         five_percent=True),
    Case("rr-four-cycles", "rr-four-cycles", "four_cycles", 2.0, 31_000, 300, True, seed=8,
         five_percent=True),
    Case("wshuffle-triangles", "wshuffle-triangles", "triangles", 2.0, 25_000, 300, True, seed=9,
         five_percent=True),
    Case("wshuffle-triangles-rr", "wshuffle-triangles-rr", "triangles", 2.0, 25_000, 100, True, seed=10,
         five_percent=True),
    Case("wlocal-triangles", "wlocal-triangles", "triangles", 2.0, 25_000, 100, True, seed=11,
         five_percent=True),
    Case("wshuffle-four-cycles", "wshuffle-four-cycles", "four_cycles", 2.0, 33_000, 300, True, seed=12,
         five_percent=True),
    Case("wshuffle-four-cycles-rr", "wshuffle-four-cycles-rr", "four_cycles", 2.0, 33_000, 100, True, seed=13,
         five_percent=True),
    Case("wlocal-four-cycles", "wlocal-four-cycles", "four_cycles", 2.0, 33_000, 200, True, seed=14,
         five_percent=True),
    # (b) two-sample
    # transitivity: the triangle simulator and DLap degrees composed (the delta-method variance is not exact)
    Case("two-round-dlap-transitivity", "two-round-triangles-dlap", "transitivity", 8.0, 2_000, 100, False,
         seed=21),
    Case("arr-clipped", "arr-triangles", "triangles", 2.0, 500, 80, False, seed=15),
    Case("edge-orient", "edge-orient-triangles", "triangles", 2.0, 500, 100, False, seed=16),
    # transitivity: the degree_share the statistic implies, its degrees released in round 2
    Case("edge-orient-transitivity", "edge-orient-triangles", "transitivity", 8.0, 500, 100, False, seed=33),
    Case("adaptive-clustering-best", "adaptive-clustering-best", "avg_clustering", 2.0, 50, 20, False, seed=17),
    Case("two-round-four-cycles", "two-round-four-cycles-dlap", "four_cycles", 2.0, 1_000, 120, False, seed=18),
    # ε = 20 with half of it on the degree: the noisy degrees nearly exact, so that the dense set, and the
    # degree noise's law, decide the estimate's (at the defaults the two noises differ by < 0.1 σ)
    Case("wshuffle-triangles-ignore", "wshuffle-triangles-ignore", "triangles", 20.0, 800, 150, False,
         {"degree_share": 0.5}, seed=19),
    Case("wshuffle-triangles-ignore-rr", "wshuffle-triangles-ignore-rr", "triangles", 20.0, 800, 150, False,
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
