"""The simulation base class of ``edge-orient-triangles`` and ``edge-orient-reference``
(:mod:`.edge_orient_methods`): adjacency input, per-trial simulation, the transitivity composition.

TRANSITION (issue 33): the other triangle protocols simulate through their own hooks
(:class:`~ldpgraph.protocols.rr_triangles.TriangleSimulation`); this module goes with the
edge-orient classes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from ..graph.statistics import transitivity as exact_transitivity
from ..graph.statistics import triangle_count
from .base import FLOAT_BITS, Protocol, Round, require_graph
from .transitivity import simulate_transitivity, transitivity_budget, transitivity_moments

__all__ = ["TriangleProtocol"]


class TriangleProtocol(Protocol):
    """Common part: adjacency input, per-trial simulation, the transitivity composition."""

    statistics = ("triangles", "transitivity")
    needs = "adjacency"
    vectorized = False

    def __init__(self, *, degree_share: float = 0.1) -> None:
        transitivity_budget(1.0, degree_share)  # validates
        self.degree_share = float(degree_share)

    # triangle part, to implement ------------------------------------------------------

    def _triangle_rounds(self, eps: float) -> list[Round]:
        raise NotImplementedError

    def _triangles(self, g: Any, eps: float, n: int, gen: np.random.Generator) -> NDArray[np.float64]:
        raise NotImplementedError

    def _triangle_moments(self, g: Any, eps: float) -> tuple[float, float]:
        raise NotImplementedError

    def _triangle_bits(self, g: Any, eps: float) -> tuple[float, float]:
        raise NotImplementedError

    # protocol -------------------------------------------------------------------------

    def _split(self, epsilon: float, statistic: str | None) -> tuple[float, float]:
        eps = check_epsilon(epsilon)
        if statistic == "transitivity":
            return transitivity_budget(eps, self.degree_share)
        return 0.0, eps

    def rounds(self, epsilon: float, statistic: str | None = None) -> tuple[Round, ...]:
        eps_s, eps_t = self._split(epsilon, statistic)
        out = []
        if eps_s:
            out.append(Round("degree", "d_v + DLap", "dlap", eps_s, "1"))
        return (*out, *self._triangle_rounds(eps_t))

    def estimate_trials(self, data, statistic, param, epsilon, n_trials=1, *, rng=None):
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
        gen = check_rng(rng)
        eps_s, eps_t = self._split(epsilon, statistic)
        t_hat = self._triangles(g, eps_t, n_trials, gen)
        if statistic == "triangles":
            return t_hat
        return simulate_transitivity(g, t_hat, eps_s, gen)

    def truth(self, data, statistic, param):
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        return float(triangle_count(g)) if statistic == "triangles" else float(exact_transitivity(g))

    def _moments(self, data, statistic, epsilon) -> tuple[float | None, float | None] | None:
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        eps_s, eps_t = self._split(epsilon, statistic)
        memo = getattr(self, "_memo", None)
        if memo is not None and memo[0] is g and memo[1] == eps_t:
            mean_t, var_t = memo[2]
        else:  # analytic mean, variance and RMSE are asked for one after the other
            mean_t, var_t = self._triangle_moments(g, eps_t)
            self._memo = (g, eps_t, (mean_t, var_t))
        if statistic == "triangles":
            return mean_t, var_t
        return transitivity_moments(g, mean_t, var_t, eps_s)

    def analytic_mean(self, data, statistic, param, epsilon):
        return (self._moments(data, statistic, epsilon) or (None, None))[0]

    def analytic_variance(self, data, statistic, param, epsilon):
        return (self._moments(data, statistic, epsilon) or (None, None))[1]

    def analytic_rmse(self, data, statistic, param, epsilon):
        mean, var = self._moments(data, statistic, epsilon) or (None, None)
        if mean is None or var is None:
            return None
        bias = mean - self.truth(data, statistic, param)
        return math.sqrt(bias * bias + var)

    def communication(self, data, epsilon, statistic=None):
        g = require_graph(data, self.name)
        eps_s, eps_t = self._split(epsilon, statistic)
        up, down = self._triangle_bits(g, eps_t)
        return up + (FLOAT_BITS if eps_s else 0.0), down
