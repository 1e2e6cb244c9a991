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
import math
from collections.abc import Callable, Sequence
from typing import Any

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
    "AXIS_NOISES",
    "Smooth",
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


def _cube_weights(n: int, c: float | NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """All xi in {-1,0,1}^n (shape (3^n, n)) and their weights prod_j alpha^{(j)}_{xi_j}.

    ``c`` is one stencil constant for every axis or an array of n constants, one per axis.
    """
    base = np.array([-1, 0, 1], dtype=np.int64)
    xi = np.array(list(itertools.product(base, repeat=n)), dtype=np.int64).reshape(-1, n)
    alpha = np.where(xi == 0, 1.0 + 2.0 * c, -c)
    return xi, np.prod(alpha, axis=1)


#: Accepted per-axis noise kinds of :func:`debias_nd`.
AXIS_NOISES = ("dlap", "laplace")


class Smooth:
    r"""A function of n real coordinates given together with its partial derivatives.

    Laplace axes of :func:`debias_nd` need second partial derivatives of f (the continuous
    rule g = f - b^2 f''), and its variance estimate first ones as well; a plain callable
    carries no derivatives, so f is wrapped in this class.

    Parameters
    ----------
    derivative : callable
        ``derivative(z, order)`` returns the partial derivative of f of multi-order ``order``
        (a tuple of n non-negative ints, ``order[j]`` derivatives along axis j) at the points
        ``z`` (float64 array of shape (..., n)), as an array of shape (...). ``order`` is
        all zeros for f itself. On Laplace axes the orders asked for are 0, 1 and 2 (and
        never more); DLap axes always get order 0 (they are differenced, not differentiated).

    Notes
    -----
    f must be twice continuously differentiable along every Laplace axis and of tempered
    growth there (below :math:`e^{|y_j|/b_j}`, b_j = sensitivity_j / epsilon_j), so that the
    integrals by parts behind the Laplace rule hold. The class does not check smoothness:
    derivatives that are wrong make the estimate biased.

    Examples
    --------
    f(z) = z_0^2 z_1 with its derivatives:

    >>> def d(z, order):
    ...     a, b = order
    ...     fa = [z[..., 0] ** 2, 2 * z[..., 0], 2 + 0 * z[..., 0]][a] if a <= 2 else 0 * z[..., 0]
    ...     fb = [z[..., 1], 1 + 0 * z[..., 1]][b] if b <= 1 else 0 * z[..., 1]
    ...     return fa * fb
    >>> f = Smooth(d)
    >>> float(f(np.array([3.0, 2.0])))
    18.0
    """

    __slots__ = ("derivative",)

    def __init__(self, derivative: Callable[[NDArray[np.float64], tuple[int, ...]], ArrayLike]) -> None:
        if not callable(derivative):
            raise TypeError(f"derivative must be callable, got {type(derivative).__name__}")
        self.derivative = derivative

    def __call__(self, z: NDArray[Any]) -> NDArray[np.float64]:
        z = np.asarray(z)
        return np.asarray(self.derivative(z, (0,) * z.shape[-1]), dtype=np.float64)

    def __repr__(self) -> str:
        return f"Smooth({self.derivative!r})"


def _smooth_square(f: Smooth) -> Smooth:
    """f^2 as a Smooth, its derivatives by the Leibniz rule."""

    def derivative(z: NDArray[np.float64], order: tuple[int, ...]) -> NDArray[np.float64]:
        total = None
        for beta in itertools.product(*(range(a + 1) for a in order)):
            rest = tuple(a - b for a, b in zip(order, beta, strict=True))
            coef = math.prod(math.comb(a, b) for a, b in zip(order, beta, strict=True))
            left = _apply(lambda u, o=beta: f.derivative(u, o), z, z.shape[:-1])
            right = _apply(lambda u, o=rest: f.derivative(u, o), z, z.shape[:-1])
            term = coef * left * right
            total = term if total is None else total + term
        return total

    return Smooth(derivative)


def _per_axis(value: Any, n: int, name: str) -> list[Any]:
    """A scalar broadcast to n axes, or a sequence of exactly n per-axis values."""
    if isinstance(value, (str, bytes)) or np.ndim(value) == 0:
        return [value] * n
    vals = list(np.asarray(value, dtype=object).ravel()) if np.ndim(value) == 1 else None
    if vals is None:
        raise ValueError(
            f"{name} must be a scalar or a sequence of one value per axis, got shape {np.shape(value)}"
        )
    if len(vals) != n:
        raise ValueError(
            f"{name} must give one value per axis: y has n = {n} axes, got {len(vals)} values {value!r}"
        )
    return vals


def _axis_noise(
    epsilon: Any, sensitivity: Any, noise: Any, n: int
) -> tuple[tuple[str, ...], NDArray[np.float64]]:
    """Per-axis noise kinds and scales (c_j for DLap axes, b_j^2 for Laplace axes), validated."""
    eps = _per_axis(epsilon, n, "epsilon")
    sens = _per_axis(sensitivity, n, "sensitivity")
    kinds = _per_axis(noise, n, "noise")
    out_kinds, scales = [], np.empty(n, dtype=np.float64)
    for j in range(n):
        e = check_epsilon(eps[j], "epsilon" + ("" if np.ndim(epsilon) == 0 else f"[{j}]"))
        d = check_sensitivity(sens[j], "sensitivity" + ("" if np.ndim(sensitivity) == 0 else f"[{j}]"))
        kind = kinds[j]
        kname = "noise" + ("" if isinstance(noise, str) else f"[{j}]")
        if not isinstance(kind, str):
            raise TypeError(
                f"{kname} must be a string, one of {AXIS_NOISES}, got {type(kind).__name__} {kind!r}"
            )
        if kind not in AXIS_NOISES:
            raise ValueError(f"{kname} must be one of {AXIS_NOISES}, got {kind!r}")
        out_kinds.append(kind)
        scales[j] = dlap_c(e, d) if kind == "dlap" else (d / e) ** 2
    return tuple(out_kinds), scales


def _check_cube_size(n: int, evaluations: int) -> None:
    if evaluations > MAX_BRUTE_FORCE_EVALUATIONS:
        raise ValueError(
            f"debias_nd evaluates f at 3^n points; n = {n} gives 3^{n} = {3**n:.3g} > "
            f"{MAX_BRUTE_FORCE_EVALUATIONS:.3g}. Use a fast form for structured f "
            "(ldpgraph.estimators: binomial, monomial, sum_of_products, minimum, maximum, "
            "order_statistic, entropy, kl_divergence, decision_tree, profile) or a separable "
            "sum of debias() terms."
        )


def _mixed_reports(y: ArrayLike, kinds: tuple[str, ...]) -> NDArray[np.float64]:
    """Real reports whose DLap columns hold integers (named by position if not)."""
    yy = check_real_reports(y, min_ndim=1)
    for j, kind in enumerate(kinds):
        if kind == "dlap":
            col = yy[..., j]
            bad = col != np.round(col)
            if bad.any():
                idx = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), bad.shape)
                pos = ", ".join(str(int(i)) for i in (*idx, j))
                raise ValueError(
                    f"y[{pos}] = {yy[(*idx, j)].item()!r} is not an integer; axis {j} is a discrete "
                    "Laplace axis (noise='dlap') and its reports are integers"
                )
            if col.size and float(np.abs(col).max()) > 2.0**53:
                raise ValueError(f"y[..., {j}] is too large; reports must have magnitude <= 2**53")
    return yy


def _debias_mixed(
    f: Smooth, rows: NDArray[np.float64], kinds: tuple[str, ...], scales: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Formula (2) on the DLap axes times prod_{j Laplace} (1 - b_j^2 d^2/dy_j^2), rows (k, n)."""
    n = rows.shape[1]
    dl = [j for j in range(n) if kinds[j] == "dlap"]
    la = [j for j in range(n) if kinds[j] == "laplace"]
    xi, w = _cube_weights(len(dl), scales[dl]) if dl else (np.zeros((1, 0), dtype=np.int64), np.ones(1))
    out = np.zeros(rows.shape[0], dtype=np.float64)
    comp = np.zeros_like(out)
    for subset in itertools.product((0, 1), repeat=len(la)):
        order = [0] * n
        factor = 1.0
        for j, s_j in zip(la, subset, strict=True):
            if s_j:
                order[j] = 2
                factor *= -scales[j]
        order_t = tuple(order)
        for xs, ws in zip(xi, w, strict=True):
            pts = rows.copy()
            pts[:, dl] += xs
            part = factor * ws * _apply(lambda u, o=order_t: f.derivative(u, o), pts, pts.shape[:-1])
            t = out + (part - comp)
            comp = (t - out) - (part - comp)
            out = t
    return out


def debias_nd(
    f: Callable[[NDArray[np.int64]], ArrayLike] | Smooth,
    y: ArrayLike,
    epsilon: float | Sequence[float],
    sensitivity: float | Sequence[float] = 1,
    *,
    noise: str | Sequence[str] = "dlap",
) -> NDArray[np.float64]:
    r"""Unbiased estimate of f(x) for a function of n noisy numbers (brute force, 3^n points).

    Parameters
    ----------
    f : callable or Smooth
        Maps arrays of shape (..., n) to shape (...) (a function of the last axis): int64
        points when every axis is DLap, float64 points otherwise. Where an axis has
        ``noise="laplace"``, f must be a :class:`Smooth` (f with its partial derivatives).
    y : array_like, shape (..., n)
        Each row holds n reports with independent noise: integers on DLap axes, real
        numbers on Laplace axes.
    epsilon, sensitivity : float or sequence of n floats
        Privacy parameter and sensitivity of the reports, one value for every axis or one
        per axis (the last axis of ``y``). Each must be in (0, inf).
    noise : {"dlap", "laplace"} or sequence of n of them, default "dlap"
        Noise of each axis: discrete Laplace, p_j = exp(-epsilon_j / sensitivity_j), or
        continuous Laplace, b_j = sensitivity_j / epsilon_j.

    Returns
    -------
    ndarray of float64, shape (...)

    Notes
    -----
    Formula (2) with one stencil constant per axis: on DLap axes
    :math:`c_j = p_j/(1-p_j)^2`, and

    .. math:: g(y) = \sum_{\xi\in\{-1,0,1\}^n} f(y+\xi)\prod_j\alpha^{(j)}_{\xi_j},\qquad
              \alpha^{(j)}_0 = 1 + 2c_j,\ \alpha^{(j)}_{\pm 1} = -c_j,

    the 1-D operator of axis j applied along axis j. On a Laplace axis the 1-D operator is
    :math:`1 - b_j^2\,\partial_j^2` (there is no lattice to difference on), so with D the
    DLap axes and L the Laplace axes

    .. math:: g(y) = \sum_{\xi\in\{-1,0,1\}^D}\prod_{j\in D}\alpha^{(j)}_{\xi_j}
              \sum_{S\subseteq L}\prod_{j\in S}(-b_j^2)\;
              \partial_S^2 f(y + \xi),\qquad \partial_S^2 = \prod_{j\in S}\partial_j^2 .

    Unbiasedness: the noises are independent, so E[g(y)] is an iterated expectation, one
    axis at a time; along a DLap axis the stencil inverts the DLap law (generating function
    (1-p)^2/((1-pz)(1-p/z))), along a Laplace axis 1 - b^2 d^2/dy^2 inverts the Laplace law
    (characteristic function 1/(1 + b^2 t^2)), and the operators of different axes commute.
    Requires E|f(y)| < inf and, on Laplace axes, f twice differentiable with tempered growth.

    The weights are large and alternate in sign; for n beyond a handful prefer the fast forms
    (``ldpgraph.estimators.binomial``, ``minimum``, ``entropy``, ...) and for sums over many
    rows :func:`ldpgraph.estimators.nodewise_sum`. The 3^n points are evaluated in
    memory-bounded chunks; more than ``MAX_BRUTE_FORCE_EVALUATIONS`` points per row is refused.

    Examples
    --------
    >>> float(debias_nd(lambda z: z[..., 0] * z[..., 1], [3, 4], epsilon=1.0))
    12.0

    One epsilon per axis; C(y_0, 2) y_1 maps to (C(y_0, 2) - c_0) y_1:

    >>> c0 = 1 / (4 * np.sinh(0.25) ** 2)
    >>> g = debias_nd(lambda z: z[..., 0] * (z[..., 0] - 1) / 2 * z[..., 1], [5, 2], [0.5, 2.0])
    >>> bool(np.isclose(g, (10 - c0) * 2))
    True
    """
    if isinstance(noise, str) and noise == "dlap" and np.ndim(epsilon) == 0 and np.ndim(sensitivity) == 0:
        return _debias_nd_homogeneous(f, y, epsilon, sensitivity)
    yy0 = np.asarray(y) if not isinstance(y, np.ndarray) else y
    if np.ndim(yy0) < 1:
        raise ValueError(f"y must have at least 1 dimension(s), got shape {np.shape(yy0)}")
    n = np.shape(yy0)[-1]
    check_nonnegative_int(n, "y.shape[-1]", minimum=1)
    kinds, scales = _axis_noise(epsilon, sensitivity, noise, n)
    if "laplace" not in kinds:
        return _debias_nd_lattice(f, check_integer_reports(y, min_ndim=1), scales)
    if not isinstance(f, Smooth):
        lap = [j for j in range(n) if kinds[j] == "laplace"]
        raise TypeError(
            f"f must be an ldpgraph.estimators.Smooth (f with its partial derivatives) when an axis "
            f"has noise='laplace' (axes {lap}): the Laplace rule g = f - b^2 f'' needs the second "
            f"partial derivatives of f, got {type(f).__name__}"
        )
    n_lap = kinds.count("laplace")
    _check_cube_size(n, 3 ** (n - n_lap) * 2**n_lap)
    yy = _mixed_reports(y, kinds)
    batch = yy.shape[:-1]
    rows = yy.reshape(-1, n)
    return _debias_mixed(f, rows, kinds, scales).reshape(batch)


def _debias_nd_homogeneous(f, y, epsilon, sensitivity) -> NDArray[np.float64]:
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = check_integer_reports(y, min_ndim=1)
    n = yy.shape[-1]
    check_nonnegative_int(n, "y.shape[-1]", minimum=1)
    return _debias_nd_lattice(f, yy, dlap_c(eps, delta))


def _debias_nd_lattice(f, yy: NDArray[np.int64], c: float | NDArray[np.float64]) -> NDArray[np.float64]:
    """Formula (2) on int64 rows, c one constant or one per axis."""
    n = yy.shape[-1]
    _check_cube_size(n, 3**n)
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
    f: Callable[[NDArray[np.int64]], ArrayLike] | Smooth,
    y: ArrayLike,
    epsilon: float | Sequence[float],
    sensitivity: float | Sequence[float] = 1,
    *,
    noise: str | Sequence[str] = "dlap",
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the variance of :func:`debias_nd` (f): g(y)^2 - T[f^2](y).

    Same parameters as :func:`debias_nd` (per-axis epsilon, sensitivity and noise).

    Notes
    -----
    E[g^2] = Var g + f(x)^2 and E[T[f^2](y)] = f(x)^2. On Laplace axes T[f^2] needs the
    derivatives of f^2, taken from those of f by the Leibniz rule
    (:math:`\partial_j^2 f^2 = 2(\partial_j f)^2 + 2 f\,\partial_j^2 f`, and products of
    such across axes).

    Examples
    --------
    Var of y_0 y_1 with y_j = x_j + DLap: x_0^2 V_1 + x_1^2 V_0 + V_0 V_1, V_j = 2 c_j:

    >>> v = debias_nd_variance(lambda z: (z[..., 0] * z[..., 1]).astype(float), [3, 4], [1.0, 2.0])
    >>> v.shape
    ()
    """
    g = debias_nd(f, y, epsilon, sensitivity, noise=noise)
    if isinstance(f, Smooth):
        f2: Callable | Smooth = _smooth_square(f)
    else:
        f2 = lambda z: np.asarray(f(z), dtype=np.float64) ** 2  # noqa: E731
    return g * g - debias_nd(f2, y, epsilon, sensitivity, noise=noise)


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
