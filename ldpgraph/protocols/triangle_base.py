"""The base classes of the triangle protocols (:mod:`.triangle_methods`, :mod:`.arr_triangles`).

:class:`TriangleProtocol` holds what every triangle method shares (adjacency input, per-trial
simulation, the transitivity composition); :class:`WedgeTriangleProtocol` adds the lower wedges
of a second round. They live here, below both method modules, so that
:mod:`.triangle_methods` can list ``arr-triangles`` and :mod:`.arr_triangles` can subclass
:class:`WedgeTriangleProtocol` without importing each other both ways. Both names are also
importable from :mod:`.triangle_methods`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from ..graph.statistics import transitivity as exact_transitivity
from ..graph.statistics import triangle_count, two_star_count
from ..mechanisms import DiscreteLaplace
from .base import FLOAT_BITS, Protocol, Round, require_graph
from .randomized_response import DEFAULT_MAX_BYTES
from .transitivity import (
    transitivity_budget,
    transitivity_delta_variance,
    transitivity_estimate,
    two_star_estimate,
    two_star_variance,
)
from .triangles import (
    BYTES_PER_WEDGE,
    lower_wedges,
    wedge_memory_check,
)

__all__ = ["TriangleProtocol", "WedgeTriangleProtocol"]

_STATS = ("triangles", "transitivity")


class TriangleProtocol(Protocol):
    """Common part: adjacency input, per-trial simulation, the transitivity composition."""

    statistics = _STATS
    needs = "adjacency"
    vectorized = False

    def __init__(self, *, degree_share: float = 0.1, clip: bool = False) -> None:
        transitivity_budget(1.0, degree_share)  # validates
        self.degree_share = float(degree_share)
        self.clip = bool(clip)

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
        mech = DiscreteLaplace(epsilon=eps_s)
        s_hat = np.array(
            [two_star_estimate(g.degrees + mech.sample(g.n_nodes, rng=gen), eps_s) for _ in range(n_trials)]
        )
        return np.asarray(transitivity_estimate(t_hat, s_hat, clip=self.clip), dtype=np.float64)

    def truth(self, data, statistic, param):
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        return float(triangle_count(g)) if statistic == "triangles" else float(exact_transitivity(g))

    def _moments(self, data, statistic, epsilon) -> tuple[float, float] | None:
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
        if self.clip:
            return None  # the delta method does not cover the clipped ratio
        s2 = two_star_count(g)
        if s2 == 0:
            return None
        var = transitivity_delta_variance(mean_t, s2, var_t, two_star_variance(g.degrees, eps_s))
        return 3.0 * mean_t / s2, var

    def analytic_mean(self, data, statistic, param, epsilon):
        m = self._moments(data, statistic, epsilon)
        return None if m is None else m[0]

    def analytic_variance(self, data, statistic, param, epsilon):
        m = self._moments(data, statistic, epsilon)
        return None if m is None else m[1]

    def analytic_rmse(self, data, statistic, param, epsilon):
        m = self._moments(data, statistic, epsilon)
        if m is None:
            return None
        bias = m[0] - self.truth(data, statistic, param)
        return math.sqrt(bias * bias + m[1])

    def communication(self, data, epsilon, statistic=None):
        g = require_graph(data, self.name)
        eps_s, eps_t = self._split(epsilon, statistic)
        up, down = self._triangle_bits(g, eps_t)
        return up + (FLOAT_BITS if eps_s else 0.0), down


class WedgeTriangleProtocol(TriangleProtocol):
    """A triangle protocol whose second round sums over the lower wedges (cached per graph).

    ``max_bytes`` bounds their memory (:func:`~ldpgraph.protocols.triangles.wedge_memory_check`
    at ``bytes_per_wedge``, before any is built); None: no bound.
    """

    #: peak bytes per lower wedge of the protocol's trial (see ``wedge_memory_check``)
    bytes_per_wedge = BYTES_PER_WEDGE

    def __init__(self, *, max_bytes: int | None = DEFAULT_MAX_BYTES, **kw: Any) -> None:
        super().__init__(**kw)
        self.max_bytes = max_bytes
        self._cache: list[tuple[Any, Any]] = []

    def prepare(self, data):
        self._wedges(require_graph(data, self.name))

    def _wedges(self, g):
        for graph, w in self._cache:
            if graph is g:
                return w
        wedge_memory_check(g, self.max_bytes, method=self.name, bytes_per_wedge=self.bytes_per_wedge)
        w = lower_wedges(g)
        self._cache = [(g, w), *self._cache[:1]]
        return w


def shares_as_split(name: str, shares: Any, first: str, bound: bool) -> tuple[float, float]:
    """``(split, bound_share)`` of the layer's ``shares`` ``{first, local_count[, lower_degree]}``.

    >>> shares_as_split("x", {"rr": 0.3, "local_count": 0.7}, "rr", False)
    (0.3, 0.1)
    >>> shares_as_split("x", {"lower_degree": 0.2, "rr": 0.4, "local_count": 0.4}, "rr", True)
    (0.5, 0.2)
    """
    keys = ["lower_degree", first, "local_count"] if bound else [first, "local_count"]
    if not isinstance(shares, dict) or sorted(shares) != sorted(keys):
        raise ValueError(f"shares of {name}: {', '.join(f'{k}=F' for k in keys)}, got {shares!r}")
    vals = {k: float(v) for k, v in shares.items()}
    if not all(math.isfinite(v) and v > 0 for v in vals.values()) or abs(sum(vals.values()) - 1) > 1e-9:
        raise ValueError(f"shares of {name} must be positive fractions summing to 1, got {shares!r}")
    split = vals[first] / (vals[first] + vals["local_count"])
    return split, (vals["lower_degree"] if bound else 0.1)
