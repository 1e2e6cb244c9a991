r"""Tidy trial records of an experiment: one row per trial, grouped by cell; CSV in and out.

A row holds ``graph, method, statistic, k, epsilon, trial, estimate, truth, seed, spawn_key``:

* ``k`` is the statistic's integer parameter (star size for ``kstars``, power for
  ``degree_moment``), empty where the statistic has none;
* ``seed`` is the experiment's root entropy and ``spawn_key`` is ``"<cell key>/<block>"``: the
  trial is draw number ``trial % block_size`` of the stream
  ``SeedSequence(entropy=seed, spawn_key=(cell key, block))`` (see
  :mod:`ldpgraph.experiments.seeding`).

Floats are written with Python's shortest round-trip ``repr``, so a CSV read back gives the
same numbers bit for bit, and two runs with the same numbers write byte-identical files.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write

__all__ = ["COLUMNS", "CellRecords", "Records", "write_records_csv", "read_records_csv"]

#: CSV header of the trial records, in order
COLUMNS: tuple[str, ...] = (
    "graph",
    "method",
    "statistic",
    "k",
    "epsilon",
    "trial",
    "estimate",
    "truth",
    "seed",
    "spawn_key",
)


@dataclass(frozen=True, eq=False)
class CellRecords:
    """All trials of one cell of the grid.

    Attributes
    ----------
    graph, method, statistic : str
    k : int or None
        Parameter of the statistic, None where it has none.
    epsilon : float
    truth : float
        The true value of the statistic on the graph.
    estimates : ndarray of float64, shape (n_trials,)
        Trial ``t``'s estimate at position ``t``.
    seed : int
        Root entropy of the experiment.
    spawn_keys : tuple of str
        ``"<cell key>/<block>"`` of each trial.
    """

    graph: str
    method: str
    statistic: str
    k: int | None
    epsilon: float
    truth: float
    estimates: NDArray[np.float64]
    seed: int
    spawn_keys: tuple[str, ...]

    @property
    def n_trials(self) -> int:
        return int(self.estimates.size)

    @property
    def key(self) -> tuple[str, str, str, int | None, float]:
        """``(graph, method, statistic, k, epsilon)``: the cell's identity in a table."""
        return (self.graph, self.method, self.statistic, self.k, self.epsilon)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CellRecords):
            return NotImplemented
        return (
            self.key == other.key
            and _same_float(self.truth, other.truth)
            and self.seed == other.seed
            and self.spawn_keys == other.spawn_keys
            and np.array_equal(self.estimates, other.estimates, equal_nan=True)
        )

    __hash__ = None  # type: ignore[assignment]


def _same_float(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)


class Records(Sequence[CellRecords]):
    """The trial records of an experiment: an ordered sequence of :class:`CellRecords`.

    Examples
    --------
    >>> cell = CellRecords("g", "m", "edges", None, 1.0, 3.0, np.array([2.5, 3.5]), 0, ("1/0", "1/0"))
    >>> rec = Records([cell])
    >>> len(rec), rec.n_rows
    (1, 2)
    >>> next(rec.rows())
    ('g', 'm', 'edges', '', 1.0, 0, 2.5, 3.0, 0, '1/0')
    """

    def __init__(self, cells: Sequence[CellRecords] = ()) -> None:
        self._cells = list(cells)

    def __getitem__(self, i):  # type: ignore[override]
        return self._cells[i]

    def __len__(self) -> int:
        return len(self._cells)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Records):
            return NotImplemented
        return self._cells == other._cells

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Records({len(self)} cells, {self.n_rows} rows)"

    @property
    def n_rows(self) -> int:
        return sum(c.n_trials for c in self._cells)

    def _csv_columns(self) -> dict[str, Any]:
        cols: dict[str, Any] = self.columns()
        cols["k"] = [None if k < 0 else int(k) for k in cols["k"].tolist()]
        return cols

    def to_pandas(self) -> Any:
        """The records as a pandas DataFrame with the columns of ``records.csv`` (:data:`COLUMNS`;
        ``k`` nullable ``Int64``, missing where the statistic has no parameter); pandas is
        imported only here.

        >>> cell = CellRecords("g", "m", "edges", None, 1.0, 3.0, np.array([2.5, 3.5]), 0, ("1/0", "1/0"))
        >>> frame = Records([cell]).to_pandas()
        >>> list(frame.columns) == list(COLUMNS), frame["estimate"].tolist()
        (True, [2.5, 3.5])
        """
        from ..tables import to_frame

        return to_frame(self._csv_columns(), integers=("k",))

    def _repr_html_(self) -> str:
        from ..tables import html_table

        return html_table(self._csv_columns(), caption=repr(self))

    def rows(self) -> Iterator[tuple]:
        """Tidy rows in :data:`COLUMNS` order (``k`` is ``''`` where the statistic has none)."""
        for c in self._cells:
            k = "" if c.k is None else c.k
            for t, (est, sk) in enumerate(zip(c.estimates.tolist(), c.spawn_keys, strict=True)):
                yield (c.graph, c.method, c.statistic, k, c.epsilon, t, est, c.truth, c.seed, sk)

    def columns(self) -> dict[str, NDArray]:
        """The records as columns (numpy arrays), e.g. for ``pandas.DataFrame(records.columns())``.

        ``k`` is an int64 column with -1 where the statistic has no parameter.
        """
        n = [c.n_trials for c in self._cells]

        def rep(values, dtype):
            return np.repeat(np.asarray(values, dtype=dtype), n) if n else np.empty(0, dtype=dtype)

        return {
            "graph": rep([c.graph for c in self._cells], object),
            "method": rep([c.method for c in self._cells], object),
            "statistic": rep([c.statistic for c in self._cells], object),
            "k": rep([-1 if c.k is None else c.k for c in self._cells], np.int64),
            "epsilon": rep([c.epsilon for c in self._cells], np.float64),
            "trial": np.concatenate([np.arange(m) for m in n]) if n else np.empty(0, np.int64),
            "estimate": np.concatenate([c.estimates for c in self._cells]) if n else np.empty(0),
            "truth": rep([c.truth for c in self._cells], np.float64),
            "seed": rep([c.seed for c in self._cells], object),
            "spawn_key": np.array([s for c in self._cells for s in c.spawn_keys], dtype=object),
        }


def write_records_csv(records: Records, path: str | os.PathLike[str]) -> Path:
    """Write the tidy rows with a header line; return the path.

    Written safely (:func:`~ldpgraph._atomic.atomic_write`): a unique temporary file, then an
    atomic rename; a symbolic link at ``path`` is replaced, never followed.

    >>> import tempfile
    >>> cell = CellRecords("g", "m", "kstars", 2, 0.5, 3.0, np.array([0.1]), 7, ("5/0",))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_records_csv(Records([cell]), os.path.join(d, "r.csv"))
    ...     print(p.read_text(), end="")
    graph,method,statistic,k,epsilon,trial,estimate,truth,seed,spawn_key
    g,m,kstars,2,0.5,0,0.1,3.0,7,5/0
    """
    p = Path(path)
    field = io.StringIO()
    fw = csv.writer(field, lineterminator="\n")  # the terminator decides what gets quoted

    def fmt(values: tuple) -> str:  # the csv module's own quoting of the repeated fields
        field.seek(0)
        field.truncate()
        fw.writerow(values)
        return field.getvalue()[:-1]

    with atomic_write(p, "w", newline="", encoding="utf-8") as fh:
        fh.write(fmt(COLUMNS) + "\n")
        # per cell: the constant fields once, then one f-string per trial (csv writes a float
        # by its repr and an int by its str: the same bytes as csv.writer.writerows(rows()))
        for c in records:
            head = fmt((c.graph, c.method, c.statistic, "" if c.k is None else c.k, c.epsilon))
            tails = {sk: fmt((c.truth, c.seed, sk)) for sk in dict.fromkeys(c.spawn_keys)}
            trials = enumerate(zip(c.estimates.tolist(), c.spawn_keys, strict=True))
            fh.write("".join([f"{head},{t},{e!r},{tails[sk]}\n" for t, (e, sk) in trials]))
    return p


def _check_complete(p: Path) -> None:
    """Refuse a records file that was cut short: against the output manifest, else by its last byte."""
    from .outputs import file_digest, read_manifest

    manifest = read_manifest(p.parent)
    entry = None if manifest is None else next((f for f in manifest["files"] if f["path"] == p.name), None)
    if entry is not None:
        size, digest = file_digest(p)
        if (size, digest) != (entry["bytes"], entry["sha256"]):
            raise ValueError(
                f"{p}: truncated or altered: {size:,} bytes with sha256 {digest[:16]}..., but the run's "
                f"manifest.json records {entry['bytes']:,} bytes with sha256 {entry['sha256'][:16]}..."
            )
        return
    with open(p, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            raise ValueError(f"{p}: empty file (expected the header line {','.join(COLUMNS)})")
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) != b"\n":
            raise ValueError(f"{p}: truncated: the last line does not end with a newline (a row was cut)")


def read_records_csv(path: str | os.PathLike[str], *, complete: bool = True) -> Records:
    """Read a CSV written by :func:`write_records_csv` back into :class:`Records`.

    Consecutive rows of the same cell form one :class:`CellRecords`; trials must be numbered
    0, 1, ... within a cell.

    Parameters
    ----------
    path : path-like
    complete : bool, default True
        Refuse a file that was cut short: where a ``manifest.json`` of the run lies beside it
        (:meth:`ExperimentResult.write` puts one there), its size and SHA-256 must match the
        manifest, which catches a cut anywhere; otherwise it must at least end with a newline
        (a cut inside a row).

    Raises
    ------
    ValueError
        On a wrong header, a malformed row (file and line named), trials out of order, or a
        truncated file.
    """
    p = Path(path)
    if complete:
        _check_complete(p)
    cells: list[CellRecords] = []
    with open(p, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise ValueError(f"{p}: expected header {','.join(COLUMNS)}, got {header!r}")
        current: tuple | None = None
        est: list[float] = []
        keys: list[str] = []
        meta: tuple = ()

        def flush() -> None:
            if current is not None:
                graph, method, statistic, k, eps = current
                truth, seed = meta
                values = np.array(est, dtype=np.float64)
                cells.append(CellRecords(graph, method, statistic, k, eps, truth, values, seed, tuple(keys)))

        for lineno, row in enumerate(reader, start=2):
            if len(row) != len(COLUMNS):
                raise ValueError(f"{p}, line {lineno}: expected {len(COLUMNS)} fields, got {len(row)}")
            graph, method, statistic, k, eps, trial, estimate, truth, seed, sk = row
            try:
                key = (graph, method, statistic, None if k == "" else int(k), float(eps))
                t = int(trial)
                values = (float(estimate), float(truth), int(seed))
            except ValueError as exc:
                raise ValueError(f"{p}, line {lineno}: {exc}") from None
            if key != current:
                flush()
                current, est, keys, meta = key, [], [], (values[1], values[2])
            if t != len(est):
                raise ValueError(f"{p}, line {lineno}: trial {t} out of order (expected {len(est)})")
            est.append(values[0])
            keys.append(sk)
        flush()
    return Records(cells)
