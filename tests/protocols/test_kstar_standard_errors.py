"""The k-star methods' standard errors from their own reports (what a curator has; the protocols'
``simulate_with_error``), exactly.

The unbiased Laplace estimate g = f - b^2 f'' (f = C(., k), b = 1/eps) has the variance estimate
2 b^2 f'(y)^2 + b^4 f''(y)^2 per report. Its mean over y = x + Lap(b) is checked against
Var g(x + L) from the Laplace moments E L^(2j) = (2j)! b^(2j) (odd moments 0), exactly for
polynomials: E h(x + L) = sum_j h^(2j)(x) b^(2j).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpgraph.protocols.degrees.kernels import laplace_kstar_variance_estimate
from ldpgraph.run.method import get_method


def _with_error(name, degrees, k, eps, rng):
    """One simulated run of method ``name`` as its curator sees it: (estimate, standard error, kind)."""
    m = get_method(name)
    gen = np.random.default_rng(rng) if isinstance(rng, int) else rng
    return m.protocol.simulate_with_error(degrees, m.plan(eps, degrees, "kstars"), "kstars", gen, param=k)


def _laplace_mean(h: np.polynomial.Polynomial, x: float, b: float) -> float:
    """E h(x + L), L ~ Lap(b), for a polynomial h (exact: a finite sum of even moments)."""
    out, j = 0.0, 0
    while 2 * j <= h.degree():
        out += h.deriv(2 * j)(x) * b ** (2 * j) if j else h(x)
        j += 1
    return out


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("eps", [0.5, 2.0])
@pytest.mark.parametrize("x", [0, 3, 17])
def test_laplace_variance_estimate_is_unbiased_exactly(k, eps, x):
    b = 1.0 / eps
    f = np.polynomial.Polynomial.fromroots(np.arange(k, dtype=np.float64)) / math.factorial(k)
    g = f - b * b * f.deriv(2)
    assert _laplace_mean(g, x, b) == pytest.approx(f(x), rel=1e-12, abs=1e-12)  # g is unbiased
    var = _laplace_mean(g * g, x, b) - f(x) ** 2
    d1, d2 = f.deriv(1), f.deriv(2)
    v_hat = 2 * b * b * d1 * d1 + b**4 * d2 * d2  # laplace_kstar_variance_estimate's polynomial
    assert _laplace_mean(v_hat, x, b) == pytest.approx(var, rel=1e-12)
    y = np.array([x - 1.3, x + 0.2, x + 4.0])
    assert laplace_kstar_variance_estimate(y, k, eps) == pytest.approx(float(v_hat(y).sum()), rel=1e-12)


def test_report_standard_errors_cover_at_the_nominal_rate():
    # 400 runs of unbiased-dlap and unbiased-laplace: the 95% intervals from the reports' SE cover
    # S_2 in 95% +- 3 binomial sd (1.1%) of them (n = 300 nodes: the normal approximation holds)
    degrees = np.random.default_rng(0).geometric(0.08, size=300)
    truth = float(sum(math.comb(int(d), 2) for d in degrees))
    gen = np.random.default_rng(1)
    for name in ("unbiased-dlap", "unbiased-laplace"):
        hits = 0
        for _ in range(400):
            value, se, kind = _with_error(name, degrees, 2, 1.0, gen)
            hits += abs(value - truth) <= 1.959964 * se
        assert kind == "unbiased"
        assert abs(hits / 400 - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / 400), (name, hits)


def test_estimate_with_error_draws_as_the_simulator():
    degrees = np.arange(1, 40)
    for name in ("unbiased-dlap", "naive-laplace", "local-dlap-kstars", "local-lap-kstars-private"):
        value = _with_error(name, degrees, 2, 1.0, 5)[0]
        simulated = get_method(name).estimate_trials(degrees, "kstars", 2, 1.0, 1, rng=5)[0]
        assert value == pytest.approx(float(simulated), rel=1e-12)
