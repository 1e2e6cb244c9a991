r"""Accuracy planning before any data is collected: the epsilon a target accuracy needs, and the
split of a budget across released statistics.

Everything here uses only public information — the number of nodes n and either an assumed
degree sequence / degree distribution or a public degree bound — and the analytic (exact)
variances of the curator's unbiased estimators:

============================  ==========================================================
statistic                     variance at budget epsilon (eta ~ DLap(e^{-epsilon/Delta}))
============================  ==========================================================
``"edges"``                   n Var(eta) / 4
``"degree_mean"``             Var(eta) / n
``"kstars_<k>"``              sum_v Var[binomial(d_v + eta, k)]  (exact, polynomials)
``"degree_moment_<j>"``       sum_v Var[power(d_v + eta, j)]
``"degree_variance"``         [4 Var(eta) Q(d) + C(n)] / n^2, Q(d) = sum (d_v - dbar)^2
``"kstars_<k>_from_counts"``  n Var(eta), Delta = C(d_max, k-1) (projected local counts)
============================  ==========================================================

Every estimator is unbiased, so its RMSE is its standard deviation; the relative RMSE divides
by the true value under the assumed degrees. With only a degree bound (:meth:`DegreeModel.bounded`)
the variance is the worst case over all degree sequences with degrees in [0, d_max] (each
per-node variance maximised over the d_max + 1 possible degrees; Q(d) <= n d_max^2 / 4), which
bounds the RMSE of every such graph; a relative target then needs a true value, which a bound
does not give (use an absolute ``rmse``).

Each variance is a polynomial with non-negative coefficients in c = p/(1-p)^2 (the noise
moments are), and c(epsilon) = 1 / (4 sinh^2(epsilon / 2 Delta)) is convex and decreasing, so
every variance is a convex, strictly decreasing function of its epsilon: the epsilon for a
target is the root of a monotone function (bisection in log epsilon), and minimising a weighted
sum of relative variances over shares summing to the budget is a convex problem, solved through
its KKT condition -w_i R_i'(epsilon_i) = lambda by a one-dimensional search on lambda.

Examples
--------
>>> model = DegreeModel.from_degrees([3, 1, 2, 2] * 1000)
>>> eps = epsilon_for_rmse("edges", model, relative_rmse=0.01)
>>> round(relative_rmse("edges", model, eps), 6)
0.01
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_positive_real, dlap_c
from ..estimators.polynomials import binomial_variance, noise_model, power_variance
from ..estimators.symmetric import sample_variance_constant
from ..mechanisms import DiscreteLaplace

__all__ = [
    "DegreeModel",
    "PLANNED_STATISTICS",
    "estimator_variance",
    "relative_rmse",
    "true_value",
    "epsilon_for_rmse",
    "split_budget",
]

#: Statistic names the planner knows (``<k>``, ``<j>``: integers).
PLANNED_STATISTICS = (
    "edges",
    "degree_mean",
    "degree_variance",
    "kstars_<k>",
    "degree_moment_<j>",
    "kstars_<k>_from_counts",
)

_EPS_LO, _EPS_HI = 1e-9, 1e4


@dataclass(frozen=True, eq=False)
class DegreeModel:
    """Public information about the degrees: n, and a degree profile or a bound.

    Build with :meth:`from_degrees` (an assumed degree sequence), :meth:`from_distribution`
    (n and a degree distribution) or :meth:`bounded` (n and a public degree bound only).

    Attributes
    ----------
    n : int
        Number of nodes.
    values, weights : ndarray or None
        Assumed distinct degrees and how many nodes have each (weights sum to n; fractional
        for a distribution). None for a bounded model.
    d_max : int or None
        Public degree bound (needed for ``kstars_<k>_from_counts``; the whole model for
        :meth:`bounded`).
    """

    n: int
    values: NDArray[np.int64] | None
    weights: NDArray[np.float64] | None
    d_max: int | None = None

    @classmethod
    def from_degrees(cls, degrees: ArrayLike, d_max: int | None = None) -> DegreeModel:
        """An assumed degree sequence (e.g. of a similar public graph).

        >>> DegreeModel.from_degrees([2, 2, 5]).n
        3
        """
        from ..protocols.randomizer import as_degrees

        d = as_degrees(degrees)
        if d.size == 0:
            raise ValueError("degrees must hold at least one node")
        v, c = np.unique(d, return_counts=True)
        dm = None if d_max is None else check_nonnegative_int(d_max, "d_max", minimum=1)
        return cls(int(d.size), v.astype(np.int64), c.astype(np.float64), dm)

    @classmethod
    def from_distribution(cls, n: int, distribution: ArrayLike | Mapping[int, float],
                          d_max: int | None = None) -> DegreeModel:  # fmt: skip
        """n nodes with degrees drawn from ``distribution``: P[d = i] = distribution[i] (array
        over 0..K, or a mapping degree -> probability); normalised to sum 1.

        >>> DegreeModel.from_distribution(100, {1: 0.5, 3: 0.5}).weights
        array([50., 50.])
        """
        nn = check_nonnegative_int(n, "n", minimum=1)
        if isinstance(distribution, Mapping):
            items = sorted((check_nonnegative_int(k, "degree in distribution"), float(w))
                           for k, w in distribution.items())  # fmt: skip
            v = np.array([k for k, _ in items], dtype=np.int64)
            w = np.array([x for _, x in items], dtype=np.float64)
        else:
            w = np.asarray(distribution, dtype=np.float64)
            if w.ndim != 1:
                raise ValueError(f"distribution must be one-dimensional, got shape {w.shape}")
            v = np.arange(w.size, dtype=np.int64)
        if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("distribution must be finite, non-negative, with a positive total")
        keep = w > 0
        dm = None if d_max is None else check_nonnegative_int(d_max, "d_max", minimum=1)
        return cls(nn, v[keep], nn * w[keep] / w.sum(), dm)

    @classmethod
    def bounded(cls, n: int, d_max: int) -> DegreeModel:
        """Only n and a public degree bound: variances are worst cases over all such graphs.

        >>> DegreeModel.bounded(1000, 50).d_max
        50
        """
        return cls(check_nonnegative_int(n, "n", minimum=1), None, None,
                   check_nonnegative_int(d_max, "d_max", minimum=1))  # fmt: skip

    @property
    def is_bounded(self) -> bool:
        """True when only a degree bound is known (worst-case variances, no true values)."""
        return self.values is None


def _parse(statistic: str) -> tuple[str, int | None]:
    if not isinstance(statistic, str):
        raise TypeError(f"statistic must be a string, got {type(statistic).__name__}")
    for pattern, kind in (
        (r"kstars_(\d+)_from_counts", "counts"),
        (r"kstars_(\d+)", "kstars"),
        (r"degree_moment_(\d+)", "moment"),
    ):
        m = re.fullmatch(pattern, statistic)
        if m:
            param = int(m.group(1))
            if kind != "moment" and param < 1:
                raise ValueError(f"statistic {statistic!r}: k must be >= 1")
            return kind, param
    if statistic in ("edges", "degree_mean", "degree_variance"):
        return statistic, None
    raise ValueError(f"unknown statistic {statistic!r}; known: {', '.join(PLANNED_STATISTICS)}")


def _counts_sensitivity(model: DegreeModel, k: int) -> float:
    if model.d_max is None:
        raise ValueError("kstars_<k>_from_counts needs the public degree bound d_max in the model")
    return float(max(math.comb(model.d_max, k - 1), 1))


def _noise_var(epsilon: float, sensitivity: float = 1.0) -> float:
    return DiscreteLaplace(epsilon=epsilon, sensitivity=sensitivity).variance


def _per_node_sum(model: DegreeModel, per_value: NDArray[np.float64]) -> float:
    return float(np.dot(model.weights, per_value))


def estimator_variance(statistic: str, model: DegreeModel, epsilon: float) -> float:
    """Exact variance of the curator's estimate of ``statistic`` at budget ``epsilon``.

    For a bounded model: the largest variance over all degree sequences within the bound.

    Examples
    --------
    >>> round(estimator_variance("edges", DegreeModel.bounded(4, 10), 1.0), 10)  # n Var(eta) / 4
    1.8413471884
    """
    kind, param = _parse(statistic)
    eps = check_epsilon(epsilon)
    n = model.n
    if kind == "edges":
        return n * _noise_var(eps) / 4.0
    if kind == "degree_mean":
        return _noise_var(eps) / n
    if kind == "counts":
        return n * _noise_var(eps, _counts_sensitivity(model, param))
    if kind == "degree_variance":
        nz = noise_model(eps, 1.0, "dlap")
        if model.is_bounded:
            q = (n * n - (n % 2)) * model.d_max**2 / (4.0 * n)  # max of sum (d - dbar)^2 on [0, d_max]^n
        else:
            mean = _per_node_sum(model, model.values.astype(np.float64)) / n
            q = _per_node_sum(model, (model.values - mean) ** 2)
        return (4.0 * nz.variance * q + sample_variance_constant(n, nz)) / (n * n)
    fn = binomial_variance if kind == "kstars" else power_variance
    if model.is_bounded:
        return n * float(np.max(fn(np.arange(model.d_max + 1), param, eps)))
    return _per_node_sum(model, fn(model.values, param, eps))


def _c_of(epsilon: float, sensitivity: float = 1.0) -> float:
    return dlap_c(epsilon, sensitivity)


def _eps_of_c(c: float, sensitivity: float = 1.0) -> float:
    """Inverse of c = 1 / (4 sinh^2(epsilon / (2 sensitivity)))."""
    return 2.0 * sensitivity * math.asinh(1.0 / (2.0 * math.sqrt(c)))


def _degree_in_c(kind: str, param: int | None) -> int:
    """Degree of the variance as a polynomial in c (without constant term)."""
    if kind in ("edges", "degree_mean", "counts"):
        return 1
    if kind == "degree_variance":
        return 2
    return max(int(param), 1)


_MAX_FIT_DEGREE = 8


def _variance_function(statistic: str, model: DegreeModel):
    """epsilon -> estimator_variance(statistic, model, epsilon), fast.

    The variance is a polynomial sum_{j=1}^{D} A_j c^j in c = p/(1-p)^2 without constant term
    (D = 1 for linear statistics, 2 for the degree variance, k for k-stars and j for moments:
    the noise moments E eta^{2m} are polynomials of degree m in c and the estimators'
    coefficients are polynomials in c). A_j are fitted from D exact evaluations at
    c = 1..D and checked against exact evaluations at two other points (c = 1e-3 and 50);
    where the check fails (or D > 8) every call evaluates the exact variance.
    """
    kind, param = _parse(statistic)
    sens = _counts_sensitivity(model, param) if kind == "counts" else 1.0
    D = _degree_in_c(kind, param)

    def exact(e: float) -> float:
        return estimator_variance(statistic, model, e)

    if D > _MAX_FIT_DEGREE:
        return exact
    # nodes spread over the scales where each power of c dominates; relative least squares
    # with equilibrated columns, so every coefficient is fixed where its term matters
    nodes = np.logspace(-3.0, 8.0, 3 * D + 2)
    rhs = np.array([exact(_eps_of_c(float(c), sens)) for c in nodes])
    if not np.all(np.isfinite(rhs)) or np.any(rhs <= 0):
        return exact
    V = nodes[:, None] ** np.arange(1, D + 1)[None, :] / rhs[:, None]
    col = np.sqrt((V * V).sum(axis=0))
    sol, *_ = np.linalg.lstsq(V / col, np.ones_like(rhs), rcond=None)
    coef = sol / col

    def fast(e: float) -> float:
        c = _c_of(e, sens)
        acc = 0.0
        for a in coef[::-1]:
            acc = (acc + a) * c
        return acc

    for c in (3.1e-3, 1.7, 2.9e3, 4.3e7):  # between the nodes
        e = _eps_of_c(c, sens)
        ref = exact(e)
        if not math.isclose(fast(e), ref, rel_tol=1e-9, abs_tol=0.0):
            return exact
    return fast


def true_value(statistic: str, model: DegreeModel) -> float:
    """The statistic's value under the assumed degrees (not available for a bounded model)."""
    kind, param = _parse(statistic)
    if model.is_bounded:
        if kind in ("edges", "degree_mean", "degree_variance", "kstars", "moment", "counts"):
            raise ValueError(
                f"a relative accuracy for {statistic!r} needs its true value, which a degree bound "
                "does not give: give an assumed degree sequence or distribution, or an absolute rmse"
            )
    v = model.values
    if kind == "edges":
        return _per_node_sum(model, v.astype(np.float64)) / 2.0
    if kind == "degree_mean":
        return _per_node_sum(model, v.astype(np.float64)) / model.n
    if kind == "degree_variance":
        mean = _per_node_sum(model, v.astype(np.float64)) / model.n
        return _per_node_sum(model, (v - mean) ** 2) / model.n
    if kind == "moment":
        return _per_node_sum(model, np.array([float(Fraction(int(x)) ** param) for x in v]))
    dd = np.minimum(v, model.d_max) if kind == "counts" else v
    return _per_node_sum(model, np.array([float(math.comb(int(x), param)) for x in dd]))


def relative_rmse(statistic: str, model: DegreeModel, epsilon: float) -> float:
    """sqrt(variance) / |true value| of the curator's estimate at budget ``epsilon``.

    >>> round(relative_rmse("degree_mean", DegreeModel.from_degrees([10] * 100), 1.0), 6)
    0.013570
    """
    truth = true_value(statistic, model)
    if truth == 0:
        raise ValueError(f"{statistic} is 0 under the model: its relative RMSE is undefined")
    return math.sqrt(estimator_variance(statistic, model, epsilon)) / abs(truth)


def _solve_decreasing(f, target: float) -> float:
    """The epsilon in [_EPS_LO, _EPS_HI] with f(epsilon) = target, f decreasing (bisection in log)."""
    lo, hi = math.log(_EPS_LO), math.log(_EPS_HI)
    if f(math.exp(lo)) <= target:
        return _EPS_LO
    if f(math.exp(hi)) > target:
        raise ValueError(f"the target is not reached below epsilon = {_EPS_HI:g}")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(math.exp(mid)) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return math.exp(hi)


def epsilon_for_rmse(
    statistic: str,
    model: DegreeModel,
    *,
    relative_rmse: float | None = None,
    rmse: float | None = None,
) -> float:
    r"""Smallest epsilon at which the curator's estimate of ``statistic`` reaches the target RMSE.

    Parameters
    ----------
    statistic : str
        One of :data:`PLANNED_STATISTICS`.
    model : DegreeModel
        The public information.
    relative_rmse, rmse : float
        Exactly one: a target for sqrt(Var)/|truth| (needs assumed degrees) or for sqrt(Var).

    Returns
    -------
    float
        epsilon with RMSE(epsilon) = target (to ~1e-15 relative in epsilon); the variance is
        strictly decreasing in epsilon, so every larger epsilon meets the target too.

    Notes
    -----
    The root of Var(epsilon) = target^2 (times truth^2), found by bisection in log epsilon on
    [1e-9, 1e4]. Closed forms for the linear statistics, small epsilon: Var(eta) ~ 2/epsilon^2,
    so edges need epsilon ~ sqrt(n/2) / (target |E|).

    Examples
    --------
    One million nodes, |E| within +-1000 (RMSE): n Var(eta)/4 = 10^6 needs Var(eta) = 4,
    i.e. p = 1/2, epsilon = ln 2:

    >>> round(epsilon_for_rmse("edges", DegreeModel.bounded(10**6, 100), rmse=1000.0), 10)
    0.6931471806
    """
    if (relative_rmse is None) == (rmse is None):
        raise ValueError("give exactly one of relative_rmse and rmse")
    _parse(statistic)
    if relative_rmse is not None:
        target = check_positive_real(relative_rmse, "relative_rmse") * abs(true_value(statistic, model))
        if target == 0:
            raise ValueError(f"{statistic} is 0 under the model: a relative target is undefined")
    else:
        target = check_positive_real(rmse, "rmse")
    return _solve_decreasing(_variance_function(statistic, model), target * target)


def _relative_variance_fn(statistic: str, model: DegreeModel, weight: float):
    var = _variance_function(statistic, model)
    if model.is_bounded:  # absolute variances (no true value): the weights carry the scale
        return lambda e: weight * var(e)
    truth = true_value(statistic, model)
    if truth == 0:
        raise ValueError(f"{statistic} is 0 under the model: its relative variance is undefined")
    scale = weight / (truth * truth)
    return lambda e: scale * var(e)


def split_budget(
    statistics: Sequence[str],
    model: DegreeModel,
    epsilon: float,
    weights: Sequence[float] | None = None,
) -> dict[str, float]:
    r"""Shares of ``epsilon`` across separately released statistics minimising
    sum_i w_i Var_i(epsilon_i) / truth_i^2 (relative variances), sum_i epsilon_i = epsilon.

    Parameters
    ----------
    statistics : sequence of str
        Distinct statistic names (:data:`PLANNED_STATISTICS`), each released with its own share.
    model : DegreeModel
        Public information. With a bounded model the absolute (worst-case) variances are used.
    epsilon : float
        Total budget per node (sequential composition).
    weights : sequence of float, optional
        w_i > 0, default all 1.

    Returns
    -------
    dict
        statistic -> share in (0, 1), summing to 1 (as ``DegreeRandomizer(shares=...)``).

    Notes
    -----
    Each R_i(epsilon_i) = w_i Var_i / truth_i^2 is convex and strictly decreasing (module
    docstring), so the optimum is the KKT point -R_i'(epsilon_i) = lambda for all i: for each
    lambda the epsilon_i(lambda) solving it is found by bisection (R_i' increasing), and
    lambda by bisection on sum_i epsilon_i(lambda) = epsilon (decreasing in lambda).
    Derivatives are central differences in log epsilon. When every variance is proportional
    to 1/epsilon_i^2 (Laplace-like small-epsilon regime, R_i = a_i / epsilon_i^2) this gives
    the closed form epsilon_i proportional to a_i^{1/3}.

    Examples
    --------
    >>> model = DegreeModel.from_degrees([5, 20, 7, 9] * 250)
    >>> shares = split_budget(["edges", "kstars_2"], model, 2.0)
    >>> round(sum(shares.values()), 12)
    1.0
    """
    names = list(statistics)
    if not names:
        raise ValueError("statistics must name at least one statistic")
    if len(set(names)) != len(names):
        raise ValueError(f"statistics must be distinct, got {names}")
    eps = check_epsilon(epsilon)
    if weights is None:
        w = [1.0] * len(names)
    else:
        w = [check_positive_real(x, "weights entry") for x in weights]
        if len(w) != len(names):
            raise ValueError(f"weights must have one entry per statistic ({len(names)}), got {len(w)}")
    fns = [_relative_variance_fn(s, model, wi) for s, wi in zip(names, w, strict=True)]
    if len(names) == 1:
        return {names[0]: 1.0}

    def slope(f, e: float) -> float:  # -R'(e) > 0, by a central difference in log e
        h = 1e-5
        return -(f(e * math.exp(h)) - f(e * math.exp(-h))) / (e * 2.0 * math.sinh(h))

    def eps_at(f, lam: float) -> float:  # e with -R'(e) = lam, clipped to (0, eps]
        lo, hi = math.log(eps * 1e-12), math.log(eps)
        if slope(f, math.exp(hi)) >= lam:
            return eps
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if slope(f, math.exp(mid)) > lam:
                lo = mid
            else:
                hi = mid
            if hi - lo < 1e-13:
                break
        return math.exp(0.5 * (lo + hi))

    # bracket lambda: at lambda_hi every eps_i is tiny, at lambda_lo every eps_i is eps
    lam_lo = min(slope(f, eps) for f in fns)
    lam_hi = max(slope(f, eps / (10 * len(fns))) for f in fns)
    llo, lhi = math.log(lam_lo), math.log(lam_hi)
    for _ in range(100):
        mid = 0.5 * (llo + lhi)
        total = sum(eps_at(f, math.exp(mid)) for f in fns)
        if total > eps:
            llo = mid
        else:
            lhi = mid
        if lhi - llo < 1e-13:
            break
    e = [eps_at(f, math.exp(0.5 * (llo + lhi))) for f in fns]
    total = math.fsum(e)
    return {s: ei / total for s, ei in zip(names, e, strict=True)}


def _objective_function(statistics: Sequence[str], model: DegreeModel, epsilon: float,
                        weights: Sequence[float] | None = None):  # fmt: skip
    """shares -> sum_i w_i R_i(share_i epsilon), with exact variances (checks of :func:`split_budget`)."""
    w = [1.0] * len(statistics) if weights is None else [float(x) for x in weights]
    truths = [1.0 if model.is_bounded else true_value(s, model) ** 2 for s in statistics]

    def objective(shares: Mapping[str, float]) -> float:
        return math.fsum(
            wi * estimator_variance(s, model, shares[s] * epsilon) / t
            for s, wi, t in zip(statistics, w, truths, strict=True)
        )

    return objective
