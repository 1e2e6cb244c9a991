"""Validation at the public boundary.

Every public function of ldpgraph cleans its arguments with these helpers. Each returns the
cleaned value or raises ``TypeError`` (wrong type) or ``ValueError`` (wrong value), with a
message that names the parameter, the constraint and what was received, e.g.
``epsilon must be finite and > 0, got -1.0``. Inner kernels assume clean input.
"""

from __future__ import annotations

import decimal
import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "check_epsilon",
    "check_sensitivity",
    "check_positive_real",
    "check_nonnegative_int",
    "check_integer_reports",
    "check_real_reports",
    "check_rng",
    "check_same_shape",
    "dlap_p",
    "dlap_c",
    "exact_number",
    "canonical_quantity",
    "digit_count_text",
]

# Largest magnitude of an integer report. Noisy degrees are far below this; the bound keeps
# y +- 1 and products of a few reports exactly representable without int64 overflow.
_MAX_ABS_REPORT = 2**53


def _check_real_scalar(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def check_positive_real(value: Any, name: str) -> float:
    """Return ``value`` as a float after checking it is finite and > 0."""
    v = _check_real_scalar(value, name)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return the privacy parameter as a float; it must be finite and > 0.

    >>> check_epsilon(1)
    1.0
    """
    return check_positive_real(epsilon, name)


def check_sensitivity(sensitivity: Any, name: str = "sensitivity") -> float:
    """Return the sensitivity as a float; it must be finite and > 0."""
    return check_positive_real(sensitivity, name)


def check_nonnegative_int(value: Any, name: str, minimum: int = 0) -> int:
    """Return ``value`` as a Python int after checking it is an integer >= ``minimum``.

    Floats with an integral value (``3.0``) are accepted; ``3.5``, ``True`` and strings are not.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool {value!r}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        v = int(value)
    else:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {v}")
    return v


def _raise_at_first(arr: NDArray[Any], mask: NDArray[np.bool_], name: str, what: str) -> None:
    """Raise ``ValueError`` naming the first position where ``mask`` is true, if any."""
    if not mask.any():
        return
    if arr.ndim == 0:
        raise ValueError(f"{name} = {arr.item()!r} {what}")
    idx = np.unravel_index(int(np.flatnonzero(mask.ravel())[0]), mask.shape)
    pos = ", ".join(str(int(i)) for i in idx)
    raise ValueError(f"{name}[{pos}] = {arr[idx].item()!r} {what}")


def _numeric_from_objects(arr: NDArray[Any], name: str) -> NDArray[Any]:
    """Convert an object array of Python/numpy numbers; reject bools, strings and huge ints."""
    flat = arr.ravel()
    out = np.empty(flat.size, dtype=np.float64)
    for i, v in enumerate(flat):
        pos = ", ".join(str(int(j)) for j in np.unravel_index(i, arr.shape)) if arr.ndim else ""
        where = f"{name}[{pos}]" if arr.ndim else name
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must be an array of integers; {where} is {type(v).__name__} {v!r}")
        if isinstance(v, numbers.Integral) and abs(int(v)) > _MAX_ABS_REPORT:
            digits = len(str(abs(int(v))))
            raise ValueError(
                f"{where} is too large (a {digits}-digit integer); reports must have magnitude <= 2**53"
            )
        out[i] = float(v)
    return out.reshape(arr.shape)


def check_integer_reports(y: ArrayLike, name: str = "y", *, min_ndim: int = 0) -> NDArray[np.int64]:
    """Return noisy integer reports as an int64 array.

    Integer arrays pass through. Float arrays are accepted when every entry is a finite whole
    number; otherwise the first offending position is named. Booleans, complex numbers,
    strings and objects are rejected.

    Parameters
    ----------
    y : array_like
        Reports of the discrete Laplace mechanism.
    name : str
        Parameter name used in error messages.
    min_ndim : int
        Minimum number of dimensions (1 where the last axis indexes reports).

    >>> check_integer_reports([1.0, -2, 3])
    array([ 1, -2,  3])
    >>> check_integer_reports([1.5])
    Traceback (most recent call last):
        ...
    ValueError: y[0] = 1.5 is not an integer; reports of the discrete Laplace mechanism are integers
    """
    try:
        arr = np.asarray(y)
    except OverflowError:  # Python ints beyond int64: inspect them one by one
        arr = np.asarray(y, dtype=object)
    if arr.dtype == object:
        arr = _numeric_from_objects(arr, name)
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} must be an array of integers, got booleans")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of integers, got dtype {arr.dtype}")
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}")
    if arr.dtype.kind == "f":
        _raise_at_first(arr, ~np.isfinite(arr), name, "is not finite; reports must be finite integers")
        _raise_at_first(
            arr,
            arr != np.round(arr),
            name,
            "is not an integer; reports of the discrete Laplace mechanism are integers",
        )
    if arr.size:
        # integer arrays: min and max suffice (no float copy of a possibly huge array)
        too_big = (
            arr.dtype.kind in "iu" and (int(arr.max()) > _MAX_ABS_REPORT or int(arr.min()) < -_MAX_ABS_REPORT)
        ) or (arr.dtype.kind == "f" and float(np.abs(arr).max()) > _MAX_ABS_REPORT)
        if too_big:
            _raise_at_first(
                arr,
                np.abs(arr.astype(np.float64)) > _MAX_ABS_REPORT,
                name,
                "is too large; reports must have magnitude <= 2**53",
            )
    return arr.astype(np.int64, copy=False)


def check_real_reports(y: ArrayLike, name: str = "y", *, min_ndim: int = 0) -> NDArray[np.float64]:
    """Return continuous reports (Laplace, staircase) as a float64 array of finite values.

    >>> check_real_reports([0.5, 2])
    array([0.5, 2. ])
    """
    arr = np.asarray(y)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    _raise_at_first(arr, ~np.isfinite(arr), name, "is not finite; reports must be finite numbers")
    return arr


def check_same_shape(a: NDArray[Any], b: NDArray[Any], name_a: str, name_b: str) -> None:
    """Raise ``ValueError`` unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise ValueError(f"{name_a} and {name_b} must have the same shape, got {a.shape} and {b.shape}")


# Longest decimal integer a public input may hold. Far beyond any id, report or count (2**64 has
# 20 digits) and far below Python's int-string conversion limit (4300 digits by default), whose
# own error message names no file or row: longer numbers are refused as "too large" first.
MAX_INPUT_DIGITS = 400


def digit_count_text(token: str | bytes, limit: int = 30) -> str:
    """A number as written, or "a 5000-digit number" when it is longer than ``limit`` characters.

    >>> digit_count_text("12"), digit_count_text("9" * 50)
    ('12', 'a 50-digit number')
    """
    text = token.decode("ascii", "replace") if isinstance(token, bytes) else str(token)
    if len(text) <= limit:
        return text
    digits = sum(c.isdigit() for c in text)
    return f"a {digits}-digit number"


def exact_number(value: Any) -> int | float:
    """Return a received number without silent rounding: an int when it is whole, else a float.

    Python and numpy integers, :class:`~fractions.Fraction` and :class:`decimal.Decimal` values
    and decimal strings (``"42"``, ``" -7 "``, ``"1e3"``, ``"9007199254740993"``) that are whole
    numbers come back as exact Python ints (never through float64, which would round
    9007199254740993 to 2**53). Floats (and numpy floats) and non-whole rationals come back as
    floats.

    Raises
    ------
    TypeError
        For booleans (Python ``bool`` and ``numpy.bool_``) and anything that is not a number or
        a string.
    ValueError
        "too large" for a number with more than ``MAX_INPUT_DIGITS`` (400) integer digits
        (checked before any conversion, so Python's int-string limit is never reached);
        "not finite" for nan / inf; "not a number" for an unparsable string.

    Examples
    --------
    >>> exact_number("9007199254740993"), exact_number(2.5), exact_number(np.int64(3))
    (9007199254740993, 2.5, 3)
    >>> exact_number(np.bool_(True))
    Traceback (most recent call last):
        ...
    TypeError: a boolean is not a number, got bool True
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"a boolean is not a number, got bool {bool(value)!r}")
    if isinstance(value, numbers.Integral):
        v = int(value)
        if v.bit_length() > 1330:  # > 400 decimal digits (no str(v): it may exceed the int-string limit)
            digits = int(v.bit_length() * math.log10(2.0)) + 1
            raise ValueError(f"too large: a number of about {digits} digits; at most {MAX_INPUT_DIGITS}")
        return v
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            raise ValueError(f"not finite: {value!r}")
        return float(value)
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return exact_number(value.numerator)
        return float(value)
    if isinstance(value, (str, bytes)):
        text = value.decode("ascii", "replace") if isinstance(value, bytes) else value
        text = text.strip()
        if not text.isascii():
            raise ValueError(f"not a number: {digit_count_text(text)!r} (only ASCII digits are numbers)")
        try:
            value = decimal.Decimal(text)
        except decimal.InvalidOperation:
            raise ValueError(f"not a number: {digit_count_text(text)!r}") from None
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise ValueError(f"not finite: {value}")
        if value.is_zero():
            return 0
        if value.adjusted() >= MAX_INPUT_DIGITS:
            raise ValueError(
                f"too large: a number of {value.adjusted() + 1} digits; at most {MAX_INPUT_DIGITS} digits"
            )
        if value == value.to_integral_value():
            return int(value)
        return float(value)
    if isinstance(value, numbers.Real):
        return exact_number(float(value))
    raise TypeError(f"not a number: {type(value).__name__} {value!r}")


def canonical_quantity(name: Any) -> str:
    """The canonical spelling of a released quantity's name (``degree``, ``kstar_<k>``).

    Names are compared as written, so two spellings of one quantity would be treated as two
    quantities. ``kstar_`` must be followed by ASCII digits without leading zeros
    (``"kstar_\\u0662"`` (an Arabic-Indic two) and ``kstar_02`` are refused, not read as
    ``kstar_2``); surrounding whitespace is removed.

    >>> canonical_quantity(" kstar_3 ")
    'kstar_3'
    >>> canonical_quantity("kstar_02")
    Traceback (most recent call last):
        ...
    ValueError: quantity 'kstar_02' must be spelled with ASCII digits and no leading zeros, like 'kstar_2'
    """
    if not isinstance(name, str):
        raise TypeError(f"quantity must be a string, got {type(name).__name__} {name!r}")
    q = name.strip()
    if q.startswith("kstar_"):
        k = q[6:]
        if not (k.isascii() and k.isdigit()) or (len(k) > 1 and k[0] == "0"):
            raise ValueError(
                f"quantity {q!r} must be spelled with ASCII digits and no leading zeros, like 'kstar_2'"
            )
        if len(k) > MAX_INPUT_DIGITS:
            raise ValueError(f"quantity kstar_<k> has k too large: {digit_count_text(k)}")
    elif not q.isascii():
        raise ValueError(f"quantity {q!r} must be an ASCII name ('degree' or 'kstar_<k>')")
    return q


def check_rng(rng: Any) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a Generator, a seed, a SeedSequence or None.

    >>> bool(check_rng(0).integers(10) == check_rng(0).integers(10))
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence, np.random.BitGenerator)):
        if isinstance(rng, (bool, np.bool_)):
            raise TypeError("rng must be a numpy Generator, a seed, a SeedSequence or None, got bool")
        if isinstance(rng, numbers.Integral) and int(rng) < 0:
            raise ValueError(f"rng seed must be >= 0, got {rng}")
        return np.random.default_rng(rng)
    raise TypeError(
        f"rng must be a numpy Generator, an int seed, a SeedSequence or None, got {type(rng).__name__}"
    )


def dlap_p(epsilon: float, sensitivity: float = 1.0) -> float:
    """Parameter p = exp(-epsilon / sensitivity) of the discrete Laplace law (validated)."""
    return math.exp(-check_epsilon(epsilon) / check_sensitivity(sensitivity))


def dlap_c(epsilon: float, sensitivity: float = 1.0) -> float:
    """Stencil constant c = p / (1 - p)^2 = 1 / (4 sinh^2(epsilon / (2 sensitivity))).

    The sinh form is exact to rounding for every epsilon, including epsilon -> 0 where
    ``1 - p`` would cancel.

    >>> round(dlap_c(1.0), 12) == round(math.exp(-1) / (1 - math.exp(-1)) ** 2, 12)
    True
    """
    t = check_epsilon(epsilon) / check_sensitivity(sensitivity)
    if t > 1400.0:  # sinh(t/2)^2 overflows; c underflows to 0 anyway
        return 0.0
    if t < 1e-150:  # c ~ 1/t^2 overflows float64
        raise ValueError(f"epsilon / sensitivity = {t!r} is too small: the noise variance overflows float64")
    s = math.sinh(t / 2.0)
    return 1.0 / (4.0 * s * s)
