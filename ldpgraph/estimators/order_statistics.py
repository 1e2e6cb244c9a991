r"""Unbiased estimates of order statistics (minimum, maximum, k-th smallest, median).

Reports y = x + eta, eta_i i.i.d. DLap(p), p = exp(-epsilon / sensitivity), c = p / (1-p)^2.
The unique unbiased estimate of an order statistic x_(k) is the operator (2) of
:mod:`ldpgraph.estimators.operator` applied to f(x) = x_(k); these functions evaluate it in
O(n) per row (plus a small convolution over the tied reports next to the order statistic)
instead of 3^n evaluations of f.

Derivation (the "counting" fast form)
-------------------------------------
Write x_(k) = sum_t t (F(t) - F(t-1)) with F(t) = 1[#{i: x_i <= t} >= k+1], and let
G(t) = T[F(t)](y) be the operator applied to that indicator. As the noise is independent over
coordinates, the weight of "y_i + xi_i <= t" is A_i(t) = sum_{xi: y_i + xi <= t} alpha_xi:

    A_i(t) = 0 (t <= y_i - 2),  -c (t = y_i - 1),  1 + c (t = y_i),  1 (t >= y_i + 1),

and 1 - A_i(t) is the weight of the complement (the alpha sum to 1). Hence G(t) is a tail of
the "quasi-binomial" count sum_i Bernoulli(A_i(t)). Let s be the k-th smallest report. Then
G(t) = 1 for t >= s + 1 and G(t) = 0 for t <= s - 2, so only two candidates are non-trivial:

.. math::

    g(y) = \sum_t t\,(G(t) - G(t-1)) = s + H_1 - G_0,\qquad
    H_1 = 1 - G(s),\quad G_0 = G(s-1).

The weights g puts on the candidate values s-1, s, s+1 are G_0, 1 - H_1 - G_0 and H_1.
For candidate t only the reports at t and t+1 are random: the X reports at t+1 fall to <= t
with weight -c each, the Y reports at t rise above t with weight -c each. Writing
-c = -(1+2c) b and 1 + c = (1+2c)(1-b) with b = c / (1 + 2c) in [0, 1/2),

.. math::

    G(t) = (1+2c)^{n_x+n_y}\;
           \mathbb{E}\big[(-1)^{W}\,1\{W \ge k + 1 - L(t) - n_y\}\big],\qquad W = X - Y,

with X ~ Bin(n_x, b), Y ~ Bin(n_y, b) ordinary independent binomials and
L(t) = #{i: y_i <= t-1}. The pmf of W is a convolution of two non-negative pmfs (computed to
relative accuracy); only the signed partial sum cancels. It is taken over the side of the
threshold with the smaller probability mass, the other side following from the exact total
E[(-1)^W] = (1+2c)^{-(n_x+n_y)}. The absolute rounding error is therefore about
u (1+2c)^{n_x+n_y} times the smaller mass, u = 2^-53 -- small unless the estimate itself is
dominated by astronomically large weights, which is reported by :class:`HighVarianceWarning`.

**Tails and large tie blocks.** When the threshold lies far in the tail of W, the plain binomial
pmf underflows to 0 on the side to be summed while (1+2c)^{n_x+n_y} overflows; their product
is what matters (it can be 10^329 where 0 would be read). That side is then summed under
exponential tilting: P[W = w] = Z e^{-theta w} P'[w] with P' the pmf of a difference of two
binomials with parameters expit(logit b +- theta), theta chosen so that P' is centred on the
threshold, and everything carried as logarithms of magnitudes -- nothing underflows, and a value
beyond the float range is returned as +-inf or nan with a warning, never as 0. The same tilted
form keeps the FFT convolution accurate at the threshold, so the convolution (direct
O(n_x n_y) or FFT O(N log N)) is chosen by a measured cost model: the whole estimate costs
O(n log n) for any tie pattern (``scripts/bench_order_statistics.py`` prints the fitted
exponent: 0.84-1.0 from n = 10^3 to 2 10^6 with geometric, Zipf and all-equal values).
If an evaluation's error bound is not small (1e-9) against the value, the estimate is nan
with a :class:`HighVarianceWarning` ("could not be evaluated").

For the maximum (k = n-1) this collapses to a closed form with a = #{y_i = M}, b = #{y_i = M-1},
M = max y:

.. math:: g(y) = M + 1 - (1+c)^a - (-c)^a (1+c)^b,

and min(y) = -max(-y) (the operator commutes with negation).

Variance. With f = x_(k), T[f^2](y) = s^2 + 2s(H_1 - G_0) + H_1 + G_0, so the unbiased
variance estimate g^2 - T[f^2] is (H_1 - G_0)^2 - (H_1 + G_0), free of s.

**Accuracy.** Each of H_1, G_0 is computed to a few ulps relative (checked against exact
rational and 800-digit evaluations up to n = 1000 ties), so g has an absolute error of about
1e-16 max(1, |H_1|, |G_0|): relative to the largest weight, which is also the scale of the
estimator's own spread. Where H_1 and G_0 nearly cancel the relative error of g can be larger.
If the k-th smallest report s is unique and no report equals s - 1 or s + 1, then
H_1 = G_0 = -c and g(y) = s exactly: both terms are evaluated by the same floating-point path
(summed outward from the threshold) so that this holds bit for bit, as it does for mirror-image
tie patterns such as an odd number of tied reports with k the middle one.
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
    check_positive_real,
    check_sensitivity,
    dlap_c,
)

__all__ = [
    "maximum_of_top_counts",
    "HIGH_VARIANCE_THRESHOLD",
    "HighVarianceWarning",
    "maximum",
    "median",
    "minimum",
    "order_statistic",
    "order_statistic_variance",
]

#: Default ratio (largest weight magnitude) / (1 + 2c) above which :class:`HighVarianceWarning`
#: is emitted. 1 + 2c is the weight an isolated report gets (its estimate is then the report
#: itself, with the noise variance 2c); weights beyond a thousand times that make the estimate's
#: error (of the order of the weight, in units of the lattice step) dwarf the noise of a report.
HIGH_VARIANCE_THRESHOLD = 1e3

# log of the largest float64 we let exp() produce without overflow handling.
_LOG_SAFE = 700.0
# Above this many products (n_x+1)(n_y+1) (~0.05 s) the pmf of W is never convolved directly.
_DIRECT_CONVOLUTION_MAX = 400_000_000
# Cost model of the two convolutions (see _convolution_seconds).
_DIRECT_SECONDS_PER_PRODUCT = 1.3e-10
_FFT_SECONDS_BASE = 5e-5
_FFT_SECONDS_PER_POINT = 2e-9
# A side of the threshold with less probability mass than this is summed under tilting.
_TINY_MASS = 1e-200


class HighVarianceWarning(UserWarning):
    """An unbiased estimate is dominated by weights of astronomically large magnitude.

    The estimate is still exactly unbiased, but its error is of the order of the reported
    weight magnitude (typically many reports tied at the relevant value under small epsilon:
    the weights grow like (1 + 2c)^ties). Treat the number as unusable, not as a value.
    """


# ---------------------------------------------------------------------------------------------
# validation


def _check_warn_above(warn_above: float | None) -> float:
    if warn_above is None:
        return math.inf
    return check_positive_real(warn_above, "warn_above")


def _prepare(y: ArrayLike, epsilon: float, sensitivity: float) -> tuple[NDArray[np.int64], float]:
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_integer_reports(y, min_ndim=1)
    check_nonnegative_int(yy.shape[-1], "y.shape[-1] (number of reports per row)", minimum=1)
    return yy, dlap_c(eps, delta)


def _check_k(k: int, n: int) -> int:
    kk = check_nonnegative_int(k, "k", minimum=-n)
    if kk >= n:
        raise ValueError(f"k must be an integer in [-n, n-1] = [{-n}, {n - 1}] for n = {n} reports, got {kk}")
    return kk + n if kk < 0 else kk


# ---------------------------------------------------------------------------------------------
# numerics


def _log_abs(v: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore"):
        return np.log(np.abs(v))


def _combine_difference(
    v1: NDArray[np.float64], l1: NDArray[np.float64], v2: NDArray[np.float64], l2: NDArray[np.float64]
) -> NDArray[np.float64]:
    """v1 - v2 where v (possibly +-inf after overflow) has natural log-magnitude l (finite)."""
    out = v1 - v2
    bad = ~np.isfinite(v1) | ~np.isfinite(v2) | ~np.isfinite(out)
    if bad.any():
        s1, s2 = np.sign(v1[bad]), -np.sign(v2[bad])
        a1, a2 = l1[bad], l2[bad]
        lm = np.maximum(a1, a2)
        with np.errstate(over="ignore", invalid="ignore"):
            bracket = s1 * np.exp(a1 - lm) + s2 * np.exp(a2 - lm)
            val = np.where(bracket == 0.0, np.nan, np.exp(lm) * bracket)
        out[bad] = val
    return out


def _binom_pmf(n: int, b: float, cache: dict[int, NDArray[np.float64]]) -> NDArray[np.float64]:
    """Bin(n, b) pmf on 0..n (relative accuracy; memoized per call, since tie counts repeat)."""
    pmf = cache.get(n)
    if pmf is None:
        from scipy import stats  # deferred: importing scipy.stats costs ~0.3 s

        pmf = np.ones(1) if n == 0 else stats.binom.pmf(np.arange(n + 1), n, b)
        cache[n] = pmf
    return pmf


def _convolution_seconds(nx: int, ny: int) -> tuple[float, float]:
    """Modelled cost (s) of the direct and the FFT convolution of pmfs of sizes nx+1 and ny+1.

    Constants measured on a 2-core x86-64 machine (numpy 2.4, scipy 1.17): ``np.convolve``
    ~1.3e-10 s per product, ``scipy.signal.fftconvolve`` ~5e-5 s + 2e-9 s * N log2 N. Only the
    crossover matters (near nx * ny ~ 1e6); ``scripts/bench_order_statistics.py`` re-measures it.
    """
    size = nx + ny + 1
    return _DIRECT_SECONDS_PER_PRODUCT * (nx + 1) * (ny + 1), _FFT_SECONDS_BASE + _FFT_SECONDS_PER_POINT * (
        size * math.log2(size + 1)
    )


def _convolve(px: NDArray[np.float64], py_rev: NDArray[np.float64], use_fft: bool) -> tuple[NDArray, float]:
    """pmf of X - Y (non-negative inputs) and the absolute error bound per entry (0: relative accuracy)."""
    if px.size == 1:
        return px[0] * py_rev, 0.0
    if py_rev.size == 1:
        return px * py_rev[0], 0.0
    if not use_fft:
        return np.convolve(px, py_rev), 0.0  # sums of non-negative terms: relative accuracy
    from scipy import signal  # deferred: importing scipy.signal costs ~0.5 s

    pw = np.clip(signal.fftconvolve(px, py_rev), 0.0, None)
    # absolute error per entry of an FFT convolution: a few u log2(N) ||px|| ||py||
    err = 8.0 * 2.0**-53 * math.log2(pw.size) * math.sqrt(float(px @ px) * float(py_rev @ py_rev))
    return pw, err


def _tilt(nx: int, ny: int, logit_b: float, target: float) -> float:
    r"""theta with E[X' - Y'] = target for X' ~ Bin(nx, expit(L + theta)), Y' ~ Bin(ny, expit(L - theta)).

    L = logit(b). The tilted mean is increasing in theta with range (-ny, nx); target is inside.
    """
    bound = math.log(4.0 * (nx + ny) + 4.0) + abs(logit_b) + 1.0
    lo, hi = -bound, bound
    for _ in range(200):  # bisection to full precision: monotone, no scipy needed
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if nx * _expit(logit_b + mid) - ny * _expit(logit_b - mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _expit(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def _log1pexp(z: float) -> float:
    return z + math.log1p(math.exp(-z)) if z > 0 else math.log1p(math.exp(z))


def _side_sum_tilted(
    nx: int, ny: int, thr: int, side_upper: bool, b: float, use_fft: bool
) -> tuple[float, float, float]:
    r"""Signed side sum S = E[(-1)^W 1{W in side}] by exponential tilting, in log-magnitude form.

    With theta from :func:`_tilt` (tilted mean at the first point of the side), the pmf of
    W = X - Y factorizes as P[W = w] = Z e^{-theta w} P'[w], P' the pmf of the tilted
    difference X' - Y' (ordinary binomials with parameters expit(L +- theta)) and
    ln Z = nx ln(1 - b + b e^theta) + ny ln(1 - b + b e^-theta). P' has its bulk at the
    threshold, where the terms of S live, and e^{-theta (w - w0)} <= 1 decays along the side, so
    nothing underflows however far in the tail of W the threshold sits (the untilted pmf
    underflows to 0 there while (1+2c)^(nx+ny) overflows: their product is what matters).

    Returns (sign of S, ln|S| (-inf for S = 0), ln of the absolute error bound of S).
    """
    w0 = thr if side_upper else thr - 1
    target = min(max(float(w0), -ny + 0.25), nx - 0.25)
    logit_b = math.log(b) - math.log1p(-b)
    theta = _tilt(nx, ny, logit_b, target)
    bx, by = _expit(logit_b + theta), _expit(logit_b - theta)
    from scipy import stats  # deferred: importing scipy.stats costs ~0.3 s

    px = stats.binom.pmf(np.arange(nx + 1), nx, bx) if nx else np.ones(1)
    py = stats.binom.pmf(np.arange(ny + 1), ny, by) if ny else np.ones(1)
    pw, err = _convolve(px, py[::-1], use_fft)
    j = min(max(thr + ny, 0), pw.size)  # pw[:j] is the side W < thr
    w = np.arange(-ny, nx + 1)
    if side_upper:
        ww, pp = w[j:], pw[j:]
    else:
        ww, pp = w[:j][::-1], pw[:j][::-1]  # outward from the threshold
    decay = np.exp(-theta * (ww - w0).astype(np.float64))
    terms = np.where(ww % 2 == 0, pp, -pp) * decay
    part = float(terms.sum())
    abs_sum = float(np.abs(terms).sum())
    err_bound = 4.0 * 2.0**-53 * ww.size * abs_sum + err * float(decay.sum())
    log_z = (
        nx * (math.log1p(-b) + _log1pexp(logit_b + theta))
        + ny * (math.log1p(-b) + _log1pexp(logit_b - theta))
        - theta * w0
    )
    sign = math.copysign(1.0, part)
    log_part = log_z + math.log(abs(part)) if part != 0.0 else -math.inf
    log_err = log_z + math.log(err_bound) if err_bound > 0.0 else -math.inf
    return sign, log_part, log_err


def _signed_side(
    nx: int, ny: int, thr: int, upper: bool, c: float, cache: dict[int, NDArray[np.float64]]
) -> tuple[float, float, bool]:
    r"""Q = (1+2c)^(nx+ny) E[(-1)^W 1{W >= thr}] (upper) or 1{W < thr} (lower), W = X - Y.

    Returns (Q, ln|Q|, accurate); Q may be +-inf when it exceeds the float range, ln|Q| stays
    finite (or -inf for Q = 0). ``accurate`` is False when the absolute error bound of Q is not
    small (1e-9) against max(1, |Q|); Q is then unusable.

    Paths. The side of the threshold with the smaller probability mass is summed (the other
    follows from the exact total). Where the direct convolution is the cheaper one and that
    side's mass is representable (>= 1e-200), the plain binomial pmfs are convolved (relative
    accuracy, and mirror-image tie patterns cancel bit for bit). Otherwise -- a side deep in the
    tail, whose untilted pmf would underflow to 0 while (1+2c)^(nx+ny) overflows, or an FFT
    that is cheaper -- the sum is taken under exponential tilting (:func:`_side_sum_tilted`),
    in log-magnitude form, so neither underflow nor overflow can turn a huge Q into 0.
    """
    b = c / (1.0 + 2.0 * c)
    if b == 0.0:  # no noise in float64 (c = 0): W = 0 surely
        nx = ny = 0
    log_s = (nx + ny) * math.log1p(2.0 * c)
    if thr <= -ny or thr > nx:  # one side is empty: Q is 0 or 1 exactly
        q = 1.0 if (thr <= -ny) == upper else 0.0
        return q, (0.0 if q else -math.inf), True
    t_direct, t_fft = _convolution_seconds(nx, ny)
    use_fft = t_fft < t_direct or (nx + 1) * (ny + 1) > _DIRECT_CONVOLUTION_MAX
    if not use_fft:
        px, py = _binom_pmf(nx, b, cache), _binom_pmf(ny, b, cache)
        pw, _ = _convolve(px, py[::-1], use_fft=False)
        w = np.arange(-ny, nx + 1)
        j = thr + ny  # pw[:j] is the side W < thr
        mass_lower, mass_upper = pw[:j].sum(), pw[j:].sum()
        if min(mass_lower, mass_upper) >= _TINY_MASS:
            direct = (mass_upper <= mass_lower) if upper else (mass_lower < mass_upper)
            # Both sides are summed outward from the threshold, so that mirror-image tie patterns
            # (H1 and G0 of a symmetric block) give bit-identical values that cancel exactly.
            signed = np.where(w % 2 == 0, pw, -pw)
            side = signed[j:] if upper == direct else signed[:j][::-1]
            part = float(side.sum())
            sign = math.copysign(1.0, part)
            log_part = math.log(abs(part)) if part != 0.0 else -math.inf
            return _finish_side(sign, log_s + log_part, -math.inf, direct)
    mean = b * (nx - ny)
    side_upper = thr - 0.5 >= mean  # the side away from the bulk of W: terms decay outward
    sign, log_part, log_err = _side_sum_tilted(nx, ny, thr, side_upper, b, use_fft)
    direct = side_upper == upper
    q, lq, accurate = _finish_side(sign, log_s + log_part, log_s + log_err, direct)
    if not accurate and use_fft and (nx + 1) * (ny + 1) <= _DIRECT_CONVOLUTION_MAX:
        sign, log_part, log_err = _side_sum_tilted(nx, ny, thr, side_upper, b, False)
        q, lq, accurate = _finish_side(sign, log_s + log_part, log_s + log_err, direct)
    return q, lq, accurate


def _finish_side(sign: float, log_scaled: float, log_err: float, direct: bool) -> tuple[float, float, bool]:
    """Q from the scaled side sum sign * e^log_scaled: itself (direct) or 1 minus it."""
    if log_scaled < _LOG_SAFE:
        scaled = sign * math.exp(log_scaled) if log_scaled > -math.inf else 0.0
        q = scaled if direct else 1.0 - scaled
        lq = math.log(abs(q)) if q != 0.0 else -math.inf
    else:  # |Q| > e^700: the 1 of the complement is negligible
        q = sign * (1.0 if direct else -1.0) * math.inf
        lq = log_scaled
    accurate = log_err <= math.log(1e-9) + max(0.0, lq)
    return q, lq, accurate


def _unique_rows(sig: NDArray[np.int64], n: int) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
    """Unique rows of a (rows, 4) array of counts in [0, n] and the inverse index."""
    base = n + 1
    if base**4 >= 2**62:
        uniq, inv = np.unique(sig, axis=0, return_inverse=True)
        return uniq, inv.reshape(-1)
    # pack into one int64 key: a 1-D unique is far faster than unique(axis=0)
    key = ((sig[:, 0] * base + sig[:, 1]) * base + sig[:, 2]) * base + sig[:, 3]
    ukey, inv = np.unique(key, return_inverse=True)
    cols = []
    for _ in range(4):
        ukey, rem = np.divmod(ukey, base)
        cols.append(rem)
    return np.stack(cols[::-1], axis=-1), inv.reshape(-1)


def _order_statistic_parts(yy: NDArray[np.int64], k: int, c: float) -> tuple[NDArray, ...]:
    """s, offset D = H1 - G0, variance estimate, ln max |weight|, inaccurate-flag (per row)."""
    s = np.partition(yy, k, axis=-1)[..., k]
    d = yy - s[..., None]
    n_le_m2 = np.count_nonzero(d <= -2, axis=-1)
    n_m1 = np.count_nonzero(d == -1, axis=-1)
    n_0 = np.count_nonzero(d == 0, axis=-1)
    n_p1 = np.count_nonzero(d == 1, axis=-1)
    r1 = k + 1 - (n_le_m2 + n_m1)  # in [1, n_0]
    # H1 = 1 - G(s):  X = reports at s+1, Y = reports at s, side W < r1 - n_0.
    # G0 = G(s-1):    X = reports at s,   Y = reports at s-1, side W >= r1.
    sig = np.stack([np.ravel(n_p1), np.ravel(n_0), np.ravel(n_m1), np.ravel(r1)], axis=-1)
    uniq, inv = _unique_rows(sig.astype(np.int64), yy.shape[-1])
    h = np.empty((uniq.shape[0], 3))
    g = np.empty((uniq.shape[0], 3))
    cache: dict[int, NDArray[np.float64]] = {}
    for i, (u1, v1, v0, rr) in enumerate(uniq.tolist()):
        h[i] = _signed_side(u1, v1, rr - v1, False, c, cache)
        g[i] = _signed_side(v1, v0, rr, True, c, cache)
    offset, var, lw = _finish(h[inv, 0], h[inv, 1], g[inv, 0], g[inv, 1])
    bad = (h[inv, 2] == 0.0) | (g[inv, 2] == 0.0)
    offset[bad] = np.nan
    var[bad] = np.nan
    return s, offset, var, lw, bad


def _finish(
    h1: NDArray[np.float64], lh1: NDArray[np.float64], g0: NDArray[np.float64], lg0: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Offset D = H1 - G0, variance estimate D^2 - (H1 + G0) and ln of the largest |weight|."""
    h1, lh1, g0, lg0 = (np.atleast_1d(np.asarray(a, dtype=np.float64)) for a in (h1, lh1, g0, lg0))
    with np.errstate(over="ignore", invalid="ignore"):
        offset = _combine_difference(h1, lh1, g0, lg0)
        total = _combine_difference(h1, lh1, -g0, lg0)  # H1 + G0
        mid = 1.0 - total
        lmid = np.where(np.isfinite(mid), _log_abs(mid), np.maximum(lh1, lg0))
        var = offset * offset - total
        var = np.where(np.isnan(var) & ~np.isnan(offset), np.inf, var)
    log_weight = np.maximum(np.maximum(lh1, lg0), lmid)
    return offset, var, log_weight


def _maximum_parts(yy: NDArray[np.int64], c: float) -> tuple[NDArray, ...]:
    """Closed form for the maximum: H1 = 1 - (1+c)^a, G0 = (-c)^a (1+c)^b (same outputs as above)."""
    m = yy.max(axis=-1)
    a = np.count_nonzero(yy == m[..., None], axis=-1)
    b = np.count_nonzero(yy == (m - 1)[..., None], axis=-1)
    a = np.atleast_1d(a).astype(np.float64)
    b = np.atleast_1d(b).astype(np.float64)
    l1c = math.log1p(c)
    lc = math.log(c) if c > 0 else -math.inf
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        z = a * l1c
        # H1 = -expm1(a log1p c); exactly -c for a single top report.
        h1 = np.where(a == 1, -c, -np.expm1(z))
        lh1 = np.where(a == 1, lc, z + np.log(-np.expm1(-z)))
        lg0 = a * lc + b * l1c
        sign = np.where(a % 2 == 1, -1.0, 1.0)
        safe = (a * lc > -_LOG_SAFE) & (b * l1c < _LOG_SAFE) & (lg0 < _LOG_SAFE)
        g0 = np.where(safe, np.power(-c, a) * np.power(1.0 + c, b), sign * np.exp(lg0))
    offset, var, lw = _finish(h1, lh1, g0, lg0)
    return m, offset, var, lw, np.zeros(offset.shape, dtype=bool)


def _fmt_log(v: float) -> str:
    return f"{math.exp(v):.3g}" if v < _LOG_SAFE else f"10^{v / math.log(10):.1f}"


def _warn(
    log_weight: NDArray[np.float64], bad: NDArray[np.bool_], threshold: float, what: str, c: float
) -> None:
    lw = np.asarray(log_weight).ravel()
    bad = np.asarray(bad).ravel()
    if bad.any():
        warnings.warn(
            f"{what}: {int(bad.sum())} of {lw.size} estimates could not be evaluated to float64 "
            f"precision (weights up to {_fmt_log(float(lw[bad].max()))} cancel on a huge tie block); "
            "returned nan.",
            HighVarianceWarning,
            stacklevel=3,
        )
    if not np.isfinite(threshold):
        return
    base = math.log1p(2.0 * c)
    flagged = (lw - base > math.log(threshold)) & ~bad
    if not flagged.any():
        return
    worst = float(lw[flagged].max())
    fmt = _fmt_log
    rows = f" in {int(flagged.sum())} of {lw.size} rows" if lw.size > 1 else ""
    warnings.warn(
        f"{what}: the unbiased estimate puts weights of magnitude up to {fmt(worst)} on the candidate "
        f"values{rows}, {fmt(worst - base)} times the weight 1 + 2c = {1 + 2 * c:.4g} of an isolated "
        f"report (many reports tied within 1 of the order statistic). The estimate's error is of the "
        f"order of that weight: treat it as unusable. Ties cost a factor up to 1 + 2c each; see "
        f"order_statistic_variance for an unbiased variance estimate.",
        HighVarianceWarning,
        stacklevel=3,
    )


def _shape_out(values: NDArray[np.float64], batch: tuple[int, ...]) -> NDArray[np.float64]:
    return np.asarray(values, dtype=np.float64).reshape(batch)


# ---------------------------------------------------------------------------------------------
# public API


def maximum(
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
    *,
    warn_above: float | None = HIGH_VARIANCE_THRESHOLD,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of max_i x_i from DLap reports y (over the last axis), in O(n).

    Parameters
    ----------
    y : array_like of int, shape (..., n)
        Noisy integer reports, n >= 1 per row.
    epsilon : float
        Privacy parameter of the reports. Must be in (0, inf).
    sensitivity : float, default 1
        Sensitivity the reports were released with. Must be in (0, inf).
    warn_above : float or None, default 1e3
        Emit :class:`HighVarianceWarning` when the largest weight magnitude exceeds
        ``warn_above * (1 + 2c)`` (1 + 2c: the weight of an isolated report); None: never.

    Returns
    -------
    ndarray of float64, shape (...)
        The estimate per row; +-inf (nan if even the sign is lost) beyond the float range.

    Raises
    ------
    TypeError
        Reports that are not integers (booleans, strings, complex), non-real epsilon.
    ValueError
        Non-integral or non-finite reports, y with no axis or an empty last axis, epsilon or
        sensitivity not finite and > 0, warn_above not > 0.

    Warns
    -----
    HighVarianceWarning
        When a weight exceeds ``warn_above * (1 + 2c)`` (the estimate is then unusable), and
        always when a value had to be returned as nan.

    Notes
    -----
    With M = max y, a = #{i: y_i = M}, b = #{i: y_i = M - 1}, c = p / (1-p)^2:

    .. math:: g(y) = M + 1 - (1+c)^a - (-c)^a (1+c)^b .

    Unbiasedness: max(x) = sum_t t (F(t) - F(t-1)) with F(t) = prod_i 1[x_i <= t]; the
    operator factorizes over coordinates, giving prod_i A_i(t) with A_i(t) = 1 for
    t >= y_i + 1, 1 + c for t = y_i, -c for t = y_i - 1, 0 below; only t = M-1, M are
    non-trivial. Exactly max(y) when the top report is unique and no report equals M - 1.

    Examples
    --------
    >>> maximum([3, 7, 1], epsilon=1.0)
    array(7.)
    >>> maximum([[3, 7, 1], [5, 5, 0]], epsilon=2.0)
    array([7.        , 4.57243601])
    """
    thr = _check_warn_above(warn_above)
    yy, c = _prepare(y, epsilon, sensitivity)
    m, offset, _, lw, bad = _maximum_parts(yy, c)
    _warn(lw, bad, thr, "maximum", c)
    return _shape_out(m + offset.reshape(m.shape), yy.shape[:-1])


def minimum(
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
    *,
    warn_above: float | None = HIGH_VARIANCE_THRESHOLD,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of min_i x_i from DLap reports y (over the last axis), in O(n).

    Parameters and errors as in :func:`maximum`.

    Notes
    -----
    min(x) = -max(-x), and the noise law and the operator are symmetric, so with
    M' = min y, a = #{y_i = M'}, b = #{y_i = M' + 1}:

    .. math:: g(y) = M' - 1 + (1+c)^a + (-c)^a (1+c)^b .

    Examples
    --------
    >>> minimum([3, 7, 1], epsilon=1.0)
    array(1.)
    """
    thr = _check_warn_above(warn_above)
    yy, c = _prepare(y, epsilon, sensitivity)
    m, offset, _, lw, bad = _maximum_parts(-yy, c)
    _warn(lw, bad, thr, "minimum", c)
    return _shape_out(-(m + offset.reshape(m.shape)), yy.shape[:-1])


def order_statistic(
    y: ArrayLike,
    k: int,
    epsilon: float,
    sensitivity: float = 1,
    *,
    warn_above: float | None = HIGH_VARIANCE_THRESHOLD,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the k-th smallest true value x_(k) (0-based, over the last axis).

    Parameters
    ----------
    y : array_like of int, shape (..., n)
        Noisy integer reports, n >= 1 per row.
    k : int
        Which order statistic, as in ``numpy.partition``: 0 is the minimum, n-1 the maximum;
        negative k counts from the end (-1 is the maximum). Must be in [-n, n-1].
    epsilon, sensitivity, warn_above
        As in :func:`maximum`.

    Returns
    -------
    ndarray of float64, shape (...)

    Raises
    ------
    TypeError, ValueError
        As in :func:`maximum`; ``TypeError`` for a non-integer k, ``ValueError`` for k outside
        [-n, n-1].

    Warns
    -----
    HighVarianceWarning
        As in :func:`maximum`.

    Notes
    -----
    With s the k-th smallest report (``numpy.partition``):

    .. math:: g(y) = s + H_1 - G_0,\qquad H_1 = 1 - G(s),\ G_0 = G(s-1),

    where G(t) is the operator applied to 1[#{i: x_i <= t} >= k+1]. Only reports at s-1, s, s+1
    enter H_1 and G_0, through the alternating-sign distribution of a difference of two
    binomials with parameter b = c / (1+2c) (see the module docstring for the derivation and
    the error analysis). Cost: O(n) per row plus a convolution of the tie counts
    n_j = #{y_i = j} at s-1, s, s+1 (direct or FFT, whichever is cheaper: O(n log n) at most).
    Exactly s when s is unique and no report equals s +- 1.

    Examples
    --------
    >>> order_statistic([9, 2, 5, 14], 1, epsilon=1.0)
    array(5.)
    >>> bool(np.isclose(order_statistic([4, 4, 8], -1, epsilon=1.0), maximum([4, 4, 8], 1.0)))
    True
    """
    thr = _check_warn_above(warn_above)
    yy, c = _prepare(y, epsilon, sensitivity)
    kk = _check_k(k, yy.shape[-1])
    s, offset, _, lw, bad = _order_statistic_parts(yy, kk, c)
    _warn(lw, bad, thr, "order_statistic", c)
    return _shape_out(s + offset.reshape(s.shape), yy.shape[:-1])


def order_statistic_variance(
    y: ArrayLike,
    k: int,
    epsilon: float,
    sensitivity: float = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the variance of :func:`order_statistic` (same k), per row.

    Notes
    -----
    For f = x_(k), T[f^2](y) = s^2 + 2 s (H_1 - G_0) + H_1 + G_0, hence

    .. math:: \widehat V = g^2 - T[f^2](y) = (H_1 - G_0)^2 - (H_1 + G_0),

    unbiased for Var g since E g^2 = Var g + f(x)^2 and E T[f^2] = f(x)^2. A single value can
    be negative. For one report (n = 1) it is 2c = Var(eta), as it must be.

    Examples
    --------
    >>> round(float(order_statistic_variance([5], 0, epsilon=1.0)), 6)  # 2p/(1-p)^2, p = e^-1
    1.841347
    """
    yy, c = _prepare(y, epsilon, sensitivity)
    kk = _check_k(k, yy.shape[-1])
    _, _, var, lw, bad = _order_statistic_parts(yy, kk, c)
    _warn(lw, bad, math.inf, "order_statistic_variance", c)
    return _shape_out(var, yy.shape[:-1])


def median(
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
    *,
    warn_above: float | None = HIGH_VARIANCE_THRESHOLD,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the median of the true values (over the last axis).

    The median is ``numpy.median``'s: the middle order statistic for odd n, the mean of the two
    middle ones for even n (the operator is linear, so the mean of the two unbiased order
    statistic estimates is unbiased for it). Parameters as in :func:`maximum`.

    Notes
    -----
    .. math:: \widehat{\mathrm{med}} = \tfrac12\big(g_{\lfloor (n-1)/2\rfloor}(y)
              + g_{\lceil (n-1)/2\rceil}(y)\big),

    with g_k = :func:`order_statistic`. For even n the two estimates can be huge and of opposite
    signs (tied middle reports at small epsilon); their mean is then accurate to ~1e-16 times the
    larger of the two, not to the median's own size.

    Examples
    --------
    >>> median([10, 1, 4, 7], epsilon=1.0)
    array(5.5)
    """
    thr = _check_warn_above(warn_above)
    yy, c = _prepare(y, epsilon, sensitivity)
    n = yy.shape[-1]
    lo, hi = (n - 1) // 2, n // 2
    s_lo, off_lo, _, lw, bad = _order_statistic_parts(yy, lo, c)
    est = s_lo + off_lo.reshape(s_lo.shape)
    if hi != lo:
        s_hi, off_hi, _, lw_hi, bad_hi = _order_statistic_parts(yy, hi, c)
        with np.errstate(invalid="ignore"):  # inf + -inf: both halves overflow, sign unknown -> nan
            est = 0.5 * (est + (s_hi + off_hi.reshape(s_hi.shape)))
        lw, bad = np.maximum(lw, lw_hi), bad | bad_hi
    _warn(lw, bad, thr, "median", c)
    return _shape_out(est, yy.shape[:-1])


def maximum_of_top_counts(m: int, a: int, b: int, c: float) -> tuple[float, float]:
    """(estimate, variance) of the maximum from the top of a report histogram: ``a`` reports at
    ``m`` and ``b`` at ``m - 1`` (the maximum estimator depends on the reports only through these),
    DLap parameter ``c``; the closed form of :func:`maximum` in O(1) for any number of ties.

    >>> import numpy as np
    >>> from ldpgraph._validation import dlap_c
    >>> c = dlap_c(1.0, 1.0)
    >>> est, var = maximum_of_top_counts(5, 2, 1, c)
    >>> bool(np.isclose(est, maximum(np.array([4, 5, 5]), 1.0)))
    True
    """
    af, bf = float(a), float(b)
    l1c = math.log1p(c)
    lc = math.log(c) if c > 0 else -math.inf
    z = af * l1c
    h1 = -math.expm1(z) if z < _LOG_SAFE else -math.inf
    lh1 = z + math.log(-math.expm1(-z))
    lg0 = af * lc + bf * l1c
    if af * lc > -_LOG_SAFE and bf * l1c < _LOG_SAFE and lg0 < _LOG_SAFE:
        g0 = (-c) ** a * (1.0 + c) ** b
    else:
        g0 = (-1.0 if a % 2 else 1.0) * (math.exp(lg0) if lg0 < _LOG_SAFE else math.inf)
    offset, var, lw = _finish(h1, lh1, g0, lg0)
    _warn(lw, np.zeros(1, dtype=bool), HIGH_VARIANCE_THRESHOLD, "maximum", c)
    return float(m + offset[0]), float(var[0])
