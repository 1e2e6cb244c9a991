r"""Named datasets: registry, local lookup, verified download, and synthetic graphs by spec.

Real data
---------
Five public datasets are registered (:func:`list_datasets`): three SNAP graphs (``facebook``,
``wiki-vote``, ``email-enron``) and two histograms (``shakespeare`` word counts, ``exac-sfs``
site-frequency spectrum). A dataset file is looked up, in this order, in

1. the explicit ``path`` argument (a file, or a folder holding the file);
2. the folder(s) named by the ``LDPGRAPH_DATA`` environment variable (``os.pathsep``-separated);
3. the user cache: ``$LDPGRAPH_CACHE`` if set, else ``$XDG_CACHE_HOME/ldpgraph``, else
   ``~/.cache/ldpgraph`` (:func:`default_cache_dir`).

:func:`fetch` (the command ``ldpgraph datasets fetch NAME``) downloads into the cache. The
download goes to a temporary file in the cache folder, is checked against the recorded SHA-256,
and only then is moved into place with :func:`os.replace`; a truncated or corrupt download is
deleted and never lands in the cache.

Checksums
---------
Each entry records two SHA-256 digests, both taken from ``SOURCES.md`` of the shared data folder:

* ``sha256_gz``: the ``.gz`` file *as distributed in the shared folder* (made with ``gzip -9 -n``).
  An upstream copy compressed by someone else (SNAP's own ``.gz``, a recompressed mirror) holds the
  same bytes once decompressed but need not match this digest.
* ``sha256_raw``: the uncompressed content. This is the robust check: a downloaded ``.gz`` whose
  bytes are not the shared file's is accepted exactly when its decompressed content matches
  ``sha256_raw``; an uncompressed download is checked against ``sha256_raw`` and then stored
  gzip-compressed under the registered file name.

The registered URLs were not downloaded when this registry was written (no network access). The
shared files are recorded in ``SOURCES.md`` as byte-identical to SNAP's originals (CRLF line endings
and headers kept), so SNAP's downloads are expected to pass the ``sha256_raw`` check; if SNAP ever
changes a file, :func:`fetch` refuses it with a :class:`ChecksumError` rather than caching it.

Synthetic graphs
----------------
:func:`synthetic_graph` builds a graph from a spec string with igraph, reproducibly from ``rng``::

    ba:n=<int>,m=<int>            Barabasi-Albert, n nodes, m edges attached per new node
    er:n=<int>,p=<float>          Erdos-Renyi G(n, p)
    er:n=<int>,m=<int>            Erdos-Renyi G(n, m)
    ws:n=<int>,k=<even int>,p=<float>   Watts-Strogatz ring, degree k, rewiring probability p

:func:`resolve_graph` accepts a dataset name, a spec or an edge-list file path.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import http.client
import math
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ._validation import check_positive_real, check_rng

__all__ = [
    "DatasetInfo",
    "WordCounts",
    "DatasetNotFoundError",
    "DownloadError",
    "ChecksumError",
    "list_datasets",
    "dataset_info",
    "default_cache_dir",
    "locate_dataset",
    "dataset_path",
    "verify_dataset",
    "load_dataset",
    "fetch",
    "count_words",
    "parse_fingerprint",
    "parse_synthetic_spec",
    "synthetic_graph",
    "resolve_graph",
]

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16
_FETCH_COMMAND = "ldpgraph datasets fetch {name}"


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


class DatasetNotFoundError(FileNotFoundError):
    """A registered dataset is not present in any of the places looked at."""


class DownloadError(OSError):
    """A download failed (network error, HTTP error, timeout or truncated transfer).

    Nothing is written to the cache when this is raised.
    """


class ChecksumError(DownloadError):
    """Downloaded (or local) content does not match the recorded SHA-256 digest."""


# ---------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------


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
        simple undirected graph (and ``directed_edges`` for a directed source).
    directed : bool
        Whether the source lists directed edges (the graph is read as undirected).
    description, citation, license, provenance : str
        Human-readable notes; ``provenance`` names the exact copy the shared file was taken from.
    aliases : tuple of str
        Other file names accepted in a data folder (the uncompressed name, upstream spellings).
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

    def load(self, path: str | os.PathLike[str]) -> Any:
        """Parse the file at ``path`` (gzip-compressed or not) into this dataset's object."""
        if self.parser is None:
            raise ValueError(f"dataset {self.name!r} has no parser")
        return self.parser(Path(path), self)


class WordCounts(NamedTuple):
    """Word-count histogram: ``counts[i]`` occurrences of ``words[i]``, sorted by descending count.

    Ties are ordered alphabetically, so the order is deterministic.
    """

    counts: NDArray[np.int64]
    words: NDArray[np.str_]


def _parse_graph_file(path: Path, info: DatasetInfo) -> Any:
    return _read_graph(path)


def _parse_word_counts_file(path: Path, info: DatasetInfo) -> WordCounts:
    with _open_binary(path) as fh:
        text = fh.read().decode("utf-8", errors="replace")
    return count_words(text)


def _parse_fingerprint_file(path: Path, info: DatasetInfo) -> NDArray[np.int64]:
    with _open_binary(path) as fh:
        text = fh.read().decode("ascii", errors="replace")
    return parse_fingerprint(text.splitlines())


_SNAP_CITATION = 'J. Leskovec and A. Krevl, "SNAP Datasets: Stanford Large Network Dataset Collection", 2014.'
_SNAP_LICENSE = (
    "SNAP gives no formal license; the data are published for research use and users are asked "
    "to cite the SNAP collection and the original paper."
)


def _entry(**kw: Any) -> DatasetInfo:
    kw["stats"] = MappingProxyType(dict(kw["stats"]))
    return DatasetInfo(**kw)


_REGISTRY: dict[str, DatasetInfo] = {
    info.name: info
    for info in (
        _entry(
            name="facebook",
            kind="graph",
            filename="facebook_combined.txt.gz",
            source_page="https://snap.stanford.edu/data/ego-Facebook.html",
            url="https://snap.stanford.edu/data/facebook_combined.txt.gz",
            sha256_gz="6071bf257fdd8039c4d9967ebdf49937f32b2883507c559c32f34f4347c6d326",
            size_gz=223_648,
            sha256_raw="f41c026ed8af3cc3359f1ca5573d0605fb09ae0eefa34544b820fd8c6e2ef296",
            size_raw=854_362,
            stats={"nodes": 4_039, "edges": 88_234, "max_degree": 1_045, "triangles": 1_612_010},
            description=(
                "SNAP ego-Facebook, combined: friendship edges of ten Facebook ego networks, "
                "undirected, one 'u v' line per edge, node ids 0..4038, no header."
            ),
            citation=(
                "J. McAuley and J. Leskovec, \"Learning to Discover Social Circles in Ego Networks\", "
                "NIPS 2012. " + _SNAP_CITATION
            ),
            license=_SNAP_LICENSE,
            provenance=(
                "GitHub colingo1/triangle-counting, data/facebook_combined.txt at commit "
                "3cd5eaeb1f369fd66b60a11b55e7ee2411f14315 (git blob 7b6b8273...)."
            ),
            aliases=("facebook_combined.txt",),
            parser=_parse_graph_file,
        ),
        _entry(
            name="wiki-vote",
            kind="graph",
            filename="Wiki-Vote.txt.gz",
            source_page="https://snap.stanford.edu/data/wiki-Vote.html",
            url="https://snap.stanford.edu/data/wiki-Vote.txt.gz",
            sha256_gz="df799a4d07c6090c7039121c7a649333a83f951b40850a17e1ce46b21a7df0d9",
            size_gz=290_494,
            sha256_raw="6f371ed427cc96f636580561da94c8f4ba823113da703cd491c0b0e05c6aa696",
            size_raw=1_095_059,
            stats={
                "nodes": 7_115,
                "edges": 100_762,
                "max_degree": 1_065,
                "triangles": 608_389,
                "directed_edges": 103_689,
            },
            description=(
                "SNAP wiki-Vote: Wikipedia adminship votes, directed 'from<TAB>to' lines with 4 '#' "
                "header lines and CRLF endings; node ids 3..8297 (not contiguous). Read as the simple "
                "undirected graph."
            ),
            citation=(
                "J. Leskovec, D. Huttenlocher and J. Kleinberg, \"Predicting Positive and Negative Links "
                "in Online Social Networks\", WWW 2010; \"Signed Networks in Social Media\", CHI 2010. "
                + _SNAP_CITATION
            ),
            license=_SNAP_LICENSE,
            provenance=(
                "GitHub joshua-benabou/Strongly-Connected-Components-and-DBSCAN, Wiki-Vote.txt at commit "
                "4f432dbbdc213568b6c9fcfdc766a7f1ebe35c9a (git blob d82bc035...)."
            ),
            directed=True,
            aliases=("Wiki-Vote.txt", "wiki-Vote.txt.gz", "wiki-Vote.txt"),
            parser=_parse_graph_file,
        ),
        _entry(
            name="email-enron",
            kind="graph",
            filename="Email-Enron.txt.gz",
            source_page="https://snap.stanford.edu/data/email-Enron.html",
            url="https://snap.stanford.edu/data/email-Enron.txt.gz",
            sha256_gz="dc97cc6d89d62ee113e8092cfc0a55e13d6afd206db7a6c819e986234ab7cf44",
            size_gz=1_055_785,
            sha256_raw="bd55e8948fb5f6be1ab1a9677582db6f18bce3272565249bb5049496b0cd4edf",
            size_raw=4_049_288,
            stats={
                "nodes": 36_692,
                "edges": 183_831,
                "max_degree": 1_383,
                "triangles": 727_044,
                "directed_edges": 367_662,
            },
            description=(
                "SNAP email-Enron: Enron e-mail communication network, undirected with every edge "
                "stored in both directions ('from<TAB>to', 4 '#' header lines, CRLF endings), node "
                "ids 0..36691."
            ),
            citation=(
                "J. Leskovec, K. Lang, A. Dasgupta and M. Mahoney, \"Community Structure in Large "
                "Networks: Natural Cluster Sizes and the Absence of Large Well-Defined Clusters\", "
                "Internet Mathematics 6(1), 2009; B. Klimt and Y. Yang, \"Introducing the Enron "
                "Corpus\", CEAS 2004. " + _SNAP_CITATION
            ),
            license=_SNAP_LICENSE,
            provenance=(
                "GitHub jlow2499/INFS-770, Email-Enron.txt at commit "
                "dbbfc6063e46ee9836303d6c04c8bc56c36f5bd8 (git blob 64c248c9...)."
            ),
            directed=True,
            aliases=("Email-Enron.txt", "email-Enron.txt.gz", "email-Enron.txt"),
            parser=_parse_graph_file,
        ),
        _entry(
            name="shakespeare",
            kind="histogram",
            filename="t8.shakespeare.txt.gz",
            source_page="https://www.gutenberg.org/ebooks/100",
            url=(
                "https://raw.githubusercontent.com/peryaudo/misc/"
                "2af446568fb9c622edc57dca8e5ae8f2a633c24b/t8.shakespeare.txt.gz"
            ),
            sha256_gz="0bc6eb9f0566a23ad608974a60760b59cb77410709f6a53e24124802e659514e",
            size_gz=2_008_978,
            sha256_raw="c5601d266987ac885ca96522b1b4e439feb7eca39f0fe1111f7342b63b6468f3",
            size_raw=5_458_199,
            stats={"tokens": 928_012, "distinct_words": 23_683, "max_count": 27_660},
            description=(
                "Complete Works of William Shakespeare, plain text (t8.shakespeare.txt, Project "
                "Gutenberg Etext #100, World Library edition, boilerplate included). Loaded as the "
                "word-count histogram of the regex [a-z]+ on the lowercased text: 23,683 words, "
                "928,012 tokens, top word 'the' (27,660)."
            ),
            citation=(
                "W. Shakespeare, The Complete Works, Project Gutenberg Etext #100 "
                "(World Library, Inc. electronic edition, 1990-1993)."
            ),
            license=(
                "The text is public domain, but this electronic edition carries the World Library "
                "notice allowing copies for personal use only, not distributed or used commercially."
            ),
            provenance=(
                "GitHub peryaudo/misc, t8.shakespeare.txt.gz at commit "
                "2af446568fb9c622edc57dca8e5ae8f2a633c24b, decompressed and recompressed (so its .gz "
                "differs from the shared one; the raw content matches)."
            ),
            aliases=("t8.shakespeare.txt",),
            parser=_parse_word_counts_file,
        ),
        _entry(
            name="exac-sfs",
            kind="histogram",
            filename="exac_sfs_unseenest_example_input.txt.gz",
            source_page="https://github.com/jameszou/unseenest",
            url=(
                "https://raw.githubusercontent.com/jameszou/unseenest/"
                "24afc3dfb74c5d6ef49427f59213661dc411f929/example/example_input.txt"
            ),
            sha256_gz="dec12d7486511f169f4967376f1e49ef484d7f5a405ed52bc8f630a6e0f36ba2",
            size_gz=1_766,
            sha256_raw="922b1d63704fae046913d360ecdc0e2df773c649d07f029d8a015212455192fb",
            size_raw=4_303,
            stats={
                "length": 1_200,
                "variants": 7_302_295,
                "allele_count_sum": 92_755_206,
                "F1": 4_012_093,
                "F2": 1_072_150,
                "alleles": 118_396,
            },
            description=(
                "Site-frequency spectrum (fingerprint) F_1..F_1200 from UnseenEst's example input: "
                "F_i variants were seen exactly i times among 118,396 alleles; very likely ExAC "
                "(the repository does not say). Loaded as an int64 array, index i-1 holding F_i."
            ),
            citation=(
                "J. Zou, G. Valiant, P. Valiant et al., \"Quantifying unobserved protein-coding "
                "variants in human populations provides a roadmap for large-scale sequencing "
                "projects\", Nature Communications 7:13293, 2016."
            ),
            license="MIT (as stated in the repository README).",
            provenance=(
                "GitHub jameszou/unseenest, example/example_input.txt at commit "
                "24afc3dfb74c5d6ef49427f59213661dc411f929 (uncompressed; git blob 753cdf97...)."
            ),
            aliases=("exac_sfs_unseenest_example_input.txt",),
            parser=_parse_fingerprint_file,
        ),
    )
}


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
    >>> info.kind, info.filename, info.stats["nodes"], info.stats["edges"]
    ('graph', 'facebook_combined.txt.gz', 4039, 88234)
    >>> dataset_info("facebok")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset 'facebok'; known datasets: facebook, ... Did you mean 'facebook'?
    """
    return _get_info(name)


# ---------------------------------------------------------------------------------------------
# Local lookup
# ---------------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """The user cache folder for downloaded datasets.

    ``$LDPGRAPH_CACHE`` if set, else ``$XDG_CACHE_HOME/ldpgraph`` if ``XDG_CACHE_HOME`` is set,
    else ``~/.cache/ldpgraph``. The folder is not created here.
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


def _search(info: DatasetInfo, path: str | os.PathLike[str] | None) -> tuple[Path | None, list[str]]:
    """Return (found path or None, description of each place looked at)."""
    looked: list[str] = []
    if path is not None:
        p = Path(path).expanduser()
        if p.is_dir():
            for c in _candidates(info, p):
                if c.is_file():
                    return c, looked
            looked.append(f"path argument (folder): {p / info.filename}")
        elif p.is_file():
            return p, looked
        else:
            looked.append(f"path argument: {p} (does not exist)")
        # An explicit path is authoritative: do not fall back to other places.
        return None, looked
    dirs = _data_dirs()
    if not dirs:
        looked.append("$LDPGRAPH_DATA: not set")
    for d in dirs:
        for c in _candidates(info, d):
            if c.is_file():
                return c, looked
        looked.append(f"$LDPGRAPH_DATA: {d / info.filename}")
    cache = default_cache_dir()
    for c in _candidates(info, cache):
        if c.is_file():
            return c, looked
    looked.append(f"cache: {cache / info.filename}")
    return None, looked


def locate_dataset(name: str, *, path: str | os.PathLike[str] | None = None) -> Path | None:
    """Where ``name`` is found locally (same order as :func:`dataset_path`), or None.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     locate_dataset("facebook", path=d) is None
    True
    """
    found, _ = _search(_get_info(name), path)
    return found


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
        ``ldpgraph datasets fetch NAME``.

    Notes
    -----
    Order: ``path``; each folder of ``$LDPGRAPH_DATA``; :func:`default_cache_dir`. In a folder the
    registered ``filename`` is tried first, then its ``aliases`` (e.g. the uncompressed name).

    Examples
    --------
    >>> dataset_path("facebook", path="/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ldpgraph.datasets.DatasetNotFoundError: dataset 'facebook' (facebook_combined.txt.gz) not found...
    """
    info = _get_info(name)
    found, looked = _search(info, path)
    if found is not None:
        return found
    if download and path is None:
        return fetch(info.name)
    cmd = _FETCH_COMMAND.format(name=info.name)
    places = "\n".join(f"  - {s}" for s in looked)
    raise DatasetNotFoundError(
        f"dataset {info.name!r} ({info.filename}) not found. Looked in:\n{places}\n"
        f"Download it with `{cmd}` (or pass download=True), or set LDPGRAPH_DATA to a folder "
        f"holding {info.filename}."
    )


# ---------------------------------------------------------------------------------------------
# Checksums
# ---------------------------------------------------------------------------------------------


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


def _open_binary(path: Path) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing if it is gzip (by magic bytes, not name)."""
    if _is_gzip(path):
        return gzip.open(path, "rb")
    return open(path, "rb")


def _hash_stream(fh: IO[bytes]) -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    while chunk := fh.read(_CHUNK):
        h.update(chunk)
        n += len(chunk)
    return h.hexdigest(), n


def _check_content(path: Path, info: DatasetInfo) -> None:
    """Raise ChecksumError unless ``path`` is the dataset (as the shared .gz, or by raw content)."""
    if _is_gzip(path):
        with open(path, "rb") as fh:
            gz_hash, _ = _hash_stream(fh)
        if gz_hash == info.sha256_gz:
            return
        try:
            with gzip.open(path, "rb") as fh:
                raw_hash, raw_size = _hash_stream(fh)
        except (EOFError, OSError, zlib.error) as exc:
            raise ChecksumError(
                f"{info.name}: {path.name} is not a complete gzip stream ({exc}); "
                f"expected raw sha256 {info.sha256_raw} ({info.size_raw:,} bytes)"
            ) from None
    else:
        with open(path, "rb") as fh:
            raw_hash, raw_size = _hash_stream(fh)
    if raw_hash != info.sha256_raw:
        raise ChecksumError(
            f"{info.name}: checksum mismatch: expected raw (uncompressed) sha256 {info.sha256_raw} "
            f"({info.size_raw:,} bytes), got {raw_hash} ({raw_size:,} bytes)"
        )


def verify_dataset(name: str, *, path: str | os.PathLike[str] | None = None) -> Path:
    """Check the local file of ``name`` against its recorded SHA-256; return its path.

    The shared ``.gz`` matches ``sha256_gz``; any other file (another gzip compression, or the
    uncompressed file) must match ``sha256_raw`` once decompressed.

    Raises
    ------
    DatasetNotFoundError
        If the file is absent (see :func:`dataset_path`).
    ChecksumError
        If the content does not match; the message gives expected and actual digests.
    """
    info = _get_info(name)
    p = dataset_path(info.name, path=path)
    _check_content(p, info)
    return p


# ---------------------------------------------------------------------------------------------
# Download
# ---------------------------------------------------------------------------------------------


def _normalize_url(url: str | os.PathLike[str]) -> str:
    s = os.fspath(url)
    scheme = urllib.parse.urlsplit(s).scheme.lower()
    if scheme in ("http", "https", "file"):
        return s
    p = Path(s).expanduser()
    if p.is_file():
        return p.resolve().as_uri()
    raise ValueError(f"url must be an http, https or file URL or an existing local file, got {s!r}")


def _download_to(
    url: str, out: IO[bytes], *, timeout: float, progress: bool, label: str
) -> int:
    """Stream ``url`` into ``out``; raise DownloadError on any failure or short transfer."""
    from . import __version__

    req = urllib.request.Request(url, headers={"User-Agent": f"ldpgraph/{__version__}"})
    written = 0
    expected: int | None = None
    bar = None
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            length_header = resp.headers.get("Content-Length") if hasattr(resp, "headers") else None
            expected = int(length_header) if length_header and length_header.isdigit() else None
            if progress:
                from tqdm.auto import tqdm

                bar = tqdm(total=expected, unit="B", unit_scale=True, desc=label, file=sys.stderr)
            while chunk := resp.read(_CHUNK):
                out.write(chunk)
                written += len(chunk)
                if bar is not None:
                    bar.update(len(chunk))
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"HTTP error {exc.code} ({exc.reason}) for {url}") from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise DownloadError(f"timed out after {timeout:g} s connecting to {url}") from exc
        raise DownloadError(f"could not reach {url}: {exc.reason}") from exc
    except TimeoutError as exc:
        raise DownloadError(f"timed out after {timeout:g} s downloading {url}") from exc
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


def fetch(
    name: str,
    *,
    url: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
    progress: bool | None = None,
    timeout: float = 60.0,
) -> Path:
    r"""Download dataset ``name`` into the cache, verify its SHA-256, and return the cached path.

    Parameters
    ----------
    name : str
        A registered name (:func:`list_datasets`).
    url : str or path-like, optional
        Download from here instead of the registered ``url``: an ``http(s)://`` or ``file://``
        URL, or a local file path (e.g. a copy of the shared ``.gz``). Gzip or plain content.
    cache_dir : path-like, optional
        Target folder, created if needed. Default :func:`default_cache_dir`.
    force : bool, default False
        Download even if a verified copy is already in ``cache_dir``.
    progress : bool or None, default None
        Show a tqdm progress bar on stderr; None shows it when stderr is a terminal.
    timeout : float, default 60
        Socket timeout in seconds for connecting and for each read.

    Returns
    -------
    pathlib.Path
        ``cache_dir / info.filename``.

    Raises
    ------
    DownloadError
        Network failure, HTTP error, timeout, or fewer bytes than the announced Content-Length.
    ChecksumError
        The content matches neither ``sha256_gz`` nor, decompressed, ``sha256_raw``. The message
        gives expected and actual digests.

    Notes
    -----
    Atomicity: the body is streamed to a temporary file in ``cache_dir`` (same file system),
    flushed and fsynced, verified, and then renamed with :func:`os.replace`, which is atomic. On
    any failure the temporary file is removed, so the cache never holds a partial or corrupt
    file under the registered name (a previous file there is left untouched). Acceptance:

    .. math::

        \text{accept} \iff \operatorname{sha256}(\text{bytes}) = h_{gz}
        \;\lor\; \operatorname{sha256}(\operatorname{gunzip}(\text{bytes})) = h_{raw}.

    Plain (not gzip) content is checked against :math:`h_{raw}` and stored compressed
    (gzip level 9, mtime 0).

    Examples
    --------
    >>> fetch("facebook")  # doctest: +SKIP
    PosixPath('/home/me/.cache/ldpgraph/facebook_combined.txt.gz')
    """
    info = _get_info(name)
    timeout = check_positive_real(timeout, "timeout")
    folder = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = folder / info.filename
    if target.is_file() and not force:
        try:
            _check_content(target, info)
            return target
        except ChecksumError as exc:
            warnings.warn(
                f"cached file {target} failed verification ({exc}); downloading again", stacklevel=2
            )
    src = url if url is not None else info.url
    if src is None:
        raise DownloadError(f"dataset {info.name!r} has no download URL; pass url=...")
    src = _normalize_url(src)
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    folder.mkdir(parents=True, exist_ok=True)

    tmp: Path | None = None
    tmp_gz: Path | None = None
    try:
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{info.filename}.", suffix=".part")
        tmp = Path(tmp_name)
        with os.fdopen(fd, "wb") as out:
            _download_to(src, out, timeout=timeout, progress=progress, label=info.name)
            out.flush()
            os.fsync(out.fileno())
        _check_content(tmp, info)
        final = tmp
        if not _is_gzip(tmp):
            fd, gz_name = tempfile.mkstemp(dir=folder, prefix=f".{info.filename}.", suffix=".gz.part")
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
        raise type(exc)(
            f"{exc}\nsource: {src}\nNothing was written to {folder} (the temporary download was removed)."
        ) from exc.__cause__
    except BaseException:
        _unlink_quietly(tmp)
        _unlink_quietly(tmp_gz)
        raise
    _unlink_quietly(tmp)
    return target


# ---------------------------------------------------------------------------------------------
# Loading and parsers
# ---------------------------------------------------------------------------------------------


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
        Check the file's SHA-256 first (:func:`verify_dataset`).

    Returns
    -------
    ldpgraph.graph.Graph or WordCounts or numpy.ndarray
        ``facebook``, ``wiki-vote``, ``email-enron``: the simple undirected graph (directed
        sources are symmetrized). ``shakespeare``: :class:`WordCounts`. ``exac-sfs``: the int64
        fingerprint, ``F[i - 1]`` = number of variants seen exactly ``i`` times, i = 1..1200.

    Examples
    --------
    >>> sfs = load_dataset("exac-sfs")  # doctest: +SKIP
    >>> int(sfs[0]), len(sfs)  # doctest: +SKIP
    (4012093, 1200)
    >>> g = load_dataset("facebook")  # doctest: +SKIP
    >>> g.n_nodes, g.n_edges  # doctest: +SKIP
    (4039, 88234)
    """
    info = _get_info(name)
    p = dataset_path(info.name, path=path, download=download)
    if verify:
        _check_content(p, info)
    return info.load(p)


_WORD = re.compile(r"[a-z]+")


def count_words(text: str) -> WordCounts:
    """Word-count histogram of ``text``: occurrences of the regex ``[a-z]+`` in ``text.lower()``.

    Returns
    -------
    WordCounts
        ``counts`` (int64) sorted descending, ties by word; ``words`` aligned with ``counts``.

    Examples
    --------
    >>> wc = count_words("To be, or not to be: that is the question.")
    >>> wc.counts.tolist(), wc.words.tolist()[:3]
    ([2, 2, 1, 1, 1, 1, 1, 1], ['be', 'to', 'is'])
    """
    counter = Counter(_WORD.findall(text.lower()))
    words = np.array(list(counter.keys()), dtype=np.str_)
    counts = np.fromiter(counter.values(), dtype=np.int64, count=len(counter))
    if counts.size == 0:
        return WordCounts(counts, words)
    order = np.lexsort((words, -counts))
    return WordCounts(counts[order], words[order])


def parse_fingerprint(lines: Iterable[str]) -> NDArray[np.int64]:
    """Parse a fingerprint (site-frequency spectrum): one non-negative integer per line.

    Blank lines are skipped. Entry ``i - 1`` of the result is ``F_i``, the number of items seen
    exactly ``i`` times.

    Examples
    --------
    >>> parse_fingerprint(["5", "2", "", "1"]).tolist()
    [5, 2, 1]
    """
    vals: list[int] = []
    for lineno, line in enumerate(lines, start=1):
        s = line.strip()
        if not s:
            continue
        try:
            v = int(s)
        except ValueError:
            raise ValueError(f"fingerprint line {lineno}: expected one integer, got {s!r}") from None
        if v < 0:
            raise ValueError(f"fingerprint line {lineno}: counts must be >= 0, got {v}")
        vals.append(v)
    return np.array(vals, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# Graph construction (the one place that depends on ldpgraph.graph)
# ---------------------------------------------------------------------------------------------


def _read_graph(path: Path) -> Any:
    """Edge-list file (gzip or plain; '#' comments; directed edges symmetrized) -> Graph."""
    from .graph import read_edgelist

    return read_edgelist(path)


def _graph_from_igraph(g: Any) -> Any:
    """igraph.Graph -> Graph."""
    from .graph import from_igraph

    return from_igraph(g)


# ---------------------------------------------------------------------------------------------
# Synthetic graphs
# ---------------------------------------------------------------------------------------------

_GRAMMAR = (
    "expected '<model>:<key>=<value>,...' with one of "
    "'ba:n=<int>,m=<int>', 'er:n=<int>,p=<float>', 'er:n=<int>,m=<int>', "
    "'ws:n=<int>,k=<even int>,p=<float>' (e.g. 'ba:n=1000000,m=10')"
)
_MODELS: dict[str, tuple[frozenset[str], ...]] = {
    "ba": (frozenset({"n", "m"}),),
    "er": (frozenset({"n", "p"}), frozenset({"n", "m"})),
    "ws": (frozenset({"n", "k", "p"}),),
}
_SPEC_RE = re.compile(r"^\s*([A-Za-z]+)\s*:(.*)$", re.DOTALL)

# igraph's C integers are 64-bit: larger sizes overflow when passed to it.
_IGRAPH_INT_MAX = 2**63 - 1

# igraph draws from one process-wide Python RNG object; serialize swaps of it.
_IGRAPH_RNG_LOCK = threading.Lock()


def _spec_error(spec: str, problem: str) -> ValueError:
    return ValueError(f"bad synthetic graph spec {spec!r}: {problem}; {_GRAMMAR}")


def _spec_int(spec: str, key: str, s: str) -> int:
    t = s.replace("_", "")
    try:
        return int(t)
    except ValueError:
        pass
    try:
        f = float(t)
    except ValueError:
        f = math.nan
    if math.isfinite(f) and f.is_integer():
        return int(f)
    raise _spec_error(spec, f"{key} must be an integer, got {s!r}")


def _spec_prob(spec: str, key: str, s: str) -> float:
    try:
        f = float(s.replace("_", ""))
    except ValueError:
        raise _spec_error(spec, f"{key} must be a number in [0, 1], got {s!r}") from None
    if not (0.0 <= f <= 1.0):
        raise _spec_error(spec, f"{key} must be in [0, 1], got {s!r}")
    return f


def parse_synthetic_spec(spec: str) -> tuple[str, dict[str, int | float]]:
    """Parse a synthetic graph spec into ``(model, params)``; see :func:`synthetic_graph`.

    Raises
    ------
    ValueError
        For an unknown model, unknown/missing/duplicate keys or out-of-range values; the message
        states the expected grammar.

    Examples
    --------
    >>> parse_synthetic_spec("ba:n=1000,m=3")
    ('ba', {'n': 1000, 'm': 3})
    >>> parse_synthetic_spec("er: n=1e4, p=0.001")
    ('er', {'n': 10000, 'p': 0.001})
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str, got {type(spec).__name__} {spec!r}")
    m = _SPEC_RE.match(spec)
    if m is None:
        raise _spec_error(spec, "missing '<model>:' prefix")
    model = m.group(1).lower()
    if model not in _MODELS:
        raise _spec_error(spec, f"unknown model {m.group(1)!r} (known: {', '.join(_MODELS)})")
    raw: dict[str, str] = {}
    body = m.group(2).strip()
    for item in body.split(",") if body else []:
        key, eq, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or not key or not value:
            raise _spec_error(spec, f"item {item.strip()!r} is not <key>=<value>")
        if key in raw:
            raise _spec_error(spec, f"duplicate key {key!r}")
        raw[key] = value
    keys = frozenset(raw)
    allowed = _MODELS[model]
    if keys not in allowed:
        want = " or ".join("{" + ", ".join(sorted(a)) + "}" for a in allowed)
        raise _spec_error(spec, f"model {model!r} takes keys {want}, got {{{', '.join(sorted(keys))}}}")

    params: dict[str, int | float] = {}
    n = _spec_int(spec, "n", raw["n"])
    if not 1 <= n <= _IGRAPH_INT_MAX:
        raise _spec_error(spec, f"n must be in [1, 2**63 - 1] (igraph's integers), got {n}")
    params["n"] = n
    if model == "ba":
        mm = _spec_int(spec, "m", raw["m"])
        max_m = max(1, n - 1)  # each new node attaches to m distinct earlier nodes
        if not 1 <= mm <= max_m:
            raise _spec_error(spec, f"m must be in [1, max(1, n-1) = {max_m}], got {mm}")
        params["m"] = mm
    elif model == "er":
        if "p" in raw:
            params["p"] = _spec_prob(spec, "p", raw["p"])
        else:
            mm = _spec_int(spec, "m", raw["m"])
            max_m = min(n * (n - 1) // 2, _IGRAPH_INT_MAX)
            if not 0 <= mm <= max_m:
                raise _spec_error(spec, f"m must be in [0, min(n(n-1)/2, 2**63 - 1) = {max_m}], got {mm}")
            params["m"] = mm
    else:  # ws
        k = _spec_int(spec, "k", raw["k"])
        if k < 2 or k % 2 or k >= n:
            raise _spec_error(spec, f"k must be an even integer with 2 <= k < n = {n}, got {k}")
        params["k"] = k
        params["p"] = _spec_prob(spec, "p", raw["p"])
    return model, params


def _igraph_generate(model: str, params: dict[str, Any], seed: int) -> Any:
    import igraph

    with _IGRAPH_RNG_LOCK:
        igraph.set_random_number_generator(random.Random(seed))
        try:
            if model == "ba":
                return igraph.Graph.Barabasi(params["n"], params["m"], directed=False)
            if model == "er":
                if "p" in params:
                    return igraph.Graph.Erdos_Renyi(n=params["n"], p=params["p"], directed=False, loops=False)
                return igraph.Graph.Erdos_Renyi(n=params["n"], m=params["m"], directed=False, loops=False)
            return igraph.Graph.Watts_Strogatz(
                1, params["n"], params["k"] // 2, params["p"], allowed_edge_types="simple"
            )
        finally:
            # igraph's documented default generator is the ``random`` module.
            igraph.set_random_number_generator(random)


def synthetic_graph(spec: str, *, rng: Any = None) -> Any:
    r"""Random graph from a spec string, generated with igraph, reproducible from ``rng``.

    Parameters
    ----------
    spec : str
        ``ba:n=<int>,m=<int>`` (Barabasi-Albert: each new node attaches to m distinct earlier
        nodes), ``er:n=<int>,p=<float>`` (G(n, p)), ``er:n=<int>,m=<int>`` (G(n, m)),
        ``ws:n=<int>,k=<even int>,p=<float>`` (Watts-Strogatz: ring where each node links to its
        k nearest neighbours, both endpoints of each edge rewired with probability p, simple).
        Integers may be written ``1000000``, ``1_000_000`` or ``1e6``; keys in any order.
        Sizes must fit igraph's 64-bit integers (n, m <= 2**63 - 1) and, for ``ba``,
        m <= max(1, n - 1); otherwise ``ValueError`` (memory is not checked).
    rng : numpy.random.Generator, int seed, SeedSequence or None
        Randomness; the same seed gives the same graph.

    Returns
    -------
    ldpgraph.graph.Graph
        A simple undirected graph on nodes 0..n-1.

    Notes
    -----
    igraph draws from a process-wide Python generator. One integer
    :math:`s \sim U\{0, \dots, 2^{63}-1\}` is drawn from ``rng``; igraph is pointed at a dedicated
    ``random.Random(s)`` for the call (under a lock) and then restored to its default, the
    ``random`` module. No global random state is read or modified.

    Examples
    --------
    >>> g = synthetic_graph("er:n=100,m=250", rng=0)
    >>> g.n_nodes, g.n_edges
    (100, 250)
    >>> synthetic_graph("ba:n=1000,m=3", rng=7).n_edges == synthetic_graph("ba:n=1000,m=3", rng=7).n_edges
    True
    """
    model, params = parse_synthetic_spec(spec)
    seed = int(check_rng(rng).integers(0, 2**63, dtype=np.int64))
    return _graph_from_igraph(_igraph_generate(model, params, seed))


def _is_file(p: Path) -> tuple[bool, str]:
    """(whether p is an existing file, why it could not be checked: "" if it could)."""
    try:
        return p.is_file(), ""
    except (OSError, ValueError) as exc:  # name too long, embedded NUL byte, ...
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return False, f"not a usable path: {reason}"


def resolve_graph(source: str | os.PathLike[str], *, rng: Any = None) -> Any:
    """A graph from a dataset name, a synthetic spec, or an edge-list file path.

    Parameters
    ----------
    source : str or path-like
        Tried in this order: a registered graph dataset name (``"facebook"``, loaded with
        :func:`load_dataset`); a synthetic spec (``"ba:n=1000,m=3"``, see :func:`synthetic_graph`);
        an existing edge-list file (gzip or plain). A path-like object is always a file path.
    rng : numpy.random.Generator, int seed, SeedSequence or None
        Used for synthetic specs only.

    Raises
    ------
    ValueError
        If ``source`` is a histogram dataset, a malformed spec, or none of the three forms
        (including strings that cannot be a path: too long, ``~user`` for an unknown user).
    FileNotFoundError
        If a path-like ``source`` is not an existing file.

    Examples
    --------
    >>> resolve_graph("ws:n=20,k=4,p=0", rng=0).degrees.tolist() == [4] * 20
    True
    >>> resolve_graph("facebook").n_edges  # doctest: +SKIP
    88234
    """
    if isinstance(source, os.PathLike):
        p = Path(source)
        is_file, why = _is_file(p)
        if not is_file:
            if why:
                raise ValueError(f"cannot use {str(p)!r} as an edge-list file: {why}")
            raise FileNotFoundError(f"edge-list file not found: {p}")
        return _read_graph(p)
    if not isinstance(source, str):
        raise TypeError(f"source must be a str or path-like, got {type(source).__name__} {source!r}")
    key = source.strip().lower()
    if key in _REGISTRY:
        info = _REGISTRY[key]
        if info.kind != "graph":
            raise ValueError(f"dataset {info.name!r} is a {info.kind}, not a graph")
        return load_dataset(info.name)
    m = _SPEC_RE.match(source)
    if m is not None and m.group(1).lower() in _MODELS:
        return synthetic_graph(source, rng=rng)
    try:
        p = Path(source).expanduser()
    except RuntimeError as exc:  # "~user/..." for an unknown user
        p, why = None, f"cannot expand the path ({exc})"
    else:
        is_file, why = _is_file(p)
        if is_file:
            return _read_graph(p)
    graphs = list_datasets("graph")
    shown = source if len(source) <= 200 else source[:200] + f"...<{len(source)} characters>"
    msg = (
        f"cannot resolve graph {shown!r}: not a graph dataset ({', '.join(graphs)}), not a synthetic "
        f"spec ({_GRAMMAR}), and not an existing file" + (f" ({why})" if why else "")
    )
    close = difflib.get_close_matches(key, graphs, n=1, cutoff=0.5)
    if close:
        msg += f". Did you mean {close[0]!r}?"
    if m is not None and m.group(1).lower() not in _MODELS and len(m.group(1)) > 1:
        msg += f". Unknown synthetic model {m.group(1)!r} (known: {', '.join(_MODELS)})"
    raise ValueError(msg)
