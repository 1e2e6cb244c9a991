"""Round 2 of curate accepts only the broadcast this curator signed after round 1."""

from __future__ import annotations

import json
import os
import stat
import threading
import time

import numpy as np
import pytest

from ldpgraph.cli import main
from ldpgraph.protocols.deploy_triangles import broadcast_run_id
from ldpgraph.run.authenticate import curator_key, signature_path
from ldpgraph.run.files import write_broadcast
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
    assert out["round"] == 2 and np.isfinite(out["estimates"][0]["estimate"])


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
    os.chmod(tmp_path / "short", 0o600)
    with pytest.raises(ValueError, match="holds 8 bytes"):
        curator_key(tmp_path / "short")


# ------------------------------------------------------------------ one read (issue 36 finding 4)

HINDEX = ["--protocol", "kcore-hindex", "--epsilon", "2"]


def _serve(fifo, payloads, stop):
    """Serve each payload to one opening of the named pipe (an attacker's broadcast)."""
    for data in payloads:
        while not stop.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                time.sleep(0.01)
                continue
            os.set_blocking(fd, True)
            try:
                os.write(fd, data)
            except BrokenPipeError:
                pass
            os.close(fd)
            time.sleep(0.3)  # let the reader see the end of this payload before the next opening
            break


def test_a_named_pipe_broadcast_is_refused_before_any_read(tmp_path, capsys):
    """issue 36 finding 4: a named pipe that serves the signed broadcast to the signature check
    and a forged one (core numbers x10, its run id recomputed) to the parser. 7443152 checked
    one opening and parsed the next: the forged broadcast was curated. Now anything but a
    regular file is refused before a byte is read, and the bytes parsed are the bytes checked."""
    from ldpgraph.protocols import registry
    from ldpgraph.protocols.kcore.hindex_protocol import HIndexBroadcast

    r1, r2, b = tmp_path / "r1.csv", tmp_path / "r2.csv", tmp_path / "b.json"
    sim = ["--graph", GRAPH, "--simulate", "--seed", 3]
    _run(capsys, "node", *HINDEX, *sim, "--out", r1)
    _run(capsys, "curate", r1, *HINDEX, "--broadcast-out", b)
    signed = json.loads(b.read_text())
    forged = tmp_path / "forged.json"
    proto = registry.get("kcore-hindex")
    write_broadcast(proto, forged, HIndexBroadcast.build(signed["epsilon"], np.asarray(signed["degrees"]) * 10))
    _run(capsys, "node", *HINDEX, *sim, "--round", 2, "--broadcast", forged, "--out", r2)  # rows that match it
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    signature_path(fifo).write_bytes(signature_path(b).read_bytes())
    stop = threading.Event()
    server = threading.Thread(target=_serve, args=(fifo, [b.read_bytes(), forged.read_bytes()], stop), daemon=True)
    server.start()
    try:
        err = _run(capsys, "curate", r2, *HINDEX, "--broadcast", fifo, code=1).err
    finally:
        stop.set()
        server.join(timeout=10)
    assert f"the broadcast {fifo} is a named pipe: only a regular file is read" in err
    err = _run(capsys, "node", *HINDEX, *sim, "--round", 2, "--broadcast", "/dev/null", "--out",
               tmp_path / "x.csv", code=1).err
    assert "the broadcast /dev/null is a device" in err


def test_the_bytes_parsed_are_the_bytes_checked(rounds, capsys, monkeypatch):
    """issue 36 finding 4: the file replaced by a forged one between the check and the parse
    (here: by the reader's first call) does not reach the parser."""
    from ldpgraph.protocols.triangles.two_round import RRBroadcastProtocol

    r2, b = rounds
    seen = []
    original = RRBroadcastProtocol.decode_broadcast

    def decode_after_edit(self, data, plan, *, source="broadcast"):
        b.write_bytes(b"forged")  # the broadcast's name now holds other bytes
        seen.append(source)
        return original(self, data, plan, source=source)

    monkeypatch.setattr(RRBroadcastProtocol, "decode_broadcast", decode_after_edit)
    out = json.loads(_run(capsys, "curate", r2, *PLAN, "--broadcast", b, "--json").out)
    assert out["round"] == 2 and np.isfinite(out["estimates"][0]["estimate"]) and seen and seen[0] != str(b)


# ------------------------------------------------------------------ the key (issue 36 finding 10)


def test_a_key_readable_by_others_or_a_link_is_refused(tmp_path, capsys):
    """issue 36 finding 10: like ssh, the curator refuses a key file group or others may read or
    write, and a symbolic link to a key (7443152 read both); 0600 and 0400 are accepted."""
    key = tmp_path / "curator.key"
    secret = curator_key(key)
    for mode in (0o644, 0o640, 0o604, 0o620):
        os.chmod(key, mode)
        with pytest.raises(ValueError, match=f"readable or writable by others \\(mode {mode:04o}\\).*chmod 600"):
            curator_key(key)
    os.chmod(key, 0o400)
    assert curator_key(key) == secret
    os.chmod(key, 0o600)
    link = tmp_path / "link.key"
    link.symlink_to(key)
    with pytest.raises(ValueError, match="is a symbolic link"):
        curator_key(link)
    dangling = tmp_path / "dangling.key"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="is a symbolic link"):  # never created through the link
        curator_key(dangling)
    assert not (tmp_path / "nowhere").exists()
    os.chmod(key, 0o644)
    err = _run(capsys, "curate", tmp_path / "r.csv", "--epsilon", 1, "--curator-key", key, code=1).err
    assert err.startswith("ldpgraph: error: the curator key") and "chmod 600" in err
