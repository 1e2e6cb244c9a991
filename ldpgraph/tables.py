"""Results as tables in a notebook: ``to_pandas()`` and ``_repr_html_`` from one column mapping.

Every result type (experiment records and summary, a curate result, a single simulated run)
describes itself once as ordered columns, the same columns as the CSV file it writes (where it
writes one); :func:`to_frame` turns them into a pandas DataFrame (pandas is imported only
then) and :func:`html_table` into the HTML a notebook shows, without pandas.

Examples
--------
>>> cols = {"method": ["a", "b<"], "value": [1.5, float("nan")], "k": [2, None]}
>>> print(html_table(cols))  # doctest: +NORMALIZE_WHITESPACE
<table class="ldpgraph"><thead><tr><th>method</th><th>value</th><th>k</th></tr></thead><tbody>
<tr><td>a</td><td>1.5</td><td>2</td></tr>
<tr><td>b&lt;</td><td>nan</td><td></td></tr>
</tbody></table>
>>> to_frame(cols, integers=("k",)).dtypes["k"]
Int64Dtype()
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["import_pandas", "to_frame", "html_table", "node_series"]


def import_pandas() -> Any:
    """pandas, or an ImportError that says how to install it."""
    try:
        import pandas
    except ImportError:  # pandas is not a dependency of ldpgraph: the "notebook" extra brings it
        raise ImportError(
            "to_pandas() needs pandas, which ldpgraph does not install by itself: "
            'pip install "ldpgraph[notebook]" (or pip install pandas)'
        ) from None
    return pandas


def node_series(values: Mapping[Any, Any], name: str | None = None) -> Any:
    """A pandas Series of per-node values ``{label: value}``, indexed by the labels (index name
    ``"node"``)."""
    pd = import_pandas()
    return pd.Series(list(values.values()), index=pd.Index(list(values), name="node"), name=name)


def to_frame(columns: Mapping[str, Sequence[Any]], *, integers: Sequence[str] = ()) -> Any:
    """A DataFrame of ``columns`` (in order); the ``integers`` columns are nullable ``Int64``
    (None where a value is missing, as an empty CSV field)."""
    pd = import_pandas()
    frame = pd.DataFrame({name: list(values) for name, values in columns.items()})
    for name in integers:
        frame[name] = pd.array([None if v is None else int(v) for v in columns[name]], dtype="Int64")
    return frame


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return html.escape(str(value))


def html_table(
    columns: Mapping[str, Sequence[Any]], *, max_rows: int = 60, caption: str | None = None
) -> str:
    """An HTML table of ``columns``: the first ``max_rows`` rows, and a last row saying how many
    more there are."""
    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    head = "".join(f"<th>{html.escape(c)}</th>" for c in names)
    rows = []
    for i in range(min(n, max_rows)):
        rows.append("<tr>" + "".join(f"<td>{_cell(columns[c][i])}</td>" for c in names) + "</tr>")
    if n > max_rows:
        rows.append(f'<tr><td colspan="{len(names)}">... {n - max_rows:,} more rows (to_pandas() has them '
                    "all)</td></tr>")
    cap = "" if caption is None else f"<caption>{html.escape(caption)}</caption>"
    return (f'<table class="ldpgraph">{cap}<thead><tr>{head}</tr></thead><tbody>\n' + "\n".join(rows)
            + "\n</tbody></table>")
