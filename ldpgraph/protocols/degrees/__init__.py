"""Degree and k-star protocols: the degree release (``unbiased-dlap``, ``naive-dlap``, the Laplace
baselines) and the local k-star counts, with their fast vectorised kernels."""
