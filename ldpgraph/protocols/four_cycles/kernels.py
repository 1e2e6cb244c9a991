r"""4-cycles under edge-LDP: one round of randomized response, and a two-round local count.

Both start from the noisy graph of randomized response at :math:`\varepsilon_1` on the lower
adjacency bits (each pair reported once, by its higher node: kept with probability
:math:`p = e^{\varepsilon_1}/(1+e^{\varepsilon_1})`, else flipped, :math:`q = 1 - p`), and from
the unbiased bit :math:`\hat a_e = (\tilde a_e - q)/(p - q) = \alpha \tilde a_e + \beta`,
:math:`\alpha = 1/(p-q)`, :math:`\beta = -q/(p-q)`: independent over pairs, mean
:math:`a_e`, variance :math:`\nu = pq/(p-q)^2` whatever :math:`a_e`.

**Variance of a multilinear estimator.** Both estimators are multilinear polynomials
:math:`F(\hat a)` of the independent :math:`\hat a_e`. Writing :math:`\hat a_e = a_e + Y_e`,
:math:`F(\hat a) = \sum_U \partial_U F(a) \prod_{e \in U} Y_e` exactly, and products over
distinct sets U are orthogonal, so

.. math:: E F(\hat a) = F(a),\qquad
          \operatorname{Var} F(\hat a) = \sum_{U \ne \emptyset} \nu^{|U|} (\partial_U F(a))^2.

One round (``rr-four-cycles``)
------------------------------
:math:`\hat C_4 = \sum_{c} \prod_{e \in c} \hat a_e` over the :math:`3\binom n4` 4-cycles c of
the complete graph. Expanding the product by the number k of noisy-graph edges kept per
cycle (a k-subset of a 4-cycle is, for k = 1 an edge, in :math:`(n-2)(n-3)` cycles; for k = 2
a 2-path, in n - 3, or two disjoint edges, in 2; for k = 3 a 3-path, in 1):

.. math:: \hat C_4 = \alpha^4 \tilde C_4 + \alpha^3\beta \tilde P_3
          + \alpha^2\beta^2 [(n-3)\tilde S_2 + 2\tilde M_2]
          + \alpha\beta^3 (n-2)(n-3)\tilde m + \beta^4\, 3\tbinom n4,

with :math:`\tilde C_4, \tilde P_3, \tilde S_2, \tilde M_2, \tilde m` the 4-cycles, 3-paths,
2-stars, pairs of disjoint edges and edges of the noisy graph. Its variance, from the
derivatives (U a 4-cycle: 1; a 3-path: the closing bit; a 2-path x-y-z: :math:`c_{xz} -
a_{xy}a_{yz}`; two disjoint pairs: the number of the other two matchings of their 4 nodes
present; one pair {x, w}: :math:`P_3(x, w)`, the 3-paths of G from x to w):

.. math:: \operatorname{Var} \hat C_4 = \nu^4\, 3\tbinom n4 + \nu^3 m (n-2)(n-3)
          + \nu^2 \Big[\sum_{x<z} \big((n-4) c_{xz}^2 + c_{xz}\big) + 2 M_2 + 2 C_4\Big]
          + \nu \sum_{x<w} P_3(x, w)^2,

:math:`P_3(x, w) = (A^3)_{xw} - a_{xw}(d_x + d_w - 1)`.

Two rounds (``two-round-four-cycles-dlap``)
-------------------------------------------
Broadcast: the noisy graph, and for every pair the public
:math:`Z_{uw} = \sum_{x \notin \{u, w\}} \hat a_{ux} \hat a_{xw}`. Node v, with its neighbour
list projected to a uniform :math:`d_{max}`-subset :math:`N_v` when longer, releases

.. math:: r_v = \lfloor f_v + U \rfloor + \mathrm{DLap}(e^{-\varepsilon_2/S}),\qquad
          f_v = \sum_{u < w \in N_v} (Z_{uw} - 1),

:math:`U \sim U[0, 1)`. Its x = v term :math:`\hat a_{uv}\hat a_{vw}` has mean 1 (two distinct
true edges), so :math:`E f_v = \sum_{u<w\in N(v)} (c_{uw} - 1) = c4_v`, the 4-cycles through v,
and the curator's :math:`\hat C_4 = \frac14 \sum_v r_v` is unbiased (without projection).

**Sensitivity.** Let :math:`T_l` be the sum of the :math:`d_{max} - 1` largest
:math:`|Z_{lw} - 1|`, :math:`w \ne l`, and S the ceiling of the sum of the two largest
:math:`T_l` (public: a function of the broadcast). Adding neighbour l to a list changes f by
:math:`\sum_{w \in N_v} (Z_{lw} - 1)`, at most :math:`T_l` in size; under projection (coupled
through one random order, as the two-round triangle protocol) l may replace the last kept
l', a change of at most :math:`T_l + T_{l'} \le S`. Randomized rounding with a shared U costs
no sensitivity (:func:`~ldpgraph.protocols.triangles.kernels.two_round_dlap_release`), so each
release is :math:`\varepsilon_2`-edge-LDP, and the node spends
:math:`\varepsilon_1 + \varepsilon_2`.

**Variance.** :math:`\sum_v f_v = Q - S_2` with the multilinear
:math:`Q = \sum_{u<w} c_{uw} Z_{uw}`; its derivatives give

.. math:: \operatorname{Var} Q = \nu \sum_{x<u} \big((CA)_{ux} + (CA)_{xu}\big)^2
          + \nu^2 (n-2) \sum_{u<w} c_{uw}^2

(C the codegree matrix with zero diagonal). The DLap noise and the rounding are
conditionally centred given the broadcast, so
:math:`\operatorname{Var}\hat C_4 = \frac1{16}\big(\operatorname{Var} Q +
E[n\,\sigma^2_{DLap}(S)] + \sum_v E\,\phi(f_v)\big)` with :math:`\phi(x) = \{x\}(1-\{x\})
\le 1/4`. S depends on the noisy graph; :func:`two_round_noise_variance` evaluates the
noise term at the S of the broadcast (S is a maximum of sums of hundreds of terms and
varies little between draws: ``scripts/benchmark_four_cycles.py`` prints its spread).

Everything is dense in n (the noisy graph at small ε has about :math:`q\binom n2` edges): the
functions refuse graphs with more than :data:`MAX_DENSE_NODES` nodes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._validation import check_epsilon, check_nonnegative_int, check_rng
from ...graph.core import Graph
from ..randomized_response import flip_probability, keep_probability, noisy_lower_pairs, pair_from_index

__all__ = [
    "MAX_DENSE_NODES",
    "rr_coefficients",
    "noisy_dense",
    "rr_four_cycle_estimate",
    "rr_four_cycle_variance",
    "rr_four_cycle_variance_estimate",
    "rr_four_cycle_estimate_and_variance",
    "simulate_rr_four_cycles",
    "z_matrix",
    "four_cycle_sensitivity",
    "cached_z_and_sensitivity",
    "two_round_rr_variance",
    "two_round_noise_variance",
    "simulate_two_round_four_cycles",
]

#: largest graph the dense kernels accept (n^2 float32 matrices: 1.6 GB at this n)
MAX_DENSE_NODES = 20_000


def rr_coefficients(epsilon: float) -> tuple[float, float, float]:
    r"""``(alpha, beta, nu)``: :math:`\hat a = \alpha \tilde a + \beta`, :math:`\nu = pq/(p-q)^2`.

    Examples
    --------
    >>> [round(x, 4) for x in rr_coefficients(1.0)]
    [2.164, -0.582, 0.9207]
    """
    p, q = keep_probability(epsilon), flip_probability(epsilon)
    alpha = 1.0 / (p - q)
    return alpha, -q * alpha, p * q * alpha * alpha


def noisy_dense(n: int, index: NDArray[np.int64]) -> NDArray[np.float32]:
    """The symmetric 0/1 float32 matrix of the noisy graph from its sorted lower pair indices."""
    _check_dense(n)
    b = np.zeros((n, n), dtype=np.float32)
    u, v = pair_from_index(np.asarray(index, dtype=np.int64))
    b[u, v] = 1.0
    b[v, u] = 1.0
    return b


def rr_four_cycle_estimate(n: int, index: NDArray[np.int64], epsilon: float) -> float:
    r"""The one-round unbiased estimate :math:`\hat C_4` from the noisy graph (module docstring).

    Parameters
    ----------
    n : int
        Number of nodes.
    index : ndarray of int64
        Sorted lower pair indices of the noisy edges
        (:func:`~ldpgraph.protocols.randomized_response.noisy_lower_pairs`).
    epsilon : float
        The RR budget.

    Examples
    --------
    >>> from ldpgraph.protocols.randomized_response import pair_index
    >>> idx = np.sort(pair_index(np.array([1, 2, 3, 3]), np.array([0, 1, 2, 0])))
    >>> round(rr_four_cycle_estimate(4, idx, 40.0), 6)  # a square, almost no noise
    1.0
    """
    b = noisy_dense(n, index)
    return _estimate_from(n, index, epsilon, b, b @ b)


def _estimate_from(n: int, index: NDArray[np.int64], epsilon: float, b: NDArray[np.float32],
                   kk: NDArray[np.float32]) -> float:
    """:func:`rr_four_cycle_estimate` from the dense noisy graph ``b`` and ``kk`` = b @ b (float32:
    exact, integers < 2^24)."""
    alpha, beta, _ = rr_coefficients(epsilon)
    deg = b.sum(axis=1, dtype=np.float64).astype(np.int64)
    k = kk.astype(np.int64)  # noisy codegrees
    np.fill_diagonal(k, 0)
    m = int(index.size)
    c4 = int((k * (k - 1)).sum()) // 8
    tri = int((k * b.astype(np.int64)).sum()) // 6
    u, v = pair_from_index(np.asarray(index, dtype=np.int64))
    p3 = int(((deg[u] - 1) * (deg[v] - 1)).sum()) - 3 * tri
    s2 = int((deg * (deg - 1) // 2).sum())
    m2 = m * (m - 1) // 2 - s2
    terms = (
        alpha**4 * c4,
        alpha**3 * beta * p3,
        alpha**2 * beta**2 * ((n - 3) * s2 + 2 * m2),
        alpha * beta**3 * (n - 2) * (n - 3) * m,
        beta**4 * 3 * math.comb(n, 4),
    )
    return math.fsum(terms)


def rr_four_cycle_variance(graph: Graph, epsilon: float) -> float:
    r"""Exact variance of :func:`rr_four_cycle_estimate` on ``graph`` (module docstring).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [2, 3], [3, 0]])
    >>> rr_four_cycle_variance(g, 50.0) < 1e-15
    True
    """
    _, _, nu = rr_coefficients(epsilon)
    g = _check_graph(graph)
    n, m = g.n_nodes, g.n_edges
    a, c = _adjacency_and_codegrees(g)
    deg = g.degrees
    c3 = _times_adjacency(g, c)  # (A^2 with zero diagonal) A = A^3 - diag(d) A
    p3 = c3 + deg[:, None] * a - a * (deg[:, None] + deg[None, :] - 1)
    np.fill_diagonal(p3, 0.0)
    s2 = int((deg * (deg - 1) // 2).sum())
    m2 = m * (m - 1) // 2 - s2
    c4 = int((c.astype(np.int64) * (c.astype(np.int64) - 1)).sum()) // 8
    sum_c = float(c.sum()) / 2.0
    sum_c2 = float((c * c).sum()) / 2.0
    terms = (
        nu**4 * 3 * math.comb(n, 4),
        nu**3 * m * (n - 2) * (n - 3),
        nu**2 * ((n - 4) * sum_c2 + sum_c + 2 * m2 + 2 * c4),
        nu * float((p3 * p3).sum()) / 2.0,
    )
    return math.fsum(terms)


def _three_paths(x: NDArray[np.float64], x2: NDArray[np.float64], times: Any = None) -> NDArray[np.float64]:
    r""":math:`P^X(u, w) = \sum_{y,z} X_{uy}X_{yz}X_{zw}` over distinct u, y, z, w (zero diagonal).

    For a symmetric X with zero diagonal and ``x2`` :math:`= X^2`, the walks of :math:`X^3` that
    revisit u or w are the terms y = w and z = u:
    :math:`P^X = X^3 - X \circ (s_u + s_w) + X\circ X\circ X`, :math:`s = \sum_z X_{\cdot z}^2`.
    ``times(Y)``, when given, is :math:`X Y` (:func:`_structured_times`).
    """
    s = (x * x).sum(axis=1)
    p = x @ x2 if times is None else times(x2)
    p -= x * (s[:, None] + s[None, :])
    p += x * x * x
    np.fill_diagonal(p, 0.0)
    return p


def _three_path_total(x: NDArray[np.float64], x2: NDArray[np.float64]) -> float:
    r""":math:`\sum_{u \ne w} P^X(u, w)` (:func:`_three_paths`) in O(n^2), from ``x2`` :math:`= X^2`
    (its diagonal: the walks u-y-z-u)."""
    s = (x * x).sum(axis=1)
    r = x.sum(axis=1)
    walks = float(r @ (x @ r)) - float((x2 * x).sum())  # all walks, minus the closed ones (trace X^3)
    return walks - 2.0 * float(s @ r) + float((x * x * x).sum())


def _structured(x: float, y: float, bits: NDArray[np.float32]) -> NDArray[np.float64]:
    """The dense :math:`x B + y (J - I)` (zero diagonal)."""
    out = bits.astype(np.float64)
    out *= x
    out += y
    np.fill_diagonal(out, 0.0)
    return out


def _structured_square(x: float, y: float, kk: NDArray[np.float64], bits: NDArray[np.float32],
                       deg: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`X^2` for :math:`X = xB + y(J - I)`, B symmetric 0/1 with zero diagonal, ``kk`` :math:`= B^2`:
    :math:`x^2 K + xy(d1^\top + 1d^\top) - 2xyB + y^2(n-2)(J - I) + y^2(n-1)I` (with :math:`B(J-I) =
    d1^\top - B`, :math:`(J-I)^2 = (n-2)(J-I) + (n-1)I`).

    >>> bb = np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=np.float32)
    >>> x = _structured(2.0, -0.5, bb)
    >>> bool(np.allclose(_structured_square(2.0, -0.5, (bb @ bb).astype(float), bb, bb.sum(1)), x @ x))
    True
    """
    n = bits.shape[0]
    out = kk * (x * x)
    out += (x * y) * (deg[:, None] + deg[None, :])
    out -= (2.0 * x * y) * bits.astype(np.float64)  # (float64: a float32 product would round)
    out += y * y * (n - 2)
    out[np.diag_indices(n)] += y * y * (n - 1) - y * y * (n - 2)
    return out


def _structured_times(x: float, y: float, bits: NDArray[np.float32], m: NDArray[np.float64]
                      ) -> NDArray[np.float64]:
    r""":math:`(xB + y(J - I))\,M = x BM + y(1\,1^\top M - M)` (one dense product)."""
    out = bits.astype(np.float64) @ m
    out *= x
    out += y * (m.sum(axis=0)[None, :] - m)
    return out


def rr_four_cycle_variance_estimate(n: int, index: NDArray[np.int64], epsilon: float) -> float:
    r"""An unbiased estimate of :func:`rr_four_cycle_variance` from the noisy graph alone.

    The curator's standard error of :func:`rr_four_cycle_estimate`: no true-graph quantity enters.

    Notes
    -----
    Every term of the exact variance (module docstring) is a polynomial in the true bits
    :math:`a_e \in \{0, 1\}`. Reduced with :math:`a_e^2 = a_e` it is multilinear, and a
    multilinear polynomial of the independent, unbiased :math:`\hat a_e` is unbiased for it. A
    product with a squared factor is handled by :math:`E[\hat a_e^2 - \nu] = a_e + \nu - \nu = a_e`
    (:math:`a_e^2 = a_e`): in the square of an unbiased sum, replace each repeated factor
    :math:`\hat a_e^2` by :math:`\hat e_e = \hat a_e^2 - \nu`. With :math:`\hat A` the dense
    matrix of the :math:`\hat a_e`, :math:`B = \hat A \circ \hat A`, :math:`\hat E = B - \nu`
    (off the diagonal), :math:`M = \hat A^2`, :math:`N = B^2` (sums over ordered pairs
    :math:`x \ne z`; :math:`\hat P_3 = P^{\hat A}`, :math:`P^X` the 3-path sum of X):

    - :math:`\hat m = \tfrac12\sum \hat A`, :math:`\hat S_2 = \tfrac12 \sum M`,
      :math:`\hat M_2 = (\hat m^2 - \tfrac12\sum B)/2 - \hat S_2`, :math:`\hat C_4` the estimate;
    - :math:`\widehat{c_{xz}^2} = M_{xz}^2 - N_{xz} + (\hat E^2)_{xz}` (the terms y = y' of
      :math:`\hat c^2` carry both factors squared);
    - :math:`\sum_{x<w}\widehat{P_3^2} = \tfrac12\big[\sum \hat P_3^2 + \sum P^{\hat E} -
      \sum P^{B} - 2\nu(n-4)\sum (M^2 - N) - 8\nu \hat C_4\big]`: two 3-paths x-y-z-w
      share all three pairs (the path itself: :math:`P^{\hat E} - P^B`), the pair xy only
      (y = y'), zw only (z = z'), or yz only (x-z-y-w: the 4-cycle x-y-w-z, counted 8 times).

    Then :math:`\hat V = \nu^4\, 3\binom n4 + \nu^3 \hat m (n-2)(n-3) + \nu^2\big[\sum_{x<z}
    ((n-4)\widehat{c_{xz}^2} + \hat c_{xz}) + 2\hat M_2 + 2\hat C_4\big] +
    \nu\sum_{x<w}\widehat{P_3^2}` has :math:`E\hat V = \operatorname{Var}\hat C_4` exactly
    (checked by enumerating every RR outcome on small graphs in
    ``tests/protocols/test_four_cycles.py``). It can be negative (then the standard error is 0).
    Cost: two dense n x n products (:math:`K = B^2` in float32, :math:`B (\hat A^2)` in float64; the
    matrices :math:`\hat A`, B, :math:`\hat E` are :math:`xB + y(J - I)` of the noisy graph B, so their
    squares are sums of K, the degrees and B).

    Examples
    --------
    >>> from ldpgraph.protocols.randomized_response import pair_index
    >>> idx = np.sort(pair_index(np.array([1, 2, 3, 3]), np.array([0, 1, 2, 0])))
    >>> abs(rr_four_cycle_variance_estimate(4, idx, 40.0)) < 1e-9   # almost no noise
    True
    """
    return rr_four_cycle_estimate_and_variance(n, index, epsilon)[1]


def rr_four_cycle_estimate_and_variance(n: int, index: NDArray[np.int64], epsilon: float
                                        ) -> tuple[float, float]:
    """:func:`rr_four_cycle_estimate` and :func:`rr_four_cycle_variance_estimate` from one dense product.

    >>> from ldpgraph.protocols.randomized_response import pair_index
    >>> idx = np.sort(pair_index(np.array([1, 2, 3, 3]), np.array([0, 1, 2, 0])))
    >>> c4, v = rr_four_cycle_estimate_and_variance(4, idx, 40.0)
    >>> round(c4, 6), abs(v) < 1e-9
    (1.0, True)
    """
    alpha, beta, nu = rr_coefficients(epsilon)
    bits = noisy_dense(n, index)
    kk = bits @ bits  # the one dense product of the noisy graph (float32: exact integers < 2^24)
    c4 = _estimate_from(n, index, epsilon, bits, kk)
    deg = kk.diagonal().astype(np.float64)
    kk = kk.astype(np.float64)
    # a = alpha B + beta (J - I), b = a o a and e = b - nu (off the diagonal) are all x B + y (J - I):
    # their squares are sums of K = B^2, the degrees and B (:func:`_structured_square`), no product
    xa, ya = alpha, beta
    xb, yb = alpha * alpha + 2.0 * alpha * beta, beta * beta
    # (one n x n matrix at a time where possible: b, e and their squares are reduced to sums and freed)
    b = _structured(xb, yb, bits)
    sum_b = float(b.sum())
    nn = _structured_square(xb, yb, kk, bits, deg)
    paths_b = _three_path_total(b, nn)
    del b
    np.fill_diagonal(nn, 0.0)
    sum_nn = float(nn.sum())
    del nn
    e = _structured(xb, yb - nu, bits)
    ee = _structured_square(xb, yb - nu, kk, bits, deg)
    paths_e = _three_path_total(e, ee)
    del e
    np.fill_diagonal(ee, 0.0)
    sum_ee = float(ee.sum())
    del ee
    mm = _structured_square(xa, ya, kk, bits, deg)
    del kk
    a = _structured(xa, ya, bits)
    m_hat = a.sum() / 2.0
    # a @ mm = alpha B mm + beta (1 colsum(mm) - mm): one float64 product (a^3)
    paths_a_sq = float(np.square(_three_paths(a, mm, lambda y: _structured_times(xa, ya, bits, y))).sum())
    del a
    np.fill_diagonal(mm, 0.0)
    s2 = mm.sum() / 2.0
    m2 = (m_hat * m_hat - sum_b / 2.0) / 2.0 - s2
    mm *= mm
    # M^2 - N: unbiased, as a polynomial, for 2 x (pairs of distinct 2-paths x-y-z)
    sum_pairs = float(mm.sum()) - sum_nn
    del mm
    sum_c2 = (sum_pairs + sum_ee) / 2.0
    p3_sq = math.fsum((paths_a_sq, paths_e, -paths_b, -2.0 * nu * (n - 4) * sum_pairs, -8.0 * nu * c4)) / 2.0
    terms = (
        nu**4 * 3 * math.comb(n, 4),
        nu**3 * m_hat * (n - 2) * (n - 3),
        nu**2 * ((n - 4) * sum_c2 + s2 + 2 * m2 + 2 * c4),
        nu * p3_sq,
    )
    return c4, math.fsum(terms)


def simulate_rr_four_cycles(graph: Graph, epsilon: float, n_trials: int = 1, *, rng: Any = None
                            ) -> NDArray[np.float64]:
    """``n_trials`` independent one-round estimates (RR at ``epsilon``, then the curator).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [2, 3], [3, 0]])
    >>> simulate_rr_four_cycles(g, 40.0, 2, rng=0).round(6).tolist()
    [1.0, 1.0]
    """
    g = _check_graph(graph)
    eps = check_epsilon(epsilon)
    gen = check_rng(rng)
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    p, q = keep_probability(eps), flip_probability(eps)
    out = np.empty(n_trials)
    for t in range(n_trials):
        n, index = noisy_lower_pairs(g, p, q, rng=gen)
        out[t] = rr_four_cycle_estimate(n, index, eps)
    return out


def z_matrix(n: int, index: NDArray[np.int64], epsilon: float) -> NDArray[np.float64]:
    r""":math:`Z_{uw} = \sum_{x \notin\{u,w\}} \hat a_{ux}\hat a_{xw}` for all pairs (zero diagonal).

    :math:`Z = \alpha^2 \tilde c_{uw} + \alpha\beta(\tilde d_u + \tilde d_w - 2\tilde a_{uw})
    + \beta^2 (n - 2)` from the noisy codegrees and degrees (integers, exact).

    Examples
    --------
    >>> from ldpgraph.protocols.randomized_response import pair_index
    >>> idx = np.sort(pair_index(np.array([1, 2]), np.array([0, 1])))   # the path 0 - 1 - 2
    >>> round(float(z_matrix(3, idx, 60.0)[0, 2]), 6)
    1.0
    """
    alpha, beta, _ = rr_coefficients(epsilon)
    b = noisy_dense(n, index)
    k = (b @ b).astype(np.float64)
    deg = b.sum(axis=1, dtype=np.float64)
    z = alpha * alpha * k
    z += alpha * beta * (deg[:, None] + deg[None, :] - 2.0 * b)
    z += beta * beta * (n - 2)
    np.fill_diagonal(z, 0.0)
    return z


def four_cycle_sensitivity(z: NDArray[np.float64], d_max: int) -> int:
    r"""S: the ceiling of the two largest :math:`T_l` (sums of the d_max - 1 largest :math:`|Z_{lw} - 1|`).

    Examples
    --------
    >>> z = np.array([[0.0, 3.0, -2.0], [3.0, 0.0, 1.5], [-2.0, 1.5, 0.0]])
    >>> four_cycle_sensitivity(z, 2)   # T = (3, 2, 3): S = ceil(3 + 3)
    6
    """
    n = z.shape[0]
    d = check_nonnegative_int(d_max, "d_max", minimum=1)
    if d <= 1 or n < 2:
        return 1
    dev = np.abs(z - 1.0)
    np.fill_diagonal(dev, 0.0)  # w = l is never a partner; 0 never exceeds a true term
    k = min(d - 1, n - 1)
    top = -np.partition(-dev, k - 1, axis=1)[:, :k] if k < n else dev
    t = np.sort(top.sum(axis=1))
    total = t[-1] + (t[-2] if t.size > 1 else 0.0)
    return max(1, math.ceil(total))


# (run id, n, epsilon, d_max) -> (Z, S); the run id hashes the broadcast's header and noisy edges
_CACHE: dict[tuple[int, int, float, int], tuple[NDArray[np.float64], int]] = {}


def cached_z_and_sensitivity(run_id: int, n: int, epsilon: float, d_max: int, index: NDArray[np.int64]
                             ) -> tuple[NDArray[np.float64], int]:
    """``(Z, S)`` of a broadcast, computed once per run id (the last one is kept: Z is n x n).

    >>> z, s = cached_z_and_sensitivity(7, 3, 50.0, 2, np.array([0, 2]))   # the path 0 - 1 - 2
    >>> s
    2
    """
    key = (int(run_id), int(n), float(epsilon), int(d_max))
    if key not in _CACHE:
        z = z_matrix(n, index, epsilon)
        _CACHE.clear()
        _CACHE[key] = (z, four_cycle_sensitivity(z, d_max))
    return _CACHE[key]


def two_round_rr_variance(graph: Graph, epsilon1: float) -> float:
    r""":math:`\operatorname{Var} Q` of the two-round protocol (RR part; module docstring), exact.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> two_round_rr_variance(from_edge_array([[0, 1], [1, 2]]), 50.0) < 1e-15
    True
    """
    _, _, nu = rr_coefficients(epsilon1)
    g = _check_graph(graph)
    n = g.n_nodes
    _, c = _adjacency_and_codegrees(g)
    r = _times_adjacency(g, c)
    grad = r + r.T
    np.fill_diagonal(grad, 0.0)
    return math.fsum((nu * float((grad * grad).sum()) / 2.0, nu * nu * (n - 2) * float((c * c).sum()) / 2.0))


def two_round_noise_variance(n: int, epsilon2: float, sensitivity: int) -> float:
    """Variance of the sum of the n DLap noises at sensitivity S (before the division by 4).

    Examples
    --------
    >>> two_round_noise_variance(10, 1.0, 1) == 10 * 2 * math.exp(-1) / (1 - math.exp(-1)) ** 2
    True
    """
    a = math.exp(-check_epsilon(epsilon2) / sensitivity)
    return n * 2.0 * a / (1.0 - a) ** 2


def simulate_two_round_four_cycles(
    graph: Graph, epsilon1: float, epsilon2: float, d_max: int, n_trials: int = 1, *, rng: Any = None,
    return_sensitivity: bool = False,
) -> Any:
    """``n_trials`` two-round estimates: RR at ``epsilon1``, local counts at ``epsilon2``.

    The true degrees must be at most ``d_max`` (the simulation does not project; the deployed
    round 2 does). With ``return_sensitivity`` also the S of each trial.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [2, 3], [3, 0]])
    >>> est = simulate_two_round_four_cycles(g, 40.0, 40.0, 2, 200, rng=0)
    >>> bool(abs(est.mean() - 1.0) < 0.2)
    True
    """
    from ...mechanisms import DiscreteLaplace

    g = _check_graph(graph)
    e1, e2 = check_epsilon(epsilon1), check_epsilon(epsilon2)
    d = check_nonnegative_int(d_max, "d_max", minimum=1)
    if g.n_nodes and int(g.degrees.max()) > d:
        raise ValueError(f"d_max = {d} is below the largest degree {int(g.degrees.max())}; the simulation "
                         "does not project: pass d_max >= the maximum degree")
    gen = check_rng(rng)
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    p, q = keep_probability(e1), flip_probability(e1)
    n = g.n_nodes
    a = _sparse(g)
    deg = g.degrees
    out = np.empty(n_trials)
    sens = np.empty(n_trials, dtype=np.int64)
    for t in range(n_trials):
        _, index = noisy_lower_pairs(g, p, q, rng=gen)
        z = z_matrix(n, index, e1)
        # f_v = sum_{u<w in N(v)} Z_uw - C(d_v, 2) = (A Z A)_vv / 2 - C(d_v, 2), A and Z symmetric
        f = 0.5 * np.asarray(a.multiply(a @ z).sum(axis=1)).ravel() - deg * (deg - 1) / 2.0
        s = four_cycle_sensitivity(z, d)
        rounded = np.floor(f + gen.random(n))
        noise = DiscreteLaplace(epsilon=e2, sensitivity=float(s)).sample(n, rng=gen)
        out[t] = (float(rounded.sum()) + float(noise.sum())) / 4.0
        sens[t] = s
    return (out, sens) if return_sensitivity else out


# ---------------------------------------------------------------------------------------------


#: why the one-round and two-round 4-cycle methods stop at :data:`MAX_DENSE_NODES` (``ldpgraph methods``
#: prints it, the refusal too)
DENSE_LIMIT_WHY = (
    "the estimator reads all n(n-1)/2 pairs of the noisy graph (RR keeps about a quarter of all pairs "
    "at epsilon 1: 1.3e11 noisy edges at 10^6 nodes) through the noisy codegrees of every pair, a dense "
    "n x n product (O(n^2) memory, O(n^3) time); its law has no closed form short of drawing them"
)
_LIMIT_WHAT = {
    "rr-four-cycles": "the estimate sums C(c, 2) over the noisy codegrees c of all pairs",
    "two-round-four-cycles-dlap": "the sensitivity S of round 2 is a maximum over all pairs of their Z, a "
                                  "function of the noisy codegrees",
}


def simulation_limit_text(method: str) -> str:
    """The size limit of a dense 4-cycle method and why (``ldpgraph methods``, the refusal).

    >>> simulation_limit_text("rr-four-cycles")[:24]
    'at most 20,000 nodes: th'
    """
    return f"at most {MAX_DENSE_NODES:,} nodes: {_LIMIT_WHAT[method]}; {DENSE_LIMIT_WHY}"


def _check_dense(n: int) -> None:
    if n > MAX_DENSE_NODES:
        raise MemoryError(
            f"the 4-cycle estimators hold n x n matrices; n = {n:,} exceeds {MAX_DENSE_NODES:,} "
            f"(MAX_DENSE_NODES): {DENSE_LIMIT_WHY}. Use a smaller graph, or a shuffle-model 4-cycle "
            "method (wshuffle-four-cycles), which scales"
        )


def _check_graph(graph: Any, *, dense: bool = True) -> Graph:
    if not isinstance(graph, Graph):
        raise TypeError(
            f"graph must be an ldpgraph Graph (the 4-cycle protocols need the adjacency), got "
            f"{type(graph).__name__}"
        )
    if dense:
        _check_dense(graph.n_nodes)
    return graph


def _sparse(g: Graph) -> Any:
    import scipy.sparse as sp  # deferred: slow to import

    n = g.n_nodes
    return sp.csr_array((np.ones(g.indices.size), g.indices, g.indptr), shape=(n, n))


def _adjacency_and_codegrees(g: Graph) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Dense A and C = A^2 with zero diagonal (float64: exact integers)."""
    a = _sparse(g)
    c = (a @ a).toarray()
    np.fill_diagonal(c, 0.0)
    return a.toarray(), c


def _times_adjacency(g: Graph, c: NDArray[np.float64]) -> NDArray[np.float64]:
    """C A for a symmetric dense C, as (A C)^T with the sparse A (nnz n operations, not n^3)."""
    return np.ascontiguousarray((_sparse(g) @ c).T)
