r"""Random streams of an experiment: one root seed, one stream per (cell, block) of trials.

An experiment is a grid of *cells* (graph, method, statistic, parameter, epsilon); the trials
of a cell are cut into *blocks* of ``block_size`` consecutive trials. Block ``b`` of the cell
whose identity hashes to ``key`` draws from

.. code-block:: python

    np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(key, b)))

— the ``b``-th child of the cell's child of the root ``SeedSequence(seed)``, in numpy's
spawn-tree notation. The streams depend only on the root seed, the cell's identity and the
block index: not on how many workers run the blocks, on which backend, in which order, or on
which other cells are in the grid. A cell run alone gives the same numbers as inside a
larger grid.

The cell key is a stable 63-bit hash (SHA-256) of the cell's identity, so it does not depend
on Python's per-process ``hash`` randomisation.
"""

from __future__ import annotations

import hashlib
import numbers

import numpy as np

__all__ = ["root_entropy", "cell_key", "block_seed", "block_rng"]


def root_entropy(seed: int | np.random.SeedSequence | None = None) -> int:
    """The root entropy of an experiment as a non-negative Python int.

    ``None`` draws fresh entropy from the operating system (recorded so the run can be
    repeated); an int is used as it is; a ``SeedSequence`` gives its entropy.

    >>> root_entropy(42)
    42
    >>> root_entropy(None) > 0
    True
    """
    if seed is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(seed, np.random.SeedSequence):
        if seed.spawn_key:
            raise ValueError(
                f"seed must be a root SeedSequence (empty spawn_key), got spawn_key={seed.spawn_key}"
            )
        return int(seed.entropy)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"seed must be a non-negative int, a SeedSequence or None, got {type(seed).__name__} {seed!r}"
        )
    if int(seed) < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed}")
    return int(seed)


def cell_key(*identity: object) -> int:
    """Stable 63-bit key of a cell from the ``repr`` of its identity fields.

    >>> ident = ("facebook", "unbiased-dlap", "kstars", 2, 1.0)
    >>> cell_key(*ident) == cell_key(*ident)
    True
    >>> cell_key("a", 1) != cell_key("a", 2)
    True
    """
    text = "\x1f".join(repr(x) for x in identity)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def block_seed(seed: int, key: int, block: int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of block ``block`` of the cell with key ``key``."""
    return np.random.SeedSequence(entropy=seed, spawn_key=(key, block))


def block_rng(seed: int, key: int, block: int) -> np.random.Generator:
    """A fresh ``Generator`` (PCG64) on the stream of one block.

    >>> a = block_rng(1, cell_key("x"), 0).integers(1 << 30)
    >>> b = block_rng(1, cell_key("x"), 0).integers(1 << 30)
    >>> bool(a == b)
    True
    """
    return np.random.default_rng(block_seed(seed, key, block))
