r"""Exact discrete Laplace sampling in integer arithmetic, driven by the OS's secure randomness.

The fast sampler of :class:`~ldpgraph.mechanisms.DiscreteLaplace` inverts a floating-point
exponential: its law is DLap(p) only up to rounding, and the pattern of rounding errors of
textbook floating-point samplers can reveal the private input (Mironov 2012). For a deployed
randomizer, running on a node's own device, this module samples DLap(p) *exactly*: the
privacy parameter is an exact rational number, every step is integer arithmetic on uniformly
random integers (Canonne, Kamath and Steinke 2020, Algorithms 1 and 2), and the random bits
come from the operating system's CSPRNG (``os.urandom``).

Public names:

* :class:`SecureDiscreteLaplace` -- the node-side mechanism, ``sample(size)`` and
  ``randomize(values)``, no ``rng`` argument: it always uses the OS CSPRNG.
* :func:`sample_dlap_exact` -- DLap with rational scale ``scale_num / scale_den``; ``rng=None``
  means the OS CSPRNG, a seeded generator gives reproducible draws (same exact law) for tests
  and simulation.
* :func:`sample_bernoulli_exp` -- exact Bernoulli(exp(-gamma)) for rational gamma >= 0.

Floats are never used to decide an outcome. (Batch sizes are chosen from a floating-point
estimate of the acceptance rate; that only decides how many i.i.d. trials to run at once.)

Timing. A rejection sampler's running time depends on the value it draws (Algorithm 2 takes
~1.7 us more per unit of |eta| in the per-value path), and since the release y = x + eta is
public, the time of a release would narrow x down to y +- |eta|. :class:`SecureDiscreteLaplace`
therefore decouples sampling from release: it draws noise in batches of ``pool_size`` values
into a pool, at moments fixed by the number of values released so far (never by their values),
and a release only takes the next values from the pool -- work that does not depend on them.
The law is unchanged: the pool holds i.i.d. exact DLap draws and each is released once.
(:func:`sample_dlap_exact` itself still takes value-dependent time.)
"""

from __future__ import annotations

import decimal
import math
import numbers
import os
import random
import threading
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_integer_reports, check_nonnegative_int, check_rng

__all__ = ["SecureDiscreteLaplace", "sample_dlap_exact", "sample_bernoulli_exp"]

# The OS CSPRNG. Looked up at call time so that tests can substitute a seeded byte source.
_os_randbytes = os.urandom

# The vectorized (int64 / uint64) path handles scale numerators and denominators below this;
# larger ones (e.g. a tiny float epsilon, whose exact value has a denominator of 2^60 or more)
# use the pure-Python path with unbounded integers.
_VECTOR_LIMIT = 2**62

# Bytes requested from the byte source at a time: the first request of a call asks for 64
# bytes (or what is needed), and each further request doubles, up to 1 MiB, so that one value
# costs one small read and a million values a few large ones. The unused rest of the buffer
# is discarded when the call returns.
_FIRST_CHUNK_BYTES = 64
_MAX_CHUNK_BYTES = 1 << 20

# Below this many values the per-value loop is faster than the vectorized batches.
_SCALAR_BELOW = 16

_INT64_MAX = 2**63 - 1

# Noise values drawn at once into the pool of a SecureDiscreteLaplace.
_POOL_SIZE = 1024


# --------------------------------------------------------------------------------------------
# Exact rationals at the boundary
# --------------------------------------------------------------------------------------------


def _as_fraction(value: Any, name: str, *, allow_zero: bool = False) -> Fraction:
    """Return ``value`` as an exact positive :class:`~fractions.Fraction`.

    Accepts Fraction, int (and numpy integers), :class:`decimal.Decimal`, a string such as
    ``"0.5"``, ``"1/3"`` or ``"1e-3"`` (parsed exactly), and floats (numpy floats included),
    which are converted exactly: ``0.1`` becomes the binary fraction
    3602879701896397 / 2**55 nearest to 0.1.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a rational number, got bool {value!r}")
    try:
        if isinstance(value, Fraction):
            frac = value
        elif isinstance(value, numbers.Integral):
            frac = Fraction(int(value))
        elif isinstance(value, numbers.Rational):
            frac = Fraction(int(value.numerator), int(value.denominator))
        elif isinstance(value, str):
            frac = Fraction(value.strip())
        elif isinstance(value, (decimal.Decimal, float, np.floating)):
            frac = Fraction(value)
        elif isinstance(value, numbers.Real):
            frac = Fraction(float(value))
        else:
            raise TypeError(
                f"{name} must be an exact rational (Fraction, int, decimal string like '0.5') "
                f"or a float, got {type(value).__name__} {value!r}"
            )
    except (ValueError, OverflowError, ZeroDivisionError, decimal.InvalidOperation):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite rational number {bound}, got {value!r}") from None
    if frac < 0 or (frac == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite rational number {bound}, got {value!r}")
    return frac


def _check_size(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, tuple):
        return tuple(check_nonnegative_int(s, "size") for s in size)
    return (check_nonnegative_int(size, "size"),)


def _check_positive_int(value: Any, name: str) -> int:
    return check_nonnegative_int(value, name, minimum=1)


# --------------------------------------------------------------------------------------------
# Random integers from a byte source
# --------------------------------------------------------------------------------------------


def _byte_source(rng: Any):
    """A callable ``randbytes(n) -> bytes`` for ``rng``: None is the OS CSPRNG."""
    if rng is None:
        return _os_randbytes
    if isinstance(rng, random.Random):  # includes random.SystemRandom (os.urandom)
        return rng.randbytes
    return check_rng(rng).bytes


# (word dtype, bits) in increasing size; a bound m uses the smallest word with m <= 2^(bits-4),
# so that a draw is rejected with probability < 1/16.
_WORDS = ((np.uint8, 8), (np.uint16, 16), (np.uint32, 32), (np.uint64, 64))


class _Bits:
    """Uniform random integers drawn from a byte source, many at a time.

    Every integer below m is obtained from a uniform w-bit word r by rejection: with
    rem = 2^w mod m, r is accepted iff r >= rem, and then r mod m is uniform on {0, ..., m-1}
    because [rem, 2^w) holds exactly (2^w - rem) / m words of each residue.
    """

    def __init__(self, randbytes) -> None:
        self._randbytes = randbytes
        self._buf = b""
        self._pos = 0
        self._chunk = _FIRST_CHUNK_BYTES

    def take(self, nbytes: int) -> bytes:
        if self._pos + nbytes > len(self._buf):
            self._buf = self._randbytes(max(nbytes, self._chunk))
            self._chunk = min(2 * self._chunk, _MAX_CHUNK_BYTES)
            self._pos = 0
        out = self._buf[self._pos : self._pos + nbytes]
        self._pos += nbytes
        return out

    def words(self, n: int, dtype) -> NDArray:
        size = np.dtype(dtype).itemsize
        return np.frombuffer(self.take(n * size), dtype=dtype)

    def bits(self, n: int) -> NDArray[np.bool_]:
        """n independent fair bits."""
        raw = np.frombuffer(self.take((n + 7) // 8), dtype=np.uint8)
        return np.unpackbits(raw, count=n).view(np.bool_)

    def below(self, m: int, n: int) -> NDArray[np.uint64]:
        """n independent uniform integers on {0, ..., m-1}, 1 <= m < 2^63, as uint64."""
        if m == 1:
            return np.zeros(n, dtype=np.uint64)
        dtype, w = next((d, b) for d, b in _WORDS if m <= 2 ** (b - 4) or b == 64)
        rem = (2**w) % m
        out = np.empty(n, dtype=np.uint64)
        todo = np.arange(n)
        while todo.size:
            r = self.words(todo.size, dtype)
            ok = r >= rem if rem else np.ones(r.size, dtype=np.bool_)
            out[todo[ok]] = r[ok] % dtype(m)
            todo = todo[~ok]
        return out

    def randbelow(self, m: int) -> int:
        """One uniform integer on {0, ..., m-1} for any m >= 1 (unbounded Python int)."""
        k = (m - 1).bit_length()
        if k == 0:
            return 0
        nbytes = (k + 7) // 8
        shift = 8 * nbytes - k
        while True:
            r = int.from_bytes(self.take(nbytes), "little") >> shift
            if r < m:
                return r


# --------------------------------------------------------------------------------------------
# Algorithm 1: Bernoulli(exp(-gamma))
# --------------------------------------------------------------------------------------------


def _bern_exp_frac(bits: _Bits, num: NDArray[np.uint64], den: int) -> NDArray[np.bool_]:
    """Bernoulli(exp(-num/den)) for each lane, 0 <= num <= den < 2^64 (gamma in [0, 1]).

    CKS Algorithm 1: K = 1, 2, ...; draw A ~ Bernoulli(gamma / K) until A = 0; return [K odd].
    All lanes still running share the same K. Bernoulli(num / (den K)) is drawn as
    [R1 = 0] and [R2 < num] with R1 uniform below K and R2 uniform below den, independent.
    """
    n = num.size
    out = np.empty(n, dtype=np.bool_)
    idx = np.arange(n)
    cur = num
    k = 1
    while idx.size:
        a = cur > bits.below(den, idx.size) if den > 1 else cur.astype(np.bool_)
        if k > 1:
            a &= bits.below(k, idx.size) == 0
        out[idx[~a]] = k % 2 == 1
        idx = idx[a]
        cur = cur[a]
        k += 1
    return out


def _bern_exp_one(bits: _Bits, n: int) -> NDArray[np.bool_]:
    """n independent Bernoulli(exp(-1)): Algorithm 1 with gamma = 1 (A = 1 surely at K = 1)."""
    out = np.empty(n, dtype=np.bool_)
    idx = np.arange(n)
    k = 2
    while idx.size:
        a = bits.below(k, idx.size) == 0
        out[idx[~a]] = k % 2 == 1
        idx = idx[a]
        k += 1
    return out


def _geometric_exp_one(bits: _Bits, n: int) -> NDArray[np.int64]:
    """V = number of successes of Bernoulli(exp(-1)) before the first failure: P[V >= v] = e^-v."""
    v = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:
        idx = idx[_bern_exp_one(bits, idx.size)]
        v[idx] += 1
    return v


def _bern_exp_scalar(bits: _Bits, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)) for any rational num/den >= 0 (CKS Algorithm 1), Python ints."""
    whole, rest = divmod(num, den)
    if whole and rest == 0:
        whole, rest = whole - 1, den  # gamma = whole + 1 exactly: the last factor is exp(-1)
    for _ in range(whole):
        if not _bern_exp_unit(bits, 1, 1):
            return False
    return _bern_exp_unit(bits, rest, den)


def _bern_exp_unit(bits: _Bits, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)) for 0 <= num <= den: draw Bernoulli(gamma/K), K = 1, 2, ..."""
    k = 1
    while bits.randbelow(den * k) < num:  # Bernoulli(num / (den k))
        k += 1
    return k % 2 == 1


def sample_bernoulli_exp(gamma: Any, size: int | tuple[int, ...] | None = None, *, rng=None):
    r"""Exact Bernoulli(exp(-gamma)) draws for a rational gamma >= 0, as booleans.

    Parameters
    ----------
    gamma : Fraction, int, decimal string or float
        Must be >= 0. Floats are converted exactly (``Fraction(0.1)``, not 1/10).
    size : int or tuple of ints, optional
        Output shape; None returns a single ``numpy.bool_``.
    rng : None, numpy Generator, seed, SeedSequence or random.Random, optional
        Source of random bytes. None (default) is the OS CSPRNG (``os.urandom``); a seeded
        generator gives reproducible draws with the same exact law, for testing.

    Notes
    -----
    Canonne, Kamath and Steinke (2020), Algorithm 1. For gamma in [0, 1]: draw
    A_K ~ Bernoulli(gamma / K) for K = 1, 2, ... until the first A_K = 0 and return 1 iff
    that K is odd; then

    .. math::

        P[\text{return } 1] = \sum_{k \text{ odd}} P[K = k]
        = \sum_{k \text{ odd}} \Big(\frac{\gamma^{k-1}}{(k-1)!} - \frac{\gamma^k}{k!}\Big)
        = e^{-\gamma}.

    For gamma > 1 the product of floor(gamma) Bernoulli(exp(-1)) draws and one
    Bernoulli(exp(-(gamma - floor(gamma)))) draw is used. Only integer comparisons of
    uniform random integers are made.

    Examples
    --------
    >>> import random
    >>> b = sample_bernoulli_exp("0.5", 1000, rng=random.Random(0))
    >>> b.dtype, b.shape
    (dtype('bool'), (1000,))
    """
    frac = _as_fraction(gamma, "gamma", allow_zero=True)
    shape = _check_size(size)
    n = math.prod(shape)
    bits = _Bits(_byte_source(rng))
    num, den = frac.numerator, frac.denominator
    whole, rest = divmod(num, den)
    if den < _VECTOR_LIMIT and whole < _VECTOR_LIMIT:
        alive = np.ones(n, dtype=np.bool_)
        idx = np.arange(n)
        for _ in range(whole):
            if not idx.size:
                break
            ok = _bern_exp_one(bits, idx.size)
            alive[idx[~ok]] = False
            idx = idx[ok]
        if idx.size and rest:
            ok = _bern_exp_frac(bits, np.full(idx.size, rest, dtype=np.uint64), den)
            alive[idx[~ok]] = False
        out = alive
    else:
        out = np.fromiter((_bern_exp_scalar(bits, num, den) for _ in range(n)), dtype=np.bool_, count=n)
    out = out.reshape(shape)
    return out[()] if size is None else out



# --------------------------------------------------------------------------------------------
# Algorithm 2: discrete Laplace with rational scale
# --------------------------------------------------------------------------------------------


def _dlap_scalar(bits: _Bits, t: int, s: int) -> int:
    """One DLap draw with scale t/s, p = exp(-s/t): CKS Algorithm 2 line by line (Python ints)."""
    while True:
        u = bits.randbelow(t)
        if not _bern_exp_unit(bits, u, t):
            continue
        v = 0
        while _bern_exp_unit(bits, 1, 1):
            v += 1
        y = (u + t * v) // s
        if bits.randbelow(2):
            if y == 0:
                continue
            return -y
        return y


def _dlap_trials(bits: _Bits, m: int, t: int, s: int) -> NDArray[np.int64]:
    """Run m independent trials of CKS Algorithm 2 (t, s < 2^62); return the accepted draws."""
    u = bits.below(t, m)
    if t > 1:
        u = u[_bern_exp_frac(bits, u, t)]
    v = _geometric_exp_one(bits, u.size)
    u = u.astype(np.int64)
    if v.size and int(v.max()) > (_INT64_MAX - t) // t:
        # u + t v overflows int64 (only for scales near 2^62): unbounded Python integers
        x = u.astype(object) + v.astype(object) * t
        y_obj = x // s
        if y_obj.size and int(y_obj.max()) > _INT64_MAX:
            raise OverflowError(f"discrete Laplace noise with scale {t}/{s} overflows int64")
        y = y_obj.astype(np.int64)
    else:
        v *= t
        v += u
        y = v // s if s > 1 else v
    negative = bits.bits(y.size)
    keep = ~(negative & (y == 0))
    np.negative(y, out=y, where=negative)
    return y[keep]


def _acceptance(t: int, s: int) -> float:
    """Probability that one trial of Algorithm 2 is accepted (used only to size batches)."""
    a = 1.0 if t == 1 else -math.expm1(-1.0) / (t * -math.expm1(-1.0 / t))
    return a * (1.0 + math.exp(-s / t)) / 2.0


def _sample_dlap(bits: _Bits, n: int, t: int, s: int) -> NDArray[np.int64]:
    """n i.i.d. DLap(exp(-s/t)) draws as int64."""
    if t >= _VECTOR_LIMIT or s >= _VECTOR_LIMIT or n < _SCALAR_BELOW:
        out = [_dlap_scalar(bits, t, s) for _ in range(n)]
        if out and max(abs(y) for y in out) > _INT64_MAX:
            raise OverflowError(f"discrete Laplace noise with scale {t}/{s} overflows int64")
        return np.array(out, dtype=np.int64).reshape(n)
    acc = _acceptance(t, s)
    parts = [np.zeros(0, dtype=np.int64)]
    need = n
    while need > 0:
        got = _dlap_trials(bits, int(need / acc * 1.02) + 16, t, s)[:need]
        parts.append(got)
        need -= got.size
    # Trials are i.i.d. and whether one is accepted does not depend on the others, so the first
    # n accepted draws are i.i.d. with the law of an accepted draw.
    return np.concatenate(parts) if len(parts) > 2 else parts[-1]


def sample_dlap_exact(
    scale_num: int, scale_den: int = 1, size: int | tuple[int, ...] | None = None, *, rng=None
):
    r"""Exact discrete Laplace draws with rational scale ``scale_num / scale_den``.

    The law is DLap(p) with p = exp(-scale_den / scale_num):
    P[eta = k] = (1-p)/(1+p) p^|k|. For privacy parameter epsilon = a/b (in lowest terms) and
    sensitivity Delta = c/d, the scale is Delta/epsilon = (b c)/(a d).

    Parameters
    ----------
    scale_num, scale_den : int
        Positive integers (Python or numpy integers of any size).
    size : int or tuple of ints, optional
        Output shape; None returns one ``numpy.int64``.
    rng : None, numpy Generator, seed, SeedSequence or random.Random, optional
        Source of random bytes. **None (default) is the OS CSPRNG** ``os.urandom`` (unlike the
        simulation samplers of ldpgraph, where None means a fresh numpy generator); use it for
        deployment. A seeded generator gives reproducible draws of the same exact law, for
        testing and simulation.

    Returns
    -------
    numpy.ndarray of int64, or numpy.int64 if ``size`` is None

    Raises
    ------
    OverflowError
        If a draw does not fit in int64 (scales of the order of 2^60).

    Notes
    -----
    Canonne, Kamath and Steinke (2020), Algorithm 2, with t = ``scale_num``, s = ``scale_den``:
    repeat { U uniform on {0, ..., t-1}; D ~ Bernoulli(exp(-U/t)), restart if D = 0;
    V = number of successes of Bernoulli(exp(-1)) before the first failure; X = U + tV;
    Y = floor(X / s); B a fair bit; restart if B = 1 and Y = 0; return (1 - 2B) Y }.
    Given acceptance of D, P[X = x] is proportional to exp(-x/t) on {0, 1, ...} (U and V are
    the remainder and quotient of x by t), so P[Y = y] is proportional to exp(-y s/t), a
    geometric law; the sign step, rejecting the negative zero, gives
    P[eta = k] proportional to p^|k|. Every Bernoulli(exp(-gamma)) draw is Algorithm 1
    (:func:`sample_bernoulli_exp`), so only comparisons of uniform integers decide anything.

    Implementation: trials run in vectorized batches on int64/uint64 arrays while
    ``scale_num`` and ``scale_den`` are below 2^62 (all arithmetic exact: uniform integers
    below m come from rejection on random words); larger values (a tiny epsilon given as a
    float has a denominator of 2^60 or more) use a pure-Python loop with unbounded integers,
    as do calls for fewer than 16 values (a node releasing one value: one small read of
    ``os.urandom``). Both paths run the same algorithm and have the same law.
    The running time depends on the value drawn (a timing side channel, as for any rejection
    sampler); the value itself is never rounded.

    References
    ----------
    C. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy.
    NeurIPS 2020 (arXiv:2004.00010).

    Examples
    --------
    >>> eta = sample_dlap_exact(1, 1, 5, rng=0)   # scale 1, i.e. epsilon = 1, sensitivity 1
    >>> eta.dtype, eta.shape
    (dtype('int64'), (5,))
    >>> # the OS CSPRNG (the default): a value, not reproducible
    >>> isinstance(sample_dlap_exact(2, 1).item(), int)
    True
    """
    t = _check_positive_int(scale_num, "scale_num")
    s = _check_positive_int(scale_den, "scale_den")
    g = math.gcd(t, s)
    t, s = t // g, s // g
    shape = _check_size(size)
    bits = _Bits(_byte_source(rng))
    out = _sample_dlap(bits, math.prod(shape), t, s).reshape(shape)
    return out[()] if size is None else out


class SecureDiscreteLaplace:
    r"""The discrete Laplace randomizer for deployment: exact law, OS randomness.

    Releases x + eta with eta ~ DLap(p), p = exp(-epsilon / sensitivity), sampled exactly in
    integer arithmetic (:func:`sample_dlap_exact`) from the operating system's CSPRNG.

    Parameters
    ----------
    epsilon : Fraction, int, str or float
        Privacy parameter, an exact rational > 0: a :class:`~fractions.Fraction`, an int, or a
        decimal string such as ``"0.5"`` or ``"1/3"`` (exact). A float is converted exactly
        with ``Fraction(float)``: ``epsilon=0.1`` means the binary fraction
        3602879701896397 / 2**55 nearest to 0.1, and the privacy guarantee is for that value
        (0.1000000000000000055...); pass ``"0.1"`` for exactly 1/10.
    sensitivity : Fraction, int, str or float, default 1
        Largest change of the released integer between neighbouring inputs; rational > 0.
    pool_size : int, default 1024
        Noise values drawn at once into the pool (see Notes, **Timing**).

    Attributes
    ----------
    epsilon, sensitivity : Fraction
        The exact parameters.
    scale : Fraction
        sensitivity / epsilon.
    p : float
        exp(-epsilon / sensitivity), rounded (for information; sampling uses ``scale``).

    Notes
    -----
    **Privacy.** The noise law is exactly P[eta = k] = (1-p)/(1+p) p^|k|, so for integer
    inputs with |x - x'| <= sensitivity, P[x + eta = z] / P[x' + eta = z] <= p^-sensitivity
    = e^epsilon (see :class:`~ldpgraph.mechanisms.DiscreteLaplace`). Here this holds for the
    implemented sampler, not just for an idealized one: no floating-point number is involved,
    so the attacks of Mironov (2012) on the rounding pattern of floating-point samplers do
    not apply, and the random bits come from ``os.urandom``, which is unpredictable to the
    curator (a seeded pseudo-random generator is not).

    **Why no rng argument.** This class is the randomizer a node runs on its own device, once
    per release; letting callers pass a seed would make it easy to deploy reproducible (and so
    predictable) noise. For simulations and experiments use
    :class:`~ldpgraph.mechanisms.DiscreteLaplace` (numpy, seeded, fast) or
    :func:`sample_dlap_exact` with a seeded ``rng``: both have the same law.

    **Timing.** The exact sampler's running time depends on the value drawn, and the
    release y = x + eta is public: a timed release would tell |eta|, hence x up to y +- |eta|.
    So sampling is decoupled from release. Noise is drawn in whole batches of ``pool_size``
    values into a pool -- when a release needs more values than the pool holds, or when
    :meth:`refill` is called -- and a release takes the next values from the pool (a slice
    copy, the addition, and zeroing the used slots), work that does not depend on the values.
    When a batch is drawn is fixed by how many values were released before, never by their
    values. What the time of a *refill* depends on is the whole batch (a symmetric function
    of ``pool_size`` values, dominated by their largest |eta|); call :meth:`refill` at a time
    of your choosing (start-up, idle) to keep it out of the releases. The law is exact and
    unchanged: the pool holds i.i.d. draws of the exact sampler and each value is released
    once, in order. The pool never leaves the object: pickling or copying drops it, and a
    forked child process discards its parent's pool (it would otherwise repeat the parent's
    noise). ``scripts/bench_secure_sampler.py`` measures the timing distinguisher's AUC.
    Remaining side channels are listed in ``docs/simulation-vs-deployment.md`` ("Side channels").

    References
    ----------
    C. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy.
    NeurIPS 2020. I. Mironov. On Significance of the Least Significant Bits for Differential
    Privacy. CCS 2012.

    Examples
    --------
    >>> mech = SecureDiscreteLaplace(epsilon="0.5", sensitivity=1)
    >>> mech.scale
    Fraction(2, 1)
    >>> report = mech.randomize([12, 7])
    >>> report.dtype, report.shape
    (dtype('int64'), (2,))
    >>> SecureDiscreteLaplace(epsilon=0.1).epsilon == Fraction(1, 10)
    False
    """

    def __init__(self, *, epsilon: Any, sensitivity: Any = 1, pool_size: int = _POOL_SIZE) -> None:
        self.epsilon = _as_fraction(epsilon, "epsilon")
        self.sensitivity = _as_fraction(sensitivity, "sensitivity")
        self.pool_size = check_nonnegative_int(pool_size, "pool_size", minimum=1)
        self.scale = self.sensitivity / self.epsilon
        self._init_pool()
        # epsilon / sensitivity as a float: inf beyond the float range (p = 0 then), 0.0 below it
        try:
            self._t = float(self.epsilon / self.sensitivity)
        except OverflowError:
            self._t = math.inf
        self.p = math.exp(-self._t)

    def __repr__(self) -> str:
        return f"SecureDiscreteLaplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r})"

    @property
    def variance(self) -> float:
        """Var eta = 2p / (1-p)^2 = 1 / (2 sinh^2(epsilon / (2 sensitivity))).

        Computed as 2p/(1-p)^2 for t = epsilon/sensitivity > 2 (p < 0.14: no cancellation;
        it underflows to 0.0 beyond t ~ 745, where sinh(t/2) would overflow), else as
        (1/sinh(t/2))^2 / 2, which is inf where the variance exceeds the float range.
        """
        t = self._t
        if t > 2.0:
            p = math.exp(-t)
            return 2.0 * p / ((1.0 - p) * (1.0 - p))
        if t == 0.0:  # epsilon / sensitivity below the smallest float
            return math.inf
        inv = 1.0 / math.sinh(t / 2.0)
        return 0.5 * inv * inv

    # ---------------------------------------------------------------- the pool

    def _init_pool(self) -> None:
        self._lock = threading.Lock()
        self._pool = np.zeros(0, dtype=np.int64)
        self._pos = 0
        self._pid = os.getpid()

    def __getstate__(self) -> dict[str, Any]:
        # drawn noise never leaves the object: a pickle or a copy starts with an empty pool
        state = self.__dict__.copy()
        for key in ("_lock", "_pool", "_pos", "_pid"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_pool()

    @property
    def pooled(self) -> int:
        """Number of noise values drawn and not yet released."""
        return 0 if self._pid != os.getpid() else self._pool.size - self._pos

    def _refill_locked(self, need: int) -> None:
        """Make at least ``need`` values available, drawing whole batches of pool_size."""
        if self._pid != os.getpid():  # a forked child must not reuse its parent's noise
            self._pool, self._pos, self._pid = np.zeros(0, dtype=np.int64), 0, os.getpid()
        have = self._pool.size - self._pos
        if have >= need:
            return
        batches = -(-(need - have) // self.pool_size)
        fresh = sample_dlap_exact(
            self.scale.numerator, self.scale.denominator, batches * self.pool_size, rng=None
        )
        self._pool = np.concatenate([self._pool[self._pos :], fresh])
        self._pos = 0

    def refill(self) -> None:
        """Draw noise now, so that the next ``pool_size`` releases only take from the pool.

        Tops the pool up to at least ``pool_size`` values (whole batches). Call it at a time
        of your choosing (device start-up, idle time): the time a batch takes depends on its
        values, the time of a release from the pool does not.
        """
        with self._lock:
            self._refill_locked(self.pool_size)

    def sample(self, size: int | tuple[int, ...] | None = None) -> NDArray[np.int64]:
        """Draw eta ~ DLap(p) exactly from the OS CSPRNG, as int64 (None: one ``numpy.int64``).

        The values come from the pool (see Notes, **Timing**); used slots are zeroed.
        """
        shape = _check_size(size)
        n = math.prod(shape)
        with self._lock:
            self._refill_locked(n)
            start = self._pos
            out = self._pool[start : start + n].copy()
            self._pool[start : start + n] = 0
            self._pos = start + n
        out = out.reshape(shape)
        return out[()] if size is None else out

    def randomize(self, values: ArrayLike) -> NDArray[np.int64]:
        """The node-side randomizer: values + eta elementwise, int64 (values must be integers)."""
        x = check_integer_reports(values, "values")
        return x + self.sample(x.shape)
