"""Entropy and profile estimation on real histograms from noisy counts: naive vs unbiased.

Two real histograms (``ldpgraph datasets``):

* ``shakespeare``: the word counts of the Complete Works (23,683 words, 928,012 tokens);
* ``exac-sfs``: the allele counts of 7,302,295 variants, given by their profile (site-frequency
  spectrum) F_i = number of variants seen exactly i times, i = 1..1200.

Every count x_i is released as y_i = x_i + DLap(e^-eps) (sensitivity 1: one token or one allele
more or less moves one count by 1). From the noisy counts we estimate

* the entropy H = -sum_i p_i ln p_i, p_i = x_i / sum x (nats): unbiased
  (:func:`ldpgraph.estimators.entropies.entropy`) vs the plug-in on max(y, 0);
* the profile phi_j = #{i : x_i = j} for j in --profile (default 1, 2, 3, 10; phi_1 are the
  hapax legomena / singleton variants): unbiased (:func:`ldpgraph.estimators.profiles.profile`)
  vs the naive count #{i : y_i = j};
* the partition function Z(t) = sum_i t^(x_i) = sum_j phi_j t^j (the fingerprint's generating
  function) for t in --t: unbiased (:func:`ldpgraph.estimators.profiles.partition_function`,
  kappa(t) sum_i t^(y_i), kappa(t) = 1 - c (t-1)^2 / t, c = p/(1-p)^2) vs the naive
  sum_i t^(y_i), whose relative bias is exactly 1/kappa(t) - 1 = E[t^eta] - 1 whatever the data.
  The unbiased estimate has a finite mean for |ln t| < eps and a finite variance only for
  |ln t| < eps/2 (E t^(2 eta) < inf): cells outside the variance condition are not simulated
  (listed with the reason). The exact variances are
  Var(unbiased) = sum_i t^(2 x_i) (kappa(t)^2 / kappa(t^2) - 1) and
  Var(naive) = sum_i t^(2 x_i) (1/kappa(t^2) - 1/kappa(t)^2); the table prints the Monte-Carlo
  relative bias next to its exact value and its standard error, and the relative RMSE next to
  the exact one.

For every (dataset, eps) the trials are cut into blocks with their own random streams
(:mod:`ldpgraph.experiments.seeding`) and run in parallel with joblib; the output (--out,
default results/histograms) has the same layout as ``ldpgraph experiment``: records.csv (the
``graph`` column holds the dataset name and ``k`` the profile index j), summary.csv,
summary.txt, plots/ (relative RMSE vs eps, log-log, PNG and SVG) and experiment.json.

    LDPGRAPH_DATA=../shared/datasets python scripts/reproduce_histograms.py [--trials 200]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import joblib
import numpy as np

from ldpgraph._validation import dlap_c
from ldpgraph.datasets import DatasetNotFoundError, load_dataset
from ldpgraph.estimators.entropies import entropy
from ldpgraph.estimators.profiles import partition_function, profile, profile_exact_variance
from ldpgraph.experiments import (
    CellRecords,
    Records,
    format_summary,
    plot_relative_rmse,
    summarize,
    write_records_csv,
    write_summary_csv,
)
from ldpgraph.experiments.seeding import block_rng, cell_key
from ldpgraph.mechanisms import DiscreteLaplace

UNBIASED, NAIVE = "unbiased-dlap", "naive-dlap"


def load_histograms(names: list[str]) -> dict[str, np.ndarray]:
    out = {}
    for name in names:
        if name == "shakespeare":
            out[name] = np.asarray(load_dataset("shakespeare").counts, dtype=np.int64)
        elif name == "exac-sfs":
            sfs = np.asarray(load_dataset("exac-sfs"), dtype=np.int64)
            out[name] = np.repeat(np.arange(1, sfs.size + 1, dtype=np.int64), sfs)
        else:
            raise ValueError(f"unknown histogram {name!r}")
    return out


def entropy_truth(x: np.ndarray) -> float:
    w = x[x > 0].astype(np.float64)
    p = w / w.sum()
    return float(-np.sum(p * np.log(p)))


def naive_entropy(y: np.ndarray) -> float:
    w = np.maximum(y, 0).astype(np.float64)
    w = w[w > 0]
    if w.size == 0:
        return math.nan
    p = w / w.sum()
    return float(-np.sum(p * np.log(p)))


def kappa(t: np.ndarray, eps: float) -> np.ndarray:
    """1 / E[t^eta] for eta ~ DLap(e^-eps): the factor of the unbiased partition function."""
    return 1.0 - dlap_c(eps) * (t - 1.0) ** 2 / t


def finite_variance(t: float, eps: float) -> bool:
    """The variance condition |ln t| < eps/2 (sensitivity 1)."""
    return abs(math.log(t)) < eps / 2


def partition_truth(x: np.ndarray, t: np.ndarray, power: int = 1) -> np.ndarray:
    """sum_i t^(power x_i) from the histogram of the counts (positive terms: no cancellation)."""
    values = np.bincount(x)
    j = np.flatnonzero(values)
    return np.array([math.fsum((values[j] * tv ** (power * j.astype(np.float64))).tolist()) for tv in t])


def partition_exact(x: np.ndarray, t: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    """Exact mean and variance of both estimators of Z(t) at the true counts x."""
    z, z2 = partition_truth(x, t), partition_truth(x, t, 2)
    k1, k2 = kappa(t, eps), kappa(t * t, eps)
    return {"truth": z, "naive_mean": z / k1, "var_unbiased": z2 * (k1 * k1 / k2 - 1.0),
            "var_naive": z2 * (1.0 / k2 - 1.0 / (k1 * k1))}


def naive_partition(y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """sum_i t^(y_i), from the histogram of the reports."""
    lo = int(y.min())
    counts = np.bincount(y - lo)
    j = np.flatnonzero(counts)
    powers = t[None, :] ** (lo + j.astype(np.float64))[:, None]
    return counts[j].astype(np.float64) @ powers


def run_block(x: np.ndarray, eps: float, js: list[int], ts: list[float], seed: int, key: int, block: int,
              n: int):
    """n trials of one block: rows = [entropy unbiased, entropy naive, profile_j unbiased..., naive...,
    Z(t) unbiased..., naive...] (ts: the t of the grid with a finite variance at eps)."""
    gen = block_rng(seed, key, block)
    mech = DiscreteLaplace(epsilon=eps)
    jmax = max(js)
    idx = np.asarray(js)
    tt = np.asarray(ts, dtype=np.float64)
    nj, nt = len(js), len(ts)
    out = np.empty((2 + 2 * nj + 2 * nt, n))
    for t in range(n):
        y = mech.randomize(x, rng=gen)
        out[0, t] = float(entropy(y, eps))
        out[1, t] = naive_entropy(y)
        out[2 : 2 + nj, t] = profile(y, eps, jmax)[idx]
        counts = np.bincount(np.clip(y, -1, jmax + 1) + 1, minlength=jmax + 3)[1:]
        out[2 + nj : 2 + 2 * nj, t] = counts[idx]
        if nt:
            out[2 + 2 * nj : 2 + 2 * nj + nt, t] = partition_function(y, tt, eps)
            out[2 + 2 * nj + nt :, t] = naive_partition(y, tt)
    return out


def partition_table(rows: list[dict]) -> str:
    """The Z(t) table: Monte-Carlo relative bias of both estimators next to the exact values; then
    the cells not simulated, with the reason."""
    head = ("dataset", "t", "|ln t|", "eps", "trials", "Z(t)", "naive rel_bias", "exact",
            "unbiased rel_bias", "+- se", "z", "rel_rmse unb", "exact", "rel_rmse naive", "exact")
    lines = [head]
    skipped = []
    for r in rows:
        if "skipped" in r:
            skipped.append(f"  {r['dataset']}, t = {r['t']:g}, eps = {r['eps']:g}: {r['skipped']}")
            continue
        lines.append((r["dataset"], f"{r['t']:g}", f"{abs(math.log(r['t'])):.4f}", f"{r['eps']:g}",
                      str(r["trials"]), f"{r['truth']:.6g}", f"{r['naive_bias']:.3e}",
                      f"{r['naive_bias_exact']:.3e}", f"{r['unbiased_bias']:.2e}",
                      f"{r['unbiased_bias_se']:.1e}", f"{r['z']:+.2f}", f"{r['rmse_unbiased']:.3e}",
                      f"{r['rmse_unbiased_exact']:.3e}", f"{r['rmse_naive']:.3e}", f"{r['rmse_naive_exact']:.3e}"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
           for line in lines]
    if skipped:
        out += ["not simulated (the variance condition |ln t| < eps/2 fails):", *skipped]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["shakespeare", "exac-sfs"])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.5, 1.0, 2.0, 5.0])
    ap.add_argument("--profile", type=int, nargs="+", default=[1, 2, 3, 10], help="profile indices j")
    ap.add_argument("--t", type=float, nargs="+", default=[0.5, 0.8, 0.9, 0.95, 0.99, 1.01],
                    help="evaluation points of the partition function Z(t) (> 0)")
    ap.add_argument("--trials", type=int, default=200, help="trials per (dataset, eps) for shakespeare")
    ap.add_argument("--trials-exac", type=int, default=20, help="trials per eps for exac-sfs (7.3M counts)")
    ap.add_argument("--block-size", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=-1)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--out", default="results/histograms")
    args = ap.parse_args()
    t0 = time.perf_counter()
    try:
        data = load_histograms(args.datasets)
    except DatasetNotFoundError as exc:
        print(f"reproduce_histograms: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    js = sorted(set(args.profile))
    if js[0] < 1:
        raise SystemExit("profile indices must be >= 1")
    t_grid = sorted(set(args.t))
    if t_grid[0] <= 0 or not all(math.isfinite(t) for t in t_grid):
        raise SystemExit("--t values must be finite and > 0")
    ts_at = {float(eps): [t for t in t_grid if finite_variance(t, eps)] for eps in args.epsilons}

    cells = []  # (dataset, eps, key, trials)
    for name, x in data.items():
        n_trials = args.trials_exac if name == "exac-sfs" else args.trials
        print(f"{name}: {x.size:,} counts, total {int(x.sum()):,}, entropy {entropy_truth(x):.6f} nats; "
              f"{n_trials} trials per eps", flush=True)
        for eps in args.epsilons:
            cells.append((name, float(eps), cell_key("histogram", name, float(eps)), n_trials))
    tasks = [(c, b, start, min(args.block_size, c[3] - start))
             for c in cells for b, start in enumerate(range(0, c[3], args.block_size))]
    results = joblib.Parallel(n_jobs=args.jobs)(
        joblib.delayed(run_block)(data[c[0]], c[1], js, ts_at[c[1]], args.seed, c[2], b, n)
        for c, b, _s, n in tasks
    )
    t_sim = time.perf_counter() - t0

    records, analytic, zrows = [], {}, []
    for c in cells:
        name, eps, key, _n = c
        x = data[name]
        est = np.concatenate([r for (cc, _b, _s, _n), r in zip(tasks, results, strict=True) if cc == c], axis=1)
        spawn = tuple(f"{key}/{t // args.block_size}" for t in range(est.shape[1]))
        truth_phi = np.bincount(x, minlength=max(js) + 1)[js]
        sd_phi = np.sqrt(profile_exact_variance(x, eps, max(js))[js])
        for row, method in ((0, UNBIASED), (1, NAIVE)):
            records.append(CellRecords(name, method, "entropy", None, eps, entropy_truth(x), est[row], args.seed,
                                       spawn))
        for i, j in enumerate(js):
            for row, method in ((2 + i, UNBIASED), (2 + len(js) + i, NAIVE)):
                cell = CellRecords(name, method, "profile", j, eps, float(truth_phi[i]), est[row], args.seed, spawn)
                records.append(cell)
                if method == UNBIASED:
                    analytic[cell.key] = float(sd_phi[i])
        tt = np.asarray(t_grid, dtype=np.float64)
        exact = partition_exact(x, tt, eps)
        ok = ts_at[eps]
        for i, t in enumerate(t_grid):
            if t not in ok:
                why = "finite mean" if abs(math.log(t)) >= eps else "finite variance"
                bound = "eps" if why == "finite mean" else "eps/2"
                zrows.append({"dataset": name, "t": t, "eps": eps, "truth": float(exact["truth"][i]),
                              "skipped": f"no {why} (|ln t| = {abs(math.log(t)):.4f} >= {bound})"})
                continue
            a = ok.index(t)
            unb, nai = est[2 + 2 * len(js) + a], est[2 + 2 * len(js) + len(ok) + a]
            z = float(exact["truth"][i])
            stat = f"partition_function(t={t:g})"
            for row, method, var, mean in ((unb, UNBIASED, exact["var_unbiased"][i], z),
                                           (nai, NAIVE, exact["var_naive"][i], exact["naive_mean"][i])):
                cell = CellRecords(name, method, stat, None, eps, z, row, args.seed, spawn)
                records.append(cell)
                analytic[cell.key] = math.sqrt(var + (mean - z) ** 2)
            n_t = unb.size
            zrows.append({
                "dataset": name, "t": t, "eps": eps, "trials": n_t, "truth": z,
                "naive_bias": float(nai.mean() / z - 1), "naive_bias_exact": float(exact["naive_mean"][i] / z - 1),
                "unbiased_bias": float(unb.mean() / z - 1),
                "unbiased_bias_se": math.sqrt(exact["var_unbiased"][i] / n_t) / z,
                "z": float((unb.mean() - z) / math.sqrt(exact["var_unbiased"][i] / n_t)),
                "rmse_unbiased": float(np.sqrt(np.mean((unb - z) ** 2)) / z),
                "rmse_unbiased_exact": math.sqrt(exact["var_unbiased"][i]) / z,
                "rmse_naive": float(np.sqrt(np.mean((nai - z) ** 2)) / z),
                "rmse_naive_exact": math.sqrt(exact["var_naive"][i] + (exact["naive_mean"][i] - z) ** 2) / z,
            })
    order = {(s, k): i for i, (s, k) in enumerate([("entropy", None)] + [("profile", j) for j in js]
                                                  + [(f"partition_function(t={t:g})", None) for t in t_grid])}
    records.sort(key=lambda c: (args.datasets.index(c.graph), order[(c.statistic, c.k)], c.epsilon,
                                c.method != UNBIASED))
    rec = Records(records)
    summary = summarize(rec, analytic)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [write_records_csv(rec, out / "records.csv"), write_summary_csv(summary, out / "summary.csv")]
    table = format_summary(summary)
    ztable = partition_table(zrows)
    (out / "summary.txt").write_text(table + "\n", encoding="utf-8")
    paths.append(out / "summary.txt")
    (out / "partition_function.txt").write_text(ztable + "\n", encoding="utf-8")
    paths.append(out / "partition_function.txt")
    config = {
        "seed": args.seed,
        "datasets": {name: {"counts": int(x.size), "total": int(x.sum())} for name, x in data.items()},
        "epsilons": args.epsilons,
        "profile_indices": js,
        "partition_t": t_grid,
        "partition_function": zrows,
        "trials": {name: n for name, _e, _k, n in cells},
        "block_size": args.block_size,
        "simulation_seconds": round(t_sim, 2),
    }
    (out / "experiment.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    paths.append(out / "experiment.json")
    paths += plot_relative_rmse(summary, out / "plots")
    print(table)
    print("\npartition function Z(t): relative bias (Monte-Carlo, exact), its standard error and z-score, "
          "relative RMSE (Monte-Carlo, exact); simulated only where the variance is finite, |ln t| < eps/2")
    print(ztable)
    print(f"\n{len(rec)} cells in {time.perf_counter() - t0:.1f} s (simulation {t_sim:.1f} s)")
    for p in paths:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
