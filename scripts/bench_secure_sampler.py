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

Usage (from the repository root):
    PYTHONPATH=. python scripts/bench_secure_sampler.py [--n 1000000] [--loop-n 50000]
"""

from __future__ import annotations

import argparse
from fractions import Fraction

import numpy as np
from _timing import best_time  # scripts/ is on sys.path when a script runs

from ldpgraph.mechanisms import DiscreteLaplace, secure
from ldpgraph.mechanisms.secure import SecureDiscreteLaplace, sample_dlap_exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000, help="values per vectorized call")
    parser.add_argument("--loop-n", type=int, default=50_000, help="values for per-value loops")
    args = parser.parse_args()
    n, loop_n = args.n, args.loop_n

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
        label = f"{eps!r}" + ("" if frac.denominator < 2**20 else f" (den 2^{frac.denominator.bit_length() - 1})")
        rows.append((label, ref, os_rate, seeded_rate, loop_rate, call_rate))

    header = (
        f"{'epsilon':>18} | {'numpy fast':>11} | {'exact OS':>11} {'ratio':>6} | {'exact seeded':>12} "
        f"{'ratio':>6} | {'per value':>10} {'ratio':>6} | {'1-value calls':>13}"
    )
    print(f"values/s, n = {n:,} per vectorized call, {loop_n:,} per loop; ratio = rate / numpy fast path")
    print(header)
    print("-" * len(header))
    for label, ref, os_rate, seeded_rate, loop_rate, call_rate in rows:
        print(
            f"{label:>18} | {ref:11,.0f} | {os_rate:11,.0f} {os_rate / ref:6.3f} | {seeded_rate:12,.0f} "
            f"{seeded_rate / ref:6.3f} | {loop_rate:10,.0f} {loop_rate / ref:6.3f} | {call_rate:13,.0f}"
        )


if __name__ == "__main__":
    main()
