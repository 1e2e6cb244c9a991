r"""Authenticated broadcasts: the curator signs what it publishes and accepts only what it signed.

After round r the curator publishes a broadcast file that every node downloads and that the
curator reads again in round r + 1. Anyone who can edit that file (a node, a mirror, a shared
folder) could change the noisy graph or the bounds, and recompute the unkeyed run id. So the
curator signs the file's bytes with HMAC-SHA-256 under a key only it holds, in a sidecar file
``<broadcast>.hmac``, and verifies the signature before it curates the next round: an edited
broadcast, or one it did not write, is refused. Nodes cannot verify an HMAC (they do not hold
the key); they check the broadcast's header against their own plan (ε, n, D) instead.

The key: ``--curator-key FILE``, else ``$LDPGRAPH_CURATOR_KEY``, else
``~/.config/ldpgraph/curator.key``; created on first use (32 bytes from the OS CSPRNG, mode 0600).
Like ssh with a private key, the curator refuses a key file that group or others may read or
write (mode beyond 0600: ``chmod 600 FILE``), or that is a symbolic link (issue 36 finding 10).

A broadcast is read once (:func:`read_broadcast_once`): its bytes are copied, as they are
hashed, to a private temporary file, and the protocol parses that copy, so the bytes checked are
the bytes used, whatever happens to the file meanwhile; anything but a regular file (a named
pipe that serves other bytes at each open, a device) is refused before a byte is read (issue 36
finding 4).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as tmp:
...     key = curator_key(Path(tmp) / "k")
...     b = Path(tmp) / "b.txt"
...     _ = b.write_text("noisy graph")
...     _ = sign_broadcast(b, key)
...     verify_broadcast(b, key)
...     _ = b.write_text("noisy graph, edited")
...     verify_broadcast(b, key)  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
ValueError: .../b.txt: the broadcast does not carry this curator's signature (HMAC-SHA-256 ...): ...
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["curator_key", "sign_broadcast", "verify_broadcast", "read_broadcast_once", "signature_path",
           "KEY_BYTES"]

#: length of a new key (and the smallest accepted)
KEY_BYTES = 32
_TAG = "ldpgraph-broadcast-hmac-sha256 1"


def _default_key_path() -> Path:
    env = os.environ.get("LDPGRAPH_CURATOR_KEY")
    return Path(env) if env else Path.home() / ".config" / "ldpgraph" / "curator.key"


def _open_regular(path: Path, what: str, *, follow: bool = True) -> int:
    """A read-only descriptor of ``path``, refused (ValueError) unless it is a regular file.

    Opened with ``O_NONBLOCK`` so that a named pipe without a writer cannot block the open;
    the type is read from the open descriptor (``fstat``), not from the name. ``follow=False``
    refuses a symbolic link (``O_NOFOLLOW``)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} not found: {path}") from None
    except OSError as exc:
        if not follow and os.path.islink(path):
            raise ValueError(f"{what} {path} is a symbolic link: give the file itself") from None
        raise OSError(exc.errno, f"cannot open {what} {path}: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = ("a named pipe" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
                if stat.S_ISSOCK(mode) else "not a regular file")
        raise ValueError(f"{what} {path} is {kind}: only a regular file is read (its bytes must be the "
                         "same at every read)")
    os.set_blocking(fd, True)
    return fd


def curator_key(path: str | os.PathLike | None = None) -> bytes:
    """The curator's secret key, read from ``path`` (see the module docstring), created if absent.

    Refused (ValueError) when it is a symbolic link, not a regular file, readable or writable by
    group or others (mode beyond 0600), or shorter than :data:`KEY_BYTES`.
    """
    p = Path(path) if path is not None else _default_key_path()
    if not p.exists() and not p.is_symlink():
        p.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:  # another curator process created it meanwhile
            pass
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(KEY_BYTES))
    fd = _open_regular(p, "the curator key", follow=False)
    with os.fdopen(fd, "rb") as fh:
        mode = stat.S_IMODE(os.fstat(fh.fileno()).st_mode)
        if mode & 0o077 and os.name == "posix":
            raise ValueError(f"the curator key {p} is readable or writable by others (mode {mode:04o}): "
                             f"a secret key is for its owner only; run chmod 600 {p}")
        key = fh.read()
    if len(key) < KEY_BYTES:
        raise ValueError(f"the curator key {p} holds {len(key)} bytes; a key has at least {KEY_BYTES}")
    return key


def signature_path(path: str | os.PathLike) -> Path:
    """Where the signature of a broadcast file is kept: ``<broadcast>.hmac``."""
    p = Path(path)
    return p.with_name(p.name + ".hmac")


def _mac(path: Path, key: bytes) -> str:
    mac = hmac.new(key, digestmod=hashlib.sha256)
    with os.fdopen(_open_regular(path, "the broadcast"), "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            mac.update(block)
    return mac.hexdigest()


def sign_broadcast(path: str | os.PathLike, key: bytes) -> Path:
    """Write the HMAC-SHA-256 of the broadcast file's bytes beside it; the signature's path."""
    from .._atomic import atomic_write

    p = Path(path)
    sig = signature_path(p)
    with atomic_write(sig, "w", encoding="ascii") as fh:
        fh.write(f"{_TAG} {_mac(p, key)}\n")
    return sig


def _check_signature(p: Path, digest: str) -> None:
    """ValueError unless ``digest`` (the HMAC of the bytes read) is the one signed beside ``p``."""
    sig = signature_path(p)
    try:
        fd = _open_regular(sig, "the broadcast's signature")
    except FileNotFoundError:
        raise ValueError(f"{p}: no signature {sig.name} beside the broadcast: the curator accepts only the "
                         "broadcasts it signed (its round-1 output, with the same curator key)") from None
    with os.fdopen(fd, "rb") as fh:
        text = fh.read(4096).decode("ascii", errors="replace").strip()
    tag, _, mac = text.rpartition(" ")
    if tag != _TAG or not hmac.compare_digest(mac.encode(), digest.encode()):
        raise ValueError(f"{p}: the broadcast does not carry this curator's signature (HMAC-SHA-256 in "
                         f"{sig.name}): it was edited after round 1, or signed with another curator key")


def verify_broadcast(path: str | os.PathLike, key: bytes) -> None:
    """ValueError unless the broadcast file carries this curator's signature (constant-time check).

    Only a check: a caller that goes on to read the file should use :func:`read_broadcast_once`,
    which checks and hands over the same bytes."""
    p = Path(path)
    _check_signature(p, _mac(p, key))


@contextlib.contextmanager
def read_broadcast_once(path: str | os.PathLike, key: bytes | None = None) -> Iterator[Path]:
    """Read a broadcast file once, into a private copy; with ``key``, check its signature on the
    bytes copied. Yields the copy's path (named like the original), for the protocol's reader.

    The copy lives in a new private temporary folder (mode 0700) that is removed on exit; a
    ValueError raised inside the ``with`` block names ``path``, not the copy. Anything but a
    regular file is refused (ValueError) before a byte is read. Costs one copy of the file
    (disk or tmpfs of the temporary folder) and one pass over it; memory stays at 1 MiB.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     key = curator_key(Path(tmp) / "k")
    ...     b = Path(tmp) / "b.txt"
    ...     _ = b.write_text("noisy graph")
    ...     _ = sign_broadcast(b, key)
    ...     with read_broadcast_once(b, key) as copy:
    ...         _ = b.write_text("forged after the check")  # not what is read
    ...         copy.read_text()
    'noisy graph'
    """
    p = Path(path)
    fd = _open_regular(p, "the broadcast")
    with os.fdopen(fd, "rb") as src, tempfile.TemporaryDirectory(prefix="ldpgraph-broadcast-") as tmp:
        copy = Path(tmp) / (p.name or "broadcast")
        mac = hmac.new(key, digestmod=hashlib.sha256) if key is not None else None
        with open(copy, "xb") as dst:
            for block in iter(lambda: src.read(1 << 20), b""):
                if mac is not None:
                    mac.update(block)
                dst.write(block)
        if mac is not None:
            _check_signature(p, mac.hexdigest())
        try:
            yield copy
        except ValueError as exc:
            if str(copy) not in str(exc):
                raise
            raise ValueError(str(exc).replace(str(copy), str(p))) from None
