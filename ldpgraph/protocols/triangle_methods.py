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

from typing import Any

from .._validation import check_nonnegative_int
from ..graph.statistics import triangle_count
from .arr_triangles import ARRTriangles
from .base import FLOAT_BITS, Round
from .randomized_response import DEFAULT_MAX_BYTES, expected_noisy_edges, noisy_graph_bits
from .triangle_base import TriangleProtocol, WedgeTriangleProtocol, shares_as_split
from .triangles import (
    rr_triangle_variance,
    simulate_rr_triangles,
    simulate_two_round,
    two_round_budget,
    two_round_moments,
)

__all__ = ["TriangleProtocol", "WedgeTriangleProtocol", "RRTriangles", "TwoRoundTriangles",
           "TRIANGLE_METHODS"]

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
    model = "local, one round"
    #: the most accurate one-round method (README: 0.060 on Facebook at epsilon 1, against WLocal's
    #: ~0.5 scale errors); it holds the noisy graph, so it refuses graphs whose noisy graph would not fit
    recommended = ("triangles", "transitivity")
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
        self.bound: int | None = None  # a public bound D (option d_max); None: the true maximum
        if noise == "dlap":
            self.option_names = ("shares",) if self.private_bound else ("d_max", "shares")
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
        kw = {
            "noise": self.noise,
            "private_bound": self.private_bound,
            "split": self.split,
            "bound_share": self.bound_share,
        }
        return kw if self.bound is None else {**kw, "bound": self.bound}

    def _configured(self, public):
        """``d_max``: the public bound D on lower degrees; ``shares``: the layer protocol's
        ``rr``, ``local_count`` (and ``lower_degree`` with the private bound) as split and
        bound_share."""
        split, bound_share = self.split, self.bound_share
        if public.get("shares") is not None:
            split, bound_share = shares_as_split(self.name, public["shares"], "rr", self.private_bound)
        out = TwoRoundTriangles(noise=self.noise, private_bound=self.private_bound, split=split,
                                bound_share=bound_share, max_bytes=self.max_bytes)
        out.bound = self.bound
        if public.get("d_max") is not None:
            out.bound = check_nonnegative_int(public["d_max"], "d_max", minimum=1)
        out.deployed_as = self._deployed_with(public)
        return out

    def _triangles(self, g, eps, n, gen):
        return simulate_two_round(g, eps, n, rng=gen, wedges=self._wedges(g), **self._kw())

    def _triangle_moments(self, g, eps):
        return two_round_moments(g, eps, wedges=self._wedges(g), **self._kw())

    def _triangle_bits(self, g, eps):
        n = g.n_nodes
        e0, e1, _ = self._budget(eps)
        up = (n - 1) / 2.0 + FLOAT_BITS * (2 if self.private_bound else 1)
        noisy = expected_noisy_edges(n, g.n_edges, e1)
        down = noisy_graph_bits(n, noisy) + (FLOAT_BITS if self.private_bound else 0)
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
    return ARRTriangles()


TRIANGLE_METHODS["arr-triangles"] = _make_arr
