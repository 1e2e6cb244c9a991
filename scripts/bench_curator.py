"""Benchmark the curator on many noisy degrees: every statistic with its standard error.

Reports: n noisy degrees y = d + DLap(e^-epsilon), d a heavy-tailed degree sequence (a
discretised Pareto, mean ~ 10, like a social network). Timed in the same run, best of
``--repeat`` (wall clock), on the same array:

- references: ``np.bincount(y - min(y))`` (counting the reports) and ``y.sum()`` (reading them);
- ``ReportHistogram.from_reports`` (the one pass every statistic needs);
- each curator statistic end to end from NodeReports (histogram + estimate + standard error);
- all statistics (k-stars k = 1..5 in one pass, edges, moments 2-3, mean, variance, histogram
  up to 100, max, entropy) from one histogram;
- on the first ``--n-old`` reports, today's route for k-stars (per-report terms + math.fsum).

Prints M reports/s, the ratio to np.bincount and y.sum(), user/sys CPU time of the process
(resource.getrusage), the load average, and the relative difference between the histogram
route and the per-report math.fsum route (k-stars, moments) on the benchmark arrays.

Usage (from the repository root):
    PYTHONPATH=. python scripts/bench_curator.py [--n 100000000] [--epsilon 1.0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import time

import numpy as np
from _timing import best_of  # scripts/ is on sys.path when a script runs

from ldpgraph.estimators.polynomials import binomial, binomial_variance_estimate, power
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols import NodeReports, ReleasedValues, ReportHistogram, curator


def degrees(n: int, rng: np.random.Generator) -> np.ndarray:
    """Heavy-tailed degrees: floor of a Pareto(2.2) times 5, capped at 10^5."""
    out = np.empty(n, dtype=np.int64)
    step = 1 << 22
    for s in range(0, n, step):
        m = min(step, n - s)
        out[s : s + m] = np.minimum(np.floor(5.0 * (rng.pareto(2.2, m) + 1.0)), 1e5)
    return out


def rusage() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10**8)
    ap.add_argument("--n-old", type=int, default=10**7, help="reports for the old per-report route")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    n, eps = args.n, args.epsilon
    t0 = time.perf_counter()
    d = degrees(n, rng)
    y = DiscreteLaplace(epsilon=eps).randomize(d, rng=rng)
    del d
    print(f"n = {n:.3g} reports, epsilon = {eps}, generated in {time.perf_counter() - t0:.1f} s; "
          f"load average before timing {os.getloadavg()}")
    reports = NodeReports(released={"degree": ReleasedValues("degree", y, eps, 1.0)})
    u0, s0 = rusage()
    lo = int(y.min())
    t_bc, _ = best_of(lambda: np.bincount(y - lo), args.repeat)
    t_sum, _ = best_of(lambda: y.sum(), args.repeat)
    t_hist, hist = best_of(lambda: ReportHistogram.from_reports(y, eps), args.repeat)
    print(f"distinct reports: {hist.n_distinct}, range [{hist.values[0]}, {hist.values[-1]}]")

    def row(name: str, t: float) -> None:
        rate = n / t / 1e6
        print(f"{name:<34s} {t * 1e3:9.1f} ms {rate:9.1f} M/s   x{t_bc / t:5.2f} of bincount"
              f"   x{t_sum / t:5.3f} of y.sum()")

    print(f"{'':<34s} {'time':>12s} {'rate':>13s}")
    row("np.bincount(y - min y)  [ref]", t_bc)
    row("y.sum()                 [ref]", t_sum)
    row("ReportHistogram.from_reports", t_hist)
    stats = {
        "kstars k=2": lambda r: curator.kstars(r, 2),
        "kstars k=3": lambda r: curator.kstars(r, 3),
        "kstars_many k=1..5 (one pass)": lambda r: curator.kstars_many(r, range(1, 6)),
        "edge_count": curator.edge_count,
        "degree_moment j=2": lambda r: curator.degree_moment(r, 2),
        "degree_mean": curator.degree_mean,
        "degree_variance": curator.degree_variance,
        "degree_histogram (0..100)": lambda r: curator.degree_histogram(r, 100),
        "max_degree": curator.max_degree,
        "degree_entropy": curator.degree_entropy,
    }
    for name, fn in stats.items():
        t, _ = best_of(lambda fn=fn: fn(reports), args.repeat)
        row(name, t)

    def everything(source):
        h = ReportHistogram.from_release(source.degrees)
        out = list(curator.kstars_many(h, range(1, 6)))
        out += [curator.edge_count(h), curator.degree_moment(h, 2), curator.degree_moment(h, 3)]
        out += [curator.degree_mean(h), curator.degree_variance(h), curator.max_degree(h)]
        out += [curator.degree_entropy(h), curator.degree_histogram(h, 100)]
        return out

    t_all, _ = best_of(lambda: everything(reports), args.repeat)
    row("ALL statistics, one histogram", t_all)
    u1, s1 = rusage()
    print(f"CPU time of the timings above: user {u1 - u0:.1f} s, sys {s1 - s0:.1f} s; "
          f"load average after {os.getloadavg()}")

    # today's route (per-report terms + math.fsum) on a prefix, and the accuracy comparison
    m = min(args.n_old, n)
    yo = y[:m]
    old_rep = NodeReports(released={"degree": ReleasedValues("degree", yo, eps, 1.0)})

    def old_kstars():
        return math.fsum(binomial(yo, 2, eps)), math.fsum(binomial_variance_estimate(yo, 2, eps))

    t_old, (v_old, var_old) = best_of(old_kstars, 1)
    t_new, est = best_of(lambda: curator.kstars(old_rep, 2), args.repeat)
    print(f"\nk=2 on {m:.3g} reports: per-report + math.fsum {m / t_old / 1e6:.1f} M/s, "
          f"histogram route {m / t_new / 1e6:.1f} M/s (x{t_old / t_new:.0f})")
    worst = 0.0
    for k in (1, 2, 3, 4):
        e = curator.kstars(old_rep, k)
        ref_v = math.fsum(binomial(yo, k, eps))
        ref_var = math.fsum(binomial_variance_estimate(yo, k, eps))
        worst = max(worst, abs(e.value - ref_v) / abs(ref_v), abs(e.variance_estimate - ref_var) / ref_var)
    for j in (2, 3):
        ref = math.fsum(power(yo, j, eps))
        worst = max(worst, abs(curator.degree_moment(old_rep, j).value - ref) / abs(ref))
    print(f"largest relative difference histogram route vs math.fsum route (k-stars 1-4 values and "
          f"variances, moments 2-3) on {m:.3g} reports: {worst:.3g}")


if __name__ == "__main__":
    main()
