r"""The wedge-shuffle protocols as methods of the experiments (``--stat triangles``, ``--stat four_cycles``).

Each method wraps its deployable protocol (:mod:`ldpgraph.protocols.wedge_shuffle`): a trial is
the protocol's law-equivalent fast simulation (a fresh public pairing per trial, the counts
drawn from their binomial laws), the analytic mean and variance its exact moments, and
``ldpgraph node/shuffle/curate --protocol NAME`` its deployment.

==================================  ==========================================================
method                              accounting of the local ε₀ (central (ε, δ = 1e-8))
==================================  ==========================================================
``wshuffle-triangles``              numerical bound of Feldman et al. (the reference's)
``wshuffle-triangles-rr`` (ours)    the same, clone probability 2/(e^ε₀ + 1) of randomized response
``wshuffle-triangles-ignore``       numerical; 0.1 ε on a DLap noisy degree (the reference: Laplace),
                                    pairs below the average dropped
``wshuffle-triangles-ignore-rr``    (ours) the same with the randomized-response clones
``wlocal-triangles``                none: no shuffler, ε₀ = ε (WLocal)
``wshuffle-four-cycles`` ...        the same three for 4-cycles
==================================  ==========================================================

Communication: a node sends one bit per pair of the matching (P = n/2 bits; as report rows,
only the pairs whose noisy bit is 1) and its 53-bit sender token; nothing is downloaded.

Examples
--------
>>> m = WEDGE_SHUFFLE_METHODS["wshuffle-triangles"]()
>>> m.budget(1.0), m.deployed_as
({'wedge-shuffle': 1.0}, ('wshuffle-triangles', {}))
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon
from ..core.plan import ShuffleGuarantee
from ..core.registry import get as get_deployable
from ..graph.cycles import four_cycle_count
from ..graph.statistics import triangle_count
from .base import Protocol, Round, require_graph
from .wedge_shuffle import codegree_sums

__all__ = ["WedgeShuffleMethod", "WEDGE_SHUFFLE_METHODS"]


class WedgeShuffleMethod(Protocol):
    """A wedge-shuffle protocol of the layer as an experiment method (see the module docstring)."""

    needs = "adjacency"
    vectorized = False
    unbiased = True

    def __init__(self, name: str) -> None:
        self.protocol = get_deployable(name)
        self.name = name
        self.statistics = self.protocol.statistics
        self.ignore = "ignore" in name
        # the ignoring curator needs the public pairing (any seed: a simulation draws its own)
        self.deployed_as = (name, {"pairing_seed": 1} if self.ignore else {})
        self.unbiased = not self.ignore
        shuffled = any(r.shuffled for r in self.protocol.rounds())  # the deployed round, not the name
        self.model = "shuffle" if shuffled else "local, one round"
        if name in ("wshuffle-triangles-rr", "wshuffle-four-cycles-rr"):
            # accounted as the randomized response it is: a smaller eps0 for the same central
            # epsilon, hence a smaller error (README: 0.40 against 0.446 for triangles at epsilon 1)
            self.recommended = tuple(self.statistics)
        self.reference = self.protocol.reference
        self._sums: dict[int, tuple[Any, dict[str, float]]] = {}
        #: options its plan takes from the user (n_users is the graph's; the pairing is drawn per trial)
        self.option_names = tuple(o.name for o in self.protocol.options
                                  if o.name not in ("n_users", "pairing_seed"))  # wlocal-*: no delta
        self.public: dict[str, Any] = {}

    def _configured(self, public: dict[str, Any]) -> WedgeShuffleMethod:
        """The options go to the protocol's plan, which its fast simulation and moments read."""
        out = WedgeShuffleMethod(self.name)
        out.public = {**self.public, **public}
        self.protocol.plan(1.0, n_users=4, **{**self.deployed_as[1], **out.public})  # checks the values
        out.deployed_as = self._deployed_with(public)
        return out

    def _plan(self, graph: Any, epsilon: float) -> Any:
        return self.protocol.plan(check_epsilon(epsilon), n_users=graph.n_nodes,
                                  **{**self.deployed_as[1], **self.public})

    def rounds(self, epsilon: float, statistic: str | None = None) -> tuple[Round, ...]:
        eps = check_epsilon(epsilon)
        what = "noisy wedge bits a_ki a_kj, one per pair of the public matching, at the local eps0"
        if "triangles" in self.statistics:
            what += ", and the bit on its partner at eps"
        mech = "randomized-response" if self.name.startswith("wlocal") else "shuffled-randomized-response"
        delta = f"{self.public['delta']:g}" if "delta" in self.public else "1e-8"
        if not self.ignore:
            return (Round("wedge-shuffle", what, mech, eps,
                          f"1 bit (central (eps, {delta}) by amplification)"),)
        noise = "DLap(e^-eps/10)"
        share = self.public.get("degree_share", 0.1)
        if share != 0.1:
            noise = noise.replace("10", f"{1 / share:g}")
        return (Round("degree", f"d_v + {noise}", "dlap", share * eps, "1"),
                Round("wedge-shuffle", what + " (kept pairs)", mech, eps - share * eps,
                      f"1 bit (central ({1 - share:g} eps, {delta}) by amplification)"))

    def prepare(self, data: Any) -> None:
        g = require_graph(data, self.name)
        if id(g) not in self._sums:
            self._sums = {id(g): (g, codegree_sums(g))}  # (the graph kept: its id stays its own)

    def estimate_trials(self, data: Any, statistic: str, param: int | None, epsilon: float, n_trials: int = 1,
                        *, rng: Any = None) -> NDArray[np.float64]:
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        return self.protocol.fast_simulate(g, self._plan(g, epsilon), statistic, n_trials, rng)

    def truth(self, data: Any, statistic: str, param: int | None) -> float:
        g = require_graph(data, self.name)
        return float(triangle_count(g) if statistic == "triangles" else four_cycle_count(g))

    def _moments(self, data: Any, statistic: str, epsilon: float) -> tuple[float, float]:
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        self.prepare(g)
        return self.protocol.moments(g, self._plan(g, epsilon), statistic, self._sums[id(g)][1])

    def analytic_mean(self, data: Any, statistic: str, param: int | None, epsilon: float) -> float | None:
        return self._moments(data, statistic, epsilon)[0]

    def analytic_variance(self, data: Any, statistic: str, param: int | None, epsilon: float) -> float | None:
        return self._moments(data, statistic, epsilon)[1]

    def privacy(self, data: Any, epsilon: float) -> dict[str, Any]:
        """The central guarantee of a run (the experiments' ``costs.csv``, column ``privacy``)."""
        pub = self._plan(require_graph(data, self.name), epsilon).public
        keys = ("central_epsilon", "central_delta", "edge_dp_epsilon", "edge_dp_delta", "local_epsilon",
                "accounting", "shuffled_users")
        return {k: pub[k] for k in keys}

    def guarantee(self, epsilon: float, n_users: int) -> ShuffleGuarantee | None:
        """The plan's shuffle-model guarantee at ``epsilon`` for ``n_users`` users (None for ``wlocal-*``)."""
        return self.protocol.plan(check_epsilon(epsilon), n_users=n_users,
                                  **{**self.deployed_as[1], **self.public}).shuffle

    def communication(self, data: Any, epsilon: float, statistic: str | None = None) -> tuple[float, float]:
        g = require_graph(data, self.name)
        return float(g.n_nodes // 2 + 53), 0.0  # a bit per pair of the matching, and the 53-bit sender token


WEDGE_SHUFFLE_METHODS: dict[str, Any] = {
    name: (lambda name=name: WedgeShuffleMethod(name))
    for name in ("wshuffle-triangles", "wshuffle-triangles-rr", "wshuffle-triangles-ignore",
                 "wshuffle-triangles-ignore-rr", "wlocal-triangles", "wshuffle-four-cycles",
                 "wshuffle-four-cycles-rr", "wlocal-four-cycles")
}
