r"""Verification of dataset files: size and SHA-256, then the registered counts; verified marks.

A file found in a data folder, in the cache or in the package is checked the first time it is
used (:func:`ldpgraph.datasets.load_dataset`): its size and SHA-256 against the registry, then
the parsed object's statistics (a graph's node and edge counts; a histogram's length and sums)
against the registered ones. The file is then *marked verified*: its resolved path, size and
modification time are recorded in ``verified.json`` of the cache folder (and in memory for the
process), and later uses skip the hashing until the file changes. A file that fails is refused
with a :class:`~ldpgraph.datasets.ChecksumError` saying how to fix it.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import threading
import zlib
from pathlib import Path
from typing import Any

from ._files import _hash_stream, _is_gzip
from .errors import ChecksumError
from .registry import DatasetInfo, _stats_function

__all__: list[str] = []

MARKS_NAME = "verified.json"
_SESSION_MARKS: dict[str, dict[str, Any]] = {}
_LOCK = threading.Lock()


def _check_content(path: Path, info: DatasetInfo) -> None:
    r"""Raise ChecksumError unless ``path`` is the dataset (as the shared .gz, or by raw content).

    Notes
    -----
    Accepted exactly when :math:`(|b|, \mathrm{sha256}(b)) = (n_{gz}, h_{gz})` for the file's bytes
    :math:`b`, or :math:`(|r|, \mathrm{sha256}(r)) = (n_{raw}, h_{raw})` for its content :math:`r`
    (decompressed if gzip). At most :math:`n_{raw} + 1` bytes are decompressed, so a file that
    inflates beyond the registered size is refused without being read out.
    """
    if _is_gzip(path):
        if path.stat().st_size == info.size_gz:
            with open(path, "rb") as fh:
                gz_hash, _ = _hash_stream(fh)
            if gz_hash == info.sha256_gz:
                return
        try:
            with gzip.open(path, "rb") as fh:
                raw_hash, raw_size = _hash_stream(fh, limit=info.size_raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise ChecksumError(
                f"{info.name}: {path.name} is not a complete gzip stream ({exc}); "
                f"expected raw sha256 {info.sha256_raw} ({info.size_raw:,} bytes)"
            ) from None
    else:
        with open(path, "rb") as fh:
            raw_hash, raw_size = _hash_stream(fh, limit=info.size_raw)
    if raw_size > info.size_raw:
        raise ChecksumError(
            f"{info.name}: checksum mismatch (size): expected raw (uncompressed) sha256 {info.sha256_raw} "
            f"({info.size_raw:,} bytes), got more than {info.size_raw:,} bytes (stopped reading there)"
        )
    if raw_hash != info.sha256_raw or raw_size != info.size_raw:
        raise ChecksumError(
            f"{info.name}: checksum mismatch: expected raw (uncompressed) sha256 {info.sha256_raw} "
            f"({info.size_raw:,} bytes), got {raw_hash} ({raw_size:,} bytes)"
        )


def _check_stats(obj: Any, info: DatasetInfo) -> None:
    """Raise ChecksumError unless the parsed object's statistics equal the registered ones."""
    stats_of = _stats_function(info)
    if stats_of is None:
        return
    got = stats_of(obj)
    bad = {k: (v, got[k]) for k, v in info.stats.items() if k in got and got[k] != v}
    if bad:
        detail = ", ".join(f"{k} {g:,} (registered {v:,})" for k, (v, g) in bad.items())
        raise ChecksumError(f"{info.name}: the file's content matches but it parses to {detail}")


def _file_key(path: Path) -> tuple[str, dict[str, Any]]:
    st = path.stat()
    return str(path.resolve()), {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _mark_record(path: Path, info: DatasetInfo) -> tuple[str, dict[str, Any]]:
    key, fp = _file_key(path)
    return key, {"name": info.name, "sha256_raw": info.sha256_raw, **fp}


def _read_marks(cache_dir: Path) -> dict[str, Any]:
    try:
        with open(cache_dir / MARKS_NAME, encoding="utf-8") as fh:
            marks = json.load(fh)
    except (OSError, ValueError):
        return {}
    return marks if isinstance(marks, dict) else {}


def is_marked_verified(path: Path, info: DatasetInfo, cache_dir: Path) -> bool:
    """Whether ``path`` was verified as ``info`` and has not changed since (size, mtime)."""
    try:
        key, record = _mark_record(path, info)
    except OSError:
        return False
    with _LOCK:
        if _SESSION_MARKS.get(key) == record:
            return True
    return _read_marks(cache_dir).get(key) == record


def mark_verified(path: Path, info: DatasetInfo, cache_dir: Path) -> None:
    """Record ``path`` as verified (in memory, and in ``cache_dir/verified.json`` when writable)."""
    key, record = _mark_record(path, info)
    with _LOCK:
        _SESSION_MARKS[key] = record
        marks = _read_marks(cache_dir)
        if marks.get(key) == record:
            return
        marks[key] = record
        tmp = None
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".{MARKS_NAME}.", suffix=".part")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(marks, fh, indent=1, sort_keys=True)
            os.replace(tmp, cache_dir / MARKS_NAME)
            tmp = None
        except OSError:
            pass  # a read-only cache: the mark lasts for this process only
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
