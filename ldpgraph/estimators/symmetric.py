r"""Unbiased estimators of symmetric polynomials of n noisy reports, in O(n) (last axis).

Reports y_i = x_i + eta_i with independent, zero-mean, symmetric noise (DLap or Laplace,
see :mod:`ldpgraph.estimators.polynomials`); write sigma^2 = E eta^2 (2c for DLap, 2b^2 for
Laplace) and mu_4 = E eta^4 (2c + 24c^2, 24b^4).

**Multilinear polynomials need no correction.** The elementary symmetric polynomial
e_r(x) = sum_{i_1<...<i_r} x_{i_1}...x_{i_r} has degree at most one in every coordinate, and
E[y_{i_1} ... y_{i_r}] = x_{i_1} ... x_{i_r} for distinct indices (independent noises of mean
zero). So e_r(y) itself is unbiased — and, being a function of y, it is the unique unbiased
estimator: the n-D operator T maps every multilinear polynomial to itself (T is 1 - c delta^2
along each axis, and delta^2 kills polynomials of degree <= 1). Note that Newton's identities
applied to *debiased* power sums do not give this: they multiply estimates of power sums that
share coordinates, and products of dependent estimates are biased. Newton's identities on the
raw reports' power sums are unbiased, but cancel badly in floating point; here e_r(y) is
computed by a product tree of truncated polynomials prod_i (1 + y_i t), which does not.

Non-multilinear ones, such as (sum_i x_i)^2 = sum_i x_i^2 + 2 e_2(x) or the sample variance,
need the correction of their squares only: x_i^2 -> y_i^2 - sigma^2.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_nonnegative_int
from .polynomials import Noise, _NoiseModel, _reports, noise_model

__all__ = [
    "elementary_symmetric",
    "sum_of_products",
    "square_of_sum",
    "sample_variance",
    "elementary_symmetric_variance",
    "sum_of_products_variance",
    "square_of_sum_variance",
    "sample_variance_variance",
    "elementary_symmetric_variance_estimate",
    "sum_of_products_variance_estimate",
    "square_of_sum_variance_estimate",
    "sample_variance_variance_estimate",
    "sample_variance_constant",
]

# Largest number of float64 values a product-tree level may hold at once (~32 MB).
_TREE_BUDGET = 4_000_000


# --------------------------------------------------------------------------------------------
# product trees of truncated polynomials
# --------------------------------------------------------------------------------------------


def _mul1(A: NDArray[np.float64], B: NDArray[np.float64], r: int) -> NDArray[np.float64]:
    """Product of polynomials (coefficients on the last axis) truncated to degree r."""
    C = A[..., 0:1] * B
    for i in range(1, r + 1):
        C[..., i:] += A[..., i : i + 1] * B[..., : r + 1 - i]
    return C


def _mul2(A: NDArray[np.float64], B: NDArray[np.float64], r: int) -> NDArray[np.float64]:
    """Product of bivariate polynomials (last two axes: s- and t-degree) truncated to (r, r)."""
    C = np.zeros(np.broadcast_shapes(A.shape, B.shape))
    for i in range(r + 1):
        for j in range(r + 1):
            C[..., i:, j:] += A[..., i : i + 1, j : j + 1] * B[..., : r + 1 - i, : r + 1 - j]
    return C


def _blocks(n: int, batch: int, width: int) -> list[tuple[int, int]]:
    size = max(1, _TREE_BUDGET // max(1, batch * width))
    return [(s, min(n, s + size)) for s in range(0, n, size)] or [(0, 0)]


def _esym_all(v: NDArray[np.float64], r: int) -> NDArray[np.float64]:
    """e_0(v), ..., e_r(v) over the last axis: coefficients of prod_i (1 + v_i t) mod t^{r+1}."""
    batch = v.shape[:-1]
    total = np.zeros(batch + (r + 1,))
    total[..., 0] = 1.0
    n = v.shape[-1]
    for s, e in _blocks(n, int(np.prod(batch, dtype=np.int64)), r + 1):
        if e == s:
            continue
        E = np.zeros(v.shape[:-1] + (e - s, r + 1))
        E[..., 0] = 1.0
        if r >= 1:
            E[..., 1] = v[..., s:e]
        while E.shape[-2] > 1:
            if E.shape[-2] % 2:
                pad = np.zeros(E.shape[:-2] + (1, r + 1))
                pad[..., 0] = 1.0
                E = np.concatenate([E, pad], axis=-2)
            E = _mul1(E[..., 0::2, :], E[..., 1::2, :], r)
        total = _mul1(total, E[..., 0, :], r)
    return total


def _esym_excess(v: NDArray[np.float64], r: int, s2: float) -> NDArray[np.float64]:
    r"""[s^r t^r] of prod_i (B_i + s2 st) - prod_i B_i, B_i = (1 + v_i s)(1 + v_i t).

    Tracked as a pair (P0, P1) = (product of the B_i, everything else), merged by
    P0 <- A0 B0, P1 <- A0 B1 + A1 (B0 + B1): no subtraction of the two products.
    Closed forms for r <= 2: n s2 and s2 sum_i (S - v_i)^2 + s2^2 n(n-1)/2.
    """
    batch = v.shape[:-1]
    n = v.shape[-1]
    if r == 1:
        return np.full(batch, n * s2)
    if r == 2:
        others = v.sum(axis=-1, keepdims=True) - v
        return s2 * np.einsum("...i,...i->...", others, others) + s2 * s2 * (n * (n - 1) / 2)
    w = r + 1
    T0 = np.zeros(batch + (w, w))
    T0[..., 0, 0] = 1.0
    T1 = np.zeros(batch + (w, w))
    for s, e in _blocks(n, int(np.prod(batch, dtype=np.int64)), 2 * w * w):
        if e == s:
            continue
        vb = v[..., s:e]
        P0 = np.zeros(vb.shape + (w, w))
        P0[..., 0, 0] = 1.0
        P1 = np.zeros(vb.shape + (w, w))
        if r >= 1:
            P0[..., 1, 0] = vb
            P0[..., 0, 1] = vb
            P0[..., 1, 1] = vb * vb
            P1[..., 1, 1] = s2
        while P0.shape[-3] > 1:
            if P0.shape[-3] % 2:
                one = np.zeros(P0.shape[:-3] + (1, w, w))
                one[..., 0, 0] = 1.0
                P0 = np.concatenate([P0, one], axis=-3)
                P1 = np.concatenate([P1, np.zeros_like(one)], axis=-3)
            A0, B0 = P0[..., 0::2, :, :], P0[..., 1::2, :, :]
            A1, B1 = P1[..., 0::2, :, :], P1[..., 1::2, :, :]
            P0, P1 = _mul2(A0, B0, r), _mul2(A0, B1, r) + _mul2(A1, B0 + B1, r)
        Q0, Q1 = P0[..., 0, :, :], P1[..., 0, :, :]
        T0, T1 = _mul2(T0, Q0, r), _mul2(T0, Q1, r) + _mul2(T1, Q0 + Q1, r)
    return T1[..., r, r]


# --------------------------------------------------------------------------------------------
# shared pieces
# --------------------------------------------------------------------------------------------


def _setup(
    y: ArrayLike, epsilon: float, sensitivity: float, noise: Any, name: str = "y"
) -> tuple[NDArray[np.float64], _NoiseModel]:
    nz = noise_model(epsilon, sensitivity, noise)
    yy = _reports(y, nz.kind, name=name, min_ndim=1)
    return np.asarray(yy, dtype=np.float64), nz


def _check_r(r: Any) -> int:
    return check_nonnegative_int(r, "r")


def _check_ddof(ddof: Any, n: int) -> int:
    d = check_nonnegative_int(ddof, "ddof")
    if n - d < 1:
        raise ValueError(f"ddof must be < n = y.shape[-1] = {n}, got ddof = {d}")
    return d


def _centered_ss(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """sum_i (v_i - mean v)^2 over the last axis, two-pass."""
    dev = v - v.mean(axis=-1, keepdims=True)
    return np.einsum("...i,...i->...", dev, dev)


def sample_variance_constant(n: int, nz: _NoiseModel) -> float:
    """Var(eta^T M eta), M = I - J/n: (mu4 - 3 sigma^4)(n-1)^2/n + 2 sigma^4 (n-1)."""
    s2 = nz.variance
    return (nz.fourth_moment - 3.0 * s2 * s2) * (n - 1) ** 2 / n + 2.0 * s2 * s2 * (n - 1)


# --------------------------------------------------------------------------------------------
# public: estimators
# --------------------------------------------------------------------------------------------


def elementary_symmetric(
    y: ArrayLike, r: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the elementary symmetric polynomial e_r(x) over the last axis.

    Parameters
    ----------
    y : array_like, shape (..., n)
        Each row holds n reports with independent noise (integers for ``noise="dlap"``).
    r : int
        Non-negative order; e_0 = 1 and e_r = 0 for r > n.
    epsilon : float
        Privacy parameter, in (0, inf). Validated only: the estimate does not depend on it.
    sensitivity : float, default 1
        In (0, inf). Validated only.
    noise : {"dlap", "laplace"}, default "dlap"
        Selects how the reports are validated.

    Returns
    -------
    ndarray of float64, shape (...)

    Notes
    -----
    .. math:: \hat e_r = e_r(y) = \sum_{i_1<\dots<i_r} y_{i_1}\cdots y_{i_r}.

    Unbiased because e_r is multilinear and the noises are independent with mean zero:
    :math:`E[\prod_{i\in S} y_i] = \prod_{i\in S} x_i` for every set S of distinct indices; it
    is the unique unbiased estimator because the operator (1 - c delta^2 along each axis)
    fixes every polynomial of degree <= 1 in each coordinate. Computed as the coefficient of
    t^r in prod_i (1 + y_i t), by a pairwise product tree truncated at degree r:
    O(n r^2) operations, no cancellation for non-negative reports (Newton's identities on
    power sums would cancel).

    Examples
    --------
    >>> elementary_symmetric([[1, 2, 3]], 2, epsilon=1.0)  # 1*2 + 1*3 + 2*3
    array([11.])
    """
    rr = _check_r(r)
    yf, _ = _setup(y, epsilon, sensitivity, noise)
    if rr > yf.shape[-1]:  # no r distinct indices: e_r = 0 (and no r+1 coefficients to allocate)
        return np.zeros(yf.shape[:-1])
    return _esym_all(yf, rr)[..., rr]


def sum_of_products(
    y: ArrayLike, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of sum_{i<j} x_i x_j over the last axis (= e_2(x)).

    Notes
    -----
    Multilinear, so e_2(y) is the unique unbiased estimator (see :func:`elementary_symmetric`);
    epsilon and sensitivity are validated only.

    Examples
    --------
    >>> sum_of_products([[1, 2, 3]], epsilon=1.0)
    array([11.])
    """
    return elementary_symmetric(y, 2, epsilon, sensitivity, noise=noise)


def square_of_sum(
    y: ArrayLike, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of (sum_i x_i)^2 over the last axis.

    Parameters
    ----------
    y : array_like, shape (..., n)
        Reports (integers for ``noise="dlap"``).
    epsilon, sensitivity, noise
        As in :func:`ldpgraph.estimators.polynomials.binomial`.

    Returns
    -------
    ndarray of float64, shape (...)

    Notes
    -----
    .. math:: \widehat{S^2} = \Bigl(\sum_i y_i\Bigr)^2 - n\sigma^2,\qquad
              \sigma^2 = 2c\ \text{(DLap)},\ 2b^2\ \text{(Laplace)},

    since :math:`(\sum_i x_i)^2 = \sum_i x_i^2 + 2e_2(x)`, x_i^2 -> y_i^2 - sigma^2 and e_2 is
    multilinear; equivalently E(sum y)^2 = (sum x)^2 + n sigma^2.

    Examples
    --------
    >>> square_of_sum([[1, 2, 3]], epsilon=50.0)
    array([36.])
    >>> square_of_sum([[1.0, 2.0, 3.0]], epsilon=1.0, noise="laplace")  # 36 - 3 * 2
    array([30.])
    """
    yf, nz = _setup(y, epsilon, sensitivity, noise)
    total = yf.sum(axis=-1)
    return total * total - yf.shape[-1] * nz.variance


def sample_variance(
    y: ArrayLike, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap", ddof: int = 0
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the variance statistic of the true values, sum_i (x_i - xbar)^2 / (n - ddof).

    Parameters
    ----------
    y : array_like, shape (..., n)
        Reports (integers for ``noise="dlap"``), e.g. the noisy degrees of a graph.
    epsilon, sensitivity, noise
        As in :func:`ldpgraph.estimators.polynomials.binomial`.
    ddof : int, default 0
        Delta degrees of freedom of the statistic (as ``numpy.var``); must be < n.

    Returns
    -------
    ndarray of float64, shape (...)

    Notes
    -----
    .. math:: \frac{\sum_i (y_i - \bar y)^2 - (n-1)\sigma^2}{n - \mathrm{ddof}},

    because :math:`\sum_i (x_i - \bar x)^2 = \sum_i x_i^2 - (\sum_i x_i)^2/n` and the unbiased
    estimates of the two terms are :math:`\sum_i y_i^2 - n\sigma^2` and
    :math:`((\sum_i y_i)^2 - n\sigma^2)/n`. The centred sum of squares is computed in two passes.

    Examples
    --------
    >>> sample_variance([[1, 2, 3]], epsilon=50.0)  # numpy.var([1, 2, 3])
    array([0.66666667])
    """
    yf, nz = _setup(y, epsilon, sensitivity, noise)
    n = yf.shape[-1]
    d = _check_ddof(ddof, n)
    return (_centered_ss(yf) - (n - 1) * nz.variance) / (n - d)


# --------------------------------------------------------------------------------------------
# public: exact variances
# --------------------------------------------------------------------------------------------


def elementary_symmetric_variance(
    x: ArrayLike, r: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Exact variance of :func:`elementary_symmetric` (y, r) when the true values are x.

    Parameters
    ----------
    x : array_like, shape (..., n)
        True values (integers for DLap).
    r, epsilon, sensitivity, noise
        As in :func:`elementary_symmetric`.

    Returns
    -------
    ndarray of float64, shape (...)

    Notes
    -----
    Expanding :math:`\prod_{i\in S}(x_i + \eta_i)` over subsets U of S, the terms
    :math:`\prod_{i\in U}\eta_i` are orthogonal, so

    .. math:: \operatorname{Var} e_r(y) = \sum_{\emptyset\ne U,\ |U|\le r} \sigma^{2|U|}\,
              e_{r-|U|}(x_{[n]\setminus U})^2
              = [s^r t^r]\Bigl(\prod_i (B_i + \sigma^2 st) - \prod_i B_i\Bigr),

    :math:`B_i = (1 + x_i s)(1 + x_i t)`. Only sigma^2 enters (same form for both noises).
    For r = 1 this is n sigma^2, for r = 2
    :math:`\sigma^2\sum_i (\sum_j x_j - x_i)^2 + \sigma^4\binom{n}{2}`; for r >= 3 it is computed
    by a product tree of bivariate polynomials truncated at degree (r, r), carrying the two
    parts separately (no subtraction): O(n r^4) operations.

    Examples
    --------
    >>> elementary_symmetric_variance([[2.0, 3.0]], 2, epsilon=1.0, noise="laplace")
    array([30.])
    """
    rr = _check_r(r)
    xf, nz = _setup(x, epsilon, sensitivity, noise, name="x")
    if rr == 0 or rr > xf.shape[-1]:  # e_0 = 1 and e_r = 0 (r > n) are constants
        return np.zeros(xf.shape[:-1])
    return _esym_excess(xf, rr, nz.variance)


def elementary_symmetric_variance_estimate(
    y: ArrayLike, r: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of Var[:func:`elementary_symmetric` (y, r)] from the reports.

    Notes
    -----
    :math:`\hat V = e_r(y)^2 - T[e_r^2](y)` with
    :math:`T[e_r^2](y) = [s^r t^r]\prod_i (B_i(y) - \sigma^2 st)` (x_i -> y_i and
    x_i^2 -> y_i^2 - sigma^2 factor by factor), i.e. the excess of
    :func:`elementary_symmetric_variance` evaluated at y with sigma^2 replaced by -sigma^2,
    negated. For r = 2: :math:`\sigma^2\sum_i(\sum_j y_j - y_i)^2 - \sigma^4\binom{n}{2}`.
    Can be negative.

    Examples
    --------
    >>> elementary_symmetric_variance_estimate([[2.0, 3.0]], 2, epsilon=1.0, noise="laplace")
    array([22.])
    """
    rr = _check_r(r)
    yf, nz = _setup(y, epsilon, sensitivity, noise)
    if rr == 0 or rr > yf.shape[-1]:  # e_0 = 1 and e_r = 0 (r > n) are constants
        return np.zeros(yf.shape[:-1])
    return -_esym_excess(yf, rr, -nz.variance)


def sum_of_products_variance(
    x: ArrayLike, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Exact variance of :func:`sum_of_products`: :math:`\sigma^2\sum_i(S - x_i)^2 + \sigma^4\binom n2`.

    Examples
    --------
    >>> sum_of_products_variance([[2.0, 3.0]], epsilon=1.0, noise="laplace")
    array([30.])
    """
    return elementary_symmetric_variance(x, 2, epsilon, sensitivity, noise=noise)


def sum_of_products_variance_estimate(
    y: ArrayLike, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the variance of :func:`sum_of_products` (see
    :func:`elementary_symmetric_variance_estimate`).

    Examples
    --------
    >>> sum_of_products_variance_estimate([[2.0, 3.0]], epsilon=1.0, noise="laplace")
    array([22.])
    """
    return elementary_symmetric_variance_estimate(y, 2, epsilon, sensitivity, noise=noise)


def square_of_sum_variance(
    x: ArrayLike, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Exact variance of :func:`square_of_sum` when the true values are x.

    Notes
    -----
    With S = sum x_i and Z = sum eta_i (E Z^3 = 0, E Z^4 = n mu_4 + 3n(n-1) sigma^4):

    .. math:: \operatorname{Var}\bigl((S+Z)^2\bigr) = 4n\sigma^2 S^2 + n(\mu_4 - \sigma^4)
              + 2n(n-1)\sigma^4.

    Examples
    --------
    >>> square_of_sum_variance([[3.0]], epsilon=1.0, noise="laplace")  # 4*9*2 + 24 - 4
    array([92.])
    """
    xf, nz = _setup(x, epsilon, sensitivity, noise, name="x")
    n = xf.shape[-1]
    S = xf.sum(axis=-1)
    s2 = nz.variance
    return 4.0 * n * s2 * S * S + n * (nz.fourth_moment - s2 * s2) + 2.0 * n * (n - 1) * s2 * s2


def square_of_sum_variance_estimate(
    y: ArrayLike, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the variance of :func:`square_of_sum`.

    Notes
    -----
    :func:`square_of_sum_variance` with S^2 replaced by its unbiased estimate
    :math:`Y^2 - n\sigma^2`, Y = sum y_i (the variance is affine in S^2). Can be negative.

    Examples
    --------
    >>> square_of_sum_variance_estimate([[3.0]], epsilon=1.0, noise="laplace")  # 4*2*(9-2) + 20
    array([76.])
    """
    yf, nz = _setup(y, epsilon, sensitivity, noise)
    n = yf.shape[-1]
    Y = yf.sum(axis=-1)
    s2 = nz.variance
    return 4.0 * n * s2 * (Y * Y - n * s2) + n * (nz.fourth_moment - s2 * s2) + 2.0 * n * (n - 1) * s2 * s2


def sample_variance_variance(
    x: ArrayLike, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap", ddof: int = 0
) -> NDArray[np.float64]:
    r"""Exact variance of :func:`sample_variance` when the true values are x.

    Notes
    -----
    With M = I - J/n (idempotent, M_ii = 1 - 1/n) and Q(x) = x^T M x = sum (x_i - xbar)^2,
    Q(y) = Q(x) + 2 x^T M eta + eta^T M eta; odd noise moments vanish, so

    .. math:: \operatorname{Var} = \frac{4\sigma^2 Q(x) + (\mu_4 - 3\sigma^4)\frac{(n-1)^2}{n}
              + 2\sigma^4 (n-1)}{(n - \mathrm{ddof})^2}.

    Examples
    --------
    >>> sample_variance_variance([[1.0, 3.0]], epsilon=1.0, noise="laplace")  # (16 + 6 + 8)/4
    array([7.5])
    """
    xf, nz = _setup(x, epsilon, sensitivity, noise, name="x")
    n = xf.shape[-1]
    d = _check_ddof(ddof, n)
    return (4.0 * nz.variance * _centered_ss(xf) + sample_variance_constant(n, nz)) / (n - d) ** 2


def sample_variance_variance_estimate(
    y: ArrayLike, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap", ddof: int = 0
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the variance of :func:`sample_variance`.

    Notes
    -----
    :func:`sample_variance_variance` with Q(x) replaced by its unbiased estimate
    :math:`Q(y) - (n-1)\sigma^2`. Can be negative.

    Examples
    --------
    >>> sample_variance_variance_estimate([[1.0, 3.0]], epsilon=1.0, noise="laplace")  # (8*(2-2)+14)/4
    array([3.5])
    """
    yf, nz = _setup(y, epsilon, sensitivity, noise)
    n = yf.shape[-1]
    d = _check_ddof(ddof, n)
    s2 = nz.variance
    q = _centered_ss(yf) - (n - 1) * s2
    return (4.0 * s2 * q + sample_variance_constant(n, nz)) / (n - d) ** 2
