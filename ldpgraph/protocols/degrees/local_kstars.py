r"""``local-dlap-kstars``: each node releases its projected local k-star count with discrete Laplace noise.

======================= ======================================================================
round                   node v releases (report format version 1)
======================= ======================================================================
``local-dlap-kstars``: public bound D (``d_max``)
1 ``kstar-count``       ``kstar_<k>``: :math:`\binom{\min(d_v, D)}{k} + \mathrm{DLap}(e^{-\varepsilon/s})`,
                        :math:`s = \binom{D}{k-1}` (at least 1)
``local-dlap-kstars-private``: private bound
1 ``degree-bound``      ``degree``: :math:`d_v + \mathrm{DLap}(e^{-\varepsilon_0})` (sensitivity 1)
broadcast               D = max(1, the maximum noisy degree) (JSON, :class:`DegreeBound`)
2 ``kstar-count``       ``kstar_<k>`` as above at :math:`\varepsilon_2` against the broadcast D
======================= ======================================================================

One edge moves the projected count by at most :math:`\binom{D}{k-1}` (the sensitivity), the
degree by 1; the broadcast D is a post-processing of round 1. A node spends
:math:`\varepsilon_0 + \varepsilon_2 = \varepsilon`, by default :math:`0.1\varepsilon` and
:math:`0.9\varepsilon` (``shares`` ``degree=F,kstar_<k>=F``), as the Laplace method
``local-lap-kstars-private`` of Imola, Murakami and Chaudhuri (2021).

Curator: :math:`\hat S_k = \sum_v r_v`, unbiased for the projected :math:`\sum_v
\binom{\min(d_v, D)}{k}`, variance :math:`n\,\mathrm{Var}(\mathrm{DLap})` exactly.

The continuous-Laplace methods ``local-lap-kstars`` (public bound) and
``local-lap-kstars-private`` have the same plans with Laplace noise: not deployable (simulated
only). Every one has the simulation hooks ``simulate`` (vectorised over trials: the kernels of
:mod:`~ldpgraph.protocols.degrees.kernels`) and ``moments`` (closed forms with the public bound).

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> from ldpgraph.run import run_in_memory
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> run_in_memory("local-dlap-kstars-private", g, 1.0, sampler=0).plan.describe()
'epsilon 1 = degree-bound 0.1 + kstar-count 0.9'
>>> run_in_memory("local-dlap-kstars", g, 200.0, sampler=0, d_max=3).estimate.value  # truth 5
5.0
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validation import check_epsilon, check_nonnegative_int
from ...core.plan import Plan, Release, RoundPlan, split_budget
from ...core.protocol import Option, Protocol, Round
from ...core.rows import Rows
from ...core.sampling import Sampler
from ..curator import Estimate
from ..randomizer import as_degrees
from ..registry import register
from ..reports import BROADCAST_FORMAT, BROADCAST_VERSION, parse_json
from ..reportset import ReportSetSummary, estimate_statistic
from .degree import (
    BOUND_SHARE,
    CONTINUOUS,
    D_MAX,
    DEGREE,
    KSTAR_COUNTS,
    DegreeReportsAccumulator,
    NotDeployableRound,
    degree_quantity_rows,
    kstar_list,
)

__all__ = ["LocalDLapKStarsProtocol", "LocalDLapKStarsPrivateProtocol", "LocalLapKStarsProtocol",
           "LocalLapKStarsPrivateProtocol", "DegreeBound", "BOUND_SHARE"]

_SHARES = Option("shares", dict, None, "budget split degree=F,kstar_<k>=F with the private bound (default "
                 "0.1, 0.9)")


@dataclass(frozen=True)
class DegreeBound:
    """The broadcast after round 1 of the private bound: D = max(1, max noisy degree).

    ``run_id`` is a digest of the rest (it names the broadcast in the output); ``epsilon`` the
    round-1 ε the degrees were released with.

    >>> b = DegreeBound.build("local-dlap-kstars", 10, 0.1, 7)
    >>> b.bound, b.what
    (7, 'degree bound D = 7')
    """

    protocol: str
    n_nodes: int
    epsilon: float
    bound: int
    run_id: int

    @classmethod
    def build(cls, protocol: str, n_nodes: int, epsilon: float, bound: int) -> DegreeBound:
        head = {"protocol": protocol, "n_nodes": int(n_nodes), "epsilon": float(epsilon), "d_max": int(bound)}
        digest = hashlib.sha256(json.dumps(head, sort_keys=True).encode()).digest()
        return cls(protocol, int(n_nodes), float(epsilon), int(bound), int.from_bytes(digest[:6], "big"))

    @property
    def what(self) -> str:
        return f"degree bound D = {self.bound}"

    def to_dict(self, version: int) -> dict[str, Any]:
        """The JSON form (the format of the ``degree`` protocol's broadcast files)."""
        return {"format": BROADCAST_FORMAT, "format_version": BROADCAST_VERSION, "protocol": self.protocol,
                "protocol_version": version, "round": 1, "values": {"d_max": self.bound},
                "n_nodes": self.n_nodes, "epsilon": self.epsilon, "run_id": self.run_id}

    @classmethod
    def from_dict(cls, data: Any, protocol: str, version: int, source: str) -> DegreeBound:
        """Read :meth:`to_dict`'s form back; ValueError naming ``source`` if it is not one."""
        ok = (isinstance(data, dict) and data.get("format") == BROADCAST_FORMAT
              and data.get("format_version") == BROADCAST_VERSION)
        if not ok:
            raise ValueError(f"{source}: not an {BROADCAST_FORMAT} version {BROADCAST_VERSION} file")
        if data.get("protocol") != protocol or data.get("protocol_version") != version:
            raise ValueError(f"{source}: a broadcast of {data.get('protocol')!r} version "
                             f"{data.get('protocol_version')!r}, not of {protocol} version {version}")
        d = (data.get("values") or {}).get("d_max") if isinstance(data.get("values"), dict) else None
        n, eps = data.get("n_nodes"), data.get("epsilon")
        if isinstance(d, bool) or not isinstance(d, int) or d < 1 or not isinstance(n, int) or n < 1:
            raise ValueError(f"{source}: values.d_max and n_nodes must be integers >= 1")
        if not isinstance(eps, (int, float)) or not eps > 0:
            raise ValueError(f"{source}: epsilon must be > 0, got {eps!r}")
        out = cls.build(protocol, n, float(eps), d)
        if data.get("run_id") != out.run_id:
            raise ValueError(f"{source}: the run id does not match the broadcast's content (edited?)")
        return out


def _kstar_k(value: Any, name: str) -> int:
    ks = kstar_list(value)
    if len(ks) != 1:
        raise ValueError(f"{name} releases one local k-star count: give one k (--kstar-counts K), got "
                         f"{list(ks)}")
    return ks[0]


class _CountRound(Round):
    """The k-star count round (1 with the public bound, 2 against the broadcast D)."""

    name = "kstar-count"

    def __init__(self, number: int) -> None:
        self.number = number

    def _bound(self, plan: Plan, broadcast: Any) -> int:
        if self.number == 1:
            return int(plan.public["d_max"])
        if not isinstance(broadcast, DegreeBound):
            raise TypeError("round 2 needs the round-1 broadcast (a DegreeBound), got "
                            f"{type(broadcast).__name__}")
        check_bound_plan(broadcast, plan)
        return broadcast.bound

    def release(self, plan: Plan, nodes: Any, neighbours: Any, broadcast: Any, sampler: Sampler) -> Rows:
        bound = self._bound(plan, broadcast)
        return degree_quantity_rows(plan, self.number, nodes, neighbours, sampler, bound)

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> DegreeReportsAccumulator:
        return DegreeReportsAccumulator(plan, self.number, self._bound(plan, broadcast), **options)


class _BoundRound(Round):
    """Round 1 of the private bound: the noisy degrees, and the bound D they give."""

    number = 1
    name = "degree-bound"

    def release(self, plan: Plan, nodes: Any, neighbours: Any, broadcast: Any, sampler: Sampler) -> Rows:
        return degree_quantity_rows(plan, 1, nodes, neighbours, sampler, None)

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> DegreeReportsAccumulator:
        return DegreeReportsAccumulator(plan, 1, None, **options)

    def broadcast(self, result: ReportSetSummary, plan: Plan) -> DegreeBound:
        hist = result.quantities[DEGREE].histogram
        top = int(hist.values[-1]) if hist.n else 1
        return DegreeBound.build(plan.protocol, result.n_nodes, hist.epsilon, max(1, top))


def check_bound_plan(broadcast: DegreeBound, plan: Plan) -> None:
    """ValueError unless ``broadcast`` was made by round 1 of ``plan``."""
    if broadcast.protocol != plan.protocol:
        raise ValueError(f"a broadcast of {broadcast.protocol!r}, not of {plan.protocol!r}")
    plan.check_broadcast_epsilon(DEGREE, broadcast.epsilon)


def _kstar_plan(proto: Protocol, epsilon: float, pub: dict[str, Any], mechanism: str) -> Plan:
    """The plan of a local k-star protocol: public bound (one round) or private bound (two rounds)."""
    eps = check_epsilon(epsilon)
    k = _kstar_k(pub["kstar_counts"], proto.name)
    q = f"kstar_{k}"
    private = bool(pub.get("private_bound"))
    if not private:
        if pub["d_max"] is None:
            raise ValueError(f"{proto.name} needs the public degree bound d_max (--d-max); "
                             f"{proto.name}-private takes a private one")
        d = check_nonnegative_int(pub["d_max"], "d_max", minimum=1)
        rel = Release((q,), mechanism, eps, float(max(math.comb(d, k - 1), 1)))
        return Plan(proto.name, proto.version, eps, (RoundPlan(1, "kstar-count", (rel,)),),
                    {"kstar_counts": (k,), "d_max": d, "private_bound": False})
    if pub["d_max"] is not None:
        raise ValueError(f"{proto.name}: the private bound comes from round 1; a public d_max "
                         f"({pub['d_max']}) is not used")
    shares = pub.get("shares") or {DEGREE: BOUND_SHARE, q: 1.0 - BOUND_SHARE}
    if sorted(shares) != sorted((DEGREE, q)):
        raise ValueError(f"shares of {proto.name} (private bound): {DEGREE}=F,{q}=F, got {shares}")
    split = split_budget(eps, {DEGREE: shares[DEGREE], q: shares[q]})
    return Plan(proto.name, proto.version, eps,
                (RoundPlan(1, "degree-bound", (Release((DEGREE,), mechanism, split[DEGREE], 1.0),)),
                 RoundPlan(2, "kstar-count", (Release((q,), mechanism, split[q], math.nan),))),
                {"kstar_counts": (k,), "d_max": None, "private_bound": True})


def _true_max_degree(graph: Any) -> int:
    return max(int(as_degrees(graph).max(initial=0)), 1)


class _LocalKStars(Protocol):
    """Shared by the local k-star protocols: options, the estimate, the broadcast's file form."""

    version = 1
    statistics = ("kstars",)
    needs = "degrees"
    #: the noise of the releases
    mechanism = "dlap"
    #: whether D comes from a first round of noisy degrees
    private = False
    vectorized = True
    #: k is the simulated statistic's parameter (``param`` of :meth:`simulate`)
    simulation_draws = ("kstar_counts",)

    def default_public(self, graph: Any, public: Any) -> dict[str, Any]:
        """The benchmark's public bound: the true maximum degree (at least 1), as in Imola et al.'s
        experiments; none with the private bound."""
        return {} if self.private else {"d_max": _true_max_degree(graph)}

    def placeholder_public(self, public: Any = None) -> dict[str, Any]:
        return {} if self.private else {"d_max": 2}  # D moves the sensitivity, not the split

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: np.random.Generator, *,
                 param: int | None = None) -> np.ndarray:
        """``n_trials`` estimates under ``plan``, vectorised over trials (the kernels of
        :mod:`~ldpgraph.protocols.degrees.kernels`): ε of each round and the public D from the plan, k
        from ``param`` (the plan's k where None; the sensitivity :math:`\\binom{D}{k-1}` is k's).

        >>> import numpy as np
        >>> p = LocalDLapKStarsProtocol()
        >>> p.simulate(np.array([3, 1, 2, 2]), p.plan(400.0, d_max=3), "kstars", 2, np.random.default_rng(0),
        ...            param=2).tolist()
        [5.0, 5.0]
        """
        from . import kernels as kk

        self.check_statistic(statistic)
        d, k = as_degrees(graph), self._k(plan, param)
        eps = [rp.releases[0].epsilon for rp in plan.rounds]
        if self.private:
            return kk.simulate_private_bound(d, k, eps[0], eps[1], n_trials, rng, self.mechanism)
        return kk.simulate_local_counts(d, k, eps[0], plan.public["d_max"], n_trials, rng, self.mechanism)

    def moments(self, graph: Any, plan: Plan, statistic: str,
                param: int | None = None) -> tuple[float | None, float | None]:
        """Exact mean (the projected k-star count) and variance with the public bound; none with the
        private one (its random D biases the estimate by an unknown amount)."""
        from . import kernels as kk

        self.check_statistic(statistic)
        if self.private:
            return None, None
        eps = plan.rounds[0].releases[0].epsilon
        return kk.local_count_moments(as_degrees(graph), self._k(plan, param), eps, plan.public["d_max"],
                                      self.mechanism)

    def simulate_with_error(self, graph: Any, plan: Plan, statistic: str, rng: np.random.Generator, *,
                            param: int | None = None) -> tuple[float, float | None, str]:
        """One simulated run as its curator sees it: ``(estimate, standard error, kind)``; with the public
        bound the counts are exact and the variance the noise's, a function of the public n, D, k, ε."""
        from .kernels import PRIVATE_BOUND_NO_SE

        value = float(self.simulate(graph, plan, statistic, 1, rng, param=param)[0])
        if self.private:
            return value, None, "none: " + PRIVATE_BOUND_NO_SE
        return value, math.sqrt(self.moments(graph, plan, statistic, param)[1]), "exact"

    @staticmethod
    def _k(plan: Plan, param: int | None) -> int:
        return int(plan.public["kstar_counts"][0] if param is None else
                   check_nonnegative_int(param, "k", minimum=1))

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = {"d_max": None, "private_bound": self.private, "shares": None, **self.check_public(public)}
        return _kstar_plan(self, epsilon, pub, self.mechanism)

    def rounds(self) -> tuple[Round, ...]:
        if self.mechanism != "dlap":
            return tuple(NotDeployableRound(i + 1, name, CONTINUOUS) for i, name in
                         enumerate(("degree-bound", "kstar-count") if self.private else ("kstar-count",)))
        return (_BoundRound(), _CountRound(2)) if self.private else (_CountRound(1),)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Estimate:
        self.check_statistic(statistic)
        k = plan.public["kstar_counts"][0]
        est = estimate_statistic(result, "kstars_from_counts", k)
        return dataclasses.replace(est, statistic=f"kstars_{k}")

    def encode_broadcast(self, broadcast: Any) -> bytes:
        if not self.private:
            return super().encode_broadcast(broadcast)
        return (json.dumps(broadcast.to_dict(self.version), indent=2) + "\n").encode()

    def decode_broadcast(self, data: bytes, plan: Plan, *, source: str = "broadcast") -> DegreeBound:
        if not self.private:
            return super().decode_broadcast(data, plan, source=source)
        b = DegreeBound.from_dict(parse_json(data, source), plan.protocol, plan.version, source)
        check_bound_plan(b, plan)
        return b

    def describe_result(self, result: Any, round: Round) -> list[str]:
        return [f"{name:<10} epsilon {q.epsilon:g}, sensitivity {q.sensitivity:g}"
                for name, q in result.quantities.items()]


_ONE_K = dataclasses.replace(KSTAR_COUNTS, default=(2,))


@register
class LocalLapKStarsProtocol(_LocalKStars):
    """``local-lap-kstars`` (Imola, Murakami, Chaudhuri 2021): Laplace noise. Not deployable."""

    name = "local-lap-kstars"
    reference = "LocalLapKStars (Imola, Murakami, Chaudhuri, USENIX Security 2021)"
    options = (_ONE_K, D_MAX)
    unbiased = True
    mechanism = "laplace"
    deployable = False
    not_deployable = CONTINUOUS


@register
class LocalLapKStarsPrivateProtocol(_LocalKStars):
    """``local-lap-kstars-private``: 0.1 eps on d_v + Lap, 0.9 eps on the counts. Not deployable."""

    name = "local-lap-kstars-private"
    reference = "LocalLapKStars with a private degree bound (same paper)"
    options = (_ONE_K,)
    mechanism = "laplace"
    private = True
    deployable = False
    not_deployable = CONTINUOUS


@register
class LocalDLapKStarsProtocol(_LocalKStars):
    """``local-dlap-kstars``: the public bound D (``d_max``; a simulation takes the true maximum degree)."""

    name = "local-dlap-kstars"
    reference = "LocalLapKStars with discrete Laplace (ours)"
    options = (_ONE_K, D_MAX)
    unbiased = True  # for the projected count; for S_k with the benchmark's D (the true maximum degree)


@register
class LocalDLapKStarsPrivateProtocol(_LocalKStars):
    """``local-dlap-kstars-private``: D from a first round of noisy degrees (0.1 of the budget)."""

    name = "local-dlap-kstars-private"
    reference = "LocalLapKStars with a private degree bound, discrete Laplace (ours; after Imola et al.)"
    options = (_ONE_K, _SHARES)
    private = True
