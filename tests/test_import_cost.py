"""``import ldpgraph`` (and the CLI's and runner's modules) load no heavy dependency (issue 14 goal 4).

scipy.special / scipy.optimize / scipy.sparse, joblib, matplotlib, igraph, networkx, pandas,
pyarrow, mpmath and tqdm are imported where they are used. This checks *which* modules load
(in a fresh interpreter), not how long it takes: the time is measured by
``scripts/bench_experiments.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("scipy", "joblib", "loky", "matplotlib", "igraph", "networkx", "pandas", "pyarrow", "mpmath", "tqdm",
         "dask", "distributed", "sklearn")
ROOT = Path(__file__).resolve().parents[1]


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("statement", [
    "import ldpgraph",
    "import ldpgraph.cli",
    "import ldpgraph.experiments, ldpgraph.protocols.degrees.kernels",
])
def test_no_heavy_module_at_import(statement):
    loaded = _loaded_after(statement)
    assert "ldpgraph" in loaded and "numpy" in loaded
    assert [m for m in HEAVY if m in loaded] == []


def test_heavy_modules_still_load_where_used():
    # the check above can fail: a use of scipy.special does import it
    loaded = _loaded_after("import numpy as np, ldpgraph.metrics as m; "
                           "m.rmse_confidence_interval(np.arange(5.0), 2.0, level=0.9)")
    assert "scipy" in loaded


def test_default_confidence_interval_needs_no_scipy():
    # the 95% level (the summaries' default) uses the constant quantile: no scipy on the CLI's
    # serial path after the simulation
    loaded = _loaded_after("import numpy as np, ldpgraph.metrics as m; m.rmse_confidence_interval(np.arange(5.0), 2.0)")
    assert "scipy" not in loaded
