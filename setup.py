"""Package list for setuptools (everything else is in pyproject.toml).

``pyproject.toml`` cannot both find packages and add one that has no folder of its own:
``ldpgraph._data`` is the repository's top-level ``datasets/`` folder (the dataset manifest, the
Facebook graph and the sample report set), mapped into the package by
``[tool.setuptools.package-dir]`` so that an installed ldpgraph carries its data. Its subfolders
are listed too (as data-only packages), so that setuptools packages them without a warning.
"""

from pathlib import Path

from setuptools import find_packages, setup

_DATA = Path(__file__).resolve().parent / "datasets"
_DATA_PACKAGES = [
    "ldpgraph._data" + "".join("." + part for part in d.relative_to(_DATA).parts)
    for d in sorted([_DATA, *(p for p in _DATA.rglob("*") if p.is_dir())])
    if d.name != "__pycache__" and not d.name.startswith(".")
]

# _ldpgraph_nx: what networkx reads at its own import (the networkx.backend_info entry point), kept
# apart from ldpgraph so that importing networkx does not import ldpgraph
setup(packages=[*find_packages(include=["ldpgraph", "ldpgraph.*", "_ldpgraph_nx"]), *_DATA_PACKAGES])
