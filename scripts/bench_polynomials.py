"""Benchmark the polynomial fast forms on many noisy degrees.

For binomial(y, k) (k = 2, 3, 4) and the one-pass k-star sums k = 1..4, prints reports per second
(best of 3) of ldpgraph and of two references measured in the same run on the same reports:
- "comb": the naive closed form C(y,k) - c C(y-1,k-2) with ``scipy.special.comb`` (exact=False;
  note it returns 0 for negative arguments, so it is also wrong on negative noisy degrees);
- "debias": the generic operator ``debias(lambda d: <C(d,k) as a float polynomial>, y, eps)``,
  including its input validation;
and the ratios ldpgraph / reference. The last column checks agreement with ``debias``.

Usage (from the repository root):
    PYTHONPATH=. python scripts/bench_polynomials.py [--n 100000000] [--epsilon 1.0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import importlib
import math
from collections.abc import Callable

import numpy as np
from _timing import best_of  # scripts/ is on sys.path when a script runs
from scipy import special

from ldpgraph._validation import dlap_c
from ldpgraph.estimators.operator import debias
from ldpgraph.estimators.polynomials import binomial, binomials, sum_binomials
from ldpgraph.mechanisms import DiscreteLaplace

polynomial_module = importlib.import_module("ldpgraph.estimators.polynomials")


def poly_binom(k: int) -> Callable[[np.ndarray], np.ndarray]:
    def f(d: np.ndarray) -> np.ndarray:
        out = d.astype(np.float64)
        for i in range(1, k):
            out = out * (d - float(i))
        return out / math.factorial(k)

    return f


def naive_comb(y: np.ndarray, k: int, c: float) -> np.ndarray:
    return special.comb(y, k) - c * special.comb(y - 1, k - 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000_000, help="number of reports")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n, eps, rep = args.n, args.epsilon, args.repeat
    c = dlap_c(eps)

    rng = np.random.default_rng(0)
    degrees = rng.geometric(1 / 50, size=n).astype(np.int64)  # mean degree ~50, heavy-ish tail
    y = DiscreteLaplace(epsilon=eps).randomize(degrees, rng=rng)
    del degrees
    print(f"n = {n:,} DLap reports (epsilon = {eps}, c = {c:.6g}), int64; {np.mean(y < 0):.2%} negative")
    print(f"best of {rep}; rate = reports per second\n")
    header = (
        f"{'task':<26}{'ldpgraph s':>11}{'M rep/s':>9}{'comb s':>9}{'ratio':>8}"
        f"{'debias s':>10}{'ratio':>8}{'max rel diff':>14}"
    )
    print(header)
    print("-" * len(header))

    def row(task: str, t_fast: float, t_comb: float, t_deb: float, diff: float) -> None:
        print(
            f"{task:<26}{t_fast:>11.3f}{n / t_fast / 1e6:>9.0f}{t_comb:>9.3f}{t_comb / t_fast:>8.1f}"
            f"{t_deb:>10.3f}{t_deb / t_fast:>8.1f}{diff:>14.2e}",
            flush=True,
        )

    for k in (2, 3, 4):
        t_fast, fast = best_of(lambda k=k: binomial(y, k, eps), rep)
        t_comb, _ = best_of(lambda k=k: naive_comb(y, k, c), rep)
        t_deb, ref = best_of(lambda k=k: debias(poly_binom(k), y, eps), rep)
        diff = float(np.max(np.abs(fast - ref) / (1.0 + np.abs(ref))))
        del fast, ref
        row(f"binomial k={k}", t_fast, t_comb, t_deb, diff)

    ks = [1, 2, 3, 4]
    t_fast, fast = best_of(lambda: sum_binomials(y, ks, eps), rep)
    t_comb, _ = best_of(lambda: [float(naive_comb(y, k, c).sum()) for k in ks], rep)
    t_deb, ref = best_of(lambda: [float(debias(poly_binom(k), y, eps).sum()) for k in ks], rep)
    diff = float(np.max(np.abs(np.asarray(fast) - ref) / np.abs(ref)))
    row("sum_binomials k=1..4", t_fast, t_comb, t_deb, diff)
    # the falling-factorial pass, used when the reports span too wide a range for bincount
    saved = polynomial_module._HIST_MAX_RANGE
    polynomial_module._HIST_MAX_RANGE = 0
    t_arith, arith = best_of(lambda: sum_binomials(y, ks, eps), rep)
    polynomial_module._HIST_MAX_RANGE = saved
    diff = float(np.max(np.abs(np.asarray(arith) - ref) / np.abs(ref)))
    row("  (falling-factorial pass)", t_arith, t_comb, t_deb, diff)
    t_many, many = best_of(lambda: binomials(y, ks, eps).sum(axis=1), rep)
    print(
        f"\n(binomials(y, [1,2,3,4]).sum(axis=1): {t_many:.3f} s = {n / t_many / 1e6:.0f} M rep/s; "
        f"sum_binomials is {t_many / t_fast:.1f}x faster and needs no (4, n) output)"
    )


if __name__ == "__main__":
    main()
