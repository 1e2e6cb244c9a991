r"""The roster: the public list of participants, each label with its node number.

The protocols number their nodes ``0..n-1`` (a node randomizes its pairs with every lower
number), while people name nodes ``alice`` or ``user5``. The roster is the table that maps one
to the other, published before round 1: ``ldpgraph node --graph`` writes it beside the report
file of a graph whose nodes are named (``<stem>.nodes.csv``), a curator may publish their own,
and ``ldpgraph node --roster FILE --node-id user5 --neighbors alice,bob`` and ``ldpgraph curate
--roster FILE`` read it. Its length is the public number of participants: the curator checks
that exactly the nodes ``0..n-1`` reported.

Format: CSV with the header ``node,label``, one row per node in increasing order ``0..n-1``,
distinct labels (:func:`ldpgraph.run.reportfiles.write_node_labels` writes it).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from ldpgraph.run.reportfiles import write_node_labels
>>> with tempfile.TemporaryDirectory() as tmp:
...     roster = read_roster(write_node_labels(Path(tmp) / "r.csv", ["alice", "bob", "user5"]))
>>> roster.index("user5"), roster.indices(["bob", "alice"]), len(roster)
(2, [1, 0], 3)
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Roster", "read_roster"]


@dataclass(frozen=True)
class Roster:
    """Labels by node number (``labels[i]`` names node ``i``)."""

    labels: tuple[str, ...]
    source: str = "<memory>"
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, int] = {}
        for i, label in enumerate(self.labels):
            if label in index:
                raise ValueError(f"{self.source}: label {label!r} names nodes {index[label]} and {i} "
                                 "(a roster's labels are distinct)")
            index[label] = i
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        return len(self.labels)

    def index(self, label: str) -> int:
        """The node number of ``label`` (ValueError naming the roster otherwise)."""
        try:
            return self._index[str(label)]
        except KeyError:
            raise ValueError(f"{label!r} is not a participant of the roster {self.source} "
                             f"({len(self)} labels)") from None

    def indices(self, labels: Iterable[str]) -> list[int]:
        """The node numbers of ``labels``, in their order."""
        return [self.index(x) for x in labels]


def read_roster(path: str | os.PathLike) -> Roster:
    """Read and check a roster file (header ``node,label``; nodes ``0..n-1`` in order)."""
    p = Path(path)
    try:
        fh = open(p, newline="", encoding="utf-8-sig")  # a byte-order mark is not part of the header
    except OSError as exc:
        raise OSError(f"cannot read the roster {p}: {exc.strerror}") from None
    with fh:
        try:
            return _parse_roster(csv.reader(fh), p)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{p}: not UTF-8 text (byte {exc.start}); a roster is a UTF-8 CSV file"
                             ) from None


def _parse_roster(rows: Iterator[list[str]], p: Path) -> Roster:
    """The roster of ``rows`` (a csv reader over ``p``), checked line by line."""
    header = next(rows, None)
    if header != ["node", "label"]:
        raise ValueError(f"{p} line 1: a roster starts with the header 'node,label', got {header!r}")
    labels: list[str] = []
    for line, row in enumerate(rows, start=2):
        if len(row) != 2:
            raise ValueError(f"{p} line {line}: expected 'node,label', got {len(row)} field(s)")
        if row[0] != str(len(labels)):
            raise ValueError(f"{p} line {line}: node {row[0]!r} where node {len(labels)} was expected "
                             "(a roster lists the nodes 0..n-1 in order)")
        labels.append(row[1])
    if not labels:
        raise ValueError(f"{p}: the roster lists no participant")
    return Roster(tuple(labels), str(p))
