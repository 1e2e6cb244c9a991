r"""Turning the rows a curator receives into validated :class:`NodeReports`.

A deployment receives one row per node and released quantity (the report format of
:mod:`ldpgraph.protocols.reports`; the ``round``, ``protocol`` and ``protocol_version`` columns
are optional here)::

    node, quantity, value, epsilon, sensitivity
    17,   degree,   42,    0.5,     1
    17,   kstar_2,  -300,  0.5,     49

:func:`reports_from_records` accepts such rows (dicts, a mapping of equal-length columns, or a
pandas DataFrame) and checks, before computing anything, that the set is one a truthful
population could have sent:

* node ids are canonical (:func:`~ldpgraph.protocols.reports.canonical_node_id`: the string
  ``"1"`` and the integer 1 are one node; floats, booleans and number-like strings are refused);
* every value is an exact integer of magnitude <= 2**53
  (:func:`~ldpgraph.protocols.reports.canonical_value`; decimal strings are parsed exactly);
* no (node, quantity) pair appears twice;
* every node reports every quantity (no missing rows), and, when the expected node set is
  given, every expected node reports and no other node does;
* each quantity was released by all nodes with one and the same epsilon;
* the declared sensitivity is the one the protocol prescribes (1 for degrees, C(d_max, k-1) for
  local k-star counts with the public bound d_max);
* where given, the protocol and its version are ones this package reads, and all rows belong
  to one round.

Any violation raises ``ValueError`` (``TypeError`` for a malformed container) naming the
offending rows (0-based positions in the input), and no partial result is produced.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._validation import canonical_quantity, exact_number
from .randomizer import NodeReports, ReleasedValues
from .reports import MAX_ABS_VALUE, PROTOCOLS, canonical_node_id, canonical_value, expected_sensitivity

__all__ = ["reports_from_records"]

_COLUMNS = ("node", "quantity", "value", "epsilon", "sensitivity")
_OPTIONAL = ("round", "protocol", "protocol_version")
_MAX_LISTED = 10


def _rows_text(rows: Iterable[int]) -> str:
    rows = [int(r) for r in rows]
    shown = ", ".join(str(r) for r in rows[:_MAX_LISTED])
    more = f" and {len(rows) - _MAX_LISTED} more" if len(rows) > _MAX_LISTED else ""
    return f"row{'s' if len(rows) > 1 else ''} {shown}{more}"


def _is_dataframe(records: Any) -> bool:
    return hasattr(records, "columns") and hasattr(records, "iloc") and hasattr(records, "to_numpy")


def _columns(records: Any) -> dict[str, Any]:
    if _is_dataframe(records):
        names = [str(c) for c in records.columns]
        missing = [c for c in _COLUMNS if c not in names]
        if missing:
            raise ValueError(f"report columns missing: {missing}; expected {list(_COLUMNS)}")
        return {c: records[c].to_numpy() for c in _COLUMNS + _OPTIONAL if c in names}
    if isinstance(records, Mapping):
        missing = [c for c in _COLUMNS if c not in records]
        if missing:
            raise ValueError(f"report columns missing: {missing}; expected {list(_COLUMNS)}")
        cols = {}
        for c in _COLUMNS + _OPTIONAL:
            if c in records:
                v = records[c]
                cols[c] = v if isinstance(v, np.ndarray) and v.ndim == 1 else list(v)
        lengths = {c: len(v) for c, v in cols.items()}
        if len(set(lengths.values())) != 1:
            raise ValueError(f"report columns must have equal lengths, got {lengths}")
        return cols
    if isinstance(records, (str, bytes)):
        raise TypeError("records must be rows (mappings), a mapping of columns or a DataFrame, got a string")
    cols: dict[str, list[Any]] = {c: [] for c in _COLUMNS}
    optional: set[str] = set()
    rows = []
    for i, row in enumerate(records):
        if not isinstance(row, Mapping):
            raise TypeError(f"row {i} must be a mapping with keys {list(_COLUMNS)}, got {type(row).__name__}")
        missing = [c for c in _COLUMNS if c not in row]
        if missing:
            raise ValueError(f"row {i} lacks {missing}; expected keys {list(_COLUMNS)}")
        optional.update(c for c in _OPTIONAL if c in row)
        rows.append(row)
    for c in optional:
        lacking = [i for i, row in enumerate(rows) if c not in row]
        if lacking:
            raise ValueError(f"{c} is given in some rows but missing in {_rows_text(lacking)}")
    for c in _COLUMNS + tuple(sorted(optional)):
        cols[c] = [row[c] for row in rows]
    return cols


def _as_float(values: Any, column: str) -> np.ndarray:
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        return values.astype(np.float64)
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


def _as_values(values: Any) -> np.ndarray:
    """The value column as exact int64, or ValueError naming the rows and what is wrong."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        big = np.flatnonzero(np.abs(values.astype(np.float64)) > MAX_ABS_VALUE)
        if big.size == 0:
            return values.astype(np.int64)
        values = values.tolist()
    elif isinstance(values, np.ndarray) and values.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(values) | (values != np.round(values)))
        if bad.size:
            raise ValueError(f"value must be an integer (discrete Laplace output): {_rows_text(bad)}")
        big = np.flatnonzero(np.abs(values) > MAX_ABS_VALUE)
        if big.size:
            raise ValueError(
                "value is too large: it must have magnitude <= 2**53 (no truthful node sends more): "
                f"{_rows_text(big)}"
            )
        return values.astype(np.int64)
    out = np.empty(len(values), dtype=np.int64)
    problems: dict[str, list[int]] = {}
    for i, v in enumerate(values):
        try:
            out[i] = canonical_value(v)
        except TypeError:
            problems.setdefault("value must be numeric", []).append(i)
        except ValueError as exc:
            key = (
                "value is too large: it must have magnitude <= 2**53 (no truthful node sends more)"
                if "magnitude" in str(exc)
                else "value must be an integer (discrete Laplace output)"
            )
            problems.setdefault(key, []).append(i)
    if problems:
        key, rows = min(problems.items(), key=lambda kv: kv[1][0])
        raise ValueError(f"{key}: {_rows_text(rows)}")
    return out


def _as_nodes(nodes: Any) -> list[int | str]:
    if isinstance(nodes, np.ndarray) and nodes.dtype.kind in "iu":
        return nodes.tolist()
    out: list[int | str] = []
    bad: list[int] = []
    first: Exception | None = None
    for i, v in enumerate(nodes):
        try:
            out.append(canonical_node_id(v))
        except (TypeError, ValueError) as exc:
            bad.append(i)
            first = first or exc
    if bad:
        raise ValueError(f"node ids must be canonical: {_rows_text(bad)} ({first})")
    return out


def _node_key(v: int | str) -> tuple[bool, int | str]:
    return (isinstance(v, str), v)


def _check_protocol(cols: dict[str, Any], round: int | None) -> None:
    if "protocol" in cols:
        names = [str(p) for p in cols["protocol"]]
        unknown = [i for i, p in enumerate(names) if p not in PROTOCOLS]
        if unknown:
            raise ValueError(
                f"unknown protocol {names[unknown[0]]!r} in {_rows_text(unknown)}; "
                f"this package reads {sorted(PROTOCOLS)}"
            )
        if len(set(names)) > 1:
            other = [i for i, p in enumerate(names) if p != names[0]]
            raise ValueError(f"reports mix protocols ({names[0]!r} in row 0): {_rows_text(other)}")
        if names[0] != "degree":
            raise ValueError(
                f"rows of protocol {names[0]!r}: these records are degree-protocol reports; the triangle "
                "protocols' rows are curated by ldpgraph.protocols.deploy_triangles (Round1Accumulator)"
            )
        if "protocol_version" not in cols:
            raise ValueError("a protocol column needs a protocol_version column")
        want = PROTOCOLS[names[0]]
        wrong = []
        for i, v in enumerate(cols["protocol_version"]):
            try:
                ok = canonical_value(v) == want
            except (TypeError, ValueError):
                ok = False
            if not ok:
                wrong.append(i)
        if wrong:
            got = cols["protocol_version"][wrong[0]]
            raise ValueError(
                f"protocol {names[0]!r} version {got!r} in {_rows_text(wrong)}: "
                f"this package reads version {want}"
            )
    elif "protocol_version" in cols:
        raise ValueError("a protocol_version column needs a protocol column")
    if "round" in cols:
        rounds = []
        bad = []
        for i, v in enumerate(cols["round"]):
            try:
                r = canonical_value(v)
            except (TypeError, ValueError):
                r = 0
            if r < 1:
                bad.append(i)
            rounds.append(r)
        if bad:
            raise ValueError(f"round must be an integer >= 1: {_rows_text(bad)}")
        want_round = rounds[0] if round is None else round
        other = [i for i, r in enumerate(rounds) if r != want_round]
        if other:
            raise ValueError(f"reports must all belong to round {want_round}: {_rows_text(other)}")


def reports_from_records(
    records: Any,
    *,
    d_max: int | None = None,
    expected_nodes: Iterable[Any] | None = None,
    round: int | None = None,
) -> NodeReports:
    """Validate received report rows and assemble them into :class:`NodeReports`.

    Parameters
    ----------
    records : iterable of mappings, mapping of columns, or pandas DataFrame
        Rows with keys ``node, quantity, value, epsilon, sensitivity`` (and optionally
        ``round, protocol, protocol_version``).
    d_max : int, optional
        The public degree bound, required when local k-star counts are present.
    expected_nodes : iterable, optional
        The public node set. When given, a node of this set that sent nothing, or a report
        from a node outside it, is an error.
    round : int, optional
        The round the rows must belong to (when they carry a ``round`` column); default: the
        round of the first row, shared by all.

    Returns
    -------
    NodeReports
        One :class:`ReleasedValues` per quantity, nodes in increasing id order (integer ids
        first, then labels; ``metadata["node_ids"]``).

    Examples
    --------
    >>> rows = [
    ...     {"node": 1, "quantity": "degree", "value": 4, "epsilon": 1.0, "sensitivity": 1},
    ...     {"node": "0", "quantity": "degree", "value": -1, "epsilon": 1.0, "sensitivity": 1},
    ... ]
    >>> reports_from_records(rows).degrees.values
    array([-1,  4])
    >>> reports_from_records(rows, expected_nodes=[0, 1, 2])
    Traceback (most recent call last):
        ...
    ValueError: 1 expected node(s) sent no report: 2
    >>> rows[1]["value"] = 2.5
    >>> reports_from_records(rows)
    Traceback (most recent call last):
        ...
    ValueError: value must be an integer (discrete Laplace output): row 1
    """
    if round is not None:
        if isinstance(round, (bool, np.bool_)) or not isinstance(round, numbers.Integral) or round < 1:
            raise ValueError(f"round must be an integer >= 1, got {round!r}")
        round = int(round)
    cols = _columns(records)
    n_rows = len(cols["node"])
    if n_rows == 0:
        raise ValueError("no reports received")
    nodes = _as_nodes(cols["node"])
    quantities = []
    for i, q in enumerate(cols["quantity"]):
        try:
            quantities.append(canonical_quantity(str(q)))
        except ValueError as exc:
            raise ValueError(f"row {i}: {exc}") from None
    values = _as_values(cols["value"])
    eps = _as_float(cols["epsilon"], "epsilon")
    sens = _as_float(cols["sensitivity"], "sensitivity")
    bad = np.flatnonzero(~np.isfinite(eps) | (eps <= 0))
    if bad.size:
        raise ValueError(f"epsilon must be finite and > 0: {_rows_text(bad)}")
    _check_protocol(cols, round)

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

    all_nodes = sorted(set(nodes), key=_node_key)
    if expected_nodes is not None:
        if isinstance(expected_nodes, (str, bytes)):
            raise TypeError("expected_nodes must be an iterable of node ids, got a string")
        try:
            expected = {canonical_node_id(v) for v in expected_nodes}
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"expected_nodes: {exc}") from None
        absent = sorted(expected.difference(all_nodes), key=_node_key)
        if absent:
            shown = ", ".join(repr(v) for v in absent[:_MAX_LISTED])
            raise ValueError(f"{len(absent)} expected node(s) sent no report: {shown}")
        extra = [i for i, v in enumerate(nodes) if v not in expected]
        if extra:
            raise ValueError(
                f"reports from node(s) outside expected_nodes (e.g. {nodes[extra[0]]!r}): {_rows_text(extra)}"
            )
    released = {}
    for q, rows in by_quantity.items():
        expected_sens = expected_sensitivity(q, d_max)
        wrong = [i for i in rows if sens[i] != expected_sens]
        if wrong:
            raise ValueError(
                f"{q} must be released with sensitivity {expected_sens:g}, "
                f"declared otherwise in {_rows_text(wrong)}"
            )
        eps_q = eps[rows[0]]
        mixed = [i for i in rows if eps[i] != eps_q]
        if mixed:
            raise ValueError(
                f"{q} was released with mixed epsilon (row {rows[0]} has {eps_q:g}, row {mixed[0]} has "
                f"{eps[mixed[0]]:g}): {_rows_text(mixed)}"
            )
        have = {nodes[i] for i in rows}
        missing = [v for v in all_nodes if v not in have]
        if missing:
            shown = ", ".join(repr(v) for v in missing[:_MAX_LISTED])
            raise ValueError(f"{q} is missing for {len(missing)} node(s): {shown}")
        order = sorted(rows, key=lambda i: _node_key(nodes[i]))
        released[q] = ReleasedValues(
            name=q, values=values[order], epsilon=float(eps_q), sensitivity=expected_sens
        )
    return NodeReports(released=released, d_max=d_max, metadata={"node_ids": all_nodes})
