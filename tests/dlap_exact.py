"""Exact expectations over discrete Laplace noise, for unbiasedness tests.

E[g(x + eta)] is computed by summing g against the DLap pmf over the support truncated where the
two-sided tail mass falls below ``tail`` (1e-15 by default); no Monte-Carlo.
"""

from __future__ import annotations

import math

import numpy as np


def dlap_support(epsilon: float, sensitivity: float = 1.0, tail: float = 1e-15):
    """Integers k in [-K, K] and their DLap pmf, with P[|eta| > K] = 2 p^(K+1)/(1+p) < tail."""
    t = epsilon / sensitivity
    p = math.exp(-t)
    # 2 p^(K+1) / (1+p) < tail  <=>  K + 1 > ln(tail (1+p) / 2) / ln p
    K = max(1, math.ceil(math.log(tail * (1 + p) / 2) / -t))
    k = np.arange(-K, K + 1, dtype=np.int64)
    pmf = math.tanh(t / 2) * np.exp(-t * np.abs(k))
    return k, pmf


def exact_expectation(g, x, epsilon, sensitivity=1.0, tail=1e-15):
    """E[g(x + eta)] elementwise for integer array x, g vectorized elementwise."""
    x = np.asarray(x, dtype=np.int64)
    k, pmf = dlap_support(epsilon, sensitivity, tail)
    vals = np.asarray(g(x[..., None] + k), dtype=np.float64)
    return vals @ pmf


def exact_expectation_nd(g, x, epsilon, sensitivity=1.0, tail=1e-15):
    """E[g(x + eta)] for one integer vector x of length n (n <= 3), g acting on the last axis."""
    x = np.asarray(x, dtype=np.int64)
    n = x.shape[-1]
    k, pmf = dlap_support(epsilon, sensitivity, tail)
    grids = np.meshgrid(*([k] * n), indexing="ij")
    shifts = np.stack([gr.ravel() for gr in grids], axis=-1)
    weights = np.ones(shifts.shape[0])
    for j in range(n):
        weights = weights * pmf[shifts[:, j] + k[-1]]
    vals = np.asarray(g(x + shifts), dtype=np.float64)
    return float(math.fsum(vals * weights))


__all__ = ["dlap_support", "exact_expectation", "exact_expectation_nd"]
