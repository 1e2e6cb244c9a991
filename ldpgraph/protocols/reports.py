r"""The report wire format: one row per (node, round, quantity), and its canonical values.

Every report a node sends is one row of the **ldpgraph report format, version 1**:

==================== ========= =============================================================
column               type      meaning
==================== ========= =============================================================
``node``             int64     node id: a non-negative integer (canonical, see below)
``round``            int64     protocol round the report belongs to (1 for one-round protocols)
``quantity``         string    ``degree`` or ``kstar_<k>`` (projected local k-star count)
``value``            int64     the noisy integer (discrete Laplace output), ``|value| <= 2**53``
``epsilon``          float64   the budget this quantity was released with (same for all nodes)
``sensitivity``      float64   1 for degrees, C(d_max, k-1) for k-star counts
``protocol``         string    the protocol's name (``degree`` for :class:`DegreeRandomizer`)
``protocol_version`` int64     the protocol's version (``degree``: 1)
==================== ========= =============================================================

The same rows are written as CSV (with this header), JSON Lines (one object per row) and
Parquet (:mod:`ldpgraph.run.reportfiles`). This module is pure: it turns
:class:`~ldpgraph.protocols.randomizer.NodeReports` into columns, and holds the canonical forms
every reader applies, so that a file and an in-memory list mean the same thing:

* **node ids** (:func:`canonical_node_id`): integers, and strings spelling an integer in
  canonical decimal (``"17"``), are the integer 17 — the string ``"1"`` and the integer 1 are
  one node. Strings that look like a number but are not a canonical integer (``"01"``,
  ``"1.0"``, ``" 1"``) are an error, as are floats and booleans; other strings (``"alice"``)
  are labels (in memory only: report files hold integer ids).
* **values** (:func:`canonical_value`): exact integers of magnitude at most 2**53; decimal
  strings are parsed exactly (never through a float), whole floats are accepted, booleans,
  fractions and out-of-range magnitudes are errors.
"""

from __future__ import annotations

import decimal
import json
import math
import numbers
import re
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.rows import COLUMNS
from .randomizer import NodeReports

__all__ = [
    "parse_json",
    "json_int",
    "json_ints",
    "json_number",
    "FORMAT_VERSION",
    "COLUMNS",
    "COLUMN_TYPES",
    "PROTOCOLS",
    "DEGREE_PROTOCOL",
    "MAX_ABS_VALUE",
    "canonical_node_id",
    "canonical_value",
    "expected_sensitivity",
    "report_columns",
    "BROADCAST_FORMAT",
    "BROADCAST_VERSION",
    "broadcast_header",
]

#: version of the row schema below
FORMAT_VERSION = 1
#: the columns of a report row, in file order: :data:`ldpgraph.core.rows.COLUMNS`
#: the type of every column (Arrow / numpy names)
COLUMN_TYPES = {
    "node": "int64",
    "round": "int64",
    "quantity": "string",
    "value": "int64",
    "epsilon": "float64",
    "sensitivity": "float64",
    "protocol": "string",
    "protocol_version": "int64",
}
#: the protocol implemented by :class:`~ldpgraph.protocols.randomizer.DegreeRandomizer`
DEGREE_PROTOCOL = "degree"
#: protocol name -> the version this package writes and reads (one version per protocol): the
#: degree protocol (:mod:`~ldpgraph.protocols.reportset`) and the triangle protocols
#: (:mod:`~ldpgraph.protocols.deploy_triangles`), so that rows of one read as another are
#: named ("another protocol"), never "unknown"
class _ProtocolVersions(Mapping[str, int]):
    """Protocol name -> the version of its report rows, for every deployable protocol of the
    registry (:func:`ldpgraph.protocols.registry.versions`): read when used, so that a protocol
    added to the registry (built in or from a plug-in) is known to the report format without an
    edit here."""

    def _table(self) -> dict[str, int]:
        from .registry import versions

        return versions()

    def __getitem__(self, name: str) -> int:
        return self._table()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return repr(self._table())


#: protocol name -> version of its report rows (every deployable protocol of the registry)
PROTOCOLS: Mapping[str, int] = _ProtocolVersions()
#: largest magnitude of a value a truthful node sends (exact in float64)
MAX_ABS_VALUE = 2**53

_CANONICAL_INT = re.compile(r"(?:0|[1-9][0-9]*)\Z")
_NUMBER_LIKE = re.compile(r"\s*[+-]?(\d|\.\d|inf|nan)", re.IGNORECASE)
_INT_TEXT = re.compile(r"[+-]?[0-9]+\Z")
# longest decimal string parsed as an integer value: 2**53 has 16 digits
_MAX_VALUE_DIGITS = 40


def canonical_node_id(node: Any) -> int | str:
    """The canonical form of a node id: an int, or a non-numeric string label.

    Raises
    ------
    TypeError
        For booleans, floats and other non-integer, non-string types.
    ValueError
        For strings that look like numbers but are not canonical decimal integers.

    Examples
    --------
    >>> canonical_node_id("17"), canonical_node_id(17), canonical_node_id("alice")
    (17, 17, 'alice')
    >>> canonical_node_id("017")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: node id '017' is not a canonical integer (digits without sign, spaces or leading zeros) ...
    """
    if isinstance(node, (bool, np.bool_)):
        raise TypeError(f"node id must be an integer or a string label, got bool {node!r}")
    if isinstance(node, numbers.Integral):
        return int(node)
    if isinstance(node, (str, np.str_)):
        text = str(node)
        if _CANONICAL_INT.match(text):
            return int(text)
        if _NUMBER_LIKE.match(text) or not text.strip() or text != text.strip():
            raise ValueError(
                f"node id {text!r} is not a canonical integer (digits without sign, spaces or leading "
                "zeros) nor a label (a label must not start like a number)"
            )
        return text
    raise TypeError(f"node id must be an integer or a string label, got {type(node).__name__} {node!r}")


def canonical_value(value: Any) -> int:
    """A reported value as an exact Python int (|value| <= 2**53), or a clear error.

    Integers pass; whole floats (``3.0``) pass; decimal strings are parsed exactly
    (``"9007199254740993"`` is refused as too large, not rounded to 2**53); booleans,
    non-whole numbers, NaN and infinities are refused.

    Examples
    --------
    >>> canonical_value("-12"), canonical_value(7.0)
    (-12, 7)
    >>> canonical_value(True)
    Traceback (most recent call last):
        ...
    TypeError: value must be an integer, got bool True
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"value must be an integer, got bool {value!r}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, (str, np.str_, bytes)):
        text = value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
        text = text.strip()
        if len(text) > _MAX_VALUE_DIGITS:
            raise ValueError(
                f"value must have magnitude <= 2**53 (no truthful node sends more), got a "
                f"{len(text)}-character string {text[:20]!r}..."
            )
        if _INT_TEXT.match(text):
            v = int(text)
        else:
            try:
                d = decimal.Decimal(text)
            except decimal.InvalidOperation:
                raise ValueError(f"value must be an integer, got {value!r}") from None
            if not d.is_finite():
                raise ValueError(f"value must be a finite integer, got {value!r}")
            # magnitude before int(): "1e999999999" must never be expanded
            if (d.adjusted() >= 16 and not d.is_zero()) or abs(d) > MAX_ABS_VALUE:
                raise ValueError(
                    f"value must have magnitude <= 2**53 (no truthful node sends more), got {value!r}"
                )
            if (d.adjusted() < 0 and not d.is_zero()) or d != d.to_integral_value():
                raise ValueError(f"value must be an integer (discrete Laplace output), got {value!r}")
            v = int(d)
    elif isinstance(value, (numbers.Rational, decimal.Decimal)):
        frac = Fraction(value)
        if frac.denominator != 1:
            raise ValueError(f"value must be an integer (discrete Laplace output), got {value!r}")
        v = int(frac)
    elif isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"value must be a finite integer, got {value!r}")
        if not f.is_integer():
            raise ValueError(f"value must be an integer (discrete Laplace output), got {value!r}")
        if abs(f) > MAX_ABS_VALUE:
            raise ValueError(
                f"value must have magnitude <= 2**53 (no truthful node sends more), got {value!r}"
            )
        v = int(f)
    else:
        raise TypeError(f"value must be an integer, got {type(value).__name__} {value!r}")
    if abs(v) > MAX_ABS_VALUE:
        raise ValueError(
            f"value must have magnitude <= 2**53 (no truthful node sends more), got an integer of "
            f"{v.bit_length()} bits"
        )
    return v


def expected_sensitivity(quantity: str, d_max: int | None) -> float:
    """The sensitivity the degree protocol prescribes for a released quantity.

    1 for ``degree``; C(d_max, k-1) (at least 1) for ``kstar_<k>``, which needs the public
    degree bound ``d_max``.

    >>> expected_sensitivity("degree", None), expected_sensitivity("kstar_3", 10)
    (1.0, 45.0)
    """
    if quantity == "degree":
        return 1.0
    if quantity.startswith("kstar_") and quantity[6:].isdigit() and int(quantity[6:]) >= 1:
        if d_max is None:
            raise ValueError(f"reports hold {quantity!r}: pass the public degree bound d_max to check them")
        return float(max(math.comb(d_max, int(quantity[6:]) - 1), 1))
    raise ValueError(f"unknown quantity {quantity!r}; expected 'degree' or 'kstar_<k>'")


def report_columns(
    reports: NodeReports,
    *,
    node_ids: Sequence[int] | NDArray[np.integer] | None = None,
    round: int = 1,
    protocol: str = DEGREE_PROTOCOL,
) -> dict[str, NDArray[Any]]:
    """The report rows of ``reports`` as columns (node-major: each node's quantities together).

    Parameters
    ----------
    reports : NodeReports
    node_ids : sequence of int, optional
        The nodes' ids, one per report, non-negative integers. Default:
        ``reports.metadata["node_ids"]`` if present, else 0..n-1.
    round : int, default 1
        The protocol round.
    protocol : str, default ``"degree"``
        A protocol of :data:`PROTOCOLS`; its version is written with every row.

    Returns
    -------
    dict of numpy arrays
        Keyed by :data:`COLUMNS`: int64 for node, round, value and protocol_version, float64
        for epsilon and sensitivity, object (str) for quantity and protocol.

    Examples
    --------
    >>> from ldpgraph.protocols import DegreeRandomizer
    >>> rep = DegreeRandomizer(epsilon=1.0).randomize([3, 1], rng=0)
    >>> cols = report_columns(rep, node_ids=[10, 11])
    >>> cols["node"].tolist(), cols["quantity"].tolist(), cols["protocol_version"].tolist()
    ([10, 11], ['degree', 'degree'], [1, 1])
    """
    if not isinstance(reports, NodeReports):
        raise TypeError(f"reports must be NodeReports, got {type(reports).__name__}")
    if protocol != DEGREE_PROTOCOL:
        hint = " (its rows come from ldpgraph.run.files.release_to_file)" if protocol in PROTOCOLS else ""
        raise ValueError(
            f"protocol must be {DEGREE_PROTOCOL!r} (NodeReports are degree-protocol rows), "
            f"got {protocol!r}{hint}"
        )
    if isinstance(round, (bool, np.bool_)) or not isinstance(round, numbers.Integral) or round < 1:
        raise ValueError(f"round must be an integer >= 1, got {round!r}")
    n = reports.n_nodes
    if node_ids is None:
        node_ids = reports.metadata.get("node_ids") if isinstance(reports.metadata, Mapping) else None
    if node_ids is None:
        ids = np.arange(n, dtype=np.int64)
    else:
        canon = [canonical_node_id(v) for v in node_ids]
        bad = [v for v in canon if not isinstance(v, int) or v < 0 or v >= 2**63]
        if bad:
            raise ValueError(
                f"node_ids must be non-negative integers below 2**63 in report files, got {bad[0]!r}"
            )
        ids = np.asarray(canon, dtype=np.int64)
        if ids.shape != (n,):
            raise ValueError(f"node_ids must hold one id per node ({n}), got {ids.size}")
        if np.unique(ids).size != n:
            raise ValueError("node_ids must be distinct")
    names = list(reports.released)
    q = len(names)
    values = np.empty((n, q), dtype=np.int64)
    eps = np.empty((n, q), dtype=np.float64)
    sens = np.empty((n, q), dtype=np.float64)
    for j, name in enumerate(names):
        rel = reports.released[name]
        values[:, j] = rel.values
        eps[:, j] = rel.epsilon
        sens[:, j] = rel.sensitivity
    rows = n * q
    return {
        "node": np.repeat(ids, q),
        "round": np.full(rows, int(round), dtype=np.int64),
        "quantity": np.array(names * n, dtype=object),
        "value": values.ravel(),
        "epsilon": eps.ravel(),
        "sensitivity": sens.ravel(),
        "protocol": np.full(rows, protocol, dtype=object),
        "protocol_version": np.full(rows, PROTOCOLS[protocol], dtype=np.int64),
    }


# ------------------------------------------------------------------------------ broadcasts

#: the format tag and version of JSON broadcast files (what the curator sends between rounds:
#: :class:`~ldpgraph.protocols.degrees.local_kstars.DegreeBound`)
BROADCAST_FORMAT = "ldpgraph-broadcast"
BROADCAST_VERSION = 1


class _RepeatedKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _RepeatedKey(f"the key {key[:40]!r} appears twice in one object (which one holds? refused)")
    return out


def parse_json(text: str | bytes, where: str) -> Any:
    """Strict JSON: the document, or a ValueError that names ``where`` for anything else.

    Refused: text that is not UTF-8, invalid JSON (line and column given), a key repeated in an
    object (``json`` would keep the last silently), an integer beyond Python's 4,300-digit
    conversion limit, nesting deeper than the interpreter's recursion limit.

    >>> parse_json('{"a": 1}', "b.json")
    {'a': 1}
    >>> parse_json('{"a": 1, "a": 2}', "b.json")
    Traceback (most recent call last):
        ...
    ValueError: b.json: the key 'a' appears twice in one object (which one holds? refused)
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{where}: not UTF-8 text (byte {exc.start}); JSON is UTF-8") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}; "
                         "truncated or edited?)") from None
    except _RepeatedKey as exc:
        raise ValueError(f"{where}: {exc}") from None
    except ValueError as exc:  # an integer of more digits than int() converts
        raise ValueError(f"{where}: a number too long to be read ({exc})") from None
    except RecursionError:
        raise ValueError(f"{where}: JSON nested too deeply") from None


def json_int(doc: dict[str, Any], key: str, where: str, lo: int = 0, hi: int = 2**63 - 1) -> int:
    """``doc[key]``, an integer in [lo, hi] (a JSON boolean is not one); ValueError naming ``where``."""
    x = doc.get(key)
    if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
        raise ValueError(f"{where}: {key} must be an integer in [{lo}, {hi}], got {str(x)[:40]}")
    return x


def json_number(doc: dict[str, Any], key: str, where: str, *, positive: bool = False) -> float:
    """``doc[key]``, a finite number (positive if asked); ValueError naming ``where``."""
    x = doc.get(key)
    if (isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x)
            or (positive and not x > 0)):
        raise ValueError(f"{where}: {key} must be a finite{' positive' if positive else ''} number, "
                         f"got {str(x)[:40]}")
    return float(x)


def json_ints(doc: dict[str, Any], key: str, where: str, lo: int = -(2**53), hi: int = 2**53,
              size: int | None = None) -> Any:
    """``doc[key]``, a list of integers in [lo, hi] (of ``size`` of them if given), as int64;
    ValueError naming ``where`` and the first bad item."""
    x = doc.get(key)
    if not isinstance(x, list) or (size is not None and len(x) != size):
        want = "a list" if size is None else f"a list of {size:,}"
        got = type(x).__name__ if not isinstance(x, list) else f"{len(x):,} items"
        raise ValueError(f"{where}: {key} must be {want} integers, got {got}")
    for i, v in enumerate(x):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError(f"{where}: {key}[{i}] must be an integer in [{lo}, {hi}], got {str(v)[:40]}")
    return np.asarray(x, dtype=np.int64).reshape(-1)


def broadcast_header(path: Any, line: str) -> dict[str, Any]:
    """The JSON header of a broadcast file's second line, ``# {...}`` (ValueError naming ``path`` and line 2
    otherwise).

    >>> broadcast_header("b.txt", '# {"n_nodes": 4}')
    {'n_nodes': 4}
    """
    header = parse_json(line[1:], f"{path} line 2") if line.startswith("#") else None
    if not isinstance(header, dict):
        raise ValueError(f"{path} line 2: expected '# {{...}}' (the broadcast's JSON header)")
    return header
