"""The staircase mechanism (Geng, Kairouz, Oh, Viswanath 2015), in one and in d dimensions."""

from __future__ import annotations

import math
import numbers
import sys
from functools import cache
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    check_epsilon,
    check_nonnegative_int,
    check_real_reports,
    check_rng,
    check_sensitivity,
)
from ._common import _real_points
from .laplace import _random_signs

__all__ = ["Staircase"]


class Staircase:
    r"""Staircase noise with ratio b = e^-epsilon, step width sensitivity, and shape gamma.

    Parameters
    ----------
    epsilon : float
        Privacy parameter. Must be in (0, inf).
    sensitivity : float, default 1
        Sensitivity Delta (the l1 sensitivity when ``dim > 1``). Must be in (0, inf).
    gamma : float or None, default None
        Fraction of each step spent at the higher level. Must be in [0, 1]. ``None`` selects
        gamma* = 1 / (1 + e^{epsilon/2}), which minimises E|X| in one dimension
        (see :meth:`optimal_gamma`). For dim > 1 the same default is used, but it does not
        minimise E||X||_1 there (that minimiser depends on dim and is not unimodal in gamma).
        Beyond epsilon ~ 1416, gamma* is below the smallest normal float and the default is
        that float, 2.2e-308 (not 0, which would be the law of gamma = 1).
    dim : int, default 1
        Dimension 1 <= d <= 171 (the closed forms overflow float64 beyond). For d > 1 the
        density depends on the l1 norm of the point. ``variance`` needs d <= 169 and
        ``expected_abs`` d <= 170 (moment m needs d + m <= 171).

    Notes
    -----
    With b = e^{-epsilon} and Delta the sensitivity, the density is
    :math:`f(x) = a(\gamma)\, s(\|x\|_1)` with the staircase profile

    .. math::

        s(r) = b^k \text{ for } r \in [k\Delta, (k+\gamma)\Delta),\qquad
        s(r) = b^{k+1} \text{ for } r \in [(k+\gamma)\Delta, (k+1)\Delta),

    and normalising constant (c_k = sum_{i>=0} i^k b^i)

    .. math::

        a(\gamma) = \frac{d!}{2^d \Delta^d \sum_{k=1}^{d} \binom{d}{k} c_{d-k}
                    \,(b + (1-b)\gamma^k)},
        \qquad d = 1:\ a(\gamma) = \frac{1-b}{2\Delta(\gamma + (1-\gamma) b)}.

    The l1 radius R = ||X||_1 has density proportional to r^{d-1} s(r); its moments are
    E[R^m] = Delta^m d/(d+m) N_{d+m} / N_d with N_n = sum_{k=1}^n C(n,k) c_{n-k}(b+(1-b)gamma^k).
    A coordinate has E|X_1| = E[R]/d and Var X_1 = 2 E[R^2] / (d(d+1)) (the direction is
    uniform on the l1 sphere, whose first coordinate is Beta(1, d-1) with a random sign), and
    the covariance is Var X_1 times the identity. In one dimension, with w = gamma + (1-gamma)b,

    .. math::

        E|X| = \Delta\Big(\frac{b}{1-b} + \frac{b + (1-b)\gamma^2}{2w}\Big),\qquad
        \operatorname{Var}X = \Delta^2\Big(\frac{b(1+b)}{(1-b)^2}
            + \frac{b}{1-b}\,\frac{b + (1-b)\gamma^2}{w} + \frac{b + (1-b)\gamma^3}{3w}\Big).

    gamma = 0 and gamma = 1 give the same law (a uniform position inside a geometric step).

    **Privacy.** Moving the input by at most Delta in l1 moves ||z - x||_1 by at most Delta,
    which changes the profile level by at most one step, i.e. by a factor at most 1/b = e^eps.

    **Sampling** (dim 1, Geng et al. Algorithm 1, vectorized): S = +-1, G ~ Geometric(1-b)
    on {0, 1, ...} as floor(E / epsilon) with E ~ Exp(1), B = 0 with probability
    gamma / (gamma + (1-gamma) b), U uniform, X = S Delta ((1-B)(G + gamma U)
    + B(G + gamma + (1-gamma)U)); B and U come from one uniform by inverting the piecewise
    linear law of the position inside the step.

    (dim d) The radius index K = floor(R/Delta) has P[K = k] proportional to
    b^k sum_j C(d,j)(b + (1-b)gamma^j) k^{d-j}. Writing k^m = sum_l S(m,l) k(k-1)...(k-l+1)
    (Stirling numbers of the second kind) makes this an exact finite mixture over l of
    l + NegativeBinomial(l+1, 1-b). Given K, the inner or outer part of the step is chosen in
    proportion to its mass and R is drawn inside it by inverting r^d; the direction is
    Exp(1)^d normalised by its sum with independent random signs.

    References
    ----------
    Q. Geng, P. Kairouz, S. Oh, P. Viswanath, "The Staircase Mechanism in Differential
    Privacy", IEEE J. Sel. Topics Signal Process. 9(7), 2015.

    Examples
    --------
    >>> mech = Staircase(epsilon=1.0)
    >>> round(mech.gamma, 6)
    0.377541
    >>> round(mech.expected_abs, 6)  # e^{eps/2} / (e^eps - 1)
    0.959517
    >>> mech.sample(3, rng=0).shape
    (3,)
    >>> Staircase(epsilon=1.0, dim=3).sample((4, 2), rng=0).shape
    (4, 2, 3)
    """

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float = 1.0,
        gamma: float | None = None,
        dim: int = 1,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        self.dim = check_nonnegative_int(dim, "dim", minimum=1)
        if gamma is None:
            self.gamma = _gamma_min_abs(self.epsilon)
        else:
            self.gamma = _check_gamma(gamma)
        if self.dim > _MAX_ORDER:
            raise ValueError(
                f"dim must be <= {_MAX_ORDER}, got {self.dim}: the closed forms of the law use Eulerian "
                f"numbers of order dim, which exceed the float64 range beyond {_MAX_ORDER}"
            )
        self._b = math.exp(-self.epsilon)
        self._u = -math.expm1(-self.epsilon)  # 1 - b, exact for small epsilon
        # gamma = 0 and gamma = 1 have the same law; compute with 1 (no empty inner step)
        self._g = 1.0 if self.gamma == 0.0 else self.gamma
        if _scaled_n(self.dim, self._b, self._u, self._g) == 0.0:
            raise ValueError(
                f"epsilon = {self.epsilon!r} is too large for gamma = {self.gamma!r} and "
                f"dim = {self.dim}: e^-epsilon and gamma^dim both underflow in double precision"
            )
        self._log_a = _log_normalizer(self.dim, self._b, self._u, self._g, self.sensitivity)

    def __repr__(self) -> str:
        return (
            f"Staircase(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
            f"gamma={self.gamma!r}, dim={self.dim!r})"
        )

    # ------------------------------------------------------------------ optimal gamma
    @staticmethod
    def optimal_gamma(
        epsilon: float, criterion: Literal["abs", "variance"] = "abs"
    ) -> float:
        r"""The gamma minimising E|X| (``"abs"``) or Var X (``"variance"``) in one dimension.

        Parameters
        ----------
        epsilon : float
            Privacy parameter. Must be in (0, inf).
        criterion : {"abs", "variance"}
            Which cost to minimise. Neither depends on the sensitivity (it scales both).

        Notes
        -----
        ``"abs"``: gamma* = 1 / (1 + e^{epsilon/2}) (Geng et al.). ``"variance"``: with
        b = e^{-epsilon}, u = 1 - b and w = b + u gamma, the variance over Delta^2 is
        m(1+2m) + m (b + u gamma^2)/w + (b + u gamma^3)/(3w), m = b/u. Its derivative has the
        sign of the cubic

        .. math::

            2u^2\gamma^3 + 6bu\gamma^2 + 6b^2\gamma - b(1+2b),

        negative at 0, equal to 2 + b > 0 at 1 and increasing on [0, 1] (all its other
        coefficients are positive): the unique root in (0, 1) is the minimiser. It is not
        gamma*: at epsilon = 1 it is 0.41674 against 0.37754. For epsilon > 60 its root is
        (b/2)^(1/3) to rounding.

        Where the minimiser is below the smallest normal float (epsilon above ~1416 for
        ``"abs"``, ~2122 for ``"variance"``) that float, 2.2e-308, is returned: rounding to 0
        would give the gamma = 0 law, identical to gamma = 1 (noise of order Delta).

        Examples
        --------
        >>> round(Staircase.optimal_gamma(1.0), 6)
        0.377541
        >>> round(Staircase.optimal_gamma(1.0, "variance"), 6)
        0.416737
        """
        eps = check_epsilon(epsilon)
        if criterion == "abs":
            return _gamma_min_abs(eps)
        if criterion == "variance":
            return _gamma_min_variance(eps)
        raise ValueError(f"criterion must be 'abs' or 'variance', got {criterion!r}")

    # ------------------------------------------------------------------ analytic law
    @property
    def normalizing_constant(self) -> float:
        """a(gamma) as in DESIGN.md (for gamma = 0, the value of the gamma = 0 profile)."""
        if self.gamma == 0.0:
            return math.exp(self._log_a + self.epsilon) if self._b > 0 else math.inf
        return math.exp(self._log_a)

    def radius_moment(self, m: int) -> float:
        """E[||X||_1^m] = Delta^m d/(d+m) N_{d+m}/N_d for an integer m >= 0."""
        m = check_nonnegative_int(m, "m")
        d = self.dim
        if d + m > _MAX_ORDER:
            raise ValueError(
                f"m must be <= {_MAX_ORDER} - dim = {_MAX_ORDER - d}, got {m}: the closed form uses Eulerian "
                f"numbers of order dim + m, which exceed the float64 range beyond {_MAX_ORDER}"
            )
        ratio = _scaled_n(d + m, self._b, self._u, self._g) / _scaled_n(
            d, self._b, self._u, self._g
        )
        return self.sensitivity**m * d / (d + m) * ratio / self._u**m

    @property
    def variance(self) -> float:
        """Variance of one coordinate (the covariance is this times the identity)."""
        d = self.dim
        return 2.0 * self.radius_moment(2) / (d * (d + 1))

    @property
    def expected_abs(self) -> float:
        """E|X_1| of one coordinate (E|X| in one dimension)."""
        return self.radius_moment(1) / self.dim

    def _log_profile(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        """ln s(t * Delta) for t >= 0 (t in units of Delta; -inf at t = +inf)."""
        infinite = t == np.inf
        t = np.where(infinite, 0.0, t)
        k = np.floor(t)
        level = k + (t - k >= self._g)
        return np.where(infinite, -np.inf, -self.epsilon * level)

    def logpdf(self, z: ArrayLike) -> NDArray[np.float64]:
        """Log-density. dim 1: any shape; dim d > 1: points on the last axis (length d)."""
        t = self._norm(z, "z") / self.sensitivity
        return self._log_a + self._log_profile(t)

    def pdf(self, z: ArrayLike) -> NDArray[np.float64]:
        """Density a(gamma) s(||z||_1). dim 1: any shape; dim d > 1: shape (..., d)."""
        return np.exp(self.logpdf(z))

    def sf(self, z: ArrayLike) -> NDArray[np.float64]:
        """P[X > z] (dim 1 only; accurate in the upper tail)."""
        self._require_dim1("sf")
        z = _real_points(z, "z")
        upper = self._sf_abs(np.abs(z) / self.sensitivity)
        return np.where(z >= 0, upper, 1.0 - upper)

    def cdf(self, z: ArrayLike) -> NDArray[np.float64]:
        r"""P[X <= z] (dim 1 only).

        Notes
        -----
        For z = (k + r) Delta >= 0 with k integer and r in [0, 1),

        .. math::

            P[X > z] = \frac{b^k}{2}\Big(1 - \frac{(1-b)(\min(r,\gamma)
                        + b\max(r-\gamma, 0))}{\gamma + (1-\gamma)b}\Big),

        and P[X <= z] = P[X > -z] by symmetry.
        """
        self._require_dim1("cdf")
        z = _real_points(z, "z")
        upper = self._sf_abs(np.abs(z) / self.sensitivity)
        return np.where(z < 0, upper, 1.0 - upper)

    def _sf_abs(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        """P[X > t Delta] for t >= 0 (0 at t = +inf, nan stays nan)."""
        infinite = t == np.inf
        t = np.where(infinite, 0.0, t)
        k = np.floor(t)
        r = t - k
        g, b, u = self._g, self._b, self._u
        inside = np.minimum(r, g) + b * np.maximum(r - g, 0.0)
        out = 0.5 * np.exp(-self.epsilon * k) * (1.0 - u * inside / (g + (1.0 - g) * b))
        return np.where(infinite, 0.0, out)

    def radius_pdf(self, r: ArrayLike) -> NDArray[np.float64]:
        """Density of R = ||X||_1: a 2^d r^{d-1} s(r) / (d-1)! for r >= 0 (0 for r < 0)."""
        r = _real_points(r, "r")
        d = self.dim
        infinite = r == np.inf
        rr = np.where(infinite, 0.0, np.maximum(r, 0.0))
        with np.errstate(divide="ignore"):
            log_r = np.log(rr) if d > 1 else np.zeros_like(rr)
        logc = self._log_a + d * math.log(2.0) - math.lgamma(d)
        out = np.exp(logc + (d - 1) * log_r + self._log_profile(rr / self.sensitivity))
        return np.where((r >= 0) & ~infinite, out, 0.0)

    def radius_cdf(self, r: ArrayLike) -> NDArray[np.float64]:
        r"""P[||X||_1 <= r], in closed form (any dim).

        Notes
        -----
        With sums over whole steps done by sum_{i>=k} i^m b^i = b^k sum_s C(m,s) k^{m-s} c_s,
        and the partial step at r = (k + v) Delta by x^d - y^d = (x-y) sum_i x^i y^{d-1-i}
        (no cancellation).
        """
        r = _real_points(r, "r")
        infinite = r == np.inf
        t = np.where(infinite, 0.0, np.maximum(r, 0.0)) / self.sensitivity
        d, b, u, g = self.dim, self._b, self._u, self._g
        k = np.floor(t)
        v = t - k
        # tail over whole steps >= k+1, scaled by u^{d+1}; the powers kk^p times b^{k+1} are
        # taken as exp(p ln kk - epsilon (k+1)), finite far in the tail where kk^p alone overflows
        kk = (k + 1.0) * u
        log_kk = np.log(kk)
        tail = np.zeros_like(t)
        ct = _scaled_c(d, b)
        for j in range(1, d + 1):
            wj = math.comb(d, j) * (b + u * g**j) * u**j
            for s in range(d - j + 1):
                coef = wj * math.comb(d - j, s) * ct[s]
                tail += coef * np.exp((d - j - s) * log_kk - self.epsilon * (k + 1.0))
        # remainder of step k, from v to 1 (scaled by u^{d+1}), in units of kk = (k+1) u
        k1 = k + 1.0
        kh = k / k1
        inner = np.where(v < g, _pow_diff(kh + g / k1, kh + v / k1, (g - v) / k1, d), 0.0)
        top = np.maximum(v, g)
        outer = b * _pow_diff(np.ones_like(kh), kh + top / k1, (1.0 - top) / k1, d)
        part = np.exp(d * log_kk - self.epsilon * k) * u * (inner + outer)
        sf = (tail + part) / _scaled_n(d, b, u, g)
        return np.where(infinite, 1.0, np.where(r >= 0, 1.0 - sf, 0.0))

    # ------------------------------------------------------------------ sampling
    def sample(
        self, size: int | tuple[int, ...] | None = None, *, rng=None
    ) -> NDArray[np.float64]:
        """Draw noise as float64: shape ``size`` for dim 1, ``(*size, dim)`` for dim > 1.

        ``size=None`` gives one draw (a ``numpy.float64`` for dim 1, shape ``(dim,)``
        otherwise). ``rng`` is a seed, a Generator or None (a fresh OS-seeded numpy
        Generator). There is no exact secure sampler of this continuous law: unlike the discrete
        randomizers (secure by default without ``rng``) it is for simulation only.
        """
        gen = check_rng(rng)
        shape = () if size is None else ((size,) if isinstance(size, numbers.Integral) else tuple(size))
        if self.dim == 1:
            out = _sample_staircase_1d(gen, shape, self.epsilon, self._b, self._g)
            out *= self.sensitivity
            return out[()] if size is None else out
        radius = _sample_radius(gen, shape, self.dim, self.epsilon, self._b, self._u, self._g)
        radius *= self.sensitivity
        return radius[..., None] * _sample_l1_direction(gen, shape, self.dim)

    def randomize(self, values: ArrayLike, *, rng=None) -> NDArray[np.float64]:
        """The randomizer: values + X, as float64. For dim > 1, values have shape (..., dim).

        Floating-point noise for simulation, also without ``rng`` (see :meth:`sample`).
        """
        if self.dim == 1:
            x = check_real_reports(values, "values")
            return x + self.sample(x.shape, rng=rng)
        x = check_real_reports(values, "values", min_ndim=1)
        self._check_last_axis(x, "values")
        return x + self.sample(x.shape[:-1], rng=rng)

    # ------------------------------------------------------------------ helpers
    def _require_dim1(self, what: str) -> None:
        if self.dim != 1:
            raise ValueError(
                f"{what} is defined for dim = 1 only, got dim = {self.dim}; "
                "use radius_cdf for the law of the l1 norm"
            )

    def _check_last_axis(self, x: NDArray[Any], name: str) -> None:
        if x.shape[-1] != self.dim:
            raise ValueError(
                f"{name} must have last axis of length dim = {self.dim}, got shape {x.shape}"
            )

    def _norm(self, z: ArrayLike, name: str) -> NDArray[np.float64]:
        z = _real_points(z, name)
        if self.dim == 1:
            return np.abs(z)
        if z.ndim < 1:
            raise ValueError(f"{name} must have shape (..., {self.dim}), got shape {z.shape}")
        self._check_last_axis(z, name)
        return np.abs(z).sum(axis=-1)


# ---------------------------------------------------------------------- validation
def _check_gamma(gamma: Any) -> float:
    if isinstance(gamma, (bool, np.bool_)) or not isinstance(gamma, numbers.Real):
        raise TypeError(f"gamma must be a real number or None, got {type(gamma).__name__} {gamma!r}")
    g = float(gamma)
    if not 0.0 <= g <= 1.0:  # also rejects nan
        raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
    return g


# ---------------------------------------------------------------------- optimal gamma
# Smallest gamma used for the optimal shapes: the smallest normal float. Below it (epsilon above
# ~1416 for "abs", ~2122 for "variance") the optimum is not representable; rounding it to 0 would
# select the gamma = 0 law (= gamma = 1: noise of order Delta), whereas this gamma keeps nearly
# all the mass on |X| < gamma Delta, noise below 1e-307 Delta as the optimum has. Any gamma in
# [0, 1] is epsilon-DP.
_GAMMA_FLOOR = sys.float_info.min


def _gamma_min_abs(eps: float) -> float:
    """1 / (1 + e^{eps/2}), without overflow; at least ``_GAMMA_FLOOR``."""
    h = math.exp(-eps / 2.0)
    return max(h / (1.0 + h), _GAMMA_FLOOR)


def _gamma_min_variance(eps: float) -> float:
    if eps > 60.0:
        # b < 1e-26: the root is (b/2)^(1/3) (1 + O(b^(2/3))), exact to rounding (and brentq, asked
        # for a root of order b^(1/3) to relative precision, stops converging near epsilon = 600)
        return max(math.exp(-(eps + math.log(2.0)) / 3.0), _GAMMA_FLOOR)
    b = math.exp(-eps)
    u = -math.expm1(-eps)

    def cubic(g: float) -> float:
        return ((2.0 * u * u * g + 6.0 * b * u) * g + 6.0 * b * b) * g - b * (1.0 + 2.0 * b)

    from scipy.optimize import brentq

    return float(brentq(cubic, 0.0, 1.0, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500))


# ---------------------------------------------------------------------- closed forms
# Largest order n of the sums c_s (s <= n) whose Eulerian coefficients fit in float64.
_MAX_ORDER = 171

@cache
def _eulerian_row(n: int) -> tuple[int, ...]:
    """Eulerian numbers A(n, 0..n-1) (A(0, 0) = 1)."""
    row = [1]
    for m in range(1, n + 1):
        row = [
            (i + 1) * (row[i] if i < len(row) else 0) + (m - i) * (row[i - 1] if i >= 1 else 0)
            for i in range(m)
        ]
    return tuple(row)


@cache
def _stirling2_row(n: int) -> tuple[int, ...]:
    """Stirling numbers of the second kind S(n, 0..n)."""
    row = [1]
    for m in range(1, n + 1):
        row = [
            (i * row[i] if i < len(row) else 0) + (row[i - 1] if i >= 1 else 0)
            for i in range(m + 1)
        ]
    return tuple(row)


def _scaled_c(n: int, b: float) -> list[float]:
    """c_s (1-b)^{s+1} for s = 0..n, where c_s = sum_{i>=0} i^s b^i.

    c_0 (1-b) = 1 and, for s >= 1, c_s (1-b)^{s+1} = b A_s(b) with A_s the Eulerian polynomial.
    All terms are positive: no cancellation, no overflow for small epsilon.
    """
    out = [1.0]
    for s in range(1, n + 1):
        acc = 0.0
        for coef in reversed(_eulerian_row(s)):
            acc = acc * b + float(coef)
        out.append(b * acc)
    return out


def _scaled_n(n: int, b: float, u: float, g: float) -> float:
    """N_n (1-b)^{n+1}, N_n = sum_{j=1}^n C(n,j) c_{n-j} (b + (1-b) g^j)."""
    ct = _scaled_c(n, b)
    return math.fsum(math.comb(n, j) * ct[n - j] * u**j * (b + u * g**j) for j in range(1, n + 1))


def _log_normalizer(d: int, b: float, u: float, g: float, delta: float) -> float:
    """ln a(gamma) = ln d! - d ln(2 Delta) - ln N_d."""
    return (
        math.lgamma(d + 1)
        - d * math.log(2.0 * delta)
        - math.log(_scaled_n(d, b, u, g))
        + (d + 1) * math.log(u)
    )


def _pow_diff(x: NDArray[np.float64], y: NDArray[np.float64], x_minus_y, d: int):
    """x^d - y^d = (x - y) sum_{i<d} x^i y^{d-1-i}, for x >= y >= 0, x - y given exactly."""
    acc = np.zeros(np.broadcast(x, y).shape)
    for i in range(d):
        acc += x**i * y ** (d - 1 - i)
    return x_minus_y * acc


# ---------------------------------------------------------------------- samplers
def _sample_staircase_1d(gen: np.random.Generator, shape, eps: float, b: float, g: float):
    """Algorithm 1 of Geng et al., vectorized, with unit step (Delta = 1)."""
    w = g + (1.0 - g) * b  # gamma + (1 - gamma) b
    p0 = g / w  # P[B = 0]: the inner part of the step
    x = gen.standard_exponential(shape)
    x *= 1.0 / eps
    np.floor(x, out=x)  # G ~ Geometric(1 - b) on {0, 1, ...}
    v = gen.random(shape)
    # position in the step: v < p0 -> inner, g v / p0 = w v; else outer, g + (1-g)(v-p0)/(1-p0).
    # The inverse cdf is continuous at p0, so it equals w v + (s2 - w) max(v - p0, 0).
    if p0 < 1.0:
        s2 = (1.0 - g) / (1.0 - p0)
        t = np.subtract(v, p0, out=np.empty_like(v))  # stays an array when 0-d
        np.maximum(t, 0.0, out=t)
        t *= s2 - w
        v *= w
        v += t
    else:
        v *= w
    x += v
    np.copysign(x, _random_signs(gen, x.shape), out=x)
    return x


def _radius_mixture_weights(d: int, b: float, u: float, g: float) -> NDArray[np.float64]:
    """Weights of l = 0..d-1 in the law of K = l + NB(l+1, 1-b) (normalised)."""
    wts = np.zeros(d)
    for ell in range(d):
        acc = 0.0
        for j in range(1, d - ell + 1):
            acc += math.comb(d, j) * (b + u * g**j) * _stirling2_row(d - j)[ell]
        # l! b^l / u^{l+1} times acc, scaled by u^{d+1}
        wts[ell] = math.factorial(ell) * b**ell * u ** (d - ell) * acc
    return wts / wts.sum()


def _sample_radius(
    gen: np.random.Generator, shape, d: int, eps: float, b: float, u: float, g: float
) -> NDArray[np.float64]:
    """R / Delta for the d-dimensional staircase: density proportional to r^{d-1} s(r)."""
    cum = np.cumsum(_radius_mixture_weights(d, b, u, g))
    ell = np.minimum(np.searchsorted(cum, gen.random(shape), side="right"), d - 1)
    k = (ell + gen.negative_binomial(ell + 1, u)).astype(np.float64)
    # inner part [k, k+g) or outer part [k+g, k+1): masses (k+g)^d - k^d and b((k+1)^d - (k+g)^d)
    kp1 = k + 1.0
    inner_mass = _pow_diff((k + g) / kp1, k / kp1, g / kp1, d)
    outer_mass = b * _pow_diff(np.ones_like(k), (k + g) / kp1, (1.0 - g) / kp1, d)
    is_inner = gen.random(shape) * (inner_mass + outer_mass) < inner_mass
    hi = np.where(is_inner, k + g, kp1)
    width = np.where(is_inner, g, 1.0 - g)
    # inverse of r^d on [lo, hi): r = hi (1 - U delta)^{1/d}, delta = 1 - (lo/hi)^d
    with np.errstate(divide="ignore"):  # lo = 0 gives log1p(-1) = -inf and delta = 1
        delta = -np.expm1(d * np.log1p(-width / hi))
    return hi * np.exp(np.log1p(-gen.random(shape) * delta) / d)


def _sample_l1_direction(gen: np.random.Generator, shape, d: int) -> NDArray[np.float64]:
    """Uniform points on the unit l1 sphere: Exp(1)^d / sum, with random signs."""
    e = gen.standard_exponential((*shape, d))
    e /= e.sum(axis=-1, keepdims=True)
    np.copysign(e, _random_signs(gen, e.shape), out=e)
    return e
