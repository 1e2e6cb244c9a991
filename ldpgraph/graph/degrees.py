"""A graph known only by its degree sequence, said explicitly: :class:`Degrees`.

A bare list or array handed where a graph is expected is ambiguous (a degree sequence? an edge
array? a networkx graph iterated into its node ids?), so the entry points refuse it and ask for
this wrapper: ``estimate_once(Degrees([3, 1, 2, 2]), ...)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Degrees", "check_degrees"]

#: Largest degree accepted (exactly representable in float64, far beyond any real graph).
MAX_DEGREE = 2**53


def check_degrees(values: ArrayLike, name: str = "degrees") -> NDArray[np.int64]:
    """A one-dimensional int64 array of non-negative integer degrees, or a one-line error.

    >>> check_degrees([3, 0, 2.0])
    array([3, 0, 2])
    """
    arr = np.asarray(values)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of non-negative integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one degree per node), got shape {arr.shape}")
    if arr.dtype.kind == "f" and not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
        bad = int(np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))[0])
        raise ValueError(f"{name} must hold integers; {name}[{bad}] = {arr[bad]}")
    if arr.size and arr.dtype.kind in "uf" and float(np.max(arr)) > MAX_DEGREE:
        bad = int(np.flatnonzero(arr > MAX_DEGREE)[0])
        raise ValueError(f"{name}[{bad}] = {arr[bad]} is too large; degrees must be <= 2**53")
    if arr.size and arr.dtype.kind == "f" and float(np.min(arr)) < 0:
        bad = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} must be non-negative; {name}[{bad}] = {arr[bad]}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        bad = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} must be non-negative; {name}[{bad}] = {arr[bad]}")
    return arr


class Degrees:
    """A graph given by its degree sequence only: ``Degrees([3, 1, 2, 2], name="toy")``.

    The explicit spelling of "these numbers are degrees" wherever a graph is expected
    (:func:`~ldpgraph.experiments.estimate_once`, :func:`~ldpgraph.experiments.run_experiment`):
    a bare list or array is refused there, since it could as well be an edge array. Degree
    statistics (k-stars, edges, moments, ...) need nothing more; adjacency statistics
    (triangles, clustering, core numbers) need the graph itself.

    Parameters
    ----------
    degrees : array_like of int
        One non-negative integer per node.
    name : str, optional
        The label results carry (``graph0``, ... when empty).

    Attributes
    ----------
    degrees : ndarray of int64 (read-only)
    name : str
    n_nodes, n_edges : int
        ``n_edges`` is half the degree sum (rounded down).

    Examples
    --------
    >>> g = Degrees([3, 1, 2, 2], name="toy")
    >>> g.n_nodes, g.n_edges, g.name
    (4, 4, 'toy')
    """

    def __init__(self, degrees: ArrayLike, name: str | None = None) -> None:
        if isinstance(degrees, Degrees):
            name = degrees.name if name is None else name
            degrees = degrees.degrees
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        d = check_degrees(degrees)
        d.setflags(write=False)
        self._degrees = d
        self.name = name or ""

    @property
    def degrees(self) -> NDArray[np.int64]:
        return self._degrees

    @property
    def n_nodes(self) -> int:
        return int(self._degrees.size)

    @property
    def n_edges(self) -> int:
        return int(self._degrees.sum()) // 2

    def __repr__(self) -> str:
        name = f", name={self.name!r}" if self.name else ""
        return f"Degrees(<{self.n_nodes} nodes, {self.n_edges} edges>{name})"

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, Degrees) and self.name == other.name
                and np.array_equal(self._degrees, other._degrees))

    __hash__ = None  # type: ignore[assignment]
