"""Accuracy metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpgraph.metrics import bias, relative_error, relative_rmse, rmse, rmse_confidence_interval


def test_relative_error_uses_floor_of_a_thousandth_of_n():
    # truth smaller than 0.001 n: the denominator is 0.001 n (Imola et al.)
    assert relative_error(5.0, truth=1.0, n_nodes=2000).item() == pytest.approx(4.0 / 2.0)
    assert relative_error(12.0, truth=10.0, n_nodes=100).item() == pytest.approx(0.2)


def test_rmse_bias_decomposition():
    est = np.array([1.0, 2.0, 4.0, 7.0])
    truth = 3.0
    assert rmse(est, truth) ** 2 == pytest.approx(bias(est, truth) ** 2 + est.var())
    assert relative_rmse(est, truth) == pytest.approx(rmse(est, truth) / 3.0)


@pytest.mark.parametrize("level", [0.9, None])  # None: the default 95% (its constant quantile)
def test_rmse_interval_covers_true_rmse_at_nominal_rate(level):
    rng = np.random.default_rng(0)
    sigma, hits, reps = 2.0, 0, 400
    nominal = 0.95 if level is None else level
    kw = {} if level is None else {"level": level}
    for _ in range(reps):
        lo, hi = rmse_confidence_interval(rng.normal(0, sigma, 500), 0.0, **kw)
        hits += lo <= sigma <= hi
    # binomial(400, nominal): accept the nominal rate +- 4 sd (sd 6 at 90%, 4.4 at 95%)
    sd = math.sqrt(reps * nominal * (1 - nominal))
    assert abs(hits - reps * nominal) < 4 * sd


def test_errors():
    with pytest.raises(ValueError, match="non-empty"):
        rmse([], 1.0)
    with pytest.raises(ValueError, match="finite"):
        bias([1.0, math.nan], 1.0)
    with pytest.raises(ValueError, match="undefined"):
        relative_rmse([1.0], 0.0)
    with pytest.raises(ValueError, match="level"):
        rmse_confidence_interval([1.0, 2.0], 1.0, level=1.5)


def test_default_quantile_is_the_correctly_rounded_normal_quantile():
    mpmath = pytest.importorskip("mpmath")
    from ldpgraph.metrics import _Z_975, _normal_quantile

    with mpmath.workdps(60):
        exact = mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf(95) / 100)  # Phi^{-1}(0.975)
        assert _Z_975 == float(exact)  # mpmath's float() rounds to nearest
        below, above = np.nextafter(_Z_975, 0.0), np.nextafter(_Z_975, 3.0)
        assert abs(mpmath.mpf(_Z_975) - exact) <= min(abs(mpmath.mpf(below) - exact), abs(mpmath.mpf(above) - exact))
    assert _normal_quantile(0.975) == _Z_975
    # the other levels come from scipy, within an ulp of the truth
    with mpmath.workdps(60):
        for p in (0.95, 0.995, 0.6):
            exact = mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(p) - 1)
            assert abs(_normal_quantile(p) - float(exact)) <= 2 * np.spacing(float(exact))
