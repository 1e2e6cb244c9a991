"""The exceptions of :mod:`ldpgraph.datasets`."""

from __future__ import annotations

__all__ = ["DatasetNotFoundError", "DownloadError", "ChecksumError"]


class DatasetNotFoundError(FileNotFoundError):
    """A registered dataset is not present in any of the places looked at."""


class DownloadError(OSError):
    """A download failed (network error, HTTP error, timeout or truncated transfer).

    Nothing is written to the cache when this is raised.
    """


class ChecksumError(DownloadError):
    """Downloaded (or local) content does not match the recorded size and SHA-256 digest."""
