"""Edge tables: pandas DataFrames and Parquet files with one edge per row.

The two node columns are named ``source`` and ``target`` (or another known pair: ``src``/
``dst``, ``from``/``to``, ``u``/``v``, ...), or are the only two columns, or are given with
``columns=``. Other columns (weights, timestamps) are ignored with a note, or refused with
``strict=True``. Node ids are integers or strings (names, sorted as Python sorts them); missing
values and other types are errors naming the column and the row. pandas and pyarrow are
imported lazily; Parquet files are read in record batches (bounded memory besides the edges).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ldpgraph.graph.core import Graph, _build_owned, _graph_from_owned_ids

__all__ = ["from_dataframe", "read_parquet_edges"]

_KNOWN = [
    ("source", "target"), ("src", "dst"), ("from", "to"), ("u", "v"), ("node1", "node2"),
    ("node_1", "node_2"), ("fromnodeid", "tonodeid"), ("id1", "id2"), ("source_id", "target_id"),
    ("head", "tail"),
]


def from_dataframe(
    df: Any,
    *,
    columns: tuple[Any, Any] | None = None,
    strict: bool = False,
    source: str = "pandas.DataFrame",
) -> Graph:
    """Build a :class:`~ldpgraph.graph.Graph` from a pandas DataFrame of edges (one per row).

    Parameters
    ----------
    df : pandas.DataFrame
        Edges; see the module docstring for which columns hold the node ids.
    columns : pair of column labels or positions, optional
        The two node columns.
    strict : bool
        Refuse extra columns unless ``columns`` is given.
    source : str
        Description kept in the load report.

    Returns
    -------
    Graph

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"source": ["a", "b"], "target": ["b", "c"], "weight": [1.0, 2.0]})
    >>> g = from_dataframe(df)
    >>> g.node_ids.tolist(), g.degrees.tolist()
    (['a', 'b', 'c'], [1, 2, 1])
    >>> g.report.notes
    ("node ids from columns 'source' and 'target'; the other column ignored ('weight')",)
    """
    import pandas as pd
    import pyarrow as pa

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    labels = list(df.columns)
    i, j, notes = _pick(labels, columns, strict, source)
    arrays = []
    for k in (i, j):
        series = df.iloc[:, k]
        try:
            arrays.append(pa.chunked_array([pa.array(series, from_pandas=True)]))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise TypeError(
                f"{source}: column {labels[k]!r} holds values that are neither integers nor "
                f"strings ({exc})"
            ) from exc
    return _graph_from_arrow(arrays[0], arrays[1], [str(labels[i]), str(labels[j])], source, notes)


def read_parquet_edges(
    path: str | os.PathLike[str],
    *,
    columns: tuple[Any, Any] | None = None,
    strict: bool = False,
) -> Graph:
    """Read a Parquet edge table (one edge per row) into a :class:`~ldpgraph.graph.Graph`.

    The columns are chosen as in :func:`from_dataframe`; only the two node columns are read,
    in record batches.

    Examples
    --------
    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> path = os.path.join(tempfile.mkdtemp(), "edges.parquet")
    >>> pq.write_table(pa.table({"src": [1, 2, 2], "dst": [2, 3, 1]}), path)
    >>> g = read_parquet_edges(path)
    >>> g.n_edges, g.report.reverse_duplicates_dropped
    (2, 1)
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = os.fspath(path)
    try:
        pf = pq.ParquetFile(name)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"{name}: not a readable Parquet file ({exc})") from exc
    labels = list(pf.schema_arrow.names)
    i, j, notes = _pick(labels, columns, strict, name)
    want = [labels[i], labels[j]]
    us, vs = [], []
    try:
        for batch in pf.iter_batches(columns=want, batch_size=1 << 20):
            us.append(batch.column(0))
            vs.append(batch.column(1))
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"{name}: corrupt Parquet data ({exc})") from exc
    schema = pf.schema_arrow
    u = pa.chunked_array(us, type=schema.field(want[0]).type)
    v = pa.chunked_array(vs, type=schema.field(want[1]).type)
    return _graph_from_arrow(u, v, want, name, notes)


def _pick(
    labels: list[Any], columns: tuple[Any, Any] | None, strict: bool, source: str
) -> tuple[int, int, list[str]]:
    """Positions of the two node columns, and the note on the others."""
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be a bool, got {strict!r}")
    notes: list[str] = []
    if columns is not None:
        if not isinstance(columns, (tuple, list)) or len(columns) != 2:
            raise ValueError(f"columns must be a pair of column names or positions, got {columns!r}")
        pos = []
        for c in columns:
            if c in labels:
                pos.append(labels.index(c))
            elif isinstance(c, (int, np.integer)) and not isinstance(c, bool) and 0 <= c < len(labels):
                pos.append(int(c))
            else:
                raise ValueError(f"{source}: no column {c!r} (columns: {labels})")
        if pos[0] == pos[1]:
            raise ValueError(f"columns must name two different columns, got {columns!r}")
        i, j = pos
    else:
        lower = [str(x).lower() for x in labels]
        known = next(((a, b) for a, b in _KNOWN if a in lower and b in lower), None)
        if known is not None:
            i, j = lower.index(known[0]), lower.index(known[1])
        elif len(labels) >= 2:
            i, j = 0, 1
        else:
            raise ValueError(f"{source}: an edge table needs two node columns, got {labels}")
        if len(labels) > 2 and strict:
            raise ValueError(
                f"{source}: {len(labels)} columns {labels}; pass columns=(a, b) (--columns A,B) to "
                "name the two node columns (strict=True refuses extra columns)"
            )
    others = [labels[k] for k in range(len(labels)) if k not in (i, j)]
    if others or columns is None and (i, j) != (0, 1):
        which = "column" if len(others) == 1 else "columns"
        notes.append(
            f"node ids from columns {labels[i]!r} and {labels[j]!r}"
            + (f"; the other {which} ignored ({', '.join(map(repr, others))})" if others else "")
        )
    return i, j, notes


def _graph_from_arrow(u: Any, v: Any, names: list[str], source: str, notes: list[str]) -> Graph:
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = []
    for col, label in ((u, names[0]), (v, names[1])):
        if pa.types.is_dictionary(col.type):
            col = pa.chunked_array([c.dictionary_decode() for c in col.chunks], type=col.type.value_type)
        if col.null_count:
            row = int(pc.index(pc.is_null(col), True).as_py())
            raise ValueError(f"{source}: column {label!r} has a missing node id at row {row}")
        if pa.types.is_integer(col.type):
            arr = col.to_numpy()
            if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
                raise ValueError(f"{source}: column {label!r} has node ids above 2**63 - 1")
            cols.append(arr.astype(np.int64, copy=False))
        elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            cols.append(col.cast(pa.string()))
        else:
            raise TypeError(
                f"{source}: column {label!r} has type {col.type}; node ids must be integers or "
                "strings (names)"
            )
    a, b = cols
    if isinstance(a, np.ndarray) != isinstance(b, np.ndarray):
        raise TypeError(
            f"{source}: columns {names[0]!r} and {names[1]!r} must both hold integers or both "
            "strings"
        )
    del cols, col
    if isinstance(a, np.ndarray):
        del arr
        ids = [a, b]  # the only references: the build frees each column once read
        del a, b
        return _graph_from_owned_ids(ids, source=source, notes=tuple(notes))
    pu, pv, node_ids = _name_positions(list(a.chunks), list(b.chunks))
    del a, b
    positions = [pu, pv]
    del pu, pv
    return _build_owned(
        positions, node_ids.size, node_ids, source=source, relabelled=True, notes=tuple(notes)
    )


def _name_positions(
    us: list[Any], vs: list[Any]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any]]:
    """Positions of the names in their sorted distinct list (pyarrow kernels, no Python loop).

    Shared with :mod:`ldpgraph.graph.edgelist` (text edge lists with names), which imports it
    from here.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    u = pa.chunked_array(us, type=pa.string())
    v = pa.chunked_array(vs, type=pa.string())
    distinct = pc.unique(pa.chunked_array(us + vs, type=pa.string()))
    # UTF-8 byte order is code point order, which is Python's order of str
    ordered = pc.take(distinct, pc.array_sort_indices(distinct))
    names = np.empty(len(ordered), dtype=object)
    names[:] = ordered.to_pylist()
    pu = pc.index_in(u, value_set=ordered).to_numpy().astype(np.int64)
    pv = pc.index_in(v, value_set=ordered).to_numpy().astype(np.int64)
    return pu, pv, names
