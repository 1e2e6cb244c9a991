r"""``degree``: every node releases its degree :math:`d_v + \mathrm{DLap}(e^{-\varepsilon})` (one round).

================ =============================================================================
round            node v releases (report format version 1, protocol ``degree``)
================ =============================================================================
1 ``degree``     ``degree``: :math:`y_v = d_v + \mathrm{DLap}(e^{-\varepsilon_d})` (sensitivity 1);
                 optionally, for each k of ``kstar_counts``, ``kstar_<k>``:
                 :math:`\binom{\min(d_v, D)}{k} + \mathrm{DLap}(e^{-\varepsilon_k/\binom{D}{k-1}})`
                 with the public bound D (``d_max``)
================ =============================================================================

A node spends :math:`\varepsilon = \varepsilon_d + \sum_k \varepsilon_k` (sequential composition;
``shares`` splits it, equal by default). One edge moves :math:`d_v` by 1 and the projected
count by at most :math:`\binom{D}{k-1}` (:class:`~ldpgraph.protocols.randomizer.DegreeRandomizer`
proves both).

Curator: the rows are validated into one histogram per quantity
(:class:`~ldpgraph.protocols.reportset.ReportAccumulator`, mergeable), and every degree
statistic is a function of the degree histogram: the unbiased estimates of
:mod:`~ldpgraph.protocols.curator` (option ``estimator="unbiased"``, the method
``unbiased-dlap``) or the plug-in of the noisy degrees (``estimator="naive"``, the method
``naive-dlap``), from the same rows (the estimator is the curator's choice: it changes no
row). A statistic with a parameter is written ``kstars:3`` (star size; ``kstars`` is
``kstars:2``), ``degree_moment:3`` (power), ``kstars_from_counts:2`` (the sum of the released
``kstar_2`` rows; ``kstars`` too when the nodes released no degree).

``unbiased-laplace`` and ``naive-laplace`` (:class:`UnbiasedLaplaceDegree`,
:class:`NaiveLaplaceDegree`) have the same plan with continuous Laplace noise: they are not
deployable (a real number is no report row): they are simulated only (their ``simulate`` hook).

Every protocol here has the simulation hooks ``simulate`` (vectorised over trials, the kernels of
:mod:`~ldpgraph.protocols.degrees.kernels`) and ``moments``; ``degree`` is offered as the methods
``unbiased-dlap`` and ``naive-dlap`` (presets: ``estimator`` unbiased or naive).

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> from ldpgraph.run import run_in_memory
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> run = run_in_memory("degree", g, 1.0, sampler=3, statistic="edges")
>>> run.plan.budget()
{'degree': 1.0}
>>> run.estimate.statistic
'edges'
>>> DegreeProtocol().plan(1.0, kstar_counts=(2,), d_max=5).describe()
'epsilon 1 = degree 0.5 + kstar_2 0.5'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon, check_nonnegative_int
from ...core.plan import Plan, Release, RoundPlan, split_budget
from ...core.protocol import Accumulator, Option, Preset, Protocol, Round
from ...core.rows import Rows, empty_rows, quantity_rows
from ...core.sampling import Sampler
from ..curator import Estimate
from ..randomizer import as_degrees, projected_kstar_counts
from ..registry import register
from ..reports import DEGREE_PROTOCOL
from ..reportset import STATISTICS, ReportAccumulator, ReportSetSummary, estimate_statistic
from ..statistics import STATISTICS as DEGREE_STATISTICS

__all__ = [
    "DegreeProtocol",
    "UnbiasedLaplaceDegree",
    "NaiveLaplaceDegree",
    "DegreeRound",
    "DegreeReportsAccumulator",
    "NotDeployableRound",
    "naive_estimate",
    "CONTINUOUS",
    "KSTAR_COUNTS",
    "D_MAX",
    "kstar_list",
    "parse_statistic",
    "degree_quantity_rows",
    "SIMULATED_STATISTICS",
]

DEGREE = "degree"

KSTAR_COUNTS = Option("kstar_counts", tuple, (), "the k of the projected local k-star counts C(min(d_v, "
                      "D), k) + DLap each node releases (comma separated; needs --d-max)")
D_MAX = Option("d_max", int, None, "public bound D on every node's degree, to which the k-star counts are "
               "projected")
_SHARES = Option("shares", dict, None, "budget split degree=F,kstar_2=F,... (default equal)")
_NO_DEGREE = Option("no_degree", bool, False, "do not release the degree (only the k-star counts)")
_ESTIMATOR = Option("estimator", str, "unbiased", "the curator's estimate: unbiased (default) or naive (the "
                    "plug-in of the noisy degrees, biased)")


def kstar_list(value: Any) -> tuple[int, ...]:
    """The k of ``kstar_counts`` (a sequence, an int or ``"2,3"``), each >= 1, distinct.

    >>> kstar_list("2,3"), kstar_list(2), kstar_list(None)
    ((2, 3), (2,), ())
    """
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split() if v]
    elif isinstance(value, (int, np.integer)):
        value = [value]
    try:
        ks = tuple(check_nonnegative_int(int(k), "kstar_counts entry", minimum=1) for k in value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"kstar_counts must be integers k >= 1, got {value!r} ({exc})") from None
    if len(set(ks)) != len(ks):
        raise ValueError(f"kstar_counts must not repeat a k, got {list(ks)}")
    return ks


def parse_statistic(statistic: str, default_k: int = 2) -> tuple[str, int | None]:
    """``"kstars:3"`` -> ``("kstars", 3)``; ``"edges"`` -> ``("edges", None)``; ``"kstars"`` -> k 2.

    >>> parse_statistic("degree_moment:3"), parse_statistic("kstars"), parse_statistic("edges")
    (('degree_moment', 3), ('kstars', 2), ('edges', None))
    """
    name, sep, pinned = str(statistic).partition(":")
    if name not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}; choose from {', '.join(STATISTICS)}")
    if not STATISTICS[name]:
        if sep:
            raise ValueError(f"{name} takes no parameter, got {statistic!r}")
        return name, None
    try:
        k = int(pinned) if sep else int(default_k)
    except ValueError:
        raise ValueError(f"invalid parameter in {statistic!r} (an integer after ':')") from None
    low = 0 if name == "degree_moment" else 1
    return name, check_nonnegative_int(k, "the statistic's parameter", minimum=low)


def degree_quantity_rows(plan: Plan, round: int, nodes: Any, neighbours: Any, sampler: Sampler,
                         d_max: int | None) -> Rows:
    r"""Rows of the plan's round ``round`` of degree-derived releases, node-major: each node draws its
    releases from its own stream, in the plan's order.

    ``degree``: :math:`d_v + \mathrm{DLap}(e^{-\varepsilon_d})`; ``kstar_<k>``:
    :math:`\binom{\min(d_v, D)}{k} + \mathrm{DLap}(e^{-\varepsilon_k/s})`, :math:`s =
    \max(\binom{D}{k-1}, 1)` (written in the rows' ``sensitivity``), D = ``d_max``.

    >>> from ldpgraph.core import Seeded
    >>> plan = DegreeProtocol().plan(400.0, kstar_counts=(2,), d_max=2)
    >>> rows = degree_quantity_rows(plan, 1, [7], [np.array([1, 2, 3])], Seeded(0), 2)
    >>> rows["quantity"].tolist(), rows["value"].tolist(), rows["sensitivity"].tolist()
    (['degree', 'kstar_2'], [3, 1], [1.0, 2.0])
    """
    releases = plan.round(round).releases
    names = [rel.quantities[0] for rel in releases]
    nodes = np.asarray(nodes, dtype=np.int64)
    if nodes.size == 0:
        return empty_rows(plan, round)
    degrees = np.fromiter((len(nb) for nb in neighbours), dtype=np.int64, count=nodes.size)
    truth = np.empty((nodes.size, len(names)), dtype=np.int64)
    sens = np.empty(len(names), dtype=np.float64)
    for j, name in enumerate(names):
        if name == DEGREE:
            truth[:, j], sens[j] = degrees, 1.0
        else:
            k = int(name.split("_")[1])
            truth[:, j] = projected_kstar_counts(degrees, k, d_max)
            sens[j] = float(max(math.comb(d_max, k - 1), 1))
    eps = [rel.epsilon for rel in releases]
    values = truth.copy()
    for i, v in enumerate(nodes.tolist()):
        stream = sampler.stream(round, v)
        for j in range(len(names)):
            values[i, j] += int(stream.dlap(eps[j], sens[j], 1)[0])
    rows = quantity_rows(plan, round, np.repeat(nodes, len(names)), np.tile(np.array(names, dtype=object),
                                                                          nodes.size), values.ravel())
    rows["sensitivity"] = np.tile(sens, nodes.size)  # C(D, k-1) at the D used (public or broadcast)
    return rows


class DegreeReportsAccumulator(Accumulator):
    """Rows of degree-derived releases validated into histograms (a
    :class:`~ldpgraph.protocols.reportset.ReportSetSummary`), checked against the plan's quantities and ε.

    ``options``: ``bounds`` (:class:`~ldpgraph.protocols.screening.PublicBounds`) and ``outliers``
    screen the rows; ``expected_nodes`` (n, or the ids) is the node set that must report.
    """

    def __init__(self, plan: Plan, round: int, d_max: int | None, *, bounds: Any = None,
                 outliers: str | None = "clip", expected_nodes: Any = None) -> None:
        self.plan, self.number = plan, int(round)
        self.expected_nodes = expected_nodes
        self.acc = ReportAccumulator(protocol=plan.protocol, version=plan.version, round=self.number,
                                     d_max=d_max, bounds=bounds, outliers=outliers or "clip")

    def add(self, chunk: Any) -> None:
        self.acc.add(chunk)

    def merge(self, other: DegreeReportsAccumulator) -> DegreeReportsAccumulator:
        self.acc.merge(other.acc)
        return self

    def result(self) -> ReportSetSummary:
        summary = self.acc.summary(expected_nodes=self.expected_nodes)
        want = [q for rel in self.plan.round(self.number).releases for q in rel.quantities]
        if sorted(summary.quantities) != sorted(want):
            raise ValueError(f"the rows release {', '.join(sorted(summary.quantities))}, but the plan "
                             f"({self.plan.describe()}) releases {', '.join(want)}: curate with the nodes' "
                             "--epsilon and options")
        for name, q in summary.quantities.items():
            rel = self.plan.release(name)
            if q.epsilon != rel.epsilon:
                raise ValueError(f"the {name} rows were released at epsilon {q.epsilon!r}, but the plan "
                                 f"({self.plan.describe()}) gives {rel.epsilon!r}: curate with the nodes' "
                                 "--epsilon and options")
        return summary


class DegreeRound(Round):
    """The one round of :class:`DegreeProtocol`."""

    number = 1
    name = DEGREE

    def release(self, plan: Plan, nodes: NDArray[np.int64], neighbours: Sequence[NDArray[np.int64]],
                broadcast: Any, sampler: Sampler) -> Rows:
        return degree_quantity_rows(plan, 1, nodes, neighbours, sampler, plan.public.get("d_max"))

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> DegreeReportsAccumulator:
        return DegreeReportsAccumulator(plan, 1, plan.public.get("d_max"), **options)


def naive_estimate(summary: ReportSetSummary, statistic: str, k: int | None) -> Estimate:
    r"""The plug-in: the statistic of the noisy degrees taken as true (biased but for the linear ones).

    ``kstars``: :math:`\sum_v \binom{y_v}{k}` (the polynomial); the others:
    :attr:`~ldpgraph.protocols.statistics.GraphStatistic.naive`. No standard error.

    >>> from ldpgraph.graph import from_edge_array
    >>> from ldpgraph.run import run_in_memory
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> run = run_in_memory("degree", g, 500.0, sampler=0)  # noise-free at this epsilon
    >>> naive_estimate(run.results[0], "kstars", 2).value   # 1 + 1 + 3 + 0
    5.0
    """
    from ..statistics import get_statistic

    if statistic == "kstars_from_counts":
        return estimate_statistic(summary, statistic, k)  # a sum of unbiased releases: nothing to plug in
    if DEGREE not in summary.quantities:
        raise ValueError(f"the reports hold no degree release; released: {sorted(summary.quantities)}")
    hist = summary.quantities[DEGREE].histogram
    if statistic == "kstars":
        u = hist.values.astype(np.float64)
        poly = np.ones_like(u)
        for j in range(int(k)):
            poly *= (u - j) / (j + 1)
        value, name = hist.weighted_sum(poly), f"kstars_{k}"
    else:
        value = float(get_statistic(statistic).naive(hist.to_reports(), k))
        name = statistic if k is None else f"{statistic}_{k}"
    from .kernels import PLUGIN_NO_SE

    return Estimate(float(value), None, None, name, note=PLUGIN_NO_SE)


#: the statistics the methods of the degree protocol estimate (``unbiased-dlap``, ``naive-dlap``): the
#: k-stars and the degree statistics of :mod:`ldpgraph.protocols.statistics`
SIMULATED_STATISTICS = ("kstars", *DEGREE_STATISTICS)

#: ``local-dlap-kstars-private``'s default share of the budget on its noisy degree bound (Imola et
#: al.): here because the degree protocol's one-round refusal names that protocol and its split
BOUND_SHARE = 0.1


#: why a plug-in of the noisy degrees reports no standard error
PLUG_IN_NO_SE = ("a plug-in of the noisy degrees: biased for this statistic, so a standard deviation would"
                 " not describe its error")

@register
class DegreeProtocol(Protocol):
    """``degree`` (see the module docstring); option ``estimator``: ``"unbiased"`` or ``"naive"``."""

    name = DEGREE_PROTOCOL
    version = 1
    statistics = tuple(STATISTICS)
    needs = "degrees"
    reference = "ours (the unique minimum-variance unbiased estimators of DLap degree reports)"
    options = (KSTAR_COUNTS, D_MAX, _SHARES, _NO_DEGREE, _ESTIMATOR)
    unbiased = True
    vectorized = True
    presets = (
        Preset("unbiased-dlap", statistics=SIMULATED_STATISTICS, unbiased=True,
               reference="ours (the unique minimum-variance unbiased estimator)"),
        Preset("naive-dlap", {"estimator": "naive"}, statistics=SIMULATED_STATISTICS, unbiased=False,
               reference="plug-in baseline", no_std_error=PLUG_IN_NO_SE),
    )

    def rounds_refusal(self) -> str:
        """One round: its former second round (a public bound from noisy degrees) is
        ``local-dlap-kstars-private``, at one total budget."""
        return ("the degree protocol has one round; for a public bound from noisy degrees use --protocol "
                f"local-dlap-kstars-private (--epsilon is the node's total: {BOUND_SHARE:g} of it on the "
                f"degree, {1 - BOUND_SHARE:g} on the counts)")

    def check_statistic(self, statistic: str | None) -> str:
        """The statistic, with its parameter (``kstars:3``); default ``kstars`` (k = 2)."""
        if statistic is None:
            return self.statistics[0]
        parse_statistic(statistic)
        return statistic

    def plan(self, epsilon: float, **public: Any) -> Plan:
        pub = self.check_public(public)
        eps = check_epsilon(epsilon)
        if pub["estimator"] not in ("unbiased", "naive"):
            raise ValueError(f"estimator of {self.name} must be 'unbiased' or 'naive', got "
                             f"{pub['estimator']!r}")
        ks = kstar_list(pub["kstar_counts"])
        d_max = pub["d_max"]
        if d_max is not None:
            d_max = check_nonnegative_int(d_max, "d_max", minimum=1)
        if ks and d_max is None:
            raise ValueError("d_max (a public degree bound, --d-max) is required to release local k-star "
                             "counts")
        names = ([] if pub["no_degree"] else [DEGREE]) + [f"kstar_{k}" for k in ks]
        if not names:
            raise ValueError("nothing to release: release the degree or give kstar_counts")
        shares = pub["shares"] or {q: 1.0 / len(names) for q in names}
        if sorted(shares) != sorted(names):
            raise ValueError(f"shares of {self.name}: {', '.join(f'{q}=F' for q in names)}, got {shares}")
        split = split_budget(eps, {q: shares[q] for q in names})
        releases = tuple(Release((q,), "dlap", split[q], 1.0 if q == DEGREE else
                                 float(max(math.comb(d_max, int(q[6:]) - 1), 1))) for q in names)
        return Plan(self.name, self.version, eps, (RoundPlan(1, DEGREE if DEGREE in names else "kstar-count",
                                                             releases),),
                    {"kstar_counts": ks, "d_max": d_max, "no_degree": bool(pub["no_degree"]),
                     "estimator": pub["estimator"]})

    def plan_from_rows(self, chunk: Any, **public: Any) -> Plan:
        """The plan the rows were released under, read from the first node's rows (each node releases
        every quantity of the round, each at its ε): for a curator not given the nodes' ``--epsilon``.
        Every other row is then checked against it; ``public``: ``d_max``, ``estimator``.

        >>> from ldpgraph.core.rows import quantity_rows
        >>> from ldpgraph.protocols.deploy_triangles import chunk_from_columns
        >>> shares = {"degree": 0.2, "kstar_2": 0.8}
        >>> plan = DegreeProtocol().plan(1.5, kstar_counts=(2,), d_max=4, shares=shares)
        >>> rows = quantity_rows(plan, 1, [0, 0], ["degree", "kstar_2"], [3, 5])
        >>> DegreeProtocol().plan_from_rows(chunk_from_columns(rows), d_max=4).budget() == plan.budget()
        True
        """
        if len(chunk) == 0:
            raise ValueError(f"{chunk.source}: no rows to read the plan from")
        pub = self.check_public({k: v for k, v in public.items() if v is not None})
        first = np.flatnonzero(np.asarray(chunk.node) == chunk.node[0])
        names = [str(chunk.quantity_names[int(c)]) for c in np.asarray(chunk.quantity)[first]]
        eps = [float(e) for e in np.asarray(chunk.epsilon)[first]]
        if len(set(names)) != len(names) or not all(n == DEGREE or n.startswith("kstar_") for n in names):
            raise ValueError(f"{chunk.where(int(first[0]))}: node {int(chunk.node[0])}'s rows are not one "
                             f"degree release ({', '.join(names)})")
        ks = tuple(int(n[6:]) for n in names if n != DEGREE)
        plan = self.plan(math.fsum(eps), kstar_counts=ks, d_max=pub["d_max"], no_degree=DEGREE not in names,
                         estimator=pub["estimator"])
        releases = tuple(Release((n,), "dlap", e, plan.release(n).sensitivity) for n, e in zip(names, eps,
                                                                                               strict=True))
        return Plan(self.name, self.version, plan.epsilon, (RoundPlan(1, plan.rounds[0].name, releases),),
                    plan.public)

    def rounds(self) -> tuple[Round, ...]:
        return (DegreeRound(),)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Estimate:
        name, k = parse_statistic(self.check_statistic(statistic))
        if name == "kstars" and DEGREE not in result.quantities and f"kstar_{k}" in result.quantities:
            name = "kstars_from_counts"  # no degree rows (no_degree): the sum of the released counts
        if plan.public.get("estimator") == "naive":
            return naive_estimate(result, name, k)
        return estimate_statistic(result, name, k)

    def describe_result(self, result: Any, round: Round) -> list[str]:
        return [f"{name:<10} epsilon {q.epsilon:g}, sensitivity {q.sensitivity:g}"
                for name, q in result.quantities.items()]

    def statistic_bound(self, result: Any, plan: Plan, statistic: str) -> float | None:
        """:func:`~ldpgraph.protocols.curator.influence_bound` of the statistic's screened quantity
        (None without public bounds, or for a statistic without a documented bound)."""
        from ..curator import influence_bound

        name, k = parse_statistic(statistic)
        if name == "kstars" and DEGREE not in result.quantities:
            name = "kstars_from_counts"
        q = result.quantities.get(f"kstar_{k}" if name == "kstars_from_counts" else DEGREE)
        if q is None or q.admissible is None or plan.public.get("estimator") == "naive":
            return None
        return influence_bound(name, *q.admissible, epsilon=q.epsilon, n_nodes=max(q.n_reports, 1), k=k)

    def noisy_degrees(self, result: Any) -> NDArray[np.int64] | None:
        """The released degrees of the rows (their histogram expanded), or None without any."""
        q = result.quantities.get(DEGREE)
        if q is None or not q.histogram.n:
            return None
        return np.repeat(np.asarray(q.histogram.values), np.asarray(q.histogram.counts))

    def screening(self, result: Any, round: Round) -> dict[str, Any]:
        from ..screening import Screening

        return {name: Screening(name, q.admissible[0], q.admissible[1], result.outliers, q.n_outside)
                for name, q in result.quantities.items() if q.admissible is not None}

    # ------------------------------------------------------------------ simulation hooks

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: np.random.Generator, *,
                 param: int | None = None) -> NDArray[np.float64]:
        r"""``n_trials`` estimates under ``plan``, vectorised over trials: every node's
        :math:`y_v = d_v + \mathrm{DLap}(e^{-\varepsilon_d})` (ε of the plan's degree release), the
        plan's estimator (``estimator``) on them; without the degree (``no_degree``), the k-stars are
        the sum of the released counts (:mod:`~ldpgraph.protocols.degrees.kernels`).

        >>> import numpy as np
        >>> p = DegreeProtocol()
        >>> p.simulate(np.array([3, 1, 2, 2]), p.plan(500.0), "kstars", 2, np.random.default_rng(0), param=2)
        array([5., 5.])
        >>> p.simulate(np.array([1, 2, 1]), p.plan(50.0), "edges", 1, np.random.default_rng(0)).tolist()
        [2.0]
        """
        name, k = _statistic_k(statistic, param)
        return _simulate_degree_plan(as_degrees(graph), plan, name, k, n_trials, rng, "dlap")

    def moments(self, graph: Any, plan: Plan, statistic: str,
                param: int | None = None) -> tuple[float | None, float | None]:
        """Exact mean and variance of :meth:`simulate`'s estimate (None, None: the plug-in of a degree
        statistic it biases, or no closed form).

        >>> import numpy as np
        >>> p = DegreeProtocol()
        >>> p.moments(np.array([3, 1, 2, 2]), p.plan(1.0), "kstars", 2)[0]
        5.0
        """
        name, k = _statistic_k(statistic, param)
        return _degree_plan_moments(as_degrees(graph), plan, name, k, "dlap")

    def simulate_with_error(self, graph: Any, plan: Plan, statistic: str, rng: np.random.Generator, *,
                            param: int | None = None) -> tuple[float, float | None, str]:
        """One simulated run as its curator sees it: ``(estimate, standard error from the reports, its
        kind)`` (``ldpgraph estimate`` on a degree sequence, where no deployment can run)."""
        return _run_with_error(graph, plan, statistic, rng, param, "dlap")


def _statistic_k(statistic: str, param: int | None) -> tuple[str, int | None]:
    """``(name, parameter)`` of a simulated statistic: ``param`` as given, or for ``kstars`` k = 2."""
    if statistic == "kstars":
        return statistic, 2 if param is None else check_nonnegative_int(param, "k", minimum=1)
    return statistic, param


def _degree_eps(plan: Plan, statistic: str) -> float:
    if DEGREE not in {q for rel in plan.rounds[0].releases for q in rel.quantities}:
        raise ValueError(f"{plan.protocol} releases no degree under this plan (no_degree): its {statistic} "
                         "is not simulated (the k-stars from the released counts are: --stat kstars)")
    return plan.release(DEGREE).epsilon


def _simulate_degree_plan(d: NDArray[np.int64], plan: Plan, statistic: str, k: int | None, n_trials: int,
                          rng: np.random.Generator, noise: str) -> NDArray[np.float64]:
    from . import kernels as kk

    estimator = plan.public.get("estimator", "unbiased")
    if statistic == "kstars":
        if plan.public.get("no_degree"):  # the sum of the released counts (local-dlap-kstars' law)
            return kk.simulate_local_counts(d, k, _count_eps(plan, k), plan.public["d_max"], n_trials, rng,
                                            noise)
        return kk.simulate_degree_kstars(d, k, _degree_eps(plan, statistic), n_trials, rng, noise, estimator)
    eps = _degree_eps(plan, statistic)
    return kk.simulate_degree_statistic(d, statistic, k, eps, n_trials, rng, estimator)


def _run_with_error(graph: Any, plan: Plan, statistic: str, rng: np.random.Generator, param: int | None,
                    noise: str) -> tuple[float, float | None, str]:
    from . import kernels as kk

    name, k = _statistic_k(statistic, param)
    return kk.degree_run_with_error(as_degrees(graph), name, k, _degree_eps(plan, name), rng, noise,
                                    plan.public.get("estimator", "unbiased"))


def _count_eps(plan: Plan, k: int) -> float:
    q = f"kstar_{k}"
    if q not in {q for rel in plan.rounds[0].releases for q in rel.quantities}:
        raise ValueError(f"the plan releases no degree and no {q} (--kstar-counts {k}): {plan.describe()}")
    return plan.release(q).epsilon


def _degree_plan_moments(d: NDArray[np.int64], plan: Plan, statistic: str, k: int | None,
                         noise: str) -> tuple[float | None, float | None]:
    from . import kernels as kk

    estimator = plan.public.get("estimator", "unbiased")
    if statistic == "kstars":
        if plan.public.get("no_degree"):
            return kk.local_count_moments(d, k, _count_eps(plan, k), plan.public["d_max"], noise)
        return kk.degree_kstar_moments(d, k, _degree_eps(plan, statistic), noise, estimator)
    sd = kk.degree_statistic_sd(d, statistic, k, _degree_eps(plan, statistic), estimator)
    if sd is None:
        return None, None
    from ..statistics import statistic_truth

    return statistic_truth(d, statistic, k), float(sd) ** 2


class NotDeployableRound(Round):
    """A round whose release is continuous (Laplace): no report row can carry it."""

    def __init__(self, number: int, name: str, why: str) -> None:
        self.number, self.name, self.why = number, name, why

    def release(self, plan: Plan, nodes: Any, neighbours: Any, broadcast: Any, sampler: Sampler) -> Rows:
        raise ValueError(f"{plan.protocol} cannot be run on report rows: {self.why} (it is simulated only: "
                         "ldpgraph.run.method.get_method)")

    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> Accumulator:
        raise ValueError(f"{plan.protocol} has no report rows to curate: {self.why}")


#: why a continuous-Laplace protocol is not deployable
CONTINUOUS = "continuous Laplace releases are not integer report rows"


@register
class UnbiasedLaplaceDegree(Protocol):
    """``unbiased-laplace``: :math:`d_v + \\mathrm{Lap}(1/\\varepsilon)`, the unbiased rule
    :math:`\\binom{y}{k} - b^2 \\binom{y}{k}''` (Hillebrand et al. 2023). Not deployable."""

    name = "unbiased-laplace"
    statistics = ("kstars",)
    needs = "degrees"
    deployable = False
    not_deployable = CONTINUOUS
    reference = "ours (the unbiased estimator for Laplace reports)"
    unbiased = True
    vectorized = True
    #: the curator's estimate of the reports
    estimator = "unbiased"

    def plan(self, epsilon: float, **public: Any) -> Plan:
        self.check_public(public)
        eps = check_epsilon(epsilon)
        release = Release((DEGREE,), "laplace", eps, 1.0)
        return Plan(self.name, self.version, eps, (RoundPlan(1, DEGREE, (release,)),),
                    {"estimator": self.estimator})

    def rounds(self) -> tuple[Round, ...]:
        return (NotDeployableRound(1, DEGREE, CONTINUOUS),)

    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Any:
        raise ValueError(f"{self.name} is not deployable: {CONTINUOUS}")

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: np.random.Generator, *,
                 param: int | None = None) -> NDArray[np.float64]:
        r"""``n_trials`` estimates: :math:`y_v = d_v + \mathrm{Lap}(1/\varepsilon)` (ε of the plan), the
        unbiased rule or the plug-in (:func:`~ldpgraph.protocols.degrees.kernels.simulate_degree_kstars`).

        >>> import numpy as np
        >>> p = UnbiasedLaplaceDegree()
        >>> p.simulate(np.array([3, 1, 2, 2]), p.plan(1.0), "kstars", 3, np.random.default_rng(0)).shape
        (3,)
        """
        name, k = _statistic_k(self.check_statistic(statistic), param)
        return _simulate_degree_plan(as_degrees(graph), plan, name, k, n_trials, rng, "laplace")

    def moments(self, graph: Any, plan: Plan, statistic: str,
                param: int | None = None) -> tuple[float | None, float | None]:
        """Exact mean and variance of :meth:`simulate`'s estimate."""
        name, k = _statistic_k(self.check_statistic(statistic), param)
        return _degree_plan_moments(as_degrees(graph), plan, name, k, "laplace")

    def simulate_with_error(self, graph: Any, plan: Plan, statistic: str, rng: np.random.Generator, *,
                            param: int | None = None) -> tuple[float, float | None, str]:
        """One simulated run as its curator would see it: ``(estimate, standard error, kind)``."""
        return _run_with_error(graph, plan, self.check_statistic(statistic), rng, param, "laplace")


@register
class NaiveLaplaceDegree(UnbiasedLaplaceDegree):
    """``naive-laplace``: the same release, :math:`\\sum_v \\binom{y_v}{k}` (plug-in). Not deployable."""

    name = "naive-laplace"
    reference = "plug-in baseline"
    unbiased = False
    estimator = "naive"
    presets = (Preset("naive-laplace", no_std_error=PLUG_IN_NO_SE),)

