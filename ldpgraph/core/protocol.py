r"""The protocol abstraction: rounds that run, accumulators that merge, an estimate from their results.

A protocol is written once and run by interchangeable executors (:mod:`ldpgraph.run`): in
memory (experiments, ``ldpgraph estimate``), over report files (``ldpgraph node`` →
``ldpgraph curate``) and on Dask. None of them knows a protocol's name; they call:

``Protocol.plan(epsilon, **public)``
    The public :class:`~ldpgraph.core.plan.Plan`: ε per round and release, sensitivities,
    bounds. ``epsilon`` is always the node's *total* budget.
``Protocol.rounds()``
    The :class:`Round` objects, in order. For each round:

    ``release(plan, nodes, neighbours, broadcast, sampler)``
        The node side, vectorised over a batch of nodes: report rows (the columns of
        :data:`~ldpgraph.core.rows.COLUMNS`) computed from each node's *own* neighbour list,
        the previous round's broadcast and the node's stream of the
        :class:`~ldpgraph.core.sampling.Sampler` (seeded or secure: the same code path).
    ``accumulator(plan, broadcast)``
        A mergeable :class:`Accumulator` of the round's rows (add a chunk, merge two, result).
    ``broadcast(result, plan)``
        What the curator publishes before the next round (None after the last).
    ``senders(plan)``
        For a shuffled round (``shuffled``): how the shuffler and the curator count its senders
        (:class:`Senders`: the users the plan assumes, the token quantity, per-sender quotas).
``Protocol.estimate(result, plan, broadcast, statistic)``
    The :class:`~ldpgraph.protocols.curator.Estimate` from the last round's result.

Optional hooks (``scipy.stats`` style: the executors call them when present): ``default_public``
(public bounds a simulation may take from the true graph, e.g. the benchmark's D),
``statistic_public`` (options a statistic implies), ``rounds_refusal`` (the CLI's answer to a
round or broadcast the protocol does not have),
``encode_broadcast`` / ``decode_broadcast`` (the broadcast's bytes), ``describe_result``
(lines for the CLI), ``screening`` / ``one_node_bounds`` / ``statistic_bound`` (poisoning),
``plan_from_rows(chunk, **public)`` (rows that carry their whole plan: a curator without
``--epsilon`` reads it from the first node's rows), ``noisy_degrees`` (what a planner may assume).

Simulation hooks (what the experiments and ``ldpgraph estimate`` read through a registered
method, :class:`~ldpgraph.run.method.Method`). Each takes ε, the split and every bound **only
from the plan**:

``simulate(graph, plan, statistic, n_trials, rng, *, param=None)``
    The fast simulator: ``n_trials`` estimates drawn from the same law as a
    :func:`~ldpgraph.run.run_in_memory` run (tested so). Without it, a trial *is* such a run.
``moments(graph, plan, statistic, param=None)``
    ``(mean, variance)`` of the estimate in closed form (None where there is none).
``truth(graph, statistic, param=None)``
    The exact value (default: :func:`~ldpgraph.protocols.statistics.statistic_truth`).
``communication(plan, graph)``
    Mean bytes a node uploads and downloads, ``(upload, download)``.
``prepare(graph)``
    Per-graph precomputation the trials reuse (called before timed trials).

A protocol is offered under the names of its :attr:`Protocol.presets` (a name = the protocol +
options: ``two-round-triangles-dlap-private`` is ``two-round-triangles-dlap`` with
``private_bound``); with none, under its own name.

Examples
--------
A protocol is registered with :func:`~ldpgraph.protocols.registry.register`; see the page
``docs/adding-a-protocol.md`` for a complete one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from .plan import Plan
from .sampling import Sampler

__all__ = ["Accumulator", "Round", "Protocol", "Option", "Senders", "Preset"]


class Accumulator(ABC):
    """A mergeable summary of report rows: ``add`` chunks, ``merge`` partitions, then ``result``.

    ``result()`` must not depend on how the rows were cut into chunks and partitions, nor on
    the order of ``add`` and ``merge`` calls: that is what makes the in-memory, file and Dask
    executors agree bit for bit.
    """

    @abstractmethod
    def add(self, chunk: Any) -> None:
        """Check one :class:`~ldpgraph.protocols.reportset.ReportChunk` and keep what the result needs."""

    @abstractmethod
    def merge(self, other: Accumulator) -> Accumulator:
        """Fold ``other`` (another partition of the same round) into this one; returns self."""

    @abstractmethod
    def result(self) -> Any:
        """The round's validated result (raises ValueError, naming file and row, if the rows are wrong)."""


@dataclass(frozen=True)
class Senders:
    """How the rows of a shuffled round let the shuffler and the curator count their senders
    without learning who sent what (:meth:`Round.senders`).

    Every sender adds exactly one row of quantity ``token`` whose value is a fresh random 53-bit
    number (independent of its data and of its id). The shuffler (which sees the node ids) checks
    one token row per node id, ids in ``0..users-1``, at most ``most[q]`` rows of each quantity per
    node, no row more often than there are senders (a sender sends each (quantity, value) at most
    once), and that all ``users`` sent; the curator (which sees no ids) counts the distinct tokens:
    a count below ``users`` means the amplification the plan claims does not hold; a repeated token,
    an upload counted twice.
    """

    users: int
    token: str
    most: Mapping[str, int]


class Round(ABC):
    """One round of a protocol: the node release, its accumulator, and the broadcast after it."""

    #: 1-based round number
    number: int = 1
    #: short name, as in :meth:`Plan.budget`
    name: str = ""
    #: whether the round's rows go through a shuffler (node ids dropped, rows permuted) before the
    #: curator sees them (:mod:`ldpgraph.run.shuffler`); the in-memory executor shuffles them too
    shuffled: bool = False

    @abstractmethod
    def release(
        self,
        plan: Plan,
        nodes: NDArray[np.int64],
        neighbours: Sequence[NDArray[np.int64]],
        broadcast: Any,
        sampler: Sampler,
    ) -> dict[str, NDArray[Any]]:
        """Report rows of ``nodes`` (each with its sorted, distinct neighbour ids)."""

    @abstractmethod
    def accumulator(self, plan: Plan, broadcast: Any, **options: Any) -> Accumulator:
        """An empty accumulator of this round's rows (``options``: screening, expected nodes)."""

    def broadcast(self, result: Any, plan: Plan) -> Any:
        """What the curator publishes after this round (None: no next round)."""
        return None

    def senders(self, plan: Plan) -> Senders | None:
        """How a shuffled round's senders are counted (:class:`Senders`); None: a round whose rows
        do not count them (then ``ldpgraph shuffle`` refuses them)."""
        return None


@dataclass(frozen=True)
class Option:
    """A public parameter of a protocol: the same name in the API and on every CLI command."""

    name: str
    type: type
    default: Any
    help: str

    @property
    def flag(self) -> str:
        """The CLI flag, ``--d-max`` for ``d_max``."""
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Preset:
    """A registered method name: a protocol with options (see :attr:`Protocol.presets`).

    Attributes left None take the protocol's: ``statistics`` (a subset it estimates under this
    name), ``model``, ``unbiased``, ``reference``, ``recommended`` (the statistics of which it is
    the recommended method of its model: what ``ldpgraph estimate`` and ``experiment`` run when no
    ``--methods`` is given). ``not_deployable``: why this preset, unlike its protocol, does not
    deploy ("" where it does). ``no_std_error``: why its estimate has no standard error, where it
    has none ("": the generic reason).
    """

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    statistics: tuple[str, ...] | None = None
    model: str | None = None
    unbiased: bool | None = None
    reference: str | None = None
    recommended: tuple[str, ...] = ()
    not_deployable: str = ""
    no_std_error: str = ""


class Protocol(ABC):
    """Base class of every protocol (see the module docstring)."""

    #: one name everywhere: simulation, records, report rows, CLI
    name: ClassVar[str] = ""
    #: version of its report rows
    version: ClassVar[int] = 1
    #: statistics it estimates
    statistics: ClassVar[tuple[str, ...]] = ()
    #: what a node holds: its degree, or its neighbour list
    needs: ClassVar[Literal["degrees", "adjacency"]] = "adjacency"
    #: whether ``ldpgraph node``/``curate`` can run it (False for continuous releases)
    deployable: ClassVar[bool] = True
    #: the reference it follows
    reference: ClassVar[str] = ""
    #: its public parameters (beyond the total epsilon)
    options: ClassVar[tuple[Option, ...]] = ()
    #: why it cannot be deployed (where ``deployable`` is False)
    not_deployable: ClassVar[str] = ""
    #: the model it runs in (:data:`~ldpgraph.run.method.MODELS`)
    model: ClassVar[str] = ""
    #: whether its estimate is unbiased
    unbiased: ClassVar[bool] = False
    #: the names it is offered under (none: its own name, no options); not inherited
    presets: ClassVar[tuple[Preset, ...]] = ()
    #: whether :meth:`simulate` draws many trials at once (vectorised) rather than one by one
    vectorized: ClassVar[bool] = False
    #: options its simulation draws itself (a user does not set them for a simulation)
    simulation_draws: ClassVar[tuple[str, ...]] = ()
    #: the largest graphs its simulation (and in-memory estimate) takes, and why ("": no limit
    #: beyond memory); ``ldpgraph methods`` prints it and the refusal repeats it
    size_limit: ClassVar[str] = ""

    def __repr__(self) -> str:
        return f"<protocol {self.name}: {', '.join(self.statistics)}>"

    @abstractmethod
    def plan(self, epsilon: float, **public: Any) -> Plan:
        """The public plan at total budget ``epsilon``."""

    @abstractmethod
    def rounds(self) -> tuple[Round, ...]:
        """The rounds, in order."""

    @abstractmethod
    def estimate(self, result: Any, plan: Plan, broadcast: Any, statistic: str) -> Any:
        """The estimate of ``statistic`` from the last round's accumulator result."""

    # ------------------------------------------------------------------ optional hooks

    def default_public(self, graph: Any, public: Mapping[str, Any]) -> dict[str, Any]:
        """Public bounds a *simulation* takes from the true graph when ``public`` (the options given)
        leaves them open (none by default)."""
        return {}

    def statistic_public(self, statistic: str) -> dict[str, Any]:
        """Option values that estimating ``statistic`` implies where the caller leaves them open (e.g. a
        degree release for transitivity); none by default. :func:`~ldpgraph.run.run_in_memory` applies
        them; ``ldpgraph node`` cannot (a node does not know the curator's statistic)."""
        return {}

    def encode_broadcast(self, broadcast: Any) -> bytes:
        """The bytes of a broadcast (protocols with more than one round implement it). The executors
        write them (atomically), sign them and send them (:func:`ldpgraph.run.files.write_broadcast`):
        a protocol opens no file."""
        raise NotImplementedError(f"{self.name} has no broadcast")

    def decode_broadcast(self, data: bytes, plan: Plan, *, source: str = "broadcast") -> Any:
        """The broadcast of :meth:`encode_broadcast`'s ``data``, checked against ``plan``; a
        ValueError naming ``source`` (the file) if it is not one (:func:`ldpgraph.run.files.read_broadcast`
        reads the file, once, after checking its signature where the curator reads it)."""
        raise NotImplementedError(f"{self.name} has no broadcast")

    def rounds_refusal(self) -> str | None:
        """What the CLI answers a request for a round or a broadcast this protocol does not have, e.g.
        naming the protocol that has them (None: the generic refusal)."""
        return None

    def describe_result(self, result: Any, round: Round) -> list[str]:
        """Lines the CLI prints about a round's result (none by default)."""
        return []

    def screening(self, result: Any, round: Round) -> dict[str, Any]:
        """Quantity -> the :class:`~ldpgraph.protocols.screening.Screening` of a round's result (or none)."""
        return {}

    def one_node_bounds(self, result: Any, plan: Plan, round: Round) -> dict[str, float]:
        """How far one node's rows can move the estimate (``one_node_bound``, and for earlier rounds'
        rows ``one_node_round1_bound``); none by default."""
        return {}

    def statistic_bound(self, result: Any, plan: Plan, statistic: str) -> float | None:
        """How far one node's (screened) rows can move the estimate of ``statistic``, for a protocol
        whose bound depends on the statistic (the degree protocol's); None by default (then
        :meth:`one_node_bounds` gives it)."""
        return None

    def noisy_degrees(self, result: Any) -> NDArray[np.int64] | None:
        """The degrees a curator may assume for planning, from a round's result: the noisy degrees
        of rows that release them (the CLI then says what ε the planner needs for an error); None
        by default."""
        return None

    # ------------------------------------------------------------------ simulation hooks

    def simulate(self, graph: Any, plan: Plan, statistic: str, n_trials: int, rng: np.random.Generator,
                 *, param: int | None = None) -> NDArray[np.float64]:
        """``n_trials`` estimates from the law of a run under ``plan`` (optional: see the module
        docstring)."""
        raise NotImplementedError(f"{self.name} has no fast simulator")

    @property
    def has_simulator(self) -> bool:
        """Whether the protocol implements :meth:`simulate`."""
        return type(self).simulate is not Protocol.simulate

    def moments(self, graph: Any, plan: Plan, statistic: str,
                param: int | None = None) -> tuple[float | None, float | None]:
        """``(mean, variance)`` of the estimate under ``plan`` (None: no closed form)."""
        return None, None

    def truth(self, graph: Any, statistic: str, param: int | None = None) -> float:
        """The exact value of ``statistic`` on ``graph`` (without it, a method reads
        :func:`~ldpgraph.protocols.statistics.statistic_truth`)."""
        raise NotImplementedError(f"{self.name} has no truth of its own")

    def communication(self, plan: Plan, graph: Any) -> tuple[float, float]:
        """Mean bytes a node uploads and downloads under ``plan`` (default: 8 bytes per round up,
        8 bytes of broadcast down when there is more than one round)."""
        n = len(plan.rounds)
        return 8.0 * n, 8.0 if n > 1 else 0.0

    def per_graph(self, key: str, graph: Any, build: Any) -> Any:
        """``build(graph)``, kept for the last graph under ``key`` (the trials of a cell reuse it; the
        graph itself is kept, so that its identity stays its own)."""
        cache = self.__dict__.setdefault("_per_graph", {})
        held = cache.get(key)
        if held is None or held[0] is not graph:
            cache[key] = None  # the previous graph's value is freed before the new one is built
            cache[key] = held = (graph, build(graph))
        return held[1]

    def prepare(self, graph: Any) -> None:  # noqa: B027 (an optional hook: nothing by default)
        """Per-graph precomputation the trials reuse (none by default)."""

    def simulation_options(self, public: Mapping[str, Any]) -> tuple[str, ...]:
        """The options a user may add to a simulation run with the options ``public`` (a preset's):
        by default all but :attr:`simulation_draws`; a protocol leaves out those ``public`` makes
        unused or fixes (a private bound's public ``d_max``)."""
        return tuple(o.name for o in self.options if o.name not in self.simulation_draws)

    def placeholder_public(self, public: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Values of the public bounds a simulation takes from the graph that do not change the
        budget split: the plan ``ldpgraph methods`` shows without a graph (none by default).
        ``public``: the options set (leave out a bound they make unused, e.g. a private bound's)."""
        return {}

    def edge_budget(self, epsilon: float, public: Mapping[str, Any]) -> str:
        """The node budget in the per-edge convention, where the literature counts it per edge
        (``ldpgraph methods`` prints it); "" by default."""
        return ""

    def simulation_input(self, data: Any, method: str) -> Any:
        """``data`` as :meth:`simulate` takes it: a Graph (TypeError naming ``method`` for degrees
        only), or for a degree protocol (``needs == "degrees"``) the data itself."""
        if self.needs == "degrees":
            return data
        from ..graph.core import Graph

        if isinstance(data, Graph):
            return data
        graph = getattr(data, "graph", None)
        if isinstance(graph, Graph):
            return graph
        raise TypeError(f"method {method!r} needs the graph's adjacency (an ldpgraph Graph), got "
                        f"{type(data).__name__} (degrees only)")

    # ------------------------------------------------------------------ provided

    def check_statistic(self, statistic: str | None) -> str:
        """``statistic`` (default: the first one) if this protocol estimates it, else ValueError."""
        if statistic is None:
            return self.statistics[0]
        if statistic not in self.statistics:
            raise ValueError(
                f"{self.name} estimates {', '.join(self.statistics)}, not {statistic!r}"
            )
        return statistic

    def check_public(self, public: Mapping[str, Any]) -> dict[str, Any]:
        """``public`` with every option filled by its default; unknown names are refused."""
        known = {o.name: o for o in self.options}
        unknown = sorted(set(public) - set(known))
        if unknown:
            allowed = ", ".join(o.name for o in self.options) or "none"
            raise ValueError(f"{self.name} has no option {', '.join(unknown)} (its options: {allowed})")
        return {name: public.get(name, o.default) for name, o in known.items()}
