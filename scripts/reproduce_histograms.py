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
  vs the naive count #{i : y_i = j}.

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

from ldpgraph.datasets import DatasetNotFoundError, load_dataset
from ldpgraph.estimators.entropies import entropy
from ldpgraph.estimators.profiles import profile, profile_exact_variance
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


def run_block(x: np.ndarray, eps: float, js: list[int], seed: int, key: int, block: int, n: int):
    """n trials of one block: rows = [entropy unbiased, entropy naive, profile_j unbiased..., naive...]."""
    gen = block_rng(seed, key, block)
    mech = DiscreteLaplace(epsilon=eps)
    jmax = max(js)
    idx = np.asarray(js)
    out = np.empty((2 + 2 * len(js), n))
    for t in range(n):
        y = mech.randomize(x, rng=gen)
        out[0, t] = float(entropy(y, eps))
        out[1, t] = naive_entropy(y)
        out[2 : 2 + len(js), t] = profile(y, eps, jmax)[idx]
        counts = np.bincount(np.clip(y, -1, jmax + 1) + 1, minlength=jmax + 3)[1:]
        out[2 + len(js) :, t] = counts[idx]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["shakespeare", "exac-sfs"])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.5, 1.0, 2.0, 5.0])
    ap.add_argument("--profile", type=int, nargs="+", default=[1, 2, 3, 10], help="profile indices j")
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
        joblib.delayed(run_block)(data[c[0]], c[1], js, args.seed, c[2], b, n) for c, b, _s, n in tasks
    )
    t_sim = time.perf_counter() - t0

    records, analytic = [], {}
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
    order = {(s, k): i for i, (s, k) in enumerate([("entropy", None)] + [("profile", j) for j in js])}
    records.sort(key=lambda c: (args.datasets.index(c.graph), order[(c.statistic, c.k)], c.epsilon,
                                c.method != UNBIASED))
    rec = Records(records)
    summary = summarize(rec, analytic)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [write_records_csv(rec, out / "records.csv"), write_summary_csv(summary, out / "summary.csv")]
    table = format_summary(summary)
    (out / "summary.txt").write_text(table + "\n", encoding="utf-8")
    paths.append(out / "summary.txt")
    config = {
        "seed": args.seed,
        "datasets": {name: {"counts": int(x.size), "total": int(x.sum())} for name, x in data.items()},
        "epsilons": args.epsilons,
        "profile_indices": js,
        "trials": {name: n for name, _e, _k, n in cells},
        "block_size": args.block_size,
        "simulation_seconds": round(t_sim, 2),
    }
    (out / "experiment.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    paths.append(out / "experiment.json")
    paths += plot_relative_rmse(summary, out / "plots")
    print(table)
    print(f"\n{len(rec)} cells in {time.perf_counter() - t0:.1f} s (simulation {t_sim:.1f} s)")
    for p in paths:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
