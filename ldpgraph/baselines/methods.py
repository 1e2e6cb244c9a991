r"""k-star estimation methods under edge-LDP, node side + curator side, behind one interface.

Every method simulates, for a graph with true degrees d_1..d_n, what the nodes release at
privacy budget epsilon and what the curator then estimates for the k-star count
S_k = sum_v C(d_v, k). Simulation is vectorized over trials: one call returns the estimates
of ``n_trials`` independent runs.

=============================== ============================================================
name                            node releases / curator computes
=============================== ============================================================
``unbiased-dlap`` (ours)        d_v + DLap(e^-eps); sum_v of the unbiased estimate of C(d_v,k)
``naive-dlap``                  d_v + DLap(e^-eps); sum_v C(d~_v, k) (plug-in, biased)
``unbiased-laplace``            d_v + Lap(1/eps); sum_v C(y,k) - b^2 C''(y,k) (Hillebrand et al.)
``naive-laplace``               d_v + Lap(1/eps); sum_v C(y, k) (plug-in, biased)
``local-lap-kstars``            C(min(d_v,d_max),k) + Lap(C(d_max,k-1)/eps), d_max public
                                (the true maximum degree, as in Imola et al.'s experiments)
``local-lap-kstars-private``    eps/10: d_v + Lap(10/eps), d~max = max_v of those;
                                0.9 eps: C(min(d_v, floor d~max), k) + Lap(C(floor d~max,k-1)/0.9eps)
``local-dlap-kstars``           as local-lap-kstars with DLap(e^{-eps/C(d_max,k-1)}) (integers)
``local-dlap-kstars-private``   as local-lap-kstars-private with DLap: D = max(1, max_v y_v)
=============================== ============================================================

Analytic mean and variance are given for every method whose estimate is a polynomial of the
noise (all but the ``-private`` ones), so Monte-Carlo results can be checked. Each method is the
fast simulator of its protocol of the protocol layer (:attr:`KStarMethod.protocol`), the same
law, vectorised over trials.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from ..estimators.polynomials import (
    binomial,
    binomial_plugin_moments,
    binomial_variance,
    checked_binomial_kernel,
)
from ..graph.statistics import kstar_counts as exact_kstars
from ..mechanisms import DiscreteLaplace, Laplace
from ..mechanisms.discrete_laplace import sample_dlap
from ..mechanisms.laplace import sample_symmetric_exponential
from ..mechanisms.secure import sample_dlap_exact
from ..protocols.randomizer import as_degrees, projected_kstar_counts

__all__ = [
    "KStarMethod",
    "UnbiasedDLap",
    "NaiveDLap",
    "UnbiasedLaplace",
    "NaiveLaplace",
    "LocalLapKStars",
    "LocalLapKStarsPrivateDmax",
    "LocalDLapKStars",
    "LocalDLapKStarsPrivateDmax",
    "laplace_kstar_variance_estimate",
    "METHODS",
    "get_method",
    "method_names",
    "exact_kstars",
]

#: Trials are simulated in blocks of at most this many noisy values (memory bound). Part of
#: the draws' definition: a block's noise is one draw of shape (trials, nodes).
_BLOCK_VALUES = 4_000_000

#: The curator side of a block evaluates its elementwise estimates in pieces of this many values:
#: the estimators' float64 temporaries of a piece (64 KiB) stay below glibc's default mmap
#: threshold (128 KiB), so malloc recycles them instead of mmap-ing, zeroing and unmapping them
#: every time, and a few fit the L2 cache. (Measured on 100 x 4,039 reports: 65,536-value pieces
#: page-fault ~10,000 times per block in the Laplace rule; 32,768-value pieces fault in a fresh
#: worker process, whose mmap threshold has not yet grown; 8,192-value pieces never.)
_PIECE_VALUES = 1 << 13
#: ... and sums them per trial over groups of whole trials of about this many values.
_GROUP_VALUES = 1 << 16


class _Scratch(threading.local):
    """Per-thread float64/int64 buffers of the vectorized simulation, reused across calls.

    Without them every block allocates several arrays of trials x nodes values (3.2 MB each for
    100 trials of 4,039 nodes); glibc serves such sizes with fresh ``mmap``-ed pages that are
    zeroed, faulted in and unmapped again, and that kernel work was ~40% of an experiment's wall
    time (issue 15). A buffer grows to the largest block seen in its thread (at most
    ``_BLOCK_VALUES`` values) and is kept for the next block, cell and call.
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


def _binomial_poly(y: NDArray, k: int) -> NDArray[np.float64]:
    """C(y, k) = y (y-1) ... (y-k+1) / k! evaluated in float64 for real or integer y."""
    y = np.asarray(y, dtype=np.float64)
    out = np.empty_like(y)
    _binomial_poly_into(y, k, out, np.empty_like(y))
    return out


def _binomial_poly_into(
    y: NDArray[np.float64], k: int, out: NDArray[np.float64], tmp: NDArray[np.float64]
) -> None:
    """:func:`_binomial_poly` of the float64 ``y`` into ``out``, with ``tmp`` (same size) as scratch."""
    out.fill(1.0)
    for j in range(k):  # out *= (y - j) / (j + 1), in place
        np.subtract(y, j, out=tmp)
        tmp /= j + 1
        out *= tmp


def _row_sums_kernel(
    reports: NDArray, kernel, piece: int = _PIECE_VALUES, *, as_float: bool = True
) -> NDArray[np.float64]:
    """``_row_sums`` for a value function given as an in-place kernel on pieces of the reports.

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


def _row_sums(reports: NDArray, values, piece: int = _PIECE_VALUES) -> NDArray[np.float64]:
    """``values(reports).sum(axis=-1)`` for an elementwise ``values``, piece by piece.

    The values of a group of whole trials are computed in pieces of ``piece`` values into a
    scratch buffer, and each trial is then summed by one numpy reduction over its row, as over
    the whole block: the results are bitwise those of ``values(reports).sum(axis=-1)``.
    """

    def kernel(part: NDArray, out: NDArray[np.float64]) -> None:
        out[...] = values(part)

    return _row_sums_kernel(reports, kernel, piece, as_float=False)


class KStarMethod:
    """A k-star estimation method: node-side randomizer plus curator-side estimator."""

    #: registry name used by experiments and the command line
    name: str = ""
    #: the reference it follows
    reference: str = ""
    #: its protocol of the protocol layer (:mod:`ldpgraph.core.registry`: the plan, and how ``ldpgraph
    #: node`` / ``curate`` run it when deployable) and the options that select it; this class is the
    #: protocol's fast simulator (vectorised over trials, the same law)
    protocol: tuple[str, dict] = ("", {})
    #: "dlap" or "laplace": the noise the nodes add
    noise: str = ""
    #: whether the estimate is unbiased for S_k
    unbiased: bool = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def estimate_trials(
        self, degrees: ArrayLike, k: int, epsilon: float, n_trials: int = 1, *, rng=None
    ) -> NDArray[np.float64]:
        """Simulate ``n_trials`` independent runs; return the curator's estimate of each.

        Parameters
        ----------
        degrees : array_like of int
            True degrees (or a graph with a ``degrees`` attribute).
        k : int
            Star size, >= 1.
        epsilon : float
            Total budget per node.
        n_trials : int
            Number of independent runs.
        rng : Generator, seed or None
        """
        d = as_degrees(degrees)
        k = check_nonnegative_int(k, "k", minimum=1)
        eps = check_epsilon(epsilon)
        n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
        gen = check_rng(rng)
        if d.size == 0:  # no nodes: S_k = 0, and every method releases nothing
            return np.zeros(n_trials)
        block = max(1, _BLOCK_VALUES // max(1, d.size))
        out = np.empty(n_trials, dtype=np.float64)
        for start in range(0, n_trials, block):
            stop = min(n_trials, start + block)
            out[start:stop] = self._simulate(d, k, eps, stop - start, gen)
        return out

    def randomize(
        self, degrees: ArrayLike, k: int, epsilon: float, *, size: int | None = None, rng=None
    ) -> NDArray:
        """Node side: every node's release, shape (n,) or (size, n) for ``size`` independent runs."""
        d = as_degrees(degrees)
        k = check_nonnegative_int(k, "k", minimum=1)
        eps = check_epsilon(epsilon)
        runs = 1 if size is None else check_nonnegative_int(size, "size", minimum=1)
        out = self._randomize(d, k, eps, runs, check_rng(rng))
        return out[0] if size is None else out

    def estimate(self, reports: ArrayLike, k: int, epsilon: float) -> NDArray[np.float64]:
        """Curator side: the estimate of S_k from the releases (summed over the last axis)."""
        k = check_nonnegative_int(k, "k", minimum=1)
        return self._estimate(np.asarray(reports), k, check_epsilon(epsilon))

    def _randomize(self, d: NDArray[np.int64], k: int, eps: float, runs: int, gen) -> NDArray:
        raise NotImplementedError(f"{self.name} is a multi-round protocol; use estimate_trials")

    def _estimate(self, reports: NDArray, k: int, eps: float) -> NDArray[np.float64]:
        raise NotImplementedError(f"{self.name} is a multi-round protocol; use estimate_trials")

    def _simulate(self, d: NDArray[np.int64], k: int, eps: float, n_trials: int, gen) -> NDArray:
        """Estimates of ``n_trials`` runs (d, k, eps already validated)."""
        return self._estimate(self._randomize(d, k, eps, n_trials, gen), k, eps)

    #: why the curator has no standard error for this method (:meth:`estimate_with_error`)
    no_error_reason: str = "no variance estimate from the reports is implemented for this method"

    def estimate_with_error(
        self, degrees: ArrayLike, k: int, epsilon: float, *, rng=None
    ) -> tuple[float, float | None, str]:
        """One run as the curator sees it: the estimate, its standard error from the reports and
        public values only, and the kind of that standard error (a key of
        :data:`~ldpgraph.protocols.curator.SE_KINDS`, or ``"none: <reason>"``).

        The estimate is the first of ``estimate_trials(degrees, k, epsilon, 1, rng=rng)`` (the same
        draws).

        Examples
        --------
        >>> value, se, kind = get_method("unbiased-dlap").estimate_with_error([3, 1, 2, 2], 2, 1.0, rng=0)
        >>> kind, se > 0
        ('unbiased', True)
        >>> get_method("naive-dlap").estimate_with_error([3, 1, 2, 2], 2, 1.0, rng=0)[2][:25]
        'none: a plug-in of the no'
        """
        value = float(self.estimate_trials(degrees, k, epsilon, 1, rng=rng)[0])
        return value, None, "none: " + self.no_error_reason

    def analytic_mean(self, degrees: ArrayLike, k: int, epsilon: float) -> float | None:
        """E[estimate] in closed form, or None where no closed form exists."""
        return None

    def analytic_variance(self, degrees: ArrayLike, k: int, epsilon: float) -> float | None:
        """Var[estimate] in closed form, or None where no closed form exists."""
        return None

    def analytic_rmse(self, degrees: ArrayLike, k: int, epsilon: float) -> float | None:
        """sqrt(bias^2 + variance) in closed form, or None."""
        mean = self.analytic_mean(degrees, k, epsilon)
        var = self.analytic_variance(degrees, k, epsilon)
        if mean is None or var is None:
            return None
        bias = mean - exact_kstars(degrees, k)
        return math.sqrt(bias * bias + var)


# --------------------------------------------------------------------- degree-report methods


class _DegreeMethod(KStarMethod):
    """Nodes release d_v + noise at the full budget; the curator sums a function of the reports."""

    def _randomize(self, d, k, eps, runs, gen):
        mech = DiscreteLaplace(epsilon=eps) if self.noise == "dlap" else Laplace(epsilon=eps)
        return d[None, :] + mech.sample((runs, d.size), rng=gen)

    def _simulate(self, d, k, eps, n_trials, gen):
        # _randomize + _estimate with the noise drawn into scratch buffers (same draws, same values)
        cls = type(self)
        if cls._randomize is not _DegreeMethod._randomize or cls._estimate is not _DegreeMethod._estimate:
            return super()._simulate(d, k, eps, n_trials, gen)  # a subclass with its own protocol
        shape = (n_trials, d.size)
        if self.noise == "dlap":
            mech = DiscreteLaplace(epsilon=eps)
            y = _SCRATCH.get("int", shape, np.int64)
            sample_dlap(gen, shape, mech._t, mech.p, out=y, scratch=_SCRATCH.get("float", shape, np.float64))
        else:
            y = _SCRATCH.get("float", shape, np.float64)
            sample_symmetric_exponential(gen, shape, Laplace(epsilon=eps).scale, out=y)
        y += d  # d + noise, elementwise: the old d[None, :] + noise
        kernel = self._piece_kernel(y, k, eps)
        if kernel is not None:
            return _row_sums_kernel(y, kernel)
        return _row_sums(y, lambda part: self._values(part, k, eps))

    def estimate_with_error(self, degrees, k, epsilon, *, rng=None):
        d = as_degrees(degrees)
        k = check_nonnegative_int(k, "k", minimum=1)
        eps = check_epsilon(epsilon)
        reports = self.randomize(d, k, eps, rng=rng)
        value = float(self.estimate(reports, k, eps))
        var = self._variance_estimate(reports, k, eps)
        if var is None:
            return value, None, "none: " + self.no_error_reason
        return value, math.sqrt(max(var, 0.0)), "unbiased"

    def _variance_estimate(self, reports, k, eps) -> float | None:
        """An unbiased estimate of the estimate's variance from the reports (None: none)."""
        return None

    def _values(self, reports, k, eps):
        """Each report's term of the estimate (elementwise)."""
        raise NotImplementedError

    def _piece_kernel(self, reports, k, eps):
        """``kernel(yf, out)`` computing ``_values`` of float64 pieces of ``reports`` in place
        (bitwise the same values), after the checks ``_values`` makes; or None (then
        ``_values`` runs on each piece)."""
        return None

    def _estimate(self, reports, k, eps):
        return self._values(reports, k, eps).sum(axis=-1)


class UnbiasedDLap(_DegreeMethod):
    """ldpgraph's protocol: DLap degrees, unique minimum-variance unbiased estimate of S_k."""

    name, noise, unbiased = "unbiased-dlap", "dlap", True
    protocol = ("degree", {})
    reference = "ours (the unique minimum-variance unbiased estimator)"

    def _values(self, reports, k, eps):
        return binomial(reports, k, eps)

    def _variance_estimate(self, reports, k, eps):
        from ..protocols.curator import kstars
        from ..protocols.report_histogram import ReportHistogram

        return kstars(ReportHistogram.from_reports(reports, eps), k).variance_estimate

    def _piece_kernel(self, reports, k, eps):
        return checked_binomial_kernel(reports, k, eps)

    def analytic_mean(self, degrees, k, epsilon):
        return float(exact_kstars(degrees, k))

    def analytic_variance(self, degrees, k, epsilon):
        return _sum_by_distinct(as_degrees(degrees), lambda x: binomial_variance(x, k, epsilon))


class UnbiasedLaplace(_DegreeMethod):
    """Laplace degrees with the continuous rule C(y,k) - b^2 C''(y,k) (Hillebrand et al. 2023)."""

    name, noise, unbiased = "unbiased-laplace", "laplace", True
    protocol = ("unbiased-laplace", {})
    reference = "ours (the unbiased estimator for Laplace reports)"

    def _values(self, reports, k, eps):
        return binomial(reports, k, eps, noise="laplace")

    def _variance_estimate(self, reports, k, eps):
        r""":math:`\sum_v 2b^2 f'(y_v)^2 + b^4 f''(y_v)^2`, f = C(., k), b = 1/ε: unbiased.

        With :math:`T[h] = h - b^2 h''` (unbiased for h(x) for every polynomial h: DESIGN §3),
        :math:`g^2 - T[f^2]` is unbiased for :math:`\operatorname{Var} g`, and with g = T[f] it
        expands to :math:`2b^2 f'^2 + b^4 f''^2` (the :math:`f f''` terms cancel): never negative.
        """
        return laplace_kstar_variance_estimate(reports, k, eps)

    def _piece_kernel(self, reports, k, eps):
        return checked_binomial_kernel(reports, k, eps, noise="laplace")

    def analytic_mean(self, degrees, k, epsilon):
        return float(exact_kstars(degrees, k))

    def analytic_variance(self, degrees, k, epsilon):
        return _sum_by_distinct(
            as_degrees(degrees), lambda x: binomial_variance(x, k, epsilon, noise="laplace")
        )


class _PlugIn(_DegreeMethod):
    """Plug the noisy degree into C(., k): biased by sum_m C^{(m)}(d)/m! E[eta^m]."""

    no_error_reason = ("a plug-in of the noisy degrees: biased for this statistic, so a standard deviation "
                       "would not describe its error")

    def _values(self, reports, k, eps):
        return _binomial_poly(reports, k)

    def _piece_kernel(self, reports, k, eps):
        tmp = _SCRATCH.get("poly", (min(_PIECE_VALUES, reports.size),), np.float64)
        return lambda yf, out: _binomial_poly_into(yf, k, out, tmp[: yf.size])

    def analytic_mean(self, degrees, k, epsilon):
        return _sum_by_distinct(
            as_degrees(degrees), lambda x: binomial_plugin_moments(x, k, epsilon, noise=self.noise)[0]
        )

    def analytic_variance(self, degrees, k, epsilon):
        return _sum_by_distinct(
            as_degrees(degrees), lambda x: binomial_plugin_moments(x, k, epsilon, noise=self.noise)[1]
        )


class NaiveDLap(_PlugIn):
    """DLap degrees plugged into C(., k)."""

    name, noise = "naive-dlap", "dlap"
    protocol = ("degree", {"estimator": "naive"})
    reference = "plug-in baseline"


class NaiveLaplace(_PlugIn):
    """Laplace degrees plugged into C(., k)."""

    name, noise = "naive-laplace", "laplace"
    protocol = ("naive-laplace", {})
    reference = "plug-in baseline"


# ----------------------------------------------------------------- local k-star count methods


class LocalLapKStars(KStarMethod):
    r"""LocalLapKStars (Imola, Murakami, Chaudhuri 2021) with a public degree bound.

    Each node projects its degree to d_max and releases C(min(d_v, d_max), k) + Lap(C(d_max,k-1)/eps);
    the curator sums. With ``d_max=None`` the true maximum degree is used, as in the paper's
    experiments (this takes the bound from the private data: fine for benchmarking, not for
    deployment).
    """

    name, noise = "local-lap-kstars", "laplace"
    protocol = ("local-lap-kstars", {"kstar_counts": "K", "d_max": "D"})
    reference = "LocalLapKStars (Imola, Murakami, Chaudhuri, USENIX Security 2021)"

    def __init__(self, d_max: int | None = None) -> None:
        self.d_max = None if d_max is None else check_nonnegative_int(d_max, "d_max", minimum=1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(d_max={self.d_max!r})"

    @property
    def unbiased(self) -> bool:  # type: ignore[override]
        return self.d_max is None

    def _bound(self, d):
        if self.d_max is not None:
            return self.d_max
        return int(d.max()) if d.size else 1  # the true maximum degree (1 for an empty graph)

    def _scale(self, d_max, k, eps):
        """Laplace scale C(d_max, k-1)/eps (the sensitivity of a projected k-star count)."""
        return max(math.comb(d_max, k - 1), 1) / eps

    def _randomize(self, d, k, eps, runs, gen):
        d_max = self._bound(d)
        counts = projected_kstar_counts(d, k, d_max).astype(np.float64)
        mech = Laplace(epsilon=eps, sensitivity=self._scale(d_max, k, 1.0))
        return counts[None, :] + mech.sample((runs, d.size), rng=gen)

    def _simulate(self, d, k, eps, n_trials, gen):
        if type(self)._randomize is not LocalLapKStars._randomize:  # subclasses with their own noise
            return super()._simulate(d, k, eps, n_trials, gen)
        d_max = self._bound(d)
        counts = projected_kstar_counts(d, k, d_max).astype(np.float64)
        mech = Laplace(epsilon=eps, sensitivity=self._scale(d_max, k, 1.0))
        reports = _SCRATCH.get("float", (n_trials, d.size), np.float64)
        sample_symmetric_exponential(gen, reports.shape, mech.scale, out=reports)
        reports += counts  # the old counts[None, :] + noise
        return self._estimate(reports, k, eps)

    def _estimate(self, reports, k, eps):
        return reports.sum(axis=-1, dtype=np.float64)

    def analytic_mean(self, degrees, k, epsilon):
        d = as_degrees(degrees)
        return float(exact_kstars(np.minimum(d, self._bound(d)), k))

    def analytic_variance(self, degrees, k, epsilon):
        d = as_degrees(degrees)
        return d.size * 2.0 * self._scale(self._bound(d), k, check_epsilon(epsilon)) ** 2

    def estimate_with_error(self, degrees, k, epsilon, *, rng=None):
        # the projected counts are exact: the variance is the noise's, a function of the public
        # n, D, k and epsilon only (D: the bound of the plan; the true maximum when d_max is None)
        value = float(self.estimate_trials(degrees, k, epsilon, 1, rng=rng)[0])
        return value, math.sqrt(self.analytic_variance(degrees, k, epsilon)), "exact"


class LocalDLapKStars(LocalLapKStars):
    """LocalLapKStars with discrete Laplace noise on the integer counts (same sensitivity)."""

    name, noise = "local-dlap-kstars", "dlap"
    reference = "LocalLapKStars with discrete Laplace (ours)"
    protocol = ("local-dlap-kstars", {"kstar_counts": "K", "d_max": "D"})

    def _randomize(self, d, k, eps, runs, gen):
        d_max = self._bound(d)
        mech = DiscreteLaplace(epsilon=eps, sensitivity=max(math.comb(d_max, k - 1), 1))
        return mech.randomize(np.broadcast_to(projected_kstar_counts(d, k, d_max), (runs, d.size)), rng=gen)

    def analytic_variance(self, degrees, k, epsilon):
        d = as_degrees(degrees)
        sens = max(math.comb(self._bound(d), k - 1), 1)
        return d.size * DiscreteLaplace(epsilon=epsilon, sensitivity=sens).variance


_PRIVATE_BOUND_REASON = ("the noisy degree bound D makes the projection bias random and unknown to the "
                         "curator; 'ldpgraph curate' gives the noise's standard error given D, which does "
                         "not cover that bias; 'ldpgraph experiment' measures the RMSE")


class LocalLapKStarsPrivateDmax(KStarMethod):
    r"""LocalLapKStars with the degree bound itself estimated privately (Imola et al. 2021).

    eps/10 is spent on d~max = max_v (d_v + Lap(10/eps)); 0.9 eps on the counts: each node
    releases C(min(d_v, D), k) + Lap(C(D, k-1)/(0.9 eps)) with D = max(floor(d~max), 0), so
    nodes above the noisy bound contribute C(D, k). Biased (projection); no closed form.
    """

    name, noise = "local-lap-kstars-private", "laplace"
    protocol = ("local-lap-kstars-private", {"kstar_counts": "K"})
    reference = "LocalLapKStars with a private degree bound (same paper)"
    no_error_reason = _PRIVATE_BOUND_REASON

    def _simulate(self, d, k, eps, n_trials, gen):
        noisy = d[None, :] + gen.laplace(0.0, 10.0 / eps, size=(n_trials, d.size))
        bounds = np.maximum(np.floor(noisy.max(axis=1)), 0).astype(np.int64)
        out = np.empty(n_trials)
        values, counts = np.unique(d, return_counts=True)
        for t, bound in enumerate(bounds):
            proj = np.minimum(values, bound)
            total = float(np.dot(_binomial_poly(proj, k), counts))
            scale = math.comb(int(bound), k - 1) / (0.9 * eps)
            out[t] = total + (gen.laplace(0.0, scale, size=d.size).sum() if scale > 0 else 0.0)
        return out


class LocalDLapKStarsPrivateDmax(KStarMethod):
    r"""LocalLapKStarsPrivateDmax with discrete Laplace noise: the deployable private-bound variant.

    eps/10 on y_v = d_v + DLap(e^{-eps/10}), D = max(1, max_v y_v) (the broadcast); 0.9 eps on
    C(min(d_v, D), k) + DLap(e^{-0.9 eps / C(D, k-1)}). Biased (projection); no closed form. The
    fast simulator of the protocol ``local-dlap-kstars-private``
    (:mod:`ldpgraph.protocols.local_kstars`; the same split: :func:`~ldpgraph.core.plan.split_budget`).
    """

    name, noise = "local-dlap-kstars-private", "dlap"
    reference = "LocalLapKStars with a private degree bound, discrete Laplace (ours; after Imola et al.)"
    protocol = ("local-dlap-kstars-private", {"kstar_counts": "K"})
    no_error_reason = _PRIVATE_BOUND_REASON

    def _simulate(self, d, k, eps, n_trials, gen):
        eps0 = eps * 0.1
        eps2 = eps - eps0  # as split_budget: the parts sum to eps
        noisy = d[None, :] + DiscreteLaplace(epsilon=eps0).sample((n_trials, d.size), rng=gen)
        bounds = np.maximum(noisy.max(axis=1), 1)
        values, counts = (a.tolist() for a in np.unique(d, return_counts=True))
        out = np.empty(n_trials)
        for t, bound in enumerate(bounds.tolist()):
            total = sum(math.comb(min(v, bound), k) * c for v, c in zip(values, counts, strict=True))  # exact
            sens = max(math.comb(bound, k - 1), 1)
            mech = DiscreteLaplace(epsilon=eps2, sensitivity=sens)
            if mech.fast_noise_bound < 2**52:
                noise = int(mech.sample(d.size, rng=gen).sum())
            else:  # noise beyond float64's integers: the exact sampler (as the layer's seeded stream)
                scale = Fraction(sens) / Fraction(eps2)
                draws = sample_dlap_exact(scale.numerator, scale.denominator, d.size, rng=gen)
                noise = sum(int(x) for x in draws)
            out[t] = float(total + noise)
        return out


# ------------------------------------------------------------------------------ helpers


def laplace_kstar_variance_estimate(reports: ArrayLike, k: int, epsilon: float) -> float:
    r"""Unbiased estimate of the variance of the unbiased Laplace k-star estimate, from its reports.

    :math:`\hat V = \sum_v 2b^2 f'(y_v)^2 + b^4 f''(y_v)^2` with :math:`f = \binom{\cdot}{k}` and
    b = 1/ε (:class:`UnbiasedLaplace`; the reports are :math:`y_v = d_v + \mathrm{Lap}(b)`).

    Examples
    --------
    >>> laplace_kstar_variance_estimate([2.5, -1.0], 1, 2.0)   # k = 1: each report's variance 2 b^2
    1.0
    """
    y = np.asarray(reports, dtype=np.float64).ravel()
    b = 1.0 / check_epsilon(epsilon)
    f = np.polynomial.Polynomial.fromroots(np.arange(k, dtype=np.float64)) / math.factorial(k)
    d1, d2 = f.deriv(1)(y), f.deriv(2)(y)
    return math.fsum((2.0 * b * b * d1 * d1 + b**4 * d2 * d2).tolist())


def _sum_by_distinct(d: NDArray[np.int64], per_value) -> float:
    """sum_v h(d_v) for a vectorized h, evaluated once per distinct degree."""
    values, counts = np.unique(d, return_counts=True)
    per = np.asarray(per_value(values), dtype=np.float64)
    return float(math.fsum(per * counts))


METHODS: dict[str, type[KStarMethod]] = {
    cls.name: cls
    for cls in (
        UnbiasedDLap,
        NaiveDLap,
        UnbiasedLaplace,
        NaiveLaplace,
        LocalLapKStars,
        LocalLapKStarsPrivateDmax,
        LocalDLapKStars,
        LocalDLapKStarsPrivateDmax,
    )
}


def method_names() -> list[str]:
    """Registered method names."""
    return list(METHODS)


def get_method(name: str) -> KStarMethod:
    """The method registered under ``name`` (ValueError listing the choices otherwise).

    >>> get_method("unbiased-dlap").name
    'unbiased-dlap'
    """
    if not isinstance(name, str) or name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(METHODS)}")
    return METHODS[name]()


