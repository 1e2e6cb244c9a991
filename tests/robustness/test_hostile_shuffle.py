"""The shuffler and the shuffle-model curator over hostile rows (issue 36, findings 1, 5 and 7).

``tests/hostile/shuffle/`` holds rows of ``wshuffle-four-cycles`` for a plan of 4 users at ε = 1
(ε₀ = 1.0000000158...): the shuffler's inputs (node ids present) and, ``curate_*``, rows as a
shuffler (or whoever bypasses it) hands them to the curator. Each file has its expected outcome
here: the command's exit code and a phrase of its one-line error. A Parquet file of 2·10⁶
constant rows (the issue's 2·10⁷ scaled down) is generated at run time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.protocols import registry

HOSTILE = Path(__file__).resolve().parent.parent / "hostile" / "shuffle"
PLAN = ["--epsilon", "1", "--n-users", "4"]

#: shuffler inputs: file -> (exit code, phrase of the error or of the output)
SHUFFLED = {
    "valid.csv": (0, "the rows of 4 users"),
    "missing_sender.csv": (1, "only 3 of the 4 users"),
    "two_tokens.csv": (1, "node 1 sent 2 sender rows"),
    "no_token.csv": (1, "node 3 sent rows but no sender row"),
    "node_beyond.csv": (1, "node id 7 outside 0..3"),
    "excess_wedge.csv": (1, "node 0 sent 3 wedge rows"),
    "other_delta.csv": (1, "wedge row at epsilon 2.5"),
    "repeated_value.csv": (1, "sent 5 times by 4 senders"),
    "version1.csv": (1, "round 1, version 2"),
}
#: curator inputs: file -> (exit code, phrase)
CURATED = {
    "curate_fewer.csv": (1, "the rows of 3 users were received, the plan assumes all 4"),
    "curate_dup_token.csv": (1, "appears 2 times"),
    "curate_constant.csv": (1, "row 2"),
    "curate_other_delta.csv": (1, "wedge row at epsilon 2.5"),
    "curate_with_ids.csv": (1, "through the shuffler"),
}


def test_shuffle_corpus_is_small_and_listed():
    present = {p.name for p in HOSTILE.iterdir() if p.is_file()}
    assert present == set(SHUFFLED) | set(CURATED)
    assert all((HOSTILE / name).stat().st_size < 100_000 for name in present)


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out + err


@pytest.mark.parametrize("name", sorted(SHUFFLED))
def test_shuffler(name, tmp_path, capsys):
    """issue 36 findings 1, 5, 7: per sender, the plan's users and ε₀, one token each, quotas."""
    code, text = _run(["shuffle", str(HOSTILE / name), "--out", str(tmp_path / "s.csv"), *PLAN], capsys)
    want_code, phrase = SHUFFLED[name]
    assert code == want_code, text
    assert phrase in text
    if code:
        assert len(text.strip().splitlines()) == 1  # one line, naming the problem
        assert not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("name", sorted(CURATED))
def test_curator(name, capsys):
    """issue 36 findings 1, 5, 7: the curator counts the senders' tokens and checks ε₀ and the pairs."""
    code, text = _run(["curate", str(HOSTILE / name), *PLAN, "--protocol", "wshuffle-four-cycles",
                       "--stat", "four_cycles"], capsys)
    want_code, phrase = CURATED[name]
    assert code == want_code, text
    assert phrase in text
    assert len(text.strip().splitlines()) == 1


def test_valid_shuffles_then_curates(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["shuffle", str(HOSTILE / "valid.csv"), "--out", str(out), *PLAN]) == 0
    capsys.readouterr()
    assert main(["curate", str(out), *PLAN, "--stat", "four_cycles"]) == 0
    assert "received   the rows of 4 users" in capsys.readouterr().out


def test_constant_parquet_refused_at_the_first_excess(tmp_path, capsys):
    """issue 36 finding 7: 2·10⁶ constant rows in a small Parquet file are refused at the row that
    breaks a quota (the shuffler: node 0's third wedge row, one node makes at most P = 2; the curator:
    pair 0's third, 2 other users), not after reading them all."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    m = 2_000_000
    eps0 = registry.get("wshuffle-four-cycles").plan(1.0, n_users=4).public["local_epsilon"]
    table = pa.table({
        "node": pa.array(np.zeros(m, dtype=np.int64)), "round": pa.array(np.ones(m, dtype=np.int64)),
        "quantity": pa.array(["wedge"] * m).dictionary_encode(), "value": pa.array(np.zeros(m, dtype=np.int64)),
        "epsilon": pa.array(np.full(m, eps0)), "sensitivity": pa.array(np.ones(m)),
        "protocol": pa.array(["wshuffle-four-cycles"] * m).dictionary_encode(),
        "protocol_version": pa.array(np.full(m, 2, dtype=np.int64))})
    path = tmp_path / "constant.parquet"
    pq.write_table(table, path)
    assert path.stat().st_size < 200_000
    code, text = _run(["shuffle", str(path), "--out", str(tmp_path / "s.csv"), *PLAN, "--chunk-rows", "4096"],
                      capsys)
    assert code == 1 and "row 2:" in text and "node 0 sent 3 wedge rows," in text
    code, text = _run(["curate", str(path), *PLAN, "--stat", "four_cycles", "--chunk-rows", "4096"], capsys)
    assert code == 1 and "row 2:" in text and "pair 0 has 3 wedge rows so far" in text
