r"""The triangle protocols as protocol-layer methods (triangles and transitivity).

=================================== ============================================================
method                              rounds: budget (of the triangle part; see below)
=================================== ============================================================
``rr-triangles``                    rr: eps
``two-round-triangles-laplace``     rr: eps/2; local-count: eps/2 (Lap(d_max/eps2), d_max public
                                    = the true maximum degree, as in Imola et al.'s experiments)
``two-round-triangles-laplace-private``
                                    degree-bound: eps/10; rr: 0.45 eps; local-count: 0.45 eps
``two-round-triangles-dlap`` (ours) rr: eps/2; local-count: eps/2 (DLap at sensitivity D - 1,
                                    D = the true maximum lower degree)
``two-round-triangles-dlap-private``
                                    degree-bound: eps/10 (lower degree + DLap); rr, local-count:
                                    0.45 eps each
=================================== ============================================================

For ``transitivity`` every method first spends ``degree_share`` (default 0.1) of the budget on
``d_v + DLap`` (round ``degree``) and the rest on its triangle rounds;
:mod:`ldpgraph.protocols.transitivity` gives the ratio and its delta-method variance.

Communication (mean bits per node): uploads count one bit per reported lower pair (node v
reports v bits: (n - 1)/2 on average) and 64 bits per released number; a two-round download is
the noisy graph as an edge list, 2 ceil(log2 n) bits per expected noisy edge, plus 64 bits for
a broadcast bound.
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
from .randomized_response import DEFAULT_MAX_BYTES, expected_noisy_edges
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
    rr_triangle_variance,
    simulate_rr_triangles,
    simulate_two_round,
    two_round_budget,
    two_round_moments,
    wedge_memory_check,
)

__all__ = ["TriangleProtocol", "WedgeTriangleProtocol", "RRTriangles", "TwoRoundTriangles",
           "TRIANGLE_METHODS"]

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


class RRTriangles(TriangleProtocol):
    """``rr-triangles``: one round of randomized response; Imola et al.'s empirical estimator.

    ``max_bytes`` bounds the memory of a trial (MemoryError naming the two-round protocols
    beyond it); ``method`` picks the counting kernel (see
    :func:`~ldpgraph.protocols.triangles.noisy_triple_classes`).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> RRTriangles().budget(1.0)
    {'rr': 1.0}
    >>> RRTriangles().budget(1.0, "transitivity")
    {'degree': 0.1, 'rr': 0.9}
    >>> RRTriangles().estimate_trials(g, "triangles", None, 40.0, 2, rng=0).round(6).tolist()
    [1.0, 1.0]
    """

    name = "rr-triangles"
    deployed_as = ("rr-triangles", {})
    reference = "Imola, Murakami, Chaudhuri, USENIX Security 2021 (RR, empirical estimation)"
    unbiased = True

    def __init__(self, *, max_bytes: int | None = DEFAULT_MAX_BYTES, method: str = "auto", **kw: Any):
        super().__init__(**kw)
        self.max_bytes = max_bytes
        self.method = method

    def _triangle_rounds(self, eps):
        return [
            Round("rr", "bits a_vj for j < v by randomized response", "randomized-response", eps, "1 bit")
        ]

    def _triangles(self, g, eps, n, gen):
        return simulate_rr_triangles(g, eps, n, rng=gen, method=self.method, max_bytes=self.max_bytes)

    def _triangle_moments(self, g, eps):
        return float(triangle_count(g)), rr_triangle_variance(g, eps)

    def _triangle_bits(self, g, eps):
        return (g.n_nodes - 1) / 2.0, 0.0


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


class TwoRoundTriangles(WedgeTriangleProtocol):
    """Two-round triangle counting: Local2Rounds (``noise="laplace"``) or ours (``"dlap"``).

    Parameters
    ----------
    noise : {"laplace", "dlap"}
    private_bound : bool
        Spend ``bound_share`` of the budget on the degree bound instead of taking the true
        maximum (which is fine for benchmarking, not for deployment).
    split : float
        Fraction of the remaining budget spent on round 1.
    max_bytes : int or None
        Memory bound of the lower wedges the protocol enumerates (MemoryError beyond it, before
        any is built: :func:`~ldpgraph.protocols.triangles.wedge_memory_check`); None: no bound.

    Examples
    --------
    >>> TwoRoundTriangles(noise="dlap").budget(1.0)
    {'rr': 0.5, 'local-count': 0.5}
    >>> split = TwoRoundTriangles(noise="laplace", private_bound=True).budget(1.0)
    >>> {k: round(v, 3) for k, v in split.items()}
    {'degree-bound': 0.1, 'rr': 0.45, 'local-count': 0.45}
    """

    def __init__(
        self,
        *,
        noise: str = "dlap",
        private_bound: bool = False,
        split: float = 0.5,
        bound_share: float = 0.1,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        **kw: Any,
    ) -> None:
        super().__init__(max_bytes=max_bytes, **kw)
        if noise not in ("dlap", "laplace"):
            raise ValueError(f"noise must be 'dlap' or 'laplace', got {noise!r}")
        self.noise = noise
        self.private_bound = bool(private_bound)
        two_round_budget(1.0, private_bound=private_bound, split=split, bound_share=bound_share)
        self.split = float(split)
        self.bound_share = float(bound_share)
        self.name = f"two-round-triangles-{noise}" + ("-private" if private_bound else "")
        self.unbiased = not private_bound
        if noise == "dlap":
            self.deployed_as = ("two-round-triangles-dlap", {"private_bound": True} if private_bound else {})
            self.reference = "ours; after Local2Rounds (Imola, Murakami, Chaudhuri, USENIX Security 2021)"
        else:
            self.not_deployable = "continuous Laplace releases are not integer report rows"
            self.reference = "Local2Rounds (Imola, Murakami, Chaudhuri, USENIX Security 2021)"

    def _budget(self, eps):
        return two_round_budget(
            eps, private_bound=self.private_bound, split=self.split, bound_share=self.bound_share
        )

    def _triangle_rounds(self, eps):
        e0, e1, e2 = self._budget(eps)
        out = []
        if self.private_bound:
            what = "d_v + Lap(1/eps0)" if self.noise == "laplace" else "lower degree + DLap(e^-eps0)"
            out.append(Round("degree-bound", what, self.noise, e0, "1"))
        out.append(
            Round("rr", "bits a_vj for j < v by randomized response", "randomized-response", e1, "1 bit")
        )
        if self.noise == "laplace":
            out.append(Round("local-count", "w_v + Lap(d_max/eps2)", "laplace", e2, "d_max"))
        else:
            out.append(Round("local-count", "round(w_v) + DLap(e^{-eps2/(D-1)})", "dlap", e2, "D - 1"))
        return out

    def _kw(self):
        return {
            "noise": self.noise,
            "private_bound": self.private_bound,
            "split": self.split,
            "bound_share": self.bound_share,
        }

    def _triangles(self, g, eps, n, gen):
        return simulate_two_round(g, eps, n, rng=gen, wedges=self._wedges(g), **self._kw())

    def _triangle_moments(self, g, eps):
        return two_round_moments(g, eps, wedges=self._wedges(g), **self._kw())

    def _triangle_bits(self, g, eps):
        n = g.n_nodes
        e0, e1, _ = self._budget(eps)
        up = (n - 1) / 2.0 + FLOAT_BITS * (2 if self.private_bound else 1)
        noisy = expected_noisy_edges(n, g.n_edges, e1)
        down = noisy * 2 * math.ceil(math.log2(max(n, 2))) + (FLOAT_BITS if self.private_bound else 0)
        return up, down


def _make(name: str) -> TriangleProtocol:
    if name == "rr-triangles":
        return RRTriangles()
    parts = name.split("-")
    return TwoRoundTriangles(noise=parts[3], private_bound=name.endswith("-private"))


#: registry names -> factories
TRIANGLE_METHODS: dict[str, Any] = {
    name: (lambda name=name: _make(name))
    for name in (
        "rr-triangles",
        "two-round-triangles-laplace",
        "two-round-triangles-laplace-private",
        "two-round-triangles-dlap",
        "two-round-triangles-dlap-private",
    )
}


def _make_arr() -> TriangleProtocol:
    from .arr_triangles import ARRTriangles  # deferred: that module imports TriangleProtocol from here

    return ARRTriangles()


TRIANGLE_METHODS["arr-triangles"] = _make_arr
