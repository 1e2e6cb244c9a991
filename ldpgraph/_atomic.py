"""Safe writes: a file appears under its name complete or not at all, and nothing planted is followed.

Every writer of the package that produces a named output file (report files, node label
tables, broadcasts) goes through :func:`atomic_write`:

1. a temporary file with a unique, unpredictable name (``.<name>.<random>.partial``) is
   *created* in the target's folder with ``O_CREAT | O_EXCL | O_NOFOLLOW``: a file or a symbolic
   link already present under that name is never opened, so a link planted in the folder
   cannot redirect the write, and two writers of one output never share a temporary file;
2. the data is written to that file through the descriptor this process opened (never by
   reopening the name), flushed and ``fsync``'d;
3. the file is renamed onto the target with :func:`os.replace` (atomic on one file system:
   readers see the old file or the new one, never a mix). A symbolic link *at* the target is
   replaced by the new file; the file it pointed to is left untouched;
4. on any error (including ``KeyboardInterrupt``) the temporary file is removed.

The new file gets the permissions of a file made by a plain ``open(path, "w")``
(``0o666 & ~umask``: the kernel applies the umask to the mode given to ``os.open``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_write", "create_exclusive"]

#: suffix of the temporary files of :func:`atomic_write`
PARTIAL_SUFFIX = ".partial"
_ATTEMPTS = 100


def create_exclusive(folder: str | os.PathLike[str], prefix: str, suffix: str = "") -> tuple[int, Path]:
    """Create a new empty file with a unique random name in ``folder``; return (descriptor, path).

    The name is ``prefix + 16 random hex digits + suffix``. The file is created with
    ``O_CREAT | O_EXCL`` (and ``O_NOFOLLOW`` where the platform has it), mode ``0o666`` minus the
    umask: if anything at all exists under the name (a file, a directory, a symbolic link,
    dangling or not), the call fails and another name is drawn; nothing is ever followed.

    Parameters
    ----------
    folder : path-like
        Where to create the file (it must exist).
    prefix, suffix : str
        Around the random part of the name.

    Returns
    -------
    tuple of (int, pathlib.Path)
        The descriptor, open for writing only, and the path of the new file.

    Raises
    ------
    FileExistsError
        If 100 random names in a row were taken (something is filling the folder).
    OSError
        If the folder is missing or not writable.
    """
    folder = Path(folder)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for extra in ("O_NOFOLLOW", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, extra, 0)
    for _ in range(_ATTEMPTS):
        path = folder / f"{prefix}{secrets.token_hex(8)}{suffix}"
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(
        f"could not create a temporary file in {folder}: {_ATTEMPTS} random names in a row were "
        "taken; remove the stray files named like "
        f"{prefix}*{suffix} there and try again"
    )


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str],
    mode: str = "wb",
    *,
    encoding: str | None = None,
    newline: str | None = None,
) -> Iterator[IO[Any]]:
    """Write ``path`` safely: a unique temporary file in its folder, then an atomic rename.

    Parameters
    ----------
    path : path-like
        The file to produce. Its folder must exist.
    mode : {"wb", "w"}
        Binary or text.
    encoding, newline : str, optional
        As for :func:`open`, in text mode.

    Yields
    ------
    file object
        Open on the temporary file (see the module docstring). When the ``with`` block ends
        normally the file is flushed, ``fsync``'d and renamed onto ``path``; when it raises,
        the temporary file is removed and ``path`` is left as it was.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with atomic_write(Path(d) / "a.txt", "w", encoding="utf-8") as fh:
    ...         _ = fh.write("hello")
    ...     sorted(p.name for p in Path(d).iterdir()), (Path(d) / "a.txt").read_text()
    (['a.txt'], 'hello')
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    if mode == "wb" and (encoding is not None or newline is not None):
        raise ValueError("encoding and newline are for text mode (mode='w') only")
    path = Path(path)
    folder = path.parent
    try:
        fd, tmp = create_exclusive(folder, f".{path.name}.", PARTIAL_SUFFIX)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"cannot write {path}: its folder {folder} does not exist (create it first)"
        ) from None
    except NotADirectoryError:
        raise NotADirectoryError(f"cannot write {path}: {folder} is not a folder") from None
    try:
        try:
            fh = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        except BaseException:
            os.close(fd)
            raise
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_folder(folder)
