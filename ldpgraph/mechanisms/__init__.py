"""Noise mechanisms: samplers with their analytic laws, and conversions between them."""

from .conversion import (
    laplace_conversion_density,
    staircase_conversion_density,
    to_laplace,
    to_staircase,
)
from .discrete_laplace import DiscreteLaplace
from .laplace import Laplace
from .secure import SecureDiscreteLaplace, sample_bernoulli_exp, sample_dlap_exact
from .staircase import Staircase

__all__ = [
    "DiscreteLaplace",
    "Laplace",
    "SecureDiscreteLaplace",
    "Staircase",
    "laplace_conversion_density",
    "sample_bernoulli_exp",
    "sample_dlap_exact",
    "staircase_conversion_density",
    "to_laplace",
    "to_staircase",
]
