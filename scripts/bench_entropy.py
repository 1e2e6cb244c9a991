"""Benchmark: unbiased entropy / KL estimators of noisy histograms (ldpgraph.estimators.entropies).

Large n (12,419 bins, epsilon 0.5): the fast estimators against the plug-in (biased) formula
evaluated on the same reports, the cheapest possible reference. The Shakespeare word counts are
used when LDPGRAPH_DATA holds t8.shakespeare.txt.gz (top 12,419 of the [a-z]+ words of the
lowercased text), else a seeded Zipf histogram of the same size.

Small n: the fast estimators against the brute-force operator (2) (debias_nd, 3^n points; 3^(2n)
for the KL divergence), with their difference and the rigorous rounding-error bound of the brute
force, 3^n u sum |f(y+xi) w_xi| (its weights reach (1+4c)^n in total): the difference is the
brute force's own error (the fast forms agree with 50-digit references to ~1e-15, see tests).

Run:  python scripts/bench_entropy.py
"""

from __future__ import annotations

import collections
import gzip
import math
import os
import re
import time
import warnings
from pathlib import Path

import numpy as np

from ldpgraph.estimators.entropies import entropy, entropy_variance_estimate, kl_divergence
from ldpgraph.estimators.operator import debias_nd
from ldpgraph.estimators.order_statistics import HighVarianceWarning

EPS = 0.5
N_BINS = 12_419


def best_time(fn, repeat=5):
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def histograms():
    root = os.environ.get("LDPGRAPH_DATA")
    path = Path(root) / "t8.shakespeare.txt.gz" if root else None
    if path is not None and path.is_file():
        words = re.findall(r"[a-z]+", gzip.open(path, "rt").read().lower())
        counts = collections.Counter(words)
        top = [w for w, _ in counts.most_common(N_BINS)]
        half = len(words) // 2
        a, b = collections.Counter(words[:half]), collections.Counter(words[half:])
        x = np.array([counts[w] for w in top])
        return "shakespeare", x, np.array([a[w] for w in top]), np.array([b[w] for w in top])
    rng = np.random.default_rng(0)
    p = 1.0 / np.arange(1, N_BINS + 1) ** 1.1
    x = 1 + rng.multinomial(900_000, p / p.sum())
    w = 1 + rng.multinomial(900_000, np.roll(p, 3) / p.sum())
    return "zipf", x, x // 2, w // 2


def noisy(x, eps, rng):
    p = math.exp(-eps)
    return x + rng.geometric(1 - p, x.shape) - rng.geometric(1 - p, x.shape)


def plugin_entropy(y):
    yy = y[y >= 1].astype(float)
    q = yy / yy.sum()
    return -np.sum(q * np.log(q))


def plugin_kl(y, z):
    keep = y >= 1
    q = y[keep] / y[keep].sum()
    r = np.maximum(z[keep], 0.5) / z[z >= 1].sum()
    return float(np.sum(q * np.log(q / r)))


def H(zz):
    zz = np.asarray(zz)
    N = zz.sum(axis=-1, keepdims=True)
    ok = (zz >= 1) & (N >= 1)
    a, NN = np.where(ok, zz, 1), np.where(N >= 1, N, 1)
    return np.where(ok, -(a / NN) * np.log(a / NN), 0.0).sum(axis=-1)


def KL(n):
    def f(v):
        v = np.asarray(v)
        x, w = v[..., :n], v[..., n:]
        N, M = x.sum(axis=-1, keepdims=True), w.sum(axis=-1, keepdims=True)
        NN, MM, xx = np.where(N >= 1, N, 1), np.where(M >= 1, M, 1), np.where(x >= 1, x, 1)
        lam = np.where(w >= 1, np.log(np.where(w >= 1, w, 1)), math.log(0.5))
        t = np.where(x >= 1, xx / NN * (np.log(xx / NN) - lam + np.log(MM)), 0.0).sum(axis=-1)
        return np.where((N[..., 0] >= 1) & (M[..., 0] >= 1), t, 0.0)

    return f


def bruteforce_bound(f, v, eps):
    c = 1.0 / (4.0 * math.sinh(eps / 2.0) ** 2)
    xi = np.array(np.meshgrid(*([[-1, 0, 1]] * len(v)), indexing="ij")).reshape(len(v), -1).T
    w = np.prod(np.where(xi == 0, 1 + 2 * c, c), axis=1)
    return xi.shape[0] * 2.0**-53 * float(np.abs(f(np.asarray(v) + xi)) @ w)


def main():
    rng = np.random.default_rng(1)
    name, x, a, b = histograms()
    y = noisy(x, EPS, rng)
    ya, yb = noisy(a, EPS, rng), noisy(b, EPS, rng)
    N = int(x.sum())
    rows = []
    t_ref, h_ref = best_time(lambda: plugin_entropy(y))
    rows.append((f"entropy ({name})", N_BINS, "plug-in (biased, reference)", t_ref, 1.0, h_ref))
    for label, fn in [
        ("unbiased, N noisy", lambda: entropy(y, EPS)),
        ("unbiased, N public", lambda: entropy(y, EPS, total=N)),
        ("variance estimate, N noisy", lambda: entropy_variance_estimate(y, EPS)),
        ("variance estimate, N public", lambda: entropy_variance_estimate(y, EPS, total=N)),
    ]:
        t, v = best_time(fn)
        rows.append((f"entropy ({name})", N_BINS, label, t, t / t_ref, float(v)))
    t_ref, k_ref = best_time(lambda: plugin_kl(ya, yb))
    rows.append((f"KL ({name} halves)", N_BINS, "plug-in (biased, reference)", t_ref, 1.0, k_ref))
    t, v = best_time(lambda: kl_divergence(ya, yb, EPS))
    rows.append((f"KL ({name} halves)", N_BINS, "unbiased", t, t / t_ref, float(v)))

    small = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        for n in (4, 8, 11):
            ys = noisy(np.arange(n) * 3 + 5, EPS, rng)
            t_bf, v_bf = best_time(lambda ys=ys: float(debias_nd(H, ys, EPS)), repeat=2)
            t_f, v_f = best_time(lambda ys=ys: float(entropy(ys, EPS)))
            small.append(("entropy", n, t_bf, t_f, v_bf, v_f, bruteforce_bound(H, ys, EPS)))
        for n in (2, 4, 5):
            ys, zs = noisy(np.arange(n) * 3 + 5, EPS, rng), noisy(np.arange(n) + 8, EPS, rng)
            v2 = np.concatenate([ys, zs])
            t_bf, v_bf = best_time(lambda v2=v2, n=n: float(debias_nd(KL(n), v2, EPS)), repeat=2)
            t_f, v_f = best_time(lambda ys=ys, zs=zs: float(kl_divergence(ys, zs, EPS)))
            small.append(("KL", n, t_bf, t_f, v_bf, v_f, bruteforce_bound(KL(n), v2, EPS)))

    print(f"ldpgraph entropy / KL estimators, epsilon = {EPS}, true H = {float(H(x)):.6f}")
    print()
    print(f"{'case':<24} {'n':>6}  {'method':<30} {'time [ms]':>10} {'x ref':>8}  {'value':>14}")
    for case, n, label, t, ratio, v in rows:
        print(f"{case:<24} {n:>6}  {label:<30} {1e3 * t:>10.3f} {ratio:>8.1f}  {v:>14.8g}")
    print()
    print(f"{'brute force vs fast':<20} {'n':>3} {'points':>9} {'brute [ms]':>11} {'fast [ms]':>10} "
          f"{'speed-up':>9} {'|difference|':>13} {'brute bound':>12}")  # fmt: skip
    for what, n, t_bf, t_f, v_bf, v_f, bound in small:
        pts = 3 ** (n if what == "entropy" else 2 * n)
        print(
            f"{what:<20} {n:>3} {pts:>9} {1e3 * t_bf:>11.2f} {1e3 * t_f:>10.3f} "
            f"{t_bf / t_f:>9.3g} {abs(v_bf - v_f):>13.2e} {bound:>12.2e}"
        )


if __name__ == "__main__":
    main()
