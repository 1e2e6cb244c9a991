"""Atomic writing of an experiment's output folder, with a manifest of the files written.

The files of a run are produced in a temporary folder beside the output folder and then moved
into place (:func:`write_atomically`), so the output folder never holds a half-written result or
a mix of two runs: files of an earlier run that this run does not produce (plots of other
graphs or statistics) are removed. Only files proven outputs are ever removed: a file the earlier
run's manifest lists, inside the folder, with the size and SHA-256 recorded there (a planted
manifest naming ``../x`` or an absolute path deletes nothing). ``manifest.json`` lists every
file with its size and SHA-256 and the run's configuration;
:func:`~ldpgraph.experiments.records.read_records_csv` uses it to refuse a truncated or altered
``records.csv``.

Safety of the output folder:

* **One writer at a time.** A run holds an exclusive lock (``fcntl.flock``) on the file
  ``.<name>.lock`` beside ``--out`` while it writes (:func:`output_lock`; the command line takes
  it before any work, :func:`claim_output`). A second run on the same ``--out`` finds it held and
  refuses with :class:`OutputLockedError` instead of racing (the last rename used to win without
  a word). The lock file is removed when the lock is released.
* **No gap.** An earlier result is replaced by exchanging the two folders in one atomic rename
  (Linux ``renameat2(RENAME_EXCHANGE)``), so ``--out`` exists at every moment. Where that call is
  missing (other systems, or a file system without it) the earlier folder is renamed aside and
  the new one renamed in right after: ``--out`` is then absent for the time between two renames.
* **Stale temporary folders.** ``.<name>.partial-*`` and ``.<name>.old-*`` folders left by a run
  that was killed are removed by the next run on the same ``--out``, under the lock, when they
  are older than that run's start (a folder being written by a live run is never touched: that
  run holds the lock).
* **Permissions.** The result folder gets the permissions of a plain ``mkdir``
  (``0o777 & ~umask``), not the private ``0o700`` of a temporary folder (which it keeps while
  being written).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "MANIFEST_NAME",
    "OutputLockedError",
    "write_atomically",
    "read_manifest",
    "file_digest",
    "output_lock",
    "claim_output",
    "release_claim",
    "lock_path",
]

MANIFEST_NAME = "manifest.json"
_FORMAT = "ldpgraph-experiment-output"


class OutputLockedError(RuntimeError):
    """Another process is writing the same output folder (it holds the folder's lock)."""


# ------------------------------------------------------------------------------ the lock

#: lock file path -> [descriptor, holds, claims, time of the first acquisition]
_HELD: dict[str, list[Any]] = {}
_HELD_GUARD = threading.RLock()
_THREAD_LOCKS: dict[str, threading.RLock] = {}


def lock_path(out_dir: str | os.PathLike[str]) -> Path:
    """The lock file of an output folder: ``.<name>.lock`` beside it (an absolute path).

    >>> p = lock_path("results/run1")
    >>> p.name, p.parent.name
    ('.run1.lock', 'results')
    """
    out = Path(os.path.abspath(Path(out_dir).expanduser()))  # "." and ".." have a name too
    return out.parent / f".{out.name}.lock"


def _key(out: Path) -> str:
    lock = lock_path(out)
    return os.path.join(os.path.realpath(lock.parent), lock.name)


def _open_locked(path: str, out: Path) -> int:
    """Open (creating if needed) and lock ``path``; the descriptor of the file now at ``path``."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the lock is this process's only
        fcntl = None
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        try:
            fd = os.open(path, flags, 0o666)
        except OSError as exc:
            raise OSError(
                exc.errno,
                f"cannot create the lock file {path} of the output folder {out} ({exc.strerror}); "
                "if it is a symbolic link or not a regular file, remove it",
            ) from None
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise OutputLockedError(
                    f"another run is writing the output folder {out} (it holds the lock {path}); "
                    "wait for it to finish or choose another --out. (If no run is alive, the lock "
                    "is free: locks end with their process.)"
                ) from None
        # the holder before us may have removed the file after we opened it: lock the live file
        try:
            now = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            os.close(fd)
            continue
        mine = os.fstat(fd)
        if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            return fd
        os.close(fd)
    raise OutputLockedError(f"could not lock {path}: it keeps being replaced by another process")


def _acquire(out: Path, *, claim: bool = False) -> float:
    key = _key(out)
    with _HELD_GUARD:
        entry = _HELD.get(key)
        if entry is None:
            entry = _HELD[key] = [_open_locked(key, out), 0, 0, time.time()]
        entry[2 if claim else 1] += 1
        return entry[3]


def _release(out: Path, *, claims: bool = False) -> None:
    """Give up one hold (or, with ``claims``, every claim) of the lock; unlock when none is left."""
    key = _key(out)
    with _HELD_GUARD:
        entry = _HELD.get(key)
        if entry is None:
            return
        if claims:
            entry[2] = 0
        else:
            entry[1] = max(entry[1] - 1, 0)
        if entry[1] == 0 and entry[2] == 0:
            del _HELD[key]
            with contextlib.suppress(OSError):
                os.unlink(key)  # while still locked: the next run creates a fresh file
            os.close(entry[0])


def _forget_locks_in_child() -> None:
    """A forked child does not hold its parent's locks: close its copies of the descriptors.

    (The lock belongs to the open file, which the parent keeps open: closing the child's copy
    does not unlock it, and the child can never release it for the parent by mistake.)
    """
    global _HELD_GUARD
    for entry in _HELD.values():
        with contextlib.suppress(OSError):
            os.close(entry[0])
    _HELD.clear()
    _THREAD_LOCKS.clear()
    _HELD_GUARD = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_locks_in_child)


def _thread_lock(out: Path) -> threading.RLock:
    """Threads of one process writing one folder take turns (the file lock is per process)."""
    with _HELD_GUARD:
        return _THREAD_LOCKS.setdefault(_key(out), threading.RLock())


@contextlib.contextmanager
def output_lock(out_dir: str | os.PathLike[str]) -> Iterator[float]:
    """Hold the exclusive lock of an output folder for the duration of a ``with`` block.

    Re-entrant within a process (threads included); another process holding it makes this
    raise :class:`OutputLockedError` at once (no waiting). The lock is ``fcntl.flock`` on
    :func:`lock_path`, created if needed (a symbolic link there is refused) and removed on
    release; the operating system ends it with its process, so a killed run leaves no lock
    behind. The folder's parent must exist.

    Yields
    ------
    float
        The time (``time.time()``) at which this process first took the lock: the start of
        the run, for telling stale temporary folders.
    """
    out = Path(out_dir).expanduser()
    since = _acquire(out)
    try:
        yield since
    finally:
        _release(out)


def claim_output(out_dir: str | os.PathLike[str]) -> float:
    """Take the lock of an output folder now, for a run that will write it later.

    The command line calls this before any work, so that a second run on the same ``--out``
    is refused at once rather than after its computation. The claim is given up when the next
    :func:`write_atomically` of this process on that folder finishes (written or failed), or
    when the process ends. Returns the time the lock was first taken (see :func:`output_lock`).

    Raises
    ------
    OutputLockedError
        If another process holds the lock.
    """
    return _acquire(Path(out_dir).expanduser(), claim=True)


def release_claim(out_dir: str | os.PathLike[str]) -> None:
    """Give up this process's claim (:func:`claim_output`) of an output folder, as a run that
    fails before writing does: the lock file is removed once nothing holds the lock."""
    _release(Path(out_dir).expanduser(), claims=True)


# ------------------------------------------------------------------------------ folders


def _stale_name(out: Path) -> re.Pattern[str]:
    # the names tempfile.mkdtemp gives with the prefixes used below: 8 characters of [a-z0-9_]
    return re.compile(rf"\.{re.escape(out.name)}\.(partial|old)-[a-z0-9_]{{8}}")


def _remove_stale(out: Path, since: float) -> list[Path]:
    """Remove the temporary folders of killed runs on ``out`` older than ``since`` (under the lock)."""
    pattern = _stale_name(out)
    removed = []
    try:
        entries = list(os.scandir(out.parent))
    except OSError:
        return removed
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_mtime >= since:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


def _mkdir_mode(folder: Path) -> int:
    """The permission bits a plain ``os.mkdir`` gets in ``folder`` (umask and setgid applied).

    Found by making one (a probe, removed at once): reading the umask with ``os.umask`` would
    change it for a moment in every thread of the process.
    """
    probe = folder / f".mode-probe-{os.getpid()}-{threading.get_ident()}"
    os.mkdir(probe)  # mode 0o777 & ~umask, as any mkdir
    try:
        return stat.S_IMODE(os.lstat(probe).st_mode)
    finally:
        os.rmdir(probe)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic rename (Linux ``renameat2``); False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # no renameat2 in this C library (glibc < 2.28)
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        # the kernel or the file system cannot exchange (a sandbox may answer EPERM): the
        # two-rename path runs instead and reports any real permission problem itself
        return False
    raise OSError(err, f"cannot swap {a} and {b}: {os.strerror(err)}")


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


def _run_outputs(out: Path) -> set[str]:
    """The files of ``out`` an earlier run wrote and nobody changed since: the paths its manifest
    lists that are plain relative paths inside ``out`` (no ``..``, not absolute, no symbolic link
    on the way) to a regular file of the size and SHA-256 the manifest records.

    A manifest is only a file in the folder (planted in a cloned repository or an unpacked
    archive, it may name ``../x`` or ``/home/...``): what it lists is deleted only when the
    file's bytes prove it is that output (issue 36 finding 3).
    """
    previous = read_manifest(out)
    entries = previous.get("files") if previous else None
    found: set[str] = set()
    for f in entries if isinstance(entries, list) else []:
        rel = f.get("path") if isinstance(f, dict) else None
        if not isinstance(rel, str) or rel in found or "\\" in rel or "\0" in rel:
            continue
        parts = rel.split("/")
        if rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or rel == MANIFEST_NAME:
            continue
        here, kinds = out, []
        for part in parts:
            here = here / part
            try:
                kinds.append(stat.S_IFMT(os.lstat(here).st_mode))
            except OSError:
                break
        if kinds != [stat.S_IFDIR] * (len(parts) - 1) + [stat.S_IFREG]:  # a link or a gap on the way
            continue
        try:
            digest = file_digest(here)
        except OSError:
            continue
        if digest == (f.get("bytes"), f.get("sha256")):
            found.add(rel)
    return found


def _only_ours(out: Path, outputs: set[str]) -> bool:
    """Whether ``out`` holds nothing but its manifest, the run ``outputs`` and their folders (so
    the folder can be swapped and the earlier one deleted whole): no other file, folder or link."""
    folders = {"/".join(rel.split("/")[:i]) for rel in outputs for i in range(1, rel.count("/") + 1)}
    for root, dirs, files in os.walk(out):
        for name in dirs + files:
            p = Path(root, name)
            rel, kind = p.relative_to(out).as_posix(), stat.S_IFMT(os.lstat(p).st_mode)
            if not ((kind == stat.S_IFDIR and rel in folders) or (kind == stat.S_IFREG and (
                    rel in outputs or rel == MANIFEST_NAME))):
                return False
    return True


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
    The whole write holds the lock of ``out_dir`` (:func:`output_lock`): if another process
    holds it, :class:`OutputLockedError` is raised and nothing is touched. Under the lock, the
    temporary folders of killed runs on ``out_dir`` older than this run's start are removed.

    If ``out_dir`` is absent or empty, the temporary folder replaces it by one rename. If it
    holds only an earlier run's outputs, the two folders are exchanged in one atomic rename
    (Linux ``renameat2``) and the earlier one is deleted after; where that is unavailable the
    earlier folder is renamed aside first, leaving a moment (between two renames) without
    ``out_dir``. Either way a kill at any moment leaves either the old complete result or the
    new one. If ``out_dir`` also holds files of its own (not outputs), those are kept: the new
    files are moved in one by one with :func:`os.replace` (each atomic), the earlier run's files
    that this run does not write are removed, and the manifest is moved last. An earlier run's
    output is a file its manifest lists, inside ``out_dir`` (no ``..``, absolute path or link on
    the way), whose size and SHA-256 match the manifest's: anything else is kept, whatever the
    manifest says (so the earlier outputs are read and hashed once more: about 1 s per 250 MB). The result
    folder gets the permissions of a plain ``mkdir``. A :func:`claim_output` of this process
    on ``out_dir`` ends when this call returns or raises.

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
    try:
        with output_lock(out) as since, _thread_lock(out):
            return _write_locked(out, produce, config, since)
    finally:
        _release(out, claims=True)  # a claim ends with the write it was taken for


def _write_locked(
    out: Path, produce: Callable[[Path], Mapping[str, Any]], config: Mapping[str, Any], since: float
) -> dict[str, Any]:
    parent = out.parent
    _remove_stale(out, since)
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
        os.chmod(tmp, _mkdir_mode(tmp))  # private while written, a plain folder once in place
        outputs: set[str] = set()
        if not out.exists() or (out.is_dir() and not any(out.iterdir())):
            os.replace(tmp, out)  # rename onto an empty folder replaces it atomically
        elif out.is_dir() and _only_ours(out, outputs := _run_outputs(out)):
            if _exchange(tmp, out):  # no moment without --out; tmp now holds the earlier result
                if tmp.is_symlink():  # --out was a link to a folder: drop the link, not its folder
                    tmp.unlink()
                else:
                    shutil.rmtree(tmp, ignore_errors=True)
            else:
                old = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}.old-"))
                os.replace(out, old / "out")
                os.replace(tmp, out)  # --out is absent between these two renames
                shutil.rmtree(old, ignore_errors=True)
        else:
            _merge_into(out, tmp, [f["path"] for f in files], outputs if out.is_dir() else set())
            shutil.rmtree(tmp, ignore_errors=True)
        return paths
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _merge_into(out: Path, tmp: Path, new_files: list[str], outputs: set[str]) -> None:
    """Move the new files into ``out`` one by one, then delete the earlier run's ``outputs`` that
    this run does not write (nothing else: a file not proven an output is kept)."""
    if not out.is_dir():
        raise NotADirectoryError(f"--out {out} exists and is not a folder")
    for rel in new_files:
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp / rel, dst)
    for rel in sorted(outputs - set(new_files)):
        try:
            (out / rel).unlink()
        except FileNotFoundError:
            pass
    os.replace(tmp / MANIFEST_NAME, out / MANIFEST_NAME)
