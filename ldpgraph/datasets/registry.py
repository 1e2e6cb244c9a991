"""The dataset registry: :class:`DatasetInfo` entries read from the manifest ``datasets/manifest.json``.

The manifest is data, not code: the top-level ``datasets/`` folder of the repository holds it
(with the files shipped there, see ``datasets/SOURCES.md``), and the installed package holds the
same folder as ``ldpgraph/_data/`` (:func:`bundled_data_dir`).
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from . import _files
from .histograms import (
    _fingerprint_stats,
    _parse_fingerprint_file,
    _parse_word_counts_file,
    _word_count_stats,
)

__all__ = ["DatasetInfo", "list_datasets", "dataset_info", "bundled_data_dir"]

MANIFEST_NAME = "manifest.json"
_MANIFEST_FORMAT = "ldpgraph-datasets"


@dataclass(frozen=True)
class DatasetInfo:
    """One registered dataset.

    Attributes
    ----------
    name : str
        Registry name (``"facebook"``).
    kind : {"graph", "histogram"}
        What :func:`load_dataset` returns: a graph, or a histogram-like integer array.
    filename : str
        File name in a data folder and in the cache (the ``.gz`` name of the shared folder).
    source_page : str
        The official page describing the data (SNAP page, Project Gutenberg, paper repository).
    url : str or None
        Direct download address. For the SNAP graphs this is SNAP's own ``.gz``; for the
        histograms it is the pinned commit of the public repository the shared copy came from.
    sha256_gz, size_gz : str, int
        Digest and size of ``filename`` as distributed in the shared folder (``gzip -9 -n``). A copy
        compressed differently (SNAP's own ``.gz``) does not match it; see ``sha256_raw``.
    sha256_raw, size_raw : str, int
        Digest and size of the uncompressed content: the robust check.
    stats : Mapping[str, int]
        Expected statistics. Graphs: ``nodes``, ``edges``, ``max_degree``, ``triangles`` of the
        simple undirected graph (and ``directed_edges`` for a directed source). The node and edge
        counts (histograms: their lengths and sums) are checked the first time a file is used.
    directed : bool
        Whether the source lists directed edges (the graph is read as undirected).
    description, citation, license, provenance : str
        Human-readable notes; ``provenance`` names the exact copy the shared file was taken from.
    aliases : tuple of str
        Other file names accepted in a data folder (the uncompressed name, upstream spellings).
    bundled : bool
        Whether the file ships inside the package (:func:`bundled_data_dir`).
    """

    name: str
    kind: Literal["graph", "histogram"]
    filename: str
    source_page: str
    url: str | None
    sha256_gz: str
    size_gz: int
    sha256_raw: str
    size_raw: int
    stats: Mapping[str, int] = field(compare=False)
    description: str = field(compare=False)
    citation: str = field(compare=False)
    license: str = field(compare=False)
    provenance: str = field(compare=False, default="")
    directed: bool = False
    aliases: tuple[str, ...] = ()
    parser: Callable[[Path, DatasetInfo], Any] | None = field(default=None, compare=False, repr=False)
    bundled: bool = field(default=False, compare=False)

    def load(self, path: str | os.PathLike[str]) -> Any:
        """Parse the file at ``path`` (gzip-compressed or not) into this dataset's object."""
        if self.parser is None:
            raise ValueError(f"dataset {self.name!r} has no parser")
        return self.parser(Path(path), self)


def _parse_graph_file(path: Path, info: DatasetInfo) -> Any:
    return _files._read_graph(path)  # looked up at call time, where a test can replace it


def _graph_stats(g: Any) -> dict[str, int]:
    return {"nodes": int(g.n_nodes), "edges": int(g.n_edges)}


#: manifest ``parser`` name -> (file parser, statistics of the parsed object checked on first use)
_PARSERS: dict[str, tuple[Callable[[Path, DatasetInfo], Any], Callable[[Any], dict[str, int]]]] = {
    "edgelist": (_parse_graph_file, _graph_stats),
    "word_counts": (_parse_word_counts_file, _word_count_stats),
    "fingerprint": (_parse_fingerprint_file, _fingerprint_stats),
}


def _stats_function(info: DatasetInfo) -> Callable[[Any], dict[str, int]] | None:
    for parser, stats in _PARSERS.values():
        if info.parser is parser:
            return stats
    return None


def bundled_data_dir() -> Path | None:
    """The folder of data shipped with ldpgraph (the manifest and ``facebook_combined.txt.gz``).

    ``ldpgraph/_data`` in an installed package (setuptools maps the repository's top-level
    ``datasets/`` folder there), else ``datasets/`` beside the ``ldpgraph`` folder of a source
    checkout; None if neither holds the manifest.

    Examples
    --------
    >>> (bundled_data_dir() / "manifest.json").is_file()
    True
    """
    pkg = Path(__file__).resolve().parent.parent
    for folder in (pkg / "_data", pkg.parent / "datasets"):
        manifest = folder / MANIFEST_NAME
        if manifest.is_file():
            try:
                with open(manifest, encoding="utf-8") as fh:
                    if json.load(fh).get("format") == _MANIFEST_FORMAT:
                        return folder
            except (OSError, ValueError):
                continue
    return None


_REQUIRED = ("name", "kind", "filename", "source_page", "url", "sha256_gz", "size_gz", "sha256_raw",
             "size_raw", "stats", "description", "citation", "license", "parser")


def _entry_from_manifest(d: Mapping[str, Any], where: Path) -> DatasetInfo:
    missing = [k for k in _REQUIRED if k not in d]
    if missing:
        raise ValueError(f"{where}: dataset entry {d.get('name')!r} lacks {', '.join(missing)}")
    if d["parser"] not in _PARSERS:
        raise ValueError(f"{where}: dataset {d['name']!r} has unknown parser {d['parser']!r} "
                         f"(known: {', '.join(_PARSERS)})")
    if d["kind"] not in ("graph", "histogram"):
        raise ValueError(
            f"{where}: dataset {d['name']!r} has kind {d['kind']!r}; expected graph or histogram"
        )
    return DatasetInfo(
        name=d["name"],
        kind=d["kind"],
        filename=d["filename"],
        source_page=d["source_page"],
        url=d["url"],
        sha256_gz=d["sha256_gz"],
        size_gz=int(d["size_gz"]),
        sha256_raw=d["sha256_raw"],
        size_raw=int(d["size_raw"]),
        stats=MappingProxyType({k: int(v) for k, v in d["stats"].items()}),
        description=d["description"],
        citation=d["citation"],
        license=d["license"],
        provenance=d.get("provenance", ""),
        directed=bool(d.get("directed", False)),
        aliases=tuple(d.get("aliases", ())),
        parser=_PARSERS[d["parser"]][0],
        bundled=bool(d.get("bundled", False)),
    )


def _load_manifest() -> dict[str, DatasetInfo]:
    folder = bundled_data_dir()
    if folder is None:
        raise RuntimeError(
            "ldpgraph's dataset manifest (datasets/manifest.json, installed as ldpgraph/_data/manifest.json) "
            "is missing: the installation is incomplete; reinstall ldpgraph"
        )
    where = folder / MANIFEST_NAME
    with open(where, encoding="utf-8") as fh:
        doc = json.load(fh)
    entries = [_entry_from_manifest(d, where) for d in doc["datasets"]]
    return {info.name: info for info in entries}


#: name -> entry, in manifest order (graphs first)
_REGISTRY: dict[str, DatasetInfo] = _load_manifest()


def _unknown_name_error(name: object) -> ValueError:
    known = list(_REGISTRY)
    msg = f"unknown dataset {name!r}; known datasets: {', '.join(known)}"
    if isinstance(name, str):
        close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.5)
        if close:
            msg += f". Did you mean {close[0]!r}?"
    return ValueError(msg)


def _get_info(name: str | DatasetInfo) -> DatasetInfo:
    if isinstance(name, DatasetInfo):
        return name
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__} {name!r}")
    info = _REGISTRY.get(name) or _REGISTRY.get(name.strip().lower())
    if info is None:
        raise _unknown_name_error(name)
    return info


def list_datasets(kind: Literal["graph", "histogram"] | None = None) -> list[str]:
    """Names of the registered datasets, graphs first.

    Parameters
    ----------
    kind : {"graph", "histogram"} or None
        Keep only datasets of this kind.

    Examples
    --------
    >>> list_datasets()
    ['facebook', 'wiki-vote', 'email-enron', 'shakespeare', 'exac-sfs']
    >>> list_datasets("histogram")
    ['shakespeare', 'exac-sfs']
    """
    if kind not in (None, "graph", "histogram"):
        raise ValueError(f"kind must be 'graph', 'histogram' or None, got {kind!r}")
    return [n for n, info in _REGISTRY.items() if kind is None or info.kind == kind]


def dataset_info(name: str) -> DatasetInfo:
    """The registry entry of ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not registered; the message lists the known names and a close match.

    Examples
    --------
    >>> info = dataset_info("facebook")
    >>> info.kind, info.filename, info.stats["nodes"], info.stats["edges"], info.bundled
    ('graph', 'facebook_combined.txt.gz', 4039, 88234, True)
    >>> dataset_info("facebok")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset 'facebok'; known datasets: facebook, ... Did you mean 'facebook'?
    """
    return _get_info(name)
