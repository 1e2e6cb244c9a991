"""Headline benchmark of the fast unbiased estimators (issue targets in brackets).

Each row is timed (best of --repeat) next to a reference measured in the same run: the
brute-force operator (2) (``debias_nd``, 3^n points) where it runs, otherwise the cheapest
biased plug-in on the same reports.

* entropy of a 12,419-bin histogram, eps = 0.5 (< 1 s)
* kl_divergence of two such histograms (< 5 s)
* order_statistic (median rank) on n = 10^4 (< 1 s)
* binomial on 10^8 reports (>= 100 M reports/s)
* all of them against debias_nd at n = 8 (both computed, max relative difference printed)

The histograms are the Shakespeare word counts (top 12,419 words) through the dataset registry
when available, else a seeded Zipf histogram of the same size. Detailed per-family benchmarks:
bench_polynomials.py, bench_order_statistics.py, bench_entropy.py.

Usage (from the repository root)::

    PYTHONPATH=. python scripts/bench_estimators.py [--reports 100000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _timing import best_of  # scripts/ is on sys.path when a script runs

from ldpgraph.datasets import DatasetNotFoundError, load_dataset
from ldpgraph.estimators import (
    HighVarianceWarning,
    binomial,
    debias_nd,
    entropy,
    kl_divergence,
    maximum,
    order_statistic,
)
from ldpgraph.mechanisms import DiscreteLaplace

N_BINS = 12_419


def histogram(rng) -> tuple[str, np.ndarray]:
    try:
        counts = load_dataset("shakespeare").counts[:N_BINS]
        return "shakespeare top 12,419 words", counts.astype(np.int64)
    except DatasetNotFoundError:
        return "Zipf(1.3) seeded", np.sort(rng.zipf(1.3, N_BINS))[::-1].astype(np.int64)


def plugin_entropy(y):
    y = np.maximum(y, 0).astype(float)
    p = y[y > 0] / y.sum()
    return float(-(p * np.log(p)).sum())


def plugin_kl(y, z):
    y, z = np.maximum(y, 0).astype(float), np.maximum(z, 0.5).astype(float)
    p, q = y / y.sum(), z / z.sum()
    m = p > 0
    return float((p[m] * np.log(p[m] / q[m])).sum())


def row(name, t, ref_name, t_ref, target):
    print(f"{name:<46}{t * 1e3:>11.2f}{ref_name:>34}{t_ref * 1e3:>11.2f}{t_ref / t:>9.2f}  {target}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", type=int, default=10**8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    eps = 0.5
    mech = DiscreteLaplace(epsilon=eps)
    label, x = histogram(rng)
    y, z = mech.randomize(x, rng=rng), mech.randomize(x[::-1].copy(), rng=rng)
    print(f"histogram: {label}, N = {x.sum():,}, eps = {eps}")
    print(f"{'task':<46}{'ms':>11}{'reference':>34}{'ms':>11}{'ratio':>9}  target")

    t, h = best_of(lambda: entropy(y, eps), args.repeat)
    tr, _ = best_of(lambda: plugin_entropy(y), args.repeat)
    row("entropy, n = 12,419 (N noisy)", t, "plug-in entropy (biased)", tr, "< 1000 ms")
    t, _ = best_of(lambda: entropy(y, eps, total=int(x.sum())), args.repeat)
    row("entropy, n = 12,419 (N public)", t, "plug-in entropy (biased)", tr, "< 1000 ms")
    t, _ = best_of(lambda: kl_divergence(y, z, eps), args.repeat)
    tr, _ = best_of(lambda: plugin_kl(y, z), args.repeat)
    row("kl_divergence, 2 x 12,419 bins", t, "plug-in KL (biased)", tr, "< 5000 ms")

    deg = np.minimum(rng.zipf(2.0, 10_000), 10_000)
    yd = deg + DiscreteLaplace(epsilon=2.0).sample(deg.size, rng=rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        t, _ = best_of(lambda: order_statistic(yd, 5_000, 2.0), args.repeat)
    tr, _ = best_of(lambda: np.partition(yd, 5_000)[5_000], args.repeat)
    row("order_statistic k = 5,000, n = 10^4", t, "numpy.partition (biased)", tr, "< 1000 ms")

    big = rng.integers(0, 2_000, size=args.reports) + DiscreteLaplace(epsilon=1.0).sample(args.reports, rng=rng)
    t, _ = best_of(lambda: binomial(big, 3, 1.0), args.repeat)
    sub = big[: args.reports // 10]
    tr, _ = best_of(lambda: sub * (sub - 1.0) * (sub - 2.0) / 6.0, args.repeat)
    tr *= 10
    row(f"binomial k = 3 on {args.reports:,} reports", t, "numpy plug-in C(y,3) (biased)", tr,
        f"{args.reports / t / 1e6:.0f} M reports/s (>= 100)")

    print("\nagainst the brute-force operator (2), n = 8 (3^8 = 6,561 points per row), eps = 1")
    small = rng.integers(-3, 12, size=(50, 8))
    cases = [
        ("maximum", lambda v: maximum(v, 1.0), lambda v: debias_nd(lambda w: w.max(-1), v, 1.0)),
        ("order_statistic k=3", lambda v: order_statistic(v, 3, 1.0),
         lambda v: debias_nd(lambda w: np.sort(w, axis=-1)[..., 3], v, 1.0)),
        ("entropy", lambda v: entropy(v, 1.0), lambda v: debias_nd(_entropy_f, v, 1.0)),
    ]
    print(f"{'estimator':<24}{'fast ms':>10}{'brute ms':>10}{'speed-up':>10}{'max rel diff':>14}")
    for name, fast, brute in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HighVarianceWarning)
            tf, a = best_of(lambda fast=fast: fast(small), args.repeat)
            tb, b = best_of(lambda brute=brute: brute(small), 1)
        diff = np.max(np.abs(np.asarray(a) - b) / np.maximum(1.0, np.abs(b)))
        print(f"{name:<24}{tf * 1e3:>10.2f}{tb * 1e3:>10.1f}{tb / tf:>10.0f}{diff:>14.1e}")


def _entropy_f(w):
    w = w.astype(float)
    n = w.sum(-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where((w > 0) & (n > 0), -(w / n) * np.log(w / n), 0.0)
    return t.sum(-1)


if __name__ == "__main__":
    main()
