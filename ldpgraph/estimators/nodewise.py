r"""Node-wise sums over per-node report vectors: :math:`\sum_v h(x_v)` from noisy vectors.

Each node v releases m numbers :math:`y_v = x_v + \eta_v` (its degree, a local subgraph count,
...), coordinate j with its own noise: DLap(p_j), :math:`p_j = e^{-\epsilon_j/\Delta_j}`, or
Laplace :math:`b_j = \Delta_j/\epsilon_j`; all noises independent. For any per-node function
:math:`h: \mathbb{Z}^m \to \mathbb{R}^s` the tensorized operator (DESIGN.md §3, (2); see
:func:`ldpgraph.estimators.debias_nd`) gives per node the unique unbiased :math:`g(y_v)`, and

.. math:: \widehat{S} = \sum_v g(y_v),\qquad E\,\widehat{S} = \sum_v h(x_v),

in :math:`O(3^m n)` evaluations of h, with the unbiased variance (covariance, for s > 1
outputs) estimate :math:`\sum_v \widehat{V}(y_v)`, valid because the nodes' noises are
independent.

Stable evaluation (DLap axes)
-----------------------------
Per node, h is evaluated on the :math:`3^m` cube around :math:`y_v`; the operator is then
applied one axis at a time in difference form,
:math:`T_j F = F_0 - c_j (F_{+} - 2F_0 + F_{-})` (second differences are formed before they
are scaled, never huge cancelling weighted sums). The variance estimate
:math:`\widehat V = g^2 - T[h^2]` is computed without cancellation by the recursion, with
:math:`T_{>j} = T_{j+1}\cdots T_m`,

.. math::

    \widehat V_{j..m}(h) = \Gamma_j\big(T_{>j} h\big) + T_j\big[\widehat V_{j+1..m}(h)\big],\qquad
    \Gamma_j(F) = c_j\big[(F_+ - F_0)^2 + (F_0 - F_-)^2\big] + c_j^2\,(F_+ - 2F_0 + F_-)^2 ,

which follows from :math:`T_j[F^2] = (T_j F)^2 - \Gamma_j(F)` (the 1-D identity behind
:func:`ldpgraph.estimators.debias_variance`) applied to :math:`F = T_{>j} h` and to
:math:`T_{>j}[h^2] = (T_{>j}h)^2 - \widehat V_{j+1..m}(h)`. Covariances use the bilinear
:math:`\Gamma_j(F, G)`. Laplace axes (h a :class:`~ldpgraph.estimators.Smooth`) go through
:func:`~ldpgraph.estimators.debias_nd`'s mixed form.

Declaring quantities
--------------------
:class:`Quantity` names one released number and its noise; :class:`ReportVectors` binds
the columns to their quantities, and its :meth:`~ReportVectors.sum` and
:meth:`~ReportVectors.mean` take an h written over the names (``q["degree"]`` or
``q.degree``), so a researcher scripts a per-node statistic without touching the operator.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_integer_reports, check_positive_real, check_real_reports
from .operator import (
    Smooth,
    _axis_noise,
    _check_cube_size,
    _debias_mixed,
    _mixed_reports,
    _smooth_square,
)
from .order_statistics import HIGH_VARIANCE_THRESHOLD, HighVarianceWarning

__all__ = [
    "NodewiseEstimate",
    "Quantity",
    "ReportVectors",
    "nodewise_sum",
    "nodewise_mean",
]

# Points (rows x 3^m) evaluated per chunk: small enough to stay in cache-sized buffers.
_CHUNK_POINTS = 1 << 17
# Rows per chunk of the lattice kernel (h is called once per shift on this many points).
_CHUNK_ROWS = 1 << 14
# Rows are deduplicated by a bincount over their bounding box when the box has at most this
# many cells (128 MiB of counts) and at most this many cells per node.
_DEDUPE_MAX_BOX = 1 << 24
_DEDUPE_BOX_PER_NODE = 4
# "auto" where the whole box is too large: rows inside a core box (central quantiles of a
# strided sample, at most this many cells) are deduplicated, the others kept as they are.
_CORE_MAX_BOX = 1 << 22
_CORE_SAMPLE = 1 << 16
_CORE_QUANTILES = (0.005, 0.02, 0.05, 0.1, 0.2)
_CORE_BLOCK = 1 << 16
# ... used only when it leaves at most this fraction of the rows to evaluate.
_CORE_MAX_FRACTION = 0.5
# Largest log of |h| p^R allowed to stay flat between the growth probes (see _check_growth).
_LOG_SAFE = 700.0


@dataclass(frozen=True)
class Quantity:
    """One number every node releases, with its noise.

    Parameters
    ----------
    name : str
        Identifier used by h (``q["name"]`` or ``q.name``); a Python identifier.
    epsilon : float
        The share of the node's budget spent on this number. Must be in (0, inf).
    sensitivity : float, default 1
        Largest change of the released number under one neighbouring change. Must be in (0, inf).
    noise : {"dlap", "laplace"}, default "dlap"

    Examples
    --------
    >>> Quantity("degree", epsilon=0.5)
    Quantity(name='degree', epsilon=0.5, sensitivity=1.0, noise='dlap')
    """

    name: str
    epsilon: float
    sensitivity: float = 1.0
    noise: str = "dlap"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"Quantity name must be a Python identifier, got {self.name!r}")
        _axis_noise(self.epsilon, self.sensitivity, self.noise, 1)  # validates, names the field
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "sensitivity", float(self.sensitivity))


@dataclass(frozen=True)
class NodewiseEstimate:
    r"""Unbiased estimate of :math:`\sum_v h(x_v)` (or its mean) with its variance estimate.

    Attributes
    ----------
    value : float or ndarray of shape (s,)
        The estimate (one per output of h).
    variance_estimate : float or ndarray of shape (s, s)
        Unbiased estimate of the variance (covariance matrix for s outputs); it can be
        negative when the true variance is small.
    n_nodes : int
    """

    value: float | NDArray[np.float64]
    variance_estimate: float | NDArray[np.float64]
    n_nodes: int

    @property
    def std_error(self) -> float | NDArray[np.float64]:
        """sqrt of the variance estimate (its diagonal), clipped at 0."""
        v = self.variance_estimate
        if np.ndim(v) == 0:
            return math.sqrt(max(float(v), 0.0))
        return np.sqrt(np.maximum(np.diagonal(v), 0.0))


class _Columns:
    """Named read-only access to the columns of an (..., m) point array."""

    __slots__ = ("_z", "_index")

    def __init__(self, z: NDArray[Any], index: Mapping[str, int]) -> None:
        self._z = z
        self._index = index

    def __getitem__(self, name: str) -> NDArray[Any]:
        try:
            return self._z[..., self._index[name]]
        except KeyError:
            raise KeyError(f"no quantity named {name!r}; declared: {list(self._index)}") from None

    def __getattr__(self, name: str) -> NDArray[Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as err:
            raise AttributeError(str(err)) from None

    @property
    def array(self) -> NDArray[Any]:
        """The points as one array of shape (..., m), columns in declaration order."""
        return self._z


class ReportVectors:
    r"""Per-node report vectors with their declared quantities.

    Parameters
    ----------
    quantities : sequence of Quantity
        One per column, distinct names.
    values : mapping name -> array_like of shape (n,)
        The released numbers, one array per quantity (integers for DLap quantities).

    Examples
    --------
    Local clustering t / C(d, 2) from noisy degrees and noisy local triangle counts:

    >>> qs = [Quantity("degree", 1.0), Quantity("triangles", 1.0, sensitivity=4)]
    >>> rv = ReportVectors(qs, {"degree": [3, 5, 2], "triangles": [2, 4, 1]})
    >>> def clustering(q):
    ...     d = q.degree.astype(float)
    ...     pairs = d * (d - 1) / 2
    ...     return np.where(d >= 2, q.triangles / np.where(d >= 2, pairs, 1.0), 0.0)
    >>> est = rv.mean(clustering)
    >>> round(float(est.value), 6) == round(float(nodewise_mean(
    ...     lambda z: clustering(_Columns(z, {"degree": 0, "triangles": 1})),
    ...     rv.array, [1.0, 1.0], [1, 4]).value), 6)
    True
    """

    def __init__(self, quantities: Sequence[Quantity], values: Mapping[str, ArrayLike]) -> None:
        qs = list(quantities)
        if not qs:
            raise ValueError("quantities must declare at least one Quantity, got none")
        for q in qs:
            if not isinstance(q, Quantity):
                raise TypeError(f"quantities must be Quantity objects, got {type(q).__name__} {q!r}")
        names = [q.name for q in qs]
        if len(set(names)) != len(names):
            raise ValueError(f"quantity names must be distinct, got {names}")
        if not isinstance(values, Mapping):
            raise TypeError(
                f"values must be a mapping from quantity name to array, got {type(values).__name__}"
            )
        missing = [nm for nm in names if nm not in values]
        extra = [k for k in values if k not in names]
        if missing or extra:
            raise ValueError(
                f"values must hold exactly the declared quantities {names}; missing {missing}, extra {extra}"
            )
        cols = []
        for q in qs:
            if q.noise == "dlap":
                col = check_integer_reports(values[q.name], f"values[{q.name!r}]")
            else:
                col = check_real_reports(values[q.name], f"values[{q.name!r}]")
            if col.ndim != 1:
                raise ValueError(
                    f"values[{q.name!r}] must be one-dimensional (one entry per node), got shape {col.shape}"
                )
            cols.append(col)
        n = {c.shape[0] for c in cols}
        if len(n) != 1:
            raise ValueError(
                f"every quantity needs one value per node; got lengths {[c.shape[0] for c in cols]}"
            )
        laplace = any(q.noise == "laplace" for q in qs)
        self.quantities: tuple[Quantity, ...] = tuple(qs)
        self.names: tuple[str, ...] = tuple(names)
        dtype = np.float64 if laplace else np.int64
        self.array: NDArray[Any] = np.stack([c.astype(dtype, copy=False) for c in cols], axis=1)
        self._index = {nm: j for j, nm in enumerate(names)}

    @property
    def n_nodes(self) -> int:
        return int(self.array.shape[0])

    def _named(self, h: Callable[[_Columns], ArrayLike]) -> Callable[[NDArray[Any]], ArrayLike]:
        if not callable(h):
            raise TypeError(f"h must be callable, got {type(h).__name__}")
        index = self._index
        if isinstance(h, Smooth):
            inner = h.derivative
            return Smooth(lambda z, order: inner(_Columns(z, index), order))
        return lambda z: h(_Columns(z, index))

    def _kw(self) -> dict[str, Any]:
        return {
            "epsilon": [q.epsilon for q in self.quantities],
            "sensitivity": [q.sensitivity for q in self.quantities],
            "noise": [q.noise for q in self.quantities],
        }

    def sum(self, h: Callable[[_Columns], ArrayLike], **options: Any) -> NodewiseEstimate:
        r"""Unbiased estimate of :math:`\sum_v h(x_v)`, h written over the quantity names.

        ``h(q)`` receives the points with named columns (``q["degree"]``, ``q.degree``, or
        ``q.array`` for all of them) and returns shape (k,) or (k, s). Options are those of
        :func:`nodewise_sum`.
        """
        return nodewise_sum(self._named(h), self.array, **self._kw(), **options)

    def mean(self, h: Callable[[_Columns], ArrayLike], **options: Any) -> NodewiseEstimate:
        r"""Unbiased estimate of :math:`\frac1n\sum_v h(x_v)`; see :meth:`sum`."""
        return nodewise_mean(self._named(h), self.array, **self._kw(), **options)

    def __repr__(self) -> str:
        return f"ReportVectors(n_nodes={self.n_nodes}, quantities={list(self.quantities)})"


# ---------------------------------------------------------------------------------------------
# the kernel


def _cube(m: int) -> NDArray[np.int64]:
    return np.array(list(itertools.product((-1, 0, 1), repeat=m)), dtype=np.int64).reshape(-1, m)


def _eval_h(h: Callable, pts: NDArray[Any], k: int, cast: bool = True) -> tuple[NDArray[Any], bool]:
    """h on (k, m) points as float64 of shape (s, k), and whether h's output was scalar per row.

    ``cast=False`` keeps a boolean, integer or float output as it is (the caller copies it
    into a float64 buffer, which casts it without a temporary).
    """
    out = np.asarray(h(pts))
    if not cast and out.dtype.kind in "biuf":
        pass
    else:
        out = np.asarray(out, dtype=np.float64)
    if out.ndim == 0:  # a constant
        out = np.broadcast_to(out, (k,))
    if out.shape[0] != k or out.ndim > 2:
        raise ValueError(
            f"h must map points of shape ({k}, m) to shape ({k},) or ({k}, s), got shape {out.shape}"
        )
    scalar = out.ndim == 1
    return (out[None, :] if scalar else out.T), scalar


def _raise_not_finite(h: Callable, rows: NDArray[Any], xi: NDArray[np.int64], what: str) -> None:
    """Find a point next to a report where h is not finite and raise naming it (if there is one)."""
    for shift in xi:
        pts = rows + shift
        out = np.asarray(h(pts), dtype=np.float64).reshape(rows.shape[0], -1)
        bad = ~np.isfinite(out).all(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            point = tuple(int(v) if float(v).is_integer() else float(v) for v in np.asarray(pts[i]).ravel())
            raise ValueError(
                f"h is not finite at {point} (h = {out[i].tolist()}), a point {what}: the noisy "
                "reports reach every lattice point with positive probability, so E|h(y)| is "
                "infinite and no unbiased estimate exists. Define h at every point (e.g. 0 where "
                "a denominator vanishes)."
            )


class _Buffers:
    """Work arrays of the lattice kernel, reused across the chunks of one call (flat, sliced)."""

    __slots__ = ("_flat",)

    def __init__(self) -> None:
        self._flat: dict[str, NDArray[np.float64]] = {}

    def get(self, name: str, shape: tuple[int, ...]) -> NDArray[np.float64]:
        size = math.prod(shape)
        buf = self._flat.get(name)
        if buf is None or buf.size < size:
            buf = self._flat[name] = np.empty(size, dtype=np.float64)
        return buf[:size].reshape(shape)


def _lattice_chunk(
    h: Callable,
    rows: NDArray[np.int64],
    counts: NDArray[np.float64] | None,
    xi: NDArray[np.int64],
    cs: NDArray[np.float64],
    buffers: _Buffers | None = None,
) -> tuple[NDArray[np.float64], list[NDArray[np.float64]], NDArray[np.float64], bool]:
    r"""One chunk of rows (each standing for ``counts`` nodes, or 1).

    Returns the sum of g over the chunk's nodes (s,), the per-axis sums of Gamma_j(T_{>j} h)
    at every position of the axes before j (shapes (3,)*j + (s, s)), the sum of |h(y)| (s,),
    and whether h's output is scalar.

    Per axis, with :math:`\delta_\pm` the one-sided differences and
    :math:`\delta_2 = \delta_+ - \delta_-`, :math:`\Gamma_j` is formed from two Gram sums,
    :math:`c(\delta_+^2 + \delta_-^2) + c^2\delta_2^2 = \frac c2 (\delta_+ + \delta_-)^2
    + (\frac c2 + c^2)\,\delta_2^2` (the parallelogram identity), and every intermediate
    goes to a reused buffer.
    """
    buf = _Buffers() if buffers is None else buffers
    k, m = rows.shape
    # column-major points so that h's z[..., j] is contiguous; one call of h per shift keeps
    # the working set of a chunk in cache
    base = np.asfortranarray(rows)
    pts = np.empty((k, m), dtype=np.int64, order="F")
    n_pts = xi.shape[0]
    cur = mag = tmp = None
    scalar = True
    for i, shift in enumerate(xi):
        np.add(base, shift, out=pts)
        vals, scalar = _eval_h(h, pts, k, cast=False)
        if cur is None:
            cur = buf.get("cur", (n_pts,) + vals.shape)
            mag = buf.get("mag", vals.shape)
            tmp = buf.get("tmp", vals.shape)
        np.copyto(cur[i], vals)  # casts integer outputs to float64 in the copy
        if i == 0:
            np.abs(cur[i], out=mag)
        else:
            np.abs(cur[i], out=tmp)
            mag += tmp
    s = cur.shape[1]
    cur = cur.reshape((3,) * m + (s, k))
    w = counts
    # scale for the high-variance warning: sum over nodes of the mean |h| on the cube
    mag /= n_pts
    plug = mag.sum(axis=-1) if w is None else np.einsum("ak,k->a", mag, w)  # no BLAS: see _gram
    gammas: list[NDArray[np.float64]] = [None] * m  # type: ignore[list-item]
    for j in range(m - 1, -1, -1):
        c = float(cs[j])
        f0, f1, f2 = cur[..., 0, :, :], cur[..., 1, :, :], cur[..., 2, :, :]
        shape = f0.shape
        dp = np.subtract(f2, f1, out=buf.get("dp", shape))
        dm = np.subtract(f1, f0, out=buf.get("dm", shape))
        d2 = np.subtract(dp, dm, out=buf.get("d2", shape))
        np.add(dp, dm, out=dp)  # f2 - f0
        gammas[j] = (0.5 * c) * _gram(dp, w, buf) + (0.5 * c + c * c) * _gram(d2, w, buf)
        np.multiply(d2, c, out=d2)
        cur = np.subtract(f1, d2, out=f0)  # T_j, in place of f0
    g = cur.sum(axis=-1) if w is None else np.einsum("ak,k->a", cur, w)
    return g, gammas, plug, scalar


def _gram(
    a: NDArray[np.float64], w: NDArray[np.float64] | None, buf: _Buffers | None = None
) -> NDArray[np.float64]:
    """sum_k w_k a[..., :, k] a[..., :, k]^T per leading position (shape (..., s, s)).

    Elementwise products and sums, not BLAS: the operands are short and a threaded BLAS on a
    loaded machine costs far more in synchronisation than the arithmetic.
    """
    if w is None:
        b = a
    elif buf is None:
        b = a * w
    else:
        b = np.multiply(a, w, out=buf.get("weighted", a.shape))
    if a.shape[-2] == 1:
        return np.einsum("...k,...k->...", a[..., 0, :], b[..., 0, :])[..., None, None]
    return np.einsum("...ak,...bk->...ab", a, b)


def _combine_gammas(gammas: list[NDArray[np.float64]], cs: NDArray[np.float64]) -> NDArray[np.float64]:
    """V_{1..m} = Gamma_1(T_{>1} h) + T_1[V_{2..m}], from the summed Gamma_j, innermost first."""
    m = len(gammas)
    V = gammas[m - 1]
    for j in range(m - 2, -1, -1):
        c = cs[j]
        v0, v1, v2 = V[..., 0, :, :], V[..., 1, :, :], V[..., 2, :, :]
        V = gammas[j] + (v1 - c * ((v2 - v1) - (v1 - v0)))
    return V


def _distinct_rows(rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.float64]] | None:
    """Distinct rows and their multiplicities by one bincount over the bounding box, or None
    when the box is too large for that to pay."""
    n, m = rows.shape
    # per column: a reduction along axis 0 of an (n, m) array runs ~30x slower in numpy
    lo_i = [int(rows[:, j].min()) for j in range(m)]
    span_i = [int(rows[:, j].max()) - a + 1 for j, a in enumerate(lo_i)]  # Python ints: no wrap
    box = math.prod(span_i)
    if box > min(_DEDUPE_MAX_BOX, _DEDUPE_BOX_PER_NODE * n):
        return None
    lo = np.array(lo_i, dtype=np.int64)
    span = np.array(span_i, dtype=np.int64)
    key = rows[:, 0] - lo[0]
    for j in range(1, m):
        key = key * int(span[j]) + (rows[:, j] - lo[j])
    hist = np.bincount(key, minlength=box)
    cells = np.flatnonzero(hist)
    distinct = np.empty((cells.size, m), dtype=np.int64)
    rest = cells
    for j in range(m - 1, 0, -1):
        rest, distinct[:, j] = np.divmod(rest, int(span[j]))
    distinct[:, 0] = rest
    distinct += lo
    return distinct, hist[cells].astype(np.float64)


def _core_grouped_rows(rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.float64]] | None:
    """Rows in a core box deduplicated (one bincount over the box), the rest kept with count 1.

    The core box is the central quantile range of a strided sample of the rows per axis,
    widest first, narrowed until it has at most ``_CORE_MAX_BOX`` cells. It changes which
    rows are merged, never the sum (up to rounding). None when no box fits, or when the
    result would still hold more than ``_CORE_MAX_FRACTION`` of the rows.
    """
    n, m = rows.shape
    if n < 4 * _CORE_SAMPLE:
        return None
    sample = rows[:: n // _CORE_SAMPLE]
    ordered = np.sort(sample, axis=0)  # exact integer order statistics (no float quantiles)
    last = ordered.shape[0] - 1
    for q in _CORE_QUANTILES:
        i = int(q * last)
        lo_i = [int(v) for v in ordered[i]]
        hi_i = [int(v) for v in ordered[last - i]]
        span_i = [b - a + 1 for a, b in zip(lo_i, hi_i, strict=True)]  # Python ints: no wrap
        if math.prod(span_i) <= _CORE_MAX_BOX:
            break
    else:
        return None
    if max(abs(v) for v in (*lo_i, *hi_i)) > (1 << 62):
        # keep |row - lo| < 2^64 - 2^22: the wrapped unsigned test below is then exact
        return None
    box = math.prod(span_i)
    lo = np.array(lo_i, dtype=np.int64)
    span = np.array(span_i, dtype=np.int64)
    # keys of the rows, with one extra bin (box) for the rows outside; in blocks of rows so
    # that the temporaries stay in cache
    key = np.empty(n, dtype=np.int64)
    inside = np.empty(n, dtype=np.bool_)
    block = min(n, _CORE_BLOCK)
    c = np.empty(block, dtype=np.int64)
    t = np.empty(block, dtype=np.bool_)
    limits = [np.uint64(v) for v in span_i]
    for s0 in range(0, n, block):
        s1 = min(n, s0 + block)
        kk, ii, cc, tt = key[s0:s1], inside[s0:s1], c[: s1 - s0], t[: s1 - s0]
        for j in range(m):
            np.subtract(rows[s0:s1, j], lo[j], out=cc)
            # one unsigned comparison tests 0 <= c < span (negative c wraps to a huge value)
            if j == 0:
                np.less(cc.view(np.uint64), limits[0], out=ii)
                kk[...] = cc
            else:
                np.less(cc.view(np.uint64), limits[j], out=tt)
                ii &= tt
                kk *= span_i[j]
                kk += cc  # wraps harmlessly outside the box: those keys are replaced next
        np.logical_not(ii, out=tt)
        np.putmask(kk, tt, box)
    n_out = n - int(np.count_nonzero(inside))
    if n_out > _CORE_MAX_FRACTION * n:
        return None
    outside = np.logical_not(inside, out=inside)
    hist = np.bincount(key, minlength=box + 1)[:box]
    cells = np.flatnonzero(hist)
    if cells.size + n_out > _CORE_MAX_FRACTION * n:
        return None
    distinct = np.empty((cells.size + n_out, m), dtype=np.int64)
    rest = cells
    for j in range(m - 1, 0, -1):
        rest, distinct[: cells.size, j] = np.divmod(rest, int(span[j]))
    distinct[: cells.size, 0] = rest
    distinct[: cells.size] += lo
    distinct[cells.size :] = rows[outside]
    counts = np.ones(distinct.shape[0], dtype=np.float64)
    counts[: cells.size] = hist[cells]
    return distinct, counts


def _check_growth(
    h: Callable, base: NDArray[Any], rates: NDArray[np.float64], kinds: tuple[str, ...]
) -> None:
    r"""Probe E|h(y)| < inf along every axis from ``base`` (necessary condition, not a proof).

    On axis j the noise law decays like :math:`e^{-t_j |k|}`, t_j = epsilon_j / sensitivity_j,
    so :math:`E|h(y)| < \infty` needs :math:`|h(y + k e_j)| e^{-t_j |k|}` summable. At
    :math:`R = 700/t_j` (where the law is :math:`e^{-700}`) and :math:`R/2` the log of that term
    must have dropped by more than log 2 (slower than 1/|k| decay of the terms diverges);
    polynomial h drop by about 350.
    """
    m = base.shape[0]
    for j in range(m):
        t = float(rates[j])
        big = math.ceil(_LOG_SAFE / t)
        for sign in (1, -1):
            pts = np.repeat(base[None, :], 2, axis=0)
            pts[0, j] += sign * (big // 2)
            pts[1, j] += sign * big
            if kinds[j] == "dlap":
                pts = pts.astype(np.int64)
            with np.errstate(all="ignore"):
                vals, _ = _eval_h(h, pts.astype(np.float64) if isinstance(h, Smooth) else pts, 2)
            amp = np.abs(vals).max(axis=0)
            if not np.isfinite(amp).all():
                warnings.warn(
                    f"could not check E|h(y)| < inf along axis {j}: h is not finite (or overflows) "
                    f"at {pts[int(np.argmax(~np.isfinite(amp)))].tolist()}, far from the reports",
                    RuntimeWarning,
                    stacklevel=4,
                )
                continue
            if amp[1] == 0.0:
                continue
            with np.errstate(divide="ignore"):
                lt = np.log(amp) - t * np.array([big // 2, big], dtype=np.float64)
            if lt[1] >= lt[0] - math.log(2.0):
                raise ValueError(
                    f"h grows too fast along axis {j}: |h| e^(-{t:.4g}|k|) does not decay "
                    f"(|h| = {amp[0]:.3g} at distance {big // 2}, {amp[1]:.3g} at {big}), so "
                    f"E|h(y)| = inf under noise of epsilon/sensitivity = {t:.4g} on that axis and "
                    "the unbiased estimate does not exist. Bound h (clip the quantity) or spend "
                    "more budget on that axis. Pass check_growth=False to skip this probe."
                )


def nodewise_sum(
    h: Callable[[NDArray[Any]], ArrayLike] | Smooth,
    reports: ArrayLike,
    epsilon: float | Sequence[float],
    sensitivity: float | Sequence[float] = 1,
    *,
    noise: str | Sequence[str] = "dlap",
    check_growth: bool = True,
    warn_above: float | None = HIGH_VARIANCE_THRESHOLD,
    method: str = "auto",
) -> NodewiseEstimate:
    r"""Unbiased estimate of :math:`\sum_v h(x_v)` from per-node report vectors.

    Parameters
    ----------
    h : callable or Smooth
        Vectorized over rows: maps points of shape (k, m) (int64 when every column is DLap,
        float64 otherwise) to shape (k,), or (k, s) for s statistics at once. Must be finite
        at every point. With Laplace columns, a :class:`~ldpgraph.estimators.Smooth` with
        scalar output.
    reports : array_like, shape (n, m)
        Row v is node v's release vector :math:`y_v = x_v + \eta_v`.
    epsilon, sensitivity : float or sequence of m floats
        Per column (quantity): the epsilon share and the sensitivity it was released with.
        Each in (0, inf).
    noise : {"dlap", "laplace"} or sequence of m of them, default "dlap"
    check_growth : bool, default True
        Probe the finite-expectation condition along every axis (see Notes).
    warn_above : float or None, default 1e3
        Emit :class:`~ldpgraph.estimators.HighVarianceWarning` when the standard error exceeds
        this many times the scale of h near the reports, sum_v mean_xi |h(y_v + xi)|; None
        disables.
    method : {"auto", "direct", "distinct"}, default "auto"
        DLap columns only. "direct" evaluates h around every node (3^m n points);
        "distinct" evaluates it around every distinct report vector once and weights by
        multiplicity (a bincount over the bounding box, or a sort where the box is large);
        "auto" takes "distinct" when the box has at most 4 n (and 2^24) cells, else
        deduplicates the rows of a core box (central quantiles, at most 2^22 cells; one
        bincount) and evaluates the rows outside it directly, when that leaves at most half
        of the rows; else "direct". Same estimate either way, up to rounding.

    Returns
    -------
    NodewiseEstimate
        ``value`` (float, or (s,)) and ``variance_estimate`` (float, or (s, s) covariance).

    Raises
    ------
    ValueError
        If h is not finite next to a report, or the growth probe shows E|h(y)| = inf.

    Notes
    -----
    Per node :math:`g(y_v) = \sum_{\xi\in\{-1,0,1\}^m} h(y_v+\xi)\prod_j\alpha^{(j)}_{\xi_j}`,
    :math:`\alpha^{(j)}_0 = 1 + 2c_j`, :math:`\alpha^{(j)}_{\pm1} = -c_j`,
    :math:`c_j = p_j/(1-p_j)^2`, evaluated axis by axis in difference form (module docstring).
    Unbiasedness: E[g(y_v)] = h(x_v) for every v (:func:`~ldpgraph.estimators.debias_nd`), and
    sums preserve it. Variance: the nodes' noises are independent, so
    :math:`\mathrm{Var}\,\widehat S = \sum_v \mathrm{Var}\,g(y_v)`, and each term has the
    unbiased estimate :math:`g(y_v)^2 - T[h^2](y_v)` (covariances
    :math:`g_a g_b - T[h_a h_b]`). Cost: :math:`3^m` evaluations of h per node, in chunks.

    Finite expectation: :math:`E|h(y)| < \infty` is required. It fails (i) where h is infinite
    or undefined at some lattice point (checked at every point evaluated: ValueError) and
    (ii) where h grows like :math:`p_j^{-|y_j|}` or faster along an axis (probed at distances
    :math:`350/t_j` and :math:`700/t_j`, :math:`t_j = \epsilon_j/\Delta_j`; a necessary
    check, not a proof).

    Examples
    --------
    Noise-free in effect (huge epsilon), the estimate is the truth:

    >>> x = np.array([[3, 1], [4, 2], [0, 0]])
    >>> est = nodewise_sum(lambda z: z[:, 0] * z[:, 1], x, epsilon=[50.0, 50.0])
    >>> float(est.value), float(est.variance_estimate)
    (11.0, 0.0)

    Different epsilon per column; two statistics at once give a covariance matrix:

    >>> y = np.array([[5, 2], [3, 0], [8, 7]])
    >>> est = nodewise_sum(lambda z: np.stack([z[:, 0], z[:, 0] * z[:, 1]], axis=1), y, [1.0, 0.5])
    >>> est.value.tolist()  # linear and bilinear h are their own unbiased estimates
    [16.0, 66.0]
    >>> est.variance_estimate.shape
    (2, 2)
    """
    if not callable(h):
        raise TypeError(f"h must be callable, got {type(h).__name__}")
    arr = np.asarray(reports) if not isinstance(reports, np.ndarray) else reports
    if arr.ndim != 2:
        raise ValueError(f"reports must have shape (n, m) (one row per node), got shape {arr.shape}")
    n, m = arr.shape
    if m < 1:
        raise ValueError(f"reports must have at least one column (m >= 1), got shape {arr.shape}")
    kinds, scales = _axis_noise(epsilon, sensitivity, noise, m)
    eps_t = np.broadcast_to(np.asarray(epsilon, dtype=np.float64), (m,))
    sens_t = np.broadcast_to(np.asarray(sensitivity, dtype=np.float64), (m,))
    rates = eps_t / sens_t
    warn = math.inf if warn_above is None else check_positive_real(warn_above, "warn_above")
    if not isinstance(check_growth, (bool, np.bool_)):
        raise TypeError(f"check_growth must be a bool, got {type(check_growth).__name__}")

    laplace = "laplace" in kinds
    if laplace:
        if not isinstance(h, Smooth):
            lap = [j for j in range(m) if kinds[j] == "laplace"]
            raise TypeError(
                f"h must be an ldpgraph.estimators.Smooth (h with its partial derivatives) when a "
                f"column has noise='laplace' (columns {lap}): the Laplace rule needs h''"
            )
        n_lap = kinds.count("laplace")
        _check_cube_size(m, 3 ** (m - n_lap) * 2**n_lap)
        rows = _mixed_reports(arr, kinds).reshape(n, m)
    else:
        _check_cube_size(m, 3**m)
        rows = check_integer_reports(arr, "reports", min_ndim=2)

    if n == 0:
        return NodewiseEstimate(0.0, 0.0, 0)
    if check_growth:
        _check_growth(h, rows[0].copy(), rates, kinds)

    if laplace:
        value, var, plug = _mixed_sum(h, rows, kinds, scales)
        total, cov, plug_abs, scalar = np.array([value]), np.array([[var]]), np.array([plug]), True
    else:
        if method not in ("auto", "direct", "distinct"):
            raise ValueError(f"method must be one of ('auto', 'direct', 'distinct'), got {method!r}")
        dedup = None if method == "direct" else _distinct_rows(rows)
        if dedup is None and method == "distinct":
            dedup = _unique_rows(rows)
        elif dedup is None and method == "auto":
            dedup = _core_grouped_rows(rows)
        src, counts = (rows, None) if dedup is None else dedup
        xi = _cube(m)
        step = _CHUNK_ROWS
        buffers = _Buffers()
        total = plug_abs = None
        gsum: list[NDArray[np.float64]] = []
        for start in range(0, src.shape[0], step):
            part_counts = None if counts is None else counts[start : start + step]
            with np.errstate(over="ignore", invalid="ignore"):  # non-finite h: reported below
                g, gam, pa, scalar = _lattice_chunk(
                    h, src[start : start + step], part_counts, xi, scales, buffers
                )
            if total is None:
                total, plug_abs, gsum = g, pa, gam
            else:
                total, plug_abs = total + g, plug_abs + pa
                gsum = [a + b for a, b in zip(gsum, gam, strict=True)]
        with np.errstate(over="ignore", invalid="ignore"):
            cov = _combine_gammas(gsum, scales)
        if not (np.isfinite(total).all() and np.isfinite(plug_abs).all()):
            _raise_not_finite(h, src, xi, "next to a report")

    se = np.sqrt(np.maximum(np.diagonal(cov), 0.0))
    scale = plug_abs
    bad = ~np.isfinite(se) | (se > warn * np.maximum(scale, np.finfo(float).tiny))
    if warn < math.inf and bad.any():
        i = int(np.flatnonzero(bad)[0])
        warnings.warn(
            f"nodewise_sum: the standard error ({se[i]:.3g}) is more than {warn:g} times the "
            f"estimate's scale ({scale[i]:.3g}): the unbiased estimate is dominated by noise "
            "(small epsilon shares, or an h that changes steeply between neighbouring lattice "
            "points). Treat it as unusable.",
            HighVarianceWarning,
            stacklevel=2,
        )
    if scalar:
        return NodewiseEstimate(float(total[0]), float(cov[0, 0]), n)
    return NodewiseEstimate(total, cov, n)


def _unique_rows(rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    distinct, counts = np.unique(rows, axis=0, return_counts=True)
    return distinct, counts.astype(np.float64)


def _mixed_sum(h: Smooth, rows: NDArray[np.float64], kinds: tuple[str, ...], scales: NDArray[np.float64]):
    """Sum of g, of g^2 - T[h^2] and of |h(y)| over rows with Laplace axes (scalar h)."""
    m = rows.shape[1]
    step = max(1, _CHUNK_POINTS // (3**m))
    h2 = _smooth_square(h)
    value = var = plug = 0.0
    for start in range(0, rows.shape[0], step):
        part = rows[start : start + step]
        _eval_h(h, part, part.shape[0])  # output shape
        _raise_not_finite(h, part, np.zeros((1, m)), "at a report")
        g = _debias_mixed(h, part, kinds, scales)
        t2 = _debias_mixed(h2, part, kinds, scales)
        value += math.fsum(g)
        var += math.fsum(g * g - t2)
        plug += float(np.abs(np.asarray(h(part), dtype=np.float64)).sum())
    return value, var, plug


def nodewise_mean(
    h: Callable[[NDArray[Any]], ArrayLike] | Smooth,
    reports: ArrayLike,
    epsilon: float | Sequence[float],
    sensitivity: float | Sequence[float] = 1,
    **options: Any,
) -> NodewiseEstimate:
    r"""Unbiased estimate of :math:`\frac1n\sum_v h(x_v)`: :func:`nodewise_sum` divided by n.

    The variance estimate is divided by :math:`n^2`. Same parameters as :func:`nodewise_sum`.

    Examples
    --------
    >>> float(nodewise_mean(lambda z: z[:, 0] + z[:, 1], [[1, 2], [3, 4]], 1.0).value)
    5.0
    """
    est = nodewise_sum(h, reports, epsilon, sensitivity, **options)
    n = est.n_nodes
    if n == 0:
        raise ValueError("reports must hold at least one node (n >= 1) for a mean, got n = 0")
    return NodewiseEstimate(est.value / n, est.variance_estimate / (n * n), n)


