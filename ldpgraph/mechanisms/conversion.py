r"""Turning discrete Laplace reports into Laplace or staircase reports by post-processing.

A node releases y = x + eta with eta ~ DLap(p). Anyone holding y can add independent noise
Y ~ q to get y + Y with *exactly* the law x + Z, Z ~ f, for a target density f (Laplace or
staircase), whenever q = T f is a probability density, T being the inverse of convolution by
the DLap pmf (DESIGN.md, section 3):

.. math::

    (Tf)(y) = f(y) - c\,\big(f(y+1) - 2f(y) + f(y-1)\big),\qquad c = \frac{p}{(1-p)^2}.

Why: sum_k P[eta = k] (Tf)(z - k) = f(z), because the generating function of DLap(p),
(1-p)^2 / ((1-pz)(1-p/z)), is the reciprocal of the stencil's (1 + 2c) - c(z + 1/z). Since
T f integrates to the integral of f (the stencil weights sum to 1), q is a density as soon
as it is non-negative. The conversion is post-processing: it spends no privacy.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    check_epsilon,
    check_integer_reports,
    check_rng,
    check_sensitivity,
)
from ._common import _real_points
from .laplace import _random_signs
from .staircase import _check_gamma, _gamma_min_abs

__all__ = [
    "laplace_conversion_density",
    "staircase_conversion_density",
    "to_laplace",
    "to_staircase",
]


# ---------------------------------------------------------------------- Laplace
def laplace_conversion_density(
    y: ArrayLike, epsilon: float, *, sensitivity: float = 1.0
) -> NDArray[np.float64]:
    r"""Density q of the noise that turns DLap(e^{-t}) into Lap(1/t), t = epsilon/sensitivity.

    Parameters
    ----------
    y : array_like
        Points at which to evaluate q.
    epsilon : float
        Privacy parameter of the discrete Laplace reports. Must be in (0, inf).
    sensitivity : float, default 1
        Their sensitivity; the target is Lap(sensitivity / epsilon). Must be in (0, inf).

    Returns
    -------
    ndarray of float64
        q(y), zero for |y| > 1.

    Notes
    -----
    With p = e^{-t} and f(z) = (t/2) p^{|z|}: for |y| >= 1, f(y+1) + f(y-1) = (p + 1/p) f(y)
    and c (p + 1/p - 2) = 1, so q = 0. For |y| < 1, f(y-1) = (t/2) p^{1-|y|} and
    1 + 2c - cp = 1/(1-p)^2, which gives

    .. math::

        q(y) = \frac{t}{2(1-p)^2}\,\big(p^{|y|} - p^{2-|y|}\big),\qquad |y| \le 1,

    non-negative, continuous, and of integral (t/(1-p)^2)((1-p)/t - p(1-p)/t) = 1.
    The cdf of |Y| is H(s) = (1 - p^s)(1 - p^{2-s}) / (1-p)^2 on [0, 1].

    Examples
    --------
    >>> float(laplace_conversion_density(1.0, 1.0))
    0.0
    >>> round(float(laplace_conversion_density(0.0, 1.0)), 6)  # (1 - e^-2) / (2 (1 - e^-1)^2)
    1.081977
    """
    t = check_epsilon(epsilon) / check_sensitivity(sensitivity)
    a = np.abs(_real_points(y, "y"))
    inside = a <= 1.0
    s = np.where(inside, a, 1.0)
    # p^s - p^{2-s} = -p^s expm1(-2t(1-s)); (1-p)^2 = expm1(-t)^2: stable as t -> 0
    q = 0.5 * t * np.exp(-t * s) * -np.expm1(-2.0 * t * (1.0 - s)) / math.expm1(-t) ** 2
    return np.where(inside, q, 0.0)


def to_laplace(
    noisy: ArrayLike, epsilon: float, *, sensitivity: float = 1.0, rng=None
) -> NDArray[np.float64]:
    r"""Post-process discrete Laplace reports into Laplace reports.

    Parameters
    ----------
    noisy : array_like of int
        Reports x + eta, eta ~ DLap(e^{-epsilon/sensitivity}) (as released by
        :class:`~ldpgraph.mechanisms.DiscreteLaplace`).
    epsilon : float
        Their privacy parameter. Must be in (0, inf).
    sensitivity : float, default 1
        Their sensitivity. Must be in (0, inf).
    rng : numpy.random.Generator, int, SeedSequence or None
        Randomness for the added noise Y.

    Returns
    -------
    ndarray of float64
        noisy + Y, distributed exactly as x + Lap(sensitivity / epsilon).

    Raises
    ------
    ValueError
        If a report is not a finite integer (the message names its position).

    Notes
    -----
    Y has the density of :func:`laplace_conversion_density` and is drawn exactly by inverting
    the cdf of |Y|: with t = epsilon/sensitivity, p = e^{-t} and V uniform on [0, 1), the root
    in [p, 1] of s^2 - (1 + p^2 - V(1-p)^2) s + p^2 = 0 is s = p^{|Y|}, and

    .. math::

        p^{|Y|} - 1 = \frac{1-p}{2}\Big(\sqrt{(1-V)\,\big((1+p)^2 - V(1-p)^2\big)}
                       - (1+p) - V(1-p)\Big),

    so |Y| = -log1p(that) / t, accurate for every epsilon. The sign of Y is a fair coin.

    Examples
    --------
    >>> out = to_laplace([3, 7], 1.0, rng=0)
    >>> out.dtype, bool(abs(out - [3, 7]).max() <= 1)
    (dtype('float64'), True)
    """
    y = check_integer_reports(noisy, "noisy")
    t = check_epsilon(epsilon) / check_sensitivity(sensitivity)
    gen = check_rng(rng)
    return y + _sample_laplace_conversion(gen, y.shape, t)


def _sample_laplace_conversion(gen: np.random.Generator, shape, t: float) -> NDArray[np.float64]:
    p = math.exp(-t)
    om = -math.expm1(-t)  # 1 - p
    v = gen.random(math.prod(shape))  # flat, so that the in-place steps below stay arrays
    root = np.sqrt((1.0 - v) * ((1.0 + p) ** 2 - v * om * om))
    root -= 1.0 + p
    root -= v * om
    root *= 0.5 * om  # p^|Y| - 1, in [p - 1, 0]
    out = np.log1p(root, out=root)
    out *= -1.0 / t
    np.copysign(out, _random_signs(gen, out.shape), out=out)
    return out.reshape(shape)


# ---------------------------------------------------------------------- staircase
def _staircase_pieces(epsilon: float, gamma: float) -> tuple[float, float, float, float]:
    """(s, m, h_in, h_out): q = h_in on |y| < s, h_out on s <= |y| < m, 0 beyond."""
    if gamma == 0.0:  # the same law as gamma = 1, where w = gamma + (1-gamma) b cannot underflow to 0
        gamma = 1.0
    b = math.exp(-epsilon)
    w = gamma + (1.0 - gamma) * b
    s, m = min(gamma, 1.0 - gamma), max(gamma, 1.0 - gamma)
    h_in = (1.0 + b) / (2.0 * w)
    h_out = (b if gamma <= 0.5 else 1.0) / (2.0 * w)
    return s, m, h_in, h_out


def _check_staircase_sensitivity(sensitivity: float) -> None:
    if sensitivity != 1.0:
        raise ValueError(
            "sensitivity must be 1 to convert discrete Laplace reports into staircase reports, "
            f"got {sensitivity!r}: for a staircase with steps of width sensitivity > 1 over the "
            "integer lattice the required noise density T f_gamma takes negative values, so no "
            "post-processing conversion exists (other sensitivities are not supported)"
        )


def staircase_conversion_density(
    y: ArrayLike, epsilon: float, gamma: float | None = None, *, sensitivity: float = 1.0
) -> NDArray[np.float64]:
    r"""Density q = T f_gamma that turns DLap(e^{-epsilon}) into the staircase (Delta = 1).

    Parameters
    ----------
    y : array_like
        Points at which to evaluate q.
    epsilon : float
        Privacy parameter. Must be in (0, inf).
    gamma : float or None
        Staircase shape, in [0, 1]; ``None`` selects 1 / (1 + e^{epsilon/2}) (at least
        2.2e-308, see :class:`~ldpgraph.mechanisms.Staircase`).
    sensitivity : float, default 1
        Must be 1; anything else raises ``ValueError`` (no conversion, see Notes).

    Notes
    -----
    With b = e^{-epsilon} = p, w = gamma + (1-gamma) b and f_gamma(z) = a b^{l(z)}, where the
    level l(|z|) = floor(|z| - gamma) + 1 rises by one at every gamma + k: for |y| >= 1 the
    levels at y-1, y, y+1 are l-1, l, l+1 and q = 0 as for the Laplace law. For |y| < 1 the
    level at y+1 is l(y)+1 and the level at y-1 is 1 if |y| <= 1-gamma, else 0, which leaves
    three values, a(1+b)/(1-b) = (1+b)/(2w), a b/(1-b) = b/(2w), a/(1-b) = 1/(2w):

    - gamma <= 1/2: q = (1+b)/(2w) on |y| < gamma, b/(2w) on gamma <= |y| <= 1-gamma;
    - gamma > 1/2:  q = (1+b)/(2w) on |y| <= 1-gamma, 1/(2w) on 1-gamma < |y| < gamma;

    and 0 elsewhere. So q >= 0 for every gamma in [0, 1], has no atom (T is a finite
    difference of a bounded function), integrates to 2(gamma + b(1-gamma))/(2w) = 1, and is
    supported on |y| < max(gamma, 1-gamma) (on |y| <= 1-gamma only when gamma <= 1/2).
    gamma in {0, 1} gives the uniform law on [-1, 1]. For sensitivity 2, 3, 1.5, ... the same
    stencil takes negative values (a step longer than one lattice unit has points whose left
    neighbour lies one level higher and whose right neighbour lies on the same level, where
    q = f (1 - c (1/b - 1)) < 0), hence the error.

    Examples
    --------
    >>> q = staircase_conversion_density([0.0, 0.5, 1.0], 1.0, gamma=0.25)
    >>> w = 0.25 + 0.75 * math.exp(-1)
    >>> bool(np.allclose(q, [(1 + math.exp(-1)) / (2 * w), math.exp(-1) / (2 * w), 0.0]))
    True
    """
    eps = check_epsilon(epsilon)
    _check_staircase_sensitivity(check_sensitivity(sensitivity))
    g = _gamma_min_abs(eps) if gamma is None else _check_gamma(gamma)
    s, m, h_in, h_out = _staircase_pieces(eps, g)
    a = np.abs(_real_points(y, "y"))
    return np.where(a < s, h_in, np.where(a < m, h_out, 0.0))


def to_staircase(
    noisy: ArrayLike,
    epsilon: float,
    gamma: float | None = None,
    *,
    sensitivity: float = 1.0,
    rng=None,
) -> NDArray[np.float64]:
    r"""Post-process discrete Laplace reports (sensitivity 1) into staircase reports.

    Parameters
    ----------
    noisy : array_like of int
        Reports x + eta, eta ~ DLap(e^{-epsilon}).
    epsilon : float
        Their privacy parameter. Must be in (0, inf).
    gamma : float or None
        Staircase shape, in [0, 1]; ``None`` selects 1 / (1 + e^{epsilon/2}) (at least
        2.2e-308, see :class:`~ldpgraph.mechanisms.Staircase`).
    sensitivity : float, default 1
        Must be 1 (see :func:`staircase_conversion_density`).
    rng : numpy.random.Generator, int, SeedSequence or None
        Randomness for the added noise.

    Returns
    -------
    ndarray of float64
        noisy + Y, distributed exactly as x + Staircase(epsilon, Delta=1, gamma).

    Raises
    ------
    ValueError
        If ``sensitivity != 1`` (no conversion exists), gamma is outside [0, 1], or a report
        is not a finite integer (the message names its position).

    Notes
    -----
    |Y| is uniform on [0, s) with probability 2 s h_in and uniform on [s, m) otherwise
    (pieces of :func:`staircase_conversion_density`), drawn from one uniform V by inverting
    the piecewise linear cdf; the sign is a fair coin.

    Examples
    --------
    >>> out = to_staircase([3, 7], 1.0, rng=0)
    >>> out.dtype, bool(abs(out - [3, 7]).max() <= 1)
    (dtype('float64'), True)
    """
    y = check_integer_reports(noisy, "noisy")
    eps = check_epsilon(epsilon)
    _check_staircase_sensitivity(check_sensitivity(sensitivity))
    g = _gamma_min_abs(eps) if gamma is None else _check_gamma(gamma)
    gen = check_rng(rng)
    return y + _sample_staircase_conversion(gen, y.shape, eps, g)


def _sample_staircase_conversion(
    gen: np.random.Generator, shape, eps: float, g: float
) -> NDArray[np.float64]:
    s, m, h_in, h_out = _staircase_pieces(eps, g)
    p_out = 2.0 * (m - s) * h_out  # P[|Y| >= s]
    out = gen.random(shape)
    # |Y| = V / (2 h_in) for V < p_in = 1 - p_out, s + (V - p_in) / (2 h_out) beyond: the
    # inverse cdf is continuous at p_in, so it equals V k_in + (k_out - k_in) max(V - p_in, 0).
    k_in = 0.5 / h_in
    if p_out > 0.0:
        t = np.subtract(out, 1.0 - p_out, out=np.empty_like(out))  # an array even when 0-d
        np.maximum(t, 0.0, out=t)
        t *= 0.5 / h_out - k_in
        out *= k_in
        out += t
    else:
        out *= k_in
    np.copysign(out, _random_signs(gen, out.shape), out=out)
    return out
