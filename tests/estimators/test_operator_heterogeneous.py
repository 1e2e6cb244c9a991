"""debias_nd with one noise per axis: exact unbiasedness, brute force, variance, Laplace axes, errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dlap_exact import dlap_support

from ldpgraph._validation import dlap_c
from ldpgraph.estimators import Smooth, debias, debias_laplace, debias_nd, debias_nd_variance


def _exact_nd(g, x, epsilons, sensitivities=None, tail=1e-15):
    """E[g(x + eta)] for one integer vector x, eta_j ~ DLap(exp(-eps_j/sens_j)) independent."""
    x = np.asarray(x, dtype=np.int64)
    sens = sensitivities or [1.0] * len(x)
    supports = [dlap_support(e, s, tail) for e, s in zip(epsilons, sens, strict=True)]
    grids = np.meshgrid(*[k for k, _ in supports], indexing="ij")
    shifts = np.stack([gr.ravel() for gr in grids], axis=-1)
    weights = np.ones(shifts.shape[0])
    for j, (k, pmf) in enumerate(supports):
        weights = weights * pmf[shifts[:, j] + k[-1]]
    vals = np.asarray(g(x + shifts), dtype=np.float64)
    return float(math.fsum(vals * weights))


def _brute(f, y, cs):
    """Formula (2) with per-axis alpha, written out term by term (independent of the code)."""
    total = []
    for xi in itertools.product([-1, 0, 1], repeat=len(y)):
        w = math.prod((1 + 2 * c) if s == 0 else -c for s, c in zip(xi, cs, strict=True))
        total.append(w * float(f(np.asarray(y) + np.asarray(xi))))
    return math.fsum(total)


def f2(z):
    z = z.astype(float)
    return np.where(z[..., 0] >= 2, z[..., 1] / np.maximum(z[..., 0] * (z[..., 0] - 1) / 2, 1), 0.0) + np.sin(z[..., 1])


def f3(z):
    z = z.astype(float)
    return np.minimum(z[..., 0], z[..., 2]) * np.cos(z[..., 1]) + (z[..., 0] > z[..., 1]) * z[..., 2] ** 2


@pytest.mark.parametrize(
    "f, x, eps, sens",
    [
        (f2, [3, 5], [0.4, 1.7], [1.0, 1.0]),
        (f2, [1, -2], [2.0, 0.6], [1.0, 3.0]),
        (f3, [2, 0, 4], [0.8, 1.5, 2.5], [1.0, 1.0, 2.0]),
    ],
)
def test_heterogeneous_debias_nd_is_exactly_unbiased(f, x, eps, sens):
    mean = _exact_nd(lambda z: debias_nd(f, z, eps, sens), x, eps, sens)
    truth = float(f(np.asarray(x)))
    assert mean == pytest.approx(truth, rel=1e-9, abs=1e-9)
    # the plug-in is visibly biased at these epsilons: the check above can fail
    assert abs(_exact_nd(f, x, eps, sens) - truth) > 1e-4


@pytest.mark.parametrize("m", [2, 3, 4])
def test_heterogeneous_equals_brute_force_on_random_h(m):
    rng = np.random.default_rng(m)
    table = rng.normal(size=(15,) * m)  # a random function on the box [-7, 7]^m
    def h(z):
        return table[tuple(np.clip(z[..., j] + 7, 0, 14) for j in range(m))]
    eps = rng.uniform(0.3, 3.0, size=m)
    sens = rng.choice([1.0, 2.0, 5.0], size=m)
    cs = [dlap_c(e, s) for e, s in zip(eps, sens, strict=True)]
    ys = rng.integers(-5, 6, size=(6, m))
    got = debias_nd(h, ys, eps, sens)
    for row, val in zip(ys, got, strict=True):
        assert val == pytest.approx(_brute(h, row, cs), rel=1e-10, abs=1e-10 * max(cs) ** m)


def test_homogeneous_sequences_give_the_scalar_results_bit_for_bit():
    y = np.random.default_rng(1).integers(-4, 5, size=(20, 3))
    f = lambda z: np.max(z, axis=-1) * 1.5 + z[..., 1] ** 2  # noqa: E731
    np.testing.assert_array_equal(debias_nd(f, y, [0.9] * 3, [1, 1, 1]), debias_nd(f, y, 0.9))
    np.testing.assert_array_equal(debias_nd_variance(f, y, [0.9] * 3), debias_nd_variance(f, y, 0.9))


def test_product_tensorizes_with_per_axis_epsilon():
    h1 = lambda d: d.astype(float) ** 2  # noqa: E731
    h2 = lambda d: np.exp(0.1 * d)  # noqa: E731
    y = np.array([[3, -1], [0, 4], [7, 7]])
    got = debias_nd(lambda z: h1(z[..., 0]) * h2(z[..., 1]), y, [0.5, 2.0], [1.0, 3.0])
    np.testing.assert_allclose(got, debias(h1, y[:, 0], 0.5) * debias(h2, y[:, 1], 2.0, 3.0), rtol=1e-10)


def test_heterogeneous_variance_estimate_is_exactly_unbiased():
    eps, x = [0.7, 1.9], [2, 5]
    g2 = _exact_nd(lambda z: debias_nd(f2, z, eps) ** 2, x, eps)
    true_var = g2 - float(f2(np.asarray(x))) ** 2
    est = _exact_nd(lambda z: debias_nd_variance(f2, z, eps), x, eps)
    assert true_var > 0.1
    assert est == pytest.approx(true_var, rel=1e-8)


# --- Laplace axes ---------------------------------------------------------------------------


def _poly_sin(z, order):
    """f(z) = z0^2 * sin(z1) + z1^3 and its partial derivatives up to order 2 per axis."""
    a, b = order
    z0, z1 = z[..., 0], z[..., 1]
    p = [z0**2, 2 * z0, 2 + 0 * z0][a] if a <= 2 else 0 * z0
    s = [np.sin(z1), np.cos(z1), -np.sin(z1)][b]
    cub = [z1**3, 3 * z1**2, 6 * z1][b] if a == 0 else 0 * z1
    return p * s + cub


def _mixed_expectation(g, x0, x1, eps0, eps1):
    """E over DLap on axis 0 (summed) and Laplace on axis 1 (Gauss-Laguerre on each half-line).

    E[h(x1 + L)] = (1/2) int_0^inf (h(x1 + b t) + h(x1 - b t)) e^{-t} dt, b = 1/eps1; g is
    vectorized over rows of shape (k, 2).
    """
    from scipy.special import roots_laguerre

    k, pmf = dlap_support(eps0)
    t, wt = roots_laguerre(120)
    b = 1 / eps1
    u = np.concatenate([b * t, -b * t])
    wu = np.concatenate([wt, wt]) / 2
    pts = np.stack(np.broadcast_arrays((x0 + k)[:, None].astype(float), x1 + u[None, :]), axis=-1)
    vals = np.asarray(g(pts.reshape(-1, 2)), dtype=float).reshape(k.size, u.size)
    return float(math.fsum((vals * (pmf[:, None] * wu[None, :])).ravel()))


def test_mixed_expectation_helper_integrates_laplace_exactly():
    # E[(x1 + L)^4] = x1^4 + 12 x1^2 b^2 + 24 b^4 and E[sin(x1 + L)] = sin(x1) / (1 + b^2)
    b = 0.4
    m4 = _mixed_expectation(lambda z: z[:, 1] ** 4, 0, 0.7, 3.0, 1 / b)
    assert m4 == pytest.approx(0.7**4 + 12 * 0.49 * b**2 + 24 * b**4, rel=1e-12)
    s = _mixed_expectation(lambda z: np.sin(z[:, 1]), 0, 0.7, 3.0, 1 / b)
    assert s == pytest.approx(math.sin(0.7) / (1 + b * b), rel=1e-11)


def test_mixed_dlap_laplace_axes_are_unbiased():
    f = Smooth(_poly_sin)
    eps, x0, x1 = [1.5, 2.0], 3, 0.7
    mean = _mixed_expectation(lambda z: debias_nd(f, z, eps, noise=["dlap", "laplace"]), x0, x1, *eps)
    truth = float(f(np.array([x0, x1])))
    assert mean == pytest.approx(truth, rel=1e-8)
    assert abs(_mixed_expectation(f, x0, x1, *eps) - truth) > 1e-2  # the plug-in is biased


def test_mixed_variance_estimate_is_unbiased():
    f = Smooth(_poly_sin)
    eps, x0, x1 = [2.0, 2.5], 2, 0.4
    noise = ["dlap", "laplace"]
    g2 = _mixed_expectation(lambda z: debias_nd(f, z, eps, noise=noise) ** 2, x0, x1, *eps)
    true_var = g2 - float(f(np.array([x0, x1]))) ** 2
    est = _mixed_expectation(lambda z: debias_nd_variance(f, z, eps, noise=noise), x0, x1, *eps)
    assert est == pytest.approx(true_var, rel=1e-7)


def test_all_laplace_axes_reduce_to_debias_laplace_in_one_dimension():
    f = Smooth(lambda z, o: [z[..., 0] ** 3, 3 * z[..., 0] ** 2, 6 * z[..., 0]][o[0]])
    y = np.array([[0.5], [-2.0], [3.25]])
    got = debias_nd(f, y, 1.3, 2.0, noise="laplace")
    ref = debias_laplace(lambda z: z**3, lambda z: 6 * z, y[:, 0], 1.3, 2.0)
    np.testing.assert_allclose(got, ref, rtol=1e-13)


def test_laplace_axis_needs_a_smooth_f():
    with pytest.raises(TypeError, match=r"Smooth.*axes \[1\]"):
        debias_nd(lambda z: z.sum(-1), [[1, 0.5]], [1.0, 1.0], noise=["dlap", "laplace"])


def test_dlap_axis_of_mixed_reports_must_be_integer():
    f = Smooth(_poly_sin)
    with pytest.raises(ValueError, match=r"y\[1, 0\] = 2.5 .*axis 0"):
        debias_nd(f, [[1, 0.5], [2.5, 0.1]], [1.0, 1.0], noise=["dlap", "laplace"])


def test_per_axis_parameters_are_validated():
    y = [[1, 2]]
    f = lambda z: z.sum(-1)  # noqa: E731
    with pytest.raises(ValueError, match=r"epsilon\[1\] must be finite and > 0, got -1"):
        debias_nd(f, y, [1.0, -1])
    with pytest.raises(ValueError, match="epsilon must give one value per axis: y has n = 2 axes, got 3"):
        debias_nd(f, y, [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"sensitivity\[0\]"):
        debias_nd(f, y, 1.0, [0, 1])
    with pytest.raises(ValueError, match=r"noise\[1\] must be one of"):
        debias_nd(f, y, 1.0, noise=["dlap", "gauss"])
    with pytest.raises(TypeError, match=r"noise\[0\] must be a string"):
        debias_nd(f, y, 1.0, noise=[1, "dlap"])
    with pytest.raises(TypeError, match=r"epsilon\[0\] must be a real number"):
        debias_nd(f, y, ["a", 1.0])
