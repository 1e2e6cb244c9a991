"""
Relative RMSE of the 2-star count on Facebook
=============================================

The figure ``ldpgraph experiment`` writes for the main job: the relative RMSE of the k-star
estimates over seeded trials at each epsilon, the simulated curves with their confidence
intervals and, dashed, each method's analytic RMSE where a closed form exists. Fewer trials
than the main job's 200 keep the build fast.
"""

from ldpgraph.experiments import run_experiment
from ldpgraph.experiments.plots import relative_rmse_figure

result = run_experiment("facebook", epsilons=[0.5, 1, 2, 4], ks=[2], n_trials=50, seed=0,
                        n_jobs=1, quiet=True)
fig = relative_rmse_figure(result.summary)

# %%
# The unbiased DLap estimate (ours) and its analytic RMSE, against the naive plug-in estimate
# and LocalLapKStars, whose noise is calibrated to the maximum degree:
for row in result.summary:
    if row.epsilon == 1:
        print(f"{row.method:18s} relative RMSE {row.relative_rmse:.5f}")
