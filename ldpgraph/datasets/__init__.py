r"""Named datasets: registry, local lookup, verified download, and synthetic graphs by spec.

Modules
-------
================  ==========================================================================
``registry``      :class:`DatasetInfo`, the manifest ``datasets/manifest.json`` read into it,
                  :func:`list_datasets`, :func:`dataset_info`, :func:`bundled_data_dir`
``lookup``        where a file is found (:func:`dataset_path`), :func:`load_dataset`,
                  :func:`verify_dataset`, :func:`default_cache_dir` (the cache)
``verify``        size + SHA-256 checks, registered counts, marks of verified files
``download``      :func:`fetch`: deadline, size limit, atomic rename, ``.part`` cleanup
``histograms``    word counts (:func:`count_words`) and fingerprints (:func:`parse_fingerprint`)
``synthetic``     synthetic graph specs (:func:`parse_synthetic_spec`, :func:`synthetic_graph`)
``graphs``        :func:`resolve_graph`: a dataset name, a spec or an edge-list file
``errors``        :class:`DatasetNotFoundError`, :class:`DownloadError`, :class:`ChecksumError`
================  ==========================================================================

Real data
---------
Five public datasets are registered (:func:`list_datasets`) in the manifest
``datasets/manifest.json`` of the repository (installed as ``ldpgraph/_data/manifest.json``):
three SNAP graphs (``facebook``, ``wiki-vote``, ``email-enron``) and two histograms
(``shakespeare`` word counts, ``exac-sfs`` site-frequency spectrum). The Facebook graph, the
study's, ships inside the package. A dataset file is looked up, in this order, in

1. the explicit ``path`` argument (a file, or a folder holding the file);
2. the folder(s) named by the ``LDPGRAPH_DATA`` environment variable (``os.pathsep``-separated);
3. the user cache: ``$LDPGRAPH_CACHE`` if set, else ``$XDG_CACHE_HOME/ldpgraph``, else
   ``~/.cache/ldpgraph`` (:func:`default_cache_dir`);
4. the data shipped with the package (:func:`bundled_data_dir`).

A file found in 2-4 is verified the first time it is used (size and SHA-256, then the registered
node and edge counts) and marked verified; a wrong file is refused with the fix.
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

from ._files import _open_binary
from .download import fetch
from .errors import ChecksumError, DatasetNotFoundError, DownloadError
from .graphs import _graph_from_igraph, _read_graph, as_graph, resolve_graph
from .histograms import WordCounts, count_words, parse_fingerprint
from .lookup import dataset_path, default_cache_dir, load_dataset, locate_dataset, verify_dataset
from .registry import _REGISTRY, DatasetInfo, bundled_data_dir, dataset_info, list_datasets
from .synthetic import is_synthetic_spec, parse_synthetic_spec, synthetic_graph

__all__ = [
    "DatasetInfo",
    "WordCounts",
    "DatasetNotFoundError",
    "DownloadError",
    "ChecksumError",
    "list_datasets",
    "dataset_info",
    "bundled_data_dir",
    "default_cache_dir",
    "locate_dataset",
    "dataset_path",
    "verify_dataset",
    "load_dataset",
    "fetch",
    "count_words",
    "parse_fingerprint",
    "parse_synthetic_spec",
    "is_synthetic_spec",
    "synthetic_graph",
    "as_graph",
    "resolve_graph",
]

# Private names kept importable from here. The two graph hooks are looked up on ._files at call
# time: a test replaces them there, not here.
_HOOKS = (_open_binary, _read_graph, _graph_from_igraph, _REGISTRY)
