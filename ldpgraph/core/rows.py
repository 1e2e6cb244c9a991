r"""Report rows as columns: one row per (node, round, quantity), built from the plan.

The columns are the report format (:mod:`ldpgraph.protocols.reports`, version 1); the ``epsilon``
and ``sensitivity`` of every row are read from the plan's release of its quantity, so a row
can never disagree with the budget the plan prints.

Examples
--------
>>> from ldpgraph.core.plan import Plan, Release, RoundPlan
>>> plan = Plan("toy", 1, 1.0, (RoundPlan(1, "count", (Release(("count",), "dlap", 1.0, 2.0),)),))
>>> cols = quantity_rows(plan, 1, [4, 5], "count", [10, -3])
>>> cols["node"].tolist(), cols["value"].tolist(), cols["sensitivity"].tolist()
([4, 5], [10, -3], [2.0, 2.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .plan import Plan

__all__ = ["COLUMNS", "quantity_rows", "concat_rows", "empty_rows", "n_rows"]

#: the columns of a report row, in file order
COLUMNS = ("node", "round", "quantity", "value", "epsilon", "sensitivity", "protocol", "protocol_version")

Rows = dict[str, NDArray[Any]]


def quantity_rows(
    plan: Plan, round: int, nodes: ArrayLike, quantity: str | ArrayLike, values: ArrayLike
) -> Rows:
    """Rows of ``nodes`` (one per value): ``quantity`` one name, or one name per row."""
    node = np.asarray(nodes, dtype=np.int64).ravel()
    m = node.size
    if isinstance(quantity, str):
        names = np.full(m, quantity, dtype=object)
    else:
        names = np.asarray(quantity, dtype=object).ravel()
    if names.size != m:
        raise ValueError(f"{m} rows but {names.size} quantities")
    eps = np.empty(m, dtype=np.float64)
    sens = np.empty(m, dtype=np.float64)
    for q in (set(names.tolist()) if m else ()):
        rel = plan.release(q)
        at = names == q
        eps[at], sens[at] = rel.epsilon, rel.sensitivity_of(q)
    return {
        "node": node,
        "round": np.full(m, int(round), dtype=np.int64),
        "quantity": names,
        "value": np.asarray(values, dtype=np.int64).ravel(),
        "epsilon": eps,
        "sensitivity": sens,
        "protocol": np.full(m, plan.protocol, dtype=object),
        "protocol_version": np.full(m, plan.version, dtype=np.int64),
    }


def empty_rows(plan: Plan, round: int) -> Rows:
    """No rows (the columns with their types)."""
    return quantity_rows(plan, round, [], [], [])


def concat_rows(parts: Sequence[Rows]) -> Rows:
    """The rows of ``parts`` in order (``parts`` non-empty)."""
    if not parts:
        raise ValueError("no row parts to concatenate")
    if len(parts) == 1:
        return parts[0]
    return {c: np.concatenate([p[c] for p in parts]) for c in COLUMNS}


def n_rows(rows: Rows) -> int:
    """How many rows."""
    return int(len(rows["node"]))
