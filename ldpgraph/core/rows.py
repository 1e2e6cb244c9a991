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

__all__ = ["COLUMNS", "quantity_rows", "concat_rows", "empty_rows", "n_rows", "running_counts",
           "check_plan_rows", "name_codes"]

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
        eps[at], sens[at] = rel.epsilon_of(q), rel.sensitivity_of(q)
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


def name_codes(column: Any) -> tuple[NDArray[np.int32], list[str]] | None:
    """A column of names (``quantity``, ``protocol``) as dictionary codes: ``(int32 codes, names)``
    with the names in order of first appearance (as pyarrow's ``dictionary_encode`` orders them),
    or None when it holds anything but ``str``.

    The columns of a release hold a few name objects, each repeated: one comparison pass per
    distinct name (C speed; an object equal to itself compares without a string comparison)
    replaces converting every row's object to a string, which dominated writing large rounds.

    >>> codes, names = name_codes(np.array(["b", "a", "b", "c"], dtype=object))
    >>> codes.tolist(), names
    ([0, 1, 0, 2], ['b', 'a', 'c'])
    """
    col = np.asarray(column, dtype=object).ravel()
    codes = np.full(col.size, -1, dtype=np.int32)
    names: list[str] = []
    start = 0
    while True:
        todo = np.flatnonzero(codes[start:] < 0)
        if not todo.size:
            return codes, names
        start += int(todo[0])
        name = col[start]
        if type(name) is not str and not isinstance(name, np.str_):
            return None
        name = str(name)
        if len(names) >= 64:  # not a column of a few names: leave it to the generic conversion
            return None
        tail = col[start:]
        hit = (tail == name) & (codes[start:] < 0)
        codes[start:][hit] = len(names)
        names.append(name)


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


def running_counts(before: NDArray[np.int64], keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """For each row, how many rows of its key (``keys``: indices into ``before``) there are up to and
    including it: ``before[key]`` plus its rank among the rows of that key so far. The first row where
    it passes a quota is where a stream of rows breaks it.

    >>> running_counts(np.array([0, 5]), np.array([1, 0, 1, 1])).tolist()
    [6, 1, 7, 8]
    """
    keys = np.asarray(keys, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    ranked = keys[order]
    starts = np.r_[0, np.flatnonzero(ranked[1:] != ranked[:-1]) + 1] if ranked.size else np.zeros(0, np.int64)
    rank = np.arange(ranked.size) - np.repeat(starts, np.diff(np.r_[starts, ranked.size]))
    out = np.empty(keys.size, dtype=np.int64)
    out[order] = np.asarray(before)[ranked] + rank + 1
    return out


#: relative tolerance of the rows' ε against the plan's (a shuffled release's ε₀ is a bisection's output:
#: two machines may differ in its last bits; another δ, n or accounting moves it far more)
EPSILON_RTOL = 1e-6


def check_plan_rows(chunk: Any, plan: Plan, round_number: int) -> dict[str, NDArray[np.int64]]:
    """``{quantity: its rows' indices}`` of a report chunk (``ReportChunk``) whose rows
    are all of ``plan``'s protocol and version, round ``round_number``, a quantity of that round
    at the ε and sensitivity the plan writes (:meth:`~ldpgraph.core.plan.Release.epsilon_of`); else
    ValueError naming the file and row."""
    names = sorted({chunk.protocol_names[c] for c in np.unique(chunk.protocol)})
    if names != [plan.protocol]:
        raise ValueError(f"{chunk.source}: rows of protocol {', '.join(map(repr, names))}, the plan is "
                         f"{plan.protocol!r}")
    bad = np.flatnonzero((chunk.protocol_version != plan.version) | (chunk.round != round_number))
    if bad.size:
        raise ValueError(f"{chunk.where(bad[0])}: the rows of {plan.protocol} here are round {round_number}, "
                         f"version {plan.version}")
    releases = {q: rel for rel in plan.round(round_number).releases for q in rel.quantities}
    out = {}
    for code in np.unique(chunk.quantity):
        name = chunk.quantity_names[code]
        at = np.flatnonzero(chunk.quantity == code)
        if name not in releases:
            raise ValueError(f"{chunk.where(at[0])}: quantity {name!r} is not one of round {round_number} of "
                             f"{plan.protocol} ({', '.join(sorted(releases))})")
        want, sens = releases[name].epsilon_of(name), releases[name].sensitivity_of(name)
        off = np.abs(chunk.epsilon[at] - want) > EPSILON_RTOL * want
        bad = np.flatnonzero(off | (chunk.sensitivity[at] != sens))
        if bad.size:
            i = at[bad[0]]
            raise ValueError(f"{chunk.where(i)}: {name} row at epsilon {float(chunk.epsilon[i])!r}, "
                             f"sensitivity {float(chunk.sensitivity[i])!r}; the plan ({plan.describe()}) has "
                             f"{want!r}, {sens!r}: the nodes ran with other options (--epsilon, --delta, "
                             "--n-users, --accounting, ...); use theirs")
        out[name] = at
    return out
