"""The discrete Laplace mechanism (two-sided geometric mechanism)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_integer_reports, check_rng, check_sensitivity
from ._common import _real_points
from .laplace import _sign_bit_pieces
from .secure import sample_dlap_exact

__all__ = ["DiscreteLaplace", "sample_dlap"]

# Largest value numpy's standard_exponential can return: its ziggurat's base layer draws
# r - log1p(-U) with r = 7.69711747013104972 and U = k / 2^53 <= 1 - 2^-53, so E <= r + 53 ln 2.
_MAX_STD_EXPONENTIAL = 7.69711747013104972 + 53.0 * math.log(2.0)  # 44.4339...
# The fast sampler refuses scales whose noise could reach this: beyond 2^52 the float
# (E - c0) / t no longer resolves every integer (beyond 2^53 it holds only even ones, and
# the released value would carry the parity of the input).
_FAST_NOISE_LIMIT = 2.0**52


class DiscreteLaplace:
    r"""Discrete Laplace noise DLap(p) on the integers, p = exp(-epsilon / sensitivity).

    Parameters
    ----------
    epsilon : float
        Privacy parameter. Must be in (0, inf).
    sensitivity : float, default 1
        How far one neighbouring change moves the released integer (a degree under edge-LDP
        has sensitivity 1). Must be in (0, inf).

    Notes
    -----
    .. math::

        P[\eta = k] = \frac{1-p}{1+p} p^{|k|},\qquad
        \operatorname{Var}\eta = \frac{2p}{(1-p)^2},\qquad
        E|\eta| = \frac{2p}{1-p^2}.

    **Privacy.** For integer inputs x, x' with |x - x'| <= sensitivity,
    P[x + eta = z] / P[x' + eta = z] = p^{|z-x| - |z-x'|} <= p^{-sensitivity} = e^epsilon,
    so releasing x + eta is epsilon-DP.

    **Sampling.** By inversion with one standard exponential E and one sign bit per value:
    P[|eta| >= k] = 2 p^k / (1 + p) for k >= 1, so |eta| = floor((E - ln((1+p)/2)) / ln(1/p)),
    and the sign is +-1 with probability 1/2 (eta = 0 either way).
    This has the law above up to floating-point rounding of E; it is the fast
    path for simulation, taken when a seed or Generator is passed as ``rng``. Without ``rng``
    (the way a node's device calls it) ``sample`` and ``randomize`` use the exact
    integer-arithmetic sampler driven by the OS CSPRNG (floating-point samplers leak, Mironov
    2012), as every randomizer of the package does; ``secure=True`` / ``secure=False`` choose
    explicitly (or use :class:`~ldpgraph.mechanisms.SecureDiscreteLaplace`, with its timing
    pool, on a device).

    **Limits of the fast sampler.** numpy's exponential never exceeds
    E_max = 7.697... + 53 ln 2 = 44.43..., so the fast sampler never draws
    :math:`|\eta| > B = \lfloor (E_{max} + \ln 2) / (\epsilon/\Delta) \rfloor
    \approx 45.1\,\Delta/\epsilon` (``fast_noise_bound``): an output beyond x' + B is then
    impossible on x but possible on a neighbour x', so the fast sampler is only
    (epsilon, delta)-DP with delta of the order of P[|eta| > B] ~ 2 e^{-44.4} ~ 5e-20
    (``fast_tail_mass``), far below what any audit can sample (``ldpgraph.audit`` reports it
    for this mechanism) -- the exact sampler has no such bound. Where B would
    exceed 2^52 (epsilon / sensitivity < ~1e-14) the float (E - c0) / t no longer resolves every
    integer (beyond 2^53 only even ones: the output would carry the input's parity), and the
    fast sampler refuses with a ``ValueError`` pointing to ``secure=True`` / the exact sampler.
    Rounding E (53-bit floats) also perturbs the mass of single integers by a relative
    ~2^-50 / (epsilon / sensitivity), comparable to epsilon itself below epsilon/sensitivity ~ 1e-7:
    another reason to deploy the exact sampler.

    Examples
    --------
    >>> mech = DiscreteLaplace(epsilon=1.0)
    >>> round(mech.p, 6), round(mech.variance, 6)
    (0.367879, 1.841347)
    >>> mech.randomize([3, 10], rng=0).dtype  # seeded: the fast sampler (simulation)
    dtype('int64')
    >>> mech.randomize([3, 10]).shape  # no rng: the exact sampler on the OS CSPRNG
    (2,)
    """

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        self._t = self.epsilon / self.sensitivity  # = -ln p, kept exact for small epsilon
        if self._t < 1e-150:
            raise ValueError(
                f"epsilon / sensitivity = {self._t!r} is too small: the noise variance overflows float64"
            )
        self.p = math.exp(-self._t)

    def __repr__(self) -> str:
        return f"DiscreteLaplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r})"

    @property
    def fast_noise_bound(self) -> int:
        """Largest |eta| the fast (numpy) sampler can draw: floor((E_max - ln((1+p)/2)) / t)."""
        # the sampler's own float operations on the largest E (monotone, so this is its maximum)
        e = (_MAX_STD_EXPONENTIAL - (math.log1p(self.p) - math.log(2.0))) * (1.0 / self._t)
        return int(min(e, 2.0**1000))

    @property
    def fast_tail_mass(self) -> float:
        """P[|eta| > fast_noise_bound] under the exact law: the delta of the fast sampler."""
        return float(self.sf(self.fast_noise_bound)[()] * 2.0)

    @property
    def variance(self) -> float:
        """Var eta = 2p / (1-p)^2 = 1 / (2 sinh^2(epsilon / (2 sensitivity)))."""
        if self._t > 1400.0:
            return 0.0
        s = math.sinh(self._t / 2.0)
        return 1.0 / (2.0 * s * s)

    @property
    def expected_abs(self) -> float:
        """E|eta| = 2p / (1 - p^2) = 1 / sinh(epsilon / sensitivity)."""
        return 0.0 if self._t > 700.0 else 1.0 / math.sinh(self._t)

    def _log_norm(self) -> float:
        # ln((1-p)/(1+p)) = ln(tanh(t/2)), accurate for small and large t
        return math.log(math.tanh(self._t / 2.0))

    def pmf(self, k: ArrayLike) -> NDArray[np.float64]:
        """P[eta = k] = (1-p)/(1+p) p^|k| for integer k (0 at non-integers)."""
        k = _real_points(k, "k")
        with np.errstate(over="ignore"):  # t|k| -> inf far in the tail: pmf 0
            out = np.exp(self._log_norm() - self._t * np.abs(k))
        return np.where(k == np.floor(k), out, 0.0)

    def logpmf(self, k: ArrayLike) -> NDArray[np.float64]:
        """ln P[eta = k] (-inf at non-integers)."""
        k = _real_points(k, "k")
        with np.errstate(over="ignore"):  # t|k| -> inf far in the tail: log-pmf -inf
            out = self._log_norm() - self._t * np.abs(k)
        return np.where(k == np.floor(k), out, -np.inf)

    def cdf(self, k: ArrayLike) -> NDArray[np.float64]:
        """P[eta <= k]: 1 - p^(m+1)/(1+p) for m = floor(k) >= 0, p^(-m)/(1+p) for m < 0."""
        m = np.floor(_real_points(k, "k"))
        one_plus_p = 1.0 + self.p
        with np.errstate(over="ignore"):
            upper = 1.0 - np.exp(-self._t * (m + 1.0)) / one_plus_p
            lower = np.exp(self._t * m) / one_plus_p
        return np.where(m >= 0, upper, lower)

    def sf(self, k: ArrayLike) -> NDArray[np.float64]:
        """P[eta > k] (accurate in the upper tail)."""
        m = np.floor(_real_points(k, "k"))
        one_plus_p = 1.0 + self.p
        with np.errstate(over="ignore"):
            upper = np.exp(-self._t * (m + 1.0)) / one_plus_p
            lower = 1.0 - np.exp(self._t * m) / one_plus_p
        return np.where(m >= 0, upper, lower)

    def sample(
        self, size: int | tuple[int, ...] | None = None, *, rng=None, secure: bool | None = None
    ) -> NDArray[np.int64]:
        """Draw noise eta ~ DLap(p) as int64 (a 0-d draw is returned as ``numpy.int64``).

        Parameters
        ----------
        size : int or tuple of int, optional
        rng : Generator, seed or None
            A seed or Generator selects the fast floating-point sampler (seeded simulation).
        secure : bool, optional
            True: the exact integer-arithmetic sampler driven by the operating system's CSPRNG
            (:func:`~ldpgraph.mechanisms.secure.sample_dlap_exact`), for deployment on a node's
            device; ``rng`` must then be None. False: the fast sampler (with ``rng=None``, on a
            fresh OS-seeded numpy Generator). Default: secure exactly when no ``rng`` is given,
            so a caller that passes nothing is secure. The guarantee is for the exact rational
            value of the float ``epsilon / sensitivity``; use
            :class:`~ldpgraph.mechanisms.SecureDiscreteLaplace` with ``epsilon="0.1"`` for an
            exactly decimal epsilon.
        """
        if secure is None:
            secure = rng is None
        elif not isinstance(secure, (bool, np.bool_)):
            raise TypeError(f"secure must be a bool or None, got {type(secure).__name__} {secure!r}")
        if secure:
            if rng is not None:
                raise ValueError(
                    "secure=True draws from the OS CSPRNG, which cannot be seeded: rng must be None "
                    "(or pass secure=False with rng for a seeded simulation)"
                )
            scale = Fraction(self.sensitivity) / Fraction(self.epsilon)
            out = np.asarray(sample_dlap_exact(scale.numerator, scale.denominator, size), dtype=np.int64)
            return out[()] if size is None else out
        if self.fast_noise_bound >= _FAST_NOISE_LIMIT:
            raise ValueError(
                f"epsilon / sensitivity = {self._t!r} is too small to sample with the fast sampler: "
                f"its noise reaches {self.fast_noise_bound:.3g} >= 2**52, where float64 no longer holds "
                "every integer (the output would carry the input's parity); use the exact sampler: "
                "sample(...) without rng (or secure=True), SecureDiscreteLaplace or "
                "ldpgraph.mechanisms.secure.sample_dlap_exact (seedable)"
            )
        gen = check_rng(rng)
        shape = () if size is None else size
        out = sample_dlap(gen, shape, self._t, self.p)
        return out[()] if size is None else out

    def randomize(self, values: ArrayLike, *, rng=None, secure: bool | None = None) -> NDArray[np.int64]:
        """The node-side randomizer: values + eta, elementwise, as int64.

        ``values`` must be integers (float arrays with whole values are accepted). ``rng`` and
        ``secure`` as for :meth:`sample`: without ``rng`` the noise comes from the exact
        sampler and the OS CSPRNG (deployment); a seed or Generator gives the fast seeded
        sampler (simulation).
        """
        x = check_integer_reports(values, "values")
        return x + self.sample(x.shape, rng=rng, secure=secure)


def sample_dlap(
    gen: np.random.Generator,
    shape,
    t: float,
    p: float,
    *,
    out: NDArray[np.int64] | None = None,
    scratch: NDArray[np.float64] | None = None,
) -> NDArray[np.int64]:
    """DLap(e^-t) noise by inversion of |eta| from one standard exponential and a sign bit.

    With E ~ Exp(1) and c0 = ln((1+p)/2) <= 0, P[floor((E - c0)/t) >= k] = P[E >= c0 + k t]
    = e^{-c0} p^k = 2 p^k / (1+p) for k >= 1 (and 1 for k = 0), which is the law of |eta|.

    ``out`` (int64) and ``scratch`` (float64, for the exponentials), C-contiguous of ``shape``,
    are filled in place (signs applied piece by piece) instead of allocating: same draws, same
    values. One draw (``shape`` () or (1,): a node's single noise, drawn node after node) takes
    the same draws as Python scalars, the same value without a dozen numpy calls on 1-element
    arrays: ``gen.bytes(1)`` is the low byte of one ``gen.integers(0, 2**32, dtype=uint32)``
    (numpy's ``Generator.bytes`` draws little-endian uint32s), and the sign is its most
    significant bit, the first bit ``unpackbits`` gives (tests/mechanisms: the two paths agree).
    """
    if out is None and (shape == () or shape == (1,) or shape == 1):
        e1 = gen.standard_exponential()
        e1 -= math.log1p(p) - math.log(2.0)
        e1 *= 1.0 / t
        m = int(e1)  # truncation == floor: e1 > 0
        value = m if int(gen.integers(0, 2**32, dtype=np.uint32)) & 0x80 else -m
        return np.array(value if shape == () else [value], dtype=np.int64)
    e = gen.standard_exponential(shape) if scratch is None else gen.standard_exponential(out=scratch)
    e -= math.log1p(p) - math.log(2.0)
    e *= 1.0 / t  # < 2^52 (checked by the caller): every integer is representable
    if out is not None:
        np.copyto(out, e, casting="unsafe")  # truncation == floor: e > 0
        flat = out.reshape(-1)
        for lo, hi, bits in _sign_bit_pieces(gen, flat.size):
            signs = bits.view(np.int8)
            signs *= np.int8(2)
            signs -= np.int8(1)
            np.multiply(flat[lo:hi], signs, out=flat[lo:hi])
        return out
    out = e.astype(np.int64)  # truncation == floor: e > 0
    n = out.size
    signs = np.unpackbits(np.frombuffer(gen.bytes((n + 7) // 8), dtype=np.uint8), count=n)
    signs = signs.view(np.int8).reshape(out.shape)
    signs *= np.int8(2)
    signs -= np.int8(1)
    np.multiply(out, signs, out=out)
    return out
