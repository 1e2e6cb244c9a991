"""Results in a notebook (issue 27, item 11): ``to_pandas()`` gives the columns and values of the
CSV files (pandas imported only then), and ``_repr_html_`` renders a table."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ldpgraph.datasets import synthetic_graph
from ldpgraph.experiments import run_experiment
from ldpgraph.experiments.single import estimate_once
from ldpgraph.graph import Degrees

pd = pytest.importorskip("pandas")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    g = synthetic_graph("ba:n=80,m=3", rng=0)
    res = run_experiment({"g": g}, epsilons=[1.0, 4.0], ks=[2], statistics=["kstars", "edges", "triangles"],
                         methods=["unbiased-dlap", "naive-dlap", "rr-triangles"], n_trials=3, seed=1, quiet=True)
    out = tmp_path_factory.mktemp("res")
    res.write(out, plots=False)
    return res, out


def _same(frame, csv_path):
    """The frame equals the CSV read back by pandas: same columns in order, same values."""
    ref = pd.read_csv(csv_path, keep_default_na=False, na_values=["", "nan"])
    assert list(frame.columns) == list(ref.columns)
    assert len(frame) == len(ref) > 0
    for c in ref.columns:
        a, b = frame[c].tolist(), ref[c].tolist()
        for x, y in zip(a, b, strict=True):
            if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
                assert y is None or (isinstance(y, float) and math.isnan(y)), (c, x, y)
            elif isinstance(x, float) or isinstance(y, float):
                assert float(x) == pytest.approx(float(y), rel=1e-12, abs=0), (c, x, y)
            elif c == "budget":
                assert json.loads(y) == x
            else:
                assert str(x) == str(y), (c, x, y)


def test_records_summary_and_costs_have_the_csv_columns_and_values(written):
    res, out = written
    _same(res.to_pandas("records"), out / "records.csv")
    _same(res.records.to_pandas(), out / "records.csv")
    _same(res.to_pandas(), out / "summary.csv")
    _same(res.to_pandas("costs"), out / "costs.csv")
    frame = res.to_pandas()
    assert str(frame["k"].dtype) == "Int64" and frame["k"].isna().any() and (frame["k"] == 2).any()
    with pytest.raises(ValueError, match="summary"):
        res.to_pandas("nope")


def test_results_render_as_html_tables(written):
    res, _ = written
    for obj, cols in ((res, ("graph", "relative_rmse")), (res.records, ("spawn_key", "estimate"))):
        html = obj._repr_html_()
        assert html.startswith('<table class="ldpgraph">') and html.endswith("</table>")
        assert all(f"<th>{c}</th>" in html for c in cols)
    assert res.records._repr_html_().count("<tr>") == 1 + res.records.n_rows
    from ldpgraph.tables import html_table

    capped = html_table(res.records._csv_columns(), max_rows=5)
    assert capped.count("<tr>") == 1 + 5 + 1 and f"{res.records.n_rows - 5:,} more rows" in capped


def test_single_run_and_curate_results(tmp_path):
    run = estimate_once({"toy": Degrees([3, 1, 2, 2])}, epsilon=2.0, k=2, seed=3, methods=["unbiased-dlap", "naive-dlap"])
    frame = run.to_pandas()
    doc = run.to_dict()
    assert frame["method"].tolist() == [e["method"] for e in doc["estimates"]]
    assert frame["estimate"].tolist() == [e["estimate"] for e in doc["estimates"]]
    assert (frame["truth"] == run.truth).all() and "<th>std_error_kind</th>" in run._repr_html_()

    from ldpgraph.protocols import DegreeRandomizer
    from ldpgraph.run.reportfiles import curate_files, write_reports

    rows = write_reports(tmp_path / "r.csv", DegreeRandomizer(epsilon=1.0).randomize(np.arange(30) % 7, rng=0))
    result = curate_files([rows], [("kstars", 2), ("edges", None)])
    frame = result.to_pandas()
    est = result.to_dict()["estimates"]
    assert frame["statistic"].tolist() == [e["statistic"] for e in est]
    assert frame["value"].tolist() == [e["value"] for e in est]
    assert frame["k"].tolist()[0] == 2 and frame["k"].isna().tolist()[1]
    assert "<caption>1 file(s), 30 rows" in result._repr_html_()


def test_pandas_is_imported_only_by_to_pandas():
    code = (
        "import sys\n"
        "from ldpgraph.experiments import run_experiment\n"
        "from ldpgraph.graph import Degrees\n"
        "res = run_experiment({'toy': Degrees([3, 1, 2, 2])}, epsilons=[1.0], ks=[2], methods=['unbiased-dlap'], "
        "n_trials=2, seed=0, quiet=True)\n"
        "res._repr_html_(); res.records._repr_html_()\n"
        "print('pandas' in sys.modules)\n"
        "res.to_pandas()\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["False", "True"]


def test_without_pandas_the_error_names_the_notebook_extra(monkeypatch):
    """pandas is no dependency: to_pandas() without it says which extra brings it, and the extra exists."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    run = estimate_once({"toy": Degrees([3, 1, 2, 2])}, epsilon=2.0, seed=3, methods=["unbiased-dlap"])
    with pytest.raises(ImportError, match=r'pip install "ldpgraph\[notebook\]"'):
        run.to_pandas()
    meta = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    extra = meta["project"]["optional-dependencies"]["notebook"]
    assert any(req.startswith("pandas") for req in extra)
    assert not any(req.startswith("pandas") for req in meta["project"]["dependencies"])
