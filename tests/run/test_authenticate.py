"""Round 2 of curate accepts only the broadcast this curator signed after round 1."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.protocols.deploy_triangles import broadcast_run_id
from ldpgraph.run.authenticate import curator_key, signature_path
from ldpgraph.run.trianglefiles import read_triangle_broadcast

GRAPH = "ws:n=60,k=6,p=0.2"
DLAP = ["--protocol", "two-round-triangles-dlap"]
PLAN = ["--epsilon", "1", "--d-max", "6"]


def _run(capsys, *args, code=0):
    capsys.readouterr()
    assert main([str(a) for a in args]) == code
    return capsys.readouterr()


@pytest.fixture
def rounds(tmp_path, capsys):
    r1, r2, b = tmp_path / "r1.csv", tmp_path / "r2.csv", tmp_path / "b.txt"
    sim = ["--graph", GRAPH, "--simulate", "--seed", 3]
    _run(capsys, "node", *DLAP, *sim, *PLAN, "--out", r1)
    out = _run(capsys, "curate", r1, *PLAN, "--broadcast-out", b).out
    assert f"signed {b.name}.hmac with the curator key" in out
    _run(capsys, "node", *DLAP, *sim, *PLAN, "--round", 2, "--broadcast", b, "--out", r2)
    return r2, b


def test_the_signed_broadcast_is_accepted(rounds, capsys):
    r2, b = rounds
    out = json.loads(_run(capsys, "curate", r2, *PLAN, "--broadcast", b, "--json").out)
    assert out["round"] == 2 and np.isfinite(out["estimates"][0]["value"])


def test_a_forged_broadcast_is_refused_even_with_a_recomputed_run_id(rounds, capsys):
    """The review's attack: edit epsilon_1 and D in the header, recompute the (unkeyed) run id."""
    r2, b = rounds
    tag, head, body = b.read_bytes().split(b"\n", 2)  # two header lines, then the packed noisy bits
    header = json.loads(head[2:])
    header.pop("run_id")
    header["epsilon"], header["bound"] = 2.0, 3
    n_pairs = header["n_nodes"] * (header["n_nodes"] - 1) // 2
    index = np.flatnonzero(np.unpackbits(np.frombuffer(body, dtype=np.uint8), count=n_pairs))
    header["run_id"] = broadcast_run_id({k: v for k, v in header.items() if k != "run_id"}, index)
    b.write_bytes(b"\n".join([tag, ("# " + json.dumps(header, sort_keys=True)).encode(), body]))
    forged = read_triangle_broadcast(b)  # a valid broadcast file: only the signature tells
    assert (forged.epsilon, forged.bound) == (2.0, 3)
    err = _run(capsys, "curate", r2, *PLAN, "--broadcast", b, code=1).err
    assert "does not carry this curator's signature" in err


def test_a_broadcast_without_signature_or_from_another_key_is_refused(rounds, capsys, tmp_path):
    r2, b = rounds
    err = _run(capsys, "curate", r2, *PLAN, "--broadcast", b, "--curator-key", tmp_path / "other.key", code=1).err
    assert "does not carry this curator's signature" in err
    os.unlink(signature_path(b))
    err = _run(capsys, "curate", r2, *PLAN, "--broadcast", b, code=1).err
    assert "no signature b.txt.hmac beside the broadcast" in err


def test_a_new_key_is_private_and_long_enough(tmp_path):
    key = curator_key(tmp_path / "k" / "curator.key")
    assert len(key) == 32 and curator_key(tmp_path / "k" / "curator.key") == key
    assert stat.S_IMODE(os.stat(tmp_path / "k" / "curator.key").st_mode) == 0o600
    (tmp_path / "short").write_bytes(b"x" * 8)
    with pytest.raises(ValueError, match="holds 8 bytes"):
        curator_key(tmp_path / "short")
