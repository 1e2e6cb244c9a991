"""False-alarm rate and power of the privacy audit (ldpgraph.audit).

1. False alarms: every node randomizer of the package (ldpgraph.audit.package_randomizers)
   audited at its claimed epsilon on --seeds seeds, at the stated confidence (0.999, n =
   --n-honest) and at confidence 0.9 (n = --n-honest // 10, where a rate is observable). The
   measured rate must be <= 1 - confidence (a one-sided binomial p-value is printed).
2. Power: the structured parity leak of issue 13 (d + DLap(1), except 2 DLap(0.05) + (d mod 2)
   with probability 1e-3) at 1e6, 4e6 and 1e7 samples, with and without the likelihood-ratio
   events; x + DLap(5) at x = 2^60 claimed as epsilon 1 (exact integers); an excess of
   0.05 (DLap(1.05) claimed as 1); each with the run's stated smallest detectable excess.

Usage (from the repository root):
    PYTHONPATH=. python scripts/audit_power.py [--seeds 20] [--n-honest 1000000] [--quick]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from scipy import stats

from ldpgraph.audit import AuditPowerWarning, audit_randomizer, package_randomizers
from ldpgraph.mechanisms import DiscreteLaplace


def _load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def false_alarms(seeds: int, n: int, confidence: float) -> None:
    children = np.random.SeedSequence(13).spawn(seeds)
    flagged, total, t0 = [], 0, time.perf_counter()
    per = {}
    for name, (fn, eps, (x, xn)) in package_randomizers().items():
        hits = 0
        for child in children:
            res = audit_randomizer(fn, x, xn, eps, n_samples=n, rng=np.random.default_rng(child),
                                   confidence=confidence)
            total += 1
            if res.violation:
                hits += 1
                flagged.append((name, res.summary()))
        per[name] = hits
    rate = len(flagged) / total
    p = stats.binom.sf(len(flagged) - 1, total, 1 - confidence) if flagged else 1.0
    print(f"\nfalse alarms at confidence {confidence} (n = {n:,} per input, {seeds} seeds, load {_load()}, "
          f"{time.perf_counter() - t0:.0f} s):")
    print("  " + ", ".join(f"{k} {v}/{seeds}" for k, v in per.items()))
    print(f"  flagged {len(flagged)} of {total}: rate {rate:.4f} (allowed <= {1 - confidence:.4g}); "
          f"P[X >= {len(flagged)}] at the allowed rate = {p:.3g}")
    for name, summary in flagged[:5]:
        print(f"    {name}: {summary}")


def _parity_leak():
    d1, d005 = DiscreteLaplace(epsilon=1.0), DiscreteLaplace(epsilon=0.05)

    def node(d, size, rng):
        out = d + d1.sample(size, rng=rng)
        leak = rng.random(size) < 1e-3
        out[leak] = 2 * d005.sample(int(leak.sum()), rng=rng) + d % 2
        return out

    return node


def power(seeds: int, sizes: list[int]) -> None:
    print(f"\npower (confidence 0.999, {seeds} seeds, load {_load()}):")
    header = f"  {'case':<44} {'n':>10} {'LR events':>9} {'caught':>7} {'median lower bound':>18} {'detectable excess':>17} {'s/audit':>7}"
    print(header)
    leak = _parity_leak()
    dlap5 = DiscreteLaplace(epsilon=5.0)
    cases = [("parity leak, claimed 1", leak, 3, 4, 1.0, n, lr) for n in sizes for lr in (True, False)]
    cases.append(("x + DLap(5) at x = 2^60, claimed 1", lambda x, s, g: x + dlap5.sample(s, rng=g),
                  2**60, 2**60 + 1, 1.0, 10**5, True))
    cases.append(("DLap(1.05) claimed 1", DiscreteLaplace(epsilon=1.05), 3, 4, 1.0, 10**6, True))
    for label, fn, x, xn, eps, n, lr in cases:
        t0 = time.perf_counter()
        results = []
        for s in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AuditPowerWarning)
                results.append(audit_randomizer(fn, x, xn, eps, n_samples=n, rng=s, likelihood_events=lr))
        dt = (time.perf_counter() - t0) / seeds
        caught = sum(r.violation for r in results)
        lower = float(np.median([r.epsilon_lower for r in results]))
        excess = float(np.median([r.min_detectable_excess for r in results]))
        print(f"  {label:<44} {n:>10,} {'yes' if lr else 'no':>9} {caught:>3}/{seeds:<3} {lower:18.3f} "
              f"{excess:17.3g} {dt:7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--n-honest", type=int, default=10**6)
    parser.add_argument("--power-seeds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    args = parser.parse_args()
    n = args.n_honest if not args.quick else 10**4
    sizes = [10**6, 4 * 10**6, 10**7] if not args.quick else [10**6]
    warnings.simplefilter("ignore", AuditPowerWarning)
    false_alarms(args.seeds, n, 0.999)
    false_alarms(args.seeds, max(n // 10, 1000), 0.9)
    power(args.power_seeds if not args.quick else 2, sizes)


if __name__ == "__main__":
    main()
