r"""The shuffler: a party of its own between the nodes and the curator.

It receives report rows from the nodes, **drops their node ids** (the ``node`` column becomes
0 in every row) and hands the curator **the multiset of the rows**, nothing that links a row to
its sender. This is what the shuffle model's privacy amplification assumes
(:mod:`ldpgraph.privacy.shuffle_amplification`); the protocols whose rounds are shuffled
(``Round.shuffled``) refuse rows that still carry node ids.

- Deployed (``ldpgraph shuffle IN... --out OUT``, :func:`shuffle_files`), the rows are
  **streamed**: each chunk is checked against the public plan and the round's
  :class:`~ldpgraph.core.protocol.Senders` (every node id in ``0..n-1``; per node, at most the
  rows of each quantity that the protocol can produce and exactly one sender-token row; the ε
  of the plan, so rows of nodes run with another δ or n are refused), refused as soon as a
  sender exceeds its quota, and folded into counts per distinct row. The output lists the
  multiset in a canonical (sorted) order: a deterministic function of the multiset reveals
  exactly what a uniformly random permutation of it reveals (the multiset), and needs neither
  a random source nor every row in memory: memory is one chunk plus the distinct rows (per
  pair index, and one token per user) plus n counters per quantity. Fewer senders than the
  plan's n, a node id above it, or a node that sent rows without its token, are refused: the
  amplification holds only if all n users' rows are shuffled together.
- In simulation (:func:`shuffle_rows`, used by :func:`~ldpgraph.run.memory.run_in_memory`) the
  rows of a shuffled round are permuted (numpy's ``Generator.permutation`` with a seed, the OS
  CSPRNG with the secure sampler: :func:`secure_permutation`).

Trust: the shuffler sees who sent what (the model trusts it not to tell). It attests nothing
the curator must believe beyond what the model already assumes: the curator counts the
distinct sender tokens itself and refuses a count other than the plan's n or a repeated token.
A node can make up node ids only if the transport lets it (authenticating senders is the
deployment's, before the shuffler); a node that sends two tokens is refused by the shuffler.

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.plan import Plan
from ..core.protocol import Round, Senders
from ..core.rows import check_plan_rows, quantity_rows, running_counts

__all__ = ["secure_permutation", "shuffle_rows", "shuffle_files", "read_rows", "Shuffled"]


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


@dataclass(frozen=True)
class Shuffled:
    """What :func:`shuffle_files` wrote: the file, its number of rows, the number of senders."""

    path: Path
    n_rows: int
    n_senders: int


class _Multiset:
    """Counts of the distinct values of one quantity, folded chunk by chunk (memory: the distinct values)."""

    def __init__(self) -> None:
        self.values = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros(0, dtype=np.int64)

    def add(self, values: NDArray[np.int64]) -> None:
        vals, inverse = np.unique(np.concatenate([self.values, values]), return_inverse=True)
        weights = np.concatenate([self.counts, np.ones(values.size, dtype=np.int64)])
        counts = np.bincount(inverse, weights=weights, minlength=vals.size)
        self.values, self.counts = vals, counts.astype(np.int64)


def _check_chunk(ch: Any, plan: Plan, rnd: Round, senders: Senders, quantities: list[str],
                 per_node: NDArray[np.int64], multisets: dict[str, _Multiset]) -> None:
    """Check one chunk against the plan and the senders' quotas (refused at the first excess); count it."""
    n = senders.users
    bad = np.flatnonzero((ch.node < 0) | (ch.node >= n))
    if bad.size:
        raise ValueError(f"{ch.where(bad[0])}: node id {int(ch.node[bad[0]])} outside 0..{n - 1} (the plan's "
                         f"{n:,} users)")
    for name, at in check_plan_rows(ch, plan, rnd.number).items():
        j = quantities.index(name)
        nodes = ch.node[at]
        sent = running_counts(per_node[:, j], nodes)
        over = np.flatnonzero(sent > senders.most[name])
        if over.size:  # refused at the row that breaks the quota, before reading on
            i = over[0]
            raise ValueError(f"{ch.where(at[i])}: node {int(nodes[i])} sent {int(sent[i]):,} {name} rows, "
                             f"more than the {senders.most[name]:,} that {plan.protocol} produces for one "
                             "sender")
        per_node[:, j] += np.bincount(nodes, minlength=n)
        multisets[name].add(ch.value[at])


def shuffle_files(
    inputs: Sequence[str | os.PathLike],
    out: str | os.PathLike,
    plan: Plan,
    round: Round,
    *,
    expected_nodes: int | None = None,
    format: str | None = None,
    chunk_rows: int = 1 << 20,
) -> Shuffled:
    """Stream the rows of ``inputs`` (round ``round`` of ``plan``), check them per sender, write the multiset
    of the rows without node ids to ``out`` (see the module docstring).

    ``expected_nodes`` (``--expected-nodes`` or the roster's length) must be the plan's number of users.
    ``out`` must not be one of the inputs. Raises ValueError, naming file and row, on the first row that
    breaks the plan or a sender's quota, and when fewer than the plan's users sent rows.
    """
    from .reportfiles import iter_report_chunks, write_report_chunks

    files = [Path(p) for p in ([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)]
    if not files:
        raise ValueError("no report files to shuffle")
    target = Path(out)
    if any(target.resolve() == f.resolve() for f in files):
        raise ValueError(f"the output {target} is one of the inputs: write the shuffled rows elsewhere")
    senders = round.senders(plan)
    if not round.shuffled or senders is None:
        raise ValueError(f"round {round.number} of {plan.protocol} is not shuffled: its rows go to the "
                         "curator as they are")
    n = senders.users
    if expected_nodes is not None and int(expected_nodes) != n:
        raise ValueError(f"{expected_nodes:,} participants expected (--expected-nodes / --roster), but the "
                         f"plan of {plan.protocol} is for {n:,} users (--n-users): they must agree")
    quantities = sorted(senders.most)
    per_node = np.zeros((n, len(quantities)), dtype=np.int64)
    multisets = {q: _Multiset() for q in quantities}
    for path in files:
        for ch in iter_report_chunks(path, format=format, chunk_rows=chunk_rows):
            _check_chunk(ch, plan, round, senders, quantities, per_node, multisets)
    tokens = per_node[:, quantities.index(senders.token)]
    silent = np.flatnonzero((tokens == 0) & (per_node.sum(axis=1) > 0))
    if silent.size:
        raise ValueError(f"node {int(silent[0])} sent rows but no {senders.token} row (every sender adds "
                         "exactly one): rows of an older version, or forged")
    n_senders = int(np.count_nonzero(tokens))
    if n_senders < n:
        missing = np.flatnonzero(tokens == 0)
        shown = ", ".join(str(int(v)) for v in missing[:5]) + (" ..." if missing.size > 5 else "")
        claim = ("its guarantee" if plan.shuffle is None else
                 f"its central (epsilon {plan.shuffle.epsilon:.6g}, delta {plan.shuffle.delta:.3g})")
        raise ValueError(f"only {n_senders:,} of the {n:,} users of the plan sent rows (missing: {shown}): "
                         f"{claim} holds only if all {n:,} are shuffled together. Refused: wait for every "
                         "node, or plan for those who take part (--n-users)")
    for q, ms in multisets.items():
        if ms.counts.size and int(ms.counts.max()) > n_senders:
            raise ValueError(f"{q} value {int(ms.values[np.argmax(ms.counts)])} sent "
                             f"{int(ms.counts.max()):,} times by {n_senders:,} senders: a sender "
                             "repeated a row")
    path, n_rows = write_report_chunks(target, _multiset_rows(plan, round.number, multisets, chunk_rows))
    return Shuffled(path, n_rows, n_senders)


def _multiset_rows(plan: Plan, number: int, multisets: dict[str, _Multiset], chunk_rows: int
                   ) -> Iterator[dict[str, NDArray[Any]]]:
    """The rows of ``multisets`` in canonical order (quantity, then value), node 0, in chunks of about
    ``chunk_rows`` rows."""
    for q, ms in multisets.items():
        ends = np.cumsum(ms.counts)
        lo = 0
        while lo < ms.values.size:
            start = ends[lo - 1] if lo else 0
            hi = max(int(np.searchsorted(ends, start + chunk_rows, side="right")), lo + 1)
            vals = np.repeat(ms.values[lo:hi], ms.counts[lo:hi])
            yield quantity_rows(plan, number, np.zeros(vals.size, dtype=np.int64), q, vals)
            lo = hi
