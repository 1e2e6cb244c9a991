r"""Fast unbiased estimators of polynomials of noisy reports, their exact variances and estimates.

Reports are y = x + eta with independent noise on every entry: discrete Laplace
eta ~ DLap(p), p = exp(-epsilon / sensitivity), on integers (``noise="dlap"``), or continuous
Laplace eta ~ Lap(b), b = sensitivity / epsilon (``noise="laplace"``). For a polynomial f the
unique unbiased estimator g = T f of ``debias`` (DLap) or ``debias_laplace`` (Laplace) is again
a polynomial and has closed forms:

- DLap: :math:`T = 1 - c\,\delta^2` with :math:`c = p/(1-p)^2` and the central difference
  :math:`\delta^2 f(y) = f(y+1) - 2f(y) + f(y-1) = 2\sum_{m\ge1} f^{(2m)}(y)/(2m)!`.
  Since :math:`\delta^2 \binom{y}{k} = \binom{y-1}{k-2}`,

  .. math:: \binom{y}{k} \;\mapsto\; \binom{y}{k} - c \binom{y-1}{k-2}.

- Laplace: :math:`T = 1 - b^2 D^2`, i.e. :math:`g = f - b^2 f''` (Hillebrand et al. 2023).

Everything here is computed from forms that avoid the large cancelling terms of the stencil:
products of linear factors for binomials, Horner on debiased coefficients for general
polynomials, and Taylor coefficients at x (not differences of huge values) for variances;
where those still cancel (x among the roots, large epsilon) the variance is recomputed exactly
in rationals. Products are scaled (by powers of two, or by j at step j) so that no intermediate
overflows when the result is finite; results beyond the float64 range overflow to inf (numpy
warns).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any, Literal

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
    "NOISES",
    "MAX_BINOMIAL_K",
    "binomial",
    "binomials",
    "sum_binomials",
    "power",
    "polynomial",
    "monomial",
    "binomial_variance",
    "binomial_plugin_moments",
    "power_variance",
    "polynomial_variance",
    "monomial_variance",
    "binomial_variance_estimate",
    "power_variance_estimate",
    "polynomial_variance_estimate",
    "monomial_variance_estimate",
    "checked_binomial_kernel",
    "noise_model",
]

#: Accepted values of the ``noise`` keyword.
NOISES = ("dlap", "laplace")

#: Largest k for binomial estimators (k! must be a finite float64).
MAX_BINOMIAL_K = 170

Noise = Literal["dlap", "laplace"]

# Elements per chunk of the elementwise kernels: 64 Ki float64 = 512 KiB, a few buffers stay in L2.
_CHUNK = 1 << 16
_MAX_ABS_REPORT = 2**53
# sum_binomials counts DLap reports with bincount when their range is below this.
_HIST_MAX_RANGE = 1 << 20
_HIST_CHUNK = 1 << 18
# Up to this k a product of k factors |y - i| of DLap reports (|y| <= 2^53) stays below 2^1008.
_DLAP_UNSCALED_MAX_K = 18


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _NoiseModel:
    """kind = "dlap" (s = c = p/(1-p)^2) or "laplace" (s = b^2)."""

    kind: str
    s: float

    @property
    def variance(self) -> float:
        """E eta^2: 2c for DLap, 2b^2 for Laplace."""
        return 2.0 * self.s

    @property
    def fourth_moment(self) -> float:
        """E eta^4: 2c + 24c^2 for DLap, 24b^4 for Laplace."""
        if self.kind == "dlap":
            return 2.0 * self.s + 24.0 * self.s * self.s
        return 24.0 * self.s * self.s


def _check_noise(noise: Any) -> str:
    if not isinstance(noise, str):
        raise TypeError(f"noise must be a string, one of {NOISES}, got {type(noise).__name__} {noise!r}")
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    return noise


def noise_model(epsilon: Any, sensitivity: Any, noise: Any) -> _NoiseModel:
    """The noise of the reports, checked: its kind and scale, hence its moments.

    >>> nz = noise_model(1.0, 1, "laplace")
    >>> nz.kind, nz.variance
    ('laplace', 2.0)
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    kind = _check_noise(noise)
    if kind == "dlap":
        return _NoiseModel("dlap", dlap_c(eps, delta))
    b = delta / eps
    return _NoiseModel("laplace", b * b)


def _reports(y: ArrayLike, kind: str, name: str = "y", min_ndim: int = 0) -> NDArray[Any]:
    """Integer reports (DLap) or real reports (Laplace).

    Integer ndarrays pass ``check_integer_reports`` without a copy (min/max checks only).
    """
    if kind == "laplace":
        return check_real_reports(y, name, min_ndim=min_ndim)
    return check_integer_reports(y, name, min_ndim=min_ndim)


def _check_k(k: Any, name: str = "k") -> int:
    kk = check_nonnegative_int(k, name)
    if kk > MAX_BINOMIAL_K:
        raise ValueError(
            f"{name} must be an integer <= {MAX_BINOMIAL_K} (degrees beyond that overflow float64), got {kk}"
        )
    return kk


def _check_ks(ks: Any) -> tuple[int, ...]:
    if isinstance(ks, (str, bytes)) or np.ndim(ks) != 1:
        raise TypeError(f"ks must be a 1-D sequence of non-negative integers, got {ks!r}")
    out = tuple(_check_k(v, f"ks[{i}]") for i, v in enumerate(ks))
    if not out:
        raise ValueError("ks must contain at least one k, got an empty sequence")
    return out


def _check_coefficients(coefficients: Any) -> NDArray[np.float64]:
    arr = np.asarray(coefficients)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"coefficients must be real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"coefficients must be a non-empty 1-D sequence, got shape {arr.shape}")
    if arr.size - 1 > MAX_BINOMIAL_K:
        raise ValueError(
            f"coefficients describe a polynomial of degree {arr.size - 1}; "
            f"the degree must be <= {MAX_BINOMIAL_K}"
        )
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"coefficients[{i}] = {arr[i]!r} is not finite; coefficients must be finite")
    return arr


def _check_exponents(exponents: Any, n: int) -> tuple[int, ...]:
    if isinstance(exponents, (str, bytes)) or np.ndim(exponents) != 1:
        raise TypeError(f"exponents must be a 1-D sequence of non-negative integers, got {exponents!r}")
    out = tuple(_check_k(v, f"exponents[{i}]") for i, v in enumerate(exponents))
    if len(out) != n:
        raise ValueError(
            f"exponents must have one entry per coordinate (length y.shape[-1] = {n}), got length {len(out)}"
        )
    return out


# --------------------------------------------------------------------------------------------
# noise moments and coefficient transforms (tiny arrays: exact or O(d^2))
# --------------------------------------------------------------------------------------------


@cache
def _dlap_moment_coefficients(m: int) -> tuple[int, ...]:
    """Integers A_n with E[eta^{2m}] = sum_n A_n c^n for eta ~ DLap (n = 0..m).

    From E[e^{t eta}] = 1 / (1 - c (2 sinh(t/2))^2) = sum_n c^n (e^{t/2} - e^{-t/2})^{2n}:
    A_n = sum_i (-1)^i C(2n, i) (n - i)^{2m} = (2n)! t(2m, 2n), t the central factorial numbers,
    computed by their recurrence t(2m, 2n) = t(2m-2, 2n-2) + n^2 t(2m-2, 2n), i.e.
    A_n(m) = 2n (2n-1) A_{n-1}(m-1) + n^2 A_n(m-1): O(m) integer operations per m.
    """
    if m == 0:
        return (1,)
    prev = _dlap_moment_coefficients(m - 1) + (0,)
    return (0,) + tuple(2 * n * (2 * n - 1) * prev[n - 1] + n * n * prev[n] for n in range(1, m + 1))


def _exact_moments(kind: str, s: float, top: int) -> list[Fraction]:
    """Raw moments E eta^j, j = 0..top, exact in s (= c or b^2, a float hence a dyadic rational)."""
    S = Fraction(s)
    mu = [Fraction(0)] * (top + 1)
    for j in range(0, top + 1, 2):
        m = j // 2
        if kind == "dlap":
            mu[j] = sum((a * S**n for n, a in enumerate(_dlap_moment_coefficients(m))), Fraction(0))
        else:
            mu[j] = math.factorial(j) * S**m
    return mu


def _to_float(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


@lru_cache(maxsize=128)
def _noise_covariance(kind: str, s: float, d: int) -> NDArray[np.float64]:
    """Cov(eta^i, eta^j) = mu_{i+j} - mu_i mu_j for i, j = 0..d (row and column 0 are zero).

    Computed exactly in rationals, then rounded once: no cancellation.
    """
    mu = _exact_moments(kind, s, 2 * d)
    cov = np.zeros((d + 1, d + 1))
    for i in range(1, d + 1):
        for j in range(i, d + 1):
            if (i + j) % 2 == 0:
                cov[i, j] = cov[j, i] = _to_float(mu[i + j] - mu[i] * mu[j])
    cov.setflags(write=False)
    return cov


def _debias_coefficients(a: NDArray[np.float64], nz: _NoiseModel) -> NDArray[np.float64]:
    """Coefficients (lowest degree first, along the last axis) of T p for p with coefficients a.

    DLap: (T p)_i = a_i - 2c sum_{m>=1} C(i+2m, 2m) a_{i+2m}   (delta^2 = 2 sum_m D^{2m}/(2m)!).
    Laplace: (T p)_i = a_i - b^2 (i+1)(i+2) a_{i+2}.
    T commutes with shifts, so applied to Taylor coefficients at x it gives those of (T p)(x + .).
    """
    d = a.shape[-1] - 1
    q = np.array(a, dtype=np.float64, copy=True)
    for i in range(0, d - 1):
        if nz.kind == "dlap":
            corr = 0.0
            for j in range(i + 2, d + 1, 2):
                corr = corr + math.comb(j, i) * a[..., j]
            q[..., i] -= 2.0 * nz.s * corr
        else:
            q[..., i] -= nz.s * (i + 1) * (i + 2) * a[..., i + 2]
    return q


def _difference_coefficients(a: NDArray[np.float64], sign: int) -> NDArray[np.float64]:
    """Coefficients of p(y+1) - p(y) (sign=+1) or p(y) - p(y-1) (sign=-1), degree d-1."""
    d = a.shape[-1] - 1
    out = np.zeros(a.shape[:-1] + (max(d, 1),))
    for i in range(0, d):
        acc = 0.0
        for j in range(i + 1, d + 1):
            w = math.comb(j, i) * (1 if sign > 0 or (j - i) % 2 == 1 else -1)
            acc = acc + w * a[..., j]
        out[..., i] = acc
    return out


def _central_difference_coefficients(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """Coefficients of p(y+1) - 2p(y) + p(y-1) = 2 sum_{m>=1} p^{(2m)}(y)/(2m)!."""
    d = a.shape[-1] - 1
    out = np.zeros(a.shape[:-1] + (max(d - 1, 1),))
    for i in range(0, d - 1):
        acc = 0.0
        for j in range(i + 2, d + 1, 2):
            acc = acc + 2 * math.comb(j, i) * a[..., j]
        out[..., i] = acc
    return out


def _derivative_coefficients(a: NDArray[np.float64]) -> NDArray[np.float64]:
    d = a.shape[-1] - 1
    if d == 0:
        return np.zeros(1)
    return a[1:] * np.arange(1, d + 1)


# --------------------------------------------------------------------------------------------
# chunked elementwise kernels
# --------------------------------------------------------------------------------------------


def _map_chunks(
    y: NDArray[Any],
    kernels: Sequence[Callable[[NDArray[np.float64], NDArray[np.float64]], None]],
) -> NDArray[np.float64]:
    """out[j] = kernels[j](float64(y)) elementwise, in cache-sized chunks. Shape (len(kernels),)+y.shape."""
    flat = np.ascontiguousarray(y).reshape(-1)
    out = np.empty((len(kernels), flat.size), dtype=np.float64)
    yf = np.empty(min(_CHUNK, flat.size), dtype=np.float64)
    for start in range(0, flat.size, _CHUNK):
        stop = min(start + _CHUNK, flat.size)
        yc = yf[: stop - start]
        yc[...] = flat[start:stop]
        for j, kernel in enumerate(kernels):
            kernel(yc, out[j, start:stop])
    return out.reshape((len(kernels),) + y.shape)


class _Scratch:
    """Reusable float64 buffers of up to a chunk (avoids an allocation per chunk).

    Allocated on first use at the size asked for (at most a chunk): a call on a few thousand
    reports does not allocate (and page-fault) 512 KiB buffers. With a ``name`` the buffers
    belong to the thread and are shared by every ``_Scratch`` of that name, so that they also
    outlive the call: a kernel built for each call of an estimator (as the simulation calls it
    on every piece of a block) then allocates nothing. Buffers of one name must only be used
    inside one kernel evaluation at a time (kernels do not call one another).
    """

    def __init__(self, count: int, name: str | None = None) -> None:
        self._count = count
        self._name = name
        self._bufs: list[NDArray[np.float64]] = []

    def get(self, m: int) -> list[NDArray[np.float64]]:
        if self._name is None:
            bufs = self._bufs
        else:
            pools = _THREAD_SCRATCH.__dict__.setdefault("pools", {})
            bufs = pools.get(self._name, [])
        if not bufs or bufs[0].size < m:
            bufs = [np.empty(min(max(m, 1), _CHUNK)) for _ in range(self._count)]
            if self._name is None:
                self._bufs = bufs
            else:
                pools[self._name] = bufs
        return [b[:m] for b in bufs]


#: The thread's named ``_Scratch`` buffers (see ``_Scratch``).
_THREAD_SCRATCH = threading.local()


def _pair_scaling(k: int) -> tuple[int, float]:
    """(e, final) such that scaling each of the floor(k/2) pair factors by 2^-e keeps products finite.

    2^(e floor(k/2)) >= k!, so every partial product of the scaled factors lies between the first
    factor and the final value (the pair factors increase along the loop); ``final`` =
    2^(e floor(k/2)) / k! (rounded once) restores C(y, k). Powers of two scale exactly, so the
    result is bitwise the one of the unscaled product whenever that one does not overflow.
    """
    npairs = k // 2
    e = math.ceil(math.log2(math.factorial(k)) / npairs)
    return e, float(Fraction(2 ** (e * npairs), math.factorial(k)))


def _binomial_dlap_kernel(k: int, c: float) -> Callable[[NDArray[np.float64], NDArray[np.float64]], None]:
    r"""out = C(y,k) - c C(y-1,k-2) by pairing the factors of the falling factorial.

    With w = y(y-k+1) (exact for integer |y| < 2^26), (y-i)(y-k+1+i) = w + i(k-1-i), so
    k! [C(y,k) - c C(y-1,k-2)] = (w - c k(k-1)) prod_{i=1}^{floor(k/2)-1} (w + i(k-1-i)),
    times the middle factor (y - (k-1)/2) when k is odd. For k > ``_DLAP_UNSCALED_MAX_K`` the
    product of |y|^k (|y| <= 2^53) could overflow before the division by k!: each pair factor is
    then scaled by 2^-e (see ``_pair_scaling``), one extra pass over w.
    """
    scratch = _Scratch(2, "dlap-pairs")
    if k > _DLAP_UNSCALED_MAX_K:
        e, scale = _pair_scaling(k)
        sigma = math.ldexp(1.0, -e)
    else:
        e, scale, sigma = 0, 1.0 / math.factorial(k), 1.0
    const = c * (k * (k - 1) * sigma)
    half = (k - 1) / 2.0

    def kernel(yf: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        if k == 0:
            out.fill(1.0)
            return
        if k == 1:
            out[...] = yf
            return
        w, t = scratch.get(yf.shape[0])
        np.subtract(yf, k - 1, out=w)
        np.multiply(w, yf, out=w)
        if e:
            np.multiply(w, sigma, out=w)
        if k % 2:
            np.subtract(yf, half, out=out)
            np.subtract(w, const, out=t)
            np.multiply(out, t, out=out)
        else:
            np.subtract(w, const, out=out)
        for i in range(1, (k - 2) // 2 + 1):
            np.add(w, i * (k - 1 - i) * sigma, out=t)
            np.multiply(out, t, out=out)
        np.multiply(out, scale, out=out)

    return kernel


def _binomial_jets(
    yf: NDArray[np.float64], k: int, sig: float | NDArray[np.float64] = 1.0
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    r"""k! C(y,k) and its first two derivatives in y, from the paired form (real y).

    With m = (k-1)/2, u = y - m, w = u^2 - m^2: prod_i (y - i) = h(w) (k even) or u h(w) (k odd),
    h(w) = prod_{i=0}^{floor(k/2)-1} (w + i(k-1-i)). With h', h'' the w-derivatives,
    even k: f' = 2u h', f'' = 2h' + 4u^2 h''; odd k: f' = h + 2u^2 h', f'' = 6u h' + 4u^3 h''.

    With ``sig`` (a power of two, per element) the input is Y = sig y and the shifts are sig i:
    the outputs are then sig^k f(y), sig^(k-1) f'(y), sig^(k-2) f''(y), scaled exactly.
    """
    u, w, h, h1, h2, q, t = (np.empty_like(yf) for _ in range(7))
    _jets_core(yf, k, sig, u, w, h, h1, h2, q, t)
    u2 = u * u
    if k % 2 == 0:
        return h, 2.0 * u * h1, 2.0 * h1 + 4.0 * u2 * h2
    return u * h, h + 2.0 * u2 * h1, u * (6.0 * h1 + 4.0 * u2 * h2)


def _jets_core(
    yf: NDArray[np.float64], k: int, sig: float | NDArray[np.float64], u: NDArray[np.float64],
    w: NDArray[np.float64], h: NDArray[np.float64], h1: NDArray[np.float64], h2: NDArray[np.float64],
    q: NDArray[np.float64], t: NDArray[np.float64],
) -> None:
    """The loop of :func:`_binomial_jets` into buffers of ``yf``'s size: u, w, h, h', h''.

    ``u = yf - m``, ``w = u^2 - m^2`` and h, h', h'' at w (``q`` and ``t`` are scratch); nothing
    is allocated, so an in-place kernel can run it on every chunk.
    """
    m = (k - 1) / 2.0 * sig
    sig2 = sig * sig
    np.subtract(yf, m, out=u)
    np.multiply(u, u, out=w)
    np.subtract(w, m * m, out=w)
    h.fill(1.0)
    h1.fill(0.0)
    h2.fill(0.0)
    for i in range(k // 2):
        np.add(w, i * (k - 1 - i) * sig2, out=q)
        h2 *= q
        np.multiply(h1, 2.0, out=t)
        h2 += t
        h1 *= q
        h1 += h
        h *= q


def _binomial_jets_scaled(
    yf: NDArray[np.float64], k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int_]]:
    r"""(F, F1, F2, s): C(y,k), C'(y,k), C''(y,k) = 2^(sk) F, 2^(s(k-1)) F1, 2^(s(k-2)) F2 (k >= 1).

    Where |y| + k > 2^L, L = min(500, floor(1000/k)), the products of ``_binomial_jets`` could
    overflow before the division by k!: there each y is scaled by its own power of two 2^-s
    (s = 0 for the small ones) and the jets are taken in Y = 2^-s y with shifts 2^-s i; the
    caller combines them and scales back exactly with ``ldexp``.
    """
    top = min(500, 1000 // k)
    _, ex = np.frexp(np.abs(yf) + k)
    s = np.maximum(ex - top, 0)
    f, f1, f2 = _binomial_jets(np.ldexp(yf, -s), k, np.ldexp(1.0, -s))
    scale = 1.0 / math.factorial(k)
    return f * scale, f1 * scale, f2 * scale, s


def _jets_may_overflow(yf: NDArray[np.float64], k: int) -> bool:
    """Whether max|y| + k exceeds 2^min(500, floor(1000/k)) (see ``_binomial_jets_scaled``)."""
    return yf.size > 0 and max(float(yf.max()), -float(yf.min())) + k > math.ldexp(1.0, min(500, 1000 // k))


def _binomial_laplace_in_place(
    yf: NDArray[np.float64], k: int, b2: float, scale: float, out: NDArray[np.float64],
    bufs: list[NDArray[np.float64]],
) -> None:
    """out = (f - b^2 f'') / k! with f = k! C(y, k): ``_binomial_jets`` (sig = 1) into buffers.

    The loop of ``_binomial_jets`` (:func:`_jets_core`) and the same floating-point operations
    in the same order as its end followed by ``out = (f2 * -b2 + f) * scale`` (products and
    sums swapped only where IEEE arithmetic is commutative), so the values are bitwise the
    same; ``bufs`` are 7 float64 buffers of ``yf``'s size, and nothing is allocated.
    """
    u, w, h, h1, h2, q, t = bufs
    _jets_core(yf, k, 1.0, u, w, h, h1, h2, q, t)
    np.multiply(u, u, out=w)  # u^2 (w is no longer needed)
    w *= 4.0
    w *= h2  # 4 u^2 h''
    np.multiply(h1, 2.0 if k % 2 == 0 else 6.0, out=t)
    t += w  # even k: f'' = 2h' + 4u^2 h''; odd k: f'' = u (6h' + 4u^2 h'')
    if k % 2:
        t *= u
        h *= u  # f = u h
    np.multiply(t, -b2, out=out)
    out += h
    out *= scale


def _binomial_laplace_kernel(k: int, b2: float) -> Callable[[NDArray[np.float64], NDArray[np.float64]], None]:
    """out = C(y,k) - b^2 C''(y,k); chunks with huge |y| go through ``_binomial_jets_scaled``."""
    scale = 1.0 / math.factorial(k)
    scratch = _Scratch(7, "laplace-jets")

    def kernel(yf: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        if k == 0:
            out.fill(1.0)
            return
        if k == 1:  # C''(y, 1) = 0
            out[...] = yf
            return
        if _jets_may_overflow(yf, k):
            f, _, f2, s = _binomial_jets_scaled(yf, k)
            sig = np.ldexp(1.0, -s)
            np.multiply(f2, -(b2 * sig) * sig, out=out)  # 2^(sk) (F - b^2 2^(-2s) F2)
            out += f
            np.ldexp(out, s * k, out=out)
            return
        _binomial_laplace_in_place(yf, k, b2, scale, out, scratch.get(yf.shape[0]))

    return kernel


def _binomial_kernel(k: int, nz: _NoiseModel) -> Callable[[NDArray[np.float64], NDArray[np.float64]], None]:
    if nz.kind == "dlap":
        return _binomial_dlap_kernel(k, nz.s)
    return _binomial_laplace_kernel(k, nz.s)


def _falling(yf: NDArray[np.float64], k: int, shift: int = 0) -> NDArray[np.float64]:
    """C(y - shift, k) by the paired product (no noise term); 0 for k < 0."""
    if k < 0:
        return np.zeros_like(yf)
    if k == 0:
        return np.ones_like(yf)
    z = yf - shift if shift else yf
    w = z * (z - (k - 1))
    out = (z - (k - 1) / 2.0) if k % 2 else np.ones_like(z)
    for i in range(0, k // 2):
        out = out * (w + i * (k - 1 - i))
    return out * (1.0 / math.factorial(k))


def _horner_kernel(coef: NDArray[np.float64]) -> Callable[[NDArray[np.float64], NDArray[np.float64]], None]:
    """out = sum_i coef_i y^i; Horner in z = y^2 when the polynomial is even or odd."""
    coef = np.trim_zeros(np.asarray(coef, dtype=np.float64), "b")
    if coef.size == 0:
        coef = np.zeros(1)
    deg = coef.size - 1
    odd_zero = not np.any(coef[1::2])
    even_zero = deg >= 1 and not np.any(coef[0::2])
    scratch = _Scratch(1, "horner")

    def kernel(yf: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        if deg == 0:
            out.fill(coef[0])
            return
        if odd_zero or even_zero:
            (z,) = scratch.get(yf.shape[0])
            np.multiply(yf, yf, out=z)
            sub = coef[0::2] if odd_zero else coef[1::2]
            out.fill(sub[-1])
            for a in sub[-2::-1]:
                out *= z
                out += a
            if even_zero:
                out *= yf
            return
        out.fill(coef[-1])
        for a in coef[-2::-1]:
            out *= yf
            out += a

    return kernel


def _polyval(coef: NDArray[np.float64], yf: NDArray[Any]) -> NDArray[np.float64]:
    return _map_chunks(yf, [_horner_kernel(coef)])[0]


# --------------------------------------------------------------------------------------------
# Taylor coefficients at x and exact variances
# --------------------------------------------------------------------------------------------


def _binomial_taylor(xf: NDArray[np.float64], k: int, absolute: bool = False) -> NDArray[np.float64]:
    """phi[..., j] = [eta^j] C(x + eta, k): product of the linear factors (x - i + eta)/k!.

    ``absolute``: the same for prod (|x - i| + eta)/k!, which bounds |phi| and its rounding errors.
    """
    phi = np.zeros(xf.shape + (k + 1,))
    phi[..., 0] = 1.0
    for i in range(k):
        a = np.abs(xf - i) if absolute else xf - i
        phi[..., 1:] = phi[..., 1:] * a[..., None] + phi[..., :-1]
        phi[..., 0] *= a
    return phi * (1.0 / math.factorial(k))


def _exact_binomial_taylor(x: float, k: int) -> list[Fraction]:
    """[eta^j] C(x + eta, k), j = 0..k, exactly (x a float, hence a dyadic rational)."""
    X = Fraction(x)
    coef = [Fraction(1)]
    for i in range(k):  # multiply by (X - i) + eta
        a = X - i
        coef = [a * coef[0]] + [a * coef[j] + coef[j - 1] for j in range(1, len(coef))] + [coef[-1]]
    f = math.factorial(k)
    return [v / f for v in coef]


def _taylor_from_coefficients(coef: NDArray[np.float64], xf: NDArray[np.float64]) -> NDArray[np.float64]:
    """phi[..., j] = p^{(j)}(x)/j! = sum_{l>=j} C(l,j) a_l x^{l-j}, each by Horner."""
    d = coef.size - 1
    phi = np.empty(xf.shape + (d + 1,))
    for j in range(d + 1):
        acc = np.full(xf.shape, math.comb(d, j) * coef[d])
        for l in range(d - 1, j - 1, -1):
            acc *= xf
            acc += math.comb(l, j) * coef[l]
        phi[..., j] = acc
    return phi


def _exact_taylor_from_coefficients(coef: NDArray[np.float64], x: float) -> list[Fraction]:
    """p^{(j)}(x)/j!, j = 0..d, exactly."""
    X = Fraction(x)
    A = [Fraction(float(v)) for v in coef]
    d = len(A) - 1
    out = []
    for j in range(d + 1):
        out.append(sum((math.comb(l, j) * A[l] * X ** (l - j) for l in range(j, d + 1)), Fraction(0)))
    return out


@lru_cache(maxsize=64)
def _exact_moment_integers(kind: str, s: float, top: int) -> tuple[tuple[int, ...], int]:
    """(M_j, den) with E eta^j = M_j / den exactly, j = 0..top."""
    mu = _exact_moments(kind, s, top)
    den = math.lcm(*(m.denominator for m in mu))
    return tuple(int(m * den) for m in mu), den


def _exact_variance(phi: Sequence[Fraction], nz: _NoiseModel, debias: bool = True) -> float:
    r"""Var g(x + eta) exactly in rationals (rounded once), from the exact Taylor coefficients of f at x.

    g = T f (``debias``) or g = f; Var = sum_{i,j>=1} a_i a_j mu_{i+j} - (sum_{i>=1} a_i mu_i)^2,
    evaluated in integers over a common denominator.
    """
    d = len(phi) - 1
    if d == 0:
        return 0.0
    S = Fraction(nz.s)
    a = list(phi)
    if debias:
        for i in range(1, d - 1):
            if nz.kind == "dlap":
                corr = sum((math.comb(j, i) * phi[j] for j in range(i + 2, d + 1, 2)), Fraction(0))
                a[i] = phi[i] - 2 * S * corr
            else:
                a[i] = phi[i] - S * (i + 1) * (i + 2) * phi[i + 2]
    den_a = math.lcm(*(v.denominator for v in a[1:]))
    A = [0] + [int(v * den_a) for v in a[1:]]
    MU, den_mu = _exact_moment_integers(nz.kind, nz.s, 2 * d)
    quad = 0
    for i in range(1, d + 1):
        if A[i]:
            quad += A[i] * sum(A[j] * MU[i + j] for j in range(i % 2 or 2, d + 1, 2))
    lin = sum(A[i] * MU[i] for i in range(2, d + 1, 2))
    return _to_float(Fraction(quad * den_mu - lin * lin, (den_a * den_mu) ** 2))


# Relative accuracy the float variance must be certified to; otherwise it is recomputed exactly.
_VARIANCE_RTOL = 1e-12


def _variance_from_taylor(
    phi: NDArray[np.float64],
    nz: _NoiseModel,
    phi_abs: NDArray[np.float64],
    xf: NDArray[np.float64],
    exact_taylor: Callable[[float], list[Fraction]],
    debias: bool = True,
    memo: dict[float, float] | None = None,
) -> NDArray[np.float64]:
    r"""Var g(x + eta) = sum_{i,j>=1} a_i a_j Cov(eta^i, eta^j), a = Taylor coefficients of g at x.

    g = T f (``debias``) or f. Every Cov(eta^i, eta^j) >= 0 (i + j even). For |x| large every
    a_i a_j Cov_ij >= 0 too, so nothing cancels; for x among the roots of f (small x, large k)
    the terms of order c cancel and the variance is O(c^2), lost in float64 at large epsilon.
    The rounding error is at most about (6d + 8) u sum_{ij} |a_i| |a_j| Cov_ij
    <= (6d + 8) u (sum_i |a_i| sqrt(Cov_ii))^2 (Cov is a covariance matrix), with |a_i| bounded by
    the coefficients ``phi_abs`` of prod(|x - i| + eta) pushed through the debiasing with all
    signs positive; values where that bound exceeds ``_VARIANCE_RTOL`` times the variance are
    recomputed exactly in rationals (``_exact_variance``, once per distinct x).
    """
    d = phi.shape[-1] - 1
    if d == 0:
        return np.zeros(phi.shape[:-1])
    cov = _noise_covariance(nz.kind, nz.s, d)[1:, 1:]
    if debias:
        a = _debias_coefficients(phi, nz)[..., 1:]
        a_abs = _debias_coefficients(phi_abs, _NoiseModel(nz.kind, -nz.s))[..., 1:]
    else:
        a, a_abs = phi[..., 1:], phi_abs[..., 1:]
    var = np.einsum("...i,ij,...j->...", a, cov, a)
    with np.errstate(over="ignore", invalid="ignore"):
        # Cov is positive semi-definite, so sum_ij |a_i||a_j| Cov_ij <= (sum_i |a_i| sqrt(Cov_ii))^2
        bound = (6 * d + 8) * 2.0**-53 * (a_abs @ np.sqrt(np.diagonal(cov))) ** 2
        # also where the float route itself overflowed (large k at small x): the exact route decides
        suspect = ~np.isfinite(var) | (np.isfinite(bound) & ~(bound <= _VARIANCE_RTOL * var))
    if suspect.any():
        values, inverse = np.unique(xf[suspect], return_inverse=True)
        memo = {} if memo is None else memo  # shared by the chunks of one call
        for v in values.tolist():
            if v not in memo:
                memo[v] = _exact_variance(exact_taylor(v), nz, debias)
        exact = np.array([memo[v] for v in values.tolist()])
        var[suspect] = exact[inverse.reshape(-1)]
    return var


def _rows_chunked(
    fn: Callable[[NDArray[np.float64]], NDArray[np.float64]], xf: NDArray[Any], rows: int
) -> NDArray[np.float64]:
    """Apply fn (float64 1-D -> 1-D) over chunks of at most ``rows`` elements."""
    flat = np.ascontiguousarray(xf).reshape(-1)
    out = np.empty(flat.size)
    for start in range(0, flat.size, rows):
        out[start : start + rows] = fn(flat[start : start + rows].astype(np.float64))
    return out.reshape(np.shape(xf))


def _rows_for_degree(d: int) -> int:
    return max(1024, 4_000_000 // (d + 1) ** 2)


# --------------------------------------------------------------------------------------------
# public: estimators
# --------------------------------------------------------------------------------------------


def binomial(
    y: ArrayLike, k: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the binomial polynomial C(x, k) from each noisy report y.

    Parameters
    ----------
    y : array_like
        Reports, any shape: integers for ``noise="dlap"``, real numbers for ``noise="laplace"``.
    k : int
        Degree, 0 <= k <= ``MAX_BINOMIAL_K``.
    epsilon : float
        Privacy parameter of the reports. Must be in (0, inf).
    sensitivity : float, default 1
        Sensitivity the reports were released with. Must be in (0, inf).
    noise : {"dlap", "laplace"}, default "dlap"
        y = x + DLap(exp(-epsilon/sensitivity)) or y = x + Lap(sensitivity/epsilon).

    Returns
    -------
    ndarray of float64
        Same shape as ``y``; E[binomial(y)] = C(x, k) elementwise.

    Notes
    -----
    C(y, k) = y(y-1)...(y-k+1)/k! is the polynomial, defined for negative y too. DLap:

    .. math:: g(y) = \binom{y}{k} - c\binom{y-1}{k-2}
              = \frac{\bigl(w - c\,k(k-1)\bigr)\prod_{i=1}^{\lfloor k/2\rfloor-1}(w + i(k-1-i))}{k!}
                \cdot\Bigl(y - \tfrac{k-1}{2}\Bigr)^{[k\ \mathrm{odd}]},\qquad w = y(y-k+1),

    with c = p/(1-p)^2 (exact: the second central difference of C(y,k) is C(y-1,k-2)).
    Laplace: :math:`g(y) = \binom{y}{k} - b^2 \frac{d^2}{dy^2}\binom{y}{k}`, b = sensitivity/epsilon,
    unbiased because :math:`E[L^{2j}] = (2j)!\,b^{2j}` (Hillebrand et al. 2023).
    Evaluated in cache-sized chunks with in-place numpy operations (several hundred million
    reports per second on one core).

    References
    ----------
    Hillebrand et al., "Unbiased Locally Private Estimator for Polynomials of Laplacian
    Variables", KDD 2023.

    Examples
    --------
    Without noise (epsilon huge) the estimate is the truth C(3,2) = 3, C(10,2) = 45; at
    epsilon = 1 it is C(y,2) - c with c = 0.92067:

    >>> binomial([3, 10], 2, epsilon=50.0)
    array([ 3., 45.])
    >>> binomial([3, 10], 2, epsilon=1.0)
    array([ 2.07932641, 44.07932641])
    >>> binomial([3.0], 2, epsilon=1.0, noise="laplace")  # C(3,2) - b^2 with b = 1
    array([2.])
    """
    kk = _check_k(k)
    nz = noise_model(epsilon, sensitivity, noise)
    return _map_chunks(_reports(y, nz.kind), [_binomial_kernel(kk, nz)])[0]


def checked_binomial_kernel(
    y: ArrayLike, k: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> Callable[[NDArray[np.float64], NDArray[np.float64]], None]:
    """The chunk kernel of :func:`binomial` for the reports ``y``, after its checks of them.

    ``kernel(yf, out)`` writes ``binomial`` of the float64 reports ``yf`` into ``out`` (both 1-D,
    of one size): ``binomial(y, ...)`` is this kernel applied to the float64 conversion of each
    chunk of ``y``, so applying it to float64 pieces of ``y`` gives bitwise the same values. For a
    caller evaluating many pieces of validated reports (the simulation): the checks and set-up
    are paid once. The kernel keeps its temporaries in per-thread buffers: call it from one
    thread at a time per kernel kind, not from inside another kernel.

    >>> import numpy as np
    >>> y = np.array([3, 10, -2])
    >>> out = np.empty(3)
    >>> checked_binomial_kernel(y, 2, 1.0)(y.astype(np.float64), out)
    >>> bool(np.array_equal(out, binomial(y, 2, 1.0)))
    True
    """
    kk = _check_k(k)
    nz = noise_model(epsilon, sensitivity, noise)
    _reports(y, nz.kind)
    return _binomial_kernel(kk, nz)


def binomials(
    y: ArrayLike, ks: Sequence[int], epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimates of C(x, k) for several k at once (one pass over the reports).

    Parameters
    ----------
    y, epsilon, sensitivity, noise
        As in :func:`binomial`.
    ks : sequence of int
        Degrees, each in [0, ``MAX_BINOMIAL_K``].

    Returns
    -------
    ndarray of float64, shape (len(ks),) + y.shape
        Row j is ``binomial(y, ks[j], ...)``.

    Notes
    -----
    Same formulas as :func:`binomial`; the reports are converted to float64 once per chunk.

    Examples
    --------
    >>> binomials([4, 6], [1, 2, 3], epsilon=50.0)
    array([[ 4.,  6.],
           [ 6., 15.],
           [ 4., 20.]])
    """
    kk = _check_ks(ks)
    nz = noise_model(epsilon, sensitivity, noise)
    yy = _reports(y, nz.kind)
    return _map_chunks(yy, [_binomial_kernel(k, nz) for k in kk])


def _sum_binomials_histogram(
    flat: NDArray[Any], lo: int, hi: int, kk: tuple[int, ...], nz: _NoiseModel
) -> NDArray[np.float64]:
    """sum_v g_k(y_v) = sum over distinct values u of count(u) g_k(u); counts by bincount."""
    R = hi - lo + 1
    step = max(_HIST_CHUNK, 4 * R)
    counts = np.zeros(R, dtype=np.int64)
    tmp = np.empty(min(step, flat.size), dtype=np.int64)
    for start in range(0, flat.size, step):
        t = tmp[: min(step, flat.size - start)]
        np.subtract(flat[start : start + t.size], lo, out=t, casting="unsafe")
        counts += np.bincount(t, minlength=R)
    present = np.flatnonzero(counts)
    values = present + lo
    weights = counts[present].astype(np.float64)
    g = _map_chunks(values, [_binomial_kernel(k, nz) for k in kk])
    return np.array([math.fsum(weights * g[j]) for j in range(len(kk))])


def sum_binomials(
    y: ArrayLike, ks: Sequence[int], epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimates of S_k = sum_v C(x_v, k) over all reports, for each k in ks, in one pass.

    With y the noisy degrees of a graph, S_1 = 2|E| and S_k is the number of k-stars.

    Parameters
    ----------
    y, epsilon, sensitivity, noise
        As in :func:`binomial`; the sum runs over every entry of ``y``.
    ks : sequence of int
        Degrees, each in [0, ``MAX_BINOMIAL_K``].

    Returns
    -------
    ndarray of float64, shape (len(ks),)
        Equal (up to rounding) to ``binomials(y, ks, ...).sum(axis=1)``.

    Notes
    -----
    DLap reports spanning a moderate range (max - min < 2^20 and not much more than n) are
    first counted, exactly, with ``numpy.bincount``; then
    :math:`\widehat S_k = \sum_v \mathrm{count}(v)\, g_k(v)` over the distinct values v, with
    g_k the estimator of :func:`binomial` (one pass over the data whatever ks is).
    Otherwise one chunked pass accumulates B_j = sum_v C(y_v, j), j <= K = max(ks), from the
    falling factorials y(y-1)...(y-j+1) (pairwise sums inside a chunk, ``math.fsum`` across
    chunks). DLap: by Pascal's rule C(y-1, m) = sum_{i<=m} (-1)^{m-i} C(y, i), so

    .. math:: \widehat{S}_k = B_k - c \sum_{i=0}^{k-2} (-1)^{k-i} B_i.

    Laplace: the pass also carries the second derivatives of the falling factorials, and
    :math:`\widehat S_k = \sum_v \binom{y_v}{k} - b^2 \sum_v \binom{y_v}{k}''`.
    The variance of the sum is the sum of :func:`binomial_variance` (independent reports).

    Examples
    --------
    A star with 3 leaves (degrees 3, 1, 1, 1) has 2|E| = 6 and three 2-stars, one 3-star:

    >>> sum_binomials([3, 1, 1, 1], [1, 2, 3], epsilon=50.0)
    array([6., 3., 1.])
    """
    kk = _check_ks(ks)
    nz = noise_model(epsilon, sensitivity, noise)
    yy = _reports(y, nz.kind)
    K = max(kk)
    flat = np.ascontiguousarray(yy).reshape(-1)
    n = flat.size
    lo = hi = 0.0
    if n:
        lo, hi = flat.min(), flat.max()
    if nz.kind == "dlap" and n:
        lo, hi = int(lo), int(hi)
        if hi - lo < _HIST_MAX_RANGE and hi - lo <= 4 * n:
            return _sum_binomials_histogram(flat, lo, hi, kk, nz)
    # (max|y| + K)^K beyond 2^1000: the falling factorials y(y-1)...(y-j+1) could overflow before
    # the division by j!, so divide by j at every step (F_j = C(y, j) itself) instead
    scaled = K >= 2 and K * math.log2(float(max(hi, -lo)) + K) > 1000
    part_f: list[list[float]] = [[] for _ in range(K + 1)]
    part_d2: list[list[float]] = [[] for _ in range(K + 1)]
    scratch = _Scratch(5)
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        yf, u, F, D1, D2 = scratch.get(stop - start)
        yf[...] = flat[start:stop]
        if K >= 1:
            part_f[1].append(float(yf.sum()))
            F[...] = yf
        if nz.kind == "dlap":
            for j in range(2, K + 1):
                np.subtract(yf, j - 1, out=u)
                np.multiply(F, u, out=F)
                if scaled:
                    F *= 1.0 / j
                part_f[j].append(float(F.sum()))
        else:
            D1.fill(1.0)
            D2.fill(0.0)
            for j in range(2, K + 1):
                np.subtract(yf, j - 1, out=u)
                np.multiply(D2, u, out=D2)
                D2 += D1
                D2 += D1
                np.multiply(D1, u, out=D1)
                D1 += F
                np.multiply(F, u, out=F)
                if scaled:
                    F *= 1.0 / j
                    D1 *= 1.0 / j
                    D2 *= 1.0 / j
                part_f[j].append(float(F.sum()))
                part_d2[j].append(float(D2.sum()))
    div = [1 if scaled else math.factorial(j) for j in range(K + 1)]
    B = [float(n)] + [math.fsum(part_f[j]) / div[j] for j in range(1, K + 1)]
    out = np.empty(len(kk))
    for idx, k in enumerate(kk):
        if k < 2:
            out[idx] = B[k]
        elif nz.kind == "dlap":
            corr = math.fsum((-1) ** (k - i) * B[i] for i in range(k - 1))
            out[idx] = B[k] - nz.s * corr
        else:
            out[idx] = B[k] - nz.s * math.fsum(part_d2[k]) / div[k]
    return out


def polynomial(
    coefficients: ArrayLike,
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
    *,
    noise: Noise = "dlap",
) -> NDArray[np.float64]:
    r"""Unbiased estimate of p(x) = sum_j a_j x^j from each report y.

    Parameters
    ----------
    coefficients : array_like of float, shape (d+1,)
        a_0, ..., a_d, lowest degree first (as ``numpy.polynomial``); finite.
    y, epsilon, sensitivity, noise
        As in :func:`binomial`.

    Returns
    -------
    ndarray of float64, same shape as ``y``.

    Notes
    -----
    The estimator is again a polynomial, evaluated by Horner's rule on its coefficients

    .. math:: \text{DLap: } q_i = a_i - 2c\sum_{m\ge1}\binom{i+2m}{i} a_{i+2m},\qquad
              \text{Laplace: } q_i = a_i - b^2 (i+1)(i+2)\, a_{i+2},

    because :math:`f(y+1) - 2f(y) + f(y-1) = 2\sum_{m\ge1} f^{(2m)}(y)/(2m)!` and the Laplace
    rule is g = f - b^2 f'' (Hillebrand et al. 2023).

    References
    ----------
    Hillebrand et al., KDD 2023 (Laplace noise).

    Examples
    --------
    >>> polynomial([1, 0, 1], [2, 5], epsilon=50.0)  # 1 + x^2 without noise
    array([ 5., 26.])
    >>> polynomial([0, 0, 1], [2.0], epsilon=1.0, noise="laplace")  # y^2 - 2 b^2
    array([2.])
    """
    coef = _check_coefficients(coefficients)
    nz = noise_model(epsilon, sensitivity, noise)
    yy = _reports(y, nz.kind)
    return _polyval(_debias_coefficients(coef, nz), yy)


def power(
    y: ArrayLike, k: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of x^k from each report y.

    Parameters
    ----------
    y, epsilon, sensitivity, noise
        As in :func:`binomial`.
    k : int
        Non-negative exponent.

    Returns
    -------
    ndarray of float64, same shape as ``y``.

    Notes
    -----
    .. math:: \text{DLap: } y^k - 2c\sum_{m\ge1}\binom{k}{2m} y^{k-2m},\qquad
              \text{Laplace: } y^k - b^2 k(k-1) y^{k-2},

    evaluated by Horner's rule in z = y^2. In this monomial form the correction has
    non-negative coefficients, so for y > 0 nothing cancels except the final subtraction
    (expanding in binomials via Stirling numbers would alternate in sign for negative y).

    References
    ----------
    Hillebrand et al., KDD 2023 (Laplace noise).

    Examples
    --------
    >>> power([3, -2], 2, epsilon=50.0)
    array([9., 4.])
    >>> power([3], 3, epsilon=1.0)  # y^3 - 6 c y, c = 0.92067
    array([10.4278753])
    """
    kk = _check_k(k)
    nz = noise_model(epsilon, sensitivity, noise)
    yy = _reports(y, nz.kind)
    coef = np.zeros(kk + 1)
    coef[kk] = 1.0
    return _polyval(_debias_coefficients(coef, nz), yy)


def _monomial_factors(yy: NDArray[Any], exps: tuple[int, ...], nz: _NoiseModel) -> list[NDArray[np.float64]]:
    out = []
    for i, a in enumerate(exps):
        coef = np.zeros(a + 1)
        coef[a] = 1.0
        out.append(_polyval(_debias_coefficients(coef, nz), yy[..., i]))
    return out


def monomial(
    y: ArrayLike,
    exponents: Sequence[int],
    epsilon: float,
    sensitivity: float = 1,
    *,
    noise: Noise = "dlap",
) -> NDArray[np.float64]:
    r"""Unbiased estimate of prod_i x_i^{a_i} over the last axis.

    Parameters
    ----------
    y : array_like, shape (..., n)
        Each row holds n reports with independent noise.
    exponents : sequence of int, length n
        Non-negative exponents a_i.
    epsilon, sensitivity, noise
        As in :func:`binomial`.

    Returns
    -------
    ndarray of float64, shape (...)

    Notes
    -----
    :math:`g(y) = \prod_i P_{a_i}(y_i)` with P_a = :func:`power` (y, a): the noises are
    independent, so E g = prod_i E P_{a_i}(y_i) = prod_i x_i^{a_i}. The n-D operator is the
    tensor product of the 1-D ones, so this is also the unique unbiased estimator.

    Examples
    --------
    >>> monomial([[2, 3]], [2, 1], epsilon=50.0)
    array([12.])
    """
    nz = noise_model(epsilon, sensitivity, noise)
    yy = _reports(y, nz.kind, min_ndim=1)
    exps = _check_exponents(exponents, yy.shape[-1])
    out = np.ones(yy.shape[:-1])
    for factor in _monomial_factors(yy, exps, nz):
        out = out * factor
    return out


# --------------------------------------------------------------------------------------------
# public: exact variances
# --------------------------------------------------------------------------------------------


def binomial_plugin_moments(
    x: ArrayLike, k: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Mean and variance of the biased plug-in C(y, k), y = x + noise, at the true value x.

    The baseline that plugs noisy values into C(., k) has bias E C(y, k) - C(x, k) > 0.

    Notes
    -----
    With the Taylor expansion C(x + eta, k) = sum_j a_j eta^j,
    E = sum_j a_j mu_j and Var = sum_{i,j>=1} a_i a_j Cov(eta^i, eta^j), the noise moments
    and covariances computed exactly in rationals and rounded once.

    Examples
    --------
    >>> mean, var = binomial_plugin_moments([10], 2, epsilon=1.0)
    >>> round(float(mean[0] - 45), 6)  # E C(y, 2) - C(x, 2) = E[eta^2] / 2 = c
    0.920674
    """
    nz = noise_model(epsilon, sensitivity, noise)
    k = _check_k(k)
    xf = _reports(x, nz.kind, name="x").astype(np.float64)
    phi, phi_abs = _binomial_taylor_pair(xf, k)
    mu = np.array([_to_float(m) for m in _exact_moments(nz.kind, nz.s, k)])
    mean = phi @ mu
    var = _variance_from_taylor(phi, nz, phi_abs, xf, lambda v: _exact_binomial_taylor(v, k), debias=False)
    return mean, var


def binomial_variance(
    x: ArrayLike, k: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Exact variance of :func:`binomial` (y, k) when the true value is x.

    Parameters
    ----------
    x : array_like
        True values: integers for ``noise="dlap"``, real numbers for ``noise="laplace"``.
    k, epsilon, sensitivity, noise
        As in :func:`binomial`.

    Returns
    -------
    ndarray of float64, same shape as ``x``.

    Notes
    -----
    Write g(x + eta) = sum_j a_j(x) eta^j (Taylor coefficients of the estimator at x, obtained
    from those of C(x + eta, k), a product of linear factors in eta). Because E g = f(x),

    .. math:: \operatorname{Var} g(y) = \sum_{i,j\ge 1} a_i a_j
              \bigl(\mu_{i+j} - \mu_i\mu_j\bigr),

    with the noise moments :math:`\mu_{2m} = \sum_n c^n \sum_i (-1)^i\binom{2n}{i}(n-i)^{2m}`
    (DLap, from the generating function 1/(1 - c(2\sinh(t/2))^2)) or
    :math:`\mu_{2m} = (2m)!\,b^{2m}` (Laplace). The covariances are exact rationals rounded
    once; for |x| large every term is non-negative, so nothing cancels even for x ~ 10^7,
    k ~ 10. For x among the roots of C(., k) (0 <= x <= k-1) the terms of order c cancel
    (C(x+-1, k) = C(x, k) = 0 there) and the variance is O(c^2): where a rounding-error bound
    exceeds 1e-12 of the computed value, the variance is recomputed exactly in rational
    arithmetic, once per distinct x, and rounded once (about 1e-16 relative at any epsilon).

    Examples
    --------
    C(y, 1) = y has variance 2c = Var eta (DLap) and 2b^2 (Laplace):

    >>> binomial_variance([5], 1, epsilon=1.0)
    array([1.84134719])
    >>> binomial_variance([5.0], 1, epsilon=1.0, noise="laplace")
    array([2.])
    """
    kk = _check_k(k)
    nz = noise_model(epsilon, sensitivity, noise)
    xx = _reports(x, nz.kind, name="x")
    memo: dict[float, float] = {}
    return _rows_chunked(lambda xf: _binomial_variance_array(xf, kk, nz, memo), xx, _rows_for_degree(kk))


def _binomial_taylor_pair(xf: NDArray[np.float64], k: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Taylor coefficients of C(x + eta, k) and of prod(|x - i| + eta)/k!.

    Outside 0 < x < k-1 every factor x - i has the same sign, so the second is |first|.
    """
    phi = _binomial_taylor(xf, k)
    phi_abs = np.abs(phi)
    mid = (xf > 0) & (xf < k - 1)
    if mid.any():
        phi_abs[mid] = _binomial_taylor(xf[mid], k, absolute=True)
    return phi, phi_abs


def _binomial_variance_array(
    xf: NDArray[np.float64], k: int, nz: _NoiseModel, memo: dict[float, float] | None = None
) -> NDArray[np.float64]:
    phi, phi_abs = _binomial_taylor_pair(xf, k)
    return _variance_from_taylor(phi, nz, phi_abs, xf, lambda v: _exact_binomial_taylor(v, k), memo=memo)


def polynomial_variance(
    coefficients: ArrayLike,
    x: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
    *,
    noise: Noise = "dlap",
) -> NDArray[np.float64]:
    r"""Exact variance of :func:`polynomial` (coefficients, y) when the true value is x.

    Parameters
    ----------
    coefficients, epsilon, sensitivity, noise
        As in :func:`polynomial`.
    x : array_like
        True values (integers for DLap).

    Returns
    -------
    ndarray of float64, same shape as ``x``.

    Notes
    -----
    As in :func:`binomial_variance`, from the Taylor coefficients of p at x
    (:math:`p^{(j)}(x)/j! = \sum_l \binom{l}{j} a_l x^{l-j}`, each by Horner's rule).

    Examples
    --------
    >>> polynomial_variance([0, 2], [3], epsilon=1.0, noise="laplace")  # Var(2y) = 4 * 2 b^2
    array([8.])
    """
    coef = _check_coefficients(coefficients)
    nz = noise_model(epsilon, sensitivity, noise)
    xx = _reports(x, nz.kind, name="x")
    rows = _rows_for_degree(coef.size - 1)
    memo: dict[float, float] = {}
    return _rows_chunked(lambda xf: _polynomial_variance_array(coef, xf, nz, memo), xx, rows)


def _polynomial_variance_array(
    coef: NDArray[np.float64],
    xf: NDArray[np.float64],
    nz: _NoiseModel,
    memo: dict[float, float] | None = None,
) -> NDArray[np.float64]:
    phi = _taylor_from_coefficients(coef, xf)
    # a monomial a_l x^l has Taylor coefficients C(l,j) a_l x^(l-j): no sums, |phi| bounds itself
    monomial = np.count_nonzero(coef) <= 1
    phi_abs = np.abs(phi) if monomial else _taylor_from_coefficients(np.abs(coef), np.abs(xf))
    exact_taylor = lambda v: _exact_taylor_from_coefficients(coef, v)  # noqa: E731
    return _variance_from_taylor(phi, nz, phi_abs, xf, exact_taylor, memo=memo)


def power_variance(
    x: ArrayLike, k: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Exact variance of :func:`power` (y, k) when the true value is x.

    Notes
    -----
    :func:`polynomial_variance` with Taylor coefficients :math:`\binom{k}{j} x^{k-j}`.

    Examples
    --------
    For k = 2 (Laplace): Var(y^2 - 2b^2) = 4 x^2 (2b^2) + 24 b^4 - (2b^2)^2:

    >>> power_variance([3.0], 2, epsilon=1.0, noise="laplace")
    array([92.])
    """
    kk = _check_k(k)
    coef = np.zeros(kk + 1)
    coef[kk] = 1.0
    return polynomial_variance(coef, x, epsilon, sensitivity, noise=noise)


def _power_variance_array(xf: NDArray[np.float64], k: int, nz: _NoiseModel) -> NDArray[np.float64]:
    coef = np.zeros(k + 1)
    coef[k] = 1.0
    memo: dict[float, float] = {}
    return _rows_chunked(lambda z: _polynomial_variance_array(coef, z, nz, memo), xf, _rows_for_degree(k))


def monomial_variance(
    x: ArrayLike,
    exponents: Sequence[int],
    epsilon: float,
    sensitivity: float = 1,
    *,
    noise: Noise = "dlap",
) -> NDArray[np.float64]:
    r"""Exact variance of :func:`monomial` (y, exponents) when the true values are x (last axis).

    Notes
    -----
    With independent factors g_i of mean f_i = x_i^{a_i} and variance V_i,
    :math:`\operatorname{Var}\prod_i g_i = \prod_i (f_i^2 + V_i) - \prod_i f_i^2`, accumulated
    without cancellation as :math:`R_j = (f_j^2 + V_j) R_{j-1} + V_j \prod_{i<j} f_i^2`.

    Examples
    --------
    >>> monomial_variance([[2.0, 3.0]], [1, 1], epsilon=1.0, noise="laplace")  # 2*9 + 2*4 + 2*2
    array([30.])
    """
    nz = noise_model(epsilon, sensitivity, noise)
    xx = _reports(x, nz.kind, name="x", min_ndim=1)
    exps = _check_exponents(exponents, xx.shape[-1])
    xf = xx.astype(np.float64)
    R = np.zeros(xx.shape[:-1])
    F = np.ones(xx.shape[:-1])
    for i, a in enumerate(exps):
        f2 = xf[..., i] ** (2 * a)
        V = _power_variance_array(xf[..., i], a, nz)
        R = (f2 + V) * R + V * F
        F = F * f2
    return R


# --------------------------------------------------------------------------------------------
# public: unbiased variance estimates
# --------------------------------------------------------------------------------------------


def binomial_variance_estimate(
    y: ArrayLike, k: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of Var[:func:`binomial` (y, k)] from the reports themselves.

    Parameters
    ----------
    y, k, epsilon, sensitivity, noise
        As in :func:`binomial`.

    Returns
    -------
    ndarray of float64, same shape as ``y``; never negative.

    Notes
    -----
    The unbiased estimate of Var g is :math:`g^2 - T[f^2]`. For the 1-D operators this
    simplifies, with no cancellation, to

    .. math:: \text{DLap: } c\bigl[(f(y+1)-f(y))^2 + (f(y)-f(y-1))^2\bigr]
              + c^2\bigl(f(y+1) - 2f(y) + f(y-1)\bigr)^2,
              \qquad \text{Laplace: } 2b^2 f'(y)^2 + b^4 f''(y)^2,

    and for f = C(y, k) the differences are C(y, k-1), C(y-1, k-1) and C(y-1, k-2).

    Examples
    --------
    >>> binomial_variance_estimate([5], 1, epsilon=1.0)  # = Var eta = 2c exactly
    array([1.84134719])
    """
    kk = _check_k(k)
    nz = noise_model(epsilon, sensitivity, noise)
    yy = _reports(y, nz.kind)

    def fn(yf: NDArray[np.float64]) -> NDArray[np.float64]:
        if kk == 0:
            return np.zeros_like(yf)
        if nz.kind == "dlap":
            fwd = _falling(yf, kk - 1)
            bwd = _falling(yf, kk - 1, shift=1)
            sec = _falling(yf, kk - 2, shift=1)
            return nz.s * (fwd * fwd + bwd * bwd) + (nz.s * sec) ** 2
        if _jets_may_overflow(yf, kk):
            _, f1, f2, s = _binomial_jets_scaled(yf, kk)
            f1 = np.ldexp(f1, s * (kk - 1))
            f2 = np.ldexp(f2, s * (kk - 2))
        else:
            _, f1, f2 = _binomial_jets(yf, kk)
            scale = 1.0 / math.factorial(kk)
            f1 = f1 * scale
            f2 = f2 * scale
        return 2.0 * nz.s * f1 * f1 + (nz.s * f2) ** 2

    return _rows_chunked(fn, yy, _CHUNK)


def polynomial_variance_estimate(
    coefficients: ArrayLike,
    y: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
    *,
    noise: Noise = "dlap",
) -> NDArray[np.float64]:
    r"""Unbiased estimate of Var[:func:`polynomial` (coefficients, y)] from the reports.

    Notes
    -----
    As in :func:`binomial_variance_estimate`; the differences p(y+1) - p(y), p(y) - p(y-1) and
    p(y+1) - 2p(y) + p(y-1) are evaluated from their own coefficients (sums of
    :math:`\binom{j}{i} a_j`), never as differences of large values.

    Examples
    --------
    >>> polynomial_variance_estimate([0, 3], [7], epsilon=1.0, noise="laplace")  # 9 * 2 b^2
    array([18.])
    """
    coef = _check_coefficients(coefficients)
    nz = noise_model(epsilon, sensitivity, noise)
    yy = _reports(y, nz.kind)
    return _polynomial_variance_estimate(coef, yy, nz)


def _polynomial_variance_estimate(
    coef: NDArray[np.float64], yy: NDArray[Any], nz: _NoiseModel
) -> NDArray[np.float64]:
    if nz.kind == "dlap":
        fwd = _polyval(_difference_coefficients(coef, +1), yy)
        bwd = _polyval(_difference_coefficients(coef, -1), yy)
        sec = _polyval(_central_difference_coefficients(coef), yy)
        # c (fwd^2 + bwd^2) as (sqrt(c) fwd)^2 + (sqrt(c) bwd)^2: fwd^2 alone may overflow where
        # the product fits (c ~ e^-700 at epsilon 700: y = 1e9, k = 20 gives ~7.9e40, not inf)
        r = math.sqrt(nz.s)
        fwd *= r
        bwd *= r
        return fwd * fwd + bwd * bwd + (nz.s * sec) ** 2
    d1 = _derivative_coefficients(coef)
    f1 = _polyval(d1, yy) * math.sqrt(2.0 * nz.s)  # 2 b^2 f1^2 without overflowing f1^2
    f2 = _polyval(_derivative_coefficients(d1) if d1.size > 1 else np.zeros(1), yy)
    return f1 * f1 + (nz.s * f2) ** 2


def power_variance_estimate(
    y: ArrayLike, k: int, epsilon: float, sensitivity: float = 1, *, noise: Noise = "dlap"
) -> NDArray[np.float64]:
    r"""Unbiased estimate of Var[:func:`power` (y, k)] from the reports.

    Notes
    -----
    :func:`polynomial_variance_estimate` with f = y^k.

    Examples
    --------
    >>> power_variance_estimate([3.0], 2, epsilon=1.0, noise="laplace")  # 2 (2y)^2 + 2^2
    array([76.])
    """
    kk = _check_k(k)
    coef = np.zeros(kk + 1)
    coef[kk] = 1.0
    return polynomial_variance_estimate(coef, y, epsilon, sensitivity, noise=noise)


def monomial_variance_estimate(
    y: ArrayLike,
    exponents: Sequence[int],
    epsilon: float,
    sensitivity: float = 1,
    *,
    noise: Noise = "dlap",
) -> NDArray[np.float64]:
    r"""Unbiased estimate of Var[:func:`monomial` (y, exponents)] from the reports.

    Notes
    -----
    :math:`g^2 - T[f^2]` with :math:`T[f^2] = \prod_i T[y_i^{2a_i}] = \prod_i (g_i^2 - \hat V_i)`,
    :math:`\hat V_i` the 1-D estimates, accumulated as
    :math:`R_j = g_j^2 R_{j-1} + \hat V_j \prod_{i<j}(g_i^2 - \hat V_i)`
    (= :math:`\prod_{i\le j} g_i^2 - \prod_{i\le j}(g_i^2 - \hat V_i)`).

    Examples
    --------
    >>> monomial_variance_estimate([[2.0, 3.0]], [1, 1], epsilon=1.0, noise="laplace")
    array([22.])
    """
    nz = noise_model(epsilon, sensitivity, noise)
    yy = _reports(y, nz.kind, min_ndim=1)
    exps = _check_exponents(exponents, yy.shape[-1])
    factors = _monomial_factors(yy, exps, nz)
    R = np.zeros(yy.shape[:-1])
    H = np.ones(yy.shape[:-1])
    for i, a in enumerate(exps):
        coef = np.zeros(a + 1)
        coef[a] = 1.0
        V = _polynomial_variance_estimate(coef, yy[..., i], nz)
        G = factors[i] ** 2
        R = G * R + V * H
        H = H * (G - V)
    return R
