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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_nonnegative_int, dlap_c
from ..estimators.histogram_entropy import entropy_from_histogram
from ..estimators.order_statistics import HighVarianceWarning, maximum, order_statistic_variance
from ..estimators.polynomials import (
    binomial,
    binomial_variance_estimate,
    noise_model,
    power,
    power_variance_estimate,
)
from ..estimators.symmetric import sample_variance_constant
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
    "max_degree_interval",
    "influence_bound",
    "normal_interval",
    "SE_KINDS",
]


#: what a standard error computed from the reports can be (``std_error_kind`` of every estimate)
SE_KINDS: dict[str, str] = {
    "unbiased": "the square root of an unbiased estimate of the estimate's variance",
    "exact": "the variance is a known function of public values (the noise alone)",
    "upper-bound": "the square root of an unbiased estimate of an upper bound of the variance (conservative)",
    "conservative": "the larger of an unbiased variance estimate and the spread of the per-node terms",
    "sample": "the sample variance of independent (sampled) terms of the estimate",
    "plug-in": "a closed-form variance (or a bound of it) evaluated at the released values",
    "delta": "the delta method (a ratio of estimates, each with its variance estimate)",
    "borrowed": "the standard error of another estimate from the same reports (see the method's notes)",
    "bootstrap": "the spread of the whole estimator over bootstrap resamples of the reports",
}


@dataclass(frozen=True)
class Estimate:
    """A private estimate with its standard error, and confidence intervals.

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
    interval_method : str
        How :meth:`interval` builds intervals: ``"normal"`` (value +- z se, the estimate being
        a sum over many independent reports), ``"normal-exact-variance"`` (the same with the
        exactly known variance) or ``"dlap-max"`` (the maximum: from the discrete Laplace law of
        the top reports, see :func:`max_degree_interval`).
    """

    value: float
    std_error: float | None
    variance_estimate: float | None
    statistic: str
    interval_method: str = "normal"
    #: the reports' histogram, kept by estimates whose interval needs more than value and se
    histogram: ReportHistogram | None = field(default=None, repr=False, compare=False)
    #: why there is no standard error, or how the one given is meant (None: nothing to add)
    note: str | None = field(default=None, repr=False, compare=False)
    #: how the standard error is computed from the reports (:data:`SE_KINDS`); None: ``"unbiased"``
    #: for the normal intervals, ``"exact"`` for the exactly known variance
    se_kind: str | None = field(default=None, repr=False, compare=False)

    @property
    def std_error_kind(self) -> str:
        """What the standard error is: one of :data:`SE_KINDS`, or ``"none: <reason>"`` without one.

        Examples
        --------
        >>> Estimate(10.0, 2.0, 4.0, "example").std_error_kind
        'unbiased'
        >>> Estimate(3.0, None, None, "example", note="a plug-in").std_error_kind
        'none: a plug-in'
        >>> Estimate(3.0, 0.0, -2.5, "example").std_error_kind[:38]
        'none: the variance estimate is -2.5 <='
        """
        if self.std_error is None:
            return "none: " + (self.note or "no variance estimate from the reports is implemented")
        if self.se_kind != "exact" and self.variance_estimate is not None and self.variance_estimate <= 0:
            return (f"none: the variance estimate is {self.variance_estimate:.3g} <= 0 (the noise "
                    "dominates): no standard error or interval")
        if self.se_kind is not None:
            return self.se_kind
        return "exact" if self.interval_method == "normal-exact-variance" else "unbiased"

    def __float__(self) -> float:
        return float(self.value)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        r"""Confidence interval for the estimated statistic at coverage ``level``.

        Parameters
        ----------
        level : float, default 0.95
            Nominal coverage, in (0, 1).

        Returns
        -------
        (low, high) : tuple of float

        Notes
        -----
        ``"normal"`` methods: :math:`\hat\theta \pm z_{(1+\mathrm{level})/2}\,\widehat{se}`. The
        k-star, edge, moment, mean and variance estimates are sums of n independent per-node
        terms (the variance estimate up to an exactly known constant), so the central limit
        theorem applies; coverage on Facebook degrees at epsilon 0.5-2 is within 1.5% of
        nominal (tests/protocols/test_curator_intervals.py). ``"dlap-max"``: the maximum's
        error is not normal (max(y) - max(x) is discrete-Laplace tailed, and its normal interval
        at 95% covers about 93%); the interval :func:`max_degree_interval` is built from the
        DLap law and covers at least ``level`` for every degree sequence (a proof, not an
        approximation; conservative).

        Examples
        --------
        >>> est = Estimate(10.0, 2.0, 4.0, "example")
        >>> [round(v, 4) for v in est.interval(0.95)]
        [6.0801, 13.9199]
        """
        lv = _check_level(level)
        if self.interval_method == "dlap-max" and self.histogram is not None:
            return max_degree_interval(self.histogram, lv)
        if self.std_error is None:
            raise ValueError(f"{self.statistic} has no standard error, hence no interval")
        return normal_interval(self.value, self.std_error, lv)

    confidence_interval = interval


def _check_level(level: float) -> float:
    lv = _check_real(level, "level")
    if not 0.0 < lv < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return lv


def _check_real(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def normal_interval(value: ArrayLike, std_error: ArrayLike, level: float = 0.95):
    r"""value +- z std_error with z the (1 + level)/2 standard normal quantile (vectorized).

    Examples
    --------
    >>> round(normal_interval(0.0, 1.0, 0.95)[1], 4)
    1.96
    """
    lv = _check_level(level)
    z = NormalDist().inv_cdf(0.5 + lv / 2.0)
    v = np.asarray(value, dtype=np.float64)
    se = np.asarray(std_error, dtype=np.float64)
    lo, hi = v - z * se, v + z * se
    return (float(lo), float(hi)) if lo.ndim == 0 else (lo, hi)


def _dlap_tail_index(alpha: float, p: float) -> int:
    """Smallest integer t >= 0 with P[eta > t] = p^(t+1) / (1+p) <= alpha (eta ~ DLap(p))."""
    if p <= 0.0:
        return 0
    # p^(t+1) <= alpha (1+p)  <=>  t + 1 >= ln(alpha (1+p)) / ln p
    t = max(0, math.ceil(math.log(alpha * (1.0 + p)) / math.log(p) - 1.0 - 1e-12))
    while t > 0 and p ** t / (1.0 + p) <= alpha:  # float rounding of the quotient: step down
        t -= 1
    while p ** (t + 1) / (1.0 + p) > alpha:
        t += 1
    return t


def max_degree_interval(hist: ReportHistogram, level: float = 0.95) -> tuple[float, float]:
    r"""Confidence interval for the true maximum degree from the DLap law of the top reports.

    Covers max(x) with probability >= ``level`` for every true degree sequence x (conservative).

    Parameters
    ----------
    hist : ReportHistogram
        Histogram of the degree reports (sensitivity 1), n >= 1.
    level : float, default 0.95
        Coverage, in (0, 1).

    Returns
    -------
    (low, high) : tuple of float
        Integers M - t_L and M + t_U, M = max y.

    Notes
    -----
    Let D = max x (attained at a node v*), M = max y, S(t) = P[eta > t] = p^{t+1}/(1+p) for
    integers t >= 0, alpha = 1 - level, alpha_U = alpha_L = alpha/2.

    **Upper end.** M >= y_{v*} = D + eta_{v*}, so P[D > M + t] <= P[-eta_{v*} > t] = S(t):
    t_U = min{t : S(t) <= alpha_U}.

    **Lower end.** M - D > t requires some node with eta_v > t + g_v, g_v = D - x_v >= 0, so
    by the union bound P[M - D > t] <= sum_v S(t + g_v) = S(t) sum_v p^{g_v}. Split the nodes
    at a gap s fixed in advance (s = ceil(ln n / ln(1/p)), so n p^{s+1} <= 1): with
    K = #{v : g_v <= s} "contenders", P[M - D > t] <= S(t) (K + n p^{s+1}). K is unknown; it
    is bounded by the data outside two events of small probability,
    E_1 = {M - D > t_1} (P <= n S(t_1) <= alpha_1) and E_2 = {some eta_v < -r}
    (P <= n S(r) <= alpha_2): outside both, every contender has y_v >= D - s - r >=
    M - t_1 - s - r, so K <= m, the number of reports >= M - t_1 - s - r. With t(k) the least
    t such that S(t)(k + n p^{s+1}) <= alpha_3, increasing in k, the event
    {M - D > t(m)} minus E_1, E_2 lies in {M - D > t(K)}, of probability <= alpha_3 (K is not
    random). Hence P[D < M - t(m)] <= alpha_1 + alpha_2 + alpha_3 = alpha_L with
    alpha_1 = alpha_2 = alpha_L / 20, alpha_3 = 0.9 alpha_L. Both ends together:
    P[D not in [M - t(m), M + t_U]] <= alpha. When the top report stands alone (m = 1, the
    usual case) t(m) is one or two steps above the single-node quantile t_U; in the worst
    case (all nodes tied at the top) it grows like ln(n) / epsilon, as it must.

    Examples
    --------
    >>> h = ReportHistogram.from_reports([3, 40, 7, 12], epsilon=1.0)
    >>> max_degree_interval(h, 0.95)
    (37.0, 43.0)
    """
    lv = _check_level(level)
    n = hist.n
    if n == 0:
        raise ValueError("the maximum degree of a graph with no nodes is undefined")
    M = int(hist.values[-1])
    t_u, window, t_l = _max_interval_offsets(n, math.exp(-hist.epsilon / hist.sensitivity), lv)
    m = int(hist.counts[np.searchsorted(hist.values, M - window, side="left") :].sum())
    return float(M - t_l(m)), float(M + t_u)


def _max_interval_offsets(n: int, p: float, level: float) -> tuple[int, int, Callable[[int], int]]:
    """(t_U, window w, m -> t_L(m)): the interval is [M - t_L(m), M + t_U] with
    m = #{reports >= M - w} (see :func:`max_degree_interval`)."""
    alpha = 1.0 - level
    a_u = a_l = alpha / 2.0
    t_u = _dlap_tail_index(a_u, p)
    if n == 1:  # one node: M - D = eta exactly
        t_one = _dlap_tail_index(a_l, p)
        return t_u, 0, lambda m: t_one
    s = math.ceil(math.log(n) / -math.log(p)) if p > 0 else 0
    rest = n * p ** (s + 1)  # <= 1
    t1 = r = _dlap_tail_index(a_l / 20.0 / n, p)
    return t_u, t1 + s + r, lambda m: _dlap_tail_index(0.9 * a_l / (m + rest), p)


def _estimate(
    value: float,
    var: float | None,
    statistic: str,
    *,
    method: str = "normal",
    histogram: ReportHistogram | None = None,
) -> Estimate:
    se = None if var is None else math.sqrt(max(var, 0.0))
    return Estimate(float(value), se, None if var is None else float(var), statistic, method, histogram)


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
        out.append(_estimate(value, var, f"kstars_{k}"))
    return tuple(out)


def edge_count(reports: DegreeSource) -> Estimate:
    """Unbiased estimate of |E| = S_1 / 2 (variance n Var(eta) / 4, known exactly).

    The sum of the reports is an exact integer, halved and rounded once.
    """
    hist = _degree_histogram(reports)
    s1 = hist.power_sum(1)
    var = hist.n * hist.mechanism.variance / 4.0
    return _estimate(float(Fraction(s1, 2)), var, "edges", method="normal-exact-variance")


def degree_moment(reports: DegreeSource, j: int) -> Estimate:
    """Unbiased estimate of sum_v d_v^j (per-value terms of ``power``, summed exactly)."""
    j = check_nonnegative_int(j, "j")
    hist = _degree_histogram(reports)
    u, eps = hist.values, hist.epsilon
    value = hist.weighted_sum(power(u, j, eps))
    var = hist.weighted_sum(power_variance_estimate(u, j, eps))
    return _estimate(value, var, f"degree_moment_{j}")


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
    return _estimate(value, variance, "degree_mean", method="normal-exact-variance")


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
    nz = noise_model(hist.epsilon, 1.0, "dlap")
    s2 = Fraction(nz.variance)
    qhat = q - (n - 1) * s2
    value = float(qhat / n)
    var = float((4 * s2 * qhat + Fraction(sample_variance_constant(n, nz))) / (n * n))
    return _estimate(value, var, "degree_variance")


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
    return _estimate(
        value, var, "max_degree", method="dlap-max", histogram=hist
    )


def _max_closed_form(m: int, a: int, b: int, c: float) -> tuple[float, float]:
    from ..estimators.order_statistics import maximum_of_top_counts

    return maximum_of_top_counts(m, a, b, c)


def degree_entropy(reports: DegreeSource) -> Estimate:
    r"""Unbiased estimate of H = -sum_v (d_v/2|E|) ln(d_v/2|E|) (nats).

    Notes
    -----
    :func:`ldpgraph.estimators.entropy` (unknown total) and its variance estimate, whose
    per-report sums are taken over the histogram (:mod:`ldpgraph.estimators.histogram_entropy`): the same
    estimator, O(distinct reports) after the count.
    """
    hist = _degree_histogram(reports)
    if hist.n == 0:
        raise ValueError("the degree entropy of a graph with no nodes is undefined")
    value, var = entropy_from_histogram(hist)
    return _estimate(value, var, "degree_entropy")


def kstars_from_counts(reports: NodeReports, k: int) -> Estimate:
    """Sum of the released projected local k-star counts; unbiased for sum_v C(min(d_v, d_max), k).

    Its variance n Var(DLap) is known exactly.
    """
    rel = reports.kstar_counts(check_nonnegative_int(k, "k", minimum=1))
    value = float(np.sum(rel.values, dtype=np.float64))
    var = rel.values.size * rel.mechanism.variance
    return _estimate(value, var, f"kstars_{k}_from_counts", method="normal-exact-variance")


def influence_bound(
    statistic: str, lo: int, hi: int, *, epsilon: float, n_nodes: int, k: int | None = None
) -> float | None:
    r"""How far one node's report alone can move ``statistic`` once all reports lie in [lo, hi].

    ``k`` is the star size for ``kstars`` and ``kstars_from_counts``, the power for
    ``degree_moment``. Returns None for the statistics without a documented bound
    (``max_degree``, ``degree_entropy``). [lo, hi] is the admissible range of the screened
    reports (:func:`~ldpgraph.protocols.screening.admissible_range`); n nodes, c = p/(1-p)^2:

    ================== ===============================================================
    statistic          largest change caused by one node's report alone
    ================== ===============================================================
    kstars k           max_{L<=y<=U} g_k(y) - min_{L<=y<=U} g_k(y), g_k(y) = C(y,k) - c C(y-1,k-2)
    edges              (U - L) / 2
    degree_moment j    max - min over [L, U] of the unbiased per-node estimate of d^j
    degree_mean        (U - L) / n
    degree_variance    (n - 1) (U - L)^2 / n^2
    histogram bin      1 + 3c (per bin phi_k; the per-node term takes 1 + 2c, 0 and -c)
    kstars_from_counts U - L (sum of the clipped counts)
    max_degree,        no bound is documented: these estimates are not sums of per-node
    degree_entropy     terms, and the effect of one report depends on all the others
    ================== ===============================================================

    Notes
    -----
    For the separable statistics the estimate is sum_v g(y_v): replacing one report by any
    value in [L, U] changes exactly one term, so the change is at most max g - min g over the
    integers of [L, U], and that is attained (the bound is tight). For the degree variance the
    estimate is [Q(y) - (n-1) Var eta] / n with Q(y) = sum_i (y_i - ybar)^2. As a function of one
    report b with the others fixed, Q = (1 - 1/n) b^2 - (2/n) S' b + const (S' the sum of the
    others), a convex parabola with its minimum at m' = S'/(n-1), the others' mean, which lies in
    [L, U]; so Q(b) - Q(m') = (1 - 1/n)(b - m')^2 <= (1 - 1/n)(U - L)^2 for b in [L, U], and the
    estimate moves by at most (n-1)(U-L)^2/n^2.

    Examples
    --------

    >>> influence_bound("edges", -28, 127, epsilon=1.0, n_nodes=100)
    77.5
    """
    lo, hi = int(lo), int(hi)
    if hi < lo:
        raise ValueError(f"the admissible range must have lo <= hi, got [{lo}, {hi}]")
    n = check_nonnegative_int(n_nodes, "n_nodes", minimum=1)
    width = hi - lo
    if statistic in ("kstars", "degree_moment"):
        k = check_nonnegative_int(k, "k", minimum=1 if statistic == "kstars" else 0)
        if width > 50_000_000:
            raise ValueError(f"admissible range [{lo}, {hi}] is too wide to bound {statistic} by enumeration")
        y = np.arange(lo, hi + 1, dtype=np.int64)
        g = binomial(y, k, epsilon) if statistic == "kstars" else power(y, k, epsilon)
        return float(np.max(g) - np.min(g))
    if statistic == "edges":
        return width / 2.0
    if statistic == "degree_mean":
        return width / n
    if statistic == "degree_variance":
        return (n - 1) * float(width) ** 2 / (float(n) ** 2)
    if statistic == "degree_histogram":
        return 1.0 + 3.0 * dlap_c(epsilon) if width >= 1 else 1.0
    if statistic == "kstars_from_counts":
        return float(width)
    if statistic in ("max_degree", "degree_entropy"):
        return None
    raise ValueError(f"unknown statistic {statistic!r}")
