"""Issue 12 §3 in the API: seeds from content, shared defaults, skipped cells, empty graphs,
atomic outputs with a manifest, truncated records refused, and the plots' contents."""

from __future__ import annotations

import json
import math
import shutil
import time

import numpy as np
import pytest

from ldpgraph.datasets import bundled_data_dir, synthetic_graph
from ldpgraph.experiments import DEFAULT_METHODS, read_records_csv, run_experiment
from ldpgraph.experiments.outputs import file_digest
from ldpgraph.experiments.plots import relative_rmse_figure
from ldpgraph.experiments.runner import (
    DEFAULT_KS,
    check_scheduler_address,
    content_id,
    dask_install_hint,
    resolve_graph_inputs,
)
from ldpgraph.graph import Degrees
from ldpgraph.run.method import method_names

FB = bundled_data_dir() / "facebook_combined.txt.gz"
GRID = dict(epsilons=[1.0], ks=[2], methods=["unbiased-dlap", "local-lap-kstars"], n_trials=3, seed=5,
            block_size=2, quiet=True, n_jobs=1)


def _estimates(res):
    return [(c.method, c.statistic, c.k, c.epsilon, c.estimates.tolist(), c.spawn_keys) for c in res.records]


# ------------------------------------------------------------------ seeding from content


def test_same_seed_same_numbers_however_the_graph_is_named(tmp_path):
    copy = tmp_path / "elsewhere" / "my_copy.txt.gz"
    copy.parent.mkdir()
    shutil.copy(FB, copy)
    by_name = run_experiment("facebook", **GRID)
    by_path = run_experiment(str(FB), **GRID)
    by_copy = run_experiment(copy, **GRID)
    assert _estimates(by_name) == _estimates(by_path) == _estimates(by_copy)
    assert [c.graph for c in by_path.records][0] == "facebook_combined"  # the label is not the path
    assert by_copy.records[0].graph == "my_copy"
    # a degree array of the same graph is the same content too
    deg = resolve_graph_inputs("facebook")[0].degrees
    assert _estimates(run_experiment([Degrees(deg)], **GRID)) == _estimates(by_name)
    assert by_name.config["graphs"][0]["stream_id"] == content_id(deg)


def test_explicit_labels_key_the_streams():
    g = synthetic_graph("ba:n=300,m=3", rng=0)
    a = run_experiment({"x": g}, **GRID)
    b = run_experiment({"x": Degrees(g.degrees)}, **GRID)
    c = run_experiment({"y": g}, **GRID)
    assert _estimates(a) == _estimates(b)
    assert _estimates(a) != _estimates(c)
    assert a.config["graphs"][0]["stream_id"] == "x"


def test_two_files_with_the_same_name_keep_their_paths_as_labels(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "edges.txt").write_text("0 1\n1 2\n2 0\n2 3\n")
    labels = [g.label for g in resolve_graph_inputs([str(tmp_path / "a" / "edges.txt"),
                                                     str(tmp_path / "b" / "edges.txt")])]
    assert labels == [str(tmp_path / "a" / "edges.txt"), str(tmp_path / "b" / "edges.txt")]


# ------------------------------------------------------------------ defaults


def test_defaults_are_shared_by_cli_and_api():
    from ldpgraph.cli import build_parser

    args = build_parser().parse_args(["experiment"])
    assert args.jobs is None and args.methods is None  # filled from the API defaults
    assert args.k == [list(DEFAULT_KS)]  # the API default, shown in the help
    res = run_experiment({"toy": Degrees([3, 1, 2, 2])}, epsilons=[1.0], n_trials=2, seed=0, quiet=True)
    assert {c.k for c in res.records} == set(DEFAULT_KS) == {2, 3}
    assert list(dict.fromkeys(c.method for c in res.records)) == list(DEFAULT_METHODS)
    assert res.config["parallel"]["processes"] == 1  # automatic: a tiny grid runs in this process
    every = run_experiment({"toy": Degrees([3, 1, 2, 2])}, epsilons=[1.0], ks=[2], methods="all", n_trials=1, seed=0,
                           quiet=True)
    assert [c.method for c in every.records] == method_names("kstars")


# ------------------------------------------------------------------ cells that cannot run, empty graphs


def test_a_cell_a_method_cannot_run_is_skipped_with_a_note():
    g = synthetic_graph("ba:n=2000,m=20", rng=0)
    d_max = int(g.degrees.max())
    assert math.comb(d_max, 60) >= 2**62  # LocalLapKStars' projected counts overflow at k = 60
    res = run_experiment({"ba": g}, **{**GRID, "ks": [2, 60]})
    cells = [(c.method, c.k) for c in res.records]
    assert cells == [("unbiased-dlap", 2), ("local-lap-kstars", 2), ("unbiased-dlap", 60)]
    [skip] = res.config["skipped"]
    assert (skip["method"], skip["k"]) == ("local-lap-kstars", 60) and "overflows int64" in skip["reason"]
    assert res.notes[0].startswith("skipped local-lap-kstars on ba, kstars k=60, epsilon 1: ValueError")
    assert res.table().splitlines()[-1] == "note: " + res.notes[0]
    with pytest.raises(ValueError, match="no cell of the grid can run"):
        run_experiment({"ba": g}, **{**GRID, "ks": [60], "methods": ["local-lap-kstars"]})


@pytest.mark.parametrize(("graph", "match"), [
    ({"iso": Degrees([0, 0, 0])}, "graph 'iso' has 3 nodes but no edges"),
    ({"none": Degrees(np.array([], dtype=np.int64))}, "graph 'none' has no nodes"),
    ("er:n=10,m=0", "graph 'er:n=10,m=0' has 10 nodes but no edges"),
])
def test_empty_graphs_are_refused_clearly(graph, match):
    with pytest.raises(ValueError, match=match):
        run_experiment(graph, **GRID)


def test_scheduler_address_checked_before_any_work():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="scheduler must be a Dask scheduler address"):
        run_experiment({"toy": Degrees([1, 1])}, epsilons=[1.0], n_trials=1, scheduler="nonsense")
    assert time.perf_counter() - t0 < 5
    for ok in ("tcp://10.0.0.1:8786", "127.0.0.1:8786", "tls://host.example:8786", "tcp://[::1]:8786"):
        assert check_scheduler_address(ok) == ok
    for bad in ("tcp://host", "host:99999", "http//x:1", ""):
        with pytest.raises(ValueError):
            check_scheduler_address(bad)


def test_dask_hint_works_from_a_source_checkout():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    hint = dask_install_hint()
    assert f"pip install -e '{root}[distributed]'" in hint
    assert "distributed = [" in (root / "pyproject.toml").read_text()  # the extra the hint names exists


# ------------------------------------------------------------------ atomic outputs


@pytest.fixture(scope="module")
def two_results():
    a = run_experiment({"first": Degrees([3, 1, 2, 2, 4, 2])}, epsilons=[0.5, 1.0], ks=[2], methods=["unbiased-dlap"],
                       n_trials=4, seed=1, quiet=True)
    b = run_experiment({"second": Degrees([3, 1, 2, 2, 4, 2])}, epsilons=[0.5, 1.0], ks=[2], methods=["unbiased-dlap"],
                       n_trials=4, seed=1, quiet=True)
    return a, b


def test_manifest_lists_every_file_with_the_configuration(two_results, tmp_path):
    a, _ = two_results
    paths = a.write(tmp_path / "out")
    manifest = json.loads(paths["manifest"].read_text())
    files = {f["path"]: f for f in manifest["files"]}
    assert sorted(files) == ["experiment.json", "plots/relative_rmse_first_kstars_k2.png", "records.csv",
                             "summary.csv", "summary.txt"]
    for rel, f in files.items():
        assert file_digest(tmp_path / "out" / rel) == (f["bytes"], f["sha256"])
    assert manifest["config"]["seed"] == 1 and manifest["config"]["graphs"][0]["label"] == "first"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_no_stale_plots_and_foreign_files_kept(two_results, tmp_path):
    a, b = two_results
    out = tmp_path / "out"
    a.write(out)
    b.write(out)  # only earlier outputs in out: the folder is swapped
    assert sorted(p.name for p in (out / "plots").iterdir()) == ["relative_rmse_second_kstars_k2.png"]
    a.write(out)
    (out / "my_notes.txt").write_text("mine")
    b.write(out)  # a foreign file: files are replaced one by one, stale ones removed, the rest kept
    assert sorted(p.name for p in (out / "plots").iterdir()) == ["relative_rmse_second_kstars_k2.png"]
    assert (out / "my_notes.txt").read_text() == "mine"
    assert read_records_csv(out / "records.csv") == b.records


def test_a_failure_while_writing_leaves_the_previous_result(two_results, tmp_path, monkeypatch):
    a, b = two_results
    out = tmp_path / "out"
    a.write(out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def killed(*args, **kw):
        raise KeyboardInterrupt  # e.g. Ctrl-C while the plots are drawn

    monkeypatch.setattr("ldpgraph.experiments.plots.plot_relative_rmse", killed)
    with pytest.raises(KeyboardInterrupt):
        b.write(out)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the partial folder was removed


def test_truncated_records_are_refused(two_results, tmp_path):
    a, _ = two_results
    paths = a.write(tmp_path / "out", plots=False)
    rec = paths["records"]
    text = rec.read_bytes()
    lines = text.splitlines(keepends=True)
    rec.write_bytes(b"".join(lines[:-2]))  # cut at a line boundary: only the manifest can tell
    with pytest.raises(ValueError, match="truncated or altered.*manifest.json records"):
        read_records_csv(rec)
    lone = tmp_path / "lone.csv"  # no manifest: a cut inside a row
    lone.write_bytes(text[:-7])
    with pytest.raises(ValueError, match="truncated: the last line does not end with a newline"):
        read_records_csv(lone)
    lone.write_bytes(text)
    assert read_records_csv(lone) == a.records


# ------------------------------------------------------------------ plots


def test_plot_ticks_legend_styles_and_synthetic_label():
    res = run_experiment({"ba:n=300,m=3": synthetic_graph("ba:n=300,m=3", rng=0)}, epsilons=[0.5, 1.5, 4.0],
                         ks=[2], methods=["unbiased-dlap", "unbiased-laplace", "local-lap-kstars-private"],
                         n_trials=3, seed=0, quiet=True)
    fig = relative_rmse_figure(res.summary, synthetic=True)
    ax = fig.axes[0]
    assert list(ax.get_xticks()) == [0.5, 1.5, 4.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.5", "1.5", "4"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    # the styles are stated once; the private-bound method has no closed form: no dashed curve
    assert legend == ["simulated (bars: confidence interval)", "analytic RMSE (dashed)", "unbiased-dlap",
                      "unbiased-laplace", "local-lap-kstars-private"]
    dashed = [ln for ln in ax.lines if ln.get_label().endswith("(analytic)")]
    assert [ln.get_label() for ln in dashed] == ["unbiased-dlap (analytic)", "unbiased-laplace (analytic)"]
    mc = [c.lines[0] for c in ax.containers]
    styles = {(ln.get_marker(), ln.get_markerfacecolor() == "none") for ln in mc}
    assert len(styles) == 3  # unbiased DLap and Laplace overlap: told apart by marker and fill
    assert "(synthetic stand-in)" in ax.get_title()
    lone = relative_rmse_figure([r for r in res.summary if r.method == "local-lap-kstars-private"]).axes[0]
    assert "analytic" not in " ".join(t.get_text() for t in lone.get_legend().get_texts())


def test_a_cell_whose_noisy_graph_does_not_fit_is_skipped_not_the_grid():
    from ldpgraph.run.method import get_method

    g = synthetic_graph("ba:n=600,m=4", rng=0)
    small = get_method("rr-triangles")
    small.protocol.max_bytes = 2**20  # 1 MiB: the noisy graph at eps = 1 needs more
    dlap = "two-round-triangles-dlap"
    res = run_experiment({"ba": g}, epsilons=[1.0], statistics=["triangles"], methods=[small, dlap],
                         n_trials=3, seed=0, n_jobs=1)
    assert [c.method for c in res.records] == [dlap]
    [skip] = res.config["skipped"]
    assert skip["method"] == "rr-triangles" and skip["reason"].startswith("MemoryError: rr-triangles on 600 nodes")
    assert "two-round-triangles-dlap" in skip["reason"]
