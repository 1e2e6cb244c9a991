r"""What a reader must be told beside an estimate: one rule, used by ``estimate``, ``curate``
and ``experiment``.

Three notes, each from public numbers only (the estimate, its standard error, ε):

- **outside the range**: an estimate of a quantity in [lo, hi] can fall outside it (an
  unbiased one is centred on the truth, so near an end of the range about half of it does);
  the note gives the range and the interval ``value ± z·SE`` instead of a silently clipped
  (and then biased) number;
- **no standard error**: the reason (no closed form for this method, or a noisy bound, ...);
- **noise**: a relative standard error ``SE / |reference|`` above 1 (the reference is the truth
  in a simulation, the estimate itself for a curator) means the estimate is noise at this ε;
  the warning gives the ε at which the analytic standard error falls to ``|reference|``
  (:func:`epsilon_for_relative_se`, from the method's exact variance as a function of ε, as the
  planner :mod:`ldpgraph.analysis.planning` does for the degree statistics).

Examples
--------
>>> statistic_range("avg_clustering")
(0.0, 1.0)
>>> statistic_range("kstars_2")
(0.0, inf)
>>> import textwrap
>>> for line in estimate_notes("avg_clustering", 86.1, 434.0, method="avg-clustering-dlap",
...                            epsilon=1.0, reference=0.6055, needed_epsilon=10.0):
...     print(textwrap.fill(line, 96))
avg-clustering-dlap: the estimate 86.1 is outside [0, 1], the range of avg_clustering: noisy
estimates can fall outside it (they are not clipped, which would bias them); the 95% interval is
[-764.5, 936.7]
warning: avg-clustering-dlap: the standard error 434 is 717 times |0.6055| (relative standard
error > 1): at epsilon 1 the estimate is noise; about epsilon 10 would be needed for a relative
standard error of 1
>>> estimate_notes("triangles", 1.7e6, None, method="arr-triangles", epsilon=1.0)[0][:60]
'arr-triangles: no standard error: its clipping (the noisy lo'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from statistics import NormalDist
from typing import Any

__all__ = [
    "STATISTIC_RANGES",
    "statistic_range",
    "no_std_error_reason",
    "epsilon_for_relative_se",
    "estimate_notes",
    "needed_epsilon",
    "single_run_notes",
    "dropped_edge_notes",
    "experiment_notes",
    "planned_epsilon",
]

_INF = math.inf

#: the range of each statistic's true value (a parameterised one: its base name)
STATISTIC_RANGES: dict[str, tuple[float, float]] = {
    "avg_clustering": (0.0, 1.0),
    "transitivity": (0.0, 1.0),
    "triangles": (0.0, _INF),
    "degree_weighted_triangles": (0.0, _INF),
    "four_cycles": (0.0, _INF),
    "kstars": (0.0, _INF),
    "kstars_from_counts": (0.0, _INF),
    "edges": (0.0, _INF),
    "degree_moment": (0.0, _INF),
    "degree_mean": (0.0, _INF),
    "degree_variance": (0.0, _INF),
    "max_degree": (0.0, _INF),
    "degree_entropy": (0.0, _INF),
}

#: why a method has no standard error (a method not listed: the generic reason)


def statistic_range(statistic: str) -> tuple[float, float] | None:
    """The range ``(lo, hi)`` of ``statistic``'s true value, or None when unknown.

    ``kstars_2``, ``kstars:2``, ``degree_moment_3`` and ``kstars_from_counts:2`` name their base
    statistic.

    Examples
    --------
    >>> statistic_range("transitivity"), statistic_range("kstars:3"), statistic_range("nope")
    ((0.0, 1.0), (0.0, inf), None)
    """
    name = statistic.partition(":")[0]
    if name in STATISTIC_RANGES:
        return STATISTIC_RANGES[name]
    base = re.sub(r"_\d+$", "", name)
    base = re.sub(r"^kstars_\d+_from_counts$", "kstars_from_counts", base)
    return STATISTIC_RANGES.get(base)


def no_std_error_reason(method: str | None) -> str:
    """Why ``method`` reports no standard error: its preset's reason
    (:attr:`~ldpgraph.core.protocol.Preset.no_std_error`), else a generic one.

    >>> no_std_error_reason("naive-dlap")[:30]
    'a plug-in of the noisy degrees'
    """
    from .protocols import registry

    if method is not None and method in registry.presets():
        reason = registry.preset(method).no_std_error
        if reason:
            return reason
    return "no closed form of its variance is implemented for this method and statistic"


def epsilon_for_relative_se(
    variance_at: Callable[[float], float | None],
    reference: float,
    epsilon: float,
    *,
    target: float = 1.0,
    epsilon_max: float = 1e4,
    tol: float = 0.02,
    max_evaluations: int = 12,
) -> float | None:
    r"""The ε at which ``sqrt(variance_at(ε)) / |reference|`` falls to ``target``.

    Every estimator's variance is a decreasing function of ε (see
    :mod:`ldpgraph.analysis.planning`); in log-log coordinates it is close to a line, so a
    secant on ``log sd - log(target |reference|)`` against ``log ε``, started at ``epsilon`` and
    ``2 epsilon`` and kept within ``[epsilon, epsilon_max]``, meets ``tol`` in a few evaluations
    (each may cost a fraction of a second). Returns None when the variance is unknown, when
    ``epsilon_max`` is not enough, or when ``max_evaluations`` does not suffice.

    Examples
    --------
    >>> e = epsilon_for_relative_se(lambda e: 100.0 / e ** 2, reference=1.0, epsilon=1.0)
    >>> round(e, 2)   # sd = 10 / e = 1 at e = 10
    10.0
    >>> epsilon_for_relative_se(lambda e: None, 1.0, 1.0) is None
    True
    """
    if not (math.isfinite(reference) and reference != 0 and epsilon > 0):
        return None
    goal = math.log(target * abs(reference))

    def f(log_e: float) -> float | None:
        v = variance_at(math.exp(log_e))
        if v is None or not math.isfinite(v) or v <= 0:
            return None
        return 0.5 * math.log(v) - goal

    lo, hi = math.log(epsilon), math.log(epsilon_max)
    x0, x1 = lo, min(lo + math.log(2.0), hi)
    f0, f1 = f(x0), f(x1)
    for _ in range(max_evaluations - 2):
        if f0 is None or f1 is None:
            return None
        if abs(f1) < tol:
            return math.exp(x1)
        if (f1 - f0) * (x1 - x0) >= 0:  # not decreasing in epsilon: no reliable answer
            return None
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        x2 = min(max(x2, lo), hi)
        if x2 == hi and x1 == hi:
            return None  # epsilon_max is not enough
        x0, f0, x1, f1 = x1, f1, x2, f(x2)
    return math.exp(x1) if f1 is not None and abs(f1) < tol else None


def _num(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) >= 100:
        return f"{x:,.1f}"
    return f"{x:.4g}"


def estimate_notes(
    statistic: str,
    value: float,
    std_error: float | None,
    *,
    method: str | None = None,
    epsilon: float | None = None,
    reference: float | None = None,
    level: float = 0.95,
    no_std_error: str | None = None,
    needed_epsilon: float | Callable[[], float | None] | None = None,
) -> list[str]:
    """The notes a reader needs beside one estimate (empty when it needs none).

    Parameters
    ----------
    statistic : str
        Its name (the range comes from :func:`statistic_range`).
    value, std_error : float, float or None
        The estimate and its standard error (None: none exists).
    method : str, optional
        Prefix of each note, and the key of the default reason for a missing standard error.
    epsilon : float, optional
        The budget, named in the noise warning.
    reference : float, optional
        The magnitude the standard error is compared with: the truth in a simulation; default
        the estimate itself.
    level : float
        Confidence level of the interval given with an out-of-range estimate.
    no_std_error : str, optional
        Why there is no standard error (default :func:`no_std_error_reason`).
    needed_epsilon : float or callable, optional
        The ε for a relative standard error of 1, or a function computing it (called only when
        the warning is given, as it can be slow); None: not named.
    """
    prefix = f"{method}: " if method else ""
    out: list[str] = []
    if not math.isfinite(value):
        ratio = statistic.partition(":")[0] == "transitivity"
        why = ("a ratio whose noisy denominator is <= 0 (transitivity: the 2-star estimate)" if ratio
               else "the computation overflowed or divided by 0")
        out.append(f"{prefix}no estimate ({value}): {why}; the noise dominates at this epsilon")
    finite_se = std_error is not None and math.isfinite(std_error)
    rng = statistic_range(statistic)
    if rng is not None and math.isfinite(value) and not rng[0] <= value <= rng[1]:
        shown = f"[{_num(rng[0])}, {_num(rng[1])}" + ("]" if math.isfinite(rng[1]) else ")")
        if finite_se:
            z = NormalDist().inv_cdf(0.5 + level / 2)
            ci = f"the {level:.0%} interval is [{_num(value - z * std_error)}, {_num(value + z * std_error)}]"
        else:
            ci = "no interval (no standard error)"
        name = statistic.partition(":")[0]
        out.append(f"{prefix}the estimate {_num(value)} is outside {shown}, the range of {name}: "
                   f"noisy estimates can fall outside it (they are not clipped, which would bias them); {ci}")
    if std_error is None:
        out.append(f"{prefix}no standard error: {no_std_error or no_std_error_reason(method)}")
        return out
    ref = value if reference is None else reference
    if finite_se and math.isfinite(ref) and ref != 0 and std_error > abs(ref):
        ratio = std_error / abs(ref)
        text = (f"warning: {prefix}the standard error {_num(std_error)} is {ratio:.3g} times "
                f"|{_num(ref)}| (relative standard error > 1)")
        if epsilon is not None:
            text += f": at epsilon {epsilon:g} the estimate is noise"
        need = needed_epsilon() if callable(needed_epsilon) else needed_epsilon
        if need is not None:
            text += (f"; about epsilon {float(f'{need:.2g}'):g} would be needed for a relative standard "
                     "error of 1")
        out.append(text)
    elif std_error is not None and not finite_se:
        out.append(f"warning: {prefix}the standard error overflows the float range: the estimate is noise")
    return out


def needed_epsilon(method: str, data: object, statistic: str, k: int | None, epsilon: float,
                   reference: float) -> float | None:
    """The ε at which ``method``'s analytic standard error on ``data`` falls to ``|reference|``.

    ``data`` is what the registered method estimates from (a Graph for the adjacency
    protocols, the degrees for the others); the variance is the method's exact
    ``analytic_variance`` (or the square of its ``analytic_rmse``). None when the method has
    neither.

    Examples
    --------
    >>> e = needed_epsilon("unbiased-dlap", [3, 1, 2, 2] * 10, "edges", None, 0.01, 40.0)
    >>> 0.01 < e < 1
    True
    """
    from .run.method import get_method

    proto = get_method(method)
    prepare = getattr(proto, "prepare", None)
    if prepare is not None:
        prepare(data)

    def variance_at(e: float) -> float | None:
        v = proto.analytic_variance(data, statistic, k, e)
        if v is None:
            r = proto.analytic_rmse(data, statistic, k, e)
            v = None if r is None else r * r
        return v

    return epsilon_for_relative_se(variance_at, reference, epsilon)


def single_run_notes(run: Any, data: Any = None) -> list[str]:
    """The notes of every estimate of a :class:`~ldpgraph.experiments.single.SingleRun`.

    The reference of the noise warning is the truth; ``data`` (the graph, or its degrees)
    lets the warning name the ε that would be needed.
    """
    out: list[str] = []
    stat = run.statistic
    for e in run.estimates:
        if getattr(e, "details", None) is not None:  # a vector statistic: its summary, no scalar notes
            continue
        kind = getattr(e, "std_error_kind", None) or ""

        def need(method: str = e.method) -> float | None:
            if data is None:
                return None
            try:
                return needed_epsilon(method, data, stat, run.k, run.epsilon, run.truth)
            except (TypeError, ValueError, MemoryError):
                return None

        reason = kind[len("none: "):] if kind.startswith("none: ") else None
        out += estimate_notes(stat, e.estimate, e.std_error, method=e.method, epsilon=run.epsilon,
                              reference=run.truth, needed_epsilon=need, no_std_error=reason)
    return out


def dropped_edge_notes(report: Any) -> list[str]:
    """Notes on what reading a graph dropped: self-loops and repeated edges (a simple graph has
    neither), from the counts of its :class:`~ldpgraph.graph.core.LoadReport`.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> for line in dropped_edge_notes(from_edge_array([[0, 0], [0, 1], [0, 1]]).report):
    ...     print(line)
    1 self-loop (v v) dropped: the graph is simple (its node is kept)
    1 repeated edge dropped (the same edge again): the graph is simple, each edge counts once
    """
    out = []
    loops = int(getattr(report, "self_loops_dropped", 0) or 0)
    if loops:
        out.append(f"{loops:,} self-loop{'' if loops == 1 else 's'} (v v) dropped: the graph is simple "
                   f"({'its node is' if loops == 1 else 'their nodes are'} kept)")
    rep = int(getattr(report, "repeated_duplicates_dropped", 0) or 0)
    if rep:
        out.append(f"{rep:,} repeated edge{'' if rep == 1 else 's'} dropped (the same edge again): the graph "
                   "is simple, each edge counts once")
    return out


def experiment_notes(result: Any, graphs: Any = ()) -> list[str]:
    """The notes of an experiment, per (graph, method, statistic, k): estimates outside the
    statistic's range (how many trials at which ε), a relative RMSE above 1 (the ε at which the
    analytic standard error reaches the truth, where ``graphs`` gives the graph inputs), and no
    analytic RMSE (why).

    Parameters
    ----------
    result : ExperimentResult
        Its ``records`` and ``summary``.
    graphs : sequence of GraphInput
        The resolved graphs, matched to the summary by label (optional).
    """
    from .protocols.statistics import GRAPH_STATISTICS, VECTOR_STATISTICS

    data = {g.label: g for g in graphs}
    out: list[str] = []
    outside: dict[tuple, list[str]] = {}
    for cell in result.records:
        rng = statistic_range(cell.statistic)
        est = cell.estimates
        if rng is None or not len(est):
            continue
        n_out = int(((est < rng[0]) | (est > rng[1])).sum())
        if n_out:
            key = (cell.graph, cell.method, cell.statistic, cell.k)
            outside.setdefault(key, []).append(f"{n_out} of {len(est)} trials at epsilon {cell.epsilon:g}")
    groups: dict[tuple, list[Any]] = {}
    for r in result.summary:
        groups.setdefault((r.graph, r.method, r.statistic, r.k), []).append(r)
    for key, rows in groups.items():
        graph, method, stat, k = key
        if stat in VECTOR_STATISTICS:  # a summary per trial (an approximation factor), not an error
            continue
        what = f"{method} on {graph}, {stat}" + ("" if k is None else f" k={k}")
        if key in outside:
            rng = statistic_range(stat)
            shown = f"[{_num(rng[0])}, {_num(rng[1])}" + ("]" if math.isfinite(rng[1]) else ")")
            out.append(f"{what}: estimates outside {shown} in {', '.join(outside[key])} (noisy estimates "
                       "are not clipped, which would bias them)")
        noisy = sorted(r.epsilon for r in rows if math.isfinite(r.relative_rmse) and r.relative_rmse > 1)
        if noisy:
            at = ", ".join(f"{e:g}" for e in noisy)
            text = f"warning: {what}: relative RMSE > 1 at epsilon {at}: its estimates are noise there"
            g = data.get(graph)
            if g is not None:
                d = g.graph if stat in GRAPH_STATISTICS else g.degrees
                truth = next(r.truth for r in rows)
                try:
                    need = needed_epsilon(method, d, stat, k, noisy[-1], truth)
                except (TypeError, ValueError, MemoryError):
                    need = None
                if need is not None:
                    text += (f"; about epsilon {float(f'{need:.2g}'):g} would be needed for a relative RMSE "
                             "of 1")
            out.append(text)
        if not any(math.isfinite(r.relative_analytic_rmse) for r in rows):
            out.append(f"{what}: no analytic RMSE: {no_std_error_reason(method)}")
    return out


def planned_epsilon(
    statistic: str, k: int | None, degrees: Any, rmse: float, d_max: int | None = None
) -> float | None:
    """The ε the planner (:func:`ldpgraph.analysis.planning.epsilon_for_rmse`) says reaches an
    RMSE of ``rmse`` for a degree statistic, under the assumed degree ``degrees`` (a curator has
    only the noisy reports: their degrees clipped at 0 stand in); None for a statistic the
    planner does not know.

    Examples
    --------
    >>> e = planned_epsilon("edges", None, [3, 1, 2, 2] * 250, rmse=10.0)
    >>> round(e, 3)   # n Var(eta)/4 = 100: 2p/(1-p)^2 = 0.4, p = (7 - sqrt(45))/2, e = -ln p
    1.925
    """
    from .analysis.planning import PLANNED_STATISTICS, DegreeModel, epsilon_for_rmse

    name = {"kstars": f"kstars_{k}", "degree_moment": f"degree_moment_{k}",
            "kstars_from_counts": f"kstars_{k}_from_counts"}.get(statistic, statistic)
    known = {p.replace("<k>", str(k)).replace("<j>", str(k)) for p in PLANNED_STATISTICS}
    if name not in known or not math.isfinite(rmse) or rmse <= 0:
        return None
    import numpy as np

    model = DegreeModel.from_degrees(np.clip(np.asarray(degrees, dtype=np.int64), 0, None), d_max=d_max)
    try:
        return float(epsilon_for_rmse(name, model, rmse=rmse))
    except ValueError:
        return None
