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

import hashlib
import hmac
import os
import secrets
from pathlib import Path

__all__ = ["curator_key", "sign_broadcast", "verify_broadcast", "signature_path", "KEY_BYTES"]

#: length of a new key (and the smallest accepted)
KEY_BYTES = 32
_TAG = "ldpgraph-broadcast-hmac-sha256 1"


def _default_key_path() -> Path:
    env = os.environ.get("LDPGRAPH_CURATOR_KEY")
    return Path(env) if env else Path.home() / ".config" / "ldpgraph" / "curator.key"


def curator_key(path: str | os.PathLike | None = None) -> bytes:
    """The curator's secret key, read from ``path`` (see the module docstring), created if absent."""
    p = Path(path) if path is not None else _default_key_path()
    if not p.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:  # another curator process created it meanwhile
            pass
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(KEY_BYTES))
    key = p.read_bytes()
    if len(key) < KEY_BYTES:
        raise ValueError(f"the curator key {p} holds {len(key)} bytes; a key has at least {KEY_BYTES}")
    return key


def signature_path(path: str | os.PathLike) -> Path:
    """Where the signature of a broadcast file is kept: ``<broadcast>.hmac``."""
    p = Path(path)
    return p.with_name(p.name + ".hmac")


def _mac(path: Path, key: bytes) -> str:
    mac = hmac.new(key, digestmod=hashlib.sha256)
    with open(path, "rb") as fh:
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


def verify_broadcast(path: str | os.PathLike, key: bytes) -> None:
    """ValueError unless the broadcast file carries this curator's signature (constant-time check)."""
    p = Path(path)
    sig = signature_path(p)
    try:
        text = sig.read_text(encoding="ascii", errors="replace").strip()
    except FileNotFoundError:
        raise ValueError(f"{p}: no signature {sig.name} beside the broadcast: the curator accepts only the "
                         "broadcasts it signed (its round-1 output, with the same curator key)") from None
    tag, _, mac = text.rpartition(" ")
    if tag != _TAG or not hmac.compare_digest(mac.encode(), _mac(p, key).encode()):
        raise ValueError(f"{p}: the broadcast does not carry this curator's signature (HMAC-SHA-256 in "
                         f"{sig.name}): it was edited after round 1, or signed with another curator key")
