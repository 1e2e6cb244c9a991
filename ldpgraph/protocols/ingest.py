r"""Turning the rows a curator receives into validated :class:`NodeReports`.

A deployment receives one row per node and released quantity::

    node, quantity, value, epsilon, sensitivity
    17,   degree,   42,    0.5,     1
    17,   kstar_2,  -300,  0.5,     49

:func:`reports_from_records` accepts such rows (dicts, or a mapping of equal-length columns) and
checks, before computing anything, that the set is one a truthful population could have sent:

* every value is an integer (the discrete Laplace mechanism outputs integers);
* no (node, quantity) pair appears twice;
* every node reports every quantity (no missing rows);
* each quantity was released by all nodes with one and the same epsilon;
* the declared sensitivity is the one the protocol prescribes (1 for degrees, C(d_max, k-1) for
  local k-star counts with the public bound d_max).

Any violation raises ``ValueError`` naming the offending rows (0-based positions in the input),
and no partial result is produced.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._validation import canonical_quantity, exact_number
from .randomizer import NodeReports, ReleasedValues

__all__ = ["reports_from_records"]

_COLUMNS = ("node", "quantity", "value", "epsilon", "sensitivity")
_MAX_LISTED = 10
_MAX_ABS_VALUE = 2**53


def _rows_text(rows: Iterable[int]) -> str:
    rows = list(rows)
    shown = ", ".join(str(r) for r in rows[:_MAX_LISTED])
    more = f" and {len(rows) - _MAX_LISTED} more" if len(rows) > _MAX_LISTED else ""
    return f"row{'s' if len(rows) > 1 else ''} {shown}{more}"


def _columns(records: Any) -> dict[str, list[Any]]:
    if isinstance(records, Mapping):
        missing = [c for c in _COLUMNS if c not in records]
        if missing:
            raise ValueError(f"report columns missing: {missing}; expected {list(_COLUMNS)}")
        cols = {c: list(records[c]) for c in _COLUMNS}
        lengths = {c: len(v) for c, v in cols.items()}
        if len(set(lengths.values())) != 1:
            raise ValueError(f"report columns must have equal lengths, got {lengths}")
        return cols
    cols: dict[str, list[Any]] = {c: [] for c in _COLUMNS}
    for i, row in enumerate(records):
        if not isinstance(row, Mapping):
            raise TypeError(f"row {i} must be a mapping with keys {list(_COLUMNS)}, got {type(row).__name__}")
        missing = [c for c in _COLUMNS if c not in row]
        if missing:
            raise ValueError(f"row {i} lacks {missing}; expected keys {list(_COLUMNS)}")
        for c in _COLUMNS:
            cols[c].append(row[c])
    return cols


def _as_float(values: list[Any], column: str) -> np.ndarray:
    out = np.empty(len(values), dtype=np.float64)
    bad = []
    for i, v in enumerate(values):
        try:
            out[i] = float(exact_number(v))  # refuses bool and numpy.bool_; "too large" strings
        except (TypeError, ValueError, OverflowError):
            bad.append(i)
    if bad:
        raise ValueError(f"{column} must be numeric: {_rows_text(bad)}")
    return out


def _exact_values(values: list[Any]) -> np.ndarray:
    """Report values as int64, parsed exactly (no rounding through float64); errors name rows."""
    exact: list[int] = []
    not_numeric, not_integer, huge = [], [], []
    for i, v in enumerate(values):
        try:
            x = exact_number(v)
        except TypeError:
            not_numeric.append(i)
            continue
        except ValueError as exc:
            msg = str(exc)
            kind = huge if msg.startswith("too large") else not_numeric
            (not_integer if msg.startswith("not finite") else kind).append(i)
            continue
        if isinstance(x, float):
            if not (math.isfinite(x) and x.is_integer()):
                not_integer.append(i)
                continue
            x = int(x)
        if abs(x) > _MAX_ABS_VALUE:
            huge.append(i)
            continue
        exact.append(x)
    if not_numeric:
        raise ValueError(f"value must be numeric: {_rows_text(not_numeric)}")
    if not_integer:
        raise ValueError(f"value must be an integer (discrete Laplace output): {_rows_text(not_integer)}")
    if huge:
        raise ValueError(
            f"value is too large: it must have magnitude <= 2**53 (no truthful node sends more): "
            f"{_rows_text(huge)}"
        )
    return np.array(exact, dtype=np.int64)


def _expected_sensitivity(quantity: str, d_max: int | None) -> float:
    if quantity == "degree":
        return 1.0
    if quantity.startswith("kstar_") and quantity[6:].isdigit() and int(quantity[6:]) >= 1:
        if d_max is None:
            raise ValueError(f"reports hold {quantity!r}: pass the public degree bound d_max to check them")
        return float(max(math.comb(d_max, int(quantity[6:]) - 1), 1))
    raise ValueError(f"unknown quantity {quantity!r}; expected 'degree' or 'kstar_<k>'")


def reports_from_records(records: Any, *, d_max: int | None = None) -> NodeReports:
    """Validate received report rows and assemble them into :class:`NodeReports`.

    Parameters
    ----------
    records : iterable of mappings, or mapping of columns
        Rows with keys ``node, quantity, value, epsilon, sensitivity``.
    d_max : int, optional
        The public degree bound, required when local k-star counts are present.

    Returns
    -------
    NodeReports
        One :class:`ReleasedValues` per quantity, nodes in increasing id order
        (``metadata["node_ids"]``).

    Examples
    --------
    >>> rows = [
    ...     {"node": 1, "quantity": "degree", "value": 4, "epsilon": 1.0, "sensitivity": 1},
    ...     {"node": 0, "quantity": "degree", "value": -1, "epsilon": 1.0, "sensitivity": 1},
    ... ]
    >>> reports_from_records(rows).degrees.values
    array([-1,  4])
    >>> rows[1]["value"] = 2.5
    >>> reports_from_records(rows)
    Traceback (most recent call last):
        ...
    ValueError: value must be an integer (discrete Laplace output): row 1
    """
    cols = _columns(records)
    n_rows = len(cols["node"])
    if n_rows == 0:
        raise ValueError("no reports received")
    nodes = cols["node"]
    quantities = []
    for i, q in enumerate(cols["quantity"]):
        try:
            quantities.append(canonical_quantity(str(q)))
        except ValueError as exc:
            raise ValueError(f"row {i}: {exc}") from None
    values = _exact_values(cols["value"])
    eps = _as_float(cols["epsilon"], "epsilon")
    sens = _as_float(cols["sensitivity"], "sensitivity")
    bad = np.flatnonzero(~np.isfinite(eps) | (eps <= 0))
    if bad.size:
        raise ValueError(f"epsilon must be finite and > 0: {_rows_text(bad)}")

    by_quantity: dict[str, list[int]] = {}
    for i, q in enumerate(quantities):
        by_quantity.setdefault(q, []).append(i)

    seen: dict[tuple[Any, str], int] = {}
    duplicates = []
    for i, (node, q) in enumerate(zip(nodes, quantities, strict=True)):
        key = (node, q)
        if key in seen:
            duplicates.append(i)
        else:
            seen[key] = i
    if duplicates:
        first = duplicates[0]
        raise ValueError(
            f"duplicate reports for the same node and quantity: {_rows_text(duplicates)} "
            f"(row {first} repeats row {seen[(nodes[first], quantities[first])]})"
        )

    all_nodes = sorted(set(nodes), key=lambda v: (str(type(v)), v))
    released = {}
    for q, rows in by_quantity.items():
        expected = _expected_sensitivity(q, d_max)
        wrong = [i for i in rows if sens[i] != expected]
        if wrong:
            raise ValueError(
                f"{q} must be released with sensitivity {expected:g}, "
                f"declared otherwise in {_rows_text(wrong)}"
            )
        eps_q = eps[rows[0]]
        mixed = [i for i in rows if eps[i] != eps_q]
        if mixed:
            raise ValueError(
                f"{q} was released with mixed epsilon (row {rows[0]} has {eps_q:g}): {_rows_text(mixed)}"
            )
        have = {nodes[i] for i in rows}
        missing = [v for v in all_nodes if v not in have]
        if missing:
            shown = ", ".join(repr(v) for v in missing[:_MAX_LISTED])
            raise ValueError(f"{q} is missing for {len(missing)} node(s): {shown}")
        order = sorted(rows, key=lambda i: (str(type(nodes[i])), nodes[i]))
        released[q] = ReleasedValues(
            name=q, values=values[order], epsilon=float(eps_q), sensitivity=expected
        )
    return NodeReports(released=released, d_max=d_max, metadata={"node_ids": all_nodes})
