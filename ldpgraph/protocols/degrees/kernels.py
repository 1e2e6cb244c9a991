r"""Fast simulation kernels of the degree and local k-star protocols, vectorised over trials.

The ``simulate`` and ``moments`` hooks of :mod:`ldpgraph.protocols.degrees.degree` and
:mod:`ldpgraph.protocols.degrees.local_kstars` call these with what they read from the plan (ε of each
release, the public bound D) and the star size k. Every kernel draws the same law as a
:func:`~ldpgraph.run.run_in_memory` run of its protocol (tested in
``tests/protocols/test_degree_protocol.py``) and consumes its generator in a fixed way: the
records of an experiment depend on that (``tests/experiments/test_records_frozen.py``).

================================== ==========================================================
kernel                             node releases / curator computes
================================== ==========================================================
:func:`simulate_degree_kstars`     d_v + DLap(e^-ε) or + Lap(1/ε); the unbiased estimate of
                                   C(d_v, k) (DLap: the unique minimum-variance one; Laplace:
                                   C(y,k) - b² C''(y,k), Hillebrand et al.) or the plug-in C(y, k)
:func:`simulate_local_counts`      C(min(d_v, D), k) + Lap or DLap of sensitivity C(D, k-1);
                                   the curator sums (Imola, Murakami, Chaudhuri 2021)
:func:`simulate_private_bound`     ε₀ on d_v + noise, D from the maximum; ε₂ on the counts at D
:func:`simulate_degree_statistic`  d_v + DLap(e^-ε); a degree statistic's unbiased estimate or
                                   its plug-in
================================== ==========================================================

Examples
--------
>>> import numpy as np
>>> d = np.array([3, 1, 2, 2])
>>> simulate_degree_kstars(d, 2, 500.0, 2, np.random.default_rng(0)).tolist()  # noise-free
[5.0, 5.0]
>>> degree_kstar_moments(d, 2, 1.0, "dlap", "unbiased")[0]
5.0
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...estimators.polynomials import (
    binomial,
    binomial_plugin_moments,
    binomial_variance,
    checked_binomial_kernel,
)
from ...graph.statistics import kstar_counts as exact_kstars
from ...mechanisms import DiscreteLaplace, Laplace
from ...mechanisms.discrete_laplace import sample_dlap
from ...mechanisms.laplace import sample_symmetric_exponential
from ...mechanisms.secure import sample_dlap_exact
from ..randomizer import projected_kstar_counts

__all__ = [
    "BLOCK_VALUES",
    "PIECE_VALUES",
    "binomial_poly",
    "row_sums",
    "row_sums_kernel",
    "degree_values",
    "degree_piece_kernel",
    "simulate_degree_kstars",
    "degree_kstar_moments",
    "simulate_local_counts",
    "local_count_release",
    "local_count_moments",
    "simulate_private_bound",
    "simulate_degree_statistic",
    "degree_statistic_sd",
    "laplace_kstar_variance_estimate",
    "exact_kstars",
]

#: Trials are simulated in blocks of at most this many noisy values (memory bound). Part of
#: the draws' definition: a block's noise is one draw of shape (trials, nodes).
BLOCK_VALUES = 4_000_000

#: The curator side of a block evaluates its elementwise estimates in pieces of this many values:
#: the estimators' float64 temporaries of a piece (64 KiB) stay below glibc's default mmap
#: threshold (128 KiB), so malloc recycles them instead of mmap-ing, zeroing and unmapping them
#: every time, and a few fit the L2 cache. (Measured on 100 x 4,039 reports: 65,536-value pieces
#: page-fault ~10,000 times per block in the Laplace rule; 32,768-value pieces fault in a fresh
#: worker process, whose mmap threshold has not yet grown; 8,192-value pieces never.)
PIECE_VALUES = 1 << 13
#: ... and sums them per trial over groups of whole trials of about this many values.
_GROUP_VALUES = 1 << 16


class _Scratch(threading.local):
    """Per-thread float64/int64 buffers of the vectorized simulation, reused across calls.

    Without them every block allocates several arrays of trials x nodes values (3.2 MB each for
    100 trials of 4,039 nodes); glibc serves such sizes with fresh ``mmap``-ed pages that are
    zeroed, faulted in and unmapped again, and that kernel work was ~40% of an experiment's wall
    time (issue 15). A buffer grows to the largest block seen in its thread (at most
    ``BLOCK_VALUES`` values) and is kept for the next block, cell and call.
    """

    def __init__(self) -> None:
        self.buffers: dict[str, NDArray] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype: type) -> NDArray:
        """A C-contiguous ``shape`` view of buffer ``name`` (contents undefined)."""
        n = math.prod(shape)
        buf = self.buffers.get(name)
        if buf is None or buf.size < n or buf.dtype != dtype:
            buf = self.buffers[name] = np.empty(n, dtype=dtype)
        return buf[:n].reshape(shape)


_SCRATCH = _Scratch()


def binomial_poly(y: ArrayLike, k: int) -> NDArray[np.float64]:
    """C(y, k) = y (y-1) ... (y-k+1) / k! evaluated in float64 for real or integer y.

    >>> binomial_poly([4, -1.5], 2).tolist()
    [6.0, 1.875]
    """
    y = np.asarray(y, dtype=np.float64)
    out = np.empty_like(y)
    _binomial_poly_into(y, k, out, np.empty_like(y))
    return out


def _binomial_poly_into(y: NDArray[np.float64], k: int, out: NDArray[np.float64],
                        tmp: NDArray[np.float64]) -> None:
    """:func:`binomial_poly` of the float64 ``y`` into ``out``, with ``tmp`` (same size) as scratch."""
    out.fill(1.0)
    for j in range(k):  # out *= (y - j) / (j + 1), in place
        np.subtract(y, j, out=tmp)
        tmp /= j + 1
        out *= tmp


def row_sums_kernel(reports: NDArray, kernel: Callable, piece: int = PIECE_VALUES, *,
                    as_float: bool = True) -> NDArray[np.float64]:
    """:func:`row_sums` for a value function given as an in-place kernel on pieces of the reports.

    ``kernel(y, out)`` writes the values of the piece ``y`` into ``out``. With ``as_float`` the
    pieces are converted to float64 first (into a scratch buffer), as the estimators' chunk
    loops do before their chunk kernels: given those kernels, the values, and so the sums, are
    bitwise those of the public functions; their validation and set-up are paid once per block
    instead of once per piece, and nothing is allocated per piece.
    """
    n, m = reports.shape
    rows = max(1, _GROUP_VALUES // max(1, m))
    out = np.empty(n, dtype=np.float64)
    buf = _SCRATCH.get("values", (min(rows, n), m), np.float64)
    yf = _SCRATCH.get("piece", (min(piece, reports.size),), np.float64) if as_float else None
    for start in range(0, n, rows):
        group = reports[start : start + rows]
        vals = buf[: group.shape[0]]
        flat, flat_vals = group.reshape(-1), vals.reshape(-1)
        for lo in range(0, flat.size, piece):
            part = flat[lo : lo + piece]
            if yf is not None:
                y = yf[: part.size]
                y[...] = part  # the float64 conversion of the estimators' chunk loop
                part = y
            kernel(part, flat_vals[lo : lo + part.size])
        np.sum(vals, axis=-1, out=out[start : start + rows])
    return out


def row_sums(reports: NDArray, values: Callable, piece: int = PIECE_VALUES) -> NDArray[np.float64]:
    """``values(reports).sum(axis=-1)`` for an elementwise ``values``, piece by piece.

    The values of a group of whole trials are computed in pieces of ``piece`` values into a
    scratch buffer, and each trial is then summed by one numpy reduction over its row, as over
    the whole block: the results are bitwise those of ``values(reports).sum(axis=-1)``.

    >>> row_sums(np.arange(6.0).reshape(2, 3), np.square).tolist()
    [5.0, 50.0]
    """

    def kernel(part: NDArray, out: NDArray[np.float64]) -> None:
        out[...] = values(part)

    return row_sums_kernel(reports, kernel, piece, as_float=False)


def _blocks(d: NDArray[np.int64], n_trials: int, block: Callable[[int], NDArray]) -> NDArray[np.float64]:
    """``n_trials`` estimates drawn in blocks of at most :data:`BLOCK_VALUES` noisy values."""
    if d.size == 0:  # no nodes: S_k = 0, and nothing is released
        return np.zeros(n_trials)
    size = max(1, BLOCK_VALUES // max(1, d.size))
    out = np.empty(n_trials, dtype=np.float64)
    for start in range(0, n_trials, size):
        stop = min(n_trials, start + size)
        out[start:stop] = block(stop - start)
    return out


def _sum_by_distinct(d: NDArray[np.int64], per_value: Callable) -> float:
    """sum_v h(d_v) for a vectorized h, evaluated once per distinct degree."""
    values, counts = np.unique(d, return_counts=True)
    per = np.asarray(per_value(values), dtype=np.float64)
    return float(math.fsum(per * counts))


# --------------------------------------------------------------------------- degree reports


def degree_values(reports: ArrayLike, k: int, eps: float, noise: str, estimator: str) -> NDArray[np.float64]:
    """Each report's term of the k-star estimate: the unbiased estimate of C(d, k) from the report
    (``estimator="unbiased"``) or the plug-in C(y, k) (``"naive"``), for ``noise`` "dlap" or "laplace".

    >>> degree_values([3], 2, 500.0, "dlap", "unbiased").tolist()
    [3.0]
    >>> degree_values([3.5], 2, 1.0, "laplace", "naive").tolist()
    [4.375]
    """
    if estimator == "naive":
        return binomial_poly(reports, k)
    return binomial(reports, k, eps, noise=noise)


def degree_piece_kernel(reports: NDArray, k: int, eps: float, noise: str, estimator: str) -> Callable:
    """``kernel(yf, out)`` computing :func:`degree_values` of float64 pieces of ``reports`` in place
    (bitwise the same values), after the checks :func:`degree_values` makes on ``reports``."""
    if estimator == "naive":
        tmp = _SCRATCH.get("poly", (min(PIECE_VALUES, reports.size),), np.float64)
        return lambda yf, out: _binomial_poly_into(yf, k, out, tmp[: yf.size])
    return checked_binomial_kernel(reports, k, eps, noise=noise)


def simulate_degree_kstars(d: NDArray[np.int64], k: int, eps: float, n_trials: int, gen: np.random.Generator,
                           noise: str = "dlap", estimator: str = "unbiased") -> NDArray[np.float64]:
    r"""Estimates of :math:`S_k` in ``n_trials`` runs where every node releases
    :math:`y_v = d_v + \mathrm{DLap}(e^{-\varepsilon})` (``noise="dlap"``) or
    :math:`d_v + \mathrm{Lap}(1/\varepsilon)`, and the curator sums :func:`degree_values`.

    The noise of a block is drawn into scratch buffers, the estimate summed piece by piece
    (:func:`row_sums_kernel`).
    """

    def block(runs: int) -> NDArray[np.float64]:
        shape = (runs, d.size)
        if noise == "dlap":
            mech = DiscreteLaplace(epsilon=eps)
            y = _SCRATCH.get("int", shape, np.int64)
            sample_dlap(gen, shape, mech.epsilon / mech.sensitivity, mech.p, out=y,
                        scratch=_SCRATCH.get("float", shape, np.float64))
        else:
            y = _SCRATCH.get("float", shape, np.float64)
            sample_symmetric_exponential(gen, shape, Laplace(epsilon=eps).scale, out=y)
        y += d  # d + noise, elementwise
        return row_sums_kernel(y, degree_piece_kernel(y, k, eps, noise, estimator))

    return _blocks(d, n_trials, block)


def degree_kstar_moments(d: NDArray[np.int64], k: int, eps: float, noise: str, estimator: str
                         ) -> tuple[float, float]:
    """Exact mean and variance of :func:`simulate_degree_kstars`' estimate."""
    if estimator == "naive":
        return (_sum_by_distinct(d, lambda x: binomial_plugin_moments(x, k, eps, noise=noise)[0]),
                _sum_by_distinct(d, lambda x: binomial_plugin_moments(x, k, eps, noise=noise)[1]))
    return float(exact_kstars(d, k)), _sum_by_distinct(d, lambda x: binomial_variance(x, k, eps, noise=noise))


def laplace_kstar_variance_estimate(reports: ArrayLike, k: int, epsilon: float) -> float:
    r"""Unbiased estimate of the variance of the unbiased Laplace k-star estimate, from its reports.

    :math:`\hat V = \sum_v 2b^2 f'(y_v)^2 + b^4 f''(y_v)^2` with :math:`f = \binom{\cdot}{k}` and
    b = 1/ε (the reports are :math:`y_v = d_v + \mathrm{Lap}(b)`). With :math:`T[h] = h - b^2 h''`
    (unbiased for h(x) for every polynomial h: DESIGN §3), :math:`g^2 - T[f^2]` is unbiased for
    :math:`\operatorname{Var} g`, and with g = T[f] it expands to :math:`2b^2 f'^2 + b^4 f''^2`
    (the :math:`f f''` terms cancel): never negative.

    Examples
    --------
    >>> laplace_kstar_variance_estimate([2.5, -1.0], 1, 2.0)   # k = 1: each report's variance 2 b^2
    1.0
    """
    from ..._validation import check_epsilon

    y = np.asarray(reports, dtype=np.float64).ravel()
    b = 1.0 / check_epsilon(epsilon)
    f = np.polynomial.Polynomial.fromroots(np.arange(k, dtype=np.float64)) / math.factorial(k)
    d1, d2 = f.deriv(1)(y), f.deriv(2)(y)
    return math.fsum((2.0 * b * b * d1 * d1 + b**4 * d2 * d2).tolist())


# --------------------------------------------------------------------- local k-star counts


def _count_sensitivity(d_max: int, k: int) -> int:
    """C(D, k-1), at least 1: how far one edge moves a projected k-star count."""
    return max(math.comb(int(d_max), k - 1), 1)


def local_count_release(d: NDArray[np.int64], k: int, eps: float, d_max: int, runs: int,
                        gen: np.random.Generator, noise: str) -> NDArray:
    r"""The node side, ``(runs, n)`` releases :math:`\binom{\min(d_v, D)}{k}` + Lap or DLap noise of
    sensitivity :math:`\binom{D}{k-1}` at ε (what the privacy audit checks).

    >>> local_count_release(np.array([3, 1]), 2, 500.0, 2, 1, np.random.default_rng(0), "dlap").tolist()
    [[1, 0]]
    """
    sens = _count_sensitivity(d_max, k)
    counts = projected_kstar_counts(d, k, d_max)
    if noise == "dlap":
        mech = DiscreteLaplace(epsilon=eps, sensitivity=sens)
        return mech.randomize(np.broadcast_to(counts, (runs, d.size)), rng=gen)
    mech = Laplace(epsilon=eps, sensitivity=sens)
    return counts.astype(np.float64)[None, :] + mech.sample((runs, d.size), rng=gen)


def simulate_local_counts(d: NDArray[np.int64], k: int, eps: float, d_max: int, n_trials: int,
                          gen: np.random.Generator, noise: str) -> NDArray[np.float64]:
    r"""Estimates :math:`\sum_v r_v` of ``n_trials`` runs of the local k-star counts with public bound D."""
    sens = _count_sensitivity(d_max, k)

    def block(runs: int) -> NDArray[np.float64]:
        if noise == "dlap":
            return local_count_release(d, k, eps, d_max, runs, gen, noise).sum(axis=-1, dtype=np.float64)
        counts = projected_kstar_counts(d, k, d_max).astype(np.float64)
        reports = _SCRATCH.get("float", (runs, d.size), np.float64)
        scale = Laplace(epsilon=eps, sensitivity=sens).scale
        sample_symmetric_exponential(gen, reports.shape, scale, out=reports)
        reports += counts
        return reports.sum(axis=-1, dtype=np.float64)

    return _blocks(d, n_trials, block)


def local_count_moments(d: NDArray[np.int64], k: int, eps: float, d_max: int,
                        noise: str) -> tuple[float, float]:
    """Exact mean (the projected :math:`S_k`) and variance (n times the noise's) of
    :func:`simulate_local_counts`' estimate."""
    sens = _count_sensitivity(d_max, k)
    mean = float(exact_kstars(np.minimum(d, d_max), k))
    if noise == "dlap":
        return mean, d.size * DiscreteLaplace(epsilon=eps, sensitivity=sens).variance
    return mean, d.size * 2.0 * (sens / eps) ** 2


def simulate_private_bound(d: NDArray[np.int64], k: int, eps0: float, eps2: float, n_trials: int,
                           gen: np.random.Generator, noise: str) -> NDArray[np.float64]:
    r"""Estimates of ``n_trials`` runs with the private bound: ε₀ on :math:`y_v = d_v` + noise,
    then D from the noisy maximum (DLap: :math:`\max(1, \max_v y_v)`; Laplace:
    :math:`\max(\lfloor \max_v y_v \rfloor, 0)`), ε₂ on the counts projected to D."""
    if d.size == 0:
        return np.zeros(n_trials)
    values, counts = np.unique(d, return_counts=True)
    out = np.empty(n_trials)
    if noise == "laplace":
        noisy = d[None, :] + gen.laplace(0.0, 1.0 / eps0, size=(n_trials, d.size))
        bounds = np.maximum(np.floor(noisy.max(axis=1)), 0).astype(np.int64)
        for t, bound in enumerate(bounds):
            total = float(np.dot(binomial_poly(np.minimum(values, bound), k), counts))
            scale = math.comb(int(bound), k - 1) / eps2
            out[t] = total + (gen.laplace(0.0, scale, size=d.size).sum() if scale > 0 else 0.0)
        return out
    noisy = d[None, :] + DiscreteLaplace(epsilon=eps0).sample((n_trials, d.size), rng=gen)
    vals, cnts = values.tolist(), counts.tolist()
    for t, bound in enumerate(np.maximum(noisy.max(axis=1), 1).tolist()):
        total = sum(math.comb(min(v, bound), k) * c for v, c in zip(vals, cnts, strict=True))  # exact
        sens = _count_sensitivity(bound, k)
        mech = DiscreteLaplace(epsilon=eps2, sensitivity=sens)
        if mech.fast_noise_bound < 2**52:
            noise_sum = int(mech.sample(d.size, rng=gen).sum())
        else:  # noise beyond float64's integers: the exact sampler (as the layer's seeded stream)
            scale = Fraction(sens) / Fraction(eps2)
            draws = sample_dlap_exact(scale.numerator, scale.denominator, d.size, rng=gen)
            noise_sum = sum(int(x) for x in draws)
        out[t] = float(total + noise_sum)
    return out


# ------------------------------------------------------------------------ degree statistics


def simulate_degree_statistic(d: NDArray[np.int64], statistic: str, param: int | None, eps: float,
                              n_trials: int, gen: np.random.Generator, estimator: str = "unbiased"
                              ) -> NDArray[np.float64]:
    r"""Estimates of a degree statistic (:mod:`ldpgraph.protocols.statistics`) in ``n_trials`` runs:
    every node's report :math:`y_v = d_v + \mathrm{DLap}(e^{-\varepsilon})`
    (:class:`~ldpgraph.protocols.randomizer.DegreeRandomizer`), then the curator's unbiased
    estimate (``estimator="unbiased"``) or the plug-in of the noisy degrees (``"naive"``).

    >>> d, gen = np.array([1, 2, 1]), np.random.default_rng(0)
    >>> simulate_degree_statistic(d, "edges", None, 50.0, 2, gen).tolist()
    [2.0, 2.0]
    """
    from ..randomizer import DegreeRandomizer
    from ..statistics import get_statistic

    stat = get_statistic(statistic)
    randomizer = DegreeRandomizer(epsilon=eps)
    out = np.empty(n_trials, dtype=np.float64)
    for t in range(n_trials):
        reports = randomizer.randomize(d, rng=gen)
        if estimator == "naive":
            out[t] = stat.naive(reports.degrees.values, param)
        else:
            out[t] = float(stat.unbiased(reports, param).value)
    return out


def degree_statistic_sd(d: NDArray[np.int64], statistic: str, param: int | None, eps: float,
                        estimator: str = "unbiased") -> float | None:
    """The exact standard deviation of :func:`simulate_degree_statistic`'s estimate, or None: the
    plug-in of a statistic it biases, or no closed form
    (:attr:`~ldpgraph.protocols.statistics.GraphStatistic.analytic_sd`).

    >>> degree_statistic_sd(np.array([1, 2, 1]), "degree_moment", 2, 1.0, "naive") is None
    True
    """
    from ..statistics import get_statistic

    stat = get_statistic(statistic)
    if estimator == "unbiased" or stat.naive_is_unbiased:
        return stat.analytic_sd(d, param, eps)
    return None


# ------------------------------------------------------------------- one run, as a curator sees it

#: why a plug-in of the noisy degrees has no standard error
PLUGIN_NO_SE = ("a plug-in of the noisy degrees: biased for this statistic, so a standard deviation "
                "would not describe its error")
#: why a private degree bound leaves no standard error
PRIVATE_BOUND_NO_SE = ("the noisy degree bound D makes the projection bias random and unknown to the "
                       "curator; 'ldpgraph curate' gives the noise's standard error given D, which does not "
                       "cover that bias; 'ldpgraph experiment' measures the RMSE")


def degree_run_with_error(d: NDArray[np.int64], statistic: str, k: int | None, eps: float,
                          gen: np.random.Generator, noise: str,
                          estimator: str) -> tuple[float, float | None, str]:
    r"""One run of the degree reports as the curator sees it: ``(estimate, standard error, kind)``, the
    standard error from the reports and public values only (a key of
    :data:`~ldpgraph.protocols.curator.SE_KINDS`, or ``"none: <reason>"``).

    >>> degree_run_with_error(np.array([3, 1, 2, 2]), "kstars", 2, 1.0, np.random.default_rng(0), "dlap",
    ...                       "unbiased")[2]
    'unbiased'
    """
    if statistic != "kstars":
        from ..randomizer import DegreeRandomizer
        from ..statistics import get_statistic

        stat = get_statistic(statistic)
        reports = DegreeRandomizer(epsilon=eps).randomize(d, rng=gen)
        if estimator == "naive" and not stat.naive_is_unbiased:
            return float(stat.naive(reports.degrees.values, k)), None, "none: " + PLUGIN_NO_SE
        e = stat.unbiased(reports, k)
        value = float(e.value if estimator == "unbiased" else stat.naive(reports.degrees.values, k))
        return value, None if e.std_error_kind.startswith("none") else e.std_error, e.std_error_kind
    mech = DiscreteLaplace(epsilon=eps) if noise == "dlap" else Laplace(epsilon=eps)
    reports = d[None, :] + mech.sample((1, d.size), rng=gen)
    value = float(degree_values(reports, k, eps, noise, estimator).sum(axis=-1)[0])
    if estimator == "naive":
        return value, None, "none: " + PLUGIN_NO_SE
    if noise == "laplace":
        var = laplace_kstar_variance_estimate(reports, k, eps)
    else:
        from ..curator import kstars
        from ..report_histogram import ReportHistogram

        var = kstars(ReportHistogram.from_reports(reports[0], eps), k).variance_estimate
    return value, math.sqrt(max(var, 0.0)), "unbiased"
