"""Unbiased post-processing estimators for discrete Laplace (and Laplace) reports."""

from .operator import (
    MAX_BRUTE_FORCE_EVALUATIONS,
    debias,
    debias_laplace,
    debias_laplace_variance,
    debias_nd,
    debias_nd_variance,
    debias_variance,
)

__all__ = [
    "MAX_BRUTE_FORCE_EVALUATIONS",
    "debias",
    "debias_laplace",
    "debias_laplace_variance",
    "debias_nd",
    "debias_nd_variance",
    "debias_variance",
]
