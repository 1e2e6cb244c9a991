r"""Separable fast forms: profiles (degree histograms), binned histograms, partition functions.

For a separable statistic sum_i h(x_i) the operator (2) of :mod:`ldpgraph.estimators.operator`
acts on each term alone (the weights of the other coordinates sum to 1), so

.. math:: \widehat{\sum_i h(x_i)} = \sum_i \big(h(y_i) - c\,(h(y_i+1) - 2h(y_i) + h(y_i-1))\big),

in O(n), with c = p / (1-p)^2, p = exp(-epsilon / sensitivity). This module applies it to

- the **profile** phi_k(x) = #{i: x_i = k} (for degree reports: the degree histogram, the
  degree distribution times n): h = 1[. = k];
- **histograms** over integer bins [a, b): h = 1[a <= . < b];
- the **partition function** Z(t) = sum_i t^{x_i}: h = t^. .

Because each estimate is a sum of independent per-report terms h~(y_i), its variance is a
sum too, and for an indicator h (h^2 = h) the unbiased variance estimate is
sum_i (h~(y_i)^2 - h~(y_i)) (E h~^2 = Var h~ + h(x), and h~ is unbiased for h(x)).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    check_epsilon,
    check_integer_reports,
    check_nonnegative_int,
    check_sensitivity,
    dlap_c,
)
from .order_statistics import HighVarianceWarning

__all__ = [
    "histogram",
    "histogram_variance",
    "partition_function",
    "partition_function_variance",
    "profile",
    "profile_exact_variance",
    "profile_variance",
]

_MAX_ABS_INT = 2**53


def _check_range(max_count: int, min_count: int) -> tuple[int, int]:
    lo = check_nonnegative_int(min_count, "min_count", minimum=-_MAX_ABS_INT)
    hi = check_nonnegative_int(max_count, "max_count", minimum=lo)
    if hi > _MAX_ABS_INT:
        raise ValueError(f"max_count must be <= 2**53, got {hi}")
    return hi, lo


def _rows(yy: NDArray[np.int64]) -> NDArray[np.int64]:
    return yy.reshape(int(np.prod(yy.shape[:-1])), yy.shape[-1])


def _window_counts(yy: NDArray[np.int64], lo: int, hi: int) -> NDArray[np.int64]:
    """N[..., j] = #{i: y_i = lo + j} for j = 0 .. hi - lo, per row (last axis)."""
    rows = _rows(yy)
    width = hi - lo + 1
    # y - lo in [0, width) selects the window; int64 arithmetic is exact for |y|, |lo| <= 2^53.
    idx = rows - lo
    inside = (idx >= 0) & (idx < width)
    flat = (np.arange(rows.shape[0], dtype=np.int64)[:, None] * width + idx)[inside]
    counts = np.bincount(flat, minlength=rows.shape[0] * width)
    return counts.reshape(yy.shape[:-1] + (width,))


def profile(
    y: ArrayLike,
    epsilon: float,
    max_count: int,
    sensitivity: float = 1,
    *,
    min_count: int = 0,
) -> NDArray[np.float64]:
    r"""Unbiased estimates of the profile phi_k = #{i: x_i = k}, k = min_count .. max_count.

    For degree reports this is the degree histogram (degree distribution times n).

    Parameters
    ----------
    y : array_like of int, shape (..., n)
        Noisy integer reports; the profile is taken over the last axis.
    epsilon : float
        Privacy parameter of the reports. Must be in (0, inf).
    max_count : int
        Largest value k to estimate phi_k for. Must be >= min_count.
    sensitivity : float, default 1
        Sensitivity the reports were released with. Must be in (0, inf).
    min_count : int, default 0
        Smallest value k (may be negative).

    Returns
    -------
    ndarray of float64, shape (..., max_count - min_count + 1)
        Entry j estimates phi_{min_count + j}. Entries can be negative; they are unbiased.

    Raises
    ------
    TypeError
        Non-integer reports or a non-integer max_count / min_count.
    ValueError
        Non-integral or non-finite reports, y without an axis, max_count < min_count,
        epsilon or sensitivity not finite and > 0.

    Notes
    -----
    With N_j = #{i: y_i = j},

    .. math:: \hat\phi_k = N_k - c\,(N_{k-1} - 2N_k + N_{k+1})
              = (1+2c) N_k - c N_{k-1} - c N_{k+1}.

    Unbiased: each report contributes 1[y=k] - c(1[y+1=k] - 2 1[y=k] + 1[y-1=k]), the
    operator (1) applied to 1[. = k]. Summed over all k the estimates give exactly n; summed
    over a window [A, B] they give #{A <= y <= B} + c (N_A - N_{A-1} + N_B - N_{B+1}), an
    unbiased estimate of #{A <= x <= B} (so truncating at max_count loses the mass of true
    values above it, in expectation).

    Examples
    --------
    >>> phi = profile([0, 1, 1, 3], epsilon=1.0, max_count=4, min_count=-1)
    >>> bool(np.isclose(phi.sum(), 4))  # over the full range the estimates sum to n
    True
    >>> profile([2, 2, 2], epsilon=1.0, max_count=3)  # 3(1+2c) at 2, -3c at 1 and 3
    array([ 0.        , -2.76202078,  8.52404157, -2.76202078])
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_integer_reports(y, min_ndim=1)
    hi, lo = _check_range(max_count, min_count)
    c = dlap_c(eps, delta)
    n = _window_counts(yy, lo - 1, hi + 1)
    lap = n[..., :-2] - 2 * n[..., 1:-1] + n[..., 2:]  # exact integers
    return n[..., 1:-1] - c * lap


def profile_variance(
    y: ArrayLike,
    epsilon: float,
    max_count: int,
    sensitivity: float = 1,
    *,
    min_count: int = 0,
) -> NDArray[np.float64]:
    r"""Unbiased estimates of Var(phi_k^) from the reports (same layout as :func:`profile`).

    Notes
    -----
    phi_k^ = sum_i h(y_i) with h = (1+2c) on k, -c on k +- 1; E h(y_i)^2 = Var h(y_i) + 1[x_i = k],
    so sum_i (h(y_i)^2 - h(y_i)) is unbiased for Var phi_k^:

    .. math:: \widehat V_k = 2c(1+2c) N_k + c(1+c)(N_{k-1} + N_{k+1}) \ge 0.

    It is 0 when no report lies within 1 of k -- then phi_k^ = 0 too, whatever the truth: an
    *estimate* of the variance, not a claim that phi_k^ is exact (the exact variance,
    :func:`profile_exact_variance`, is positive). No unbiased estimate can do otherwise: the
    operator applied to the variance function vanishes there.

    Examples
    --------
    >>> profile_variance([5], epsilon=1.0, max_count=6, min_count=4)
    array([1.76831346, 5.23190666, 1.76831346])
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_integer_reports(y, min_ndim=1)
    hi, lo = _check_range(max_count, min_count)
    c = dlap_c(eps, delta)
    n = _window_counts(yy, lo - 1, hi + 1)
    return 2.0 * c * (1.0 + 2.0 * c) * n[..., 1:-1] + c * (1.0 + c) * (n[..., :-2] + n[..., 2:])


def profile_exact_variance(
    x: ArrayLike,
    epsilon: float,
    max_count: int,
    sensitivity: float = 1,
    *,
    min_count: int = 0,
) -> NDArray[np.float64]:
    r"""Exact Var(phi_k^) as a function of the true values x (same layout as :func:`profile`).

    Parameters
    ----------
    x : array_like of int, shape (..., n)
        True values (e.g. true degrees), for simulations and planning.
    epsilon, max_count, sensitivity, min_count
        As in :func:`profile`.

    Notes
    -----
    phi_k^ = sum_i h(x_i + eta_i), independent terms. With pi(d) = (1-p)/(1+p) p^|d| and
    d = k - x_i, E h^2 = (1+2c)^2 pi(d) + c^2 (pi(d-1) + pi(d+1)), so
    Var h = v(d) = E h^2 - 1[d = 0] is, in closed form,

    .. math::

        v(0) = \frac{2p(1 + p + p^3)}{(1-p)^3 (1+p)},\qquad
        v(d) = \frac{1-p}{1+p}\,p^{|d|}\,\big((1+2c)^2 + c^2(p + 1/p)\big)\quad(d \ne 0),

    and Var phi_k^ = v(0) phi_k + kappa sum_{x_i != k} p^|k - x_i| (all terms positive, no
    cancellation). The sums over i are two one-sided geometric filters over a window of
    values, plus closed-form contributions of the values outside it: O(n + max_count).

    Examples
    --------
    One node with x = 5: v(0) at k = 5, v(+-1) at k = 4, 6.

    >>> profile_exact_variance([5], epsilon=1.0, max_count=6, min_count=4)
    array([1.81720158, 3.01899244, 1.81720158])
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    xx = check_integer_reports(x, "x", min_ndim=1)
    hi, lo = _check_range(max_count, min_count)
    t = eps / delta
    p = math.exp(-t)
    q = -math.expm1(-t)  # 1 - p without cancellation
    c = dlap_c(eps, delta)
    w0, w1 = lo - 1, hi + 1
    h = _window_counts(xx, w0, w1).astype(np.float64)
    rows = _rows(xx)
    with np.errstate(under="ignore"):
        # p^(w0 - x) for x < w0 and p^(x - w1) for x > w1 (distances >= 1; others masked)
        below = np.where(rows < w0, np.exp(-t * np.maximum(w0 - rows, 1).astype(np.float64)), 0.0)
        above = np.where(rows > w1, np.exp(-t * np.maximum(rows - w1, 1).astype(np.float64)), 0.0)
        below, above = below.sum(axis=-1), above.sum(axis=-1)
        j = np.arange(w1 - w0 + 1, dtype=np.float64)
        hr = h.reshape(-1, h.shape[-1])
        # F_j = sum_{x_i <= w0 + j} p^(w0 + j - x_i), B_j = sum_{x_i >= w0 + j} p^(x_i - w0 - j)
        from scipy import signal  # deferred: importing scipy.signal costs ~0.5 s

        fwd = signal.lfilter([1.0], [1.0, -p], hr, axis=-1) + below[:, None] * np.exp(-t * j)
        bwd = signal.lfilter([1.0], [1.0, -p], hr[:, ::-1], axis=-1)[:, ::-1] + above[:, None] * np.exp(
            -t * j[::-1]
        )
    # A'_k = sum_{x_i != k} p^|k - x_i| = p (F_{k-1} + B_{k+1})
    a_excl = p * (fwd[:, :-2] + bwd[:, 2:])
    v0 = 2.0 * p * (1.0 + p + p**3) / (q**3 * (1.0 + p))
    # c^2 (p + 1/p) = c (c p + 1/(1-p)^2): no overflow of 1/p for large epsilon
    kappa = math.tanh(t / 2.0) * ((1.0 + 2.0 * c) ** 2 + c * (c * p + 1.0 / (q * q)))
    out = v0 * hr[:, 1:-1] + kappa * a_excl
    return out.reshape(h.shape[:-1] + (h.shape[-1] - 2,))


# ---------------------------------------------------------------------------------------------
# histograms over integer bins


def _check_bins(bins: ArrayLike) -> NDArray[np.float64]:
    e = np.asarray(bins)
    if e.dtype.kind == "b" or e.dtype.kind not in "iuf":
        raise TypeError(f"bins must be an array of integer edges, got dtype {e.dtype}")
    if e.ndim != 1 or e.size < 2:
        raise ValueError(f"bins must be a 1-D array of at least 2 edges, got shape {e.shape}")
    e = e.astype(np.float64)
    if np.isnan(e).any():
        raise ValueError("bins must not contain nan")
    inner = e[1:-1]
    if not np.isfinite(inner).all() or np.isposinf(e[0]) or np.isneginf(e[-1]):
        raise ValueError("bins: only the first edge may be -inf and only the last +inf")
    fin = e[np.isfinite(e)]
    if (fin != np.round(fin)).any() or (np.abs(fin) > _MAX_ABS_INT).any():
        raise ValueError("bins: finite edges must be integers of magnitude <= 2**53")
    if not (np.diff(e) > 0).all():
        raise ValueError(f"bins must be strictly increasing, got {bins!r}")
    return e


def _histogram_parts(
    y: ArrayLike, epsilon: float, bins: ArrayLike, sensitivity: float
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], float, tuple[int, ...]]:
    """Plain bin counts (rows, B), counts at the points a-1, a, b-1, b of each bin (rows, B, 4)
    and the stencil f(z+1) - 2 f(z) + f(z-1) at those points (B, 4; 0 at an infinite or repeated
    point), with f the bin indicator."""
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_integer_reports(y, min_ndim=1)
    e = _check_bins(bins)
    c = dlap_c(eps, delta)
    rows = _rows(yy)
    nrow, nb = rows.shape[0], e.size - 1
    yf = rows.astype(np.float64)  # exact for |y| <= 2^53
    # bin index: a_j <= y < a_{j+1}  <=>  searchsorted(e, y, 'right') - 1 == j
    b_idx = np.searchsorted(e, yf, side="right") - 1
    ok = (b_idx >= 0) & (b_idx < nb)
    flat = (np.arange(nrow)[:, None] * nb + b_idx)[ok]
    inside = np.bincount(flat, minlength=nrow * nb).reshape(nrow, nb)
    lo, hi = e[:-1, None], e[1:, None]
    pts = np.concatenate([lo - 1, lo, hi - 1, hi], axis=-1)  # (B, 4)
    use = np.isfinite(pts)
    use[:, 2] &= pts[:, 2] != pts[:, 1]  # width-1 bin: a == b - 1, count the point once
    with np.errstate(invalid="ignore"):

        def f(z: NDArray[np.float64]) -> NDArray[np.float64]:
            return ((z >= lo) & (z < hi)).astype(np.float64)

        lap = np.where(use, f(pts + 1) - 2.0 * f(pts) + f(pts - 1), 0.0)  # small exact integers
    uniq = np.unique(pts[use])
    point_counts = np.zeros((nrow, nb, 4), dtype=np.int64)
    if uniq.size:
        pos = np.clip(np.searchsorted(uniq, yf), 0, uniq.size - 1)
        hit = uniq[pos] == yf
        pc = np.bincount((np.arange(nrow)[:, None] * uniq.size + pos)[hit], minlength=nrow * uniq.size)
        pc = pc.reshape(nrow, uniq.size)
        where = np.searchsorted(uniq, np.where(use, pts, uniq[0]))
        point_counts = np.where(use[None], pc[:, where], 0)
    return inside, point_counts, lap, c, yy.shape[:-1]


def histogram(
    y: ArrayLike,
    epsilon: float,
    bins: ArrayLike,
    sensitivity: float = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimates of #{i: a_j <= x_i < a_{j+1}} for integer bin edges a_0 < ... < a_B.

    Parameters
    ----------
    y : array_like of int, shape (..., n)
        Noisy integer reports; counted over the last axis.
    epsilon : float
        Privacy parameter of the reports. Must be in (0, inf).
    bins : array_like, shape (B + 1,)
        Strictly increasing integer edges. All bins are half-open [a_j, a_{j+1}) -- unlike
        ``numpy.histogram``, the last one too. The first edge may be -inf and the last +inf
        (open-ended bins such as "degree >= 100").
    sensitivity : float, default 1
        Sensitivity the reports were released with. Must be in (0, inf).

    Returns
    -------
    ndarray of float64, shape (..., B)

    Raises
    ------
    TypeError
        Non-integer reports, non-numeric or boolean edges.
    ValueError
        Fewer than 2 edges, edges not strictly increasing, finite edges not integers, an
        infinite edge other than a leading -inf / trailing +inf, invalid epsilon / sensitivity.

    Notes
    -----
    With N_z = #{i: y_i = z} and N_[a,b) the plain bin count, for a bin [a, b):

    .. math:: \widehat{\#}_{[a,b)} = N_{[a,b)} - c\,(N_{a-1} - N_a - N_{b-1} + N_b),

    (N_a + N_{b-1} counts the point twice for a width-1 bin, giving the profile stencil
    (1+2c) N_a - c N_{a-1} - c N_{a+1}; a term at an infinite edge is absent.) Unbiased: it is
    the operator (1) applied to 1[a <= . < b], summed over reports.

    Examples
    --------
    >>> histogram([0, 1, 5, 9], epsilon=50.0, bins=[0, 2, 8, np.inf])
    array([2., 1., 1.])
    """
    inside, point_counts, lap, c, batch = _histogram_parts(y, epsilon, bins, sensitivity)
    # N_in - c sum_z lap(z) N_z over the (at most 4) points where the stencil is non-zero
    out = inside - c * np.einsum("rbk,bk->rb", point_counts, lap)
    return out.reshape(batch + (inside.shape[-1],))


def histogram_variance(
    y: ArrayLike,
    epsilon: float,
    bins: ArrayLike,
    sensitivity: float = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimates of the variance of each :func:`histogram` bin estimate.

    Notes
    -----
    Per report h~ = f - c(f(.+1) - 2f + f(.-1)) with f the bin indicator, f^2 = f, so
    E[h~^2 - h~] = Var h~ and sum_i (h~(y_i)^2 - h~(y_i)) is unbiased for the variance. Only
    reports at a-1, a, b-1, b have h~ outside {0, 1}, so the sum is over those four points.

    Examples
    --------
    >>> bool(np.allclose(histogram_variance([4, 5, 7], 1.0, [5, 6]),
    ...                  profile_variance([4, 5, 7], 1.0, 5, min_count=5)))
    True
    """
    inside, point_counts, lap, c, batch = _histogram_parts(y, epsilon, bins, sensitivity)
    # h~ = f - c lap is f (0 or 1, so h~^2 - h~ = 0) away from the stencil points a-1, a, b-1, b;
    # lap is non-zero at every point in use (1, -1, -1, 1; -2 at a for a width-1 bin).
    fval = np.array([0.0, 1.0, 1.0, 0.0])[None, :]  # f at a-1, a, b-1, b
    hval = np.where(lap != 0.0, fval - c * lap, 0.0)
    out = np.einsum("rbk,bk->rb", point_counts, hval * hval - hval)
    return out.reshape(batch + (inside.shape[-1],))


# ---------------------------------------------------------------------------------------------
# partition function


def _check_t(t: ArrayLike, rate: float, need_variance: bool) -> NDArray[np.float64]:
    tt = np.asarray(t)
    if tt.dtype.kind == "b" or tt.dtype.kind not in "iuf":
        raise TypeError(f"t must be real, got dtype {tt.dtype}")
    tt = tt.astype(np.float64)
    bad = ~np.isfinite(tt) | (tt == 0)
    if bad.any():
        raise ValueError(f"t must be finite and non-zero, got {tt[bad].ravel()[0]!r}")
    ln = np.abs(np.log(np.abs(tt)))
    limit = rate / 2.0 if need_variance else rate
    over = ln >= limit
    if over.any():
        t0 = float(tt[over].ravel()[0])
        what = "E[t^(2y)] (the variance)" if need_variance else "E|t^y|"
        raise ValueError(
            f"t = {t0!r}: {what} is infinite for DLap reports with epsilon/sensitivity = {rate:.6g}; "
            f"need p * max(|t|, 1/|t|){'^2' if need_variance else ''} < 1, i.e. |ln|t|| < {limit:.6g}, "
            f"|t| in ({math.exp(-limit):.6g}, {math.exp(limit):.6g})"
        )
    return tt


def _power_sums(rows: NDArray[np.int64], tt: NDArray[np.float64]) -> NDArray[np.float64]:
    """sum_i t^(y_i) per row for every t (shape (rows, t.size)), overflow-safe."""
    out = np.zeros((rows.shape[0], tt.size))
    if rows.size == 0:
        return out
    yf = rows.astype(np.float64)
    for j, tv in enumerate(tt.ravel().tolist()):
        ex = yf * math.log(abs(tv))
        if ex.max() < 700 and ex.min() > -700:
            out[:, j] = np.power(tv, yf).sum(axis=-1)
            continue
        m = ex.max(axis=-1, keepdims=True)
        sign = np.where((tv < 0) & (rows % 2 == 1), -1.0, 1.0)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            inner = (sign * np.exp(ex - m)).sum(axis=-1)
            out[:, j] = np.where(inner == 0.0, 0.0, inner * np.exp(m[:, 0]))
    return out


def partition_function(
    y: ArrayLike,
    t: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the partition function Z(t) = sum_i t^{x_i} (over the last axis).

    Parameters
    ----------
    y : array_like of int, shape (..., n)
        Noisy integer reports.
    t : float or array_like of float
        Evaluation point(s): real, non-zero, with p max(|t|, 1/|t|) < 1, p = exp(-epsilon /
        sensitivity) -- i.e. |ln|t|| < epsilon / sensitivity -- for E|t^y| to be finite.
    epsilon, sensitivity : float
        Of the reports. Must be in (0, inf).

    Returns
    -------
    ndarray of float64, shape y.shape[:-1] + t.shape
        Values beyond the float range are +-inf.

    Raises
    ------
    ValueError
        If E|t^y| is infinite (no unbiased estimate with finite mean exists through (2)), or
        t is zero or not finite.

    Warns
    -----
    HighVarianceWarning
        If the mean is finite but the variance is not (p t^2 >= 1 or p / t^2 >= 1).

    Notes
    -----
    Per report :math:`t^y - c(t^{y+1} - 2t^y + t^{y-1}) = t^y \big(1 - c\,(t-1)^2/t\big)`;
    equivalently 1/E[t^eta] = (1-pt)(1-p/t)/(1-p)^2. So

    .. math:: \hat Z(t) = \Big(1 - c\,\frac{(t-1)^2}{t}\Big) \sum_i t^{y_i}.

    Examples
    --------
    >>> float(partition_function([0, 1, 2], 1.0, epsilon=1.0))  # t = 1 counts the reports
    3.0
    >>> float(partition_function([3], 2.0, epsilon=50.0))  # no noise: 2^3
    8.0
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_integer_reports(y, min_ndim=1)
    rate = eps / delta
    tt = _check_t(t, rate, need_variance=False)
    if (np.abs(np.log(np.abs(tt))) >= rate / 2.0).any():
        warnings.warn(
            f"partition_function: the estimate has infinite variance for some t (need "
            f"|ln|t|| < epsilon/(2 sensitivity) = {rate / 2:.6g} for a finite variance); it is "
            "unbiased but unreliable.",
            HighVarianceWarning,
            stacklevel=2,
        )
    c = dlap_c(eps, delta)
    kappa = 1.0 - c * (tt - 1.0) ** 2 / tt
    sums = _power_sums(_rows(yy), tt)
    with np.errstate(over="ignore", invalid="ignore"):
        out = sums * kappa.ravel()[None, :]
    return out.reshape(yy.shape[:-1] + tt.shape)


def partition_function_variance(
    y: ArrayLike,
    t: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the variance of :func:`partition_function` (same shapes).

    Requires a finite variance: |ln|t|| < epsilon / (2 sensitivity) (ValueError otherwise).

    Notes
    -----
    With g(y) = kappa(t) t^y, kappa(t) = 1 - c (t-1)^2/t, the per-report estimate
    g^2 - T[t^(2.)](y) = t^(2y) (kappa(t)^2 - kappa(t^2)) and

    .. math:: \kappa(t)^2 - \kappa(t^2) = \frac{c\,(t-1)^2}{t^2}\,\big(t^2 + 1 + c\,(t-1)^2\big)
              \ \ge 0,

    so :math:`\widehat V = \frac{c(t-1)^2}{t^2}(t^2 + 1 + c(t-1)^2)\sum_i t^{2 y_i}`; it is 0 at
    t = 1 (Z(1) = n is known exactly).

    Examples
    --------
    >>> float(partition_function_variance([0, 4], 1.0, epsilon=1.0))
    0.0
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_integer_reports(y, min_ndim=1)
    rate = eps / delta
    tt = _check_t(t, rate, need_variance=True)
    c = dlap_c(eps, delta)
    factor = c * (tt - 1.0) ** 2 / (tt * tt) * (tt * tt + 1.0 + c * (tt - 1.0) ** 2)
    sums = _power_sums(_rows(yy), tt * tt)
    with np.errstate(over="ignore", invalid="ignore"):
        out = sums * factor.ravel()[None, :]
    return out.reshape(yy.shape[:-1] + tt.shape)
