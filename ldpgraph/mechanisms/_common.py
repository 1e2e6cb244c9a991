"""Private helpers shared by the mechanism modules."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__: list[str] = []


def _float_or_inf(v: Any) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _real_points(z: Any, name: str) -> NDArray[np.float64]:
    """Points at which a law (pdf, cdf, pmf, ...) is evaluated, as a float64 array.

    Real numbers of any dtype (booleans, integers, floats, object arrays of real numbers) are
    converted; complex numbers (whose imaginary part numpy would drop with a ComplexWarning),
    strings, bytes and other objects raise ``TypeError``. Values are not otherwise checked:
    +-inf and nan are legitimate arguments of a law.

    >>> _real_points([1, 2.5], "z")
    array([1. , 2.5])
    >>> _real_points([1 + 2j], "z")
    Traceback (most recent call last):
        ...
    TypeError: z must be real numbers, got dtype complex128
    """
    arr = np.asarray(z)
    kind = arr.dtype.kind
    if kind in "biuf":
        return arr.astype(np.float64, copy=False)
    if kind == "O" and all(
        isinstance(v, numbers.Real) and not isinstance(v, (str, bytes)) for v in arr.flat
    ):
        try:
            return arr.astype(np.float64)
        except OverflowError:  # Python ints beyond the float range are +-inf
            return np.array([_float_or_inf(v) for v in arr.flat], dtype=np.float64).reshape(arr.shape)
    raise TypeError(f"{name} must be real numbers, got dtype {arr.dtype}")
