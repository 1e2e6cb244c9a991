r"""Checksum-verified, atomic download of a dataset into the cache (:func:`fetch`)."""

from __future__ import annotations

import gzip
import http.client
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from pathlib import Path
from typing import IO, Any

from .._validation import check_positive_real
from ._files import _CHUNK, _is_gzip
from .errors import ChecksumError, DownloadError
from .places import _FETCH_COMMAND, _data_dirs, _first_file, default_cache_dir
from .registry import DatasetInfo, _get_info, bundled_data_dir
from .verify import _check_content

__all__ = ["fetch"]


def _normalize_url(url: str | os.PathLike[str]) -> str:
    s = os.fspath(url)
    scheme = urllib.parse.urlsplit(s).scheme.lower()
    if scheme in ("http", "https", "file"):
        return s
    p = Path(s).expanduser()
    if p.is_file():
        return p.resolve().as_uri()
    raise ValueError(f"url must be an http, https or file URL or an existing local file, got {s!r}")


def _max_download_size(info: DatasetInfo) -> int:
    """The most bytes a valid download can have: the registered sizes, plus gzip's stored-block overhead.

    A valid body is the shared ``.gz`` (``size_gz`` bytes), the raw file (``size_raw``), or another
    gzip compression of it, which is at most ``size_raw`` plus 5 bytes per 65,535-byte stored block
    plus an 18-byte header and trailer (and a file name), bounded here by ``size_raw / 1000 + 1024``.
    """
    return max(info.size_gz, info.size_raw + info.size_raw // 1000 + 1024)


def _set_socket_timeout(resp: Any, seconds: float) -> None:
    raw = getattr(getattr(resp, "fp", None), "raw", None)
    sock = getattr(raw, "_sock", None)
    if sock is not None:
        sock.settimeout(max(seconds, 1e-3))


def _download_to(
    url: str, out: IO[bytes], *, timeout: float, progress: bool, label: str, max_bytes: int | None = None
) -> int:
    """Stream ``url`` into ``out`` within ``timeout`` seconds overall and ``max_bytes``.

    Raise DownloadError on any failure, a short transfer, a body larger than ``max_bytes``, or
    when the overall deadline passes (every socket operation waits at most the time left).
    """
    from .._version import __version__

    deadline = time.monotonic() + timeout
    req = urllib.request.Request(url, headers={"User-Agent": f"ldpgraph/{__version__}"})
    written = 0
    expected: int | None = None
    bar = None
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            length_header = resp.headers.get("Content-Length") if hasattr(resp, "headers") else None
            expected = int(length_header) if length_header and length_header.isdigit() else None
            if max_bytes is not None and expected is not None and expected > max_bytes:
                raise DownloadError(
                    f"{url} announces {expected:,} bytes, more than the registered size allows "
                    f"({max_bytes:,}); nothing was downloaded"
                )
            if progress:
                from tqdm.auto import tqdm

                bar = tqdm(total=expected, unit="B", unit_scale=True, desc=label, file=sys.stderr)
            read = getattr(resp, "read1", resp.read)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                _set_socket_timeout(resp, left)
                chunk = read(_CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                written += len(chunk)
                if max_bytes is not None and written > max_bytes:
                    raise DownloadError(
                        f"{url} sent more than {max_bytes:,} bytes, more than the registered size "
                        f"allows; stopped there"
                    )
                if bar is not None:
                    bar.update(len(chunk))
    except DownloadError:
        raise
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"HTTP error {exc.code} ({exc.reason}) for {url}") from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise DownloadError(f"timed out after {timeout:g} s connecting to {url}") from exc
        raise DownloadError(f"could not reach {url}: {exc.reason}") from exc
    except TimeoutError as exc:
        raise DownloadError(f"timed out after {timeout:g} s (overall deadline) downloading {url}") from exc
    except (OSError, ValueError, http.client.HTTPException) as exc:  # reset, IncompleteRead, bad URL
        raise DownloadError(f"download of {url} failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if bar is not None:
            bar.close()
    if expected is not None and written != expected:
        raise DownloadError(
            f"download of {url} was truncated: got {written:,} of {expected:,} bytes (Content-Length)"
        )
    return written


def _unlink_quietly(p: Path | None) -> None:
    if p is not None:
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's), or cannot tell: leave its file alone
    return True


def _remove_stale_parts(folder: Path, info: DatasetInfo) -> list[Path]:
    """Delete ``.part`` files of ``info`` left by a process that no longer runs (killed mid-download)."""
    pattern = re.compile(rf"^\.{re.escape(info.filename)}\.(\d+)\..*\.part$")
    removed = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for p in entries:
        m = pattern.match(p.name)
        if m and not _pid_alive(int(m.group(1))):
            _unlink_quietly(p)
            removed.append(p)
    return removed


def _verified_copy(path: Path | None, info: DatasetInfo) -> Path | None:
    if path is None:
        return None
    try:
        _check_content(path, info)
    except (ChecksumError, OSError):
        return None
    return path


def fetch(
    name: str,
    *,
    url: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
    progress: bool | None = None,
    timeout: float = 60.0,
) -> Path:
    r"""Download dataset ``name`` into the cache, verify its SHA-256, and return the local path.

    Parameters
    ----------
    name : str
        A registered name (:func:`list_datasets`).
    url : str or path-like, optional
        Install from here instead of the registered ``url``: an ``http(s)://`` or ``file://``
        URL, or a local file path (e.g. a copy of the ``.gz`` brought over by hand when offline).
        Gzip or plain content. Given, it is always used (no local copy is looked for).
    cache_dir : path-like, optional
        Target folder, created if needed. Default :func:`default_cache_dir`.
    force : bool, default False
        Download even if a verified copy is already present.
    progress : bool or None, default None
        Show a tqdm progress bar on stderr; None shows it when stderr is a terminal.
    timeout : float, default 60
        Overall deadline in seconds for the whole download (connecting and every read wait at
        most the time left).

    Returns
    -------
    pathlib.Path
        ``cache_dir / info.filename``; or, without ``url`` and ``force``, a verified copy already
        present in ``cache_dir``, in a folder of ``LDPGRAPH_DATA`` or shipped with the package.

    Raises
    ------
    DownloadError
        Network failure, HTTP error, deadline passed, fewer bytes than the announced
        Content-Length, or more than the registered size allows. The message says how to install
        the file by hand (``ldpgraph datasets fetch NAME --url FILE``).
    ChecksumError
        The content matches neither ``sha256_gz`` nor, decompressed, ``sha256_raw``. The message
        gives expected and actual digests.

    Notes
    -----
    Atomicity: the body is streamed to a temporary ``.part`` file in ``cache_dir`` (same file
    system), flushed and fsynced, verified, and then renamed with :func:`os.replace`, which is
    atomic. On any failure (including KeyboardInterrupt) the temporary file is removed; a
    ``.part`` file left by a killed process (its name holds the process id) is removed by the
    next :func:`fetch`. So the cache never holds a partial or corrupt file under the registered
    name (a previous file there is left untouched). Acceptance:

    .. math::

        \text{accept} \iff \operatorname{sha256}(\text{bytes}) = h_{gz}
        \;\lor\; \operatorname{sha256}(\operatorname{gunzip}(\text{bytes})) = h_{raw}.

    Plain (not gzip) content is checked against :math:`h_{raw}` and stored compressed
    (gzip level 9, mtime 0). The transfer stops as soon as it exceeds the registered size
    (plus gzip's overhead).

    Examples
    --------
    >>> fetch("facebook")  # shipped with the package: nothing to download  # doctest: +ELLIPSIS
    PosixPath('.../facebook_combined.txt.gz')
    """
    info = _get_info(name)
    timeout = check_positive_real(timeout, "timeout")
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = folder / info.filename
    if target.is_file() and not force:
        if _verified_copy(target, info) is not None:
            return target
        warnings.warn(f"cached file {target} failed verification; downloading again", stacklevel=2)
    if url is None and not force:
        for d in _data_dirs():
            found = _verified_copy(_first_file(info, d), info)
            if found is not None:
                return found
        bundled = bundled_data_dir()
        found = _verified_copy(_first_file(info, bundled), info) if bundled is not None else None
        if found is not None:
            return found
    src = url if url is not None else info.url
    if src is None:
        raise DownloadError(f"dataset {info.name!r} has no download URL; pass url=...")
    src = _normalize_url(src)
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    folder.mkdir(parents=True, exist_ok=True)
    _remove_stale_parts(folder, info)

    prefix = f".{info.filename}.{os.getpid()}."
    tmp: Path | None = None
    tmp_gz: Path | None = None
    try:
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".part")
        tmp = Path(tmp_name)
        with os.fdopen(fd, "wb") as out:
            _download_to(src, out, timeout=timeout, progress=progress, label=info.name,
                         max_bytes=_max_download_size(info))
            out.flush()
            os.fsync(out.fileno())
        _check_content(tmp, info)
        final = tmp
        if not _is_gzip(tmp):
            fd, gz_name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".gz.part")
            tmp_gz = Path(gz_name)
            with os.fdopen(fd, "wb") as raw_out, open(tmp, "rb") as src_fh:
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw_out, compresslevel=9, mtime=0) as gz:
                    shutil.copyfileobj(src_fh, gz, _CHUNK)
                raw_out.flush()
                os.fsync(raw_out.fileno())
            final = tmp_gz
        os.chmod(final, 0o644)
        os.replace(final, target)
        if final == tmp:
            tmp = None
        else:
            tmp_gz = None
    except DownloadError as exc:
        _unlink_quietly(tmp)
        _unlink_quietly(tmp_gz)
        hint = ""
        if not isinstance(exc, ChecksumError) and not src.startswith("file:"):
            cmd = _FETCH_COMMAND.format(name=info.name)
            hint = (f"\nOffline? Download {src} on a machine with network access, then install it "
                    f"with `{cmd} --url FILE`.")
        raise type(exc)(
            f"{exc}\nsource: {src}\nNothing was written to {folder} (the temporary download was removed)."
            + hint
        ) from exc.__cause__
    except BaseException:
        _unlink_quietly(tmp)
        _unlink_quietly(tmp_gz)
        raise
    _unlink_quietly(tmp)
    return target
