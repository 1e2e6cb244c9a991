"""Histogram datasets: word counts of a text and fingerprints (site-frequency spectra)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ._files import _open_binary

__all__ = ["WordCounts", "count_words", "parse_fingerprint"]


class WordCounts(NamedTuple):
    """Word-count histogram: ``counts[i]`` occurrences of ``words[i]``, sorted by descending count.

    Ties are ordered alphabetically, so the order is deterministic.
    """

    counts: NDArray[np.int64]
    words: NDArray[np.str_]


_WORD = re.compile(r"[a-z]+")


def count_words(text: str) -> WordCounts:
    """Word-count histogram of ``text``: occurrences of the regex ``[a-z]+`` in ``text.lower()``.

    Returns
    -------
    WordCounts
        ``counts`` (int64) sorted descending, ties by word; ``words`` aligned with ``counts``.

    Examples
    --------
    >>> wc = count_words("To be, or not to be: that is the question.")
    >>> wc.counts.tolist(), wc.words.tolist()[:3]
    ([2, 2, 1, 1, 1, 1, 1, 1], ['be', 'to', 'is'])
    """
    counter = Counter(_WORD.findall(text.lower()))
    words = np.array(list(counter.keys()), dtype=np.str_)
    counts = np.fromiter(counter.values(), dtype=np.int64, count=len(counter))
    if counts.size == 0:
        return WordCounts(counts, words)
    order = np.lexsort((words, -counts))
    return WordCounts(counts[order], words[order])


def parse_fingerprint(lines: Iterable[str]) -> NDArray[np.int64]:
    """Parse a fingerprint (site-frequency spectrum): one non-negative integer per line.

    Blank lines are skipped. Entry ``i - 1`` of the result is ``F_i``, the number of items seen
    exactly ``i`` times.

    Examples
    --------
    >>> parse_fingerprint(["5", "2", "", "1"]).tolist()
    [5, 2, 1]
    """
    vals: list[int] = []
    for lineno, line in enumerate(lines, start=1):
        s = line.strip()
        if not s:
            continue
        try:
            v = int(s)
        except ValueError:
            raise ValueError(f"fingerprint line {lineno}: expected one integer, got {s!r}") from None
        if v < 0:
            raise ValueError(f"fingerprint line {lineno}: counts must be >= 0, got {v}")
        vals.append(v)
    return np.array(vals, dtype=np.int64)


def _parse_word_counts_file(path: Path, info: Any) -> WordCounts:
    with _open_binary(path) as fh:
        text = fh.read().decode("utf-8", errors="replace")
    return count_words(text)


def _parse_fingerprint_file(path: Path, info: Any) -> NDArray[np.int64]:
    with _open_binary(path) as fh:
        text = fh.read().decode("ascii", errors="replace")
    return parse_fingerprint(text.splitlines())


def _word_count_stats(wc: WordCounts) -> dict[str, int]:
    """The registered statistics of a word-count histogram (checked on first use)."""
    return {
        "tokens": int(wc.counts.sum()),
        "distinct_words": len(wc.counts),
        "max_count": int(wc.counts[0]) if len(wc.counts) else 0,
    }


def _fingerprint_stats(f: NDArray[np.int64]) -> dict[str, int]:
    """The registered statistics of a fingerprint (checked on first use)."""
    out = {
        "length": len(f),
        "variants": int(f.sum()),
        "allele_count_sum": int((np.arange(1, len(f) + 1, dtype=np.int64) * f).sum()),
    }
    if len(f) >= 2:
        out["F1"], out["F2"] = int(f[0]), int(f[1])
    return out
