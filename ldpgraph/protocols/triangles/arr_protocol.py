r"""``arr-triangles`` on the protocol layer: ARR with sampling and double clipping, deployable.

The deployed form of :mod:`ldpgraph.protocols.triangles.arr_kernels`, whose kernels are its fast simulator
(:func:`~ldpgraph.protocols.triangles.arr_kernels.simulate_arr`: the same law, tested) and, without
clipping, its exact moments (:func:`~ldpgraph.protocols.triangles.arr_kernels.arr_moments`); every ε, μ, β,
α and bound from the plan.

================ =============================================================================
round            node v releases
================ =============================================================================
1 ``arr``        ``rr_count``/``rr_edge``: randomized response at ε₁ on its lower adjacency bits,
                 then each reported 1 kept with probability μ (a post-processing: the reported
                 partners are the ARR graph's edges of v); with clipping also ``lower_degree``:
                 :math:`\tilde d_v = d^-_v + \mathrm{DLap}(e^{-\varepsilon_0})` (sensitivity 1)
broadcast        the ARR graph, n, ε₁, μ, β, and what each node's public bound derives from: with
                 clipping the noisy lower degrees and the margin α (:math:`D_v = \max(\tilde d_v
                 + \alpha, 1)`, :math:`\kappa_v = \kappa(D_v)`,
                 :func:`~ldpgraph.protocols.triangles.arr_kernels.triangle_clip_bound`); without, the
                 public D (``d_max``); a run id (:class:`ARRBroadcast`; file form: the packed noisy
                 bits of :mod:`ldpgraph.protocols.edge_broadcast` with these keys in its header)
2 ``local-count`` ``local_count``: :math:`r_v` of :func:`~ldpgraph.protocols.triangles.arr_kernels.
                 arr_count_release` (a uniform :math:`D_v`-subset of the lower list, the ARR
                 triangles among it clipped at :math:`\kappa_v` per neighbour, randomized rounding,
                 DLap at :math:`\Delta_v` = :func:`~ldpgraph.protocols.triangles.arr_kernels.arr_sensitivity`
                 :math:`(D_v, \kappa_v, \mu q)`, written per row); and the run id
================ =============================================================================

Curator: :math:`\hat T = \sum_v r_v / (\mu(p - q))` (exact integer sum). With clipping it is
biased downward by at most :func:`~ldpgraph.protocols.triangles.arr_kernels.arr_clipping_bias_bound` and
no unbiased variance estimate exists: the estimate has no standard error and says why
(``Estimate.note``). Without clipping it is unbiased, and its variance
:math:`[\sum_{j<k} (c^+_{jk})^2 \mu\pi_{jk}(1-\mu\pi_{jk}) + \sum_v f_v(1-f_v) + n\sigma^2]/(\mu(p-q))^2`
(:func:`~ldpgraph.protocols.triangles.arr_kernels.arr_moments`) is estimated by
:math:`[v_{\max} \hat C + n/4 + n\sigma^2]/(\mu(p-q))^2` with :math:`v_{\max} = \max(\mu p(1-\mu p),
\mu q(1-\mu q))` and :math:`\hat C` the unbiased estimate of :math:`\sum (c^+_{jk})^2` from the ARR
graph (:func:`~ldpgraph.protocols.deploy_triangles.lower_wedge_square_estimate` with the ARR
probabilities): unbiased for an upper bound of the variance (exactly the two-round estimate at
μ = 1, where both bit variances are pq).

Privacy (proofs in :mod:`ldpgraph.protocols.triangles.arr_kernels`): ε₀ on the lower degree, ε₁ on the
bits (thinning is post-processing), ε₂ on the count at the sensitivity Δ_v, which is a function
of public values (the broadcast): the node is (ε₀ + ε₁ + ε₂)-edge-LDP. Default split as the
simulator: ε₀ = ε/10, ε₁ = ε₂ = 0.45 ε with clipping; ε₁ = ε₂ = ε/2 without.

Communication: the broadcast holds about μ times the noisy edges of the two-round protocol's.

Examples
--------
>>> ARRTrianglesProtocol().plan(1.0).describe()
'epsilon 1 = arr 0.45 + degree-bound 0.1 + local-count 0.45'
>>> ARRTrianglesProtocol().plan(1.0, clipping=False, d_max=4).budget()
{'arr': 0.5, 'local-count': 0.5}
>>> from ldpgraph.graph import from_edge_array
>>> from ldpgraph.run import run_in_memory
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> run = run_in_memory("arr-triangles", g, 200.0, sampler=0, mu=1.0)
>>> round(run.estimate.value, 6), run.estimate.std_error is None
(1.0, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon, check_nonnegative_int
from ...core.plan import Plan, Release, RoundPlan
from ...core.protocol import Accumulator, Option, Preset, Round
from ...core.rows import Rows
from ...core.sampling import Sampler
from ...mechanisms import DiscreteLaplace
from ..curator import Estimate
from ..deploy_triangles import (
    DEGREE,
    LOCAL_COUNT,
    LOWER_DEGREE,
    RR_COUNT,
    RR_EDGE,
    RUN_ID,
    TriangleBroadcast,
    broadcast_run_id,
    lower_wedge_square_estimate,
)
from ..randomized_response import expected_noisy_edges, noisy_graph_bits, upper_pairs
from ..registry import register
from ..reports import PROTOCOLS
from .arr_kernels import (
    ARR_BYTES_PER_WEDGE,
    DEFAULT_BETA,
    DEFAULT_MU,
    arr_probabilities,
    arr_sensitivity,
    clipped_triangle_count,
    degree_margin,
    triangle_clip_bound,
)
from .rr_triangles import (
    DEGREE_SHARE,
    RandomizedResponseRound,
    TriangleSimulation,
    split_with_degree,
    transitivity_release_estimate,
)
from .two_round import LocalCountAccumulator, RRBroadcastProtocol, max_lower_degree, round_two_rows

__all__ = ["ARR_PROTOCOL", "ARRBroadcast", "ARRTrianglesProtocol", "arr_local_count", "arr_estimate"]

ARR_PROTOCOL = "arr-triangles"
# the curator's variance estimate is dense in the nodes (as the two-round protocol's)
_DENSE_MAX_NODES = 8192


@dataclass(frozen=True, eq=False)
class ARRBroadcast(TriangleBroadcast):
    """What the curator sends after round 1 of ``arr-triangles``: the ARR graph and the public inputs
    of every node's bounds (see the module docstring).

    ``bound`` is the largest :math:`D_v` (shown by the CLI); :attr:`bounds`, :attr:`kappas` and
    :attr:`node_sensitivities` are per node.
    """

    mu: float = DEFAULT_MU
    beta: float = DEFAULT_BETA
    clipping: bool = True
    alpha: int | None = None
    d_max: int | None = None
    lower_degrees: NDArray[np.int64] | None = field(default=None, repr=False)

    @classmethod
    def build_arr(cls, n_nodes: int, epsilon: float, index: Any, *, mu: float, beta: float, clipping: bool,
                  alpha: int | None = None, d_max: int | None = None,
                  lower_degrees: Any = None) -> ARRBroadcast:
        """The broadcast with its run id (``index`` sorted, distinct pair indices of the ARR graph)."""
        idx = np.asarray(index, dtype=np.int64)
        low = None if lower_degrees is None else np.asarray(lower_degrees, dtype=np.int64)
        if clipping and (low is None or low.size != n_nodes or alpha is None):
            raise ValueError("arr-triangles with clipping broadcasts every node's noisy lower degree and "
                             "alpha")
        if not clipping and d_max is None:
            raise ValueError("arr-triangles without clipping broadcasts the public bound d_max")
        head = _header(n_nodes, epsilon, idx.size, mu, beta, clipping, alpha, d_max, low)
        bounds = _bounds(n_nodes, clipping, alpha, d_max, low)
        return cls(ARR_PROTOCOL, int(n_nodes), float(epsilon), int(bounds.max(initial=1)), idx,
                   broadcast_run_id(head, idx), False, float(mu), float(beta), bool(clipping),
                   alpha, d_max, low)

    def header(self) -> dict[str, Any]:
        out = _header(self.n_nodes, self.epsilon, self.index.size, self.mu, self.beta, self.clipping,
                      self.alpha, self.d_max, self.lower_degrees)
        out["run_id"] = self.run_id
        return out

    @cached_property
    def bounds(self) -> NDArray[np.int64]:
        """:math:`D_v` of every node."""
        return _bounds(self.n_nodes, self.clipping, self.alpha, self.d_max, self.lower_degrees)

    @cached_property
    def kappas(self) -> NDArray[np.int64] | None:
        """:math:`\\kappa_v = \\kappa(D_v)` of every node (None without clipping)."""
        if not self.clipping:
            return None
        return triangle_clip_bound(self.bounds, self.mu * self.p, self.beta)

    @cached_property
    def node_sensitivities(self) -> NDArray[np.float64]:
        """:math:`\\Delta_v` of every node's ``local_count``."""
        return arr_sensitivity(self.bounds, self.kappas, self.mu * self.q).astype(np.float64)

    def sensitivities(self) -> dict[str, Any]:
        """The sensitivity of every round-2 quantity (``local_count``: per node)."""
        return {LOCAL_COUNT: self.node_sensitivities, RUN_ID: 0.0}


def _arr_moments_scaled(pt: Any, n: int, plan: Plan) -> tuple[float, float]:
    """:func:`~ldpgraph.protocols.triangles.arr_kernels.arr_moments` (no clipping, nothing projected) from
    the graph's :class:`~ldpgraph.protocols.triangles.kernels.WedgePatterns`: the same formula."""
    eps1, eps2, mu = plan.release(RR_COUNT).epsilon, plan.release(LOCAL_COUNT).epsilon, plan.public["mu"]
    pe, pn = arr_probabilities(eps1, mu)
    pi = np.where(pt.group_edge, pe, pn)
    bits = float(np.dot(pt.group_c * pt.group_c * pt.group_size, pi * (1.0 - pi)))
    dl = pt.lower_degrees.astype(np.float64)
    x = -pn * (dl * (dl - 1) / 2)
    f = x - np.floor(x)
    sigma2 = DiscreteLaplace(epsilon=eps2,
                             sensitivity=int(arr_sensitivity(plan.public["d_max"], None, pn))).variance
    return pt.triangles, (bits + math.fsum(f * (1 - f)) + n * sigma2) / (pe - pn) ** 2


def _bounds(n: int, clipping: bool, alpha: int | None, d_max: int | None, low: Any) -> NDArray[np.int64]:
    if clipping:
        return np.maximum(np.asarray(low, dtype=np.int64) + int(alpha), 1)
    return np.full(int(n), max(int(d_max), 1), dtype=np.int64)


def _header(n: int, epsilon: float, n_edges: int, mu: float, beta: float, clipping: bool, alpha: Any,
            d_max: Any, low: Any) -> dict[str, Any]:
    return {
        "protocol": ARR_PROTOCOL,
        "protocol_version": PROTOCOLS[ARR_PROTOCOL],
        "round": 1,
        "n_nodes": int(n),
        "epsilon": float(epsilon),
        "n_edges": int(n_edges),
        "mu": float(mu),
        "beta": float(beta),
        "clipping": bool(clipping),
        "alpha": None if alpha is None else int(alpha),
        "d_max": None if d_max is None else int(d_max),
        "lower_degrees": None if low is None else [int(x) for x in low.tolist()],
    }


def decode_arr_broadcast(data: bytes, source: str = "broadcast") -> ARRBroadcast:
    """Decode and check an ``arr-triangles`` broadcast (the noisy graph and its header); errors name
    ``source`` (the file)."""
    from ..edge_broadcast import decode_edge_broadcast

    path = source
    header, index, run_id = decode_edge_broadcast(data, {ARR_PROTOCOL: PROTOCOLS[ARR_PROTOCOL]}, source)
    n = header["n_nodes"]

    def bad(key: str, want: str) -> ValueError:
        return ValueError(f"{path} line 2: {key} must be {want}, got {header.get(key)!r}")

    clipping = header.get("clipping")
    if not isinstance(clipping, bool):
        raise bad("clipping", "true or false")
    for key, lo, hi in (("mu", 0.0, 1.0), ("beta", 0.0, 1.0)):
        x = header.get(key)
        if (isinstance(x, bool) or not isinstance(x, (int, float)) or not (lo < x <= hi)
                or (key == "beta" and x == 1)):
            raise bad(key, f"a number in ({lo:g}, {hi:g}{']' if key == 'mu' else ')'}")
    low, alpha, d_max = header.get("lower_degrees"), header.get("alpha"), header.get("d_max")
    if clipping:
        if isinstance(alpha, bool) or not isinstance(alpha, int) or alpha < 0:
            raise bad("alpha", "a non-negative integer")
        if (not isinstance(low, list) or len(low) != n
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in low)):
            raise bad("lower_degrees", f"a list of {n} integers")
        low = np.asarray(low, dtype=np.int64)
    elif isinstance(d_max, bool) or not isinstance(d_max, int) or d_max < 1:
        raise bad("d_max", "a positive integer (no clipping: the public bound)")
    return ARRBroadcast.build_arr(n, header["epsilon"], index, mu=header["mu"], beta=header["beta"],
                                  clipping=clipping, alpha=alpha if clipping else None,
                                  d_max=None if clipping else d_max, lower_degrees=low if clipping else None)


def arr_local_count(node: int, neighbours: NDArray[np.int64], broadcast: ARRBroadcast, epsilon: float,
                    stream: Any) -> int:
    """Round 2 at node v: the integer :math:`r_v` (see the module docstring), on the node's stream."""
    d = int(broadcast.bounds[node])
    kappa = None if broadcast.kappas is None else int(broadcast.kappas[node])
    lower = neighbours[neighbours < node]
    if lower.size > d:
        lower = stream.subset(lower, d)
    ell = int(lower.size)
    a, b = upper_pairs(ell)
    on = broadcast.noisy_bit(lower[a], lower[b]).astype(bool)
    f = clipped_triangle_count(ell, a[on], b[on], kappa)
    w = f - broadcast.mu * broadcast.q * (ell * (ell - 1) / 2)
    rounded = math.floor(w + float(stream.uniform(1)[0]))
    return rounded + int(stream.dlap(epsilon, float(broadcast.node_sensitivities[node]), 1)[0])


def arr_estimate(values: Any, broadcast: ARRBroadcast, epsilon2: float) -> Estimate:
    r""":math:`\hat T = \sum_v r_v/(\mu(p-q))`; the standard error as in the module docstring, or None
    with the reason in ``note``.

    Examples
    --------
    >>> b = ARRBroadcast.build_arr(3, 60.0, [0, 1, 2], mu=1.0, beta=1e-3, clipping=False, d_max=2)
    >>> est = arr_estimate([0, 0, 1], b, 1.0)
    >>> round(est.value, 6), est.std_error is not None
    (1.0, True)
    """
    b = broadcast
    pe, pn = arr_probabilities(b.epsilon, b.mu)
    value = sum(int(x) for x in np.asarray(values, dtype=np.int64).tolist()) / (pe - pn)
    if b.clipping:
        return Estimate(value, None, None, "triangles", note=(
            "arr-triangles clips (the private bounds D_v and kappa_v): the estimate is biased downward "
            "by at most arr_clipping_bias_bound and has no unbiased variance estimate; without clipping "
            "(--no-clipping --d-max D) it has one"))
    if b.n_nodes > _DENSE_MAX_NODES:
        return Estimate(value, None, None, "triangles", note=(
            f"the variance estimate is dense in the nodes and is not computed for {b.n_nodes:,} nodes "
            f"(beyond {_DENSE_MAX_NODES:,})"))
    c_hat = lower_wedge_square_estimate(b.n_nodes, b.index, b.epsilon, pq=(pe, pn))
    v_max = max(pe * (1.0 - pe), pn * (1.0 - pn))
    noise = DiscreteLaplace(epsilon=epsilon2, sensitivity=float(b.node_sensitivities[0])).variance
    var = (v_max * c_hat + b.n_nodes / 4.0 + b.n_nodes * noise) / (pe - pn) ** 2
    note = None if b.mu == 1.0 else ("the variance estimate is unbiased for an upper bound (the larger bit "
                                     "variance on every pair, and n/4 for the rounding): conservative")
    return Estimate(value, math.sqrt(max(var, 0.0)), var, "triangles", note=note,
                    se_kind="unbiased" if b.mu == 1.0 else "upper-bound")


class _ARRRound(RandomizedResponseRound):
    """Round 1: randomized response, the 1s thinned with probability μ, and the noisy lower degree."""

    name = "arr"

    def thin(self, plan: Plan, partners: NDArray[np.int64], stream: Any) -> NDArray[np.int64]:
        mu = plan.public["mu"]
        if mu == 1.0:
            return partners
        return partners[stream.uniform(partners.size) < mu]

    def broadcast(self, result: Any, plan: Plan) -> ARRBroadcast:
        pub = plan.public
        if pub["clipping"] and result.lower_degrees is None:
            raise ValueError("arr-triangles needs every node's lower_degree release for its bound D_v: "
                             "curate round 1 with --outliers clip or raise (not reject)")
        return ARRBroadcast.build_arr(result.n_nodes, result.epsilon, result.index, mu=pub["mu"],
                                      beta=pub["beta"], clipping=pub["clipping"], alpha=pub["alpha"],
                                      d_max=pub["d_max"], lower_degrees=result.lower_degrees)


class _LocalCountRound(Round):
    number = 2
    name = "local-count"

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        b = _check_broadcast(broadcast, plan)
        eps2 = plan.release(LOCAL_COUNT).epsilon
        if plan.public["degree_share"] is None:
            rows = round_two_rows(plan, nodes, neighbours, b, sampler, (LOCAL_COUNT,),
                                  lambda v, nb, s: (arr_local_count(v, nb, b, eps2, s),))
        else:  # transitivity: the degree too, after the count's draws
            eps_d = plan.release(DEGREE).epsilon
            rows = round_two_rows(plan, nodes, neighbours, b, sampler, (LOCAL_COUNT, DEGREE),
                                  lambda v, nb, s: (arr_local_count(v, nb, b, eps2, s),
                                                    nb.size + int(s.dlap(eps_d, 1.0, 1)[0])))
        at = rows["quantity"] == LOCAL_COUNT
        rows["sensitivity"][at] = b.node_sensitivities[rows["node"][at]]
        return rows

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> Accumulator:
        return LocalCountAccumulator(plan, _check_broadcast(broadcast, plan), **options)


def _check_broadcast(broadcast: Any, plan: Plan) -> ARRBroadcast:
    if not isinstance(broadcast, ARRBroadcast):
        raise TypeError(f"round 2 of arr-triangles needs its round-1 broadcast, got "
                        f"{type(broadcast).__name__}")
    pub, eps1, b = plan.public, plan.release(RR_COUNT).epsilon, broadcast
    want = (eps1, pub["mu"], pub["beta"], pub["clipping"], pub["alpha"], pub["d_max"])
    got = (b.epsilon, b.mu, b.beta, b.clipping, b.alpha, b.d_max)
    if want != got:
        raise ValueError(f"the broadcast (epsilon_arr, mu, beta, clipping, alpha, d_max = {got}) was not "
                         f"made under the plan ({plan.describe()}: {want}): use the --epsilon and options "
                         "of round 1")
    return broadcast


@register
class ARRTrianglesProtocol(TriangleSimulation, RRBroadcastProtocol):
    """``arr-triangles`` (see the module docstring). Biased with clipping (the default: no closed
    form, :func:`~ldpgraph.protocols.triangles.arr_kernels.arr_clipping_bias_bound` bounds the bias).

    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> p = ARRTrianglesProtocol()
    >>> plan = p.plan(60.0, mu=1.0, clipping=False, d_max=2)
    >>> p.simulate(g, plan, "triangles", 2, np.random.default_rng(0)).tolist()
    [1.0, 1.0]
    >>> p.moments(g, plan, "triangles")[0]
    1.0
    >>> p.moments(g, p.plan(1.0), "triangles")
    (None, None)
    """

    name = ARR_PROTOCOL
    version = 1
    statistics = ("triangles", "transitivity")
    needs = "adjacency"
    reference = "Imola, Murakami, Chaudhuri, USENIX Security 2022 (ARROneNS, double clipping)"
    presets = (Preset(ARR_PROTOCOL, no_std_error="its clipping (the noisy lower degree D_v and kappa_v per "
                      "neighbour) makes the estimate a non-linear function of the noisy graph with no "
                      "closed-form variance; 'ldpgraph experiment' measures its RMSE over trials"),)
    unbiased = False  # with clipping, its default
    bytes_per_wedge = ARR_BYTES_PER_WEDGE
    options = (
        Option("mu", float, DEFAULT_MU, "ARR sampling probability in (0, 1]: each reported 1 is kept with "
               "probability mu (the download is about mu times the two-round protocol's)"),
        Option("beta", float, DEFAULT_BETA, "clipping failure probability (of the degree bound per node, of "
               "kappa per neighbour)"),
        Option("clipping", bool, True, "double clipping with private per-node bounds D_v (lower_degree "
               "share); without it (--no-clipping) the public bound d_max, unbiased"),
        Option("d_max", int, None, "without clipping: public bound D on every node's lower degree "
               "(simulation default: the true maximum lower degree)"),
        Option("shares", dict, None, "budget split lower_degree=F,arr=F,local_count=F (default 0.1, 0.45, "
               "0.45); without clipping arr=F,local_count=F (default 0.5 each)"),
        DEGREE_SHARE,
    )

    def default_public(self, graph: Any, public: Any) -> dict[str, Any]:
        """Without clipping, the benchmark's public bound: the true maximum lower degree (at least 1)."""
        return {} if public.get("clipping", True) else {"d_max": max_lower_degree(graph)}

    def placeholder_public(self, public: Any = None) -> dict[str, Any]:
        """Without clipping a public D (it does not move the split); none with clipping."""
        return {"d_max": 2} if (public or {}).get("clipping") is False else {}

    def prepare_patterns(self, graph: Any, patterns: Any) -> None:
        """Clipping (the default) streams every trial: the wedges' edge flags, not the groups (computed
        on first use without clipping)."""
        from .kernels import _wedge_edges

        _wedge_edges(graph, patterns)

    def simulate_triangles(self, graph: Any, plan: Plan, n_trials: int, rng: Any) -> NDArray[np.float64]:
        """:func:`~ldpgraph.protocols.triangles.arr_kernels.simulate_arr` with the plan's budgets and
        bounds."""
        from .arr_kernels import simulate_arr, simulate_arr_scaled

        pub, clipping = plan.public, plan.public["clipping"]
        eps1, eps2 = plan.release(RR_COUNT).epsilon, plan.release(LOCAL_COUNT).epsilon
        args = {"eps0": plan.release(LOWER_DEGREE).epsilon if clipping else None, "mu": pub["mu"],
                "beta": pub["beta"], "alpha": pub["alpha"], "bound": None if clipping else pub["d_max"],
                "rng": rng}
        if self.uses_table(graph):
            return simulate_arr(graph, eps1, eps2, n_trials, wedges=self.lower_wedges(graph),
                                max_bytes=self.max_bytes, **args)
        return simulate_arr_scaled(graph, eps1, eps2, n_trials, patterns=self.wedge_patterns(graph), **args)

    def triangle_moments(self, graph: Any, plan: Plan) -> tuple[float | None, float | None]:
        """:func:`~ldpgraph.protocols.triangles.arr_kernels.arr_moments` without clipping (and no
        projection)."""
        from .arr_kernels import arr_moments

        if plan.public["clipping"] or plan.public["d_max"] < max_lower_degree(graph):
            return None, None
        if not self.uses_table(graph):
            return _arr_moments_scaled(self.wedge_patterns(graph), graph.n_nodes, plan)
        return arr_moments(graph, plan.release(RR_COUNT).epsilon, plan.release(LOCAL_COUNT).epsilon,
                           mu=plan.public["mu"], bound=plan.public["d_max"], wedges=self.lower_wedges(graph))

    def triangle_bytes(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """The upload as the two-round protocol's; the download about mu times its noisy graph."""
        n = graph.n_nodes
        arr_edges = plan.public["mu"] * expected_noisy_edges(n, graph.n_edges, plan.release(RR_COUNT).epsilon)
        up = (n - 1) / 16.0 + (16.0 if plan.public["clipping"] else 8.0)
        return up, noisy_graph_bits(n, arr_edges) / 8.0

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        d_max, shares = pub["d_max"], pub["shares"]
        mu, beta = _unit(pub["mu"], "mu", closed=True), _unit(pub["beta"], "beta", closed=False)
        clipping = bool(pub["clipping"])
        if clipping:
            default = {"lower_degree": 0.1, "arr": 0.45, "local_count": 0.45}
            if d_max is not None:
                raise ValueError(f"{self.name}: with clipping every node's bound D_v comes from round 1; a "
                                 f"public d_max ({d_max}) goes with --no-clipping")
        else:
            default = {"arr": 0.5, "local_count": 0.5}
            if d_max is None:
                raise ValueError(f"{self.name} without clipping needs the public bound d_max (--d-max) "
                                 "on the lower degree")
            d_max = check_nonnegative_int(d_max, "d_max", minimum=1)
        shares = shares or default
        if sorted(shares) != sorted(default):
            raise ValueError(f"shares of {self.name}{'' if clipping else ' (no clipping)'}: "
                             f"{', '.join(f'{k}=F' for k in default)}, got {shares}")
        eps = split_with_degree(check_epsilon(epsilon), shares, pub["degree_share"])
        first = [Release((RR_COUNT, RR_EDGE), "randomized-response", eps["arr"], 1.0, name="arr")]
        alpha = None
        if clipping:
            first.append(Release((LOWER_DEGREE,), "dlap", eps["lower_degree"], 1.0, name="degree-bound"))
            alpha = degree_margin(eps["lower_degree"], beta)
            sens = math.nan  # per node: Delta_v from the broadcast
        else:
            sens = float(arr_sensitivity(d_max, None, mu * (1.0 - _keep(eps["arr"]))))
        second = [Release((LOCAL_COUNT, RUN_ID), "dlap", eps["local_count"],
                          {LOCAL_COUNT: sens, RUN_ID: 0.0}, name="local-count")]
        if "degree" in eps:
            second.append(Release((DEGREE,), "dlap", eps["degree"], 1.0, name="degree"))
        return Plan(self.name, self.version, epsilon,
                    (RoundPlan(1, "arr", tuple(first)), RoundPlan(2, "local-count", tuple(second))),
                    {"mu": mu, "beta": beta, "clipping": clipping, "alpha": alpha, "d_max": d_max,
                     "degree_share": pub["degree_share"]})

    def rounds(self) -> tuple[Round, ...]:
        return (_ARRRound(), _LocalCountRound())

    def check_broadcast(self, broadcast: Any, plan: Plan) -> ARRBroadcast:
        return _check_broadcast(broadcast, plan)

    def decode_broadcast(self, data: bytes, plan: Plan, *, source: str = "broadcast") -> Any:
        return _check_broadcast(decode_arr_broadcast(data, source), plan)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Estimate:
        self.check_statistic(statistic)
        b = _check_broadcast(broadcast, plan)
        tri = arr_estimate(result.values()[LOCAL_COUNT], b, plan.release(LOCAL_COUNT).epsilon)
        if statistic == "transitivity":
            return transitivity_release_estimate(tri, result.values().get(DEGREE), plan)
        return tri

    def describe_result(self, result: Any, round: Round) -> list[str]:
        if round.number == 1:
            lines = [f"rr_edge    epsilon {result.epsilon:g}, thinned: ARR graph of "
                     f"{result.index.size:,} edges"]
            if result.max_lower_degree is not None:
                lines.append(f"lower_degree epsilon {result.lower_degree_epsilon:g}; each node's bound "
                             "D_v = max(its noisy lower degree + alpha, 1); the largest noisy lower degree "
                             f"is {result.max_lower_degree}")
            return lines
        b = result.broadcast
        what = ("per node, Delta_v = arr_sensitivity(D_v, kappa_v, mu q): "
                f"{int(b.node_sensitivities.min())}..{int(b.node_sensitivities.max())}") if b.clipping else (
            f"{b.node_sensitivities[0]:g} (D - 1)")
        lines = [f"local_count sensitivity {what}; not screened for outliers (no admissible range for "
                 "arr-triangles yet)"]
        if DEGREE in result.sensitivity:
            lines.append("degree     rows (for transitivity) not screened for outliers")
        return lines

    def screening(self, result: Any, round: Round) -> dict[str, Any]:
        return dict(result.screening) if round.number == 1 else {}

    def one_node_bounds(self, result: Any, plan: Plan, round: Round) -> dict[str, float]:
        return {}


def _keep(epsilon: float) -> float:
    from ..randomized_response import keep_probability

    return keep_probability(epsilon)


def _unit(x: Any, name: str, *, closed: bool) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {type(x).__name__}") from None
    if not (0.0 < v < 1.0 or (closed and v == 1.0)):
        raise ValueError(f"{name} must be in (0, 1{']' if closed else ')'}, got {x!r}")
    return v
