r"""One simulated run of every method on one graph: truth, estimates and standard errors.

This is what ``ldpgraph estimate`` prints. A method that deploys runs as ``ldpgraph node
--simulate --seed SEED`` → ``curate`` runs it: the in-memory executor with the sampler
``Seeded(SEED)``, the same rows and so the same estimate, bit for bit; any other (or on a degree
sequence without edges) draws from the stream of block 0 of its cell in an experiment with the
same seed (:mod:`ldpgraph.experiments.seeding`).

The standard error of each estimate is the curator's: computed from the reports and public
values only, as ``ldpgraph curate`` computes it. A method that deploys runs its deployed
protocol in memory (:func:`~ldpgraph.run.run_in_memory`, the estimate and the standard error
from the same reports); a simulated one (not deployable, or
a degree sequence without edges) computes it from its own reports where its protocol can
(``simulate_with_error``: the k-star and degree protocols). Its
kind (``std_error_kind``) is a key of :data:`~ldpgraph.protocols.curator.SE_KINDS` or
``"none: <reason>"``. The closed-form standard deviation at the true graph, which a curator
does not have, is ``analytic_sd`` (for comparison only).

A vector statistic (``core_numbers``) has no scalar truth: its run carries the method's
summary (``details``: mean and max approximation factor, degeneracy, histogram of the factors)
and no estimate, error or standard error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._progress import Progress
from .._validation import check_epsilon, check_nonnegative_int
from ..protocols.statistics import GRAPH_STATISTICS, get_statistic
from .options import check_options, configure_methods
from .runner import GraphInput, _build_units, parse_statistics, resolve_graph_inputs, resolve_methods
from .seeding import block_rng, root_entropy

__all__ = ["MethodEstimate", "SingleRun", "estimate_once"]


@dataclass(frozen=True)
class MethodEstimate:
    """One method's estimate in a single simulated run.

    Attributes
    ----------
    method : str
    estimate : float
        NaN for a vector statistic (see ``details``).
    std_error : float or None
        The curator's standard error: from the reports and public values only; None without one.
    std_error_kind : str
        How it is computed: a key of :data:`~ldpgraph.protocols.curator.SE_KINDS`, or
        ``"none: <reason>"``.
    analytic_sd : float or None
        The closed-form standard deviation of the estimate at the true graph (a simulation's
        oracle, for comparison); None where no closed form exists.
    details : dict or None
        The summary of a vector statistic, from a method's ``trial_details`` (the k-core methods:
        mean and max approximation factor, degeneracy, k-core sizes, rounds, a histogram of the
        factors).
    per_node : dict or None
        A vector statistic's estimate of every node (the k-core methods: core numbers), by the
        graph's own labels (a networkx graph's nodes, a file's ids or names);
        :meth:`per_node_series` gives it as a pandas Series.
    protocol : str or None
        The deployed protocol it ran (``ldpgraph node --protocol``), None for a simulation.
    plan : dict or None
        That run's plan (:meth:`~ldpgraph.core.plan.Plan.to_dict`: ε per round, the public options
        it ran with, e.g. a D taken from the graph), as ``ldpgraph curate --json`` writes it.
    """

    method: str
    estimate: float
    std_error: float | None
    std_error_kind: str
    analytic_sd: float | None = None
    details: dict[str, Any] | None = None
    per_node: dict[Any, float] | None = field(default=None, repr=False, compare=False)
    protocol: str | None = None
    plan: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def per_node_series(self) -> Any:
        """:attr:`per_node` as a pandas Series indexed by node label, named after the method."""
        if self.per_node is None:
            raise ValueError(f"{self.method} estimates no per-node values")
        from ..tables import node_series

        return node_series(self.per_node, self.method)

    @property
    def is_vector(self) -> bool:
        """Whether this is a vector statistic's summary (no scalar estimate)."""
        return self.details is not None


@dataclass(frozen=True)
class SingleRun:
    """Result of :func:`estimate_once`."""

    graph: str
    n_nodes: int
    n_edges: int
    statistic: str
    k: int | None
    epsilon: float
    seed: int
    truth: float
    estimates: tuple[MethodEstimate, ...]
    #: the public protocol options of the run (``run_experiment``'s ``options``); empty: defaults
    options: dict[str, Any] = field(default_factory=dict)

    def _table_columns(self) -> dict[str, list[Any]]:
        rows = self.to_dict()["estimates"]
        n = len(rows)
        head = {c: [getattr(self, c)] * n for c in ("graph", "statistic", "k", "epsilon", "seed", "truth")}
        per = ("method", "estimate", "std_error", "std_error_kind", "analytic_sd", "error", "relative_error")
        return {**head, **{c: [r[c] for r in rows] for c in per}}

    def to_pandas(self) -> Any:
        """One row per method (graph, statistic, k, epsilon, seed, truth, method, estimate,
        std_error, std_error_kind, analytic_sd, error, relative_error: the fields of ``ldpgraph
        estimate --json``); pandas is imported only here."""
        from ..tables import to_frame

        return to_frame(self._table_columns(), integers=("k",))

    def _repr_html_(self) -> str:
        from ..tables import html_table

        what = self.statistic if self.k is None else f"{self.statistic}, k = {self.k}"
        return html_table(self._table_columns(), caption=f"{self.graph}: {what}, epsilon {self.epsilon:g}, "
                          f"truth {self.truth:.6g}, seed {self.seed}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN and infinities as None)."""

        def clean(x):
            return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x

        return {
            "graph": self.graph,
            "n_nodes": self.n_nodes,
            "n_edges": self.n_edges,
            "statistic": self.statistic,
            "k": self.k,
            "epsilon": self.epsilon,
            "seed": self.seed,
            **({"options": dict(self.options)} if self.options else {}),
            # a vector statistic has no scalar truth (its summary is in each method's entry)
            "truth": None if any(e.is_vector for e in self.estimates) else clean(self.truth),
            "estimates": [
                {
                    "method": e.method,
                    "estimate": clean(e.estimate),
                    "std_error": clean(e.std_error),
                    "std_error_kind": e.std_error_kind,
                    "analytic_sd": clean(e.analytic_sd),
                    "error": clean(e.estimate - self.truth),
                    "relative_error": clean(abs(e.estimate - self.truth) / abs(self.truth))
                    if self.truth
                    else None,
                    **(e.details or {}),
                    **({"protocol": e.protocol, "plan": e.plan} if e.protocol is not None else {}),
                }
                for e in self.estimates
            ],
        }


def _deployed(p: Any, statistic: str, k: int | None,
              options: Mapping[str, Any]) -> tuple[Any, str, dict[str, Any]] | None:
    """How ``ldpgraph node`` / ``curate`` run method ``p`` for ``statistic``: ``(protocol, its
    statistic, its options)`` (the method's, then the run's ``options`` the protocol takes), or None
    where it does not deploy or its deployed protocol does not estimate ``statistic``."""
    from ..protocols import registry as layer

    deployed = getattr(p, "deployed_as", None)
    if deployed is None:
        return None
    proto = layer.get(deployed[0])
    stat = statistic
    if k is not None:  # a parameter in the statistic's name where the protocol reads it there (kstars:2)
        try:
            stat = proto.check_statistic(f"{statistic}:{k}")
        except ValueError:
            pass
    if stat == statistic and statistic not in proto.statistics:
        return None
    taken = {o.name for o in proto.options}
    public = {n: v for n, v in {**p.public, **options}.items() if n in taken and v is not None}
    if stat == statistic and k is not None and "kstar_counts" in taken:  # local k-stars: --kstar-counts
        public.setdefault("kstar_counts", (k,))
    return proto, stat, public


def _deployed_estimate(p: Any, proto: Any, stat: str, public: dict[str, Any], graph: Any, epsilon: float,
                       seed: int, sd: float | None) -> MethodEstimate:
    """``p`` run as deployed: the in-memory executor with ``Seeded(seed)``, the sampler of ``ldpgraph
    node --simulate --seed SEED`` (the same rows, so ``curate`` prints the same estimate bit for bit)."""
    from ..core.sampling import Seeded
    from ..run.memory import run_in_memory

    run = run_in_memory(proto, graph, epsilon, sampler=Seeded(seed), statistic=stat, **public)
    e = run.estimate
    kind = e.std_error_kind
    se = None if kind.startswith("none") else e.std_error
    return MethodEstimate(p.name, float(e.value), se, kind, sd, protocol=proto.name, plan=run.plan.to_dict())


def _simulated_estimate(p: Any, graph: Any, statistic: str, k: int | None, epsilon: float, gen: Any,
                        sd: float | None) -> MethodEstimate:
    """One trial of the fast simulator of ``p`` (the first of its experiment cell), with the standard
    error its curator computes from its reports where its protocol can (``simulate_with_error``),
    else why there is none."""
    with_error = getattr(getattr(p, "protocol", None), "simulate_with_error", None)
    if with_error is not None:  # a simulation whose curator has a standard error from the reports
        est, se, kind = with_error(graph, p.plan(epsilon, graph, statistic), statistic, gen, param=k)
        return MethodEstimate(p.name, est, se, kind, sd)
    est = float(p.estimate_trials(graph, statistic, k, epsilon, 1, rng=gen)[0])
    deployed = getattr(p, "deployed_as", None)
    if deployed is None:
        why = f"not deployable ({getattr(p, 'not_deployable', '') or 'no curator'}): no report-based variance"
    else:
        why = f"{statistic} is simulated only (the deployed {deployed[0]} does not estimate it)"
    return MethodEstimate(p.name, est, None, "none: " + why, sd)


def _sd(variance: float | None) -> float | None:
    if variance is None or not math.isfinite(variance):
        return None
    return math.sqrt(max(float(variance), 0.0))


def estimate_once(
    graph: Any,
    *,
    epsilon: float,
    statistic: str = "kstars",
    k: int | None = 2,
    methods: Sequence[Any] | None = None,
    seed: int | None = None,
    graph_seed: int = 0,
    options: Mapping[str, Any] | None = None,
    quiet: bool = False,
) -> SingleRun:
    r"""Simulate one run of the protocol and of every method on ``graph``.

    Parameters
    ----------
    graph
        A dataset name, synthetic spec or edge-list path; a networkx or igraph graph, a
        scipy.sparse adjacency matrix, a pandas edge table, an ldpgraph Graph; a degree
        sequence as :class:`~ldpgraph.graph.Degrees`; or ``{label: any of those}`` (as one entry
        of :func:`~ldpgraph.experiments.runner.resolve_graph_inputs`). The result's ``graph``
        is the label (``G.name`` of a networkx graph, the file's name, ...).
    epsilon : float
        Budget per node, in (0, inf).
    statistic : str
        ``"kstars"`` (all k-star methods), a curator statistic (``unbiased-dlap`` and
        ``naive-dlap``, each its own draws), or an adjacency statistic
        (:data:`~ldpgraph.protocols.statistics.GRAPH_STATISTICS`: by default the recommended
        method of each model, :func:`~ldpgraph.run.method.recommended_methods`, or all the
        protocols that estimate it where none is recommended; the graph must carry its edges).
    k : int or None
        Star size (or moment power) for parameterised statistics.
    methods : sequence, optional
        As in :func:`~ldpgraph.experiments.runner.run_experiment` (``"all"`` accepted); default
        :data:`~ldpgraph.experiments.runner.DEFAULT_METHODS` for the degree statistics, as there
        and on the command line (the adjacency statistics: see ``statistic``).
    seed : int or None
        Root seed (None: fresh entropy, returned in ``SingleRun.seed``).
    graph_seed : int
        Seed of synthetic graphs.
    options : mapping, optional
        Public protocol options, as in :func:`~ldpgraph.experiments.runner.run_experiment`
        (``{"d_max": 8}`` is ``--d-max 8`` of ``ldpgraph node`` / ``curate``).
    quiet : bool
        No progress on stderr (otherwise, for a run longer than a second, a tqdm bar of the
        methods on a terminal, and a line every ~10 s elsewhere: :mod:`ldpgraph._progress`).

    Examples
    --------
    >>> from ldpgraph.graph import Degrees
    >>> run = estimate_once({"toy": Degrees([3, 1, 2, 2])}, epsilon=2.0, k=2, seed=3,
    ...                     methods=["unbiased-dlap", "local-lap-kstars"])
    >>> run.truth, [e.method for e in run.estimates], [e.std_error_kind for e in run.estimates]
    (5.0, ['unbiased-dlap', 'local-lap-kstars'], ['unbiased', 'exact'])
    """
    eps = check_epsilon(epsilon)
    graph_stat = statistic in GRAPH_STATISTICS
    if statistic == "kstars" or (not graph_stat and get_statistic(statistic).parameter is not None):
        k = check_nonnegative_int(k, "k", minimum=1)
        stats = parse_statistics([f"{statistic}:{k}"], ks=())
    else:
        k = None
        stats = parse_statistics([statistic], ks=())
    if methods is None:
        from ..run.method import method_names, recommended_methods
        from .runner import DEFAULT_METHODS

        methods = DEFAULT_METHODS
        if graph_stat:
            methods = list(recommended_methods(statistic)) or method_names(statistic)
    opts = check_options(options)
    method_objs = configure_methods(resolve_methods(methods), opts)
    entropy = root_entropy(seed)
    ginputs = resolve_graph_inputs(graph if isinstance(graph, Mapping) else [graph], graph_seed=graph_seed)
    if len(ginputs) != 1:
        raise ValueError(f"estimate_once takes one graph, got {len(ginputs)}")
    g: GraphInput = ginputs[0]
    units = _build_units([g], stats, [eps], method_objs)
    from .runner import _truth

    truth = _truth(g, stats[0][0], stats[0][1])
    out: list[MethodEstimate] = []
    with Progress(sum(len(u.methods) for u in units), unit="method", quiet=quiet) as bar:
        for unit in units:
            bar.set_note("running " + ", ".join(unit.methods))
            out.extend(_estimate_unit(unit, g, k, eps, entropy, opts))
            bar.update(len(unit.methods), note="")
    return SingleRun(g.label, g.n_nodes, g.n_edges, stats[0][0], k, eps, entropy, truth, tuple(out), opts)


def _estimate_unit(unit: Any, g: GraphInput, k: int | None, eps: float, entropy: int,
                   opts: Mapping[str, Any]) -> list[MethodEstimate]:
    """The estimates of one unit's methods (the first trial of its cell), each with the curator's
    standard error from the reports (or why none) beside the closed form at the truth."""
    gen = block_rng(entropy, unit.key, 0)
    p = unit.method
    data = g.degrees if unit.data is None else unit.data
    p.prepare(data)
    details = getattr(p, "trial_details", None)
    deployed = _deployed(p, unit.statistic, k, opts)
    if details is not None:  # a vector statistic: the run's summary, no scalar estimate
        summary = getattr(getattr(p, "protocol", None), "run_details", None)
        ran: dict[str, Any] = {}
        if deployed is not None and g.graph is not None and summary is not None:  # the deployed run's
            from ..core.sampling import Seeded
            from ..run.memory import run_in_memory

            proto, stat, public = deployed
            run = run_in_memory(proto, g.graph, eps, sampler=Seeded(entropy), statistic=stat, **public)
            extra = summary(g.graph, run.estimate.core_numbers, run.estimate.rounds)
            ran = {"protocol": proto.name, "plan": run.plan.to_dict()}
        else:
            extra = details(data, eps, rng=gen)
        per = extra.pop("per_node", None)
        labels = None if per is None or g.graph is None else g.graph.by_label(per)
        return [MethodEstimate(p.name, math.nan, None, "none: a vector statistic (see its summary)", None,
                               extra, labels, **ran)]
    sd = _sd(p.analytic_variance(data, unit.statistic, k, eps))
    if deployed is not None and g.graph is not None:  # the nodes as `node --graph` numbers them
        return [_deployed_estimate(p, *deployed, g.graph, eps, entropy, sd)]
    graph = g.graph if g.graph is not None else data
    return [_simulated_estimate(p, graph, unit.statistic, k, eps, gen, sd)]
