r"""Accuracy metrics for repeated private estimates of one true value.

Pure functions on arrays of estimates (one per trial).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["relative_error", "rmse", "relative_rmse", "bias", "rmse_confidence_interval"]


def _estimates(estimates: ArrayLike) -> np.ndarray:
    arr = np.asarray(estimates, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"estimates must be a non-empty 1-D array (one per trial), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("estimates must be finite")
    return arr


def _truth(truth: float) -> float:
    t = float(truth)
    if not math.isfinite(t):
        raise ValueError(f"truth must be finite, got {truth!r}")
    return t


def _scaled_rms(err: np.ndarray) -> float:
    """sqrt(mean(err^2)) without overflow or underflow of the squares."""
    scale = float(np.max(np.abs(err)))
    if scale == 0.0 or not math.isfinite(scale):
        return scale
    return scale * math.sqrt(float(np.mean((err / scale) ** 2)))


def relative_error(estimate: ArrayLike, truth: float, n_nodes: int) -> np.ndarray:
    r"""Imola et al.'s relative error |est - true| / max(true, 0.001 n).

    >>> relative_error([110.0, 90.0], truth=100.0, n_nodes=1000)
    array([0.1, 0.1])
    """
    est = np.asarray(estimate, dtype=np.float64)
    if not np.isfinite(est).all():
        raise ValueError("estimate must be finite")
    denominator = max(_truth(truth), 0.001 * n_nodes)
    if not denominator > 0:
        raise ValueError(
            f"relative error needs truth > 0 or n_nodes > 0, got truth={truth}, n_nodes={n_nodes}"
        )
    return np.abs(est - truth) / denominator


def rmse(estimates: ArrayLike, truth: float) -> float:
    """Root mean squared error over trials."""
    return _scaled_rms(_estimates(estimates) - _truth(truth))


def relative_rmse(estimates: ArrayLike, truth: float) -> float:
    """RMSE / |truth| (the normalised RMSE of DESIGN.md §5).

    >>> relative_rmse([9.0, 11.0], 10.0)
    0.1
    """
    if truth == 0:
        raise ValueError("relative RMSE is undefined for a true value of 0")
    return rmse(estimates, truth) / abs(float(truth))


def bias(estimates: ArrayLike, truth: float) -> float:
    """Mean estimate minus truth."""
    arr = _estimates(estimates)
    truth = _truth(truth)
    scale = max(float(np.max(np.abs(arr))), abs(float(truth)), 1.0)
    return scale * float(np.mean(arr / scale - truth / scale))


#: Phi^{-1}(0.975) = 1.959963984540054235524594430520551527955550..., correctly rounded (the
#: default 95% level's quantile: no scipy import for it; scipy's ``ndtri(0.975)`` is one ulp
#: below it; checked against mpmath in the tests).
_Z_975 = 1.9599639845400543


def _normal_quantile(p: float) -> float:
    """Phi^{-1}(p) of the standard normal law: scipy's ``ndtri`` (imported on first use, ~0.1 s),
    or the constant for the default p = 0.975."""
    if p == 0.975:
        return _Z_975
    from scipy import special

    return float(special.ndtri(p))


def rmse_confidence_interval(estimates: ArrayLike, truth: float, level: float = 0.95) -> tuple[float, float]:
    r"""Confidence interval for the RMSE from the squared errors (CLT on their mean).

    The mean squared error m is estimated by the average of e_t^2 with standard error
    s / sqrt(T); the interval for the MSE is clipped at 0 and square-rooted.

    >>> lo, hi = rmse_confidence_interval([9.0, 11.0, 10.5, 9.5], 10.0)
    >>> bool(lo <= 0.79 <= hi)
    True
    """
    arr = _estimates(estimates)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    truth = _truth(truth)
    if arr.size < 2:
        return (0.0, math.inf)
    err = arr - truth
    scale = float(np.max(np.abs(err))) or 1.0  # squared errors in units of scale^2: no overflow
    sq = (err / scale) ** 2
    m = float(sq.mean())
    half = float(_normal_quantile(0.5 + level / 2) * sq.std(ddof=1) / math.sqrt(arr.size))
    return (scale * math.sqrt(max(m - half, 0.0)), scale * math.sqrt(m + half))
