"""
Triangle protocols on a small-world graph
=========================================

The relative RMSE of the triangle count of the edge-LDP protocols (one round of randomized
response, the two-round protocols, ARR with clipping, EdgeOrient) on a Watts-Strogatz graph of
500 nodes, as ``ldpgraph experiment --stat triangles`` plots it.
"""

from ldpgraph.experiments import run_experiment
from ldpgraph.experiments.plots import relative_rmse_figure

methods = ["rr-triangles", "two-round-triangles-laplace", "two-round-triangles-dlap", "arr-triangles",
           "edge-orient-triangles"]
result = run_experiment({"ws": "ws:n=500,k=10,p=0.1"}, epsilons=[1, 2, 4], methods=methods,
                        statistics=["triangles"], n_trials=20, seed=0, n_jobs=1, quiet=True)
fig = relative_rmse_figure(result.summary)
