"""Deployment in bounded memory (issue 34, item 2): batches cut by rows give the same rows, and the
name columns' codes are pyarrow's dictionary encoding."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ldpgraph.core import Seeded
from ldpgraph.core.rows import name_codes
from ldpgraph.protocols import registry
from ldpgraph.run.files import accumulate_files, release_to_file
from ldpgraph.run.memory import release_nodes
from ldpgraph.run.reportfiles import _dictionary_column


@pytest.mark.parametrize("column", [
    ["rr_count", "rr_edge", "rr_edge", "lower_degree", "rr_count"],
    [],
    ["a"] * 5,
    np.array(["x", "y", "x"], dtype=object),
    np.array(["x", "y"]),  # numpy strings
])
def test_name_codes_are_dictionary_encode(column):
    want = pa.array(np.asarray(column, dtype=object), type=pa.string()).dictionary_encode()
    assert _dictionary_column(column).equals(want)
    codes, names = name_codes(column)
    assert codes.tolist() == want.indices.to_pylist() and names == want.dictionary.to_pylist()


def test_name_codes_refuse_other_objects():
    assert name_codes(np.array(["a", 3], dtype=object)) is None
    assert name_codes(np.array([None], dtype=object)) is None


@pytest.mark.parametrize("name", ["two-round-triangles-dlap", "degree"])
def test_batches_cut_by_rows_give_the_same_rows(tmp_path, name):
    from ldpgraph.datasets import resolve_graph

    g = resolve_graph("ba:n=300,m=4")
    proto = registry.get(name)
    plan = proto.plan(2.0, d_max=20) if name != "degree" else proto.plan(2.0)
    nodes, lists = release_nodes(g, proto.needs)[:2]
    rnd = proto.rounds()[0]
    whole, n_whole = release_to_file(tmp_path / "whole.parquet", rnd, plan, nodes, lists, None, Seeded(5))
    cut, n_cut = release_to_file(tmp_path / "cut.parquet", rnd, plan, nodes, lists, None, Seeded(5),
                                 batch_nodes=64, batch_rows=100)
    assert n_whole == n_cut
    assert pq.read_table(whole).equals(pq.read_table(cut))
    assert pq.ParquetFile(cut).num_row_groups > pq.ParquetFile(whole).num_row_groups
    csv_whole, _ = release_to_file(tmp_path / "whole.csv", rnd, plan, nodes, lists, None, Seeded(5))
    csv_cut, _ = release_to_file(tmp_path / "cut.csv", rnd, plan, nodes, lists, None, Seeded(5),
                                 batch_nodes=64, batch_rows=100)
    assert csv_whole.read_bytes() == csv_cut.read_bytes()
    opts = {"expected_nodes": g.n_nodes} if name != "degree" else {}
    a = accumulate_files([whole], rnd, plan, **opts)
    b = accumulate_files([cut], rnd, plan, chunk_rows=77, **opts)
    if name != "degree":
        assert np.array_equal(a.index, b.index)
