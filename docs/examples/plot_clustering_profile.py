"""
Clustering profile from one adaptive-clustering run
===================================================

One simulated run of ``adaptive-clustering`` on Facebook at epsilon 2 gives, from the same
reports, the clustering profile C(k) (mean local clustering by bucket of the released degree,
with 95% error bars) and the deconvolved distribution of the local clustering coefficients,
each against the truth (``scripts/adaptive_clustering_profile.py`` prints the numbers).
"""

import numpy as np

from ldpgraph.datasets import load_dataset
from ldpgraph.experiments.plots import clustering_profile_figure
from ldpgraph.protocols.clustering import adaptive as ac

graph = load_dataset("facebook")
epsilon = {name: 2.0 * share for name, share in ac.DEFAULT_SHARES.items()}
reports = ac.simulate_reports(ac.wedge_table(graph), epsilon["rr"], epsilon["degree"],
                              epsilon["local_clustering"], ac.default_margin(epsilon["degree"]), rng=0)
buckets = [0, 2, 4, 8, 16, 32, 64, 128, 256, 100_000]
profile = ac.clustering_profile(reports, buckets)
local, degrees = ac.local_clustering_of(graph), graph.degrees
truth = [local[(degrees >= lo) & (degrees < hi)].mean()
         for lo, hi in zip(buckets[:-1], buckets[1:], strict=True)]
edges, fractions = ac.clustering_histogram(reports, 10)
true_fractions = np.histogram(local, bins=edges)[0] / graph.n_nodes
fig = clustering_profile_figure(profile, truth, edges, fractions, true_fractions,
                                "adaptive-clustering on facebook, epsilon 2")
