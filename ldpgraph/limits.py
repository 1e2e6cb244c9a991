r"""The smallest budget the releases support, checked where a user gives ε (the command line).

The discrete Laplace noise of a release at ``epsilon / sensitivity = t`` reaches
``B ≈ 45.1 / t`` (the fast sampler's bound, ``DiscreteLaplace.fast_noise_bound``; the exact
sampler's noise exceeds it with probability ~5e-20). Beyond 2^52 float64 no longer holds every
integer (the fast sampler refuses) and report rows, whose values are bounded by 2^53, could not
carry it. ``t >= 45.2 / 2^52 ≈ 1.004e-14`` is therefore needed; :data:`SMALLEST_EPSILON` rounds
it up to ``1e-13`` per unit of sensitivity, a factor-10 margin.

Examples
--------
>>> check_smallest_epsilon(0.5)
0.5
>>> check_smallest_epsilon(1e-20)  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
ValueError: epsilon 1e-20 is too small for a discrete Laplace release: its noise would reach ~4.5e+21, ...
"""

from __future__ import annotations

import math

__all__ = ["SMALLEST_EPSILON", "check_smallest_epsilon"]

#: smallest supported ε per unit of sensitivity (see the module notes)
SMALLEST_EPSILON = 1e-13

_NOISE_CONSTANT = 45.1  # fast_noise_bound ≈ 45.1 * sensitivity / epsilon


def check_smallest_epsilon(epsilon: float, sensitivity: float = 1.0) -> float:
    """``epsilon``, or a ValueError saying it is below :data:`SMALLEST_EPSILON` ``* sensitivity``."""
    if math.isfinite(epsilon) and epsilon < SMALLEST_EPSILON * sensitivity:
        reach = _NOISE_CONSTANT * sensitivity / epsilon
        raise ValueError(
            f"epsilon {epsilon:g} is too small for a discrete Laplace release: its noise would reach "
            f"~{reach:.2g}, beyond 2**52, where float64 no longer holds every integer and report values "
            f"(|value| <= 2**53) cannot carry it; the smallest supported epsilon is {SMALLEST_EPSILON:g} "
            "per unit of sensitivity"
        )
    return epsilon
