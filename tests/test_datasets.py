"""Tests of ldpgraph.datasets: registry, lookup order, verified atomic fetch, synthetic graphs."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import os
import random
import re
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import igraph
import numpy as np
import pytest
from conftest import data_file

from ldpgraph import datasets
from ldpgraph.datasets import (
    ChecksumError,
    DatasetInfo,
    DatasetNotFoundError,
    DownloadError,
    count_words,
    dataset_info,
    dataset_path,
    default_cache_dir,
    fetch,
    list_datasets,
    load_dataset,
    locate_dataset,
    parse_fingerprint,
    parse_synthetic_spec,
    resolve_graph,
    synthetic_graph,
    verify_dataset,
)

NAMES = ["facebook", "wiki-vote", "email-enron", "shakespeare", "exac-sfs"]


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Never touch the real user cache: point every cache variable into tmp_path."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("LDPGRAPH_CACHE", str(cache))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    return cache


def _tiny_entry(content: bytes, name: str = "tiny") -> DatasetInfo:
    """A registry entry for a small generated fingerprint file (the 'shared' .gz = gzip mtime 0)."""
    gz = gzip.compress(content, compresslevel=9, mtime=0)
    return DatasetInfo(
        name=name,
        kind="histogram",
        filename=f"{name}.txt.gz",
        source_page="http://example.invalid/",
        url=None,
        sha256_gz=_sha(gz),
        size_gz=len(gz),
        sha256_raw=_sha(content),
        size_raw=len(content),
        stats={},
        description="test entry",
        citation="",
        license="",
        aliases=(f"{name}.txt",),
        parser=_read_tiny,
    )


def _read_tiny(path: Path, info: DatasetInfo) -> np.ndarray:
    with datasets._open_binary(path) as fh:
        return parse_fingerprint(fh.read().decode().splitlines())


TINY_CONTENT = "".join(f"{(7 * i) % 13}\n" for i in range(1, 400)).encode()


@pytest.fixture
def tiny(monkeypatch):
    info = _tiny_entry(TINY_CONTENT)
    monkeypatch.setitem(datasets._REGISTRY, info.name, info)
    return info


# ---------------------------------------------------------------------------------------------
# A local HTTP server on 127.0.0.1
# ---------------------------------------------------------------------------------------------


class _Server:
    """Serves ``routes[path] = (body, mode)``; counts requests. Modes:
    ok, truncate (Content-Length says full, half sent), nolength_truncate, 404, slow."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[bytes, str]] = {}
        self.requests: list[str] = []
        self.release = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_GET(self):
                server.requests.append(self.path)
                body, mode = server.routes.get(self.path, (b"", "404"))
                if mode == "404":
                    self.send_error(404, "Not Found")
                    return
                if mode == "slow":
                    server.release.wait(5)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                if mode != "nolength_truncate":
                    self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                if mode == "ok":
                    self.wfile.write(body)
                else:  # truncate / nolength_truncate: send half, then close
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                self.close_connection = True

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def serve(self, path: str, body: bytes, mode: str = "ok") -> str:
        self.routes[path] = (body, mode)
        return self.url(path)

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# ---------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------


def test_registry_lists_the_five_datasets():
    assert list_datasets() == NAMES
    assert list_datasets("graph") == ["facebook", "wiki-vote", "email-enron"]
    assert list_datasets("histogram") == ["shakespeare", "exac-sfs"]
    with pytest.raises(ValueError, match="kind"):
        list_datasets("table")


@pytest.mark.parametrize("name", NAMES)
def test_registry_entry_is_complete(name):
    info = dataset_info(name)
    assert info.name == name
    assert info.kind in ("graph", "histogram")
    assert info.filename.endswith(".gz")
    assert info.source_page.startswith("https://")
    assert info.url is not None and info.url.startswith("https://")
    for digest in (info.sha256_gz, info.sha256_raw):
        assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert info.size_gz > 0 and info.size_raw > info.size_gz
    assert info.description and info.citation and info.license and info.provenance
    assert callable(info.parser)
    if info.kind == "graph":
        assert {"nodes", "edges", "max_degree", "triangles"} <= set(info.stats)
        assert info.source_page.startswith("https://snap.stanford.edu/data/")
        assert info.url.startswith("https://snap.stanford.edu/data/")


def test_registry_matches_sources_md():
    """Digests, sizes and file names agree with the independent record in SOURCES.md."""
    text = data_file("SOURCES.md").read_text()
    table = {
        m.group(1): (int(m.group(2).replace(",", "")), m.group(3))
        for m in re.finditer(r"^\| (\S+\.gz) \| ([\d,]+) \| ([0-9a-f]{64}) \|$", text, re.M)
    }
    raw = re.findall(r"raw sha256:\*\* ([0-9a-f]{64})\. Size is ([\d,]+) bytes", text)
    assert len(table) == 5 and len(raw) == 5
    infos = [dataset_info(n) for n in NAMES]
    assert {i.filename for i in infos} == set(table)
    for info in infos:
        assert (info.size_gz, info.sha256_gz) == table[info.filename]
    # sections in SOURCES.md are in registry order
    for info, (digest, size) in zip(infos, raw, strict=True):
        assert info.sha256_raw == digest
        assert info.size_raw == int(size.replace(",", ""))


@pytest.mark.parametrize("name", NAMES)
def test_shared_files_match_recorded_digests(name):
    info = dataset_info(name)
    path = data_file(info.filename)
    blob = path.read_bytes()
    assert _sha(blob) == info.sha256_gz and len(blob) == info.size_gz
    raw = gzip.decompress(blob)
    assert _sha(raw) == info.sha256_raw and len(raw) == info.size_raw
    assert verify_dataset(name, path=path) == path


def test_unknown_name_lists_known_names_and_suggests():
    with pytest.raises(ValueError, match="facebook, wiki-vote, email-enron, shakespeare, exac-sfs") as ei:
        dataset_info("facebok")
    assert "Did you mean 'facebook'" in str(ei.value)
    with pytest.raises(ValueError, match="Did you mean 'wiki-vote'"):
        dataset_path("wikivote")
    with pytest.raises(ValueError, match="unknown dataset 'zzz'"):
        fetch("zzz")
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("nips")
    with pytest.raises(TypeError, match="name must be a str"):
        dataset_info(3)


# ---------------------------------------------------------------------------------------------
# Lookup order
# ---------------------------------------------------------------------------------------------


def test_default_cache_dir_env_precedence(tmp_path, monkeypatch):
    assert default_cache_dir() == tmp_path / "cache"  # LDPGRAPH_CACHE (set by the fixture)
    monkeypatch.delenv("LDPGRAPH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "ldpgraph"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "ldpgraph"


def test_lookup_order_explicit_then_env_then_cache(tmp_path, monkeypatch, _isolated_cache):
    fn = dataset_info("facebook").filename
    explicit, env, cache = tmp_path / "explicit", tmp_path / "env", _isolated_cache
    for d in (explicit, env, cache):
        d.mkdir()
        (d / fn).write_text(d.name)
    monkeypatch.setenv("LDPGRAPH_DATA", str(env))
    assert dataset_path("facebook", path=explicit) == explicit / fn  # folder argument
    assert dataset_path("facebook", path=explicit / fn) == explicit / fn  # file argument
    assert dataset_path("facebook") == env / fn
    (env / fn).unlink()
    assert dataset_path("facebook") == cache / fn
    monkeypatch.delenv("LDPGRAPH_DATA")
    assert dataset_path("facebook") == cache / fn
    assert locate_dataset("facebook") == cache / fn


def test_lookup_env_path_list_and_alias(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (b / "facebook_combined.txt").write_text("0 1\n")  # uncompressed name is an alias
    monkeypatch.setenv("LDPGRAPH_DATA", os.pathsep.join([str(a), str(b)]))
    assert dataset_path("facebook") == b / "facebook_combined.txt"
    (a / "facebook_combined.txt.gz").write_bytes(gzip.compress(b"0 1\n"))
    assert dataset_path("facebook") == a / "facebook_combined.txt.gz"


def test_explicit_path_is_authoritative(tmp_path, monkeypatch):
    env = tmp_path / "env"
    env.mkdir()
    (env / "facebook_combined.txt.gz").write_text("x")
    monkeypatch.setenv("LDPGRAPH_DATA", str(env))
    missing = tmp_path / "nowhere" / "fb.txt.gz"
    with pytest.raises(DatasetNotFoundError, match="does not exist") as ei:
        dataset_path("facebook", path=missing)
    assert str(missing) in str(ei.value)
    assert locate_dataset("facebook", path=tmp_path / "nowhere") is None


def test_not_found_message_names_places_and_command(tmp_path, monkeypatch, _isolated_cache):
    monkeypatch.setenv("LDPGRAPH_DATA", str(tmp_path / "data"))
    with pytest.raises(DatasetNotFoundError) as ei:
        dataset_path("wiki-vote")
    msg = str(ei.value)
    assert "ldpgraph datasets fetch wiki-vote" in msg
    assert str(tmp_path / "data" / "Wiki-Vote.txt.gz") in msg
    assert str(_isolated_cache / "Wiki-Vote.txt.gz") in msg
    assert isinstance(ei.value, FileNotFoundError)
    monkeypatch.delenv("LDPGRAPH_DATA")
    with pytest.raises(DatasetNotFoundError, match=r"\$LDPGRAPH_DATA: not set"):
        load_dataset("wiki-vote")


# ---------------------------------------------------------------------------------------------
# fetch
# ---------------------------------------------------------------------------------------------


def test_fetch_real_gz_over_http(server, _isolated_cache, monkeypatch):
    info = dataset_info("exac-sfs")
    blob = data_file(info.filename).read_bytes()
    monkeypatch.delenv("LDPGRAPH_DATA")
    url = server.serve("/sfs.gz", blob)
    path = fetch("exac-sfs", url=url, progress=False)
    assert path == _isolated_cache / info.filename
    assert path.read_bytes() == blob
    assert _files(_isolated_cache) == [info.filename]
    assert dataset_path("exac-sfs") == path


def test_fetch_accepts_other_compression_by_raw_digest(server, tiny, _isolated_cache):
    other = gzip.compress(TINY_CONTENT, compresslevel=1, mtime=12345)
    assert _sha(other) != tiny.sha256_gz
    path = fetch("tiny", url=server.serve("/t.gz", other), progress=False)
    assert path.read_bytes() == other
    assert load_dataset("tiny").tolist() == [int(x) for x in TINY_CONTENT.split()]


def test_fetch_plain_content_is_stored_compressed(server, tiny, _isolated_cache):
    path = fetch("tiny", url=server.serve("/t.txt", TINY_CONTENT), progress=False)
    assert path.name == "tiny.txt.gz"
    assert gzip.decompress(path.read_bytes()) == TINY_CONTENT
    assert _files(_isolated_cache) == ["tiny.txt.gz"]
    verify_dataset("tiny")


def test_fetch_local_file_url_and_path(tmp_path, tiny):
    src = tmp_path / "src.txt.gz"
    src.write_bytes(gzip.compress(TINY_CONTENT, mtime=0))
    out1 = fetch("tiny", url=src, cache_dir=tmp_path / "c1", progress=False)
    out2 = fetch("tiny", url=src.as_uri(), cache_dir=tmp_path / "c2", progress=False)
    assert out1.read_bytes() == out2.read_bytes() == src.read_bytes()


def test_fetch_progress_bar(server, tiny, capsys):
    fetch("tiny", url=server.serve("/t.gz", gzip.compress(TINY_CONTENT, mtime=0)), progress=True)
    assert "tiny" in capsys.readouterr().err


def test_fetch_skips_download_when_verified_copy_exists(server, tiny):
    url = server.serve("/t.gz", gzip.compress(TINY_CONTENT, mtime=0))
    fetch("tiny", url=url, progress=False)
    fetch("tiny", url=url, progress=False)
    assert len(server.requests) == 1
    fetch("tiny", url=url, progress=False, force=True)
    assert len(server.requests) == 2


def test_fetch_replaces_corrupt_cached_copy(server, tiny, _isolated_cache):
    _isolated_cache.mkdir()
    (_isolated_cache / tiny.filename).write_bytes(b"garbage")
    url = server.serve("/t.gz", gzip.compress(TINY_CONTENT, mtime=0))
    with pytest.warns(UserWarning, match="failed verification"):
        path = fetch("tiny", url=url, progress=False)
    assert gzip.decompress(path.read_bytes()) == TINY_CONTENT


def test_dataset_path_download_uses_registered_url(server, monkeypatch, _isolated_cache):
    info = _tiny_entry(TINY_CONTENT)
    info = replace(info, url=server.serve("/t.gz", gzip.compress(TINY_CONTENT, mtime=0)))
    monkeypatch.setitem(datasets._REGISTRY, info.name, info)
    with pytest.raises(DatasetNotFoundError):
        dataset_path("tiny")
    assert dataset_path("tiny", download=True) == _isolated_cache / "tiny.txt.gz"
    assert server.requests == ["/t.gz"]


@pytest.mark.parametrize("kind", ["gz", "plain"])
def test_checksum_mismatch_writes_nothing(server, tiny, _isolated_cache, kind):
    bad = TINY_CONTENT.replace(b"1\n", b"2\n", 1)
    body = gzip.compress(bad, mtime=0) if kind == "gz" else bad
    with pytest.raises(ChecksumError) as ei:
        fetch("tiny", url=server.serve("/bad", body), progress=False)
    msg = str(ei.value)
    assert f"expected raw (uncompressed) sha256 {tiny.sha256_raw}" in msg
    assert f"got {_sha(bad)}" in msg
    assert "Nothing was written" in msg
    assert _files(_isolated_cache) == []


@pytest.mark.parametrize(
    ("mode", "error", "match"),
    [
        ("truncate", DownloadError, "truncated: got"),
        ("nolength_truncate", ChecksumError, "not a complete gzip stream"),
    ],
)
def test_truncated_download_writes_nothing(server, tiny, _isolated_cache, mode, error, match):
    body = gzip.compress(TINY_CONTENT, mtime=0)
    with pytest.raises(error, match=match) as ei:
        fetch("tiny", url=server.serve("/t.gz", body, mode), progress=False)
    assert "Nothing was written" in str(ei.value)
    assert _files(_isolated_cache) == []
    with pytest.raises(DatasetNotFoundError):
        dataset_path("tiny")


def test_truncated_real_file_writes_nothing(server, _isolated_cache):
    blob = data_file("facebook_combined.txt.gz").read_bytes()
    with pytest.raises(DownloadError, match="truncated"):
        fetch("facebook", url=server.serve("/fb.gz", blob, "truncate"), progress=False)
    assert _files(_isolated_cache) == []


def test_http_error_and_refused_connection(server, tiny, _isolated_cache):
    with pytest.raises(DownloadError, match="404"):
        fetch("tiny", url=server.url("/missing"), progress=False)
    # a port that was just free: nothing listens there
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DownloadError, match="could not reach"):
        fetch("tiny", url=f"http://127.0.0.1:{port}/x", progress=False, timeout=5)
    assert _files(_isolated_cache) == []


def test_timeout(server, tiny, _isolated_cache):
    url = server.serve("/slow", b"", "slow")
    t0 = time.perf_counter()
    with pytest.raises(DownloadError, match="timed out"):
        fetch("tiny", url=url, progress=False, timeout=0.3)
    assert time.perf_counter() - t0 < 4
    assert _files(_isolated_cache) == []


def test_fetch_bad_arguments(tiny):
    with pytest.raises(DownloadError, match="no download URL"):
        fetch("tiny", progress=False)
    with pytest.raises(ValueError, match="url must use|url must be"):
        fetch("tiny", url="ftp://example.invalid/x", progress=False)
    with pytest.raises(ValueError, match="timeout must be finite and > 0"):
        fetch("tiny", url="http://127.0.0.1:9/x", timeout=0)


# ---------------------------------------------------------------------------------------------
# Parsers and loading real data
# ---------------------------------------------------------------------------------------------


def test_count_words_against_brute_force():
    text = "The cat; the DOG -- the cat's toy.\nA dog? a Cat!"
    wc = count_words(text)
    expect = Counter("the cat the dog the cat s toy a dog a cat".split())
    assert dict(zip(wc.words.tolist(), wc.counts.tolist(), strict=True)) == dict(expect)
    assert wc.counts.dtype == np.int64
    assert wc.counts.tolist() == sorted(expect.values(), reverse=True)
    assert wc.words.tolist()[:2] == ["cat", "the"]  # tie broken alphabetically
    empty = count_words("123 !!")
    assert empty.counts.size == 0 and empty.words.size == 0


def test_parse_fingerprint_errors():
    with pytest.raises(ValueError, match="line 2"):
        parse_fingerprint(["1", "x"])
    with pytest.raises(ValueError, match=">= 0"):
        parse_fingerprint(["-1"])


def test_load_shakespeare_matches_sources(monkeypatch):
    path = data_file("t8.shakespeare.txt.gz")
    monkeypatch.setenv("LDPGRAPH_DATA", str(path.parent))
    wc = load_dataset("shakespeare")
    # figures from SOURCES.md
    assert int(wc.counts.sum()) == 928_012
    assert len(wc.words) == len(wc.counts) == 23_683
    top = list(zip(wc.words[:5].tolist(), wc.counts[:5].tolist(), strict=True))
    assert top == [("the", 27_660), ("and", 26_784), ("i", 22_538), ("to", 19_819), ("of", 18_191)]
    assert np.all(np.diff(wc.counts) <= 0)


def test_load_exac_sfs_matches_sources():
    path = data_file("exac_sfs_unseenest_example_input.txt.gz")
    f = load_dataset("exac-sfs", path=path, verify=True)
    assert f.dtype == np.int64 and f.shape == (1200,)
    assert int(f.sum()) == 7_302_295
    assert int((np.arange(1, 1201) * f).sum()) == 92_755_206
    assert (int(f[0]), int(f[1])) == (4_012_093, 1_072_150)


def test_load_verify_rejects_corrupt_file(tmp_path, tiny):
    p = tmp_path / "tiny.txt.gz"
    p.write_bytes(gzip.compress(TINY_CONTENT + b"1\n"))
    assert load_dataset("tiny", path=p).size == TINY_CONTENT.count(b"\n") + 1
    with pytest.raises(ChecksumError, match="checksum mismatch"):
        load_dataset("tiny", path=p, verify=True)


def _graph_module_or_skip():
    return pytest.importorskip("ldpgraph.graph", reason="ldpgraph.graph not available yet")


# (nodes, edges, max degree, triangles) of the simple undirected graph, from SOURCES.md
GRAPH_FIGURES = {
    "facebook": (4_039, 88_234, 1_045, 1_612_010),
    "wiki-vote": (7_115, 100_762, 1_065, 608_389),
    "email-enron": (36_692, 183_831, 1_383, 727_044),
}


@pytest.mark.parametrize("name", list(GRAPH_FIGURES))
def test_load_graph_datasets(name):
    info = dataset_info(name)
    path = data_file(info.filename)
    gm = _graph_module_or_skip()
    g = load_dataset(name, path=path)
    assert isinstance(g, gm.Graph)
    figures = (g.n_nodes, g.n_edges, gm.max_degree(g), gm.triangle_count(g))
    assert figures == GRAPH_FIGURES[name]
    s = info.stats
    assert (s["nodes"], s["edges"], s["max_degree"], s["triangles"]) == GRAPH_FIGURES[name]


def test_load_facebook_via_registry_lookup(monkeypatch):
    path = data_file("facebook_combined.txt.gz")
    _graph_module_or_skip()
    monkeypatch.setenv("LDPGRAPH_DATA", str(path.parent))
    g = load_dataset("facebook")
    assert (g.n_nodes, g.n_edges) == (4_039, 88_234)
    assert resolve_graph("facebook").n_edges == 88_234
    assert resolve_graph(str(path)).n_nodes == 4_039


# ---------------------------------------------------------------------------------------------
# Synthetic graphs
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def as_igraph(monkeypatch):
    """Make synthetic_graph return the raw igraph.Graph (independent of ldpgraph.graph)."""
    monkeypatch.setattr(datasets._files, "_graph_from_igraph", lambda g: g)


@pytest.mark.parametrize("spec", ["ba:n=300,m=3", "er:n=300,p=0.02", "er:n=300,m=900", "ws:n=300,k=6,p=0.2"])
def test_synthetic_reproducible_and_seed_dependent(as_igraph, spec):
    e = lambda g: sorted(tuple(sorted(x)) for x in g.get_edgelist())  # noqa: E731
    a = synthetic_graph(spec, rng=1)
    b = synthetic_graph(spec, rng=1)
    c = synthetic_graph(spec, rng=2)
    d = synthetic_graph(spec, rng=np.random.default_rng(1))
    assert e(a) == e(b) == e(d)
    assert e(a) != e(c)
    for g in (a, c):
        assert g.vcount() == 300 and g.is_simple() and not g.is_directed()


def test_synthetic_sizes(as_igraph):
    n, m = 500, 4
    ba = synthetic_graph(f"ba:n={n},m={m}", rng=0)
    # node i attaches to min(m, i) distinct earlier nodes
    assert ba.ecount() == sum(min(m, i) for i in range(n))
    assert synthetic_graph("er:n=1_000,m=2e3", rng=0).ecount() == 2000
    ws = synthetic_graph("ws:n=400,k=8,p=0.1", rng=0)
    assert ws.ecount() == 400 * 8 // 2
    assert synthetic_graph("ws:n=400,k=8,p=0", rng=0).degree() == [8] * 400
    # G(n, p): edge count within 5 standard deviations of its binomial mean
    n, p = 400, 0.05
    pairs = n * (n - 1) // 2
    k = synthetic_graph(f"er:n={n},p={p}", rng=3).ecount()
    assert abs(k - pairs * p) < 5 * np.sqrt(pairs * p * (1 - p))


def test_synthetic_leaves_global_random_state_alone(as_igraph):
    random.seed(123)
    state = random.getstate()
    synthetic_graph("ba:n=50,m=2", rng=5)
    assert random.getstate() == state
    # igraph is back on its default generator, the `random` module
    random.seed(7)
    g1 = igraph.Graph.Erdos_Renyi(n=40, p=0.2)
    random.seed(7)
    g2 = igraph.Graph.Erdos_Renyi(n=40, p=0.2)
    assert g1.get_edgelist() == g2.get_edgelist()


def test_synthetic_graph_object():
    gm = _graph_module_or_skip()
    g = synthetic_graph("er:n=100,m=250", rng=0)
    assert isinstance(g, gm.Graph)
    assert (g.n_nodes, g.n_edges) == (100, 250)
    h = synthetic_graph("ba:n=200,m=3", rng=4)
    assert np.array_equal(h.indices, synthetic_graph("ba:n=200,m=3", rng=4).indices)
    assert not np.array_equal(h.indices, synthetic_graph("ba:n=200,m=3", rng=5).indices)


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "ba",
        "ba:",
        "ba:n=10",
        "ba:n=10,m=0",
        "ba:n=0,m=1",
        "ba:n=10,m=2,m=3",
        "ba:n=ten,m=2",
        "ba:n=2.5,m=1",
        "ba:n=10,m=2,p=0.1",
        "ba:n=10;m=2",
        "xx:n=3,m=1",
        "er:n=10,p=2",
        "er:n=10,p=nan",
        "er:n=10,p=0.1,m=3",
        "er:n=4,m=7",
        "ws:n=10,k=3,p=0.1",
        "ws:n=10,k=10,p=0.1",
        "ws:n=10,k=4",
        # sizes igraph cannot take (OverflowError inside igraph before), BA with m >= n
        "er:n=1e30,p=0",
        "er:n=1e10,m=1e19",
        "ba:n=5,m=1e30",
        "ba:n=3,m=5",
        "ws:n=1e20,k=2,p=0",
        "ws:n=9223372036854775808,k=2,p=0",
    ],
)
def test_bad_specs(spec):
    with pytest.raises(ValueError, match=r"bad synthetic graph spec .*expected '<model>:<key>=<value>"):
        parse_synthetic_spec(spec)


def test_parse_spec_values():
    assert parse_synthetic_spec("BA: m=10 , n=1e6") == ("ba", {"n": 1_000_000, "m": 10})
    assert parse_synthetic_spec("er:n=10,m=45") == ("er", {"n": 10, "m": 45})
    assert parse_synthetic_spec("ws:n=10,k=4,p=1") == ("ws", {"n": 10, "k": 4, "p": 1.0})
    assert parse_synthetic_spec("ba:n=3,m=2") == ("ba", {"n": 3, "m": 2})  # m = n - 1: complete graph
    assert parse_synthetic_spec("ba:n=1,m=1") == ("ba", {"n": 1, "m": 1})
    assert parse_synthetic_spec("er:n=9223372036854775807,p=0")[1]["n"] == 2**63 - 1
    with pytest.raises(TypeError, match="spec must be a str"):
        parse_synthetic_spec(None)


def test_resolve_graph_dispatch(tmp_path, monkeypatch, as_igraph):
    monkeypatch.setattr(datasets._files, "_read_graph", lambda p: ("file", Path(p)))
    monkeypatch.setattr(datasets.lookup, "load_dataset", lambda name, **kw: ("dataset", name))
    assert resolve_graph("facebook") == ("dataset", "facebook")
    assert resolve_graph(" Wiki-Vote ") == ("dataset", "wiki-vote")
    assert resolve_graph("ba:n=20,m=2", rng=0).vcount() == 20
    f = tmp_path / "edges.txt"
    f.write_text("0 1\n")
    assert resolve_graph(str(f)) == ("file", f)
    assert resolve_graph(f) == ("file", f)
    with pytest.raises(ValueError, match="is a histogram, not a graph"):
        resolve_graph("shakespeare")
    with pytest.raises(ValueError, match="Did you mean 'facebook'"):
        resolve_graph("facebok")
    with pytest.raises(ValueError, match="not a synthetic spec .*ba:n=<int>,m=<int>"):
        resolve_graph(str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="bad synthetic graph spec"):
        resolve_graph("ba:n=5")
    with pytest.raises(FileNotFoundError):
        resolve_graph(tmp_path / "missing.txt")


def test_resolve_graph_junk_paths_are_value_errors(tmp_path):
    """Regression: OSError (name too long) and RuntimeError (~unknown_user) escaped."""
    with pytest.raises(ValueError, match=r"not an existing file \(not a usable path"):
        resolve_graph("a" * 5000)
    with pytest.raises(ValueError, match=r"cannot expand the path"):
        resolve_graph("~no_such_user_xyz_ldpgraph/graph.txt")
    with pytest.raises(ValueError, match="cannot use .* as an edge-list file"):
        resolve_graph(tmp_path / ("a" * 5000))
    with pytest.raises(ValueError, match="cannot resolve graph"):
        resolve_graph("x\0y")
