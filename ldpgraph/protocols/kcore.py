r"""k-core decomposition under local edge-DP: the level data structure, as published and ours.

Both algorithms move nodes up the levels of a level data structure (LDS; Dhulipala et al.,
FOCS 2022), one level per round. In round r a node at level r that is still *active* counts
its neighbours at level r, :math:`U_v(r)` (all nodes are at level <= r, so these are the
neighbours at the same or a higher level), and moves up when a noisy version of that count
exceeds the threshold of the level's group; a node that fails once stops for good. The
levels are public after every round (the broadcast); core numbers are read from the final
levels, and sorting nodes by level (ties by id) gives a low out-degree orientation
(:mod:`ldpgraph.protocols.edge_orient`).

``reference`` (k-CoreD; Mundra, Papamanthou, Shun, Liu, PVLDB, arXiv 2506.20828), as the
authors' Go code ``algorithms/kcore-ldp.go`` runs it (where code and paper differ, the code):

- levels per group :math:`L = \lceil\log_{1+\psi} n\rceil / 4` (a real number), group of
  level r :math:`\lfloor r / L\rfloor`, threshold of group g :math:`\lfloor(1+\psi)^g\rfloor`;
- degree thresholding (budget ε₁ = f ε): :math:`\tilde d = d + \mathrm{DLap}(e^{-\varepsilon_1/2})`,
  then :math:`\tilde d \mathrel{-}= \min(b \cdot 2e^{\varepsilon_1}/(e^{2\varepsilon_1}-1), \tilde d)`
  (truncated to an integer; the code's bias uses ε₁, its noise ε₁/2), then
  :math:`\tilde d \mathrel{+}= 1`; the node's cap
  :math:`t_v = \lceil\log_2 \tilde d\rceil L` (as an integer) + 1: it stops at round t_v;
- level moving (ε₂ = (1 - f) ε): :math:`\hat U = U + \mathrm{DLap}(e^{-s}) + B`,
  :math:`s = \varepsilon_2/(2 t_v)`, :math:`B = \lfloor 6 e^{s}/(e^{2s}-1)^3\rfloor`; move iff
  :math:`\hat U > \lfloor (1+\psi)^{g}\rfloor`;
- rounds :math:`\min(\lceil 4 (\log_{1+\psi} n)^{1.2}\rceil - 2, \max_v t_v)`;
- core estimate :math:`(2 + 1/2)(1+\psi)^{\max(\lfloor(\ell+1)/L\rfloor - 1, 0)}` at level ℓ.

Where the code and the paper (Algorithms 3.1-3.4) differ, this follows the code, since its
numbers are the ones reported: the bias B (the paper's formula is garbled in print), the
rounds (paper: :math:`\min(4\log n \log \tilde d_{max} - 1, \max_v t_v)`), the move test
against :math:`(1+\psi)^g` (paper: :math:`(1+\eta/5)^{F(r)}`) and λ = 1/2 (paper:
:math:`(5-2\eta)\eta/(\eta+5)^2`). The code's k-core runner always runs at ε = 1
(``experiments.go``: ``epsilons := []float64{1.0}``); here ε is a parameter.

A node spends ε₁/2 + ε₂/2 = ε/2 (the paper's ε-LEDP counts both endpoints of an edge); so
that every method of ldpgraph is compared at the same *per-node* budget, :func:`reference_kcore`
takes the per-node ε and runs the published algorithm at ε_paper = 2ε. For small s the bias B
is huge (about 6/(2s)^3: 2·10^6 on Facebook at ε_paper = 1): every node then climbs to its
cap and the levels are a function of the noisy degree alone.

``svt`` (ours): each node decides its moves with the sparse vector technique. It draws one
threshold noise :math:`\rho_v \sim \mathrm{DLap}(e^{-\varepsilon_\rho})` (kept secret across
rounds) and, in every round it is active, a fresh :math:`\nu \sim \mathrm{DLap}(e^{-\varepsilon_\nu})`;
it moves up iff :math:`U_v(r) + \nu \ge k_g + \rho_v`, and stops at the first failure. The
integer thresholds :math:`k_0 < k_1 < \dots` (:func:`svt_thresholds`) grow geometrically,
:math:`k_g = \max(k_{g-1} + 1, \lfloor (1+\psi)^g \rceil)`, with L levels per group. Without
noise and with L large, group g peels the graph to its :math:`k_g`-core, so a node that stops
in group g has core number in :math:`[k_{g-1}, k_g - 1]`; the estimate is the geometric middle
of that interval (:func:`svt_core_estimate`). The number of rounds is data dependent: the
protocol ends when no node is active (public), at most L times the number of groups.

Notes
-----
Privacy of ``svt`` (ε = ε_ρ + ε_ν per node, whatever the number of rounds). Fix the public
levels of the other nodes (the broadcasts: post-processing of their releases). The node's
queries :math:`U_v(r)` have sensitivity 1 in its neighbour list and are *monotone*: adding a
neighbour w changes every :math:`U_v(r)` by :math:`1[\ell_w(r) = r] \in \{0, 1\}`, all in the
same direction. The node's transcript is a run of m moves and then a failure (or no failure
when the protocol ends): AboveThreshold on the queries :math:`-U_v(r)` against the thresholds
:math:`-k_g` (Dwork and Roth, Theorem 3.23), halting at the first answer above. Write its
probability as a sum over ρ of :math:`P[\rho]` times the indicator that the m moves hold
(:math:`\rho \le \min_{i<m}(U_i + \nu_i - k_i)`, fresh ν fixed) times
:math:`P[\nu_m < k_m + \rho - U_m]`. When a neighbour is added (U grows by 0 or 1 in every
round) the same ρ keeps the moves and the failure needs ν_m one smaller: one unit of ν costs
:math:`e^{\varepsilon_\nu}`. When one is removed, ρ' = ρ - 1 keeps the moves
(:math:`e^{\varepsilon_\rho}`) and the failure holds with ν_m shifted by at most one
(:math:`e^{\varepsilon_\nu}`). So every transcript's
probability changes by at most :math:`e^{\varepsilon_\rho + \varepsilon_\nu}` (Lyu, Su, Li,
VLDB 2017, Theorem 2: monotone queries need noise of scale 1/ε_ν, not 2/ε_ν); the shifts are
integers, and the discrete Laplace masses obey the same ratios as the continuous densities.
The audit of :func:`svt_node_release` in the tests checks it empirically.

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> exact_core_numbers(g).tolist()
[2, 2, 2, 1]
>>> run = svt_kcore(g, 200.0, rng=0)
>>> run.core_numbers.tolist(), run.levels.tolist()
([2.0, 2.0, 2.0, 1.0], [4, 4, 4, 2])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_rng

__all__ = [
    "KCoreRun",
    "exact_core_numbers",
    "approximation_factors",
    "core_summary",
    "FACTOR_BINS",
    "factor_histogram",
    "reference_parameters",
    "reference_kcore",
    "reference_degree_bias",
    "reference_core_estimate",
    "svt_thresholds",
    "svt_core_estimate",
    "svt_kcore",
    "svt_node_release",
    "svt_transcript_pmf",
    "svt_rounds",
    "same_level_counts",
]


@dataclass(frozen=True)
class KCoreRun:
    """One run of a level data structure.

    Attributes
    ----------
    levels : ndarray of int64
        Final level of every node.
    core_numbers : ndarray of float64
        Estimated core numbers.
    rounds : int
        Level-moving rounds run (the degree round of ``reference`` not counted).
    caps : ndarray of int64 or None
        ``reference``: each node's round cap t_v.
    """

    levels: NDArray[np.int64]
    core_numbers: NDArray[np.float64]
    rounds: int
    caps: NDArray[np.int64] | None = None


def exact_core_numbers(graph: Any) -> NDArray[np.int64]:
    """Core number of every node (igraph's ``coreness``), the truth of ``core_numbers``."""
    return np.asarray(graph.to_igraph().coreness(), dtype=np.int64)


def approximation_factors(estimate: ArrayLike, truth: ArrayLike) -> NDArray[np.float64]:
    r"""Per node :math:`\max(\hat k/k, k/\hat k)` (the paper's measure), over nodes of core number >= 1.

    An estimate below 1 counts as 1 (a core number >= 1 is never estimated better by less).

    >>> approximation_factors([2.0, 1.0, 3.0], [1, 2, 3]).tolist()
    [2.0, 2.0, 1.0]
    """
    est = np.maximum(np.asarray(estimate, dtype=np.float64), 1.0)
    k = np.asarray(truth, dtype=np.float64)
    if est.shape != k.shape:
        raise ValueError(f"estimate has shape {est.shape}, truth {k.shape}")
    keep = k >= 1
    return np.maximum(est[keep] / k[keep], k[keep] / est[keep])


def core_summary(estimate: ArrayLike, truth: ArrayLike) -> dict[str, float]:
    """Mean and max approximation factor, estimated and true degeneracy (max core number).

    >>> core_summary([2.0, 2.0, 1.0], [2, 2, 1])["mean_approximation_factor"]
    1.0
    """
    f = approximation_factors(estimate, truth)
    return {
        "mean_approximation_factor": float(f.mean()) if f.size else math.nan,
        "max_approximation_factor": float(f.max()) if f.size else math.nan,
        "degeneracy_estimate": float(np.max(estimate, initial=0.0)),
        "degeneracy": float(np.max(truth, initial=0)),
    }


#: the bins of :func:`factor_histogram`: [1, 1.25), [1.25, 1.5), [1.5, 2), [2, 3), [3, 5), [5, inf)
FACTOR_BINS: tuple[float, ...] = (1.0, 1.25, 1.5, 2.0, 3.0, 5.0, math.inf)


def factor_histogram(estimate: ArrayLike, truth: ArrayLike) -> dict[str, int]:
    """How many nodes (of core number >= 1) have each approximation factor, in :data:`FACTOR_BINS`.

    >>> factor_histogram([2.0, 1.0, 3.0, 1.1], [1, 2, 3, 1])
    {'[1, 1.25)': 2, '[1.25, 1.5)': 0, '[1.5, 2)': 0, '[2, 3)': 2, '[3, 5)': 0, '[5, inf)': 0}
    """
    f = approximation_factors(estimate, truth)
    counts = np.histogram(f, bins=np.array(FACTOR_BINS))[0] if f.size else np.zeros(len(FACTOR_BINS) - 1, int)
    edges = zip(FACTOR_BINS[:-1], FACTOR_BINS[1:], counts, strict=True)
    return {f"[{lo:g}, {hi:g})": int(c) for lo, hi, c in edges}


def _csr(graph: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(row of every CSR entry, neighbour of every CSR entry)."""
    ptr = np.asarray(graph.indptr, dtype=np.int64)
    src = np.repeat(np.arange(graph.n_nodes, dtype=np.int64), np.diff(ptr))
    return src, np.asarray(graph.indices, dtype=np.int64)


def same_level_counts(src: NDArray[np.int64], dst: NDArray[np.int64], levels: NDArray[np.int64],
                      r: int, n: int) -> NDArray[np.int64]:
    """:math:`U_v(r)`: for every node, its neighbours at level ``r``."""
    at = levels[dst] == r
    return np.bincount(src[at], minlength=n).astype(np.int64)


# ---------------------------------------------------------------------------- reference


def reference_parameters(n: int, psi: float = 0.5) -> dict[str, float]:
    """``levels_per_group`` L and ``max_rounds`` of the reference code for n nodes.

    >>> reference_parameters(4039)
    {'levels_per_group': 5.25, 'max_rounds': 148}
    """
    log_n = math.log2(n) / math.log2(1.0 + psi)
    return {"levels_per_group": math.ceil(log_n) / 4.0,
            "max_rounds": int(math.ceil(4.0 * log_n ** 1.2)) - 2}


def reference_core_estimate(levels: ArrayLike, levels_per_group: float, psi: float = 0.5,
                            lam: float = 0.5) -> NDArray[np.float64]:
    r""":math:`(2+\lambda)(1+\psi)^{\max(\lfloor(\ell+1)/L\rfloor-1, 0)}` (Algorithm 3.4, λ = 1/2).

    >>> reference_core_estimate([0, 5, 10], 5.25).tolist()
    [2.5, 2.5, 3.75]
    """
    lv = np.asarray(levels, dtype=np.float64)
    power = np.maximum(np.floor((lv + 1.0) / levels_per_group) - 1.0, 0.0)
    return (2.0 + lam) * (1.0 + psi) ** power


def reference_degree_bias(eps1: float, bias_factor: int = 8) -> float:
    r"""The code's cut of the noisy degree, :math:`b \cdot 2e^{\varepsilon_1}/(e^{2\varepsilon_1}-1)`.

    ``loadGraphWorker`` draws its noise at ``lambda / 2.0`` but computes this bias from
    ``lambda`` itself, ε₁ = f ε_paper (checked against the Go binary: ``scripts/
    bench_kcore_edge_orient.py --reference``).

    >>> round(reference_degree_bias(0.8), 4)  # eps_paper = 1, f = 4/5
    9.0079
    """
    return bias_factor * (2.0 * math.exp(eps1)) / (math.exp(2.0 * eps1) - 1.0)


def _dlap(gen: np.random.Generator, scale_eps: float, size: int) -> NDArray[np.int64]:
    from ..mechanisms.discrete_laplace import sample_dlap

    return sample_dlap(gen, size, scale_eps, math.exp(-scale_eps))


def reference_kcore(graph: Any, epsilon: float, *, psi: float = 0.5, factor: float = 0.8,
                    bias_factor: int = 8, noise: bool = True, rng: Any = None) -> KCoreRun:
    r"""k-CoreD as the authors' code runs it (module docstring), at per-node budget ``epsilon``.

    The published algorithm runs at ε_paper = 2 ``epsilon`` (a node spends ε_paper / 2).
    ``noise=False`` switches the noise off (and keeps the bias terms, as the code does not add
    them then): the rounding floor of the level structure.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> reference_kcore(g, 1.0, noise=False).core_numbers.tolist()
    [5.625, 5.625, 5.625, 2.5]
    """
    eps_paper = 2.0 * check_epsilon(epsilon)
    gen = check_rng(rng)
    n = graph.n_nodes
    par = reference_parameters(n, psi)
    big_l = par["levels_per_group"]
    eps1, eps2 = eps_paper * factor, eps_paper * (1.0 - factor)
    d = np.asarray(graph.degrees, dtype=np.int64)
    noisy = d.copy()
    if noise:
        lam = eps1 / 2.0
        noisy = noisy + _dlap(gen, lam, n)
        bias = reference_degree_bias(eps1, bias_factor)
        noisy = noisy - np.minimum(bias, noisy).astype(np.int64)  # Go: int64(min(float, float))
        noisy = noisy + 1
    with np.errstate(divide="ignore"):
        log2 = np.where(noisy > 0, np.log2(np.maximum(noisy, 1)), -np.inf)
    caps = (np.ceil(log2) * big_l).astype(np.int64) + 1  # int(threshold) + 1
    caps = np.maximum(caps, 0)
    n_rounds = int(min(par["max_rounds"], int(caps.max(initial=0))))
    src, dst = _csr(graph)
    levels = np.zeros(n, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    for r in range(n_rounds):
        group = math.floor(r / big_l)
        alive &= caps != r
        act = np.flatnonzero(alive & (levels == r))
        if act.size == 0:
            continue
        u = same_level_counts(src, dst, levels, r, n)[act]
        if noise:
            s = eps2 / (2.0 * caps[act])
            extra = np.floor(3.0 * (2.0 * np.exp(s)) / (np.exp(2.0 * s) - 1.0) ** 3)
            u = u + _dlap_vector(gen, s) + np.minimum(extra, 2.0**62).astype(np.int64)
        move = u > int((1.0 + psi) ** group)
        levels[act[move]] += 1
        alive[act[~move]] = False
    return KCoreRun(levels, reference_core_estimate(levels, big_l, psi), n_rounds, caps)


def _dlap_vector(gen: np.random.Generator, scale_eps: NDArray[np.float64]) -> NDArray[np.int64]:
    """One DLap(e^-s_i) draw per entry of ``scale_eps``: |X| by inversion of an exponential."""
    s = np.asarray(scale_eps, dtype=np.float64)
    p = np.exp(-s)
    c0 = np.log1p(p) - math.log(2.0)
    mag = np.floor((gen.standard_exponential(s.size) - c0) / s).astype(np.int64)
    sign = gen.integers(0, 2, s.size) * 2 - 1
    return mag * sign


# ---------------------------------------------------------------------------- ours (SVT)


def svt_thresholds(psi: float, limit: int) -> NDArray[np.int64]:
    r"""The group thresholds :math:`k_0 = 1 < k_1 < \dots`,
    :math:`k_g = \max(k_{g-1}+1, \mathrm{round}((1+\psi)^g))`, up to the first one above ``limit``.

    >>> svt_thresholds(0.5, 12).tolist()
    [1, 2, 3, 4, 5, 8, 11, 17]
    """
    if not psi > 0:
        raise ValueError(f"psi must be > 0, got {psi!r}")
    out = [1]
    g = 1
    while out[-1] <= limit:
        out.append(max(out[-1] + 1, int(round((1.0 + psi) ** g))))
        g += 1
    return np.array(out, dtype=np.int64)


def svt_rounds(thresholds: NDArray[np.int64], levels_per_group: int) -> int:
    """The most rounds ``svt`` can take: L per group."""
    return int(len(thresholds) * levels_per_group)


def svt_core_estimate(levels: ArrayLike, thresholds: NDArray[np.int64], levels_per_group: int
                      ) -> NDArray[np.float64]:
    r"""Core number from the final level ℓ: group :math:`g = \lfloor \ell / L\rfloor` (where the node
    failed), estimate :math:`\sqrt{k_{g-1} (k_g - 1)}` (1 for g = 0; :math:`k_g - 1` at the top).

    >>> ks = svt_thresholds(0.5, 12)  # [1, 2, 3, 4, 5, 8, 11, 17]
    >>> svt_core_estimate([0, 2, 9, 11], ks, 2).round(3).tolist()  # 11: group 5, core in [5, 7]
    [1.0, 1.0, 4.0, 5.916]
    """
    lv = np.asarray(levels, dtype=np.int64)
    g = np.minimum(lv // int(levels_per_group), len(thresholds) - 1)
    lo = np.where(g > 0, thresholds[np.maximum(g - 1, 0)], 1).astype(np.float64)
    hi = np.maximum(thresholds[g] - 1, 1).astype(np.float64)
    return np.sqrt(lo * np.maximum(hi, lo))


def _svt_split(epsilon: float, rho_share: float) -> tuple[float, float]:
    if not 0 < rho_share < 1:
        raise ValueError(f"rho_share must be in (0, 1), got {rho_share!r}")
    return epsilon * rho_share, epsilon * (1.0 - rho_share)


def svt_node_release(counts: ArrayLike, thresholds: ArrayLike, epsilon: float, *, rho_share: float = 0.5,
                     size: int = 1, rng: Any = None) -> NDArray[np.int64]:
    r"""The whole transcript of one node, ``size`` times: how many moves before its first failure.

    ``counts[i]`` is :math:`U_v` at the node's i-th level and ``thresholds[i]`` the threshold there
    (both public given the other nodes' levels); a node that passes them all stops at the
    end. The value is a function of the transcript (a run of moves, then a failure).

    >>> svt_node_release([5, 5, 5], [1, 2, 9], 200.0, size=2, rng=0).tolist()
    [2, 2]
    """
    eps_rho, eps_nu = _svt_split(check_epsilon(epsilon), rho_share)
    gen = check_rng(rng)
    u = np.asarray(counts, dtype=np.int64)
    k = np.asarray(thresholds, dtype=np.int64)
    rho = _dlap(gen, eps_rho, size)
    nu = _dlap(gen, eps_nu, size * u.size).reshape(size, u.size)
    passed = (u[None, :] + nu) >= (k[None, :] + rho[:, None])
    return np.where(passed.all(axis=1), u.size, np.argmin(passed, axis=1)).astype(np.int64)


def _dlap_pmf(eps: float, tol: float = 1e-17) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Support and mass of DLap(e^-eps), truncated where the tail is below ``tol``."""
    p = math.exp(-eps)
    m = int(math.ceil(math.log(tol) / math.log(p))) + 1
    x = np.arange(-m, m + 1)
    return x, (1 - p) / (1 + p) * p ** np.abs(x)


def svt_transcript_pmf(counts: ArrayLike, thresholds: ArrayLike, epsilon: float, *,
                       rho_share: float = 0.5) -> NDArray[np.float64]:
    r"""Exact law of :func:`svt_node_release`: P[m moves then a failure], m = 0..len (len: no failure).

    .. math:: P[m] = \sum_\rho P[\rho] \prod_{i<m} P[\nu \ge k_i + \rho - U_i]\;
              P[\nu < k_m + \rho - U_m],

    summed over the discrete Laplace support (truncated where the mass is below 1e-17).

    >>> p = svt_transcript_pmf([5, 5, 5], [1, 2, 9], 1.0)
    >>> round(float(p.sum()), 12), int(p.argmax())
    (1.0, 2)
    """
    eps_rho, eps_nu = _svt_split(check_epsilon(epsilon), rho_share)
    u = np.asarray(counts, dtype=np.int64)
    k = np.asarray(thresholds, dtype=np.int64)
    r, pr = _dlap_pmf(eps_rho)
    x, px = _dlap_pmf(eps_nu)
    tail = np.concatenate([np.cumsum(px[::-1])[::-1], [0.0]])  # tail[j] = P[nu >= x[j]]

    def at_least(t: NDArray[np.int64]) -> NDArray[np.float64]:
        j = np.clip(t - x[0], 0, x.size)
        return tail[j]

    out = np.empty(u.size + 1)
    alive = pr.copy()
    for i in range(u.size):
        ok = at_least(k[i] + r - u[i])
        out[i] = float(np.sum(alive * (1.0 - ok)))
        alive = alive * ok
    out[u.size] = float(alive.sum())
    return out


def svt_kcore(graph: Any, epsilon: float, *, psi: float = 0.25, levels_per_group: int = 2,
              rho_share: float = 0.5, max_degree: int | None = None, noise: bool = True,
              rng: Any = None) -> KCoreRun:
    r"""Our k-core decomposition (module docstring) at per-node budget ``epsilon``.

    ``max_degree``: public bound that fixes the thresholds (default: n - 1). The run stops
    when no node is active (a public event). This is the law of the protocol ``kcore-svt``
    (:mod:`ldpgraph.protocols.kcore_protocol`), vectorised over the nodes of each round.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> svt_kcore(g, 1.0, noise=False).core_numbers.tolist()
    [2.0, 2.0, 2.0, 1.0]
    """
    eps_rho, eps_nu = _svt_split(check_epsilon(epsilon), rho_share)
    big_l = check_nonnegative_int(levels_per_group, "levels_per_group", minimum=1)
    gen = check_rng(rng)
    n = graph.n_nodes
    bound = max(n - 1, 1) if max_degree is None else check_nonnegative_int(max_degree, "max_degree")
    ks = svt_thresholds(psi, bound)
    src, dst = _csr(graph)
    levels = np.zeros(n, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    rho = _dlap(gen, eps_rho, n) if noise else np.zeros(n, dtype=np.int64)
    rounds = 0
    for r in range(svt_rounds(ks, big_l)):
        act = np.flatnonzero(alive)  # every active node is at level r
        if act.size == 0:
            break
        u = same_level_counts(src, dst, levels, r, n)[act]
        if noise:
            u = u + _dlap(gen, eps_nu, act.size)
        move = u >= ks[r // big_l] + rho[act]
        levels[act[move]] += 1
        alive[act[~move]] = False
        rounds = r + 1
    return KCoreRun(levels, svt_core_estimate(levels, ks, big_l), rounds)
