"""Shared test fixtures.

Real data is found through the ``LDPGRAPH_DATA`` environment variable (``.ci/run`` sets it to
``../shared/datasets``); tests that need it skip with a clear reason where it is absent, except
for the Facebook graph, which ships inside the package and is always found.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def data_file(name: str) -> Path:
    """Path of a real data file under ``$LDPGRAPH_DATA``, or skip the test if unavailable.

    A file that ships inside the package (the Facebook graph) is found without
    ``LDPGRAPH_DATA``: the shipped copy is used, so its tests always run.
    """
    root = os.environ.get("LDPGRAPH_DATA")
    if not root or not (Path(root) / name).is_file():
        from ldpgraph.datasets import dataset_info, list_datasets
        from ldpgraph.datasets.registry import bundled_data_dir

        shipped = bundled_data_dir()
        bundled = {dataset_info(d).filename for d in list_datasets() if dataset_info(d).bundled}
        if shipped is not None and name in bundled and (shipped / name).is_file():
            return shipped / name
    if not root:
        pytest.skip(f"{name}: set LDPGRAPH_DATA to the folder holding the real datasets")
    path = Path(root) / name
    if not path.is_file():
        pytest.skip(f"{name} not found under LDPGRAPH_DATA={root}")
    return path


@pytest.fixture
def facebook_path() -> Path:
    """SNAP ego-Facebook edge list (4,039 nodes, 88,234 edges)."""
    return data_file("facebook_combined.txt.gz")


@pytest.fixture(autouse=True, scope="session")
def _curator_key(tmp_path_factory):
    """The curator key of every test run (never the user's ~/.config/ldpgraph/curator.key)."""
    old = os.environ.get("LDPGRAPH_CURATOR_KEY")
    os.environ["LDPGRAPH_CURATOR_KEY"] = str(tmp_path_factory.mktemp("curator") / "curator.key")
    yield
    if old is None:
        del os.environ["LDPGRAPH_CURATOR_KEY"]
    else:
        os.environ["LDPGRAPH_CURATOR_KEY"] = old
