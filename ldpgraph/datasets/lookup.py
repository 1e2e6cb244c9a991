"""Where dataset files are found (explicit path, ``LDPGRAPH_DATA``, cache, package), and loading them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from .download import fetch
from .errors import ChecksumError, DatasetNotFoundError
from .places import _FETCH_COMMAND, _data_dirs, _first_file, default_cache_dir
from .registry import DatasetInfo, _get_info, bundled_data_dir
from .verify import _check_content, _check_stats, is_marked_verified, mark_verified

__all__ = ["default_cache_dir", "locate_dataset", "dataset_path", "verify_dataset", "load_dataset"]

Origin = Literal["path", "data", "cache", "bundled"]


def _search(
    info: DatasetInfo, path: str | os.PathLike[str] | None
) -> tuple[Path | None, Origin | None, list[str]]:
    """Return (found path or None, where it was found, description of each place looked at)."""
    looked: list[str] = []
    if path is not None:
        p = Path(path).expanduser()
        if p.is_dir():
            found = _first_file(info, p)
            if found is not None:
                return found, "path", looked
            looked.append(f"path argument (folder): {p / info.filename}")
        elif p.is_file():
            return p, "path", looked
        else:
            looked.append(f"path argument: {p} (does not exist)")
        # An explicit path is authoritative: do not fall back to other places.
        return None, None, looked
    dirs = _data_dirs()
    if not dirs:
        looked.append("$LDPGRAPH_DATA: not set")
    for d in dirs:
        found = _first_file(info, d)
        if found is not None:
            return found, "data", looked
        looked.append(f"$LDPGRAPH_DATA: {d / info.filename}")
    cache = default_cache_dir()
    found = _first_file(info, cache)
    if found is not None:
        return found, "cache", looked
    looked.append(f"cache: {cache / info.filename}")
    bundled = bundled_data_dir()
    if bundled is not None:
        found = _first_file(info, bundled)
        if found is not None:
            return found, "bundled", looked
        if info.bundled:
            looked.append(f"package data: {bundled / info.filename} (missing: reinstall ldpgraph)")
    return None, None, looked


def locate_dataset(name: str, *, path: str | os.PathLike[str] | None = None) -> Path | None:
    """Where ``name`` is found locally (same order as :func:`dataset_path`), or None.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     locate_dataset("facebook", path=d) is None
    True
    >>> locate_dataset("facebook") is not None  # shipped with the package
    True
    """
    found, _, _ = _search(_get_info(name), path)
    return found


def _not_found(info: DatasetInfo, looked: list[str]) -> DatasetNotFoundError:
    cmd = _FETCH_COMMAND.format(name=info.name)
    places = "\n".join(f"  - {s}" for s in looked)
    return DatasetNotFoundError(
        f"dataset {info.name!r} ({info.filename}) not found. Looked in:\n{places}\n"
        f"Download it with `{cmd}` (or pass download=True), or set LDPGRAPH_DATA to a folder "
        f"holding {info.filename}. Offline: copy the file from elsewhere and install it with "
        f"`{cmd} --url FILE`."
    )


def _find(
    info: DatasetInfo, path: str | os.PathLike[str] | None, download: bool
) -> tuple[Path, Origin]:
    found, origin, looked = _search(info, path)
    if found is not None and origin is not None:
        return found, origin
    if download and path is None:
        return fetch(info.name), "cache"
    raise _not_found(info, looked)


def dataset_path(
    name: str, *, path: str | os.PathLike[str] | None = None, download: bool = False
) -> Path:
    """Path of the local file of dataset ``name``.

    Parameters
    ----------
    name : str
        A registered name (:func:`list_datasets`).
    path : path-like, optional
        A file to use, or a folder holding the dataset file. When given, no other place is tried.
    download : bool, default False
        If the file is not found (and ``path`` is not given), download it into the cache with
        :func:`fetch` instead of raising.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DatasetNotFoundError
        If absent; the message names every place looked at and the command
        ``ldpgraph datasets fetch NAME`` (and ``--url FILE`` for an offline install).

    Notes
    -----
    Order: ``path``; each folder of ``$LDPGRAPH_DATA``; :func:`default_cache_dir`; the data shipped
    with the package (:func:`bundled_data_dir`: the Facebook graph). In a folder the registered
    ``filename`` is tried first, then its ``aliases`` (e.g. the uncompressed name).

    Examples
    --------
    >>> dataset_path("facebook", path="/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ldpgraph.datasets.errors.DatasetNotFoundError: dataset 'facebook' (facebook_combined.txt.gz) not found...
    """
    return _find(_get_info(name), path, download)[0]


def _fix_hint(info: DatasetInfo, path: Path, origin: Origin) -> str:
    cmd = _FETCH_COMMAND.format(name=info.name)
    if origin == "cache":
        return (f"Fix: run `{cmd} --force` to download it again (offline: `{cmd} --force --url FILE` "
                f"with a good copy), or delete {path}.")
    if origin == "data":
        return (f"Fix: replace {path} with the registered file ({info.source_page}), or remove "
                f"{path.parent} from LDPGRAPH_DATA.")
    if origin == "bundled":
        return "Fix: the copy shipped with ldpgraph is damaged; reinstall ldpgraph."
    return f"Fix: pass the registered file ({info.source_page}; `{cmd}` downloads it)."


def _refuse(exc: ChecksumError, info: DatasetInfo, path: Path, origin: Origin) -> ChecksumError:
    return ChecksumError(f"refusing {path}: it is not the registered {info.name!r} file. {exc} "
                         f"{_fix_hint(info, path, origin)}")


def verify_dataset(name: str, *, path: str | os.PathLike[str] | None = None) -> Path:
    """Check the local file of ``name`` against its recorded size and SHA-256; return its path.

    The shared ``.gz`` matches ``sha256_gz``; any other file (another gzip compression, or the
    uncompressed file) must match ``sha256_raw`` once decompressed.

    Raises
    ------
    DatasetNotFoundError
        If the file is absent (see :func:`dataset_path`).
    ChecksumError
        If the content does not match; the message gives expected and actual digests and the fix.
    """
    info = _get_info(name)
    p, origin = _find(info, path, download=False)
    try:
        _check_content(p, info)
    except ChecksumError as exc:
        raise _refuse(exc, info, p, origin) from None
    return p


def load_dataset(
    name: str,
    *,
    path: str | os.PathLike[str] | None = None,
    download: bool = False,
    verify: bool = False,
) -> Any:
    """Load dataset ``name``.

    Parameters
    ----------
    name : str
        A registered name (:func:`list_datasets`).
    path, download
        As in :func:`dataset_path`.
    verify : bool, default False
        Check the file's size and SHA-256 and the parsed statistics even if it was verified
        before, or if it was given as ``path`` (an explicit file is otherwise used as it is).

    Returns
    -------
    ldpgraph.graph.Graph or WordCounts or numpy.ndarray
        ``facebook``, ``wiki-vote``, ``email-enron``: the simple undirected graph (directed
        sources are symmetrized). ``shakespeare``: :class:`WordCounts`. ``exac-sfs``: the int64
        fingerprint, ``F[i - 1]`` = number of variants seen exactly ``i`` times, i = 1..1200.

    Raises
    ------
    ChecksumError
        If a file found in ``LDPGRAPH_DATA``, the cache or the package (or given with
        ``verify=True``) is not the registered one; the message says how to fix it.

    Notes
    -----
    A file found by lookup is verified the first time it is used (size and SHA-256, then the
    registered node and edge counts, or a histogram's length and sums) and marked verified
    (``verified.json`` in the cache folder); later uses skip the hash until the file changes.

    Examples
    --------
    >>> g = load_dataset("facebook")  # shipped with the package
    >>> g.n_nodes, g.n_edges
    (4039, 88234)
    >>> sfs = load_dataset("exac-sfs")  # doctest: +SKIP
    >>> int(sfs[0]), len(sfs)  # doctest: +SKIP
    (4012093, 1200)
    """
    info = _get_info(name)
    p, origin = _find(info, path, download)
    cache = default_cache_dir()
    if not verify and (origin == "path" or is_marked_verified(p, info, cache)):
        return info.load(p)
    try:
        _check_content(p, info)
        obj = info.load(p)
        _check_stats(obj, info)
    except ChecksumError as exc:
        raise _refuse(exc, info, p, origin) from None
    mark_verified(p, info, cache)
    return obj
