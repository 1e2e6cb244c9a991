"""
Degree distribution from noisy degrees
======================================

Every node of the Facebook graph releases its degree with discrete Laplace noise at epsilon
1. The histogram of the noisy degrees is the true one convolved with the noise: biased where
the distribution bends (here mildly: Facebook's degrees spread smoothly over many values). The
unbiased estimate (:func:`ldpgraph.estimators.histogram`) has no bias at all; its 95% bars,
from the unbiased variance estimate (:func:`ldpgraph.estimators.histogram_variance`), show
what that costs in variance. Narrower bins or a smaller epsilon widen them.
"""

import numpy as np
from matplotlib.figure import Figure

from ldpgraph.datasets import load_dataset
from ldpgraph.estimators import histogram, histogram_variance
from ldpgraph.mechanisms import DiscreteLaplace

epsilon = 1.0
degrees = load_dataset("facebook").degrees
noisy = DiscreteLaplace(epsilon=epsilon).randomize(degrees, rng=0)
bins = np.arange(0, 81, 4)
truth = np.histogram(degrees, bins=bins)[0]
naive = np.histogram(noisy, bins=bins)[0]
estimate = histogram(noisy, epsilon, bins)
error = 1.96 * np.sqrt(np.maximum(histogram_variance(noisy, epsilon, bins), 0))

fig = Figure(figsize=(8, 4))
ax = fig.add_subplot()
middle = (bins[:-1] + bins[1:]) / 2
ax.step(bins, np.r_[truth, truth[-1]], where="post", color="k", label="truth")
ax.plot(middle, naive, "s--", mfc="none", label="histogram of the noisy degrees")
ax.errorbar(middle, estimate, yerr=error, fmt="o", capsize=3, label="unbiased estimate (95%)")
ax.set(xlabel="degree (bins of 4)", ylabel="nodes", title=f"facebook, epsilon {epsilon:g}")
ax.legend()
fig.tight_layout()
