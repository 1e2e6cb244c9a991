"""The (continuous) Laplace mechanism."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_real_reports, check_rng, check_sensitivity
from ._common import _real_points

__all__ = ["Laplace", "sample_symmetric_exponential"]


class Laplace:
    r"""Laplace noise Lap(b) on the real line, scale b = sensitivity / epsilon.

    Parameters
    ----------
    epsilon : float
        Privacy parameter. Must be in (0, inf).
    sensitivity : float, default 1
        Largest change of the released value between neighbouring inputs. Must be in (0, inf).

    Attributes
    ----------
    scale : float
        b = sensitivity / epsilon.

    Notes
    -----
    .. math::

        f(z) = \frac{1}{2b} e^{-|z|/b},\qquad
        F(z) = \tfrac12 e^{z/b}\ (z < 0),\quad 1 - \tfrac12 e^{-z/b}\ (z \ge 0),\qquad
        \operatorname{Var} = 2b^2,\qquad E|X| = b.

    **Privacy.** For |x - x'| <= sensitivity, f(z - x) / f(z - x') = e^{(|z-x'| - |z-x|)/b}
    <= e^{sensitivity / b} = e^epsilon.

    **Sampling.** X = S * b * E with E ~ Exp(1) (numpy's ziggurat) and an independent fair
    sign S taken from random bytes: |X| / b is Exp(1) and the sign is symmetric, which is the
    Laplace law. This is about twice as fast as ``Generator.laplace``
    (``scripts/bench_mechanisms.py``). Floating-point samplers are for simulation; a deployed
    randomizer needs a snapping or integer-arithmetic implementation (Mironov 2012).

    Examples
    --------
    >>> mech = Laplace(epsilon=0.5)
    >>> mech.scale, mech.variance, mech.expected_abs
    (2.0, 8.0, 2.0)
    >>> float(mech.cdf(0.0))
    0.5
    >>> mech.randomize([1.0, 2.5], rng=0).shape
    (2,)
    """

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        self.scale = self.sensitivity / self.epsilon

    def __repr__(self) -> str:
        return f"Laplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r})"

    @property
    def variance(self) -> float:
        """Var X = 2 b^2."""
        return 2.0 * self.scale * self.scale

    @property
    def expected_abs(self) -> float:
        """E|X| = b."""
        return self.scale

    def pdf(self, z: ArrayLike) -> NDArray[np.float64]:
        """Density exp(-|z|/b) / (2b)."""
        z = _real_points(z, "z")
        return np.exp(-np.abs(z) / self.scale) / (2.0 * self.scale)

    def logpdf(self, z: ArrayLike) -> NDArray[np.float64]:
        """Log-density -|z|/b - ln(2b)."""
        z = _real_points(z, "z")
        return -np.abs(z) / self.scale - math.log(2.0 * self.scale)

    def cdf(self, z: ArrayLike) -> NDArray[np.float64]:
        """P[X <= z] (accurate in the lower tail)."""
        z = _real_points(z, "z")
        half_tail = 0.5 * np.exp(-np.abs(z) / self.scale)
        return np.where(z < 0, half_tail, 1.0 - half_tail)

    def sf(self, z: ArrayLike) -> NDArray[np.float64]:
        """P[X > z] (accurate in the upper tail)."""
        return self.cdf(-_real_points(z, "z"))

    def sample(
        self, size: int | tuple[int, ...] | None = None, *, rng=None
    ) -> NDArray[np.float64]:
        """Draw Laplace noise as float64 (a 0-d draw is returned as ``numpy.float64``).

        ``rng`` is a seed, a Generator or None (a fresh OS-seeded numpy Generator). Continuous
        noise has no exact secure sampler: unlike the discrete randomizers, which use the exact
        sampler on the OS CSPRNG when no ``rng`` is given, this mechanism is for simulation
        only; deploy :class:`~ldpgraph.mechanisms.DiscreteLaplace` on integer releases.
        """
        gen = check_rng(rng)
        out = sample_symmetric_exponential(gen, () if size is None else size, self.scale)
        return out[()] if size is None else out

    def randomize(self, values: ArrayLike, *, rng=None) -> NDArray[np.float64]:
        """The randomizer: values + X elementwise, as float64 (values must be finite reals).

        Floating-point noise for simulation, also without ``rng`` (see :meth:`sample`).
        """
        x = check_real_reports(values, "values")
        return x + self.sample(x.shape, rng=rng)


def _random_signs(gen: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """Independent fair signs +-0.5 (float64) of the given shape, one random bit per value."""
    n = math.prod(shape)
    bits = np.unpackbits(np.frombuffer(gen.bytes((n + 7) // 8), dtype=np.uint8), count=n)
    signs = bits.astype(np.float64)
    signs -= 0.5
    return signs.reshape(shape)


#: Values per piece when random sign bits are applied in place (a piece's temporaries, <= 64 KiB,
#: are recycled by malloc: above glibc's 128 KiB mmap threshold each would be mmap-ed and faulted in).
_SIGN_PIECE = 1 << 13


def _sign_bit_pieces(gen: np.random.Generator, n: int):
    """Yield ``(lo, hi, bits)``: the sign bits of values lo..hi-1 of the ``gen.bytes`` draw of n bits.

    The bits are those of ``np.unpackbits(bytes, count=n)[lo:hi]`` (pieces start at whole bytes).
    """
    raw = np.frombuffer(gen.bytes((n + 7) // 8), dtype=np.uint8)
    for lo in range(0, n, _SIGN_PIECE):
        hi = min(lo + _SIGN_PIECE, n)
        yield lo, hi, np.unpackbits(raw[lo // 8 : (hi + 7) // 8], count=hi - lo)


def sample_symmetric_exponential(
    gen: np.random.Generator, shape, scale: float, *, out: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """Laplace(scale) noise: scale * Exp(1) with a random sign.

    With ``out`` (float64, C-contiguous, of ``shape``) the noise is drawn in place and the signs
    are applied piece by piece: same draws, same values, no array of the full size allocated.
    """
    if out is None:
        e = gen.standard_exponential(shape)
        e *= scale
        np.copysign(e, _random_signs(gen, e.shape), out=e)
        return e
    gen.standard_exponential(out=out)
    out *= scale
    flat = out.reshape(-1)
    for lo, hi, bits in _sign_bit_pieces(gen, flat.size):
        np.copysign(flat[lo:hi], np.subtract(bits, 0.5), out=flat[lo:hi])  # signs +-0.5, as _random_signs
    return out
