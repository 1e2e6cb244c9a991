r"""Curator side of the degree protocol: unbiased estimates, with standard errors, from reports.

The curator holds only :class:`~ldpgraph.protocols.randomizer.NodeReports`. Every statistic
below is a deterministic post-processing of the noisy integers (no privacy spent), unbiased for
the true graph statistic, with a standard error from an unbiased estimate of its variance
(g(y)^2 - T[f^2](y), DESIGN.md §3) computed from the same reports.

Statistics of the degrees d_1..d_n:

* k-stars S_k = sum_v C(d_v, k) (S_1 = 2|E|), edges |E| = S_1 / 2;
* degree moments sum_v d_v^j; mean degree; population variance of the degrees
  (1/n) sum d^2 - ((1/n) sum d)^2, whose estimate needs the cross terms of (sum d)^2;
* degree histogram / profile phi_k = #{v : d_v = k};
* maximum degree (order statistics);
* the degree entropy H = -sum_v (d_v / 2|E|) ln(d_v / 2|E|) (the entropy of the distribution
  that picks a node proportionally to its degree, i.e. the endpoint of a uniform random edge);
* from released local k-star counts: sum_v of the noisy counts (unbiased for the projected S_k).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .._validation import check_nonnegative_int
from ..estimators.entropies import entropy, entropy_variance_estimate
from ..estimators.order_statistics import HighVarianceWarning, maximum, order_statistic_variance
from ..estimators.polynomials import (
    binomial,
    binomial_variance_estimate,
    power,
    power_variance_estimate,
)
from ..estimators.profiles import profile, profile_variance
from ..estimators.symmetric import sample_variance, sample_variance_variance_estimate
from .randomizer import NodeReports

__all__ = [
    "Estimate",
    "kstars",
    "edge_count",
    "degree_moment",
    "degree_mean",
    "degree_variance",
    "degree_histogram",
    "max_degree",
    "degree_entropy",
    "kstars_from_counts",
]


@dataclass(frozen=True)
class Estimate:
    """A private estimate with its standard error.

    Attributes
    ----------
    value : float
        The estimate.
    std_error : float or None
        sqrt of the variance estimate (clipped at 0); None where no variance estimate exists.
    variance_estimate : float or None
        Unbiased estimate of the variance (can be negative for small samples).
    statistic : str
        What was estimated.
    """

    value: float
    std_error: float | None
    variance_estimate: float | None
    statistic: str

    def __float__(self) -> float:
        return float(self.value)


def _estimate(value: float, var: float | None, statistic: str) -> Estimate:
    se = None if var is None else math.sqrt(max(var, 0.0))
    return Estimate(float(value), se, None if var is None else float(var), statistic)


def _degree_release(reports: NodeReports):
    if not isinstance(reports, NodeReports):
        raise TypeError(f"reports must be NodeReports, got {type(reports).__name__}")
    rel = reports.degrees
    if rel.sensitivity != 1:
        raise ValueError(f"degree reports must be released with sensitivity 1, got {rel.sensitivity}")
    return rel.values, rel.epsilon


def kstars(reports: NodeReports, k: int) -> Estimate:
    r"""Unbiased estimate of S_k = sum_v C(d_v, k) from the noisy degrees.

    Notes
    -----
    sum_v [C(y_v, k) - c C(y_v - 1, k - 2)], c = p/(1-p)^2; the nodes' noises are independent,
    so the variance of the sum is the sum of the per-node variances, each estimated unbiasedly.

    Examples
    --------
    >>> from ldpgraph.protocols import DegreeRandomizer
    >>> reports = DegreeRandomizer(epsilon=2.0).randomize([3, 1, 2, 2], rng=7)
    >>> est = kstars(reports, 2)
    >>> est.statistic
    'kstars_2'
    """
    k = check_nonnegative_int(k, "k", minimum=1)
    y, eps = _degree_release(reports)
    value = math.fsum(binomial(y, k, eps))
    var = math.fsum(binomial_variance_estimate(y, k, eps))
    return _estimate(value, var, f"kstars_{k}")


def edge_count(reports: NodeReports) -> Estimate:
    """Unbiased estimate of |E| = S_1 / 2 (variance n Var(eta) / 4, known exactly)."""
    y, eps = _degree_release(reports)
    s1 = float(np.sum(y, dtype=np.float64))
    var = y.size * reports.degrees.mechanism.variance / 4.0
    return _estimate(s1 / 2.0, var, "edges")


def degree_moment(reports: NodeReports, j: int) -> Estimate:
    """Unbiased estimate of sum_v d_v^j."""
    j = check_nonnegative_int(j, "j")
    y, eps = _degree_release(reports)
    value = math.fsum(power(y, j, eps))
    var = math.fsum(power_variance_estimate(y, j, eps))
    return _estimate(value, var, f"degree_moment_{j}")


def degree_mean(reports: NodeReports) -> Estimate:
    """Unbiased estimate of the mean degree (1/n) sum_v d_v; its variance Var(eta)/n is exact."""
    y, eps = _degree_release(reports)
    if y.size == 0:
        raise ValueError("the mean degree of a graph with no nodes is undefined")
    variance = reports.degrees.mechanism.variance / y.size
    return _estimate(float(np.mean(y, dtype=np.float64)), variance, "degree_mean")


def degree_variance(reports: NodeReports) -> Estimate:
    r"""Unbiased estimate of the population variance of the degrees, (1/n) sum_v (d_v - dbar)^2.

    Notes
    -----
    (1/n) sum x_i^2 - (1/n^2)(sum x_i)^2 needs the cross terms of (sum x_i)^2, which are
    multilinear in independent reports and so unbiased as they stand; hence
    g(y) = [sum (y_i - ybar)^2 - (n-1) Var(eta)] / n
    (:func:`ldpgraph.estimators.sample_variance`), with its unbiased variance estimate.
    """
    y, eps = _degree_release(reports)
    if y.size < 2:
        raise ValueError(f"the degree variance needs at least 2 nodes, got {y.size}")
    value = float(sample_variance(y, eps))
    var = float(sample_variance_variance_estimate(y, eps))
    return _estimate(value, var, "degree_variance")


def degree_histogram(
    reports: NodeReports, max_degree: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Unbiased estimates of phi_k = #{v : d_v = k}, k = 0..max_degree, and their standard errors."""
    max_degree = check_nonnegative_int(max_degree, "max_degree")
    y, eps = _degree_release(reports)
    est = profile(y, eps, max_degree)
    var = profile_variance(y, eps, max_degree)
    return est, np.sqrt(np.maximum(var, 0.0))


def max_degree(reports: NodeReports) -> Estimate:
    """Unbiased estimate of the maximum degree, with its variance estimate.

    The variance grows like (1+2c)^{2a} with the number a of reports tied at the top; a
    ``HighVarianceWarning`` is emitted where the estimate is dominated by that variance.
    """
    y, eps = _degree_release(reports)
    value = float(maximum(y, eps))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)  # maximum() already warned
        var = float(order_statistic_variance(y, y.size - 1, eps))
    return _estimate(value, var, "max_degree")


def degree_entropy(reports: NodeReports) -> Estimate:
    """Unbiased estimate of H = -sum_v (d_v/2|E|) ln(d_v/2|E|) (nats)."""
    y, eps = _degree_release(reports)
    value = float(entropy(y, eps))
    return _estimate(value, float(entropy_variance_estimate(y, eps)), "degree_entropy")


def kstars_from_counts(reports: NodeReports, k: int) -> Estimate:
    """Sum of the released projected local k-star counts; unbiased for sum_v C(min(d_v, d_max), k).

    Its variance n Var(DLap) is known exactly.
    """
    rel = reports.kstar_counts(check_nonnegative_int(k, "k", minimum=1))
    value = float(np.sum(rel.values, dtype=np.float64))
    return _estimate(value, rel.values.size * rel.mechanism.variance, f"kstars_{k}_from_counts")
