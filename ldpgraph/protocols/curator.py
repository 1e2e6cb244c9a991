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
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from .._validation import check_nonnegative_int, dlap_c
from ..estimators.order_statistics import HighVarianceWarning, maximum, order_statistic_variance
from ..estimators.polynomials import (
    _noise_model,
    binomial,
    binomial_variance_estimate,
    power,
    power_variance_estimate,
)
from ..estimators.symmetric import _sample_variance_constant
from ._histogram_entropy import entropy_from_histogram
from .randomizer import NodeReports, ReleasedValues
from .report_histogram import ReportHistogram

__all__ = [
    "Estimate",
    "DegreeSource",
    "kstars",
    "kstars_many",
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


def _estimate(value: float, var: float | None, statistic: str, *args, **kwargs) -> Estimate:
    se = None if var is None else math.sqrt(max(var, 0.0))
    return Estimate(float(value), se, None if var is None else float(var), statistic)


#: Source of degree reports accepted by every degree statistic below.
DegreeSource = NodeReports | ReleasedValues | ReportHistogram

# Above this many reports tied within 1 of the top, max_degree evaluates the closed form itself
# instead of handing the tied reports to :func:`~ldpgraph.estimators.maximum` (memory).
_MAX_TIES_AS_ARRAY = 1 << 24


def _degree_histogram(reports: DegreeSource) -> ReportHistogram:
    """The histogram of the degree reports (built once, at bincount speed, for arrays)."""
    if isinstance(reports, ReportHistogram):
        hist = reports
    elif isinstance(reports, (NodeReports, ReleasedValues)):
        rel = reports.degrees if isinstance(reports, NodeReports) else reports
        if rel.sensitivity != 1:
            raise ValueError(f"degree reports must be released with sensitivity 1, got {rel.sensitivity}")
        return ReportHistogram.from_release(rel)
    else:
        raise TypeError(
            "reports must be NodeReports, ReleasedValues or a ReportHistogram, got "
            f"{type(reports).__name__} (wrap an array as ReportHistogram.from_reports(y, epsilon))"
        )
    if hist.sensitivity != 1:
        raise ValueError(f"degree reports must be released with sensitivity 1, got {hist.sensitivity}")
    return hist


def kstars(reports: DegreeSource, k: int) -> Estimate:
    r"""Unbiased estimate of S_k = sum_v C(d_v, k) from the noisy degrees.

    Parameters
    ----------
    reports : NodeReports, ReleasedValues or ReportHistogram
        The degree reports (sensitivity 1), or their histogram (build it once with
        :meth:`ReportHistogram.from_reports` / :func:`as_report_histogram` to curate many
        statistics, or merge per-chunk histograms to curate a stream).
    k : int
        Star size, >= 1.

    Notes
    -----
    sum_v [C(y_v, k) - c C(y_v - 1, k - 2)], c = p/(1-p)^2; the nodes' noises are independent,
    so the variance of the sum is the sum of the per-node variances, each estimated unbiasedly.
    Both sums are taken over the histogram: sum_u N(u) g(u) over the distinct reports u, each
    product exact and the total rounded once (:meth:`ReportHistogram.weighted_sum`), i.e. the
    ``math.fsum`` of the per-node terms, bit for bit.

    Examples
    --------
    >>> from ldpgraph.protocols import DegreeRandomizer
    >>> reports = DegreeRandomizer(epsilon=2.0).randomize([3, 1, 2, 2], rng=7)
    >>> est = kstars(reports, 2)
    >>> est.statistic
    'kstars_2'
    """
    k = check_nonnegative_int(k, "k", minimum=1)
    return kstars_many(reports, [k])[0]


def kstars_many(reports: DegreeSource, ks: Sequence[int]) -> tuple[Estimate, ...]:
    """Unbiased estimates of S_k for several k from one pass over the reports (one histogram).

    Examples
    --------
    >>> h = ReportHistogram.from_reports([3, 1, 1, 1], epsilon=60.0)  # a star, noise-free limit
    >>> [e.value for e in kstars_many(h, [1, 2, 3])]
    [6.0, 3.0, 1.0]
    """
    kk = [check_nonnegative_int(k, "k", minimum=1) for k in ks]
    hist = _degree_histogram(reports)
    u, eps = hist.values, hist.epsilon
    out = []
    for k in kk:
        value = hist.weighted_sum(binomial(u, k, eps))
        var = hist.weighted_sum(binomial_variance_estimate(u, k, eps))
        out.append(_estimate(value, var, f"kstars_{k}", hist.n))
    return tuple(out)


def edge_count(reports: DegreeSource) -> Estimate:
    """Unbiased estimate of |E| = S_1 / 2 (variance n Var(eta) / 4, known exactly).

    The sum of the reports is an exact integer, halved and rounded once.
    """
    hist = _degree_histogram(reports)
    s1 = hist.power_sum(1)
    var = hist.n * hist.mechanism.variance / 4.0
    return _estimate(float(Fraction(s1, 2)), var, "edges", hist.n, known_variance=True)


def degree_moment(reports: DegreeSource, j: int) -> Estimate:
    """Unbiased estimate of sum_v d_v^j (per-value terms of ``power``, summed exactly)."""
    j = check_nonnegative_int(j, "j")
    hist = _degree_histogram(reports)
    u, eps = hist.values, hist.epsilon
    value = hist.weighted_sum(power(u, j, eps))
    var = hist.weighted_sum(power_variance_estimate(u, j, eps))
    return _estimate(value, var, f"degree_moment_{j}", hist.n)


def degree_mean(reports: DegreeSource) -> Estimate:
    """Unbiased estimate of the mean degree (1/n) sum_v d_v; its variance Var(eta)/n is exact.

    The exact integer sum divided by n, rounded once.
    """
    hist = _degree_histogram(reports)
    n = hist.n
    if n == 0:
        raise ValueError("the mean degree of a graph with no nodes is undefined")
    variance = hist.mechanism.variance / n
    value = float(Fraction(hist.power_sum(1), n))
    return _estimate(value, variance, "degree_mean", n, known_variance=True)


def degree_variance(reports: DegreeSource) -> Estimate:
    r"""Unbiased estimate of the population variance of the degrees, (1/n) sum_v (d_v - dbar)^2.

    Notes
    -----
    (1/n) sum x_i^2 - (1/n^2)(sum x_i)^2 needs the cross terms of (sum x_i)^2, which are
    multilinear in independent reports and so unbiased as they stand; hence
    g(y) = [sum (y_i - ybar)^2 - (n-1) Var(eta)] / n
    (:func:`ldpgraph.estimators.sample_variance`), with its unbiased variance estimate
    (:func:`ldpgraph.estimators.sample_variance_variance_estimate`). The centred sum of
    squares Q = sum y^2 - (sum y)^2 / n is computed exactly in integers, and each formula is
    evaluated in rationals and rounded once.
    """
    hist = _degree_histogram(reports)
    n = hist.n
    if n < 2:
        raise ValueError(f"the degree variance needs at least 2 nodes, got {n}")
    s1 = hist.power_sum(1)
    q = Fraction(hist.power_sum(2)) - Fraction(s1 * s1, n)
    nz = _noise_model(hist.epsilon, 1.0, "dlap")
    s2 = Fraction(nz.variance)
    qhat = q - (n - 1) * s2
    value = float(qhat / n)
    var = float((4 * s2 * qhat + Fraction(_sample_variance_constant(n, nz))) / (n * n))
    return _estimate(value, var, "degree_variance", n)


def degree_histogram(
    reports: DegreeSource, max_degree: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Unbiased estimates of phi_k = #{v : d_v = k}, k = 0..max_degree, and their standard errors.

    Notes
    -----
    :func:`ldpgraph.estimators.profile` from the report counts N_j:
    :math:`\hat\phi_k = N_k - c(N_{k-1} - 2N_k + N_{k+1})`, variance estimate
    :math:`2c(1+2c)N_k + c(1+c)(N_{k-1}+N_{k+1})`.
    """
    max_degree = check_nonnegative_int(max_degree, "max_degree")
    hist = _degree_histogram(reports)
    c = dlap_c(hist.epsilon, 1.0)
    lo = -1  # window [-1, max_degree + 1]
    n = np.zeros(max_degree + 3, dtype=np.int64)
    u = hist.values
    inside = (u >= lo) & (u <= max_degree + 1)
    n[u[inside] - lo] = hist.counts[inside]
    lap = n[:-2] - 2 * n[1:-1] + n[2:]  # exact integers
    est = n[1:-1] - c * lap
    var = 2.0 * c * (1.0 + 2.0 * c) * n[1:-1] + c * (1.0 + c) * (n[:-2] + n[2:])
    return est, np.sqrt(np.maximum(var, 0.0))


def _top_counts(hist: ReportHistogram) -> tuple[int, int, int]:
    """M = max y, a = #{y = M}, b = #{y = M - 1}."""
    m, a = int(hist.values[-1]), int(hist.counts[-1])
    b = int(hist.counts[-2]) if hist.values.size > 1 and int(hist.values[-2]) == m - 1 else 0
    return m, a, b


def max_degree(reports: DegreeSource) -> Estimate:
    r"""Unbiased estimate of the maximum degree, with its variance estimate.

    The variance grows like (1+2c)^{2a} with the number a of reports tied at the top; a
    ``HighVarianceWarning`` is emitted where the estimate is dominated by that variance.

    Notes
    -----
    :math:`g(y) = M + 1 - (1+c)^a - (-c)^a (1+c)^b` (:func:`ldpgraph.estimators.maximum`)
    depends on the reports only through M = max y, a = #{y = M} and b = #{y = M-1}, so it is
    evaluated on those a + b reports alone (the same value and variance estimate as on all n).
    Its error is discrete-Laplace tailed: see :meth:`Estimate.interval` for intervals built on
    that law rather than on the normal approximation.
    """
    hist = _degree_histogram(reports)
    if hist.n == 0:
        raise ValueError("the maximum degree of a graph with no nodes is undefined")
    m, a, b = _top_counts(hist)
    eps = hist.epsilon
    if a + b <= _MAX_TIES_AS_ARRAY:
        top = np.repeat(np.array([m - 1, m], dtype=np.int64), [b, a])
        value = float(maximum(top, eps))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HighVarianceWarning)  # maximum() already warned
            var = float(order_statistic_variance(top, top.size - 1, eps))
    else:  # the closed form of estimators.order_statistics._maximum_parts, from (a, b) alone
        value, var = _max_closed_form(m, a, b, dlap_c(eps, 1.0))
    return _estimate(value, var, "max_degree", hist.n, top=(m, a, b))


def _max_closed_form(m: int, a: int, b: int, c: float) -> tuple[float, float]:
    from ..estimators import order_statistics as _os

    af, bf = float(a), float(b)
    l1c = math.log1p(c)
    lc = math.log(c) if c > 0 else -math.inf
    z = af * l1c
    h1 = -math.expm1(z) if z < _os._LOG_SAFE else -math.inf
    lh1 = z + math.log(-math.expm1(-z))
    lg0 = af * lc + bf * l1c
    if af * lc > -_os._LOG_SAFE and bf * l1c < _os._LOG_SAFE and lg0 < _os._LOG_SAFE:
        g0 = (-c) ** a * (1.0 + c) ** b
    else:
        g0 = (-1.0 if a % 2 else 1.0) * (math.exp(lg0) if lg0 < _os._LOG_SAFE else math.inf)
    offset, var, lw = _os._finish(h1, lh1, g0, lg0)
    _os._warn(lw, np.zeros(1, dtype=bool), _os.HIGH_VARIANCE_THRESHOLD, "maximum", c)
    return float(m + offset[0]), float(var[0])


def degree_entropy(reports: DegreeSource) -> Estimate:
    r"""Unbiased estimate of H = -sum_v (d_v/2|E|) ln(d_v/2|E|) (nats).

    Notes
    -----
    :func:`ldpgraph.estimators.entropy` (unknown total) and its variance estimate, whose
    per-report sums are taken over the histogram (:mod:`._histogram_entropy`): the same
    estimator, O(distinct reports) after the count.
    """
    hist = _degree_histogram(reports)
    if hist.n == 0:
        raise ValueError("the degree entropy of a graph with no nodes is undefined")
    value, var = entropy_from_histogram(hist)
    return _estimate(value, var, "degree_entropy", hist.n)


def kstars_from_counts(reports: NodeReports, k: int) -> Estimate:
    """Sum of the released projected local k-star counts; unbiased for sum_v C(min(d_v, d_max), k).

    Its variance n Var(DLap) is known exactly.
    """
    rel = reports.kstar_counts(check_nonnegative_int(k, "k", minimum=1))
    value = float(np.sum(rel.values, dtype=np.float64))
    return _estimate(value, rel.values.size * rel.mechanism.variance, f"kstars_{k}_from_counts")
