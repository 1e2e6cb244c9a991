"""k-star methods compared in experiments: ours, plug-in, continuous Laplace, LocalLapKStars."""

from .methods import (
    METHODS,
    KStarMethod,
    LocalDLapKStars,
    LocalLapKStars,
    LocalLapKStarsPrivateDmax,
    NaiveDLap,
    NaiveLaplace,
    UnbiasedDLap,
    UnbiasedLaplace,
    exact_kstars,
    get_method,
    method_names,
)

__all__ = [
    "METHODS",
    "KStarMethod",
    "LocalDLapKStars",
    "LocalLapKStars",
    "LocalLapKStarsPrivateDmax",
    "NaiveDLap",
    "NaiveLaplace",
    "UnbiasedDLap",
    "UnbiasedLaplace",
    "exact_kstars",
    "get_method",
    "method_names",
]
