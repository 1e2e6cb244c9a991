r"""Wedge shuffling that ignores pairs with a low-degree user (WShuffle with a noisy-degree threshold).

The reference's best shuffle-model triangle method (Imola, Murakami, Chaudhuri, CCS 2022, Alg.
"wedge + ignore, noisy degree threshold"). Budget: ε_D = ``degree_share`` ε (default 0.1) on a
noisy degree, the rest ε' = (1 - share) ε on wedge shuffling (:mod:`ldpgraph.protocols.shuffle.wedge_shuffle`,
local ε₀ from ε' by amplification); a node spends ε_D + ε' = ε (sequential composition), so the
run is (ε, δ)-DP per adjacency bit.

================ =============================================================================
round            node v releases
================ =============================================================================
1 ``degree``     :math:`\tilde d_v = d_v + \eta_v`, :math:`\eta_v \sim \mathrm{DLap}(e^{-\varepsilon_D})`
                 (the reference draws continuous Laplace(1/ε_D); ldpgraph simulates what it
                 deploys, DLap, so that one name is one law); not shuffled
broadcast        the threshold :math:`\theta = c \cdot \mathrm{mean}_v \tilde d_v` (``threshold`` c,
                 default 1) and the *dense* users :math:`\tilde d_v > \theta`; a pair is kept when
                 both its users are dense
2 ``wedge-shuffle`` wedge bits (and the pair's edge bits) for the kept pairs only, shuffled
================ =============================================================================

Estimate: :math:`\hat T = \frac{n(n-1)}{6P}\sum_{p \in M,\ \text{kept}} u_p v_p` (the pairs of
the matching M that are kept contribute their unbiased term, the others nothing). Biased
downwards by the triangles of the dropped pairs, :math:`E = \frac{n(n-1)}{6P}\pi \sum_{e} s_e a_e
t_e`, :math:`s_e = s_i s_j` the probabilities that both users are dense; it pays off because
each dropped pair removes its pure-noise term :math:`\sigma_u^2\sigma_v^2`.
:meth:`WedgeShuffleIgnore.moments` gives the mean and variance given the others' noise (the users
dense independently given it), mixed over its law: an approximation of order 1/n.

Examples
--------
>>> WedgeShuffleIgnore().plan(1.0, n_users=4039, pairing_seed=1).describe(guarantee=False)
'epsilon 1 = degree 0.1 + wedge-shuffle 0.9'
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon, check_nonnegative_int, check_rng
from ...core.plan import Plan, Release, RoundPlan, ShuffleGuarantee
from ...core.protocol import Accumulator, Option, Preset, Protocol, Round
from ...core.rows import Rows, empty_rows, quantity_rows
from ...core.sampling import Sampler
from ..curator import Estimate
from ..randomized_response import flip_probability
from ..registry import register
from ..reports import json_int, json_ints, json_number, parse_json
from .wedge_shuffle import (
    ACCOUNTINGS,
    DEFAULT_DELTA,
    PAIR_EDGE,
    SENDER,
    WEDGE,
    WedgeCountAccumulator,
    WedgeCounts,
    WedgeShuffleRound,
    _local_epsilon,
    _matching_constants,
    _scale,
    codegree_sums,
    pair_lookup,
    pair_terms,
    public_pairing,
    received_line,
    wedge_round_plan,
)

__all__ = ["WedgeShuffleIgnore", "WedgeShuffleIgnoreRR", "DenseBroadcast", "NoisyDegrees",
           "keep_probabilities"]

DEGREE = "degree"


@dataclass(frozen=True)
class DenseBroadcast:
    """After round 1: the threshold and which users are dense (public)."""

    protocol: str
    n_nodes: int
    threshold: float
    dense: NDArray[np.bool_]
    run_id: int

    @property
    def index(self) -> NDArray[np.int64]:
        """The dense users' ids, sorted (what the file form lists)."""
        return np.flatnonzero(self.dense).astype(np.int64)

    @property
    def bound(self) -> float:
        """The threshold (what the CLI prints as the broadcast's bound)."""
        return self.threshold

    @property
    def what(self) -> str:
        """What the broadcast holds, for the CLI's lines."""
        return (f"the {int(self.dense.sum()):,} dense users (noisy degree above the threshold "
                f"{self.threshold:.6g})")

    def kept_pairs(self, pairs: NDArray[np.int64]) -> NDArray[np.bool_]:
        return self.dense[pairs[:, 0]] & self.dense[pairs[:, 1]]


@dataclass(frozen=True)
class NoisyDegrees:
    """Round 1's result: every user's noisy degree."""

    values: NDArray[np.int64]
    n_rows: int

    @property
    def n_nodes(self) -> int:
        return int(self.values.size)


class _DegreeAccumulator(Accumulator):
    """Round 1: the noisy degrees, one per user 0..n-1 (duplicates, strangers and gaps refused)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        n = plan.public["n_users"]
        self.values = np.zeros(n, dtype=np.int64)
        self.seen = np.zeros(n, dtype=np.int64)

    def add(self, chunk: Any) -> None:
        if len(chunk) == 0:
            return
        n = self.values.size
        names = {chunk.quantity_names[c] for c in np.unique(chunk.quantity)}
        protos = {chunk.protocol_names[c] for c in np.unique(chunk.protocol)}
        if names != {DEGREE} or protos != {self.plan.protocol} or np.any(chunk.round != 1):
            raise ValueError(f"{chunk.source}: round 1 of {self.plan.protocol} has {DEGREE!r} rows only, got "
                             f"{sorted(names)} of {sorted(protos)}")
        bad = np.flatnonzero(chunk.epsilon != self.plan.release(DEGREE).epsilon)
        if bad.size:
            raise ValueError(f"{chunk.where(bad[0])}: degree released at epsilon {chunk.epsilon[bad[0]]!r}, "
                             f"the plan ({self.plan.describe()}) has {self.plan.release(DEGREE).epsilon!r}")
        out = np.flatnonzero((chunk.node < 0) | (chunk.node >= n))
        if out.size:
            raise ValueError(f"{chunk.where(out[0])}: node {int(chunk.node[out[0]])} outside 0..{n - 1}")
        np.add.at(self.seen, chunk.node, 1)
        np.add.at(self.values, chunk.node, chunk.value)

    def merge(self, other: _DegreeAccumulator) -> _DegreeAccumulator:
        self.values += other.values
        self.seen += other.seen
        return self

    def result(self) -> NoisyDegrees:
        wrong = np.flatnonzero(self.seen != 1)
        if wrong.size:
            v = int(wrong[0])
            raise ValueError(f"node {v} sent {int(self.seen[v])} degree rows (one expected from each of the "
                             f"{self.values.size} users)")
        return NoisyDegrees(self.values.copy(), int(self.seen.sum()))


class _DegreeRound(Round):
    number = 1
    name = "degree"

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        nodes = np.asarray(nodes, dtype=np.int64)
        if nodes.size == 0:
            return empty_rows(plan, 1)
        eps = plan.release(DEGREE).epsilon
        vals = [len(nb) + int(sampler.stream(1, int(v)).dlap(eps, 1.0, 1)[0])
                for v, nb in zip(nodes.tolist(), neighbours, strict=True)]
        return quantity_rows(plan, 1, nodes, DEGREE, vals)

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> _DegreeAccumulator:
        return _DegreeAccumulator(plan)

    def broadcast(self, result: Any, plan: Plan) -> DenseBroadcast:
        return dense_broadcast(plan, result.values)


def dense_broadcast(plan: Plan, noisy_degrees: NDArray[np.int64]) -> DenseBroadcast:
    """θ = c · mean of the noisy degrees; dense: noisy degree > θ; a run id from their bytes."""
    theta = plan.public["threshold"] * float(np.mean(noisy_degrees))
    dense = np.asarray(noisy_degrees) > theta
    return DenseBroadcast(plan.protocol, int(dense.size), theta, dense, _run_id(dense, theta))


def _run_id(dense: NDArray[np.bool_], theta: float) -> int:
    """First 48 bits of the SHA-256 of the dense flags and the threshold."""
    digest = hashlib.sha256(np.packbits(dense).tobytes() + repr(theta).encode()).digest()
    return int.from_bytes(digest[:6], "big")


class _KeptWedgeRound(WedgeShuffleRound):
    """Round 2: the wedge-shuffle release restricted to the kept pairs (the others send nothing)."""

    number = 2

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Any, broadcast: Any,
                sampler: Sampler) -> Rows:
        _check(broadcast, plan)
        rows = super().release(plan, nodes, neighbours, broadcast, sampler)
        kept = broadcast.kept_pairs(public_pairing(plan.public["n_users"], plan.public["pairing_seed"]))
        at = rows["quantity"] == SENDER  # every sender's token, and its rows of the kept pairs
        at[~at] = kept[rows["value"][~at]]
        return {k: v[at] for k, v in rows.items()}

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> Accumulator:
        _check(broadcast, plan)
        return _KeptAccumulator(plan, broadcast)


class _KeptAccumulator(WedgeCountAccumulator):
    def __init__(self, plan: Plan, broadcast: DenseBroadcast) -> None:
        super().__init__(plan, True, 2)
        self.kept = broadcast.kept_pairs(public_pairing(plan.public["n_users"], plan.public["pairing_seed"]))

    def result(self) -> WedgeCounts:
        res = super().result()
        if np.any(res.wedge[~self.kept]) or np.any(res.edge[~self.kept]):
            raise ValueError("rows for pairs the broadcast does not keep: rows of another broadcast?")
        return res


def _check(broadcast: Any, plan: Plan) -> None:
    if not isinstance(broadcast, DenseBroadcast):
        raise TypeError("round 2 needs the round-1 broadcast (a DenseBroadcast), got "
                        f"{type(broadcast).__name__}")
    if broadcast.protocol != plan.protocol or broadcast.n_nodes != plan.public["n_users"]:
        raise ValueError(f"a broadcast of {broadcast.protocol!r} for {broadcast.n_nodes} users, not of "
                         f"{plan.protocol!r} for {plan.public['n_users']}")


def keep_probabilities(degrees: NDArray[np.int64], theta: Any, epsilon_d: float) -> NDArray:
    r""":math:`s_v = \Pr[d_v + \eta > \theta_v]`, η discrete Laplace at ``epsilon_d`` (θ a number or one per
    user)."""
    from ...mechanisms import DiscreteLaplace

    d = np.asarray(degrees, dtype=np.float64)
    k = np.floor(theta - d).astype(np.int64)  # d + eta > theta  <=>  eta >= floor(theta - d) + 1
    return np.asarray(DiscreteLaplace(epsilon=epsilon_d).sf(k), dtype=np.float64)


@register
class WedgeShuffleIgnore(Protocol):
    """``wshuffle-triangles-ignore``: the reference's WShuffle with a noisy-degree threshold."""

    name = "wshuffle-triangles-ignore"
    #: 2: wedge rows carry ε₀, and every sender adds a token row (issue 36)
    version = 2
    statistics = ("triangles",)
    needs = "adjacency"
    model = "shuffle"
    #: a simulation takes n from the graph and draws a fresh pairing per trial
    simulation_draws = ("n_users", "pairing_seed")
    # the ignoring curator needs the public pairing (any seed: a simulation draws its own)
    presets = (Preset("wshuffle-triangles-ignore", {"pairing_seed": 1}),)
    reference = "Imola, Murakami, Chaudhuri, CCS 2022 (WShuffle, ignoring pairs below a noisy average degree)"
    default_accounting = "numerical"
    options = (
        Option("n_users", int, None, "public number of users n (simulation default: the graph's nodes)"),
        Option("pairing_seed", int, None, "public seed of the pairing (needed: the curator keeps pairs; "
               "an in-memory simulation uses seed 0)"),
        Option("delta", float, DEFAULT_DELTA, "central delta of the shuffle-model guarantee (default 1e-8)"),
        Option("accounting", str, None, "amplification bound: numerical, closed-form, binary-rr (ours)"),
        Option("threshold", float, 1.0, "a pair is kept when both noisy degrees exceed threshold x their "
               "mean (default 1)"),
        Option("degree_share", float, 0.1, "share of epsilon spent on the noisy degree (default 0.1)"),
    )

    def default_public(self, graph: Any, public: Any) -> dict[str, Any]:
        return {"n_users": graph.n_nodes, "pairing_seed": 0}

    def placeholder_public(self, public: Any = None) -> dict[str, Any]:
        return {"n_users": 10_000}  # n moves epsilon0, not the split

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        eps = check_epsilon(epsilon)
        if pub["n_users"] is None:
            raise ValueError(f"{self.name} needs the public number of users n_users (--n-users)")
        n = check_nonnegative_int(pub["n_users"], "n_users", minimum=4)
        delta, share, thr = float(pub["delta"]), float(pub["degree_share"]), float(pub["threshold"])
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {pub['delta']!r}")
        if not 0.0 < share < 1.0:
            raise ValueError(f"degree_share must be in (0, 1), got {pub['degree_share']!r}")
        if not (math.isfinite(thr) and thr >= 0):
            raise ValueError(f"threshold must be finite and >= 0, got {pub['threshold']!r}")
        accounting = pub["accounting"] or self.default_accounting
        if accounting not in ACCOUNTINGS[:3]:
            raise ValueError(f"accounting must be one of {', '.join(ACCOUNTINGS[:3])}, got {accounting!r}")
        seed = pub["pairing_seed"]
        if seed is None:
            raise ValueError(f"{self.name}: the curator keeps pairs by the public pairing: give "
                             "--pairing-seed")
        eps_d = eps * share
        eps_w = eps - eps_d
        eps0 = _local_epsilon(eps_w, n, delta, accounting)
        rounds = (RoundPlan(1, "degree", (Release((DEGREE,), "dlap", eps_d, 1.0),)),
                  wedge_round_plan(2, (PAIR_EDGE, WEDGE), eps_w, eps0, True))
        guarantee = ShuffleGuarantee(eps, delta, eps0, n, accounting)
        return Plan(self.name, self.version, eps, rounds, shuffle=guarantee, public={
            "n_users": n, "pairing_seed": check_nonnegative_int(seed, "pairing_seed"),
            "accounting": accounting,
            "local_epsilon": eps0, "edge_epsilon": eps_w, "degree_epsilon": eps_d, "threshold": thr,
            "delta": delta, "central_epsilon": eps, "central_delta": delta, "edge_dp_epsilon": 2 * eps,
            "edge_dp_delta": 2 * delta, "shuffled_users": n - 2})

    def rounds(self) -> tuple[Round, ...]:
        return (_DegreeRound(), _KeptWedgeRound())

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Estimate:
        self.check_statistic(statistic)
        kept = broadcast.kept_pairs(public_pairing(plan.public["n_users"], plan.public["pairing_seed"]))
        terms = np.where(kept, pair_terms(result, _round_plan(plan), "triangles"), 0.0)
        k = _scale(result.n_nodes, "triangles")
        var = k * k * terms.size * float(np.var(terms, ddof=1)) if terms.size > 1 else None
        return Estimate(k * math.fsum(terms.tolist()), None if var is None else math.sqrt(max(var, 0.0)), var,
                        "triangles", "normal", se_kind="sample")

    def encode_broadcast(self, broadcast: Any) -> bytes:
        data = {"protocol": broadcast.protocol, "n_nodes": broadcast.n_nodes,
                "threshold": broadcast.threshold, "run_id": broadcast.run_id,
                "dense": np.flatnonzero(broadcast.dense).tolist()}
        return (json.dumps(data) + "\n").encode()

    def decode_broadcast(self, data: bytes, plan: Plan, *, source: str = "broadcast") -> DenseBroadcast:
        data, where = parse_json(data, source), source
        if not isinstance(data, dict) or set(data) != {"protocol", "n_nodes", "threshold", "run_id", "dense"}:
            raise ValueError(f"{where}: not a {plan.protocol} broadcast (a JSON object of protocol, n_nodes, "
                             "threshold, run_id and dense)")
        n = json_int(data, "n_nodes", where, 1, 2**31)
        index = json_ints(data, "dense", where, 0, n - 1)  # a negative id would wrap: refused
        dense = np.zeros(n, dtype=np.bool_)
        dense[index] = True
        theta = json_number(data, "threshold", where)
        if not isinstance(data["protocol"], str):
            raise ValueError(f"{where}: protocol must be a string")
        b = DenseBroadcast(data["protocol"], n, theta, dense, json_int(data, "run_id", where))
        if _run_id(dense, theta) != b.run_id:
            raise ValueError(f"{where}: the run id {b.run_id} does not match the broadcast's contents "
                             "(edited?)")
        try:
            _check(b, plan)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        return b

    def describe_result(self, result: Any, round: Round) -> list[str]:
        if round.number == 1:
            return [f"degree     {result.n_nodes:,} noisy degrees, mean {float(np.mean(result.values)):.4g}"]
        return [f"pairs      {result.n_pairs:,}; {int(result.wedge.sum()):,} wedge rows, "
                f"{int(result.edge.sum()):,} pair_edge rows", received_line(result)]

    # ---------------------------------------------------------------- simulation hooks

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """A bit per pair of the matching and the 53-bit sender token up; nothing down."""
        return (graph.n_nodes // 2 + 53) / 8.0, 0.0

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: Any = None, *,
                 param: int | None = None) -> NDArray[np.float64]:
        """Trials with a fresh pairing each: DLap noisy degrees (as deployed), the
        dense users, then the counts of the kept pairs from their binomial laws."""
        from ...mechanisms import DiscreteLaplace

        self.check_statistic(statistic)
        gen = check_rng(rng)
        n = graph.n_nodes
        lookup = pair_lookup(graph)
        deg = np.diff(graph.indptr)
        m = n - 2
        rp = _round_plan(plan)
        q1 = flip_probability(plan.public["local_epsilon"])
        q2 = flip_probability(plan.public["edge_epsilon"])
        eps_d = plan.public["degree_epsilon"]
        out = np.empty(int(n_trials))
        for trial in range(int(n_trials)):
            noisy = deg + DiscreteLaplace(epsilon=eps_d).sample(n, rng=gen)
            dense = noisy > plan.public["threshold"] * float(np.mean(noisy))
            pairs = public_pairing(n, int(gen.integers(2**63)))
            pairs = pairs[dense[pairs[:, 0]] & dense[pairs[:, 1]]]
            if pairs.shape[0] == 0:  # no pair of dense users kept: the sum has no term
                out[trial] = 0.0
                continue
            t, adj = lookup(pairs)
            wedge = gen.binomial(t, 1.0 - q1) + gen.binomial(m - t, q1)
            edge = gen.binomial(2 * adj, 1.0 - q2) + gen.binomial(2 - 2 * adj, q2)
            out[trial] = _scale(n, "triangles") * float(pair_terms((wedge, edge), rp, "triangles").sum())
        return out

    def moments(self, graph: Any, plan: Plan, statistic: str, param: int | None = None
                ) -> tuple[float, float]:
        r"""Mean and variance, mixed over the others' degree noise (module docstring).

        User v is dense when :math:`d_v + \eta_v > c(\sum_u d_u + \eta_v + T)/n`, T the sum of
        the other users' noise, i.e. when :math:`\eta_v > (\theta_T - d_v)/(1 - c/n)` with
        :math:`\theta_T = c(\sum_u d_u + T)/n`. Given T the users are taken dense independently
        (:math:`s_v` from that bound) and the formula of
        :meth:`~ldpgraph.protocols.shuffle.wedge_shuffle.WedgeShuffleTriangles.moments` holds with each
        pair weighted by :math:`s_e = s_i s_j`; mean and variance are mixed over T (law of total
        variance), T normal with the variance of n − 1 noises, on its integers when they are
        few, else on a grid of 31 points. Approximations, of order 1/n: one T for all users, its
        normality; checked by Monte-Carlo in the tests."""
        from scipy import stats

        from ...mechanisms import DiscreteLaplace

        self.check_statistic(statistic)
        deg = np.diff(graph.indptr)
        n = graph.n_nodes
        c, eps_d = plan.public["threshold"], plan.public["degree_epsilon"]
        sd_t = math.sqrt(max(n - 1, 0) * DiscreteLaplace(epsilon=eps_d).variance)
        if not sd_t > 0.0:
            t, w = np.zeros(1), np.ones(1)
        else:
            lo, hi = math.floor(-7.0 * sd_t), math.ceil(7.0 * sd_t)
            t = np.arange(lo, hi + 1, dtype=np.float64) if hi - lo <= 60 else np.linspace(lo, hi, 31)
            step = np.diff(t)
            edges = np.concatenate(([t[0] - step[0] / 2], t[:-1] + step / 2, [t[-1] + step[-1] / 2])) \
                if t.size > 1 else np.array([t[0] - 0.5, t[0] + 0.5])
            w = np.diff(stats.norm.cdf(edges, scale=sd_t))
            w /= w.sum()
        total, shrink = float(deg.sum()), 1.0 - c / n if n > 0 else 1.0
        # only floor(bound) matters (integer noise): one evaluation per distinct pattern of floors
        cache: dict[bytes, tuple[float, float]] = {}
        moments = []
        for x in t:
            floors = np.floor((c * (total + x) / n - deg) / shrink)
            key = floors.tobytes()
            if key not in cache:
                cache[key] = self._moments_given_bounds(graph, plan, floors + 0.5)
            moments.append(cache[key])
        mu, var = (np.array(v) for v in zip(*moments, strict=True))
        mean = float(w @ mu)
        return mean, float(w @ var + w @ (mu - mean) ** 2)

    def _moments_given_bounds(self, graph: Any, plan: Plan, bounds: NDArray[np.float64]
                              ) -> tuple[float, float]:
        """Mean and variance of the estimate when user v is dense with probability P[eta_v > bounds[v]],
        independently."""
        s = keep_probabilities(np.zeros(graph.n_nodes), bounds, plan.public["degree_epsilon"])
        cs = codegree_sums(graph, weights=s)
        n = graph.n_nodes
        m, pi, pi2, p1, q1, var_v = _matching_constants(n, plan.public["local_epsilon"])
        q2 = flip_probability(plan.public["edge_epsilon"])
        p2 = 1.0 - q2
        var_u = p2 * q2 / (2.0 * (p2 - q2) ** 2)
        sum_s = ((s.sum()) ** 2 - (s * s).sum()) / 2.0
        sv = var_v * cs["w_edges"] + var_u * cs["w_t2"] + var_u * var_v * sum_s
        h1, h2, gh = 3.0 * cs["w_triangles"], cs["w2_edge_t2"], 4.0 * cs["w2_tri_local_sq"]
        k = _scale(n, "triangles")
        mean = k * pi * h1
        var = k * k * (pi * sv + pi * cs["w_edge_t2"] + pi2 * (h1 * h1 + h2 - gh) - (pi * h1) ** 2)
        return mean, var


def _round_plan(plan: Plan) -> Plan:
    """``plan`` itself: its public holds the ε₀ and edge ε that :func:`pair_terms` reads."""
    return plan


@register
class WedgeShuffleIgnoreRR(WedgeShuffleIgnore):
    """``wshuffle-triangles-ignore-rr`` (ours): the randomized-response amplification and DLap degrees."""

    name = "wshuffle-triangles-ignore-rr"
    default_accounting = "binary-rr"
    presets = (Preset("wshuffle-triangles-ignore-rr", {"pairing_seed": 1}),)
    reference = "ours; WShuffle-ignore with the clone probability 2/(e^eps0 + 1) and discrete Laplace degrees"

