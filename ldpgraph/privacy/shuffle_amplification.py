r"""Privacy amplification by shuffling: the central (ε, δ) of n shuffled ε₀-LDP reports, and back.

Feldman, McMillan and Talwar ("Hiding among the clones", FOCS 2021) show that shuffling the
reports of n users, each randomized by an ε₀-LDP randomizer, is a post-processing of the pair
of distributions (their Theorem 3.2, the *clones* reduction)

.. math::
    P = (A + \Delta,\ C - A + 1 - \Delta),\qquad Q = (A + 1 - \Delta,\ C - A + \Delta),

with :math:`C \sim \mathrm{Bin}(n - 1, p)` the number of the other users who act as clones of
the changed user, :math:`A \sim \mathrm{Bin}(C, 1/2)`, :math:`\Delta \sim
\mathrm{Bern}(\alpha)`, :math:`\alpha = e^{\varepsilon_0}/(e^{\varepsilon_0} + 1)` and, for a
generic ε₀-LDP randomizer, :math:`p = e^{-\varepsilon_0}`. So the shuffled output is
(ε, δ)-DP for every δ at least the hockey-stick divergence

.. math:: \delta(\varepsilon) = \sum_{c=0}^{n-1} \Pr[C = c]\,
          \sum_{a} \bigl(P_c(a) - e^{\varepsilon} Q_c(a)\bigr)_+ ,\qquad
          P_c(a) = \alpha\, b_c(a) + (1 - \alpha)\, b_c(a - 1),\quad
          Q_c(a) = (1 - \alpha)\, b_c(a) + \alpha\, b_c(a - 1)

(:math:`b_c` the Bin(c, 1/2) pmf; C is a function of the output, so the divergence splits over
c). :func:`clones_delta` computes it *exactly*: the ratio :math:`P_c(a)/Q_c(a) =
(\alpha(c+1-a) + (1-\alpha)a)/((1-\alpha)(c+1-a) + \alpha a)` decreases in a, so the positive
part is the lower tail :math:`a < (c+1)\beta`, :math:`\beta = (\alpha - e^\varepsilon(1-\alpha))
/ ((2\alpha - 1)(1 + e^\varepsilon))`, two binomial cdfs per c, vectorised over c; the clone
counts beyond 40 standard deviations are bounded by their probability mass (so the value is an
upper bound, tight to ~1e-300). The reference code (apple/ml-shuffling-amplification) bounds
the same sum over blocks of ``step`` values of c by the worse block end; ours is the sum itself.
P and Q are mirror images (a ↦ c + 1 - a), so :math:`D(P\|Q) = D(Q\|P)`.

**Binary randomized response** (``randomizer="binary-rr"``). Warner's RR at ε₀ on a bit x
writes :math:`\mathrm{Bern}(x\text{-dependent}) = 2q\cdot\mathrm{Bern}(1/2) + (1 - 2q)\,\delta_x`,
:math:`q = 1/(e^{\varepsilon_0} + 1)`, and :math:`\mathrm{Bern}(1/2) = (R(0) + R(1))/2`: each other
user is a clone with probability :math:`p = 2/(e^{\varepsilon_0} + 1)` instead of
:math:`e^{-\varepsilon_0}` (about twice as many clones), and the changed user's output is
:math:`\mathrm{Bern}(\alpha)` vs :math:`\mathrm{Bern}(1 - \alpha)` exactly as above. The same
divergence with this p is therefore a valid bound for shuffled binary RR (the adversary who
is also told which users are clones learns more), and it is smaller.

**Closed form** (:func:`closed_form_epsilon`, their Theorem 3.1): for
:math:`\varepsilon_0 \le \log(n / (16 \log(2/\delta)))`,

.. math:: \varepsilon \le \log\Bigl(1 + \frac{e^{\varepsilon_0} - 1}{e^{\varepsilon_0} + 1}
          \Bigl(\frac{8\sqrt{e^{\varepsilon_0}\log(4/\delta)}}{\sqrt n}
          + \frac{8 e^{\varepsilon_0}}{n}\Bigr)\Bigr);

outside that range only ε = ε₀ is claimed (shuffling is post-processing of the local reports).

Examples
--------
>>> round(numerical_epsilon(4.0, 10**5, 1e-6), 3)
0.17
>>> round(closed_form_epsilon(4.0, 10**5, 1e-6), 3)
0.535
>>> eps0 = local_epsilon_for(1.0, 4037, 1e-8)
>>> round(eps0, 3), clones_delta(1.0, eps0, 4037) <= 1e-8
(3.592, True)
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from .._validation import check_epsilon, check_nonnegative_int

__all__ = [
    "clone_probability",
    "clones_delta",
    "clones_delta_bruteforce",
    "numerical_epsilon",
    "closed_form_epsilon",
    "amplified_epsilon",
    "local_epsilon_for",
    "Randomizer",
    "Method",
]

Randomizer = Literal["generic", "binary-rr"]
Method = Literal["numerical", "closed-form"]

#: bisection stops when the bracket is this narrow (absolute, in ε); the upper end is returned
_TOL = 1e-9
#: the largest ε whose e^ε a double holds (math.exp overflows beyond ~709.78)
_EXP_MAX = 709.0
_TAIL_SD = 40.0


def _check_delta(delta: float) -> float:
    d = float(delta)
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return d


def _check_n(n: int) -> int:
    return check_nonnegative_int(n, "n", minimum=2)


def clone_probability(epsilon0: float, randomizer: Randomizer = "generic") -> float:
    r"""Probability that another user is a clone of the changed one: :math:`e^{-\varepsilon_0}`
    (any ε₀-LDP randomizer) or :math:`2/(e^{\varepsilon_0} + 1)` (binary randomized response).

    >>> clone_probability(1.0), round(clone_probability(1.0, "binary-rr"), 6)
    (0.36787944117144233, 0.537883)
    """
    eps0 = check_epsilon(epsilon0, "epsilon0")
    if randomizer == "generic":
        return math.exp(-eps0)
    if randomizer == "binary-rr":
        return 2.0 * math.exp(-eps0) / (1.0 + math.exp(-eps0))  # 2/(e^ε0 + 1), no overflow
    raise ValueError(f"randomizer must be 'generic' or 'binary-rr', got {randomizer!r}")


def clones_delta(epsilon: float, epsilon0: float, n: int, randomizer: Randomizer = "generic") -> float:
    r"""δ(ε) of n shuffled ε₀-LDP reports by the clones reduction, summed exactly over the clone count.

    Parameters
    ----------
    epsilon : float
        The central ε (≥ 0) at which δ is wanted.
    epsilon0 : float
        Each user's local ε₀ (> 0).
    n : int
        Number of users whose reports are shuffled together (≥ 2).
    randomizer : {"generic", "binary-rr"}
        The clone probability :func:`clone_probability`.

    Returns
    -------
    float
        The hockey-stick divergence :math:`D_{e^\varepsilon}(P\|Q)` of the module docstring, an
        upper bound on the δ of the shuffled reports at ε; 0 when ε ≥ ε₀.

    Examples
    --------
    >>> clones_delta(2.0, 2.0, 100)
    0.0
    >>> round(clones_delta(0.5, 2.0, 1000), 8)
    3.93e-06
    """
    eps = float(epsilon)
    if not (eps >= 0.0 and math.isfinite(eps)):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    eps0 = check_epsilon(epsilon0, "epsilon0")
    n = _check_n(n)
    if eps >= eps0:  # no divergence left (and math.exp(eps) may overflow)
        return 0.0
    p = clone_probability(eps0, randomizer)
    alpha = 1.0 / (1.0 + math.exp(-eps0))
    e = math.exp(eps)
    num = alpha - e * (1.0 - alpha)
    if num <= 0.0:
        return 0.0
    beta = num / ((2.0 * alpha - 1.0) * (1.0 + e))
    m = n - 1
    mean, sd = m * p, math.sqrt(m * p * (1.0 - p))
    lo = max(0, int(math.floor(mean - _TAIL_SD * sd)) - 1)
    hi = min(m, int(math.ceil(mean + _TAIL_SD * sd)) + 1)
    from scipy import stats  # deferred: slow to import (the CLI loads this module)

    c = np.arange(lo, hi + 1, dtype=np.float64)
    t = np.ceil((c + 1.0) * beta) - 1.0  # largest a with a < (c + 1) beta
    f_t = stats.binom.cdf(t, c, 0.5)
    f_t1 = stats.binom.cdf(t - 1.0, c, 0.5)
    d_c = (alpha - e * (1.0 - alpha)) * f_t + ((1.0 - alpha) - e * alpha) * f_t1
    w = stats.binom.pmf(c, m, p)
    tail = (stats.binom.cdf(lo - 1, m, p) if lo > 0 else 0.0) + (stats.binom.sf(hi, m, p) if hi < m else 0.0)
    return float(min(1.0, math.fsum((w * np.maximum(d_c, 0.0)).tolist()) + tail))


def clones_delta_bruteforce(epsilon: float, epsilon0: float, n: int,
                            randomizer: Randomizer = "generic") -> float:
    r"""The same divergence as :func:`clones_delta`, by enumerating the joint law of (C, A + Δ).

    :math:`O(n^2)` terms, for checking (n up to a few hundred): both laws are built cell by cell
    as :math:`\Pr[C = c]\,P_c(a)` and the positive parts of :math:`P - e^\varepsilon Q` summed.

    >>> abs(clones_delta_bruteforce(0.5, 2.0, 40) - clones_delta(0.5, 2.0, 40)) < 1e-15
    True
    """
    eps0 = check_epsilon(epsilon0, "epsilon0")
    n = _check_n(n)
    p = clone_probability(eps0, randomizer)
    alpha = 1.0 / (1.0 + math.exp(-eps0))
    e = math.exp(float(epsilon))
    from scipy import stats  # deferred: slow to import

    total = 0.0
    for c in range(n):
        b = stats.binom.pmf(np.arange(c + 1), c, 0.5)
        b0 = np.r_[b, 0.0]  # b_c(a), a = 0..c+1
        b1 = np.r_[0.0, b]  # b_c(a - 1)
        pc = alpha * b0 + (1 - alpha) * b1
        qc = (1 - alpha) * b0 + alpha * b1
        total += stats.binom.pmf(c, n - 1, p) * float(np.maximum(pc - e * qc, 0.0).sum())
    return float(total)


def numerical_epsilon(epsilon0: float, n: int, delta: float, randomizer: Randomizer = "generic") -> float:
    r"""Smallest central ε with :func:`clones_delta` ≤ δ (bisection; never above ε₀).

    δ(ε) decreases in ε, so the bisection keeps an upper end that satisfies the bound; the
    result is within 1e-9 of the exact root and always a valid ε.

    Examples
    --------
    >>> round(numerical_epsilon(2.0, 10**4, 1e-8), 4) < round(closed_form_epsilon(2.0, 10**4, 1e-8), 4)
    True
    """
    eps0 = check_epsilon(epsilon0, "epsilon0")
    n, delta = _check_n(n), _check_delta(delta)
    lo, hi = 0.0, eps0
    if clones_delta(0.0, eps0, n, randomizer) <= delta:
        return 0.0
    while hi - lo > _TOL:
        mid = 0.5 * (lo + hi)
        if clones_delta(mid, eps0, n, randomizer) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def closed_form_epsilon(epsilon0: float, n: int, delta: float) -> float:
    r"""Feldman, McMillan, Talwar (2021), Theorem 3.1 (the module docstring); ε₀ outside its range.

    Examples
    --------
    >>> round(closed_form_epsilon(1.0, 10**6, 1e-6), 4)
    0.0235
    >>> closed_form_epsilon(5.0, 1000, 1e-8)  # e^5 > n / (16 log(2/delta)): no amplification claimed
    5.0
    """
    eps0 = check_epsilon(epsilon0, "epsilon0")
    n, delta = _check_n(n), _check_delta(delta)
    if eps0 > math.log(n / (16.0 * math.log(2.0 / delta))):
        return eps0
    a = math.exp(eps0)
    bound = math.log1p((a - 1.0) / (a + 1.0) * (8.0 * math.sqrt(a * math.log(4.0 / delta) / n) + 8.0 * a / n))
    return min(bound, eps0)


def amplified_epsilon(
    epsilon0: float, n: int, delta: float, method: Method = "numerical", randomizer: Randomizer = "generic"
) -> float:
    r"""The central ε at ``delta`` of n shuffled ε₀-LDP reports (``method`` numerical or closed-form).

    The closed form holds for any ε₀-LDP randomizer (``randomizer`` must be ``"generic"``).

    >>> amplified_epsilon(3.0, 10**4, 1e-8) < amplified_epsilon(3.0, 10**4, 1e-8, "closed-form")
    True
    """
    if method == "numerical":
        return numerical_epsilon(epsilon0, n, delta, randomizer)
    if method == "closed-form":
        if randomizer != "generic":
            raise ValueError(f"the closed form is for a generic randomizer, got randomizer={randomizer!r}")
        return closed_form_epsilon(epsilon0, n, delta)
    raise ValueError(f"method must be 'numerical' or 'closed-form', got {method!r}")


def local_epsilon_for(
    epsilon: float, n: int, delta: float, method: Method = "numerical", randomizer: Randomizer = "generic"
) -> float:
    r"""The largest local ε₀ whose shuffled reports are (ε, δ)-DP by :func:`amplified_epsilon`.

    At least ε (shuffling ε-LDP reports is ε-DP). Bisection on ε₀ over [ε, ε_max], where
    ε_max is the first of ε + 1, ε + 2, ... whose bound exceeds ε; the bound is non-decreasing in
    ε₀ (tested), so the lower end of the bracket, returned, always satisfies it. For the numerical
    bound the test is :func:`clones_delta` at ε itself (the privacy statement; the ε that
    :func:`numerical_epsilon` returns for it is within its 1e-9 bisection tolerance of ε).

    Examples
    --------
    >>> eps0 = local_epsilon_for(1.0, 20000, 1e-8)
    >>> clones_delta(1.0, eps0, 20000) <= 1e-8 < clones_delta(1.0, eps0 + 1e-6, 20000)
    True
    """
    eps = check_epsilon(epsilon)
    n, delta = _check_n(n), _check_delta(delta)
    if eps > _EXP_MAX - 1.0:  # e^ε overflows a double: no amplification claimed (ε₀ = ε is valid)
        return eps
    if method == "numerical":  # δ(ε) <= δ at the target ε itself: one bisection, not nested ones

        def ok(e0: float) -> bool:
            return clones_delta(eps, e0, n, randomizer) <= delta
    else:

        def ok(e0: float) -> bool:
            return amplified_epsilon(e0, n, delta, method, randomizer) <= eps

    lo, hi = eps, eps + 1.0
    while ok(hi):
        lo, hi = hi, hi + 1.0
        if hi > _EXP_MAX:  # exp overflows; cannot happen for n < 1e300
            break
    while hi - lo > _TOL:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo
