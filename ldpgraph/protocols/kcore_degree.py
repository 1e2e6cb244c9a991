r"""``kcore-svt-degree``: the sparse-vector level structure capped and read through a noisy degree.

Where :func:`~ldpgraph.protocols.kcore.svt_kcore` loses to the published k-CoreD (run as its Go
code runs, ``scripts/bench_kcore_edge_orient.py --reference``): at per-node ε ≤ 1 the threshold
noise :math:`\rho_v` of the sparse vector technique is an additive error of scale 1/ε_ρ on
every node's stopping level, and the peeling cascades it (a neighbour that stops early lowers
the counts of the others). k-CoreD's levels, behind its bias term, are a function of the noisy
degree only; a core number is at most the degree, and a noisy degree is one release of
sensitivity 1. This method spends most of the budget there and keeps the level structure to
pull down the nodes whose core number is far below their degree (hubs of stars):

1. every node releases :math:`\tilde d_v = d_v + \mathrm{DLap}(e^{-\varepsilon_d})`,
   ε_d = ``degree_share`` · ε (default 0.7);
2. the level structure of ``svt`` at ε_s = ε - ε_d (halves on ρ and ν) with a *lenient*
   test :math:`U_v(r) + \nu + B \ge k_g + \rho_v`, :math:`B = \lfloor b/\varepsilon_\nu\rfloor`
   (b = ``slack``, default 1: a failure by noise alone needs ν - ρ below -B), and a node stops
   for good as soon as the next threshold exceeds its noisy degree, :math:`k_g > \tilde d_v`
   (so a leaf does not climb and lift its hub);
3. the estimate is the geometric middle :math:`\sqrt{lo \cdot hi}` of an interval for the
   core number: :math:`hi = \min(\max(\tilde d_v, 1) + c_{hi}/\varepsilon_d,\; k_g - 1 + B)` (the
   degree bound, the noisy degree first clipped to the degree >= 1 of every node of core >= 1;
   the group where the node failed, by at most the slack), and
   :math:`lo = \max(1, \min(\tilde d_v - c_{lo}/\varepsilon_d, hi))`, with
   :math:`c_{lo} = \ln n` (with probability about :math:`1 - e^{-1}` *every* noisy degree is
   above d - c_lo/ε_d: an approximation factor is a ratio, and the geometric middle is the
   estimate of least worst-case ratio in an interval) and :math:`c_{hi}` = 2 (most nodes have
   small core numbers: the interval is not widened upward by a union bound). ``c_lo`` sets
   the lower constant instead of ln n; ``c_lo = inf`` drops the degree from the lower end
   (lo = 1, the estimate :math:`\sqrt{hi}`): a hub whose level bound hi is loose is then
   read at :math:`\sqrt{hi}`, not at hi, at the price of the nodes whose core number is
   close to their degree (issue 25: on Email-Enron its max factor is far below the
   reference's, its mean above; on Facebook both are above).

4. optional (``gate_share`` > 0, one more round; issue 25): the *neighbour gate*. Step 3 read
   as is trusts the noisy degree as the lower end of a hub's interval whenever the level part
   did not pull hi down (at small ε the slack B lets a hub climb). The curator broadcasts
   every node's step-3 estimate :math:`x_w = \sqrt{lo_w hi_w}` and a threshold
   :math:`\theta_v = \max(1, \lfloor lo_v/\tau\rfloor)`; node v releases
   :math:`\tilde c_v = \#\{w \in N(v): x_w \ge \theta_v\} + \mathrm{DLap}(e^{-\varepsilon_g})`
   (:func:`gate_node_release`; sensitivity 1: the public values are fixed, one neighbour more
   or less moves the count by at most 1), and the curator lowers the lower end,
   :math:`lo_v \leftarrow \max(1, \min(lo_v, \tau \max(\tilde c_v - m/\varepsilon_g, 0)))`
   (:func:`gate_lower_end`). Why: :math:`k(v) \le \#\{w \in N(v): k(w) \ge k(v)\}` (v has
   k(v) neighbours in the k(v)-core; :func:`gate_counts` checks it), so a node whose lo is
   right has about lo neighbours of estimate >= lo/τ, while a hub of core 2 whose lo came from
   its degree has few. The gate only lowers lo (never below 1, never hi): a wrong firing
   costs at most the step-3 estimate with lo = 1, :math:`\sqrt{hi}`. ``floor``: the estimate
   is at least ``floor`` (post-processing; it bounds the factor of a core number k whose noisy
   degree fell far below it at k/floor).

Privacy (ε = ε_d + ε_ρ + ε_ν (+ ε_g) per node, whatever the rounds). The node's transcript is
:math:`(\tilde d_v, m)`: the noisy degree, then m moves of the sparse vector run (stopped by a
failure, by the cap, or by the end). Its probability factors as
:math:`P[\tilde d_v]\, P[m \mid \tilde d_v]`; the first changes by at most :math:`e^{\varepsilon_d}`
under one neighbour (sensitivity 1). Given :math:`\tilde d_v` the cap is a fixed round, and
the run is the AboveThreshold run of :mod:`ldpgraph.protocols.kcore` (public thresholds
:math:`k_g - B`, monotone queries of sensitivity 1) stopped at a fixed round: a transcript
"m moves, then stopped by the cap" is the event "m moves" of the full run, whose probability
changes by at most :math:`e^{\varepsilon_\rho}` (shift ρ by one), and "m moves then a
failure" by at most :math:`e^{\varepsilon_\rho + \varepsilon_\nu}` (the proof there). The
estimate is post-processing. The gate's count is one more release of sensitivity 1 given the
public values (functions of the broadcasts so far), so it adds ε_g (sequential composition).
:func:`degree_svt_node_release` and :func:`gate_node_release` are audited in the tests.

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> run = degree_svt_kcore(g, 400.0, rng=0)
>>> run.levels.tolist(), run.core_numbers.round(2).tolist()
([2, 2, 2, 1], [2.0, 2.0, 2.0, 1.0])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from .kcore import KCoreRun, _csr, _dlap, same_level_counts, svt_rounds, svt_thresholds

__all__ = ["degree_svt_budget", "degree_svt_kcore", "degree_svt_node_release", "degree_svt_interval",
           "gate_counts", "gate_node_release", "gate_lower_end", "GATE_MAX_FIRST"]

#: the neighbour gate's max-first setting (method ``kcore-svt-gate``): the lowest maximum factor
#: found against the reference (README, ``scripts/bench_kcore_edge_orient.py``)
GATE_MAX_FIRST = {"degree_share": 0.65, "gate_share": 0.2, "c_hi": 1.5, "floor": 2.0}


def degree_svt_budget(epsilon: float, degree_share: float = 0.7, gate_share: float = 0.0) -> dict[str, float]:
    """Per-node ε of the noisy degree, the threshold noise ρ, the query noise ν (and the gate).

    The sparse vector part gets ε (1 - degree_share - gate_share), halved between ρ and ν.

    >>> degree_svt_budget(1.0)
    {'degree': 0.7, 'svt-threshold': 0.15, 'svt-levels': 0.15}
    >>> degree_svt_budget(1.0, 0.65, 0.2)
    {'degree': 0.65, 'svt-threshold': 0.075, 'svt-levels': 0.075, 'gate': 0.2}
    """
    eps = check_epsilon(epsilon)
    if not 0 < degree_share < 1:
        raise ValueError(f"degree_share must be in (0, 1), got {degree_share!r}")
    if not 0 <= gate_share < 1 - degree_share:
        raise ValueError(f"gate_share must be in [0, 1 - degree_share) = [0, {1 - degree_share:g}), got "
                         f"{gate_share!r}")
    rest = eps - eps * degree_share - eps * gate_share
    out = {"degree": round(eps * degree_share, 15), "svt-threshold": round(rest / 2, 15),
           "svt-levels": round(rest / 2, 15)}
    if gate_share > 0:
        out["gate"] = round(eps * gate_share, 15)
    return out


def gate_counts(graph: Any, values: ArrayLike, thresholds: ArrayLike) -> NDArray[np.int64]:
    r""":math:`c_v = \#\{w \in N(v): x_w \ge \theta_v\}` for every node (before the noise).

    With the exact core numbers as both x and θ, :math:`c_v \ge k(v)` (the property the gate
    rests on).

    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> gate_counts(g, [2, 2, 2, 1], [2, 2, 2, 1]).tolist()
    [2, 2, 2, 1]
    """
    src, dst = _csr(graph)
    x = np.asarray(values, dtype=np.float64)
    theta = np.asarray(thresholds, dtype=np.float64)
    n = graph.n_nodes
    if x.shape != (n,) or theta.shape != (n,):
        raise ValueError(f"values and thresholds need one entry per node ({n}), got {x.shape} and "
                         f"{theta.shape}")
    return np.bincount(src[x[dst] >= theta[src]], minlength=n).astype(np.int64)


def gate_node_release(neighbour_values: ArrayLike, threshold: float, epsilon: float, *, size: int = 1,
                      rng: Any = None) -> NDArray[np.int64]:
    r"""One node's gate release, ``size`` times: :math:`\#\{x_w \ge \theta\} + \mathrm{DLap}`.

    The noise is :math:`\mathrm{DLap}(e^{-\varepsilon})`. ``neighbour_values``: the public
    estimates :math:`x_w` of its neighbours; ``threshold``: its public θ_v. One neighbour more or
    less moves the count by at most one.

    >>> gate_node_release([5.0, 1.0, 3.0], 3, 500.0, size=2, rng=0).tolist()
    [2, 2]
    """
    eps = check_epsilon(epsilon)
    count = int(np.count_nonzero(np.asarray(neighbour_values, dtype=np.float64) >= float(threshold)))
    return count + _dlap(check_rng(rng), eps, check_nonnegative_int(size, "size", minimum=1))


def gate_lower_end(lo: ArrayLike, noisy_counts: ArrayLike, eps_gate: float, tau: float = 1.5,
                   margin: float = 0.0) -> NDArray[np.float64]:
    r"""The gated lower end :math:`\max(1, \min(lo, \tau \max(\tilde c - m/\varepsilon_g, 0)))`.

    >>> gate_lower_end([30.0, 30.0, 4.0], [25, 3, 0], 1.0).tolist()  # tau 1.5: 37.5, 4.5, 0
    [30.0, 4.5, 1.0]
    """
    if not tau >= 1:
        raise ValueError(f"tau must be >= 1, got {tau!r}")
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, got {margin!r}")
    c = np.asarray(noisy_counts, dtype=np.float64) - margin / check_epsilon(eps_gate)
    return np.maximum(np.minimum(np.asarray(lo, dtype=np.float64), tau * np.maximum(c, 0.0)), 1.0)


def _slack(eps_nu: float, slack: float) -> int:
    if not slack >= 0:
        raise ValueError(f"slack must be >= 0, got {slack!r}")
    return int(math.floor(slack / eps_nu))


def degree_svt_interval(levels: ArrayLike, noisy_degree: ArrayLike, thresholds: NDArray[np.int64],
                        levels_per_group: int, eps_degree: float, bias: int, n: int,
                        c_hi: float = 2.0, c_lo: float | None = None
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""(lo, hi) of step 3 of the module docstring; the estimate is :math:`\sqrt{lo \cdot hi}`.

    :math:`lo = \max(1, \min(\tilde d_v - c_{lo}/\varepsilon_d, hi))`, ``c_lo`` = ln n by
    default; ``c_lo = inf`` gives lo = 1.

    >>> ks = svt_thresholds(0.5, 100)
    >>> lo, hi = degree_svt_interval([3], [40], ks, 1, 1.0, 0, 100)  # failed in group 3 (k = 4)
    >>> float(lo[0]), float(hi[0])
    (3.0, 3.0)
    >>> lo, hi = degree_svt_interval([3], [40], ks, 1, 1.0, 0, 100, c_lo=math.inf)
    >>> float(lo[0]), float(hi[0])
    (1.0, 3.0)
    """
    lv = np.asarray(levels, dtype=np.int64)
    dt = np.asarray(noisy_degree, dtype=np.float64)
    g = np.minimum(lv // int(levels_per_group), len(thresholds) - 1)
    hi = np.minimum(np.maximum(dt, 1.0) + c_hi / eps_degree, thresholds[g] - 1.0 + bias)
    hi = np.maximum(hi, 1.0)
    c = math.log(max(n, 2)) if c_lo is None else float(c_lo)
    if not c >= 0:
        raise ValueError(f"c_lo must be >= 0 (or inf), got {c_lo!r}")
    lo = np.maximum(np.minimum(dt - c / eps_degree, hi), 1.0) if math.isfinite(c) else np.ones_like(hi)
    return lo, hi


def degree_svt_node_release(degree: int, counts: ArrayLike, thresholds: ArrayLike, epsilon: float, *,
                            degree_share: float = 0.7, slack: float = 1.0, size: int = 1,
                            rng: Any = None) -> NDArray[np.int64]:
    r"""One node's whole transcript, ``size`` times, as rows :math:`(\tilde d_v, m)`.

    ``counts[i]``: :math:`U_v` at its i-th level; ``thresholds[i]``: the threshold there. The
    node moves while :math:`k_i \le \tilde d_v` and :math:`U_i + \nu + B \ge k_i + \rho`.

    >>> degree_svt_node_release(6, [6, 6, 6], [1, 2, 9], 400.0, size=2, rng=0).tolist()
    [[6, 2], [6, 2]]
    """
    b = degree_svt_budget(epsilon, degree_share)
    gen = check_rng(rng)
    u = np.asarray(counts, dtype=np.int64)
    k = np.asarray(thresholds, dtype=np.int64)
    bias = _slack(b["svt-levels"], slack)
    dt = int(degree) + _dlap(gen, b["degree"], size)
    rho = _dlap(gen, b["svt-threshold"], size)
    nu = _dlap(gen, b["svt-levels"], size * u.size).reshape(size, u.size)
    passed = (u[None, :] + nu + bias >= k[None, :] + rho[:, None]) & (k[None, :] <= dt[:, None])
    m = np.where(passed.all(axis=1), u.size, np.argmin(passed, axis=1)).astype(np.int64)
    return np.stack([dt, m], axis=1)


def degree_svt_kcore(graph: Any, epsilon: float, *, psi: float = 0.5, levels_per_group: int = 1,
                     degree_share: float = 0.7, slack: float = 1.0, c_hi: float = 2.0,
                     c_lo: float | None = None, gate_share: float = 0.0, tau: float = 1.5,
                     gate_margin: float = 0.0, floor: float = 1.0, max_degree: int | None = None,
                     rng: Any = None) -> KCoreRun:
    r"""Our degree-capped sparse-vector k-core decomposition at per-node budget ``epsilon``.

    ``max_degree``: public bound that fixes the thresholds (default: n - 1). The run stops
    when no node is active (public). ``c_hi``, ``c_lo``: the read-out's constants
    (:func:`degree_svt_interval`; they change no release). ``gate_share`` > 0 adds the
    neighbour gate (step 4: one more round, ``gate_share`` of ε, ``tau``, ``gate_margin`` m);
    ``floor``: the least estimate. Module docstring for the steps and the privacy proof.

    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> run = degree_svt_kcore(g, 400.0, gate_share=0.2, rng=0)
    >>> run.core_numbers.round(2).tolist(), run.rounds == degree_svt_kcore(g, 400.0, rng=0).rounds + 1
    ([2.0, 2.0, 2.0, 1.0], True)
    """
    b = degree_svt_budget(epsilon, degree_share, gate_share)
    if not floor >= 1:
        raise ValueError(f"floor must be >= 1, got {floor!r}")
    big_l = check_nonnegative_int(levels_per_group, "levels_per_group", minimum=1)
    gen = check_rng(rng)
    n = graph.n_nodes
    bound = max(n - 1, 1) if max_degree is None else check_nonnegative_int(max_degree, "max_degree")
    ks = svt_thresholds(psi, bound)
    bias = _slack(b["svt-levels"], slack)
    dt = np.asarray(graph.degrees, dtype=np.int64) + _dlap(gen, b["degree"], n)
    rho = _dlap(gen, b["svt-threshold"], n)
    src, dst = _csr(graph)
    levels = np.zeros(n, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    rounds = 0
    for r in range(svt_rounds(ks, big_l)):
        k = ks[r // big_l]
        alive &= k <= dt  # the cap: a node stops before a threshold above its noisy degree
        act = np.flatnonzero(alive)
        if act.size == 0:
            break
        u = same_level_counts(src, dst, levels, r, n)[act] + _dlap(gen, b["svt-levels"], act.size)
        move = u + bias >= k + rho[act]
        levels[act[move]] += 1
        alive[act[~move]] = False
        rounds = r + 1
    lo, hi = degree_svt_interval(levels, dt, ks, big_l, b["degree"], bias, n, c_hi, c_lo)
    if gate_share > 0:  # step 4: the curator broadcasts x and theta, every node releases its count
        if not tau >= 1:
            raise ValueError(f"tau must be >= 1, got {tau!r}")
        theta = np.maximum(np.floor(lo / tau), 1.0)
        counts = gate_counts(graph, np.sqrt(lo * hi), theta) + _dlap(gen, b["gate"], n)
        lo = gate_lower_end(lo, counts, b["gate"], tau, gate_margin)
        rounds += 1
    return KCoreRun(levels, np.maximum(np.sqrt(lo * hi), floor), rounds)
