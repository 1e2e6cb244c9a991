r"""The unbiased post-processing operator for discrete Laplace reports, and its Laplace twin.

Let y = x + eta with eta ~ DLap(p), p = exp(-epsilon / sensitivity), c = p / (1-p)^2. For any
f with E|f(y)| < inf,

.. math::

    g(y) = f(y) - c\,(f(y+1) - 2 f(y) + f(y-1))                                   \tag{1}

satisfies E[g(y)] = f(x) exactly; over n independent coordinates the operator is applied
along every axis,

.. math::

    g(y) = \sum_{\xi \in \{-1,0,1\}^n} f(y + \xi) \prod_j \alpha_{\xi_j},\qquad
    \alpha_0 = 1 + 2c,\ \alpha_{\pm 1} = -c.                                          \tag{2}

(2) is the unique unbiased estimator and so, by Rao–Blackwell, of minimum variance.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    check_epsilon,
    check_integer_reports,
    check_nonnegative_int,
    check_real_reports,
    check_sensitivity,
    dlap_c,
)

__all__ = [
    "debias",
    "debias_nd",
    "debias_laplace",
    "debias_variance",
    "debias_nd_variance",
    "debias_laplace_variance",
    "MAX_BRUTE_FORCE_EVALUATIONS",
]

#: Largest number of points 3^n (per row) that :func:`debias_nd` agrees to evaluate.
MAX_BRUTE_FORCE_EVALUATIONS = 3**16

# Evaluate f on at most this many float64 coordinates at once (~64 MB).
_CHUNK_COORDINATES = 8_000_000


def _apply(f: Callable, points: NDArray[np.int64], expected_shape: tuple[int, ...]) -> NDArray:
    out = np.asarray(f(points), dtype=np.float64)
    if out.shape != expected_shape:
        try:
            out = np.broadcast_to(out, expected_shape)
        except ValueError:
            raise ValueError(
                f"f must map an array of shape {points.shape} to shape {expected_shape} "
                f"(vectorized, elementwise for debias / over the last axis for debias_nd), "
                f"got shape {out.shape}"
            ) from None
    return out


def debias(
    f: Callable[[NDArray[np.int64]], ArrayLike],
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of f(x) from each report y = x + DLap(exp(-epsilon/sensitivity)).

    Parameters
    ----------
    f : callable
        Vectorized function on int64 arrays (elementwise), e.g. ``lambda d: d * (d - 1) / 2``.
    y : array_like of int
        Noisy integer reports, any shape.
    epsilon : float
        Privacy parameter of the reports. Must be in (0, inf).
    sensitivity : float, default 1
        Sensitivity the reports were released with. Must be in (0, inf).

    Returns
    -------
    ndarray of float64
        g(y), same shape as ``y``, with E[g(y)] = f(x) elementwise.

    Notes
    -----
    .. math:: g(y) = f(y) - c\,(f(y+1) - 2f(y) + f(y-1)),\qquad c = \frac{p}{(1-p)^2}
              = \frac{1}{4\sinh^2(\epsilon / 2\Delta)}.

    Unbiasedness: the generating function of DLap(p) is (1-p)^2 / ((1-pz)(1-p/z)); its inverse
    is (1 + 2c) - c z - c/z, the stencil above. Requires E|f(y)| < inf (f growing slower than
    p^{-|y|}).

    Examples
    --------
    The operator maps C(y, 2) to C(y, 2) - c (c = 0.92067 at epsilon = 1), and is the
    identity on linear f:

    >>> debias(lambda d: d * (d - 1) / 2, [3, 10], epsilon=1.0)
    array([ 2.07932641, 44.07932641])
    >>> debias(lambda d: 2 * d + 1, [3, 10], epsilon=1.0)
    array([ 7., 21.])
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_integer_reports(y)
    c = dlap_c(eps, delta)
    f0 = _apply(f, yy, yy.shape)
    fp = _apply(f, yy + 1, yy.shape)
    fm = _apply(f, yy - 1, yy.shape)
    return f0 - c * ((fp - f0) + (fm - f0))


def debias_variance(
    f: Callable[[NDArray[np.int64]], ArrayLike],
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of Var[g(y)] for g = :func:`debias` (f), elementwise.

    Notes
    -----
    :math:`\widehat{V}(y) = g(y)^2 - T[f^2](y)`, since E[g(y)^2] = Var g + f(x)^2 and
    E[T[f^2](y)] = f(x)^2. In one dimension it simplifies to
    c[(f(y+1) - f(y))^2 + (f(y) - f(y-1))^2] + c^2 (f(y+1) - 2f(y) + f(y-1))^2, never negative;
    sums over many reports estimate the variance of a sum of independent estimates.

    Examples
    --------
    >>> v = debias_variance(lambda d: d, [5], epsilon=1.0)  # Var of y itself: 2p/(1-p)^2
    >>> bool(abs(v[0] - 2 * 0.36787944 / (1 - 0.36787944) ** 2) < 1e-6)
    True
    """
    g = debias(f, y, epsilon, sensitivity)
    return g * g - debias(lambda z: np.asarray(f(z), dtype=np.float64) ** 2, y, epsilon, sensitivity)


def _cube_weights(n: int, c: float) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """All xi in {-1,0,1}^n (shape (3^n, n)) and their weights prod_j alpha_{xi_j}."""
    base = np.array([-1, 0, 1], dtype=np.int64)
    xi = np.array(list(itertools.product(base, repeat=n)), dtype=np.int64).reshape(-1, n)
    alpha = np.where(xi == 0, 1.0 + 2.0 * c, -c)
    return xi, np.prod(alpha, axis=1)


def debias_nd(
    f: Callable[[NDArray[np.int64]], ArrayLike],
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of f(x) for a function of n noisy integers (brute force, 3^n points).

    Parameters
    ----------
    f : callable
        Maps int64 arrays of shape (..., n) to shape (...) (a function of the last axis).
    y : array_like of int, shape (..., n)
        Each row holds n reports with independent DLap noise.
    epsilon, sensitivity : float
        As in :func:`debias`.

    Returns
    -------
    ndarray of float64, shape (...)

    Notes
    -----
    Formula (2): :math:`g(y) = \sum_{\xi\in\{-1,0,1\}^n} f(y+\xi)\prod_j\alpha_{\xi_j}` with
    alpha_0 = 1 + 2c, alpha_{+-1} = -c, the 1-D operator applied along every coordinate. The
    weights are large and alternate in sign; for n beyond a handful prefer the fast forms
    (``ldpgraph.estimators.binomial``, ``minimum``, ``entropy``, ...). The 3^n points are
    evaluated in memory-bounded chunks; more than ``MAX_BRUTE_FORCE_EVALUATIONS`` points per row
    is refused.

    Examples
    --------
    >>> float(debias_nd(lambda z: z[..., 0] * z[..., 1], [3, 4], epsilon=1.0))
    12.0
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_integer_reports(y, min_ndim=1)
    n = yy.shape[-1]
    check_nonnegative_int(n, "y.shape[-1]", minimum=1)
    if 3**n > MAX_BRUTE_FORCE_EVALUATIONS:
        raise ValueError(
            f"debias_nd evaluates f at 3^n points; n = {n} gives 3^{n} = {3**n:.3g} > "
            f"{MAX_BRUTE_FORCE_EVALUATIONS:.3g}. Use a fast form for structured f "
            "(ldpgraph.estimators: binomial, monomial, sum_of_products, minimum, maximum, "
            "order_statistic, entropy, kl_divergence, decision_tree, profile) or a separable "
            "sum of debias() terms."
        )
    c = dlap_c(eps, delta)
    xi, w = _cube_weights(n, c)
    batch = yy.shape[:-1]
    rows = yy.reshape(-1, n)
    out = np.zeros(rows.shape[0], dtype=np.float64)
    comp = np.zeros_like(out)  # Kahan compensation across chunks
    step = max(1, _CHUNK_COORDINATES // max(1, rows.shape[0] * n))
    for start in range(0, xi.shape[0], step):
        xs, ws = xi[start : start + step], w[start : start + step]
        pts = rows[:, None, :] + xs[None, :, :]
        vals = _apply(f, pts, pts.shape[:-1])
        part = vals @ ws
        t = out + (part - comp)
        comp = (t - out) - (part - comp)
        out = t
    return out.reshape(batch)


def debias_nd_variance(
    f: Callable[[NDArray[np.int64]], ArrayLike],
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
) -> NDArray[np.float64]:
    """Unbiased estimate of the variance of :func:`debias_nd` (f): g(y)^2 - T[f^2](y)."""
    g = debias_nd(f, y, epsilon, sensitivity)
    return g * g - debias_nd(lambda z: np.asarray(f(z), dtype=np.float64) ** 2, y, epsilon, sensitivity)


def debias_laplace(
    f: Callable[[NDArray[np.float64]], ArrayLike],
    f_second_derivative: Callable[[NDArray[np.float64]], ArrayLike],
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1.0,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of f(x) from y = x + Lap(b), b = sensitivity / epsilon.

    Notes
    -----
    .. math:: g(y) = f(y) - b^2 f''(y),

    unbiased for smooth f of at most exponential growth below e^{|y|/b} (Calmon et al. FORC
    2025): the characteristic function of Lap(b) is 1/(1 + b^2 t^2), whose inverse is the
    operator 1 - b^2 d^2/dy^2. For monomials E[L^{2j}] = (2j)! b^{2j}, so y^2 -> y^2 - 2b^2.

    Examples
    --------
    >>> debias_laplace(lambda z: z**2, lambda z: 2 + 0 * z, [3.0], epsilon=1.0)
    array([7.])
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_real_reports(y)
    b = delta / eps
    return _apply(f, yy, yy.shape) - b * b * _apply(f_second_derivative, yy, yy.shape)


def debias_laplace_variance(
    f: Callable[[NDArray[np.float64]], ArrayLike],
    f_first_derivative: Callable[[NDArray[np.float64]], ArrayLike],
    f_second_derivative: Callable[[NDArray[np.float64]], ArrayLike],
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1.0,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the variance of :func:`debias_laplace`.

    Notes
    -----
    :math:`g^2 - (f^2 - b^2 (f^2)'')` with :math:`(f^2)'' = 2 f'^2 + 2 f f''`.

    Examples
    --------
    >>> v = debias_laplace_variance(lambda z: z, lambda z: 1 + 0 * z, lambda z: 0 * z, [4.0], 1.0)
    >>> v  # Var of y = x + Lap(1) is 2
    array([2.])
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_real_reports(y)
    b = delta / eps
    f0 = _apply(f, yy, yy.shape)
    f1 = _apply(f_first_derivative, yy, yy.shape)
    f2 = _apply(f_second_derivative, yy, yy.shape)
    g = f0 - b * b * f2
    return g * g - (f0 * f0 - b * b * (2.0 * f1 * f1 + 2.0 * f0 * f2))
