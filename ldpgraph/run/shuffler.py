r"""The shuffler: a party of its own between the nodes and the curator.

It receives report rows from the nodes, **drops their node ids** (the ``node`` column becomes
0 in every row) and **permutes** the rows uniformly at random, so that the curator sees the
multiset of the rows and nothing that links a row to its sender. This is what the shuffle
model's privacy amplification assumes (:mod:`ldpgraph.privacy.shuffle_amplification`); the
protocols whose rounds are shuffled (``Round.shuffled``) refuse rows that still carry node ids.

- In simulation (:func:`shuffle_rows` with a seeded ``rng``) the permutation is numpy's
  ``Generator.permutation``; the executors apply it to every shuffled round
  (:func:`~ldpgraph.run.memory.run_in_memory`).
- Deployed (``rng=None``; ``ldpgraph shuffle IN... --out OUT``, :func:`shuffle_files`), the
  permutation comes from the OS CSPRNG (:func:`secure_permutation`: independent 64-bit
  ``os.urandom`` keys sorted, or Fisher–Yates on ``random.SystemRandom``), never from a seeded
  generator: a permutation seeded from a few bytes of entropy is one of at most 2^(8 bytes)
  permutations, and a seeded PRNG's state can be recovered from its output.
  ``scripts/bench_wedge_shuffle.py`` measures its speed.

The whole row set is held in memory (a uniform permutation needs every row); the rows are
written in the report format, readable by ``ldpgraph curate``.

Examples
--------
>>> import numpy as np
>>> rows = {"node": np.array([7, 8, 9]), "value": np.array([1, 2, 3])}
>>> out = shuffle_rows(rows, rng=0)
>>> out["node"].tolist(), sorted(out["value"].tolist())
([0, 0, 0], [1, 2, 3])
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["secure_permutation", "shuffle_rows", "shuffle_files", "read_rows"]


def secure_permutation(n: int, method: str = "sort") -> NDArray[np.int64]:
    """A uniformly random permutation of ``0..n-1`` from the OS CSPRNG.

    ``method="sort"`` (default): every row gets an independent 64-bit key from ``os.urandom``
    and the rows are ordered by key; if two keys tie (probability at most n² / 2^65, 3e-8 for a
    million rows) all keys are drawn again, so every ordering is equally likely by symmetry.
    ``method="fisher-yates"``: ``random.SystemRandom().shuffle`` (one ``os.urandom`` call per
    index, unbiased ``randbelow``): the same law, about 100 times slower
    (``scripts/bench_wedge_shuffle.py``).
    """
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if method == "fisher-yates":
        order = list(range(n))
        random.SystemRandom().shuffle(order)
        return np.asarray(order, dtype=np.int64)
    if method != "sort":
        raise ValueError(f"method must be 'sort' or 'fisher-yates', got {method!r}")
    while True:
        keys = np.frombuffer(os.urandom(8 * n), dtype=np.uint64)
        order = np.argsort(keys)
        ranked = keys[order]
        if not np.any(ranked[1:] == ranked[:-1]):
            return order.astype(np.int64)


def shuffle_rows(rows: dict[str, Any], rng: Any = None) -> dict[str, NDArray[Any]]:
    """``rows`` (report columns) permuted, with every node id set to 0.

    Parameters
    ----------
    rows : dict of column arrays
        Must hold ``node``; every column is permuted the same way.
    rng : None, int or Generator
        None: the OS CSPRNG (:func:`secure_permutation`, deployment); a seed or a Generator:
        a seeded permutation (simulation only).
    """
    if "node" not in rows:
        raise ValueError("report rows must have a 'node' column")
    m = len(rows["node"])
    if rng is None:
        order = secure_permutation(m)
    else:
        order = np.random.default_rng(rng).permutation(m)
    out = {k: np.asarray(v)[order] for k, v in rows.items()}
    out["node"] = np.zeros(m, dtype=np.int64)
    return out


def read_rows(paths: Sequence[str | os.PathLike], *, format: str | None = None) -> dict[str, NDArray[Any]]:
    """Every row of the report files as columns (each file checked cell by cell by its reader)."""
    from ..core.rows import COLUMNS
    from .reportfiles import iter_report_chunks

    parts: dict[str, list[NDArray[Any]]] = {c: [] for c in COLUMNS}
    for path in paths:
        for ch in iter_report_chunks(path, format=format):
            q_names = np.asarray(ch.quantity_names, dtype=object)
            p_names = np.asarray(ch.protocol_names, dtype=object)
            parts["node"].append(ch.node)
            parts["round"].append(ch.round)
            parts["quantity"].append(q_names[ch.quantity] if len(ch) else np.empty(0, dtype=object))
            parts["value"].append(ch.value)
            parts["epsilon"].append(ch.epsilon)
            parts["sensitivity"].append(ch.sensitivity)
            parts["protocol"].append(p_names[ch.protocol] if len(ch) else np.empty(0, dtype=object))
            parts["protocol_version"].append(ch.protocol_version)
    empty = {"quantity": object, "protocol": object, "epsilon": np.float64, "sensitivity": np.float64}
    return {c: np.concatenate(v) if v else np.empty(0, dtype=empty.get(c, np.int64))
            for c, v in parts.items()}


def shuffle_files(
    inputs: Sequence[str | os.PathLike],
    out: str | os.PathLike,
    *,
    rng: Any = None,
    format: str | None = None,
) -> tuple[Path, int]:
    """Read the rows of ``inputs``, drop node ids, permute (OS CSPRNG unless ``rng``), write ``out``.

    Returns ``(path written, number of rows)``. ``out`` must not be one of the inputs.
    """
    from .reportfiles import write_report_chunks

    files = [Path(p) for p in ([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)]
    if not files:
        raise ValueError("no report files to shuffle")
    target = Path(out)
    if any(target.resolve() == f.resolve() for f in files):
        raise ValueError(f"the output {target} is one of the inputs: write the shuffled rows elsewhere")
    rows = shuffle_rows(read_rows(files, format=format), rng=rng)
    return write_report_chunks(target, [rows])
