"""Mutated report files and broadcasts: every reader fails with a ValueError naming the file.

issue 36 finding 11: an outside review mutated 2,400 report files and 4,000 broadcasts and
found 21 report-parser errors and 39 broadcast-reader errors that were not ``ValueError`` (an
``ArrowKeyError`` on a quoted header, ``KeyError b'quantity'``, an ``IndexError`` from a
negative ``dense`` id, ...) or did not name the file. This harness does the same on a fixed
seed and a modest count: valid files of every format (report rows as CSV, JSON Lines and
Parquet; the broadcast of every protocol that has one), each mutated by byte flips, cuts,
deleted spans, repeated lines, repeated JSON keys and hostile tokens in place of a value
(huge, negative, fractional and non-finite numbers, a 5,000-digit integer, null, booleans,
strings, arrays, lone surrogates). Each mutant is read; the reader either succeeds or raises
a ``ValueError`` (never another type) whose message names the file.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ldpgraph.datasets import resolve_graph
from ldpgraph.protocols import registry
from ldpgraph.run import run_in_memory
from ldpgraph.run.files import read_broadcast, release_to_file, write_broadcast
from ldpgraph.run.reportfiles import iter_report_chunks, read_report_set

SEED = 36
MUTANTS = 60  # per broadcast file
REPORT_MUTANTS = 200  # per report file: ~1,900 mutants in all, ~15 s
GRAPH = "ws:n=24,k=4,p=0.2"

#: what a value is replaced by
TOKENS = [b"-1", b"-7", b"0", b"1.5", b"1e400", b"-1e400", b"NaN", b"Infinity", b"null", b"true", b"false",
          b'"x"', b'""', b"[]", b"{}", b"[1]", b'{"a": 1}', b"9" * 5000, b"-0", b"0x10", b"01", b"2147483648",
          b"9223372036854775808", b"-9223372036854775809", b"1" * 30, b'"\\ud800"', b'"\\u0000"', b",", b'"',
          b"\n", b"\r", b"\x00", b"\xff\xfe", b'"node"', b'"value"', b'"quantity"']
_VALUE = re.compile(rb"-?[0-9][0-9.eE+-]*|\"[^\"\n]{0,80}\"|true|false|null")


def _mutate(data: bytes, rng: np.random.Generator) -> bytes:
    kind = int(rng.integers(7))
    n = len(data)
    if kind == 0:  # flip a byte
        i = int(rng.integers(n))
        return data[:i] + bytes([int(rng.integers(256))]) + data[i + 1:]
    if kind == 1:  # cut
        return data[: int(rng.integers(n))]
    if kind == 2:  # delete a span
        i = int(rng.integers(n))
        return data[:i] + data[i + int(rng.integers(1, 40)):]
    if kind == 3:  # repeat a line
        lines = data.split(b"\n")
        i = int(rng.integers(len(lines)))
        return b"\n".join(lines[: i + 1] + [lines[i]] + lines[i + 1:])
    if kind == 4:  # repeat a JSON key with another value
        keys = list(re.finditer(rb'"([a-z_]+)": ?', data))
        if keys:
            m = keys[int(rng.integers(len(keys)))]
            return data[: m.start()] + m.group(0) + TOKENS[int(rng.integers(len(TOKENS)))] + b", " + data[m.start():]
    matches = list(_VALUE.finditer(data))  # 5, 6: a hostile token in place of a value (twice: 6)
    if not matches:
        return data[::-1]
    for _ in range(1 + (kind == 6)):
        m = matches[int(rng.integers(len(matches)))]
        tok = TOKENS[int(rng.integers(len(TOKENS)))]
        data = data[: m.start()] + tok + data[m.end():]
        matches = list(_VALUE.finditer(data))
        if not matches:
            break
    return data


def _graph():
    return resolve_graph(GRAPH, rng=0)


def _broadcast_protocols() -> list[str]:
    out = []
    for p in registry.protocols():
        if not p.deployable:  # nothing to download
            continue
        rounds = p.rounds()
        if len(rounds) > 1:
            out.append(p.name)
    return sorted(out)


@pytest.fixture(scope="module")
def broadcasts(tmp_path_factory) -> dict[str, tuple[bytes, object, object]]:
    """protocol -> (its valid broadcast's bytes, the protocol, the plan)."""
    folder = tmp_path_factory.mktemp("fuzz-broadcasts")
    out = {}
    for name in _broadcast_protocols():
        proto = registry.get(name)
        try:
            run = run_in_memory(name, _graph(), 2.0, sampler=1)
        except ValueError:  # not runnable on report rows (continuous Laplace)
            continue
        path = folder / f"{name}.b"
        write_broadcast(proto, path, run.broadcasts[0])
        out[name] = (path.read_bytes(), proto, run.plan)
    return out


def test_every_broadcast_format_is_fuzzed(broadcasts):
    assert len(broadcasts) >= 10, sorted(broadcasts)  # (11 before kcore-svt, with its level broadcast, went)


def _fault(exc: BaseException, path: Path) -> str | None:
    """What is wrong with ``exc`` as the reader's answer to ``path`` (None: a clean error)."""
    if not isinstance(exc, ValueError):
        return f"{path.name}: {type(exc).__name__}: {exc}"[:300]
    if path.name not in str(exc):
        return f"{path.name}: the error does not name the file: {exc}"[:300]
    return None


@pytest.mark.parametrize("name", _broadcast_protocols())
def test_mutated_broadcasts_fail_with_a_value_error_naming_the_file(name, broadcasts, tmp_path):
    """issue 36 finding 11: each broadcast reader, on mutated files of its own format."""
    if name not in broadcasts:
        pytest.skip(f"{name}: no file form")
    data, proto, plan = broadcasts[name]
    rng = np.random.default_rng([SEED, len(name)])
    bad = []
    for i in range(MUTANTS):
        path = tmp_path / f"m{i}.{name}.b"
        path.write_bytes(_mutate(data, rng))
        try:
            read_broadcast(proto, path, plan)
        except Exception as exc:  # noqa: BLE001 - the type is what is checked
            if fault := _fault(exc, path):
                bad.append(fault)
    assert not bad, f"{len(bad)} mutants:\n" + "\n".join(bad[:12])


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, bytes]:
    """format -> a valid report file (degree rows and rr-triangles rows, both)."""
    folder = tmp_path_factory.mktemp("fuzz-reports")
    g = _graph()
    nodes = list(range(g.n_nodes))
    lists = [g.indices[g.indptr[v]:g.indptr[v + 1]].astype(np.int64) for v in nodes]
    out = {}
    for name in ("degree", "rr-triangles"):
        proto = registry.get(name)
        plan = proto.plan(2.0)
        for fmt in ("csv", "jsonl", "parquet"):
            path = folder / f"{name}.{fmt}"
            release_to_file(path, proto.rounds()[0], plan, nodes, lists, None, _seeded())
            out[f"{name}.{fmt}"] = path.read_bytes()
    return out


def _seeded():
    from ldpgraph.core import Seeded

    return Seeded(1)


def _consume(path: Path) -> None:
    for _ in iter_report_chunks(path, chunk_rows=7):
        pass
    if path.name.startswith("m") and ".degree." in path.name:
        read_report_set(path)


@pytest.mark.parametrize("name", [f"{p}.{f}" for p in ("degree", "rr-triangles") for f in ("csv", "jsonl", "parquet")])
def test_mutated_report_files_fail_with_a_value_error_naming_the_file(name, reports, tmp_path):
    """issue 36 finding 11: the report readers (iter_report_chunks, read_report_set) on mutated
    report files of each format."""
    rng = np.random.default_rng([SEED, len(name), ord(name[-1])])
    bad = []
    for i in range(REPORT_MUTANTS):
        path = tmp_path / f"m{i}.{name}"
        path.write_bytes(_mutate(reports[name], rng))
        try:
            _consume(path)
        except Exception as exc:  # noqa: BLE001
            if fault := _fault(exc, path):
                bad.append(fault)
    assert not bad, f"{len(bad)} mutants:\n" + "\n".join(bad[:12])
