r"""Transitivity (global clustering coefficient) :math:`\tau = 3T / S_2` under edge-LDP.

A node spends a share :math:`\varepsilon_S` of its budget on its degree,
:math:`\tilde d_v = d_v + \mathrm{DLap}(e^{-\varepsilon_S})` (sensitivity 1), and the rest on a
triangle protocol (:mod:`ldpgraph.protocols.triangles.kernels`). The curator forms the unbiased
:math:`\hat S_2 = \sum_v g(\tilde d_v)` (the unique unbiased estimate of
:math:`\binom{d_v}{2}`, :func:`ldpgraph.estimators.binomial`), the triangle estimate
:math:`\hat T`, and :math:`\hat\tau = 3\hat T / \hat S_2`. The ratio is not unbiased; its
delta-method variance is given with it. It is not clipped unless asked (``clip=True``), and
what was done is part of the method's name in the records.

Privacy: the degree release and the triangle protocol use disjoint shares of the budget;
by sequential composition each node is :math:`(\varepsilon_S + \varepsilon_T)`-edge-LDP.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._validation import check_epsilon, check_integer_reports
from ...estimators.polynomials import binomial, binomial_variance

__all__ = [
    "two_star_estimate",
    "two_star_variance",
    "transitivity_estimate",
    "transitivity_delta_variance",
    "transitivity_budget",
    "two_star_variance_estimate",
    "transitivity_from_estimates",
    "simulate_transitivity",
    "transitivity_moments",
]


def transitivity_budget(epsilon: float, degree_share: float = 0.1) -> tuple[float, float]:
    """``(eps_degrees, eps_triangles)``: the explicit split of a node's budget.

    Examples
    --------
    >>> [round(x, 3) for x in transitivity_budget(1.0)]
    [0.1, 0.9]
    """
    eps = check_epsilon(epsilon)
    share = float(degree_share)
    if not 0.0 < share < 1.0:
        raise ValueError(f"degree_share must be in (0, 1), got {degree_share!r}")
    return eps * share, eps * (1.0 - share)


def two_star_estimate(noisy_degrees: ArrayLike, epsilon: float) -> float:
    r"""Unbiased :math:`\hat S_2 = \sum_v g(\tilde d_v)` from DLap(e^-eps) degree reports.

    Notes
    -----
    :math:`g(y) = \binom y2 - c` with :math:`c = p/(1-p)^2` (the operator applied to
    :math:`\binom{y}{2}`, whose second difference is 1), so :math:`E g(\tilde d) = \binom d2`.

    Examples
    --------
    >>> round(two_star_estimate([3, 1, 1, 1], 60.0), 9)  # noise-free limit: S_2 = 3
    3.0
    """
    y = check_integer_reports(noisy_degrees, "noisy_degrees")
    return math.fsum(np.asarray(binomial(y, 2, epsilon), dtype=np.float64).ravel())


def two_star_variance(degrees: ArrayLike, epsilon: float) -> float:
    """Exact variance of :func:`two_star_estimate` when the true degrees are ``degrees``.

    Examples
    --------
    >>> two_star_variance([3, 1], 60.0) < 1e-20
    True
    """
    d = check_integer_reports(degrees, "degrees").ravel()
    values, counts = np.unique(d, return_counts=True)
    var = np.asarray(binomial_variance(values, 2, epsilon), dtype=np.float64)
    return math.fsum(var * counts)


def transitivity_estimate(triangles: Any, two_stars: Any, *, clip: bool = False) -> Any:
    r""":math:`3\hat T/\hat S_2` (elementwise); NaN where :math:`\hat S_2 \le 0`.

    ``clip``: clip to [0, 1] (off by default: clipping biases the estimate).

    Examples
    --------
    >>> transitivity_estimate(2.0, 10.0)
    0.6
    >>> transitivity_estimate(5.0, 10.0, clip=True)
    1.0
    """
    t = np.asarray(triangles, dtype=np.float64)
    s = np.asarray(two_stars, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(s > 0, 3.0 * t / np.where(s > 0, s, 1.0), np.nan)
    if clip:
        out = np.clip(out, 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


def transitivity_delta_variance(
    triangles: float, two_stars: float, var_triangles: float, var_two_stars: float
) -> float:
    r"""Delta-method variance of :math:`3\hat T/\hat S_2` with independent :math:`\hat T, \hat S_2`.

    Notes
    -----
    .. math:: \operatorname{Var}\hat\tau \approx \Big(\frac{3}{S_2}\Big)^2\operatorname{Var}\hat T
              + \Big(\frac{3T}{S_2^2}\Big)^2 \operatorname{Var}\hat S_2,

    the first-order expansion of the ratio about :math:`(T, S_2)`; the covariance term
    vanishes because the two estimates use independent releases (the degree reports and the
    triangle protocol's). The relative error of the approximation is
    :math:`O(\operatorname{Var}\hat S_2 / S_2^2)`.

    Examples
    --------
    >>> transitivity_delta_variance(10.0, 100.0, 4.0, 0.0)
    0.0036
    """
    if two_stars <= 0:
        return math.nan
    a = 3.0 / two_stars
    b = 3.0 * triangles / two_stars**2
    return a * a * var_triangles + b * b * var_two_stars


def two_star_variance_estimate(noisy_degrees: ArrayLike, epsilon: float) -> float:
    r"""Unbiased estimate of the variance of :func:`two_star_estimate` from the same reports.

    Notes
    -----
    :math:`\operatorname{Var}\hat S_2 = \sum_v (E g(\tilde d_v)^2 - \binom{d_v}2^2)`, the reports
    being independent. :math:`g(\tilde d_v)^2` is unbiased for the first term, and
    :math:`\binom d2^2 = 6\binom d4 + 6\binom d3 + \binom d2` (check d = 2, 3, 4: 1, 9, 36; both sides
    are polynomials of degree 4 that vanish at 0 and 1) is estimated unbiasedly term by term with
    :func:`ldpgraph.estimators.binomial`. It can be negative.

    Examples
    --------
    >>> abs(two_star_variance_estimate([3, 1, 1, 1], 60.0)) < 1e-9   # no noise: no variance
    True
    """
    y = check_integer_reports(noisy_degrees, "noisy_degrees").ravel()
    g2 = np.asarray(binomial(y, 2, epsilon), dtype=np.float64)
    sq = (6.0 * np.asarray(binomial(y, 4, epsilon), dtype=np.float64)
          + 6.0 * np.asarray(binomial(y, 3, epsilon), dtype=np.float64) + g2)
    return math.fsum((g2 * g2 - sq).tolist())


def transitivity_from_estimates(
    triangles: float, var_triangles: float | None, noisy_degrees: ArrayLike, epsilon_degrees: float
) -> tuple[float, float | None]:
    r"""``(tau_hat, variance estimate)``: :math:`3\hat T/\hat S_2` from a triangle estimate and the
    degree reports, with the delta-method variance at the estimates (None without a triangle
    variance; NaN estimate where :math:`\hat S_2 \le 0`).

    :math:`\hat S_2` is :func:`two_star_estimate`, its variance :func:`two_star_variance_estimate`,
    and :func:`transitivity_delta_variance` is evaluated at :math:`(\hat T, \hat S_2)`.

    Examples
    --------
    >>> tau, var = transitivity_from_estimates(1.0, 0.0, [2, 2, 2], 60.0)   # a triangle, no noise
    >>> round(tau, 9), abs(var) < 1e-9
    (1.0, True)
    """
    s2 = two_star_estimate(noisy_degrees, epsilon_degrees)
    tau = float(transitivity_estimate(triangles, s2))
    if var_triangles is None or not s2 > 0:
        return tau, None
    var_s2 = two_star_variance_estimate(noisy_degrees, epsilon_degrees)
    return tau, transitivity_delta_variance(triangles, s2, var_triangles, max(var_s2, 0.0))


def simulate_transitivity(graph: Any, triangles: Any, epsilon_degrees: float, rng: Any) -> Any:
    r""":math:`3\hat T/\hat S_2` per trial: the triangle estimates ``triangles`` (one per trial) with a
    fresh degree release :math:`d_v + \mathrm{DLap}(e^{-\varepsilon})` per trial (drawn after them).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> simulate_transitivity(g, [1.0, 1.0], 60.0, 0).round(6).tolist()   # 3 T / S_2 = 3/5
    [0.6, 0.6]
    """
    from ...mechanisms import DiscreteLaplace

    gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    t_hat = np.asarray(triangles, dtype=np.float64)
    mech = DiscreteLaplace(epsilon=epsilon_degrees)
    s_hat = np.array([two_star_estimate(graph.degrees + mech.sample(graph.n_nodes, rng=gen), epsilon_degrees)
                      for _ in range(t_hat.size)])
    return np.asarray(transitivity_estimate(t_hat, s_hat), dtype=np.float64)


def transitivity_moments(graph: Any, mean_triangles: float, var_triangles: float,
                         epsilon_degrees: float) -> tuple[float | None, float | None]:
    r"""Mean :math:`3E\hat T/S_2` and delta-method variance (:func:`transitivity_delta_variance`) of
    :func:`simulate_transitivity`'s ratio; ``(None, None)`` on a graph without two-stars.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> mean, var = transitivity_moments(g, 1.0, 0.0, 60.0)
    >>> round(mean, 9), var < 1e-20
    (0.6, True)
    """
    from ...graph.statistics import two_star_count

    s2 = two_star_count(graph)
    if s2 == 0:
        return None, None
    var = transitivity_delta_variance(mean_triangles, s2, var_triangles,
                                      two_star_variance(graph.degrees, epsilon_degrees))
    return 3.0 * mean_triangles / s2, var
