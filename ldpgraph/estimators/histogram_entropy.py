r"""The degree entropy estimator of :func:`ldpgraph.estimators.entropy` evaluated on a report histogram.

:func:`ldpgraph.estimators.entropy` (unknown total) and
:func:`ldpgraph.estimators.entropy_variance_estimate` use the reports only through sums over
the reports of per-report terms (values and differences of phi_1(a) = a ln a and phi_2(a) = a
at y_v, and their pairwise products) and through n and the total Y = sum_v y_v. Every such sum
is sum_u N(u) t(u) over the distinct reports u with counts N(u); this module takes them over a histogram of
the reports (a :class:`~ldpgraph.protocols.report_histogram.ReportHistogram`, or anything with its
``n``, ``epsilon``, ``sensitivity``, ``values``, ``weighted_sum`` and ``power_sum``), each correctly rounded
(:meth:`ReportHistogram.weighted_sum`), and otherwise follows the estimators' code step by step
(same one-dimensional operators T^{n-1}, T^{n-2}, same product rule), so the estimator is the
same function of the reports; only its summation order (and rounding) differs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import dlap_c
from . import entropies as _en

__all__ = ["entropy_from_histogram"]


def entropy_from_histogram(hist: Any) -> tuple[float, float]:
    """(Ĥ, variance estimate) of the entropy of the reports taken as counts, from their histogram.

    Raises ValueError, as :func:`ldpgraph.estimators.entropy`, where the estimate overflows.

    Examples
    --------
    >>> from ldpgraph.protocols import ReportHistogram
    >>> h = ReportHistogram.from_reports([5, 5], epsilon=60.0)
    >>> round(entropy_from_histogram(h)[0], 12)  # noise-free limit: ln 2
    0.69314718056
    """
    n = hist.n
    if n == 0:
        raise ValueError("the entropy of no counts is undefined (need at least one report)")
    c = dlap_c(hist.epsilon, hist.sensitivity)
    u, w = hist.values, hist.weighted_sum
    Y = np.int64(hist.power_sum(1))
    # --- the estimate: _entropy_parts with weighted sums
    P = _en._power(n - 1, Y, c, ("u", "v", "du", "dv", "ddu", "ddv"), "entropy")
    d = _en._bin_differences(u)
    S = {key: w(val) for key, val in d.items()}
    with np.errstate(over="ignore", invalid="ignore"):
        H = -_en._debiased_product(S["1"], S["1+"], S["1-"], S["1d2"], P["u"], P["du"], P["ddu"], c)
        H = H + _en._debiased_product(S["2"], S["2+"], S["2-"], S["2d2"], P["v"], P["dv"], P["ddv"], c)
    H = np.asarray(H, dtype=np.float64)
    _en._warn_if_wild(H, max(1.0, math.log(n)), "entropy")
    g = float(_en._out(H, "entropy"))
    # --- T[H^2]: _square_operator with weighted sums
    al = np.array(_en._alphas(c))
    kinds = ("u2", "v2", "w2")
    a = (u[:, None] + np.array([-1, 0, 1])).astype(np.float64)
    phi1 = -_en._xlogx(a)
    phi2 = np.where(a >= 1, a, 0.0)
    P1 = _en._power(n - 1, Y + np.array([-1, 0, 1]), c, kinds, "entropy_variance_estimate")
    D11 = np.array([w(phi1[:, j] * phi1[:, j]) for j in range(3)])
    D12 = np.array([w(phi1[:, j] * phi2[:, j]) for j in range(3)])
    D22 = np.array([w(phi2[:, j] * phi2[:, j]) for j in range(3)])
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(((D11 * P1["u2"] + 2.0 * D12 * P1["v2"] + D22 * P1["w2"]) * al).sum())
        if n >= 2:
            P2 = _en._power(n - 2, Y + np.arange(-2, 3), c, kinds, "entropy_variance_estimate")
            F1 = [w(phi1[:, j]) for j in range(3)]
            F2 = [w(phi2[:, j]) for j in range(3)]
            for j in range(3):
                for k in range(3):
                    sig = j + k
                    c11 = F1[j] * F1[k] - w(phi1[:, j] * phi1[:, k])
                    c12 = F1[j] * F2[k] - w(phi1[:, j] * phi2[:, k])
                    c21 = F2[j] * F1[k] - w(phi2[:, j] * phi1[:, k])
                    c22 = F2[j] * F2[k] - w(phi2[:, j] * phi2[:, k])
                    total = total + al[j] * al[k] * (
                        c11 * P2["u2"][sig] + (c12 + c21) * P2["v2"][sig] + c22 * P2["w2"][sig]
                    )
        v = np.asarray(g * g - total, dtype=np.float64)
    return g, float(_en._out(v, "entropy_variance_estimate"))
