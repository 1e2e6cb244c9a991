r"""k-core decomposition under local edge-DP: the level data structure, as published and ours.

Both algorithms move nodes up the levels of a level data structure (LDS; Dhulipala et al.,
FOCS 2022), one level per round. In round r a node at level r that is still *active* counts
its neighbours at level r, :math:`U_v(r)` (all nodes are at level <= r, so these are the
neighbours at the same or a higher level), and moves up when a noisy version of that count
exceeds the threshold of the level's group; a node that fails once stops for good. The
levels are public after every round (the broadcast); core numbers are read from the final
levels, and sorting nodes by level (ties by id) gives a low out-degree orientation
(:mod:`ldpgraph.protocols.orientation.kernels`).

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

The protocol :class:`KCoreReference` (``kcore-reference``) simulates it; it does not deploy
(``kcore-hindex``, :mod:`ldpgraph.protocols.kcore.hindex_protocol`, does, in two rounds).
:class:`CoreNumbersHooks` holds the simulation hooks of the k-core protocols: ``core_numbers`` is
a vector, so one trial is recorded by its *mean approximation factor*
:math:`\frac1{|V_{\ge1}|}\sum_v \max(\hat k_v/k_v, k_v/\hat k_v)` over the nodes of core number
at least 1 (the truth's own factor is 1), and :meth:`CoreNumbersHooks.trial_details` gives the
rest of the paper's measures (``ldpgraph estimate --stat core_numbers --json``).

(An earlier protocol of ours, ``kcore-svt``, moved nodes by the sparse vector technique; it was
removed in issue 33: its max approximation factor was 45 / 25 / 14 on Facebook at ε_paper 0.5 / 1
/ 2 against the reference's 13.5 / 7.7 / 4.7, and its mean no better.)

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> exact_core_numbers(g).tolist()
[2, 2, 2, 1]
>>> p = KCoreReference()
>>> p.plan(1.0).release_budget(), p.not_deployable
({'degree': 0.8, 'levels': 0.2}, 'the reference algorithm is simulated only (kcore-hindex deploys)')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import check_epsilon, check_rng
from ...core.plan import Plan, Release, RoundPlan
from ...core.protocol import Protocol, Round
from ..registry import register

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
    "same_level_counts",
    "core_sizes",
    "CoreNumbersHooks",
    "KCoreReference",
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


#: a peeling frontier at most this large is peeled node by node in Python (cheaper than a numpy
#: sweep's fixed cost; long chains peel one node per sweep)
_SMALL_FRONTIER = 48


def _row_entries(ptr: NDArray[np.int64], nodes: NDArray[np.int64]) -> NDArray[np.int64]:
    """The positions in ``indices`` of the rows of ``nodes``, concatenated."""
    start, lens = ptr[nodes], ptr[nodes + 1] - ptr[nodes]
    total = int(lens.sum())
    shift = np.repeat(start - (np.cumsum(lens) - lens), lens)
    return shift + np.arange(total, dtype=np.int64)


def exact_core_numbers(graph: Any) -> NDArray[np.int64]:
    """Core number of every node, the truth of ``core_numbers``: peeling on the CSR (no igraph).

    For k = 0, 1, ... every remaining node of degree <= k (in the remaining graph) gets core
    number k and is removed, with its edges, until none is left at k; then k moves to the least
    remaining degree. All of a frontier goes in one numpy sweep (its edges gathered, the
    neighbours' degrees decremented); a frontier of at most :data:`_SMALL_FRONTIER` nodes is
    peeled node by node in Python, where a chain would cost one sweep per node. O(m log m) work
    (the sweeps' ``np.unique``), memory O(n + the largest frontier's edges); igraph's
    ``coreness`` agrees (``tests/protocols/test_kcore.py``).

    >>> from ldpgraph.graph import from_edge_array
    >>> exact_core_numbers(from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]], n_nodes=5)).tolist()
    [2, 2, 2, 1, 0]
    """
    n = graph.n_nodes
    ptr = np.asarray(graph.indptr, dtype=np.int64)
    idx = np.asarray(graph.indices, dtype=np.int64)
    deg = np.diff(ptr)  # degrees in the remaining graph (a fresh array)
    core = np.full(n, -1, dtype=np.int64)  # -1: not removed yet
    alive = np.arange(n, dtype=np.int64)
    k = 0
    while alive.size:
        alive = alive[core[alive] < 0]
        if not alive.size:
            break
        k = max(k, int(deg[alive].min()))
        frontier = alive[deg[alive] <= k]
        core[frontier] = k
        while frontier.size:
            if frontier.size <= _SMALL_FRONTIER:
                frontier = _peel_small(frontier.tolist(), k, ptr, idx, deg, core)
                continue
            nb = idx[_row_entries(ptr, frontier)]
            nb = nb[core[nb] < 0]
            u, c = np.unique(nb, return_counts=True)
            deg[u] -= c
            frontier = u[deg[u] <= k]
            core[frontier] = k
    return core


def _peel_small(stack: list[int], k: int, ptr: NDArray[np.int64], idx: NDArray[np.int64],
                deg: NDArray[np.int64], core: NDArray[np.int64]) -> NDArray[np.int64]:
    """Peel from ``stack`` (removed nodes whose edges are still counted) one node at a time while it
    stays at most :data:`_SMALL_FRONTIER` long; the nodes left on it (removed, core k) are returned."""
    while stack and len(stack) <= _SMALL_FRONTIER:
        v = stack.pop()
        for w in idx[ptr[v]:ptr[v + 1]].tolist():
            if core[w] < 0:
                d = int(deg[w]) - 1
                deg[w] = d
                if d <= k:
                    core[w] = k
                    stack.append(w)
    return np.asarray(stack, dtype=np.int64)


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


def dlap_noise(gen: np.random.Generator, scale_eps: float, size: int) -> NDArray[np.int64]:
    from ...mechanisms.discrete_laplace import sample_dlap

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
        noisy = noisy + dlap_noise(gen, lam, n)
        bias = reference_degree_bias(eps1, bias_factor)
        noisy = noisy - np.minimum(bias, noisy).astype(np.int64)  # Go: int64(min(float, float))
        noisy = noisy + 1
    with np.errstate(divide="ignore"):
        log2 = np.where(noisy > 0, np.log2(np.maximum(noisy, 1)), -np.inf)
    caps = (np.ceil(log2) * big_l).astype(np.int64) + 1  # int(threshold) + 1
    caps = np.maximum(caps, 0)
    n_rounds = int(min(par["max_rounds"], int(caps.max(initial=0))))
    ptr = np.asarray(graph.indptr, dtype=np.int64)
    idx = np.asarray(graph.indices, dtype=np.int64)
    levels = np.zeros(n, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    # U_v(r) by its update: the nodes at level r are those that moved in every round so far
    # (``climbing``, in id order); when one stops, its neighbours lose it. Each row is read once.
    same = np.diff(ptr)  # round 0: every node is at level 0
    climbing = np.arange(n, dtype=np.int64)
    for r in range(n_rounds):
        group = math.floor(r / big_l)
        alive &= caps != r
        act = climbing[alive[climbing]]  # = np.flatnonzero(alive & (levels == r))
        if act.size == 0:
            break  # no node at level r moves: none is ever at a level above r
        u = same[act]
        if noise:
            s = eps2 / (2.0 * caps[act])
            extra = np.floor(3.0 * (2.0 * np.exp(s)) / (np.exp(2.0 * s) - 1.0) ** 3)
            u = u + dlap_noise_per_node(gen, s) + np.minimum(extra, 2.0**62).astype(np.int64)
        move = u > int((1.0 + psi) ** group)
        up = act[move]
        levels[up] += 1
        alive[act[~move]] = False
        stays = np.ones(n, dtype=bool)
        stays[up] = False
        stopped = climbing[stays[climbing]]
        same -= np.bincount(idx[_row_entries(ptr, stopped)], minlength=n)
        climbing = up
    return KCoreRun(levels, reference_core_estimate(levels, big_l, psi), n_rounds, caps)


def dlap_noise_per_node(gen: np.random.Generator, scale_eps: NDArray[np.float64]) -> NDArray[np.int64]:
    """One DLap(e^-s_i) draw per entry of ``scale_eps``: |X| by inversion of an exponential."""
    s = np.asarray(scale_eps, dtype=np.float64)
    p = np.exp(-s)
    c0 = np.log1p(p) - math.log(2.0)
    mag = np.floor((gen.standard_exponential(s.size) - c0) / s).astype(np.int64)
    sign = gen.integers(0, 2, s.size) * 2 - 1
    return mag * sign


def _dlap_pmf(eps: float, tol: float = 1e-17) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Support and mass of DLap(e^-eps), truncated where the tail is below ``tol``."""
    p = math.exp(-eps)
    m = int(math.ceil(math.log(tol) / math.log(p))) + 1
    x = np.arange(-m, m + 1)
    return x, (1 - p) / (1 + p) * p ** np.abs(x)


# ---------------------------------------------------------------------------- the protocols' part


def core_sizes(core_numbers: Any) -> dict[int, int]:
    """``{k: size of the k-core}`` for k = 1..max (nodes whose (estimated) core number is >= k).

    >>> core_sizes([2, 2, 2, 1])
    {1: 4, 2: 3}
    """
    k = np.floor(np.asarray(core_numbers, dtype=np.float64) + 1e-9).astype(np.int64)
    top = int(k.max(initial=0))
    counts = np.bincount(np.maximum(k, 0), minlength=top + 1)
    above = np.cumsum(counts[::-1])[::-1]
    return {j: int(above[j]) for j in range(1, top + 1)}


class CoreNumbersHooks:
    """The simulation hooks of a k-core protocol (mixed in before :class:`~ldpgraph.core.protocol.Protocol`).

    The protocol gives :meth:`run` (one decomposition under a plan); a trial is recorded by its mean
    approximation factor (the truth's is 1: :func:`~ldpgraph.protocols.statistics.statistic_truth`).
    """

    model = "local, multi-round"
    unbiased = False
    #: rounds a run has beyond :attr:`KCoreRun.rounds` (the reference's degree round)
    extra_rounds = 0

    def run(self, graph: Any, plan: Any, rng: np.random.Generator) -> KCoreRun:
        raise NotImplementedError

    def _true_cores(self, graph: Any) -> NDArray[np.int64]:
        memo = getattr(self, "_truth_memo", None)
        if memo is None or memo[0] is not graph:
            self._truth_memo = (graph, exact_core_numbers(graph))  # the graph kept: its id stays its own
        return self._truth_memo[1]

    def prepare(self, graph: Any) -> None:
        self._true_cores(graph)

    def simulate(self, graph: Any, plan: Any, statistic: str, n_trials: int, rng: np.random.Generator, *,
                 param: int | None = None) -> NDArray[np.float64]:
        """``n_trials`` runs, each recorded by its mean approximation factor."""
        self.check_statistic(statistic)  # type: ignore[attr-defined]
        truth = self._true_cores(graph)
        runs = [self.run(graph, plan, rng) for _ in range(n_trials)]
        return np.array([core_summary(r.core_numbers, truth)["mean_approximation_factor"] for r in runs],
                        dtype=np.float64)

    def trial_details(self, graph: Any, plan: Any, rng: np.random.Generator) -> dict[str, Any]:
        """One run's measures: mean and max approximation factor, degeneracy (estimated and true), the
        histogram of the nodes' approximation factors, the estimated and true k-core sizes, the rounds;
        and ``per_node``, every node's estimated core number (by node index)."""
        run = self.run(graph, plan, rng)
        return self.run_details(graph, run.core_numbers, run.rounds + self.extra_rounds)

    def run_details(self, graph: Any, core_numbers: Any, rounds: int) -> dict[str, Any]:
        """:meth:`trial_details` of the estimated ``core_numbers`` of a run of ``rounds`` rounds (a
        simulated one, or the deployed protocol's run in memory: ``ldpgraph estimate``)."""
        truth = self._true_cores(graph)
        out: dict[str, Any] = dict(core_summary(core_numbers, truth))
        out["approximation_factor_histogram"] = factor_histogram(core_numbers, truth)
        out["rounds"] = int(rounds)
        out["kcore_sizes"] = {str(k): v for k, v in core_sizes(core_numbers).items()}
        out["true_kcore_sizes"] = {str(k): v for k, v in core_sizes(truth).items()}
        out["per_node"] = np.asarray(core_numbers, dtype=np.float64)
        return out

    def edge_budget(self, epsilon: float, public: Any) -> str:
        # every release is a function of the node's whole neighbourhood: an edge enters both ends'
        return f"per edge: eps_paper {2.0 * epsilon:.4g} (the paper's LEDP: both endpoints)"


@register
class KCoreReference(CoreNumbersHooks, Protocol):
    """``kcore-reference``: k-CoreD as the authors' code runs it (:func:`reference_kcore`), simulated only.

    The plan shows a node's spending: the degree at ε₁/2 = 0.8 ε and the level moves at
    ε₂/2 = 0.2 ε over its at most t_v rounds (ε_paper = 2ε, split f = 0.8).

    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> p = KCoreReference()
    >>> p.simulate(g, p.plan(1.0), "core_numbers", 2, np.random.default_rng(0)).shape
    (2,)
    """

    name = "kcore-reference"
    statistics = ("core_numbers",)
    needs = "adjacency"
    deployable = False
    not_deployable = "the reference algorithm is simulated only (kcore-hindex deploys)"
    reference = ("Mundra, Papamanthou, Shun, Liu, PVLDB (arXiv 2506.20828), k-CoreD as in "
                 "algorithms/kcore-ldp.go")
    extra_rounds = 1  # the degree round
    #: the code's level growth psi and degree share f
    PSI, FACTOR = 0.5, 0.8

    def plan(self, epsilon: float, **public: Any) -> Plan:
        self.check_public(public)
        eps = check_epsilon(epsilon)
        f = self.FACTOR
        rounds = (RoundPlan(1, "degree", (Release(("degree",), "dlap", f * eps, 1.0),)),
                  RoundPlan(2, "levels", (Release(("level_move",), "dlap", round(1.0 - f, 12) * eps, 1.0),),
                            repeats="eps_2 / (2 t_v) per round, at most t_v rounds"))
        return Plan(self.name, self.version, eps, rounds, {"psi": self.PSI, "factor": f})

    def rounds(self) -> tuple[Round, ...]:
        return ()

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Any:
        raise NotImplementedError(self.not_deployable)

    def run(self, graph: Any, plan: Any, rng: np.random.Generator) -> KCoreRun:
        pub = plan.public
        return reference_kcore(graph, plan.epsilon, psi=pub["psi"], factor=pub["factor"], rng=rng)

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """A bit per level round up (at most 2 per threshold group), the levels (a bit per node) down."""
        n = max(graph.n_nodes, 2)
        rounds = math.ceil(math.log(n) / math.log1p(plan.public["psi"])) * 2
        return rounds / 8.0, n * rounds / 8.0
