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


def test_kcore_truth_and_simulators_import_no_igraph_or_matplotlib():
    # issue 34 item 5: the k-core truth peels the CSR itself; igraph imported matplotlib.pyplot
    # (22 of 27 s of one k-core simulation under load)
    loaded = _loaded_after(
        "from ldpgraph.graph import from_edge_array; from ldpgraph.run.method import get_method\n"
        "g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3], [3, 4], [1, 3]])\n"
        "m = get_method('kcore-hindex'); m.estimate_trials(g, 'core_numbers', None, 2.0, 2, rng=0)\n"
        "m.trial_details(g, 2.0, rng=0)\n"
        "get_method('kcore-reference').estimate_trials(g, 'core_numbers', None, 2.0, 1, rng=0)\n"
        "for name in ('edge-orient-triangles', 'edge-orient-triangles-global', 'edge-orient-reference'):\n"
        "    get_method(name).estimate_trials(g, 'triangles', None, 2.0, 1, rng=0)")
    assert [m for m in ("igraph", "matplotlib", "pyarrow", "pandas") if m in loaded] == []


@pytest.mark.parametrize("protocol", ["kcore-hindex", "edge-orient-triangles", "two-round-triangles-dlap", "degree"])
def test_in_memory_run_imports_no_pyarrow(protocol):
    # issue 34 item 5: no file is written, so no pyarrow (report names as codes, not arrow strings)
    from ldpgraph.core import rows

    if not hasattr(rows, "name_codes"):
        pytest.skip("needs the name columns as codes (core.rows.name_codes, issue 34 item 2)")
    loaded = _loaded_after(
        "from ldpgraph.graph import from_edge_array; from ldpgraph.run import run_in_memory\n"
        "from ldpgraph.protocols import registry\n"
        "g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3], [3, 4], [1, 3]])\n"
        f"p = registry.get({protocol!r}); run_in_memory(p, g, 2.0, sampler=1, statistic=p.statistics[0])")
    assert [m for m in ("pyarrow", "pandas", "matplotlib", "igraph") if m in loaded] == []
