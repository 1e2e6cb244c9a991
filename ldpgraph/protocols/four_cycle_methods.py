r"""The 4-cycle methods of the experiments (``--stat four_cycles``), on :mod:`ldpgraph.protocols.base`.

================================ ================================================================
method                           rounds: budget (defaults)
================================ ================================================================
``rr-four-cycles`` (ours)        rr: eps (RR on the lower bits; the curator inverts RR on every
                                 4-edge pattern); exact variance
``two-round-four-cycles-dlap``   rr: 2/3 eps; local-count: 1/3 eps (the node's 4-cycles through
(ours)                           itself from the broadcast Z, DLap at the broadcast sensitivity
                                 S; d_max = the true maximum degree, public as in the
                                 benchmarks of Imola et al.); exact RR variance, the noise part
                                 at the S of a reference draw
``wlocal-four-cycles``           the reference's one-round local estimator (Imola, Murakami,
                                 Chaudhuri, CCS 2022, WLocal): RR on the wedge bits of a random
                                 perfect matching of pairs; simulation only
================================ ================================================================

The formulas and proofs are in :mod:`ldpgraph.protocols.four_cycles`. The split of the
two-round protocol: S grows like :math:`1/\varepsilon_1^2` (it sums products of two debiased
bits) and the noise like :math:`S/\varepsilon_2`, minimised near
:math:`\varepsilon_1 = 2\varepsilon/3`.
"""

from __future__ import annotations

from typing import Any

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from ..graph.cycles import four_cycle_count
from .base import FLOAT_BITS, Protocol, Round, require_graph
from .four_cycles import (
    four_cycle_sensitivity,
    rr_four_cycle_variance,
    simulate_rr_four_cycles,
    simulate_two_round_four_cycles,
    simulate_wlocal_four_cycles,
    two_round_noise_variance,
    two_round_rr_variance,
    z_matrix,
)
from .randomized_response import flip_probability, keep_probability, noisy_lower_pairs

__all__ = ["FourCycleProtocol", "RRFourCycles", "TwoRoundFourCycles", "WLocalFourCycles",
           "FOUR_CYCLE_METHODS"]

#: share of the budget spent on round 1 by ``two-round-four-cycles-dlap``
RR_SHARE = 2.0 / 3.0

_RR_RELEASE = "bits a_vj for j < v by randomized response"


class FourCycleProtocol(Protocol):
    """Common part: adjacency input, per-trial simulation, truth and memoised moments."""

    statistics = ("four_cycles",)
    needs = "adjacency"
    vectorized = False
    unbiased = True

    def __init__(self) -> None:
        self._memo: tuple[Any, ...] | None = None

    def truth(self, data, statistic, param):
        self._check_statistic(statistic)
        return float(four_cycle_count(require_graph(data, self.name)))

    def analytic_mean(self, data, statistic, param, epsilon):
        return self.truth(data, statistic, param)

    def analytic_variance(self, data, statistic, param, epsilon):
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        eps = check_epsilon(epsilon)
        if self._memo is not None and self._memo[0] is g and self._memo[1] == eps:
            return self._memo[2]
        var = self._variance(g, eps)
        self._memo = (g, eps, var)
        return var

    def _variance(self, g, eps):
        return None

    def estimate_trials(self, data, statistic, param, epsilon, n_trials=1, *, rng=None):
        self._check_statistic(statistic)
        g = require_graph(data, self.name)
        n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
        return self._simulate(g, check_epsilon(epsilon), n_trials, check_rng(rng))

    def _simulate(self, g, eps, n_trials, gen):
        raise NotImplementedError


class RRFourCycles(FourCycleProtocol):
    """``rr-four-cycles``: one round of RR; the unbiased inversion on each 4-edge pattern.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [2, 3], [3, 0]])
    >>> m = RRFourCycles()
    >>> m.budget(1.0), m.estimate_trials(g, "four_cycles", None, 40.0, 2, rng=0).round(6).tolist()
    ({'rr': 1.0}, [1.0, 1.0])
    """

    name = "rr-four-cycles"
    deployed_as = ("rr-four-cycles", {})
    model = "local, one round"
    #: README: 0.043 on Facebook at epsilon 1, ~40 times more accurate than WLocal
    recommended = ("four_cycles",)
    reference = "ours (RR as Imola et al. USENIX 2021; unbiased 4-cycle inversion)"

    def rounds(self, epsilon, statistic=None):
        eps = check_epsilon(epsilon)
        return (Round("rr", _RR_RELEASE, "randomized-response", eps, "1 bit"),)

    def _simulate(self, g, eps, n_trials, gen):
        return simulate_rr_four_cycles(g, eps, n_trials, rng=gen)

    def _variance(self, g, eps):
        return rr_four_cycle_variance(g, eps)

    def communication(self, data, epsilon, statistic=None):
        g = require_graph(data, self.name)
        return (g.n_nodes - 1) / 2.0, 0.0


class TwoRoundFourCycles(FourCycleProtocol):
    """``two-round-four-cycles-dlap``: RR, then each node's noisy 4-cycle count through itself.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [2, 3], [3, 0]])
    >>> {k: round(v, 4) for k, v in TwoRoundFourCycles().budget(1.0).items()}
    {'rr': 0.6667, 'local-count': 0.3333}
    """

    name = "two-round-four-cycles-dlap"
    deployed_as = ("two-round-four-cycles-dlap", {})
    model = "local, two rounds"
    #: the only two-round 4-cycle method (README: 0.24 on Facebook at epsilon 1)
    recommended = ("four_cycles",)
    reference = "ours; two rounds after Local2Rounds (Imola, Murakami, Chaudhuri, USENIX Security 2021)"

    def __init__(self, *, rr_share: float = RR_SHARE, d_max: int | None = None) -> None:
        super().__init__()
        if not 0.0 < float(rr_share) < 1.0:
            raise ValueError(f"rr_share must be in (0, 1), got {rr_share!r}")
        self.rr_share = float(rr_share)
        self.d_max = d_max

    option_names = ("d_max", "shares")

    def _configured(self, public):
        """``d_max`` as the constructor's; ``shares`` (the layer's ``rr``, ``local_count``) as
        ``rr_share``."""
        rr_share, d_max = self.rr_share, self.d_max
        sh = public.get("shares")
        if sh is not None:
            if not isinstance(sh, dict) or sorted(sh) != ["local_count", "rr"]:
                raise ValueError(f"shares of {self.name}: rr=F,local_count=F, got {sh!r}")
            if abs(float(sh["rr"]) + float(sh["local_count"]) - 1.0) > 1e-9:
                raise ValueError(f"shares of {self.name} must sum to 1, got {sh!r}")
            rr_share = float(sh["rr"])
        if public.get("d_max") is not None:
            d_max = check_nonnegative_int(public["d_max"], "d_max", minimum=1)
        out = TwoRoundFourCycles(rr_share=rr_share, d_max=d_max)
        out.deployed_as = self._deployed_with(public)
        return out

    def _split(self, epsilon):
        eps = check_epsilon(epsilon)
        return self.rr_share * eps, eps - self.rr_share * eps

    def rounds(self, epsilon, statistic=None):
        e1, e2 = self._split(epsilon)
        return (
            Round("rr", _RR_RELEASE, "randomized-response", e1, "1 bit"),
            Round("local-count", "sum_{u<w in N(v)} (Z_uw - 1), rounded, + DLap", "dlap", e2,
                  "S (broadcast: two largest row sums of the d_max - 1 largest |Z - 1|)"),
        )

    def _bound(self, g):
        return self.d_max if self.d_max is not None else max(int(g.degrees.max(initial=0)), 1)

    def _simulate(self, g, eps, n_trials, gen):
        e1, e2 = self._split(eps)
        return simulate_two_round_four_cycles(g, e1, e2, self._bound(g), n_trials, rng=gen)

    def _variance(self, g, eps):
        e1, e2 = self._split(eps)
        _, index = noisy_lower_pairs(g, keep_probability(e1), flip_probability(e1), rng=0)  # reference draw
        s = four_cycle_sensitivity(z_matrix(g.n_nodes, index, e1), self._bound(g))
        return (two_round_rr_variance(g, e1) + two_round_noise_variance(g.n_nodes, e2, s)) / 16.0

    def communication(self, data, epsilon, statistic=None):
        g = require_graph(data, self.name)
        return (g.n_nodes - 1) / 2.0 + FLOAT_BITS, 0.0


class WLocalFourCycles(FourCycleProtocol):
    """``wlocal-four-cycles``: the reference's one-round local estimator (simulation only).

    Examples
    --------
    >>> WLocalFourCycles().budget(2.0)
    {'wedge-rr': 2.0}
    """

    name = "wlocal-four-cycles"
    not_deployable = "a reference method, simulated for comparison"
    reference = "Imola, Murakami, Chaudhuri, CCS 2022 (WLocal, 4-cycles)"

    def rounds(self, epsilon, statistic=None):
        eps = check_epsilon(epsilon)
        return (Round("wedge-rr", "wedge bits a_ij a_kj for the pairs (i, k) of a random matching, by RR",
                      "randomized-response", eps, "1 bit"),)

    def _simulate(self, g, eps, n_trials, gen):
        return simulate_wlocal_four_cycles(g, eps, n_trials, rng=gen)

    def communication(self, data, epsilon, statistic=None):
        g = require_graph(data, self.name)
        return float(g.n_nodes // 2), 0.0


#: registry names -> factories
FOUR_CYCLE_METHODS: dict[str, Any] = {
    "rr-four-cycles": RRFourCycles,
    "two-round-four-cycles-dlap": TwoRoundFourCycles,
    "wlocal-four-cycles": WLocalFourCycles,
}
