"""Triangle and transitivity protocols: one-round randomized response, the two-round protocols
(ours with DLap, Local2Rounds with Laplace), ARR, their kernels and the transitivity ratio."""
