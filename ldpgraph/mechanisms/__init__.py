"""Noise mechanisms: samplers with their analytic laws."""

from .discrete_laplace import DiscreteLaplace

__all__ = ["DiscreteLaplace"]
