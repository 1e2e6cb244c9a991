"""Benchmark the exact integer-arithmetic discrete Laplace sampler against the numpy fast path.

Prints values per second (best of 3) for, at each epsilon (sensitivity 1):
  * numpy fast path   -- DiscreteLaplace.sample (floating-point inversion, seeded numpy), the
                         reference of the ratio column;
  * exact, OS CSPRNG  -- sample_dlap_exact(rng=None) = SecureDiscreteLaplace.sample (vectorized
                         integer arithmetic, bytes from os.urandom);
  * exact, seeded     -- the same with numpy random bytes (reproducible simulation);
  * exact, per value  -- the pure-Python reference loop (CKS Algorithm 2 line by line, OS bytes),
                         used for scales whose numerator or denominator is >= 2^62;
  * one-value calls   -- SecureDiscreteLaplace.sample() called once per value (a node's device).
Epsilon is given both as a decimal string ("0.1" = 1/10) and as a float (0.1 = m / 2^55),
which changes the integers the sampler works with.

Then the timing side channel: --timed (default 100,000) single releases at epsilon 1/2 are
timed one by one, before (sample_dlap_exact per release, the old SecureDiscreteLaplace.sample)
and after (SecureDiscreteLaplace.sample, from its pool), and the AUC of the best threshold
distinguisher between |eta| = 0 and |eta| = 7 is printed (max(A, 1 - A), A the Mann-Whitney
statistic of the two groups' times; 0.5 = the time says nothing). For the pooled sampler the
time of the refill that drew each value is also attributed to it and tested the same way.
Each measurement is repeated (--repeat), with the machine's load average.

Usage (from the repository root):
    PYTHONPATH=. python scripts/bench_secure_sampler.py [--n 1000000] [--loop-n 50000]
        [--timed 100000] [--repeat 2] [--timing-only]
"""

from __future__ import annotations

import argparse
import os
import time
from fractions import Fraction

import numpy as np
from _timing import best_time  # scripts/ is on sys.path when a script runs
from scipy import stats

from ldpgraph.mechanisms import DiscreteLaplace, secure
from ldpgraph.mechanisms.secure import SecureDiscreteLaplace, sample_dlap_exact


def _auc(times: np.ndarray, values: np.ndarray, a: int = 0, b: int = 7) -> tuple[float, int, int]:
    """max(A, 1 - A) for the times of |eta| = a against |eta| = b, and the group sizes."""
    t_a, t_b = times[np.abs(values) == a], times[np.abs(values) == b]
    if not (t_a.size and t_b.size):
        return float("nan"), t_a.size, t_b.size
    u = stats.mannwhitneyu(t_b, t_a, alternative="two-sided").statistic / (t_a.size * t_b.size)
    return float(max(u, 1.0 - u)), t_a.size, t_b.size


def _timed(draw, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Time n single releases one by one (ns) and keep their values."""
    times = np.empty(n, dtype=np.int64)
    values = np.empty(n, dtype=np.int64)
    clock = time.perf_counter_ns
    for i in range(n):
        t0 = clock()
        v = draw()
        times[i] = clock() - t0
        values[i] = v
    return times, values


def timing_side_channel(n_timed: int, repeat: int) -> None:
    eps = "1/2"
    frac = 1 / Fraction(eps)
    print(f"\ntiming side channel: {n_timed:,} timed single releases at epsilon {eps}; AUC of |eta| = 0 vs 7")
    header = f"{'run':>4} | {'load':>14} | {'sampler':<39} | {'AUC':>6} | {'n(0)':>6} {'n(7)':>5} | {'median us':>9} | {'values/s':>9}"
    print(header)
    print("-" * len(header))
    for r in range(repeat):
        load = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
        t_old, v_old = _timed(lambda: sample_dlap_exact(frac.numerator, frac.denominator), n_timed)
        mech = SecureDiscreteLaplace(epsilon=eps)
        pooled_before = np.empty(n_timed, dtype=np.int64)

        def draw(mech=mech, pooled_before=pooled_before, counter=[0]):  # noqa: B006
            pooled_before[counter[0]] = mech.pooled
            counter[0] += 1
            return mech.sample()

        t_new, v_new = _timed(draw, n_timed)
        # the refill time of each value: the time of the call that drew its batch
        starts = np.flatnonzero(pooled_before == 0)
        batch_of = np.searchsorted(starts, np.arange(n_timed), side="right") - 1
        t_refill = t_new[starts][batch_of]
        release_only = pooled_before > 0
        rows = [
            ("before: sample_dlap_exact per release", t_old, v_old),
            ("after: pooled, every release", t_new, v_new),
            ("after: pooled, releases w/o refill", t_new[release_only], v_new[release_only]),
            ("after: refill time of the value's batch", t_refill, v_new),
        ]
        for label, t, v in rows:
            auc, n0, n7 = _auc(t.astype(np.float64), v)
            rate = t.size / (t.sum() * 1e-9) if "refill time" not in label else float("nan")
            print(f"{r + 1:>4} | {load:>14} | {label:<39} | {auc:6.3f} | {n0:6d} {n7:5d} | "
                  f"{np.median(t) / 1e3:9.2f} | {rate:9,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000, help="values per vectorized call")
    parser.add_argument("--loop-n", type=int, default=50_000, help="values for per-value loops")
    parser.add_argument("--timed", type=int, default=100_000, help="timed single releases")
    parser.add_argument("--repeat", type=int, default=2, help="repeats of the timing measurement")
    parser.add_argument("--timing-only", action="store_true", help="skip the throughput table")
    args = parser.parse_args()
    n, loop_n = args.n, args.loop_n
    if not args.timing_only:
        throughput(n, loop_n)
    timing_side_channel(args.timed, args.repeat)


def throughput(n: int, loop_n: int) -> None:
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")

    epsilons: list[str | float] = ["0.1", 0.1, "0.5", "1", "2", "5"]
    rows = []
    for eps in epsilons:
        frac = Fraction(eps)
        scale = 1 / frac
        t_num, t_den = scale.numerator, scale.denominator
        fast = DiscreteLaplace(epsilon=float(frac))
        gen = np.random.default_rng(0)
        ref = n / best_time(lambda fast=fast, gen=gen: fast.sample(n, rng=gen))
        os_rate = n / best_time(lambda a=t_num, b=t_den: sample_dlap_exact(a, b, n))
        seeded_rate = n / best_time(lambda a=t_num, b=t_den, gen=gen: sample_dlap_exact(a, b, n, rng=gen))

        def loop(a=t_num, b=t_den) -> None:
            bits = secure._Bits(secure._os_randbytes)
            for _ in range(loop_n):
                secure._dlap_scalar(bits, a, b)

        loop_rate = loop_n / best_time(loop)
        mech = SecureDiscreteLaplace(epsilon=eps)

        def one_at_a_time(mech=mech) -> None:
            for _ in range(loop_n // 10):
                mech.sample()

        call_rate = (loop_n // 10) / best_time(one_at_a_time)

        def one_at_a_time_before(a=t_num, b=t_den) -> None:  # the unpooled per-release path
            for _ in range(loop_n // 10):
                sample_dlap_exact(a, b)

        before_rate = (loop_n // 10) / best_time(one_at_a_time_before)
        label = f"{eps!r}" + ("" if frac.denominator < 2**20 else f" (den 2^{frac.denominator.bit_length() - 1})")
        rows.append((label, ref, os_rate, seeded_rate, loop_rate, call_rate, before_rate))

    header = (
        f"{'epsilon':>18} | {'numpy fast':>11} | {'exact OS':>11} {'ratio':>6} | {'exact seeded':>12} "
        f"{'ratio':>6} | {'per value':>10} {'ratio':>6} | {'1-value calls':>13} {'(unpooled)':>10}"
    )
    print(f"values/s, n = {n:,} per vectorized call, {loop_n:,} per loop; ratio = rate / numpy fast path")
    print(header)
    print("-" * len(header))
    for label, ref, os_rate, seeded_rate, loop_rate, call_rate, before_rate in rows:
        print(
            f"{label:>18} | {ref:11,.0f} | {os_rate:11,.0f} {os_rate / ref:6.3f} | {seeded_rate:12,.0f} "
            f"{seeded_rate / ref:6.3f} | {loop_rate:10,.0f} {loop_rate / ref:6.3f} | {call_rate:13,.0f} "
            f"{before_rate:10,.0f}"
        )
    print("1-value calls: SecureDiscreteLaplace.sample() (pooled); unpooled: sample_dlap_exact per call")


if __name__ == "__main__":
    main()
