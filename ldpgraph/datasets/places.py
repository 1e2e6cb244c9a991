"""Where dataset files may be: the folders of ``LDPGRAPH_DATA``, the user cache, a dataset's file names.

Shared by :mod:`.lookup` (finding a file) and :mod:`.download` (installing one into the cache).
"""

from __future__ import annotations

import os
from pathlib import Path

from .registry import DatasetInfo

__all__ = ["default_cache_dir"]

_FETCH_COMMAND = "ldpgraph datasets fetch {name}"


def default_cache_dir() -> Path:
    """The user cache folder for downloaded datasets.

    ``$LDPGRAPH_CACHE`` if set, else ``$XDG_CACHE_HOME/ldpgraph`` if ``XDG_CACHE_HOME`` is set,
    else ``~/.cache/ldpgraph``. The folder is not created here. The command line's
    ``--cache-dir DIR`` sets ``LDPGRAPH_CACHE`` for the command.
    """
    env = os.environ.get("LDPGRAPH_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "ldpgraph"
    return Path.home() / ".cache" / "ldpgraph"


def _data_dirs() -> list[Path]:
    env = os.environ.get("LDPGRAPH_DATA", "")
    return [Path(p).expanduser() for p in env.split(os.pathsep) if p]


def _candidates(info: DatasetInfo, folder: Path) -> list[Path]:
    return [folder / fn for fn in (info.filename, *info.aliases)]


def _first_file(info: DatasetInfo, folder: Path) -> Path | None:
    for c in _candidates(info, folder):
        if c.is_file():
            return c
    return None
