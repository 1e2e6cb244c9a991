"""The Dask path (one task per Parquet row group, exact merges) equals the streaming pass."""

from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.protocols import DegreeRandomizer, PublicBounds, curator
from ldpgraph.protocols.reports import report_columns
from ldpgraph.run.reportdask import read_report_set_dask, report_partitions
from ldpgraph.run.reportfiles import curate_files, read_report_set, write_reports

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dask")
    d = np.random.default_rng(3).integers(0, 40, 2000)
    rep = DegreeRandomizer(epsilon=0.5, kstar_counts=[2], d_max=45).randomize(d, rng=4)
    cols = report_columns(rep)
    half = len(cols["node"]) // 2
    a = write_reports(tmp / "a.parquet", {c: np.asarray(v)[:half] for c, v in cols.items()}, row_group_size=333)
    b = write_reports(tmp / "b.csv", {c: np.asarray(v)[half:] for c, v in cols.items()})
    return rep, [a, b]


def test_partitions_are_row_groups_and_whole_text_files(files):
    _, paths = files
    parts = report_partitions(paths)
    assert [p[2] for p in parts if p[1] == "parquet"] == list(range(7))  # 2000 rows / 333 per group
    assert [p[1] for p in parts].count("csv") == 1
    assert sum(1 for p in parts if p[1] == "parquet" and p[3] % 333 == 0) == 7


def test_local_cluster_equals_the_in_memory_curator(files):
    rep, paths = files
    stats = [("kstars", 2), ("degree_variance", None), ("edges", None), ("kstars_from_counts", 2)]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp://",
                                  host="127.0.0.1", dashboard_address=None, silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        res = curate_files(paths, stats, scheduler=client, d_max=45)
        bounds = PublicBounds(n_nodes=2000)
        dask_summary = read_report_set_dask(paths, scheduler=client, d_max=45, bounds=bounds)
    assert res.estimates[0][2] == curator.kstars(rep, 2)
    assert res.estimates[1][2] == curator.degree_variance(rep)
    assert res.estimates[2][2] == curator.edge_count(rep)
    assert res.estimates[3][2].value == curator.kstars_from_counts(rep, 2).value
    stream = read_report_set(paths, d_max=45, bounds=bounds)
    for name, q in stream.quantities.items():
        assert dask_summary.quantities[name].histogram == q.histogram
        assert dask_summary.quantities[name].admissible == q.admissible


def test_dask_validation_names_the_partition(files, tmp_path):
    _, paths = files
    # the same epsilon share as the set (0.25 for the degree), nodes 5 and 6 again
    dup = write_reports(tmp_path / "dup.parquet", DegreeRandomizer(epsilon=0.25).randomize([1, 2], rng=0),
                        node_ids=[5, 6])
    with pytest.raises(ValueError, match=r"duplicate degree reports for node [56] \(in .*dup\.parquet"):
        read_report_set_dask([*paths, dup], scheduler="sync", d_max=45)
    with pytest.raises(TypeError, match="scheduler"):
        read_report_set_dask(paths, scheduler=3.5, d_max=45)
