"""Noise mechanisms: samplers with their analytic laws, and conversions between them."""

from .conversion import (
    laplace_conversion_density,
    staircase_conversion_density,
    to_laplace,
    to_staircase,
)
from .discrete_laplace import DiscreteLaplace
from .laplace import Laplace
from .staircase import Staircase

__all__ = [
    "DiscreteLaplace",
    "Laplace",
    "Staircase",
    "laplace_conversion_density",
    "staircase_conversion_density",
    "to_laplace",
    "to_staircase",
]
