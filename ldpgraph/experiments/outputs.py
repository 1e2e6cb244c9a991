"""Atomic writing of an experiment's output folder, with a manifest of the files written.

The files of a run are produced in a temporary folder beside the output folder and then moved
into place (:func:`write_atomically`), so the output folder never holds a half-written result or
a mix of two runs: files of an earlier run that this run does not produce (plots of other
graphs or statistics) are removed. ``manifest.json`` lists every file with its size and SHA-256
and the run's configuration; :func:`~ldpgraph.experiments.records.read_records_csv` uses it to
refuse a truncated or altered ``records.csv``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["MANIFEST_NAME", "write_atomically", "read_manifest", "file_digest"]

MANIFEST_NAME = "manifest.json"
_FORMAT = "ldpgraph-experiment-output"
#: what a run writes (besides the files its manifest lists): these may be replaced or removed
_OWN_NAMES = {"records.csv", "summary.csv", "summary.txt", "experiment.json", MANIFEST_NAME, "plots"}


def file_digest(path: str | os.PathLike[str]) -> tuple[int, str]:
    """(size in bytes, SHA-256 hex digest) of a file."""
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 16):
            h.update(chunk)
            n += len(chunk)
    return n, h.hexdigest()


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of an output folder, or None if it has none (or it is not ours)."""
    try:
        with open(Path(folder) / MANIFEST_NAME, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("format") == _FORMAT else None


def _files_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _remap(paths: Any, src: Path, dst: Path) -> Any:
    if isinstance(paths, Path):
        return dst / paths.relative_to(src)
    if isinstance(paths, list):
        return [_remap(p, src, dst) for p in paths]
    if isinstance(paths, dict):
        return {k: _remap(v, src, dst) for k, v in paths.items()}
    return paths


def _only_ours(out: Path) -> bool:
    """Whether every entry of ``out`` was written by an earlier run (so the folder can be swapped)."""
    previous = read_manifest(out)
    listed = {f["path"].split("/")[0] for f in previous["files"]} if previous else set()
    return all(p.name in _OWN_NAMES or p.name in listed for p in out.iterdir())


def write_atomically(
    out_dir: str | os.PathLike[str],
    produce: Callable[[Path], Mapping[str, Any]],
    *,
    config: Mapping[str, Any],
) -> dict[str, Any]:
    """Run ``produce(tmp)`` in a fresh temporary folder, add ``manifest.json``, move it to ``out_dir``.

    Parameters
    ----------
    out_dir : path-like
        The output folder (created if needed, with its parents).
    produce : callable
        Writes the files into the folder it is given and returns a dict of their paths.
    config : mapping
        The run's configuration, recorded in the manifest.

    Returns
    -------
    dict
        What ``produce`` returned, with the paths moved to ``out_dir``, plus ``"manifest"``.

    Notes
    -----
    If ``out_dir`` is absent, empty or holds only an earlier run's outputs, the temporary folder
    replaces it by rename (the earlier folder is renamed aside first and deleted after), so a
    kill at any moment leaves either the old complete result or the new one. If ``out_dir`` also
    holds files of its own (not outputs), those are kept: the new files are moved in one by one
    with :func:`os.replace` (each atomic), the earlier run's files that this run does not write
    are removed, and the manifest is moved last.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     def produce(tmp):
    ...         (tmp / "summary.txt").write_text("hello")
    ...         return {"table": tmp / "summary.txt"}
    ...     paths = write_atomically(Path(d) / "out", produce, config={"seed": 1})
    ...     sorted(p.name for p in (Path(d) / "out").iterdir()), paths["table"].read_text()
    (['manifest.json', 'summary.txt'], 'hello')
    """
    out = Path(out_dir).expanduser()
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}.partial-"))
    try:
        paths = dict(produce(tmp))
        files = []
        for rel in _files_under(tmp):
            size, digest = file_digest(tmp / rel)
            files.append({"path": rel, "bytes": size, "sha256": digest})
        manifest = {"format": _FORMAT, "version": 1, "files": files, "config": dict(config)}
        (tmp / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
        paths = _remap(paths, tmp, out)
        paths["manifest"] = out / MANIFEST_NAME
        if not out.exists() or (out.is_dir() and not any(out.iterdir())):
            os.replace(tmp, out)  # rename onto an empty folder replaces it atomically
        elif out.is_dir() and _only_ours(out):
            old = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}.old-"))
            os.replace(out, old / "out")
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            _merge_into(out, tmp, [f["path"] for f in files])
            shutil.rmtree(tmp, ignore_errors=True)
        return paths
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _merge_into(out: Path, tmp: Path, new_files: list[str]) -> None:
    if not out.is_dir():
        raise NotADirectoryError(f"--out {out} exists and is not a folder")
    previous = read_manifest(out)
    stale = {f["path"] for f in previous["files"]} if previous else set()
    plots = out / "plots"
    if plots.is_dir():  # plots of an earlier run without a manifest
        stale |= {f"plots/{p.name}" for p in plots.iterdir() if p.name.startswith("relative_rmse_")}
    for rel in new_files:
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp / rel, dst)
    for rel in sorted(stale - set(new_files)):
        try:
            (out / rel).unlink()
        except FileNotFoundError:
            pass
    os.replace(tmp / MANIFEST_NAME, out / MANIFEST_NAME)
