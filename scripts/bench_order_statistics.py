"""Benchmark the fast forms: order statistics, profiles, decision trees.

For each task prints the time of ldpgraph (best of 3) and of a reference measured in the same
run -- the plain (biased) statistic on the same reports, and where feasible the brute-force
operator ``debias_nd`` over all 3^n shifts -- with the ratio ldpgraph / reference, plus the
largest deviation from the brute force where it was computed.

Usage (from the repository root):
    PYTHONPATH=. python scripts/bench_order_statistics.py [--epsilon 1.0] [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from _timing import best_time  # scripts/ is on sys.path when a script runs

from ldpgraph._validation import dlap_c
from ldpgraph.estimators.decision_trees import decision_tree
from ldpgraph.estimators.operator import debias_nd
from ldpgraph.estimators.order_statistics import (
    HighVarianceWarning,
    maximum,
    median,
    minimum,
    order_statistic,
)
from ldpgraph.estimators.profiles import profile
from ldpgraph.mechanisms import DiscreteLaplace


def exact_operator(f: Callable[[np.ndarray], np.ndarray], y: np.ndarray, c: float) -> float:
    """Operator (2) for integer-valued f in exact rational arithmetic (weights depend only on
    the number of zero shifts), rounded once to float."""
    n = y.size
    xi = np.array(list(itertools.product([-1, 0, 1], repeat=n)), dtype=np.int64)
    vals = np.asarray(f(y + xi)).astype(np.int64)
    zeros = (xi == 0).sum(axis=1)
    cc = Fraction(c)
    total = sum(
        ((1 + 2 * cc) ** z * (-cc) ** (n - z) * int(vals[zeros == z].sum()) for z in range(n + 1)),
        Fraction(0),
    )
    return float(total)


def degrees(n: int, rng: np.random.Generator) -> np.ndarray:
    """Heavy-tailed integer 'degrees' (1 + zipf-like), the typical input."""
    return np.minimum(rng.zipf(2.2, size=n), 10 * n).astype(np.int64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    eps = args.epsilon
    rng = np.random.default_rng(args.seed)
    mech = DiscreteLaplace(epsilon=eps)
    rows: list[tuple[str, str, float, str, float, str]] = []

    def add(task: str, size: str, t_ours: float, ref: str, t_ref: float, note: str = "") -> None:
        rows.append((task, size, t_ours, ref, t_ref, note))

    warnings.simplefilter("ignore", HighVarianceWarning)  # tie-heavy inputs are timed, not used

    # -- order statistics, n = 10^4 -------------------------------------------------------------
    n = 10_000
    y = mech.randomize(degrees(n, rng), rng=rng)
    for k, label in [(n // 2, "k = n/2"), (9_000, "k = 0.9 n"), (n - 1, "k = n-1")]:
        t = best_time(lambda k=k: order_statistic(y, k, eps))
        t_ref = best_time(lambda k=k: np.partition(y, k)[k])
        add(f"order_statistic ({label})", "n=1e4", t, "np.partition", t_ref)
    t = best_time(lambda: median(y, eps))
    add("median", "n=1e4", t, "np.median", best_time(lambda: np.median(y)))
    # worst case for the tie convolution: three values only (3333 ties each)
    y3 = rng.integers(0, 3, size=n)
    t = best_time(lambda: order_statistic(y3, n // 2, eps))
    add("order_statistic (3 values)", "n=1e4", t, "np.partition", best_time(lambda: np.partition(y3, n // 2)))
    # 1000 rows of 100 reports (vectorized over rows)
    yb = mech.randomize(degrees(100_000, rng), rng=rng).reshape(1000, 100)
    t = best_time(lambda: median(yb, eps))
    add("median, 1000 rows", "n=100", t, "np.median(axis=-1)", best_time(lambda: np.median(yb, axis=-1)))

    # -- brute force comparisons, n = 10 ----------------------------------------------------------
    y10 = mech.randomize(degrees(10 * 20, rng), rng=rng).reshape(20, 10)
    # deviations relative to max(1, |value|); the float64 brute force itself rounds at the level
    # of u (1+2c)^10 max|f|, the exact reference (rational arithmetic, 2 * median for the median)
    # shows the fast form's own error
    c = dlap_c(eps)
    for name, fast, f, scale in [
        (
            "order_statistic (k=3)",
            lambda z: order_statistic(z, 3, eps, warn_above=None),
            lambda z: np.sort(z, axis=-1)[..., 3],
            1,
        ),
        (
            "median",
            lambda z: median(z, eps, warn_above=None),
            lambda z: np.sort(z, axis=-1)[..., 4] + np.sort(z, axis=-1)[..., 5],
            2,
        ),
        ("maximum", lambda z: maximum(z, eps, warn_above=None), lambda z: z.max(axis=-1), 1),
    ]:
        got = fast(y10)
        ref = debias_nd(f, y10, eps) / scale
        exact = np.array([exact_operator(f, row, c) for row in y10]) / scale
        dev = float(np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref))))
        dev_exact = float(np.max(np.abs(got - exact) / np.maximum(1.0, np.abs(exact))))
        add(
            name,
            "20 rows, n=10",
            best_time(lambda fast=fast: fast(y10)),
            "debias_nd (3^10)",
            best_time(lambda f=f: debias_nd(f, y10, eps), repeat=1),
            f"dev vs brute {dev:.1e}, vs exact {dev_exact:.1e}",
        )

    # -- minimum / maximum, n = 10^6 ---------------------------------------------------------------
    y6 = mech.randomize(degrees(1_000_000, rng), rng=rng)
    add("maximum", "n=1e6", best_time(lambda: maximum(y6, eps)), "np.max", best_time(lambda: y6.max()))
    add("minimum", "n=1e6", best_time(lambda: minimum(y6, eps)), "np.min", best_time(lambda: y6.min()))

    # -- profile, 10^7 reports ---------------------------------------------------------------------
    y7 = mech.randomize(degrees(10_000_000, rng), rng=rng)
    kmax = 1000
    t = best_time(lambda: profile(y7, eps, kmax))
    t_ref = best_time(lambda: np.bincount(np.clip(y7, 0, kmax + 1), minlength=kmax + 2))
    add("profile (k = 0..1000)", "n=1e7", t, "np.bincount (plain)", t_ref)

    # -- decision tree, 10^5 rows ------------------------------------------------------------------
    try:
        from sklearn.tree import DecisionTreeRegressor
    except ImportError:  # pragma: no cover - sklearn is a test extra
        DecisionTreeRegressor = None
    if DecisionTreeRegressor is not None:
        d = 4
        x_train = rng.integers(0, 50, size=(5000, d))
        target = np.sin(x_train[:, 0] / 7.0) * x_train[:, 1] + x_train[:, 2] - 0.3 * x_train[:, 3]
        for depth in (4, 10):
            est = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(x_train, target)
            yt = mech.randomize(rng.integers(0, 50, size=(100_000, d)), rng=rng)
            got = decision_tree(est, yt, eps)
            t = best_time(lambda est=est, yt=yt: decision_tree(est, yt, eps))

            def brute(est=est, yt=yt):
                return debias_nd(lambda z: est.predict(z.reshape(-1, d)).reshape(z.shape[:-1]), yt, eps)

            t0 = time.perf_counter()
            ref = brute()
            t_ref = time.perf_counter() - t0
            dev = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))
            leaves = est.get_n_leaves()
            add(
                f"decision_tree (depth {depth}, {leaves} leaves)",
                "1e5 rows, d=4",
                t,
                "debias_nd(sklearn predict)",
                t_ref,
                f"max rel dev {dev:.1e}",
            )
            add(
                f"  sklearn predict (depth {depth}, plain)",
                "1e5 rows",
                best_time(lambda est=est, yt=yt: est.predict(yt)),
                "-",
                float("nan"),
            )

    # -- scaling with n and ties (median, eps = 0.5) --------------------------------------------------
    scaling_rows = scaling_table(rng)

    # -- table -----------------------------------------------------------------------------------------
    print(f"epsilon = {eps}, seed = {args.seed}")
    head = f"{'task':<44} {'size':<15} {'ldpgraph':>10} {'reference':<28} {'ref':>10} {'ratio':>8}  note"
    print(head)
    print("-" * len(head))
    for task, size, t, ref, t_ref, note in rows:
        ratio = t / t_ref if t_ref == t_ref and t_ref > 0 else float("nan")
        ref_s = f"{t_ref * 1e3:8.2f}ms" if t_ref == t_ref else f"{'-':>10}"
        print(f"{task:<44} {size:<15} {t * 1e3:8.2f}ms {ref:<28} {ref_s} {ratio:8.2f}  {note}")
    print()
    print("median with heavy ties, eps = 0.5: time vs n, fitted exponent of t ~ n^a (target a <= 1.2)")
    for line in scaling_rows:
        print(line)
    print()
    print(crossover_line())


def _fit_exponent(ns: list[int], ts: list[float]) -> float:
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def scaling_table(rng: np.random.Generator) -> list[str]:
    """Median of heavily tied noisy reports (geometric, Zipf, all-equal) for n = 1e3 .. 2e6."""
    mech = DiscreteLaplace(epsilon=0.5)
    patterns = {
        "geometric(1/50)": lambda n: rng.geometric(1 / 50, n),
        "zipf(2)": lambda n: np.minimum(rng.zipf(2.0, n), 10_000),
        "all-equal": lambda n: np.full(n, 50),
    }
    ns = [1_000, 10_000, 100_000, 1_000_000, 2_000_000]
    out = []
    for name, draw in patterns.items():
        ts, ts_ref, ties = [], [], []
        for n in ns:
            y = mech.randomize(draw(n).astype(np.int64), rng=rng)
            ts.append(best_time(lambda y=y: median(y, 0.5), repeat=2))
            ts_ref.append(best_time(lambda y=y: np.median(y), repeat=2))
            ties.append(int(np.count_nonzero(y == np.median(y).astype(np.int64))))
        a = _fit_exponent(ns, ts)
        cells = "  ".join(f"n={n:.0e}: {t * 1e3:7.1f}ms ({t / r:5.1f}x np.median, {k} ties)"
                          for n, t, r, k in zip(ns, ts, ts_ref, ties, strict=True))
        verdict = "met" if a <= 1.2 else "missed"
        out.append(f"  {name:<16} a = {a:4.2f} ({verdict})  {cells}")
    return out


def crossover_line() -> str:
    """Re-measure the direct/FFT crossover the cost model in order_statistics assumes."""
    from scipy import signal

    from ldpgraph.estimators import order_statistics as om

    parts = []
    for m in (300, 1000, 3000):
        a, b = np.random.default_rng(m).random((2, m + 1))
        td = best_time(lambda a=a, b=b: np.convolve(a, b), repeat=5)
        tf = best_time(lambda a=a, b=b: signal.fftconvolve(a, b), repeat=5)
        md, mf = om._convolution_seconds(m, m)
        parts.append(f"m={m}: direct {td * 1e3:.3f}ms (model {md * 1e3:.3f}), fft {tf * 1e3:.3f}ms (model {mf * 1e3:.3f})")
    return "convolution cost model vs measured: " + "; ".join(parts)


if __name__ == "__main__":
    main()
