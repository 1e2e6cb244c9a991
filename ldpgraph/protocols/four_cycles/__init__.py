"""4-cycle protocols: one-round randomized response and the two-round protocol, with their kernels."""
