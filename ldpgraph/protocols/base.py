r"""The protocol layer: every compared method as a named sequence of rounds with an explicit budget.

A :class:`Protocol` is what one method of the experiments does. In each :class:`Round` every
node computes its release from its *own* neighbour list (or degree) plus whatever the curator
broadcast after earlier rounds; after the last round the curator estimates. The budget of a
node and its split across rounds is explicit: :meth:`Protocol.rounds` lists each round with
its epsilon, mechanism and sensitivity, and :meth:`Protocol.budget` returns
``{round name: epsilon}`` (the values sum to the node's total, sequential composition).

Inputs: degree protocols take an array of degrees (or anything with ``degrees``); protocols
that need adjacency (``needs == "adjacency"``) take an ldpgraph
:class:`~ldpgraph.graph.Graph` and raise a clear ``TypeError`` when given degrees only
(:func:`require_graph`). Simulation is vectorized over trials where the protocol allows
(``vectorized``: degree releases) and per trial where it cannot (a randomized graph).

The registry of all methods (:mod:`ldpgraph.registry`) holds these objects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon
from ..graph.core import Graph

__all__ = ["Round", "Protocol", "require_graph", "FLOAT_BITS", "MODELS"]

#: Bits of one released real number (float64) or integer report on the wire.
FLOAT_BITS = 64

#: the models a method runs in (:attr:`Protocol.model`): local differential privacy with one
#: round, two rounds or more (the curator publishes something between rounds), or the shuffle
#: model (a shuffler drops the senders' ids before the curator sees the rows)
MODELS = ("local, one round", "local, two rounds", "local, multi-round", "shuffle")


@dataclass(frozen=True)
class Round:
    """One round of a protocol, as seen by a node.

    Attributes
    ----------
    name : str
        ``"degree"``, ``"degree-bound"``, ``"rr"``, ``"local-count"``, ...
    releases : str
        What each node releases in this round.
    mechanism : str
        ``"dlap"``, ``"laplace"``, ``"randomized-response"``.
    epsilon : float
        This round's share of the node's budget.
    sensitivity : str
        The sensitivity the noise is calibrated to (a number or a formula).
    """

    name: str
    releases: str
    mechanism: str
    epsilon: float
    sensitivity: str


class Protocol:
    """Base class of the protocol layer (see the module docstring).

    Subclasses set the class attributes and implement :meth:`rounds`,
    :meth:`estimate_trials` and :meth:`truth`; :meth:`analytic_mean` and
    :meth:`analytic_variance` return None where no closed form exists.
    """

    #: registry name (the ``method`` column of the records)
    name: str = ""
    #: statistics this protocol estimates
    statistics: tuple[str, ...] = ()
    #: what a node needs to hold: its degree only, or its neighbour list
    needs: Literal["degrees", "adjacency"] = "degrees"
    #: whether trials are simulated together (True) or one at a time (False)
    vectorized: bool = True
    #: whether the estimate is unbiased (on the statistics it estimates)
    unbiased: bool = False
    #: how ``ldpgraph node`` / ``curate`` run it: (``--protocol`` name, its options), or None
    deployed_as: tuple[str, dict[str, Any]] | None = None
    #: why it cannot be deployed (where ``deployed_as`` is None)
    not_deployable: str = ""
    #: the reference it follows
    reference: str = ""
    #: the model it runs in, one of :data:`MODELS` ("" where not stated)
    model: str = ""
    #: the statistics of which it is the recommended method of its :attr:`model`: what ``ldpgraph
    #: estimate`` and ``experiment`` run when no ``--methods`` is given (the choice, from the
    #: README's measurements, is stated where it is set)
    recommended: tuple[str, ...] = ()
    #: the public options (names of the protocol layer's :class:`~ldpgraph.core.protocol.Option`)
    #: its simulation takes, through :meth:`with_options`
    option_names: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"<protocol {self.name}: {', '.join(self.statistics)}>"

    # ----------------------------------------------------------------- to implement

    def rounds(self, epsilon: float, statistic: str | None = None) -> tuple[Round, ...]:
        raise NotImplementedError

    def estimate_trials(
        self,
        data: Any,
        statistic: str,
        param: int | None,
        epsilon: float,
        n_trials: int = 1,
        *,
        rng: Any = None,
    ) -> NDArray[np.float64]:
        raise NotImplementedError

    def truth(self, data: Any, statistic: str, param: int | None) -> float:
        raise NotImplementedError

    def analytic_mean(self, data: Any, statistic: str, param: int | None, epsilon: float) -> float | None:
        return None

    def analytic_variance(self, data: Any, statistic: str, param: int | None, epsilon: float) -> float | None:
        return None

    def communication(self, data: Any, epsilon: float, statistic: str | None = None) -> tuple[float, float]:
        """Mean bits a node uploads and downloads, ``(upload, download)``."""
        return float(FLOAT_BITS * len(self.rounds(epsilon, statistic))), 0.0

    def prepare(self, data: Any) -> None:
        """Precompute what every trial on ``data`` reuses (called before timed trials); optional."""

    def _configured(self, public: dict[str, Any]) -> Protocol:
        """A copy configured with ``public`` (names among :attr:`option_names`)."""
        raise NotImplementedError

    def _deployed_with(self, public: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """``deployed_as`` with the options ``public`` added (``shares`` as the CLI's ``Q=F,...``)."""
        if self.deployed_as is None:
            return None
        name, opts = self.deployed_as
        more = {k: ",".join(f"{q}={float(f)!r}" for q, f in v.items()) if isinstance(v, dict) else v
                for k, v in public.items()}
        return (name, {**opts, **more})

    # ----------------------------------------------------------------- provided

    def with_options(self, **public: Any) -> Protocol:
        """A copy of this simulation configured with public options (those of the same name on
        the protocol layer and on ``ldpgraph node``/``curate``); itself when none is given.

        ValueError on an option its simulation does not take.

        Examples
        --------
        >>> from ldpgraph.registry import get_method
        >>> get_method("arr-triangles").with_options(mu=0.5).mu
        0.5
        >>> get_method("rr-triangles").with_options(mu=0.5)
        Traceback (most recent call last):
            ...
        ValueError: rr-triangles's simulation does not take --mu (it takes no option)
        """
        if not public:
            return self
        other = [k for k in public if k not in self.option_names]
        if other:
            takes = ", ".join("--" + k.replace("_", "-") for k in self.option_names) or "no option"
            flags = ", ".join("--" + k.replace("_", "-") for k in other)
            raise ValueError(f"{self.name}'s simulation does not take {flags} (it takes {takes})")
        return self._configured(dict(public))

    def budget(self, epsilon: float, statistic: str | None = None) -> dict[str, float]:
        """``{round name: epsilon}``; the values sum to ``epsilon``."""
        return {r.name: r.epsilon for r in self.rounds(check_epsilon(epsilon), statistic)}

    def edge_budget(self, epsilon: float, statistic: str | None = None) -> str:
        """The node budget ``epsilon`` in the per-edge convention, where the method's literature
        counts the budget per edge (an edge's two endpoints together), and how it compares there;
        ``""`` where it does not (``ldpgraph methods`` prints it beside the node's total).

        >>> from ldpgraph.registry import get_method
        >>> get_method("rr-triangles").edge_budget(1.0)
        ''
        """
        return ""

    def supports(self, statistic: str) -> bool:
        return statistic in self.statistics

    def analytic_rmse(self, data: Any, statistic: str, param: int | None, epsilon: float) -> float | None:
        """``sqrt(bias^2 + variance)`` in closed form, or None."""
        mean = self.analytic_mean(data, statistic, param, epsilon)
        var = self.analytic_variance(data, statistic, param, epsilon)
        if mean is None or var is None:
            return None
        bias = mean - self.truth(data, statistic, param)
        return math.sqrt(bias * bias + var)

    def _check_statistic(self, statistic: str) -> None:
        if statistic not in self.statistics:
            raise ValueError(
                f"method {self.name!r} estimates {', '.join(self.statistics)}, not statistic {statistic!r}"
            )


def require_graph(data: Any, method: str) -> Graph:
    """``data`` as a Graph, or a ``TypeError`` saying the method needs the adjacency.

    Examples
    --------
    >>> require_graph([1, 2, 1], "rr-triangles")
    Traceback (most recent call last):
        ...
    TypeError: method 'rr-triangles' needs the graph's adjacency (an ldpgraph Graph), got list (degrees only)
    """
    if isinstance(data, Graph):
        return data
    graph = getattr(data, "graph", None)
    if isinstance(graph, Graph):
        return graph
    raise TypeError(
        f"method {method!r} needs the graph's adjacency (an ldpgraph Graph), got "
        f"{type(data).__name__} (degrees only)"
    )
